//! REINDEX across SIGKILL: a child process (this test binary, run with
//! `--exact reindex_crash_child --ignored`) rebuilds a table's indexes
//! over and over, acknowledging each commit; the harness kills it at some
//! moment, reopens the directory (recovery) and checks that each index is
//! whole (`bt_index_check`: sound structure, every row in it) and
//! uniqueness is still enforced, whether the kill came before, during or
//! after a rebuild's commit; then the next round rebuilds again over what
//! recovery left.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{one, run, text};

const CHILD_ENV: &str = "HEAPDB_REINDEX_CRASH_CHILD";
const ROWS: i64 = 20000;

#[test]
#[ignore = "the REINDEX crash harness runs this as its child process"]
fn reindex_crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let db = common::open_at(Path::new(&dir), 256);
    let mut s = db.session();
    println!("ready");
    for i in 0u64.. {
        match i % 3 {
            0 => run(&mut s, "reindex table b"),
            1 => run(&mut s, "reindex index b_v_idx"),
            _ => run(&mut s, "reindex index b_pkey"),
        };
        println!("ack {i}");
        if i % 4 == 3 {
            run(&mut s, "checkpoint");
        }
    }
}

fn check(s: &mut heapdb::Session, index: &str) -> (i64, i64) {
    let r = run(s, &format!("select * from bt_index_check('{index}')"));
    let n = |i: usize| text(&r.rows[0][i]).parse::<i64>().expect("a number");
    (n(0), n(2))
}

#[test]
fn reindex_survives_kill_at_any_moment() {
    let dir = tempfile::tempdir().expect("temp dir");
    {
        let db = common::open_at(dir.path(), 256);
        let mut s = db.session();
        run(&mut s, "create table b (id int primary key, v int, f text)");
        run(&mut s, "create index b_v_idx on b (v, f)");
        run(
            &mut s,
            &format!(
                "insert into b select g, g % 1000, repeat('y', g % 30) \
                 from generate_series(1, {ROWS}) g"
            ),
        );
        run(&mut s, "checkpoint");
        db.close().expect("close");
    }
    for round in 0..5u64 {
        let mut child = common::child_test("reindex_crash_child", CHILD_ENV, dir.path())
            .spawn()
            .expect("child");
        let lines = common::Lines::of(&mut child);
        assert!(lines.until(|l| l.ends_with("ready")), "the child starts");
        // Some rebuilds commit first; the kill lands at a varying moment
        // of the next one.
        let acks = round % 3;
        for _ in 0..acks {
            assert!(lines.until(|l| l.starts_with("ack ")), "the child rebuilds");
        }
        std::thread::sleep(Duration::from_millis(7 + round * 23));
        let db = common::kill9_and_reopen(child, dir.path(), 256);
        let mut s = db.session();
        assert_eq!(
            text(&one(&mut s, "select count(*) from b")),
            ROWS.to_string(),
            "round {round}"
        );
        assert_eq!(check(&mut s, "b_pkey"), (ROWS, ROWS), "round {round}");
        assert_eq!(check(&mut s, "b_v_idx"), (ROWS, ROWS), "round {round}");
        let e = s.execute("insert into b values (5, 1, 'dup')").unwrap_err();
        assert_eq!(e.code.code(), "23505", "round {round}: {e}");
        run(&mut s, "checkpoint");
        drop(s);
        db.close().expect("close");
    }
}
