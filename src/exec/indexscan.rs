//! Index scans (PostgreSQL's `nodeIndexscan.c`, `nodeIndexonlyscan.c`) and
//! the nested loop whose inner side is one (`nodeNestloop.c` with a
//! parameterized inner scan).
//!
//! [`IndexScanOp`] turns the plan's [`IndexBounds`] into encoded key ranges
//! (one per combination of `IN` values, in index order, duplicates removed;
//! a bound that is an InitPlan's value is computed when the scan starts, a
//! NULL one selecting no row),
//! walks each with a [`ScanPos`] over the B-tree, and for every entry reads
//! the version of the row its TID names that the statement's snapshot sees
//! ([`HeapRelation::fetch_hot`]: an entry names a HOT chain's root, and the
//! chain is walked to the visible version): an entry may lead to no
//! version the snapshot sees (deleted, updated with a changed key — that
//! version has entries of its own — or inserted by an aborted or
//! concurrent transaction), and is skipped. The index conditions are not
//! checked again at the heap: a tuple is never changed in place, and the
//! versions of one chain share the index's columns.
//!
//! An entry whose chain is invisible and dead to everyone (DEAD line
//! pointer, or every version dead by VACUUM's test against the horizon,
//! [`HeapRelation::chain_dead_to_all`]) is reported to
//! the cursor, which marks it dead on the leaf (`ScanPos::kill_last`).
//!
//! Index-only: when the heap page's visibility-map bit says all-visible,
//! the values come from the entry's key and the heap is not read; other
//! pages are fetched (`Heap Fetches`, as EXPLAIN ANALYZE shows). The
//! planner chooses index-only only for columns whose key decodes to the
//! stored value (no `numeric`, `interval`, `char(n)` or floats).
//!
//! An index-only scan that returns no column (`count(*)`) does not copy
//! the entries on all-visible heap pages at all: the cursor counts them
//! under the leaf's lock ([`ScanPos::next_counted`]) and the batches carry
//! only their number.
//!
//! Invariants: no allocation per entry on the way (the position's buffer
//! and the column builders are reused); the index conditions never reach
//! the filter; batches hold at most [`BATCH_SIZE`] rows, the first at most
//! the plan's limit hint.

use std::ops::Bound;

use crate::access::heap::tuple::{self, TupleDesc};
use crate::access::heap::{HeapRelation, Tid};
use crate::access::nbtree::keys::{decode_key, encode_key, tid_of};
use crate::access::nbtree::{BTree, Counted, Direction, ScanPos};
use crate::access::vm;
use crate::error::Result;
use crate::nodes::plannodes::{BoundSlot, IndexBounds, IndexScan};
use crate::nodes::JoinKind;
use crate::storage::{BlockNumber, ForkNumber, RelFileNode};
use crate::types::{DataType, Value};
use std::sync::Arc;

use super::expr::{truth_mask, Expr};
use super::scan::{push_datum, tuple_desc};
use super::vector::{Batch, Vector, BATCH_SIZE};
use super::{ExecContext, Operator};

/// An encoded key range: (lower, upper) bounds of a scan.
pub type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The encoded key ranges of `bounds` over index `desc` (lower, upper), in
/// index order; `param` fills an empty first `eq` slot (a nested loop's
/// outer value). Empty when no entry can match (a NULL parameter).
/// The key ranges of `spec` (see [`key_ranges`]), its bounds known only
/// when the scan starts computed now (its InitPlans run, if they have not
/// yet). A NULL value selects no row.
fn spec_ranges(
    desc: &crate::access::nbtree::IndexDesc,
    spec: &IndexScan,
    param: Option<&Value>,
) -> Result<Vec<KeyRange>> {
    if spec.runtime.is_empty() {
        return key_ranges(desc, &spec.bounds, param);
    }
    let mut bounds = spec.bounds.clone();
    for r in &spec.runtime {
        let v = super::eval_const(&r.expr)?;
        if v.is_null() {
            return Ok(Vec::new());
        }
        match r.slot {
            BoundSlot::Eq(n) => bounds.eq[n] = vec![v],
            BoundSlot::Lower => bounds.lower = bounds.lower.map(|(_, inc)| (v, inc)),
            BoundSlot::Upper => bounds.upper = bounds.upper.map(|(_, inc)| (v, inc)),
        }
    }
    key_ranges(desc, &bounds, param)
}

