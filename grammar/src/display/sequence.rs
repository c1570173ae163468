//! `Display` for the sequence statements and sequence options.

use std::fmt::{self, Display, Formatter};

use super::{Comma, Id};
use crate::ast::{AlterSequence, AlterSequenceAction, CreateSequence, DropSequence, SeqOption};

impl Display for SeqOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SeqOption::As(t) => write!(f, "AS {t}"),
            SeqOption::Increment(n) => write!(f, "INCREMENT BY {n}"),
            SeqOption::MinValue(Some(n)) => write!(f, "MINVALUE {n}"),
            SeqOption::MinValue(None) => f.write_str("NO MINVALUE"),
            SeqOption::MaxValue(Some(n)) => write!(f, "MAXVALUE {n}"),
            SeqOption::MaxValue(None) => f.write_str("NO MAXVALUE"),
            SeqOption::Start(n) => write!(f, "START WITH {n}"),
            SeqOption::Restart(Some(n)) => write!(f, "RESTART WITH {n}"),
            SeqOption::Restart(None) => f.write_str("RESTART"),
            SeqOption::Cache(n) => write!(f, "CACHE {n}"),
            SeqOption::Cycle(true) => f.write_str("CYCLE"),
            SeqOption::Cycle(false) => f.write_str("NO CYCLE"),
            SeqOption::OwnedBy(None) => f.write_str("OWNED BY NONE"),
            SeqOption::OwnedBy(Some(names)) => {
                f.write_str("OWNED BY ")?;
                for (k, n) in names.iter().enumerate() {
                    if k > 0 {
                        f.write_str(".")?;
                    }
                    Id(n).fmt(f)?;
                }
                Ok(())
            }
        }
    }
}

fn options(f: &mut Formatter<'_>, opts: &[SeqOption]) -> fmt::Result {
    for o in opts {
        write!(f, " {o}")?;
    }
    Ok(())
}

impl Display for CreateSequence {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("CREATE SEQUENCE ")?;
        if self.if_not_exists {
            f.write_str("IF NOT EXISTS ")?;
        }
        self.name.fmt(f)?;
        options(f, &self.options)
    }
}

impl Display for AlterSequence {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("ALTER SEQUENCE ")?;
        if self.if_exists {
            f.write_str("IF EXISTS ")?;
        }
        self.name.fmt(f)?;
        match &self.action {
            AlterSequenceAction::Options(o) => options(f, o),
            AlterSequenceAction::RenameTo(n) => write!(f, " RENAME TO {}", Id(n)),
        }
    }
}

impl Display for DropSequence {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("DROP SEQUENCE ")?;
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
