//! VACUUM of tables with indexes (PostgreSQL's two passes): dead tuples'
//! line pointers are left DEAD by the first pass, their index entries are
//! bulk-deleted, then the second pass frees them and sets the pages'
//! visibility-map bits. Checked through `bt_index_check` (structure, and
//! every visible heap tuple found through the index by key and TID), the
//! index's entry count against the live rows (no stale entry left, so none
//! can name a reused line pointer), `heap_page_items`, the visibility map,
//! the reuse of the freed space and VERBOSE's lines in PostgreSQL 15's shape.
//! Index pages emptied by VACUUM are deleted and reused: a delete-all /
//! reinsert loop keeps the indexes' sizes bounded, and an open snapshot
//! keeps deleted pages from being reused until it ends. Entries an index
//! scan finds pointing at dead tuples are marked, and an insert removes
//! them rather than split the leaf.

use heapdb::types::Value;
use heapdb::{QueryResult, Session};

mod common;
use common::{run, texts};

fn int(s: &mut Session, sql: &str) -> i64 {
    match &run(s, sql).rows[0][0] {
        Value::Int8(v) => *v,
        Value::Int4(v) => *v as i64,
        Value::Null => 0,
        v => panic!("{sql}: not an integer: {v:?}"),
    }
}

/// The VERBOSE body lines.
fn verbose_lines(r: &QueryResult) -> Vec<String> {
    r.notices
        .iter()
        .flat_map(|n| n.message.lines())
        .map(str::to_string)
        .collect()
}

/// The number at word `word` of the VERBOSE line starting with `prefix`.
fn figure(r: &QueryResult, prefix: &str, word: usize) -> u64 {
    let lines = verbose_lines(r);
    let line = lines
        .iter()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line {prefix:?} in {lines:?}"));
    line.split_whitespace()
        .nth(word)
        .and_then(|w| w.trim_end_matches(',').parse().ok())
        .unwrap_or_else(|| panic!("no figure at word {word} of {line:?}"))
}

/// (index entries, heap tuples found through the index) of `bt_index_check`.
fn check(s: &mut Session, index: &str) -> (i64, i64) {
    let r = texts(s, &format!("select * from bt_index_check('{index}')"));
    (r[0][0].parse().unwrap(), r[0][2].parse().unwrap())
}

/// Every index holds exactly one entry per live row: all found by
/// `bt_index_check` (key and TID) and no other entry left.
fn indexes_hold_exactly_the_rows(s: &mut Session, indexes: &[&str], rows: i64) {
    for ix in indexes {
        assert_eq!(check(s, ix), (rows, rows), "{ix}");
    }
}

fn line_pointers(s: &mut Session, t: &str, flag: &str) -> i64 {
    let pages = int(s, &format!("select relation_pages('{t}')"));
    (0..pages)
        .map(|b| {
            int(
                s,
                &format!(
                    "select count(*) from heap_page_items('{t}', {b}) where lp_flags = '{flag}'"
                ),
            )
        })
        .sum()
}

/// `index "name": pages: N in total, N newly deleted, N currently deleted,
/// N reusable`, word by word as PostgreSQL 15 prints it.
fn assert_index_line(line: &str, name: &str) {
    let w: Vec<&str> = line.split_whitespace().collect();
    let quoted = format!("\"{name}\":");
    let shape = [
        "index",
        &quoted,
        "pages:",
        "#",
        "in",
        "total,",
        "#",
        "newly",
        "deleted,",
        "#",
        "currently",
        "deleted,",
        "#",
        "reusable",
    ];
    assert_eq!(w.len(), shape.len(), "{line}");
    for (got, want) in w.iter().zip(shape) {
        if want == "#" {
            assert!(got.trim_end_matches(',').parse::<u64>().is_ok(), "{line}");
        } else {
            assert_eq!(*got, want, "{line}");
        }
    }
}