pub fn key_ranges(
    desc: &crate::access::nbtree::IndexDesc,
    bounds: &IndexBounds,
    param: Option<&Value>,
) -> Result<Vec<KeyRange>> {
    // One key value (a point lookup): what the loop below makes of it,
    // without its vectors of prefixes.
    if let ([vals], None, None) = (bounds.eq.as_slice(), &bounds.lower, &bounds.upper) {
        if let [v] = vals.as_slice() {
            let mut k = Vec::with_capacity(16);
            encode_column(desc, 0, v, &mut k)?;
            return Ok(vec![(Bound::Included(k.clone()), Bound::Included(k))]);
        }
    }
    // Every combination of the equality values, as encoded prefixes.
    let mut prefixes: Vec<Vec<u8>> = vec![Vec::new()];
    let mut one = Vec::with_capacity(1);
    for (i, vals) in bounds.eq.iter().enumerate() {
        let vals: &[Value] = if vals.is_empty() {
            match param {
                Some(Value::Null) | None => return Ok(Vec::new()),
                Some(p) => {
                    one.clear();
                    one.push(p.clone());
                    &one
                }
            }
        } else {
            vals
        };
        let mut next = Vec::with_capacity(prefixes.len() * vals.len());
        for p in &prefixes {
            for v in vals {
                let mut k = p.clone();
                encode_column(desc, i, v, &mut k)?;
                next.push(k);
            }
        }
        prefixes = next;
    }
    prefixes.sort();
    prefixes.dedup();
    let col = bounds.eq.len();
    let mut out = Vec::with_capacity(prefixes.len());
    for p in prefixes {
        if bounds.lower.is_none() && bounds.upper.is_none() {
            if p.is_empty() {
                out.push((Bound::Unbounded, Bound::Unbounded));
            } else {
                out.push((Bound::Included(p.clone()), Bound::Included(p)));
            }
            continue;
        }
        // A range on column `col`: the non-NULL entries (marker 01) between
        // the bounds; on a DESC column the value order is reversed.
        let desc_col = desc.columns.get(col).is_some_and(|c| c.desc);
        let enc = |b: &Option<(Value, bool)>| -> Result<Option<(Vec<u8>, bool)>> {
            match b {
                None => Ok(None),
                Some((v, inc)) => {
                    let mut k = p.clone();
                    encode_column(desc, col, v, &mut k)?;
                    Ok(Some((k, *inc)))
                }
            }
        };
        let (lo, hi) = (enc(&bounds.lower)?, enc(&bounds.upper)?);
        let (klo, khi) = if desc_col { (hi, lo) } else { (lo, hi) };
        let mut nonnull = p.clone();
        nonnull.push(1);
        let lower = match klo {
            Some((k, true)) => Bound::Included(k),
            Some((k, false)) => Bound::Excluded(k),
            None => Bound::Included(nonnull.clone()),
        };
        let upper = match khi {
            Some((k, true)) => Bound::Included(k),
            Some((k, false)) => Bound::Excluded(k),
            None => Bound::Included(nonnull),
        };
        out.push((lower, upper));
    }
    Ok(out)
}

/// Appends value `v` encoded as key column `i` of `desc`.
fn encode_column(
    desc: &crate::access::nbtree::IndexDesc,
    i: usize,
    v: &Value,
    out: &mut Vec<u8>,
) -> Result<()> {
    if i == 0 {
        // One value encodes as the first column of the whole index.
        return encode_key(desc, std::slice::from_ref(v), out);
    }
    let one = crate::access::nbtree::IndexDesc::new(vec![desc.columns[i].clone()]);
    encode_key(&one, std::slice::from_ref(v), out)
}

/// Where an index-only scan takes each output column: its position among
/// the index's stored columns.
fn stored_positions(spec: &IndexScan) -> Vec<usize> {
    let stored: Vec<usize> = spec.index.stored_columns().collect();
    spec.columns
        .iter()
        .map(|c| stored.iter().position(|s| s == c).unwrap_or(usize::MAX))
        .collect()
}

