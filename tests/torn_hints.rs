//! Torn writes of hint-only changes (format version 2: the page checksum
//! leaves hint bits and `PD_ALL_VISIBLE` out, `storage::checksum`).
//!
//! Hint bits set by readers and VACUUM's "hints + all-visible" after a load
//! log no full-page image, so a crash that tears such a write has nothing in
//! the log to repair the page with. Each test writes pages in their old and
//! new states, tears them on disk (every block a different mix of the two
//! states' 512-byte sectors), reopens and checks that every row is there:
//!
//! - VACUUM after a load, crash before any checkpoint (redo replays its
//!   `SetAllVisible` / `VmSet` records onto the torn pages);
//! - hint bits set by a scan, written out, a checkpoint, crash (nothing to
//!   replay: the torn pages are read as they are);
//! - the control case: a torn *real* change (a delete) with no image after
//!   the redo point is still caught by the checksum (XX001), never read as
//!   rows;
//! - page summaries, whose pages are never logged whole: a torn summary
//!   page is re-initialised by redo (its slots not rewritten after the redo
//!   point then read as "nothing known"), never patched, and every answer
//!   from summaries agrees with a full scan.

use std::path::{Path, PathBuf};

use heapdb::types::Value;
use heapdb::{Database, Session};

mod common;
use common::run;

const BLCKSZ: usize = 8192;
const SECTOR: usize = 512;

fn one(s: &mut Session, sql: &str) -> String {
    let mut out = String::new();
    match &run(s, sql).rows[0][0] {
        Value::Null => out.push_str("NULL"),
        v => heapdb::types::format_value(v, &mut out),
    }
    out
}

/// The largest main-fork file in `base/` (the test's one table).
fn main_file(dir: &Path) -> PathBuf {
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

/// Writes over `path` a torn mix of `old` and `new`: block `b` takes sector
/// `s` from `new` when bit `s` of a mask particular to `b` is set. Returns
/// how many blocks got a real mix (some sectors from each state, differing).
fn tear(path: &Path, old: &[u8], new: &[u8]) -> usize {
    assert_eq!(old.len(), new.len());
    let mut out = new.to_vec();
    let mut mixed = 0;
    for b in 0..old.len() / BLCKSZ {
        // Alternating, half-and-half, header-only-old and header-only-new
        // masks, and a few pseudo-random ones.
        let masks = [
            0x5555u32,
            0xaaaa,
            0x00ff,
            0xff00,
            0xfffe,
            0x0001,
            (b as u32).wrapping_mul(0x9e37_79b9) >> 16,
        ];
        let mask = masks[b % masks.len()];
        let mut differ = (false, false);
        for s in 0..BLCKSZ / SECTOR {
            let at = b * BLCKSZ + s * SECTOR;
            let (o, n) = (&old[at..at + SECTOR], &new[at..at + SECTOR]);
            if mask & (1 << s) == 0 {
                out[at..at + SECTOR].copy_from_slice(o);
                differ.0 |= o != n;
            } else {
                differ.1 |= o != n;
            }
        }
        mixed += (differ.0 && differ.1) as usize;
    }
    std::fs::write(path, &out).unwrap();
    mixed
}

/// count, sum and a digest of the rows, through a full scan.
fn contents(s: &mut Session) -> String {
    one(
        s,
        "select count(*) || ' ' || sum(id) || ' ' || sum(id * length(v)) from t where id >= 0",
    )
}

fn load(s: &mut Session) {
    run(s, "create table t (id int, v text)");
    run(
        s,
        "insert into t select g, repeat('x', 10 + g % 40) from generate_series(1, 6000) g",
    );
}

#[test]
fn a_torn_vacuum_after_load_is_a_valid_page_and_redo_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let path;
    let (old, expected) = {
        let db = Database::open(dir.path()).unwrap();
        let mut s = db.session();
        load(&mut s);
        run(&mut s, "checkpoint");
        path = main_file(dir.path());
        let old = std::fs::read(&path).unwrap();
        let fpis = one(&mut s, "select fpi from wal_stats()");
        run(&mut s, "vacuum t");
        let images: i64 = one(&mut s, "select fpi from wal_stats()")
            .parse::<i64>()
            .unwrap()
            - fpis.parse::<i64>().unwrap();
        // The VM page is the only page VACUUM may log whole after a load:
        // heap pages are only hinted, and summary pages are never logged
        // whole (their slots ride in the VM records).
        assert!(
            images <= 1,
            "VACUUM after a load logged {images} images (the VM page's 1 at most)"
        );
        assert_eq!(
            one(
                &mut s,
                "select count(*) from heap_visibility_map('t') where not all_visible"
            ),
            "0"
        );
        let expected = contents(&mut s);
        // The new states reach disk; the crash loses nothing else (the
        // records are in the log's buffer or on disk, either is fine).
        db.pool.flush_all().unwrap();
        drop(s);
        db.crash();
        (old, expected)
    };
    let new = std::fs::read(&path).unwrap();
    assert_ne!(old, new, "VACUUM's hint bits were written");
    let mixed = tear(&path, &old, &new);
    assert!(mixed > 10, "only {mixed} blocks really torn");

    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    assert_eq!(contents(&mut s), expected);
    assert_eq!(one(&mut s, "select count(*) from t"), "6000");
    // Every page the map calls all-visible says so itself.
    let pages = one(&mut s, "select relation_pages('t')");
    for b in 0..pages.parse::<u32>().unwrap() {
        let vm = one(
            &mut s,
            &format!("select all_visible from heap_visibility_map('t') where blkno = {b}"),
        );
        if vm == "t" {
            let flags = one(
                &mut s,
                &format!("select flag_names from page_header('t', {b})"),
            );
            assert!(flags.contains("ALL_VISIBLE"), "block {b}: {flags}");
        }
    }
    run(&mut s, "vacuum t");
    assert_eq!(contents(&mut s), expected);
}

