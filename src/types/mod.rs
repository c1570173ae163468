//! SQL types and values: type ids, storage encoding, text input and output
//! as PostgreSQL 15 prints them, casts, comparison, hashing, arithmetic,
//! aggregate accumulators and scalar functions.
//!
//! The pieces, each in its own file:
//!
//! - [`DataType`] ([`datatype`]): the types, their PostgreSQL names, OIDs,
//!   attribute length and alignment.
//! - [`Value`] ([`value`]): one value (24 bytes), its storage encoding
//!   ([`Value::encode`] / [`Value::decode`]) and SQL equality / hashing.
//! - [`parse_value`] / [`format_value`] ([`io`]): text input and output,
//!   built on [`int`], [`float`], [`numeric`], [`text`] and [`datetime`].
//! - [`compare`]: the total order for ORDER BY and cross-type comparison.
//! - [`cast`]: casts and their contexts; [`ops`]: operator resolution for
//!   the binder and operator evaluation.
//! - [`agg`]: aggregate accumulators (`sum`, `avg`, `min`, `max`, `count`).
//! - [`funcs`]: scalar functions (resolution and evaluation) and LIKE.
//! - [`array`]: one-dimensional arrays (value, text forms, storage,
//!   order); [`array_funcs`]: the array functions and the array forms of
//!   expressions (`ARRAY[...]`, subscripts, `ANY/ALL (array)`, `VARIADIC`).
//! - [`bytea`]: byte strings' text forms and `encode` / `decode`;
//!   [`sha2`]: the SHA-2 digests.
//!
//! Invariants shared by all of them: a `Value` of a `char(n)` column is
//! already padded to `n`; a numeric value carries its display scale; dates
//! and timestamps use PostgreSQL's epoch (2000-01-01) and units. Nothing
//! here locks or does I/O (except reading the system clock for `now`).
//! Every message is PostgreSQL 15's wording for the same situation; unit
//! tests quote PostgreSQL 15 output taken on this machine.

pub mod agg;
pub mod array;
pub mod array_funcs;
pub mod bytea;
pub mod cast;
pub mod compare;
pub mod datatype;
pub mod datetime;
pub mod float;
pub mod funcs;
pub mod int;
pub mod io;
pub mod json;
pub mod numeric;
pub mod ops;
pub mod point;
pub mod sha2;
pub mod text;
pub mod value;

pub use agg::{agg_result_type, Accumulator, AggFunc};
pub use cast::{cast, cast_assign, cast_from, cast_kind, common_type, CastContext};
pub use compare::{compare, compare_typed, hash_typed, sql_eq};
pub use datatype::{DataType, TypeCategory};
pub use funcs::string::LikePattern;
pub use funcs::{Resolved, ScalarFunc};
pub use io::{coerce_literal, format_value, parse_value, parse_value_at, value_to_string};
pub use numeric::Numeric;
pub use ops::{eval_binary, eval_binary_typed, negate, resolve_binary, BinaryOp};
pub use value::{Interval, Value};

/// The styles a session sets on the thread that runs its statement
/// (DateStyle, IntervalStyle, `extra_float_digits`, TimeZone), which value input
/// and output read per thread: captured there and applied on every worker
/// thread the statement starts, so a worker formats and parses as the
/// session does (a parallel COPY TO printing dates, a parallel COPY FROM
/// reading `01/02/2020` under DMY).
#[derive(Debug, Clone)]
pub struct ThreadStyles {
    style: datetime::style::OutputStyle,
    float_digits: i32,
    bytea_hex: bool,
    zone: Option<std::sync::Arc<datetime::zone::Zone>>,
}

impl ThreadStyles {
    /// This thread's styles.
    pub fn current() -> ThreadStyles {
        ThreadStyles {
            style: datetime::style::output_style(),
            float_digits: float::extra_float_digits(),
            bytea_hex: bytea::output_hex(),
            zone: datetime::zone::session_zone(),
        }
    }

    /// Makes them this thread's styles.
    pub fn apply(&self) {
        datetime::style::set_output_style(self.style);
        float::set_extra_float_digits(self.float_digits);
        bytea::set_output_hex(self.bytea_hex);
        datetime::zone::set_session_zone(self.zone.clone());
    }
}
