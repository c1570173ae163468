//! Prepared statements: `PREPARE`, `EXECUTE`, `DEALLOCATE`.

use super::{DataType, Expr, Ident, Offset};

/// `PREPARE name [(type, ...)] AS statement`.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepare {
    /// The prepared statement's name.
    pub name: Ident,
    /// The declared parameter types (`$1` is the first).
    pub types: Vec<DataType>,
    /// The statement's text as written, with its `$n` parameters and the
    /// semicolon that ends it, if one does: it is parsed when it runs,
    /// once the parameters are known.
    pub text: String,
    /// Where `text` starts in the parsed text.
    pub offset: Offset,
}

/// `EXECUTE name [(argument, ...)]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Execute {
    /// The prepared statement.
    pub name: Ident,
    /// The parameters' values.
    pub args: Vec<Expr>,
}
