//! The sections EXPLAIN prints beside a plan's node tree: the plans of
//! its subqueries (`SubPlan N`, `InitPlan N (returns $N)`) and of its
//! recursive CTEs (`CTE name`).
//!
//! Invariants: each subquery and each CTE is printed once however often
//! the tree refers to it; a section's plan is printed by the same
//! [`super::node`] walk as the main tree, indented under its label.

use super::columns::{unique_aliases, Par};
use super::{count, node, top_node, At, ExplainFlags, Explainer};
use crate::exec::subplan::SubLinkKind;
use crate::nodes::expr::SubPlanRef;
use crate::plan::folded::{folds, Fold, FoldKind, Made, Place, Recorded};
use crate::plan::{Node, Plan};

/// One subquery of the statement as EXPLAIN prints it.
pub(super) struct Section {
    /// `InitPlan 1 (returns $0)` or `SubPlan 2`.
    label: String,
    /// Its plan (a copy, its relations named apart from the statement's).
    plan: Plan,
    /// An InitPlan: printed under the query's top node, before its
    /// inputs; a SubPlan is printed after the tree.
    init: bool,
    /// With ANALYZE, a subplan's runs and cache hits.
    runs: Option<(u64, u64)>,
    /// The subqueries planned inside it, printed in its plan.
    inner: Vec<Section>,
    /// What the tree reads of it.
    key: Key,
    /// The node (by address) an InitPlan prints under; 0: the query's top
    /// node.
    node: usize,
}

/// How the tree refers to a subquery.
#[derive(Clone, Copy)]
enum Key {
    /// A fold's parameter, by ordinal.
    Fold(usize),
    /// A subplan node, by address.
    SubPlan(usize),
}

impl Section {
    /// An InitPlan (printed under the query's top node).
    pub(super) fn is_init(&self) -> bool {
        self.init
    }
}

/// What the statement's subqueries print as where the tree refers to
/// them, by address: a subplan node's `(SubPlan 2)` or `$0`, a folded
/// `IN`'s hashed set `hashed SubPlan 1`, and each fold's `$N` by ordinal.
#[derive(Default)]
pub(super) struct References {
    pub(super) subplans: Vec<(usize, String)>,
    pub(super) sets: Vec<(usize, String)>,
    pub(super) folds: Vec<String>,
}

thread_local! {
    /// While a plan prints: what its subqueries print as.
    pub(super) static REFERENCES: std::cell::RefCell<References> =
        std::cell::RefCell::new(References::default());
}

/// The address a subplan node is known by.
pub(super) fn address(sp: &SubPlanRef) -> usize {
    std::sync::Arc::as_ptr(&sp.0) as *const () as usize
}

/// The subplan nodes of `plan`'s tree, and of theirs, each once: the
/// tree's in tree order, then those inside them.
fn tree_subplans<'p>(plan: &'p Plan, found: &mut Vec<&'p SubPlanRef>) {
    fn collect<'p>(plan: &'p Plan, found: &mut Vec<&'p SubPlanRef>) {
        for e in plan.node.exprs() {
            crate::exec::subplan::subplans(e, found);
        }
        for c in plan.children() {
            collect(c, found);
        }
    }
    let from = found.len();
    collect(plan, found);
    // A multiple-column assignment's columns share one subplan.
    let mut k = from;
    while k < found.len() {
        if found[..k].iter().any(|s| address(s) == address(found[k])) {
            found.remove(k);
        } else {
            k += 1;
        }
    }
    for k in from..found.len() {
        let inner: &'p Plan = &found[k].plan;
        tree_subplans(inner, found);
    }
}

/// How many parameters `plan` reads (its highest `$n` plus one).
fn parameters(plan: &Plan) -> usize {
    fn expr(e: &crate::nodes::Expr, most: &mut usize) {
        if let crate::nodes::ExprKind::Param(i) = e.kind {
            *most = (*most).max(i + 1);
        }
        e.children().into_iter().for_each(|c| expr(c, most));
    }
    let mut most = 0;
    for e in plan.node.exprs() {
        expr(e, &mut most);
    }
    for c in plan.children() {
        most = most.max(parameters(c));
    }
    most
}

