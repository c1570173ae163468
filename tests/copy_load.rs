//! COPY FROM's page building: rows land in file order, each tuple's ctid
//! names its own place (so UPDATE and DELETE work on loaded rows), space
//! the table already has is used first, the new pages are logged as
//! compressed full-page images, and a crash after the COMMIT keeps every
//! row while a crash before it keeps none.

use std::io::Write;

use heapdb::{Database, Session};

mod common;
use common::run;

fn rows(s: &mut Session, sql: &str) -> Vec<String> {
    let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
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

fn one(s: &mut Session, sql: &str) -> String {
    rows(s, sql).remove(0)
}

/// Writes accounts rows `from..=to` (pgbench's shape) to `path`; every
/// 97th row takes the general path (an escape and a NULL).
fn accounts(path: &std::path::Path, from: u64, to: u64) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for aid in from..=to {
        if aid % 97 == 0 {
            writeln!(w, "{aid}\t\\N\t{}\tesc\\tape", aid % 13).unwrap();
        } else {
            writeln!(w, "{aid}\t{}\t{}\t", (aid - 1) / 1000 + 1, aid % 13).unwrap();
        }
    }
    w.flush().unwrap();
}

/// Like [`accounts`] with the filler written out (84 blanks, ~100 bytes a
/// row: 21,000 rows are a 2 MiB chunk of the parallel loader).
fn wide_accounts(path: &std::path::Path, from: u64, to: u64, extra: &str) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let filler = " ".repeat(84);
    for aid in from..=to {
        writeln!(w, "{aid}\t{}\t{}\t{filler}", (aid - 1) / 1000 + 1, aid % 13).unwrap();
    }
    w.write_all(extra.as_bytes()).unwrap();
    w.flush().unwrap();
}

/// Every tuple of table `t` names its own place in its ctid.
fn ctids_are_own(s: &mut Session, t: &str) {
    let pages: i64 = one(s, &format!("SELECT relation_pages('{t}')"))
        .parse()
        .unwrap();
    for b in 0..pages {
        for it in rows(
            s,
            &format!("SELECT lp, t_ctid FROM heap_page_items('{t}', {b})"),
        ) {
            let f: Vec<&str> = it.split('|').collect();
            assert_eq!(f[1], format!("({b},{})", f[0]), "block {b}: {it}");
        }
    }
}

const DDL: &str = "CREATE TABLE a (aid int NOT NULL, bid int, abalance int, filler char(84))";

#[test]
fn rows_in_file_order_with_their_own_ctids() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path().join("db")).unwrap();
    let mut s = db.session();
    run(&mut s, DDL);
    let file = dir.path().join("a.tsv");
    accounts(&file, 1, 20_000);
    assert_eq!(
        rows(&mut s, &format!("COPY a FROM '{}'", file.display())),
        Vec::<String>::new()
    );
    // File order: a sequential scan returns aid 1, 2, 3, ...
    let aids = rows(&mut s, "SELECT aid FROM a");
    assert_eq!(aids.len(), 20_000);
    assert!(aids
        .iter()
        .enumerate()
        .all(|(i, a)| *a == (i + 1).to_string()));
    assert_eq!(
        one(&mut s, "SELECT count(*) FROM a WHERE bid IS NULL"),
        (20_000 / 97).to_string()
    );
    assert_eq!(
        one(&mut s, "SELECT filler FROM a WHERE aid = 97"),
        format!("esc\tape{}", " ".repeat(77))
    );
    // COPY TO formats chunks of pages on two threads and writes them in
    // block order: the file order again.
    let mut out = Vec::new();
    s.copy_out("COPY a TO STDOUT", &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let out_aids: Vec<&str> = text
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(out_aids, aids);
    // Each tuple's ctid is its own tid, its xmax unset.
    let items = rows(
        &mut s,
        "SELECT lp, t_ctid, t_xmax FROM heap_page_items('a', 7)",
    );
    assert!(items.len() > 50, "{items:?}");
    for it in &items {
        let f: Vec<&str> = it.split('|').collect();
        assert_eq!(f[1], format!("(7,{})", f[0]), "{it}");
        assert_eq!(f[2], "0");
    }
    // So updates and deletes find the loaded rows.
    run(&mut s, "UPDATE a SET abalance = -1 WHERE aid % 1000 = 5");
    run(&mut s, "DELETE FROM a WHERE aid % 1000 = 6");
    assert_eq!(
        rows(
            &mut s,
            "SELECT count(*), sum(abalance) FROM a WHERE aid % 1000 IN (5, 6)"
        ),
        ["20|-20"]
    );
}

