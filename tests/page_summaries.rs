//! Page summaries against full scans: every aggregate the executor may take
//! from summaries (`sum`/`min`/`max`/`avg`/`count`, with and without range
//! predicates, and grouped ones beside them) gives, under one snapshot, the
//! answer of the same query with `enable_page_summaries` off, while other
//! sessions insert, update and delete and VACUUM runs in between; and after
//! a kill -9 during writes and VACUUM, the reopened database's summaries
//! still agree with full scans. Predicates on date and float columns, and
//! summaries a scan filled in (also across a kill -9), likewise.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use heapdb::{Database, Session};

mod common;
use common::{rows_text, run};

const CHILD_ENV: &str = "HEAPDB_PAGE_SUMMARIES_CHILD";

/// A small xorshift generator, seeded per thread.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> i64 {
        (self.next() % n) as i64
    }
}

/// The table: `a` int4 with NULLs, `b` int8 large enough that sums go past
/// bigint into numeric, `c` int2 in runs of 300 rows (so most pages hold
/// one value of it: grouped by `c`, they are taken whole), `d` text (never
/// summarised).
fn setup(s: &mut Session, rows: i64) {
    run(s, "create table t (id int, a int, b int8, c int2, d text)");
    run(
        s,
        &format!(
            "insert into t select g, case when g % 13 = 0 then null else (g * 7919) % 100000 - 50000 end, \
             g::int8 * 300000000000000, (g / 300 % 200)::int2, 'x' || g from generate_series(1, {rows}) g"
        ),
    );
}

/// The queries compared: what summaries answer, and some they decline.
fn queries(rng: &mut Rng) -> Vec<String> {
    let k = rng.below(100_000) - 50_000;
    let k2 = k + rng.below(60_000);
    let id = rng.below(25_000);
    vec![
        "select count(*), count(a), sum(a), avg(a), min(a), max(a) from t".into(),
        "select sum(b), min(b), max(b), count(b), avg(b) from t".into(),
        "select sum(c), min(c), max(c), avg(c) from t".into(),
        format!("select count(*) from t where a >= {k}"),
        format!("select count(*) from t where a < {k}"),
        format!("select sum(a), min(b), max(c), count(*) from t where a between {k} and {k2}"),
        format!("select count(*), sum(b) from t where a = {k}"),
        format!("select min(id), max(id), sum(id) from t where id < {id}"),
        format!(
            "select count(*), sum(a) from t where id >= {id} and id <= {} and a > {k}",
            id + 3000
        ),
        "select count(*) from t where a > 2147483647".into(),
        "select c, sum(a), count(*) from t group by c order by c".into(),
        "select c, count(a), avg(a), min(a), max(a), sum(b), min(c) from t group by c order by c"
            .into(),
        format!("select c, count(*), max(b) from t where id < {id} group by c order by c"),
        format!("select c, sum(a) from t where a >= {k} group by c order by c"),
        "select a, count(*), sum(c) from t group by a order by a".into(),
        "select count(*), sum(a) from t".into(),
    ]
}

/// Each query with summaries on and off, in one REPEATABLE READ
/// transaction (one snapshot); panics on a difference.
fn compare(s: &mut Session, rng: &mut Rng, what: &str) {
    run(s, "begin isolation level repeatable read");
    for q in queries(rng) {
        run(s, "set enable_page_summaries = on");
        let with = rows_text(&run(s, &q));
        run(s, "set enable_page_summaries = off");
        let without = rows_text(&run(s, &q));
        assert_eq!(with, without, "{what}: {q}");
    }
    run(s, "commit");
    run(s, "set enable_page_summaries = on");
}

/// EXPLAIN ANALYZE's `Summaries:` figures of `q`: (answered, skipped,
/// scanned).
fn summary_figures(s: &mut Session, q: &str) -> (u64, u64, u64) {
    let r = run(s, &format!("explain analyze {q}"));
    let lines: Vec<String> = rows_text(&r).into_iter().map(|r| r.join(" ")).collect();
    let line = lines
        .iter()
        .find_map(|l| l.trim().strip_prefix("Summaries: "))
        .unwrap_or_else(|| panic!("no Summaries line: {lines:#?}"));
    let fig = |name: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {line}"))
    };
    (fig("answered"), fig("skipped"), fig("scanned"))
}