/// A subquery of the statement: folded (with its ordinal among the
/// folds) or a subplan node.
type Item<'a> = Result<(usize, &'a Fold), &'a SubPlanRef>;

/// A subquery and those planned inside it.
struct Nest<'a> {
    item: Item<'a>,
    place: Place,
    inner: Vec<Nest<'a>>,
}

/// The statement's subqueries as the binder met them, each with those
/// met while planning it (it records them first, one level deeper), each
/// level in the order PostgreSQL's planner meets them: by clause, then
/// as met. Subplans of a tree not recorded come last, in tree order.
fn nests<'a>(rec: &'a Recorded, found: &[&'a SubPlanRef]) -> Vec<Nest<'a>> {
    let mut stack: Vec<Nest<'a>> = Vec::new();
    let mut ordinal = 0;
    for m in &rec.made {
        let item = match m {
            Made::Folded(f) => {
                ordinal += 1;
                Ok((ordinal - 1, &**f))
            }
            Made::SubPlan(at, _) => match found.iter().find(|s| address(s) == *at) {
                Some(s) => Err(*s),
                None => continue,
            },
        };
        let place = m.place();
        let split = stack
            .iter()
            .rposition(|n| n.place.depth <= place.depth)
            .map_or(0, |p| p + 1);
        let inner = stack.split_off(split);
        stack.push(Nest { item, place, inner });
    }
    fn order(list: &mut [Nest<'_>]) {
        list.sort_by_key(|n| n.place.clause);
        list.iter_mut().for_each(|n| order(&mut n.inner));
    }
    order(&mut stack);
    for sp in found {
        let recorded = rec
            .made
            .iter()
            .any(|m| matches!(m, Made::SubPlan(at, _) if *at == address(sp)));
        if !recorded {
            stack.push(Nest {
                item: Err(*sp),
                place: Place::default(),
                inner: Vec::new(),
            });
        }
    }
    stack
}

/// The statement's subqueries, numbered as PostgreSQL numbers them: each
/// after those planned inside it, in the order of [`nests`], each
/// InitPlan's outputs and each correlated subplan's parameters taking the
/// next `$n`. Returns the sections and fills [`REFERENCES`].
pub(super) fn subqueries(
    plan: &Plan,
    rec: &Recorded,
    flags: ExplainFlags,
    used: &mut std::collections::HashSet<String>,
) -> Vec<Section> {
    let mut found = Vec::new();
    tree_subplans(plan, &mut found);
    for f in folds(rec) {
        tree_subplans(&f.plan, &mut found);
    }
    let nests = nests(rec, &found);
    let mut cx = Numbering {
        rec,
        flags,
        refs: References {
            folds: vec![String::new(); folds(rec).count()],
            ..References::default()
        },
        id: 0,
        param: 0,
    };
    let sections = nests.into_iter().map(|n| cx.section(n, used)).collect();
    REFERENCES.with(|r| *r.borrow_mut() = cx.refs);
    sections
}

/// The numbers given so far.
struct Numbering<'a> {
    rec: &'a Recorded,
    flags: ExplainFlags,
    refs: References,
    /// The last subplan number given.
    id: usize,
    /// The next parameter.
    param: usize,
}

impl Numbering<'_> {
    /// The next `n` parameters' names.
    fn returns(&mut self, n: usize) -> Vec<String> {
        let r: Vec<String> = (self.param..self.param + n)
            .map(|p| format!("${p}"))
            .collect();
        self.param += n;
        r
    }

    /// `nest`'s section, numbered after those inside it.
    fn section(&mut self, nest: Nest<'_>, used: &mut std::collections::HashSet<String>) -> Section {
        let inner: Vec<Section> = nest
            .inner
            .into_iter()
            .map(|n| self.section(n, used))
            .collect();
        self.id += 1;
        let id = self.id;
        let rec = self.rec;
        let (label, init, sub, runs) = match nest.item {
            Ok((ord, f)) => match f.kind {
                FoldKind::In => {
                    for (at, o) in &rec.sets {
                        if *o == ord_place(rec, ord) {
                            self.refs.sets.push((*at, format!("hashed SubPlan {id}")));
                        }
                    }
                    (format!("SubPlan {id}"), false, &f.plan, None)
                }
                kind => {
                    let r = self.returns(match kind {
                        FoldKind::Row(m) => m,
                        _ => 1,
                    });
                    self.refs.folds[ord] = r.join(",");
                    (
                        format!("InitPlan {id} (returns {})", r.join(",")),
                        true,
                        &f.plan,
                        None,
                    )
                }
            },
            Err(sp) => {
                let init = sp.once && !matches!(sp.kind, SubLinkKind::Quantified(..));
                let runs = self.flags.analyze.then(|| {
                    (
                        sp.runs.load(std::sync::atomic::Ordering::Relaxed),
                        sp.hits.load(std::sync::atomic::Ordering::Relaxed),
                    )
                });
                if init {
                    let r = self.returns(match sp.kind {
                        SubLinkKind::Row(m) => m,
                        _ => 1,
                    });
                    self.refs.subplans.push((address(sp), r.join(",")));
                    (
                        format!("InitPlan {id} (returns {})", r.join(",")),
                        true,
                        &sp.plan,
                        runs,
                    )
                } else {
                    self.returns(parameters(&sp.plan));
                    self.refs
                        .subplans
                        .push((address(sp), format!("(SubPlan {id})")));
                    (format!("SubPlan {id}"), false, &sp.plan, runs)
                }
            }
        };
        let exists = match nest.item {
            Ok((_, f)) => f.kind == FoldKind::Exists,
            Err(sp) => sp.kind == SubLinkKind::Exists,
        };
        let mut plan = match (&sub.node, exists) {
            // EXISTS stops at its first row by itself, as PostgreSQL's
            // subplan does, without a Limit node of its own.
            (
                Node::Limit {
                    input,
                    limit: Some(1),
                    offset: 0,
                },
                true,
            ) => (**input).clone(),
            _ => sub.clone(),
        };
        // PostgreSQL drops an EXISTS subquery's select list.
        if let (Node::Project { exprs, .. }, true) = (&mut plan.node, exists) {
            exprs.clear();
            plan.fields.clear();
        }
        unique_aliases(&mut plan, used);
        Section {
            label,
            plan,
            init,
            runs,
            inner,
            key: match nest.item {
                Ok((ord, _)) => Key::Fold(ord),
                Err(sp) => Key::SubPlan(address(sp)),
            },
            node: 0,
        }
    }
}

