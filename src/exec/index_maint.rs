//! Index maintenance for row changes: every new heap tuple of a table with
//! indexes gets an entry in each index, and a unique index refuses a key a
//! live row already has (PostgreSQL's `_bt_check_unique`).
//!
//! Invariants:
//! - every heap tuple that is not heap-only has one entry per index; a
//!   heap-only (HOT) version has none: the update that made it changed no
//!   column an index uses ([`IndexInserter::hot_rule`]), so the entries of
//!   its chain's root serve it, and readers walk the chain from the root
//!   (`access::heap::hot`);
//! - the heap tuple goes in first, then its entries; a failed check fails
//!   the statement, whose transaction then aborts, so its tuples and the
//!   entries already made are dead and never seen;
//! - the uniqueness check looks at every version of the HOT chain of every
//!   entry with the same key columns (NULLs never conflict,
//!   PostgreSQL's `_bt_check_unique`): a live one is a violation, one
//!   inserted or deleted by a running transaction is waited for (on its
//!   transaction lock, so deadlocks are found) and the check starts again.
//!   An entry whose heap tuple no longer has the key is stale and ignored.
//! - `INSERT ... ON CONFLICT` ([`IndexInserter::insert_unless_conflict`])
//!   holds the key locks of all its arbiter keys from the conflict check
//!   through the heap insert and the arbiter entries, so a row found free
//!   of conflicts stays free until its entries are in: no duplicate gets
//!   past two concurrent upserts (PostgreSQL reaches the same end by
//!   speculative insertion: insert, recheck, and back out on a conflict).
//! - a partial index has entries only for tuples its predicate is true for
//!   ([`predicate_holds`]), so its uniqueness holds among those rows only,
//!   and it arbitrates an upsert only for rows that satisfy it.

use std::sync::Arc;

use crate::access::heap::tuple::{self, TupleDesc};
use crate::access::heap::{HeapRelation, HotRule, Tid};
use crate::access::nbtree::keys::{self, column_ends};
use crate::access::nbtree::{BTree, BtLog};
use crate::catalog::{IndexDef, TableDef};
use crate::err;
use crate::error::Result;
use crate::exec::modify::ModifyContext;
use crate::storage::{BufferPool, ForkNumber, RelFileNode};
use crate::txn::clog::XidStatus;
use crate::txn::TxnManager;
use crate::txn::Xid;
use crate::types::Value;
use crate::wal::Wal;

mod batch;

/// The open B-tree of index `ix` of `table` in `pool`, logging to `wal`.
pub fn open_tree(pool: &Arc<BufferPool>, wal: &Arc<Wal>, table: &TableDef, ix: &IndexDef) -> BTree {
    let log: Arc<dyn BtLog> = wal.clone();
    BTree::open(
        pool.clone(),
        RelFileNode(ix.relfilenode),
        ix.desc(table),
        Some(log),
    )
    .with_names(&ix.name, &table.name)
}

/// The values index `ix` stores of `row` (a whole table row), in key order.
pub(crate) fn index_values(ix: &IndexDef, row: &[Value]) -> Vec<Value> {
    ix.stored_columns().map(|c| row[c].clone()).collect()
}

/// Whether `row` (a whole table row; at least the predicate's columns
/// filled in) gets an entry in `ix`: always for a full index, when the
/// predicate is true for a partial one (PostgreSQL's `ExecInsertIndexTuples`
/// check of `ii_Predicate`).
pub fn predicate_holds(table: &TableDef, ix: &IndexDef, row: &[Value]) -> Result<bool> {
    let Some(p) = &ix.predicate else {
        return Ok(true);
    };
    let columns = table
        .columns
        .iter()
        .zip(row)
        .map(|(c, v)| crate::exec::vector::Vector::from_values(c.ty, std::slice::from_ref(v)))
        .collect();
    let batch = crate::exec::vector::Batch::new(columns);
    let v = p.expr.eval(&batch)?;
    Ok(crate::exec::expr::count_true(&v) == 1)
}

