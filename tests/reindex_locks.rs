//! REINDEX beside other sessions: it builds the new trees holding EXCLUSIVE
//! on the table, so a reading transaction goes on (through the old index)
//! while it builds, writers wait; it takes ACCESS EXCLUSIVE only before the
//! old files go, so it waits for readers still in the table, and the
//! rebuilt index is whole afterwards.

use std::thread;

use heapdb::txn::LockMode;
use heapdb::types::Value;
use heapdb::{Database, Session};

mod common;

fn count(s: &mut Session, sql: &str) -> i64 {
    let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    match r.rows[0][0] {
        Value::Int8(n) => n,
        ref v => panic!("{sql}: {v:?}"),
    }
}

fn spawn(db: &Database, sql: &'static str) -> thread::JoinHandle<heapdb::Result<String>> {
    let db = db.clone();
    thread::spawn(move || db.session().execute(sql).map(|r| r.tag))
}

/// The relation locks of `pg_locks()`: (mode, granted), sorted.
fn relation_locks(s: &mut Session) -> Vec<(String, bool)> {
    let r = s
        .execute(
            "select mode, granted from pg_locks() where locktype = 'relation' \
             order by granted, mode",
        )
        .unwrap();
    r.rows
        .iter()
        .map(|row| (common::text(&row[0]), row[1] == Value::Bool(true)))
        .collect()
}

#[test]
fn a_reader_goes_on_while_reindex_builds_and_reindex_waits_for_it_at_the_end() {
    let (_d, db) = common::open(512);
    let mut a = db.session();
    common::run(&mut a, "create table t (id int primary key, v int)");
    common::run(&mut a, "create index t_v_idx on t (v)");
    common::run(
        &mut a,
        "insert into t select g, g % 100 from generate_series(1, 20000) g",
    );
    common::run(&mut a, "begin");
    assert_eq!(count(&mut a, "select count(*) from t where v = 7"), 200);
    let reindex = spawn(&db, "reindex table t");
    // REINDEX got its EXCLUSIVE lock beside the reader's ACCESS SHARE,
    // built both indexes and now waits for the reader to leave.
    common::wait_until("REINDEX waiting for ACCESS EXCLUSIVE", || {
        db.locks
            .waiters()
            .iter()
            .any(|w| w.mode == LockMode::AccessExclusive)
    });
    let mut s = db.session();
    assert_eq!(
        relation_locks(&mut s),
        vec![
            ("AccessExclusiveLock".to_string(), false),
            ("AccessShareLock".to_string(), true),
            ("ExclusiveLock".to_string(), true),
        ]
    );
    // The reader goes on, through the old index.
    common::run(&mut a, "set enable_seqscan = off");
    assert_eq!(count(&mut a, "select count(*) from t where v = 8"), 200);
    assert_eq!(count(&mut a, "select count(*) from t where id < 101"), 100);
    assert!(!reindex.is_finished(), "REINDEX waits for the reader");
    common::run(&mut a, "commit");
    assert_eq!(reindex.join().unwrap().unwrap(), "REINDEX");
    for ix in ["t_pkey", "t_v_idx"] {
        let r = common::run(&mut a, &format!("select * from bt_index_check('{ix}')"));
        assert_eq!(common::text(&r.rows[0][0]), "20000", "{ix}");
        assert_eq!(common::text(&r.rows[0][2]), "20000", "{ix}");
    }
    assert_eq!(count(&mut a, "select count(*) from t where v = 9"), 200);
    let e = a.execute("insert into t values (5, 5)").unwrap_err();
    assert_eq!(e.code.code(), "23505");
}

#[test]
fn a_writer_waits_for_reindex() {
    let (_d, db) = common::open(512);
    let mut a = db.session();
    common::run(&mut a, "create table t (id int primary key, v int)");
    common::run(
        &mut a,
        "insert into t select g, g from generate_series(1, 1000) g",
    );
    common::run(&mut a, "begin");
    common::run(&mut a, "reindex index t_pkey");
    let writer = spawn(&db, "insert into t values (1001, 1)");
    common::wait_until("the writer waiting", || {
        db.locks
            .waiters()
            .iter()
            .any(|w| w.mode == LockMode::RowExclusive)
    });
    assert!(!writer.is_finished());
    common::run(&mut a, "commit");
    assert_eq!(writer.join().unwrap().unwrap(), "INSERT 0 1");
    let r = common::run(&mut a, "select * from bt_index_check('t_pkey')");
    assert_eq!(common::text(&r.rows[0][0]), "1001");
}
