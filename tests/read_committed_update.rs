//! READ COMMITTED UPDATE and DELETE of rows another transaction changed
//! after the statement's snapshot (PostgreSQL's EvalPlanQual): the
//! statement waits for the other transaction; if it rolled back, the change
//! goes ahead on the original version; if it committed an update, the
//! statement re-checks its WHERE on the newest version (the other FROM
//! items' rows held fixed) and changes that version, its SET computed from
//! it; a row deleted meanwhile, or no longer qualifying, is skipped. WHERE's
//! sublinks are re-checked as PostgreSQL's plan has them: those it makes
//! semi- or anti-joins hold the other relation's row fixed, the others are
//! evaluated again under the statement's snapshot.
//! REPEATABLE READ fails with 40001 instead.
//!
//! Each two-session test runs the same steps in PostgreSQL 15 (two psql
//! sessions, the second started while the first holds its change): the
//! expected tags and rows are what PostgreSQL gave. Each runs on a table
//! with a primary key (index scans) and without one (sequential scans).

mod common;

use std::thread;

use common::{one, rows_text, run};
use heapdb::types::Value;
use heapdb::{Database, QueryResult, Session};

fn int(v: Value) -> i64 {
    match v {
        Value::Int8(n) => n,
        Value::Int4(n) => i64::from(n),
        v => panic!("not an integer: {v:?}"),
    }
}

/// The table definitions every scenario runs on: indexed, then not.
const DEFS: [&str; 2] = [
    "create table t (k int primary key, v int)",
    "create table t (k int, v int)",
];

/// A database with `t` (from `def`) holding (1, 10), (2, 20), and `u`
/// holding `u_rows`.
fn setup(def: &str, u_rows: &str) -> (tempfile::TempDir, Database) {
    let (d, db) = common::open(1000);
    let mut s = db.session();
    run(&mut s, def);
    run(&mut s, "insert into t values (1, 10), (2, 20)");
    run(&mut s, "create table u (k int, w int)");
    run(&mut s, &format!("insert into u values {u_rows}"));
    (d, db)
}

/// Runs `first` in an open transaction of one session, then `second` in
/// another session, which must wait for the first; then ends the first
/// (`commit`: COMMIT, else ROLLBACK) and returns the second's result.
fn after(db: &Database, first: &str, commit: bool, second: &str) -> heapdb::Result<QueryResult> {
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
    run(&mut a, if commit { "commit" } else { "rollback" });
    waiter.join().unwrap()
}

fn table(s: &mut Session) -> Vec<Vec<String>> {
    rows_text(&run(s, "select k, v from t order by k"))
}

fn strs(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|v| v.to_string()).collect())
        .collect()
}

/// Checks the second statement's result: its tag, its RETURNING rows, and
/// the table afterwards.
fn check(db: &Database, r: heapdb::Result<QueryResult>, tag: &str, ret: &[&[&str]], t: &[&[&str]]) {
    let r = r.unwrap_or_else(|e| panic!("{tag}: {e}"));
    assert_eq!(r.tag, tag);
    assert_eq!(rows_text(&r), strs(ret), "RETURNING of {tag}");
    assert_eq!(table(&mut db.session()), strs(t), "the table after {tag}");
}

#[test]
fn concurrent_increments_add_up() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 1)");
        const SESSIONS: i64 = 4;
        const TIMES: i64 = 100;
        let workers: Vec<_> = (0..SESSIONS)
            .map(|_| {
                let db = db.clone();
                thread::spawn(move || {
                    let mut s = db.session();
                    for _ in 0..TIMES {
                        let r = s
                            .execute("update t set v = v + 1 where k = 1")
                            .unwrap_or_else(|e| panic!("{e}"));
                        assert_eq!(r.tag, "UPDATE 1");
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        let mut s = db.session();
        assert_eq!(
            int(one(&mut s, "select v from t where k = 1")),
            10 + SESSIONS * TIMES,
            "{def}"
        );
        assert_eq!(int(one(&mut s, "select count(*) from t")), 2);
    }
}

#[test]
fn an_update_sees_the_committed_new_version() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 1)");
        // PostgreSQL: 1 | 51, UPDATE 1.
        let r = after(
            &db,
            "update t set v = 50 where k = 1",
            true,
            "update t set v = v + 1 where k = 1 returning *",
        );
        check(
            &db,
            r,
            "UPDATE 1",
            &[&["1", "51"]],
            &[&["1", "51"], &["2", "20"]],
        );
    }
}

