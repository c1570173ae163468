//! Domains across a kill and a restart, and COPY FROM into domain columns.
//!
//! A committed CREATE DOMAIN (and DROP DOMAIN) is in the catalog after the
//! process is killed with SIGKILL and the data directory reopened, and a
//! table's domain column still checks its values; a domain created by a
//! transaction that had not committed, or that rolled back, is gone. COPY
//! FROM checks each value of a domain column (and fills a column left out
//! from the domain's DEFAULT) with PostgreSQL's errors and CONTEXT lines.

use heapdb::Database;

mod common;
use common::texts;

#[test]
fn committed_domains_survive_a_kill_and_uncommitted_ones_do_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "\
SET synchronous_commit = on;
CREATE DOMAIN dk_pos AS int DEFAULT 7 CHECK (VALUE > 0);
CREATE DOMAIN dk_name AS varchar(4) NOT NULL CONSTRAINT dk_nonempty CHECK (length(VALUE) > 0);
CREATE TABLE dk_t (id int, p dk_pos, n dk_name);
INSERT INTO dk_t VALUES (1, 5, 'ab');
CREATE DOMAIN dk_dropped AS int;
DROP DOMAIN dk_dropped;
BEGIN;
CREATE DOMAIN dk_rolled_back AS int;
ROLLBACK;
BEGIN;
CREATE DOMAIN dk_uncommitted AS int;
DROP TABLE dk_t;
SELECT 'marker' || 'reached';
";
    common::run_then_kill(dir.path(), script, "markerreached");
    let db = Database::open(dir.path()).expect("reopen after the kill");
    let mut s = db.session();
    assert_eq!(
        texts(&mut s, "SELECT 3::dk_pos, 'xy'::dk_name"),
        [["3", "xy"]]
    );
    let e = s
        .execute("INSERT INTO dk_t VALUES (2, -1, 'a')")
        .expect_err("check");
    assert_eq!(
        (e.code.code(), e.message.as_str()),
        (
            "23514",
            "value for domain dk_pos violates check constraint \"dk_pos_check\""
        )
    );
    let e = s
        .execute("INSERT INTO dk_t VALUES (2, 1, '')")
        .expect_err("check");
    assert_eq!(
        e.message,
        "value for domain dk_name violates check constraint \"dk_nonempty\""
    );
    let e = s
        .execute("INSERT INTO dk_t (id) VALUES (2)")
        .expect_err("not null");
    assert_eq!(
        (e.code.code(), e.message.as_str()),
        ("23502", "domain dk_name does not allow null values")
    );
    s.execute("INSERT INTO dk_t (id, n) VALUES (2, 'c')")
        .unwrap();
    assert_eq!(
        texts(&mut s, "SELECT id, p, n FROM dk_t ORDER BY id"),
        [["1", "5", "ab"], ["2", "7", "c"]]
    );
    for gone in ["dk_dropped", "dk_rolled_back", "dk_uncommitted"] {
        let e = s.execute(&format!("SELECT 1::{gone}")).expect_err(gone);
        assert_eq!(e.message, format!("type \"{gone}\" does not exist"));
    }
    // A second reopen (the catalog file rewritten clean) keeps them.
    drop(s);
    drop(db);
    let db = Database::open(dir.path()).expect("second reopen");
    let mut s = db.session();
    let e = s.execute("DROP DOMAIN dk_pos").expect_err("in use");
    assert_eq!(e.code.code(), "2BP01");
    assert_eq!(
        e.detail.as_deref(),
        Some("column p of table dk_t depends on type dk_pos")
    );
    s.execute("DROP TABLE dk_t").unwrap();
    s.execute("DROP DOMAIN dk_pos, dk_name").unwrap();
}

#[test]
fn copy_from_checks_domain_columns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Database::open(dir.path()).expect("open");
    let mut s = db.session();
    s.execute("CREATE DOMAIN cd AS int CHECK (VALUE > 0)")
        .unwrap();
    s.execute("CREATE DOMAIN cn AS text NOT NULL DEFAULT 'dflt'")
        .unwrap();
    s.execute("CREATE TABLE ct (a cd, b cn)").unwrap();
    let e = s
        .copy_in("COPY ct FROM STDIN", &mut &b"1\tx\n-5\ty\n"[..])
        .expect_err("check");
    assert_eq!(
        (e.code.code(), e.message.as_str()),
        (
            "23514",
            "value for domain cd violates check constraint \"cd_check\""
        )
    );
    assert_eq!(
        e.context.as_deref(),
        Some("COPY ct, line 2, column a: \"-5\"")
    );
    let e = s
        .copy_in("COPY ct FROM STDIN", &mut &b"3\t\\N\n"[..])
        .expect_err("not null");
    assert_eq!(
        (e.code.code(), e.message.as_str()),
        ("23502", "domain cn does not allow null values")
    );
    assert_eq!(
        e.context.as_deref(),
        Some("COPY ct, line 1, column b: null input")
    );
    s.copy_in("COPY ct (a) FROM STDIN", &mut &b"7\n"[..])
        .unwrap();
    s.copy_in("COPY ct FROM STDIN (FORMAT csv)", &mut &b"8,y\n9,z\n"[..])
        .unwrap();
    assert_eq!(
        texts(&mut s, "SELECT a, b FROM ct ORDER BY a"),
        [["7", "dflt"], ["8", "y"], ["9", "z"]]
    );
}

#[test]
fn domain_functions_and_operators_survive_a_kill() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "\
SET synchronous_commit = on;
CREATE DOMAIN ok_pos AS int CHECK (VALUE > 0);
CREATE FUNCTION ok_ret(int) RETURNS ok_pos AS 'select $1' LANGUAGE sql;
CREATE FUNCTION ok_ib(ok_pos, bool) RETURNS text AS 'select $1::text || $2::text' LANGUAGE sql;
CREATE OPERATOR = (procedure = ok_ib, leftarg = ok_pos, rightarg = bool);
CREATE OPERATOR ==== (procedure = ok_ib, leftarg = int, rightarg = bool);
DROP OPERATOR ==== (int, bool);
BEGIN;
CREATE OPERATOR < (procedure = ok_ib, leftarg = int, rightarg = bool);
ROLLBACK;
BEGIN;
CREATE OPERATOR > (procedure = ok_ib, leftarg = int, rightarg = bool);
SELECT 'marker' || 'reached';
";
    common::run_then_kill(dir.path(), script, "markerreached");
    for round in 0..2 {
        let db = Database::open(dir.path()).expect("reopen");
        let mut s = db.session();
        assert_eq!(
            texts(&mut s, "SELECT ok_ret(4), 2 = true"),
            [["4", "2true"]]
        );
        let e = s.execute("SELECT ok_ret(-4)").expect_err("result check");
        assert_eq!(e.code.code(), "23514");
        let e = s.execute("SELECT -2 = true").expect_err("argument check");
        assert_eq!(e.code.code(), "23514");
        for gone in ["<", ">"] {
            let e = s.execute(&format!("SELECT 1 {gone} true")).expect_err(gone);
            assert_eq!(e.code.code(), "42883", "{gone} in round {round}");
        }
        let e = s
            .execute("DROP OPERATOR ==== (int, bool)")
            .expect_err("dropped");
        assert_eq!(e.message, "operator does not exist: integer ==== boolean");
    }
}
