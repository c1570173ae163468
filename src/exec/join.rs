//! Joins: the hash join (equi-joins, every join kind) and the nested loop
//! (other conditions, CROSS JOIN).
//!
//! The hash join reads its build input completely into one batch and a
//! hash table from key values to build-row positions (rows whose key
//! has a NULL are never entered: NULL matches nothing), then streams the
//! probe input a batch at a time: candidate pairs are gathered into one
//! combined batch (left columns, then right columns), the residual
//! condition — if any — is evaluated over the whole candidate batch at once,
//! and unmatched rows of a preserved side are NULL-extended. Unmatched
//! build rows of a preserved build side (RIGHT/FULL joins) come last.
//! The general table numbers the distinct build keys in a [`KeySet`] (keys
//! read in place from the batch, text as bytes: no `Value` per row) and
//! chains each key's build rows in build order through one `next` array. A
//! join on one integer or text key uses a typed table of
//! [`super::fastpath::join_tables`] instead; an aggregate directly above an
//! inner join whose integer build keys turn out unique and dense may fold
//! the probe rows itself ([`super::fastpath::join_agg`]).
//!
//! Memory: the build side is checked against `work_mem *
//! hash_mem_multiplier` once per batch it reads. Past the limit, the join
//! becomes a batched (Grace) hash join, as PostgreSQL's does when it raises
//! its batch count: the build rows read so far, the rest of the build
//! input and the whole probe input are split into batch files by the hash
//! of their keys, then each batch is joined alone with the same code
//! (table, probe, NULL-extension of its unmatched rows); a batch still too
//! big splits again on other hash bits. Rows of equal keys land in the
//! same batch on both sides, so every match is found once; NULL keys go to
//! some batch and match nothing there, as in memory. Output order then
//! follows the batches.

use super::expr::{truth_mask, Expr};
use super::fastpath::join_agg::{DenseBuild, FusedProbe};
use super::fastpath::join_tables::KeyTable;
use super::keyset::KeySet;
use super::spill::{
    partition_count, partition_of, vector_bytes, FilesOp, HashStats, PartitionHasher, Partitions,
    SpillFile,
};
use super::vector::{Batch, Vector};
use super::{ExecContext, Operator};
use crate::error::Result;
use crate::nodes::JoinKind;
use crate::types::{DataType, Value};

/// End of a chain of build rows.
const END: u32 = u32::MAX;

/// PostgreSQL's bucket count for a table of `rows` rows: a power of two,
/// one row per bucket, at least 1024.
fn buckets(rows: usize) -> u64 {
    (rows.max(1024) as u64).next_power_of_two()
}

/// What a hash join needs besides its inputs.
pub struct HashJoinSpec<'a> {
    /// Join kind.
    pub kind: JoinKind,
    /// Key expressions over the left input.
    pub left_keys: &'a [Expr],
    /// Key expressions over the right input.
    pub right_keys: &'a [Expr],
    /// Further condition over left ++ right.
    pub residual: Option<&'a Expr>,
    /// Build from the left input.
    pub build_left: bool,
    /// Left output types.
    pub left_types: Vec<DataType>,
    /// Right output types.
    pub right_types: Vec<DataType>,
}

/// The hash join.
pub struct HashJoinOp<'a> {
    build_input: Option<Box<dyn Operator + 'a>>,
    probe: Box<dyn Operator + 'a>,
    spec: HashJoinSpec<'a>,
    ctx: &'a ExecContext,
    build: Batch,
    /// The general table: the distinct build keys, numbered.
    keys: Option<KeySet>,
    /// Per build key: its first build row; its chain continues in `next`.
    first: Vec<u32>,
    /// Per build key: its last build row (where the chain grows).
    last: Vec<u32>,
    /// Per build row: the next build row with the same key, or [`END`].
    next: Vec<u32>,
    /// The typed table, used instead of `table` for one integer or text
    /// key.
    typed: Option<KeyTable>,
    build_matched: Vec<bool>,
    preserve_probe: bool,
    preserve_build: bool,
    finished_probe: bool,
    emitted_unmatched: bool,
    /// Batches of a build side that outgrew `hash_mem`, still to join.
    pending: Vec<JoinBatch>,
    /// The depth of the batch being joined (0: the whole input).
    depth: u32,
    /// The hash that splits rows into batches.
    hasher: PartitionHasher,
    /// Buckets, batches, memory and disk use (EXPLAIN ANALYZE).
    stats: HashStats,
}

