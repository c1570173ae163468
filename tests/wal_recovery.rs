//! Crash recovery in one process: `Database::crash` drops a database as a
//! kill would (no checkpoint, the log's buffer and dirty pages lost), and
//! the next open replays the log.
//!
//! - committed rows survive, uncommitted and rolled-back rows never appear;
//! - a torn heap page (half overwritten on disk) is restored from its
//!   full-page image;
//! - a crash after redo wrote pages but before its checkpoint, then a
//!   second recovery, gives the same state as one recovery;
//! - with `synchronous_commit = off` every transaction is all or nothing,
//!   also when a checkpoint fell between its changes and its lost commit;
//! - dropped tables stay dropped, created ones exist after redo.

use std::path::Path;

use heapdb::{Database, QueryResult, Session};

mod common;
use common::run;

fn rows(s: &mut Session, sql: &str) -> Vec<String> {
    let r: QueryResult = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// The largest main-fork file in `base/` (the test's one table).
fn main_file(dir: &Path) -> std::path::PathBuf {
    std::fs::read_dir(dir.join("base"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .expect("a table file")
}

#[test]
fn committed_rows_survive_a_crash_and_uncommitted_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    run(&mut s, "CREATE TABLE t (id int, v text)");
    run(
        &mut s,
        "INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 2000) g",
    );
    run(&mut s, "UPDATE t SET v = 'updated' WHERE id % 10 = 0");
    run(&mut s, "DELETE FROM t WHERE id % 7 = 0");
    run(&mut s, "BEGIN");
    run(&mut s, "INSERT INTO t VALUES (-1, 'rolled back')");
    run(&mut s, "ROLLBACK");
    let mut open_txn = db.session();
    run(&mut open_txn, "BEGIN");
    run(
        &mut open_txn,
        "INSERT INTO t VALUES (-2, 'never committed')",
    );
    run(&mut open_txn, "UPDATE t SET v = 'never' WHERE id = 1");
    let before = rows(
        &mut s,
        "SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'updated') FROM t",
    );
    // Dropping the session ends its transaction at most with an abort
    // record that the crash loses: either way it never committed.
    drop(open_txn);
    drop(s);
    db.crash();

    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    assert_eq!(
        rows(
            &mut s,
            "SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'updated') FROM t"
        ),
        before
    );
    assert_eq!(rows(&mut s, "SELECT v FROM t WHERE id = 1"), vec!["row 1"]);
    assert!(rows(&mut s, "SELECT id FROM t WHERE id < 0").is_empty());
    // New writes work and survive a clean restart.
    run(&mut s, "INSERT INTO t VALUES (5000, 'after')");
    drop(s);
    drop(db);
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    assert_eq!(
        rows(&mut s, "SELECT v FROM t WHERE id = 5000"),
        vec!["after"]
    );
}

#[test]
fn a_torn_page_is_restored_from_its_full_page_image() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    run(&mut s, "CREATE TABLE t (id int, v int)");
    run(
        &mut s,
        "INSERT INTO t SELECT g, g FROM generate_series(1, 3000) g",
    );
    run(&mut s, "CHECKPOINT");
    // The first change to each page after the checkpoint logs its image.
    run(&mut s, "UPDATE t SET v = v + 1 WHERE id % 3 = 0");
    let fpis = rows(&mut s, "SELECT fpi FROM wal_stats()");
    assert_ne!(fpis, vec!["0"]);
    // Make sure block 1 reaches disk in its new state, then crash.
    db.pool.flush_all().unwrap();
    drop(s);
    db.crash();
    // Tear block 1: its second half becomes garbage.
    let path = main_file(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    for b in &mut bytes[8192 + 4096..8192 * 2] {
        *b = 0xAB;
    }
    std::fs::write(&path, &bytes).unwrap();

    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    assert_eq!(
        rows(&mut s, "SELECT count(*), sum(v) FROM t"),
        vec![format!("3000|{}", 3000 * 3001 / 2 + 1000)]
    );
}

/// Builds a crashed database: two tables, one dropped, committed and
/// aborted work, a transaction left open.
fn crashed_database(dir: &Path) {
    let db = Database::open(dir).unwrap();
    let mut s = db.session();
    run(&mut s, "CREATE TABLE t (id int, v text)");
    run(&mut s, "CREATE TABLE gone (x int)");
    run(
        &mut s,
        "INSERT INTO gone SELECT g FROM generate_series(1, 500) g",
    );
    run(&mut s, "CHECKPOINT");
    run(
        &mut s,
        "INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 5000) g",
    );
    run(&mut s, "UPDATE t SET v = v || '!' WHERE id % 4 = 1");
    run(&mut s, "DELETE FROM t WHERE id % 9 = 0");
    run(&mut s, "DROP TABLE gone");
    run(&mut s, "CREATE TABLE u (a int)");
    run(&mut s, "INSERT INTO u VALUES (1), (2), (3)");
    run(&mut s, "BEGIN");
    run(&mut s, "DELETE FROM u WHERE a = 2");
    run(&mut s, "ROLLBACK");
    drop(s);
    db.crash();
}

fn state(dir: &Path) -> Vec<String> {
    let db = Database::open(dir).unwrap();
    let mut s = db.session();
    let mut out = rows(&mut s, "SELECT id, v FROM t ORDER BY id");
    out.extend(rows(&mut s, "SELECT a FROM u ORDER BY a"));
    assert!(
        s.execute("SELECT * FROM gone").is_err(),
        "the dropped table stays dropped"
    );
    out
}

#[test]
fn a_crash_during_recovery_then_recovery_again_gives_the_same_state() {
    let a = tempfile::tempdir().unwrap();
    crashed_database(a.path());
    let b = tempfile::tempdir().unwrap();
    copy_dir(a.path(), b.path());
    // Recover `a` with a tiny pool (pages are written back during redo),
    // write every replayed page, then "crash" before the end-of-recovery
    // checkpoint: the control file still points at the old redo point.
    {
        use heapdb::storage::control::ControlFile;
        use heapdb::storage::BufferPool;
        use heapdb::txn::TxnManager;
        use std::sync::{Arc, Mutex};
        let (control, _) = ControlFile::open_or_create(a.path()).unwrap();
        let ctl = control.data();
        assert!(!ctl.clean_shutdown);
        let pool = BufferPool::open(a.path(), 16).unwrap();
        let txns = TxnManager::open(a.path(), Arc::new(Mutex::new(control))).unwrap();
        let r =
            heapdb::wal::recovery::redo(&a.path().join("wal"), ctl.redo_lsn, &pool, txns.clog())
                .unwrap();
        assert!(r.applied > 10, "{r:?}");
        pool.flush_all().unwrap();
        assert!(pool.stats().shared_written > 0);
    }
    let (sa, sb) = (state(a.path()), state(b.path()));
    assert_eq!(sa.len(), 5000 - 555 + 3);
    assert_eq!(sa, sb);
    assert!(sa.contains(&"5|v5!".to_string()));
}

#[test]
fn asynchronous_commits_lost_in_a_crash_are_lost_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    run(&mut s, "CREATE TABLE g (grp int, n int)");
    run(&mut s, "SET synchronous_commit = off");
    for grp in 0..400 {
        run(&mut s, "BEGIN");
        run(
            &mut s,
            &format!("INSERT INTO g VALUES ({grp}, 1), ({grp}, 2)"),
        );
        run(&mut s, &format!("INSERT INTO g VALUES ({grp}, 3)"));
        run(
            &mut s,
            &format!("UPDATE g SET n = n + 10 WHERE grp = {grp} AND n = 2"),
        );
        run(&mut s, "COMMIT");
        if grp == 200 {
            // Readers see the async commits; their hints wait for the flush.
            assert_eq!(rows(&mut s, "SELECT count(*) FROM g"), vec!["603"]);
        }
    }
    drop(s);
    db.crash();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    let per_group = rows(
        &mut s,
        "SELECT grp, count(*), sum(n) FROM g GROUP BY grp ORDER BY grp",
    );
    for (i, r) in per_group.iter().enumerate() {
        assert_eq!(
            r,
            &format!("{i}|3|16"),
            "every transaction whole, and a prefix of them"
        );
    }
}

#[test]
fn an_asynchronous_commit_lost_after_a_checkpoint_is_lost_whole() {
    // The transaction logs half of its rows, a checkpoint moves the redo
    // point past them (and writes them to disk), then the other half and
    // the commit record stay in the log's buffer while the commit-log entry
    // (written at commit) reaches the file: recovery must abort it, not
    // leave the first half committed.
    for round in 0..4 {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path()).unwrap();
        let mut s = db.session();
        run(&mut s, "CREATE TABLE h (a int)");
        run(&mut s, "SET synchronous_commit = off");
        run(&mut s, "BEGIN");
        run(&mut s, "INSERT INTO h VALUES (1), (2)");
        db.checkpoint().unwrap();
        run(&mut s, "INSERT INTO h VALUES (3)");
        run(&mut s, "COMMIT");
        let wal = db.wal.clone();
        let commit_end = wal.insert_lsn();
        drop(s);
        db.crash();
        // The background flusher (every 200 ms) may have made it durable.
        let durable = wal.flushed_lsn() >= commit_end;
        drop(wal);
        let db = Database::open(dir.path()).unwrap();
        let mut s = db.session();
        assert_eq!(
            rows(&mut s, "SELECT count(*) FROM h"),
            vec![if durable { "3" } else { "0" }],
            "round {round}: all or nothing (commit record durable: {durable})"
        );
    }
}

