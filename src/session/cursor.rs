//! SQL cursors: `DECLARE`, `FETCH`, `MOVE`, `CLOSE` (PostgreSQL's portals
//! as the SQL commands see them, `portalcmds.c` and `DoPortalRunFetch`).
//!
//! A cursor's rows are computed when it is declared, under the DECLARE's
//! snapshot, and kept in memory; FETCH and MOVE then only move a position
//! over them. What PostgreSQL would compute as the cursor is read is
//! therefore computed at once: the rows are the same (the snapshot is the
//! DECLARE's in both), but an error in a later row is raised by the
//! DECLARE, and a volatile function in the query reads as of the DECLARE,
//! not of the FETCH.
//!
//! Invariants:
//! - `pos` is in `0..=n+1` for `n` rows: 0 before the first row, `n + 1`
//!   after the last, else on row `pos` (1-based), as PostgreSQL's
//!   `portalPos` with `atStart`/`atEnd`.
//! - A cursor without HOLD lives until its transaction ends; one WITH HOLD
//!   declared in a transaction that rolls back goes with it; one whose
//!   transaction committed lives until CLOSE or the session's end.
//! - A `NO SCROLL` cursor never moves backward: any FETCH or MOVE that would
//!   is refused before anything moves.

use std::collections::HashMap;
use std::sync::Arc;

use heapdb_grammar::ast;

use super::{sysview, Column, QueryResult, Session};
use crate::catalog::ViewDef;
use crate::err;
use crate::error::Result;
use crate::exec::vector::Batch;
use crate::nodes::plannodes::{Node, Plan};
use crate::types::DataType;

/// One open cursor.
struct Cursor {
    columns: Vec<Column>,
    rows: Batch,
    pos: usize,
    /// Backward movement allowed: `SCROLL`, or neither `SCROLL` nor `NO
    /// SCROLL` and a plan PostgreSQL could run backward
    /// ([`supports_backward`]), so that the same cursors refuse to.
    scroll: bool,
    hold: bool,
    /// Declared in the transaction still open (rolled back with it).
    declared_in_txn: bool,
    /// The text of the statement that declared it, as the client sent it.
    statement: String,
    binary: bool,
    /// When it was declared (the transaction's start, microseconds since
    /// 2000-01-01 UTC).
    created: i64,
}

/// The session's open cursors, by name.
#[derive(Default)]
pub(crate) struct Cursors {
    open: HashMap<String, Cursor>,
    /// The text the client sent, set before a DECLARE or PREPARE runs and
    /// taken by it (for `pg_cursors` and `pg_prepared_statements`).
    pub(crate) statement_text: Option<String>,
}

/// The name of the view of the open cursors.
pub(crate) const PG_CURSORS: &str = "pg_cursors";

impl Cursors {
    /// The `pg_cursors` view: one row per open cursor, oldest first.
    pub(crate) fn system_view(&self) -> Arc<ViewDef> {
        let mut open: Vec<(&String, &Cursor)> = self.open.iter().collect();
        open.sort_by_key(|(name, c)| (c.created, name.to_string()));
        let rows: Vec<Vec<String>> = open
            .iter()
            .map(|(name, c)| {
                vec![
                    sysview::quote(name),
                    sysview::quote(&c.statement),
                    c.hold.to_string(),
                    c.binary.to_string(),
                    c.scroll.to_string(),
                    sysview::timestamptz(c.created),
                ]
            })
            .collect();
        sysview::values_view(
            PG_CURSORS,
            &[
                ("name", DataType::Text, "text"),
                ("statement", DataType::Text, "text"),
                ("is_holdable", DataType::Bool, "boolean"),
                ("is_binary", DataType::Bool, "boolean"),
                ("is_scrollable", DataType::Bool, "boolean"),
                ("creation_time", DataType::TimestampTz(None), "timestamptz"),
            ],
            &rows,
        )
    }

    /// Drops what the ending transaction's cursors leave behind: every
    /// cursor without HOLD, and on rollback those declared in it.
    pub(crate) fn end_of_transaction(&mut self, commit: bool) {
        if self.open.is_empty() {
            return;
        }
        self.open
            .retain(|_, c| c.hold && (commit || !c.declared_in_txn));
        for c in self.open.values_mut() {
            c.declared_in_txn = false;
        }
    }
}

