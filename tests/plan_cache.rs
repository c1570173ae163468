//! Statements run from a plan template (`session::plancache`) give what
//! planning each one afresh gives: the same shapes with many literals, run
//! in one session (templates made and used) and each in a new session (no
//! template), across DDL, statistics, TRUNCATE, transactions and settings
//! that must make a template stale.

use heapdb::{Database, Session};

fn rows(s: &mut Session, sql: &str) -> Result<String, String> {
    s.execute(sql)
        .map(|r| format!("{} {:?}", r.tag, r.rows))
        .map_err(|e| format!("{} {}", e.code.code(), e.message))
}

/// Runs `sql` in `cached` and in a new session of `db`, and checks both agree.
fn same(db: &Database, cached: &mut Session, sql: &str) {
    let fresh = rows(&mut db.session(), sql);
    let got = rows(cached, sql);
    assert_eq!(got, fresh, "{sql}");
}

const SHAPES: &[&str] = &[
    "select abalance from a where aid = {}",
    "select aid, bid from a where bid = {} and aid < {}",
    "select count(*) from a where aid between {} and {}",
    "select count(*) from a where aid >= {}",
    "select aid from a where aid > {} order by aid limit 3",
    "select sum(abalance) from a where bid <> {}",
    "select a.aid, b.bid from a, b where a.bid = b.bid and a.aid = {}",
    "select aid from a where aid in ({}, {})",
    "select aid from a where aid = {} or aid = {}",
    "select case when aid = {} then 1 else 0 end from a where aid = {}",
];

fn run_shapes(db: &Database, s: &mut Session, round: i64) {
    for (i, shape) in SHAPES.iter().enumerate() {
        for k in 0..4i64 {
            let mut sql = shape.to_string();
            let mut n = 0;
            while let Some(at) = sql.find("{}") {
                let v = (round * 37 + k * 101 + i as i64 * 13 + n * 7) % 1200;
                sql.replace_range(at..at + 2, &v.to_string());
                n += 1;
            }
            same(db, s, &sql);
        }
    }
}

#[test]
fn templates_give_what_planning_gives() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    for sql in [
        "create table a (aid int primary key, bid int, abalance int)",
        "insert into a select g, g % 10, g * 3 from generate_series(1, 1000) g",
        "create table b (bid int, name text)",
        "insert into b select g, 'b' || g from generate_series(0, 9) g",
        "analyze a",
    ] {
        s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    run_shapes(&db, &mut s, 0);
    assert!(
        s.plan_templates() >= 3,
        "point lookups, ranges and joins are cached: {}",
        s.plan_templates()
    );
    // Each change below must make the templates stale, or leave them right.
    let changes = [
        "create index a_bid on a (bid)",
        "update a set abalance = abalance + 1 where aid < 500",
        "analyze a",
        "delete from a where aid % 3 = 0",
        "vacuum a",
        "drop index a_bid",
        "truncate b",
        "insert into b select g, 'c' || g from generate_series(0, 4) g",
        "set enable_indexscan = off",
        "reset enable_indexscan",
        "insert into a (aid, bid, abalance) select g, g % 7, g from generate_series(1001, 1300) g",
    ];
    for (round, change) in changes.iter().enumerate() {
        s.execute(change)
            .unwrap_or_else(|e| panic!("{change}: {e}"));
        run_shapes(&db, &mut s, round as i64 + 1);
    }
    // Inside a transaction that changes the catalog: the session sees its own
    // definitions (the fresh sessions see the committed ones, so compare
    // with a second look through a statement no template can serve).
    s.execute("begin").unwrap();
    s.execute("drop table b").unwrap();
    let e = rows(
        &mut s,
        "select a.aid, b.bid from a, b where a.bid = b.bid and a.aid = 5",
    );
    assert!(e.unwrap_err().starts_with("42P01"));
    s.execute("rollback").unwrap();
    run_shapes(&db, &mut s, 40);
    // A table dropped and made again under the same name.
    s.execute("drop table b").unwrap();
    s.execute("create table b (bid int, name text)").unwrap();
    s.execute("insert into b values (3, 'x')").unwrap();
    run_shapes(&db, &mut s, 41);
    // Errors come out the same: a value out of the column's range.
    same(&db, &mut s, "select abalance from a where aid = 2147483647");
    s.execute("drop table a").unwrap();
    same(&db, &mut s, "select abalance from a where aid = 7");
}

