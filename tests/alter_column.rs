//! ALTER TABLE's column forms across SIGKILL and against a fresh load:
//!
//! - a child process (this test binary, run with `--exact
//!   alter_column_crash_child --ignored`) adds, retypes and drops a column
//!   of an indexed table over and over, acknowledging each commit, while
//!   another of its threads runs checkpoints; the harness kills it at some
//!   moment, reopens the directory (recovery) and checks that the table has
//!   every row, either the whole new column or none of it, whole indexes
//!   that still enforce uniqueness, and no file of a rewrite that did not
//!   commit;
//! - a table that went through ADD and DROP COLUMN and ALTER TYPE answers
//!   every kind of scan (plain, the typed fast paths, the page summaries
//!   after VACUUM, index and index-only scans) as a table loaded fresh with
//!   the same rows does.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{one, run, text, texts};

const CHILD_ENV: &str = "HEAPDB_ALTER_COLUMN_CRASH_CHILD";
const ROWS: i64 = 5000;

#[test]
#[ignore = "the ALTER TABLE crash harness runs this as its child process"]
fn alter_column_crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let db = common::open_at(Path::new(&dir), 256);
    let mut s = db.session();
    let cdb = db.clone();
    std::thread::spawn(move || {
        let mut c = cdb.session();
        loop {
            run(&mut c, "checkpoint");
            std::thread::sleep(Duration::from_millis(3));
        }
    });
    println!("ready");
    for i in 0u64.. {
        match i % 3 {
            0 => run(&mut s, "alter table b add column x int default 7"),
            1 => run(
                &mut s,
                "alter table b alter column x type bigint using x * 2",
            ),
            _ => run(&mut s, "alter table b drop column x"),
        };
        println!("ack {i}");
    }
}

/// The relation files of `dir/base` (segment suffixes folded), sorted.
fn relation_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("base"))
        .expect("base/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        .map(|n| n.split('.').next().unwrap_or_default().to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

fn index_check(s: &mut heapdb::Session, index: &str) -> (i64, i64) {
    let r = run(s, &format!("select * from bt_index_check('{index}')"));
    let n = |i: usize| text(&r.rows[0][i]).parse::<i64>().expect("a number");
    (n(0), n(2))
}

fn setup(dir: &Path) {
    let db = common::open_at(dir, 256);
    let mut s = db.session();
    run(&mut s, "create table b (id int primary key, v int, f text)");
    run(&mut s, "create index b_v_idx on b (v)");
    run(
        &mut s,
        &format!(
            "insert into b select g, g % 100, repeat('y', g % 30) \
             from generate_series(1, {ROWS}) g"
        ),
    );
    run(&mut s, "checkpoint");
    db.close().expect("close");
}

fn crash_round(dir: &Path, acks: u64, ms: u64, round: u64) {
    let mut child = common::child_test("alter_column_crash_child", CHILD_ENV, dir)
        .spawn()
        .expect("child");
    let lines = common::Lines::of(&mut child);
    assert!(lines.until(|l| l.ends_with("ready")), "the child starts");
    for _ in 0..acks {
        assert!(lines.until(|l| l.starts_with("ack ")), "the child alters");
    }
    std::thread::sleep(Duration::from_millis(ms));
    let db = common::kill9_and_reopen(child, dir, 256);
    let mut s = db.session();
    assert_eq!(
        text(&one(&mut s, "select count(*) from b")),
        ROWS.to_string(),
        "round {round}"
    );
    let has_x = s.execute("select x from b limit 1").is_ok();
    if has_x {
        let r = texts(&mut s, "select count(distinct x), min(x) from b");
        assert_eq!(r[0][0], "1", "round {round}: one value of x");
        assert!(r[0][1] == "7" || r[0][1] == "14", "round {round}: {r:?}");
        run(&mut s, "alter table b drop column x");
    }
    assert_eq!(index_check(&mut s, "b_pkey"), (ROWS, ROWS), "round {round}");
    assert_eq!(
        index_check(&mut s, "b_v_idx"),
        (ROWS, ROWS),
        "round {round}"
    );
    // The table's forks and one file per index: nothing of a rewrite that
    // never committed.
    let path = text(&one(&mut s, "select pg_relation_filepath('b')"));
    let table = path.trim_start_matches("base/").to_string();
    let files = relation_files(dir);
    let others: Vec<&String> = files
        .iter()
        .filter(|f| f.as_str() != table && !f.starts_with(&format!("{table}_")))
        .collect();
    assert_eq!(others.len(), 2, "round {round}: files {files:?}");
    let e = s.execute("insert into b values (5, 1, 'dup')").unwrap_err();
    assert_eq!(e.code.code(), "23505", "round {round}: {e}");
    run(&mut s, "checkpoint");
    drop(s);
    db.close().expect("close");
}

#[test]
fn alter_column_survives_kill_at_any_moment() {
    let dir = tempfile::tempdir().expect("temp dir");
    setup(dir.path());
    for round in 0..4u64 {
        crash_round(dir.path(), round % 3, 5 + round * 17, round);
    }
}

/// The queries both tables must answer alike (`T` is the table).
const QUERIES: &[&str] = &[
    "select * from T order by id",
    "select count(*) from T",
    "select count(c), sum(c), min(e), max(e) from T",
    "select g, sum(c), count(*) from T group by g order by g",
    "select g, count(e) from T where c > 100 group by g order by g",
    "select id, c from T where id between 100 and 120 order by id",
    "select count(*) from T where id > 1000",
    "select e, count(*) from T group by e order by e",
];

fn answers(s: &mut heapdb::Session, table: &str) -> Vec<Vec<Vec<String>>> {
    QUERIES
        .iter()
        .map(|q| texts(s, &q.replace('T', table)))
        .collect()
}

#[test]
fn altered_table_scans_as_a_fresh_one() {
    let (_dir, db) = common::open(256);
    let mut s = db.session();
    run(
        &mut s,
        "create table a (id int primary key, dropme text, g int)",
    );
    run(
        &mut s,
        "insert into a select i, 'x' || i, i % 7 from generate_series(1, 3000) i",
    );
    run(&mut s, "alter table a add column c int default 5");
    run(&mut s, "update a set c = id * 3 where id % 4 = 0");
    run(&mut s, "alter table a drop column dropme");
    run(&mut s, "alter table a add column e text");
    run(&mut s, "update a set e = 'v' || (id % 5) where id % 3 = 0");
    run(&mut s, "alter table a alter column c type bigint");
    run(&mut s, "create index a_c on a (c)");
    run(&mut s, "insert into a values (3001, 1, 9, 'late')");
    run(
        &mut s,
        "create table f (id int primary key, g int, c bigint, e text)",
    );
    run(&mut s, "insert into f select * from a order by id");
    run(&mut s, "create index f_c on f (c)");
    for phase in ["fresh", "vacuumed"] {
        let (x, y) = (answers(&mut s, "a"), answers(&mut s, "f"));
        for (i, q) in QUERIES.iter().enumerate() {
            assert_eq!(x[i], y[i], "{phase}: {q}");
        }
        run(&mut s, "vacuum analyze a");
        run(&mut s, "vacuum analyze f");
    }
    // Index and index-only scans over the rebuilt index.
    run(&mut s, "set enable_seqscan = off");
    for q in [
        "select c from T where c between 30 and 90 order by c",
        "select count(*) from T where c = 5",
    ] {
        let (x, y) = (
            texts(&mut s, &q.replace('T', "a")),
            texts(&mut s, &q.replace('T', "f")),
        );
        assert_eq!(x, y, "{q}");
    }
}
