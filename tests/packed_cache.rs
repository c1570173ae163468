//! The packed column cache against full scans: every query shape whose
//! scan may read an all-visible page's columns from the cache (grouped
//! sums, the hash join's probe, filtered counts, min/max over a range,
//! plain sums) gives, under one snapshot, the answer of the same query
//! with `packed_cache_size = 0`, while other sessions insert, update and
//! delete (some of them rolled back) and VACUUM runs in between; a
//! cache bounded below the table's size evicts and still agrees; and a
//! change drops the entries of exactly the pages it touched.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use heapdb::{Database, Session};

mod common;
use common::{rows_text, run};

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

/// `t(id, g, v, d, f)`: three packed `int4` columns and a `date` in a
/// shuffled order (no page holds one run of them), `v` NULL on a few
/// rows (their pages decline the fast path), a text filler; `dim(k)` for
/// the join.
fn setup(s: &mut Session, rows: i64) {
    run(
        s,
        "create table t (id int, g int, v int, d date, f char(60))",
    );
    run(
        s,
        &format!(
            "insert into t select (g::int8 * 7919 % {rows})::int, (g::int8 * 31 % 50)::int, \
             case when g % 997 = 0 then null else (g::int8 * 104729 % 20001)::int - 10000 end, \
             date '2000-01-01' + (g % 5000), 'x' from generate_series(1, {rows}) g"
        ),
    );
    run(s, "create table dim (k int, name text)");
    run(
        s,
        "insert into dim select k, 'n' || k from generate_series(0, 49) k",
    );
}

fn queries(rng: &mut Rng) -> Vec<String> {
    let lo = rng.below(30_000);
    let hi = lo + rng.below(10_000);
    let k = rng.below(20_000) - 10_000;
    vec![
        "select g, sum(v), count(*), min(v), max(v) from t group by g order by g".into(),
        "select b.k, count(*) from t a, dim b where a.g = b.k group by b.k order by b.k".into(),
        format!("select count(*) from t where v <> {k} or id % 1000 = 7"),
        format!("select min(v), max(v), max(g) from t where id between {lo} and {hi}"),
        format!("select sum(id), sum(v), count(*) from t where v >= {k}"),
        "select sum(id), min(d), max(d) from t".into(),
        format!("select g, count(*) from t where id < {hi} group by g order by g"),
        "select id, g, v from t where id % 4999 = 3 order by id".into(),
    ]
}

/// Each query with the cache on (twice: the first run may build entries)
/// and off, in one REPEATABLE READ transaction; panics on a difference.
fn compare(s: &mut Session, rng: &mut Rng, what: &str) {
    run(s, "begin isolation level repeatable read");
    for q in queries(rng) {
        run(s, "set packed_cache_size = '1GB'");
        let first = rows_text(&run(s, &q));
        let again = rows_text(&run(s, &q));
        run(s, "set packed_cache_size = 0");
        let without = rows_text(&run(s, &q));
        assert_eq!(first, without, "{what}: {q}");
        assert_eq!(again, without, "{what}, from the cache: {q}");
    }
    run(s, "commit");
    run(s, "set packed_cache_size = '1GB'");
}

/// EXPLAIN ANALYZE's `Packed Cache:` figures of `q`: (hits, built).
fn packed_figures(s: &mut Session, q: &str) -> (u64, u64) {
    let r = run(s, &format!("explain analyze {q}"));
    let lines: Vec<String> = rows_text(&r).into_iter().map(|r| r.join(" ")).collect();
    let line = lines
        .iter()
        .find_map(|l| l.trim().strip_prefix("Packed Cache: "))
        .unwrap_or_else(|| panic!("no Packed Cache line: {lines:#?}"));
    let fig = |name: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {line}"))
    };
    (fig("hits"), fig("built"))
}

