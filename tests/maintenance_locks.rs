//! VACUUM and ANALYZE beside DDL, as PostgreSQL runs them: each table in a
//! transaction of its own, locked only while it is processed, its row and
//! page estimates set in place. So a whole-database VACUUM cannot be part
//! of a deadlock, a table dropped while VACUUM waits is skipped, and a
//! DROP, TRUNCATE or ALTER never finds the table's catalog entry changed
//! by a VACUUM or ANALYZE that committed after its snapshot. And a name
//! taken by a transaction that committed after the snapshot is taken.

use std::thread;

use heapdb::txn::{LockMode, LockTag};
use heapdb::{Database, QueryResult};

mod common;

/// Runs `sql` in a new session on another thread.
fn spawn(db: &Database, sql: &'static str) -> thread::JoinHandle<heapdb::Result<QueryResult>> {
    let db = db.clone();
    thread::spawn(move || db.session().execute(sql))
}

/// Waits until some statement waits for `mode` on a lock.
fn await_wait(db: &Database, mode: LockMode) {
    common::wait_until(&format!("a statement waiting for {mode:?}"), || {
        db.locks.waiters().iter().any(|w| w.mode == mode)
    });
}

/// The tables, each with rows, a primary key and statistics that a VACUUM
/// will change (rows deleted since the last one).
fn tables(db: &Database, names: &[&str]) {
    let mut s = db.session();
    for n in names {
        common::run(
            &mut s,
            &format!("create table {n} (id int primary key, v int)"),
        );
        common::run(
            &mut s,
            &format!("insert into {n} select g, g from generate_series(1, 2000) g"),
        );
        common::run(&mut s, &format!("vacuum analyze {n}"));
        common::run(&mut s, &format!("delete from {n} where id % 3 = 0"));
    }
}

#[test]
fn whole_database_vacuum_holds_one_table_lock_at_a_time() {
    let (_d, db) = common::open(1024);
    tables(&db, &["a", "b", "c"]);
    let mut s = db.session();
    common::run(&mut s, "begin");
    common::run(&mut s, "truncate b");
    // Tables in name order: `a` done and committed, then a wait on `b`.
    let vacuum = spawn(&db, "vacuum");
    await_wait(&db, LockMode::ShareUpdateExclusive);
    let held: Vec<_> = db
        .locks
        .status()
        .into_iter()
        .filter(|l| l.granted && l.mode == LockMode::ShareUpdateExclusive)
        .collect();
    assert!(held.is_empty(), "VACUUM keeps no table locked: {held:?}");
    // Were `a` still locked by the VACUUM (waiting for `b`, which this
    // block holds), this would close a cycle: 40P01 for one of the two.
    common::run(&mut s, "truncate a");
    common::run(&mut s, "commit");
    let r = vacuum.join().expect("vacuum thread").expect("VACUUM");
    assert_eq!(r.tag, "VACUUM");
    assert!(r.notices.is_empty(), "{:?}", r.notices);
    assert!(db.locks.is_empty(), "every lock was released");
    // Each table got its own transaction: `c`, after the wait, was
    // vacuumed (its estimate is exact again).
    let est = |s: &mut heapdb::Session, t: &str| {
        s.list_tables()
            .expect("list")
            .into_iter()
            .find(|x| x.name == t)
            .and_then(|x| x.rows_estimate)
    };
    assert_eq!(est(&mut s, "c"), Some(1334.0));
}

