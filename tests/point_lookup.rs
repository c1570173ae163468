//! A point lookup run by the kept executor of its plan template
//! (`exec::fastpath::lookup`) gives what the general executor gives: the
//! same statements in one session (templates made, the kept lookup taken)
//! and each in a new session (planned and executed afresh), over rows
//! with HOT chains, deleted and aborted versions, NULLs, duplicate keys of
//! a non-unique index (more than a batch of them), and across VACUUM,
//! TRUNCATE and DDL that make the template stale.

use std::sync::atomic::Ordering;

use heapdb::exec::fastpath::lookup::RUNS;
use heapdb::{Database, Session};

fn rows(s: &mut Session, sql: &str) -> Result<String, String> {
    s.execute(sql)
        .map(|r| {
            let cols: Vec<String> = r.columns.iter().map(|c| c.name.clone()).collect();
            format!("{} {:?} {:?}", r.tag, cols, r.rows)
        })
        .map_err(|e| format!("{} {}", e.code.code(), e.message))
}

fn exec(s: &mut Session, sql: &str) {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Index scans wherever one can serve (the non-unique index's keys
/// would otherwise be read by bitmap scans).
const SETTINGS: &[&str] = &["set enable_bitmapscan = off", "set enable_seqscan = off"];

/// Runs every shape with keys drawn by `next` in `cached` and in a new
/// session (both with [`SETTINGS`]), and checks both agree.
fn compare(db: &Database, cached: &mut Session, next: &mut impl FnMut() -> i64) {
    const SHAPES: &[&str] = &[
        "select abalance from a where aid = {}",
        "select abalance, aid, abalance, filler from a where aid = {}",
        "select * from a where aid = {}",
        "select aid from a where bid = {}",
        "select filler, aid from a where bid = {}",
        "select aid, abalance from a where aid = -{}",
    ];
    for shape in SHAPES {
        for _ in 0..12 {
            let sql = shape.replace("{}", &next().to_string());
            let mut fresh = db.session();
            for set in SETTINGS {
                exec(&mut fresh, set);
            }
            let fresh = rows(&mut fresh, &sql);
            let got = rows(cached, &sql);
            assert_eq!(got, fresh, "{sql}");
        }
    }
}

#[test]
fn kept_lookups_give_what_the_executor_gives() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    for sql in [
        "create table a (aid int primary key, bid int, abalance int, filler text)",
        "create index a_bid on a (bid)",
        "insert into a select g, g % 7, g * 3, case when g % 5 = 0 then null else 'f' || g end \
         from generate_series(1, 3000) g",
        // Over a batch of rows for one key of the non-unique index.
        "insert into a select g, 100, g, 'many' from generate_series(5001, 7500) g",
        "analyze a",
    ] {
        exec(&mut s, sql);
    }
    for set in SETTINGS {
        exec(&mut s, set);
    }
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        match x % 10 {
            0 => 100,
            1 => (x % 9) as i64,
            _ => (x % 3200) as i64,
        }
    };
    let before = RUNS.load(Ordering::Relaxed);
    compare(&db, &mut s, &mut next);
    assert!(
        RUNS.load(Ordering::Relaxed) >= before + 6 * 10,
        "the kept lookup ran"
    );
    let changes = [
        // HOT chains and index-changing updates.
        "update a set abalance = abalance + 1 where aid % 3 = 0",
        "update a set abalance = abalance + 1 where aid % 3 = 0",
        "update a set bid = bid + 1 where aid % 11 = 0",
        "delete from a where aid % 4 = 0",
        "begin; insert into a values (4000, 1, 1, 'gone'); update a set abalance = 0 where aid < 50; rollback",
        "vacuum a",
        "delete from a where aid % 13 = 0",
        "alter table a add column extra int",
        "update a set extra = aid where aid % 2 = 0",
        "create index a_bal on a (abalance)",
        "truncate a",
        "insert into a select g, g % 5, g, null from generate_series(1, 500) g",
    ];
    for change in changes {
        exec(&mut s, change);
        compare(&db, &mut s, &mut next);
    }
}

#[test]
fn a_kept_lookup_sees_its_transaction_and_others_commits() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    exec(
        &mut s,
        "create table a (aid int primary key, bid int, abalance int)",
    );
    exec(
        &mut s,
        "insert into a select g, g, 0 from generate_series(1, 100) g",
    );
    let q = |k: i64| format!("select abalance from a where aid = {k}");
    for k in 1..10 {
        rows(&mut s, &q(k)).unwrap();
    }
    let mut other = db.session();
    exec(&mut other, "update a set abalance = 7 where aid = 5");
    assert_eq!(
        rows(&mut s, &q(5)).unwrap(),
        "SELECT 1 [\"abalance\"] [[Int4(7)]]"
    );
    exec(&mut s, "begin");
    exec(&mut s, "update a set abalance = 8 where aid = 5");
    exec(&mut s, "delete from a where aid = 6");
    assert_eq!(
        rows(&mut s, &q(5)).unwrap(),
        "SELECT 1 [\"abalance\"] [[Int4(8)]]"
    );
    assert_eq!(rows(&mut s, &q(6)).unwrap(), "SELECT 0 [\"abalance\"] []");
    assert_eq!(
        rows(&mut other, &q(5)).unwrap(),
        "SELECT 1 [\"abalance\"] [[Int4(7)]]"
    );
    exec(&mut s, "rollback");
    assert_eq!(
        rows(&mut s, &q(6)).unwrap(),
        "SELECT 1 [\"abalance\"] [[Int4(0)]]"
    );
    exec(&mut other, "drop table a");
    assert!(rows(&mut s, &q(5)).unwrap_err().starts_with("42P01"));
}
