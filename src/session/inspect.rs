//! The inspection functions: storage internals as SQL rows, in the spirit
//! of PostgreSQL's pageinspect and pg_visibility.
//!
//! | function | rows |
//! |---|---|
//! | `pg_locks()` | one per lock held or awaited, as PostgreSQL's `pg_locks`: locktype (`relation`, `transactionid`), relation, transactionid, virtualtransaction (the holder or waiter), mode, granted |
//! | `heap_page_items(table, blkno)` | one per line pointer: lp, lp_off, lp_flags, lp_len, t_xmin, t_xmax, t_cid, t_ctid, t_infomask2, t_infomask, t_hoff, t_flags (infomask flags by name) |
//! | `page_header(table, blkno)` | the page header: lsn, checksum, flags (and names), lower, upper, special, version, prune_xid, free_space |
//! | `heap_visibility_map(table)` | one per heap block: blkno, all_visible, all_frozen, live_tuples |
//! | `pg_stats([table])` | one per analyzed column (of `table`, or of every table): tablename, attname, null_frac, avg_width, n_distinct, most_common_vals, most_common_freqs, histogram_bounds (arrays in PostgreSQL's text form), correlation |
//! | `bt_metap(index)`, `bt_page_stats(index, blkno)`, `bt_page_items(index, blkno)` | pageinspect's B-tree rows (`inspect_btree`) |
//! | `bt_index_check(index)` | one: leaf_items, levels, heap_tuples, after checking the tree and that every heap tuple the snapshot sees is in it (`inspect_btree`) |
//! | `buffer_cache_stats()` | the pool: buffers, used, dirty, pinned, and the database's hit/read/dirtied/written/evicted counters |
//!
//! and the scalar functions `relation_size(table)` (bytes of the main
//! fork), `relation_pages(table)` and `pg_relation_filepath(table)` (the
//! main fork's file relative to the data directory, `base/16384`, as
//! PostgreSQL's; it changes when TRUNCATE gives the table a new file).

use super::query::StmtCtx;
use crate::err;
use crate::error::Result;
use crate::plan::{Field, PlanContext, TableRows};
use crate::storage::{ForkNumber, RelFileNode, BLCKSZ};
use crate::types::{DataType, Value};

fn field(name: &str, ty: DataType) -> Field {
    Field {
        name: name.into(),
        ty,
    }
}

fn text_arg(name: &str, args: &[Value], i: usize) -> Result<String> {
    match args.get(i) {
        Some(Value::Text(s)) => Ok(s.to_string()),
        _ => Err(err!(
            UndefinedFunction,
            "function {name} expects a table name as argument {}",
            i + 1
        )),
    }
}

fn int_arg(name: &str, args: &[Value], i: usize) -> Result<i64> {
    args.get(i).and_then(Value::as_i64).ok_or_else(|| {
        err!(
            UndefinedFunction,
            "function {name} expects a block number as argument {}",
            i + 1
        )
    })
}

/// Rows of the inspection table function `name`, or `None` if it is not one.
pub(crate) fn table_function(
    ctx: &mut StmtCtx,
    name: &str,
    args: &[Value],
) -> Option<Result<TableRows>> {
    let r = match name {
        "heap_page_items" => heap_page_items(ctx, args),
        "pg_locks" => Ok(pg_locks(ctx)),
        "page_header" => page_header(ctx, args),
        "heap_visibility_map" => visibility_map(ctx, args),
        "buffer_cache_stats" => Ok(buffer_cache_stats(ctx)),
        "pg_stats" => pg_stats(ctx, args),
        "wal_stats" => Ok(wal_stats(ctx)),
        "bt_index_check" => crate::commands::inspect_btree::bt_index_check_rows(ctx, args),
        "bt_metap" => crate::commands::inspect_btree::bt_metap_rows(ctx, args),
        "bt_page_stats" => crate::commands::inspect_btree::bt_page_stats_rows(ctx, args),
        "bt_page_items" => crate::commands::inspect_btree::bt_page_items_rows(ctx, args),
        _ => return None,
    };
    Some(r)
}

