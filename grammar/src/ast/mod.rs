//! The abstract syntax tree: what a SQL statement says, with names resolved
//! to nothing (that is the binder's job).
//!
//! Conventions the binder can rely on:
//! - Identifiers ([`Ident`]) are already case-folded: unquoted names are
//!   lower case, `"Quoted"` names are kept exactly.
//! - Numeric literals keep their source text ([`Literal::Number`]), so
//!   integers of any size and decimals reach the binder unrounded. A minus
//!   sign written directly before a number is folded into it (`-5` is the
//!   literal `"-5"`), as PostgreSQL does.
//! - String literals are unescaped (`'it''s'` is `it's`).
//! - Parentheses leave no node: the tree's shape carries the grouping.
//! - Every expression, table name and column definition carries the byte
//!   [`Offset`] of its first token in the parsed text, for error positions.
//!   Offsets never take part in equality, so two trees of the same SQL are
//!   equal wherever their text sat.
//!
//! `Display` (in `display.rs`) prints any tree as SQL that parses back to an
//! equal tree.

use std::hash::{Hash, Hasher};

mod comment;
mod cursor;
mod do_block;
mod expr;
mod function;
mod index;
mod keys;
mod operator;
mod prepare;
mod query;
mod sequence;
mod typedef;
mod view;
mod window;

pub use comment::*;
pub use cursor::*;
pub use do_block::*;
pub use expr::*;
pub use function::*;
pub use index::*;
pub use keys::*;
pub use operator::*;
pub use prepare::*;
pub use query::*;
pub use sequence::*;
pub use typedef::*;
pub use view::*;
pub use window::*;

/// An identifier, already case-folded (see the module docs).
pub type Ident = String;

/// A byte offset into the parsed text. Equality and hashing ignore it: it is
/// where a node was written, not part of what it means.
#[derive(Clone, Copy, Debug, Default, Eq, PartialOrd, Ord)]
pub struct Offset(pub usize);

impl PartialEq for Offset {
    fn eq(&self, _other: &Offset) -> bool {
        true
    }
}

impl Hash for Offset {
    fn hash<H: Hasher>(&self, _state: &mut H) {}
}

/// One SQL statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// `SELECT ...`, `VALUES ...`, set operations, `WITH ... SELECT`.
    Query(Box<Query>),
    /// `INSERT INTO ...`
    Insert(Box<Insert>),
    /// `UPDATE ... SET ...`
    Update(Box<Update>),
    /// `DELETE FROM ...`
    Delete(Box<Delete>),
    /// `CREATE TABLE name (columns ...)`
    CreateTable(Box<CreateTable>),
    /// `CREATE TABLE name AS query`
    CreateTableAs(Box<CreateTableAs>),
    /// `CREATE [OR REPLACE] VIEW ...`
    CreateView(Box<CreateView>),
    /// `DROP VIEW ...`
    DropView(DropView),
    /// `CREATE [OR REPLACE] FUNCTION ...`
    CreateFunction(Box<CreateFunction>),
    /// `DROP FUNCTION ...`
    DropFunction(DropFunction),
    /// `ALTER FUNCTION | PROCEDURE | ROUTINE`.
    AlterFunction(Box<AlterFunction>),
    /// `CREATE DOMAIN ...`
    CreateDomain(Box<CreateDomain>),
    /// `DROP DOMAIN ...`
    DropDomain(DropDomain),
    /// `ALTER DOMAIN ...`
    AlterDomain(Box<AlterDomain>),
    /// `CREATE OPERATOR ...`
    CreateOperator(Box<CreateOperator>),
    /// `DROP OPERATOR ...`
    DropOperator(DropOperator),
    /// `CREATE TYPE name` (a shell) / `CREATE TYPE name (params)` (a base
    /// type).
    DefineType(Box<DefineType>),
    /// `DROP TYPE ...`
    DropType(DropType),
    /// `CREATE CAST ...`
    CreateCast(Box<CreateCast>),
    /// `DROP CAST ...`
    DropCast(DropCast),
    /// `DROP TABLE ...`
    DropTable(DropTable),
    /// `TRUNCATE [TABLE] ...`
    Truncate(Truncate),
    /// `CREATE [UNIQUE] INDEX ...`
    CreateIndex(Box<CreateIndex>),
    /// `DROP INDEX ...`
    DropIndex(DropIndex),
    /// `ALTER TABLE ... ADD/DROP CONSTRAINT ...`
    AlterTable(Box<AlterTable>),
    /// `REINDEX INDEX | TABLE ...`
    Reindex(Reindex),
    /// `COPY ... FROM/TO ...`
    Copy(Box<Copy>),
    /// `VACUUM ...`
    Vacuum(Vacuum),
    /// `ANALYZE ...`
    Analyze(Analyze),
    /// `CHECKPOINT`
    Checkpoint,
    /// `COMMENT ON object IS text`.
    Comment(Box<Comment>),
    /// `EXPLAIN [options] statement`
    Explain(Box<Explain>),
    /// `BEGIN` / `START TRANSACTION` with optional modes.
    Begin(TransactionModes),
    /// `COMMIT` / `END` [`AND [NO] CHAIN`]: `chain` starts a new
    /// transaction with the same characteristics.
    Commit {
        /// `AND CHAIN`.
        chain: bool,
    },
    /// `ROLLBACK` / `ABORT` [`AND [NO] CHAIN`].
    Rollback {
        /// `AND CHAIN`.
        chain: bool,
    },
    /// `SET TRANSACTION modes` (for the current transaction).
    SetTransaction(TransactionModes),
    /// `SET [SESSION | LOCAL] name {TO | =} value`
    Set(Set),
    /// `SHOW name` / `SHOW ALL`
    Show(Show),
    /// `RESET name` / `RESET ALL`
    Reset(Reset),
    /// `DO [LANGUAGE lang] 'code'`
    Do(DoBlock),
    /// `CREATE SEQUENCE ...`
    CreateSequence(Box<CreateSequence>),
    /// `ALTER SEQUENCE ...`
    AlterSequence(Box<AlterSequence>),
    /// `DROP SEQUENCE ...`
    DropSequence(DropSequence),
    /// `DECLARE name ... CURSOR ... FOR query`
    DeclareCursor(Box<DeclareCursor>),
    /// `FETCH ...` / `MOVE ...`
    Fetch(Fetch),
    /// `CLOSE name` / `CLOSE ALL` (`None`)
    Close(Option<Ident>),
    /// `PREPARE name [(types)] AS statement`
    Prepare(Box<Prepare>),
    /// `EXECUTE name [(arguments)]`
    Execute(Box<Execute>),
    /// `DEALLOCATE [PREPARE] name` / `DEALLOCATE ALL` (`None`)
    Deallocate(Option<Ident>),
}

