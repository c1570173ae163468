//! Writes through automatically updatable views against the same writes
//! on the table: for generated INSERT, UPDATE and DELETE statements, a
//! statement through a view (over another view, with renamed and computed
//! columns and both views' conditions) changes exactly the rows, and
//! returns exactly the RETURNING rows, that the equivalent statement on a
//! twin table with the views' conditions written into its WHERE does. And
//! a view's check option survives closing and reopening the database.

use heapdb::SqlState;

mod common;
use common::{rows_text, run, texts};

/// A small deterministic generator (xorshift64*), so a failure replays.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> i64 {
        (self.next() % n) as i64
    }
}

/// The statement through the views and its twin on the table `direct`.
/// The views: `inner_v (k, v, label, twice)` over `through` where
/// `v % 3 <> 0`, and `outer_v (key, val, twice)` over it where `k < 150`.
fn statement_pair(g: &mut Gen, next_key: &mut i64) -> (String, String) {
    const COND: &str = "v % 3 <> 0 and k < 150";
    match g.below(3) {
        0 => {
            let n = 1 + g.below(3);
            let rows: Vec<(i64, i64)> = (0..n)
                .map(|_| {
                    *next_key += 1 + g.below(3);
                    (*next_key, g.below(40) - 5)
                })
                .collect();
            let values = |r: &[(i64, i64)]| {
                r.iter()
                    .map(|(k, v)| format!("({k}, {v})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            (
                format!(
                    "insert into outer_v (val, key) select v, k from (values {}) s(k, v) returning key, val, twice",
                    values(&rows)
                ),
                format!(
                    "insert into direct (k, v) values {} returning k, v, v * 2",
                    values(&rows)
                ),
            )
        }
        1 => {
            let (add, lo, hi) = (g.below(7) - 3, g.below(100), g.below(120));
            (
                format!("update outer_v set val = val + {add} where key between {lo} and {hi} returning key, val, twice"),
                format!("update direct set v = v + {add} where k between {lo} and {hi} and {COND} returning k, v, v * 2"),
            )
        }
        _ => {
            let (m, r) = (2 + g.below(5), g.below(2));
            (
                format!("delete from outer_v where twice % {m} = {r} returning key, val"),
                format!("delete from direct where (v * 2) % {m} = {r} and {COND} returning k, v"),
            )
        }
    }
}

#[test]
fn writes_through_views_equal_the_same_writes_on_the_table() {
    let (_d, db) = common::open(256);
    let mut s = db.session();
    for t in ["through", "direct"] {
        run(
            &mut s,
            &format!("create table {t} (k int primary key, v int, label text default 'l')"),
        );
        run(
            &mut s,
            &format!("insert into {t} (k, v) select g, g * 7 % 23 from generate_series(1, 60) g"),
        );
    }
    run(
        &mut s,
        "create view inner_v as select k, v, label, v * 2 as twice from through where v % 3 <> 0",
    );
    run(
        &mut s,
        "create view outer_v (key, val, twice) as select k, v, twice from inner_v where k < 150",
    );
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let mut next_key = 200;
    let mut changed = 0;
    for step in 0..300 {
        let (via_view, direct) = statement_pair(&mut g, &mut next_key);
        let a = s.execute(&via_view);
        let b = s.execute(&direct);
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.tag, b.tag, "step {step}: {via_view} / {direct}");
                changed += a.rows.len();
                let (mut ra, mut rb) = (rows_text(&a), rows_text(&b));
                ra.sort();
                rb.sort();
                assert_eq!(ra, rb, "step {step}: {via_view} / {direct}");
            }
            (Err(a), Err(b)) => assert_eq!(a.code, b.code, "step {step}: {via_view}"),
            (a, b) => panic!("step {step}: {via_view} -> {a:?}, {direct} -> {b:?}"),
        }
        if step % 50 == 49 {
            assert!(changed > 0, "no statement changed a row by step {step}");
            assert_eq!(
                texts(&mut s, "select k, v, label from through order by k"),
                texts(&mut s, "select k, v, label from direct order by k"),
                "after step {step}"
            );
        }
    }
}

#[test]
fn a_check_option_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = common::open_at(dir.path(), 128);
        let mut s = db.session();
        run(&mut s, "create table c (a int)");
        run(
            &mut s,
            "create view c_small as select a from c where a < 10 with local check option",
        );
        run(&mut s, "insert into c_small values (1)");
    }
    let db = common::open_at(dir.path(), 128);
    let mut s = db.session();
    let e = s.execute("insert into c_small values (11)").unwrap_err();
    assert_eq!(e.code, SqlState::WithCheckOptionViolation);
    assert_eq!(
        e.message,
        "new row violates check option for view \"c_small\""
    );
    assert_eq!(e.detail.as_deref(), Some("Failing row contains (11)."));
    run(&mut s, "insert into c_small values (2)");
    assert_eq!(texts(&mut s, "select a from c order by a"), [["1"], ["2"]]);
}
