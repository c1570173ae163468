//! VACUUM end to end: the four cases of the classic ring-size experiment
//! (after a bulk load, of a clean table, after hint-bit-less changes, after
//! deleting one tuple per page), each checked through `heap_page_items`,
//! `heap_visibility_map` and the statement's buffer counters; space reuse,
//! truncation, an open REPEATABLE READ snapshot, FREEZE, aborted inserts and
//! the transaction-block rule.

use heapdb::types::Value;
use heapdb::{Database, QueryResult, Session, SqlState};

mod common;
use common::{run, texts};

fn int(s: &mut Session, sql: &str) -> i64 {
    match &run(s, sql).rows[0][0] {
        Value::Int8(v) => *v,
        Value::Int4(v) => *v as i64,
        Value::Int2(v) => *v as i64,
        Value::Null => 0,
        v => panic!("{sql}: not an integer: {v:?}"),
    }
}

/// The number in the VERBOSE line starting with `prefix`, at word `word`.
fn verbose_figure(r: &QueryResult, prefix: &str, word: usize) -> u64 {
    let line = r
        .notices
        .iter()
        .flat_map(|n| n.message.lines())
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line {prefix:?} in {:?}", r.notices));
    line.split_whitespace()
        .nth(word)
        .and_then(|w| w.trim_end_matches(',').parse().ok())
        .unwrap_or_else(|| panic!("no figure at word {word} of {line:?}"))
}

/// (all-visible pages, all-frozen pages, sum of live counts, pages in the map).
fn vm_summary(s: &mut Session, t: &str) -> (i64, i64, i64, i64) {
    let r = texts(
        s,
        &format!(
            "select count(*) filter (where all_visible), count(*) filter (where all_frozen), \
             sum(live_tuples), count(*) from heap_visibility_map('{t}')"
        ),
    );
    let n = |i: usize| r[0][i].parse::<i64>().unwrap_or(0);
    (n(0), n(1), n(2), n(3))
}

fn pages(s: &mut Session, t: &str) -> i64 {
    int(s, &format!("select relation_pages('{t}')"))
}

/// Every tuple of every page has XMIN_COMMITTED set.
fn all_hinted(s: &mut Session, t: &str) -> bool {
    let n = pages(s, t);
    (0..n).all(|b| {
        texts(
            s,
            &format!("select t_flags from heap_page_items('{t}', {b}) where lp_flags = 'NORMAL'"),
        )
        .iter()
        .all(|r| r[0].contains("XMIN_COMMITTED"))
    })
}

const ROWS: i64 = 20_000;

fn load(s: &mut Session) -> (i64, i64) {
    run(s, "create table t (id int, v text)");
    run(
        s,
        &format!("insert into t select g, repeat('x', 40) from generate_series(1, {ROWS}) g"),
    );
    let n = pages(s, "t");
    let per_page = int(
        s,
        "select count(*) from heap_page_items('t', 0) where lp_flags = 'NORMAL'",
    );
    (n, per_page)
}