/// The place in `rec.made` of fold `ord`.
fn ord_place(rec: &Recorded, ord: usize) -> usize {
    rec.made
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Made::Folded(_)))
        .nth(ord)
        .map_or(usize::MAX, |(i, _)| i)
}

/// Places each InitPlan that only one branch of the query's top Append
/// reads under that branch's top node, as PostgreSQL plans each branch of
/// a UNION ALL as a query of its own.
pub(super) fn place_in_branches(plan: &Plan, sections: &mut [Section]) {
    let top = super::top_node(plan);
    if !matches!(top.node, Node::Append { .. }) {
        return;
    }
    let branches = top.children();
    for s in sections.iter_mut().filter(|s| s.init) {
        let reading: Vec<&Plan> = branches
            .iter()
            .copied()
            .filter(|b| reads(b, s.key))
            .collect();
        if let [one] = reading[..] {
            s.node = super::top_node(one) as *const Plan as usize;
        }
    }
}

/// Whether `plan`'s tree reads the subquery `key`.
fn reads(plan: &Plan, key: Key) -> bool {
    fn expr(e: &crate::nodes::Expr, key: Key) -> bool {
        use crate::nodes::ExprKind;
        match (&e.kind, key) {
            (ExprKind::Param(i), Key::Fold(k)) if *i == crate::plan::folded::FOLD_PARAM + k => true,
            (ExprKind::SubPlan(sp, _), Key::SubPlan(a)) if address(sp) == a => true,
            _ => e.children().into_iter().any(|c| expr(c, key)),
        }
    }
    let mut exprs = plan.node.exprs();
    if let Node::IndexScan(s) = &plan.node {
        exprs.extend(&s.index_cond);
    }
    exprs.into_iter().any(|e| expr(e, key)) || plan.children().into_iter().any(|c| reads(c, key))
}

