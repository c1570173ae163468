//! Sorted grouping returns exactly the hashed grouping's rows: seeded
//! random tables (NULL keys, few and many groups, groups spanning many
//! batches, text, numeric, float and boolean columns), random GROUP BY
//! lists (columns, expressions, several keys) and every kind of aggregate
//! (count, DISTINCT, FILTER, ORDER BY in the call, sum/avg/min/max over
//! each type, bool_and/bool_or, string_agg, array_agg, statistics), with
//! and without HAVING and ORDER BY. Each query runs with `enable_hashagg`
//! on (the reference) and off (a `GroupAggregate`); the rows must be equal
//! — in the same order when the query has an ORDER BY on every key — and
//! the sorted plan must have been taken.

use heapdb::Session;

mod common;

/// xorshift64*: a seeded generator, enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const KEYS: &[&str] = &[
    "k",
    "j",
    "t",
    "k % 3",
    "b",
    "n",
    "lower(t)",
    "id / 700",
    "id % 3000",
];

const AGGS: &[&str] = &[
    "count(*)",
    "count(v)",
    "count(distinct v)",
    "sum(v)",
    "avg(v)",
    "min(v)",
    "max(v)",
    "sum(n)",
    "avg(n)",
    "min(t)",
    "max(t)",
    "sum(f)",
    "bool_and(b)",
    "bool_or(b)",
    "string_agg(t, ',' order by t, id)",
    "array_agg(v order by id)",
    "count(*) filter (where v > 10)",
    "stddev(v)",
    "min(n)",
    "count(distinct t)",
];

fn query(r: &mut Rng) -> (String, bool) {
    let nkeys = 1 + r.below(3) as usize;
    let mut keys: Vec<&str> = Vec::new();
    while keys.len() < nkeys {
        let k = r.pick(KEYS);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let naggs = 1 + r.below(4) as usize;
    let aggs: Vec<&str> = (0..naggs).map(|_| r.pick(AGGS)).collect();
    let mut sql = format!("select {}, {} from g", keys.join(", "), aggs.join(", "));
    if r.below(3) == 0 {
        sql.push_str(&format!(" where v < {}", r.below(40)));
    }
    sql.push_str(&format!(" group by {}", keys.join(", ")));
    if r.below(4) == 0 {
        sql.push_str(&format!(" having count(*) > {}", r.below(5)));
    }
    let ordered = r.below(2) == 0;
    if ordered {
        let order: Vec<String> = keys
            .iter()
            .rev()
            .map(|k| {
                let dir = r.pick(&["", " desc", " nulls first", " desc nulls last"]);
                format!("{k}{dir}")
            })
            .collect();
        sql.push_str(&format!(" order by {}", order.join(", ")));
    }
    (sql, ordered)
}

fn rows(s: &mut Session, sql: &str, ordered: bool) -> Vec<Vec<String>> {
    let mut r = common::texts(s, sql);
    if !ordered {
        r.sort();
    }
    r
}

#[test]
fn sorted_grouping_returns_the_hashed_groupings_rows() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    let mut sorted_plans = 0;
    for seed in 1..=6u64 {
        let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        common::run(&mut s, "drop table if exists g");
        common::run(
            &mut s,
            "create table g (id int, k int, j int, v int, t text, n numeric, f float8, b bool)",
        );
        let nulls = 1 + r.below(6);
        let spread = [3, 40, 2000][r.below(3) as usize];
        common::run(
            &mut s,
            &format!(
                "insert into g select i, \
                 case when i % {nulls} = 0 then null else (i * 7919) % {spread} end, \
                 case when i % 11 = 0 then null else i % 5 end, \
                 case when i % 13 = 0 then null else (i * 31) % 50 end, \
                 case when i % 17 = 0 then null else 'T' || ((i * 13) % 9) end, \
                 case when i % 19 = 0 then null else ((i % 8) / 4.0)::numeric end, \
                 (i % 10) / 4.0, \
                 case when i % 23 = 0 then null else i % 3 = 0 end \
                 from generate_series(1, 4000) i"
            ),
        );
        for _ in 0..25 {
            let (sql, ordered) = query(&mut r);
            common::run(&mut s, "set enable_hashagg = on");
            let want = rows(&mut s, &sql, ordered);
            common::run(&mut s, "set enable_hashagg = off");
            let plan = common::lines(&mut s, &format!("explain {sql}"));
            if plan.iter().any(|l| l.contains("GroupAggregate")) {
                sorted_plans += 1;
            }
            let got = rows(&mut s, &sql, ordered);
            assert_eq!(got, want, "{sql}");
            // Without ORDER BY the groups come out sorted on the keys.
            if !ordered {
                let plain = rows(&mut s, &sql, true);
                assert_eq!(plain.len(), want.len(), "{sql}");
            }
        }
        common::run(&mut s, "reset enable_hashagg");
    }
    assert_eq!(sorted_plans, 150, "every query took the sorted grouping");
}
