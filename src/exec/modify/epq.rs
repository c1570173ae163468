//! READ COMMITTED's re-check of a row that another transaction updated
//! after the statement's snapshot was taken (PostgreSQL's EvalPlanQual,
//! `execMain.c` and the executor README's "EvalPlanQual (READ COMMITTED
//! Update Checking)").
//!
//! When an UPDATE or DELETE finds its target row updated by a transaction
//! that committed, it follows the row's ctid chain to its newest version
//! ([`Epq::newest`]), waiting for a transaction still changing it; then it
//! evaluates the statement's WHERE again over that version, the other
//! FROM / USING items' columns held at the values the statement's own row
//! had ([`Epq::row`]), and, when the row still qualifies, computes the new
//! row (an UPDATE's SET expressions) from the newest version and changes
//! that version instead. A row deleted meanwhile, or whose newest version
//! no longer qualifies, is skipped.
//!
//! The WHERE comes planned with the statement, or, for a statement run
//! from a plan template, is planned by the caller when a row first needs
//! it ([`RecheckSource`]): the common case, no concurrent change, pays
//! nothing for it.
//!
//! Invariants:
//! - a step of the chain is taken only while the next version's `xmin` is
//!   the `xmax` of the version before it: a slot freed by pruning and
//!   reused holds another row, and the chain then ends (the row is gone);
//! - nothing is written here: the caller tries its change on the version
//!   found, and a change that meets yet another update follows on from
//!   there, so the version changed is always the newest at the time;
//! - the source row is the statement's plan's layout: the target table's
//!   columns, its tuple id, then the held columns, then (from the source's
//!   width on) the values held as first read for WHERE's sublinks, which
//!   PostgreSQL's re-check sees through the rows it holds of the
//!   relations it joined them as (`plan::modify::recheck`); the plan's
//!   output (the rows written) is its projection's expressions over it.

use std::cell::OnceCell;

use crate::access::heap::tuple;
use crate::access::heap::visibility::satisfies_update;
use crate::access::heap::{HeapRelation, Tid, TmResult};
use crate::catalog::TableDef;
use crate::error::Result;
use crate::exec::expr::{Expr, ExprKind};
use crate::exec::index_maint::tuple_values;
use crate::exec::vector::{Batch, Vector};
use crate::nodes::{Node, Plan};
use crate::storage::ForkNumber;
use crate::types::{DataType, Value};

use super::ModifyContext;

/// What an UPDATE or DELETE evaluates again over a row's newest version:
/// its WHERE, over the source row (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct Recheck {
    /// WHERE's conjuncts, ANDed (`None`: no WHERE).
    pub condition: Option<Expr>,
    /// The source row's positions past the target's columns and its tuple
    /// id that the plan outputs after the row (the held columns, in
    /// order); the others are read neither by WHERE nor by the row.
    pub held: Vec<usize>,
    /// The source row's width: where the values held as first read begin
    /// (the plan outputs them after the held columns).
    pub width: usize,
    /// How many values the re-check holds as first read (a sublink's
    /// operands: see `plan::modify::recheck`).
    pub first_read: usize,
}

impl Recheck {
    /// The re-check of WHERE's bound conjuncts `quals`, the plan holding
    /// the source columns `held`.
    pub fn of(quals: Vec<Expr>, held: Vec<usize>) -> Recheck {
        Recheck {
            condition: quals.into_iter().reduce(|a, b| Expr {
                kind: ExprKind::And(Box::new(a), Box::new(b)),
                ty: DataType::Bool,
            }),
            held,
            width: 0,
            first_read: 0,
        }
    }

    /// The same re-check, also holding `first_read` values computed over
    /// the row first read, which it reads as the source row's columns from
    /// `width` on.
    pub fn holding(self, width: usize, first_read: usize) -> Recheck {
        Recheck {
            width,
            first_read,
            ..self
        }
    }
}

/// Where a statement finds its [`Recheck`].
#[derive(Clone, Copy)]
pub enum RecheckSource<'a> {
    /// It has none: a row updated meanwhile fails it with 40001.
    None,
    /// Planned with the statement.
    Planned(&'a Recheck),
    /// Planned when a row first needs it (a statement run from a plan
    /// template, which keeps no re-check).
    Lazy(&'a dyn Fn() -> Result<Recheck>),
}

/// One statement's re-check: its WHERE and its projection.
pub(super) struct Epq<'p> {
    table: &'p TableDef,
    source: RecheckSource<'p>,
    /// A lazily planned re-check, once planned.
    planned: OnceCell<Recheck>,
    /// The plan's output expressions over the source row.
    exprs: &'p [Expr],
}

