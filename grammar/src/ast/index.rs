//! Index DDL: `CREATE [UNIQUE] INDEX` and `DROP INDEX`.

use super::{Expr, Ident, ObjectName, Offset};

/// One key column of `CREATE INDEX`: `col [opclass] [ASC | DESC] [NULLS FIRST
/// | LAST]`.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexElem {
    /// The column.
    pub column: Ident,
    /// The operator class, when written (`text_pattern_ops`).
    pub opclass: Option<ObjectName>,
    /// `Some(true)` for `ASC`, `Some(false)` for `DESC`, `None` when unwritten.
    pub asc: Option<bool>,
    /// `Some(true)` for `NULLS FIRST`, `Some(false)` for `NULLS LAST`.
    pub nulls_first: Option<bool>,
    /// Where the column name starts in the text (takes no part in equality).
    pub offset: Offset,
}

/// `CREATE [UNIQUE] INDEX [IF NOT EXISTS] [name] ON [ONLY] table [USING method]
/// (elem, ...) [INCLUDE (col, ...)] [WHERE predicate]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateIndex {
    /// `UNIQUE`.
    pub unique: bool,
    /// `IF NOT EXISTS` (PostgreSQL requires a name with it).
    pub if_not_exists: bool,
    /// The index name; `None` lets the system choose one.
    pub name: Option<Ident>,
    /// The table.
    pub table: ObjectName,
    /// `USING method`, when written.
    pub method: Option<Ident>,
    /// The key columns.
    pub columns: Vec<IndexElem>,
    /// `INCLUDE (...)` columns.
    pub include: Vec<Ident>,
    /// A partial index's `WHERE` predicate.
    pub predicate: Option<Expr>,
}

/// `DROP INDEX [IF EXISTS] name, ... [CASCADE | RESTRICT]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DropIndex {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The indexes.
    pub names: Vec<ObjectName>,
    /// `CASCADE`.
    pub cascade: bool,
}
