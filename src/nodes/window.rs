//! Window nodes: what a [`super::Node::WindowAgg`] computes (PostgreSQL's
//! `WindowAgg` plan node with its `WindowClause`).
//!
//! A WindowAgg's input is sorted on its partition keys, then its order
//! keys; its output is the input's columns followed by one column per
//! [`WindowCall`]. Every argument, the FILTER condition and the keys are
//! input columns (the planner projects expressions below the node), and
//! frame offsets are constants evaluated at plan time, so the node holds
//! no expression of its own.

use super::SortKey;
use crate::types::agg::AggFunc;
use crate::types::{DataType, Value};

/// One window: partitioning, ordering, frame, and the calls over it.
#[derive(Debug, Clone)]
pub struct WindowClause {
    /// Input columns that split the rows into partitions.
    pub partition: Vec<usize>,
    /// Input columns that order each partition (rows equal on all of them
    /// are peers).
    pub order: Vec<SortKey>,
    /// The frame.
    pub frame: Frame,
    /// The calls computed over this window, in output order.
    pub calls: Vec<WindowCall>,
}

/// What a frame offset counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
    /// Physical rows.
    Rows,
    /// Values of the single order key (without offsets: peer groups).
    Range,
    /// Peer groups.
    Groups,
}

/// One end of a frame; offsets are non-NULL, non-negative constants
/// (`int8` for ROWS and GROUPS, the in-range offset type for RANGE).
#[derive(Debug, Clone)]
pub enum FrameBound {
    /// The partition's first row.
    UnboundedPreceding,
    /// This far before the current row.
    Preceding(Value),
    /// The current row (ROWS) or its peer group's edge (RANGE, GROUPS).
    CurrentRow,
    /// This far after the current row.
    Following(Value),
    /// The partition's last row.
    UnboundedFollowing,
}

/// Rows left out of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameExclude {
    /// None.
    NoOthers,
    /// The current row.
    CurrentRow,
    /// The current row and its peers.
    Group,
    /// The current row's peers, not itself.
    Ties,
}

/// A window frame.
#[derive(Debug, Clone)]
pub struct Frame {
    /// What offsets count.
    pub units: FrameUnits,
    /// The start.
    pub start: FrameBound,
    /// The end.
    pub end: FrameBound,
    /// What is excluded.
    pub exclude: FrameExclude,
}

impl Frame {
    /// PostgreSQL's default frame: RANGE UNBOUNDED PRECEDING to CURRENT ROW.
    pub fn default_frame() -> Frame {
        Frame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
            exclude: FrameExclude::NoOthers,
        }
    }
}

/// The window functions, and aggregates used as window functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowFunc {
    /// `row_number()`
    RowNumber,
    /// `rank()`
    Rank,
    /// `dense_rank()`
    DenseRank,
    /// `percent_rank()`
    PercentRank,
    /// `cume_dist()`
    CumeDist,
    /// `ntile(n)`
    Ntile,
    /// `lag(value [, offset [, default]])`
    Lag,
    /// `lead(value [, offset [, default]])`
    Lead,
    /// `first_value(value)`
    FirstValue,
    /// `last_value(value)`
    LastValue,
    /// `nth_value(value, n)`
    NthValue,
    /// An aggregate over the frame.
    Agg(AggFunc),
}

/// One window function call.
#[derive(Debug, Clone)]
pub struct WindowCall {
    /// The function.
    pub func: WindowFunc,
    /// Its arguments, as input columns.
    pub args: Vec<usize>,
    /// An aggregate's FILTER condition, as an input column (`bool`).
    pub filter: Option<usize>,
    /// The result type.
    pub ty: DataType,
    /// The call as written (EXPLAIN's output column name).
    pub text: String,
}
