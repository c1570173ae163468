//! READ COMMITTED re-check of an UPDATE whose WHERE has a correlated
//! `[NOT] EXISTS`, for each shape of subquery: PostgreSQL 15 makes the
//! sublink a semi- (anti-) join only when `simplify_EXISTS_query` accepts
//! the subquery (no aggregates, HAVING, window functions, set operations,
//! OFFSET or WITH; a constant positive LIMIT, DISTINCT, GROUP BY and ORDER
//! BY dropped), its FROM reads no outer column, and its WHERE does,
//! without volatile functions. Then the re-check holds every row the match
//! joined (outer joins, subqueries and VALUES in FROM included); else the
//! sublink is a SubPlan, evaluated again over the new version.
//!
//! Each case ran in PostgreSQL 15 with two psql sessions, the second
//! started while the first held its change; the expected results are
//! PostgreSQL's. Each runs on a table with a primary key and without one.

mod common;

use std::thread;

use common::{rows_text, run};
use heapdb::{Database, QueryResult};

const DEFS: [&str; 2] = [
    "create table t (k int primary key, v int)",
    "create table t (k int, v int)",
];

/// `t` (from `def`) holding (1, 10), (2, 20); `u` holding `u_rows`; `w`
/// holding 3 and 5.
fn setup(def: &str, u_rows: &str) -> (tempfile::TempDir, Database) {
    let (d, db) = common::open(1000);
    let mut s = db.session();
    run(&mut s, def);
    run(&mut s, "insert into t values (1, 10), (2, 20)");
    run(&mut s, "create table u (k int, w int)");
    run(&mut s, &format!("insert into u values {u_rows}"));
    run(&mut s, "create table w (k int)");
    run(&mut s, "insert into w values (3), (5)");
    (d, db)
}

/// Runs `first` in an open transaction, then `second` in another session,
/// which must wait; commits the first and returns the second's result.
fn after(db: &Database, first: &str, second: &str) -> heapdb::Result<QueryResult> {
    let mut a = db.session();
    run(&mut a, "begin");
    run(&mut a, first);
    let db2 = db.clone();
    let sql = second.to_string();
    let waiter = thread::spawn(move || db2.session().execute(&sql));
    common::wait_until("the second statement waiting", || {
        !db.locks.waiters().is_empty()
    });
    assert!(!waiter.is_finished(), "{second} must wait for {first}");
    run(&mut a, "commit");
    waiter.join().unwrap()
}

