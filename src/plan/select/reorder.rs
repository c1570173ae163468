//! A FROM list joined in the order [`joinorder`](super::super::joinorder)
//! finds: the binder's side of the join order search.
//!
//! From the WHERE conjuncts (bound over the whole FROM list's scope):
//! - equalities `x = y` of two columns of one type from different items
//!   form equivalence classes (PostgreSQL's `EquivalenceClass`): any two
//!   members in different inputs of a join are a hash key there; members of
//!   one item are equated by a filter on it; a member equal to a constant
//!   (`x = 5`) makes every other member equal to it, as a filter pushed into
//!   each member's item (`generate_base_implied_equalities_const`);
//! - a conjunct over one item is pushed into it (its scan's filter);
//! - a conjunct over two or more items is applied at the lowest join that
//!   holds all of them, as a hash key when it is an equality whose sides
//!   read either input, else as the join's filter;
//! - a conjunct over no item filters the result.
//!
//! An explicit inner `JOIN` (`ON` or none; not `USING`/`NATURAL`, whose
//! merged columns need their join) is flattened into the FROM list, its ON
//! conditions with WHERE's, when it has at most `join_collapse_limit`
//! items and the list it joins at most `from_collapse_limit` (or it is
//! the whole FROM); otherwise it joins in its written order, as one item.
//!
//! The joined columns come out in the tree's order; a projection puts them
//! back in FROM order (the scope every later clause is bound against) when
//! the order differs.

use std::collections::{BTreeMap, HashSet};

use heapdb_grammar::ast;

use super::super::bind::{at, contains_aggregate, Binder, Mode};
use super::super::joinorder::{self, Class, Clause, Problem, Set, Strategy, Tree};
use super::super::scope::Scope;
use super::super::{JoinKind, Node, Plan};
use super::from::{dummy, push_filter};
use super::*;
use crate::err;
use crate::error::Result;
use crate::nodes::expr::{Expr, ExprKind};
use crate::types::{BinaryOp, DataType};

/// `n_distinct` assumed for a column without statistics
/// (`DEFAULT_NUM_DISTINCT`), or the table's rows when fewer.
const DEFAULT_NUM_DISTINCT: f64 = 200.0;

/// What the joins need to know of the FROM list.
struct Layout {
    /// Start of each item's columns in the whole scope, then its width.
    starts: Vec<usize>,
    /// Conditions over two or more items, with the items they read.
    clauses: Vec<(Expr, Set)>,
    /// Each class's members: (item, column in the whole scope).
    classes: Vec<Vec<(usize, usize)>>,
    /// Each class's type (all its members have it).
    class_types: Vec<DataType>,
}

impl Layout {
    fn item_of(&self, col: usize) -> usize {
        self.starts[1..]
            .iter()
            .position(|&b| col < b)
            .expect("a column of the FROM list")
    }
}

/// `a = b` of two plain columns of one type: their positions.
fn column_pair(e: &Expr) -> Option<(usize, usize)> {
    match &e.kind {
        ExprKind::Binary(BinaryOp::Eq, a, b) => match (&a.kind, &b.kind) {
            (ExprKind::Column(x), ExprKind::Column(y)) if a.ty == b.ty && x != y => Some((*x, *y)),
            _ => None,
        },
        _ => None,
    }
}

/// `col = const` (either way round) of one type: the column and constant.
fn column_const(e: &Expr) -> Option<(usize, &Expr)> {
    match &e.kind {
        ExprKind::Binary(BinaryOp::Eq, a, b) if a.ty == b.ty => match (&a.kind, &b.kind) {
            (ExprKind::Column(x), ExprKind::Const(v)) if !v.is_null() => Some((*x, &**b)),
            (ExprKind::Const(v), ExprKind::Column(x)) if !v.is_null() => Some((*x, &**a)),
            _ => None,
        },
        _ => None,
    }
}

