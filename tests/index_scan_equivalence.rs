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
//!
//! Bitmap heap scans the same way, forced by the settings: random ANDs and
//! ORs of those predicates (BitmapAnd, BitmapOr), partial indexes, NULLs,
//! dead and uncommitted versions; a table large enough that a 64kB
//! `work_mem` makes pages lossy (their tuples rechecked); and a scan that
//! goes on reading its bitmap while another session updates and inserts
//! rows in its range: it returns exactly what its snapshot sees.

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
            common::run(&mut s, "set enable_bitmapscan = off");
            let want = rows(&mut s, &sql, ordered);
            common::run(&mut s, "set enable_bitmapscan = on");
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
            common::run(&mut s, "set enable_bitmapscan = off");
            let want = rows(&mut s, &sql, ordered);
            common::run(&mut s, "set enable_bitmapscan = on");
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

/// A random AND or OR of one or two [`predicate`]s.
fn bitmap_predicate(r: &mut Rng) -> String {
    match r.below(4) {
        0 => predicate(r),
        1 => format!("({}) or ({})", predicate(r), predicate(r)),
        2 => format!("({}) and ({})", predicate(r), predicate(r)),
        _ => format!(
            "a = {} or a = {}",
            r.below(60) as i64 - 10,
            r.below(60) as i64 - 10
        ),
    }
}

/// The settings that leave a bitmap heap scan wherever one applies.
const FORCE_BITMAP: &[&str] = &[
    "set enable_seqscan = off",
    "set enable_indexscan = off",
    "set enable_indexonlyscan = off",
    "set enable_bitmapscan = on",
];

/// The settings of the reference: sequential scans only.
const SEQ_ONLY: &[&str] = &[
    "set enable_seqscan = on",
    "set enable_indexscan = off",
    "set enable_indexonlyscan = off",
    "set enable_bitmapscan = off",
];

fn set(s: &mut Session, settings: &[&str]) {
    for sql in settings {
        common::run(s, sql);
    }
}

#[test]
fn bitmap_paths_return_the_sequential_scans_rows() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    let mut other = db.session();
    let (mut queries, mut bitmap) = (0, 0);
    for seed in 1..=10u64 {
        let mut r = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
        common::run(&mut s, "drop table if exists bq");
        common::run(&mut s, "create table bq (id int, a int, b int, c text)");
        let n = 500 + r.below(3000);
        let values: Vec<String> = (0..n)
            .map(|i| format!("({i}, {}, {}, {})", r.int(), r.int(), r.text()))
            .collect();
        common::run(
            &mut s,
            &format!("insert into bq values {}", values.join(", ")),
        );
        for _ in 0..3 {
            let ix = INDEXES[r.below(INDEXES.len() as u64) as usize];
            common::run(&mut s, &format!("create index on bq {ix}"));
        }
        let (pred, _) = partial(&mut r);
        common::run(&mut s, &format!("create index on bq (b) where {pred}"));
        let (x, y) = (r.below(50) as i64 - 10, r.below(50) as i64 - 10);
        common::run(&mut s, &format!("update bq set a = a + 1 where b = {x}"));
        common::run(&mut s, &format!("delete from bq where a = {y}"));
        common::run(&mut s, "analyze bq");
        if seed % 2 == 0 {
            common::run(&mut s, "vacuum bq");
        }
        common::run(&mut other, "begin");
        common::run(
            &mut other,
            &format!("update bq set b = b - 1 where a = {x}"),
        );
        common::run(&mut other, "insert into bq values (-1, 1, 1, 't1')");
        for _ in 0..30 {
            let cond = bitmap_predicate(&mut r);
            let (sql, ordered) = match r.below(3) {
                0 => (
                    format!("select count(*), sum(a) from bq where {cond}"),
                    true,
                ),
                1 => (format!("select a, b from bq where {cond}"), false),
                _ => (format!("select * from bq where {cond}"), false),
            };
            set(&mut s, SEQ_ONLY);
            let want = rows(&mut s, &sql, ordered);
            set(&mut s, FORCE_BITMAP);
            let work_mem = if r.below(2) == 0 { "64kB" } else { "4MB" };
            common::run(&mut s, &format!("set work_mem = '{work_mem}'"));
            let got = rows(&mut s, &sql, ordered);
            let plan = common::lines(&mut s, &format!("explain {sql}")).join("\n");
            queries += 1;
            bitmap += usize::from(plan.contains("Bitmap Heap Scan"));
            assert_eq!(got, want, "seed {seed}: {sql}\n{plan}");
        }
        common::run(&mut other, "rollback");
        common::run(&mut s, "reset all");
    }
    assert!(
        bitmap * 2 > queries,
        "only {bitmap} of {queries} queries used a bitmap"
    );
}