#[test]
fn the_four_ring_experiment_cases() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    let (n, per_page) = load(&mut s);
    assert!(n > 50, "the table spans many pages: {n}");

    // Case 1: right after the bulk load nothing is hinted or all-visible.
    assert!(texts(&mut s, "select t_flags from heap_page_items('t', 3)")
        .iter()
        .all(|r| !r[0].contains("XMIN_COMMITTED")));
    assert_eq!(vm_summary(&mut s, "t").0, 0);
    // Written out first, so that the buffers VACUUM changes count as dirtied.
    run(&mut s, "checkpoint");
    let r = run(&mut s, "vacuum verbose t");
    assert_eq!(r.tag, "VACUUM");
    assert_eq!(verbose_figure(&r, "pages:", 5) as i64, n, "scanned");
    assert_eq!(verbose_figure(&r, "tuples:", 3) as i64, ROWS, "remain");
    assert_eq!(verbose_figure(&r, "visibility map:", 2) as i64, n);
    assert!(
        r.buffers.shared_dirtied as i64 >= n,
        "every heap page got hint bits and PD_ALL_VISIBLE: {:?}",
        r.buffers
    );
    assert!(all_hinted(&mut s, "t"));
    assert_eq!(vm_summary(&mut s, "t"), (n, 0, ROWS, n));
    assert!(
        texts(&mut s, "select flag_names from page_header('t', 0)")[0][0].contains("ALL_VISIBLE")
    );

    // Case 2: the clean table: every heap page is skipped, only the VM page
    // is read.
    let r = run(&mut s, "vacuum verbose t");
    assert_eq!(verbose_figure(&r, "pages:", 5), 0, "nothing scanned");
    assert_eq!(verbose_figure(&r, "pages:", 10) as i64, n, "skipped");
    let touched = r.buffers.shared_hit + r.buffers.shared_read;
    assert!(touched <= 2, "only VM pages: {:?}", r.buffers);
    assert_eq!(r.buffers.shared_dirtied, 0);
    assert_eq!(int(&mut s, "select count(*) from t"), ROWS);

    // Case 4: delete exactly one tuple per page (the first of each page:
    // the load filled pages in id order), then every page is pruned and
    // all-visible again.
    let r = run(
        &mut s,
        &format!("delete from t where (id - 1) % {per_page} = 0"),
    );
    assert_eq!(r.tag, format!("DELETE {n}"));
    assert_eq!(vm_summary(&mut s, "t").0, 0, "deletes clear the VM bits");
    let r = run(&mut s, "vacuum verbose t");
    assert_eq!(verbose_figure(&r, "tuples:", 1) as i64, n, "removed");
    assert_eq!(verbose_figure(&r, "pages:", 5) as i64, n, "scanned");
    assert_eq!(
        verbose_figure(&r, "index scan not needed:", 4) as i64,
        n,
        "every page pruned"
    );
    for b in [0, n / 2, n - 1] {
        let items = texts(
            &mut s,
            &format!("select lp, lp_flags from heap_page_items('t', {b}) order by lp"),
        );
        assert_eq!(items[0][1], "UNUSED", "block {b}: {:?}", &items[..2]);
        assert!(items[1..].iter().all(|i| i[1] == "NORMAL"));
    }
    assert_eq!(vm_summary(&mut s, "t"), (n, 0, ROWS - n, n));
    assert_eq!(int(&mut s, "select count(*) from t"), ROWS - n);

    // Case 3: changes whose tuples carry no hint bits yet (new rows and
    // updated versions, never read): vacuumed pages get hints, the old
    // versions go, and everything ends all-visible.
    run(
        &mut s,
        "insert into t select g, 'new' from generate_series(100001, 105000) g",
    );
    run(&mut s, "update t set v = 'upd' where id % 97 = 0");
    let updated = int(&mut s, "select count(*) from t where v = 'upd'");
    let before = vm_summary(&mut s, "t").0;
    assert!(before < n, "updated pages lost their bit");
    let r = run(&mut s, "vacuum verbose t");
    assert_eq!(
        verbose_figure(&r, "tuples:", 1) as i64,
        updated,
        "old versions removed"
    );
    let total = int(&mut s, "select count(*) from t");
    assert_eq!(total, ROWS - n + 5000);
    let after = pages(&mut s, "t");
    assert_eq!(vm_summary(&mut s, "t"), (after, 0, total, after));
    assert!(all_hinted(&mut s, "t"));
}

