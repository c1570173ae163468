//! CHECK constraints beyond what the sequential SQL corpus
//! (`tests/slt/check_constraints.slt`) can say: the DETAIL of the
//! violation, `\d`'s `Check constraints:` lines as psql prints them, and
//! the constraints surviving a SIGKILL (an uncommitted ADD CONSTRAINT
//! gone, the committed ones enforced).

use std::io::Write;
use std::process::Stdio;

mod common;
use common::run;

#[test]
fn violations_carry_the_failing_row() {
    let (_d, db) = common::open(512);
    let mut s = db.session();
    run(&mut s, "create table t (a int check (a > 0), b text)");
    let e = s.execute("insert into t values (-1, 'x y')").unwrap_err();
    assert_eq!(e.code.code(), "23514");
    assert_eq!(
        e.message,
        "new row for relation \"t\" violates check constraint \"t_a_check\""
    );
    assert_eq!(e.detail.as_deref(), Some("Failing row contains (-1, x y)."));
    run(&mut s, "insert into t values (1, null)");
    let e = s.execute("update t set a = 0").unwrap_err();
    assert_eq!(e.detail.as_deref(), Some("Failing row contains (0, null)."));
}

#[test]
fn describe_lists_checks_as_psql() {
    let (_d, db) = common::open(512);
    let mut s = db.session();
    run(
        &mut s,
        "create table t (a int check (a > 0), b text check (b <> ''), d numeric, \
         check (a > 0 and b is not null or d > 3), check (a in (1, 2, 3)), \
         check (-a < 4 and a * 2 + 1 > 0))",
    );
    run(
        &mut s,
        "alter table t add constraint named check (d > 1) not valid",
    );
    let tables = s.list_tables().unwrap();
    let t = tables.iter().find(|t| t.name == "t").unwrap();
    assert_eq!(
        t.checks,
        [
            "\"named\" CHECK (d > 1::numeric) NOT VALID",
            "\"t_a_check\" CHECK (a > 0)",
            "\"t_a_check1\" CHECK (a = ANY (ARRAY[1, 2, 3]))",
            "\"t_a_check2\" CHECK ((- a) < 4 AND (a * 2 + 1) > 0)",
            "\"t_b_check\" CHECK (b <> ''::text)",
            "\"t_check\" CHECK (a > 0 AND b IS NOT NULL OR d > 3::numeric)",
        ]
    );
}

/// Kills a shell with SIGKILL after `script` printed `marker`.
fn run_then_kill(dir: &std::path::Path, script: &str, marker: &str) {
    let mut child = common::shell_command(dir, &[])
        .stderr(Stdio::null())
        .spawn()
        .expect("start heapdb");
    let mut stdin = child.stdin.take().expect("stdin piped");
    stdin.write_all(script.as_bytes()).expect("write script");
    let lines = common::Lines::of(&mut child);
    assert!(lines.until(|l| l.contains(marker)), "no {marker}");
    common::kill9(child);
    drop(stdin);
}

#[test]
fn checks_survive_a_kill() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "\
SET synchronous_commit = on;
CREATE TABLE t (a int CHECK (a > 0), b int, CONSTRAINT small CHECK (b < 10));
ALTER TABLE t ADD CONSTRAINT pos_b CHECK (b > 0) NOT VALID;
ALTER TABLE t RENAME CONSTRAINT small TO under_ten;
INSERT INTO t VALUES (1, 5);
BEGIN;
ALTER TABLE t ADD CONSTRAINT never CHECK (a > 100) NOT VALID;
SELECT 'marker' || 'reached';
";
    run_then_kill(dir.path(), script, "markerreached");
    let db = common::open_dir(dir.path());
    let mut s = db.session();
    for (sql, name) in [
        ("insert into t values (0, 5)", "t_a_check"),
        ("insert into t values (1, 50)", "under_ten"),
        ("insert into t values (1, -5)", "pos_b"),
    ] {
        let e = s.execute(sql).unwrap_err();
        assert_eq!(e.code.code(), "23514", "{sql}");
        assert!(e.message.contains(&format!("\"{name}\"")), "{}", e.message);
    }
    run(&mut s, "insert into t values (2, 6)");
    let tables = s.list_tables().unwrap();
    let t = tables.iter().find(|t| t.name == "t").unwrap();
    assert_eq!(
        t.checks,
        [
            "\"pos_b\" CHECK (b > 0) NOT VALID",
            "\"t_a_check\" CHECK (a > 0)",
            "\"under_ten\" CHECK (b < 10)",
        ]
    );
}

/// COPY FROM checks each row, on the general and the parallel file path;
/// a failed COPY loads nothing.
#[test]
fn copy_from_checks_rows() {
    let (d, db) = common::open(512);
    let mut s = db.session();
    run(&mut s, "create table t (a int check (a > 0), b text)");
    let path = d.path().join("rows.txt");
    std::fs::write(&path, "1\tx\n-2\ty\n").unwrap();
    let e = s
        .execute(&format!("copy t from '{}'", path.display()))
        .unwrap_err();
    assert_eq!(e.code.code(), "23514");
    assert_eq!(e.detail.as_deref(), Some("Failing row contains (-2, y)."));
    assert_eq!(common::one_text(&mut s, "select count(*) from t"), "0");
    std::fs::write(&path, "1\tx\n2\t\\N\n").unwrap();
    run(&mut s, &format!("copy t from '{}'", path.display()));
    assert_eq!(common::one_text(&mut s, "select count(*) from t"), "2");
}
