//! EXPLAIN's lines for a bitmap heap scan: its title, `Recheck Cond:`,
//! `Filter:` and, with ANALYZE, `Heap Blocks:`, and the tree of Bitmap
//! Index Scans (BitmapAnd / BitmapOr) below it, as PostgreSQL 15 prints
//! them.

use super::{actual, buffers_line, deparse, output_columns, removed_line, Explainer, Plan};
use crate::catalog::TableDef;

/// A bitmap heap scan's title (`Bitmap Heap Scan on t x`) and its
/// `Recheck Cond:`, `Filter:` and, with ANALYZE, `Rows Removed by Index
/// Recheck:` and `Heap Blocks:` lines, as PostgreSQL 15 prints them.
pub(super) fn bitmap_heap_title(
    cx: &Explainer<'_>,
    plan: &Plan,
    my_id: usize,
    spec: &crate::nodes::plannodes::BitmapHeapScan,
) -> (String, Vec<String>) {
    let mut t = format!("Bitmap Heap Scan on {}", spec.table.name);
    if spec.alias != spec.table.name {
        t.push(' ');
        t.push_str(&spec.alias);
    }
    let names = table_names(&spec.table, &spec.alias, cx.flags.verbose);
    let st = cx
        .stats
        .filter(|_| cx.flags.analyze)
        .and_then(|s| s.get(my_id));
    let mut d = Vec::new();
    if let Some(r) = &spec.recheck_shown {
        d.push(format!("Recheck Cond: {}", deparse(r, &names)));
        if let Some(b) = st.and_then(|s| s.bitmap).filter(|b| b.recheck_removed > 0) {
            d.push(format!(
                "Rows Removed by Index Recheck: {}",
                b.recheck_removed
            ));
        }
    }
    if let Some(f) = &spec.filter {
        d.push(format!(
            "Filter: {}",
            deparse(f, &output_columns(plan, cx.flags.verbose))
        ));
        d.extend(removed_line(cx.flags, cx.stats, my_id));
    }
    if let Some(b) = st.and_then(|s| s.bitmap) {
        if b.exact_pages > 0 || b.lossy_pages > 0 {
            let mut line = "Heap Blocks:".to_string();
            if b.exact_pages > 0 {
                line.push_str(&format!(" exact={}", b.exact_pages));
            }
            if b.lossy_pages > 0 {
                line.push_str(&format!(" lossy={}", b.lossy_pages));
            }
            d.push(line);
        }
    }
    (t, d)
}

/// One node of a bitmap tree (`Bitmap Index Scan on i`, `BitmapAnd`,
/// `BitmapOr`) at `depth`, then its inputs; `names`: the table's columns.
/// Node ids continue the heap scan's pre-order numbering.
pub(super) fn bitmap_node(
    cx: &mut Explainer<'_>,
    q: &crate::nodes::plannodes::BitmapQual,
    names: &[String],
    depth: usize,
    id: &mut usize,
) {
    use crate::nodes::plannodes::BitmapQual;
    let my_id = *id;
    *id += 1;
    let (title, rows, details) = match q {
        BitmapQual::Index(s) => {
            let conds: Vec<String> = s.index_cond.iter().map(|c| deparse(c, names)).collect();
            let d = match conds.len() {
                0 => vec![],
                1 => vec![format!("Index Cond: {}", conds[0])],
                _ => vec![format!("Index Cond: ({})", conds.join(" AND "))],
            };
            (format!("Bitmap Index Scan on {}", s.index.name), s.rows, d)
        }
        BitmapQual::And(_) => ("BitmapAnd".to_string(), 0.0, vec![]),
        BitmapQual::Or(_) => ("BitmapOr".to_string(), 0.0, vec![]),
    };
    let mut line = format!("{}->  {title}", " ".repeat((depth - 1) * 6 + 2));
    if cx.flags.costs {
        line.push_str(&format!("  (rows={rows:.0} width=0)"));
    }
    let st = cx
        .stats
        .filter(|_| cx.flags.analyze)
        .and_then(|s| s.get(my_id));
    if let Some(st) = st {
        line.push_str(&actual(st, cx.flags));
    }
    cx.out.push(line);
    let pad = depth * 6 + 2;
    for d in details {
        cx.out.push(format!("{}{d}", " ".repeat(pad)));
    }
    if let (true, Some(st)) = (cx.flags.buffers, st) {
        cx.out.extend(buffers_line(st, pad));
    }
    if let BitmapQual::And(v) | BitmapQual::Or(v) = q {
        for c in v {
            bitmap_node(cx, c, names, depth + 1, id);
        }
    }
}

/// A table's column names, qualified by `alias` with `qualify`, as a
/// bitmap scan's conditions name them.
pub(super) fn table_names(table: &TableDef, alias: &str, qualify: bool) -> Vec<String> {
    table
        .columns
        .iter()
        .map(|c| {
            if qualify {
                format!("{alias}.{}", c.name)
            } else {
                c.name.clone()
            }
        })
        .collect()
}