#[test]
fn lossy_bitmap_pages_are_rechecked() {
    let (_d, db) = common::open(4096);
    let mut s = db.session();
    common::run(&mut s, "create table lb (a int, b int, pad text)");
    // About 2,900 pages of 14 rows: more pages than a 64kB bitmap holds.
    common::run(
        &mut s,
        "insert into lb select (g * 7919) % 40000, g % 97, repeat('x', 500) from generate_series(1, 40000) g",
    );
    common::run(&mut s, "create index lb_a on lb (a)");
    common::run(&mut s, "create index lb_b on lb (b)");
    common::run(&mut s, "analyze lb");
    let queries = [
        "select count(*), sum(b) from lb where a < 30000",
        "select count(*), sum(a) from lb where a < 30000 and b < 40",
        "select count(*), sum(a) from lb where a < 5000 or b = 3",
        "select count(*) from lb where a between 100 and 35000",
    ];
    let mut lossy = 0;
    for sql in queries {
        set(&mut s, SEQ_ONLY);
        let want = common::texts(&mut s, sql);
        set(&mut s, FORCE_BITMAP);
        common::run(&mut s, "set work_mem = '64kB'");
        let got = common::texts(&mut s, sql);
        let plan = common::lines(&mut s, &format!("explain analyze {sql}")).join("\n");
        assert_eq!(got, want, "{sql}\n{plan}");
        assert!(plan.contains("Bitmap Heap Scan"), "{sql}\n{plan}");
        if plan.contains("lossy=") {
            lossy += 1;
            assert!(
                plan.contains("Rows Removed by Index Recheck") || !sql.contains("a <"),
                "a lossy range rechecks its rows away: {sql}\n{plan}"
            );
        }
        common::run(&mut s, "reset work_mem");
        let exact = common::lines(&mut s, &format!("explain analyze {sql}")).join("\n");
        assert!(!exact.contains("lossy="), "4MB holds it exactly: {exact}");
    }
    assert!(lossy >= 3, "only {lossy} of the plans had lossy pages");
}

#[test]
fn a_bitmap_scan_returns_its_snapshots_rows_while_they_change() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    let mut other = db.session();
    common::run(&mut s, "create table bu (a int, b int)");
    common::run(
        &mut s,
        "insert into bu select (g * 7919) % 20000, g from generate_series(1, 20000) g",
    );
    common::run(&mut s, "create index bu_a on bu (a)");
    common::run(&mut s, "analyze bu");
    set(&mut s, FORCE_BITMAP);
    let sql = "select a, b from bu where a < 6000";
    let mut want = common::texts(&mut s, sql);
    want.sort();
    assert_eq!(want.len(), 6000);
    // After the first batch (the bitmap is built by then), another session
    // moves rows out of the range and into it, inserts and deletes, and
    // commits: the scan goes on with its own snapshot.
    let mut got: Vec<Vec<String>> = Vec::new();
    let mut changed = false;
    let mut sink = |_: &[heapdb::session::Column], b: &heapdb::vector::Batch| {
        for i in 0..b.len {
            got.push(b.row(i).iter().map(common::text).collect());
        }
        if !changed {
            changed = true;
            common::run(&mut other, "update bu set a = a + 100000 where a % 3 = 0");
            common::run(
                &mut other,
                "update bu set a = a - 15000 where a >= 15000 and a < 20000",
            );
            common::run(
                &mut other,
                "insert into bu select g, -g from generate_series(1, 3000) g",
            );
            common::run(&mut other, "delete from bu where a % 7 = 1 and a < 6000");
        }
        Ok(())
    };
    s.execute_streaming(sql, &mut sink).unwrap();
    assert!(changed, "the scan returned no batch");
    got.sort();
    assert_eq!(got, want, "the scan saw its snapshot's rows only");
    // A new statement sees the changes, through the bitmap as sequentially.
    let mut now = common::texts(&mut s, sql);
    set(&mut s, SEQ_ONLY);
    let mut seq = common::texts(&mut s, sql);
    now.sort();
    seq.sort();
    assert_eq!(now, seq);
    assert_ne!(now, want);
    // count(*) skips the heap for all-visible pages: after VACUUM, and
    // after a delete that clears some pages' bits, it still counts what a
    // sequential scan counts.
    common::run(&mut s, "vacuum bu");
    for step in 0..2 {
        for sql in [
            "select count(*) from bu where a < 6000",
            "select count(*) from bu where a < 300 or a > 19000",
        ] {
            set(&mut s, SEQ_ONLY);
            let want = common::texts(&mut s, sql);
            set(&mut s, FORCE_BITMAP);
            let got = common::texts(&mut s, sql);
            let plan = common::lines(&mut s, &format!("explain {sql}")).join("\n");
            assert!(plan.contains("Bitmap Heap Scan"), "{plan}");
            assert_eq!(got, want, "step {step}: {sql}");
        }
        common::run(&mut s, "delete from bu where a % 11 = 0 and a < 6000");
    }
}
