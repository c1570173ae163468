//! DISTINCT, UNION and INTERSECT/EXCEPT under a small `work_mem`: the hash
//! tables spill (EXPLAIN ANALYZE's HashAggregate says so for DISTINCT, as
//! PostgreSQL's does), the answers equal the in-memory ones, and no
//! temporary file is left behind. (`tests/slt/hash_spill_setops.slt`
//! checks the answers against PostgreSQL's.)

use heapdb::settings::Settings;
use heapdb::types::Value;
use heapdb::Session;

mod common;
use common::{open_with, run};

/// The rows of `sql` as text, sorted.
fn sorted_rows(s: &mut Session, sql: &str) -> Vec<String> {
    let r = run(s, sql);
    let mut rows: Vec<String> = r.rows.iter().map(|row| format!("{row:?}")).collect();
    rows.sort();
    rows
}

fn temp_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("base").join("pgsql_tmp"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn distinct_and_set_operations_spill_under_a_small_work_mem() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        shared_buffers: 1024,
        ..Settings::default()
    };
    let db = open_with(dir.path(), settings);
    let mut s = db.session();
    run(&mut s, "set max_parallel_workers_per_gather = 0");
    run(
        &mut s,
        "create table d as select x % 20000 as k, 'v' || (x % 3000) as t from generate_series(1, 60000) x",
    );
    run(
        &mut s,
        "create table e as select x % 15000 + 9000 as k, 'v' || ((x % 15000 + 9000) % 3000) as t from generate_series(1, 40000) x",
    );
    let queries = [
        "select distinct k from d",
        "select distinct k, t from d",
        "select k, t from d union select k, t from e",
        "select k, t from d intersect select k, t from e",
        "select k, t from d intersect all select k, t from e",
        "select k from d except select k from e",
        "select k from d except all select k from e",
        "select k from e except all select k from d",
    ];
    let want: Vec<Vec<String>> = queries.iter().map(|q| sorted_rows(&mut s, q)).collect();
    run(&mut s, "set work_mem = '64kB'");
    for (q, want) in queries.iter().zip(&want) {
        assert!(!want.is_empty(), "{q}");
        assert!(sorted_rows(&mut s, q) == *want, "{q}");
        assert_eq!(temp_files(dir.path()), 0, "{q}");
    }
    let plan = |s: &mut Session, q: &str| -> Vec<String> {
        let r = s.execute(q).unwrap();
        r.rows
            .iter()
            .map(|row| match &row[0] {
                Value::Text(t) => t.to_string(),
                v => format!("{v:?}"),
            })
            .collect()
    };
    let explain =
        "explain (analyze, costs off, timing off, summary off) select distinct k, t from d";
    let lines = plan(&mut s, explain);
    assert!(lines[0].starts_with("HashAggregate"), "{lines:?}");
    let line = lines
        .iter()
        .find(|l| l.contains("Batches:"))
        .expect("a Batches line");
    assert!(line.contains("Disk Usage:"), "{lines:?}");
    assert!(!line.trim_start().starts_with("Batches: 1 "), "{lines:?}");
    run(&mut s, "reset work_mem");
    let lines = plan(&mut s, explain);
    let line = lines
        .iter()
        .find(|l| l.contains("Batches:"))
        .expect("a Batches line");
    assert!(
        line.trim_start().starts_with("Batches: 1  Memory Usage: ") && !line.contains("Disk"),
        "{lines:?}"
    );
    assert_eq!(temp_files(dir.path()), 0);
}