#[test]
fn torn_hint_bits_of_a_scan_read_back_after_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let path;
    let (old, expected) = {
        let db = Database::open(dir.path()).unwrap();
        let mut s = db.session();
        load(&mut s);
        run(&mut s, "checkpoint");
        path = main_file(dir.path());
        let old = std::fs::read(&path).unwrap();
        // A scan sets the hint bits; they are written out (no hint floor
        // any more) by the checkpoint, and nothing is logged for them.
        let expected = contents(&mut s);
        let before = one(&mut s, "select bytes from wal_stats()");
        run(&mut s, "checkpoint");
        let after: i64 = one(&mut s, "select bytes from wal_stats()")
            .parse()
            .unwrap();
        assert!(
            after - before.parse::<i64>().unwrap() < 200,
            "hint bits logged nothing but the checkpoint record"
        );
        drop(s);
        db.crash();
        (old, expected)
    };
    let new = std::fs::read(&path).unwrap();
    assert_ne!(old, new, "the scan's hint bits were written");
    let mixed = tear(&path, &old, &new);
    assert!(mixed > 10, "only {mixed} blocks really torn");
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    assert_eq!(contents(&mut s), expected);
}

#[test]
fn a_torn_real_change_without_an_image_is_still_caught() {
    let dir = tempfile::tempdir().unwrap();
    let path;
    let old = {
        let db = Database::open(dir.path()).unwrap();
        let mut s = db.session();
        load(&mut s);
        run(&mut s, "checkpoint");
        path = main_file(dir.path());
        let old = std::fs::read(&path).unwrap();
        run(&mut s, "delete from t where id % 10 = 0");
        // The checkpoint writes the deletes and moves the redo point past
        // their images: a torn page now has nothing to be restored from.
        run(&mut s, "checkpoint");
        drop(s);
        db.crash();
        old
    };
    let new = std::fs::read(&path).unwrap();
    tear(&path, &old, &new);
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    // Page summaries could answer the count without reading the torn page.
    s.execute("set enable_page_summaries = off").unwrap();
    let e = s
        .execute("select count(*) from t where id >= 0")
        .unwrap_err();
    assert_eq!(e.code.code(), "XX001", "{e}");
    assert!(e.message.starts_with("invalid page in block"), "{e}");
}

/// The page-summary file (`_sum`) of the test's one table.
fn summary_file(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir.join("base"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("_sum"))
        })
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .expect("a summary file")
}

/// EXPLAIN ANALYZE's `Summaries:` figures of `q`: (answered, scanned).
fn summary_figures(s: &mut Session, q: &str) -> (u64, u64) {
    let r = run(s, &format!("explain analyze {q}"));
    let lines: Vec<String> = common::rows_text(&r)
        .into_iter()
        .map(|r| r.join(" "))
        .collect();
    let line = lines
        .iter()
        .find_map(|l| l.trim().strip_prefix("Summaries: "))
        .unwrap_or_else(|| panic!("no Summaries line: {lines:#?}"))
        .to_string();
    let fig = |name: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {line}"))
    };
    (fig("answered"), fig("scanned"))
}

