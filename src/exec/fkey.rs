//! The referential-integrity checks of foreign keys (PostgreSQL's
//! `ri_triggers.c`): what a statement's row changes leave to check
//! ([`FkCapture`], filled by the row writer), whether a referenced key is
//! present ([`parent_has_key`]: one probe of the referenced table's unique
//! index) and whether a key is still referenced ([`find_reference`]).
//!
//! Visibility follows PostgreSQL's RI queries, which run with a fresh
//! snapshot and lock what they find:
//! - a referenced row counts when its insert committed (or is this
//!   transaction's) and it is not deleted by a committed transaction (or
//!   this one); a row another running transaction is deleting or updating
//!   is waited for (PostgreSQL waits on the row lock its `FOR KEY SHARE`
//!   takes) and looked at again; a row another running transaction
//!   inserted does not count;
//! - a referencing row counts when it is inserted by a committed
//!   transaction or this one and not deleted; a row another running
//!   transaction inserts or deletes is waited for, so a DELETE of a
//!   referenced key waits for an uncommitted INSERT of a row referencing it
//!   and then fails if that committed.
//!
//! Keys are compared as values cast to the column types of the side that
//! stores them (the referenced index's types for a probe, the referencing
//! columns' for a scan). Nothing here runs SQL: the actions that change
//! referencing rows (CASCADE, SET NULL, SET DEFAULT) are statements the
//! session runs.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::access::heap::tuple::{self, TupleDesc};
use crate::access::heap::{HeapRelation, Tid};
use crate::access::nbtree::keys;
use crate::catalog::{ForeignKeyDef, TableDef};
use crate::err;
use crate::error::{Error, Result};
use crate::exec::index_maint::{open_tree, tuple_values};
use crate::exec::modify::ModifyContext;
use crate::exec::scan::tuple_desc;
use crate::storage::ForkNumber;
use crate::txn::Xid;
use crate::types::{cast::cast, format_value, DataType, Value};

/// The distinct keys of one constraint a statement touched, in the order
/// first seen.
#[derive(Debug, Default)]
pub struct KeySet {
    seen: HashSet<Vec<u8>>,
    /// The keys.
    pub keys: Vec<Vec<Value>>,
}

impl KeySet {
    /// Adds `key` unless already there.
    pub fn add(&mut self, key: Vec<Value>) {
        if self.seen.insert(key_bytes(&key)) {
            self.keys.push(key);
        }
    }
}

/// A key as bytes for hashing: each value's length and encoding, NULL as
/// a lone marker.
fn key_bytes(key: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut tmp = Vec::new();
    for v in key {
        if v.is_null() {
            out.push(0);
            continue;
        }
        tmp.clear();
        v.encode(&mut tmp);
        out.push(1);
        out.extend_from_slice(&(tmp.len() as u32).to_le_bytes());
        out.extend_from_slice(&tmp);
    }
    out
}

/// A referenced key a statement removed, with its new value when an
/// UPDATE changed it.
pub type RemovedKey = (Vec<Value>, Option<Vec<Value>>);

/// What one statement's row changes of a table leave for the checks at
/// the statement's end: the keys its new rows reference (per constraint
/// the table references) and the referenced keys its changes removed (per
/// constraint referencing the table; for an UPDATE, each with its new
/// key).
#[derive(Debug)]
pub struct FkCapture {
    /// The written table's name (for MATCH FULL's error).
    pub table: String,
    /// Constraints of the table, with the keys new rows reference.
    pub child: Vec<(Arc<ForeignKeyDef>, KeySet)>,
    /// Constraints referencing the table, with the keys removed (old key,
    /// and the new one for an UPDATE that changed it).
    pub parent: Vec<(Arc<ForeignKeyDef>, Vec<RemovedKey>)>,
    /// The statement is an UPDATE (else INSERT or DELETE).
    pub updating: bool,
}

impl FkCapture {
    /// A capture for writes to `table`, the constraints it has (`child`)
    /// and those referencing it (`parent`).
    pub fn new(
        table: &str,
        child: Vec<Arc<ForeignKeyDef>>,
        parent: Vec<Arc<ForeignKeyDef>>,
    ) -> FkCapture {
        FkCapture {
            table: table.to_string(),
            child: child.into_iter().map(|f| (f, KeySet::default())).collect(),
            parent: parent.into_iter().map(|f| (f, Vec::new())).collect(),
            updating: false,
        }
    }

    /// Whether the row writer must read the old rows (UPDATE, DELETE).
    pub fn wants_old_rows(&self) -> bool {
        !self.parent.is_empty() || self.updating
    }

