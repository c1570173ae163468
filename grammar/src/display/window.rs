//! `Display` for window specifications and the `WINDOW` clause. Window
//! names are always quoted: `partition`, `rows` and friends are plain words
//! that would otherwise read back as clause words.

use std::fmt::{self, Display, Formatter};

use super::{Comma, QuotedId};
use crate::ast::*;

impl Display for WindowSpec {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.name {
            return QuotedId(name).fmt(f);
        }
        f.write_str("(")?;
        let mut sep = "";
        if let Some(base) = &self.base {
            QuotedId(base).fmt(f)?;
            sep = " ";
        }
        if !self.partition_by.is_empty() {
            write!(f, "{sep}PARTITION BY {}", Comma(&self.partition_by))?;
            sep = " ";
        }
        if !self.order_by.is_empty() {
            write!(f, "{sep}ORDER BY {}", Comma(&self.order_by))?;
            sep = " ";
        }
        if let Some(frame) = &self.frame {
            write!(f, "{sep}{frame}")?;
        }
        f.write_str(")")
    }
}

impl Display for WindowFrame {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self.units {
            FrameUnits::Rows => "ROWS ",
            FrameUnits::Range => "RANGE ",
            FrameUnits::Groups => "GROUPS ",
        })?;
        match &self.end {
            Some(end) => write!(f, "BETWEEN {} AND {end}", self.start)?,
            None => self.start.fmt(f)?,
        }
        f.write_str(match self.exclude {
            FrameExclude::NoOthers => "",
            FrameExclude::CurrentRow => " EXCLUDE CURRENT ROW",
            FrameExclude::Group => " EXCLUDE GROUP",
            FrameExclude::Ties => " EXCLUDE TIES",
        })
    }
}

impl Display for FrameBound {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            FrameBound::UnboundedPreceding => f.write_str("UNBOUNDED PRECEDING"),
            FrameBound::Preceding(e) => write!(f, "({e}) PRECEDING"),
            FrameBound::CurrentRow => f.write_str("CURRENT ROW"),
            FrameBound::Following(e) => write!(f, "({e}) FOLLOWING"),
            FrameBound::UnboundedFollowing => f.write_str("UNBOUNDED FOLLOWING"),
        }
    }
}

impl Display for NamedWindow {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{} AS {}", QuotedId(&self.name), self.spec)
    }
}