/// EXPLAIN ANALYZE's `windows=` figure of `q`: windows of pages decided
/// whole from their merged (cached) summary.
fn window_figure(s: &mut Session, q: &str) -> u64 {
    let r = run(s, &format!("explain analyze {q}"));
    rows_text(&r)
        .into_iter()
        .map(|r| r.join(" "))
        .find_map(|l| {
            l.trim()
                .strip_prefix("Summaries: ")?
                .split_whitespace()
                .find_map(|w| w.strip_prefix("windows=")?.parse().ok())
        })
        .unwrap_or(0)
}

/// Whole windows of pages are answered (and skipped) from their merged
/// summaries, cached per relation; a change to any one page of a window,
/// a rolled-back change, a tail truncation by VACUUM and the regrowth of
/// the table each drop what they make stale, and every answer stays the
/// full scan's.
#[test]
fn cached_windows_follow_every_change() {
    let (_dir, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "create table w (id int, a int, b int8)");
    run(
        &mut s,
        "insert into w select g, g % 1000, g * 3 from generate_series(1, 40000) g",
    );
    run(&mut s, "vacuum w");
    let qs = [
        "select count(*), sum(a), min(a), max(a), sum(b), max(b) from w",
        "select count(*), sum(b) from w where id >= 10000 and id < 30000",
        "select count(*) from w where id > 39000",
        "select min(b), max(id) from w where a >= 0",
    ];
    let check = |s: &mut Session, what: &str| {
        run(s, "begin isolation level repeatable read");
        for q in qs {
            run(s, "set enable_page_summaries = on");
            let with = rows_text(&run(s, q));
            run(s, "set enable_page_summaries = off");
            assert_eq!(with, rows_text(&run(s, q)), "{what}: {q}");
        }
        run(s, "commit");
        run(s, "set enable_page_summaries = on");
    };
    check(&mut s, "after VACUUM");
    let windows = window_figure(&mut s, qs[0]);
    assert!(windows >= 5, "whole windows answered: {windows}");
    assert!(
        window_figure(&mut s, qs[2]) >= 4,
        "whole windows skipped by a range"
    );
    // Answered whole, an unfiltered aggregation is planned without
    // workers, and so is a filtered one whose pages summaries answer or
    // skip; one whose pages are all boundary pages, or one with summaries
    // off, keeps them.
    run(&mut s, "set min_parallel_table_scan_size = 0");
    let plan = |s: &mut Session, q: &str| -> String {
        rows_text(&run(s, &format!("explain (costs off) {q}")))
            .into_iter()
            .map(|r| r.join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        !plan(&mut s, qs[0]).contains("Gather"),
        "{}",
        plan(&mut s, qs[0])
    );
    for q in &qs[1..] {
        assert!(!plan(&mut s, q).contains("Gather"), "{}", plan(&mut s, q));
    }
    run(&mut s, "create table m (x int)");
    run(
        &mut s,
        "insert into m select g * 7919 % 1000 from generate_series(1, 40000) g",
    );
    run(&mut s, "vacuum m");
    let mixed = "select count(*), sum(x) from m where x < 500";
    assert!(plan(&mut s, mixed).contains("Gather"));
    run(&mut s, "drop table m");
    run(&mut s, "set enable_page_summaries = off");
    assert!(plan(&mut s, qs[0]).contains("Gather"));
    assert!(plan(&mut s, qs[1]).contains("Gather"));
    run(&mut s, "set enable_page_summaries = on");
    run(&mut s, "reset min_parallel_table_scan_size");
    // One row changes (on its page, and where its new version goes): the
    // windows of those pages are read page by page.
    run(&mut s, "update w set a = 5000 where id = 20000");
    check(&mut s, "one page changed");
    assert!(
        window_figure(&mut s, qs[0]) < windows,
        "its window is dropped"
    );
    let (_, _, scanned) = summary_figures(&mut s, qs[0]);
    assert!(scanned >= 1, "the changed page is read");
    // A rolled-back change clears the bit too.
    run(&mut s, "begin");
    run(&mut s, "delete from w where id = 100");
    run(&mut s, "rollback");
    check(&mut s, "after a rollback");
    run(&mut s, "vacuum w");
    check(&mut s, "after the second VACUUM");
    assert!(
        window_figure(&mut s, qs[0]) >= windows,
        "VACUUM makes it whole"
    );
    // VACUUM cuts the empty tail; the table grows again over it.
    run(&mut s, "delete from w where id > 30000");
    run(&mut s, "vacuum w");
    check(&mut s, "after the tail was cut");
    run(
        &mut s,
        "insert into w select g, -g, g from generate_series(30001, 45000) g",
    );
    check(&mut s, "regrown, before VACUUM");
    run(&mut s, "vacuum w");
    check(&mut s, "regrown, after VACUUM");
}

/// Spans of 1,024 pages are decided whole from the merge of their
/// windows' merges, cached per relation: on a table of three spans and a
/// tail, a change to one page, a rolled-back change, VACUUM, a tail cut
/// into the last whole span and the table's regrowth each drop the spans
/// they make stale, and every answer (answered whole, skipped by a range,
/// read at a boundary) stays the full scan's.
#[test]
fn cached_spans_follow_every_change() {
    let (_dir, db) = common::open(8192);
    let mut s = db.session();
    run(&mut s, "create table w (id int, a int)");
    run(
        &mut s,
        "insert into w select g, g % 1000 from generate_series(1, 760000) g",
    );
    run(&mut s, "vacuum w");
    let qs = [
        "select count(*), sum(a), min(a), max(a), min(id), max(id) from w",
        "select count(*) from w where a >= 0",
        "select count(*), sum(a) from w where id > 500000",
        "select count(*), max(a) from w where id >= 10000 and id < 700000",
        "select min(id), sum(id) from w where a < 1000",
    ];
    let check = |s: &mut Session, what: &str| {
        run(s, "begin isolation level repeatable read");
        for q in qs {
            run(s, "set enable_page_summaries = on");
            // Twice: the first run may build the entries the second takes.
            let first = rows_text(&run(s, q));
            let with = rows_text(&run(s, q));
            run(s, "set enable_page_summaries = off");
            let without = rows_text(&run(s, q));
            assert_eq!(first, without, "{what}, first run: {q}");
            assert_eq!(with, without, "{what}: {q}");
        }
        run(s, "commit");
        run(s, "set enable_page_summaries = on");
    };
    check(&mut s, "after VACUUM");
    let (answered, _, scanned) = summary_figures(&mut s, qs[0]);
    assert!(answered > 3 * 1024 && scanned == 0, "{answered} {scanned}");
    run(&mut s, "update w set a = 5000 where id = 1234");
    check(&mut s, "one page of the first span changed");
    run(&mut s, "begin");
    run(&mut s, "delete from w where id = 400000");
    run(&mut s, "rollback");
    check(&mut s, "after a rollback in the second span");
    run(&mut s, "vacuum w");
    check(&mut s, "after the second VACUUM");
    run(&mut s, "delete from w where id > 600000");
    run(&mut s, "vacuum w");
    check(&mut s, "after the tail was cut");
    run(
        &mut s,
        "insert into w select g, -(g % 1000) from generate_series(600001, 800000) g",
    );
    check(&mut s, "regrown, before VACUUM");
    run(&mut s, "vacuum w");
    check(&mut s, "regrown, after VACUUM");
}

/// One writer: inserts, updates and deletes rows with `id % 2 == me`,
/// committed or rolled back, until `stop`.
fn writer(db: Database, me: i64, stop: Arc<AtomicBool>) {
    let mut s = db.session();
    let mut rng = Rng(0x9E37_79B9 + me as u64);
    let mut next_id = 100_000 + me;
    while !stop.load(Ordering::Relaxed) {
        let id = rng.below(12_000) * 2 + me;
        let abort = rng.below(5) == 0;
        if abort {
            run(&mut s, "begin");
        }
        match rng.below(4) {
            0 => {
                let a = if rng.below(7) == 0 {
                    "null".to_string()
                } else {
                    (rng.below(100_000) - 50_000).to_string()
                };
                run(
                    &mut s,
                    &format!(
                        "insert into t values ({next_id}, {a}, {}, 1, 'n')",
                        rng.below(1 << 40)
                    ),
                );
                next_id += 2;
            }
            1 => {
                run(&mut s, &format!("delete from t where id = {id}"));
            }
            _ => {
                run(
                    &mut s,
                    &format!(
                        "update t set a = a + {}, b = b - 1, c = (c + 1) % 300 where id = {id}",
                        rng.below(100)
                    ),
                );
            }
        }
        if abort {
            run(&mut s, "rollback");
        }
    }
}

#[test]
fn summaries_agree_with_full_scans_under_concurrent_writers() {
    let (_dir, db) = common::open(4096);
    let mut s = db.session();
    setup(&mut s, 24_000);
    run(&mut s, "vacuum t");
    let mut rng = Rng(7);
    // Quiet: the summaries answer, and agree.
    let (answered, _, _) = summary_figures(&mut s, "select sum(a), min(b), max(c) from t");
    assert!(answered > 50, "pages answered after VACUUM: {answered}");
    let windows = window_figure(&mut s, "select sum(a), min(b), max(c) from t");
    assert!(
        windows > 2,
        "whole windows answered after VACUUM: {windows}"
    );
    let (_, skipped, _) = summary_figures(&mut s, "select count(*) from t where id < 1000");
    assert!(skipped > 50, "pages skipped by a range: {skipped}");
    let (answered, _, scanned) =
        summary_figures(&mut s, "select c, sum(a), max(b) from t group by c");
    assert!(
        answered > 50 && scanned > 0,
        "grouped: pages answered {answered}, scanned {scanned}"
    );
    compare(&mut s, &mut rng, "after VACUUM");

    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|me| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || writer(db, me, stop))
        })
        .collect();
    let vacuum = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut s = db.session();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) || n < 3 {
                run(&mut s, "vacuum t");
                n += 1;
            }
        })
    };
    for round in 0..25 {
        compare(&mut s, &mut rng, &format!("round {round}"));
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().expect("writer");
    }
    vacuum.join().expect("vacuum");
    compare(&mut s, &mut rng, "after the writers");
    run(&mut s, "vacuum t");
    compare(&mut s, &mut rng, "after the last VACUUM");
    let (answered, _, _) = summary_figures(&mut s, "select count(a), sum(b) from t");
    assert!(
        answered > 50,
        "pages answered after the last VACUUM: {answered}"
    );
}

