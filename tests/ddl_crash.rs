//! DDL across a crash (`Database::crash`: the log's unflushed buffer, the
//! pool's dirty pages and the commit log's unwritten pages are lost):
//!
//! - a table loaded, checkpointed, changed, vacuumed and then dropped or
//!   truncated before the crash: the database opens again (redo skips the
//!   heap and visibility-map records of the dropped file instead of
//!   replaying them into a recreated, zero-filled one);
//! - TRUNCATE and DROP TABLE committed with `synchronous_commit = off` and
//!   lost with the log's tail: the old file is still there and holds every
//!   committed row (a commit that drops files flushes its record before
//!   the unlink, as PostgreSQL's `RecordTransactionCommit` does).

use heapdb::{Database, Session};

mod common;
use common::{one_text, run, text};

/// Loads `t`, checkpoints, changes it and vacuums it: the log after the
/// checkpoint holds inserts that initialise new pages, deletes, and
/// all-visible and visibility-map records of `t`'s older pages.
fn load_and_vacuum(s: &mut Session) {
    run(s, "create table t (id int, v text)");
    run(
        s,
        "insert into t select g, repeat('x', 30) from generate_series(1, 20000) g",
    );
    run(s, "checkpoint");
    run(
        s,
        "insert into t select g, 'more' from generate_series(20001, 25000) g",
    );
    // Only the new pages change: VACUUM then sets the old ones all-visible
    // with records that carry no page image.
    run(s, "delete from t where id > 24000");
    run(s, "vacuum t");
}

fn crash_after(ddl: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    {
        let db = Database::open(dir.path()).expect("open");
        let mut s = db.session();
        run(&mut s, "create table keep (id int)");
        run(&mut s, "insert into keep select generate_series(1, 100)");
        load_and_vacuum(&mut s);
        run(&mut s, ddl);
        run(&mut s, "insert into keep values (101)");
        db.crash();
    }
    let db = Database::open(dir.path()).unwrap_or_else(|e| panic!("{ddl}: reopen: {e}"));
    let mut s = db.session();
    assert_eq!(
        one_text(&mut s, "select count(*) from keep"),
        "101",
        "{ddl}"
    );
    if ddl.starts_with("truncate") {
        assert_eq!(one_text(&mut s, "select count(*) from t"), "0", "{ddl}");
        run(&mut s, "insert into t values (1, 'a')");
        assert_eq!(one_text(&mut s, "select count(*) from t"), "1", "{ddl}");
    } else {
        assert!(s.execute("select * from t").is_err(), "{ddl}: t is gone");
    }
    // The database opens again after another crash with nothing new.
    drop(s);
    db.crash();
    Database::open(dir.path()).unwrap_or_else(|e| panic!("{ddl}: second reopen: {e}"));
}

#[test]
fn drop_after_vacuum_then_crash_opens_again() {
    crash_after("drop table t");
}

#[test]
fn truncate_after_vacuum_then_crash_opens_again() {
    crash_after("truncate t");
}

/// A table dropped in the same log stretch it was created in (its create
/// record is replayed, then its rows, then the drop).
#[test]
fn create_fill_drop_then_crash_opens_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    {
        let db = Database::open(dir.path()).expect("open");
        let mut s = db.session();
        run(&mut s, "checkpoint");
        load_and_vacuum(&mut s);
        run(&mut s, "truncate t");
        run(
            &mut s,
            "insert into t select g, 'again' from generate_series(1, 3000) g",
        );
        run(&mut s, "vacuum t");
        run(&mut s, "drop table t");
        db.crash();
    }
    Database::open(dir.path()).expect("reopen");
}

/// TRUNCATE or DROP committed asynchronously, then a crash: either the
/// statement survived, or the table is whole. Never an empty or missing
/// table whose catalog entry still stands.
fn async_ddl_then_crash(ddl: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    {
        let db = Database::open(dir.path()).expect("open");
        let mut s = db.session();
        run(&mut s, "create table t (id int)");
        run(&mut s, "insert into t select generate_series(1, 5000)");
        run(&mut s, "checkpoint");
        run(&mut s, "set synchronous_commit = off");
        run(&mut s, ddl);
        db.crash();
    }
    let db = Database::open(dir.path()).unwrap_or_else(|e| panic!("{ddl}: reopen: {e}"));
    let mut s = db.session();
    match s.execute("select count(*) from t") {
        Ok(r) => {
            let n = text(&r.rows[0][0]);
            if ddl.starts_with("truncate") {
                assert!(n == "0" || n == "5000", "{ddl}: {n} rows");
            } else {
                assert_eq!(
                    n, "5000",
                    "{ddl}: the drop was undone, the rows must be there"
                );
            }
        }
        Err(e) => {
            assert!(
                ddl.starts_with("drop") && e.message.contains("does not exist"),
                "{ddl}: {e}"
            );
        }
    }
}

#[test]
fn async_truncate_then_crash_keeps_committed_rows() {
    async_ddl_then_crash("truncate t");
}

#[test]
fn async_drop_then_crash_keeps_committed_rows() {
    async_ddl_then_crash("drop table t");
}