#[test]
fn an_update_goes_ahead_when_the_other_rolls_back() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 1)");
        // PostgreSQL: 1 | 11, UPDATE 1.
        let r = after(
            &db,
            "update t set v = 100 where k = 1",
            false,
            "update t set v = v + 1 where k = 1 returning *",
        );
        check(
            &db,
            r,
            "UPDATE 1",
            &[&["1", "11"]],
            &[&["1", "11"], &["2", "20"]],
        );
    }
}

#[test]
fn a_row_that_no_longer_qualifies_is_skipped() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 1)");
        // PostgreSQL: UPDATE 0.
        let r = after(
            &db,
            "update t set v = 100 where k = 1",
            true,
            "update t set v = v + 1 where k = 1 and v = 10",
        );
        check(&db, r, "UPDATE 0", &[], &[&["1", "100"], &["2", "20"]]);
    }
}

#[test]
fn a_row_deleted_meanwhile_is_skipped() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 1)");
        // PostgreSQL: UPDATE 0.
        let r = after(
            &db,
            "delete from t where k = 1",
            true,
            "update t set v = v + 1 where k = 1",
        );
        check(&db, r, "UPDATE 0", &[], &[&["2", "20"]]);
    }
}

#[test]
fn a_row_whose_key_moved_is_updated_once() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 1)");
        // PostgreSQL: 3 | 11, 2 | 21 (in that order), UPDATE 2.
        let r = after(
            &db,
            "update t set k = 3 where k = 1",
            true,
            "update t set v = v + 1 where k >= 1 returning *",
        );
        check(
            &db,
            r,
            "UPDATE 2",
            &[&["3", "11"], &["2", "21"]],
            &[&["2", "21"], &["3", "11"]],
        );
        // PostgreSQL: UPDATE 0 (the new version's key is 3).
        let r = after(
            &db,
            "update t set k = 4 where k = 3",
            true,
            "update t set v = 0 where k = 3",
        );
        check(&db, r, "UPDATE 0", &[], &[&["2", "21"], &["4", "11"]]);
        let mut s = db.session();
        assert_eq!(int(one(&mut s, "select v from t where k = 4")), 11);
        assert_eq!(int(one(&mut s, "select count(*) from t where k = 3")), 0);
    }
}

#[test]
fn an_update_changing_a_unique_key_applies_to_the_newest_version() {
    let (_d, db) = setup(DEFS[0], "(1, 1)");
    // PostgreSQL: 101 | 99, 102 | 20, UPDATE 2.
    let r = after(
        &db,
        "update t set v = 99 where k = 1",
        true,
        "update t set k = k + 100 where v >= 10 returning *",
    );
    check(
        &db,
        r,
        "UPDATE 2",
        &[&["101", "99"], &["102", "20"]],
        &[&["101", "99"], &["102", "20"]],
    );
    let mut s = db.session();
    run(&mut s, "set enable_seqscan = off");
    assert_eq!(int(one(&mut s, "select v from t where k = 101")), 99);
    assert_eq!(int(one(&mut s, "select count(*) from t where k = 1")), 0);
    let r = run(&mut s, "select * from bt_index_check('t_pkey')");
    assert_eq!(r.rows[0][2], Value::Int8(2));
}

#[test]
fn update_from_holds_the_other_rows_fixed() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 100), (2, 200)");
        // PostgreSQL: 1 | 115, 2 | 220, UPDATE 2.
        let r = after(
            &db,
            "update t set v = 15 where k = 1",
            true,
            "update t set v = t.v + u.w from u where t.k = u.k returning t.*",
        );
        check(
            &db,
            r,
            "UPDATE 2",
            &[&["1", "115"], &["2", "220"]],
            &[&["1", "115"], &["2", "220"]],
        );
        // The new version no longer joins the row it was found with.
        // PostgreSQL: 2 | 320, UPDATE 1.
        let r = after(
            &db,
            "update t set k = 3 where k = 1",
            true,
            "update t set v = t.v + u.w from u where t.k = u.k returning t.*",
        );
        check(
            &db,
            r,
            "UPDATE 1",
            &[&["2", "420"]],
            &[&["2", "420"], &["3", "115"]],
        );
    }
}