/// An index scan (plain or index-only) of one table.
pub struct IndexScanOp<'a> {
    ctx: &'a ExecContext,
    heap: &'a HeapRelation,
    tree: BTree,
    spec: &'a IndexScan,
    desc: TupleDesc,
    /// Deform attributes `0..upto`.
    upto: usize,
    /// Index-only: each output column's position in the key.
    stored: Vec<usize>,
    ranges: Vec<KeyRange>,
    /// The next range to start.
    range: usize,
    pos: ScanPos,
    /// The current range is being read.
    in_range: bool,
    builders: Vec<Vector>,
    pending: usize,
    /// Rows the next batch may hold.
    target: usize,
    /// An index-only scan that returns no column (`count(*)`): entries on
    /// all-visible heap pages are only counted ([`ScanPos::next_counted`]).
    count_only: bool,
    /// Entries counted and not yet put in a batch.
    carry: u64,
    /// Heap tuples read by an index-only scan (EXPLAIN ANALYZE).
    heap_fetches: u64,
    removed: u64,
    /// The filter is left to an operator above ([`Self::without_filter`]).
    skip_filter: bool,
    done: bool,
    /// VACUUM's horizon, read when an entry first leads to an invisible
    /// tuple: tuples dead before it get their entries marked dead.
    horizon: Option<crate::txn::Xid>,
}

impl<'a> IndexScanOp<'a> {
    /// Leaves the scan's filter to an operator above, which evaluates it
    /// one row at a time (`rowwise::per_row`); the scan returns every
    /// row it reads.
    pub fn without_filter(mut self) -> Self {
        self.skip_filter = true;
        self
    }