/// `pg_locks()`: the lock table's holders and waiters
/// ([`crate::txn::lock::LockManager::status`]), by lock then owner.
fn pg_locks(ctx: &mut StmtCtx) -> (Vec<Field>, Vec<Vec<Value>>) {
    use crate::txn::LockTag;
    let fields = vec![
        field("locktype", DataType::Text),
        field("relation", DataType::Int8),
        field("transactionid", DataType::Int8),
        field("virtualtransaction", DataType::Int8),
        field("mode", DataType::Text),
        field("granted", DataType::Bool),
    ];
    let mut status = ctx.db.locks.status();
    status.sort_by_key(|l| match l.tag {
        LockTag::Relation(oid) => (0, u64::from(oid), l.owner, !l.granted),
        LockTag::Transaction(xid) => (1, u64::from(xid), l.owner, !l.granted),
    });
    let rows = status
        .iter()
        .map(|l| {
            let (kind, rel, xid) = match l.tag {
                LockTag::Relation(oid) => ("relation", Value::Int8(i64::from(oid)), Value::Null),
                LockTag::Transaction(x) => {
                    ("transactionid", Value::Null, Value::Int8(i64::from(x)))
                }
            };
            vec![
                Value::Text(kind.into()),
                rel,
                xid,
                Value::Int8(l.owner as i64),
                Value::Text(l.mode.name().into()),
                Value::Bool(l.granted),
            ]
        })
        .collect();
    (fields, rows)
}

fn heap_page_items(ctx: &mut StmtCtx, args: &[Value]) -> Result<TableRows> {
    let table = ctx.table(&text_arg("heap_page_items", args, 0)?)?;
    let block = int_arg("heap_page_items", args, 1)?;
    let rel = ctx.db.relation(table.relfilenode)?;
    let block = u32::try_from(block)
        .map_err(|_| err!(InvalidParameterValue, "invalid block number {block}"))?;
    let (_, items) = rel.inspect_page(block)?;
    let fields = vec![
        field("lp", DataType::Int2),
        field("lp_off", DataType::Int2),
        field("lp_flags", DataType::Text),
        field("lp_len", DataType::Int2),
        field("t_xmin", DataType::Int8),
        field("t_xmax", DataType::Int8),
        field("t_cid", DataType::Int8),
        field("t_ctid", DataType::Text),
        field("t_infomask2", DataType::Int4),
        field("t_infomask", DataType::Int4),
        field("t_hoff", DataType::Int2),
        field("t_flags", DataType::Text),
    ];
    let rows = items
        .into_iter()
        .map(|it| {
            let mut row = vec![
                Value::Int2(it.lp as i16),
                Value::Int2(it.lp_off as i16),
                Value::text(it.lp_flags),
                Value::Int2(it.lp_len as i16),
            ];
            match it.tuple {
                Some(t) => row.extend([
                    Value::Int8(t.xmin as i64),
                    Value::Int8(t.xmax as i64),
                    Value::Int8(t.cid as i64),
                    Value::text(&format!("({},{})", t.ctid.0, t.ctid.1)),
                    Value::Int4(t.natts as i32),
                    Value::Int4(t.infomask as i32),
                    Value::Int2(t.hoff as i16),
                    Value::text(&t.flag_names),
                ]),
                None => row.extend(std::iter::repeat(Value::Null).take(8)),
            }
            row
        })
        .collect();
    Ok((fields, rows))
}

fn page_header(ctx: &mut StmtCtx, args: &[Value]) -> Result<TableRows> {
    let table = ctx.table(&text_arg("page_header", args, 0)?)?;
    let block = int_arg("page_header", args, 1)?;
    let rel = ctx.db.relation(table.relfilenode)?;
    let block = u32::try_from(block)
        .map_err(|_| err!(InvalidParameterValue, "invalid block number {block}"))?;
    let (h, _) = rel.inspect_page(block)?;
    let fields = vec![
        field("lsn", DataType::Text),
        field("checksum", DataType::Int4),
        field("flags", DataType::Int4),
        field("flag_names", DataType::Text),
        field("lower", DataType::Int4),
        field("upper", DataType::Int4),
        field("special", DataType::Int4),
        field("version", DataType::Int4),
        field("prune_xid", DataType::Int8),
        field("free_space", DataType::Int4),
    ];
    let row = vec![
        Value::text(&format!("{:X}/{:X}", h.lsn >> 32, h.lsn & 0xffff_ffff)),
        Value::Int4(h.checksum as i32),
        Value::Int4(h.flags as i32),
        Value::text(&h.flag_names),
        Value::Int4(h.lower as i32),
        Value::Int4(h.upper as i32),
        Value::Int4(h.special as i32),
        Value::Int4(h.version as i32),
        Value::Int8(h.prune_xid as i64),
        Value::Int4(h.free_space as i32),
    ];
    Ok((fields, vec![row]))
}

