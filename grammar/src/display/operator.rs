//! SQL text of `CREATE OPERATOR` and `DROP OPERATOR`.

use std::fmt::{self, Display, Formatter};

use super::{Id, Str};
use crate::ast::{CreateOperator, DropOperator, OperDefArg, OperatorRef};

impl Display for OperDefArg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            OperDefArg::Type(t) => t.fmt(f),
            OperDefArg::Op(op) => write!(f, "OPERATOR({op})"),
            OperDefArg::Text(s) => Str(s).fmt(f),
        }
    }
}

impl Display for CreateOperator {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "CREATE OPERATOR {} (", self.name)?;
        for (k, (name, arg)) in self.options.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            Id(name).fmt(f)?;
            if let Some(a) = arg {
                write!(f, " = {a}")?;
            }
        }
        f.write_str(")")
    }
}

impl Display for OperatorRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{} (", self.name)?;
        match &self.left {
            Some(t) => t.fmt(f)?,
            None => f.write_str("NONE")?,
        }
        write!(f, ", {})", self.right)
    }
}

impl Display for DropOperator {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("DROP OPERATOR ")?;
        if self.if_exists {
            f.write_str("IF EXISTS ")?;
        }
        for (k, op) in self.ops.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            op.fmt(f)?;
        }
        if self.cascade {
            f.write_str(" CASCADE")?;
        }
        Ok(())
    }
}
