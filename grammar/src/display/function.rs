//! `Display` for the function and domain statements.

use std::fmt::{self, Display, Formatter};

use super::{Comma, Id, Str};
use crate::ast::{
    AlterDomain, AlterDomainAction, AlterFunction, AlterFunctionAction, CreateDomain,
    CreateFunction, DomainConstraint, DropDomain, DropFunction, FunctionArg, FunctionOption,
    FunctionRef, FunctionReturns, RoutineKind,
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
            write!(f, " {o}")?;
        }
        Ok(())
    }
}

impl Display for FunctionOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            FunctionOption::Language(l) => write!(f, "LANGUAGE {}", Id(l)),
            FunctionOption::Volatility(v) => f.write_str(&v.to_uppercase()),
            FunctionOption::Strict(true) => f.write_str("STRICT"),
            FunctionOption::Strict(false) => f.write_str("CALLED ON NULL INPUT"),
            FunctionOption::Parallel(p) => write!(f, "PARALLEL {}", p.to_uppercase()),
            FunctionOption::As(body) => write!(f, "AS {}", Str(body)),
            FunctionOption::Return(e) => write!(f, "RETURN {e}"),
            FunctionOption::Ignored(o) => f.write_str(o),
        }
    }
}

impl Display for AlterFunction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            RoutineKind::Function => "FUNCTION",
            RoutineKind::Procedure => "PROCEDURE",
            RoutineKind::Routine => "ROUTINE",
        };
        write!(f, "ALTER {kind} {}", self.func)?;
        match &self.action {
            AlterFunctionAction::Options(options) => {
                for o in options {
                    write!(f, " {o}")?;
                }
                Ok(())
            }
            AlterFunctionAction::RenameTo(n) => write!(f, " RENAME TO {}", Id(n)),
            AlterFunctionAction::OwnerTo(n) => write!(f, " OWNER TO {}", Id(n)),
            AlterFunctionAction::SetSchema(n) => write!(f, " SET SCHEMA {}", Id(n)),
        }
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
        for c in &self.constraints {
            match c {
                DomainConstraint::Default(d) => write!(f, " DEFAULT {d}")?,
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

impl Display for AlterDomain {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "ALTER DOMAIN {} ", self.name)?;
        match &self.action {
            AlterDomainAction::SetDefault(e) => write!(f, "SET DEFAULT {e}"),
            AlterDomainAction::DropDefault => f.write_str("DROP DEFAULT"),
            AlterDomainAction::SetNotNull => f.write_str("SET NOT NULL"),
            AlterDomainAction::DropNotNull => f.write_str("DROP NOT NULL"),
            AlterDomainAction::AddCheck {
                name,
                expr,
                not_valid,
            } => {
                f.write_str("ADD ")?;
                if let Some(n) = name {
                    write!(f, "CONSTRAINT {} ", Id(n))?;
                }
                write!(f, "CHECK ({expr})")?;
                if *not_valid {
                    f.write_str(" NOT VALID")?;
                }
                Ok(())
            }
            AlterDomainAction::DropConstraint {
                if_exists,
                name,
                cascade,
            } => {
                f.write_str("DROP CONSTRAINT ")?;
                if *if_exists {
                    f.write_str("IF EXISTS ")?;
                }
                Id(name).fmt(f)?;
                if *cascade {
                    f.write_str(" CASCADE")?;
                }
                Ok(())
            }
            AlterDomainAction::Rename(n) => write!(f, "RENAME TO {}", Id(n)),
            AlterDomainAction::RenameConstraint(a, b) => {
                write!(f, "RENAME CONSTRAINT {} TO {}", Id(a), Id(b))
            }
        }
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