/// A possibly schema-qualified object name (a table or a function).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ObjectName {
    /// The schema, when written (`public.t`).
    pub schema: Option<Ident>,
    /// The object's own name.
    pub name: Ident,
    /// Where the name starts in the text.
    pub offset: Offset,
}

impl ObjectName {
    /// An unqualified name at offset 0 (handy in tests and generated trees).
    pub fn new(name: impl Into<Ident>) -> ObjectName {
        ObjectName {
            schema: None,
            name: name.into(),
            offset: Offset(0),
        }
    }
}

// -------------------------------------------------------- data statements --

/// `INSERT INTO table [(columns)] {VALUES ... | query | DEFAULT VALUES} [RETURNING ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Insert {
    /// The target table.
    pub table: ObjectName,
    /// The target columns, if listed.
    pub columns: Vec<Ident>,
    /// Where each of `columns` starts in the text (as many as `columns`).
    pub column_offsets: Vec<Offset>,
    /// The rows: a query (a `VALUES` list is a query whose body is
    /// [`SetExpr::Values`]); `None` for `DEFAULT VALUES`.
    pub source: Option<Box<Query>>,
    /// The `RETURNING` list (empty when absent).
    pub returning: Vec<SelectItem>,
    /// `AS alias` of the target table.
    pub alias: Option<Ident>,
    /// `ON CONFLICT ...`.
    pub on_conflict: Option<Box<OnConflict>>,
}

/// `UPDATE table [[AS] alias] SET col = expr, ... [FROM ...] [WHERE ...] [RETURNING ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    /// The target table.
    pub table: ObjectName,
    /// Written `UPDATE ONLY t`: not the tables inheriting from it.
    pub only: bool,
    /// The target's alias, if given.
    pub alias: Option<Ident>,
    /// The `SET` assignments.
    pub assignments: Vec<Assignment>,
    /// Extra `FROM` items.
    pub from: Vec<TableRef>,
    /// The `WHERE` condition.
    pub where_clause: Option<Expr>,
    /// The `RETURNING` list (empty when absent).
    pub returning: Vec<SelectItem>,
}

