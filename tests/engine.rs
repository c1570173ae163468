//! Engine behaviour beyond the SQL corpus: concurrent sessions in threads,
//! the inspection functions, EXPLAIN, cancellation, restart.

use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use heapdb::settings::Settings;
use heapdb::types::Value;
use heapdb::{Database, Session, SqlState};

fn open() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(
        dir.path(),
        Settings {
            shared_buffers: 512,
            ..Settings::default()
        },
    )
    .unwrap();
    (dir, db)
}

fn one(s: &mut Session, sql: &str) -> Value {
    let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.rows[0][0].clone()
}

fn text_rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| {
                    let mut out = String::new();
                    heapdb::types::format_value(v, &mut out);
                    out
                })
                .collect()
        })
        .collect()
}

#[test]
fn uncommitted_rows_are_invisible_and_read_committed_sees_commits() {
    let (_d, db) = open();
    let mut a = db.session();
    let mut b = db.session();
    a.execute("create table t (id int, v int)").unwrap();
    a.execute("insert into t values (1, 10), (2, 20)").unwrap();
    a.execute("begin").unwrap();
    a.execute("update t set v = v + 1 where id = 1").unwrap();
    a.execute("insert into t values (3, 30)").unwrap();
    assert_eq!(one(&mut b, "select sum(v) from t"), Value::Int8(30));
    assert_eq!(one(&mut a, "select sum(v) from t"), Value::Int8(61));
    a.execute("commit").unwrap();
    assert_eq!(one(&mut b, "select sum(v) from t"), Value::Int8(61));
}

#[test]
fn repeatable_read_prevents_read_skew() {
    let (_d, db) = open();
    let mut a = db.session();
    let mut b = db.session();
    a.execute("create table acct (id int, bal int)").unwrap();
    a.execute("insert into acct values (1, 50), (2, 50)")
        .unwrap();
    a.execute("begin isolation level repeatable read").unwrap();
    assert_eq!(
        one(&mut a, "select bal from acct where id = 1"),
        Value::Int4(50)
    );
    // b moves 25 from account 1 to account 2 and commits in between.
    b.execute("begin").unwrap();
    b.execute("update acct set bal = bal - 25 where id = 1")
        .unwrap();
    b.execute("update acct set bal = bal + 25 where id = 2")
        .unwrap();
    b.execute("commit").unwrap();
    // a still sees the old state of both rows: the sum stays 100.
    assert_eq!(
        one(&mut a, "select bal from acct where id = 2"),
        Value::Int4(50)
    );
    assert_eq!(one(&mut a, "select sum(bal) from acct"), Value::Int8(100));
    a.execute("commit").unwrap();
    assert_eq!(
        one(&mut a, "select bal from acct where id = 2"),
        Value::Int4(75)
    );
}

#[test]
fn lost_update_is_prevented_by_waiting_then_failing() {
    let (_d, db) = open();
    let mut a = db.session();
    a.execute("create table c (id int, n int)").unwrap();
    a.execute("insert into c values (1, 0)").unwrap();
    a.execute("begin").unwrap();
    a.execute("update c set n = n + 1 where id = 1").unwrap();
    let db2 = db.clone();
    let waiter = thread::spawn(move || {
        let mut b = db2.session();
        b.execute("update c set n = n + 1 where id = 1")
    });
    // b must be blocked behind a's uncommitted update.
    thread::sleep(Duration::from_millis(200));
    assert!(
        !waiter.is_finished(),
        "the second writer waits for the first"
    );
    a.execute("commit").unwrap();
    let e = waiter.join().unwrap().unwrap_err();
    assert_eq!(e.code, SqlState::SerializationFailure);
    assert_eq!(one(&mut a, "select n from c"), Value::Int4(1));
}

