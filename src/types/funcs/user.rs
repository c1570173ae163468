//! The compiled bodies of user-defined functions, as the evaluator calls
//! them: a [`ScalarFunc::User`](super::ScalarFunc::User) holds an index
//! into this process-wide table.
//!
//! The planner compiles a function's body the first time a statement calls
//! a version of it and installs the result here under that version's
//! serial (`catalog::FunctionDef::serial`); later calls of the same
//! version reuse the entry. An entry is reserved before its body is
//! compiled, so a body that calls its own function (recursion) finds it.
//! Entries are never removed: one per function version used, as
//! PostgreSQL's backends keep compiled PL/pgSQL functions (and one per
//! calling statement for a body bound to its statement, which the planner
//! [`forget`]s after installing).
//!
//! Calls nest at most [`MAX_DEPTH`] deep (54001 beyond, PostgreSQL's
//! `stack depth limit exceeded`), so runaway recursion fails cleanly.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use super::volatility::Volatility;
use crate::err;
use crate::error::Result;
use crate::types::value::Value;

/// A compiled body: the function's arguments in, its result out.
pub type Body = Arc<dyn Fn(&[Value]) -> Result<Value> + Send + Sync>;

/// A compiled set-returning body (or a scalar one called in FROM): the
/// function's arguments in, its rows out.
pub type SetBody = Arc<dyn Fn(&[Value]) -> Result<Vec<Vec<Value>>> + Send + Sync>;

/// How deep user function calls may nest.
pub const MAX_DEPTH: u32 = 200;

struct Entry {
    name: &'static str,
    volatility: Volatility,
    /// Declared PARALLEL SAFE.
    parallel_safe: bool,
    body: Option<Body>,
}

#[derive(Default)]
struct Table {
    entries: Vec<Entry>,
    by_serial: HashMap<u64, u32>,
}

static TABLE: RwLock<Option<Table>> = RwLock::new(None);

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// The entry of the function version `serial`: `(id, true)` when it was
/// just reserved (the caller compiles and [`install`]s its body), `(id,
/// false)` when it exists already.
pub fn reserve(serial: u64, name: &str, volatility: Volatility) -> (u32, bool) {
    let mut guard = TABLE.write().unwrap_or_else(|p| p.into_inner());
    let t = guard.get_or_insert_with(Table::default);
    if let Some(&id) = t.by_serial.get(&serial) {
        return (id, false);
    }
    let id = t.entries.len() as u32;
    t.entries.push(Entry {
        // One name per function version, kept for the process's life.
        name: Box::leak(name.to_string().into_boxed_str()),
        volatility,
        parallel_safe: false,
        body: None,
    });
    t.by_serial.insert(serial, id);
    (id, true)
}

/// Records that entry `id`'s function is declared PARALLEL SAFE.
pub fn set_parallel_safe(id: u32, safe: bool) {
    let mut guard = TABLE.write().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = guard.as_mut().and_then(|t| t.entries.get_mut(id as usize)) {
        e.parallel_safe = safe;
    }
}

/// Whether the function is declared PARALLEL SAFE.
pub fn parallel_safe(id: u32) -> bool {
    with_entry(id, |e| e.parallel_safe).unwrap_or(false)
}

/// Sets the body of entry `id`.
pub fn install(id: u32, body: Body) {
    let mut guard = TABLE.write().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = guard.as_mut().and_then(|t| t.entries.get_mut(id as usize)) {
        e.body = Some(body);
    }
}

/// Forgets the entry of `serial` whose compilation failed, so that a later
/// call compiles again (and reports the error again).
pub fn forget(serial: u64) {
    let mut guard = TABLE.write().unwrap_or_else(|p| p.into_inner());
    if let Some(t) = guard.as_mut() {
        t.by_serial.remove(&serial);
    }
}

fn with_entry<T>(id: u32, f: impl FnOnce(&Entry) -> T) -> Option<T> {
    let guard = TABLE.read().unwrap_or_else(|p| p.into_inner());
    guard.as_ref()?.entries.get(id as usize).map(f)
}

/// The function's name.
pub fn name(id: u32) -> &'static str {
    with_entry(id, |e| e.name).unwrap_or("?")
}

/// The function's declared volatility.
pub fn volatility(id: u32) -> Volatility {
    with_entry(id, |e| e.volatility).unwrap_or(Volatility::Volatile)
}

/// Calls function `id` on its (already cast) arguments.
pub fn call(id: u32, args: &[Value]) -> Result<Value> {
    let body = with_entry(id, |e| e.body.clone())
        .flatten()
        .ok_or_else(|| err!(InternalError, "function {} is not compiled yet", name(id)))?;
    nested(|| body(args))
}

/// The rows of a user function called in FROM, `body`, on its (already
/// cast) arguments.
pub fn call_set(body: &SetBody, args: &[Value]) -> Result<Vec<Vec<Value>>> {
    nested(|| body(args))
}

/// Runs `f` one call deeper, failing past [`MAX_DEPTH`].
fn nested<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    let depth = DEPTH.with(|d| d.get());
    if depth >= MAX_DEPTH {
        return Err(err!(StatementTooComplex, "stack depth limit exceeded").with_hint(
            "Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), after ensuring the platform's stack depth limit is adequate.",
        ));
    }
    DEPTH.with(|d| d.set(depth + 1));
    let r = f();
    DEPTH.with(|d| d.set(depth));
    r
}
