//! Cursors: `DECLARE ... CURSOR`, `FETCH` / `MOVE`, `CLOSE`.

use super::{Ident, Query};

/// `DECLARE name [BINARY] [ASENSITIVE | INSENSITIVE] [[NO] SCROLL] CURSOR
/// [{WITH | WITHOUT} HOLD] FOR query`.
#[derive(Clone, Debug, PartialEq)]
pub struct DeclareCursor {
    /// The cursor's name.
    pub name: Ident,
    /// `BINARY`.
    pub binary: bool,
    /// `INSENSITIVE` (`ASENSITIVE` is the default and means the same here).
    pub insensitive: bool,
    /// `SCROLL` (`Some(true)`), `NO SCROLL` (`Some(false)`), or neither.
    pub scroll: Option<bool>,
    /// `WITH HOLD`.
    pub hold: bool,
    /// The query whose rows the cursor returns.
    pub query: Box<Query>,
}

/// Where a `FETCH` or `MOVE` goes (PostgreSQL's `FetchDirection` with its
/// count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchDirection {
    /// `NEXT`, `FORWARD`, a bare count or nothing: forward by `n` rows
    /// (`None` is `ALL`; a negative count goes backward).
    Forward(Option<i64>),
    /// `PRIOR`, `BACKWARD [n | ALL]`: backward by `n` rows (`None` is `ALL`).
    Backward(Option<i64>),
    /// `ABSOLUTE n`, `FIRST` (1), `LAST` (-1).
    Absolute(i64),
    /// `RELATIVE n`.
    Relative(i64),
}

/// `FETCH direction [FROM | IN] cursor`, or the same with `MOVE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Fetch {
    /// `MOVE`: position the cursor without returning rows.
    pub is_move: bool,
    /// Where to go.
    pub direction: FetchDirection,
    /// The cursor.
    pub cursor: Ident,
}
