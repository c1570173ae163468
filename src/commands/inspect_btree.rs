//! `bt_index_check(index)`, PostgreSQL's amcheck for heapdb's B-trees: the
//! tree's structure (key order, high keys, sibling links, parent bounds:
//! `nbtree::check`), and, as `bt_index_check(index, heapallindexed => true)`
//! does, that every heap tuple the statement's snapshot sees has its entry
//! (for a partial index, every one its predicate holds for; `heap_tuples`
//! counts those).
//! One row: `leaf_items`, `levels`, `heap_tuples`; a fault is an XX001
//! error naming it. `bt_index_parent_check(index)` checks the structure
//! alone and returns nothing (amcheck's `void`).
//!
//! pageinspect's B-tree functions over `nbtree::inspect`'s rows, with
//! pageinspect's column names and types and its errors: `bt_metap(index)`,
//! `bt_page_stats(index, blkno)`, `bt_page_items(index, blkno)` (`data` is
//! heapdb's key encoding, not PostgreSQL's).

use crate::access::heap::hot::entry_offset;
use crate::access::heap::tuple;
use crate::access::nbtree::{check::bt_index_check, inspect, keys};
use std::sync::Arc;

use crate::access::heap::HeapRelation;
use crate::catalog::{Catalog, CatalogView, TableDef};
use crate::err;
use crate::error::Result;
use crate::exec::index_maint::{index_values, open_tree};
use crate::plan::{Field, TableRows};
use crate::storage::BufferPool;
use crate::txn::{Snapshot, TxnManager};
use crate::types::{DataType, Value};
use crate::wal::Wal;

/// What the inspection functions read, from the statement that calls them:
/// the catalog under its snapshot, the heaps and the B-trees.
pub trait BtreeReader {
    /// The statement's snapshot.
    fn snapshot(&self) -> &Snapshot;
    /// The transactions' states (for the catalog's visibility).
    fn txns(&self) -> &TxnManager;
    /// The catalog.
    fn catalog(&self) -> &Catalog;
    /// The buffer pool.
    fn pool(&self) -> &Arc<BufferPool>;
    /// The log (the trees are opened as writers would open them).
    fn wal(&self) -> &Arc<Wal>;
    /// The open heap of a relation file.
    fn relation(&self, relfilenode: u32) -> Result<Arc<HeapRelation>>;
}