/// [`predicate_holds`] for a deformed heap tuple (`slots`, one per table
/// column, `None` for NULL): the index build's row filter.
pub fn predicate_holds_slots(
    table: &TableDef,
    ix: &IndexDef,
    slots: &[Option<&[u8]>],
) -> Result<bool> {
    if ix.predicate.is_none() {
        return Ok(true);
    }
    let row: Vec<Value> = table
        .columns
        .iter()
        .zip(slots)
        .map(|(c, s)| s.map_or(Value::Null, |b| Value::decode(&c.ty, b)))
        .collect();
    predicate_holds(table, ix, &row)
}

/// `Key (a, b)=(1, 2)` as PostgreSQL's unique-violation details show it.
pub(crate) fn key_text(table: &TableDef, ix: &IndexDef, row: &[Value]) -> String {
    let names: Vec<&str> = ix
        .columns
        .iter()
        .map(|c| table.columns[c.column].name.as_str())
        .collect();
    let vals: Vec<String> = ix
        .columns
        .iter()
        .map(|c| crate::exec::modify::shown_value(&row[c.column]))
        .collect();
    format!("Key ({})=({})", names.join(", "), vals.join(", "))
}

/// Locks serialising the uniqueness check and insert of equal keys of one
/// index (striped by a hash of index and key).
static KEY_LOCKS: [std::sync::Mutex<()>; 64] = [const { std::sync::Mutex::new(()) }; 64];

fn key_lock(index: u32, key: &[u8]) -> &'static std::sync::Mutex<()> {
    &KEY_LOCKS[key_stripe(index, key)]
}

/// The stripe of [`KEY_LOCKS`] of a key of an index.
fn key_stripe(index: u32, key: &[u8]) -> usize {
    // FNV-1a.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ u64::from(index);
    for &b in key {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    (h % KEY_LOCKS.len() as u64) as usize
}

/// What [`IndexInserter::insert_unless_conflict`] did.
pub(crate) enum Speculative {
    /// No arbiter had the key: the row is in, with its entries.
    Inserted,
    /// The live (or own) row at this tid has an arbiter's key: nothing done.
    Conflict(Tid),
    /// A running transaction decides a row with the key: wait, then retry.
    Wait(Xid),
}

/// What a uniqueness check found at an entry's heap tuple.
enum Holder {
    /// Dead, gone, or holding another key: no conflict.
    None,
    /// A live row with the key: the chain member holding it.
    Live(Tid),
    /// Decided by a running transaction: wait for it.
    Wait(Xid),
}

/// Inserts the index entries of a statement's new tuples.
pub(crate) struct IndexInserter<'t> {
    table: &'t TableDef,
    trees: Vec<BTree>,
    desc: TupleDesc,
    xid: Xid,
    /// Per table column, whether some index stores it.
    needed: Vec<bool>,
    /// The columns any index uses, ascending: an update changing none of
    /// them may be heap-only.
    hot_columns: Vec<usize>,
}

impl<'t> IndexInserter<'t> {
    /// `None` when `table` has no indexes (the caller's path is unchanged).
    pub(crate) fn new(ctx: &ModifyContext<'_>, table: &'t TableDef) -> Result<Option<Self>> {
        if table.indexes.is_empty() {
            return Ok(None);
        }
        let needed: Vec<bool> = (0..table.columns.len())
            .map(|c| {
                table.indexes.iter().any(|ix| {
                    ix.stored_columns().any(|s| s == c) || ix.predicate_columns().contains(&c)
                })
            })
            .collect();
        Ok(Some(IndexInserter {
            table,
            hot_columns: (0..needed.len()).filter(|&c| needed[c]).collect(),
            trees: table
                .indexes
                .iter()
                .map(|ix| open_tree(ctx.pool, ctx.wal, table, ix))
                .collect(),
            desc: crate::exec::scan::tuple_desc(table)?,
            xid: ctx.xid,
            needed,
        }))
    }