    /// A new row (INSERT, or UPDATE's new version with `old` its old
    /// one): the keys it references, unless NULL (MATCH SIMPLE: any
    /// column; MATCH FULL: all, and some is an error) or unchanged.
    pub fn new_row(&mut self, row: &[Value], old: Option<&[Value]>) -> Result<()> {
        for (fk, set) in &mut self.child {
            let key: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
            let nulls = key.iter().filter(|v| v.is_null()).count();
            if nulls == key.len() || (nulls > 0 && !fk.match_full) {
                continue;
            }
            if nulls > 0 {
                return Err(err!(
                    ForeignKeyViolation,
                    "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
                    self.table,
                    fk.name
                )
                .with_detail("MATCH FULL does not allow mixing of null and nonnull key values."));
            }
            if let Some(old) = old {
                let before: Vec<Value> = fk.columns.iter().map(|&c| old[c].clone()).collect();
                if key_bytes(&before) == key_bytes(&key) {
                    continue;
                }
            }
            set.add(key);
        }
        Ok(())
    }

    /// An old row leaving (DELETE, or UPDATE with `new` its new version):
    /// the referenced keys it held, unless NULL or (UPDATE) unchanged.
    pub fn old_row(&mut self, row: &[Value], new: Option<&[Value]>) {
        for (fk, keys) in &mut self.parent {
            let key: Vec<Value> = fk.ref_columns.iter().map(|&c| row[c].clone()).collect();
            if key.iter().any(Value::is_null) {
                continue;
            }
            let new_key = new.map(|n| {
                fk.ref_columns
                    .iter()
                    .map(|&c| n[c].clone())
                    .collect::<Vec<_>>()
            });
            if let Some(nk) = &new_key {
                if key_bytes(nk) == key_bytes(&key) {
                    continue;
                }
            }
            keys.push((key, new_key));
        }
    }

    /// Whether nothing was captured.
    pub fn is_empty(&self) -> bool {
        self.child.iter().all(|(_, s)| s.keys.is_empty())
            && self.parent.iter().all(|(_, k)| k.is_empty())
    }
}

/// `v` as a value of type `ty` (cast only across type families: the
/// string types share one representation).
fn coerce(v: &Value, ty: &DataType) -> Result<Value> {
    match v.data_type() {
        None => Ok(Value::Null),
        Some(t) if std::mem::discriminant(&t) == std::mem::discriminant(ty) => Ok(v.clone()),
        Some(t) if t.is_string() && ty.is_string() => Ok(v.clone()),
        Some(_) => cast(v, ty),
    }
}

/// How a heap tuple stands for a check.
enum RowState {
    Gone,
    Live,
    Wait(Xid),
}

/// The state of tuple `t` for transaction `own`; `wait_inserts`: a row
/// another running transaction inserted is waited for (else it is gone).
fn row_state(rel: &HeapRelation, own: Xid, t: &[u8], wait_inserts: bool) -> Result<RowState> {
    let mask = tuple::infomask(t);
    let (xmin, xmax) = (tuple::xmin(t), tuple::xmax(t));
    let status = |x: Xid| super::index_maint::decided(rel.txns(), own, x);
    let inserted = if mask & tuple::HEAP_XMIN_COMMITTED != 0 {
        Some(true)
    } else if mask & tuple::HEAP_XMIN_INVALID != 0 {
        Some(false)
    } else {
        status(xmin)?
    };
    match inserted {
        Some(false) => return Ok(RowState::Gone),
        None if wait_inserts => return Ok(RowState::Wait(xmin)),
        None => return Ok(RowState::Gone),
        Some(true) => {}
    }
    if xmax == 0 || mask & tuple::HEAP_XMAX_INVALID != 0 {
        return Ok(RowState::Live);
    }
    if mask & tuple::HEAP_XMAX_COMMITTED != 0 {
        return Ok(RowState::Gone);
    }
    Ok(match status(xmax)? {
        Some(true) => RowState::Gone,
        Some(false) => RowState::Live,
        None => RowState::Wait(xmax),
    })
}

