//! `Display` for the base-type and cast statements.

use std::fmt::{self, Display, Formatter};

use super::{Comma, Str};
use crate::ast::{
    CastMethod, CastWhen, CreateCast, DefArg, DefElem, DefineType, DropCast, DropType,
};

impl Display for DefElem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        match &self.arg {
            None => Ok(()),
            Some(DefArg::Type(t)) => write!(f, " = {t}"),
            Some(DefArg::Str(s)) => write!(f, " = {}", Str(s)),
            Some(DefArg::Num(n)) => write!(f, " = {n}"),
        }
    }
}

impl Display for DefineType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "CREATE TYPE {}", self.name)?;
        if let Some(p) = &self.params {
            write!(f, " ({})", Comma(p))?;
        }
        Ok(())
    }
}

impl Display for DropType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("DROP TYPE ")?;
        if self.if_exists {
            f.write_str("IF EXISTS ")?;
        }
        Comma(&self.names).fmt(f)?;
        if self.cascade {
            f.write_str(" CASCADE")?;
        }
        Ok(())
    }
}

impl Display for CreateCast {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "CREATE CAST ({} AS {}) ", self.source, self.target)?;
        match &self.method {
            CastMethod::Binary => f.write_str("WITHOUT FUNCTION")?,
            CastMethod::Inout => f.write_str("WITH INOUT")?,
            CastMethod::Function(r) => write!(f, "WITH FUNCTION {r}")?,
        }
        match self.context {
            CastWhen::Explicit => Ok(()),
            CastWhen::Assignment => f.write_str(" AS ASSIGNMENT"),
            CastWhen::Implicit => f.write_str(" AS IMPLICIT"),
        }
    }
}

impl Display for DropCast {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("DROP CAST ")?;
        if self.if_exists {
            f.write_str("IF EXISTS ")?;
        }
        write!(f, "({} AS {})", self.source, self.target)?;
        if self.cascade {
            f.write_str(" CASCADE")?;
        }
        Ok(())
    }
}
