//! `Display` for index DDL.

use std::fmt::{self, Display, Formatter};

use super::{Comma, Id, Ids};
use crate::ast::{CreateIndex, DropIndex, IndexElem};

impl Display for IndexElem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        Id(&self.column).fmt(f)?;
        if let Some(opclass) = &self.opclass {
            write!(f, " {opclass}")?;
        }
        match self.asc {
            Some(true) => f.write_str(" ASC")?,
            Some(false) => f.write_str(" DESC")?,
            None => {}
        }
        match self.nulls_first {
            Some(true) => f.write_str(" NULLS FIRST"),
            Some(false) => f.write_str(" NULLS LAST"),
            None => Ok(()),
        }
    }
}

impl Display for CreateIndex {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("CREATE ")?;
        if self.unique {
            f.write_str("UNIQUE ")?;
        }
        f.write_str("INDEX ")?;
        if self.if_not_exists {
            f.write_str("IF NOT EXISTS ")?;
        }
        if let Some(name) = &self.name {
            write!(f, "{} ", Id(name))?;
        }
        write!(f, "ON {}", self.table)?;
        if let Some(m) = &self.method {
            write!(f, " USING {}", Id(m))?;
        }
        write!(f, " ({})", Comma(&self.columns))?;
        if !self.include.is_empty() {
            write!(f, " INCLUDE ({})", Ids(&self.include))?;
        }
        if let Some(p) = &self.predicate {
            write!(f, " WHERE {p}")?;
        }
        Ok(())
    }
}

impl Display for DropIndex {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("DROP INDEX ")?;
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
