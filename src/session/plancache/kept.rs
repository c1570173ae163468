//! A template's kept point-lookup executor (`exec::fastpath::lookup`):
//! made at the template's first run when its plan is a point lookup, kept
//! with the template (and dropped with it when it goes stale), and run
//! with each statement's key taken from its literal.
//!
//! Invariant: a kept lookup runs only a statement of its template's shape
//! whose template was just found fresh, under the template's plan lock.

use super::{fill_slots, for_each_value, literal_as, Shape, Template};
use crate::error::Result;
use crate::exec::vector::Batch;
use crate::nodes::Plan;
use crate::session::{Column, QueryResult};
use crate::txn::Snapshot;
use crate::types::Value;

/// Whether a template's plan runs by a kept point lookup.
#[derive(Debug)]
pub(super) enum Kept {
    /// Not run from the template yet.
    Unknown,
    /// Not a point lookup: the general executor runs it.
    No,
    /// Its kept executor, and the literal that gives its key (none: the
    /// key is a constant of the plan).
    Lookup(
        Box<crate::exec::fastpath::lookup::PointLookup>,
        Option<usize>,
    ),
}

impl crate::session::Session {
    /// Runs the statement of `shape` by template `t`'s kept point lookup
    /// (made at its first run from `plan`, the template's plan, locked);
    /// `None` when the plan is not a point lookup. The lookup takes its key
    /// from the statement's literal: the other slots of `plan` are not
    /// filled (nothing of a point lookup but its key depends on them).
    pub(super) fn run_kept(
        &mut self,
        t: &Template,
        plan: &mut Plan,
        shape: &Shape,
        snap: &Snapshot,
        t0: std::time::Instant,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<Option<QueryResult>> {
        use crate::exec::fastpath::lookup::{key_of, PointLookup};
        let mut kept = t.kept.lock();
        if matches!(*kept, Kept::Unknown) {
            fill_slots(plan, t, shape);
            *kept = match PointLookup::of(&self.db, plan)? {
                Some(l) => Kept::Lookup(Box::new(l), key_slot(plan, t)),
                None => Kept::No,
            };
        }
        let Kept::Lookup(lookup, slot) = &mut *kept else {
            return Ok(None);
        };
        let Some(planned_key) = key_of(plan) else {
            return Ok(None);
        };
        let key = match slot {
            Some(lit) => match literal_as(planned_key, shape.lits[*lit].0) {
                Some(v) => v,
                None => return Ok(None),
            },
            None => planned_key.clone(),
        };
        let planned = t0.elapsed();
        let columns = crate::session::query::columns_of(plan);
        let n = lookup.run(&key, snap, &self.cancel, &mut |b| sink(&columns, b))?;
        let mut r = QueryResult::empty(if n == 1 { "SELECT 1" } else { "SELECT 0" });
        if n > 1 {
            r.tag = format!("SELECT {n}");
        }
        r.columns = columns;
        r.returns_rows = true;
        r.timing.plan = planned;
        r.timing.execute = t0.elapsed() - planned;
        Ok(Some(r))
    }
}

/// The literal whose slot is the key of `plan`, a point lookup's plan
/// (the value [`key_of`](crate::exec::fastpath::lookup::key_of) names), if
/// a literal gives it.
fn key_slot(plan: &mut Plan, t: &Template) -> Option<usize> {
    let key = crate::exec::fastpath::lookup::key_of(plan)? as *const Value;
    let (mut j, mut at) = (0, None);
    for_each_value(plan, &mut |v| {
        if std::ptr::eq(v, key) {
            at = Some(j);
        }
        j += 1;
    });
    let at = at?;
    t.slots.iter().find(|s| s.0 == at).map(|s| s.1)
}
