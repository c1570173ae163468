//! B-tree indexes under concurrent writers, index scans and VACUUM, in one
//! process: three sessions insert (splitting leaves), update and delete
//! rows of a table with a primary key and two indexes on few distinct
//! values (so leaves split between equal keys and pivots keep a heap TID),
//! two sessions read through the indexes, and one runs VACUUM over and
//! over (its bulk delete removes entries whose heap line pointers the
//! writers' next versions then reuse, often with the same key). Afterwards
//! every index passes `bt_index_parent_check` and `bt_index_check` (every
//! visible row has its entry), and after a last VACUUM each index holds
//! exactly one entry per row and answers as the heap does.
//!
//! A fourth writer inserts and deletes batches of rows in a key range of
//! their own, right of everything else, so VACUUM's bulk delete empties
//! whole leaves and deletes them (page deletion while scans and inserts
//! run), and later splits reuse the deleted pages.
//!
//! The run is bounded by a number of statements per writer and by a few
//! seconds of wall time, whichever comes first; nothing asserts on time.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{one, run, text};
use heapdb::Session;

const WRITERS: i64 = 3;
const PRELOAD: i64 = 6000;
const CHURN: i64 = 1_000_000;

fn count(s: &mut Session, sql: &str) -> i64 {
    text(&one(s, sql)).parse().expect("a count")
}

/// `bt_index_check(index)`: (entries, heap tuples seen).
fn check(s: &mut Session, index: &str) -> (i64, i64) {
    run(s, &format!("select bt_index_parent_check('{index}')"));
    let r = run(s, &format!("select * from bt_index_check('{index}')"));
    let n = |i: usize| text(&r.rows[0][i]).parse::<i64>().expect("a number");
    (n(0), n(2))
}

/// Writer `w`: new rows (ids `w`, `w + WRITERS`, ... past the preload),
/// updates of its own rows that keep the indexed values (new versions with
/// the same keys, often in a line pointer VACUUM just freed), updates that
/// move a row to another group, deletes.
fn writer(mut s: Session, w: i64, rounds: i64, deadline: Instant) -> i64 {
    let mut next = PRELOAD + WRITERS + w;
    for round in 0..rounds {
        if Instant::now() > deadline {
            return round;
        }
        let first = next;
        let mut values = Vec::new();
        for _ in 0..8 {
            values.push(format!("({next}, {}, 'n{}')", next % 5, next % 7));
            next += WRITERS;
        }
        run(
            &mut s,
            &format!("insert into r values {}", values.join(", ")),
        );
        // Rows of this writer only (id % WRITERS == w), so writers never
        // wait for each other's row locks.
        let own = |k: i64| (k / WRITERS) * WRITERS + w;
        let a = own(1 + (round * 37) % (first - 1).max(1));
        run(
            &mut s,
            &format!(
                "update r set pad = pad where id in ({a}, {}, {})",
                a + WRITERS,
                own(first - 3 * WRITERS)
            ),
        );
        run(
            &mut s,
            &format!(
                "update r set pad = 'u{}' where id = {}",
                round % 3,
                own(1 + (round * 101) % PRELOAD)
            ),
        );
        if round % 4 == 0 {
            run(
                &mut s,
                &format!(
                    "update r set g = g + 1 where id = {}",
                    own(1 + (round * 13) % PRELOAD)
                ),
            );
        }
        if round % 3 == 0 {
            run(
                &mut s,
                &format!(
                    "delete from r where id = {}",
                    own(1 + (round * 53) % (next - 1))
                ),
            );
        }
    }
    rounds
}

/// The churn writer: batches of rows with ids from `CHURN` up and group
/// 9, each deleted right after it is inserted.
fn churner(mut s: Session, deadline: Instant) -> i64 {
    let mut round = 0;
    while Instant::now() < deadline && round < 200 {
        let from = CHURN + round * 400;
        run(
            &mut s,
            &format!(
                "insert into r select i, 9, 'c' || i from generate_series({from}, {}) i",
                from + 399
            ),
        );
        run(&mut s, &format!("delete from r where id >= {from}"));
        round += 1;
    }
    round
}

/// The "N newly deleted" figures of a VACUUM VERBOSE's index lines.
fn newly_deleted(r: &heapdb::QueryResult) -> u64 {
    r.notices
        .iter()
        .flat_map(|n| n.message.lines())
        .filter(|l| l.starts_with("index \""))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w[6].parse::<u64>().expect("newly deleted")
        })
        .sum()
}

