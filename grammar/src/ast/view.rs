//! View statements: `CREATE [OR REPLACE] VIEW` and `DROP VIEW`.

use super::{Ident, ObjectName, Query};

/// `CREATE [OR REPLACE] VIEW name [(col, ...)] AS query
/// [WITH [CASCADED | LOCAL] CHECK OPTION]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateView {
    /// `OR REPLACE`.
    pub or_replace: bool,
    /// The view's name.
    pub name: ObjectName,
    /// The column names, if listed (may be fewer than the query's columns).
    pub columns: Vec<Ident>,
    /// The defining query.
    pub query: Box<Query>,
    /// `WITH [CASCADED | LOCAL] CHECK OPTION`.
    pub check_option: Option<CheckOption>,
}

/// A view's `WITH ... CHECK OPTION`: which views' conditions a row
/// written through it must meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckOption {
    /// `WITH LOCAL CHECK OPTION`: this view's own condition (and those of
    /// underlying views that have a check option of their own).
    Local,
    /// `WITH [CASCADED] CHECK OPTION`: this view's condition and those of
    /// every view beneath it.
    Cascaded,
}

/// `DROP VIEW [IF EXISTS] name, ... [CASCADE | RESTRICT]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DropView {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The views.
    pub names: Vec<ObjectName>,
    /// `CASCADE`.
    pub cascade: bool,
}