fn eq(a: Expr, b: Expr) -> Expr {
    Expr {
        kind: ExprKind::Binary(BinaryOp::Eq, Box::new(a), Box::new(b)),
        ty: DataType::Bool,
    }
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// Splits the conditions into equivalence classes (columns, sorted, per
/// class), the constants each class is equal to (column it was written
/// on, constant), and the other conditions.
type Split = (
    Vec<Vec<usize>>,
    Vec<Vec<(usize, Expr)>>,
    Vec<(Expr, Vec<usize>)>,
);

fn equivalence_classes(width: usize, pending: Vec<(Expr, Vec<usize>)>) -> Split {
    let mut parent: Vec<usize> = (0..width).collect();
    let mut member = vec![false; width];
    let mut rest = Vec::new();
    for (e, its) in pending {
        if its.len() == 2 {
            if let Some((a, b)) = column_pair(&e) {
                let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
                parent[ra.max(rb)] = ra.min(rb);
                member[a] = true;
                member[b] = true;
                continue;
            }
        }
        rest.push((e, its));
    }
    let mut by_root: BTreeMap<usize, usize> = BTreeMap::new();
    let mut classes: Vec<Vec<usize>> = Vec::new();
    for (c, &is_member) in member.iter().enumerate() {
        if is_member {
            let r = find(&mut parent, c);
            let k = *by_root.entry(r).or_insert_with(|| {
                classes.push(Vec::new());
                classes.len() - 1
            });
            classes[k].push(c);
        }
    }
    let mut consts: Vec<Vec<(usize, Expr)>> = vec![Vec::new(); classes.len()];
    for (e, its) in &rest {
        if its.len() != 1 {
            continue;
        }
        if let Some((c, k)) = column_const(e) {
            if member[c] {
                let class = by_root[&find(&mut parent, c)];
                consts[class].push((c, k.clone()));
            }
        }
    }
    (classes, consts, rest)
}

fn flattenable(j: &ast::Join) -> bool {
    matches!(j.kind, ast::JoinKind::Inner | ast::JoinKind::Cross)
        && !super::lateral::may_be_lateral(&j.right)
        && matches!(
            j.constraint,
            ast::JoinConstraint::On(_) | ast::JoinConstraint::None
        )
}

/// The number of FROM items explicit inner join `t` flattens into (1 for
/// any other item).
pub(super) fn inner_join_leaves(t: &ast::TableRef) -> usize {
    match t {
        ast::TableRef::Join(j) if flattenable(j) => {
            inner_join_leaves(&j.left) + inner_join_leaves(&j.right)
        }
        _ => 1,
    }
}

impl Binder<'_> {
    /// Appends the items of explicit inner join `t` to `items` and its ON
    /// conditions to `on`, over the whole list's columns (`t`'s first
    /// column at `start`); each ON condition sees only its own join's
    /// items, as when the join is planned as written.
    pub(super) fn flatten_inner_join(
        &mut self,
        t: &ast::TableRef,
        needed: &Needed,
        items: &mut Vec<Item>,
        on: &mut Vec<Expr>,
        start: usize,
    ) -> Result<()> {
        let j = match t {
            ast::TableRef::Join(j) if flattenable(j) => j,
            _ => {
                items.push(self.plan_table_ref(t, needed)?);
                return Ok(());
            }
        };
        let first = items.len();
        self.flatten_inner_join(&j.left, needed, items, on, start)?;
        let right_start = start
            + items[first..]
                .iter()
                .map(|it| it.scope.len())
                .sum::<usize>();
        self.flatten_inner_join(&j.right, needed, items, on, right_start)?;
        let ast::JoinConstraint::On(e) = &j.constraint else {
            return Ok(());
        };
        if contains_aggregate(e) {
            return Err(at(
                err!(
                    GroupingError,
                    "aggregate functions are not allowed in JOIN conditions"
                ),
                e.offset,
            ));
        }
        let scope = items[first..]
            .iter()
            .try_fold(Scope::default(), |acc, it| acc.join(&it.scope))?;
        let mut cs = Vec::new();
        conjuncts(e, &mut cs);
        for c in cs {
            let mut b =
                self.bind_condition(&c, &scope, &mut Mode::NoAgg("JOIN conditions"), "JOIN/ON")?;
            remap_columns(&mut b, &|c| c + start);
            on.push(b);
        }
        Ok(())
    }

    /// Joins `items` (two or more) in a searched order; `pending` are the
    /// WHERE conjuncts bound over `full` (the items' scopes in FROM order)
    /// with the items each reads.
    pub(super) fn join_searched(
        &mut self,
        mut items: Vec<Item>,
        pending: Vec<(Expr, Vec<usize>)>,
        full: Scope,
    ) -> Result<(Plan, Scope)> {
        let starts: Vec<usize> = std::iter::once(0)
            .chain(items.iter().scan(0, |acc, it| {
                *acc += it.scope.len();
                Some(*acc)
            }))
            .collect();
        let raw_rows: Vec<f64> = items.iter().map(|it| it.plan.rows).collect();
        let width = full.len();
        let (class_cols, consts, rest) = equivalence_classes(width, pending);
        let mut layout = Layout {
            starts,
            clauses: Vec::new(),
            classes: Vec::new(),
            class_types: Vec::new(),
        };
        let mut top = Vec::new();
        // Conditions over one item go into it, in WHERE order.
        for (e, its) in rest {
            match its.len() {
                0 => top.push(e),
                1 => self.push_into_item(&mut items, &layout, e),
                _ => {
                    let set = its.iter().fold(0, |s, &i| s | (1 as Set) << i);
                    layout.clauses.push((e, set));
                }
            }
        }
        // What the classes imply for single items.
        let mut implied: HashSet<String> = HashSet::new();
        for (cols, consts) in class_cols.iter().zip(&consts) {
            for &c in cols {
                let k = layout.item_of(c);
                let ty = full.columns[c].ty;
                // The class's first member in this item stands for it.
                let first = *cols
                    .iter()
                    .find(|&&d| layout.item_of(d) == k)
                    .expect("c itself");
                if first != c {
                    let e = eq(Expr::column(first, ty), Expr::column(c, ty));
                    self.push_into_item(&mut items, &layout, e);
                }
                for (src, value) in consts {
                    if *src != c && implied.insert(format!("{c}={value:?}")) {
                        let e = eq(Expr::column(c, ty), value.clone());
                        self.push_into_item(&mut items, &layout, e);
                    }
                }
            }
            layout
                .classes
                .push(cols.iter().map(|&c| (layout.item_of(c), c)).collect());
            layout.class_types.push(full.columns[cols[0]].ty);
        }
        let problem = self.join_problem(&items, &layout, &raw_rows, &consts);
        let settings = self.ctx.settings();
        let strategy = Strategy {
            geqo: settings.geqo,
            threshold: usize::try_from(settings.geqo_threshold).unwrap_or(usize::MAX),
        };
        let tree = joinorder::search(&problem, strategy);
        let mut slots: Vec<Option<Item>> = items.into_iter().map(Some).collect();
        let mut used = vec![false; layout.clauses.len()];
        let (item, leaves) = self.build_tree(&tree, &mut slots, &layout, &mut used)?;
        let mut plan = item.plan;
        if leaves.windows(2).any(|w| w[0] > w[1]) {
            plan = in_from_order(plan, &leaves, &layout);
        }
        for e in top {
            plan = filter(plan, e);
        }
        Ok((plan, full))
    }

    /// Pushes `e` (over the whole scope, reading one item) into its item.
    fn push_into_item(&mut self, items: &mut [Item], layout: &Layout, mut e: Expr) {
        let mut cols = Vec::new();
        columns_used(&e, &mut cols);
        let k = layout.item_of(cols[0]);
        let start = layout.starts[k];
        remap_columns(&mut e, &|c| c - start);
        let item = &mut items[k];
        item.plan = push_filter(std::mem::replace(&mut item.plan, dummy()), e);
    }

    /// The search's view of the FROM list.
    fn join_problem(
        &self,
        items: &[Item],
        layout: &Layout,
        raw_rows: &[f64],
        consts: &[Vec<(usize, Expr)>],
    ) -> Problem {
        let origins: Vec<Vec<Option<estimate::ColumnRef>>> = items
            .iter()
            .map(|it| estimate::column_origins(&it.plan))
            .collect();
        let mut full_origins = Vec::new();
        for o in &origins {
            full_origins.extend(o.iter().cloned());
        }
        let clauses = layout
            .clauses
            .iter()
            .map(|(e, set)| Clause {
                items: *set,
                sel: estimate::selectivity(e, &full_origins),
                hashable: splits(e, layout),
            })
            .collect();
        let classes = layout
            .classes
            .iter()
            .zip(consts)
            .map(|(members, consts)| {
                let mut per_item: Vec<(usize, f64)> = Vec::new();
                for &(k, c) in members {
                    let local = c - layout.starts[k];
                    let nd = estimate::column_ndistinct(&origins[k], local)
                        .unwrap_or_else(|| raw_rows[k].clamp(1.0, DEFAULT_NUM_DISTINCT));
                    match per_item.iter_mut().find(|(i, _)| *i == k) {
                        Some(slot) => slot.1 = slot.1.max(nd),
                        None => per_item.push((k, nd)),
                    }
                }
                Class {
                    members: per_item,
                    constant: !consts.is_empty(),
                }
            })
            .collect();
        Problem {
            rows: items.iter().map(|it| it.plan.rows).collect(),
            clauses,
            classes,
        }
    }

    /// Plans `tree`: its item and the FROM items in its column order.
    fn build_tree(
        &mut self,
        tree: &Tree,
        slots: &mut [Option<Item>],
        layout: &Layout,
        used: &mut [bool],
    ) -> Result<(Item, Vec<usize>)> {
        let (l, r) = match tree {
            Tree::Leaf(k) => {
                let item = slots[*k].take().expect("each item once in the tree");
                return Ok((item, vec![*k]));
            }
            Tree::Join(l, r) => (l, r),
        };
        let (lset, rset) = (l.set(), r.set());
        let (left, mut leaves) = self.build_tree(l, slots, layout, used)?;
        let (right, rleaves) = self.build_tree(r, slots, layout, used)?;
        leaves.extend(rleaves);
        let local = local_positions(&leaves, layout);
        let map = |c: usize| local[layout.item_of(c)] + c - layout.starts[layout.item_of(c)];
        let mut conds = Vec::new();
        // One key per class with members on both sides.
        for (members, &ty) in layout.classes.iter().zip(&layout.class_types) {
            let side = |s: Set| members.iter().find(|(k, _)| s & (1 as Set) << k != 0);
            if let (Some(&(_, a)), Some(&(_, b))) = (side(lset), side(rset)) {
                conds.push(eq(Expr::column(map(a), ty), Expr::column(map(b), ty)));
            }
        }
        let both = lset | rset;
        for (n, (e, set)) in layout.clauses.iter().enumerate() {
            if !used[n] && set & both == *set {
                used[n] = true;
                let mut e = e.clone();
                remap_columns(&mut e, &map);
                conds.push(e);
            }
        }
        let item = self.join(left, right, JoinKind::Inner, conds)?;
        Ok((item, leaves))
    }
}

