//! What a function's queries see of other transactions' commits.
//!
//! Under READ COMMITTED each query of a VOLATILE function reads with a
//! snapshot taken when that query runs (PostgreSQL takes a new one for
//! every statement of a non-read-only function), so a commit made while
//! the calling statement runs is seen by the function's later queries;
//! a STABLE function keeps the calling statement's snapshot, and under
//! REPEATABLE READ every query keeps the transaction's one.
//!
//! The expected values are what PostgreSQL 15 gave for the same steps
//! (two psql sessions: the writer holding an uncommitted row while the
//! reader's statement starts, committing while it runs).

mod common;

use std::thread;
use std::time::Duration;

use common::{rows_text, run};
use heapdb::Database;

/// `seen(i)`: the count of `t` at the call's first query, times ten, plus
/// the count at its last: for `i = 1` it polls (up to a second) until the
/// count is 3. `STABILITY` is replaced by the volatility.
const SEEN: &str =
    "create function seen_STABILITY(i int) returns bigint language plpgsql STABILITY as $$
declare n0 bigint; n bigint;
begin
  n0 := (select count(*) from t);
  n := n0;
  if i = 1 then
    for k in 1..100 loop
      exit when n = 3;
      perform pg_sleep(0.01);
      n := (select count(*) from t);
    end loop;
  end if;
  return n0 * 10 + n;
end $$";

fn setup() -> (tempfile::TempDir, Database) {
    let (d, db) = common::open(1000);
    let mut s = db.session();
    run(&mut s, "create table t (id int primary key, v int)");
    run(&mut s, "insert into t values (1, 1), (2, 2)");
    for v in ["volatile", "stable"] {
        run(&mut s, &SEEN.replace("STABILITY", v));
    }
    (d, db)
}

/// Runs `statements` in one transaction of isolation `iso` while another
/// session, which inserted `(3, 3)` before they started, commits it
/// during the first; returns each statement's rows. `None` when the first
/// statement's first query already saw the commit (the machine was too
/// slow for the interleaving to happen): the caller tries again.
fn interleaved(db: &Database, iso: &str, statements: &[&str]) -> Option<Vec<Vec<Vec<String>>>> {
    let mut w = db.session();
    run(&mut w, "delete from t where id > 2");
    run(&mut w, "begin");
    run(&mut w, "insert into t values (3, 3)");
    let db2 = db.clone();
    let iso = iso.to_string();
    let stmts: Vec<String> = statements.iter().map(|s| s.to_string()).collect();
    let reader = thread::spawn(move || {
        let mut r = db2.session();
        run(&mut r, &format!("begin isolation level {iso}"));
        let out: Vec<_> = stmts.iter().map(|s| rows_text(&run(&mut r, s))).collect();
        run(&mut r, "commit");
        out
    });
    thread::sleep(Duration::from_millis(200));
    run(&mut w, "commit");
    let out = reader.join().unwrap();
    // The first call's first query ran before the commit?
    out[0][0][1].starts_with('2').then_some(out)
}

fn check(db: &Database, iso: &str, f: &str, want: &[&[&[&str]]]) {
    let first = format!("select i, {f}(i) from generate_series(1, 2) i");
    let second = format!("select {f}(2)");
    for _ in 0..20 {
        if let Some(got) = interleaved(db, iso, &[&first, &second]) {
            let want: Vec<Vec<Vec<String>>> = want
                .iter()
                .map(|rows| {
                    rows.iter()
                        .map(|r| r.iter().map(|v| v.to_string()).collect())
                        .collect()
                })
                .collect();
            assert_eq!(got, want, "{f} under {iso}");
            return;
        }
    }
    panic!("{f} under {iso}: the commit never fell inside the statement");
}

#[test]
fn volatile_queries_see_commits_under_read_committed() {
    let (_d, db) = setup();
    check(
        &db,
        "read committed",
        "seen_volatile",
        &[&[&["1", "23"], &["2", "33"]], &[&["33"]]],
    );
}

#[test]
fn stable_queries_keep_the_statement_snapshot() {
    let (_d, db) = setup();
    check(
        &db,
        "read committed",
        "seen_stable",
        &[&[&["1", "22"], &["2", "22"]], &[&["33"]]],
    );
}

#[test]
fn repeatable_read_keeps_the_transaction_snapshot() {
    let (_d, db) = setup();
    for f in ["seen_volatile", "seen_stable"] {
        check(
            &db,
            "repeatable read",
            f,
            &[&[&["1", "22"], &["2", "22"]], &[&["22"]]],
        );
    }
}

/// A SQL function's queries each read anew too: the count after the sleep
/// sees the row committed during it.
#[test]
fn sql_function_query_after_a_commit_sees_it() {
    let (_d, db) = setup();
    let mut s = db.session();
    run(
        &mut s,
        "create function sql_v() returns bigint language sql volatile as $$ \
         select pg_sleep(0.5); select count(*) from t $$",
    );
    let db2 = db.clone();
    let reader = thread::spawn(move || {
        let mut r = db2.session();
        run(&mut r, "begin");
        let got = rows_text(&run(&mut r, "select sql_v()"));
        run(&mut r, "commit");
        got
    });
    thread::sleep(Duration::from_millis(100));
    run(&mut s, "insert into t values (3, 3)");
    assert_eq!(reader.join().unwrap(), vec![vec!["3".to_string()]]);
}
