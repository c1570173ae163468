//! Common table expressions: the `WITH` entries in scope while a query is
//! planned, and `WITH RECURSIVE`'s planning (PostgreSQL's `parse_cte.c`
//! checks, then a Recursive Union over a working table).
//!
//! A CTE that does not refer to itself is planned where it is referenced,
//! as a subquery (PostgreSQL inlines a CTE referenced once; the rows are
//! the same). A recursive one (an entry of `WITH RECURSIVE` whose query
//! names itself) becomes a CTE Scan over a Recursive Union of its
//! non-recursive term and its recursive term, in which the self-reference
//! is a WorkTable Scan.
//!
//! Invariants, as PostgreSQL checks them (42P19 unless said): the query is
//! `non-recursive term UNION [ALL] recursive term`; the self-reference
//! appears only in the recursive term, at most once, not inside a sublink
//! nor on the nullable side of an outer join, and that term has no
//! aggregates; the CTE's query has no ORDER BY, LIMIT or OFFSET (0A000);
//! the CTE's column types are the non-recursive term's, and a column whose
//! UNION type differs from it is 42804 (the recursive term's columns are
//! cast to those types).

use std::sync::atomic::{AtomicUsize, Ordering};

use heapdb_grammar::ast;

use super::super::bind::{at, contains_aggregate, leftmost, Binder};
use super::super::{Field, Node, Plan};
use super::from::derived;
use super::Item;
use crate::err;
use crate::error::Result;

mod refs;

/// One `WITH` entry in scope.
#[derive(Debug, Clone)]
pub struct CteEntry {
    /// The name it is referenced by.
    pub name: String,
    /// Its column list (may be shorter than its query's columns).
    pub columns: Vec<String>,
    /// Its query.
    pub query: ast::Query,
    /// It came from `WITH RECURSIVE`: it may refer to itself.
    pub recursive: bool,
    /// Where its name is in the statement.
    pub offset: ast::Offset,
    /// It belongs to a recursive CTE's own WITH: a recursive reference
    /// in its query is one within a subquery.
    pub in_recursive_with: bool,
    /// What a reference to it means right now.
    pub state: CteState,
    /// A recursive CTE's plan, made at its first reference: later ones
    /// read the same CTE (one working table number, one EXPLAIN section).
    /// Also the rows of a CTE run once for all its references.
    pub planned: Option<Plan>,
    /// How many FROM items of its query level name it.
    pub refs: usize,
    /// Written `AS MATERIALIZED` / `AS NOT MATERIALIZED`.
    pub materialized: Option<bool>,
}

impl CteEntry {
    /// The entry of `cte`, not yet being planned.
    pub fn of(cte: &ast::Cte) -> CteEntry {
        CteEntry {
            name: cte.name.clone(),
            columns: cte.columns.clone(),
            query: (*cte.query).clone(),
            recursive: cte.recursive,
            offset: cte.offset,
            in_recursive_with: false,
            state: CteState::Plain,
            planned: None,
            refs: 0,
            materialized: cte.materialized,
        }
    }

    /// The entries of `q`'s WITH, each with the count of FROM items in
    /// `q` (its body and the WITH queries) that name it.
    pub fn of_query(q: &ast::Query) -> Vec<CteEntry> {
        q.with
            .iter()
            .map(|c| CteEntry {
                refs: refs::count(q, &c.name),
                ..CteEntry::of(c)
            })
            .collect()
    }

    /// Whether its references must share one run of its query:
    /// PostgreSQL materializes a CTE that has side effects (a volatile
    /// function) and is read more than once, unless written `NOT
    /// MATERIALIZED`; inlining it would run the function per reference.
    fn run_once(&self, plan: &Plan) -> bool {
        !self.recursive
            && self.refs > 1
            && self.materialized != Some(false)
            && crate::plan::cost::plan_volatile(plan)
    }
}

/// What a reference to a CTE means while its own query is planned.
#[derive(Debug, Clone)]
pub enum CteState {
    /// Not being planned: a reference plans it.
    Plain,
    /// Its non-recursive term (or a query of the wrong shape) is being
    /// planned: a reference is the error `message` names.
    Forbidden(Forbidden),
    /// Its recursive term is being planned: a reference reads the working
    /// table.
    RecursiveTerm(WorkTableRef),
}

/// Which error a self-reference is.
#[derive(Debug, Clone, Copy)]
pub enum Forbidden {
    /// In the non-recursive term.
    NonRecursiveTerm,
    /// The query is not a UNION (reported at the CTE's name).
    NotUnion(ast::Offset),
}

