//! ANALYZE end to end: statistics of known distributions (uniform, skewed,
//! many NULLs, few distinct) within stated tolerances, the same statistics
//! from the same sample every time, EXPLAIN's estimates within a factor of
//! two of the truth, hash joins building on the smaller side by estimate,
//! and the table's row estimate in `\d`.

use heapdb::{Session, SqlState};

mod common;
use common::{run, text};

fn int(s: &mut Session, sql: &str) -> i64 {
    text(&run(s, sql).rows[0][0]).parse().expect("an integer")
}

/// One pg_stats row of `t.col`: (null_frac, n_distinct, mcvs, freqs, histogram).
fn stats(s: &mut Session, t: &str, col: &str) -> (f64, f64, String, String, String) {
    let r = run(
        s,
        &format!(
            "select null_frac, n_distinct, most_common_vals, most_common_freqs, histogram_bounds \
             from pg_stats('{t}') where attname = '{col}'"
        ),
    );
    assert_eq!(r.rows.len(), 1, "stats of {t}.{col}");
    let row = &r.rows[0];
    (
        text(&row[0]).parse().expect("null_frac"),
        text(&row[1]).parse().expect("n_distinct"),
        text(&row[2]),
        text(&row[3]),
        text(&row[4]),
    )
}

fn freqs(list: &str) -> Vec<f64> {
    list.trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .filter(|x| !x.is_empty())
        .map(|x| x.parse().expect("a frequency"))
        .collect()
}

/// The estimated rows of EXPLAIN's top node.
fn estimate(s: &mut Session, query: &str) -> f64 {
    let r = run(s, &format!("explain {query}"));
    let first = text(&r.rows[0][0]);
    let at = first.find("rows=").expect("rows= in the plan") + 5;
    first[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no estimate in {first:?}"))
}

const ROWS: i64 = 100_000;

/// u: unique 1..N; s: 0 for half the rows, 1 for a quarter, else unique;
/// n: 70% NULL, else 15 values; f: five values, evenly.
fn load(s: &mut Session) {
    run(s, "create table d (u int, s int, n int, f text)");
    run(
        s,
        &format!(
            "insert into d select g, \
               case when g % 2 = 0 then 0 when g % 4 = 1 then 1 else g end, \
               case when g % 10 < 7 then null else g % 50 end, \
               'v' || (g % 5) \
             from generate_series(1, {ROWS}) g"
        ),
    );
}

#[test]
fn known_distributions_within_tolerances() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    load(&mut s);
    // A sample smaller than the table: 3,000 of 100,000 rows.
    run(&mut s, "set default_statistics_target = 10");
    let r = run(&mut s, "analyze verbose d");
    assert_eq!(r.tag, "ANALYZE");
    assert_eq!(r.notices[0].severity, "INFO");
    assert_eq!(r.notices[0].message, "analyzing \"public.d\"");
    assert!(
        r.notices[1].message.contains("3000 rows in sample"),
        "{}",
        r.notices[1].message
    );

    let (nf, nd, mcv, _, hist) = stats(&mut s, "d", "u");
    assert_eq!(nf, 0.0);
    assert_eq!(nd, -1.0, "unique");
    assert_eq!(mcv, "", "no common values in a unique column");
    assert_eq!(hist.split(',').count(), 11, "target 10: 10 buckets: {hist}");

    let (nf, _, mcv, fr, _) = stats(&mut s, "d", "s");
    assert_eq!(nf, 0.0);
    assert!(mcv.starts_with("{0,1"), "{mcv}");
    let fr = freqs(&fr);
    assert!((fr[0] - 0.5).abs() < 0.04, "{fr:?}");
    assert!((fr[1] - 0.25).abs() < 0.04, "{fr:?}");

    let (nf, nd, _, _, _) = stats(&mut s, "d", "n");
    assert!((nf - 0.7).abs() < 0.03, "null_frac {nf}");
    assert_eq!(nd, 15.0, "g % 50 where g % 10 is 7, 8 or 9");

    let (nf, nd, mcv, fr, hist) = stats(&mut s, "d", "f");
    assert_eq!(nf, 0.0);
    assert_eq!(nd, 5.0);
    assert_eq!(freqs(&fr).len(), 5, "{mcv}");
    assert!(freqs(&fr).iter().all(|f| (f - 0.2).abs() < 0.04), "{fr}");
    assert_eq!(hist, "", "every value is an MCV");

    let info = s.list_tables().expect("list");
    assert_eq!(info[0].rows_estimate, Some(ROWS as f64), "all pages read");
}

