//! Window aggregates against a recomputation per row: for random tables,
//! every frame kind's result (the incremental path of frames that start
//! at the partition's first row, the per-row path of moving frames, RANGE
//! offsets, EXCLUDE) equals a correlated subquery that aggregates the same
//! rows from scratch — in memory and with the sort below the window
//! spilling under a small `work_mem`.

use heapdb::Session;

mod common;
use common::{open, rows_text, run};

/// A deterministic pseudo-random sequence (a 64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Fills `w(id, p, k, x)`: ids 1..=n in order, a few partitions, order
/// keys with many ties, values with NULLs.
fn fill(s: &mut Session, seed: u64, n: usize) {
    run(s, "drop table if exists w");
    run(s, "create table w (id int, p int, k int, x int)");
    let mut r = Lcg(seed);
    let rows: Vec<String> = (1..=n)
        .map(|id| {
            let x = if r.next(7) == 0 {
                "null".to_string()
            } else {
                (r.next(200) as i64 - 50).to_string()
            };
            format!("({id}, {}, {}, {x})", r.next(4), r.next(12))
        })
        .collect();
    run(s, &format!("insert into w values {}", rows.join(", ")));
}

/// Each window expression and the subquery that recomputes it.
const PAIRS: &[(&str, &str)] = &[
    (
        "sum(x) over (partition by p order by k)",
        "(select sum(x) from w v where v.p = w.p and v.k <= w.k)",
    ),
    (
        "count(x) over (partition by p order by k)",
        "(select count(x) from w v where v.p = w.p and v.k <= w.k)",
    ),
    (
        "max(x) over (partition by p order by k desc)",
        "(select max(x) from w v where v.p = w.p and v.k >= w.k)",
    ),
    (
        "sum(x) over (order by id rows between 3 preceding and current row)",
        "(select sum(x) from w v where v.id between w.id - 3 and w.id)",
    ),
    (
        "min(x) over (order by id rows between 2 following and 5 following)",
        "(select min(x) from w v where v.id between w.id + 2 and w.id + 5)",
    ),
    (
        "count(*) over (partition by p order by k range between 2 preceding and 1 following)",
        "(select count(*) from w v where v.p = w.p and v.k between w.k - 2 and w.k + 1)",
    ),
    (
        "sum(x) over (partition by p order by k desc range between 1 preceding and 3 following)",
        "(select sum(x) from w v where v.p = w.p and v.k between w.k - 3 and w.k + 1)",
    ),
    (
        "max(x) over (partition by p order by id rows between unbounded preceding and unbounded following exclude current row)",
        "(select max(x) from w v where v.p = w.p and v.id <> w.id)",
    ),
    (
        "sum(x) over (partition by p order by k rows between unbounded preceding and unbounded following exclude group)",
        "(select sum(x) from w v where v.p = w.p and v.k <> w.k)",
    ),
    (
        "count(x) over (partition by p order by k range between current row and unbounded following exclude ties)",
        "(select count(x) from w v where v.p = w.p and (v.k > w.k or v.id = w.id))",
    ),
];

fn check(s: &mut Session, what: &str) {
    for (window, subquery) in PAIRS {
        let sql = format!("select id, {window}, {subquery} from w order by id");
        let rows = rows_text(&run(s, &sql));
        assert!(!rows.is_empty());
        for row in &rows {
            assert_eq!(row[1], row[2], "{what}: {window}, row id {}", row[0]);
        }
    }
}

#[test]
fn window_aggregates_equal_a_recomputation_per_row() {
    let (_dir, db) = open(1024);
    let mut s = db.session();
    for seed in [1, 7, 42] {
        fill(&mut s, seed, 240);
        check(&mut s, &format!("seed {seed}"));
    }
}

#[test]
fn window_aggregates_equal_a_recomputation_when_the_sort_spills() {
    let (_dir, db) = open(1024);
    let mut s = db.session();
    fill(&mut s, 3, 3000);
    run(&mut s, "set work_mem = '64kB'");
    // Only the cheap pairs: the subqueries are quadratic.
    for (window, subquery) in &PAIRS[3..5] {
        let sql = format!("select id, {window}, {subquery} from w order by id");
        for row in rows_text(&run(&mut s, &sql)) {
            assert_eq!(row[1], row[2], "spilled: {window}, row id {}", row[0]);
        }
    }
    let a = rows_text(&run(
        &mut s,
        "select id, sum(x) over (partition by p order by k, id) from w order by id",
    ));
    run(&mut s, "reset work_mem");
    let b = rows_text(&run(
        &mut s,
        "select id, sum(x) over (partition by p order by k, id) from w order by id",
    ));
    assert_eq!(a, b);
}