#[test]
fn freed_space_is_reused_and_empty_tail_pages_are_truncated() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    let (n, _) = load(&mut s);
    run(&mut s, "delete from t where id % 2 = 0");
    run(&mut s, "vacuum t");
    assert_eq!(pages(&mut s, "t"), n, "half-empty pages stay");
    run(
        &mut s,
        &format!(
            "insert into t select g, repeat('y', 40) from generate_series(1, {}) g",
            ROWS / 2
        ),
    );
    assert_eq!(pages(&mut s, "t"), n, "the new rows went into freed space");
    assert_eq!(int(&mut s, "select count(*) from t"), ROWS);

    // Delete the last half of a table: the file shrinks.
    run(&mut s, "delete from t");
    run(&mut s, "vacuum t");
    assert_eq!(pages(&mut s, "t"), 0, "every page was empty");
    run(
        &mut s,
        &format!("insert into t select g, repeat('x', 40) from generate_series(1, {ROWS}) g"),
    );
    let full = pages(&mut s, "t");
    assert_eq!(full, n);
    run(&mut s, &format!("delete from t where id > {}", ROWS / 2));
    let r = run(&mut s, "vacuum verbose t");
    let shrunk = pages(&mut s, "t");
    assert!(
        shrunk <= full / 2 + 1 && shrunk >= full / 2 - 1,
        "{full} -> {shrunk} pages"
    );
    assert_eq!(verbose_figure(&r, "pages:", 1) as i64, full - shrunk);
    assert_eq!(
        int(&mut s, "select relation_size('t')"),
        shrunk * 8192,
        "the file is shorter"
    );
    assert_eq!(int(&mut s, "select count(*) from t"), ROWS / 2);
    assert_eq!(int(&mut s, "select max(id) from t"), ROWS / 2);
    // The map covers no block past the end.
    assert!(vm_summary(&mut s, "t").3 <= shrunk);
    run(&mut s, "insert into t values (1, 'after')");
    assert_eq!(int(&mut s, "select count(*) from t"), ROWS / 2 + 1);

    run(&mut s, "insert into t values (-7, 'again')");
    assert_eq!(int(&mut s, "select count(*) from t where id = -7"), 1);
}

#[test]
fn an_open_repeatable_read_snapshot_keeps_its_rows() {
    let (_d, db) = common::open(2048);
    let mut a = db.session();
    let mut b = db.session();
    run(&mut a, "create table t (id int)");
    run(
        &mut a,
        "insert into t select g from generate_series(1, 1000) g",
    );
    run(&mut a, "begin isolation level repeatable read");
    assert_eq!(int(&mut a, "select count(*) from t"), 1000);
    run(&mut b, "delete from t where id <= 500");
    let r = run(&mut b, "vacuum verbose t");
    assert_eq!(verbose_figure(&r, "tuples:", 1), 0, "nothing removable");
    assert_eq!(
        verbose_figure(&r, "tuples:", 5),
        500,
        "dead but not yet removable"
    );
    let (_, _, visible_live, _) = vm_summary(&mut b, "t");
    assert!(
        visible_live <= 500,
        "only pages without deleted rows: {visible_live}"
    );
    let first = texts(
        &mut b,
        "select all_visible from heap_visibility_map('t') where blkno = 0",
    );
    assert_eq!(
        first[0][0], "f",
        "block 0 holds rows the snapshot still sees"
    );
    assert_eq!(int(&mut a, "select count(*) from t"), 1000);
    assert_eq!(int(&mut a, "select sum(id) from t"), 500500);
    assert_eq!(int(&mut b, "select count(*) from t"), 500);
    run(&mut a, "commit");
    let r = run(&mut b, "vacuum verbose t");
    assert_eq!(verbose_figure(&r, "tuples:", 1), 500);
    assert_eq!(int(&mut a, "select count(*) from t"), 500);
    // Pages left empty are not all-visible; the others are, with every row.
    let (visible, _, live, _) = vm_summary(&mut b, "t");
    assert!(visible >= 2);
    assert_eq!(live, 500);
}