/// Whether `parent` (its heap `prel`) has a live row with referenced key
/// `key` (values in `fk.columns` order): one probe of its unique index,
/// waiting for a running transaction that is deleting or updating a row
/// with the key.
pub fn parent_has_key(
    ctx: &ModifyContext<'_>,
    parent: &TableDef,
    prel: &HeapRelation,
    fk: &ForeignKeyDef,
    key: &[Value],
) -> Result<bool> {
    let ix = parent
        .indexes
        .iter()
        .find(|i| i.oid == fk.ref_index)
        .ok_or_else(|| {
            err!(
                InternalError,
                "index for constraint \"{}\" not found",
                fk.name
            )
        })?;
    let mut vals = Vec::with_capacity(ix.columns.len());
    for ic in &ix.columns {
        let j = fk
            .ref_columns
            .iter()
            .position(|&c| c == ic.column)
            .ok_or_else(|| err!(InternalError, "constraint \"{}\" does not match", fk.name))?;
        vals.push(coerce(&key[j], &parent.columns[ic.column].ty)?);
    }
    let tree = open_tree(ctx.pool, ctx.wal, parent, ix);
    let mut prefix = Vec::new();
    keys::encode_key(tree.desc(), &vals, &mut prefix)?;
    let desc = tuple_desc(parent)?;
    loop {
        let mut wait = None;
        for t in tree.lookup(&prefix)? {
            let tid = Tid {
                block: t.0,
                offset: t.1,
            };
            let state = chain_state(prel, tid, |tup| {
                // The entry may be stale (its line pointer reused).
                let row = tuple_values(parent, &desc, tup)?;
                let stored: Vec<Value> = ix.columns.iter().map(|c| row[c.column].clone()).collect();
                let mut k = Vec::new();
                keys::encode_key(tree.desc(), &stored, &mut k)?;
                if k != prefix {
                    return Ok(RowState::Gone);
                }
                row_state(prel, ctx.xid, tup, false)
            })?;
            match state {
                Some(RowState::Live) => return Ok(true),
                Some(RowState::Wait(x)) => wait = Some(x),
                _ => {}
            }
        }
        match wait {
            Some(x) => {
                ctx.wait_for(x)?;
            }
            None => return Ok(false),
        }
    }
}

/// Runs `f` on the tuple at `tid` under its page's shared lock (`None`
/// when the slot holds no tuple).
fn with_tuple<T>(
    rel: &HeapRelation,
    tid: Tid,
    f: impl FnOnce(&[u8]) -> Result<T>,
) -> Result<Option<T>> {
    if tid.block >= rel.nblocks()? {
        return Ok(None);
    }
    let buf = rel
        .pool()
        .read_buffer(rel.rel(), ForkNumber::Main, tid.block, None)?;
    let g = buf.read();
    match crate::storage::page::get_item(&g[..], tid.offset) {
        Some(t) if t.len() >= tuple::HEADER_SIZE => f(t).map(Some),
        _ => Ok(None),
    }
}

/// What the HOT chain whose root is `tid` (an index entry's tuple id)
/// holds, `state` deciding each version: the first live one, else a
/// running transaction to wait for, else `Gone` (`None`: no version).
fn chain_state(
    rel: &HeapRelation,
    tid: Tid,
    state: impl Fn(&[u8]) -> Result<RowState>,
) -> Result<Option<RowState>> {
    let mut wait = None;
    let mut any = false;
    let live = rel.search_chain(tid, |_, tup| {
        any = true;
        Ok(match state(tup)? {
            RowState::Live => Some(()),
            RowState::Wait(x) => {
                wait.get_or_insert(x);
                None
            }
            RowState::Gone => None,
        })
    })?;
    Ok(match (live, wait) {
        (Some(()), _) => Some(RowState::Live),
        (None, Some(x)) => Some(RowState::Wait(x)),
        (None, None) => any.then_some(RowState::Gone),
    })
}

/// The whole row at `tid` of `table` (an UPDATE's or DELETE's old row,
/// read before the change).
pub fn fetch_row(
    table: &TableDef,
    desc: &TupleDesc,
    rel: &HeapRelation,
    tid: Tid,
) -> Result<Option<Vec<Value>>> {
    with_tuple(rel, tid, |t| tuple_values(table, desc, t))
}

