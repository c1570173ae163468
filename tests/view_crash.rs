//! Views across a kill and a restart: a committed CREATE VIEW (and
//! CREATE OR REPLACE, DROP VIEW ... CASCADE) is in the catalog after the
//! process is killed with SIGKILL and the data directory reopened; a view
//! created by a transaction that had not committed when the process died,
//! or that was rolled back, is not. The reopened view is bound afresh
//! against its table and sees the table's recovered rows.

use heapdb::Database;

mod common;
use common::{run, texts};

#[test]
fn committed_views_survive_a_kill_and_uncommitted_ones_do_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "\
SET synchronous_commit = on;
CREATE TABLE vc_t (a int, b text);
INSERT INTO vc_t SELECT g, 'row ' || g FROM generate_series(1, 500) g;
CREATE VIEW vc_even AS SELECT a, b FROM vc_t WHERE a % 2 = 0;
CREATE VIEW vc_count (n) AS SELECT count(*) FROM vc_even;
CREATE VIEW vc_gone AS SELECT a FROM vc_even;
CREATE VIEW vc_replaced AS SELECT a FROM vc_t WHERE a < 10;
CREATE OR REPLACE VIEW vc_replaced AS SELECT a, b FROM vc_t WHERE a < 5;
DROP VIEW vc_gone CASCADE;
BEGIN;
CREATE VIEW vc_rolled_back AS SELECT 1 AS one;
ROLLBACK;
BEGIN;
CREATE VIEW vc_uncommitted AS SELECT a FROM vc_t;
DROP VIEW vc_replaced;
SELECT 'marker' || 'reached';
";
    common::run_then_kill(dir.path(), script, "markerreached");
    let db = Database::open(dir.path()).expect("reopen after the kill");
    let mut s = db.session();
    assert_eq!(texts(&mut s, "SELECT n FROM vc_count"), [["250"]]);
    assert_eq!(
        texts(&mut s, "SELECT count(*), min(a), max(a) FROM vc_even"),
        [["250", "2", "500"]]
    );
    assert_eq!(
        texts(&mut s, "SELECT a, b FROM vc_replaced ORDER BY a"),
        [
            ["1", "row 1"],
            ["2", "row 2"],
            ["3", "row 3"],
            ["4", "row 4"]
        ]
    );
    for gone in ["vc_gone", "vc_rolled_back", "vc_uncommitted"] {
        let e = s.execute(&format!("SELECT * FROM {gone}")).expect_err(gone);
        assert_eq!(e.message, format!("relation \"{gone}\" does not exist"));
    }
    // The dependencies survived too.
    let e = s.execute("DROP TABLE vc_t").expect_err("vc_t has views");
    assert_eq!(
        e.message,
        "cannot drop table vc_t because other objects depend on it"
    );
    assert_eq!(
        e.detail.as_deref(),
        Some(
            "view vc_even depends on table vc_t\n\
             view vc_count depends on view vc_even\n\
             view vc_replaced depends on table vc_t"
        )
    );
    // The uncommitted view's name is free again; the catalog takes changes.
    run(&mut s, "CREATE VIEW vc_uncommitted AS SELECT 2 AS two");
    run(&mut s, "DROP TABLE vc_t CASCADE");
    drop(s);
    drop(db);
    let db = Database::open(dir.path()).expect("reopen");
    let mut s = db.session();
    assert_eq!(texts(&mut s, "SELECT two FROM vc_uncommitted"), [["2"]]);
    assert!(s.execute("SELECT * FROM vc_even").is_err());
}

/// `Database::crash` loses the log's unflushed tail and the pool's dirty
/// pages: a view committed with `synchronous_commit = on` is still there,
/// and reads its table's committed rows.
#[test]
fn a_committed_view_survives_a_simulated_crash() {
    let dir = tempfile::tempdir().expect("temp dir");
    {
        let db = Database::open(dir.path()).expect("open");
        let mut s = db.session();
        run(&mut s, "CREATE TABLE vs_t (a int)");
        run(&mut s, "INSERT INTO vs_t SELECT generate_series(1, 100)");
        run(&mut s, "CREATE VIEW vs_v AS SELECT sum(a) AS s FROM vs_t");
        db.crash();
    }
    let db = Database::open(dir.path()).expect("reopen");
    let mut s = db.session();
    assert_eq!(texts(&mut s, "SELECT s FROM vs_v"), [["5050"]]);
}
