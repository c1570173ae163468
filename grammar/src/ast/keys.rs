//! The SQL around keys and indexes beyond CREATE/DROP INDEX: `INSERT ...
//! ON CONFLICT`, `ALTER TABLE ... ADD/DROP CONSTRAINT` and `REINDEX`.

use super::{Assignment, Expr, Ident, IndexElem, ObjectName, Offset};

/// `ON CONFLICT [target] DO NOTHING | DO UPDATE SET ... [WHERE ...]` of an
/// INSERT.
#[derive(Clone, Debug, PartialEq)]
pub struct OnConflict {
    /// Which unique indexes arbitrate.
    pub target: ConflictTarget,
    /// What a conflicting row does.
    pub action: ConflictAction,
    /// Where `ON` starts in the text.
    pub offset: Offset,
}

/// The conflict target of `ON CONFLICT`.
#[derive(Clone, Debug, PartialEq)]
pub enum ConflictTarget {
    /// None written: every unique index (DO NOTHING only).
    Any,
    /// `(col, ...) [WHERE predicate]`: the unique indexes on exactly these
    /// key columns (partial ones when the predicate implies theirs).
    Columns(Vec<IndexElem>, Option<Expr>),
    /// `ON CONSTRAINT name`.
    Constraint(Ident),
}

/// The action of `ON CONFLICT`.
#[derive(Clone, Debug, PartialEq)]
pub enum ConflictAction {
    /// `DO NOTHING`.
    Nothing,
    /// `DO UPDATE SET col = expr, ... [WHERE condition]`.
    Update {
        /// The `SET` assignments.
        assignments: Vec<Assignment>,
        /// The `WHERE` condition.
        where_clause: Option<Expr>,
    },
}

/// `ALTER TABLE [IF EXISTS] [ONLY] name action, ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct AlterTable {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The table.
    pub table: ObjectName,
    /// The actions, in order.
    pub actions: Vec<AlterTableAction>,
}

/// One action of `ALTER TABLE`.
#[derive(Clone, Debug, PartialEq)]
pub enum AlterTableAction {
    /// `ADD [CONSTRAINT name] PRIMARY KEY (cols) | UNIQUE (cols)`.
    AddConstraint {
        /// The constraint's name, when written.
        name: Option<Ident>,
        /// `PRIMARY KEY` (else `UNIQUE`).
        primary: bool,
        /// The key columns.
        columns: Vec<Ident>,
        /// Where `ADD` starts in the text.
        offset: Offset,
    },
    /// `DROP CONSTRAINT [IF EXISTS] name [CASCADE | RESTRICT]`.
    DropConstraint {
        /// `IF EXISTS`.
        if_exists: bool,
        /// The constraint.
        name: Ident,
        /// `CASCADE`.
        cascade: bool,
    },
}

/// `REINDEX [(VERBOSE)] INDEX | TABLE name`.
#[derive(Clone, Debug, PartialEq)]
pub struct Reindex {
    /// `TABLE` (else `INDEX`).
    pub table: bool,
    /// The index or table.
    pub name: ObjectName,
}