const SUMMARY_QUERIES: [&str; 3] = [
    "select count(*), sum(a), min(a), max(a), sum(b), min(id), max(id) from p",
    "select count(*), sum(b) from p where a >= 100",
    "select sum(id), count(a) from p where id between 5000 and 31000",
];

/// Each query's rows with page summaries off (a full scan).
fn scanned_answers(s: &mut Session) -> Vec<Vec<Vec<String>>> {
    run(s, "set enable_page_summaries = off");
    let out = SUMMARY_QUERIES
        .iter()
        .map(|q| common::rows_text(&run(s, q)))
        .collect();
    run(s, "set enable_page_summaries = on");
    out
}

#[test]
fn a_torn_summary_page_is_re_initialised_by_redo_never_patched() {
    let dir = tempfile::tempdir().unwrap();
    let path;
    let (old, expected) = {
        let db = Database::open(dir.path()).unwrap();
        let mut s = db.session();
        run(&mut s, "create table p (id int, a int, b int8, v text)");
        run(
            &mut s,
            "insert into p select g, g % 1000 - 500, g::int8 * 3, 'x' from generate_series(1, 40000) g",
        );
        run(&mut s, "vacuum p");
        // The slots reach disk; the redo point moves past their records.
        run(&mut s, "checkpoint");
        path = summary_file(dir.path());
        let old = std::fs::read(&path).unwrap();
        // Rows on some heap pages of every 32 change: VACUUM writes those
        // pages' slots again, after the redo point, into summary pages
        // whose other slots were last written before it.
        run(
            &mut s,
            "update p set a = a + 1 where id % 40 = 0 and (id / 1000) % 2 = 0",
        );
        let fpis: i64 = one(&mut s, "select fpi from wal_stats()").parse().unwrap();
        run(&mut s, "vacuum p");
        let images = one(&mut s, "select fpi from wal_stats()")
            .parse::<i64>()
            .unwrap()
            - fpis;
        let heap_pages: i64 = one(&mut s, "select relation_pages('p')").parse().unwrap();
        assert!(
            images < heap_pages / 32,
            "{images} images: summary pages were logged whole"
        );
        let expected = scanned_answers(&mut s);
        for (q, want) in SUMMARY_QUERIES.iter().zip(&expected) {
            assert_eq!(&common::rows_text(&run(&mut s, q)), want, "{q}");
        }
        db.pool.flush_all().unwrap();
        drop(s);
        db.crash();
        (old, expected)
    };
    let new = std::fs::read(&path).unwrap();
    // Pages the updates added at the end are new: written once, not torn.
    let mut old = old;
    assert!(old.len() <= new.len());
    old.extend_from_slice(&new[old.len()..]);
    let mixed = tear(&path, &old, &new);
    assert!(mixed >= 2, "only {mixed} summary pages really torn");

    // Redo reads the torn pages (their checksums fail) as zero pages,
    // initialises them and writes the slots logged after the redo point;
    // patching them would have failed here with XX001.
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    assert_eq!(scanned_answers(&mut s), expected);
    for (q, want) in SUMMARY_QUERIES.iter().zip(&expected) {
        assert_eq!(&common::rows_text(&run(&mut s, q)), want, "{q}");
    }
    // The slots rewritten after the redo point answer; the torn pages'
    // other slots are gone, so their all-visible heap pages are read.
    let (answered, scanned) = summary_figures(&mut s, SUMMARY_QUERIES[0]);
    assert!(answered > 10, "answered {answered}");
    assert!(scanned > 10, "scanned {scanned}");
    // Nothing is damaged: a checkpoint writes the re-initialised pages and
    // a second open reads them without complaint.
    run(&mut s, "checkpoint");
    drop(s);
    db.close().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    for (q, want) in SUMMARY_QUERIES.iter().zip(&expected) {
        assert_eq!(&common::rows_text(&run(&mut s, q)), want, "{q}");
    }
    // The same pages, none lost; scans since may have filled a few of the
    // missing slots (scans fill some of the summaries they lack).
    let (answered2, scanned2) = summary_figures(&mut s, SUMMARY_QUERIES[0]);
    assert_eq!(answered2 + scanned2, answered + scanned);
    assert!(
        answered2 >= answered,
        "answered {answered2} after reopening, {answered} before"
    );
}
