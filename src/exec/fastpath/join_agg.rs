//! The hash join's probe fused into the typed aggregation above it.
//!
//! `select b.bid, count(*) from accounts a join branches b on a.bid = b.bid
//! group by b.bid`: when an inner hash join without a residual condition
//! finds at run time that its build keys are unique integers in a dense
//! range ([`super::join_tables::KeyTable::dense_unique`]), and the
//! [`FastAgg`] directly above it groups by a build column (or by the join
//! key, or not at all) and its aggregates read only probe columns, the
//! aggregate takes the join's probe batches unjoined ([`FusedProbe`]) and
//! folds each probe row straight into its group: one array read per row
//! maps the probe key to the group (`slots`, indexed by `key - min`), with
//! no index vectors, no gather of build columns and no second lookup of the
//! group key. A probe row without a match (a key outside the range or
//! without a build row, or NULL) is dropped, as the join drops it.
//!
//! Invariants: groups are created in the order the joined rows would have
//! reached the aggregate (probe row order; a unique build side gives each
//! probe row at most one pair), so the groups come out in the order the
//! unfused path gives; the join is left in the state its own `next` would
//! reach (probe exhausted), so the aggregate may go back to it at any
//! point (it does when its table outgrows `hash_mem` and must spill).

use super::hash_agg::FastAgg;
use crate::error::Result;
use crate::exec::expr::{Expr, ExprKind};
use crate::exec::vector::{Batch, Data, Vector};
use crate::exec::ExecContext;

/// A slot of a key without a build row (or outside the range).
const MISS: u32 = u32::MAX;
/// A slot whose build row has no group yet.
const UNSET: u32 = u32::MAX - 1;

/// What a hash join shows an aggregate that may fold its probe rows.
pub struct DenseBuild<'j> {
    /// The smallest build key.
    pub lo: i64,
    /// The build row of key `lo + i`, or `join_tables::END`.
    pub rows: &'j [u32],
    /// The build rows.
    pub build: &'j Batch,
    /// The build key expression (over the build rows).
    pub build_key: &'j Expr,
    /// The probe key expression (over the probe rows).
    pub probe_key: &'j Expr,
    /// Whether the build side is the join's left input (its columns come
    /// first in the joined rows).
    pub build_left: bool,
    /// Columns of the join's left input.
    pub left_width: usize,
}

/// A hash join whose probe an aggregate above it may run itself.
pub trait FusedProbe {
    /// Loads the build side (when not yet) and, when the join is an inner
    /// join without a residual condition, not spilled, whose build keys
    /// are unique integers in a dense range, shows it. Called before the
    /// join's first `next`.
    fn dense_build(&mut self) -> Result<Option<DenseBuild<'_>>>;

    /// The next batch of probe rows, not joined; `None` when the probe
    /// input is done (the join then has nothing more to return).
    fn next_probe(&mut self) -> Result<Option<Batch>>;
}

/// Where an expression over the joined rows reads: the build column a
/// group key is, or that every column it reads is on the probe side.
struct Layout {
    build_left: bool,
    left_width: usize,
}

impl Layout {
    fn is_probe(&self, col: usize) -> bool {
        (col >= self.left_width) == self.build_left
    }

    /// The build batch's column of joined column `col`.
    fn build_col(&self, col: usize) -> usize {
        if self.build_left {
            col
        } else {
            col - self.left_width
        }
    }

    fn reads_only_probe(&self, e: &Expr) -> bool {
        match e.kind {
            ExprKind::Column(c) => self.is_probe(c),
            _ => e.children().into_iter().all(|c| self.reads_only_probe(c)),
        }
    }
}

/// The fused state of one join: the group of each key of the range.
struct Fused {
    lo: i64,
    /// The build row of each key of the range.
    rows: Vec<u32>,
    /// The group of each key of the range ([`MISS`], [`UNSET`]).
    slots: Vec<u32>,
    /// The group key's value of each build row.
    keys: Vector,
    probe_key: Expr,
    layout: Layout,
    /// Empty stand-ins for the build columns, which no aggregate reads.
    build_types: Vec<crate::types::DataType>,
}

/// Folds the probe rows of `join` into `state` when the fusion applies
/// (see the module doc): returns whether it ran. It stops early, leaving
/// the rest of the probe to the join's own `next`, once the state has
/// outgrown `hash_mem` (the caller then spills as usual).
pub fn fold(ctx: &ExecContext, state: &mut FastAgg<'_>, join: &mut dyn FusedProbe) -> Result<bool> {
    let Some(mut f) = prepare(state, join)? else {
        return Ok(false);
    };
    let mut slot = Vec::new();
    while let Some(b) = join.next_probe()? {
        ctx.check_cancel()?;
        f.fold_batch(state, b, &mut slot)?;
        if state.mem_bytes() > ctx.hash_mem && state.groups() > 1 {
            break;
        }
    }
    Ok(true)
}

