//! A point lookup kept ready between statements: the executor of a plan
//! template's `select cols from t where key = K` (a projection of plain
//! columns over an index scan of one equality value, no filter, not
//! index-only), made once and run once per statement with a new key.
//!
//! What the general path builds per statement and this keeps: the heap
//! relation, the B-tree (with its cached root, so the meta page is not
//! read again), the tuple descriptor, the cursor's buffers, and the output
//! column builders' types. No execution context, no operator tree, no
//! projection pass: each visible row's needed attributes go straight from
//! the heap page to the output builders.
//!
//! Invariants: it gives what [`super::super::indexscan::IndexScanOp`] under
//! a projection gives for the same plan — the same entries walked in the
//! same order, the same versions fetched (`fetch_hot`), the same entries of
//! dead chains marked (`ScanPos::kill_last`), batches of at most
//! [`BATCH_SIZE`] rows and a cancel check before each. It is made only from
//! a template's plan, which is valid only while the catalog hands out the
//! table definition it was planned with (`session::plancache`): the
//! relation and the index it holds are those the plan names.

use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::access::heap::tuple::{self, TupleDesc};
use crate::access::heap::{HeapRelation, Tid};
use crate::access::nbtree::keys::{encode_key, tid_of};
use crate::access::nbtree::{BTree, Direction, ScanPos};
use crate::database::Database;
use crate::error::Result;
use crate::exec::scan::{push_datum, tuple_desc};
use crate::exec::vector::{Batch, Vector, BATCH_SIZE};
use crate::nodes::plannodes::IndexScan;
use crate::nodes::{ExprKind, Node, Plan};
use crate::txn::Snapshot;
use crate::types::Value;

/// Statements run by kept lookups (for tests: the path was taken).
pub static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The index scan under `plan` when `plan` is a point lookup this path
/// runs, with each output column's position among the scan's columns.
fn point_scan(plan: &Plan) -> Option<(&IndexScan, Vec<usize>)> {
    let (scan, outputs) = match &plan.node {
        Node::Project { input, exprs } => {
            let Node::IndexScan(s) = &input.node else {
                return None;
            };
            let mut outputs = Vec::with_capacity(exprs.len());
            for e in exprs {
                match e.kind {
                    ExprKind::Column(i) if i < s.columns.len() => outputs.push(i),
                    _ => return None,
                }
            }
            (s, outputs)
        }
        Node::IndexScan(s) => (s, (0..s.columns.len()).collect()),
        _ => return None,
    };
    let one_value = matches!(scan.bounds.eq.as_slice(), [v] if v.len() == 1);
    let plain = one_value
        && scan.bounds.lower.is_none()
        && scan.bounds.upper.is_none()
        && scan.filter.is_none()
        && !scan.index_only
        && !scan.with_tid
        && !scan.backward
        && scan.limit_hint.is_none();
    plain.then_some((scan, outputs))
}

/// The key value of a point lookup's plan (its one equality value).
pub fn key_of(plan: &Plan) -> Option<&Value> {
    let scan = match &plan.node {
        Node::Project { input, .. } => match &input.node {
            Node::IndexScan(s) => s,
            _ => return None,
        },
        Node::IndexScan(s) => s,
        _ => return None,
    };
    scan.bounds.eq.first()?.first()
}

/// A point lookup's executor, kept between statements.
pub struct PointLookup {
    heap: Arc<HeapRelation>,
    tree: BTree,
    desc: TupleDesc,
    /// Deform attributes `0..upto` (as the general scan does).
    upto: usize,
    /// The table column of each output column.
    outputs: Vec<usize>,
    /// The output column builders, emptied after each batch and reused.
    columns: Vec<Vector>,
    pos: ScanPos,
}

impl std::fmt::Debug for PointLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PointLookup({:?})", self.tree)
    }
}

impl PointLookup {
    /// The kept executor of `plan`, or `None` when `plan` is not a point
    /// lookup (module doc).
    pub fn of(db: &Database, plan: &Plan) -> Result<Option<PointLookup>> {
        let Some((spec, outputs)) = point_scan(plan) else {
            return Ok(None);
        };
        let heap = db.relation(spec.table.relfilenode)?;
        let tree = crate::exec::indexscan::open_tree(&heap, spec);
        let outputs: Vec<usize> = outputs.iter().map(|&i| spec.columns[i]).collect();
        Ok(Some(PointLookup {
            desc: tuple_desc(&spec.table)?,
            upto: spec.columns.iter().map(|&c| c + 1).max().unwrap_or(0),
            columns: outputs
                .iter()
                .map(|&c| Vector::with_capacity(spec.table.columns[c].ty, 1))
                .collect(),
            outputs,
            heap,
            tree,
            pos: ScanPos::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward),
        }))
    }

    /// Hands the `len` rows built to `emit` and empties the builders.
    fn emit(&mut self, len: usize, emit: &mut dyn FnMut(&Batch) -> Result<()>) -> Result<()> {
        let batch = Batch {
            columns: std::mem::take(&mut self.columns),
            len,
        };
        let r = emit(&batch);
        self.columns = batch.columns;
        for c in &mut self.columns {
            c.clear();
        }
        r
    }

    /// Runs the lookup of `key` under `snap`, handing each non-empty batch
    /// to `emit`; returns the number of rows.
    pub fn run(
        &mut self,
        key: &Value,
        snap: &Snapshot,
        cancel: &AtomicBool,
        emit: &mut dyn FnMut(&Batch) -> Result<()>,
    ) -> Result<usize> {
        RUNS.fetch_add(1, Ordering::Relaxed);
        let check_cancel = || -> Result<()> {
            if cancel.load(Ordering::Relaxed) {
                return Err(crate::err!(
                    QueryCanceled,
                    "canceling statement due to user request"
                ));
            }
            Ok(())
        };
        check_cancel()?;
        let mut k = Vec::with_capacity(16);
        encode_key(self.tree.desc(), std::slice::from_ref(key), &mut k)?;
        self.pos.reset(
            Bound::Included(k.clone()),
            Bound::Included(k),
            Direction::Forward,
        );
        for c in &mut self.columns {
            c.clear();
        }
        let (mut pending, mut total) = (0usize, 0usize);
        let mut horizon = None;
        loop {
            let (desc, upto, outputs) = (&self.desc, self.upto, &self.outputs);
            let builders = &mut self.columns;
            let Some(entry) = self.pos.next_key(&self.tree)? else {
                break;
            };
            let (block, offset) = tid_of(entry);
            let tid = Tid { block, offset };
            let seen = self.heap.fetch_hot(tid, snap, |_, t| -> Result<()> {
                if upto == 0 {
                    return Ok(());
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
                for (b, &c) in builders.iter_mut().zip(outputs) {
                    push_datum(b, slots[c]);
                }
                Ok(())
            })?;
            match seen {
                Some(r) => {
                    r?;
                    pending += 1;
                }
                None => {
                    let horizon = *horizon.get_or_insert_with(|| self.heap.txns().oldest_xmin());
                    // Every version of the chain, not the root's alone.
                    if self.heap.chain_dead_to_all(tid, horizon)? {
                        self.pos.kill_last();
                    }
                }
            }
            if pending == BATCH_SIZE {
                self.emit(pending, emit)?;
                total += std::mem::take(&mut pending);
                check_cancel()?;
            }
        }
        if pending > 0 {
            self.emit(pending, emit)?;
        }
        Ok(total + pending)
    }
}
