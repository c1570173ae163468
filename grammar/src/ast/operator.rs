//! `CREATE OPERATOR` and `DROP OPERATOR`.

use super::{DataType, Ident};

/// One value of `CREATE OPERATOR`'s definition list.
#[derive(Clone, Debug, PartialEq)]
pub enum OperDefArg {
    /// A name or a type: `procedure = f`, `leftarg = int4`.
    Type(DataType),
    /// An operator: `commutator = =`, `negator = OPERATOR(<>)`.
    Op(String),
    /// A string or a number.
    Text(String),
}

/// `CREATE OPERATOR op ( name [= value], ... )`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateOperator {
    /// The operator's symbol.
    pub name: String,
    /// The definition list, in order.
    pub options: Vec<(Ident, Option<OperDefArg>)>,
}

/// `op ( {type | NONE}, type )` in `DROP OPERATOR`.
#[derive(Clone, Debug, PartialEq)]
pub struct OperatorRef {
    /// The operator's symbol.
    pub name: String,
    /// The left operand's type (`NONE` for a prefix operator).
    pub left: Option<DataType>,
    /// The right operand's type.
    pub right: DataType,
}

/// `DROP OPERATOR [IF EXISTS] op (left, right), ... [CASCADE | RESTRICT]`.
#[derive(Clone, Debug, PartialEq)]
pub struct DropOperator {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The operators.
    pub ops: Vec<OperatorRef>,
    /// `CASCADE`.
    pub cascade: bool,
}
