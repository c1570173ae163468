//! Sequences under crashes and concurrency: a value handed out is never
//! handed out again, whether the shell is killed with SIGKILL after
//! printing it or the database is closed and reopened; two sessions
//! calling `nextval` at once never get the same value.

use std::collections::HashSet;
use std::io::Write;
use std::process::Stdio;

mod common;

/// Pipes `nextval` calls into a shell, kills it after reading
/// `kill_after` values, reopens the database: the next value is greater
/// than every value printed.
fn crash_round(kill_after: usize, with_rollbacks: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = common::shell_command(dir.path(), &["-A", "-t"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let mut script = String::from("CREATE SEQUENCE s;\n");
        for i in 0..5000 {
            if with_rollbacks && i % 7 == 0 {
                script.push_str("BEGIN;\nSELECT nextval('s');\nROLLBACK;\n");
            } else {
                script.push_str("SELECT nextval('s');\n");
            }
        }
        // The child is killed while reading: a broken pipe is expected.
        let _ = stdin.write_all(script.as_bytes());
    });
    let lines = common::Lines::of(&mut child);
    let mut seen = Vec::new();
    while seen.len() < kill_after {
        match lines.next() {
            Some(l) => {
                if let Ok(v) = l.trim().parse::<i64>() {
                    seen.push(v);
                }
            }
            None => break,
        }
    }
    common::kill9(child);
    writer.join().unwrap();
    assert!(!seen.is_empty(), "no value was printed");
    let max = *seen.iter().max().unwrap();
    let db = common::open_dir(dir.path());
    let mut s = db.session();
    let next: i64 = common::one_text(&mut s, "SELECT nextval('s')")
        .parse()
        .unwrap();
    assert!(
        next > max,
        "after the crash nextval gave {next}, but {max} was printed before it"
    );
}

#[test]
fn values_printed_before_a_kill_are_never_handed_out_again() {
    for kill_after in [1, 31, 33, 500] {
        crash_round(kill_after, false);
    }
    crash_round(100, true);
}

/// The embedded form, with a crash that loses the log's unflushed buffer:
/// every value a statement returned survives in the log.
#[test]
fn values_returned_before_a_crash_are_never_handed_out_again() {
    for (n, rollbacks) in [(1, false), (32, false), (33, true), (100, true)] {
        let dir = tempfile::tempdir().unwrap();
        let db = common::open_dir(dir.path());
        let mut s = db.session();
        common::run(&mut s, "CREATE SEQUENCE s");
        common::run(&mut s, "SET synchronous_commit = off");
        let mut max = 0i64;
        for i in 0..n {
            let rollback = rollbacks && i % 3 == 0;
            if rollback {
                common::run(&mut s, "BEGIN");
            }
            let v: i64 = common::one_text(&mut s, "SELECT nextval('s')")
                .parse()
                .unwrap();
            if rollback {
                common::run(&mut s, "ROLLBACK");
            }
            max = max.max(v);
        }
        drop(s);
        db.crash();
        let db = common::open_dir(dir.path());
        let mut s = db.session();
        let next: i64 = common::one_text(&mut s, "SELECT nextval('s')")
            .parse()
            .unwrap();
        assert!(
            next > max,
            "after the crash nextval gave {next}, {max} was returned before"
        );
    }
}

#[test]
fn values_continue_after_a_clean_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = common::open_dir(dir.path());
        let mut s = db.session();
        common::run(&mut s, "CREATE SEQUENCE s");
        common::run(&mut s, "CREATE TABLE t (id serial, v int)");
        for _ in 0..5 {
            common::run(&mut s, "SELECT nextval('s')");
            common::run(&mut s, "INSERT INTO t (v) VALUES (1)");
        }
        drop(s);
        db.close().unwrap();
    }
    let db = common::open_dir(dir.path());
    let mut s = db.session();
    assert_eq!(common::one_text(&mut s, "SELECT nextval('s')"), "6");
    common::run(&mut s, "INSERT INTO t (v) VALUES (2)");
    assert_eq!(common::one_text(&mut s, "SELECT max(id) FROM t"), "6");
    assert_eq!(common::one_text(&mut s, "SELECT last_value FROM s"), "6");
}

#[test]
fn concurrent_sessions_never_share_a_value() {
    let (_dir, db) = common::open(256);
    let mut s = db.session();
    common::run(&mut s, "CREATE SEQUENCE s");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut s = db.session();
                let mut got = Vec::new();
                for i in 0..300 {
                    if i % 2 == 0 {
                        got.push(common::one_text(&mut s, "SELECT nextval('s')"));
                    } else {
                        let r =
                            common::texts(&mut s, "SELECT nextval('s') FROM generate_series(1, 3)");
                        got.extend(r.into_iter().map(|row| row[0].clone()));
                    }
                }
                got
            })
        })
        .collect();
    let mut all = HashSet::new();
    let mut n = 0;
    for t in threads {
        for v in t.join().unwrap() {
            n += 1;
            assert!(all.insert(v.clone()), "value {v} was handed out twice");
        }
    }
    assert_eq!(n, 4 * (150 + 150 * 3));
    let max: i64 = all.iter().map(|v| v.parse::<i64>().unwrap()).max().unwrap();
    assert_eq!(max, n as i64, "values are dense: 1..={n}");
}