#[test]
fn update_from_holds_only_the_columns_it_reads() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 1)");
        let mut s = db.session();
        run(&mut s, "create table u2 (a int, k int, junk text, w int)");
        run(
            &mut s,
            "insert into u2 values (0, 1, 'x', 100), (0, 2, 'y', 200)",
        );
        // PostgreSQL: 1 | 115, UPDATE 1.
        let r = after(
            &db,
            "update t set v = 15 where k = 1",
            true,
            "update t set v = t.v + u2.w from u2 where t.k = u2.k and u2.junk <> 'y' returning t.*",
        );
        check(
            &db,
            r,
            "UPDATE 1",
            &[&["1", "115"]],
            &[&["1", "115"], &["2", "20"]],
        );
    }
}

#[test]
fn subqueries_in_where_after_a_key_moved() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 100), (2, 200)");
        // PostgreSQL: 2 | 21, UPDATE 1.
        let r = after(
            &db,
            "update t set k = 5 where k = 1",
            true,
            "update t set v = v + 1 where k in (select k from u) returning *",
        );
        check(
            &db,
            r,
            "UPDATE 1",
            &[&["2", "21"]],
            &[&["2", "21"], &["5", "10"]],
        );
        // PostgreSQL: UPDATE 0.
        let r = after(
            &db,
            "update t set k = 6 where k = 2",
            true,
            "update t set v = v + 1 where k = (select max(k) from u)",
        );
        check(&db, r, "UPDATE 0", &[], &[&["5", "10"], &["6", "21"]]);
    }
}

/// Runs `first` (committed) and then `second` on both table definitions,
/// `u` holding (1, 100), (3, 300), and checks `second`'s tag, RETURNING
/// rows and the table afterwards.
fn sublink_case(first: &str, second: &str, tag: &str, ret: &[&[&str]], t: &[&[&str]]) {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 100), (3, 300)");
        let r = after(&db, first, true, second);
        check(&db, r, tag, ret, t);
    }
}

/// PostgreSQL makes a top-level `IN (uncorrelated query)` a semi-join: the
/// re-check holds the row of `u` that matched, so a new version whose key
/// matches another row of `u` no longer qualifies.
#[test]
fn an_in_subquery_holds_the_row_it_matched() {
    // PostgreSQL: UPDATE 0.
    for second in [
        "update t set v = v + 1 where k in (select k from u) returning *",
        "update t set v = v + 1 where k = any (select k from u) returning *",
        "update t set v = v + 1 where k in (select distinct k from u) returning *",
    ] {
        sublink_case(
            "update t set k = 3 where k = 1",
            second,
            "UPDATE 0",
            &[],
            &[&["2", "20"], &["3", "10"]],
        );
    }
    // PostgreSQL: DELETE 0.
    sublink_case(
        "update t set k = 3 where k = 1",
        "delete from t where k in (select k from u) returning *",
        "DELETE 0",
        &[],
        &[&["2", "20"], &["3", "10"]],
    );
    // The key kept, the row is changed; the held row of u was deleted
    // meanwhile. PostgreSQL: 1 | 12, UPDATE 1.
    sublink_case(
        "update t set v = 11 where k = 1; delete from u where k = 1",
        "update t set v = v + 1 where k in (select k from u) returning *",
        "UPDATE 1",
        &[&["1", "12"]],
        &[&["1", "12"], &["2", "20"]],
    );
    // Another conjunct fails on the new version. PostgreSQL: UPDATE 0.
    sublink_case(
        "update t set v = 300 where k = 1",
        "update t set v = v + 1 where k in (select k from u where w > 50) and v < 200",
        "UPDATE 0",
        &[],
        &[&["1", "300"], &["2", "20"]],
    );
}

/// A correlated `EXISTS` is a semi-join too; `NOT EXISTS` an anti-join,
/// whose re-check holds no row of `u`, so it holds whatever `u` has.
#[test]
fn an_exists_subquery_holds_the_row_it_matched() {
    // PostgreSQL: UPDATE 0.
    sublink_case(
        "update t set k = 3 where k = 1",
        "update t set v = v + 1 where exists (select 1 from u where u.k = t.k) returning *",
        "UPDATE 0",
        &[],
        &[&["2", "20"], &["3", "10"]],
    );
    // PostgreSQL: 1 | 16, UPDATE 1.
    sublink_case(
        "update t set v = 15 where k = 1",
        "update t set v = v + 1 where exists (select 1 from u where u.k = t.k and u.w > 50) returning *",
        "UPDATE 1",
        &[&["1", "16"]],
        &[&["1", "16"], &["2", "20"]],
    );
    // PostgreSQL: UPDATE 0 (the held row's w is not above the new v).
    sublink_case(
        "update t set v = 300 where k = 1",
        "update t set v = v + 1 where exists (select 1 from u where u.k = t.k and u.w > t.v) returning *",
        "UPDATE 0",
        &[],
        &[&["1", "300"], &["2", "20"]],
    );
    // PostgreSQL: 3 | 21, UPDATE 1 (u has a row of key 3).
    sublink_case(
        "update t set k = 3 where k = 2",
        "update t set v = v + 1 where not exists (select 1 from u where u.k = t.k) returning *",
        "UPDATE 1",
        &[&["3", "21"]],
        &[&["1", "10"], &["3", "21"]],
    );
}

