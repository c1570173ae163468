//! EXPLAIN of INSERT, UPDATE and DELETE: PostgreSQL's `ModifyTable` line
//! (`Update on t`, `Insert on t z`) above the plan of the rows to write.
//!
//! The statement runs through the session's ordinary path (views, foreign
//! keys, `ON CONFLICT` and all) with a [`ModifyCapture`] in place, which
//! [`Session::write_rows`] consults where it would write: it records the
//! plan of the rows, then stops (plain EXPLAIN: nothing is written, no
//! sequence advanced, no row locked) or writes with every plan node
//! measured (EXPLAIN ANALYZE, which makes the change as PostgreSQL's does).
//! So what EXPLAIN shows is exactly the plan the statement runs. The fast
//! paths that write without a plan (the one-row INSERT of literals, plan
//! templates) are not taken while a capture is in place.
//!
//! Invariant: the capture lives only for the EXPLAIN statement; it is taken
//! back whether the statement succeeds or fails. A statement that writes
//! more than one table (an inherited table's UPDATE or DELETE, which
//! PostgreSQL shows as one node per child over an Append) is refused with
//! 0A000 rather than shown wrongly.

use std::cell::RefCell;
use std::time::Instant;

use heapdb_grammar::ast;

use super::query::explain_result;
use super::{QueryResult, Session};
use crate::err;
use crate::error::Result;
use crate::exec::modify::upsert::UpdateAction;
use crate::exec::Instrumentation;
use crate::nodes::Plan;
use crate::plan::explain::{deparse, explain_below, ExplainFlags};
use crate::plan::folded;

/// What the session records of the statement an EXPLAIN runs.
#[derive(Default)]
pub(crate) struct ModifyCapture {
    /// Run the statement (ANALYZE) instead of stopping before the write.
    pub analyze: bool,
    /// The measurements of the plan's nodes (ANALYZE).
    pub instr: Instrumentation,
    /// The written table's name and its rows' plan, per table written.
    pub plans: RefCell<Vec<(String, Plan)>>,
    /// When the statement reached its write: its planning ended there.
    pub reached: std::cell::Cell<Option<Instant>>,
    /// `ON CONFLICT`'s lines (resolution, arbiter indexes, filter).
    pub conflict: RefCell<Vec<String>>,
}

impl Session {
    /// EXPLAIN [ANALYZE] of an INSERT, UPDATE or DELETE (see the module doc).
    pub(super) fn explain_modify(
        &mut self,
        e: &ast::Explain,
        flags: ExplainFlags,
    ) -> Result<QueryResult> {
        let (kind, target, alias) = match &e.statement {
            ast::Statement::Insert(i) => ("Insert", &i.table, i.alias.clone()),
            ast::Statement::Update(u) => ("Update", &u.table, u.alias.clone()),
            ast::Statement::Delete(d) => ("Delete", &d.table, d.alias.clone()),
            _ => return Err(err!(InternalError, "not a data-modifying statement")),
        };
        self.modify_capture = Some(Box::new(ModifyCapture {
            analyze: e.options.analyze,
            ..ModifyCapture::default()
        }));
        let t0 = Instant::now();
        let (ran, mut folds) =
            folded::recording(|| self.dispatch(&e.statement, &mut |_, _| Ok(())));
        let end = Instant::now();
        let capture = self.modify_capture.take().expect("the capture set above");
        ran?;
        let mut plans = capture.plans.into_inner();
        if plans.len() != 1 {
            return Err(err!(
                FeatureNotSupported,
                "EXPLAIN of {} on a table with inheritance children is not supported",
                kind.to_ascii_uppercase()
            ));
        }
        let (table, plan) = plans.pop().expect("one plan");
        let plan = folded::mark_all(&plan, &mut folds, flags.analyze, || {
            self.replan_rows(&e.statement)
        });
        let reached = capture.reached.get().unwrap_or(end);
        let (planned, elapsed) = (reached - t0, end - reached);
        let mut head = format!("{kind} on ");
        if flags.verbose {
            head.push_str("public.");
        }
        head.push_str(&table);
        // The statement's alias names the table only when it was named
        // directly (not through a view).
        if let Some(a) = alias.filter(|_| target.name == table) {
            head.push(' ');
            head.push_str(&a);
        }
        if flags.costs {
            head.push_str("  (rows=0 width=0)");
        }
        let stats = flags.analyze.then(|| capture.instr.nodes.borrow().clone());
        if flags.analyze {
            let ms = elapsed.as_secs_f64() * 1000.0;
            head.push_str(&if flags.timing {
                format!(" (actual time={ms:.3}..{ms:.3} rows=0 loops=1)")
            } else {
                " (actual rows=0 loops=1)".to_string()
            });
        }
        let mut lines = vec![head];
        for l in capture.conflict.into_inner() {
            lines.push(format!("  {l}"));
        }
        let (inits, tree) = explain_below(&plan, flags, stats.as_deref(), &folds);
        lines.extend(inits);
        for (i, l) in tree.into_iter().enumerate() {
            lines.push(if i == 0 {
                format!("  ->  {l}")
            } else {
                format!("      {l}")
            });
        }
        let summary = e.options.summary.unwrap_or(e.options.analyze);
        if summary {
            lines.push(format!(
                "Planning Time: {:.3} ms",
                planned.as_secs_f64() * 1000.0
            ));
            if e.options.analyze {
                lines.push(format!(
                    "Execution Time: {:.3} ms",
                    elapsed.as_secs_f64() * 1000.0
                ));
            }
        }
        Ok(explain_result(lines))
    }