/// One batch of a hash join that spilled: its build rows, its probe rows,
/// and the depth of the split that made it.
struct JoinBatch {
    build: Vec<SpillFile>,
    probe: Vec<SpillFile>,
    depth: u32,
}

/// Depth past which a batch no longer splits.
const MAX_DEPTH: u32 = 8;

pub(crate) fn null_columns(types: &[DataType], n: usize) -> Vec<Vector> {
    types
        .iter()
        .map(|t| Vector::repeat(*t, &Value::Null, n))
        .collect()
}

impl<'a> HashJoinOp<'a> {
    /// Joins `left` and `right` as `spec` says.
    pub fn new(
        left: Box<dyn Operator + 'a>,
        right: Box<dyn Operator + 'a>,
        spec: HashJoinSpec<'a>,
        ctx: &'a ExecContext,
    ) -> HashJoinOp<'a> {
        let (build, probe) = if spec.build_left {
            (left, right)
        } else {
            (right, left)
        };
        let (preserve_left, preserve_right) = match spec.kind {
            JoinKind::Inner => (false, false),
            JoinKind::Left => (true, false),
            JoinKind::Right => (false, true),
            JoinKind::Full => (true, true),
            JoinKind::Anti => (true, false),
        };
        let (preserve_build, preserve_probe) = if spec.build_left {
            (preserve_left, preserve_right)
        } else {
            (preserve_right, preserve_left)
        };
        HashJoinOp {
            build_input: Some(build),
            probe,
            spec,
            ctx,
            build: Batch::default(),
            keys: None,
            first: Vec::new(),
            last: Vec::new(),
            next: Vec::new(),
            typed: None,
            build_matched: Vec::new(),
            preserve_probe,
            preserve_build,
            finished_probe: false,
            emitted_unmatched: false,
            pending: Vec::new(),
            depth: 0,
            hasher: PartitionHasher::default(),
            stats: HashStats {
                batches: 1,
                batches_original: 1,
                ..HashStats::default()
            },
        }
    }

    /// Splits the build rows (`all`, then the rest of `input`) and the
    /// whole probe input into batch files by the hash of their keys at
    /// `self.depth` (PostgreSQL's `ExecHashIncreaseNumBatches`, done once
    /// per level with a fixed fan-out): each batch is then joined alone.
    fn spill(&mut self, all: &Batch, mut input: Box<dyn Operator + 'a>) -> Result<()> {
        let n = partition_count(self.ctx.hash_mem);
        let depth = self.depth;
        let mut build = Partitions::new(n);
        let bk = self.build_keys();
        self.partition(&mut build, all, bk, depth)?;
        while let Some(b) = input.next()? {
            self.ctx.check_cancel()?;
            self.partition(&mut build, &b, bk, depth)?;
        }
        let mut probe = Partitions::new(n);
        let pk = self.probe_keys();
        let mut source = std::mem::replace(
            &mut self.probe,
            Box::new(FilesOp::new(Vec::new(), self.ctx)),
        );
        while let Some(b) = source.next()? {
            self.ctx.check_cancel()?;
            self.partition(&mut probe, &b, pk, depth)?;
        }
        let (bf, bbytes) = build.finish(self.ctx)?;
        let (pf, pbytes) = probe.finish(self.ctx)?;
        self.stats.disk_bytes += bbytes + pbytes;
        self.stats.batches += n as u64 - 1;
        for (b, p) in bf.into_iter().zip(pf) {
            // A batch without build rows matters only to a preserved probe
            // side, one without probe rows only to a preserved build side.
            if (b.is_none() && !self.preserve_probe) || (p.is_none() && !self.preserve_build) {
                continue;
            }
            self.pending.push(JoinBatch {
                build: b.into_iter().collect(),
                probe: p.into_iter().collect(),
                depth,
            });
        }
        Ok(())
    }

    /// Adds `b`'s rows to `parts` by the hash of their `keys` at `depth`.
    fn partition(
        &self,
        parts: &mut Partitions,
        b: &Batch,
        keys: &[Expr],
        depth: u32,
    ) -> Result<()> {
        if b.len == 0 {
            return Ok(());
        }
        let kv: Vec<_> = keys.iter().map(|k| k.eval(b)).collect::<Result<_>>()?;
        let kv: Vec<&Vector> = kv.iter().map(|c| &**c).collect();
        let n = parts.len();
        let part: Vec<u32> = (0..b.len)
            .map(|row| partition_of(self.hasher.hash_row(depth, &kv, row), n))
            .collect();
        parts.add(self.ctx, b, &part)
    }

    /// Whether the build rows held so far (`bytes` of rows, `rows` of
    /// them) exceed `hash_mem`, at a depth that may still split.
    fn over_limit(&mut self, bytes: usize, rows: usize) -> bool {
        // Per row: its chain link, a key's head and tail, the table slot.
        let mem = bytes + rows * 16;
        self.stats.peak_bytes = self.stats.peak_bytes.max(mem as u64);
        mem > self.ctx.hash_mem && self.depth < MAX_DEPTH && rows > 1
    }

    /// Starts the next spilled batch, if any: clears the table and sets
    /// the batch's files as the inputs.
    fn next_batch(&mut self) -> bool {
        let Some(p) = self.pending.pop() else {
            return false;
        };
        self.build = Batch::default();
        self.keys = None;
        self.first.clear();
        self.last.clear();
        self.next.clear();
        self.typed = None;
        self.build_matched.clear();
        self.finished_probe = false;
        self.emitted_unmatched = false;
        self.depth = p.depth + 1;
        self.build_input = Some(Box::new(FilesOp::new(p.build, self.ctx)));
        self.probe = Box::new(FilesOp::new(p.probe, self.ctx));
        true
    }

    fn build_keys(&self) -> &'a [Expr] {
        if self.spec.build_left {
            self.spec.left_keys
        } else {
            self.spec.right_keys
        }
    }

    fn probe_keys(&self) -> &'a [Expr] {
        if self.spec.build_left {
            self.spec.right_keys
        } else {
            self.spec.left_keys
        }
    }

    fn build_types(&self) -> &[DataType] {
        if self.spec.build_left {
            &self.spec.left_types
        } else {
            &self.spec.right_types
        }
    }

    fn load(&mut self, mut input: Box<dyn Operator + 'a>) -> Result<()> {
        let mut all = Batch {
            columns: self.build_types().iter().map(|t| Vector::new(*t)).collect(),
            len: 0,
        };
        let keys = self.build_keys();
        let key_types = |k: &[Expr]| k.iter().map(|e| e.ty).collect::<Vec<_>>();
        let (build_types, probe_types) = (key_types(keys), key_types(self.probe_keys()));
        let mut bytes = 0;
        if KeyTable::applies(&build_types, &probe_types) {
            while let Some(b) = input.next()? {
                self.ctx.check_cancel()?;
                bytes += b.columns.iter().map(vector_bytes).sum::<usize>();
                all.extend(&b);
                if self.over_limit(bytes, all.len) {
                    return self.spill(&all, input);
                }
            }
            let key_col = keys[0].eval(&all)?;
            self.typed = KeyTable::build(&build_types, &probe_types, &key_col);
            self.stats.buckets = self.stats.buckets.max(buckets(all.len));
            self.build_matched = vec![false; all.len];
            self.build = all;
            return Ok(());
        }
        let mut set = KeySet::new(&build_types);
        while let Some(b) = input.next()? {
            self.ctx.check_cancel()?;
            let kv: Vec<_> = keys.iter().map(|k| k.eval(&b)).collect::<Result<_>>()?;
            let kv: Vec<&Vector> = kv.iter().map(|c| &**c).collect();
            for row in 0..b.len {
                self.next.push(END);
                if kv.iter().any(|c| c.is_null(row)) {
                    continue;
                }
                let r = u32::try_from(all.len + row).expect("fewer than 2^32 build rows");
                let (id, new) = set.insert(&kv, row);
                if new {
                    self.first.push(r);
                    self.last.push(r);
                } else {
                    let last = &mut self.last[id as usize];
                    self.next[*last as usize] = r;
                    *last = r;
                }
            }
            all.extend(&b);
            bytes += b.columns.iter().map(vector_bytes).sum::<usize>();
            if self.over_limit(bytes + set.mem_bytes(), all.len) {
                self.first.clear();
                self.last.clear();
                self.next.clear();
                return self.spill(&all, input);
            }
        }
        self.stats.buckets = self.stats.buckets.max(buckets(all.len));
        self.keys = Some(set);
        self.build_matched = vec![false; all.len];
        self.build = all;
        Ok(())
    }

    /// Assembles left ++ right columns from build and probe rows.
    fn combine(&self, build_cols: Vec<Vector>, probe_cols: Vec<Vector>, len: usize) -> Batch {
        let mut columns = Vec::with_capacity(build_cols.len() + probe_cols.len());
        if self.spec.build_left {
            columns.extend(build_cols);
            columns.extend(probe_cols);
        } else {
            columns.extend(probe_cols);
            columns.extend(build_cols);
        }
        Batch { columns, len }
    }

    fn probe_batch(&mut self, mut b: Batch) -> Result<Batch> {
        let keys = self.probe_keys();
        let kv: Vec<_> = keys.iter().map(|k| k.eval(&b)).collect::<Result<_>>()?;
        // Sized for one match per probe row (the common foreign-key join),
        // so gathering a batch's matches does not regrow them step by step.
        let mut probe_idx: Vec<u32> = Vec::with_capacity(b.len);
        let mut build_idx: Vec<u32> = Vec::with_capacity(b.len);
        if let Some(t) = &self.typed {
            t.probe(&kv[0], &mut probe_idx, &mut build_idx);
        } else if let Some(set) = &self.keys {
            let kv: Vec<&Vector> = kv.iter().map(|c| &**c).collect();
            for row in 0..b.len {
                if kv.iter().any(|c| c.is_null(row)) {
                    continue;
                }
                let Some(id) = set.find(&kv, row) else {
                    continue;
                };
                let mut r = self.first[id as usize];
                while r != END {
                    probe_idx.push(row as u32);
                    build_idx.push(r);
                    r = self.next[r as usize];
                }
            }
        }
        if self.spec.kind == JoinKind::Anti && self.spec.residual.is_none() {
            return Ok(unmatched_probe_rows(b, &probe_idx));
        }
        let n = probe_idx.len();
        // Every probe row matched once, in order (a foreign-key join of
        // complete data): the probe columns pass through as they are, no
        // gather. Not with a residual condition, which may drop pairs whose
        // probe rows an outer join then emits from `b`.
        let identity = self.spec.residual.is_none()
            && n == b.len
            && probe_idx.iter().enumerate().all(|(i, &p)| p as usize == i);
        let probe_cols = if identity {
            std::mem::take(&mut b.columns)
        } else {
            b.columns.iter().map(|c| c.take(&probe_idx)).collect()
        };
        let mut pairs = self.combine(
            self.build
                .columns
                .iter()
                .map(|c| c.take(&build_idx))
                .collect(),
            probe_cols,
            n,
        );
        if let Some(r) = self.spec.residual {
            if n > 0 {
                let keep = truth_mask(&*r.eval(&pairs)?);
                pairs = pairs.filter(&keep);
                probe_idx = probe_idx
                    .iter()
                    .zip(&keep)
                    .filter(|(_, &k)| k)
                    .map(|(&p, _)| p)
                    .collect();
                build_idx = build_idx
                    .iter()
                    .zip(&keep)
                    .filter(|(_, &k)| k)
                    .map(|(&p, _)| p)
                    .collect();
            }
        }
        if self.spec.kind == JoinKind::Anti {
            return Ok(unmatched_probe_rows(b, &probe_idx));
        }
        if self.preserve_build {
            for &r in &build_idx {
                self.build_matched[r as usize] = true;
            }
        }
        if self.preserve_probe {
            let mut matched = vec![false; b.len];
            for &p in &probe_idx {
                matched[p as usize] = true;
            }
            let unmatched: Vec<u32> = (0..b.len as u32)
                .filter(|&i| !matched[i as usize])
                .collect();
            if !unmatched.is_empty() {
                let extra = self.combine(
                    null_columns(self.build_types(), unmatched.len()),
                    b.columns.iter().map(|c| c.take(&unmatched)).collect(),
                    unmatched.len(),
                );
                pairs.extend(&extra);
            }
        }
        Ok(pairs)
    }
}

