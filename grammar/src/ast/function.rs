//! Function and domain statements: `CREATE [OR REPLACE] FUNCTION`,
//! `ALTER FUNCTION`, `DROP FUNCTION`, `CREATE DOMAIN`, `DROP DOMAIN`.

use super::{DataType, Expr, Ident, ObjectName};

/// One declared argument of `CREATE FUNCTION`.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionArg {
    /// Its name, when given.
    pub name: Option<Ident>,
    /// Its type.
    pub data_type: DataType,
}

/// What `RETURNS` says.
#[derive(Clone, Debug, PartialEq)]
pub enum FunctionReturns {
    /// `RETURNS type`.
    Type(DataType),
    /// `RETURNS SETOF type`.
    Setof(DataType),
    /// `RETURNS TABLE (name type, ...)`.
    Table(Vec<FunctionArg>),
}

/// The options of `CREATE FUNCTION`, in the order written (PostgreSQL
/// accepts them in any order, each at most once).
#[derive(Clone, Debug, PartialEq)]
pub enum FunctionOption {
    /// `LANGUAGE name`.
    Language(Ident),
    /// `IMMUTABLE`, `STABLE` or `VOLATILE` (lower case).
    Volatility(Ident),
    /// `STRICT` / `RETURNS NULL ON NULL INPUT` (true) or `CALLED ON NULL
    /// INPUT` (false).
    Strict(bool),
    /// `PARALLEL SAFE | RESTRICTED | UNSAFE` (lower case).
    Parallel(Ident),
    /// `AS 'body'` (or `$$body$$`).
    As(String),
    /// `RETURN expr`: the SQL-standard body.
    Return(Expr),
    /// An option that changes nothing here, as written in upper case:
    /// `COST n`, `ROWS n`, `[NOT] LEAKPROOF`, `SECURITY DEFINER | INVOKER`.
    Ignored(String),
}

/// `CREATE [OR REPLACE] FUNCTION name (args) [RETURNS ...] options`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateFunction {
    /// `OR REPLACE`.
    pub or_replace: bool,
    /// The function's name.
    pub name: ObjectName,
    /// The arguments.
    pub args: Vec<FunctionArg>,
    /// The result, when declared.
    pub returns: Option<FunctionReturns>,
    /// The options.
    pub options: Vec<FunctionOption>,
}

/// One function of `DROP FUNCTION`: its name and, when given, its
/// argument types.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionRef {
    /// The name.
    pub name: ObjectName,
    /// The argument types, when a list was written.
    pub args: Option<Vec<FunctionArg>>,
}

/// `DROP FUNCTION [IF EXISTS] name[(types)], ... [CASCADE | RESTRICT]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DropFunction {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The functions.
    pub funcs: Vec<FunctionRef>,
    /// `CASCADE`.
    pub cascade: bool,
}

/// A constraint of `CREATE DOMAIN`.
#[derive(Clone, Debug, PartialEq)]
pub enum DomainConstraint {
    /// `NOT NULL`.
    NotNull,
    /// `NULL`.
    Null,
    /// `[CONSTRAINT name] CHECK (expr)`.
    Check(Option<Ident>, Expr),
    /// `DEFAULT expr` (more than one is the binder's error).
    Default(Expr),
}

/// `CREATE DOMAIN name [AS] type [DEFAULT expr | constraint ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateDomain {
    /// The domain's name.
    pub name: ObjectName,
    /// The base type.
    pub data_type: DataType,
    /// The `DEFAULT` and the constraints, in order.
    pub constraints: Vec<DomainConstraint>,
}

/// What `ALTER DOMAIN name ...` does.
#[derive(Clone, Debug, PartialEq)]
pub enum AlterDomainAction {
    /// `SET DEFAULT expr`.
    SetDefault(Expr),
    /// `DROP DEFAULT`.
    DropDefault,
    /// `SET NOT NULL`.
    SetNotNull,
    /// `DROP NOT NULL`.
    DropNotNull,
    /// `ADD [CONSTRAINT name] CHECK (expr) [NOT VALID]`.
    AddCheck {
        /// The constraint's name, if given.
        name: Option<Ident>,
        /// The condition.
        expr: Expr,
        /// `NOT VALID`: existing values are not checked.
        not_valid: bool,
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
    /// `RENAME TO new`.
    Rename(Ident),
    /// `RENAME CONSTRAINT old TO new`.
    RenameConstraint(Ident, Ident),
}

/// `ALTER DOMAIN name action`.
#[derive(Clone, Debug, PartialEq)]
pub struct AlterDomain {
    /// The domain.
    pub name: ObjectName,
    /// The change.
    pub action: AlterDomainAction,
}

/// `DROP DOMAIN [IF EXISTS] name, ... [CASCADE | RESTRICT]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DropDomain {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The domains.
    pub names: Vec<ObjectName>,
    /// `CASCADE`.
    pub cascade: bool,
}

/// Which routines `ALTER FUNCTION | PROCEDURE | ROUTINE` names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RoutineKind {
    /// `FUNCTION`.
    Function,
    /// `PROCEDURE`.
    Procedure,
    /// `ROUTINE`: either.
    Routine,
}

/// What `ALTER FUNCTION name[(types)] ...` does.
#[derive(Clone, Debug, PartialEq)]
pub enum AlterFunctionAction {
    /// Options (no LANGUAGE or body; a `SET` / `RESET` of a setting is an
    /// [`FunctionOption::Ignored`] as written), then `[RESTRICT]`.
    Options(Vec<FunctionOption>),
    /// `RENAME TO name`.
    RenameTo(Ident),
    /// `OWNER TO role`.
    OwnerTo(Ident),
    /// `SET SCHEMA name`.
    SetSchema(Ident),
}

/// `ALTER FUNCTION | PROCEDURE | ROUTINE name[(types)] action`.
#[derive(Clone, Debug, PartialEq)]
pub struct AlterFunction {
    /// The word after ALTER.
    pub kind: RoutineKind,
    /// The routine.
    pub func: FunctionRef,
    /// The change.
    pub action: AlterFunctionAction,
}