#[test]
fn freeze_marks_tuples_and_pages_frozen() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    let (n, _) = load(&mut s);
    let r = run(&mut s, "vacuum (freeze, verbose) t");
    assert_eq!(verbose_figure(&r, "frozen:", 1) as i64, n);
    assert_eq!(verbose_figure(&r, "frozen:", 9), ROWS as u64);
    assert_eq!(vm_summary(&mut s, "t"), (n, n, ROWS, n));
    let flags = texts(&mut s, "select t_flags from heap_page_items('t', 1)");
    assert!(flags
        .iter()
        .all(|f| f[0].contains("XMIN_COMMITTED") && f[0].contains("XMIN_INVALID")));
    // Frozen rows are visible to every snapshot and can still change.
    assert_eq!(int(&mut s, "select count(*) from t"), ROWS);
    run(&mut s, "update t set v = 'z' where id = 5");
    assert_eq!(int(&mut s, "select count(*) from t where v = 'z'"), 1);
    assert_eq!(int(&mut s, "select count(*) from t"), ROWS);
    // A second FREEZE skips the frozen pages.
    let r = run(&mut s, "vacuum freeze verbose t");
    assert!(verbose_figure(&r, "pages:", 5) <= 2);
}

#[test]
fn aborted_inserts_are_removed_and_disable_page_skipping_visits_all() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "create table t (id int, v text)");
    run(
        &mut s,
        "insert into t select g, 'a' from generate_series(1, 100) g",
    );
    run(&mut s, "begin");
    run(
        &mut s,
        "insert into t select g, repeat('b', 100) from generate_series(1, 5000) g",
    );
    run(&mut s, "rollback");
    let before = pages(&mut s, "t");
    let r = run(&mut s, "vacuum verbose t");
    assert_eq!(verbose_figure(&r, "tuples:", 1), 5000);
    assert_eq!(pages(&mut s, "t"), 1, "from {before} pages");
    assert_eq!(int(&mut s, "select count(*) from t"), 100);
    let r = run(&mut s, "vacuum (disable_page_skipping, verbose) t");
    assert_eq!(verbose_figure(&r, "pages:", 5), 1, "visited anyway");
    // No table named: every table.
    run(&mut s, "create table u (x int)");
    run(&mut s, "insert into u values (1)");
    run(&mut s, "vacuum");
    assert_eq!(vm_summary(&mut s, "u").0, 1);
}

#[test]
fn vacuum_refuses_transaction_blocks_and_unknown_tables() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "create table t (id int)");
    run(&mut s, "begin");
    let e = s.execute("vacuum t").unwrap_err();
    assert_eq!(e.code, SqlState::ActiveSqlTransaction);
    assert_eq!(e.message, "VACUUM cannot run inside a transaction block");
    run(&mut s, "rollback");
    let e = s.execute("vacuum nosuch").unwrap_err();
    assert_eq!(e.code, SqlState::UndefinedTable);
    let e = s.execute("vacuum full t").unwrap_err();
    assert_eq!(e.code, SqlState::FeatureNotSupported);
}

#[test]
fn vacuum_records_the_row_count_and_survives_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    {
        let db = Database::open(dir.path()).expect("open");
        let mut s = db.session();
        run(&mut s, "create table t (id int)");
        run(
            &mut s,
            "insert into t select g from generate_series(1, 3000) g",
        );
        run(&mut s, "vacuum t");
        let info = s.list_tables().expect("list");
        assert_eq!(info[0].rows_estimate, Some(3000.0));
    }
    let db = Database::open(dir.path()).expect("reopen");
    let mut s = db.session();
    assert_eq!(
        s.list_tables().expect("list")[0].rows_estimate,
        Some(3000.0)
    );
    assert_eq!(int(&mut s, "select count(*) from t"), 3000);
    let p = pages(&mut s, "t");
    assert_eq!(vm_summary(&mut s, "t"), (p, 0, 3000, p));
}