/// The rows of `b` that no pair in `probe_idx` names (an anti join's
/// output).
fn unmatched_probe_rows(b: Batch, probe_idx: &[u32]) -> Batch {
    let mut keep = vec![true; b.len];
    for &p in probe_idx {
        keep[p as usize] = false;
    }
    b.filter(&keep)
}

impl FusedProbe for HashJoinOp<'_> {
    fn dense_build(&mut self) -> Result<Option<DenseBuild<'_>>> {
        if self.spec.kind != JoinKind::Inner || self.spec.residual.is_some() {
            return Ok(None);
        }
        if let Some(input) = self.build_input.take() {
            self.load(input)?;
        }
        if self.depth != 0 || !self.pending.is_empty() {
            return Ok(None);
        }
        let Some((lo, rows)) = self.typed.as_ref().and_then(KeyTable::dense_unique) else {
            return Ok(None);
        };
        Ok(Some(DenseBuild {
            lo,
            rows,
            build: &self.build,
            build_key: &self.build_keys()[0],
            probe_key: &self.probe_keys()[0],
            build_left: self.spec.build_left,
            left_width: self.spec.left_types.len(),
        }))
    }

    fn next_probe(&mut self) -> Result<Option<Batch>> {
        if self.finished_probe {
            return Ok(None);
        }
        let b = self.probe.next()?;
        self.finished_probe = b.is_none();
        Ok(b)
    }
}

