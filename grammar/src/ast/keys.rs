//! The SQL around keys and indexes beyond CREATE/DROP INDEX: `INSERT ...
//! ON CONFLICT`, `ALTER TABLE` (constraints, and the column forms) and
//! `REINDEX`.

use super::{
    Assignment, CheckConstraint, ColumnDef, DataType, Expr, Ident, IndexElem, ObjectName, Offset,
    SetArg,
};

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
    /// `ADD [CONSTRAINT name] FOREIGN KEY (cols) REFERENCES ... [NOT VALID]`.
    AddForeignKey {
        /// The constraint's name, when written.
        name: Option<Ident>,
        /// The referencing columns.
        columns: Vec<Ident>,
        /// What they reference and how.
        refs: Box<ForeignKeyRef>,
        /// `NOT VALID`: existing rows are not checked.
        not_valid: bool,
        /// Where `ADD` starts in the text.
        offset: Offset,
    },
    /// `ADD [CONSTRAINT name] CHECK (expr) [NO INHERIT] [NOT VALID]`.
    AddCheck(CheckConstraint),
    /// `RENAME CONSTRAINT old TO new`.
    RenameConstraint {
        /// The constraint's name.
        old: Ident,
        /// Its new name.
        new: Ident,
    },
    /// `ALTER [COLUMN] col SET NOT NULL | DROP NOT NULL`.
    SetNotNull {
        /// The column.
        column: Ident,
        /// `SET` (else `DROP`).
        set: bool,
    },
    /// `VALIDATE CONSTRAINT name`.
    ValidateConstraint {
        /// The constraint.
        name: Ident,
    },
    /// `ADD [COLUMN] [IF NOT EXISTS] column_def`.
    AddColumn {
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
        /// The new column.
        column: ColumnDef,
    },
    /// `DROP [COLUMN] [IF EXISTS] name [CASCADE | RESTRICT]`.
    DropColumn {
        /// `IF EXISTS`.
        if_exists: bool,
        /// The column.
        name: Ident,
        /// `CASCADE`.
        cascade: bool,
        /// Where the column name starts in the text.
        offset: Offset,
    },
    /// `RENAME [COLUMN] old TO new`.
    RenameColumn {
        /// The column's name.
        old: Ident,
        /// Its new name.
        new: Ident,
    },
    /// `RENAME TO new` (the table).
    RenameTable {
        /// The table's new name.
        new: Ident,
    },
    /// `ALTER [COLUMN] col SET DEFAULT expr | DROP DEFAULT`.
    SetDefault {
        /// The column.
        column: Ident,
        /// The new default (`None`: DROP DEFAULT).
        default: Option<Expr>,
    },
    /// `ALTER [COLUMN] col [SET DATA] TYPE type [USING expr]`.
    AlterType {
        /// The column.
        column: Ident,
        /// The new type.
        data_type: DataType,
        /// `USING expr`: the new value computed from the row.
        using: Option<Expr>,
        /// Where the column name starts in the text.
        offset: Offset,
    },
    /// `SET (name [= value], ...)` or `RESET (name [= value], ...)`: the
    /// table's storage parameters (PostgreSQL's reloptions). A value
    /// written in `RESET` is kept for the error it gets.
    SetOptions {
        /// `RESET` (else `SET`).
        reset: bool,
        /// The parameters, lower-cased unless quoted, with their values
        /// as written (`None`: no `= value`).
        options: Vec<(Ident, Option<SetArg>)>,
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

/// The `REFERENCES` part of a foreign key: the referenced table and
/// columns, the actions, the match type and the deferral.
#[derive(Clone, Debug, PartialEq)]
pub struct ForeignKeyRef {
    /// The referenced table.
    pub table: ObjectName,
    /// The referenced columns (empty: the table's primary key).
    pub columns: Vec<Ident>,
    /// `ON DELETE ...` (default `NO ACTION`).
    pub on_delete: FkAction,
    /// `ON UPDATE ...` (default `NO ACTION`).
    pub on_update: FkAction,
    /// `MATCH FULL` (else `MATCH SIMPLE`).
    pub match_full: bool,
    /// `DEFERRABLE`.
    pub deferrable: bool,
    /// `INITIALLY DEFERRED`.
    pub initially_deferred: bool,
}

/// What a change of a referenced key does to the referencing rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FkAction {
    /// `NO ACTION`: an error at the statement's end if still referenced.
    NoAction,
    /// `RESTRICT`: an error if referenced.
    Restrict,
    /// `CASCADE`: delete (or update) the referencing rows too.
    Cascade,
    /// `SET NULL [(columns)]`.
    SetNull(Vec<Ident>),
    /// `SET DEFAULT [(columns)]`.
    SetDefault(Vec<Ident>),
}