/// One `column = value` of an `UPDATE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// The assigned column.
    pub column: Ident,
    /// The new value (may be [`ExprKind::Default`]).
    pub value: Expr,
    /// Where the column name starts in the text.
    pub offset: Offset,
    /// `SET (a, b, ...) = (query)`: this column takes the query's column
    /// `.0` of `.1` (each assignment of the group holds the same query).
    /// The forms `(a, b) = (x, y)` and `= ROW(x, y)` are written as one
    /// assignment per column, with `None` here.
    pub multi: Option<(usize, usize)>,
}

/// `DELETE FROM table [[AS] alias] [USING ...] [WHERE ...] [RETURNING ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    /// The target table.
    pub table: ObjectName,
    /// Written `DELETE FROM ONLY t`: not the tables inheriting from it.
    pub only: bool,
    /// The target's alias, if given.
    pub alias: Option<Ident>,
    /// Extra `USING` items.
    pub using: Vec<TableRef>,
    /// The `WHERE` condition.
    pub where_clause: Option<Expr>,
    /// The `RETURNING` list (empty when absent).
    pub returning: Vec<SelectItem>,
}

// --------------------------------------------------------- DDL statements --

/// `CREATE [TEMP] TABLE [IF NOT EXISTS] name (column definitions and
/// constraints) [WITH (...)] [ON COMMIT ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateTable {
    /// `TEMP`, `TEMPORARY` or `LOCAL TEMP[ORARY]`.
    pub temp: bool,
    /// `ON COMMIT PRESERVE ROWS | DELETE ROWS | DROP`.
    pub on_commit: Option<OnCommit>,
    /// `IF NOT EXISTS`.
    pub if_not_exists: bool,
    /// The new table's name.
    pub name: ObjectName,
    /// The columns, in order.
    pub columns: Vec<ColumnDef>,
    /// Table constraints (`PRIMARY KEY (a, b)`, ...).
    pub constraints: Vec<TableConstraint>,
    /// Storage parameters: `WITH (fillfactor = 70)`.
    pub with_options: Vec<(Ident, SetArg)>,
    /// `INHERITS (parent, ...)`: the parents whose columns come first.
    pub inherits: Vec<ObjectName>,
}

/// One column of a `CREATE TABLE`.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnDef {
    /// The column's name.
    pub name: Ident,
    /// The column's type.
    pub data_type: DataType,
    /// Column constraints, in the order written.
    pub constraints: Vec<ColumnConstraint>,
    /// Where the column name starts in the text.
    pub offset: Offset,
}

/// A constraint written on a column.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnConstraint {
    /// `NULL` (explicitly nullable)
    Null,
    /// `NOT NULL`
    NotNull,
    /// `DEFAULT expr`
    Default(Expr),
    /// `[CONSTRAINT name] PRIMARY KEY`, with the name when written
    PrimaryKey(Option<Ident>),
    /// `[CONSTRAINT name] UNIQUE`, with the name when written
    Unique(Option<Ident>),
    /// `[CONSTRAINT name] CHECK (expr) [NO INHERIT]`
    Check(CheckConstraint),
    /// `[CONSTRAINT name] REFERENCES table [(column)] ...`
    References {
        /// The constraint's name, when written.
        name: Option<Ident>,
        /// What it references and how.
        refs: Box<ForeignKeyRef>,
    },
}

/// A constraint written as a table element.
#[derive(Clone, Debug, PartialEq)]
pub enum TableConstraint {
    /// `[CONSTRAINT name] PRIMARY KEY (columns)`
    PrimaryKey(Option<Ident>, Vec<Ident>),
    /// `[CONSTRAINT name] UNIQUE (columns)`
    Unique(Option<Ident>, Vec<Ident>),
    /// `[CONSTRAINT name] CHECK (expr) [NO INHERIT] [NOT VALID]`
    Check(CheckConstraint),
    /// `[CONSTRAINT name] FOREIGN KEY (columns) REFERENCES table ...`
    ForeignKey {
        /// The constraint's name, when written.
        name: Option<Ident>,
        /// The referencing columns.
        columns: Vec<Ident>,
        /// What they reference and how.
        refs: Box<ForeignKeyRef>,
    },
}

/// A `CHECK` constraint as written on a column, a table or in `ALTER
/// TABLE ... ADD`.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckConstraint {
    /// The constraint's name, when written.
    pub name: Option<Ident>,
    /// The condition.
    pub expr: Expr,
    /// `NO INHERIT`.
    pub no_inherit: bool,
    /// `NOT VALID`: existing rows are not checked.
    pub not_valid: bool,
}

