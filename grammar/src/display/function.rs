//! `Display` for the function and domain statements.

use std::fmt::{self, Display, Formatter};

use super::{Comma, Id, Str};
use crate::ast::{
    CreateDomain, CreateFunction, DomainConstraint, DropDomain, DropFunction, FunctionArg,
    FunctionOption, FunctionRef, FunctionReturns,
};

impl Display for FunctionArg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(n) = &self.name {
            write!(f, "{} ", Id(n))?;
        }
        self.data_type.fmt(f)
    }
}

impl Display for CreateFunction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("CREATE ")?;
        if self.or_replace {
            f.write_str("OR REPLACE ")?;
        }
        write!(f, "FUNCTION {}({})", self.name, Comma(&self.args))?;
        match &self.returns {
            Some(FunctionReturns::Type(t)) => write!(f, " RETURNS {t}")?,
            Some(FunctionReturns::Setof(t)) => write!(f, " RETURNS SETOF {t}")?,
            Some(FunctionReturns::Table(cols)) => write!(f, " RETURNS TABLE ({})", Comma(cols))?,
            None => {}
        }
        for o in &self.options {
            match o {
                FunctionOption::Language(l) => write!(f, " LANGUAGE {}", Id(l))?,
                FunctionOption::Volatility(v) => write!(f, " {}", v.to_uppercase())?,
                FunctionOption::Strict(true) => f.write_str(" STRICT")?,
                FunctionOption::Strict(false) => f.write_str(" CALLED ON NULL INPUT")?,
                FunctionOption::Parallel(p) => write!(f, " PARALLEL {}", p.to_uppercase())?,
                FunctionOption::As(body) => write!(f, " AS {}", Str(body))?,
                FunctionOption::Return(e) => write!(f, " RETURN {e}")?,
                FunctionOption::Ignored(o) => write!(f, " {o}")?,
            }
        }
        Ok(())
    }
}

impl Display for FunctionRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.name.fmt(f)?;
        if let Some(args) = &self.args {
            write!(f, "({})", Comma(args))?;
        }
        Ok(())
    }
}

impl Display for DropFunction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("DROP FUNCTION ")?;
        if self.if_exists {
            f.write_str("IF EXISTS ")?;
        }
        Comma(&self.funcs).fmt(f)?;
        if self.cascade {
            f.write_str(" CASCADE")?;
        }
        Ok(())
    }
}

impl Display for CreateDomain {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "CREATE DOMAIN {} AS {}", self.name, self.data_type)?;
        if let Some(d) = &self.default {
            write!(f, " DEFAULT {d}")?;
        }
        for c in &self.constraints {
            match c {
                DomainConstraint::NotNull => f.write_str(" NOT NULL")?,
                DomainConstraint::Null => f.write_str(" NULL")?,
                DomainConstraint::Check(name, e) => {
                    if let Some(n) = name {
                        write!(f, " CONSTRAINT {}", Id(n))?;
                    }
                    write!(f, " CHECK ({e})")?;
                }
            }
        }
        Ok(())
    }
}

impl Display for DropDomain {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("DROP DOMAIN ")?;
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