#[test]
fn space_the_table_has_is_used_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path().join("db")).unwrap();
    let mut s = db.session();
    run(&mut s, DDL);
    let file = dir.path().join("a.tsv");
    accounts(&file, 1, 6_000);
    run(&mut s, &format!("COPY a FROM '{}'", file.display()));
    let pages = one(&mut s, "SELECT relation_pages('a')");
    // Free every other row, then load as many again: the freed space
    // takes them, the table does not grow.
    run(&mut s, "DELETE FROM a WHERE aid % 2 = 0");
    run(&mut s, "VACUUM a");
    accounts(&file, 10_001, 13_000);
    run(&mut s, &format!("COPY a FROM '{}'", file.display()));
    assert_eq!(one(&mut s, "SELECT relation_pages('a')"), pages);
    assert_eq!(one(&mut s, "SELECT count(*) FROM a"), "6000");
    // A small load into a table whose last page has room goes there.
    run(
        &mut s,
        "CREATE TABLE b (aid int NOT NULL, bid int, abalance int, filler char(84))",
    );
    accounts(&file, 1, 10);
    run(&mut s, &format!("COPY b FROM '{}'", file.display()));
    run(&mut s, &format!("COPY b FROM '{}'", file.display()));
    assert_eq!(one(&mut s, "SELECT relation_pages('b')"), "1");
    assert_eq!(one(&mut s, "SELECT count(*) FROM b"), "20");
}

#[test]
fn new_pages_are_logged_as_images_and_survive_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("db");
    let file = dir.path().join("a.tsv");
    accounts(&file, 1, 30_000);
    {
        let db = Database::open(&data).unwrap();
        let mut s = db.session();
        run(&mut s, DDL);
        run(&mut s, "CHECKPOINT");
        let before: i64 = one(&mut s, "SELECT fpi FROM wal_stats()").parse().unwrap();
        let bytes0: i64 = one(&mut s, "SELECT bytes FROM wal_stats()")
            .parse()
            .unwrap();
        run(&mut s, &format!("COPY a FROM '{}'", file.display()));
        let pages: i64 = one(&mut s, "SELECT relation_pages('a')").parse().unwrap();
        let after: i64 = one(&mut s, "SELECT fpi FROM wal_stats()").parse().unwrap();
        let bytes1: i64 = one(&mut s, "SELECT bytes FROM wal_stats()")
            .parse()
            .unwrap();
        assert!(
            after - before >= pages,
            "{before} -> {after}, {pages} pages"
        );
        // Compressed: far less log than the pages' bytes.
        assert!(
            bytes1 - bytes0 < pages * 8192 / 3,
            "{} log bytes for {pages} pages",
            bytes1 - bytes0
        );
        // A second load, not committed when the process dies.
        let mut t = db.session();
        run(&mut t, "BEGIN");
        run(&mut t, &format!("COPY a FROM '{}'", file.display()));
        db.crash();
    }
    let db = Database::open(&data).unwrap();
    let mut s = db.session();
    assert_eq!(
        rows(&mut s, "SELECT count(*), sum(aid), count(bid) FROM a"),
        [format!(
            "30000|{}|{}",
            30_000u64 * 30_001 / 2,
            30_000 - 30_000 / 97
        )]
    );
    assert_eq!(
        one(&mut s, "SELECT filler FROM a WHERE aid = 194"),
        format!("esc\tape{}", " ".repeat(77))
    );
    run(&mut s, "UPDATE a SET abalance = -7 WHERE aid <= 100");
    assert_eq!(
        rows(
            &mut s,
            "SELECT count(*), count(*) FILTER (WHERE abalance = -7) FROM a"
        ),
        ["30000|100"]
    );
}

