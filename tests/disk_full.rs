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

fn count(db: &Database) -> i64 {
    let r = db.session().execute("SELECT count(*) FROM t").unwrap();
    r.rows[0][0].to_string().parse().unwrap()
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
    let db = Database::open(&data).unwrap();
    db.session()
        .execute("CREATE TABLE t (a int, b text)")
        .unwrap();
    db.session()
        .execute("INSERT INTO t SELECT g, 'x' FROM generate_series(1, 1000) g")
        .unwrap();
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
    assert_eq!(count(&db), expect);
    // A clean shutdown and an open while the disk is still full.
    db.close().unwrap();
    let db = Database::open(&data).unwrap();
    assert_eq!(count(&db), expect);
    // A crash and recovery, still full.
    db.crash();
    let db = Database::open(&data).unwrap();
    assert_eq!(count(&db), expect);
    // Space freed: writes work again, nothing lost.
    std::fs::remove_file(&filler).unwrap();
    db.session()
        .execute("INSERT INTO t SELECT g, 'y' FROM generate_series(1, 5000) g")
        .unwrap();
    db.close().unwrap();
    let db = Database::open(&data).unwrap();
    assert_eq!(count(&db), expect + 5000);
    db.close().unwrap();
}
