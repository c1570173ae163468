//! Function volatility (PostgreSQL's `provolatile`) and the volatile
//! builtins `random()` and `setseed(float8)`.
//!
//! Every builtin says whether it is immutable (same arguments, same result,
//! forever), stable (fixed within a statement: it reads settings such as
//! `TimeZone` or `DateStyle`) or volatile (may change from one call to the
//! next). The planner folds only immutable calls on constants, and a plan
//! template never keeps the value of a stable or volatile one.
//!
//! `random()` is PostgreSQL 15's: xoroshiro128** (`pg_prng.c`), returning
//! the top 52 bits of a draw scaled into [0, 1); `setseed(s)` seeds it the
//! way `pg_prng_fseed` does, so a seeded sequence is PostgreSQL's own. The
//! state is process-wide (one generator for every session, as a server has
//! one per backend); until `setseed` it starts from the clock.

use std::sync::Mutex;

use super::ScalarFunc;
use crate::err;
use crate::error::Result;
use crate::types::value::Value;

/// PostgreSQL's `provolatile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Volatility {
    /// `i`: the result depends on the arguments alone.
    Immutable,
    /// `s`: fixed within one statement (reads settings or the clock of the
    /// statement).
    Stable,
    /// `v`: may change at every call.
    Volatile,
}

impl Volatility {
    /// The keyword, as `CREATE FUNCTION` and `\df` spell it.
    pub fn keyword(self) -> &'static str {
        match self {
            Volatility::Immutable => "immutable",
            Volatility::Stable => "stable",
            Volatility::Volatile => "volatile",
        }
    }
}

impl ScalarFunc {
    /// Whether a parallel worker may call the function (PostgreSQL's
    /// `proparallel` 's'). User functions are PARALLEL UNSAFE unless
    /// declared otherwise in PostgreSQL, and heapdb keeps no such
    /// declaration: a worker has no way to send their notices or writes to
    /// the session. `random()` and `setseed()` are parallel restricted in
    /// PostgreSQL (the generator is the session's).
    pub fn parallel_safe(self) -> bool {
        use ScalarFunc::*;
        !matches!(self, User(_) | Random | Setseed)
    }

    /// Whether PostgreSQL would plan a parallel scan under a call of the
    /// function: [`ScalarFunc::parallel_safe`], or a user function declared
    /// PARALLEL SAFE (which heapdb's leader then computes above the
    /// Gather).
    pub fn declared_parallel_safe(self) -> bool {
        match self {
            ScalarFunc::User(id) => super::user::parallel_safe(id),
            f => f.parallel_safe(),
        }
    }

    /// Whether calls must be made one row at a time, in the order
    /// PostgreSQL makes them: a user function (its notices and writes), or
    /// a builtin whose calls change state a later call reads (`random()`'s
    /// generator, `setseed()`). An operator evaluating such an expression
    /// takes its input a row at a time, so that calls interleave across
    /// the target list row by row and none is made ahead of a LIMIT.
    pub fn per_row(self) -> bool {
        use ScalarFunc::*;
        matches!(self, User(_) | Random | Setseed)
    }

    /// The function's volatility, as PostgreSQL's catalog declares it (for
    /// functions with several signatures, the least stable one's).
    pub fn volatility(self) -> Volatility {
        use ScalarFunc::*;
        match self {
            Random | Setseed | PgSleep => Volatility::Volatile,
            TimeFn(
                super::timefunc::TimeFunc::ClockTimestamp | super::timefunc::TimeFunc::TimeOfDay,
            ) => Volatility::Volatile,
            // They read TimeZone (and DateStyle for the template's fields).
            TimeFn(
                super::timefunc::TimeFunc::ToTimestampFormat
                | super::timefunc::TimeFunc::TimestampTzOf,
            ) => Volatility::Stable,
            User(id) => super::user::volatility(id),
            // They read TimeZone, DateStyle or lc_* settings.
            ToChar | ToDate | Timezone | MakeTimestampTz | Age | DatePart | Extract | DateTrunc
            | Format => Volatility::Stable,
            _ => Volatility::Immutable,
        }
    }
}

/// The generator's state (`s0`, `s1`), `None` until first used.
static STATE: Mutex<Option<(u64, u64)>> = Mutex::new(None);

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut v = *state;
    v = (v ^ (v >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    v = (v ^ (v >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    v ^ (v >> 31)
}

fn seeded(mut seed: u64) -> (u64, u64) {
    let s0 = splitmix64(&mut seed);
    let s1 = splitmix64(&mut seed);
    if s0 == 0 && s1 == 0 {
        (0x5851_F42D_4C95_7F2D, 0x1405_7B7E_F767_814F)
    } else {
        (s0, s1)
    }
}

fn xoroshiro128ss(s: &mut (u64, u64)) -> u64 {
    let (s0, sx) = (s.0, s.1 ^ s.0);
    let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
    s.0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
    s.1 = sx.rotate_left(37);
    val
}

/// `random()`: a float8 in [0, 1).
pub fn random() -> Value {
    let mut guard = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let state = guard.get_or_insert_with(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        seeded(nanos ^ ((std::process::id() as u64) << 32))
    });
    let v = xoroshiro128ss(state);
    Value::Float8((v >> 12) as f64 * (-52f64).exp2())
}

/// `setseed(seed)`: seeds `random()`; the seed must lie in [-1, 1].
pub fn setseed(seed: f64) -> Result<Value> {
    if !(-1.0..=1.0).contains(&seed) {
        return Err(err!(
            InvalidParameterValue,
            "setseed parameter {} is out of allowed range [-1,1]",
            format_g(seed)
        ));
    }
    let seed = (((1u64 << 52) - 1) as f64 * seed) as i64 as u64;
    *STATE.lock().unwrap_or_else(|p| p.into_inner()) = Some(seeded(seed));
    Ok(Value::text(""))
}

/// C's `%g` for the seeds messages name (six significant digits).
fn format_g(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let e = format!("{v:.5e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{}e{sign}{:02}", trim(mant), exp.abs());
    }
    trim(&format!("{v:.*}", (5 - exp).max(0) as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same seed gives PostgreSQL 15's sequence (`select setseed(0.5);
    /// select random(), random();`), and bad seeds are refused.
    #[test]
    fn seeded_sequence_is_postgresqls() {
        let mut s = seeded((((1u64 << 52) - 1) as f64 * 0.5) as i64 as u64);
        let mut next = || (xoroshiro128ss(&mut s) >> 12) as f64 * (-52f64).exp2();
        assert_eq!(next().to_string(), "0.9851677175347999");
        assert_eq!(next().to_string(), "0.825301858027981");
        let e = setseed(2.0).unwrap_err();
        assert_eq!(
            e.message,
            "setseed parameter 2 is out of allowed range [-1,1]"
        );
        assert!(setseed(f64::NAN).is_err());
    }
}