/// UPDATE shapes: what each statement does is checked against a second
/// database fed the same statements, each in a new session (no template).
const UPDATES: &[&str] = &[
    "update a set abalance = abalance + {} where aid = {}",
    "update a set abalance = abalance - {} where aid = {}",
    "update a set abalance = {}, bid = {} where aid = {}",
    "update a set abalance = abalance + {} where aid between {} and {}",
    "update a set small = small + {} where aid = {}",
    "update a set big = big * 2 + {} where aid = {}",
    "update a set aid = {} where aid = {}",
    "update a set bid = bid + {} where bid = {} and aid < {}",
    "update a set abalance = abalance + {} from b where a.bid = b.bid and b.bid = {}",
    "update a set abalance = 0 where aid in (select aid from a where aid > {} order by aid limit 2)",
];

/// The `n`-th literal of round `round` of an update shape: small and large,
/// negative, out of `int2`'s range, or a key that already exists.
fn update_value(round: i64, k: i64, i: usize, n: i64) -> String {
    let v = (round * 37 + k * 101 + i as i64 * 13 + n * 7) % 1300;
    match (round + k + n) % 5 {
        0 => format!("-{v}"),
        1 => format!("- {v}"),
        2 if i == 4 => "40000".into(),
        _ => v.to_string(),
    }
}

const SUMS: &str =
    "select sum(abalance), sum(aid), sum(bid), sum(small), sum(big), count(*) from a";

fn run_updates(pair: &mut Pair, round: i64) {
    for (i, shape) in UPDATES.iter().enumerate() {
        for k in 0..4i64 {
            let mut sql = shape.to_string();
            let mut n = 0;
            while let Some(at) = sql.find("{}") {
                sql.replace_range(at..at + 2, &update_value(round, k, i, n));
                n += 1;
            }
            pair.same(&sql);
            let plain = rows(&mut pair.plain, &format!("/* */ {SUMS}"));
            assert_eq!(rows(&mut pair.cached, SUMS), plain, "after {sql}");
        }
    }
}

/// A database whose session keeps templates, and one whose session runs
/// every statement behind a comment (which no template serves).
struct Pair {
    cached_db: Database,
    cached: Session,
    plain_db: Database,
    plain: Session,
    _dirs: [tempfile::TempDir; 2],
}

impl Pair {
    fn new() -> Pair {
        let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
        let cached_db = Database::open(dirs[0].path()).unwrap();
        let plain_db = Database::open(dirs[1].path()).unwrap();
        Pair {
            cached: cached_db.session(),
            cached_db,
            plain: plain_db.session(),
            plain_db,
            _dirs: dirs,
        }
    }

    /// Runs `sql` on both and checks they agree.
    fn same(&mut self, sql: &str) {
        let plain = rows(&mut self.plain, &format!("/* */ {sql}"));
        let got = rows(&mut self.cached, sql);
        assert_eq!(got, plain, "{sql}");
    }

    /// Runs `sql` in another session of each database.
    fn other(&mut self, sql: &str) {
        let a = rows(&mut self.cached_db.session(), sql);
        let b = rows(&mut self.plain_db.session(), sql);
        assert_eq!(a, b, "{sql}");
    }
}

