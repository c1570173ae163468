//! User-defined functions across a kill and a restart, and the volatility
//! rules that keep cached plans honest.
//!
//! A committed CREATE FUNCTION (and CREATE OR REPLACE, DROP FUNCTION) is in
//! the catalog after the process is killed with SIGKILL and the data
//! directory reopened, and its body runs again; a function created by a
//! transaction that had not committed, or that rolled back, is gone.

use heapdb::Database;

mod common;
use common::texts;

#[test]
fn committed_functions_survive_a_kill_and_uncommitted_ones_do_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "\
SET synchronous_commit = on;
CREATE FUNCTION fc_add(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'select a + b';
CREATE FUNCTION fc_sign(n int) RETURNS text LANGUAGE plpgsql AS $$
declare s text := 'zero';
begin
  if n > 0 then s := 'plus'; elsif n < 0 then s := 'minus'; end if;
  return s;
end $$;
CREATE FUNCTION fc_series(n int) RETURNS SETOF int LANGUAGE sql AS 'select g from generate_series(1, n) g';
CREATE FUNCTION fc_pairs(n int) RETURNS TABLE (k int, v text) LANGUAGE sql AS 'select g, g::text from generate_series(1, n) g';
CREATE FUNCTION fc_replaced(x int) RETURNS int LANGUAGE sql AS 'select x';
CREATE OR REPLACE FUNCTION fc_replaced(x int) RETURNS int LANGUAGE sql AS 'select x * 100';
CREATE FUNCTION fc_dropped() RETURNS int LANGUAGE sql AS 'select 1';
DROP FUNCTION fc_dropped();
BEGIN;
CREATE FUNCTION fc_rolled_back() RETURNS int LANGUAGE sql AS 'select 1';
ROLLBACK;
BEGIN;
CREATE FUNCTION fc_uncommitted() RETURNS int LANGUAGE sql AS 'select 1';
DROP FUNCTION fc_add;
SELECT 'marker' || 'reached';
";
    common::run_then_kill(dir.path(), script, "markerreached");
    let db = Database::open(dir.path()).expect("reopen after the kill");
    let mut s = db.session();
    assert_eq!(
        texts(
            &mut s,
            "SELECT fc_add(40, 2), fc_sign(-4), fc_sign(0), fc_replaced(3)"
        ),
        [["42", "minus", "zero", "300"]]
    );
    // Set-returning functions come back as sets, their columns named.
    assert_eq!(
        texts(
            &mut s,
            "SELECT f.n, p.v FROM fc_series(2) f(n), fc_pairs(3) p WHERE p.k = f.n + 1"
        ),
        [["1", "2"], ["2", "3"]]
    );
    for gone in ["fc_dropped", "fc_rolled_back", "fc_uncommitted"] {
        let e = s.execute(&format!("SELECT {gone}()")).expect_err(gone);
        assert_eq!(e.message, format!("function {gone}() does not exist"));
    }
    // A second reopen (the catalog file rewritten clean) keeps them.
    drop(s);
    drop(db);
    let db = Database::open(dir.path()).expect("second reopen");
    let mut s = db.session();
    assert_eq!(texts(&mut s, "SELECT fc_add(1, 1)"), [["2"]]);
}

/// `now()` is the transaction's start: a repeated `SELECT now()` (a shape
/// the plan cache would template) gives a new value in each transaction,
/// and the same value twice within one.
#[test]
fn cached_now_changes_across_transactions() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Database::open(dir.path()).expect("open");
    let mut s = db.session();
    let mut seen = Vec::new();
    for _ in 0..5 {
        let v = texts(&mut s, "select now()");
        texts(&mut s, "select pg_sleep(0.002)");
        seen.push(v[0][0].clone());
    }
    let mut distinct = seen.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), seen.len(), "{seen:?}");
    texts(&mut s, "begin");
    let a = texts(&mut s, "select now()");
    texts(&mut s, "select pg_sleep(0.002)");
    let b = texts(&mut s, "select now()");
    texts(&mut s, "commit");
    assert_eq!(a, b);
}

/// `now()` inside a function body is the calling statement's: the body is
/// not reused with an earlier statement's clock.
#[test]
fn a_function_body_sees_the_calling_statements_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Database::open(dir.path()).expect("open");
    let mut s = db.session();
    texts(
        &mut s,
        "create function stamp() returns timestamptz as 'begin return now(); end' language plpgsql",
    );
    texts(
        &mut s,
        "create function sql_stamp() returns timestamptz as 'select now()' language sql",
    );
    let mut seen = Vec::new();
    for _ in 0..4 {
        let v = texts(
            &mut s,
            "select stamp() = now(), sql_stamp() = now(), stamp()::text",
        );
        assert_eq!(v[0][0], "t", "{v:?}");
        assert_eq!(v[0][1], "t", "{v:?}");
        seen.push(v[0][2].clone());
        texts(&mut s, "select pg_sleep(0.002)");
    }
    let mut distinct = seen.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), seen.len(), "{seen:?}");
}

