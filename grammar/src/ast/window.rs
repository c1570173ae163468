//! Window specifications: `OVER (...)`, `OVER name` and the `WINDOW` clause.

use super::{Expr, Ident, Offset, OrderBy};

/// A window: what `OVER` names or writes, or a `WINDOW name AS (...)` body.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowSpec {
    /// `OVER name` without parentheses: the named window as it is.
    pub name: Option<Ident>,
    /// `(base ...)`: the window this one copies and extends.
    pub base: Option<Ident>,
    /// `PARTITION BY` expressions.
    pub partition_by: Vec<Expr>,
    /// `ORDER BY` items.
    pub order_by: Vec<OrderBy>,
    /// The frame clause, if written.
    pub frame: Option<WindowFrame>,
    /// Where the specification starts in the text (for errors).
    pub offset: Offset,
}

impl WindowSpec {
    /// An empty `OVER ()`.
    pub fn empty() -> WindowSpec {
        WindowSpec {
            name: None,
            base: None,
            partition_by: Vec::new(),
            order_by: Vec::new(),
            frame: None,
            offset: Offset(0),
        }
    }
}

/// `ROWS | RANGE | GROUPS`: what a frame offset counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameUnits {
    /// `ROWS`
    Rows,
    /// `RANGE`
    Range,
    /// `GROUPS`
    Groups,
}

/// One end of a frame.
#[derive(Clone, Debug, PartialEq)]
pub enum FrameBound {
    /// `UNBOUNDED PRECEDING`
    UnboundedPreceding,
    /// `offset PRECEDING`
    Preceding(Box<Expr>),
    /// `CURRENT ROW`
    CurrentRow,
    /// `offset FOLLOWING`
    Following(Box<Expr>),
    /// `UNBOUNDED FOLLOWING`
    UnboundedFollowing,
}

/// `EXCLUDE ...` of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameExclude {
    /// `EXCLUDE NO OTHERS` (the default)
    NoOthers,
    /// `EXCLUDE CURRENT ROW`
    CurrentRow,
    /// `EXCLUDE GROUP`
    Group,
    /// `EXCLUDE TIES`
    Ties,
}

/// A frame clause: `units BETWEEN start AND end [EXCLUDE ...]`, or
/// `units start` (the end is then `CURRENT ROW`).
#[derive(Clone, Debug, PartialEq)]
pub struct WindowFrame {
    /// What offsets count.
    pub units: FrameUnits,
    /// The start.
    pub start: FrameBound,
    /// The end, when written with `BETWEEN`.
    pub end: Option<FrameBound>,
    /// The exclusion.
    pub exclude: FrameExclude,
    /// Where the frame clause starts in the text (for errors).
    pub offset: Offset,
}

/// `WINDOW name AS (spec)`: one entry of a SELECT's WINDOW clause.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedWindow {
    /// The name.
    pub name: Ident,
    /// The specification.
    pub spec: WindowSpec,
}