/// A grouped aggregation that spills (work_mem of 64kB, thousands of
/// groups) stops taking pages from summaries when it starts spilling (and
/// takes them until then, with enough memory), and
/// agrees with the full scan: every group once, with all its rows.
#[test]
fn grouped_pages_agree_while_spilling() {
    let (_dir, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "create table g (k int, v int, w int8)");
    // Mixed keys first (the aggregation spills on them at 64kB), then
    // runs of 400 rows per key: two pages and more of each.
    run(
        &mut s,
        "insert into g select g % 5000, g, null from generate_series(1, 20000) g",
    );
    run(
        &mut s,
        "insert into g select g / 400, g % 1000 - 500, g from generate_series(1, 400000) g",
    );
    run(&mut s, "vacuum g");
    for mem in ["64kB", "4MB"] {
        run(&mut s, &format!("set work_mem = '{mem}'"));
        for q in [
            "select k, count(*), sum(v), min(w), max(v), avg(v) from g group by k order by k",
            "select k, sum(v) from g where k >= 100 and k < 4000 group by k order by k",
            "select k, count(w) from g where w > 0 group by k order by k",
        ] {
            for workers in ["0", "2"] {
                run(
                    &mut s,
                    &format!("set max_parallel_workers_per_gather = {workers}"),
                );
                run(&mut s, "set enable_page_summaries = on");
                let with = rows_text(&run(&mut s, q));
                run(&mut s, "set enable_page_summaries = off");
                assert_eq!(with, rows_text(&run(&mut s, q)), "{mem}, {workers}: {q}");
            }
        }
    }
    run(&mut s, "reset work_mem");
    run(&mut s, "reset max_parallel_workers_per_gather");
    run(&mut s, "set enable_page_summaries = on");
    let (answered, _, _) = summary_figures(&mut s, "select k, sum(v) from g group by k");
    assert!(answered > 100, "grouped pages answered: {answered}");
}

