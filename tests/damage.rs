//! Damaged, missing or locked files are refused, never guessed around: the
//! shell stops with an error naming the file and what is wrong, exits
//! non-zero, and writes nothing. A torn log tail (the normal end of the
//! log) is still accepted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use heapdb::storage::control::ControlFile;
use heapdb::wal::record::ANY_PREV;
use heapdb::wal::segment::{seg_name, SegmentReader, SEG_SIZE};
use heapdb::Database;

mod common;

/// Runs the shell on `dir` with one `-c` command: (exit code, stdout, stderr).
fn shell(dir: &Path, sql: &str) -> (i32, String, String) {
    let (out, err, code) = common::output_texts(common::shell(dir, &["-c", sql], ""));
    (code, out, err)
}

/// Every file under `dir` but the lock file, with its contents.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().unwrap() != "lock" {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// A cleanly shut down database with table `t` of 1000 rows.
fn made() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = shell(
        dir.path(),
        "CREATE TABLE t (a int, b text); \
         INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 1000) g; CHECKPOINT;",
    );
    assert_eq!(code, 0, "{err}");
    dir
}

/// Damages `dir` with `damage`, then checks the shell refuses it with
/// every one of `want` in its error output, exits non-zero, and leaves
/// every file as it was.
fn refused(dir: &Path, want: &[&str]) {
    let before = files(dir);
    let (code, out, err) = shell(dir, "SELECT count(*) FROM t");
    assert_ne!(code, 0, "opened a damaged database: {out}");
    for w in want {
        assert!(err.contains(w), "{w:?} not in error output:\n{err}");
    }
    let after = files(dir);
    let changed: Vec<_> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert!(changed.is_empty(), "a refused open changed {changed:?}");
}

fn count(dir: &Path) -> String {
    let (code, out, err) = shell(dir, "SELECT count(*) FROM t");
    assert_eq!(code, 0, "{err}");
    out.lines().nth(2).unwrap().trim().to_string()
}

#[test]
fn a_new_directory_initialises_and_an_emptied_one_too() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("new/deeper");
    let (code, _, err) = shell(&sub, "CREATE TABLE t (a int)");
    assert_eq!(code, 0, "{err}");
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = shell(empty.path(), "CREATE TABLE t (a int)");
    assert_eq!(code, 0, "{err}");
    // A directory with files but no control file is not new.
    let (code, _, err) = shell(dir.path(), "CREATE TABLE t (a int)");
    assert_eq!(code, 1);
    assert!(err.contains("control"), "{err}");
}

#[test]
fn missing_control_file_is_refused() {
    let d = made();
    std::fs::remove_file(d.path().join("control")).unwrap();
    refused(d.path(), &["control", "No such file or directory"]);
}

#[test]
fn damaged_control_file_is_refused() {
    let d = made();
    let p = d.path().join("control");
    let mut b = std::fs::read(&p).unwrap();
    b[9] ^= 0x10;
    std::fs::write(&p, &b).unwrap();
    refused(d.path(), &["incorrect checksum in control file", "control"]);
}

#[test]
fn missing_catalog_is_refused() {
    let d = made();
    std::fs::remove_file(d.path().join("catalog")).unwrap();
    refused(d.path(), &["catalog", "No such file or directory"]);
}

#[test]
fn damaged_catalog_is_refused() {
    let d = made();
    let p = d.path().join("catalog");
    let text = std::fs::read_to_string(&p).unwrap();
    // A changed type: int4 becomes int8, a valid catalog but for the CRC.
    let changed = text.replacen(" int4 ", " int8 ", 1);
    assert_ne!(changed, text);
    std::fs::write(&p, changed).unwrap();
    refused(d.path(), &["incorrect checksum in catalog file", "catalog"]);
}

#[test]
fn missing_commit_log_segment_is_refused() {
    let d = made();
    std::fs::remove_file(d.path().join("xact/0000")).unwrap();
    refused(d.path(), &["xact/0000", "No such file or directory"]);
}