    /// The rule an update of this table follows: heap-only only when no
    /// column an index stores or tests in its predicate changes.
    pub(crate) fn hot_rule(&self) -> HotRule<'_> {
        HotRule::Indexed {
            desc: &self.desc,
            columns: &self.hot_columns,
        }
    }

    /// Row `i` of a batch whose table columns start at `offset`, with the
    /// columns no index stores left NULL (not copied).
    pub(crate) fn row_of(
        &self,
        b: &crate::exec::vector::Batch,
        i: usize,
        offset: usize,
    ) -> Vec<Value> {
        self.needed
            .iter()
            .enumerate()
            .map(|(c, &n)| {
                if n {
                    b.columns[offset + c].get(i)
                } else {
                    Value::Null
                }
            })
            .collect()
    }

    /// Adds the entries of the tuple at `tid` whose values are `row`,
    /// checking unique indexes first.
    pub(crate) fn insert(
        &self,
        ctx: &ModifyContext<'_>,
        rel: &HeapRelation,
        row: &[Value],
        tid: Tid,
    ) -> Result<()> {
        self.insert_except(ctx, rel, row, tid, &[])
    }

    /// [`Self::insert`] for every index but those at positions `skip`.
    fn insert_except(
        &self,
        ctx: &ModifyContext<'_>,
        rel: &HeapRelation,
        row: &[Value],
        tid: Tid,
        skip: &[usize],
    ) -> Result<()> {
        for (pos, (ix, tree)) in self.table.indexes.iter().zip(&self.trees).enumerate() {
            if skip.contains(&pos) || !predicate_holds(self.table, ix, row)? {
                continue;
            }
            let vals = index_values(ix, row);
            if ix.unique && ix.columns.iter().all(|c| !row[c.column].is_null()) {
                self.check_unique_and_insert(ctx, rel, ix, tree, &vals, row, tid)?;
            } else {
                tree.insert(&vals, tid.pair())?;
            }
        }
        Ok(())
    }

    /// `INSERT ... ON CONFLICT`'s insert of `row`: under the key locks of
    /// its keys in the arbiter indexes (positions `arbiters`; a key with a
    /// NULL never conflicts), looks for a row holding one of them; when
    /// there is none, puts the tuple in the heap (`heap_insert`) and its
    /// arbiter entries before letting go of the locks, then adds the other
    /// entries (with their uniqueness checks, which fail the statement).
    pub(crate) fn insert_unless_conflict(
        &self,
        ctx: &ModifyContext<'_>,
        rel: &HeapRelation,
        arbiters: &[usize],
        row: &[Value],
        heap_insert: impl FnOnce() -> Result<Tid>,
    ) -> Result<Speculative> {
        let mut keyed = Vec::with_capacity(arbiters.len());
        for &pos in arbiters {
            let ix = &self.table.indexes[pos];
            if ix.columns.iter().any(|c| row[c.column].is_null())
                || !predicate_holds(self.table, ix, row)?
            {
                continue;
            }
            let desc = self.trees[pos].desc();
            let vals = index_values(ix, row);
            let mut key = Vec::new();
            keys::encode_key(desc, &vals, &mut key)?;
            let ends = column_ends(desc, &key)?;
            key.truncate(ends[ix.columns.len() - 1]);
            keyed.push((pos, vals, key));
        }
        // Stripes locked in ascending order: two upserts never deadlock.
        let mut stripes: Vec<usize> = keyed
            .iter()
            .map(|(pos, _, key)| key_stripe(self.table.indexes[*pos].relfilenode, key))
            .collect();
        stripes.sort_unstable();
        stripes.dedup();
        let held: Vec<_> = stripes
            .iter()
            .map(|&i| KEY_LOCKS[i].lock().unwrap_or_else(|p| p.into_inner()))
            .collect();
        for (pos, _, key) in &keyed {
            let (ix, tree) = (&self.table.indexes[*pos], &self.trees[*pos]);
            for t in tree.lookup(key)? {
                let t = Tid {
                    block: t.0,
                    offset: t.1,
                };
                match self.holder(rel, ix, tree, t, key)? {
                    Holder::None => {}
                    Holder::Live(m) => return Ok(Speculative::Conflict(m)),
                    Holder::Wait(x) => return Ok(Speculative::Wait(x)),
                }
            }
        }
        let tid = heap_insert()?;
        for (pos, vals, _) in &keyed {
            self.trees[*pos].insert(vals, tid.pair())?;
        }
        drop(held);
        let done: Vec<usize> = keyed.iter().map(|(pos, _, _)| *pos).collect();
        self.insert_except(ctx, rel, row, tid, &done)?;
        Ok(Speculative::Inserted)
    }

    /// Checks that no live row has the key of `vals` and inserts the entry,
    /// holding the key's lock from the check through the insert: two
    /// inserters of one key cannot both pass the check (PostgreSQL holds
    /// the leaf page's lock for that; here the lookup and the insert each
    /// lock pages on their own). The lock is not held while waiting.
    #[allow(clippy::too_many_arguments)]
    fn check_unique_and_insert(
        &self,
        ctx: &ModifyContext<'_>,
        rel: &HeapRelation,
        ix: &IndexDef,
        tree: &BTree,
        vals: &[Value],
        row: &[Value],
        own: Tid,
    ) -> Result<()> {
        let desc = tree.desc();
        let mut full = Vec::new();
        keys::encode_key(desc, vals, &mut full)?;
        let ends = column_ends(desc, &full)?;
        let prefix = &full[..ends[ix.columns.len() - 1]];
        let lock = key_lock(ix.relfilenode, prefix);
        loop {
            let held = lock.lock().unwrap_or_else(|p| p.into_inner());
            let mut wait = None;
            for t in tree.lookup(prefix)? {
                let t = Tid {
                    block: t.0,
                    offset: t.1,
                };
                if t == own {
                    continue;
                }
                match self.holder(rel, ix, tree, t, prefix)? {
                    Holder::None => {}
                    Holder::Live(_) => {
                        return Err(err!(
                            UniqueViolation,
                            "duplicate key value violates unique constraint \"{}\"",
                            ix.name
                        )
                        .with_detail(format!("{} already exists.", key_text(self.table, ix, row))))
                    }
                    Holder::Wait(x) => {
                        wait = Some(x);
                        break;
                    }
                }
            }
            match wait {
                Some(x) => {
                    drop(held);
                    ctx.wait_for(x)?;
                }
                None => return tree.insert(vals, own.pair()),
            }
        }
    }

    /// What the HOT chain whose root is `t` (an entry's tuple id) holds
    /// for a check of key `prefix`: the first member with the key that is
    /// live, else a running transaction deciding one.
    fn holder(
        &self,
        rel: &HeapRelation,
        ix: &IndexDef,
        tree: &BTree,
        t: Tid,
        prefix: &[u8],
    ) -> Result<Holder> {
        let mut wait = None;
        let live = rel.search_chain(t, |m, tup| {
            Ok(match self.member_state(rel, ix, tree, tup, prefix)? {
                Holder::Live(_) => Some(m),
                Holder::Wait(x) => {
                    wait.get_or_insert(x);
                    None
                }
                Holder::None => None,
            })
        })?;
        Ok(match (live, wait) {
            (Some(m), _) => Holder::Live(m),
            (None, Some(x)) => Holder::Wait(x),
            (None, None) => Holder::None,
        })
    }

    /// The state of one heap tuple `tup` for a check of key `prefix`
    /// (`Live` carries no meaningful tuple id here).
    fn member_state(
        &self,
        rel: &HeapRelation,
        ix: &IndexDef,
        tree: &BTree,
        tup: &[u8],
        prefix: &[u8],
    ) -> Result<Holder> {
        // The entry may be stale (its line pointer reused): compare keys.
        let mut slots = vec![None; self.table.columns.len()];
        tuple::deform(tup, &self.desc, self.table.columns.len(), &mut slots)?;
        let vals: Vec<Value> = ix
            .stored_columns()
            .map(|c| match slots[c] {
                Some(b) => Value::decode(&self.table.columns[c].ty, b),
                None => Value::Null,
            })
            .collect();
        let mut k = Vec::new();
        keys::encode_key(tree.desc(), &vals, &mut k)?;
        if !k.starts_with(prefix) {
            return Ok(Holder::None);
        }
        let mask = tuple::infomask(tup);
        let (xmin, xmax) = (tuple::xmin(tup), tuple::xmax(tup));
        let status = |x: Xid| decided(rel.txns(), self.xid, x);
        let inserted = if mask & tuple::HEAP_XMIN_COMMITTED != 0 {
            Some(true)
        } else if mask & tuple::HEAP_XMIN_INVALID != 0 {
            Some(false)
        } else {
            status(xmin)?
        };
        let live = Holder::Live(Tid {
            block: 0,
            offset: 0,
        });
        match inserted {
            Some(false) => return Ok(Holder::None),
            None => return Ok(Holder::Wait(xmin)),
            Some(true) => {}
        }
        if xmax == 0 || mask & tuple::HEAP_XMAX_INVALID != 0 {
            return Ok(live);
        }
        if mask & tuple::HEAP_XMAX_COMMITTED != 0 {
            return Ok(Holder::None);
        }
        Ok(match status(xmax)? {
            Some(true) => Holder::None,
            Some(false) => live,
            None => Holder::Wait(xmax),
        })
    }
}

