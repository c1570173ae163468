//! A full disk, for real: a small tmpfs (skipped with a printed reason when
//! it cannot be mounted). The statement that needs space fails with
//! `could not extend file ...: No space left on device` (53100), the session
//! goes on reading, shutdown and a later open (after a clean shutdown or a
//! crash) work while the disk is still full, and once space is freed writes
//! work again with nothing lost.

use std::path::{Path, PathBuf};
use std::process::Command;

use heapdb::error::SqlState;
use heapdb::Database;

mod common;
use common::{open_dir, run};

/// A tmpfs mounted on a temporary directory; unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            Ok(o) => {
                eprintln!(
                    "skipped: cannot mount a tmpfs: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount: {e}");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Fills the file system holding `dir` with a file of allocated blocks;
/// returns its path (remove it to free the space).
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let f = std::fs::File::create(&path).unwrap();
    let mut len = 0u64;
    for chunk in [1u64 << 20, 4096] {
        while heapdb::storage::reserve::allocate(&f, len, chunk).is_ok() {
            len += chunk;
        }
    }
    assert!(len > 0);
    path
}

fn count(db: &Database, sql: &str) -> i64 {
    common::one_text(&mut db.session(), sql).parse().unwrap()
}

/// Inserts batches until one fails; returns the rows committed and the
/// error.
fn insert_until_full(db: &Database) -> (i64, heapdb::error::Error) {
    let mut s = db.session();
    let mut rows = 0;
    for i in 0..10_000 {
        match s.execute(&format!(
            "INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series({}, {}) g",
            i * 500,
            i * 500 + 499
        )) {
            Ok(_) => rows += 500,
            Err(e) => return (rows, e),
        }
    }
    panic!("the disk never filled");
}

#[test]
fn a_full_disk_fails_the_statement_and_nothing_else() {
    let Some(fs) = Tmpfs::mount("40m") else {
        return;
    };
    let data = fs.path().join("db");
    let db = open_dir(&data);
    let mut s = db.session();
    run(&mut s, "CREATE TABLE t (a int, b text)");
    run(
        &mut s,
        "INSERT INTO t SELECT g, 'x' FROM generate_series(1, 1000) g",
    );
    drop(s);
    db.checkpoint().unwrap();
    let filler = fill(fs.path());
    let (rows, e) = insert_until_full(&db);
    assert_eq!(e.code, SqlState::DiskFull, "{e:?}");
    assert_eq!(e.code.code(), "53100");
    assert!(
        e.message.starts_with("could not extend file \"base/")
            && e.message.ends_with("\": No space left on device"),
        "{}",
        e.message
    );
    // The session goes on reading, and the failed statement left nothing.
    let expect = 1000 + rows;
    assert_eq!(count(&db, "SELECT count(*) FROM t"), expect);
    // A clean shutdown and an open while the disk is still full.
    db.close().unwrap();
    let db = open_dir(&data);
    assert_eq!(count(&db, "SELECT count(*) FROM t"), expect);
    // A crash and recovery, still full.
    db.crash();
    let db = open_dir(&data);
    assert_eq!(count(&db, "SELECT count(*) FROM t"), expect);
    // Space freed: writes work again, nothing lost.
    std::fs::remove_file(&filler).unwrap();
    run(
        &mut db.session(),
        "INSERT INTO t SELECT g, 'y' FROM generate_series(1, 5000) g",
    );
    db.close().unwrap();
    let db = open_dir(&data);
    assert_eq!(count(&db, "SELECT count(*) FROM t"), expect + 5000);
    db.close().unwrap();
}

/// A commit whose log write fails (the log needs a new segment on a full
/// disk) stops the instance, as PostgreSQL PANICs: the commit fails with
/// the write's error, no later statement of any session runs (so none can
/// see the transaction's rows), shutdown fails, and reopening after space
/// is freed recovers from what is on disk: the commit record never got
/// there, so the rows are not there either.
#[test]
fn a_failed_log_write_at_commit_stops_the_instance_until_recovery() {
    const SEG: u64 = 16 << 20;
    let Some(fs) = Tmpfs::mount("48m") else {
        return;
    };
    let data = fs.path().join("db");
    let db = open_dir(&data);
    let mut s = db.session();
    for sql in [
        "CREATE TABLE t (a int, b text)",
        "INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 3000) g",
        // Free space in existing pages: the failing commit's INSERT needs
        // no new heap space.
        "CREATE TABLE u (a int, b text)",
        "INSERT INTO u SELECT g, repeat('x', 100) FROM generate_series(1, 3000) g",
        "DELETE FROM u",
        "VACUUM u",
    ] {
        run(&mut s, sql);
    }
    db.checkpoint().unwrap();
    let filler = fill(fs.path());
    // The log can grow to the end of its current segment and of each spare
    // file; past that it needs space the disk no longer has.
    let spares = std::fs::read_dir(data.join("wal"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("spare.")
        })
        .count() as u64;
    let limit = (db.wal.stats().insert_lsn / SEG + 1 + spares) * SEG;
    // Log volume without new heap space: deletes rolled back (~30kB each),
    // up to 200kB before the limit.
    while db.wal.stats().insert_lsn + (200 << 10) < limit {
        for sql in ["BEGIN", "DELETE FROM t WHERE a <= 600", "ROLLBACK"] {
            run(&mut s, sql);
        }
    }
    // Its records (~340kB) cross into the segment that cannot be
    // allocated; the commit's flush writes them.
    let e = s
        .execute("INSERT INTO u SELECT a, b FROM t")
        .expect_err("the commit's log write fails");
    assert_eq!(e.code, SqlState::DiskFull, "{e:?}");
    assert!(
        e.message.starts_with("could not write to file \"")
            && e.message.ends_with("\": No space left on device"),
        "{}",
        e.message
    );
    // No statement runs any more, in this session or a new one.
    for mut session in [s, db.session()] {
        let later = session
            .execute("SELECT count(*) FROM u")
            .expect_err("the instance stopped");
        assert_eq!((later.code, &later.message), (e.code, &e.message));
        assert!(later.hint.is_some_and(|h| h.contains("Reopen")));
    }
    let shutdown = db.close().expect_err("the shutdown fails too");
    assert_eq!(shutdown.message, e.message);
    // Space freed: recovery decides from the disk. The commit record was
    // never written (the write failed at the segment it needed), so the
    // rows are not there; the rolled-back deletes changed nothing.
    std::fs::remove_file(&filler).unwrap();
    let db = open_dir(&data);
    assert_eq!(count(&db, "SELECT count(*) FROM u"), 0);
    assert_eq!(count(&db, "SELECT count(*) FROM t"), 3000);
    // And it works again, across a clean shutdown.
    run(&mut db.session(), "INSERT INTO u SELECT a, b FROM t");
    db.close().unwrap();
    let db = open_dir(&data);
    assert_eq!(count(&db, "SELECT count(*) FROM u"), 3000);
    db.close().unwrap();
}