/// The same inside a transaction block that also inserts into another
/// table: the block is all or nothing.
#[test]
fn async_block_with_truncate_is_atomic() {
    let dir = tempfile::tempdir().expect("temp dir");
    {
        let db = Database::open(dir.path()).expect("open");
        let mut s = db.session();
        run(&mut s, "create table t (id int)");
        run(&mut s, "create table u (id int)");
        run(&mut s, "insert into t select generate_series(1, 3000)");
        run(&mut s, "checkpoint");
        run(&mut s, "set synchronous_commit = off");
        run(&mut s, "begin");
        run(&mut s, "insert into u values (1)");
        run(&mut s, "truncate t");
        run(&mut s, "insert into t values (7)");
        run(&mut s, "commit");
        db.crash();
    }
    let db = Database::open(dir.path()).expect("reopen");
    let mut s = db.session();
    let t = one_text(
        &mut s,
        "select count(*) || ':' || coalesce(max(id), 0) from t",
    );
    let u = one_text(&mut s, "select count(*) from u");
    assert!(
        (t == "3000:3000" && u == "0") || (t == "1:7" && u == "1"),
        "t {t}, u {u}"
    );
}

const CHILD_ENV: &str = "HEAPDB_DDL_CRASH_CHILD";

fn base_files(dir: &std::path::Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(dir.join("base"))
        .expect("base/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect()
}

/// The child of `files_of_a_transaction_cut_off_by_a_crash_are_removed`:
/// leaves a transaction that created files open, makes its create records
/// durable through another session's commit, and waits to be killed.
#[test]
#[ignore = "run as a child process by the test below"]
fn open_transaction_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let db = Database::open(&dir).expect("open");
    let mut s = db.session();
    run(&mut s, "begin");
    run(&mut s, "create table gone (id int)");
    run(&mut s, "insert into gone select generate_series(1, 5000)");
    run(&mut s, "truncate keep");
    run(&mut s, "insert into keep values (1)");
    let mut s2 = db.session();
    run(&mut s2, "insert into side values (1)");
    println!("ready");
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// A transaction that created files (CREATE TABLE, TRUNCATE's new file)
/// and was cut off by a crash: recovery aborts it and removes its files,
/// as its abort would have; the old file of the table it truncated stays.
#[test]
fn files_of_a_transaction_cut_off_by_a_crash_are_removed() {
    let dir = tempfile::tempdir().expect("temp dir");
    {
        let db = Database::open(dir.path()).expect("open");
        let mut s = db.session();
        run(&mut s, "create table keep (id int)");
        run(&mut s, "create table side (id int)");
        run(&mut s, "insert into keep select generate_series(1, 100)");
        run(&mut s, "checkpoint");
    }
    let before = base_files(dir.path());
    let mut child = common::child_test("open_transaction_child", CHILD_ENV, dir.path())
        .spawn()
        .expect("spawn");
    let ready = common::Lines::of(&mut child).until(|l| l.ends_with("ready"));
    let during = base_files(dir.path());
    let stderr = common::kill9(child);
    assert!(ready, "the child failed: {stderr}");
    assert!(during.len() > before.len(), "the child created files");
    let db = Database::open(dir.path()).expect("reopen");
    let mut s = db.session();
    assert_eq!(one_text(&mut s, "select count(*) from keep"), "100");
    assert_eq!(one_text(&mut s, "select count(*) from side"), "1");
    assert!(s.execute("select * from gone").is_err());
    assert_eq!(base_files(dir.path()), before, "files left: {during:?}");
}

/// Commits that write the catalog at the same time (DDL in one session,
/// VACUUM storing statistics in another): each succeeds, and after a
/// crash the catalog holds every committed table. Two writers once shared
/// one temporary file: a commit could fail with `No such file or
/// directory`, or the older catalog be renamed over the newer one.
#[test]
fn concurrent_catalog_writes_keep_every_committed_table() {
    let dir = tempfile::tempdir().expect("temp dir");
    let n = 300;
    {
        let db = Database::open(dir.path()).expect("open");
        run(&mut db.session(), "create table s (x int)");
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        run(&mut db.session(), "create table s2 (x int)");
        let vacuums: Vec<_> = ["s", "s2"]
            .into_iter()
            .map(|t| {
                let (db, done) = (db.clone(), done.clone());
                std::thread::spawn(move || {
                    let mut s = db.session();
                    let mut i = 0;
                    while !done.load(std::sync::atomic::Ordering::Acquire) {
                        i += 1;
                        run(&mut s, &format!("insert into {t} values ({i})"));
                        run(&mut s, &format!("vacuum {t}"));
                    }
                })
            })
            .collect();
        let mut s = db.session();
        for i in 0..n {
            run(&mut s, &format!("create table a{i} (x int)"));
            run(&mut s, &format!("insert into a{i} values ({i})"));
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        for v in vacuums {
            v.join().expect("vacuum thread");
        }
        drop(s);
        db.crash();
    }
    let db = Database::open(dir.path()).expect("reopen");
    let mut s = db.session();
    for i in 0..n {
        assert_eq!(
            one_text(&mut s, &format!("select x from a{i}")),
            i.to_string()
        );
    }
}

/// A visibility-map file left without its main fork (a crash between the
/// two unlinks of a dropped relation, or after the files of a create whose
/// record never reached the log) does not stop later CREATE TABLEs: a new
/// relation takes an oid none of whose files exist.
#[test]
fn a_stray_visibility_map_file_does_not_block_create_table() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Database::open(dir.path()).expect("open");
    let mut s = db.session();
    run(&mut s, "create table first (id int)");
    let path = one_text(&mut s, "select pg_relation_filepath('first')");
    let next: u32 = path.trim_start_matches("base/").parse::<u32>().unwrap() + 1;
    for k in 0..3 {
        std::fs::write(dir.path().join(format!("base/{}_vm", next + k)), b"").unwrap();
    }
    run(&mut s, "create table second (id int)");
    run(&mut s, "insert into second select generate_series(1, 10)");
    run(&mut s, "truncate second");
    run(&mut s, "insert into second values (7)");
    assert_eq!(one_text(&mut s, "select sum(id) from second"), "7");
}