    /// The plan of the rows `statement` writes, planned again without
    /// writing (to locate its folded subqueries' constants).
    fn replan_rows(&mut self, statement: &ast::Statement) -> Option<Plan> {
        self.modify_capture = Some(Box::default());
        let ran = self.dispatch(statement, &mut |_, _| Ok(()));
        let capture = self.modify_capture.take()?;
        ran.ok()?;
        let mut plans = capture.plans.into_inner();
        (plans.len() == 1)
            .then(|| plans.pop().map(|p| p.1))
            .flatten()
    }

    /// Records `ON CONFLICT`'s lines for an EXPLAIN in progress: its
    /// resolution, the arbiter indexes (positions in `table.indexes`) and
    /// DO UPDATE's condition (over the existing row, then EXCLUDED's),
    /// the existing row's columns qualified by `alias`.
    pub(crate) fn capture_conflict(
        &self,
        table: &crate::catalog::TableDef,
        oc: &ast::OnConflict,
        arbiters: &[usize],
        action: Option<&UpdateAction>,
        alias: &str,
    ) {
        let Some(c) = self.modify_capture() else {
            return;
        };
        let mut lines = c.conflict.borrow_mut();
        lines.push(match oc.action {
            ast::ConflictAction::Nothing => "Conflict Resolution: NOTHING".to_string(),
            ast::ConflictAction::Update { .. } => "Conflict Resolution: UPDATE".to_string(),
        });
        // With no conflict target every unique index arbitrates, and
        // PostgreSQL names none.
        if !matches!(oc.target, ast::ConflictTarget::Any) && !arbiters.is_empty() {
            let names: Vec<&str> = arbiters
                .iter()
                .map(|&i| table.indexes[i].name.as_str())
                .collect();
            lines.push(format!("Conflict Arbiter Indexes: {}", names.join(", ")));
        }
        if let Some(cond) = action.and_then(|a| a.condition.as_ref()) {
            let cols: Vec<String> = table
                .columns
                .iter()
                .map(|col| format!("{alias}.{}", col.name))
                .chain(
                    table
                        .columns
                        .iter()
                        .map(|col| format!("excluded.{}", col.name)),
                )
                .collect();
            lines.push(format!("Conflict Filter: {}", deparse(cond, &cols)));
        }
    }

    /// The capture in place, if an EXPLAIN runs the statement.
    pub(crate) fn modify_capture(&self) -> Option<&ModifyCapture> {
        self.modify_capture.as_deref()
    }
}
