//! A data directory written by format version 3 (before HOT chains with
//! indexes) opens: its tables with indexes are converted
//! (`access::heap::format3`), every index path then returns the sequential
//! scan's rows, `bt_index_check` passes, later updates are heap-only, and
//! the directory opens again as the current version.
//!
//! The fixture `tests/data/format3.tar.gz` was made by the format-3 binary
//! (main at 10d110e) running `tests/data/format3.sql` and shutting down
//! cleanly: table `h` (a primary key and an index on `k`; same-page updates
//! of indexed and unindexed columns, deletes, an aborted update), table `n`
//! (HOT chains pruned to redirects before its index was built, then
//! updates of the indexed column) and `plain` (no index).

use std::path::Path;
use std::process::Command;

use heapdb::Session;

mod common;

/// Unpacks the fixture into `dir`; returns the data directory.
fn unpack(dir: &Path) -> std::path::PathBuf {
    let archive = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/format3.tar.gz");
    let status = Command::new("tar")
        .arg("xzf")
        .arg(&archive)
        .arg("-C")
        .arg(dir)
        .status()
        .expect("tar runs");
    assert!(status.success(), "tar xzf {}", archive.display());
    dir.join("format3")
}

/// The rows of `sql` (sorted) with only the sequential scan, and with each
/// index path forced.
fn agree(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for only in ["seqscan", "indexscan", "bitmapscan", "indexonlyscan"] {
        for p in ["seqscan", "indexscan", "bitmapscan", "indexonlyscan"] {
            let on = if p == only { "on" } else { "off" };
            common::run(s, &format!("set enable_{p} = {on}"));
        }
        let mut r = common::texts(s, sql);
        r.sort();
        if only == "seqscan" {
            out = r;
        } else {
            assert_eq!(r, out, "{sql} with only {only}");
        }
    }
    for p in ["seqscan", "indexscan", "bitmapscan", "indexonlyscan"] {
        common::run(s, &format!("set enable_{p} = on"));
    }
    out
}

fn check_all(s: &mut Session) {
    for k in [0, 5, 7, 1005, 1007, 1014, 39] {
        agree(s, &format!("select id, k, v from h where k = {k}"));
    }
    for id in [3, 5, 7, 10, 11, 13, 35, 70, 299] {
        agree(s, &format!("select id, k, v from h where id = {id}"));
    }
    agree(s, "select id from h where id between 20 and 90");
    for id in [1, 4, 1004, 1008, 1100, 2, 3] {
        agree(s, &format!("select id, v from n where id = {id}"));
    }
    agree(s, "select id from n where id > 990");
    for ix in ["h_pkey", "h_k", "n_id"] {
        common::run(s, &format!("select * from bt_index_check('{ix}')"));
    }
}

#[test]
fn a_format_3_directory_opens_converted_and_stays_consistent() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = unpack(tmp.path());
    let (h, n) = {
        let db = common::open_dir(&dir);
        let mut s = db.session();
        // The fixture's sums, as the format-3 binary printed them.
        let h = common::texts(&mut s, "select count(*), sum(k), sum(v) from h");
        let n = common::texts(&mut s, "select count(*), sum(id), sum(v) from n");
        assert_eq!(h, vec![vec!["273", "99152", "455"]]);
        assert_eq!(n, vec![vec!["100", "30050", "250"]]);
        check_all(&mut s);
        assert_eq!(
            common::texts(&mut s, "select x from plain order by x"),
            vec![vec!["11"], vec!["12"]]
        );
        // Updates after the conversion: heap-only where no indexed column
        // changes, new roots where one does.
        common::run(&mut s, "update h set v = v + 1 where id % 2 = 0");
        common::run(&mut s, "update h set k = k + 1 where id % 9 = 0");
        common::run(&mut s, "update n set v = v + 1");
        common::run(&mut s, "vacuum h");
        check_all(&mut s);
        (
            common::texts(&mut s, "select count(*), sum(k), sum(v) from h"),
            common::texts(&mut s, "select count(*), sum(id), sum(v) from n"),
        )
    };
    // Opened again: already the current version, the same rows.
    let db = common::open_dir(&dir);
    let mut s = db.session();
    assert_eq!(
        common::texts(&mut s, "select count(*), sum(k), sum(v) from h"),
        h
    );
    assert_eq!(
        common::texts(&mut s, "select count(*), sum(id), sum(v) from n"),
        n
    );
    check_all(&mut s);
    let control = std::fs::read(dir.join("control")).unwrap();
    assert_eq!(u32::from_le_bytes(control[4..8].try_into().unwrap()), 4);
}