#[test]
fn zeroed_commit_log_segment_is_refused() {
    let d = made();
    let p = d.path().join("xact/0000");
    let len = std::fs::metadata(&p).unwrap().len() as usize;
    std::fs::write(&p, vec![0u8; len]).unwrap();
    refused(d.path(), &["xact/0000", "is damaged"]);
}

#[test]
fn damaged_heap_page_fails_the_statement_reading_it() {
    let d = made();
    let rel = std::fs::read_dir(d.path().join("base"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .find(|n| n.chars().all(|c| c.is_ascii_digit()))
        .unwrap();
    let p = d.path().join("base").join(&rel);
    let mut b = std::fs::read(&p).unwrap();
    b[8000] ^= 0x01;
    std::fs::write(&p, &b).unwrap();
    let (code, _, err) = shell(d.path(), "SELECT count(*) FROM t");
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("invalid page in block 0 of relation base/{rel}")),
        "{err}"
    );
}

/// A database whose last run crashed after many committed statements,
/// and the start of every record its log holds after the redo point.
fn crashed() -> (tempfile::TempDir, Vec<(u64, u64)>) {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        let mut s = db.session();
        s.execute("CREATE TABLE t (a int, b text)").unwrap();
        s.execute("CHECKPOINT").unwrap();
        for i in 0..40 {
            s.execute(&format!("INSERT INTO t VALUES ({i}, 'x{i}')"))
                .unwrap();
        }
        db.crash();
    }
    let ctl = ControlFile::open(dir.path()).unwrap().data();
    let mut rd = SegmentReader::new(&dir.path().join("wal"), ctl.redo_lsn, ANY_PREV);
    let mut recs = Vec::new();
    while let Some(r) = rd.next_record().unwrap() {
        recs.push((r.start, r.end));
    }
    assert!(recs.len() > 40, "{}", recs.len());
    (dir, recs)
}

fn flip(dir: &Path, lsn: u64) {
    let p = dir.join("wal").join(seg_name(lsn / SEG_SIZE));
    let mut b = std::fs::read(&p).unwrap();
    b[(lsn % SEG_SIZE) as usize] ^= 0x40;
    std::fs::write(&p, &b).unwrap();
}

#[test]
fn wal_damaged_in_the_middle_is_refused_naming_the_lsn() {
    // A changed payload byte (the length still right).
    let (d, recs) = crashed();
    let (start, end) = recs[recs.len() / 2];
    flip(d.path(), end - 1);
    refused(
        d.path(),
        &[
            &format!("invalid WAL record at {}", heapdb::wal::lsn_text(start)),
            "incorrect record checksum",
        ],
    );
    // A changed length: the next record is not where it says.
    let (d, recs) = crashed();
    let (start, _) = recs[recs.len() / 3];
    flip(d.path(), start + 2);
    refused(
        d.path(),
        &[&format!(
            "invalid WAL record at {}",
            heapdb::wal::lsn_text(start)
        )],
    );
}

#[test]
fn torn_wal_tail_is_the_end_of_the_log() {
    let (d, recs) = crashed();
    // The last record torn: everything before it is kept.
    let (start, end) = *recs.last().unwrap();
    flip(d.path(), start + (end - start) / 2);
    let n: i64 = count(d.path()).parse().unwrap();
    assert!((39..=40).contains(&n), "{n}");
    // And the database goes on.
    let (code, _, err) = shell(d.path(), "INSERT INTO t VALUES (100, 'y')");
    assert_eq!(code, 0, "{err}");
}

#[test]
fn missing_wal_is_refused() {
    let d = made();
    for e in std::fs::read_dir(d.path().join("wal")).unwrap().flatten() {
        std::fs::remove_file(e.path()).unwrap();
    }
    refused(d.path(), &["could not locate a valid checkpoint record"]);
}

#[test]
fn deleting_the_lock_file_does_not_let_a_second_process_in() {
    let d = made();
    let db = Database::open(d.path()).unwrap();
    std::fs::remove_file(d.path().join("lock")).unwrap();
    let (code, _, err) = shell(d.path(), "INSERT INTO t VALUES (1, 'second')");
    assert_eq!(code, 1);
    assert!(err.contains("is in use by another heapdb process"), "{err}");
    drop(db);
    assert_eq!(count(d.path()), "1000");
}