/// `CREATE [TEMP] TABLE [IF NOT EXISTS] name [(columns)] [ON COMMIT ...] AS
/// query`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateTableAs {
    /// `TEMP`, `TEMPORARY` or `LOCAL TEMP[ORARY]`.
    pub temp: bool,
    /// `ON COMMIT PRESERVE ROWS | DELETE ROWS | DROP`.
    pub on_commit: Option<OnCommit>,
    /// `IF NOT EXISTS`.
    pub if_not_exists: bool,
    /// The new table's name.
    pub name: ObjectName,
    /// Column names overriding the query's, if given.
    pub columns: Vec<Ident>,
    /// The query whose rows fill the table.
    pub query: Box<Query>,
}

/// What a temporary table's `ON COMMIT` clause does at each commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnCommit {
    /// `PRESERVE ROWS` (the default): nothing.
    PreserveRows,
    /// `DELETE ROWS`: the table is emptied.
    DeleteRows,
    /// `DROP`: the table is dropped at the end of its creating transaction.
    Drop,
}

/// `DROP TABLE [IF EXISTS] name, ... [CASCADE | RESTRICT]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DropTable {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The tables.
    pub names: Vec<ObjectName>,
    /// `CASCADE`.
    pub cascade: bool,
}

/// `TRUNCATE [TABLE] name, ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct Truncate {
    /// The tables.
    pub names: Vec<ObjectName>,
    /// For each table, whether it was written `ONLY name` (not the tables
    /// inheriting from it).
    pub only: Vec<bool>,
    /// `CASCADE`: the tables referencing them by foreign keys too.
    pub cascade: bool,
}

// ---------------------------------------------------- utility statements --

/// `COPY`: a table (or query) to or from a file or the client.
#[derive(Clone, Debug, PartialEq)]
pub struct Copy {
    /// What is copied.
    pub source: CopySource,
    /// `FROM` (load) or `TO` (unload).
    pub direction: CopyDirection,
    /// The file, `STDIN` or `STDOUT`.
    pub target: CopyTarget,
    /// The options, in the order written; old-style options (`CSV HEADER`,
    /// `WITH DELIMITER ','`) are normalised to the same list.
    pub options: Vec<CopyOption>,
}

/// What a `COPY` reads or writes.
#[derive(Clone, Debug, PartialEq)]
pub enum CopySource {
    /// `table [(columns)]`
    Table {
        /// The table.
        name: ObjectName,
        /// The columns, if listed.
        columns: Vec<Ident>,
    },
    /// `(query)`, only with `TO`.
    Query(Box<Query>),
}

/// The direction of a `COPY`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CopyDirection {
    /// `COPY ... FROM`: rows into the table.
    From,
    /// `COPY ... TO`: rows out of the table or query.
    To,
}

/// Where `COPY` data comes from or goes to. The grammar accepts any of them
/// in either direction, as PostgreSQL's does; the command checks the pairing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CopyTarget {
    /// `'file name'`
    File(String),
    /// `STDIN`
    Stdin,
    /// `STDOUT`
    Stdout,
}

/// One `COPY` option.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CopyOption {
    /// `FORMAT text | csv | binary` (old style: `CSV`, `BINARY`).
    Format(CopyFormat),
    /// `DELIMITER 'c'`
    Delimiter(String),
    /// `NULL 'string'`
    Null(String),
    /// `HEADER [boolean]`
    Header(bool),
    /// `QUOTE 'c'`
    Quote(String),
    /// `ESCAPE 'c'`
    Escape(String),
    /// `FREEZE [boolean]`
    Freeze(bool),
    /// `ENCODING 'name'`
    Encoding(String),
    /// `FORCE_QUOTE (columns)`; an empty list means `*`.
    ForceQuote(Vec<Ident>),
    /// `FORCE_NOT_NULL (columns)`
    ForceNotNull(Vec<Ident>),
}

/// `COPY` data formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CopyFormat {
    /// Tab-separated text with `\N` for NULL (the default).
    Text,
    /// Comma-separated values.
    Csv,
    /// PostgreSQL's binary format.
    Binary,
}

/// `VACUUM [(options)] [table [(columns)], ...]` or the old form
/// `VACUUM [FULL] [FREEZE] [VERBOSE] [ANALYZE] [table ...]`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Vacuum {
    /// `FULL`: rewrite the table.
    pub full: bool,
    /// `FREEZE`: freeze every tuple.
    pub freeze: bool,
    /// `VERBOSE`: report progress.
    pub verbose: bool,
    /// `ANALYZE`: also collect statistics.
    pub analyze: bool,
    /// `DISABLE_PAGE_SKIPPING`: ignore the visibility map.
    pub disable_page_skipping: bool,
    /// The tables (all tables when empty).
    pub tables: Vec<TableAndColumns>,
}