/// Sums past bigint become numeric, empty tables give NULL, and an
/// all-NULL column's summaries give what the scan gives.
#[test]
fn edges_agree_with_full_scans() {
    let (_dir, db) = common::open(1024);
    let mut s = db.session();
    run(&mut s, "create table e (a int, b int8, c int2)");
    run(&mut s, "vacuum e");
    let q = [
        "select count(*), sum(a), min(a), max(a), avg(a), sum(b), sum(c) from e",
        "select count(*) from e where a >= 0",
        "select sum(b), max(b) from e where b > 9223372036854775806",
    ];
    let check = |s: &mut Session| {
        for q in q {
            run(s, "set enable_page_summaries = on");
            let with = rows_text(&run(s, q));
            run(s, "set enable_page_summaries = off");
            assert_eq!(with, rows_text(&run(s, q)), "{q}");
        }
    };
    check(&mut s);
    run(
        &mut s,
        "insert into e select null, 9223372036854775807 - g, null from generate_series(1, 5000) g",
    );
    run(&mut s, "vacuum e");
    check(&mut s);
    run(&mut s, "set enable_page_summaries = on");
    let (answered, _, _) = summary_figures(&mut s, "select sum(b), count(a) from e");
    assert!(answered > 5, "{answered}");
}

/// The table of the date and float tests: `e` dates rising with `id`, `f`
/// floats with NULLs, NaNs, infinities, -0 and 0 among them.
fn setup_df(s: &mut Session, rows: i64) {
    run(s, "create table df (id int, e date, f float8, r float4)");
    run(
        s,
        &format!(
            "insert into df select g, '2000-01-01'::date + g / 50, \
             case when g % 97 = 0 then null when g % 89 = 0 then 'NaN'::float8 \
             when g % 83 = 0 then '-Infinity'::float8 when g % 79 = 0 then '-0'::float8 \
             when g % 73 = 0 then 0::float8 else (g % 5000)::float8 / 8 end, \
             ((g / 40) % 300)::float4 from generate_series(1, {rows}) g"
        ),
    );
}