/// For each subquery: `update t set v = v + 1 where [not] exists (q)`
/// after `first` committed; `held`: PostgreSQL holds the matched rows
/// (the result `held_rows`), else it evaluates the sublink again
/// (`again_rows`).
fn cases(
    u_rows: &str,
    first: &str,
    not: bool,
    list: &[(&str, bool)],
    held_rows: &str,
    again_rows: &str,
) {
    let mut failed = Vec::new();
    for def in DEFS {
        for (q, held) in list {
            let (_d, db) = setup(def, u_rows);
            let neg = if not { "not " } else { "" };
            let second = format!("update t set v = v + 1 where {neg}exists ({q})");
            let r = after(&db, first, &second);
            let got = match r {
                Ok(_) => {
                    let t = rows_text(&run(&mut db.session(), "select k, v from t order by k"));
                    let t: Vec<String> = t.iter().map(|r| r.join("|")).collect();
                    t.join(" ")
                }
                Err(e) => format!("error: {e}"),
            };
            let want = if *held { held_rows } else { again_rows };
            if got != want {
                failed.push(format!("{def}: {second}: got {got}, want {want}"));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

const RANGE: &str = "u.k >= t.k and u.k <= t.k + 1";

/// `t`'s row of key 2 moves to 4: the held row of `u` (key 3) no longer
/// matches, where evaluating the subquery again finds key 5's.
#[test]
fn exists_holds_the_rows_of_a_subquery_postgresql_makes_a_semi_join() {
    let q = |s: &str| s.replace("$C", RANGE);
    let list: Vec<(String, bool)> =
        vec![
        // Semi-joins: PostgreSQL UPDATE 0.
        (q("select 1 from u where $C"), true),
        (q("select 1 from u left join w on w.k = u.k where $C"), true),
        (q("select 1 from w right join u on w.k = u.k where $C"), true),
        (q("select 1 from u full join w on w.k = u.k where $C"), true),
        (q("select distinct u.k from u where $C"), true),
        (q("select 1 from u where $C order by u.w"), true),
        (q("select 1 from u where $C limit 1"), true),
        (q("select u.k from u where $C group by u.k"), true),
        (q("select 1 from (values (3), (5)) u(k) where $C"), true),
        (
            q("select 1 from (select k, count(*) from u group by k) u where $C"),
            true,
        ),
        (q("select 1 from (select distinct k from u) u where $C"), true),
        (q("select 1 from (select k from u limit 10) u where $C"), true),
        (q("select 1 from generate_series(3, 5, 2) u(k) where $C"), true),
        (
            q("select 1 from u where $C and not exists (select 1 from w where w.k = u.k + 100)"),
            true,
        ),
        (
            q("select 1 from u where $C and exists (select 1 from w where w.k = u.k)"),
            true,
        ),
        (q("select 1 from u where $C and u.k in (select k from w)"), true),
        // SubPlans: PostgreSQL 4 | 21, UPDATE 1.
        (q("select 1 from u where $C offset 0"), false),
        (
            q("select count(*) from u where $C having count(*) > 0"),
            false,
        ),
        (q("select 1 from u join w on w.k = u.k and $C"), false),
        (q("select 1 from u where $C and random() >= 0"), false),
        (q("with x as (select * from u) select 1 from x u where $C"), false),
        (
            q("select k from u where $C union select 0 where false"),
            false,
        ),
        (q("select row_number() over () from u where $C"), false),
    ];
    let list: Vec<(&str, bool)> = list.iter().map(|(s, h)| (s.as_str(), *h)).collect();
    cases(
        "(3, 300), (5, 500)",
        "update t set k = 4 where k = 2",
        false,
        &list,
        "1|10 4|20",
        "1|10 4|21",
    );
}

/// Subqueries correlated by `u.k = t.k`, and whether PostgreSQL pulls each
/// up into a semi- or anti-join (`OFFSET 0` and `HAVING` keep a SubPlan).
const EQUALITY_CORRELATED: [(&str, bool); 4] = [
    ("select 1 from u where u.k = t.k", true),
    (
        "select 1 from u left join w on w.k = u.k where u.k = t.k",
        true,
    ),
    ("select 1 from u where u.k = t.k offset 0", false),
    (
        "select count(*) from u where u.k = t.k having count(*) > 0",
        false,
    ),
];

/// `t`'s row of key 1 moves to 3, which `u` has: the equality-correlated
/// semi-join holds `u`'s row of key 1 (UPDATE 0); a SubPlan finds key 3.
#[test]
fn an_equality_correlated_exists_is_a_semi_join_only_when_simplifiable() {
    let list = EQUALITY_CORRELATED;
    cases(
        "(1, 100), (3, 300)",
        "update t set k = 3 where k = 1",
        false,
        &list,
        "2|20 3|10",
        "2|20 3|11",
    );
}

/// `t`'s row of key 2 moves to 3, which `u` has: an anti-join holds no row
/// of `u`, so NOT EXISTS still holds (UPDATE 1); a SubPlan finds key 3.
#[test]
fn not_exists_is_an_anti_join_only_when_simplifiable() {
    let list = EQUALITY_CORRELATED;
    cases(
        "(1, 100), (3, 300)",
        "update t set k = 3 where k = 2",
        true,
        &list,
        "1|10 3|21",
        "1|10 3|20",
    );
}

/// An UPDATE through a view re-checks its EXISTS as one on the table.
#[test]
fn an_update_through_a_view_rechecks_exists_as_postgresql_plans_it() {
    let left = "select 1 from u left join w on w.k = u.k where u.k >= tv.k and u.k <= tv.k + 1";
    for def in DEFS {
        for (q, want) in [
            (left.to_string(), "1|10 4|20"),
            (format!("{left} offset 0"), "1|10 4|21"),
        ] {
            let (_d, db) = setup(def, "(3, 300), (5, 500)");
            run(&mut db.session(), "create view tv as select * from t");
            let second = format!("update tv set v = v + 1 where exists ({q})");
            after(&db, "update t set k = 4 where k = 2", &second).unwrap();
            let t = rows_text(&run(&mut db.session(), "select k, v from t order by k"));
            let t: Vec<String> = t.iter().map(|r| r.join("|")).collect();
            assert_eq!(t.join(" "), want, "{def}: {second}");
        }
    }
}

/// DELETE re-checks its EXISTS as UPDATE does.
#[test]
fn delete_rechecks_exists_as_postgresql_plans_it() {
    let left = "select 1 from u left join w on w.k = u.k where u.k >= t.k and u.k <= t.k + 1";
    for def in DEFS {
        // PostgreSQL: DELETE 0, then DELETE 1.
        for (q, tag, want) in [
            (left.to_string(), "DELETE 0", "1|10 4|20"),
            (format!("{left} offset 0"), "DELETE 1", "1|10"),
        ] {
            let (_d, db) = setup(def, "(3, 300), (5, 500)");
            let second = format!("delete from t where exists ({q})");
            let r = after(&db, "update t set k = 4 where k = 2", &second).unwrap();
            assert_eq!(r.tag, tag, "{def}: {second}");
            let t = rows_text(&run(&mut db.session(), "select k, v from t order by k"));
            let t: Vec<String> = t.iter().map(|r| r.join("|")).collect();
            assert_eq!(t.join(" "), want, "{def}: {second}");
        }
    }
}
