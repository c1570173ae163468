//! Inspection data in the shape of PostgreSQL's `pageinspect` functions for
//! B-trees: [`bt_metap`], [`bt_page_stats`] and [`bt_page_items`] return
//! rows of named values (`commands::inspect_btree` makes them SQL functions). Each reads one page under
//! a shared lock.

use super::btpage::{
    self as bp, Opaque, BTP_DELETED, BTP_HALF_DEAD, BTREE_MAGIC, BTREE_VERSION, P_HIKEY,
};
use super::keys::{decode_key, tid_of};
use super::tree::{BTree, META_BLOCK};
use crate::err;
use crate::error::Result;
use crate::storage::page;
use crate::storage::{BlockNumber, BLCKSZ};
use crate::types::Value;

/// One row: column names and values.
pub type Row = Vec<(&'static str, Value)>;

/// `bt_metap`: the meta page's fields.
pub fn bt_metap(tree: &BTree) -> Result<Row> {
    let m = tree.meta()?;
    let delpages = tree.last_cleanup_num_delpages()?;
    Ok(vec![
        ("magic", Value::Int4(BTREE_MAGIC as i32)),
        ("version", Value::Int4(BTREE_VERSION as i32)),
        ("root", Value::Int8(m.root as i64)),
        ("level", Value::Int8(m.level as i64)),
        ("fastroot", Value::Int8(m.fastroot as i64)),
        ("fastlevel", Value::Int8(m.fastlevel as i64)),
        (
            "last_cleanup_num_delpages",
            Value::Int8(i64::from(delpages)),
        ),
        ("last_cleanup_num_tuples", Value::Float8(-1.0)),
        ("allequalimage", Value::Bool(false)),
    ])
}

fn read_page(tree: &BTree, blk: BlockNumber) -> Result<Vec<u8>> {
    if blk == META_BLOCK {
        return Err(err!(InvalidParameterValue, "block 0 is a meta page"));
    }
    let n = tree
        .pool()
        .nblocks(tree.rel(), crate::storage::ForkNumber::Main)?;
    if blk >= n {
        return Err(err!(InternalError, "block number out of range"));
    }
    let buf = tree.pin(blk)?;
    let g = buf.read();
    bp::verify(&g, blk)?;
    Ok(g.to_vec())
}

fn page_type(o: &Opaque) -> &'static str {
    if o.flags & BTP_DELETED != 0 {
        "d"
    } else if o.flags & BTP_HALF_DEAD != 0 {
        "e"
    } else if o.is_leaf() {
        "l"
    } else if o.is_root() {
        "r"
    } else {
        "i"
    }
}

/// `bt_page_stats`: one page's summary.
pub fn bt_page_stats(tree: &BTree, blk: BlockNumber) -> Result<Row> {
    let p = read_page(tree, blk)?;
    let o = bp::opaque(&p);
    let n = page::max_offset(&p);
    let total: usize = (1..=n)
        .map(|off| bp::item(&p, off).map(|t| page::maxalign(t.len())))
        .sum::<Result<usize>>()?;
    let live = n as i32 - i32::from(!o.is_rightmost());
    Ok(vec![
        ("blkno", Value::Int8(blk as i64)),
        ("type", Value::text(page_type(&o))),
        ("live_items", Value::Int4(live.max(0))),
        ("dead_items", Value::Int4(0)),
        (
            "avg_item_size",
            Value::Int4(if n == 0 {
                0
            } else {
                (total / n as usize) as i32
            }),
        ),
        ("page_size", Value::Int4(BLCKSZ as i32)),
        ("free_size", Value::Int4(page::free_space(&p) as i32)),
        ("btpo_prev", Value::Int8(o.prev as i64)),
        ("btpo_next", Value::Int8(o.next as i64)),
        ("btpo_level", Value::Int8(o.level as i64)),
        ("btpo_flags", Value::Int4(o.flags as i32)),
    ])
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 3);
    for (i, x) in b.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&format!("{x:02x}"));
    }
    s
}

/// `bt_page_items`: one row per item. `ctid` is the heap TID of a leaf
/// item and `(downlink,0)` for a pivot; `keys` (beyond pageinspect) shows
/// the decoded key columns.
pub fn bt_page_items(tree: &BTree, blk: BlockNumber) -> Result<Vec<Row>> {
    let p = read_page(tree, blk)?;
    let o = bp::opaque(&p);
    let mut rows = Vec::new();
    if o.is_deleted() {
        // Its one item is the safexid, not a key (pageinspect shows none).
        return Ok(rows);
    }
    for off in 1..=page::max_offset(&p) {
        let t = bp::item(&p, off)?;
        let pivot = !o.is_leaf() || (off == P_HIKEY && !o.is_rightmost());
        let key = if pivot { bp::pivot_key(t) } else { t };
        let (vals, tid) = decode_key(tree.desc(), key)?;
        let ctid = match pivot {
            true => format!("({},0)", bp::downlink(t)),
            false => bp::tid_text(tid_of(t)),
        };
        let shown: Vec<String> = vals.iter().map(|v| format!("{v:?}")).collect();
        rows.push(vec![
            ("itemoffset", Value::Int4(off as i32)),
            ("ctid", Value::text(&ctid)),
            ("itemlen", Value::Int4(t.len() as i32)),
            ("nulls", Value::Bool(vals.iter().any(|v| v.is_null()))),
            ("vars", Value::Bool(true)),
            ("data", Value::text(&hex(key))),
            (
                "dead",
                Value::Bool(page::item_id(&p, off).flags == page::LP_DEAD),
            ),
            (
                "htid",
                tid.map_or(Value::Null, |t| Value::text(&bp::tid_text(t))),
            ),
            ("keys", Value::text(&shown.join(", "))),
        ]);
    }
    Ok(rows)
}
