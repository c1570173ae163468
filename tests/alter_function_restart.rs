//! ALTER FUNCTION across a kill and a restart: a committed change of a
//! function's strictness or name is in the catalog after the
//! process is killed with SIGKILL and the data directory reopened; one
//! rolled back or not committed is not.

use heapdb::Database;

mod common;
use common::texts;

#[test]
fn committed_alter_function_survives_a_kill() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "\
SET synchronous_commit = on;
CREATE FUNCTION af_inc(int) RETURNS int LANGUAGE sql STRICT AS 'select coalesce($1, 0) + 1';
CREATE FUNCTION af_old(int) RETURNS int LANGUAGE sql AS 'select $1 * 2';
CREATE FUNCTION af_kept(int) RETURNS int LANGUAGE sql STRICT AS 'select coalesce($1, 0) + 5';
ALTER FUNCTION af_inc(int) CALLED ON NULL INPUT;
ALTER FUNCTION af_old(int) RENAME TO af_new;
BEGIN;
ALTER FUNCTION af_kept(int) CALLED ON NULL INPUT;
ROLLBACK;
BEGIN;
ALTER FUNCTION af_new(int) RENAME TO af_uncommitted;
ALTER FUNCTION af_inc(int) STRICT;
SELECT 'marker' || 'reached';
";
    common::run_then_kill(dir.path(), script, "markerreached");
    for reopen in ["after the kill", "a second time"] {
        let db = Database::open(dir.path()).expect(reopen);
        let mut s = db.session();
        assert_eq!(
            texts(
                &mut s,
                "SELECT af_inc(null), af_new(21), af_kept(null) IS NULL"
            ),
            [["1", "42", "t"]],
            "{reopen}"
        );
        for gone in ["af_old(1)", "af_uncommitted(1)"] {
            let e = s.execute(&format!("SELECT {gone}")).expect_err(gone);
            assert_eq!(
                e.message,
                format!("function {} does not exist", gone.replace('1', "integer"))
            );
        }
    }
}