/// The first of `keys` (referenced keys, in `fk.ref_columns` order) that
/// a live row of `child` (its heap `crel`) still references, scanning the
/// table once; a row a running transaction inserts or deletes with one of
/// the keys is waited for.
pub fn find_reference(
    ctx: &ModifyContext<'_>,
    child: &TableDef,
    crel: &HeapRelation,
    fk: &ForeignKeyDef,
    keys: &[Vec<Value>],
) -> Result<Option<Vec<Value>>> {
    if keys.is_empty() {
        return Ok(None);
    }
    if keys.len() <= PROBE_KEYS {
        if let Some(found) = probe_references(ctx, child, crel, fk, keys)? {
            return Ok(found);
        }
    }
    let mut wanted: HashMap<Vec<u8>, usize> = HashMap::new();
    for (i, k) in keys.iter().enumerate() {
        let cast: Vec<Value> = fk
            .columns
            .iter()
            .zip(k)
            .map(|(&c, v)| coerce(v, &child.columns[c].ty))
            .collect::<Result<_>>()?;
        wanted.entry(key_bytes(&cast)).or_insert(i);
    }
    let desc = tuple_desc(child)?;
    let ncols = fk.columns.iter().max().map_or(0, |m| m + 1);
    let mut block = 0;
    while block < crel.nblocks()? {
        let mut found = None;
        let mut wait = None;
        {
            let mut slots = vec![None; ncols];
            let buf = crel
                .pool()
                .read_buffer(crel.rel(), ForkNumber::Main, block, None)?;
            let g = buf.read();
            for off in 1..=crate::storage::page::max_offset(&g[..]) {
                let Some(t) = crate::storage::page::get_item(&g[..], off) else {
                    continue;
                };
                if t.len() < tuple::HEADER_SIZE {
                    continue;
                }
                tuple::deform(t, &desc, ncols, &mut slots)?;
                let key: Vec<Value> = fk
                    .columns
                    .iter()
                    .map(|&c| match slots[c] {
                        Some(b) => Value::decode(&child.columns[c].ty, b),
                        None => Value::Null,
                    })
                    .collect();
                let Some(&i) = wanted.get(&key_bytes(&key)) else {
                    continue;
                };
                match row_state(crel, ctx.xid, t, true)? {
                    RowState::Live => {
                        found = Some(i);
                        break;
                    }
                    RowState::Wait(x) => {
                        wait = Some(x);
                        break;
                    }
                    RowState::Gone => {}
                }
            }
        }
        if let Some(i) = found {
            return Ok(Some(keys[i].clone()));
        }
        match wait {
            // The page again once the writer is done.
            Some(x) => {
                ctx.wait_for(x)?;
            }
            None => block += 1,
        }
    }
    Ok(None)
}

/// At most this many removed keys are looked up through an index of the
/// referencing table; more are matched in one pass over it.
const PROBE_KEYS: usize = 64;

/// [`find_reference`] through an index of `child` whose leading key
/// columns are the constraint's columns: one probe per key. `None` when
/// the table has no such index.
fn probe_references(
    ctx: &ModifyContext<'_>,
    child: &TableDef,
    crel: &HeapRelation,
    fk: &ForeignKeyDef,
    keys: &[Vec<Value>],
) -> Result<Option<Option<Vec<Value>>>> {
    let n = fk.columns.len();
    let Some(ix) = child.indexes.iter().find(|i| {
        i.predicate.is_none()
            && i.columns.len() >= n
            && i.columns[..n]
                .iter()
                .all(|c| fk.columns.contains(&c.column))
    }) else {
        return Ok(None);
    };
    let tree = open_tree(ctx.pool, ctx.wal, child, ix);
    let desc = tuple_desc(child)?;
    for key in keys {
        // The key's values in the index's column order, as the child's types.
        let mut vals = Vec::with_capacity(n);
        for ic in &ix.columns[..n] {
            let j = fk
                .columns
                .iter()
                .position(|&c| c == ic.column)
                .ok_or_else(|| err!(InternalError, "index column not in the key"))?;
            vals.push(coerce(&key[j], &child.columns[ic.column].ty)?);
        }
        let mut prefix = Vec::new();
        keys::encode_key(tree.desc(), &vals, &mut prefix)?;
        loop {
            let mut wait = None;
            let mut live = false;
            for t in tree.lookup(&prefix)? {
                let tid = Tid {
                    block: t.0,
                    offset: t.1,
                };
                let state = chain_state(crel, tid, |tup| {
                    let row = tuple_values(child, &desc, tup)?;
                    let stored: Vec<Value> = ix.columns[..n]
                        .iter()
                        .map(|c| row[c.column].clone())
                        .collect();
                    let mut k = Vec::new();
                    keys::encode_key(tree.desc(), &stored, &mut k)?;
                    if k != prefix {
                        return Ok(RowState::Gone);
                    }
                    row_state(crel, ctx.xid, tup, true)
                })?;
                match state {
                    Some(RowState::Live) => {
                        live = true;
                        break;
                    }
                    Some(RowState::Wait(x)) => wait = Some(x),
                    _ => {}
                }
            }
            if live {
                return Ok(Some(Some(key.clone())));
            }
            match wait {
                Some(x) => {
                    ctx.wait_for(x)?;
                }
                None => break,
            }
        }
    }
    Ok(Some(None))
}

