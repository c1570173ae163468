//! Relations proven empty at plan time, as PostgreSQL's "dummy" rels: a
//! table scan whose condition folded to a constant `false` or NULL reads
//! nothing and is replaced by a gating Result (`Result` / `One-Time
//! Filter: false` in EXPLAIN) that returns no rows.
//!
//! Invariant: the replacement has the scan's output columns (its `fields`)
//! and returns no batch, so the nodes above it are unchanged.

use super::{Node, Plan};
use crate::nodes::expr::{Expr, ExprKind};
use crate::types::{DataType, Value};

/// Whether `e` is a constant `false` or NULL, or an AND with one.
fn never_true(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Const(Value::Bool(false) | Value::Null) => true,
        ExprKind::And(a, b) => never_true(a) || never_true(b),
        _ => false,
    }
}

/// A node that returns no rows, with `fields` as its output.
fn empty(template: &Plan) -> Plan {
    let nothing = Plan {
        rows: 1.0,
        fields: Vec::new(),
        node: Node::Values {
            rows: vec![Vec::new()],
        },
    };
    Plan {
        rows: 0.0,
        fields: template.fields.clone(),
        node: Node::Filter {
            input: Box::new(nothing),
            predicate: Expr::constant(Value::Bool(false), DataType::Bool),
        },
    }
}

/// Replaces every scan (or filter over a scan) whose condition can never
/// be true with an empty gating Result.
pub fn prune_empty_scans(plan: &mut Plan) {
    let prune = match &plan.node {
        Node::SeqScan {
            filter: Some(f), ..
        } => never_true(f),
        Node::Filter { input, predicate } => {
            never_true(predicate) && matches!(input.node, Node::SeqScan { .. })
        }
        _ => false,
    };
    if prune {
        *plan = empty(plan);
        return;
    }
    for c in plan.children_mut() {
        prune_empty_scans(c);
    }
}
