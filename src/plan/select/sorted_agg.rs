//! Sorted grouping: a GROUP BY planned as PostgreSQL's `GroupAggregate`
//! over a `Sort` of its keys, chosen when `enable_hashagg` is off.
//!
//! The keys' order and directions follow PostgreSQL: a group key that
//! ORDER BY names takes that ORDER BY item's direction
//! (`transformGroupClause`), and when ORDER BY's leading items are group
//! keys the keys are sorted in ORDER BY's order, the other keys after them
//! (`preprocess_groupclause`; when ORDER BY names something else before
//! covering every key, the GROUP BY order is kept). When every ORDER BY
//! item is so matched, the groups come out in ORDER BY's order and the
//! query needs no sort of its own.
//!
//! Invariant: the `GroupAggregate`'s group keys are input columns, listed
//! in the `Sort`'s key order; a key GROUP BY computes is computed by a
//! projection under the `Sort` (PostgreSQL's `Sort Key: ((a + 1))`).

use super::super::{Field, Node, Plan, SortKey};
use super::remap_columns;
use crate::nodes::expr::{Expr, ExprKind};

/// The group keys' sorted order: `perm[j]` is the GROUP BY position of the
/// `j`-th sort key, `dirs[j]` its direction (`column` unused), and whether
/// ORDER BY (`order`, over `outputs`' columns) is then already satisfied.
pub(super) struct GroupOrder {
    perm: Vec<usize>,
    dirs: Vec<SortKey>,
    /// The groups come out in ORDER BY's order.
    pub satisfies_order: bool,
}

/// The group key an ORDER BY key sorts on, if it sorts on one.
fn group_of(outputs: &[Expr], ngroup: usize, k: &SortKey) -> Option<usize> {
    match outputs.get(k.column).map(|e| &e.kind) {
        Some(ExprKind::Column(g)) if *g < ngroup => Some(*g),
        _ => None,
    }
}

/// The sorted order of `ngroup` group keys under ORDER BY `order`.
pub(super) fn group_order(ngroup: usize, outputs: &[Expr], order: &[SortKey]) -> GroupOrder {
    let mut dirs: Vec<SortKey> = (0..ngroup)
        .map(|g| SortKey {
            column: g,
            descending: false,
            nulls_first: false,
        })
        .collect();
    let mut taken = vec![false; ngroup];
    for k in order {
        if let Some(g) = group_of(outputs, ngroup, k) {
            if !taken[g] {
                taken[g] = true;
                dirs[g].descending = k.descending;
                dirs[g].nulls_first = k.nulls_first;
            }
        }
    }
    let mut perm: Vec<usize> = Vec::new();
    let mut partial = false;
    for k in order {
        match group_of(outputs, ngroup, k) {
            Some(g)
                if dirs[g].descending == k.descending && dirs[g].nulls_first == k.nulls_first =>
            {
                if !perm.contains(&g) {
                    perm.push(g);
                }
            }
            _ => {
                partial = true;
                break;
            }
        }
    }
    // ORDER BY names something else before covering every key.
    let gave_up = partial && perm.len() < ngroup;
    let matched = !perm.is_empty() && !gave_up;
    if matched {
        for g in 0..ngroup {
            if !perm.contains(&g) {
                perm.push(g);
            }
        }
    } else {
        perm = (0..ngroup).collect();
    }
    let dirs = perm
        .iter()
        .enumerate()
        .map(|(j, &g)| SortKey {
            column: j,
            ..dirs[g].clone()
        })
        .collect();
    GroupOrder {
        perm,
        satisfies_order: matched && !partial,
        dirs,
    }
}

/// Turns the hashed aggregation `agg` into a `GroupAggregate` over a
/// `Sort` of its input on the keys in `how`'s order; the expressions over
/// its output (`above`) are renumbered for the keys' new positions.
pub(super) fn sorted(agg: Plan, how: &GroupOrder, above: &mut [&mut Expr]) -> Plan {
    let Plan { rows, fields, node } = agg;
    let Node::Aggregate { input, group, aggs } = node else {
        return Plan { rows, fields, node };
    };
    let ngroup = group.len();
    let mut input = *input;
    let width = input.fields.len();
    let mut computed: Vec<Expr> = Vec::new();
    let keys: Vec<Expr> = how
        .perm
        .iter()
        .map(|&g| {
            let e = &group[g];
            match e.kind {
                ExprKind::Column(_) => e.clone(),
                _ => {
                    computed.push(e.clone());
                    Expr::column(width + computed.len() - 1, e.ty)
                }
            }
        })
        .collect();
    if !computed.is_empty() {
        let mut exprs: Vec<Expr> = input
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| Expr::column(i, f.ty))
            .collect();
        let mut pfields = input.fields.clone();
        pfields.extend(computed.iter().map(|e| Field {
            name: "?column?".into(),
            ty: e.ty,
        }));
        exprs.extend(computed);
        input = Plan {
            rows: input.rows,
            fields: pfields,
            node: Node::Project {
                input: Box::new(input),
                exprs,
            },
        };
    }
    let sort_keys: Vec<SortKey> = keys
        .iter()
        .zip(&how.dirs)
        .map(|(e, d)| SortKey {
            column: match e.kind {
                ExprKind::Column(c) => c,
                _ => unreachable!("keys are columns"),
            },
            ..d.clone()
        })
        .collect();
    let sorted_input = Plan {
        rows: input.rows,
        fields: input.fields.clone(),
        node: Node::Sort {
            input: Box::new(input),
            keys: sort_keys,
        },
    };
    // Output column `perm[j]` (old key position) moves to `j`.
    let mut new_pos = vec![0; ngroup];
    for (j, &g) in how.perm.iter().enumerate() {
        new_pos[g] = j;
    }
    let f = |c: usize| if c < ngroup { new_pos[c] } else { c };
    for e in above.iter_mut() {
        remap_columns(e, &f);
    }
    let mut new_fields: Vec<Field> = how.perm.iter().map(|&g| fields[g].clone()).collect();
    new_fields.extend(fields[ngroup..].iter().cloned());
    Plan {
        rows,
        fields: new_fields,
        node: Node::GroupAggregate {
            input: Box::new(sorted_input),
            group: keys,
            aggs,
            order: how.dirs.clone(),
        },
    }
}
