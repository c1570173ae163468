//! pageinspect's B-tree functions (`bt_metap`, `bt_page_stats`,
//! `bt_page_items`) and amcheck's `bt_index_parent_check` over SQL: their
//! column names and types as PostgreSQL 15's, figures that agree with one
//! another and with the table, and pageinspect's errors (SQLSTATE and
//! text) for a table, an unknown name and bad block numbers.

mod common;

use common::{one, run, text};
use heapdb::types::{DataType, Value};

fn int(v: &Value) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("not an integer: {v:?}"))
}

fn columns(r: &heapdb::QueryResult) -> Vec<(String, DataType)> {
    r.columns.iter().map(|c| (c.name.clone(), c.ty)).collect()
}

fn names_types(list: &[(&str, DataType)]) -> Vec<(String, DataType)> {
    list.iter().map(|(n, t)| (n.to_string(), *t)).collect()
}

#[test]
fn functions_have_pageinspect_columns_and_consistent_figures() {
    let (_d, db) = common::open(1000);
    let mut s = db.session();
    run(&mut s, "create table bt (a int primary key, b text)");
    run(
        &mut s,
        "insert into bt select g, 'x' || g from generate_series(1, 1000) g",
    );
    let meta = run(&mut s, "select * from bt_metap('bt_pkey')");
    assert_eq!(
        columns(&meta),
        names_types(&[
            ("magic", DataType::Int4),
            ("version", DataType::Int4),
            ("root", DataType::Int8),
            ("level", DataType::Int8),
            ("fastroot", DataType::Int8),
            ("fastlevel", DataType::Int8),
            ("last_cleanup_num_delpages", DataType::Int8),
            ("last_cleanup_num_tuples", DataType::Float8),
            ("allequalimage", DataType::Bool),
        ])
    );
    assert_eq!(meta.rows[0][0], Value::Int4(340322));
    let (root, level) = (int(&meta.rows[0][2]), int(&meta.rows[0][3]));
    assert!(level >= 1, "1000 keys need more than one page");

    let stats = run(
        &mut s,
        &format!("select * from bt_page_stats('bt_pkey', {root})"),
    );
    assert_eq!(
        columns(&stats),
        names_types(&[
            ("blkno", DataType::Int8),
            ("type", DataType::Text),
            ("live_items", DataType::Int4),
            ("dead_items", DataType::Int4),
            ("avg_item_size", DataType::Int4),
            ("page_size", DataType::Int4),
            ("free_size", DataType::Int4),
            ("btpo_prev", DataType::Int8),
            ("btpo_next", DataType::Int8),
            ("btpo_level", DataType::Int8),
            ("btpo_flags", DataType::Int4),
        ])
    );
    assert_eq!(text(&stats.rows[0][1]), "r");
    assert_eq!(int(&stats.rows[0][9]), level);
    assert_eq!(int(&stats.rows[0][5]), 8192);

    // The leaves, followed from the leftmost by their right links, hold
    // one item per row (plus a high key on all but the rightmost).
    let items = run(
        &mut s,
        &format!("select * from bt_page_items('bt_pkey', {root})"),
    );
    assert_eq!(
        columns(&items),
        names_types(&[
            ("itemoffset", DataType::Int2),
            ("ctid", DataType::Text),
            ("itemlen", DataType::Int2),
            ("nulls", DataType::Bool),
            ("vars", DataType::Bool),
            ("data", DataType::Text),
            ("dead", DataType::Bool),
            ("htid", DataType::Text),
            ("tids", DataType::Text),
        ])
    );
    let mut blk = root;
    for _ in 0..level {
        let first = run(
            &mut s,
            &format!("select ctid from bt_page_items('bt_pkey', {blk}) where itemoffset = 1"),
        );
        let ctid = text(&first.rows[0][0]);
        blk = ctid[1..ctid.find(',').unwrap()].parse().unwrap();
    }
    let mut leaf_items = 0;
    let mut heap_tids = std::collections::HashSet::new();
    loop {
        let st = run(
            &mut s,
            &format!("select * from bt_page_stats('bt_pkey', {blk})"),
        );
        assert_eq!(text(&st.rows[0][1]), "l");
        let it = run(
            &mut s,
            &format!(
                "select htid, dead from bt_page_items('bt_pkey', {blk}) where htid is not null"
            ),
        );
        for r in &it.rows {
            assert!(heap_tids.insert(text(&r[0])), "one entry per heap tuple");
            assert_eq!(r[1], Value::Bool(false));
        }
        leaf_items += int(&st.rows[0][2]);
        let next = int(&st.rows[0][8]);
        if next == 0 {
            break;
        }
        blk = next;
    }
    assert_eq!(heap_tids.len(), 1000);
    assert!(leaf_items >= 1000, "{leaf_items}");
    assert_eq!(
        one(&mut s, "select bt_index_parent_check('bt_pkey')"),
        Value::text("")
    );
}

#[test]
fn errors_are_pageinspects() {
    let (_d, db) = common::open(1000);
    let mut s = db.session();
    run(&mut s, "create table bt (a int primary key)");
    run(&mut s, "insert into bt values (1), (2)");
    for (sql, code, msg) in [
        (
            "select * from bt_metap('bt')",
            "42809",
            "\"bt\" is not a btree index",
        ),
        (
            "select * from bt_page_items('bt', 1)",
            "42809",
            "\"bt\" is not a btree index",
        ),
        (
            "select * from bt_metap('nosuch')",
            "42P01",
            "relation \"nosuch\" does not exist",
        ),
        (
            "select * from bt_page_stats('bt_pkey', 0)",
            "22023",
            "block 0 is a meta page",
        ),
        (
            "select * from bt_page_stats('bt_pkey', 100)",
            "XX000",
            "block number out of range",
        ),
        (
            "select * from bt_page_items('bt_pkey', -1)",
            "22023",
            "invalid block number",
        ),
        (
            "select bt_index_parent_check('bt')",
            "42809",
            "\"bt\" is not an index",
        ),
        (
            "select bt_index_parent_check('nosuch')",
            "42P01",
            "relation \"nosuch\" does not exist",
        ),
    ] {
        let e = s.execute(sql).unwrap_err();
        assert_eq!((e.code.code(), e.message.as_str()), (code, msg), "{sql}");
    }
}
