//! Engine behaviour beyond the SQL corpus: concurrent sessions in threads,
//! the inspection functions, EXPLAIN, cancellation, restart.

use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use heapdb::types::Value;
use heapdb::{Database, Session, SqlState};

mod common;
use common::{one, texts};

#[test]
fn uncommitted_rows_are_invisible_and_read_committed_sees_commits() {
    let (_d, db) = common::open(512);
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
    let (_d, db) = common::open(512);
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

/// Waits until a session waits for another's transaction to end, as the
/// lock table shows it; fails the test after `common::PATIENCE`.
fn await_xact_wait(db: &Database) {
    common::wait_until("a writer waiting for a transaction", || {
        db.locks
            .waiters()
            .iter()
            .any(|w| w.mode == heapdb::txn::LockMode::Share)
    });
}

/// PostgreSQL's READ COMMITTED: the second writer waits, then applies its
/// change to the version the first committed (`n + 1` twice gives 2).
#[test]
fn lost_update_is_prevented_by_waiting_then_updating_the_new_version() {
    let (_d, db) = common::open(512);
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
    // b must be blocked behind a's uncommitted update: it waits for a's
    // transaction to end (Share on a's xid).
    await_xact_wait(&db);
    assert!(
        !waiter.is_finished(),
        "the second writer waits for the first"
    );
    a.execute("commit").unwrap();
    assert_eq!(waiter.join().unwrap().unwrap().tag, "UPDATE 1");
    assert_eq!(one(&mut a, "select n from c"), Value::Int4(2));
}

#[test]
fn writer_proceeds_after_the_other_aborts() {
    let (_d, db) = common::open(512);
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
    await_xact_wait(&db);
    a.execute("rollback").unwrap();
    assert_eq!(waiter.join().unwrap().unwrap(), "UPDATE 1");
    assert_eq!(one(&mut a, "select n from c"), Value::Int4(1));
}

#[test]
fn threads_insert_and_read_concurrently() {
    let (_d, db) = common::open(512);
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
    let (_d, db) = common::open(512);
    let mut s = db.session();
    s.execute("create table h (a int)").unwrap();
    s.execute("insert into h values (1), (2)").unwrap();
    // The first scan after the commit sets XMIN_COMMITTED.
    s.execute("select * from h").unwrap();
    let items = texts(
        &mut s,
        "select lp, t_xmax, t_flags from heap_page_items('h', 0)",
    );
    assert_eq!(items.len(), 2);
    for it in &items {
        assert!(it[2].contains("XMIN_COMMITTED"), "{it:?}");
        assert_eq!(it[1], "0");
    }
    s.execute("delete from h where a = 1").unwrap();
    let items = texts(
        &mut s,
        "select lp, t_xmax from heap_page_items('h', 0) order by lp",
    );
    assert_ne!(
        items[0][1], "0",
        "the deleted row carries its deleter's xid"
    );
    assert_eq!(items[1][1], "0");
    assert_eq!(one(&mut s, "select count(*) from h"), Value::Int8(1));
    let hdr = texts(&mut s, "select lower, upper from page_header('h', 0)");
    assert_eq!(
        hdr[0][0], "32",
        "two line pointers after the 24-byte header"
    );
    let vm = texts(
        &mut s,
        "select blkno, all_visible from heap_visibility_map('h')",
    );
    assert_eq!(vm, vec![vec!["0".to_string(), "f".to_string()]]);
    assert_eq!(one(&mut s, "select relation_pages('h')"), Value::Int8(1));
    assert_eq!(one(&mut s, "select relation_size('h')"), Value::Int8(8192));
    let stats = texts(&mut s, "select buffers, used from buffer_cache_stats()");
    assert_eq!(stats[0][0], "512");
    let e = s
        .execute("select * from heap_page_items('h', 7)")
        .unwrap_err();
    assert_eq!(e.code, SqlState::InvalidParameterValue);
}

#[test]
fn pg_relation_filepath_names_the_file_that_holds_the_table() {
    let (d, db) = common::open(512);
    let mut s = db.session();
    s.execute("create table f (a int)").unwrap();
    s.execute("insert into f select g from generate_series(1, 3000) g")
        .unwrap();
    s.execute("checkpoint").unwrap();
    let path = |s: &mut Session| match one(s, "select pg_relation_filepath('f')") {
        Value::Text(p) => p.to_string(),
        v => panic!("a path, not {v:?}"),
    };
    let before = path(&mut s);
    assert!(before.starts_with("base/"), "{before}");
    let size = match one(&mut s, "select relation_size('f')") {
        Value::Int8(n) => n as u64,
        v => panic!("{v:?}"),
    };
    assert!(size > 8192, "several pages: {size}");
    let meta = std::fs::metadata(d.path().join(&before)).expect("the file exists");
    assert_eq!(meta.len(), size, "the named file holds the table's pages");
    s.execute("truncate f").unwrap();
    let after = path(&mut s);
    assert_ne!(after, before, "TRUNCATE gives the table a new file");
    let e = s
        .execute("select pg_relation_filepath('nosuch')")
        .unwrap_err();
    assert_eq!(e.code, SqlState::UndefinedTable);
}

#[test]
fn explain_shows_the_plan_shape() {
    let (_d, db) = common::open(512);
    let mut s = db.session();
    s.execute("create table a (id int, bid int)").unwrap();
    s.execute("create table b (bid int, name text)").unwrap();
    s.execute("insert into a select g, g % 5 from generate_series(1, 1000) g")
        .unwrap();
    s.execute("insert into b select g, 'b' || g from generate_series(0, 4) g")
        .unwrap();
    let plan = texts(
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
    let plan = texts(
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
    let (_d, db) = common::open(512);
    let mut s = db.session();
    let flag = s.cancel_flag();
    let over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // The statement clears the flag when it starts: cancel until it is over.
    let canceller = {
        let over = over.clone();
        thread::spawn(move || {
            while !over.load(Ordering::Relaxed) {
                flag.store(true, Ordering::Relaxed);
                thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let e = s
        .execute("select count(*) from generate_series(1, 10000000000)")
        .unwrap_err();
    over.store(true, Ordering::Relaxed);
    canceller.join().unwrap();
    assert_eq!(e.code, SqlState::QueryCanceled);
    assert_eq!(e.message, "canceling statement due to user request");
    // The flag does not leak into the next statement.
    assert_eq!(one(&mut s, "select 1"), Value::Int4(1));
}

#[test]
fn a_commit_whose_catalog_cannot_be_written_ends_as_an_abort() {
    let (d, db) = common::open(512);
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
    let items = texts(
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

#[test]
fn a_cancel_stops_scans_aggregates_sorts_and_joins_within_a_batch() {
    let (_d, db) = common::open(512);
    let mut s = db.session();
    s.execute("create table big (a int, b int, c int, d int)")
        .unwrap();
    s.execute("insert into big select g, g % 100, g, g from generate_series(1, 200000) g")
        .unwrap();
    let pages = one(&mut s, "select relation_pages('big')")
        .as_i64()
        .unwrap() as u64;
    assert!(pages > 512, "{pages} pages");
    s.execute("set max_parallel_workers_per_gather = 0")
        .unwrap();
    // The scan reports progress every 64 pages; the first report cancels.
    // Every operator checks the flag once per batch (a ~1,024-row batch is
    // a few pages here), so no statement reaches the second report.
    let flag = s.cancel_flag();
    let last = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = last.clone();
    s.set_progress(Some(std::sync::Arc::new(
        move |p: &heapdb::exec::progress::Progress| {
            seen.fetch_max(p.done, Ordering::Relaxed);
            flag.store(true, Ordering::Relaxed);
        },
    )));
    for sql in [
        "select count(*) from big where c >= 0",
        "select b, count(*), sum(c) from big group by b",
        "select b, max(a) from big group by b having max(a) > 0",
        "select * from big order by d desc limit 1",
        "select count(*) from big x join big y on x.a = y.a",
        "select count(distinct d) from big",
    ] {
        last.store(0, Ordering::Relaxed);
        let e = s.execute(sql).unwrap_err();
        assert_eq!(e.code, SqlState::QueryCanceled, "{sql}");
        let done = last.load(Ordering::Relaxed);
        assert_eq!(done, 64, "{sql}: read on to page {done} of {pages}");
    }
    s.set_progress(None);
    assert_eq!(
        one(&mut s, "select count(*) from big where c >= 0"),
        Value::Int8(200_000)
    );
}

#[test]
fn the_embedding_api_reports_columns_rows_tags_timings_and_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    let r = s
        .execute("create table e (id int not null, name text, amount numeric(8,2))")
        .unwrap();
    assert_eq!(r.tag, "CREATE TABLE");
    assert!(!r.returns_rows);
    let r = s
        .execute("insert into e select g, 'n' || g, g * 1.5 from generate_series(1, 5000) g")
        .unwrap();
    assert_eq!(r.tag, "INSERT 0 5000");
    let r = s
        .execute("select id, name, amount, id::int8 * 2 as twice from e where id <= 3 order by id")
        .unwrap();
    assert_eq!(r.tag, "SELECT 3");
    assert!(r.returns_rows);
    let cols: Vec<(String, heapdb::types::DataType)> =
        r.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
    use heapdb::types::DataType as T;
    assert_eq!(
        cols,
        vec![
            ("id".to_string(), T::Int4),
            ("name".to_string(), T::Text),
            ("amount".to_string(), T::Numeric(Some((8, 2)))),
            ("twice".to_string(), T::Int8),
        ]
    );
    assert_eq!(r.rows.len(), 3);
    assert_eq!(r.rows[2][0], Value::Int4(3));
    assert_eq!(heapdb::types::value_to_string(&r.rows[2][2]), "4.50");
    assert!(r.timing.plan + r.timing.execute > Duration::ZERO);
    assert!(
        r.buffers.shared_hit + r.buffers.shared_read > 0,
        "{:?}",
        r.buffers
    );
    // Streaming: the rows arrive batch by batch, none are collected.
    let mut batches = 0;
    let mut rows = 0;
    let r = s
        .execute_streaming("select id from e", &mut |cols, b| {
            assert_eq!(cols[0].name, "id");
            batches += 1;
            rows += b.len;
            Ok(())
        })
        .unwrap();
    assert_eq!((rows, r.tag.as_str()), (5000, "SELECT 5000"));
    assert!(batches > 1, "{batches} batches");
    assert!(r.rows.is_empty());
    // Errors carry PostgreSQL's SQLSTATE and change nothing.
    let e = s
        .execute("insert into e values (null, 'x', 1)")
        .unwrap_err();
    assert_eq!(e.code, SqlState::NotNullViolation);
    assert_eq!(one(&mut s, "select count(*) from e"), Value::Int8(5000));
}

#[test]
fn ring_size_settings_have_units_errors_and_transaction_scope() {
    let (_d, db) = common::open(512);
    let mut s = db.session();
    let show =
        |s: &mut Session, name: &str| -> String { texts(s, &format!("show {name}"))[0][0].clone() };
    for (name, default) in [
        ("bulkread_ring_size", "256kB"),
        ("bulkwrite_ring_size", "16MB"),
        ("vacuum_ring_size", "256kB"),
    ] {
        assert_eq!(show(&mut s, name), default);
        s.execute(&format!("set {name} = '1MB'")).unwrap();
        assert_eq!(show(&mut s, name), "1MB");
        s.execute(&format!("set {name} = 64")).unwrap();
        assert_eq!(show(&mut s, name), "64kB", "a bare number is kB");
        let e = s.execute(&format!("set {name} = '1kB'")).unwrap_err();
        assert_eq!(e.code, SqlState::InvalidParameterValue);
        assert!(
            e.message.contains("outside the valid range"),
            "{}",
            e.message
        );
        let e = s
            .execute(&format!("set {name} = '1 lightyear'"))
            .unwrap_err();
        assert_eq!(e.code, SqlState::InvalidParameterValue);
        assert_eq!(show(&mut s, name), "64kB", "a bad value changes nothing");
        s.execute(&format!("reset {name}")).unwrap();
        assert_eq!(show(&mut s, name), default);
        // SET inside a transaction block is undone by ROLLBACK.
        s.execute("begin").unwrap();
        s.execute(&format!("set {name} = '2MB'")).unwrap();
        assert_eq!(show(&mut s, name), "2MB");
        s.execute("rollback").unwrap();
        assert_eq!(show(&mut s, name), default);
    }
    let e = s.execute("show no_such_ring").unwrap_err();
    assert_eq!(e.code, SqlState::UndefinedObject);
}

#[test]
fn a_restart_keeps_everything_committed_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let all = "select i2, i4, i8, f4, f8, n, b, t, v, c, d, ts, iv, dflt from ty order by i4";
    let before;
    {
        let db = Database::open(dir.path()).unwrap();
        let mut s = db.session();
        s.execute(
            "create table ty (i2 smallint, i4 int not null, i8 bigint, f4 real, f8 float8, \
             n numeric(40,2), b bool, t text, v varchar(5), c char(3), d date, ts timestamp, \
             iv interval, dflt int default 42)",
        )
        .unwrap();
        s.execute(
            "insert into ty values \
             (1, 1, 9000000000, 1.5, -2.25, 123456789012345678901234567890123456.78, true, \
              'tëxt', 'ab', 'x', '1999-01-08', 'Thu Jan 07 15:15:00 1999 EST', '1 day 02:00', 7), \
             (null, 2, null, null, null, null, null, null, null, null, null, null, null, default), \
             (3, 3, 3, 3, 3, 3, false, '', '', '', 'infinity', '-infinity', '-1 mon', 3)",
        )
        .unwrap();
        s.execute("update ty set t = t || '!' where i4 = 3")
            .unwrap();
        s.execute("delete from ty where i4 = 2").unwrap();
        s.execute("create table copy_of as select i4, t from ty")
            .unwrap();
        s.execute("create table dropped (a int)").unwrap();
        s.execute("drop table dropped").unwrap();
        s.execute("create table emptied (a int)").unwrap();
        s.execute("insert into emptied values (1), (2)").unwrap();
        s.execute("truncate emptied").unwrap();
        s.execute("insert into emptied values (3)").unwrap();
        s.execute("analyze ty").unwrap();
        // Not committed: must not come back.
        s.execute("begin").unwrap();
        s.execute("insert into ty (i4) values (99)").unwrap();
        s.execute("create table uncommitted (a int)").unwrap();
        before = texts(&mut s, all);
        // The session and database close with the block still open.
    }
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    let after = texts(&mut s, all);
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(
        after,
        before
            .iter()
            .filter(|r| r[1] != "99")
            .cloned()
            .collect::<Vec<_>>()
    );
    assert_eq!(after[0][5], "123456789012345678901234567890123456.78");
    assert_eq!(
        after[0][11], "1999-01-07 15:15:00",
        "the zone of a timestamp without time zone is ignored"
    );
    assert_eq!(after[1][7], "!");
    assert_eq!(
        texts(&mut s, "select i4, t from copy_of order by i4"),
        vec![
            vec!["1".to_string(), "tëxt".to_string()],
            vec!["3".to_string(), "!".to_string()]
        ]
    );
    assert_eq!(one(&mut s, "select sum(a) from emptied"), Value::Int8(3));
    for gone in ["dropped", "uncommitted"] {
        let e = s.execute(&format!("select * from {gone}")).unwrap_err();
        assert_eq!(e.code, SqlState::UndefinedTable, "{gone}");
    }
    // The definitions came back whole: NOT NULL, DEFAULT, typmods, stats.
    let e = s.execute("insert into ty (i2) values (1)").unwrap_err();
    assert_eq!(e.code, SqlState::NotNullViolation);
    s.execute("insert into ty (i4) values (5)").unwrap();
    assert_eq!(
        one(&mut s, "select dflt from ty where i4 = 5"),
        Value::Int4(42)
    );
    let e = s
        .execute("insert into ty (i4, v) values (6, 'toolong')")
        .unwrap_err();
    assert_eq!(e.code, SqlState::StringDataRightTruncation);
    assert_eq!(
        one(&mut s, "select count(*) from pg_stats('ty')"),
        Value::Int8(14)
    );
}