/// Where each item's columns start in a join of `leaves` (in that order).
fn local_positions(leaves: &[usize], layout: &Layout) -> Vec<usize> {
    let mut local = vec![0; layout.starts.len() - 1];
    let mut at = 0;
    for &k in leaves {
        local[k] = at;
        at += layout.starts[k + 1] - layout.starts[k];
    }
    local
}

/// Whether `e` is an equality whose sides read different items.
fn splits(e: &Expr, layout: &Layout) -> bool {
    let ExprKind::Binary(BinaryOp::Eq, a, b) = &e.kind else {
        return false;
    };
    let items = |x: &Expr| {
        let mut cols = Vec::new();
        columns_used(x, &mut cols);
        cols.iter()
            .fold(0 as Set, |s, &c| s | (1 as Set) << layout.item_of(c))
    };
    let (x, y) = (items(a), items(b));
    x != 0 && y != 0 && x & y == 0
}

/// The join of `leaves` with its columns put back in FROM order.
fn in_from_order(plan: Plan, leaves: &[usize], layout: &Layout) -> Plan {
    let local = local_positions(leaves, layout);
    let mut exprs = Vec::with_capacity(plan.fields.len());
    let mut fields = Vec::with_capacity(plan.fields.len());
    for (k, &at) in local.iter().enumerate() {
        for c in 0..layout.starts[k + 1] - layout.starts[k] {
            let f = &plan.fields[at + c];
            exprs.push(Expr::column(at + c, f.ty));
            fields.push(f.clone());
        }
    }
    Plan {
        rows: plan.rows,
        fields,
        node: Node::Project {
            input: Box::new(plan),
            exprs,
        },
    }
}