#[test]
fn a_table_created_and_loaded_in_one_transaction_skips_the_log_and_survives() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    let before = rows(&mut s, "SELECT records FROM wal_stats()");
    run(&mut s, "BEGIN");
    run(&mut s, "CREATE TABLE big (id int, v text)");
    run(
        &mut s,
        "INSERT INTO big SELECT g, 'x' || g FROM generate_series(1, 20000) g",
    );
    run(&mut s, "UPDATE big SET v = 'y' WHERE id <= 10");
    run(&mut s, "COMMIT");
    let after = rows(&mut s, "SELECT records FROM wal_stats()");
    let logged = after[0].parse::<i64>().unwrap() - before[0].parse::<i64>().unwrap();
    assert!(
        logged < 10,
        "{logged} records for a table filled in its own transaction"
    );
    // Later changes by other transactions are logged (with page images).
    run(&mut s, "DELETE FROM big WHERE id > 19990");
    run(&mut s, "BEGIN");
    run(&mut s, "CREATE TABLE lost (a int)");
    run(&mut s, "INSERT INTO lost VALUES (1)");
    drop(s);
    db.crash();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    assert_eq!(
        rows(
            &mut s,
            "SELECT count(*), count(*) FILTER (WHERE v = 'y') FROM big"
        ),
        vec!["19990|10"]
    );
    assert!(s.execute("SELECT * FROM lost").is_err());
}

/// The 16 MiB segment files in `wal/` (recycled spares not counted).
fn segments(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("wal"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().len() == 16)
        .count()
}

#[test]
fn checkpoints_keep_the_log_directory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    run(&mut s, "CREATE TABLE t (a int, b int, c int, d int)");
    // About 24 MB of log: more than one segment.
    run(
        &mut s,
        "INSERT INTO t SELECT g, g, g, g FROM generate_series(1, 1000000) g",
    );
    assert!(segments(dir.path()) >= 2);
    run(&mut s, "CHECKPOINT");
    assert_eq!(segments(dir.path()), 1, "segments before the redo point go");
    let stats = rows(
        &mut s,
        "SELECT checkpoints, insert_lsn = redo_lsn FROM wal_stats()",
    );
    assert_eq!(stats, vec!["1|f"]);
    // A clean shutdown leaves nothing to redo; the data is all there.
    drop(s);
    drop(db);
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    assert_eq!(
        rows(&mut s, "SELECT count(*), sum(d) FROM t"),
        vec!["1000000|500000500000"]
    );
}