fn writer(db: Database, me: i64, stop: Arc<AtomicBool>) {
    let mut s = db.session();
    let mut rng = Rng(0x9E37_79B9 + me as u64);
    let mut next_id = 100_000 + me;
    while !stop.load(Ordering::Relaxed) {
        let id = rng.below(20_000) * 2 + me;
        let abort = rng.below(5) == 0;
        if abort {
            run(&mut s, "begin");
        }
        match rng.below(4) {
            0 => {
                let v = if rng.below(7) == 0 {
                    "null".to_string()
                } else {
                    (rng.below(20_000) - 10_000).to_string()
                };
                run(
                    &mut s,
                    &format!(
                        "insert into t values ({next_id}, {}, {v}, date '2001-01-01', 'n')",
                        rng.below(50)
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
                        "update t set v = v + {}, g = (g + 1) % 50 where id = {id}",
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
fn cached_pages_agree_with_full_scans_under_concurrent_writers() {
    let (_dir, db) = common::open(4096);
    let mut s = db.session();
    setup(&mut s, 40_000);
    run(&mut s, "vacuum t");
    run(&mut s, "set enable_page_summaries = off");
    run(&mut s, "set max_parallel_workers_per_gather = 0");
    // The default, set all the same.
    run(&mut s, "set packed_cache_size = '1GB'");
    let q = "select g, sum(v) from t group by g";
    let (hits, built) = packed_figures(&mut s, q);
    assert!(
        built > 50 && hits == 0,
        "first scan: built {built}, hits {hits}"
    );
    let (hits, built) = packed_figures(&mut s, q);
    assert!(
        hits > 50 && built == 0,
        "second scan: built {built}, hits {hits}"
    );
    // Another shape of the same columns takes the same entries.
    let (hits2, _) = packed_figures(&mut s, "select count(*) from t where v > 0");
    assert_eq!(hits2, hits, "a filtered count reads the same entries");
    // One update drops its page's entry (and the new version's page's).
    run(&mut s, "update t set v = 1 where id = 17");
    let (after, built) = packed_figures(&mut s, q);
    assert!(
        after + 2 >= hits && after < hits && built == 0,
        "after one update: hits {after} of {hits}, built {built}"
    );
    let mut rng = Rng(7);
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
    for round in 0..20 {
        let workers = if round % 2 == 0 { 0 } else { 2 };
        run(
            &mut s,
            &format!("set max_parallel_workers_per_gather = {workers}"),
        );
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
    // A bound below the table's packed size: entries are evicted, and
    // every answer is still the full scan's.
    run(&mut s, "set packed_cache_size = '64kB'");
    for q in queries(&mut rng) {
        run(&mut s, "set packed_cache_size = '64kB'");
        let small = rows_text(&run(&mut s, &q));
        let again = rows_text(&run(&mut s, &q));
        run(&mut s, "set packed_cache_size = 0");
        let without = rows_text(&run(&mut s, &q));
        assert_eq!(small, without, "bounded: {q}");
        assert_eq!(again, without, "bounded, again: {q}");
    }
}

/// What the cache holds of `table`'s packed columns, as `\d+` shows it:
/// (column, pages) in column order.
fn held(s: &Session, table: &str) -> Vec<(String, u64)> {
    let tables = s.list_tables().expect("tables");
    let t = tables
        .iter()
        .find(|t| t.name == table)
        .expect("table listed");
    t.packed.iter().map(|p| (p.name.clone(), p.pages)).collect()
}

#[test]
fn a_scan_builds_the_entries_of_the_columns_it_reads() {
    let (_dir, db) = common::open(4096);
    let mut s = db.session();
    run(
        &mut s,
        "create table w (a int, b int, c int, d int, e text)",
    );
    run(
        &mut s,
        "insert into w select g, g * 7 % 1000, g % 97, g % 13, 'x' from generate_series(1, 30000) g",
    );
    run(&mut s, "vacuum w");
    run(&mut s, "set enable_page_summaries = off");
    run(&mut s, "set max_parallel_workers_per_gather = 0");
    let pages = s.list_tables().expect("tables")[0].pages as u64;
    let none = |cols: &[&str]| -> Vec<(String, u64)> {
        ["a", "b", "c", "d"]
            .iter()
            .map(|c| (c.to_string(), if cols.contains(c) { pages } else { 0 }))
            .collect()
    };
    assert_eq!(held(&s, "w"), none(&[]), "nothing before a scan");
    let one = "select count(*) from w where b >= 500";
    assert_eq!(
        packed_figures(&mut s, one),
        (0, pages),
        "built: b's entries"
    );
    assert_eq!(held(&s, "w"), none(&["b"]), "b's values alone");
    assert_eq!(packed_figures(&mut s, one), (pages, 0));
    // A scan of a and b: b is held, a is not, so it reads each page and
    // adds a's entries; then both are held.
    let two = "select sum(a) from w where b >= 500";
    assert_eq!(packed_figures(&mut s, two), (0, pages));
    assert_eq!(held(&s, "w"), none(&["a", "b"]));
    assert_eq!(packed_figures(&mut s, two), (pages, 0));
    assert_eq!(
        rows_text(&run(&mut s, two)),
        vec![vec![(1..=30000i64)
            .filter(|g| g * 7 % 1000 >= 500)
            .sum::<i64>()
            .to_string()]]
    );
    // A change drops every column's entry of its pages (the old
    // version's, and the new one's when it went to another page).
    run(&mut s, "update w set c = 0 where a = 1");
    let after = held(&s, "w");
    let left = after[0].1;
    assert!(left < pages && left + 2 >= pages, "{after:?} of {pages}");
    assert_eq!(after[1].1, left, "a's and b's entries go together");
    assert_eq!(packed_figures(&mut s, two), (left, 0));
}
