//! Uniqueness under concurrency (PostgreSQL's `_bt_check_unique`): an
//! inserter that finds the key held by a running transaction waits for it,
//! then fails with 23505 if it committed and goes in if it rolled back; and
//! many sessions inserting overlapping keys at once never both get one in.

use std::thread;

use heapdb::settings::Settings;
use heapdb::txn::LockTag;
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

fn waits_for_the_holder(commit: bool) {
    let (_d, db) = common::open(Settings::default().shared_buffers);
    let mut a = db.session();
    a.execute("create table t (k int primary key, v text)")
        .unwrap();
    a.execute("begin").unwrap();
    a.execute("insert into t values (5, 'first')").unwrap();
    let other = spawn(&db, "insert into t values (5, 'second')");
    // The second inserter waits on the first one's transaction, as the
    // lock table shows it (what `pg_locks()` lists with granted = false).
    common::wait_until("the second inserter waiting for the first", || {
        db.locks
            .waiters()
            .iter()
            .any(|w| matches!(w.tag, LockTag::Transaction(_)))
    });
    assert!(!other.is_finished(), "the second inserter must wait");
    a.execute(if commit { "commit" } else { "rollback" })
        .unwrap();
    let r = other.join().unwrap();
    if commit {
        let e = r.unwrap_err();
        assert_eq!(e.code.code(), "23505");
        assert_eq!(
            e.message,
            "duplicate key value violates unique constraint \"t_pkey\""
        );
        assert_eq!(e.detail.as_deref(), Some("Key (k)=(5) already exists."));
    } else {
        assert_eq!(r.unwrap(), "INSERT 0 1");
    }
    assert_eq!(count(&mut a, "select count(*) from t where k = 5"), 1);
}

#[test]
fn a_waiting_inserter_fails_when_the_holder_commits() {
    waits_for_the_holder(true);
}

#[test]
fn a_waiting_inserter_goes_in_when_the_holder_rolls_back() {
    waits_for_the_holder(false);
}

#[test]
fn concurrent_inserters_of_overlapping_keys_never_duplicate() {
    let (_d, db) = common::open(Settings::default().shared_buffers);
    db.session()
        .execute("create table u (k int primary key, w int)")
        .unwrap();
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let db = db.clone();
            thread::spawn(move || {
                let mut s = db.session();
                let mut ok = 0;
                for i in 0..400 {
                    // Every worker tries the same keys, in different orders.
                    let k = (i * 7 + w * 13) % 400;
                    match s.execute(&format!("insert into u values ({k}, {w})")) {
                        Ok(_) => ok += 1,
                        Err(e) => assert_eq!(e.code.code(), "23505", "{e}"),
                    }
                }
                ok
            })
        })
        .collect();
    let inserted: i64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    let mut s = db.session();
    assert_eq!(inserted, 400, "each key went in exactly once");
    assert_eq!(count(&mut s, "select count(*) from u"), 400);
    assert_eq!(count(&mut s, "select count(distinct k) from u"), 400);
    let r = s.execute("select * from bt_index_check('u_pkey')").unwrap();
    assert_eq!(r.rows[0][2], Value::Int8(400));
}