/// Whether transaction `x` committed (`Some(true)`, also when it is `own`),
/// aborted or crashed (`Some(false)`), or still runs (`None`), for a check
/// that waits on running writers (uniqueness, foreign keys).
///
/// Running first, then the commit log, as PostgreSQL's HeapTupleSatisfies*
/// ask: a transaction sets its commit-log status before it leaves the
/// running set, so once it is seen not running its status is final. Asked
/// the other way round, a commit between the two questions reads as an
/// abort (and a second inserter of a unique key goes in).
pub(crate) fn decided(txns: &TxnManager, own: Xid, x: Xid) -> Result<Option<bool>> {
    if x == own {
        return Ok(Some(true));
    }
    if txns.is_running(x) {
        return Ok(None);
    }
    Ok(Some(matches!(txns.status(x)?, XidStatus::Committed)))
}

/// Rows whose entries COPY FROM sorts and inserts at a time.
pub(crate) const COPY_INDEX_BATCH: usize = 65_536;

/// The values of heap tuple `t` of `table` (described by `desc`).
pub(crate) fn tuple_values(table: &TableDef, desc: &TupleDesc, t: &[u8]) -> Result<Vec<Value>> {
    let n = table.columns.len();
    let mut slots = vec![None; n];
    tuple::deform(t, desc, n, &mut slots)?;
    Ok((0..n)
        .map(|c| match slots[c] {
            Some(b) => Value::decode(&table.columns[c].ty, b),
            None => Value::Null,
        })
        .collect())
}