#[test]
fn vacuum_frees_dead_rows_of_an_indexed_table_and_their_entries() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "create table a (id int primary key, v int, f text)");
    run(&mut s, "create index a_v on a (v)");
    run(
        &mut s,
        "insert into a select g, g % 97, repeat('x', 40) from generate_series(1, 20000) g",
    );
    // Same-page updates: heap-only versions, each with its own entries.
    run(&mut s, "update a set f = 'u' where id % 50 = 1");
    run(&mut s, "update a set v = v + 1 where id % 50 = 1");
    run(&mut s, "delete from a where id % 10 = 0");
    let pages = int(&mut s, "select relation_pages('a')");
    let r = run(&mut s, "vacuum verbose a");
    let lines = verbose_lines(&r);
    assert!(lines[1].ends_with("index scans: 1"), "{lines:?}");
    // 2000 deleted rows and 2 * 400 old versions.
    assert_eq!(figure(&r, "tuples:", 1), 2800, "{lines:?}");
    assert_eq!(figure(&r, "tuples:", 3), 18000);
    let dead_pages = figure(&r, "index scan needed:", 3) as i64;
    assert!(dead_pages > 0 && dead_pages <= pages, "{lines:?}");
    assert_eq!(figure(&r, "index scan needed:", 11), 2800);
    let ix_lines: Vec<&String> = lines.iter().filter(|l| l.starts_with("index \"")).collect();
    assert_eq!(ix_lines.len(), 2, "{lines:?}");
    assert_index_line(ix_lines[0], "a_pkey");
    assert_index_line(ix_lines[1], "a_v");
    // PostgreSQL's order: the index lines follow "index scan needed".
    let at = |p: &str| lines.iter().position(|l| l.starts_with(p)).unwrap();
    assert_eq!(at("index \"a_pkey\""), at("index scan needed:") + 1);
    assert_eq!(at("avg read rate:"), at("index \"a_v\"") + 1);
    assert!(figure(&r, "index \"a_pkey\":", 3) > 1);
    // The same state as a vacuumed table without indexes: no DEAD line
    // pointer left, every page all-visible with its live count.
    assert_eq!(line_pointers(&mut s, "a", "DEAD"), 0);
    assert_eq!(line_pointers(&mut s, "a", "NORMAL"), 18000);
    let pages = int(&mut s, "select relation_pages('a')");
    let with_rows = (0..pages)
        .filter(|b| {
            int(
                &mut s,
                &format!(
                    "select count(*) from heap_page_items('a', {b}) where lp_flags = 'NORMAL'"
                ),
            ) > 0
        })
        .count();
    let vm = texts(
        &mut s,
        "select count(*) filter (where all_visible), sum(live_tuples) from heap_visibility_map('a')",
    );
    assert_eq!(vm[0], vec![with_rows.to_string(), "18000".to_string()]);
    indexes_hold_exactly_the_rows(&mut s, &["a_pkey", "a_v"], 18000);

    // The freed line pointers and space take new rows, whose keys the
    // indexes find; deleted keys are free again, live ones still unique.
    run(
        &mut s,
        "insert into a select g, g % 97, repeat('y', 40) from generate_series(20001, 22000) g",
    );
    assert_eq!(
        int(&mut s, "select relation_pages('a')"),
        pages,
        "space reused"
    );
    run(
        &mut s,
        "insert into a values (10, 1, 'again'), (20, 2, 'again')",
    );
    let e = s
        .execute("insert into a values (11, 0, 'dup')")
        .expect_err("11 is live");
    assert_eq!(e.code.code(), "23505");
    indexes_hold_exactly_the_rows(&mut s, &["a_pkey", "a_v"], 20002);
    assert_eq!(
        texts(&mut s, "select f from a where id in (10, 51) order by id"),
        vec![vec!["again".to_string()], vec!["u".to_string()]]
    );

    // The failed insert left a dead tuple and its entries; then nothing.
    let r = run(&mut s, "vacuum verbose a");
    assert!(verbose_lines(&r)[1].ends_with("index scans: 1"));
    assert_eq!(figure(&r, "tuples:", 1), 1);
    indexes_hold_exactly_the_rows(&mut s, &["a_pkey", "a_v"], 20002);
    let r = run(&mut s, "vacuum verbose a");
    assert!(verbose_lines(&r)[1].ends_with("index scans: 0"));
    assert!(!verbose_lines(&r).iter().any(|l| l.starts_with("index \"")));
    assert_eq!(figure(&r, "index scan not needed:", 12), 0);
}

#[test]
fn dead_tuples_beyond_maintenance_work_mem_take_several_index_scans() {
    let (_d, db) = common::open(4096);
    let mut s = db.session();
    run(&mut s, "create table b (id int primary key)");
    run(&mut s, "insert into b select generate_series(1, 300000)");
    run(&mut s, "delete from b where id % 3 <> 0");
    run(&mut s, "set maintenance_work_mem = '1MB'");
    let r = run(&mut s, "vacuum verbose b");
    // 1 MB holds 131,072 TIDs here: 200,000 dead ones take two rounds (as
    // PostgreSQL's 174,762 six-byte TIDs do).
    assert!(
        verbose_lines(&r)[1].ends_with("index scans: 2"),
        "{:?}",
        verbose_lines(&r)
    );
    assert_eq!(figure(&r, "tuples:", 1), 200_000);
    assert_eq!(figure(&r, "index scan needed:", 11), 200_000);
    assert_eq!(line_pointers(&mut s, "b", "DEAD"), 0);
    indexes_hold_exactly_the_rows(&mut s, &["b_pkey"], 100_000);
    assert_eq!(
        int(&mut s, "select count(*) from b where id % 3 = 0"),
        100_000
    );
    // Emptied pages at the end are cut off.
    run(&mut s, "delete from b where id > 150000");
    let before = int(&mut s, "select relation_pages('b')");
    let r = run(&mut s, "vacuum verbose b");
    assert!(figure(&r, "pages:", 1) > 0, "{:?}", verbose_lines(&r));
    assert!(int(&mut s, "select relation_pages('b')") < before);
    indexes_hold_exactly_the_rows(&mut s, &["b_pkey"], 50_000);
}

