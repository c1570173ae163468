//! `COMMENT ON object IS 'text' | NULL`: the objects a description can be
//! attached to, as written.

use super::{FunctionArg, FunctionRef, Ident, ObjectName, OperatorRef, RoutineKind};

/// The kind of relation `COMMENT ON` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommentRelKind {
    /// `TABLE`.
    Table,
    /// `INDEX`.
    Index,
    /// `VIEW`.
    View,
    /// `SEQUENCE`.
    Sequence,
}

/// The object of `COMMENT ON`.
#[derive(Clone, Debug, PartialEq)]
pub enum CommentObject {
    /// `TABLE | INDEX | VIEW | SEQUENCE name`.
    Relation(CommentRelKind, ObjectName),
    /// `COLUMN [schema.]table.column`: the dotted words as written (one
    /// word alone is the binder's error, as PostgreSQL's).
    Column(Vec<Ident>),
    /// `FUNCTION | PROCEDURE | ROUTINE name [(types)]`.
    Routine(RoutineKind, FunctionRef),
    /// `TYPE name`.
    Type(ObjectName),
    /// `DOMAIN name`.
    Domain(ObjectName),
    /// `CONSTRAINT name ON table`.
    Constraint(Ident, ObjectName),
    /// `CONSTRAINT name ON DOMAIN domain`.
    DomainConstraint(Ident, ObjectName),
    /// `OPERATOR op (left | NONE, right)`.
    Operator(OperatorRef),
    /// `AGGREGATE name (types)`; `None` for `(*)`.
    Aggregate(ObjectName, Option<Vec<FunctionArg>>),
}

/// `COMMENT ON object IS 'text' | NULL`.
#[derive(Clone, Debug, PartialEq)]
pub struct Comment {
    /// What the comment describes.
    pub object: CommentObject,
    /// The text; `None` for `IS NULL`.
    pub text: Option<String>,
}