    /// Opens the scan of `spec` under the context's snapshot; `param` is a
    /// nested loop's outer value (see [`key_ranges`]).
    pub fn new(ctx: &'a ExecContext, spec: &'a IndexScan, param: Option<&Value>) -> Result<Self> {
        let heap = ctx.relation(spec.table.relfilenode)?;
        let tree = open_tree(heap, spec);
        let ranges = spec_ranges(tree.desc(), spec, param)?;
        let mut types: Vec<DataType> = spec
            .columns
            .iter()
            .map(|&c| spec.table.columns[c].ty)
            .collect();
        if spec.with_tid {
            types.push(DataType::Int8);
        }
        let target = spec
            .limit_hint
            .map_or(BATCH_SIZE, |l| (l as usize).clamp(1, BATCH_SIZE));
        Ok(IndexScanOp {
            ctx,
            heap,
            desc: tuple_desc(&spec.table)?,
            upto: spec.columns.iter().map(|&c| c + 1).max().unwrap_or(0),
            stored: stored_positions(spec),
            tree,
            skip_filter: false,
            spec,
            ranges,
            range: 0,
            pos: ScanPos::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward),
            in_range: false,
            builders: types
                .iter()
                .map(|t| Vector::with_capacity(*t, target.min(64)))
                .collect(),
            pending: 0,
            target,
            count_only: spec.index_only && spec.columns.is_empty() && !spec.with_tid,
            carry: 0,
            heap_fetches: 0,
            removed: 0,
            done: false,
            horizon: None,
        })
    }

    /// Starts over with a new outer value (the inner side of a nested loop).
    pub fn rescan(&mut self, param: &Value) -> Result<()> {
        self.ranges = spec_ranges(self.tree.desc(), self.spec, Some(param))?;
        self.range = 0;
        self.in_range = false;
        self.done = false;
        self.carry = 0;
        Ok(())
    }

    /// Heap tuples an index-only scan had to read.
    pub fn heap_fetches(&self) -> u64 {
        self.heap_fetches
    }

    /// The next entry's key into `key` (cleared first) and, for an
    /// index-only scan, whether its heap page was all-visible while the
    /// entry was on its locked leaf; `None` at the end.
    fn next_entry(&mut self, key: &mut Vec<u8>) -> Result<Option<bool>> {
        loop {
            if !self.start_range() {
                return Ok(None);
            }
            let next = if self.spec.index_only {
                let heap = self.heap;
                let mut vm = VmProbe::new(heap);
                let mut check = |block| vm.all_visible(block);
                self.pos.next_key_checked(&self.tree, &mut check)?
            } else {
                self.pos.next_key(&self.tree)?.map(|k| (k, false))
            };
            match next {
                Some((k, seen)) => {
                    key.clear();
                    key.extend_from_slice(k);
                    return Ok(Some(seen));
                }
                None => self.in_range = false,
            }
        }
    }

    /// Puts the position on the next range if the current one is done;
    /// false when no range is left.
    fn start_range(&mut self) -> bool {
        if !self.in_range {
            if self.range >= self.ranges.len() {
                return false;
            }
            let i = if self.spec.backward {
                self.ranges.len() - 1 - self.range
            } else {
                self.range
            };
            self.range += 1;
            let (lo, hi) = self.ranges[i].clone();
            let dir = if self.spec.backward {
                Direction::Backward
            } else {
                Direction::Forward
            };
            self.pos.reset(lo, hi, dir);
            self.in_range = true;
        }
        true
    }

    /// Fills the batch of a count-only scan: entries on all-visible heap
    /// pages are counted at the leaf, the others fetched from the heap;
    /// false at the end of the scan.
    fn fill_counted(&mut self, key: &mut Vec<u8>) -> Result<bool> {
        while self.pending < self.target {
            if self.carry > 0 {
                let n = self.carry.min((self.target - self.pending) as u64);
                self.carry -= n;
                self.pending += n as usize;
                continue;
            }
            if !self.start_range() {
                return Ok(false);
            }
            let heap = self.heap;
            let mut vm = VmProbe::new(heap);
            let mut check = |block| vm.all_visible(block);
            match self.pos.next_counted(&self.tree, &mut check)? {
                Counted::Checked(n) => self.carry += n,
                Counted::Entry(k) => {
                    key.clear();
                    key.extend_from_slice(k);
                    self.add_row(key, false)?;
                }
                Counted::End => self.in_range = false,
            }
        }
        Ok(true)
    }

    /// Adds the row of one entry to the builders (if the snapshot sees it).
    /// `all_visible`: the leaf-time answer of [`IndexScanOp::next_entry`].
    fn add_row(&mut self, key: &[u8], all_visible: bool) -> Result<()> {
        let (block, offset) = tid_of(key);
        if self.spec.index_only && all_visible {
            if !self.stored.is_empty() {
                let (vals, _) = decode_key(self.tree.desc(), key)?;
                for (b, &p) in self.builders.iter_mut().zip(&self.stored) {
                    b.push(&vals[p]);
                }
            }
            self.pending += 1;
            return Ok(());
        }
        if self.spec.index_only {
            self.heap_fetches += 1;
        }
        let (desc, upto, columns) = (&self.desc, self.upto, &self.spec.columns);
        let builders = &mut self.builders;
        let seen = self.heap.fetch_hot(
            Tid { block, offset },
            &self.ctx.snapshot,
            |found, t| -> Result<Tid> {
                if upto == 0 {
                    return Ok(found);
                }
                let mut inline = [None; 32];
                let mut spilled = Vec::new();
                let slots: &mut [Option<&[u8]>] = if upto <= inline.len() {
                    &mut inline[..upto]
                } else {
                    spilled.resize(upto, None);
                    &mut spilled
                };
                tuple::deform(t, desc, upto, slots)?;
                for (k, &c) in columns.iter().enumerate() {
                    push_datum(&mut builders[k], slots[c]);
                }
                Ok(found)
            },
        )?;
        if seen.is_none() {
            let horizon = *self
                .horizon
                .get_or_insert_with(|| self.heap.txns().oldest_xmin());
            // Every version of the chain, not the root's alone: a root
            // dead under a live heap-only version keeps its entry.
            if self
                .heap
                .chain_dead_to_all(Tid { block, offset }, horizon)?
            {
                self.pos.kill_last();
            }
        }
        if let Some(r) = seen {
            let found = r?;
            if self.spec.with_tid {
                // The version's own tuple id (an UPDATE's target).
                let tid = (i64::from(found.block) << 16) | i64::from(found.offset);
                if let Some(last) = self.builders.last_mut() {
                    last.push(&Value::Int8(tid));
                }
            }
            self.pending += 1;
        }
        Ok(())
    }

    fn take_batch(&mut self) -> Batch {
        let cap = self.target;
        let cols: Vec<Vector> = self
            .builders
            .iter_mut()
            .map(|b| std::mem::replace(b, Vector::with_capacity(b.ty, cap.min(64))))
            .collect();
        let len = std::mem::take(&mut self.pending);
        Batch { columns: cols, len }
    }
}