#[test]
fn update_templates_write_what_planning_writes() {
    let mut p = Pair::new();
    for sql in [
        "create table a (aid int primary key, bid int, abalance int, small int2, big int8)",
        "insert into a select g, g % 10, g * 3, g % 100, g from generate_series(1, 1000) g",
        "create table b (bid int, name text)",
        "insert into b select g, 'b' || g from generate_series(0, 9) g",
        "analyze a",
    ] {
        p.same(sql);
    }
    run_updates(&mut p, 0);
    assert!(
        p.cached.plan_templates() >= 4,
        "keyed updates are cached: {}",
        p.cached.plan_templates()
    );
    let changes = [
        "create index a_bid on a (bid)",
        "analyze a",
        "alter table a add column note text",
        "vacuum a",
        "drop index a_bid",
        "alter table a add constraint pos check (abalance > -100000)",
        "create unique index a_big on a (big)",
        "set enable_indexscan = off",
        "reset enable_indexscan",
        "create view v as select * from a",
        "drop view v",
        "truncate b",
        "insert into b select g, 'c' || g from generate_series(0, 4) g",
    ];
    for (round, change) in changes.iter().enumerate() {
        p.same(change);
        run_updates(&mut p, round as i64 + 1);
    }
    // Inside a transaction block, rolled back and committed.
    for end in ["rollback", "commit"] {
        p.same("begin");
        run_updates(&mut p, 30);
        p.same(end);
        run_updates(&mut p, 31);
    }
    // Another session's committed changes are seen by the next statement.
    for round in 0..3 {
        p.other("update a set abalance = abalance * 2 where aid % 3 = 0");
        p.other("delete from a where aid % 17 = 5");
        run_updates(&mut p, 50 + round);
    }
    // The target dropped and made again under the same name, then a view
    // taking its name.
    p.same("drop table a cascade");
    p.same("update a set abalance = abalance + 1 where aid = 5");
    p.same("create table a (aid int primary key, bid int, abalance int, small int2, big int8)");
    p.same("insert into a select g, g % 3, g, 1, g from generate_series(1, 50) g");
    run_updates(&mut p, 60);
    p.same("alter table a rename to a2");
    p.same("create view a as select * from a2");
    run_updates(&mut p, 61);
}

/// Two sessions updating the same rows at once, each from its templates:
/// every update that succeeds is applied exactly once.
#[test]
fn concurrent_templated_updates_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    s.execute("create table a (aid int primary key, abalance int)")
        .unwrap();
    s.execute("insert into a select g, 0 from generate_series(1, 20) g")
        .unwrap();
    let workers: Vec<_> = (0..2i64)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut s = db.session();
                let mut sum = 0i64;
                for i in 0..300i64 {
                    let d = (i * 7 + w * 3) % 11 - 5;
                    let k = (i * 13 + w) % 20 + 1;
                    let sql = format!("update a set abalance = abalance + {d} where aid = {k}");
                    // A row updated by a transaction that committed after
                    // this statement's snapshot is updated in its newest
                    // version (READ COMMITTED's re-check).
                    let r = s.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
                    assert_eq!(r.tag, "UPDATE 1");
                    sum += d;
                }
                assert!(s.plan_templates() >= 1);
                sum
            })
        })
        .collect();
    let want: i64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    let r = s.execute("select sum(abalance)::int8 from a").unwrap();
    assert_eq!(format!("{:?}", r.rows), format!("[[Int8({want})]]"));
}

/// A SELECT's template plan holds the literals of the statement that used
/// it last: each later statement, including one after an error, a
/// rollback or a statement of another shape, must see only its own.
#[test]
fn a_template_keeps_no_earlier_statements_literals() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    for sql in [
        "create table a (aid int primary key, bid int, abalance int)",
        "insert into a select g, g % 10, g * 3 from generate_series(1, 200) g",
        "analyze a",
    ] {
        s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    // (key, subtrahend): a zero divisor is an error, a missing key no row.
    let runs = [
        (5, 4),
        (5, 3),
        (7, 7),
        (7, 1),
        (0, 1),
        (200, 199),
        (201, 2),
        (-3, 1),
        (5, 5),
        (150, 1),
        (5, 1),
    ];
    for (round, &(k, d)) in runs.iter().cycle().take(3 * runs.len()).enumerate() {
        let sql = format!("select abalance, 1000 / (aid - {d}) from a where aid = {k}");
        match round % 5 {
            1 => {
                s.execute("begin").unwrap();
                same(&db, &mut s, &sql);
                s.execute("rollback").unwrap();
            }
            3 => {
                same(&db, &mut s, &sql);
                same(
                    &db,
                    &mut s,
                    &format!("select bid from a where aid = {}", k + 1),
                );
            }
            _ => same(&db, &mut s, &sql),
        }
    }
    assert!(s.plan_templates() >= 2, "{}", s.plan_templates());
}
