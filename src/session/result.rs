//! What running a statement returns.

use std::time::Duration;

use crate::storage::BufferUsage;
use crate::types::{DataType, Value};

/// One result column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Column name (`?column?` when it has none).
    pub name: String,
    /// Its type.
    pub ty: DataType,
}

/// A message PostgreSQL would send as a NOTICE or WARNING.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// `NOTICE` or `WARNING` (or `INFO` for VACUUM VERBOSE).
    pub severity: &'static str,
    /// The message.
    pub message: String,
}

impl Notice {
    /// A WARNING.
    pub fn warning(message: impl Into<String>) -> Notice {
        Notice {
            severity: "WARNING",
            message: message.into(),
        }
    }

    /// A NOTICE.
    #[allow(clippy::self_named_constructors)]
    pub fn notice(message: impl Into<String>) -> Notice {
        Notice {
            severity: "NOTICE",
            message: message.into(),
        }
    }
}

/// Where a statement's time went.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timing {
    /// Parsing.
    pub parse: Duration,
    /// Binding and planning.
    pub plan: Duration,
    /// Running the plan.
    pub execute: Duration,
}

/// The outcome of one statement.
#[derive(Debug, Clone, Default)]
pub struct QueryResult {
    /// Result columns (empty for statements that return no rows).
    pub columns: Vec<Column>,
    /// The rows, when collected ([`Session::execute`](super::Session::execute)).
    pub rows: Vec<Vec<Value>>,
    /// Whether the statement returns rows (a SELECT of zero rows still does).
    pub returns_rows: bool,
    /// The command tag: `SELECT 3`, `INSERT 0 5`, `CREATE TABLE`, ...
    pub tag: String,
    /// NOTICE and WARNING messages, in order.
    pub notices: Vec<Notice>,
    /// Parse / plan / execute times.
    pub timing: Timing,
    /// Buffer counters of the statement.
    pub buffers: BufferUsage,
}

impl QueryResult {
    /// A result with only a command tag.
    pub fn empty(tag: &str) -> QueryResult {
        QueryResult {
            tag: tag.to_string(),
            ..QueryResult::default()
        }
    }
}