/// `ANALYZE [VERBOSE] [table [(columns)], ...]` (also `ANALYZE (VERBOSE)`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Analyze {
    /// `VERBOSE`.
    pub verbose: bool,
    /// The tables (all tables when empty).
    pub tables: Vec<TableAndColumns>,
}

/// A table and optional column list, as in `VACUUM ANALYZE t (a, b)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableAndColumns {
    /// The table.
    pub name: ObjectName,
    /// The columns (all when empty).
    pub columns: Vec<Ident>,
}

/// `EXPLAIN [(options)] statement` or `EXPLAIN [ANALYZE] [VERBOSE] statement`.
#[derive(Clone, Debug, PartialEq)]
pub struct Explain {
    /// The options.
    pub options: ExplainOptions,
    /// The explained statement (a query, `INSERT`, `UPDATE`, `DELETE` or
    /// `CREATE TABLE AS`).
    pub statement: Statement,
}

/// `EXPLAIN` options; `Default` gives PostgreSQL's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExplainOptions {
    /// `ANALYZE`: run the statement and report actual figures.
    pub analyze: bool,
    /// `VERBOSE`.
    pub verbose: bool,
    /// `COSTS` (default on).
    pub costs: bool,
    /// `BUFFERS`: report buffer hits and reads.
    pub buffers: bool,
    /// `TIMING` (default on; only meaningful with `ANALYZE`).
    pub timing: bool,
    /// `SUMMARY`; `None` means "on with ANALYZE, off otherwise".
    pub summary: Option<bool>,
    /// `FORMAT`.
    pub format: ExplainFormat,
}

impl Default for ExplainOptions {
    fn default() -> ExplainOptions {
        ExplainOptions {
            analyze: false,
            verbose: false,
            costs: true,
            buffers: false,
            timing: true,
            summary: None,
            format: ExplainFormat::Text,
        }
    }
}

/// `EXPLAIN` output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExplainFormat {
    /// `TEXT` (the default)
    Text,
    /// `JSON`
    Json,
    /// `YAML`
    Yaml,
    /// `XML`
    Xml,
}

/// Transaction modes of `BEGIN`, `START TRANSACTION` and `SET TRANSACTION`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TransactionModes {
    /// `ISOLATION LEVEL ...`, if given.
    pub isolation: Option<IsolationLevel>,
    /// `READ ONLY` (`Some(true)`) or `READ WRITE` (`Some(false)`).
    pub read_only: Option<bool>,
    /// `DEFERRABLE` (`Some(true)`) or `NOT DEFERRABLE` (`Some(false)`).
    pub deferrable: Option<bool>,
}

/// Transaction isolation levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IsolationLevel {
    /// `READ UNCOMMITTED` (behaves as READ COMMITTED in PostgreSQL)
    ReadUncommitted,
    /// `READ COMMITTED`
    ReadCommitted,
    /// `REPEATABLE READ`
    RepeatableRead,
    /// `SERIALIZABLE`
    Serializable,
}

/// `SET [SESSION | LOCAL] name {TO | =} value[, ...] | DEFAULT`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Set {
    /// `SET LOCAL` (until the end of the transaction).
    pub local: bool,
    /// The parameter name, lower-cased (`timezone` for `SET TIME ZONE`).
    pub name: Ident,
    /// The new value.
    pub value: SetValue,
}

/// The value of a `SET` (or a storage parameter).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SetValue {
    /// `DEFAULT` (or `LOCAL` after `SET TIME ZONE`): back to the default.
    Default,
    /// One or more comma-separated values.
    Values(Vec<SetArg>),
}

/// One value of a `SET`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SetArg {
    /// A string literal, unescaped.
    String(String),
    /// A number as written (maybe with a leading `-`).
    Number(String),
    /// A word such as `on`, `off`, `true`, lower-cased unless quoted.
    Word(Ident),
}

/// `SHOW name` / `SHOW ALL`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Show {
    /// The parameter name, lower-cased; `"all"` for `SHOW ALL`;
    /// `transaction_isolation` for `SHOW TRANSACTION ISOLATION LEVEL`.
    pub name: Ident,
}

/// `RESET name` / `RESET ALL`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reset {
    /// The parameter name, lower-cased; `"all"` for `RESET ALL`.
    pub name: Ident,
}
