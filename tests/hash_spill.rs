//! Hash aggregation and hash joins under a small `work_mem`: the spilling
//! paths give the same answers as the in-memory ones (random data, random
//! limits, serial and parallel), leave no temporary file behind, after
//! success as after an error, and the fast paths agree with the general
//! paths on empty and filtered input.

use heapdb::types::Value;
use heapdb::{Database, Session};

mod common;
use common::run;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The rows of `sql`, rendered and sorted (the spilling paths emit groups
/// and join rows in another order).
fn sorted_rows(s: &mut Session, sql: &str) -> Vec<String> {
    let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut rows: Vec<String> = r
        .rows
        .iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .map(|v| {
                    let mut out = String::new();
                    heapdb::types::format_value(v, &mut out);
                    out
                })
                .collect();
            cells.join("|")
        })
        .collect();
    rows.sort();
    rows
}

fn temp_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("base").join("pgsql_tmp"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Random tables: `a` (int key with NULLs and repeats, text key, value)
/// and `b` (a join partner sharing some keys).
fn load(s: &mut Session, rng: &mut Rng, rows: u64) {
    run(s, "drop table if exists a");
    run(s, "drop table if exists b");
    run(
        s,
        "create table a (k int, t text, c char(4), v int, n numeric)",
    );
    run(s, "create table b (k int, t text, w int)");
    let distinct = 1 + rng.below(rows * 2);
    let mut values = Vec::new();
    for _ in 0..rows {
        let k = rng.below(distinct) as i64 - 50;
        let key = if rng.below(20) == 0 {
            "NULL".to_string()
        } else {
            k.to_string()
        };
        let v = rng.below(1000) as i64 - 300;
        let val = if rng.below(15) == 0 {
            "NULL".to_string()
        } else {
            v.to_string()
        };
        values.push(format!(
            "({key}, 'k{}', 'c{}', {val}, {v}.5)",
            k % 997,
            k % 37
        ));
    }
    for chunk in values.chunks(2000) {
        run(s, &format!("insert into a values {}", chunk.join(", ")));
    }
    let mut values = Vec::new();
    for _ in 0..rows / 2 {
        let k = rng.below(distinct) as i64 - 50;
        values.push(format!("({k}, 'k{}', {})", k % 997, rng.below(100)));
    }
    for chunk in values.chunks(2000) {
        run(s, &format!("insert into b values {}", chunk.join(", ")));
    }
    run(s, "analyze a");
    run(s, "analyze b");
}

const QUERIES: &[&str] = &[
    // The typed fast path: one integer key, one text key.
    "select k, count(*), count(v), sum(v), avg(v), min(v), max(v) from a group by k",
    "select t, count(*), sum(v), max(v) from a group by t",
    "select c, count(*), min(v) from a group by c",
    "select k, count(*) from a where v > 100 group by k",
    // The general path: several keys, DISTINCT, FILTER, numeric.
    "select k, t, count(*), sum(n) from a group by k, t",
    "select k, count(distinct v), sum(v) filter (where v > 0) from a group by k",
    "select n, count(*) from a group by n",
    // Hash joins: typed integer and text keys, several keys, outer kinds.
    "select a.k, a.v, b.w from a join b on a.k = b.k",
    "select a.k, b.w from a left join b on a.k = b.k",
    "select a.v, b.k from a right join b on a.k = b.k",
    "select a.k, b.k from a full join b on a.k = b.k and a.v > b.w",
    "select a.t, b.w from a join b on a.t = b.t and a.k = b.k",
    "select a.t, count(*) from a join b on a.t = b.t group by a.t",
];

#[test]
fn spilling_answers_equal_the_in_memory_answers() {
    let (dir, db) = common::open(1024);
    let mut s = db.session();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..4 {
        let rows = 2000 + rng.below(8000);
        load(&mut s, &mut rng, rows);
        let workers = if round % 2 == 0 { 0 } else { 2 };
        run(
            &mut s,
            &format!("set max_parallel_workers_per_gather = {workers}"),
        );
        run(&mut s, "set min_parallel_table_scan_size = 0");
        for q in QUERIES {
            run(&mut s, "set work_mem = '1GB'");
            let want = sorted_rows(&mut s, q);
            let kb = 64 + rng.below(200);
            run(&mut s, &format!("set work_mem = '{kb}kB'"));
            run(&mut s, "set hash_mem_multiplier = 1");
            let got = sorted_rows(&mut s, q);
            run(&mut s, "reset hash_mem_multiplier");
            assert_eq!(got.len(), want.len(), "round {round}, {kb}kB: {q}");
            assert!(got == want, "round {round}, {kb}kB, workers {workers}: {q}");
            assert_eq!(temp_files(dir.path()), 0, "{q}");
        }
    }
}

#[test]
fn a_small_work_mem_spills_and_explain_analyze_says_so() {
    let (dir, db) = common::open(1024);
    let mut s = db.session();
    run(&mut s, "set max_parallel_workers_per_gather = 0");
    run(
        &mut s,
        "create table g as select x as k, x % 7 as v from generate_series(1, 50000) x",
    );
    run(&mut s, "set work_mem = '64kB'");
    let plan = |s: &mut Session, q: &str| -> Vec<String> {
        let r = s.execute(q).unwrap();
        r.rows
            .iter()
            .map(|row| match &row[0] {
                Value::Text(t) => t.to_string(),
                v => format!("{v:?}"),
            })
            .collect()
    };
    let agg = plan(
        &mut s,
        "explain (analyze, costs off, timing off, summary off) select k, count(*) from g group by k",
    );
    let line = agg
        .iter()
        .find(|l| l.contains("Batches:"))
        .expect("a Batches line");
    assert!(line.contains("Disk Usage:"), "{agg:?}");
    assert!(!line.trim_start().starts_with("Batches: 1 "), "{agg:?}");
    let join = plan(
        &mut s,
        "explain (analyze, costs off, timing off, summary off) select count(*) from g g1 join g g2 on g1.k = g2.k",
    );
    let line = join
        .iter()
        .find(|l| l.contains("Buckets:"))
        .expect("a Buckets line");
    assert!(line.contains("(originally 1)"), "{join:?}");
    run(&mut s, "reset work_mem");
    let agg = plan(
        &mut s,
        "explain (analyze, costs off, timing off, summary off) select v, count(*) from g group by v",
    );
    let line = agg
        .iter()
        .find(|l| l.contains("Batches:"))
        .expect("a Batches line");
    assert!(
        line.trim_start().starts_with("Batches: 1  Memory Usage: "),
        "{agg:?}"
    );
    assert!(!line.contains("Disk"), "{agg:?}");
    assert_eq!(temp_files(dir.path()), 0);
}

#[test]
fn temporary_files_are_gone_after_an_error_and_at_open() {
    let (dir, db) = common::open(1024);
    let mut s = db.session();
    run(&mut s, "set max_parallel_workers_per_gather = 0");
    run(
        &mut s,
        "create table g as select x as k from generate_series(1, 60000) x",
    );
    run(&mut s, "set work_mem = '64kB'");
    // The division fails on the last rows, long after the spill began.
    let e = s
        .execute("select k, count(*), sum(100 / (k - 59000)) from g group by k")
        .unwrap_err();
    assert_eq!(e.message, "division by zero");
    assert_eq!(temp_files(dir.path()), 0);
    let e = s
        .execute("select count(*) from g g1 join g g2 on g1.k = g2.k where 1 / (g2.k - 59990) > -5")
        .unwrap_err();
    assert_eq!(e.message, "division by zero");
    assert_eq!(temp_files(dir.path()), 0);
    drop(s);
    drop(db);
    // A file a crashed process left is removed when the database opens.
    let tmp = dir.path().join("base").join("pgsql_tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("pgsql_tmp999999.7"), b"left over").unwrap();
    let _db = Database::open(dir.path()).unwrap();
    assert_eq!(temp_files(dir.path()), 0);
}

#[test]
fn fast_paths_equal_general_paths_on_empty_and_filtered_input() {
    let (_dir, db) = common::open(1024);
    let mut s = db.session();
    let mut rng = Rng(42);
    load(&mut s, &mut rng, 3000);
    run(&mut s, "create table z (k int, t text, v int)");
    // Thresholds that keep all, some or none of the rows (none: every
    // batch reaches the aggregate empty).
    for cut in [-10_000, 0, 500, 10_000] {
        for (fast, general) in [
            (
                format!("select k, count(*), sum(v), avg(v), min(v), max(v) from a where v > {cut} group by k"),
                format!("select k, count(*) filter (where true), sum(v) filter (where true), avg(v) filter (where true), min(v) filter (where true), max(v) filter (where true) from a where v > {cut} group by k"),
            ),
            (
                format!("select t, count(v), sum(v) from a where v > {cut} group by t"),
                format!("select t, count(v) filter (where true), sum(v) filter (where true) from a where v > {cut} group by t"),
            ),
            (
                format!("select count(*), sum(v), min(v) from a where v > {cut}"),
                format!("select count(*) filter (where true), sum(v) filter (where true), min(v) filter (where true) from a where v > {cut}"),
            ),
            (
                format!("select k, count(*) from z where v > {cut} group by k"),
                format!("select k, count(*) filter (where true) from z where v > {cut} group by k"),
            ),
            (
                format!("select a.k, b.w from a join b on a.k = b.k where a.v > {cut}"),
                format!("select a.k, b.w from a join b on a.k::numeric = b.k::numeric where a.v > {cut}"),
            ),
            (
                format!("select a.t, b.w from a left join b on a.t = b.t where a.v > {cut}"),
                format!("select a.t, b.w from a left join b on a.t || '' = b.t || '' and true where a.v > {cut}"),
            ),
            (
                format!("select z.k, a.v from z join a on z.k = a.k where a.v > {cut}"),
                format!("select z.k, a.v from z join a on z.k::numeric = a.k::numeric where a.v > {cut}"),
            ),
        ] {
            for workers in [0, 2] {
                run(&mut s, &format!("set max_parallel_workers_per_gather = {workers}"));
                assert_eq!(sorted_rows(&mut s, &fast), sorted_rows(&mut s, &general), "{fast}");
            }
        }
    }
}

#[test]
fn temporary_files_are_gone_after_a_cancel() {
    use std::sync::atomic::Ordering;
    let (dir, db) = common::open(1024);
    let mut s = db.session();
    run(&mut s, "set max_parallel_workers_per_gather = 0");
    run(&mut s, "create table big (a int, b int)");
    run(
        &mut s,
        "insert into big select g, g from generate_series(1, 200000) g",
    );
    run(&mut s, "set work_mem = '64kB'");
    // The scan reports progress every 64 pages: the second report (by then
    // the table has spilled) cancels the statement.
    let flag = s.cancel_flag();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let files = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (seen2, files2, tmp) = (seen.clone(), files.clone(), dir.path().to_path_buf());
    s.set_progress(Some(std::sync::Arc::new(
        move |p: &heapdb::exec::progress::Progress| {
            seen2.fetch_max(p.done, Ordering::Relaxed);
            if p.done >= 128 {
                files2.fetch_max(temp_files(&tmp), Ordering::Relaxed);
                flag.store(true, Ordering::Relaxed);
            }
        },
    )));
    for sql in [
        "select a, count(*) from big group by a",
        "select a, b, count(*) from big group by a, b",
        "select count(*) from big x join big y on x.a = y.a",
    ] {
        files.store(0, Ordering::Relaxed);
        let e = s.execute(sql).unwrap_err();
        assert_eq!(
            e.message, "canceling statement due to user request",
            "{sql}"
        );
        assert!(files.load(Ordering::Relaxed) > 0, "{sql}: it had spilled");
        assert_eq!(temp_files(dir.path()), 0, "{sql}");
    }
}