impl Operator for IndexScanOp<'_> {
    fn rows_removed(&self) -> u64 {
        self.removed
    }

    fn heap_fetches(&self) -> Option<u64> {
        self.spec.index_only.then_some(self.heap_fetches)
    }

    fn next(&mut self) -> Result<Option<Batch>> {
        let mut key = Vec::new();
        loop {
            self.ctx.check_cancel()?;
            if self.done {
                return Ok(None);
            }
            if self.count_only && !self.fill_counted(&mut key)? {
                self.done = true;
            }
            while !self.count_only && self.pending < self.target {
                let Some(seen) = self.next_entry(&mut key)? else {
                    self.done = true;
                    break;
                };
                self.add_row(&key, seen)?;
            }
            self.target = BATCH_SIZE;
            if self.pending == 0 {
                return Ok(None);
            }
            let batch = self.take_batch();
            let filter = self.spec.filter.as_ref().filter(|_| !self.skip_filter);
            let batch = match filter {
                Some(f) => {
                    let keep = truth_mask(&*f.eval(&batch)?);
                    let kept = batch.filter(&keep);
                    self.removed += (batch.len - kept.len) as u64;
                    kept
                }
                None => batch,
            };
            if batch.len > 0 {
                return Ok(Some(batch));
            }
        }
    }
}

/// A nested loop with an inner index scan: every left row's key value
/// searches the index (PostgreSQL's Nested Loop over a parameterized Index
/// Scan). Inner and left joins; left rows come out in order, each followed
/// by its matches.
pub struct IndexNestLoopOp<'a> {
    left: Box<dyn Operator + 'a>,
    inner: IndexScanOp<'a>,
    kind: JoinKind,
    left_key: &'a Expr,
    residual: Option<&'a Expr>,
    left_types: Vec<DataType>,
    right_types: Vec<DataType>,
    /// The inner scan's key column type (the outer value is converted).
    key_type: DataType,
    /// Under EXPLAIN ANALYZE: where the inner scan's figures go (its node
    /// id); one loop per probe, as PostgreSQL counts rescans.
    instr: Option<(&'a super::Instrumentation, usize)>,
    done: bool,
}

impl<'a> IndexNestLoopOp<'a> {
    /// The join of `left` with the inner scan `inner` on `left_key`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        left: Box<dyn Operator + 'a>,
        inner: IndexScanOp<'a>,
        kind: JoinKind,
        left_key: &'a Expr,
        residual: Option<&'a Expr>,
        left_types: Vec<DataType>,
        right_types: Vec<DataType>,
        instr: Option<(&'a super::Instrumentation, usize)>,
    ) -> Self {
        let mut op = Self::unmeasured(
            left,
            inner,
            kind,
            left_key,
            residual,
            left_types,
            right_types,
        );
        op.instr = instr;
        op
    }

    #[allow(clippy::too_many_arguments)]
    fn unmeasured(
        left: Box<dyn Operator + 'a>,
        inner: IndexScanOp<'a>,
        kind: JoinKind,
        left_key: &'a Expr,
        residual: Option<&'a Expr>,
        left_types: Vec<DataType>,
        right_types: Vec<DataType>,
    ) -> Self {
        let spec = inner.spec;
        let key_type = spec.table.columns[spec.index.columns[0].column].ty;
        IndexNestLoopOp {
            left,
            inner,
            kind,
            left_key,
            residual,
            left_types,
            right_types,
            key_type,
            instr: None,
            done: false,
        }
    }

    /// One probe of the inner scan: its batches, measured under EXPLAIN
    /// ANALYZE.
    fn probe(&mut self, p: &Value) -> Result<Vec<Batch>> {
        let start = std::time::Instant::now();
        self.inner.rescan(p)?;
        let mut out = Vec::new();
        while let Some(b) = self.inner.next()? {
            out.push(b);
        }
        if let Some((instr, id)) = self.instr {
            let mut nodes = instr.nodes.borrow_mut();
            if let Some(n) = nodes.get_mut(id) {
                let t = start.elapsed().as_secs_f64();
                if n.loops == 0 {
                    n.first = t;
                }
                n.loops += 1;
                n.calls += 1;
                n.total += t;
                n.rows += out.iter().map(|b| b.len as u64).sum::<u64>();
                n.removed = self.inner.rows_removed();
            }
        }
        Ok(out)
    }

    /// The outer value as a value of the key column's type; `None` when no
    /// key can equal it (NULL, or an integer out of the column's range).
    fn param(&self, v: Value) -> Option<Value> {
        let as_int = v.as_i64();
        match (self.key_type, as_int) {
            (_, _) if v.is_null() => None,
            (DataType::Int2, Some(x)) => i16::try_from(x).ok().map(Value::Int2),
            (DataType::Int4, Some(x)) => i32::try_from(x).ok().map(Value::Int4),
            (DataType::Int8, Some(x)) => Some(Value::Int8(x)),
            _ => Some(v),
        }
    }