/// The index entries of the tuple `tuple` (formed by the one-row INSERT
/// path) just put at `tid`.
pub fn index_formed_tuple(
    ctx: &ModifyContext<'_>,
    table: &TableDef,
    rel: &HeapRelation,
    tid: Tid,
    tuple: &[u8],
) -> Result<()> {
    let Some(ix) = IndexInserter::new(ctx, table)? else {
        return Ok(());
    };
    let row = tuple_values(table, &ix.desc, tuple)?;
    ix.insert(ctx, rel, &row, tid)
}

/// COPY FROM's index entries: COPY builds whole heap pages (some into free
/// space anywhere in the table), so the tuples it added, those of this
/// transaction and command, are found by a pass over the table afterwards
/// and indexed in sorted batches of [`COPY_INDEX_BATCH`] rows (with the
/// uniqueness checks, `index_maint/batch.rs`).
pub fn index_copied_rows(
    ctx: &ModifyContext<'_>,
    table: &TableDef,
    rel: &HeapRelation,
) -> Result<()> {
    let (xid, cid) = (ctx.xid, ctx.cid);
    let Some(ix) = IndexInserter::new(ctx, table)? else {
        return Ok(());
    };
    let mut pending = ix.pending();
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
                    || tuple::xmin(t) != xid
                    || tuple::raw_cid(t) != cid
                    || tuple::infomask2(t) & tuple::HEAP_ONLY_TUPLE != 0
                {
                    continue;
                }
                let row = tuple_values(table, &ix.desc, t)?;
                rows.push((row, Tid { block, offset: off }));
            }
        }
        for (row, tid) in rows {
            ix.add(&mut pending, &row, tid)?;
        }
        if pending.rows() >= COPY_INDEX_BATCH {
            ix.flush(ctx, rel, &mut pending)?;
        }
    }
    ix.flush(ctx, rel, &mut pending)
}