fn visibility_map(ctx: &mut StmtCtx, args: &[Value]) -> Result<TableRows> {
    let table = ctx.table(&text_arg("heap_visibility_map", args, 0)?)?;
    let rel = ctx.db.relation(table.relfilenode)?;
    let fields = vec![
        field("blkno", DataType::Int8),
        field("all_visible", DataType::Bool),
        field("all_frozen", DataType::Bool),
        field("live_tuples", DataType::Int4),
    ];
    let rows = rel
        .inspect_vm()?
        .into_iter()
        .map(|(b, bits, count)| {
            let visible = bits & crate::access::vm::VM_ALL_VISIBLE != 0;
            vec![
                Value::Int8(b as i64),
                Value::Bool(visible),
                Value::Bool(bits & crate::access::vm::VM_ALL_FROZEN != 0),
                if visible {
                    Value::Int4(count as i32)
                } else {
                    Value::Null
                },
            ]
        })
        .collect();
    Ok((fields, rows))
}

/// A list in PostgreSQL's array text form: `{a,"b c",d}`.
fn array_text<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = items
        .map(|v| {
            let plain = !v.is_empty()
                && !v.eq_ignore_ascii_case("null")
                && !v
                    .chars()
                    .any(|c| matches!(c, ',' | '{' | '}' | '"' | '\\') || c.is_whitespace());
            if plain {
                v.to_string()
            } else {
                format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
            }
        })
        .collect();
    format!("{{{}}}", quoted.join(","))
}

