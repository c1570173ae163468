//! Grouped aggregates folded on the page (`exec::fastpath::page_group`)
//! against the general aggregate: `select k, sum(v), ... group by k` over
//! all-visible pages (from the packed cache and read from the page) gives
//! the rows of the same query with every aggregate under `FILTER (WHERE
//! true)` (which no fast path takes), serial and parallel, before and
//! after writes and VACUUM; keys out of the folded range (negative, past
//! 65535), NULL keys and NULL values decline their pages to the rows.

use heapdb::Session;

mod common;
use common::{rows_text, run};

/// `t(k, v, w, pad)`: small keys in a shuffled order, the edges of `int4`
/// among the values; one page region with large and negative keys, rows
/// with a NULL key or value here and there.
fn setup(s: &mut Session, rows: i64) {
    run(s, "create table t (k int, v int, w int, pad char(40))");
    run(
        s,
        &format!(
            "insert into t select \
               case when g % 1009 = 0 then null \
                    when g between 20000 and 20300 then (g * 7)::int - 140000 \
                    else (g::int8 * 7919 % 37)::int end, \
               case when g % 997 = 0 then null \
                    when g % 13 = 0 then 2147483647 \
                    when g % 17 = 0 then -2147483648 \
                    else (g::int8 * 104729 % 20001)::int - 10000 end, \
               (g::int8 * 31 % 1000)::int, 'x' \
             from generate_series(1, {rows}) g"
        ),
    );
}

const QUERIES: &[(&str, &str)] = &[
    (
        "select k, sum(v), count(*), min(v), max(w), avg(w), count(v) from t group by k",
        "select k, sum(v) filter (where true), count(*) filter (where true), \
         min(v) filter (where true), max(w) filter (where true), \
         avg(w) filter (where true), count(v) filter (where true) from t group by k",
    ),
    (
        "select w, sum(k), count(*) from t group by w",
        "select w, sum(k) filter (where true), count(*) filter (where true) from t group by w",
    ),
    (
        "select k, count(*) from t group by k",
        "select k, count(*) filter (where true) from t group by k",
    ),
];

/// Each query against its general form, twice (the second run from the
/// packed cache), in one REPEATABLE READ transaction; rows compared
/// sorted (an unordered GROUP BY).
fn compare(s: &mut Session, what: &str) {
    run(s, "begin isolation level repeatable read");
    for (fast, general) in QUERIES {
        let mut want = rows_text(&run(s, general));
        want.sort();
        for round in 0..2 {
            let mut got = rows_text(&run(s, fast));
            got.sort();
            assert_eq!(got, want, "{what}, run {round}: {fast}");
        }
    }
    run(s, "commit");
}

#[test]
fn grouped_pages_fold_as_the_general_aggregate() {
    let (_dir, db) = common::open(4096);
    let mut s = db.session();
    setup(&mut s, 60_000);
    run(&mut s, "set enable_page_summaries = off");
    compare(&mut s, "not vacuumed");
    run(&mut s, "vacuum t");
    for workers in ["0", "2"] {
        run(
            &mut s,
            &format!("set max_parallel_workers_per_gather = {workers}"),
        );
        compare(&mut s, &format!("vacuumed, {workers} workers"));
        run(&mut s, "set packed_cache_size = 0");
        compare(&mut s, &format!("no packed cache, {workers} workers"));
        run(&mut s, "set packed_cache_size = '1GB'");
    }
    run(&mut s, "update t set v = v / 2 where w < 100");
    run(&mut s, "delete from t where w between 500 and 520");
    compare(&mut s, "after writes");
    run(&mut s, "vacuum t");
    run(&mut s, "set enable_page_summaries = on");
    compare(&mut s, "vacuumed again, with summaries");
    // A spilling aggregate stops folding pages and still agrees.
    run(&mut s, "set work_mem = '64kB'");
    compare(&mut s, "64kB of work_mem");
}
