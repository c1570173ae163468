//! Scalar functions as the evaluator calls them.
//!
//! Name and argument-type resolution and the implementations live in
//! [`crate::types::funcs`]; this wrapper is what a bound [`Expr`] holds
//! (`Copy`, printable for EXPLAIN), and the one place the evaluator calls.
//!
//! [`Expr`]: super::Expr

use std::fmt;

use crate::error::Result;
use crate::types::funcs::ScalarFunc;
use crate::types::Value;

/// A resolved scalar function.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Func(pub ScalarFunc);

impl fmt::Debug for Func {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name())
    }
}

impl Func {
    /// The function's SQL name.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// The operator symbol (`~`, `!~*`, ...) when this is a
    /// regular-expression matching operator.
    pub fn regexp_operator(&self) -> Option<&'static str> {
        use crate::types::funcs::regexp::RegexpFunc;
        match self.0 {
            ScalarFunc::Regexp(RegexpFunc::Op(icase, negated)) => Some(match (icase, negated) {
                (false, false) => "~",
                (true, false) => "~*",
                (false, true) => "!~",
                (true, true) => "!~*",
            }),
            _ => None,
        }
    }

    /// Calls the function on one row of (already cast) arguments.
    #[inline]
    pub fn call(&self, args: &[Value]) -> Result<Value> {
        self.0.eval(args)
    }
}

/// SQL `LIKE` (or `ILIKE` when `ci`).
pub fn like(s: &str, pattern: &str, ci: bool) -> Result<bool> {
    crate::types::funcs::string::like(s, pattern, ci)
}