#[test]
fn vacuum_runs_beside_writers_and_readers() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "create table t (id int, v text)");
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let mut w = db.session();
            let mut expect = 0i64;
            for round in 0..60 {
                let lo = round * 200;
                run(
                    &mut w,
                    &format!(
                        "insert into t select g, repeat('w', 30) from generate_series({lo}, {}) g",
                        lo + 199
                    ),
                );
                expect += 200;
                // Delete the newest rows of every other round: the tail
                // empties and VACUUM may cut it while we insert again.
                if round % 2 == 1 {
                    run(&mut w, &format!("delete from t where id >= {}", lo - 100));
                    expect -= 300;
                }
                run(&mut w, "update t set v = 'u' where id % 7 = 0");
            }
            expect
        })
    };
    let reader = {
        let db = db.clone();
        std::thread::spawn(move || {
            let mut r = db.session();
            for _ in 0..60 {
                let n = int(&mut r, "select count(*) from t");
                let m = int(&mut r, "select count(*) from t where length(v) > 0");
                assert!(n >= 0 && m >= 0);
            }
        })
    };
    for _ in 0..30 {
        run(&mut s, "vacuum t");
    }
    let expect = writer.join().expect("writer");
    reader.join().expect("reader");
    run(&mut s, "vacuum t");
    assert_eq!(int(&mut s, "select count(*) from t"), expect);
    let (visible, _, live, _) = vm_summary(&mut s, "t");
    assert_eq!(live, expect, "{visible} all-visible pages hold every row");
}

#[test]
fn vacuum_reports_its_pages_to_the_progress_hook() {
    use heapdb::session::{Progress, ProgressUnit};
    use std::sync::{Arc, Mutex};
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "CREATE TABLE p (a int, b text)");
    run(
        &mut s,
        "INSERT INTO p SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g",
    );
    let pages = int(&mut s, "SELECT relation_pages('p')") as u64;
    assert!(pages > 128, "{pages} pages");
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    s.set_progress(Some(Arc::new(move |p: &Progress| {
        sink.lock().unwrap().push(*p)
    })));
    run(&mut s, "VACUUM p");
    let reports = seen.lock().unwrap().clone();
    assert!(reports.len() >= 2, "{reports:?}");
    assert!(reports.iter().all(|p| p.unit == ProgressUnit::Pages));
    assert!(reports.windows(2).all(|w| w[0].done <= w[1].done));
    let last = reports.last().unwrap();
    assert_eq!((last.done, last.total), (pages, Some(pages)));
    // A second VACUUM skips every page and still counts them.
    seen.lock().unwrap().clear();
    run(&mut s, "VACUUM p");
    let last = *seen.lock().unwrap().last().unwrap();
    assert_eq!((last.done, last.total), (pages, Some(pages)));
}

/// A bare `count(*)` of a vacuumed table sums the visibility map's live
/// counts, so the planner gives it no parallel workers; before VACUUM (and
/// with a filter) the count reads every page and gets them.
#[test]
fn count_star_of_a_vacuumed_table_is_not_parallel() {
    let (_dir, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "set min_parallel_table_scan_size = 0");
    run(&mut s, "create table cs (a int, b int)");
    run(
        &mut s,
        "insert into cs select g, g % 3 from generate_series(1, 20000) g",
    );
    let plan = |s: &mut Session, sql: &str| -> String {
        texts(s, &format!("explain (costs off) {sql}"))
            .into_iter()
            .map(|r| r[0].clone())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(plan(&mut s, "select count(*) from cs").contains("Gather"));
    run(&mut s, "vacuum cs");
    let p = plan(&mut s, "select count(*) from cs");
    assert!(!p.contains("Gather"), "{p}");
    assert_eq!(int(&mut s, "select count(*) from cs"), 20000);
    let filtered = plan(&mut s, "select count(*) from cs where b = 1");
    assert!(filtered.contains("Gather"), "{filtered}");
    assert_eq!(int(&mut s, "select count(*) from cs where b = 1"), 6667);
    // Half the pages changed since: the map no longer answers for them.
    run(&mut s, "update cs set b = b + 1 where a <= 12000");
    assert!(plan(&mut s, "select count(*) from cs").contains("Gather"));
    assert_eq!(int(&mut s, "select count(*) from cs"), 20000);
}