/// What one FETCH or MOVE does: the rows it passes over, in order, and
/// where it leaves the cursor.
struct Step {
    rows: Vec<u32>,
    pos: usize,
}

impl Session {
    /// `DECLARE name ... CURSOR ... FOR query`: computes the rows now.
    pub(crate) fn declare_cursor(&mut self, d: &ast::DeclareCursor) -> Result<QueryResult> {
        let statement = self
            .cursors
            .statement_text
            .take()
            .unwrap_or_else(|| format!("{d};"));
        if !d.hold && !self.txn_ref().block {
            return Err(err!(
                NoActiveSqlTransaction,
                "DECLARE CURSOR can only be used in transaction blocks"
            ));
        }
        if self.cursors.open.contains_key(&d.name) {
            return Err(err!(
                DuplicateCursor,
                "cursor \"{}\" already exists",
                d.name
            ));
        }
        let snap = self.statement_snapshot();
        let plan = self.plan_query(&d.query, &snap)?;
        let scroll = d.scroll.unwrap_or_else(|| supports_backward(&plan));
        let mut rows: Option<Batch> = None;
        let r = self.execute_plan(&plan, &snap, std::time::Instant::now(), &mut |_, b| {
            match &mut rows {
                Some(all) => all.extend(b),
                None => rows = Some(b.clone()),
            }
            Ok(())
        })?;
        let rows = match rows {
            Some(b) => b,
            None => Batch::new(
                r.columns
                    .iter()
                    .map(|c| crate::exec::vector::Vector::new(c.ty))
                    .collect(),
            ),
        };
        self.cursors.open.insert(
            d.name.clone(),
            Cursor {
                columns: r.columns,
                rows,
                pos: 0,
                scroll,
                hold: d.hold,
                declared_in_txn: true,
                statement,
                binary: d.binary,
                created: self.txn_ref().start_ts,
            },
        );
        Ok(QueryResult::empty("DECLARE CURSOR"))
    }

    /// `FETCH` / `MOVE`.
    pub(crate) fn fetch_cursor(
        &mut self,
        f: &ast::Fetch,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let Some(c) = self.cursors.open.get_mut(&f.cursor) else {
            return Err(err!(
                InvalidCursorName,
                "cursor \"{}\" does not exist",
                f.cursor
            ));
        };
        let step = step(c, f.direction, f.is_move)?;
        c.pos = step.pos;
        let n = step.rows.len();
        if f.is_move {
            return Ok(QueryResult::empty(&format!("MOVE {n}")));
        }
        let out = c.rows.take(&step.rows);
        if n > 0 {
            sink(&c.columns, &out)?;
        }
        let mut r = QueryResult::empty(&format!("FETCH {n}"));
        r.columns = c.columns.clone();
        r.returns_rows = true;
        Ok(r)
    }

    /// `CLOSE name` / `CLOSE ALL`.
    pub(crate) fn close_cursor(&mut self, name: Option<&str>) -> Result<QueryResult> {
        match name {
            None => {
                self.cursors.open.clear();
                Ok(QueryResult::empty("CLOSE CURSOR ALL"))
            }
            Some(name) => match self.cursors.open.remove(name) {
                Some(_) => Ok(QueryResult::empty("CLOSE CURSOR")),
                None => Err(err!(InvalidCursorName, "cursor \"{name}\" does not exist")),
            },
        }
    }
}

