//! An index scan whose bound is an InitPlan's value (`id = (SELECT
//! max(id) ...)` where the subquery runs with the statement: it calls a
//! volatile function, or it is in a VOLATILE function's body): the value
//! is computed when the scan starts, as PostgreSQL's `$0` in an `Index
//! Cond`, instead of the scan reading the whole table. The answers are
//! PostgreSQL 15's for the same statements.

mod common;

use common::{lines, run, texts};

fn setup() -> (tempfile::TempDir, heapdb::Database) {
    let (d, db) = common::open(1000);
    let mut s = db.session();
    run(&mut s, "create table big (id int primary key, v int)");
    run(
        &mut s,
        "insert into big select g, g % 7 from generate_series(1, 20000) g",
    );
    run(&mut s, "analyze big");
    (d, db)
}

fn strs(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|v| v.to_string()).collect())
        .collect()
}

#[test]
fn a_volatile_init_plan_bounds_the_index_scan() {
    let (_d, db) = setup();
    let mut s = db.session();
    for (q, want) in [
        (
            "select * from big where id = (select max(id) from big where random() >= 0)",
            &[&["20000", "1"][..]][..],
        ),
        (
            "select * from big where id >= (select max(id) - 2 from big where random() >= 0) order by id",
            &[&["19998", "6"][..], &["19999", "0"], &["20000", "1"]][..],
        ),
        (
            "select * from big where (select min(id) + 1 from big where random() >= 0) > id",
            &[&["1", "1"][..]][..],
        ),
        // A NULL bound selects no row.
        (
            "select * from big where id = (select null::int where random() >= 0)",
            &[][..],
        ),
        (
            "select * from big where id < (select null::int where random() >= 0)",
            &[][..],
        ),
    ] {
        let plan = lines(&mut s, &format!("explain (costs off) {q}")).join("\n");
        assert!(plan.starts_with("Index Scan using big_pkey on big"), "{q}:\n{plan}");
        assert_eq!(texts(&mut s, q), strs(want), "{q}");
    }
}

#[test]
fn a_volatile_body_sees_the_new_bound_at_each_call() {
    let (_d, db) = setup();
    let mut s = db.session();
    run(
        &mut s,
        "create function last_sql() returns int language sql volatile as \
         $$ select v from big where id = (select max(id) from big) $$",
    );
    run(
        &mut s,
        "create function last_pl() returns int language plpgsql volatile as \
         $$ begin return (select v from big where id = (select max(id) from big)); end $$",
    );
    run(
        &mut s,
        "create function below(n int) returns bigint language plpgsql volatile as \
         $$ begin return (select count(*) from big where id < (select min(id) from big) + n); end $$",
    );
    let q = "select last_sql(), last_pl(), below(3)";
    assert_eq!(texts(&mut s, q), strs(&[&["1", "1", "3"]]));
    run(&mut s, "insert into big values (20001, 42), (0, 0)");
    assert_eq!(texts(&mut s, q), strs(&[&["42", "42", "3"]]));
    run(&mut s, "begin");
    run(&mut s, "delete from big where id >= 20000 or id = 0");
    assert_eq!(texts(&mut s, q), strs(&[&["0", "0", "3"]]));
    run(&mut s, "rollback");
    // Each row's call computes its bound anew.
    assert_eq!(
        texts(&mut s, "select below(i) from generate_series(1, 3) i"),
        strs(&[&["1"], &["2"], &["3"]])
    );
}