/// `x op ANY (uncorrelated query)` of any operator, and a correlated
/// EXISTS of any condition, are semi-joins in PostgreSQL too: the re-check
/// holds the row of `u` that matched first (in `u`'s scan order), where
/// evaluating the sublink again would find another.
#[test]
fn a_non_equality_semi_join_holds_the_row_it_matched() {
    for (second, tag, ret, t) in [
        // PostgreSQL: 1 | 11, UPDATE 1 (the moved row matched u's 3, and 4 < 3 fails).
        (
            "update t set v = v + 1 where k < any (select k from u) returning *",
            "UPDATE 1",
            &[&["1", "11"][..]][..],
            &[&["1", "11"][..], &["4", "20"]][..],
        ),
        // PostgreSQL: UPDATE 0 (the held row of key 3 is not within 4..5).
        (
            "update t set v = v + 1 where exists (select 1 from u where u.k >= t.k and u.k <= t.k + 1) returning *",
            "UPDATE 0",
            &[][..],
            &[&["1", "10"][..], &["4", "20"]][..],
        ),
    ] {
        for def in DEFS {
            let (_d, db) = setup(def, "(3, 300), (5, 500)");
            let r = after(&db, "update t set k = 4 where k = 2", true, second);
            check(&db, r, tag, ret, t);
        }
    }
}

/// A correlated `EXISTS` over a join is a semi-join whose re-check holds
/// every row the match joined (each relation's row mark), whatever the
/// join's plan: the held row of `u` (key 3) no longer matches the new
/// version, where evaluating the subquery again would find key 5's.
#[test]
fn an_exists_over_a_join_holds_the_rows_it_matched() {
    for (first, second, tag, ret, t) in [
        // PostgreSQL: UPDATE 0.
        (
            "update t set k = 4 where k = 2",
            "update t set v = v + 1 where exists (select 1 from u join w on w.k = u.k \
             where u.k >= t.k and u.k <= t.k + 1) returning *",
            "UPDATE 0",
            &[][..],
            &[&["1", "10"][..], &["4", "20"]][..],
        ),
        // PostgreSQL: 2 | 21, UPDATE 1 (the held row of key 3 has w 300,
        // not above 400; the row of key 5 would be).
        (
            "update t set v = 400 where k = 1",
            "update t set v = v + 1 where exists (select 1 from u join w on w.k = u.k \
             where u.k > t.k and u.w > t.v) returning *",
            "UPDATE 1",
            &[&["2", "21"][..]][..],
            &[&["1", "400"][..], &["2", "21"]][..],
        ),
    ] {
        for def in DEFS {
            // A hash join, and a nested loop over w's index.
            for (w, more) in [
                ("create table w (k int)", "select 1 where false"),
                (
                    "create table w (k int primary key)",
                    "insert into w select g from generate_series(1000, 20000) g",
                ),
            ] {
                let (_d, db) = setup(def, "(3, 300), (5, 500)");
                let mut s = db.session();
                run(&mut s, w);
                run(&mut s, "insert into w values (3), (5)");
                run(&mut s, more);
                run(&mut s, "analyze w");
                let r = after(&db, first, true, second);
                check(&db, r, tag, ret, t);
            }
        }
    }
}

