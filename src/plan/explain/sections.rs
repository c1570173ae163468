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
use crate::plan::folded::{Fold, FoldKind, Made, Recorded};
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

/// The subplan nodes of `plan`'s tree, each once, in tree order.
fn tree_subplans(plan: &Plan) -> Vec<&SubPlanRef> {
    fn collect<'p>(plan: &'p Plan, found: &mut Vec<&'p SubPlanRef>) {
        for e in plan.node.exprs() {
            crate::exec::subplan::subplans(e, found);
        }
        for c in plan.children() {
            collect(c, found);
        }
    }
    let mut found = Vec::new();
    collect(plan, &mut found);
    // A multiple-column assignment's columns share one subplan.
    let mut seen = Vec::new();
    found.retain(|sp| {
        let first = !seen.contains(&address(sp));
        seen.push(address(sp));
        first
    });
    found
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

/// The statement's subqueries, numbered as PostgreSQL numbers them: in
/// the order the binder made them (folded or not; those of a tree not
/// recorded after, in tree order), each InitPlan's outputs and each
/// correlated subplan's parameters taking the next `$n`. Returns the
/// sections and fills [`REFERENCES`].
pub(super) fn subqueries(
    plan: &Plan,
    rec: &Recorded,
    flags: ExplainFlags,
    used: &mut std::collections::HashSet<String>,
) -> Vec<Section> {
    let found = tree_subplans(plan);
    let mut order: Vec<Result<(usize, &Fold), &SubPlanRef>> = Vec::new();
    let mut ordinal = 0;
    for m in &rec.made {
        match m {
            Made::Folded(f) => {
                order.push(Ok((ordinal, &**f)));
                ordinal += 1;
            }
            Made::SubPlan(at) => {
                order.extend(found.iter().find(|s| address(s) == *at).map(|s| Err(*s)))
            }
        }
    }
    for sp in &found {
        if !rec
            .made
            .iter()
            .any(|m| matches!(m, Made::SubPlan(at) if *at == address(sp)))
        {
            order.push(Err(*sp));
        }
    }
    let mut refs = References {
        folds: vec![String::new(); ordinal],
        ..References::default()
    };
    let mut sections = Vec::new();
    let mut param = 0;
    let mut returns = |n: usize| {
        let r: Vec<String> = (param..param + n).map(|p| format!("${p}")).collect();
        param += n;
        r
    };
    for (k, item) in order.into_iter().enumerate() {
        let id = k + 1;
        let (label, init, sub, runs) = match item {
            Ok((ord, f)) => match f.kind {
                FoldKind::In => {
                    for (at, o) in &rec.sets {
                        if *o == ord_place(rec, ord) {
                            refs.sets.push((*at, format!("hashed SubPlan {id}")));
                        }
                    }
                    (format!("SubPlan {id}"), false, &f.plan, None)
                }
                kind => {
                    let r = returns(match kind {
                        FoldKind::Row(m) => m,
                        _ => 1,
                    });
                    refs.folds[ord] = r.join(",");
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
                let runs = flags.analyze.then(|| {
                    (
                        sp.runs.load(std::sync::atomic::Ordering::Relaxed),
                        sp.hits.load(std::sync::atomic::Ordering::Relaxed),
                    )
                });
                if init {
                    let r = returns(match sp.kind {
                        SubLinkKind::Row(m) => m,
                        _ => 1,
                    });
                    refs.subplans.push((address(sp), r.join(",")));
                    (
                        format!("InitPlan {id} (returns {})", r.join(",")),
                        true,
                        &sp.plan,
                        runs,
                    )
                } else {
                    returns(parameters(&sp.plan));
                    refs.subplans.push((address(sp), format!("(SubPlan {id})")));
                    (format!("SubPlan {id}"), false, &sp.plan, runs)
                }
            }
        };
        let exists = match item {
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
        unique_aliases(&mut plan, used);
        sections.push(Section {
            label,
            plan,
            init,
            runs,
        });
    }
    REFERENCES.with(|r| *r.borrow_mut() = refs);
    sections
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

/// Prints the InitPlan (`init`) or SubPlan sections of `sections` with
/// their labels at `pad` spaces, their plans two further in.
pub(super) fn print_sections(
    sections: &[Section],
    init: bool,
    flags: ExplainFlags,
    pad: usize,
    out: &mut Vec<String>,
) {
    for s in sections.iter().filter(|s| s.init == init) {
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
            sections: &[],
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