/// A reader: index scans forward and backward, index-only counts; checks
/// only what must hold whatever the writers do.
fn reader(mut s: Session, n: i64, stop: Arc<AtomicBool>) -> u64 {
    run(&mut s, "set enable_seqscan = off");
    let mut rounds = 0;
    while !stop.load(Ordering::Acquire) {
        let g = (rounds as i64 + n) % 6;
        let r = run(
            &mut s,
            &format!("select id from r where g = {g} order by g, pad desc limit 40"),
        );
        assert!(r.rows.len() <= 40);
        let ids = run(
            &mut s,
            &format!(
                "select id from r where id between {} and {} order by id",
                100 * g,
                100 * g + 60
            ),
        );
        let ids: Vec<i64> = ids
            .rows
            .iter()
            .map(|row| text(&row[0]).parse().unwrap())
            .collect();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "primary key scan out of order"
        );
        count(&mut s, &format!("select count(*) from r where g = {g}"));
        rounds += 1;
    }
    rounds
}

#[test]
fn writers_readers_and_vacuum_leave_indexes_matching_the_heap() {
    let (_dir, db) = common::open(512);
    let mut s = db.session();
    run(
        &mut s,
        "create table r (id int primary key, g int, pad text)",
    );
    run(&mut s, "create index r_g_idx on r (g)");
    run(&mut s, "create index r_gp_idx on r (g, pad)");
    run(
        &mut s,
        &format!(
            "insert into r select i, i % 5, 'p' || (i % 3) from generate_series(1, {PRELOAD}) i"
        ),
    );
    let deadline = Instant::now() + Duration::from_secs(3);
    let stop = Arc::new(AtomicBool::new(false));
    let vacuums = {
        let (mut v, stop) = (db.session(), stop.clone());
        std::thread::spawn(move || {
            let (mut n, mut deleted) = (0u64, 0u64);
            while !stop.load(Ordering::Acquire) {
                deleted += newly_deleted(&run(&mut v, "vacuum verbose r"));
                n += 1;
            }
            (n, deleted)
        })
    };
    let readers: Vec<_> = (0..2)
        .map(|n| {
            let (r, stop) = (db.session(), stop.clone());
            std::thread::spawn(move || reader(r, n, stop))
        })
        .collect();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let ws = db.session();
            std::thread::spawn(move || writer(ws, w, 400, deadline))
        })
        .collect();
    let churn = {
        let cs = db.session();
        std::thread::spawn(move || churner(cs, deadline))
    };
    let done: i64 = writers.into_iter().map(|h| h.join().expect("writer")).sum();
    let churned = churn.join().expect("churn writer");
    // One more VACUUM after the churn, so its last leaves are deleted too.
    std::thread::sleep(Duration::from_millis(50));
    stop.store(true, Ordering::Release);
    let (vacuumed, mut deleted) = vacuums.join().expect("vacuum");
    assert!(vacuumed >= 1);
    deleted += newly_deleted(&run(&mut s, "vacuum verbose r"));
    eprintln!("{done} writer rounds, {churned} churn rounds, {vacuumed} vacuums, {deleted} index pages deleted");
    assert!(deleted > 0, "no index page was deleted");
    for h in readers {
        h.join().expect("reader");
    }
    let rows = count(&mut s, "select count(*) from r");
    for ix in ["r_pkey", "r_g_idx", "r_gp_idx"] {
        let (_, heap) = check(&mut s, ix);
        assert_eq!(heap, rows, "{ix}");
    }
    // With every dead version vacuumed away, one entry per row.
    run(&mut s, "vacuum r");
    for ix in ["r_pkey", "r_g_idx", "r_gp_idx"] {
        assert_eq!(check(&mut s, ix), (rows, rows), "{ix}");
    }
    // And the indexes answer as the heap does.
    let by = |s: &mut Session, on: &str| {
        run(s, &format!("set enable_seqscan = {on}"));
        run(
            s,
            &format!(
                "set enable_indexscan = {}",
                if on == "on" { "off" } else { "on" }
            ),
        );
        let r = run(s, "select g, count(*), sum(id), min(pad), max(pad) from r where g >= 0 group by g order by g");
        common::rows_text(&r)
    };
    let heap = by(&mut s, "on");
    let index = by(&mut s, "off");
    assert_eq!(index, heap);
}