#[test]
fn the_same_sample_gives_the_same_statistics() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    load(&mut s);
    run(&mut s, "set default_statistics_target = 10");
    let all = "select attname, null_frac, n_distinct, most_common_vals, most_common_freqs, \
               histogram_bounds from pg_stats('d') order by attname";
    run(&mut s, "analyze d");
    let first: Vec<Vec<String>> = run(&mut s, all)
        .rows
        .iter()
        .map(|r| r.iter().map(text).collect())
        .collect();
    assert_eq!(first.len(), 4);
    // Prefetching changes how the pages are read, never which.
    run(&mut s, "set maintenance_io_concurrency = 0");
    run(&mut s, "analyze d");
    let second: Vec<Vec<String>> = run(&mut s, all)
        .rows
        .iter()
        .map(|r| r.iter().map(text).collect())
        .collect();
    assert_eq!(first, second);
}

#[test]
fn explain_estimates_are_within_a_factor_of_two() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    load(&mut s);
    run(&mut s, "analyze d");
    for (query, truth) in [
        ("select * from d where u < 20000", 19_999.0),
        ("select * from d where u >= 90000", 10_001.0),
        ("select * from d where u between 1000 and 3000", 2_001.0),
        ("select * from d where 500 > u", 499.0),
        ("select * from d where u = 777", 1.0),
        ("select * from d where s = 0", 50_000.0),
        ("select * from d where s = 1", 25_000.0),
        ("select * from d where s = 12347", 1.0),
        ("select * from d where s > 50000", 12_500.0),
        ("select * from d where n is null", 70_000.0),
        ("select * from d where n is not null", 30_000.0),
        ("select * from d where n = 7", 2_000.0),
        ("select * from d where f = 'v3'", 20_000.0),
        ("select * from d where f <> 'v3'", 80_000.0),
        ("select * from d where f = 'v3' and s = 0", 10_000.0),
    ] {
        let actual = int(&mut s, &query.replace("select *", "select count(*)")) as f64;
        assert_eq!(actual, truth, "{query}");
        let est = estimate(&mut s, query);
        assert!(
            est <= truth * 2.0 + 1.0 && est >= truth / 2.0 - 1.0,
            "{query}: estimate {est}, truth {truth}"
        );
    }
}

#[test]
fn hash_joins_build_on_the_smaller_side_by_estimate() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    load(&mut s);
    run(&mut s, "create table small (k int, label text)");
    run(
        &mut s,
        "insert into small select g, 'l' || g from generate_series(1, 20000) g",
    );
    run(&mut s, "analyze");
    // The big table filtered down to ~100 rows is the smaller input.
    let plan: Vec<String> = run(
        &mut s,
        "explain select count(*) from small, d where d.u = small.k and d.u < 100",
    )
    .rows
    .iter()
    .map(|r| text(&r[0]))
    .collect();
    let hash = plan
        .iter()
        .position(|l| l.contains("->  Hash  ("))
        .unwrap_or_else(|| panic!("a hash join: {plan:#?}"));
    let built = plan[hash + 1..]
        .iter()
        .find(|l| l.contains("Seq Scan on"))
        .expect("the build side's scan");
    assert!(built.contains("Seq Scan on d"), "{plan:#?}");
    // Without the filter, the smaller table is `small`.
    let plan: Vec<String> = run(
        &mut s,
        "explain select count(*) from d join small on d.u = small.k",
    )
    .rows
    .iter()
    .map(|r| text(&r[0]))
    .collect();
    let hash = plan
        .iter()
        .position(|l| l.contains("->  Hash  ("))
        .unwrap_or_else(|| panic!("a hash join: {plan:#?}"));
    assert!(
        plan[hash + 1..]
            .iter()
            .find(|l| l.contains("Seq Scan on"))
            .is_some_and(|l| l.contains("Seq Scan on small")),
        "{plan:#?}"
    );
    // The join estimate: every small row finds its match.
    let est = estimate(&mut s, "select * from d join small on d.u = small.k");
    assert!((10_000.0..=40_000.0).contains(&est), "join estimate {est}");
}