/// The working table a recursive term reads.
#[derive(Debug, Clone)]
pub struct WorkTableRef {
    /// The working table's number.
    id: usize,
    /// Its columns: the CTE's names, the non-recursive term's types.
    fields: Vec<Field>,
    /// How many sublinks enclosed the recursive term (`Binder::outer`).
    sublinks: usize,
    /// How many nullable sides of outer joins enclosed it.
    nullable: usize,
    /// How many recursion barriers enclosed it.
    barriers: usize,
    /// References seen so far.
    refs: usize,
}

/// Numbers working tables uniquely within a process, so that plans made
/// by different binders never share one.
static NEXT_WORKTABLE: AtomicUsize = AtomicUsize::new(1);

fn recursion_error(msg: String, offset: ast::Offset) -> crate::error::Error {
    at(err!(InvalidRecursion, "{}", msg), offset)
}

impl Binder<'_> {
    /// The FROM item of the CTE `self.ctes[pos]`, referenced as `name`.
    pub(super) fn plan_cte_ref(
        &mut self,
        pos: usize,
        name: &ast::ObjectName,
        alias: Option<&ast::TableAlias>,
    ) -> Result<Item> {
        let entry = self.ctes[pos].clone();
        let mut alias = alias.cloned().unwrap_or(ast::TableAlias {
            name: entry.name.clone(),
            columns: vec![],
        });
        match entry.state {
            CteState::Forbidden(Forbidden::NonRecursiveTerm) => Err(recursion_error(
                format!(
                    "recursive reference to query \"{}\" must not appear within its non-recursive term",
                    entry.name
                ),
                name.offset,
            )),
            CteState::Forbidden(Forbidden::NotUnion(off)) => Err(recursion_error(
                format!(
                    "recursive query \"{}\" does not have the form non-recursive-term UNION [ALL] recursive-term",
                    entry.name
                ),
                off,
            )),
            CteState::RecursiveTerm(w) => {
                let plan = self.worktable_ref(pos, w, name, &alias.name)?;
                derived(plan, &alias)
            }
            CteState::Plain => {
                // The CTE's later siblings are not in its scope; a
                // recursive one sees itself.
                let keep = if entry.recursive { pos + 1 } else { pos };
                let plan = match entry.planned {
                    Some(mut plan) => {
                        if let Node::CteScan { alias: a, .. } = &mut plan.node {
                            a.clone_from(&alias.name);
                        }
                        plan
                    }
                    None => {
                        let saved = self.ctes.split_off(keep);
                        let plan = if entry.recursive {
                            self.plan_recursive_cte(pos, entry.offset, &alias.name)
                        } else {
                            let barrier = entry.in_recursive_with.then_some("within a subquery");
                            self.behind_barrier(barrier, |b| b.plan_query(&entry.query))
                        };
                        self.ctes.truncate(keep);
                        self.ctes.extend(saved);
                        let mut plan = plan?;
                        // A plain EXPLAIN shows its plan at each reference
                        // instead: running it would have its side effects.
                        if entry.run_once(&plan) && !self.ctx.explain_only() {
                            plan = self.run_cte_once(plan)?;
                            self.ctes[pos].planned = Some(plan.clone());
                        }
                        if matches!(plan.node, Node::CteScan { .. }) {
                            self.ctes[pos].planned = Some(plan.clone());
                        }
                        plan
                    }
                };
                if entry.columns.len() > plan.fields.len() {
                    return Err(at(
                        err!(
                            InvalidColumnReference,
                            "WITH query \"{}\" has {} columns available but {} columns specified",
                            entry.name,
                            plan.fields.len(),
                            entry.columns.len()
                        ),
                        entry.offset,
                    ));
                }
                if alias.columns.is_empty() {
                    alias.columns = entry.columns;
                }
                derived(plan, &alias)
            }
        }
    }

    /// `plan` run now, as its rows (a CTE every reference reads the same
    /// rows of, as PostgreSQL's CTE Scan over one materialized result).
    fn run_cte_once(&mut self, plan: Plan) -> Result<Plan> {
        let fields = plan.fields.clone();
        let rows = self.ctx.run_subquery(&plan)?;
        let rows: Vec<Vec<crate::exec::expr::Expr>> = rows
            .into_iter()
            .map(|r| {
                r.into_iter()
                    .zip(&fields)
                    .map(|(v, f)| crate::exec::expr::Expr::constant(v, f.ty))
                    .collect()
            })
            .collect();
        Ok(Plan {
            rows: rows.len() as f64,
            fields,
            node: Node::Values { rows },
        })
    }

    /// A reference to the CTE whose recursive term is being planned.
    fn worktable_ref(
        &mut self,
        pos: usize,
        w: WorkTableRef,
        name: &ast::ObjectName,
        alias: &str,
    ) -> Result<Plan> {
        let cte = &self.ctes[pos].name;
        let problem = if let Some(b) = self.recursion_barriers.get(w.barriers) {
            Some(*b)
        } else if self.outer.len() != w.sublinks {
            Some("within a subquery")
        } else if self.nullable_sides != w.nullable {
            Some("within an outer join")
        } else if w.refs > 0 {
            Some("more than once")
        } else {
            None
        };
        if let Some(p) = problem {
            return Err(recursion_error(
                format!("recursive reference to query \"{cte}\" must not appear {p}"),
                name.offset,
            ));
        }
        let plan = Plan {
            rows: 10.0,
            fields: w.fields.clone(),
            node: Node::WorkTableScan {
                worktable: w.id,
                name: cte.clone(),
                alias: alias.to_string(),
            },
        };
        self.ctes[pos].state = CteState::RecursiveTerm(WorkTableRef {
            refs: w.refs + 1,
            ..w
        });
        Ok(plan)
    }

    /// Plans the `WITH RECURSIVE` entry `self.ctes[pos]` (the last entry in
    /// scope): a CTE Scan over its Recursive Union, or its query planned
    /// as any other when it does not refer to itself.
    fn plan_recursive_cte(&mut self, pos: usize, offset: ast::Offset, alias: &str) -> Result<Plan> {
        let q = self.ctes[pos].query.clone();
        let (left, right, all) = match &q.body {
            ast::SetExpr::SetOp {
                op: ast::SetOperator::Union,
                all,
                left,
                right,
            } => (left, right, *all),
            _ => {
                self.ctes[pos].state = CteState::Forbidden(Forbidden::NotUnion(offset));
                let plan = self.plan_query(&q);
                self.ctes[pos].state = CteState::Plain;
                return plan;
            }
        };
        // The CTE's own WITH is in scope of both terms.
        let saved = self.ctes.len();
        self.ctes.extend(q.with.iter().map(|c| CteEntry {
            in_recursive_with: true,
            ..CteEntry::of(c)
        }));
        let planned = self.plan_union_terms(pos, left, right, all);
        self.ctes.truncate(saved);
        self.ctes[pos].state = CteState::Plain;
        let Some(union) = planned? else {
            // No self-reference: an ordinary query.
            self.ctes[pos].state = CteState::Forbidden(Forbidden::NonRecursiveTerm);
            let plan = self.plan_query(&q);
            self.ctes[pos].state = CteState::Plain;
            return plan;
        };
        if let Some(o) = q.order_by.first() {
            return Err(not_implemented("ORDER BY", o.expr.offset));
        }
        if let Some(e) = &q.limit {
            return Err(not_implemented("LIMIT", e.offset));
        }
        if let Some(e) = &q.offset {
            return Err(not_implemented("OFFSET", e.offset));
        }
        Ok(Plan {
            rows: union.rows,
            fields: union.fields.clone(),
            node: Node::CteScan {
                input: Box::new(union),
                name: self.ctes[pos].name.clone(),
                alias: alias.to_string(),
            },
        })
    }

    /// The Recursive Union of `left UNION [ALL] right` for the CTE
    /// `self.ctes[pos]`; `None` when `right` does not refer to the CTE.
    fn plan_union_terms(
        &mut self,
        pos: usize,
        left: &ast::SetExpr,
        right: &ast::SetExpr,
        all: bool,
    ) -> Result<Option<Plan>> {
        self.ctes[pos].state = CteState::Forbidden(Forbidden::NonRecursiveTerm);
        let nonrec = self.plan_query(&ast::Query::simple(left.clone()))?;
        let names = &self.ctes[pos].columns;
        let fields: Vec<Field> = nonrec
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| Field {
                name: names.get(i).cloned().unwrap_or_else(|| f.name.clone()),
                ty: f.ty,
            })
            .collect();
        let id = NEXT_WORKTABLE.fetch_add(1, Ordering::Relaxed);
        self.ctes[pos].state = CteState::RecursiveTerm(WorkTableRef {
            id,
            fields: fields.clone(),
            sublinks: self.outer.len(),
            nullable: self.nullable_sides,
            barriers: self.recursion_barriers.len(),
            refs: 0,
        });
        let rec = self.plan_query(&ast::Query::simple(right.clone()))?;
        let CteState::RecursiveTerm(w) = &self.ctes[pos].state else {
            return Err(crate::error::Error::internal(
                "a recursive term's state changed while it was planned",
            ));
        };
        if w.refs == 0 {
            return Ok(None);
        }
        if let Some(off) = aggregate_in(right) {
            return Err(recursion_error(
                "aggregate functions are not allowed in a recursive query's recursive term".into(),
                off,
            ));
        }
        let rec = self.unify_recursive(pos, &nonrec, rec, left)?;
        let rows = nonrec.rows * 10.0;
        Ok(Some(Plan {
            rows,
            fields,
            node: Node::RecursiveUnion {
                nonrecursive: Box::new(nonrec),
                recursive: Box::new(rec),
                distinct: !all,
                worktable: id,
            },
        }))
    }

    /// The recursive term with its columns cast to the non-recursive
    /// term's types; 42804 where the UNION's type of a column is not the
    /// non-recursive term's.
    fn unify_recursive(
        &mut self,
        pos: usize,
        nonrec: &Plan,
        rec: Plan,
        left: &ast::SetExpr,
    ) -> Result<Plan> {
        if nonrec.fields.len() != rec.fields.len() {
            return Err(err!(
                SyntaxError,
                "each UNION query must have the same number of columns"
            ));
        }
        let offsets = super::setops::output_offsets(left);
        let off = |i: usize| offsets.get(i).copied().unwrap_or(ast::Offset(0));
        let mut types = Vec::with_capacity(nonrec.fields.len());
        for (i, (a, b)) in nonrec.fields.iter().zip(&rec.fields).enumerate() {
            let overall = self.unify("UNION", &[(a.ty, off(i)), (b.ty, off(i))])?;
            if overall != a.ty {
                return Err(at(
                    err!(
                        DatatypeMismatch,
                        "recursive query \"{}\" column {} has type {} in non-recursive term but type {} overall",
                        self.ctes[pos].name,
                        i + 1,
                        a.ty,
                        overall
                    )
                    .with_hint("Cast the output of the non-recursive term to the correct type."),
                    off(i),
                ));
            }
            types.push(a.ty);
        }
        self.cast_outputs(rec, &types)
    }

    /// Plans one side of an outer join: `nullable` when its rows may be
    /// NULL-extended (a recursive reference may not appear there).
    pub(super) fn plan_join_side(
        &mut self,
        t: &ast::TableRef,
        needed: &super::Needed,
        nullable: bool,
    ) -> Result<Item> {
        self.nullable_sides += usize::from(nullable);
        let item = self.plan_table_ref(t, needed);
        self.nullable_sides -= usize::from(nullable);
        item
    }
}

