//! `Display` for the cursor statements.

use std::fmt::{self, Display, Formatter};

use super::Id;
use crate::ast::{DeclareCursor, Fetch, FetchDirection};

impl Display for DeclareCursor {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "DECLARE {}", Id(&self.name))?;
        if self.binary {
            f.write_str(" BINARY")?;
        }
        if self.insensitive {
            f.write_str(" INSENSITIVE")?;
        }
        match self.scroll {
            Some(true) => f.write_str(" SCROLL")?,
            Some(false) => f.write_str(" NO SCROLL")?,
            None => {}
        }
        f.write_str(" CURSOR")?;
        if self.hold {
            f.write_str(" WITH HOLD")?;
        }
        write!(f, " FOR {}", self.query)
    }
}

impl Display for Fetch {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_move { "MOVE " } else { "FETCH " })?;
        match self.direction {
            FetchDirection::Forward(Some(n)) => write!(f, "FORWARD {n}")?,
            FetchDirection::Forward(None) => f.write_str("FORWARD ALL")?,
            FetchDirection::Backward(Some(n)) => write!(f, "BACKWARD {n}")?,
            FetchDirection::Backward(None) => f.write_str("BACKWARD ALL")?,
            FetchDirection::Absolute(n) => write!(f, "ABSOLUTE {n}")?,
            FetchDirection::Relative(n) => write!(f, "RELATIVE {n}")?,
        }
        write!(f, " FROM {}", Id(&self.cursor))
    }
}
