//! `bt_index_check(index)`, PostgreSQL's amcheck for heapdb's B-trees: the
//! tree's structure (key order, high keys, sibling links, parent bounds:
//! `nbtree::check`), and, as `bt_index_check(index, heapallindexed => true)`
//! does, that every heap tuple the statement's snapshot sees has its entry.
//! One row: `leaf_items`, `levels`, `heap_tuples`; a fault is an XX001
//! error naming it.

use super::index_maint::{index_values, open_tree};
use super::query::StmtCtx;
use crate::access::heap::tuple;
use crate::access::nbtree::{check::bt_index_check, keys};
use crate::catalog::CatalogView;
use crate::err;
use crate::error::Result;
use crate::plan::{Field, TableRows};
use crate::types::{DataType, Value};

/// Rows of `bt_index_check(index)`.
pub(crate) fn bt_index_check_rows(ctx: &mut StmtCtx, args: &[Value]) -> Result<TableRows> {
    let name = match args.first() {
        Some(Value::Text(s)) => s.to_string(),
        _ => {
            return Err(err!(
                UndefinedFunction,
                "function bt_index_check expects an index name"
            ))
        }
    };
    let view = CatalogView {
        snapshot: ctx.snapshot,
        txns: &ctx.db.txns,
    };
    let (table, pos) = ctx
        .db
        .catalog
        .index_owner(&view, &name)
        .ok_or_else(|| err!(UndefinedTable, "relation \"{name}\" does not exist"))?;
    let ix = &table.indexes[pos];
    let tree = open_tree(ctx.db, &table, ix);
    let report = bt_index_check(&tree)?;
    let rel = ctx.db.relation(table.relfilenode)?;
    let desc = crate::exec::scan::tuple_desc(&table)?;
    let n = table.columns.len();
    let mut scan = rel.scan(ctx.snapshot)?;
    let mut heap_tuples = 0i64;
    while let Some(r) = scan.next_page(|block, pg, visible| -> Result<i64> {
        let mut slots = vec![None; n];
        for &off in visible {
            let Some(t) = crate::storage::page::get_item(pg, off) else {
                continue;
            };
            tuple::deform(t, &desc, n, &mut slots)?;
            let row: Vec<Value> = (0..n)
                .map(|c| match slots[c] {
                    Some(b) => Value::decode(&table.columns[c].ty, b),
                    None => Value::Null,
                })
                .collect();
            let mut key = Vec::new();
            keys::encode_key(tree.desc(), &index_values(ix, &row), &mut key)?;
            if !tree.lookup(&key)?.contains(&(block, off)) {
                return Err(err!(
                    DataCorrupted,
                    "heap tuple ({block},{off}) of relation \"{}\" lacks a matching index tuple within index \"{name}\"",
                    table.name
                ));
            }
        }
        Ok(visible.len() as i64)
    })? {
        heap_tuples += r?;
    }
    let fields = vec![
        Field {
            name: "leaf_items".into(),
            ty: DataType::Int8,
        },
        Field {
            name: "levels".into(),
            ty: DataType::Int4,
        },
        Field {
            name: "heap_tuples".into(),
            ty: DataType::Int8,
        },
    ];
    let row = vec![
        Value::Int8(report.leaf_items as i64),
        Value::Int4(report.pages_per_level.len() as i32),
        Value::Int8(heap_tuples),
    ];
    Ok((fields, vec![row]))
}