#[test]
fn an_open_snapshot_keeps_the_rows_and_entries_it_can_see() {
    let (_d, db) = common::open(2048);
    let mut a = db.session();
    let mut b = db.session();
    run(&mut a, "create table c (id int primary key, v text)");
    run(
        &mut a,
        "insert into c select g, 'v' || g from generate_series(1, 5000) g",
    );
    run(&mut b, "begin isolation level repeatable read");
    assert_eq!(int(&mut b, "select count(*) from c"), 5000);
    run(&mut a, "delete from c where id <= 2500");
    let r = run(&mut a, "vacuum verbose c");
    assert_eq!(figure(&r, "tuples:", 1), 0, "nothing removable");
    assert!(verbose_lines(&r)[1].ends_with("index scans: 0"));
    assert_eq!(int(&mut b, "select count(*) from c"), 5000);
    run(&mut b, "commit");
    let r = run(&mut a, "vacuum verbose c");
    assert_eq!(figure(&r, "tuples:", 1), 2500);
    assert!(verbose_lines(&r)[1].ends_with("index scans: 1"));
    indexes_hold_exactly_the_rows(&mut a, &["c_pkey"], 2500);
    // Aborted inserts are dead too, entries and all.
    run(&mut a, "begin");
    run(
        &mut a,
        "insert into c select g, 'x' from generate_series(1, 1000) g",
    );
    run(&mut a, "rollback");
    let r = run(&mut a, "vacuum verbose c");
    assert_eq!(figure(&r, "tuples:", 1), 1000);
    indexes_hold_exactly_the_rows(&mut a, &["c_pkey"], 2500);
    run(&mut a, "insert into c values (1, 'back')");
    indexes_hold_exactly_the_rows(&mut a, &["c_pkey"], 2501);
}

#[test]
fn vacuum_of_an_indexed_table_runs_beside_writers() {
    let (_d, db) = common::open(1024);
    let mut s = db.session();
    run(&mut s, "create table w (id int primary key, v int, f text)");
    run(&mut s, "create index w_v on w (v)");
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let mut w = db.session();
            for round in 0..60i64 {
                let lo = round * 300;
                run(
                    &mut w,
                    &format!(
                        "insert into w select g, g % 13, repeat('w', 30) from generate_series({lo}, {}) g",
                        lo + 299
                    ),
                );
                run(
                    &mut w,
                    &format!("delete from w where id % 3 = 0 and id < {lo}"),
                );
                run(&mut w, "update w set f = 'u' where id % 7 = 1");
            }
        })
    };
    for _ in 0..25 {
        run(&mut s, "set max_parallel_maintenance_workers = 2");
        run(&mut s, "vacuum w");
    }
    writer.join().expect("writer");
    run(&mut s, "vacuum w");
    let rows = int(&mut s, "select count(*) from w");
    assert_eq!(
        rows,
        int(
            &mut s,
            "select count(*) from w where id % 3 <> 0 or id >= 17700"
        )
    );
    assert_eq!(rows, 18000 - 5900);
    indexes_hold_exactly_the_rows(&mut s, &["w_pkey", "w_v"], rows);
}

/// `index "name": pages: T in total, N newly deleted, D currently deleted,
/// R reusable` as (T, N, D, R).
fn index_pages(r: &QueryResult, name: &str) -> (u64, u64, u64, u64) {
    let p = format!("index \"{name}\":");
    (
        figure(r, &p, 3),
        figure(r, &p, 6),
        figure(r, &p, 9),
        figure(r, &p, 12),
    )
}