#[test]
fn analyze_forms_and_errors() {
    let (_d, db) = common::open(2048);
    let mut s = db.session();
    run(&mut s, "create table t (a int, b text)");
    run(
        &mut s,
        "insert into t select g, 'x' from generate_series(1, 1000) g",
    );
    run(&mut s, "analyze t (a)");
    let cols: Vec<String> = run(&mut s, "select attname from pg_stats('t')")
        .rows
        .iter()
        .map(|r| text(&r[0]))
        .collect();
    assert_eq!(cols, ["a"]);
    let e = s.execute("analyze t (nosuch)").unwrap_err();
    assert_eq!(e.code, SqlState::UndefinedColumn);
    let e = s.execute("vacuum t (a)").unwrap_err();
    assert_eq!(e.code, SqlState::InvalidParameterValue);
    run(&mut s, "vacuum analyze t (b)");
    assert_eq!(
        run(&mut s, "select attname from pg_stats('t') order by 1")
            .rows
            .len(),
        2
    );
    // Allowed inside a block. As in PostgreSQL, a rollback undoes the
    // column statistics (`pg_statistic`) but not the row estimate, which
    // is set in place (`pg_class.reltuples`).
    run(
        &mut s,
        "insert into t select g, 'y' from generate_series(1, 1000) g",
    );
    let mcv = "select most_common_vals from pg_stats('t') where attname = 'b'";
    let before = common::one_text(&mut s, mcv);
    run(&mut s, "begin");
    run(&mut s, "analyze t");
    assert_eq!(
        s.list_tables().expect("list")[0].rows_estimate,
        Some(2000.0)
    );
    assert_ne!(common::one_text(&mut s, mcv), before);
    run(&mut s, "rollback");
    assert_eq!(
        s.list_tables().expect("list")[0].rows_estimate,
        Some(2000.0)
    );
    assert_eq!(common::one_text(&mut s, mcv), before);
    run(&mut s, "analyze");
    assert_eq!(
        s.list_tables().expect("list")[0].rows_estimate,
        Some(2000.0)
    );
    // An empty table.
    run(&mut s, "create table e (x int)");
    run(&mut s, "analyze e");
    assert_eq!(int(&mut s, "select count(*) from pg_stats('e')"), 1);
}

/// `pg_stats.correlation` as PostgreSQL computes it from the sample in
/// physical order: 1 for a column loaded ascending (also when the sample
/// is smaller than the table and its reservoir replaced rows), -1 for a
/// descending one, near 0 for a shuffled one, 1 for a constant column;
/// kept across a restart (the catalog file).
#[test]
fn correlation_of_physical_order() {
    let (dir, db) = common::open(2048);
    let mut s = db.session();
    run(
        &mut s,
        "create table c (up int, down int, mixed int, k int)",
    );
    run(
        &mut s,
        "insert into c select g, 200001 - g, (g * 7919) % 200000, 7 \
         from generate_series(1, 200000) g",
    );
    run(&mut s, "set default_statistics_target = 10");
    run(&mut s, "analyze c");
    let corr = |s: &mut Session, col: &str| -> f64 {
        let r = run(
            s,
            &format!("select correlation from pg_stats('c') where attname = '{col}'"),
        );
        text(&r.rows[0][0]).parse().expect("a correlation")
    };
    assert_eq!(corr(&mut s, "up"), 1.0);
    assert_eq!(corr(&mut s, "down"), -1.0);
    assert!(
        corr(&mut s, "mixed").abs() < 0.1,
        "{}",
        corr(&mut s, "mixed")
    );
    assert_eq!(corr(&mut s, "k"), 1.0);
    drop(s);
    drop(db);
    let db = common::open_at(dir.path(), 2048);
    let mut s = db.session();
    assert_eq!(corr(&mut s, "down"), -1.0);
}