#[test]
fn vacuum_skips_a_table_dropped_while_it_waited() {
    let (_d, db) = common::open(1024);
    tables(&db, &["a", "b", "c"]);
    let mut s = db.session();
    // A whole-database pass: the table it waits for goes, silently.
    common::run(&mut s, "begin");
    common::run(&mut s, "drop table b");
    let vacuum = spawn(&db, "vacuum");
    await_wait(&db, LockMode::ShareUpdateExclusive);
    common::run(&mut s, "commit");
    let r = vacuum.join().expect("thread").expect("VACUUM");
    assert!(r.notices.is_empty(), "{:?}", r.notices);
    // A named table dropped after the names were looked up: a WARNING, as
    // PostgreSQL's "skipping vacuum of ... --- relation no longer exists".
    // (`Share` on `a`, CREATE INDEX's lock, lets the look-up through and
    // holds VACUUM back at `a`.)
    common::run(&mut s, "begin");
    common::run(&mut s, "create index on a (v)");
    let vacuum = spawn(&db, "vacuum a, c");
    await_wait(&db, LockMode::ShareUpdateExclusive);
    common::run(&mut s, "drop table c");
    common::run(&mut s, "commit");
    let r = vacuum.join().expect("thread").expect("VACUUM");
    let notices: Vec<_> = r
        .notices
        .iter()
        .map(|n| (n.severity, &*n.message))
        .collect();
    assert_eq!(
        notices,
        [(
            "WARNING",
            "skipping vacuum of \"c\" --- relation no longer exists"
        )]
    );
    // Named and dropped while the name was looked up: 42P01, as PostgreSQL.
    common::run(&mut s, "begin");
    common::run(&mut s, "drop table a");
    let vacuum = spawn(&db, "vacuum a");
    await_wait(&db, LockMode::AccessShare);
    common::run(&mut s, "commit");
    let e = vacuum.join().expect("thread").unwrap_err();
    assert_eq!(e.code.code(), "42P01", "{e}");
    assert!(db.locks.is_empty(), "every lock was released");
}

#[test]
fn ddl_after_a_concurrent_vacuum_or_analyze_finds_no_conflict() {
    let (_d, db) = common::open(1024);
    tables(&db, &["a", "b", "c", "d"]);
    let mut a = db.session();
    let mut b = db.session();
    // A snapshot older than the maintenance's commits.
    common::run(&mut a, "begin isolation level repeatable read");
    common::run(&mut a, "select count(*) from d");
    common::run(&mut b, "vacuum a");
    common::run(&mut b, "analyze b");
    common::run(&mut b, "vacuum analyze c");
    common::run(&mut a, "drop table a");
    common::run(&mut a, "truncate b");
    common::run(&mut a, "alter table c add constraint c_v unique (v)");
    common::run(&mut a, "commit");
    common::run(&mut b, "vacuum");
    assert_eq!(
        common::one_text(&mut b, "select count(*) from b"),
        "0",
        "TRUNCATE committed"
    );
    let e = b.execute("select 1 from a").unwrap_err();
    assert_eq!(e.code.code(), "42P01", "{e}");
}

#[test]
fn analyze_in_a_block_keeps_its_table_locked_to_the_end() {
    let (_d, db) = common::open(1024);
    tables(&db, &["a", "b"]);
    let mut s = db.session();
    common::run(&mut s, "begin");
    common::run(&mut s, "analyze");
    let owner_locks = |db: &Database| {
        let mut m: Vec<_> = db
            .locks
            .status()
            .into_iter()
            .filter(|l| l.granted && matches!(l.tag, LockTag::Relation(_)))
            .map(|l| l.mode)
            .collect();
        m.sort_by_key(|m| m.name());
        m
    };
    assert_eq!(
        owner_locks(&db),
        [
            LockMode::ShareUpdateExclusive,
            LockMode::ShareUpdateExclusive
        ]
    );
    let dropper = spawn(&db, "drop table a");
    await_wait(&db, LockMode::AccessExclusive);
    assert!(!dropper.is_finished(), "DROP waits for the block's ANALYZE");
    common::run(&mut s, "commit");
    assert_eq!(
        dropper.join().expect("thread").expect("DROP").tag,
        "DROP TABLE"
    );
}

#[test]
fn a_name_taken_after_the_snapshot_is_taken() {
    let (_d, db) = common::open(512);
    let mut a = db.session();
    let mut b = db.session();
    common::run(&mut a, "create table u (x int)");
    common::run(&mut a, "begin isolation level repeatable read");
    common::run(&mut a, "select count(*) from u");
    common::run(&mut b, "create table x (i int)");
    common::run(&mut b, "create view vx as select 1 as one");
    common::run(&mut b, "create table y (i int)");
    let e = a.execute("create table x (i int)").unwrap_err();
    assert_eq!(e.code.code(), "42P07", "{e}");
    assert_eq!(e.message, "relation \"x\" already exists");
    common::run(&mut a, "rollback");
    common::run(&mut a, "begin isolation level repeatable read");
    common::run(&mut a, "select count(*) from u");
    common::run(&mut b, "create table z (i int)");
    let e = a.execute("create view z as select 1 as one").unwrap_err();
    assert_eq!(e.code.code(), "42P07", "{e}");
    common::run(&mut a, "rollback");
    // One table of each name.
    let n = b.list_tables().expect("list").len();
    assert_eq!(n, 4, "u, x, y, z");
}