#[test]
fn delete_all_vacuum_and_reinsert_keeps_index_files_bounded() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "create table q (id int primary key, v int, f text)");
    run(&mut s, "create index q_v on q (v)");
    let mut sizes = Vec::new();
    for round in 0..8 {
        // Each round's keys lie right of the last ones: no emptied leaf
        // would take them by key.
        let from = round * 20_000;
        run(
            &mut s,
            &format!(
                "insert into q select g, g, 'r' from generate_series({from}, {}) g",
                from + 19_999
            ),
        );
        for ix in ["q_pkey", "q_v"] {
            run(&mut s, &format!("select bt_index_parent_check('{ix}')"));
            assert_eq!(check(&mut s, ix), (20_000, 20_000), "round {round}: {ix}");
        }
        run(&mut s, "delete from q");
        let r = run(&mut s, "vacuum verbose q");
        let (total, newly, deleted, reusable) = index_pages(&r, "q_pkey");
        assert!(newly > 0, "round {round}: nothing deleted");
        assert!(deleted >= newly && reusable <= deleted, "round {round}");
        // No other transaction runs: every page deleted by an earlier
        // VACUUM is reusable (this one's own snapshot keeps its pages).
        assert_eq!(reusable, deleted - newly, "round {round}");
        for ix in ["q_pkey", "q_v"] {
            run(&mut s, &format!("select bt_index_parent_check('{ix}')"));
            assert_eq!(check(&mut s, ix), (0, 0), "round {round}: {ix}");
        }
        sizes.push(total);
    }
    // A round's index is ~60 pages; without page deletion every round
    // added as many again. Pages deleted in one round are reused from the
    // round after the next on, so the file settles at about two rounds.
    assert!(sizes[1] < sizes[0] * 5 / 2, "{sizes:?}");
    assert!(sizes[7] <= sizes[1] + sizes[1] / 4, "{sizes:?}");
}

#[test]
fn an_open_snapshot_keeps_deleted_index_pages_from_reuse() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "create table w (id int primary key)");
    run(
        &mut s,
        "insert into w select g from generate_series(1, 20000) g",
    );
    run(&mut s, "delete from w where id < 19000");
    // A snapshot taken after the delete: the rows are dead to it, but it
    // could be reading the index pages VACUUM is about to delete.
    let mut reader = db.session();
    run(&mut reader, "begin isolation level repeatable read");
    run(&mut reader, "select count(*) from w");
    let r = run(&mut s, "vacuum verbose w");
    let (_, newly, deleted, reusable) = index_pages(&r, "w_pkey");
    assert!(newly > 0 && deleted == newly);
    assert_eq!(reusable, 0);
    run(&mut reader, "commit");
    // (A VACUUM with no dead rows does no index cleanup.)
    run(&mut s, "delete from w where id in (19500, 19501)");
    let r = run(&mut s, "vacuum verbose w");
    let (_, newly, deleted2, reusable) = index_pages(&r, "w_pkey");
    assert_eq!((newly, deleted2, reusable), (0, deleted, deleted));
    run(
        &mut s,
        "insert into w select g from generate_series(20001, 40000) g",
    );
    run(&mut s, "select bt_index_parent_check('w_pkey')");
    assert_eq!(check(&mut s, "w_pkey"), (20_999, 20_999));
}

#[test]
fn scans_mark_dead_entries_and_inserts_remove_them_before_splitting() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "create table u (id int primary key, w int, n int)");
    // Same key in every version and never scanned: nothing marks its
    // entries, so it shows the growth without opportunistic deletion.
    run(&mut s, "create index u_w on u (w)");
    // An index on the updated column: every update is a new root with
    // entries in every index (no HOT).
    run(&mut s, "create index u_n on u (n)");
    run(
        &mut s,
        "insert into u select g, g, 0 from generate_series(1, 2000) g",
    );
    run(&mut s, "set enable_seqscan = off");
    for _round in 0..12 {
        for id in (1..=2000).step_by(7).chain((2..=2000).step_by(7)) {
            run(&mut s, &format!("update u set n = n + 1 where id = {id}"));
        }
    }
    for ix in ["u_pkey", "u_w"] {
        run(&mut s, &format!("select bt_index_parent_check('{ix}')"));
        let (entries, heap) = check(&mut s, ix);
        assert_eq!(heap, 2000, "{ix}");
        assert!(entries >= 2000, "{ix}");
    }
    let r = run(&mut s, "vacuum verbose u");
    let (pk, _, _, _) = index_pages(&r, "u_pkey");
    let (w, _, _, _) = index_pages(&r, "u_w");
    // 2000 rows and 8,864 versions: the primary key, whose lookups mark
    // the old versions' entries, stays well below the other index (13
    // pages against 34 when written; both start at 6).
    println!("u_pkey {pk} pages, u_w {w} pages");
    assert!(pk * 2 < w, "u_pkey {pk} pages, u_w {w} pages");
    for ix in ["u_pkey", "u_w"] {
        assert_eq!(check(&mut s, ix), (2000, 2000), "{ix}");
    }
    let sum = int(&mut s, "select sum(n) from u");
    assert_eq!(sum, 12 * (286 + 286));
}
