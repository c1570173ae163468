//! Sequence DDL: `CREATE SEQUENCE`, `ALTER SEQUENCE`, `DROP SEQUENCE`, and
//! the options they share with a column's `GENERATED ... AS IDENTITY`.

use super::{DataType, Ident, ObjectName};

/// One sequence option, as written (PostgreSQL's `SeqOptElem`).
#[derive(Clone, Debug, PartialEq)]
pub enum SeqOption {
    /// `AS type`
    As(DataType),
    /// `INCREMENT [BY] n`
    Increment(i64),
    /// `MINVALUE n` / `NO MINVALUE` (`None`)
    MinValue(Option<i64>),
    /// `MAXVALUE n` / `NO MAXVALUE` (`None`)
    MaxValue(Option<i64>),
    /// `START [WITH] n`
    Start(i64),
    /// `RESTART [[WITH] n]` (ALTER SEQUENCE only)
    Restart(Option<i64>),
    /// `CACHE n`
    Cache(i64),
    /// `CYCLE` (`true`) / `NO CYCLE` (`false`)
    Cycle(bool),
    /// `OWNED BY table.column` / `OWNED BY NONE` (`None`)
    OwnedBy(Option<Vec<Ident>>),
}

/// `CREATE SEQUENCE [IF NOT EXISTS] name [options]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateSequence {
    /// `IF NOT EXISTS`.
    pub if_not_exists: bool,
    /// The sequence.
    pub name: ObjectName,
    /// The options, in the order written.
    pub options: Vec<SeqOption>,
}

/// What `ALTER SEQUENCE` does.
#[derive(Clone, Debug, PartialEq)]
pub enum AlterSequenceAction {
    /// Changes options (at least one).
    Options(Vec<SeqOption>),
    /// `RENAME TO name`.
    RenameTo(Ident),
}

/// `ALTER SEQUENCE [IF EXISTS] name action`.
#[derive(Clone, Debug, PartialEq)]
pub struct AlterSequence {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The sequence.
    pub name: ObjectName,
    /// What to change.
    pub action: AlterSequenceAction,
}

/// `DROP SEQUENCE [IF EXISTS] name, ... [CASCADE | RESTRICT]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DropSequence {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The sequences.
    pub names: Vec<ObjectName>,
    /// `CASCADE`.
    pub cascade: bool,
}