/// Date and float queries summaries answer, on `df`.
fn df_queries() -> Vec<String> {
    let mut q = vec![
        "select count(*), count(e), count(f), count(r) from df".to_string(),
        "select count(*), min(id), max(id) from df where e >= '2000-03-01'::date".into(),
        "select count(*) from df where e between '2000-02-01'::date and '2000-02-10'::date".into(),
        "select count(*), sum(id) from df where e < '2000-01-20'::date".into(),
        "select count(*) from df where f > 'NaN'::float8".into(),
        "select count(*) from df where f >= 'NaN'::float8".into(),
        "select count(*) from df where f = '-0'::float8".into(),
        "select count(*) from df where f <= '-Infinity'::float8".into(),
        "select count(*), count(f) from df where r >= '100'::float4 and r < '150'::float4".into(),
        "select count(*) from df where r = '7'::float4".into(),
    ];
    for x in ["0", "100.5", "-1", "311.25", "600"] {
        q.push(format!(
            "select count(*), sum(id) from df where f > '{x}'::float8"
        ));
        q.push(format!("select count(*) from df where f <= '{x}'::float8"));
    }
    q
}

/// `df_queries` with summaries on and off under one snapshot.
fn compare_df(s: &mut Session, what: &str) {
    run(s, "begin isolation level repeatable read");
    for q in df_queries() {
        run(s, "set enable_page_summaries = on");
        let with = rows_text(&run(s, &q));
        run(s, "set enable_page_summaries = off");
        let without = rows_text(&run(s, &q));
        assert_eq!(with, without, "{what}: {q}");
    }
    run(s, "commit");
    run(s, "set enable_page_summaries = on");
}