#[test]
fn writer_proceeds_after_the_other_aborts() {
    let (_d, db) = open();
    let mut a = db.session();
    a.execute("create table c (id int, n int)").unwrap();
    a.execute("insert into c values (1, 0)").unwrap();
    a.execute("begin").unwrap();
    a.execute("update c set n = 100 where id = 1").unwrap();
    let db2 = db.clone();
    let waiter = thread::spawn(move || {
        let mut b = db2.session();
        b.execute("update c set n = n + 1 where id = 1")
            .map(|r| r.tag)
    });
    thread::sleep(Duration::from_millis(100));
    a.execute("rollback").unwrap();
    assert_eq!(waiter.join().unwrap().unwrap(), "UPDATE 1");
    assert_eq!(one(&mut a, "select n from c"), Value::Int4(1));
}

#[test]
fn threads_insert_and_read_concurrently() {
    let (_d, db) = open();
    db.session()
        .execute("create table m (w int, i int)")
        .unwrap();
    let handles: Vec<_> = (0..4)
        .map(|w| {
            let db = db.clone();
            thread::spawn(move || {
                let mut s = db.session();
                for i in 0..200 {
                    s.execute(&format!("insert into m values ({w}, {i})"))
                        .unwrap();
                    if i % 50 == 0 {
                        s.execute("select count(*) from m").unwrap();
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let mut s = db.session();
    assert_eq!(one(&mut s, "select count(*) from m"), Value::Int8(800));
    assert_eq!(
        one(&mut s, "select count(distinct w * 1000 + i) from m"),
        Value::Int8(800)
    );
}

#[test]
fn heap_page_items_shows_hint_bits_and_deletes() {
    let (_d, db) = open();
    let mut s = db.session();
    s.execute("create table h (a int)").unwrap();
    s.execute("insert into h values (1), (2)").unwrap();
    // The first scan after the commit sets XMIN_COMMITTED.
    s.execute("select * from h").unwrap();
    let items = text_rows(
        &mut s,
        "select lp, t_xmax, t_flags from heap_page_items('h', 0)",
    );
    assert_eq!(items.len(), 2);
    for it in &items {
        assert!(it[2].contains("XMIN_COMMITTED"), "{it:?}");
        assert_eq!(it[1], "0");
    }
    s.execute("delete from h where a = 1").unwrap();
    let items = text_rows(
        &mut s,
        "select lp, t_xmax from heap_page_items('h', 0) order by lp",
    );
    assert_ne!(
        items[0][1], "0",
        "the deleted row carries its deleter's xid"
    );
    assert_eq!(items[1][1], "0");
    assert_eq!(one(&mut s, "select count(*) from h"), Value::Int8(1));
    let hdr = text_rows(&mut s, "select lower, upper from page_header('h', 0)");
    assert_eq!(
        hdr[0][0], "32",
        "two line pointers after the 24-byte header"
    );
    let vm = text_rows(
        &mut s,
        "select blkno, all_visible from heap_visibility_map('h')",
    );
    assert_eq!(vm, vec![vec!["0".to_string(), "f".to_string()]]);
    assert_eq!(one(&mut s, "select relation_pages('h')"), Value::Int8(1));
    assert_eq!(one(&mut s, "select relation_size('h')"), Value::Int8(8192));
    let stats = text_rows(&mut s, "select buffers, used from buffer_cache_stats()");
    assert_eq!(stats[0][0], "512");
    let e = s
        .execute("select * from heap_page_items('h', 7)")
        .unwrap_err();
    assert_eq!(e.code, SqlState::InvalidParameterValue);
}

#[test]
fn explain_shows_the_plan_shape() {
    let (_d, db) = open();
    let mut s = db.session();
    s.execute("create table a (id int, bid int)").unwrap();
    s.execute("create table b (bid int, name text)").unwrap();
    s.execute("insert into a select g, g % 5 from generate_series(1, 1000) g")
        .unwrap();
    s.execute("insert into b select g, 'b' || g from generate_series(0, 4) g")
        .unwrap();
    let plan = text_rows(
        &mut s,
        "explain (costs off) select b.bid, count(*) from a, b where a.bid = b.bid group by b.bid",
    );
    let lines: Vec<&str> = plan.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(lines[0], "HashAggregate");
    assert!(
        lines[1].trim_start().starts_with("Group Key: b.bid"),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("->  Hash Join")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("Hash Cond: (a.bid = b.bid)")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.contains("->  Hash")), "{lines:?}");
    let plan = text_rows(
        &mut s,
        "explain (analyze, buffers, costs off) select count(*) from a where id > 10",
    );
    let text: Vec<&str> = plan.iter().map(|r| r[0].as_str()).collect();
    assert!(text[0].starts_with("Aggregate (actual time="), "{text:?}");
    assert!(
        text.iter()
            .any(|l| l.contains("Seq Scan on a (actual time=") && l.contains("rows=990")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|l| l.contains("Filter: (id > 10)")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|l| l.contains("Buffers: shared hit=")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|l| l.starts_with("Execution Time:")),
        "{text:?}"
    );
}

#[test]
fn cancel_flag_stops_a_long_statement() {
    let (_d, db) = open();
    let mut s = db.session();
    let flag = s.cancel_flag();
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        flag.store(true, Ordering::Relaxed);
    });
    let e = s
        .execute("select count(*) from generate_series(1, 10000000000)")
        .unwrap_err();
    canceller.join().unwrap();
    assert_eq!(e.code, SqlState::QueryCanceled);
    assert_eq!(e.message, "canceling statement due to user request");
    // The flag does not leak into the next statement.
    assert_eq!(one(&mut s, "select 1"), Value::Int4(1));
}

#[test]
fn a_commit_whose_catalog_cannot_be_written_ends_as_an_abort() {
    let (d, db) = open();
    let mut s = db.session();
    s.execute("create table t (a int)").unwrap();
    s.execute("insert into t values (1)").unwrap();
    // The fault: the catalog is written to `catalog.tmp`, then renamed; a
    // directory in its place makes the write fail (even for root).
    let blocker = d.path().join("catalog.tmp");
    std::fs::create_dir(&blocker).unwrap();
    s.execute("begin").unwrap();
    s.execute("insert into t values (2)").unwrap();
    s.execute("create table u (b int)").unwrap();
    assert!(
        s.execute("commit").is_err(),
        "the catalog could not be written"
    );
    // Nothing of the transaction stands, and the session is usable.
    let e = s.execute("select * from u").unwrap_err();
    assert_eq!(e.code, SqlState::UndefinedTable);
    assert_eq!(one(&mut s, "select count(*) from t"), Value::Int8(1));
    // Its xid ended as aborted (not left running): the scan above hinted
    // the inserted row XMIN_INVALID.
    let items = text_rows(
        &mut s,
        "select lp, t_flags from heap_page_items('t', 0) order by lp",
    );
    assert_eq!(items.len(), 2);
    assert!(items[1][1].contains("XMIN_INVALID"), "{items:?}");
    // An autocommitted DDL statement fails the same way, then works once
    // the catalog can be written, and what committed survives a reopen.
    assert!(s.execute("create table v (c int)").is_err());
    assert_eq!(
        s.execute("select * from v").unwrap_err().code,
        SqlState::UndefinedTable
    );
    std::fs::remove_dir(&blocker).unwrap();
    s.execute("create table u (b int)").unwrap();
    s.execute("insert into u values (7)").unwrap();
    drop(s);
    drop(db);
    let db = Database::open(d.path()).unwrap();
    let mut s = db.session();
    assert_eq!(one(&mut s, "select count(*) from t"), Value::Int8(1));
    assert_eq!(one(&mut s, "select sum(b) from u"), Value::Int8(7));
    assert_eq!(
        s.execute("select * from v").unwrap_err().code,
        SqlState::UndefinedTable
    );
}