impl<'p> Epq<'p> {
    /// The re-check of the statement writing `table` with `plan` (a
    /// projection over the source rows), if it has one.
    pub(super) fn new(
        table: &'p TableDef,
        source: RecheckSource<'p>,
        plan: &'p Plan,
    ) -> Option<Epq<'p>> {
        if matches!(source, RecheckSource::None) {
            return None;
        }
        let Node::Project { exprs, .. } = &plan.node else {
            return None;
        };
        Some(Epq {
            table,
            source,
            planned: OnceCell::new(),
            exprs,
        })
    }

    /// The statement's re-check (planned now if it is planned lazily).
    fn recheck(&self) -> Result<&Recheck> {
        match self.source {
            RecheckSource::Planned(r) => Ok(r),
            RecheckSource::Lazy(plan) => {
                if self.planned.get().is_none() {
                    let _ = self.planned.set(plan()?);
                }
                Ok(self.planned.get().expect("set above"))
            }
            RecheckSource::None => Err(crate::error::Error::internal(
                "a row re-checked without a re-check",
            )),
        }
    }

    /// The newest version of the row whose version at `from` a committed
    /// transaction replaced by the one at `next`: its tuple id and a copy
    /// of it, or `None` when the row was deleted (or is otherwise gone).
    /// A version a running transaction changed is waited for.
    pub(super) fn newest(
        &self,
        ctx: &ModifyContext<'_>,
        rel: &HeapRelation,
        from: Tid,
        next: Tid,
    ) -> Result<Option<(Tid, Vec<u8>)>> {
        let Some(old) = read_tuple(rel, from)? else {
            return Ok(None);
        };
        let mut prior_xmax = tuple::xmax(&old);
        let mut cur = next;
        loop {
            let Some(t) = read_tuple(rel, cur)? else {
                return Ok(None);
            };
            if tuple::xmin(&t) != prior_xmax {
                return Ok(None);
            }
            let (res, _) = satisfies_update(&t, cur.pair(), ctx.xid, ctx.cid, ctx.txns)?;
            match res {
                TmResult::Ok => return Ok(Some((cur, t))),
                TmResult::BeingModified(x) => {
                    ctx.wait_for(x)?;
                }
                TmResult::Updated(block, offset) => {
                    prior_xmax = tuple::xmax(&t);
                    cur = Tid { block, offset };
                }
                TmResult::Deleted | TmResult::Invisible | TmResult::SelfModified => {
                    return Ok(None)
                }
            }
        }
    }

    /// Row `i` of the plan's output `b` as it is over the row version `t`
    /// at `tid` (read with `desc`), the held columns kept: a one-row batch
    /// of the output's layout, or `None` when WHERE is not true for it.
    pub(super) fn row(
        &self,
        desc: &tuple::TupleDesc,
        b: &Batch,
        i: usize,
        tid: Tid,
        t: &[u8],
    ) -> Result<Option<Batch>> {
        let values = tuple_values(self.table, desc, t)?;
        let ncols = self.table.columns.len();
        let mut columns: Vec<Vector> = self
            .table
            .columns
            .iter()
            .zip(&values)
            .map(|(c, v)| Vector::from_values(c.ty, std::slice::from_ref(v)))
            .collect();
        columns.push(Vector::from_values(
            DataType::Int8,
            &[Value::Int8(tid_value(tid))],
        ));
        let recheck = self.recheck()?;
        let mut held = recheck.held.iter().zip(&b.columns[1 + ncols..]).peekable();
        for p in ncols + 1..recheck.held.last().map_or(0, |&p| p + 1) {
            match held.next_if(|(&q, _)| q == p) {
                Some((_, c)) => columns.push(c.take(&[i as u32])),
                // Read by nothing: a placeholder keeps the positions.
                None => columns.push(Vector::from_values(DataType::Bool, &[Value::Null])),
            }
        }
        if recheck.first_read > 0 {
            let from = 1 + ncols + recheck.held.len();
            let Some(values) = b.columns.get(from..from + recheck.first_read) else {
                return Err(crate::error::Error::internal(
                    "a re-check's held values missing from the plan's output",
                ));
            };
            while columns.len() < recheck.width {
                columns.push(Vector::from_values(DataType::Bool, &[Value::Null]));
            }
            columns.extend(values.iter().map(|c| c.take(&[i as u32])));
        }
        let source = Batch::new(columns);
        if let Some(c) = &recheck.condition {
            if c.eval(&source)?.get(0).as_bool() != Some(true) {
                return Ok(None);
            }
        }
        let out = self
            .exprs
            .iter()
            .map(|e| e.eval(&source).map(|v| v.into_owned()))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(Batch::new(out)))
    }
}

/// A tuple id as the plans' `ctid` column holds it.
fn tid_value(tid: Tid) -> i64 {
    (i64::from(tid.block) << 16) | i64::from(tid.offset)
}

/// A copy of the heap tuple at `tid`, if there is one.
pub(super) fn read_tuple(rel: &HeapRelation, tid: Tid) -> Result<Option<Vec<u8>>> {
    if tid.block >= rel.nblocks()? {
        return Ok(None);
    }
    let buf = rel
        .pool()
        .read_buffer(rel.rel(), ForkNumber::Main, tid.block, None)?;
    let g = buf.read();
    Ok(crate::storage::page::get_item(&g[..], tid.offset)
        .filter(|t| t.len() >= tuple::HEADER_SIZE)
        .map(<[u8]>::to_vec))
}
