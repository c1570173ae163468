//! View statements: `CREATE [OR REPLACE] VIEW` and `DROP VIEW`.

use super::{Ident, ObjectName, Query};

/// `CREATE [OR REPLACE] VIEW name [(col, ...)] AS query`.
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