/// Predicates on date and float columns take pages from summaries (and
/// skip them) and agree with full scans, with writers changing rows
/// between the comparisons.
#[test]
fn date_and_float_predicates_agree_with_full_scans() {
    let (_dir, db) = common::open(2048);
    let mut s = db.session();
    setup_df(&mut s, 20_000);
    run(&mut s, "vacuum df");
    let (answered, skipped, _) = summary_figures(
        &mut s,
        "select count(*) from df where e >= '2000-03-01'::date",
    );
    assert!(answered > 20 && skipped > 5, "date: {answered} {skipped}");
    let (answered, skipped, _) = summary_figures(
        &mut s,
        "select count(*) from df where r >= '100'::float4 and r < '150'::float4",
    );
    assert!(answered > 5 && skipped > 20, "float4: {answered} {skipped}");
    let (_, skipped, _) =
        summary_figures(&mut s, "select count(*) from df where f > 'NaN'::float8");
    assert!(skipped > 20, "nothing is above NaN: {skipped}");
    compare_df(&mut s, "after VACUUM");
    for round in 0..4 {
        run(
            &mut s,
            &format!("update df set f = -f, e = e + 1 where id % 41 = {round}"),
        );
        run(&mut s, &format!("delete from df where id % 53 = {round}"));
        run(
            &mut s,
            &format!("insert into df values (-{round}, null, '-0'::float8, 'NaN'::float4)"),
        );
        compare_df(&mut s, &format!("round {round} before VACUUM"));
        run(&mut s, "vacuum df");
        compare_df(&mut s, &format!("round {round} after VACUUM"));
    }
}

/// Loads and VACUUMs `df` in `dir`, shuts down, and removes the summary
/// forks: the pages are all-visible with no summaries, as in a database
/// made before summaries existed.
fn all_visible_without_summaries(dir: &std::path::Path) {
    {
        let db = common::open_at(dir, 2048);
        let mut s = db.session();
        setup_df(&mut s, 20_000);
        run(&mut s, "vacuum df");
        run(&mut s, "checkpoint");
    }
    let mut removed = 0;
    for f in std::fs::read_dir(dir.join("base")).expect("base dir") {
        let path = f.expect("entry").path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().contains("_sum"))
        {
            std::fs::remove_file(&path).expect("remove a summary fork");
            removed += 1;
        }
    }
    assert!(removed > 0, "no summary fork in {}", dir.display());
}

/// Pages that are all-visible with no summary get theirs from the scans
/// that read them for summaries (each fills in a share of the missing
/// ones); later scans take them whole, and agree with a full scan.
#[test]
fn the_first_scan_fills_missing_summaries() {
    let dir = tempfile::tempdir().expect("temp dir");
    all_visible_without_summaries(dir.path());
    let db = common::open_at(dir.path(), 2048);
    let mut s = db.session();
    let q = "select count(*), min(id), max(id) from df where e >= '2000-03-01'::date";
    let (answered, _, scanned) = summary_figures(&mut s, q);
    assert_eq!(answered, 0, "no summaries yet");
    assert!(scanned > 100, "{scanned}");
    let (answered, skipped, _) = summary_figures(&mut s, q);
    assert!(
        answered + skipped >= 3,
        "filled by the first scan: {answered} {skipped}"
    );
    compare_df(&mut s, "after the first scan filled some");
    for _ in 0..80 {
        run(&mut s, q);
    }
    let (answered, skipped, _) = summary_figures(&mut s, q);
    assert!(
        answered > 20 && skipped > 5,
        "filled by later scans: {answered} {skipped}"
    );
    compare_df(&mut s, "after the scans filled them");
}