/// Rows of `bt_index_check(index)`.
pub(crate) fn bt_index_check_rows(ctx: &mut dyn BtreeReader, args: &[Value]) -> Result<TableRows> {
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
        snapshot: ctx.snapshot(),
        txns: ctx.txns(),
        temp_ns: 0,
    };
    let (table, pos) = ctx
        .catalog()
        .index_owner(&view, &name)
        .ok_or_else(|| err!(UndefinedTable, "relation \"{name}\" does not exist"))?;
    let ix = &table.indexes[pos];
    let tree = open_tree(ctx.pool(), ctx.wal(), &table, ix);
    let report = bt_index_check(&tree)?;
    let rel = ctx.relation(table.relfilenode)?;
    let desc = crate::exec::scan::tuple_desc(&table)?;
    let n = table.columns.len();
    let mut scan = rel.scan(ctx.snapshot())?;
    let mut heap_tuples = 0i64;
    while let Some(r) = scan.next_page(|block, pg, visible| -> Result<i64> {
        let mut slots = vec![None; n];
        let mut indexed = 0i64;
        let mut roots = None;
        for &off in visible {
            let Some(t) = crate::storage::page::get_item(pg, off) else {
                continue;
            };
            // A heap-only tuple is indexed through its chain's root.
            let root = entry_offset(&mut roots, pg, block, off, &table.name)?;
            tuple::deform(t, &desc, n, &mut slots)?;
            let row: Vec<Value> = (0..n)
                .map(|c| match slots[c] {
                    Some(b) => Value::decode(&table.columns[c].ty, b),
                    None => Value::Null,
                })
                .collect();
            // A partial index holds only the predicate's rows.
            if !crate::exec::index_maint::predicate_holds(&table, ix, &row)? {
                continue;
            }
            indexed += 1;
            let mut key = Vec::new();
            keys::encode_key(tree.desc(), &index_values(ix, &row), &mut key)?;
            if !tree.lookup(&key)?.contains(&(block, root)) {
                return Err(err!(
                    DataCorrupted,
                    "heap tuple ({block},{off}) of relation \"{}\" lacks a matching index tuple within index \"{name}\"",
                    table.name
                ));
            }
        }
        Ok(indexed)
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

/// The index named by argument 0 of `func` and its table; `kind` is what
/// the error for a table calls an index (`a btree index` for pageinspect,
/// `an index` for amcheck).
fn index_arg(
    ctx: &mut dyn BtreeReader,
    func: &str,
    args: &[Value],
    kind: &str,
) -> Result<(std::sync::Arc<TableDef>, usize)> {
    let Some(Value::Text(name)) = args.first() else {
        return Err(err!(
            UndefinedFunction,
            "function {func} expects an index name"
        ));
    };
    let view = CatalogView {
        snapshot: ctx.snapshot(),
        txns: ctx.txns(),
        temp_ns: 0,
    };
    if let Some(found) = ctx.catalog().index_owner(&view, name) {
        return Ok(found);
    }
    if ctx.catalog().lookup(&view, name).is_some() {
        return Err(err!(WrongObjectType, "\"{name}\" is not {kind}"));
    }
    Err(err!(UndefinedTable, "relation \"{name}\" does not exist"))
}

/// Argument 1 as a block number, with pageinspect's errors.
fn block_arg(func: &str, args: &[Value]) -> Result<u32> {
    let b = args.get(1).and_then(Value::as_i64).ok_or_else(|| {
        err!(
            UndefinedFunction,
            "function {func} expects a block number as argument 2"
        )
    })?;
    u32::try_from(b).map_err(|_| err!(InvalidParameterValue, "invalid block number"))
}

/// The type of a column of an `nbtree::inspect` row, from its value.
fn type_of(v: &Value) -> DataType {
    match v {
        Value::Int2(_) => DataType::Int2,
        Value::Int4(_) => DataType::Int4,
        Value::Int8(_) => DataType::Int8,
        Value::Float8(_) => DataType::Float8,
        Value::Bool(_) => DataType::Bool,
        _ => DataType::Text,
    }
}

fn fields_of(row: &inspect::Row) -> Vec<Field> {
    row.iter()
        .map(|(name, v)| Field {
            name: (*name).into(),
            ty: type_of(v),
        })
        .collect()
}

/// Rows of `bt_metap(index)`.
pub(crate) fn bt_metap_rows(ctx: &mut dyn BtreeReader, args: &[Value]) -> Result<TableRows> {
    let (table, pos) = index_arg(ctx, "bt_metap", args, "a btree index")?;
    let row = inspect::bt_metap(&open_tree(
        ctx.pool(),
        ctx.wal(),
        &table,
        &table.indexes[pos],
    ))?;
    Ok((
        fields_of(&row),
        vec![row.into_iter().map(|(_, v)| v).collect()],
    ))
}

/// Rows of `bt_page_stats(index, blkno)`.
pub(crate) fn bt_page_stats_rows(ctx: &mut dyn BtreeReader, args: &[Value]) -> Result<TableRows> {
    let (table, pos) = index_arg(ctx, "bt_page_stats", args, "a btree index")?;
    let blk = block_arg("bt_page_stats", args)?;
    let row = inspect::bt_page_stats(
        &open_tree(ctx.pool(), ctx.wal(), &table, &table.indexes[pos]),
        blk,
    )?;
    Ok((
        fields_of(&row),
        vec![row.into_iter().map(|(_, v)| v).collect()],
    ))
}

/// Rows of `bt_page_items(index, blkno)`: pageinspect's nine columns (the
/// smallint offsets and lengths, `dead` NULL for pivot tuples, `tids`
/// NULL as heapdb keeps no posting lists).
pub(crate) fn bt_page_items_rows(ctx: &mut dyn BtreeReader, args: &[Value]) -> Result<TableRows> {
    let (table, pos) = index_arg(ctx, "bt_page_items", args, "a btree index")?;
    let blk = block_arg("bt_page_items", args)?;
    let items = inspect::bt_page_items(
        &open_tree(ctx.pool(), ctx.wal(), &table, &table.indexes[pos]),
        blk,
    )?;
    let names = [
        ("itemoffset", DataType::Int2),
        ("ctid", DataType::Text),
        ("itemlen", DataType::Int2),
        ("nulls", DataType::Bool),
        ("vars", DataType::Bool),
        ("data", DataType::Text),
        ("dead", DataType::Bool),
        ("htid", DataType::Text),
        ("tids", DataType::Text),
    ];
    let fields = names
        .iter()
        .map(|(n, ty)| Field {
            name: (*n).into(),
            ty: *ty,
        })
        .collect();
    let small = |v: &Value| Value::Int2(v.as_i64().unwrap_or(0) as i16);
    let rows = items
        .into_iter()
        .map(|it| {
            let get = |name: &str| {
                it.iter()
                    .find(|(n, _)| *n == name)
                    .map_or(Value::Null, |(_, v)| v.clone())
            };
            let htid = get("htid");
            let dead = if htid.is_null() {
                Value::Null
            } else {
                get("dead")
            };
            vec![
                small(&get("itemoffset")),
                get("ctid"),
                small(&get("itemlen")),
                get("nulls"),
                get("vars"),
                get("data"),
                dead,
                htid,
                Value::Null,
            ]
        })
        .collect();
    Ok((fields, rows))
}

/// `bt_index_check(index)` and `bt_index_parent_check(index)` in an
/// expression: the tree's structure checked from the root down (an XX001
/// error names a fault); amcheck's `void` result, an empty text here.
pub(crate) fn bt_index_parent_check(
    ctx: &mut dyn BtreeReader,
    name: &str,
    args: &[Value],
) -> Result<(Value, DataType)> {
    let (table, pos) = index_arg(ctx, name, args, "an index")?;
    bt_index_check(&open_tree(
        ctx.pool(),
        ctx.wal(),
        &table,
        &table.indexes[pos],
    ))?;
    Ok((Value::text(""), DataType::Text))
}
