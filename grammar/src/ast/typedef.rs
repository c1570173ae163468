//! Base-type and cast statements: `CREATE TYPE name` (a shell),
//! `CREATE TYPE name (param = value, ...)` (a base type), `DROP TYPE`,
//! `CREATE CAST` and `DROP CAST`.

use super::{DataType, FunctionRef, ObjectName};

/// The value of one `CREATE TYPE` parameter (PostgreSQL's `def_arg`).
#[derive(Clone, Debug, PartialEq)]
pub enum DefArg {
    /// A type or a plain name (`float4`, `int4in`, `variable`, `plain`).
    Type(DataType),
    /// A string literal.
    Str(String),
    /// A number, as written.
    Num(String),
}

/// One `param [= value]` of `CREATE TYPE name (...)`.
#[derive(Clone, Debug, PartialEq)]
pub struct DefElem {
    /// The parameter's name, lower case.
    pub name: String,
    /// Its value, when given.
    pub arg: Option<DefArg>,
}

/// `CREATE TYPE name` (`params` None: a shell type) or `CREATE TYPE name
/// (params)`.
#[derive(Clone, Debug, PartialEq)]
pub struct DefineType {
    /// The type's name.
    pub name: ObjectName,
    /// The parameters; `None` for a shell type.
    pub params: Option<Vec<DefElem>>,
}

/// `DROP TYPE [IF EXISTS] name, ... [CASCADE | RESTRICT]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DropType {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The types.
    pub names: Vec<ObjectName>,
    /// `CASCADE`.
    pub cascade: bool,
}

/// How a cast converts (PostgreSQL's `pg_cast.castmethod`).
#[derive(Clone, Debug, PartialEq)]
pub enum CastMethod {
    /// `WITHOUT FUNCTION`: the value's bits as they are.
    Binary,
    /// `WITH INOUT`: the source's output function, then the target's input.
    Inout,
    /// `WITH FUNCTION f(args)`.
    Function(FunctionRef),
}

/// Where a cast applies without being written (`pg_cast.castcontext`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastWhen {
    /// Only when written (`::`, `CAST`).
    Explicit,
    /// `AS ASSIGNMENT`: also on assignment to a column.
    Assignment,
    /// `AS IMPLICIT`: also in expressions.
    Implicit,
}

/// `CREATE CAST (source AS target) method [AS ASSIGNMENT | AS IMPLICIT]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateCast {
    /// The source type.
    pub source: DataType,
    /// The target type.
    pub target: DataType,
    /// How it converts.
    pub method: CastMethod,
    /// Where it applies.
    pub context: CastWhen,
}

/// `DROP CAST [IF EXISTS] (source AS target) [CASCADE | RESTRICT]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DropCast {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The source type.
    pub source: DataType,
    /// The target type.
    pub target: DataType,
    /// `CASCADE`.
    pub cascade: bool,
}
