//! `Display` for the view statements.

use std::fmt::{self, Display, Formatter};

use super::{Comma, Ids};
use crate::ast::{CheckOption, CreateView, DropView};

impl Display for CreateView {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("CREATE ")?;
        if self.or_replace {
            f.write_str("OR REPLACE ")?;
        }
        write!(f, "VIEW {}", self.name)?;
        if !self.columns.is_empty() {
            write!(f, " ({})", Ids(&self.columns))?;
        }
        write!(f, " AS {}", self.query)?;
        match self.check_option {
            Some(CheckOption::Cascaded) => f.write_str(" WITH CASCADED CHECK OPTION"),
            Some(CheckOption::Local) => f.write_str(" WITH LOCAL CHECK OPTION"),
            None => Ok(()),
        }
    }
}

impl Display for DropView {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("DROP VIEW ")?;
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
