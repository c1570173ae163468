//! Correlated subqueries run once per distinct outer value: the SubPlan's
//! result cache, checked through EXPLAIN ANALYZE's run and hit counts.

mod common;
use common::open_dir;

#[test]
fn subquery_runs_once_per_distinct_outer_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_dir(dir.path());
    let mut s = db.session();
    s.execute("create table o (id int, k int)").unwrap();
    s.execute("create table i (k int, w int)").unwrap();
    s.execute("insert into o select g, g % 100 from generate_series(1, 10000) g")
        .unwrap();
    s.execute("insert into i select g % 200, g from generate_series(1, 1000) g")
        .unwrap();
    for (sql, runs, hits) in [
        // select list, scalar
        (
            "select id, (select sum(w) from i where i.k = o.k) from o",
            100,
            9900,
        ),
        // WHERE, EXISTS (correlated beyond equalities, so not a join) over
        // a filter that keeps half of the outer rows
        (
            "select count(*) from o where id % 2 = 0 and exists (select 1 from i where i.k = o.k + 1 and i.w > o.k)",
            50,
            4950,
        ),
        // ANY with the tested value beside the parameter
        (
            "select count(*) from o where id > all (select w from i where i.k = o.k)",
            100,
            9900,
        ),
    ] {
        let lines = common::lines(&mut s, &format!("explain (analyze, costs off) {sql}"));
        let want = format!("Runs: {runs}  Cache Hits: {hits}");
        assert!(
            lines.iter().any(|l| l.trim() == want),
            "{sql}: want {want} in {lines:#?}"
        );
    }
    // EXISTS correlated by an equality alone is a join, run once.
    let lines = common::lines(
        &mut s,
        "explain (analyze, costs off) select count(*) from o where exists (select 1 from i where i.k = o.k)",
    );
    assert!(
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("->  Hash Join")),
        "{lines:#?}"
    );
    assert!(!lines.iter().any(|l| l.contains("SubPlan")), "{lines:#?}");
    // The answers are those of the equivalent join.
    let a = s
        .execute("select sum((select sum(w) from i where i.k = o.k))::bigint from o")
        .unwrap();
    let b = s
        .execute("select sum(w) from o join i on i.k = o.k")
        .unwrap();
    assert_eq!(format!("{:?}", a.rows), format!("{:?}", b.rows));
}