impl Operator for HashJoinOp<'_> {
    fn fused_probe(&mut self) -> Option<&mut dyn FusedProbe> {
        Some(self)
    }

    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some(out) = self.next_of_batch()? {
                return Ok(Some(out));
            }
            if !self.next_batch() {
                return Ok(None);
            }
        }
    }

    fn hash_stats(&self) -> Option<HashStats> {
        Some(self.stats)
    }
}

impl HashJoinOp<'_> {
    /// The next output of the batch being joined (the whole join when
    /// nothing spilled); `None` once it is done.
    fn next_of_batch(&mut self) -> Result<Option<Batch>> {
        if let Some(input) = self.build_input.take() {
            self.load(input)?;
        }
        while !self.finished_probe {
            let Some(b) = self.probe.next()? else {
                self.finished_probe = true;
                break;
            };
            self.ctx.check_cancel()?;
            let out = self.probe_batch(b)?;
            if out.len > 0 {
                return Ok(Some(out));
            }
        }
        if self.preserve_build && !self.emitted_unmatched {
            self.emitted_unmatched = true;
            let unmatched: Vec<u32> = (0..self.build.len as u32)
                .filter(|&i| !self.build_matched[i as usize])
                .collect();
            if !unmatched.is_empty() {
                let probe_types = if self.spec.build_left {
                    &self.spec.right_types
                } else {
                    &self.spec.left_types
                };
                let out = self.combine(
                    self.build
                        .columns
                        .iter()
                        .map(|c| c.take(&unmatched))
                        .collect(),
                    null_columns(probe_types, unmatched.len()),
                    unmatched.len(),
                );
                return Ok(Some(out));
            }
        }
        Ok(None)
    }
}

