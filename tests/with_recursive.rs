//! WITH RECURSIVE beyond the SQL corpus: an endless recursion ends at a
//! cancel, a working table larger than `work_mem` goes to a temporary file
//! and comes back whole, and UNION's reachability over random graphs
//! equals a breadth-first search done here.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use heapdb::types::Value;
use heapdb::SqlState;

mod common;
use common::{one, texts};

#[test]
fn an_endless_recursion_is_cancelled() {
    let (_d, db) = common::open(512);
    let mut s = db.session();
    let flag = s.cancel_flag();
    let over = Arc::new(AtomicBool::new(false));
    // The statement clears the flag when it starts: cancel until it is over.
    let canceller = {
        let over = over.clone();
        thread::spawn(move || {
            while !over.load(Ordering::Relaxed) {
                flag.store(true, Ordering::Relaxed);
                thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let e = s
        .execute("with recursive t(n) as (select 1 union all select n + 1 from t) select count(*) from t")
        .unwrap_err();
    over.store(true, Ordering::Relaxed);
    canceller.join().unwrap();
    assert_eq!(e.code, SqlState::QueryCanceled);
    assert_eq!(one(&mut s, "select 1"), Value::Int4(1));
}

#[test]
fn a_working_table_past_work_mem_comes_back_whole() {
    let (_d, db) = common::open(512);
    let mut s = db.session();
    s.execute("set work_mem = '64kB'").unwrap();
    // 50,000 rows per iteration (each with a text column): several MB of
    // working table against 64kB.
    let sql = "with recursive t(n, k, s) as ( \
                 select g, 0, repeat('x', 20) || g from generate_series(1, 50000) g \
                 union all select n, k + 1, s from t where k < 3) \
               select count(*), sum(n), sum(k), count(distinct s) from t";
    assert_eq!(
        texts(&mut s, sql),
        vec![vec![
            "200000".to_string(),
            (4 * 50000i64 * 50001 / 2).to_string(),
            (50000 * 6).to_string(),
            "50000".to_string(),
        ]]
    );
}

/// The nodes reachable from `start` over `edges`, by breadth-first search.
fn reachable(edges: &[(i32, i32)], start: i32) -> BTreeSet<i32> {
    let mut seen = BTreeSet::from([start]);
    let mut queue = VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        for &(a, b) in edges {
            if a == n && seen.insert(b) {
                queue.push_back(b);
            }
        }
    }
    seen
}

#[test]
fn union_reachability_equals_a_breadth_first_search() {
    let (_d, db) = common::open(512);
    let mut s = db.session();
    s.execute("create table e (a int, b int)").unwrap();
    // A small deterministic generator: graphs with cycles and self-loops.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m) as i32
    };
    for (round, work_mem) in ["4MB", "64kB", "4MB", "64kB"].iter().enumerate() {
        s.execute("truncate e").unwrap();
        s.execute(&format!("set work_mem = '{work_mem}'")).unwrap();
        let nodes = 50 + 400 * round as u64;
        let edges: Vec<(i32, i32)> = (0..nodes * 2).map(|_| (next(nodes), next(nodes))).collect();
        let values: Vec<String> = edges.iter().map(|(a, b)| format!("({a}, {b})")).collect();
        s.execute(&format!("insert into e values {}", values.join(", ")))
            .unwrap();
        for start in [0, 1, 7] {
            let want: Vec<Vec<String>> = reachable(&edges, start)
                .into_iter()
                .map(|n| vec![n.to_string()])
                .collect();
            let got = texts(
                &mut s,
                &format!(
                    "with recursive r(n) as (select {start} union select e.b from e join r on e.a = r.n) \
                     select n from r order by n"
                ),
            );
            assert_eq!(got, want, "round {round}, start {start}");
        }
    }
}
