//! Temporary tables across sessions and processes: a session's temporary
//! table is invisible to every other session and shadows a permanent table
//! of the same name for its own session only; ending the session drops it
//! (catalog entry and files); a process killed with a temporary table
//! leaves nothing behind once the database opens again, even if that open
//! is itself cut short by a crash, and the permanent data is intact.

use std::collections::BTreeSet;
use std::path::Path;

use heapdb::SqlState;

mod common;

/// The files under `dir/base`, by name.
fn base_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir.join("base"))
        .expect("base directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect()
}

/// The `table` lines of the catalog file of live temporary tables: no
/// `xmax` (the fifth field), a temporary namespace (a seventh).
fn temp_catalog_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("catalog"))
        .expect("catalog file")
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            f[0] == "table" && f.len() > 6 && f[4] == "0"
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn a_temporary_table_is_private_shadows_and_goes_with_its_session() {
    let (dir, db) = common::open(256);
    let mut s1 = db.session();
    let mut s2 = db.session();
    common::run(&mut s1, "create table t (a int)");
    common::run(&mut s1, "insert into t values (1), (2)");
    let before = base_files(dir.path());

    common::run(&mut s1, "create temp table t (b text primary key)");
    common::run(&mut s1, "insert into t values ('mine')");
    common::run(&mut s1, "create temp table only_mine (x int)");
    assert_eq!(common::texts(&mut s1, "select * from t"), [["mine"]]);
    // The other session sees the permanent table, not the temporary one.
    assert_eq!(
        common::texts(&mut s2, "select a from t order by a"),
        [["1"], ["2"]]
    );
    let e = s2.execute("select * from only_mine").unwrap_err();
    assert_eq!(e.code, SqlState::UndefinedTable);
    // Its own temporary table of the same name is its own.
    common::run(&mut s2, "create temp table t (c int)");
    common::run(&mut s2, "insert into t values (42)");
    assert_eq!(common::texts(&mut s2, "select * from t"), [["42"]]);
    assert_eq!(common::texts(&mut s1, "select * from t"), [["mine"]]);
    assert_eq!(
        common::texts(&mut s1, "select a from public.t order by a"),
        [["1"], ["2"]]
    );
    // Both sessions' tables are in the catalog file (a crash must find them).
    assert_eq!(temp_catalog_lines(dir.path()).len(), 3);

    // Ending s1 drops its tables, entries and files; s2's stay.
    drop(s1);
    assert_eq!(temp_catalog_lines(dir.path()).len(), 1);
    assert_eq!(common::texts(&mut s2, "select * from t"), [["42"]]);
    drop(s2);
    assert!(temp_catalog_lines(dir.path()).is_empty());
    assert_eq!(base_files(dir.path()), before);

    // A new session sees none of them, and the permanent rows are intact.
    let mut s3 = db.session();
    let e = s3.execute("select * from only_mine").unwrap_err();
    assert_eq!(e.code, SqlState::UndefinedTable);
    assert_eq!(
        common::texts(&mut s3, "select a from t order by a"),
        [["1"], ["2"]]
    );
}

/// A session dropped inside a transaction block that created a temporary
/// table: the block is rolled back, and nothing is left.
#[test]
fn a_session_ended_in_a_block_leaves_nothing() {
    let (dir, db) = common::open(256);
    let before = base_files(dir.path());
    let mut s = db.session();
    common::run(&mut s, "create temp table kept (a int)");
    common::run(&mut s, "begin");
    common::run(&mut s, "create temp table inside (a int)");
    common::run(&mut s, "insert into kept values (1)");
    drop(s);
    assert!(temp_catalog_lines(dir.path()).is_empty());
    assert_eq!(base_files(dir.path()), before);
}

/// A shell killed (SIGKILL) while it holds temporary tables, one of them
/// shadowing a permanent table: the next open drops them, files and
/// catalog entries, and a crash during that open's aftermath changes
/// nothing.
#[test]
fn a_killed_shell_leaves_no_temporary_table() {
    let base = tempfile::tempdir().expect("temp dir");
    let dir = base.path().join("db");
    let mut child = common::shell_command(&dir, &["-X"])
        .spawn()
        .expect("start heapdb");
    let mut stdin = child.stdin.take().expect("stdin");
    use std::io::Write;
    stdin
        .write_all(
            b"create table p (a int primary key);\n\
              insert into p select generate_series(1, 100);\n\
              create temp table tt (a int primary key, b text);\n\
              insert into tt select g, 'x' from generate_series(1, 2000) g;\n\
              create temp table p (shadow int);\n\
              insert into p values (-1);\n\
              select 'ready' as state;\n",
        )
        .expect("write the script");
    let lines = common::Lines::of(&mut child);
    assert!(
        lines.until(|l| l.trim() == "ready"),
        "the shell never got ready"
    );
    // The temporary tables' files exist and are named in the catalog.
    assert!(!temp_catalog_lines(&dir).is_empty());
    let with_temp = base_files(&dir);
    common::kill9(child);
    drop(stdin);

    // Reopened: recovery, then the dead process's temporary tables dropped.
    let db = common::open_at(&dir, 256);
    {
        let mut s = db.session();
        let e = s.execute("select * from tt").unwrap_err();
        assert_eq!(e.code, SqlState::UndefinedTable);
        assert_eq!(
            common::texts(&mut s, "select count(*), sum(a) from p"),
            [["100", "5050"]]
        );
        common::run(&mut s, "create temp table tt (z int)");
        common::run(&mut s, "insert into tt values (1)");
    }
    assert!(temp_catalog_lines(&dir).is_empty());
    let after = base_files(&dir);
    assert!(
        after.len() < with_temp.len(),
        "files left: {after:?} (with the temporary tables: {with_temp:?})"
    );
    // Only the permanent table's files (heap, its map, its index) remain:
    // every one of them existed before the kill.
    assert!(after.is_subset(&with_temp), "{after:?} vs {with_temp:?}");
    // A crash right after that open: redo replays the drop, and the next
    // open finds nothing to do.
    db.crash();
    let db = common::open_at(&dir, 256);
    let mut s = db.session();
    assert_eq!(
        common::texts(&mut s, "select count(*) from p where a > 50"),
        [["50"]]
    );
    let e = s.execute("select * from tt").unwrap_err();
    assert_eq!(e.code, SqlState::UndefinedTable);
    drop(s);
    assert!(base_files(&dir).is_subset(&with_temp));
    assert!(temp_catalog_lines(&dir).is_empty());
}

/// A SELECT shape planned from a template over the permanent table reads
/// the temporary table once one shadows it, and the permanent one again
/// once the temporary one is dropped (the plan cache checks which table
/// the name finds).
#[test]
fn a_cached_plan_follows_the_shadowing_table() {
    let (_dir, db) = common::open(256);
    let mut s = db.session();
    common::run(&mut s, "create table t (a int)");
    common::run(&mut s, "insert into t values (1), (2)");
    for a in [1, 2, 1, 2] {
        assert_eq!(
            common::texts(&mut s, &format!("select a from t where a = {a}")),
            [[a.to_string()]]
        );
    }
    common::run(&mut s, "create temp table t (a int)");
    common::run(&mut s, "insert into t values (2)");
    assert!(common::texts(&mut s, "select a from t where a = 1").is_empty());
    assert_eq!(
        common::texts(&mut s, "select a from t where a = 2"),
        [["2"]]
    );
    common::run(&mut s, "drop table t");
    assert_eq!(
        common::texts(&mut s, "select a from t where a = 1"),
        [["1"]]
    );
}