/// `(a, b)=(1, 2)`: the key columns and values as PostgreSQL's DETAIL
/// shows them.
fn key_text(table: &TableDef, cols: &[usize], key: &[Value]) -> String {
    let names: Vec<&str> = cols
        .iter()
        .map(|&c| table.columns[c].name.as_str())
        .collect();
    let vals: Vec<String> = key
        .iter()
        .map(|v| {
            if v.is_null() {
                return "null".to_string();
            }
            let mut s = String::new();
            format_value(v, &mut s);
            s
        })
        .collect();
    format!("({})=({})", names.join(", "), vals.join(", "))
}

/// PostgreSQL's error for a new row whose key `key` (referencing columns'
/// order) is not in the referenced table.
pub fn not_present(
    child: &TableDef,
    parent: &TableDef,
    fk: &ForeignKeyDef,
    key: &[Value],
) -> Error {
    err!(
        ForeignKeyViolation,
        "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
        child.name,
        fk.name
    )
    .with_detail(format!(
        "Key {} is not present in table \"{}\".",
        key_text(child, &fk.columns, key),
        parent.name
    ))
}

/// PostgreSQL's error for a referenced key `key` removed while `child`
/// still references it.
pub fn still_referenced(
    parent: &TableDef,
    child: &TableDef,
    fk: &ForeignKeyDef,
    key: &[Value],
) -> Error {
    err!(
        ForeignKeyViolation,
        "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
        parent.name,
        fk.name,
        child.name
    )
    .with_detail(format!(
        "Key {} is still referenced from table \"{}\".",
        key_text(parent, &fk.ref_columns, key),
        child.name
    ))
}

/// Calls `f` with each row of `table` (its heap `rel`) that this
/// statement (the context's transaction and command) inserted: the rows
/// COPY FROM and `INSERT ... ON CONFLICT` wrote, found by one pass.
pub fn command_rows(
    ctx: &ModifyContext<'_>,
    table: &TableDef,
    rel: &HeapRelation,
    f: &mut dyn FnMut(&[Value]) -> Result<()>,
) -> Result<()> {
    let desc = tuple_desc(table)?;
    for block in 0..rel.nblocks()? {
        let mut rows = Vec::new();
        {
            let buf = rel
                .pool()
                .read_buffer(rel.rel(), ForkNumber::Main, block, None)?;
            let g = buf.read();
            for off in 1..=crate::storage::page::max_offset(&g[..]) {
                let Some(t) = crate::storage::page::get_item(&g[..], off) else {
                    continue;
                };
                if t.len() < tuple::HEADER_SIZE
                    || tuple::xmin(t) != ctx.xid
                    || tuple::raw_cid(t) != ctx.cid
                    || tuple::xmax(t) == ctx.xid
                {
                    continue;
                }
                rows.push(tuple_values(table, &desc, t)?);
            }
        }
        for row in rows {
            f(&row)?;
        }
    }
    Ok(())
}

/// Calls `f` with each row of `table` (its heap `rel`) that is live for
/// the context's transaction (committed, or its own, and not deleted):
/// the existing rows ALTER TABLE ADD FOREIGN KEY checks, under a lock that
/// keeps writers out.
pub fn live_rows(
    ctx: &ModifyContext<'_>,
    table: &TableDef,
    rel: &HeapRelation,
    f: &mut dyn FnMut(&[Value]) -> Result<()>,
) -> Result<()> {
    live_rows_of(ctx.xid, table, rel, f)
}

/// [`live_rows`] for transaction `xid`: the rows a table rewrite by `xid`
/// (under ACCESS EXCLUSIVE) carries over.
pub fn live_rows_of(
    xid: Xid,
    table: &TableDef,
    rel: &HeapRelation,
    f: &mut dyn FnMut(&[Value]) -> Result<()>,
) -> Result<()> {
    let desc = tuple_desc(table)?;
    for block in 0..rel.nblocks()? {
        let mut rows = Vec::new();
        {
            let buf = rel
                .pool()
                .read_buffer(rel.rel(), ForkNumber::Main, block, None)?;
            let g = buf.read();
            for off in 1..=crate::storage::page::max_offset(&g[..]) {
                let Some(t) = crate::storage::page::get_item(&g[..], off) else {
                    continue;
                };
                if t.len() >= tuple::HEADER_SIZE
                    && matches!(row_state(rel, xid, t, false)?, RowState::Live)
                {
                    rows.push(tuple_values(table, &desc, t)?);
                }
            }
        }
        for row in rows {
            f(&row)?;
        }
    }
    Ok(())
}