/// Sublinks PostgreSQL keeps as SubPlans (`NOT IN`, a correlated `IN`,
/// any under `OR`) are evaluated again over the new version, under the
/// statement's snapshot.
#[test]
fn subplans_are_evaluated_again_under_the_statements_snapshot() {
    // PostgreSQL: UPDATE 0.
    sublink_case(
        "update t set k = 3 where k = 2",
        "update t set v = v + 1 where k not in (select k from u) returning *",
        "UPDATE 0",
        &[],
        &[&["1", "10"], &["3", "20"]],
    );
    // PostgreSQL: 3 | 11, UPDATE 1 each.
    for second in [
        "update t set v = v + 1 where k in (select k from u) or v < 0 returning *",
        "update t set v = v + 1 where exists (select 1 from u where u.k = t.k) or v < 0 returning *",
        "update t set v = v + 1 where k in (select k from u where u.w > t.v) returning *",
    ] {
        sublink_case(
            "update t set k = 3 where k = 1",
            second,
            "UPDATE 1",
            &[&["3", "11"]],
            &[&["2", "20"], &["3", "11"]],
        );
    }
    // The concurrent transaction's change to u is not seen.
    // PostgreSQL: 3 | 11, UPDATE 1.
    sublink_case(
        "update t set k = 3 where k = 1; delete from u where k = 3",
        "update t set v = v + 1 where k in (select k from u) or v < 0 returning *",
        "UPDATE 1",
        &[&["3", "11"]],
        &[&["2", "20"], &["3", "11"]],
    );
    sublink_case(
        "update t set k = 3 where k = 1; insert into u values (3, 0)",
        "update t set v = v + 1 where k in (select k from u where u.w > t.v) returning *",
        "UPDATE 1",
        &[&["3", "11"]],
        &[&["2", "20"], &["3", "11"]],
    );
}

#[test]
fn delete_rechecks_the_newest_version() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 1)");
        // PostgreSQL: DELETE 0.
        let r = after(
            &db,
            "update t set v = 11 where k = 1",
            true,
            "delete from t where v = 10 returning *",
        );
        check(&db, r, "DELETE 0", &[], &[&["1", "11"], &["2", "20"]]);
        // PostgreSQL: 1 | 12, DELETE 1.
        let r = after(
            &db,
            "update t set v = 12 where k = 1",
            true,
            "delete from t where k = 1 returning *",
        );
        check(&db, r, "DELETE 1", &[&["1", "12"]], &[&["2", "20"]]);
        // PostgreSQL: DELETE 0.
        let r = after(
            &db,
            "delete from t where k = 2",
            true,
            "delete from t where k = 2",
        );
        check(&db, r, "DELETE 0", &[], &[]);
    }
}

#[test]
fn delete_using_holds_the_other_rows_fixed() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 100), (2, 200)");
        // PostgreSQL: 2 | 20, DELETE 1.
        let r = after(
            &db,
            "update t set k = 3 where k = 1",
            true,
            "delete from t using u where t.k = u.k returning t.*",
        );
        check(&db, r, "DELETE 1", &[&["2", "20"]], &[&["3", "10"]]);
    }
}

#[test]
fn an_inherited_update_rechecks_a_child_row() {
    let (_d, db) = common::open(1000);
    let mut s = db.session();
    run(&mut s, "create table p (k int, v int)");
    run(&mut s, "create table c () inherits (p)");
    run(&mut s, "insert into p values (1, 10)");
    run(&mut s, "insert into c values (2, 20)");
    // PostgreSQL: 2 | 31, UPDATE 1.
    let r = after(
        &db,
        "update c set v = 30 where k = 2",
        true,
        "update p set v = v + 1 where k = 2 returning *",
    )
    .unwrap();
    assert_eq!(r.tag, "UPDATE 1");
    assert_eq!(rows_text(&r), strs(&[&["2", "31"]]));
    // PostgreSQL: DELETE 0.
    let r = after(
        &db,
        "update c set v = 40 where k = 2",
        true,
        "delete from p where v = 31",
    )
    .unwrap();
    assert_eq!(r.tag, "DELETE 0");
    assert_eq!(
        rows_text(&run(&mut s, "select k, v from p order by k")),
        strs(&[&["1", "10"], &["2", "40"]])
    );
}