#[test]
fn a_file_in_many_chunks_keeps_order_lines_and_ctids() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path().join("db")).unwrap();
    let mut s = db.session();
    run(&mut s, DDL);
    let file = dir.path().join("a.tsv");
    // ~7 MB: four chunks, parsed on two threads, placed in file order.
    wide_accounts(&file, 1, 70_000, "");
    run(&mut s, &format!("COPY a FROM '{}'", file.display()));
    let aids = rows(&mut s, "SELECT aid FROM a");
    assert_eq!(aids.len(), 70_000);
    assert!(aids
        .iter()
        .enumerate()
        .all(|(i, a)| *a == (i + 1).to_string()));
    ctids_are_own(&mut s, "a");

    // A bad line in a later chunk: its own line number, nothing loaded.
    wide_accounts(&file, 1, 50_000, "x\t1\t1\tbad\n");
    let e = s
        .execute(&format!("COPY a FROM '{}'", file.display()))
        .unwrap_err();
    assert_eq!(e.message, "invalid input syntax for type integer: \"x\"");
    assert_eq!(
        e.context.as_deref(),
        Some("COPY a, line 50001, column aid: \"x\"")
    );
    assert_eq!(one(&mut s, "SELECT count(*) FROM a"), "70000");

    // The end marker in a later chunk ends the data; a header line is
    // skipped only at the start.
    let mut tail = String::from("\\.\n");
    for aid in 1..=30_000 {
        tail.push_str(&format!("{aid}\t1\t1\tafter the end\n"));
    }
    wide_accounts(&file, 0, 45_000, &tail);
    run(&mut s, "TRUNCATE a");
    run(
        &mut s,
        &format!("COPY a FROM '{}' (HEADER)", file.display()),
    );
    assert_eq!(
        rows(&mut s, "SELECT count(*), min(aid), max(aid) FROM a"),
        ["45000|1|45000"]
    );
    ctids_are_own(&mut s, "a");
}

#[test]
fn free_space_first_then_new_pages_with_their_own_ctids() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path().join("db")).unwrap();
    let mut s = db.session();
    run(&mut s, DDL);
    let file = dir.path().join("a.tsv");
    wide_accounts(&file, 1, 30_000, "");
    run(&mut s, &format!("COPY a FROM '{}'", file.display()));
    let pages: i64 = one(&mut s, "SELECT relation_pages('a')").parse().unwrap();
    run(&mut s, "DELETE FROM a WHERE aid % 3 = 0");
    run(&mut s, "VACUUM a");
    // 10,000 rows go into the freed space, the other 40,000 onto new
    // pages: the pages packed ahead for blocks the freed space made wrong
    // are placed with the right ctids.
    wide_accounts(&file, 100_001, 150_000, "");
    run(&mut s, &format!("COPY a FROM '{}'", file.display()));
    assert_eq!(one(&mut s, "SELECT count(*) FROM a"), "70000");
    let grown: i64 = one(&mut s, "SELECT relation_pages('a')").parse().unwrap();
    assert!(
        grown < pages + 40_000 / 60 + 10,
        "{pages} -> {grown} pages: the freed space was used"
    );
    ctids_are_own(&mut s, "a");
    run(&mut s, "UPDATE a SET abalance = -1 WHERE aid % 1000 = 1");
    assert_eq!(
        one(&mut s, "SELECT count(*) FROM a WHERE abalance = -1"),
        "70"
    );
}

#[test]
fn a_parallel_load_survives_a_crash_after_its_commit() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("db");
    let file = dir.path().join("a.tsv");
    wide_accounts(&file, 1, 50_000, "");
    {
        let db = Database::open(&data).unwrap();
        let mut s = db.session();
        run(&mut s, DDL);
        run(&mut s, "CHECKPOINT");
        run(&mut s, &format!("COPY a FROM '{}'", file.display()));
        db.crash();
    }
    let db = Database::open(&data).unwrap();
    let mut s = db.session();
    assert_eq!(
        rows(&mut s, "SELECT count(*), sum(aid) FROM a"),
        [format!("50000|{}", 50_000u64 * 50_001 / 2)]
    );
    ctids_are_own(&mut s, "a");
}