/// PostgreSQL's `pg_stats` view, as a table function over the catalog's
/// statistics (ANALYZE fills them).
fn pg_stats(ctx: &mut StmtCtx, args: &[Value]) -> Result<TableRows> {
    let tables = if args.is_empty() {
        ctx.db.catalog.tables(&crate::catalog::CatalogView {
            snapshot: ctx.snapshot,
            txns: &ctx.db.txns,
            temp_ns: ctx.locker.temp_ns,
        })
    } else {
        vec![ctx.table(&text_arg("pg_stats", args, 0)?)?]
    };
    let fields = vec![
        field("tablename", DataType::Text),
        field("attname", DataType::Text),
        field("null_frac", DataType::Float8),
        field("avg_width", DataType::Int4),
        field("n_distinct", DataType::Float8),
        field("most_common_vals", DataType::Text),
        field("most_common_freqs", DataType::Text),
        field("histogram_bounds", DataType::Text),
        field("correlation", DataType::Float4),
    ];
    let mut rows = Vec::new();
    for t in tables {
        let Some(stats) = &t.stats else { continue };
        for (col, cs) in t.columns.iter().zip(&stats.columns) {
            let Some(cs) = cs else { continue };
            let opt = |present: bool, text: String| {
                if present {
                    Value::text(&text)
                } else {
                    Value::Null
                }
            };
            rows.push(vec![
                Value::text(&t.name),
                Value::text(&col.name),
                Value::Float8(cs.null_frac),
                Value::Int4(cs.avg_width.round() as i32),
                Value::Float8(cs.n_distinct),
                opt(
                    !cs.mcv.is_empty(),
                    array_text(cs.mcv.iter().map(|m| m.0.as_str())),
                ),
                opt(
                    !cs.mcv.is_empty(),
                    format!(
                        "{{{}}}",
                        cs.mcv
                            .iter()
                            .map(|m| format!("{:.6}", m.1).trim_end_matches('0').to_string())
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                ),
                opt(
                    !cs.histogram.is_empty(),
                    array_text(cs.histogram.iter().map(String::as_str)),
                ),
                cs.correlation
                    .map_or(Value::Null, |c| Value::Float4(c as f32)),
            ]);
        }
    }
    Ok((fields, rows))
}

/// `wal_stats()`: the log's positions (PostgreSQL's `X/X` form) and counters.
fn wal_stats(ctx: &mut StmtCtx) -> (Vec<Field>, Vec<Vec<Value>>) {
    let w = ctx.db.wal.stats();
    let fields = vec![
        field("insert_lsn", DataType::Text),
        field("flush_lsn", DataType::Text),
        field("redo_lsn", DataType::Text),
        field("records", DataType::Int8),
        field("fpi", DataType::Int8),
        field("bytes", DataType::Int8),
        field("flushes", DataType::Int8),
        field("checkpoints", DataType::Int8),
    ];
    let lsn = |l| Value::Text(crate::wal::lsn_text(l).into());
    let row = vec![
        lsn(w.insert_lsn),
        lsn(w.flush_lsn),
        lsn(w.redo_lsn),
        Value::Int8(w.records as i64),
        Value::Int8(w.fpis as i64),
        Value::Int8(w.bytes as i64),
        Value::Int8(w.flushes as i64),
        Value::Int8(w.checkpoints as i64),
    ];
    (fields, vec![row])
}

fn buffer_cache_stats(ctx: &mut StmtCtx) -> (Vec<Field>, Vec<Vec<Value>>) {
    let pool = &ctx.db.pool;
    let summary = pool.buffer_summary();
    let used = summary
        .iter()
        .filter(|b| b.tag.is_some() && b.valid)
        .count();
    let dirty = summary.iter().filter(|b| b.dirty).count();
    let pinned = summary.iter().filter(|b| b.pin_count > 0).count();
    let s = pool.stats();
    let fields = vec![
        field("buffers", DataType::Int8),
        field("used", DataType::Int8),
        field("dirty", DataType::Int8),
        field("pinned", DataType::Int8),
        field("hits", DataType::Int8),
        field("reads", DataType::Int8),
        field("dirtied", DataType::Int8),
        field("written", DataType::Int8),
        field("evicted", DataType::Int8),
    ];
    let row = vec![
        Value::Int8(pool.nbuffers() as i64),
        Value::Int8(used as i64),
        Value::Int8(dirty as i64),
        Value::Int8(pinned as i64),
        Value::Int8(s.shared_hit as i64),
        Value::Int8(s.shared_read as i64),
        Value::Int8(s.shared_dirtied as i64),
        Value::Int8(s.shared_written as i64),
        Value::Int8(s.evicted as i64),
    ];
    (fields, vec![row])
}

/// `current_setting(name [, missing_ok])` of constant arguments: the
/// setting's value as SHOW prints it; NULL for a NULL argument, or for an
/// unknown name when `missing_ok`, else 42704. `None` for other argument
/// lists (the call is then an undefined function).
fn current_setting(
    settings: &crate::settings::Settings,
    args: &[Value],
) -> Option<Result<(Value, DataType)>> {
    let null = Ok((Value::Null, DataType::Text));
    let missing_ok = match args.get(1) {
        None if args.len() == 1 => false,
        Some(Value::Bool(b)) if args.len() == 2 => *b,
        Some(Value::Null) if args.len() == 2 => return Some(null),
        _ => return None,
    };
    let name = match &args[0] {
        Value::Text(t) => t.to_lowercase(),
        Value::Null => return Some(null),
        _ => return None,
    };
    Some(match settings.show(&name) {
        Ok(v) => Ok((Value::Text(v.into()), DataType::Text)),
        Err(_) if missing_ok => null,
        Err(e) => Err(e),
    })
}

/// The scalar inspection functions, evaluated at bind time.
pub(crate) fn scalar_function(
    ctx: &mut StmtCtx,
    name: &str,
    args: &[Value],
) -> Option<Result<(Value, DataType)>> {
    let pages = |ctx: &mut StmtCtx| -> Result<i64> {
        let table = ctx.table(&text_arg(name, args, 0)?)?;
        Ok(ctx
            .db
            .pool
            .nblocks(RelFileNode(table.relfilenode), ForkNumber::Main)? as i64)
    };
    match name {
        "relation_pages" => Some(pages(ctx).map(|p| (Value::Int8(p), DataType::Int8))),
        "relation_size" => {
            Some(pages(ctx).map(|p| (Value::Int8(p * BLCKSZ as i64), DataType::Int8)))
        }
        "bt_index_check" | "bt_index_parent_check" => Some(
            crate::commands::inspect_btree::bt_index_parent_check(ctx, name, args),
        ),
        "current_setting" => current_setting(ctx.settings, args),
        "pg_relation_filepath" => Some(text_arg(name, args, 0).and_then(|t| {
            let table = ctx.table(&t)?;
            let path = crate::storage::relpath(RelFileNode(table.relfilenode), ForkNumber::Main);
            Ok((Value::Text(path.into()), DataType::Text))
        })),
        _ => None,
    }
}