    /// Joins the rows of one left batch.
    fn join_batch(&mut self, lb: &Batch) -> Result<Batch> {
        let keys = self.left_key.eval(lb)?;
        let mut out: Vec<Vector> = self
            .left_types
            .iter()
            .chain(&self.right_types)
            .map(|t| Vector::new(*t))
            .collect();
        let nl = self.left_types.len();
        let mut len = 0;
        for i in 0..lb.len {
            let mut matched = 0;
            if let Some(p) = self.param(keys.get(i)) {
                for rb in self.probe(&p)? {
                    let keep = match self.residual {
                        None => vec![true; rb.len],
                        Some(r) => {
                            let mut both = Batch::empty_rows(rb.len);
                            for c in &lb.columns {
                                let mut v = Vector::with_capacity(c.ty, rb.len);
                                let x = c.get(i);
                                for _ in 0..rb.len {
                                    v.push(&x);
                                }
                                both.columns.push(v);
                            }
                            both.columns.extend(rb.columns.iter().cloned());
                            truth_mask(&*r.eval(&both)?)
                        }
                    };
                    for (j, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
                        for (c, v) in lb.columns.iter().enumerate() {
                            out[c].push(&v.get(i));
                        }
                        for (c, v) in rb.columns.iter().enumerate() {
                            out[nl + c].push(&v.get(j));
                        }
                        matched += 1;
                        len += 1;
                    }
                }
            }
            if matched == 0 && self.kind == JoinKind::Left {
                for (c, v) in lb.columns.iter().enumerate() {
                    out[c].push(&v.get(i));
                }
                for v in out.iter_mut().skip(nl) {
                    v.push_null();
                }
                len += 1;
            }
        }
        Ok(Batch { columns: out, len })
    }
}

impl Operator for IndexNestLoopOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        while !self.done {
            let Some(lb) = self.left.next()? else {
                self.done = true;
                break;
            };
            let b = self.join_batch(&lb)?;
            if b.len > 0 {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }
}

/// Asks the visibility map whether heap blocks are all-visible, for one
/// call of the scan cursor (one index leaf): the map page last read stays
/// pinned until the probe is dropped, so the leaf's heap blocks, which
/// share a map page, cost one look-up of it.
struct VmProbe<'a> {
    heap: &'a HeapRelation,
    /// The map block read last, pinned.
    page: Option<(BlockNumber, crate::storage::PinnedBuffer<'a>)>,
}

impl<'a> VmProbe<'a> {
    fn new(heap: &'a HeapRelation) -> Self {
        VmProbe { heap, page: None }
    }

    /// Whether the visibility map says `block` of the heap is all-visible,
    /// asked now (the scan cursor calls it while an index leaf is locked,
    /// and shares an answer only among that leaf's items). It takes only
    /// the VM page's shared lock, for the read of the bit, and nobody
    /// holding a VM page lock waits for an index page.
    fn all_visible(&mut self, block: BlockNumber) -> Result<bool> {
        let vb = vm::vm_block(block);
        if !matches!(&self.page, Some((b, _)) if *b == vb) {
            let pool = self.heap.pool();
            let rel = self.heap.rel();
            if vb >= pool.nblocks(rel, ForkNumber::VisibilityMap)? {
                return Ok(false);
            }
            let buf = pool.read_buffer(rel, ForkNumber::VisibilityMap, vb, None)?;
            self.page = Some((vb, buf));
        }
        let Some((_, buf)) = &self.page else {
            unreachable!("the map page was just read");
        };
        let g = buf.read();
        Ok(vm::get(&g[..], block).0 & vm::VM_ALL_VISIBLE != 0)
    }
}

/// The B-tree `spec` scans, over `heap`'s buffer pool. Logged: a scan
/// marks the entries of dead tuples (`kill_items`).
pub(crate) fn open_tree(heap: &HeapRelation, spec: &IndexScan) -> BTree {
    let log = heap
        .wal()
        .map(|w| w.clone() as Arc<dyn crate::access::nbtree::BtLog>);
    BTree::open(
        heap.pool().clone(),
        RelFileNode(spec.index.relfilenode),
        spec.index.desc(&spec.table),
        log,
    )
}