/// Nested-loop join: the right input is materialized; every left row is
/// paired with every right row and the condition filters the pairs.
pub struct NestedLoopOp<'a> {
    left: Box<dyn Operator + 'a>,
    right_input: Option<Box<dyn Operator + 'a>>,
    right: Batch,
    right_types: Vec<DataType>,
    kind: JoinKind,
    condition: Option<&'a Expr>,
    ctx: &'a ExecContext,
}

impl<'a> NestedLoopOp<'a> {
    /// Joins `left` and `right` on `condition`.
    pub fn new(
        left: Box<dyn Operator + 'a>,
        right: Box<dyn Operator + 'a>,
        kind: JoinKind,
        condition: Option<&'a Expr>,
        right_types: Vec<DataType>,
        ctx: &'a ExecContext,
    ) -> NestedLoopOp<'a> {
        NestedLoopOp {
            left,
            right_input: Some(right),
            right: Batch::default(),
            right_types,
            kind,
            condition,
            ctx,
        }
    }
}

impl Operator for NestedLoopOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if let Some(mut input) = self.right_input.take() {
            let mut all = Batch {
                columns: self.right_types.iter().map(|t| Vector::new(*t)).collect(),
                len: 0,
            };
            while let Some(b) = input.next()? {
                all.extend(&b);
            }
            self.right = all;
        }
        while let Some(b) = self.left.next()? {
            let mut out: Option<Batch> = None;
            for row in 0..b.len {
                self.ctx.check_cancel()?;
                let n = self.right.len;
                let left_idx = vec![row as u32; n];
                let mut columns: Vec<Vector> =
                    b.columns.iter().map(|c| c.take(&left_idx)).collect();
                columns.extend(self.right.columns.iter().cloned());
                let mut pairs = Batch { columns, len: n };
                if let (Some(c), true) = (self.condition, n > 0) {
                    let keep = truth_mask(&*c.eval(&pairs)?);
                    pairs = pairs.filter(&keep);
                }
                if pairs.len == 0 && self.kind == JoinKind::Left {
                    let mut columns: Vec<Vector> =
                        b.columns.iter().map(|c| c.take(&[row as u32])).collect();
                    columns.extend(null_columns(&self.right_types, 1));
                    pairs = Batch { columns, len: 1 };
                }
                match &mut out {
                    Some(o) => o.extend(&pairs),
                    None => out = Some(pairs),
                }
            }
            if let Some(o) = out {
                if o.len > 0 {
                    return Ok(Some(o));
                }
            }
        }
        Ok(None)
    }
}