/// The child half of the fill crash test: opens the database whose
/// summary forks are gone, fills the summaries with scans, commits a
/// write (so the log holds the fill's records), says "filled", and waits
/// to be killed (no checkpoint: redo must write the slots).
#[test]
#[ignore]
fn page_summaries_fill_crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let db = common::open_at(std::path::Path::new(&dir), 2048);
    let mut s = db.session();
    for _ in 0..80 {
        run(&mut s, "select count(*), sum(id) from df where id > 0");
    }
    // A commit flushes the log past the fill's records (a read alone
    // promises nothing: its records may be lost, and its slots with them).
    run(&mut s, "create table flushed (a int)");
    run(&mut s, "insert into flushed values (1)");
    println!("filled");
    std::thread::sleep(std::time::Duration::from_secs(600));
}

#[test]
fn summaries_a_scan_filled_survive_kill9() {
    let dir = tempfile::tempdir().expect("temp dir");
    all_visible_without_summaries(dir.path());
    let mut child = common::child_test(
        "page_summaries_fill_crash_child",
        CHILD_ENV,
        dir.path().as_os_str(),
    )
    .spawn()
    .expect("spawn the child");
    let lines = common::Lines::of(&mut child);
    assert!(lines.until(|l| l.ends_with("filled")), "child ended early");
    let db = common::kill9_and_reopen(child, dir.path(), 2048);
    let mut s = db.session();
    let (answered, _, _) = summary_figures(&mut s, "select count(*), sum(id) from df");
    assert!(answered > 100, "the filled slots were replayed: {answered}");
    compare_df(&mut s, "after kill -9");
}

/// The child half of the crash test: loads, VACUUMs, says "ready", then
/// writes and VACUUMs until killed.
#[test]
#[ignore]
fn page_summaries_crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let db = common::open_at(std::path::Path::new(&dir), 2048);
    let mut s = db.session();
    setup(&mut s, 20_000);
    run(&mut s, "vacuum t");
    println!("ready");
    let stop = Arc::new(AtomicBool::new(false));
    let w = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || writer(db, 0, stop))
    };
    let mut n = 0u64;
    loop {
        run(&mut s, "vacuum t");
        if n % 4 == 3 {
            run(&mut s, "checkpoint");
        }
        n += 1;
        println!("vacuum {n}");
        if w.is_finished() {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = w.join();
}

#[test]
fn summaries_survive_kill9_during_writes_and_vacuum() {
    for round in 0..3 {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut child = common::child_test(
            "page_summaries_crash_child",
            CHILD_ENV,
            dir.path().as_os_str(),
        )
        .spawn()
        .expect("spawn the child");
        let lines = common::Lines::of(&mut child);
        // The harness's `test ... ` header shares the first line.
        assert!(
            lines.until(|l| l.ends_with("ready")),
            "child ended before ready"
        );
        let vacuums = 2 + round;
        assert!(
            lines.until(|l| l.ends_with(&format!("vacuum {vacuums}"))),
            "child ended early"
        );
        let db = common::kill9_and_reopen(child, dir.path(), 2048);
        let mut s = db.session();
        let mut rng = Rng(11 + round);
        compare(&mut s, &mut rng, &format!("after kill -9, round {round}"));
        // The map's pages that recovery left all-visible: their summaries
        // were in use above; a VACUUM now makes the rest.
        run(&mut s, "vacuum t");
        compare(
            &mut s,
            &mut rng,
            &format!("after kill -9 and VACUUM, round {round}"),
        );
        let (answered, _, _) = summary_figures(&mut s, "select sum(a), max(b) from t");
        assert!(answered > 10, "round {round}: {answered}");
    }
}
