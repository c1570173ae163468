//! Base types, internal functions and casts across a kill and a restart.
//!
//! A committed CREATE TYPE, CREATE FUNCTION ... LANGUAGE internal and
//! CREATE CAST are in the catalog after the process is killed with SIGKILL
//! and the data directory reopened (DROP TYPE ... CASCADE then lists them
//! all); those of a transaction that rolled back or had not committed are
//! gone.

use heapdb::Database;

mod common;

#[test]
fn committed_base_types_survive_a_kill_and_uncommitted_ones_do_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "\
SET synchronous_commit = on;
CREATE TYPE xf8;
CREATE FUNCTION xf8in(cstring) RETURNS xf8 IMMUTABLE STRICT LANGUAGE internal AS 'int8in';
CREATE FUNCTION xf8out(xf8) RETURNS cstring IMMUTABLE STRICT LANGUAGE internal AS 'int8out';
CREATE TYPE xf8 (input = xf8in, output = xf8out, like = float8);
CREATE CAST (xf8 AS float8) WITHOUT FUNCTION;
CREATE CAST (bigint AS xf8) WITHOUT FUNCTION;
CREATE CAST (xf8 AS bigint) WITHOUT FUNCTION;
DROP CAST (xf8 AS bigint);
BEGIN;
CREATE TYPE rolled_back;
ROLLBACK;
BEGIN;
CREATE TYPE uncommitted;
CREATE CAST (float8 AS xf8) WITHOUT FUNCTION;
SELECT 'marker' || 'reached';
";
    common::run_then_kill(dir.path(), script, "markerreached");
    let db = Database::open(dir.path()).expect("reopen after the kill");
    let mut s = db.session();
    for gone in ["rolled_back", "uncommitted"] {
        let e = s.execute(&format!("DROP TYPE {gone}")).expect_err(gone);
        assert_eq!(e.message, format!("type \"{gone}\" does not exist"));
    }
    let e = s.execute("CREATE TYPE xf8").expect_err("exists");
    assert_eq!(
        (e.code.code(), e.message.as_str()),
        ("42710", "type \"xf8\" already exists")
    );
    drop(s);
    drop(db);
    let db = Database::open(dir.path()).expect("second reopen");
    let mut s = db.session();
    let e = s.execute("DROP TYPE xf8").expect_err("in use");
    assert_eq!(e.code.code(), "2BP01");
    assert_eq!(
        e.detail.as_deref(),
        Some(
            "function xf8in(cstring) depends on type xf8\n\
             function xf8out(xf8) depends on type xf8\n\
             cast from xf8 to double precision depends on type xf8\n\
             cast from bigint to xf8 depends on type xf8"
        )
    );
    s.execute("DROP TYPE xf8 CASCADE").unwrap();
    let e = s.execute("DROP TYPE xf8").expect_err("gone");
    assert_eq!(e.message, "type \"xf8\" does not exist");
}
