//! Index scans return exactly the sequential scan's rows: seeded random
//! tables (NULLs, duplicates, text), random indexes (multi-column, DESC,
//! NULLS FIRST, INCLUDE), dead versions left by committed updates and
//! deletes, entries of a rolled-back insert, and a concurrent session's
//! uncommitted changes; random predicates (equality, ranges, BETWEEN, IN,
//! IS NULL, prefixes with a range) and ORDER BY .. LIMIT in both
//! directions. Each query runs with `enable_indexscan` off (the sequential
//! scan, the reference) and with `enable_seqscan` off (an index path
//! wherever one applies); the results must be equal, and the index path
//! must have been taken for most of them.

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
    fn int(&mut self) -> String {
        if self.below(10) == 0 {
            "null".into()
        } else {
            (self.below(60) as i64 - 10).to_string()
        }
    }
    fn text(&mut self) -> String {
        if self.below(10) == 0 {
            "null".into()
        } else {
            format!("'t{}'", self.below(40))
        }
    }
}

const INDEXES: &[&str] = &[
    "(a)",
    "(a desc)",
    "(a, b)",
    "(a desc nulls last, b)",
    "(b nulls first, a desc)",
    "(c)",
    "(c desc, a)",
    "(a) include (c)",
    "(b, c)",
];

fn predicate(r: &mut Rng) -> String {
    let v = |r: &mut Rng| r.below(60) as i64 - 10;
    match r.below(14) {
        0 => format!("a = {}", v(r)),
        1 => format!("a < {}", v(r)),
        2 => format!("a >= {}", v(r)),
        3 => {
            let x = v(r);
            format!("a between {} and {}", x, x + r.below(10) as i64)
        }
        4 => format!("a in ({}, {}, {})", v(r), v(r), v(r)),
        5 => "a is null".into(),
        6 => format!("a = {} and b > {}", v(r), v(r)),
        7 => format!("b = {} and a <= {}", v(r), v(r)),
        8 => format!("c = 't{}'", r.below(40)),
        9 => format!("c > 't{}' and c <= 't{}'", r.below(40), r.below(40)),
        10 => format!("b is null and a > {}", v(r)),
        11 => format!("{} > a and a > {}", v(r), v(r)),
        12 => format!("b in ({}, {}) and c is null", v(r), v(r)),
        _ => format!("a = {} and b = {} and c = 't{}'", v(r), v(r), r.below(40)),
    }
}

/// The query's rows under the current settings, sorted unless `ordered`.
fn rows(s: &mut Session, sql: &str, ordered: bool) -> Vec<Vec<String>> {
    let mut r = common::texts(s, sql);
    if !ordered {
        r.sort();
    }
    r
}

fn uses_index(s: &mut Session, sql: &str) -> bool {
    common::lines(s, &format!("explain {sql}"))
        .iter()
        .any(|l| l.contains("Index"))
}

#[test]
fn index_paths_return_the_sequential_scans_rows() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    let mut other = db.session();
    let (mut queries, mut indexed) = (0, 0);
    for seed in 1..=10u64 {
        let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        common::run(&mut s, "drop table if exists p");
        common::run(&mut s, "create table p (id int, a int, b int, c text)");
        let n = 300 + r.below(1500);
        let values: Vec<String> = (0..n)
            .map(|i| format!("({i}, {}, {}, {})", r.int(), r.int(), r.text()))
            .collect();
        common::run(
            &mut s,
            &format!("insert into p values {}", values.join(", ")),
        );
        for _ in 0..2 {
            let ix = INDEXES[r.below(INDEXES.len() as u64) as usize];
            common::run(&mut s, &format!("create index on p {ix}"));
        }
        // Dead versions: committed updates and deletes, a rolled-back insert.
        let (x, y) = (r.below(50) as i64 - 10, r.below(50) as i64 - 10);
        common::run(&mut s, &format!("update p set a = a + 1 where b = {x}"));
        common::run(&mut s, &format!("delete from p where a = {y}"));
        common::run(&mut s, "begin");
        common::run(
            &mut s,
            "insert into p select id + 100000, a, b, c from p where id % 3 = 0",
        );
        common::run(&mut s, "rollback");
        common::run(&mut s, "analyze p");
        // A concurrent session's uncommitted changes: invisible here.
        common::run(&mut other, "begin");
        common::run(&mut other, &format!("update p set b = b - 1 where a = {x}"));
        common::run(&mut other, &format!("delete from p where b = {y}"));
        common::run(
            &mut other,
            "insert into p values (-1, 1, 1, 't1'), (-2, null, null, null)",
        );
        for _ in 0..30 {
            let pred = predicate(&mut r);
            let (sql, ordered) = match r.below(4) {
                0 => {
                    let dir = if r.below(2) == 0 { "" } else { " desc" };
                    let nulls = if r.below(2) == 0 { "" } else { " nulls first" };
                    (
                        format!(
                            "select a from p where {pred} order by a{dir}{nulls} limit {}",
                            1 + r.below(20)
                        ),
                        true,
                    )
                }
                1 => (format!("select count(*), sum(a) from p where {pred}"), true),
                2 => (format!("select a, b from p where {pred}"), false),
                _ => (format!("select * from p where {pred}"), false),
            };
            common::run(&mut s, "set enable_seqscan = on");
            common::run(&mut s, "set enable_indexscan = off");
            let want = rows(&mut s, &sql, ordered);
            common::run(&mut s, "set enable_indexscan = on");
            common::run(&mut s, "set enable_seqscan = off");
            let got = rows(&mut s, &sql, ordered);
            queries += 1;
            indexed += usize::from(uses_index(&mut s, &sql));
            assert_eq!(got, want, "seed {seed}: {sql}");
        }
        common::run(&mut other, "rollback");
        common::run(&mut s, "reset enable_seqscan");
        common::run(&mut s, "reset enable_indexscan");
    }
    assert!(
        indexed * 2 > queries,
        "only {indexed} of {queries} queries used an index"
    );
}
