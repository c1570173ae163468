//! `Display` for the prepared-statement commands.

use std::fmt::{self, Display, Formatter};

use super::{Comma, Id};
use crate::ast::{Execute, Prepare};

impl Display for Prepare {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "PREPARE {}", Id(&self.name))?;
        if !self.types.is_empty() {
            write!(f, " ({})", Comma(&self.types))?;
        }
        write!(f, " AS {}", self.text)
    }
}

impl Display for Execute {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "EXECUTE {}", Id(&self.name))?;
        if !self.args.is_empty() {
            write!(f, "({})", Comma(&self.args))?;
        }
        Ok(())
    }
}