#[test]
fn writes_through_a_view_recheck_its_condition() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 1)");
        run(
            &mut db.session(),
            "create view tv as select * from t where v >= 10",
        );
        // PostgreSQL: 1 | 51, UPDATE 1.
        let r = after(
            &db,
            "update t set v = 50 where k = 1",
            true,
            "update tv set v = v + 1 where k = 1 returning *",
        );
        check(
            &db,
            r,
            "UPDATE 1",
            &[&["1", "51"]],
            &[&["1", "51"], &["2", "20"]],
        );
        // PostgreSQL: UPDATE 0 (the view's condition fails on the new version).
        let r = after(
            &db,
            "update t set v = 5 where k = 1",
            true,
            "update tv set v = v + 1 where k = 1 returning *",
        );
        check(&db, r, "UPDATE 0", &[], &[&["1", "5"], &["2", "20"]]);
        // PostgreSQL: 2 | 15, DELETE 1.
        let r = after(
            &db,
            "update t set v = 15 where k = 2",
            true,
            "delete from tv returning *",
        );
        check(&db, r, "DELETE 1", &[&["2", "15"]], &[&["1", "5"]]);
    }
}

/// A REPEATABLE READ transaction whose snapshot predates the other's
/// change: `second` fails with 40001 and `message`, whether the other
/// committed before it ran or while it waited.
fn repeatable_read_fails(first: &str, second: &str, message: &str) {
    for def in DEFS {
        for waits in [false, true] {
            let (_d, db) = setup(def, "(1, 1)");
            let mut b = db.session();
            run(&mut b, "begin isolation level repeatable read");
            assert_eq!(int(one(&mut b, "select count(*) from t")), 2);
            let r = if waits {
                let mut a = db.session();
                run(&mut a, "begin");
                run(&mut a, first);
                let db2 = db.clone();
                let sql = second.to_string();
                let waiter = thread::spawn(move || {
                    let r = b.execute(&sql);
                    (b, r)
                });
                common::wait_until("the second statement waiting", || {
                    !db.locks.waiters().is_empty()
                });
                run(&mut a, "commit");
                let (back, r) = waiter.join().unwrap();
                b = back;
                let _ = db2;
                r
            } else {
                run(&mut db.session(), first);
                b.execute(second)
            };
            let e = r.expect_err("REPEATABLE READ must fail");
            assert_eq!(e.code.code(), "40001", "{e}");
            assert_eq!(e.message, message);
            run(&mut b, "rollback");
        }
    }
}

#[test]
fn repeatable_read_fails_on_a_concurrent_update() {
    // PostgreSQL: could not serialize access due to concurrent update.
    repeatable_read_fails(
        "update t set v = 11 where k = 1",
        "update t set v = 0 where k = 1",
        "could not serialize access due to concurrent update",
    );
    repeatable_read_fails(
        "update t set v = 11 where k = 1",
        "delete from t where k = 1",
        "could not serialize access due to concurrent update",
    );
}

#[test]
fn repeatable_read_fails_on_a_concurrent_delete() {
    // PostgreSQL: could not serialize access due to concurrent delete.
    repeatable_read_fails(
        "delete from t where k = 1",
        "update t set v = 0 where k = 1",
        "could not serialize access due to concurrent delete",
    );
    repeatable_read_fails(
        "delete from t where k = 1",
        "delete from t where k = 1",
        "could not serialize access due to concurrent delete",
    );
}

/// The second statement runs from its session's plan template (which
/// keeps no re-check: it is planned from the statement when needed).
#[test]
fn a_templated_update_rechecks_the_newest_version() {
    for def in DEFS {
        let (_d, db) = setup(def, "(1, 1)");
        let mut b = db.session();
        for (k, d) in [(2, 1), (2, 2), (2, 3), (2, 4)] {
            let sql = format!("update t set v = v + {d} where k = {k} and v >= 10");
            assert_eq!(run(&mut b, &sql).tag, "UPDATE 1");
        }
        assert!(b.plan_templates() >= 1, "{def}: the shape has a template");
        let mut a = db.session();
        for (first, tag, v) in [
            ("update t set v = 50 where k = 1", "UPDATE 1", 51),
            ("update t set v = 5 where k = 1", "UPDATE 0", 5),
        ] {
            run(&mut a, "begin");
            run(&mut a, first);
            let waiter = thread::spawn(move || {
                let r = b.execute("update t set v = v + 1 where k = 1 and v >= 10");
                (b, r)
            });
            common::wait_until("the templated update waiting", || {
                !db.locks.waiters().is_empty()
            });
            run(&mut a, "commit");
            let (back, r) = waiter.join().unwrap();
            b = back;
            // PostgreSQL: UPDATE 1 (v = 51), then UPDATE 0 (v = 5).
            assert_eq!(r.unwrap().tag, tag, "{def}: after {first}");
            assert_eq!(int(one(&mut a, "select v from t where k = 1")), v);
        }
    }
}
