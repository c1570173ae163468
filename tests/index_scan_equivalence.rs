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
//!
//! Partial indexes the same way: random predicates (ranges, IS NOT NULL,
//! IN lists, ORs, text ranges) over random data (loaded by INSERT and by
//! COPY, before and after some of the builds) changed by updates that
//! move rows in and out of them, queries whose conditions imply a
//! predicate (the same clause, a narrower range, an IN list inside it) or
//! not; every plan gives the sequential scan's rows, `bt_index_check` finds
//! exactly the predicate's rows in each partial index, and the partial
//! indexes are used.

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

/// A partial index's predicate and a condition implying it, drawn together.
fn partial(r: &mut Rng) -> (String, String) {
    let v = |r: &mut Rng| r.below(60) as i64 - 10;
    let k = v(r);
    match r.below(6) {
        0 => (format!("a > {k}"), format!("a > {}", k + r.below(8) as i64)),
        1 => (
            "b is not null".into(),
            format!("b {} {}", ["=", "<", ">="][r.below(3) as usize], v(r)),
        ),
        2 => (
            format!("a between {k} and {}", k + 20),
            format!("a >= {} and a < {}", k + 2, k + 2 + r.below(18) as i64),
        ),
        3 => (
            format!("b in ({k}, {}, {})", k + 1, k + 5),
            format!("b = {}", [k, k + 1, k + 5][r.below(3) as usize]),
        ),
        4 => (
            format!("a < {k} or b > {}", k + 10),
            format!("a < {}", k - r.below(5) as i64),
        ),
        _ => (
            format!("c < 't{}'", 10 + r.below(20)),
            format!("c = 't{}'", r.below(10)),
        ),
    }
}

#[test]
fn partial_index_paths_return_the_sequential_scans_rows() {
    let (d, db) = common::open(2048);
    let mut s = db.session();
    let (mut queries, mut partial_used) = (0, 0);
    let csv = d.path().join("q.csv");
    for seed in 1..=10u64 {
        let mut r = Rng(seed.wrapping_mul(0x51_7cc1_b727_220a) | 1);
        common::run(&mut s, "drop table if exists q");
        common::run(&mut s, "create table q (id int, a int, b int, c text)");
        let n = 300 + r.below(1500);
        let values: Vec<String> = (0..n)
            .map(|i| format!("({i}, {}, {}, {})", r.int(), r.int(), r.text()))
            .collect();
        // Half the indexes exist before the rows (entries made by INSERT),
        // half are built over them.
        let mut preds = Vec::new();
        let mut make = |s: &mut Session, r: &mut Rng, i: usize| {
            let (pred, implying) = partial(r);
            let cols = ["(a)", "(b, a)", "(c)", "(a desc) include (b)"][r.below(4) as usize];
            common::run(s, &format!("create index q_p{i} on q {cols} where {pred}"));
            preds.push((format!("q_p{i}"), pred, implying));
        };
        make(&mut s, &mut r, 0);
        make(&mut s, &mut r, 1);
        common::run(
            &mut s,
            &format!(
                "create unique index q_id_live on q (id) where a > {}",
                r.int().replace("null", "0")
            ),
        );
        // Half the rows by INSERT, half by COPY (whose entries are made in
        // sorted batches).
        let half = values.len() / 2;
        common::run(
            &mut s,
            &format!("insert into q values {}", values[..half].join(", ")),
        );
        let lines: Vec<String> = values[half..]
            .iter()
            .map(|v| {
                v.trim_matches(|c| c == '(' || c == ')')
                    .split(", ")
                    .map(|f| {
                        if f == "null" {
                            ""
                        } else {
                            f.trim_matches('\'')
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect();
        std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
        common::run(
            &mut s,
            &format!("copy q from '{}' with (format csv)", csv.display()),
        );
        make(&mut s, &mut r, 2);
        make(&mut s, &mut r, 3);
        common::run(&mut s, "create index q_full on q (a)");
        // Updates move rows in and out of the predicates.
        for _ in 0..3 {
            let (x, y) = (r.below(50) as i64 - 10, r.below(7) as i64 - 3);
            common::run(
                &mut s,
                &format!("update q set a = a + {y}, b = b - {y} where b = {x} or a = {x}"),
            );
        }
        common::run(
            &mut s,
            &format!("delete from q where a = {}", r.below(50) as i64 - 10),
        );
        common::run(&mut s, "analyze q");
        for (name, pred, _) in &preds {
            let want = common::texts(&mut s, &format!("select count(*) from q where {pred}"));
            let got = common::texts(
                &mut s,
                &format!("select heap_tuples from bt_index_check('{name}')"),
            );
            assert_eq!(got, want, "seed {seed}: {name} where {pred}");
        }
        for _ in 0..30 {
            let (name, pred, implying) = &preds[r.below(preds.len() as u64) as usize];
            let cond = match r.below(4) {
                0 => pred.clone(),
                1 => implying.clone(),
                2 => format!("({implying}) and {}", predicate(&mut r)),
                _ => predicate(&mut r),
            };
            let (sql, ordered) = match r.below(3) {
                0 => (format!("select count(*), sum(a) from q where {cond}"), true),
                1 => (format!("select a, b from q where {cond}"), false),
                _ => (format!("select * from q where {cond}"), false),
            };
            common::run(&mut s, "set enable_seqscan = on");
            common::run(&mut s, "set enable_indexscan = off");
            common::run(&mut s, "set enable_indexonlyscan = off");
            let want = rows(&mut s, &sql, ordered);
            common::run(&mut s, "set enable_indexscan = on");
            common::run(&mut s, "set enable_indexonlyscan = on");
            common::run(&mut s, "set enable_seqscan = off");
            let got = rows(&mut s, &sql, ordered);
            queries += 1;
            let plan = common::lines(&mut s, &format!("explain {sql}")).join("\n");
            partial_used += usize::from(plan.contains(name.as_str()));
            assert_eq!(got, want, "seed {seed}: {sql}\n{plan}");
        }
        common::run(&mut s, "reset enable_seqscan");
        common::run(&mut s, "reset enable_indexscan");
        common::run(&mut s, "reset enable_indexonlyscan");
    }
    assert!(
        partial_used * 4 > queries,
        "only {partial_used} of {queries} queries used their partial index"
    );
}
