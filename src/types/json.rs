//! The `json` and `jsonb` types.
//!
//! A `json` value is its input text, kept verbatim once [`parse`] has
//! validated it (a [`Value::Text`](super::Value::Text) typed `json`); a
//! `jsonb` value is the parsed tree [`jsonb::Jsonb`]
//! ([`Value::Jsonb`](super::Value::Jsonb)), normalized as PostgreSQL
//! normalizes it. The pieces:
//!
//! - [`parse`]: the lexer and parser, with PostgreSQL's error details and
//!   contexts;
//! - [`jsonb`]: the tree, its text output, order and hashing;
//! - [`convert`]: SQL values to JSON (`to_json`) and the casts out of
//!   `jsonb`;
//! - [`ops`]: access, containment, existence, concatenation and editing;
//! - [`funcs`]: the functions and operators as the binder resolves them;
//! - [`agg`]: the results of the aggregates (`json_agg`, ...);
//! - [`srf`]: the set-returning functions (`jsonb_each`, ...).

pub mod agg;
pub mod convert;
pub mod funcs;
pub mod jsonb;
pub mod ops;
pub mod parse;
pub mod srf;

pub use funcs::{resolve_operator, JsonFunc, JsonOp};
pub use jsonb::Jsonb;

use crate::error::Result;

/// `json` input: the text, once it is valid JSON.
pub fn json_in(text: &str) -> Result<()> {
    parse::parse(text, parse::Mode::Json).map(|_| ())
}