/// Whether PostgreSQL's executor could run `plan` backward
/// (`ExecSupportsBackwardScan`), which makes a cursor declared without
/// `SCROLL` or `NO SCROLL` scrollable: scans, `VALUES`, functions, CTE
/// scans and sorts can; filters, projections and limits as their input;
/// an append when all its inputs can; joins, aggregates, grouping, window
/// functions, set operations, bitmap and parallel scans cannot. A `SELECT`
/// without `FROM` (PostgreSQL's `Result` node) cannot either.
fn supports_backward(plan: &Plan) -> bool {
    match &plan.node {
        Node::Values { rows } => rows.first().is_some_and(|r| !r.is_empty()),
        Node::SeqScan { .. }
        | Node::IndexScan(_)
        | Node::Function { .. }
        | Node::CteScan { .. }
        | Node::Sort { .. } => true,
        Node::Filter { input, .. }
        | Node::Project { input, .. }
        | Node::Limit { input, .. }
        | Node::LimitTies { input, .. } => supports_backward(input),
        Node::Append { inputs } => inputs.iter().all(supports_backward),
        _ => false,
    }
}

/// Where `direction` takes cursor `c` and the rows it passes (for MOVE,
/// the rows it would return), or PostgreSQL's error for a `NO SCROLL`
/// cursor asked to go back.
fn step(c: &Cursor, direction: ast::FetchDirection, is_move: bool) -> Result<Step> {
    use ast::FetchDirection as D;
    let n = c.rows.len;
    let pos = c.pos;
    let on_row = pos >= 1 && pos <= n;
    let back = |c: &Cursor| -> Result<()> {
        if c.scroll {
            Ok(())
        } else {
            Err(
                err!(ObjectNotInPrerequisiteState, "cursor can only scan forward")
                    .with_hint("Declare it with SCROLL option to enable backward scan."),
            )
        }
    };
    let refetch = |c: &Cursor| -> Result<Step> {
        // Re-fetching the current row steps back onto it; MOVE 0 only
        // reports whether there is one.
        if on_row && !is_move {
            back(c)?;
        }
        Ok(Step {
            rows: if on_row {
                vec![(pos - 1) as u32]
            } else {
                Vec::new()
            },
            pos,
        })
    };
    match direction {
        D::Forward(Some(0)) | D::Backward(Some(0)) | D::Relative(0) => refetch(c),
        D::Forward(Some(k)) if k < 0 => {
            back(c)?;
            Ok(backward(pos, k.unsigned_abs() as usize))
        }
        D::Forward(k) => Ok(forward(pos, n, k.map_or(usize::MAX, |k| k as usize))),
        D::Backward(k) => {
            back(c)?;
            Ok(backward(
                pos,
                k.map_or(usize::MAX, |k| k.unsigned_abs() as usize),
            ))
        }
        D::Relative(k) => {
            if k < 0 {
                back(c)?;
            }
            let target = pos as i64 + k;
            Ok(to_row(target, n))
        }
        D::Absolute(k) => {
            let target = if k >= 0 { k } else { n as i64 + 1 + k };
            // A target at or before the current row is reached by going
            // back (or by a rewind: PostgreSQL refuses both); from before
            // the first row nothing needs to move back.
            if k < 0 || (target <= pos as i64 && pos > 0) {
                back(c)?;
            }
            Ok(to_row(target, n))
        }
    }
}

/// Forward by `k` rows from `pos` over `n`.
fn forward(pos: usize, n: usize, k: usize) -> Step {
    let first = pos + 1;
    let last = pos.saturating_add(k).min(n);
    let rows = (first..=last).map(|r| (r - 1) as u32).collect();
    let pos = if pos.saturating_add(k) > n {
        n + 1
    } else {
        pos + k
    };
    Step { rows, pos }
}

/// Backward by `k` rows from `pos`.
fn backward(pos: usize, k: usize) -> Step {
    let last = pos.saturating_sub(k).max(1);
    let rows = if pos > 1 {
        (last..pos).rev().map(|r| (r - 1) as u32).collect()
    } else {
        Vec::new()
    };
    Step {
        rows,
        pos: pos.saturating_sub(k),
    }
}

/// Onto row `target` (1-based) of `n`, or before the first / after the
/// last when it is out of range.
fn to_row(target: i64, n: usize) -> Step {
    if target >= 1 && target <= n as i64 {
        Step {
            rows: vec![(target - 1) as u32],
            pos: target as usize,
        }
    } else if target < 1 {
        Step {
            rows: Vec::new(),
            pos: 0,
        }
    } else {
        Step {
            rows: Vec::new(),
            pos: n + 1,
        }
    }
}
