//! The hash join's probe fused into the aggregation above it
//! (`exec::fastpath::join_agg`) against the unfused paths: seeded random
//! dimension and fact tables (dense and sparse keys, negative keys, NULL
//! keys on both sides, a duplicate build key placed anywhere in the build
//! rows, keys without a partner), serial and parallel, in memory and with a
//! `work_mem` small enough that the aggregation spills.

use heapdb::Session;

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

/// The rows of `sql`, rendered, in the order they came.
fn rows(s: &mut Session, sql: &str) -> Vec<String> {
    let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.rows
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
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// `d(k, g, name)`: `dims` rows of keys `base + i` (a few NULL, or, in a
/// sparse round, spread over a billion); one duplicate key when `dup`.
/// `f(k, v, w)`: `facts` rows whose keys mostly hit `d`, some miss, some
/// are NULL.
fn load(s: &mut Session, rng: &mut Rng, dims: u64, facts: u64, sparse: bool, dup: bool) {
    run(s, "drop table if exists d");
    run(s, "drop table if exists f");
    run(s, "create table d (k int, g int, name text)");
    run(s, "create table f (k int, v int, w bigint)");
    let base = rng.below(2000) as i64 - 1000;
    let key = |i: u64| {
        if sparse {
            base + i as i64 * 7_919_993 % 1_000_000_007
        } else {
            base + i as i64
        }
    };
    let mut values = Vec::new();
    for i in 0..dims {
        let k = if rng.below(40) == 0 {
            "NULL".to_string()
        } else {
            key(i).to_string()
        };
        values.push(format!("({k}, {}, 'n{}')", rng.below(7), i % 13));
    }
    if dup && dims > 0 {
        let at = rng.below(values.len() as u64) as usize;
        values.insert(at, format!("({}, 99, 'dup')", key(rng.below(dims))));
    }
    for chunk in values.chunks(2000) {
        run(s, &format!("insert into d values {}", chunk.join(", ")));
    }
    let mut values = Vec::new();
    for _ in 0..facts {
        let k = match rng.below(30) {
            0 => "NULL".to_string(),
            1 => (base - 1 - rng.below(50) as i64).to_string(),
            2 => (rng.next() as i32).to_string(),
            _ => key(rng.below(dims.max(1))).to_string(),
        };
        let v = if rng.below(12) == 0 {
            "NULL".to_string()
        } else {
            (rng.below(2000) as i64 - 700).to_string()
        };
        values.push(format!("({k}, {v}, {})", rng.next() as i64 >> 20));
    }
    for chunk in values.chunks(2000) {
        run(s, &format!("insert into f values {}", chunk.join(", ")));
    }
    run(s, "analyze d");
    run(s, "analyze f");
}

/// The fused shapes: (select list, group by).
const SHAPES: &[(&str, &str)] = &[
    ("d.k, count(*)", "group by d.k"),
    ("f.k, count(*), sum(f.v)", "group by f.k"),
    (
        "d.g, count(*), count(f.v), sum(f.v), avg(f.v), min(f.w), max(f.v)",
        "group by d.g",
    ),
    ("d.name, count(*), sum(f.v + 1)", "group by d.name"),
    ("count(*), sum(f.v), min(f.v)", ""),
    // Reads a build column: not fused, and must still agree.
    ("d.k, sum(d.g)", "group by d.k"),
];

/// `count(*)` → `count(*) filter (where true)`: the general aggregate.
fn general(select: &str) -> String {
    let mut out = Vec::new();
    for item in select.split(", ") {
        if item.contains('(') {
            out.push(format!("{item} filter (where true)"));
        } else {
            out.push(item.to_string());
        }
    }
    out.join(", ")
}

fn check_all(s: &mut Session, context: &str) {
    // The dimension named second or first (the join may build on either
    // input).
    for from in ["f join d on f.k = d.k", "d join f on d.k = f.k"] {
        for (select, group) in SHAPES {
            for workers in [0, 2] {
                run(
                    s,
                    &format!("set max_parallel_workers_per_gather = {workers}"),
                );
                let fused = format!("select {select} from {from} {group}");
                // A residual condition true for every pair: the same typed
                // aggregation over the join's output, unfused.
                let unfused = format!("select {select} from {from} and f.k - d.k = 0 {group}");
                let reference = format!("select {} from {from} {group}", general(select));
                let got = rows(s, &fused);
                assert_eq!(
                    sorted(got.clone()),
                    sorted(rows(s, &reference)),
                    "{context}: {fused}"
                );
                if workers == 0 {
                    // Serially, the groups come out in the unfused order.
                    assert_eq!(got, rows(s, &unfused), "{context}: order of {fused}");
                }
            }
        }
    }
}

#[test]
fn fused_probe_agrees_with_the_join_and_the_general_aggregate() {
    let (_dir, db) = common::open(1024);
    let mut s = db.session();
    let mut rng = Rng(7);
    for round in 0..12u64 {
        let dims = [0, 1, 5, 50, 300, 900][round as usize % 6];
        let sparse = round % 4 == 3;
        let dup = round % 3 == 1;
        let facts = 1500 + rng.below(3000);
        load(&mut s, &mut rng, dims, facts, sparse, dup);
        check_all(
            &mut s,
            &format!("round {round} dims {dims} sparse {sparse} dup {dup}"),
        );
    }
}

#[test]
fn fused_probe_spills_with_the_in_memory_answers() {
    let (_dir, db) = common::open(1024);
    let mut s = db.session();
    let mut rng = Rng(11);
    // Narrow build rows (they fit `hash_mem`), many groups (they do not).
    run(&mut s, "create table big (k int)");
    run(
        &mut s,
        "insert into big select i from generate_series(-2000, 5999) i",
    );
    run(&mut s, "create table fact (k int, v int)");
    let mut values = Vec::new();
    for _ in 0..30_000 {
        let k = match rng.below(50) {
            0 => "NULL".to_string(),
            _ => (rng.below(8500) as i64 - 2200).to_string(),
        };
        values.push(format!("({k}, {})", rng.below(1000) as i64 - 500));
    }
    for chunk in values.chunks(5000) {
        run(
            &mut s,
            &format!("insert into fact values {}", chunk.join(", ")),
        );
    }
    run(&mut s, "analyze big");
    run(&mut s, "analyze fact");
    let q = "select big.k, count(*), sum(fact.v), min(fact.v), max(fact.v), avg(fact.v) \
             from fact join big on fact.k = big.k group by big.k";
    let reference = "select big.k, count(*) filter (where true), sum(fact.v) filter (where true), \
                     min(fact.v) filter (where true), max(fact.v) filter (where true), \
                     avg(fact.v) filter (where true) from fact join big on fact.k = big.k group by big.k";
    let want = sorted(rows(&mut s, reference));
    assert!(want.len() > 5000);
    for workers in [0, 2] {
        run(
            &mut s,
            &format!("set max_parallel_workers_per_gather = {workers}"),
        );
        for mem in ["64kB", "256kB", "4MB"] {
            run(&mut s, &format!("set work_mem = '{mem}'"));
            assert_eq!(
                sorted(rows(&mut s, q)),
                want,
                "work_mem {mem}, {workers} workers"
            );
        }
        run(&mut s, "reset work_mem");
    }
}