/// The fused state, when the join and the aggregation allow it.
fn prepare(state: &FastAgg<'_>, join: &mut dyn FusedProbe) -> Result<Option<Fused>> {
    let Some(d) = join.dense_build()? else {
        return Ok(None);
    };
    let layout = Layout {
        build_left: d.build_left,
        left_width: d.left_width,
    };
    if !state
        .aggs()
        .iter()
        .all(|a| a.arg.as_ref().map_or(true, |e| layout.reads_only_probe(e)))
    {
        return Ok(None);
    }
    let keys = match state.group_expr().map(|g| &g.kind) {
        None => Vector::new(crate::types::DataType::Int4),
        Some(ExprKind::Column(c)) if !layout.is_probe(*c) => {
            d.build.columns[layout.build_col(*c)].clone()
        }
        // Grouped by the probe key: equal to the build key of its match.
        Some(ExprKind::Column(c))
            if matches!(d.probe_key.kind, ExprKind::Column(p) if p == layout_probe_col(&layout, *c))
                && d.probe_key.ty == d.build_key.ty =>
        {
            d.build_key.eval(d.build)?.into_owned()
        }
        _ => return Ok(None),
    };
    let slots = d
        .rows
        .iter()
        .map(|&r| {
            if r == super::join_tables::END {
                MISS
            } else {
                UNSET
            }
        })
        .collect();
    Ok(Some(Fused {
        lo: d.lo,
        rows: d.rows.to_vec(),
        slots,
        keys,
        probe_key: d.probe_key.clone(),
        build_types: d.build.columns.iter().map(|c| c.ty).collect(),
        layout,
    }))
}

/// The probe batch's column of joined column `col` (a probe column).
fn layout_probe_col(l: &Layout, col: usize) -> usize {
    if l.build_left {
        col - l.left_width
    } else {
        col
    }
}

impl Fused {
    /// The index into `slots` of probe key `k`, when in the range.
    #[inline]
    fn at(&self, k: i64) -> Option<usize> {
        let at = k.wrapping_sub(self.lo) as u64;
        (at < self.slots.len() as u64).then_some(at as usize)
    }

    /// Fills `slot` with the group of each row of the probe key column
    /// `kc` ([`MISS`] for no match); returns the misses.
    fn slots_of(&mut self, state: &mut FastAgg<'_>, kc: &Vector, slot: &mut Vec<u32>) -> usize {
        slot.clear();
        match (&kc.data, &kc.nulls) {
            (Data::I32(x), None) => {
                // The hot loop: one compare and one array read per row; the
                // rare slots (a miss, a key's first row) are counted after,
                // in a pass that vectorizes.
                let (lo, slots) = (self.lo, &self.slots[..]);
                slot.extend(x.iter().map(|&k| {
                    let at = i64::from(k).wrapping_sub(lo) as u64;
                    if at < slots.len() as u64 {
                        slots[at as usize]
                    } else {
                        MISS
                    }
                }));
            }
            _ => {
                for i in 0..kc.len() {
                    let g = int_key(kc, i)
                        .and_then(|k| self.at(k))
                        .map_or(MISS, |at| self.slots[at]);
                    slot.push(g);
                }
            }
        }
        let rare = slot.iter().fold(0u32, |n, &g| n + u32::from(g >= UNSET));
        if rare == 0 {
            return 0;
        }
        // A key's first row: its group is made now, in row order.
        let mut misses = 0;
        for (i, s) in slot.iter_mut().enumerate() {
            if *s == UNSET {
                let at = int_key(kc, i).and_then(|k| self.at(k)).expect("in range");
                if self.slots[at] == UNSET {
                    self.slots[at] = state.group_at(&self.keys, self.rows[at] as usize);
                }
                *s = self.slots[at];
            }
            misses += usize::from(*s == MISS);
        }
        misses
    }

    /// Folds one probe batch.
    fn fold_batch(&mut self, state: &mut FastAgg<'_>, b: Batch, slot: &mut Vec<u32>) -> Result<()> {
        if b.len == 0 {
            return Ok(());
        }
        let kc = self.probe_key.eval(&b)?;
        let misses = self.slots_of(state, &kc, slot);
        drop(kc);
        let mut probe = b;
        if misses > 0 {
            let keep: Vec<bool> = slot.iter().map(|&g| g != MISS).collect();
            probe = probe.filter(&keep);
            slot.retain(|&g| g != MISS);
        }
        if probe.len == 0 {
            return Ok(());
        }
        let len = probe.len;
        let stand_ins = self.build_types.iter().map(|t| Vector::new(*t));
        let columns = if self.layout.build_left {
            stand_ins.chain(probe.columns).collect()
        } else {
            probe.columns.into_iter().chain(stand_ins).collect()
        };
        let joined = Batch { columns, len };
        let g0 = slot[0];
        // (An OR of differences, not `all`: it vectorizes.)
        if slot.iter().fold(0, |d, &g| d | (g ^ g0)) == 0 {
            state.fold_batch(&joined, g0)
        } else {
            state.fold_slots(&joined, slot)
        }
    }
}

/// Row `i` of an integer column as `i64` (None when NULL).
#[inline]
fn int_key(v: &Vector, i: usize) -> Option<i64> {
    if v.is_null(i) {
        return None;
    }
    match &v.data {
        Data::I16(x) => Some(i64::from(x[i])),
        Data::I32(x) => Some(i64::from(x[i])),
        Data::I64(x) => Some(x[i]),
        _ => v.get(i).as_i64(),
    }
}