/// Prints the InitPlans of `sections` placed under the node at `node`
/// (0: the query's top node), as [`print_sections`] does.
pub(super) fn print_sections_at(
    sections: &[Section],
    node: usize,
    flags: ExplainFlags,
    pad: usize,
    out: &mut Vec<String>,
) {
    if sections.iter().any(|s| s.init && s.node == node) {
        print_filtered(sections, |s| s.init && s.node == node, flags, pad, out);
    }
}

/// Prints the InitPlan (`init`) or SubPlan sections of `sections` with
/// their labels at `pad` spaces, their plans two further in.
pub(super) fn print_sections(
    sections: &[Section],
    init: bool,
    flags: ExplainFlags,
    pad: usize,
    out: &mut Vec<String>,
) {
    print_filtered(sections, |s| s.init == init, flags, pad, out)
}

/// Prints the sections of `sections` that `keep`.
fn print_filtered(
    sections: &[Section],
    keep: impl Fn(&Section) -> bool,
    flags: ExplainFlags,
    pad: usize,
    out: &mut Vec<String>,
) {
    for s in sections.iter().filter(|s| keep(s)) {
        out.push(format!("{}{}", " ".repeat(pad), s.label));
        if let Some((runs, hits)) = s.runs {
            out.push(format!(
                "{}  Runs: {runs}  Cache Hits: {hits}",
                " ".repeat(pad)
            ));
        }
        let mut lines = Vec::new();
        let mut id = 0;
        let inner = ExplainFlags {
            analyze: false,
            ..flags
        };
        let mut cx = Explainer {
            flags: inner,
            stats: None,
            out: &mut lines,
            cte_root: top_node(&s.plan) as *const Plan as usize,
            // The statement reads the subquery's relations and its own:
            // PostgreSQL qualifies their columns.
            out_qualify: true,
            sections: &s.inner,
        };
        let at = At {
            depth: 1,
            top: false,
            extra: &[],
            output: None,
            physical: false,
            par: Par {
                qualify: true,
                ..Par::default()
            },
        };
        node(&mut cx, &s.plan, at, &mut id);
        print_sections(&s.inner, false, inner, 2, &mut lines);
        let indent = " ".repeat(pad);
        out.extend(lines.into_iter().map(|l| format!("{indent}{l}")));
    }
}

/// CTE plan's pre-order positions (EXPLAIN ANALYZE's figures).
pub(super) fn cte_sections(cx: &mut Explainer<'_>, root: &Plan, at: At<'_>, par: Par) {
    fn collect<'p>(plan: &'p Plan, start: usize, found: &mut Vec<(&'p Plan, &'p str, usize)>) {
        let mut id = start + 1;
        for c in plan.children() {
            if let Node::CteScan { input, name, .. } = &c.node {
                let same = |f: &(&Plan, &str, usize)| {
                    matches!(
                        (&f.0.node, &input.node),
                        (
                            Node::RecursiveUnion { worktable: a, .. },
                            Node::RecursiveUnion { worktable: b, .. }
                        ) if a == b
                    )
                };
                if !found.iter().any(same) {
                    found.push((input, name, id + 1));
                }
            }
            collect(c, id, found);
            count(c, &mut id);
        }
    }
    let mut found = Vec::new();
    if let Node::CteScan { input, name, .. } = &root.node {
        found.push((&**input, name.as_str(), 1));
    }
    collect(root, 0, &mut found);
    let pad = if at.top { 2 } else { at.depth * 6 + 2 };
    for (plan, name, start) in found {
        cx.out.push(format!("{}CTE {name}", " ".repeat(pad)));
        let mut lines = Vec::new();
        let mut sub = Explainer {
            flags: cx.flags,
            stats: cx.stats,
            out: &mut lines,
            cte_root: 0,
            out_qualify: cx.out_qualify,
            sections: &[],
        };
        let mut id = start;
        node(&mut sub, plan, at.below(1, par), &mut id);
        // The section's plan is indented two past the label.
        cx.out.extend(lines.into_iter().map(|l| format!("  {l}")));
    }
}
