//! `COPY (query) TO` writes text columns straight from the executor's
//! string vectors: a counting global allocator shows the allocations of a
//! COPY of 100,000 rows exceed those of 10,000 rows only by the ~88 more
//! batches' own vectors, never one per row (through `Vector::get` a text
//! value was one allocation per row). Only the test thread's allocations
//! are counted (parallel workers are off).

use heapdb::settings::Settings;
use heapdb::{Database, Session};

mod common;
use common::counting::{counted, Counting};

#[global_allocator]
static ALLOC: Counting = Counting;

/// Allocations of one `COPY (...) TO STDOUT` into a sink (after a warm-up
/// run), and the bytes it wrote.
fn allocations(s: &mut Session, sql: &str) -> (u64, u64) {
    let mut out = Vec::new();
    s.copy_out(sql, &mut out)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let bytes = out.len() as u64;
    let mut sink = std::io::sink();
    let (r, n) = counted(|| s.copy_out(sql, &mut sink));
    r.unwrap_or_else(|e| panic!("{sql}: {e}"));
    (n, bytes)
}

#[test]
fn query_copy_allocates_per_batch_not_per_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(
        dir.path(),
        Settings {
            max_parallel_workers_per_gather: 0,
            ..Settings::default()
        },
    )
    .unwrap();
    let mut s = db.session();
    for (name, n) in [("small", 10_000), ("big", 100_000)] {
        s.execute(&format!(
            "create table {name} (id int, name text, code char(6), label varchar(20))"
        ))
        .unwrap();
        s.execute(&format!(
            "insert into {name} select i, 'customer ' || (i % 100), 'c' || (i % 9), \
             'label\t' || (i % 7) from generate_series(1, {n}) i"
        ))
        .unwrap();
    }
    for format in ["", "CSV"] {
        let q = |t: &str| {
            format!("COPY (SELECT name, id, code, label FROM {t} WHERE id > 0) TO STDOUT {format}")
        };
        let (small, small_bytes) = allocations(&mut s, &q("small"));
        let (big, big_bytes) = allocations(&mut s, &q("big"));
        eprintln!("{format:4} allocations: {small} over 10k rows, {big} over 100k rows");
        assert!(
            big_bytes > 9 * small_bytes,
            "{small_bytes} / {big_bytes} bytes"
        );
        assert!(
            big.saturating_sub(small) < 90_000 / 50,
            "{format}: {small} allocations over 10k rows, {big} over 100k rows"
        );
    }
    // The text goes out as PostgreSQL writes it: escaped, char(n) padded.
    let mut out = Vec::new();
    s.copy_out(
        "COPY (SELECT name, code, label FROM small WHERE id = 8) TO STDOUT",
        &mut out,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "customer 8\tc8    \tlabel\\t1\n"
    );
}