/// A volatile function runs once per row, in every plan shape: a plain
/// projection, a filter, and a cached plan of a repeated statement.
#[test]
fn random_is_evaluated_per_row() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Database::open(dir.path()).expect("open");
    let mut s = db.session();
    for _ in 0..3 {
        let rows = texts(&mut s, "select random() from generate_series(1, 5)");
        let mut vals: Vec<String> = rows.into_iter().map(|r| r[0].clone()).collect();
        vals.sort();
        vals.dedup();
        assert_eq!(vals.len(), 5);
    }
    // About half of 2000 rows pass a random filter: never all or none.
    let n: i64 = texts(
        &mut s,
        "select count(*) from generate_series(1, 2000) where random() < 0.5",
    )[0][0]
        .parse()
        .expect("a count");
    assert!(n > 0 && n < 2000, "{n}");
}

/// User functions are called row by row, in select-list order, never
/// ahead of a LIMIT, and after ORDER BY's sort when they are no sort key:
/// the notices they raise come in PostgreSQL 15's order (each expectation
/// below is PostgreSQL's).
#[test]
fn user_functions_are_called_row_by_row() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Database::open(dir.path()).expect("open");
    let mut s = db.session();
    for sql in [
        "create table rw (a int, b text)",
        "insert into rw values (1, 'x'), (2, 'y'), (3, 'z'), (4, 'w')",
        "create function f(x int) returns int language plpgsql as \
         $$ begin raise notice 'f(%)', x; return x; end $$",
        "create function g(x int) returns int language plpgsql as \
         $$ begin raise notice 'g(%)', x; return x * 10; end $$",
    ] {
        s.execute(sql).expect(sql);
    }
    let cases: &[(&str, &str)] = &[
        ("select f(a) from rw limit 1", "f(1)"),
        (
            "select f(a), g(a) from rw",
            "f(1) g(1) f(2) g(2) f(3) g(3) f(4) g(4)",
        ),
        ("select * from rw where f(a) > 0 limit 2", "f(1) f(2)"),
        (
            "select * from rw where f(a) > 1 and g(a) > 20",
            "f(1) f(2) g(2) f(3) g(3) f(4) g(4)",
        ),
        (
            "select * from rw where f(a) > 2 and a < 4",
            "f(1) f(2) f(3)",
        ),
        ("select f(a) from rw order by a desc", "f(4) f(3) f(2) f(1)"),
        (
            "select a, f(a) from rw order by a desc limit 2",
            "f(4) f(3)",
        ),
        (
            "select f(a) x from rw order by x desc",
            "f(1) f(2) f(3) f(4)",
        ),
        (
            "select a, f(a) from rw where a > 1 order by b",
            "f(4) f(2) f(3)",
        ),
        (
            "select case when a > 2 then f(a) else g(a) end from rw",
            "g(1) g(2) f(3) f(4)",
        ),
        ("select f(a) from rw offset 2 limit 1", "f(1) f(2) f(3)"),
        ("select f(a) from rw order by b limit 1", "f(4)"),
        (
            "select count(*) from rw where f(a) > 2",
            "f(1) f(2) f(3) f(4)",
        ),
        (
            "select sum(f(a)), sum(g(a)) from rw",
            "f(1) g(1) f(2) g(2) f(3) g(3) f(4) g(4)",
        ),
        ("select (select f(a)) from rw limit 2", "f(1) f(2)"),
        ("select (select f(a % 2)) from rw", "f(1) f(0) f(1) f(0)"),
        (
            "select f(x), g(x) from generate_series(1, 3) x limit 2",
            "f(1) g(1) f(2) g(2)",
        ),
    ];
    for (sql, want) in cases {
        let r = s.execute(sql).expect(sql);
        let got: Vec<&str> = r.notices.iter().map(|n| n.message.as_str()).collect();
        assert_eq!(got.join(" "), *want, "{sql}");
    }
}

/// An index or bitmap scan's filter calling a user function is evaluated
/// row by row too, and only until the LIMIT has its row (PostgreSQL's
/// notices: `f(1) f(2) f(3)`).
#[test]
fn index_scan_filters_call_user_functions_row_by_row() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Database::open(dir.path()).expect("open");
    let mut s = db.session();
    for sql in [
        "create table ri (a int primary key, b text)",
        "insert into ri select i, 'v' || i from generate_series(1, 2000) i",
        "analyze ri",
        "create function f(x int) returns int language plpgsql as \
         $$ begin raise notice 'f(%)', x; return x; end $$",
    ] {
        s.execute(sql).expect(sql);
    }
    let query = "select * from ri where a < 100 and f(a) > 2 limit 1";
    for (setting, scan) in [
        ("enable_bitmapscan", "Index Scan"),
        ("enable_indexscan", "Bitmap Heap Scan"),
    ] {
        s.execute("reset all").expect("reset");
        s.execute("set enable_seqscan = off").expect("set");
        s.execute(&format!("set {setting} = off")).expect(setting);
        let plan = common::lines(&mut s, &format!("explain (costs off) {query}"));
        assert!(plan.iter().any(|l| l.contains(scan)), "{plan:?}");
        let r = s.execute(query).expect(query);
        let got: Vec<&str> = r.notices.iter().map(|n| n.message.as_str()).collect();
        assert_eq!(got.join(" "), "f(1) f(2) f(3)", "{scan}");
        assert_eq!(texts(&mut s, query), [["3", "v3"]]);
    }
}