impl Binder<'_> {
    /// Runs `f` with `barrier` (if any) around it.
    pub(super) fn behind_barrier<T>(
        &mut self,
        barrier: Option<&'static str>,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let Some(b) = barrier else {
            return f(self);
        };
        self.recursion_barriers.push(b);
        let r = f(self);
        self.recursion_barriers.pop();
        r
    }
}

/// The barriers to a recursive reference in the (left, right) operands of
/// a set operation, as PostgreSQL's `checkWellFormedRecursionWalker` sets
/// them: INTERSECT ALL both, EXCEPT ALL both, EXCEPT its right operand.
pub(super) fn set_op_barriers(
    op: ast::SetOperator,
    all: bool,
) -> (Option<&'static str>, Option<&'static str>) {
    match op {
        ast::SetOperator::Union => (None, None),
        ast::SetOperator::Intersect if all => (Some("within INTERSECT"), Some("within INTERSECT")),
        ast::SetOperator::Intersect => (None, None),
        ast::SetOperator::Except if all => (Some("within EXCEPT"), Some("within EXCEPT")),
        ast::SetOperator::Except => (None, Some("within EXCEPT")),
    }
}

/// Which sides of a join of `kind` are NULL-extended: (left, right).
pub(super) fn nullable_sides(kind: ast::JoinKind) -> (bool, bool) {
    match kind {
        ast::JoinKind::Inner | ast::JoinKind::Cross => (false, false),
        ast::JoinKind::Left => (false, true),
        ast::JoinKind::Right => (true, false),
        ast::JoinKind::Full => (true, true),
    }
}

/// The position of an aggregate call in the recursive term's own select
/// list or HAVING, if any.
fn aggregate_in(term: &ast::SetExpr) -> Option<ast::Offset> {
    let ast::SetExpr::Select(s) = term else {
        return None;
    };
    s.projection
        .iter()
        .filter_map(|item| match item {
            ast::SelectItem::Expr { expr, .. } => Some(expr),
            _ => None,
        })
        .chain(s.having.iter())
        .find(|e| contains_aggregate(e))
        .map(leftmost)
}

/// `ORDER BY`/`LIMIT`/`OFFSET in a recursive query is not implemented`.
fn not_implemented(what: &str, offset: ast::Offset) -> crate::error::Error {
    at(
        err!(
            FeatureNotSupported,
            "{what} in a recursive query is not implemented"
        ),
        offset,
    )
}
