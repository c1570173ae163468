//! Descriptions (`COMMENT ON`) across a kill and a restart: one set by a
//! committed transaction is in the catalog after the process is killed
//! with SIGKILL and the data directory reopened, for every kind of object;
//! one set by a transaction that was rolled back, or that had not
//! committed when the process died, is not; a description removed by a
//! committed `IS NULL` stays removed. And what the shell's `\d+` and
//! `\dt+` show of them.

use heapdb::catalog::CatalogView;
use heapdb::Database;

mod common;
use common::run;

const SCRIPT: &str = "\
SET synchronous_commit = on;
CREATE TABLE cc_t (a int PRIMARY KEY, b int CONSTRAINT cc_b_pos CHECK (b > 0), c int);
CREATE TABLE cc_child (x int CONSTRAINT cc_fk REFERENCES cc_t (a));
CREATE INDEX cc_c_idx ON cc_t (c);
CREATE VIEW cc_v AS SELECT a, b FROM cc_t;
CREATE SEQUENCE cc_s;
CREATE DOMAIN cc_d AS int CONSTRAINT cc_d_pos CHECK (VALUE > 0);
CREATE FUNCTION cc_f(int) RETURNS int LANGUAGE sql AS 'SELECT $1';
CREATE FUNCTION cc_eq(int, int) RETURNS bool LANGUAGE sql AS 'SELECT $1 = $2';
CREATE OPERATOR === (LEFTARG = int, RIGHTARG = int, FUNCTION = cc_eq);
COMMENT ON TABLE cc_t IS 'the table';
COMMENT ON COLUMN cc_t.a IS 'column a';
COMMENT ON COLUMN cc_t.c IS 'to be removed';
COMMENT ON COLUMN cc_t.c IS NULL;
COMMENT ON INDEX cc_c_idx IS 'the index';
COMMENT ON CONSTRAINT cc_t_pkey ON cc_t IS 'the key';
COMMENT ON CONSTRAINT cc_b_pos ON cc_t IS 'the check';
COMMENT ON CONSTRAINT cc_fk ON cc_child IS 'the foreign key';
COMMENT ON VIEW cc_v IS 'the view';
COMMENT ON COLUMN cc_v.b IS 'view column b';
COMMENT ON SEQUENCE cc_s IS 'the sequence';
COMMENT ON DOMAIN cc_d IS 'the domain';
COMMENT ON CONSTRAINT cc_d_pos ON DOMAIN cc_d IS 'the domain check';
COMMENT ON FUNCTION cc_f(int) IS 'the function';
COMMENT ON OPERATOR === (int, int) IS 'the operator';
BEGIN;
COMMENT ON TABLE cc_t IS 'rolled back';
COMMENT ON COLUMN cc_t.b IS 'rolled back';
ROLLBACK;
BEGIN;
COMMENT ON COLUMN cc_t.b IS 'never committed';
COMMENT ON FUNCTION cc_f(int) IS 'never committed';
SELECT 'marker' || 'reached';
";

#[test]
fn committed_descriptions_survive_a_kill_and_others_do_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    common::run_then_kill(dir.path(), SCRIPT, "markerreached");
    let db = Database::open(dir.path()).expect("reopen after the kill");
    check(&db);
    // The file written after recovery reads back the same.
    let mut s = db.session();
    run(&mut s, "CREATE TABLE cc_other (z int)");
    drop(s);
    drop(db);
    let db = Database::open(dir.path()).expect("reopen");
    check(&db);
    // A description goes with its object.
    let mut s = db.session();
    run(&mut s, "DROP TABLE cc_child");
    run(
        &mut s,
        "CREATE TABLE cc_child (x int CONSTRAINT cc_fk REFERENCES cc_t (a))",
    );
    run(&mut s, "ALTER TABLE cc_t RENAME TO cc_renamed");
    drop(s);
    let snap = db.txns.snapshot(heapdb::txn::INVALID_XID, 0);
    let view = CatalogView {
        snapshot: &snap,
        txns: &db.txns,
        temp_ns: 0,
    };
    let t = db
        .catalog
        .lookup(&view, "cc_renamed")
        .expect("renamed table");
    assert_eq!(t.comment.as_deref(), Some("the table"));
    let child = db.catalog.lookup(&view, "cc_child").expect("new child");
    let (fks, _) = db.catalog.foreign_keys_of(&view, child.oid);
    assert_eq!(fks[0].comment, None);
}

fn check(db: &Database) {
    let snap = db.txns.snapshot(heapdb::txn::INVALID_XID, 0);
    let view = CatalogView {
        snapshot: &snap,
        txns: &db.txns,
        temp_ns: 0,
    };
    let cat = &db.catalog;
    let t = cat.lookup(&view, "cc_t").expect("cc_t");
    assert_eq!(t.comment.as_deref(), Some("the table"));
    let cols: Vec<Option<&str>> = t.columns.iter().map(|c| c.comment.as_deref()).collect();
    assert_eq!(cols, [Some("column a"), None, None]);
    let ix = |name: &str| t.indexes.iter().find(|i| i.name == name).expect(name);
    assert_eq!(ix("cc_c_idx").comment.as_deref(), Some("the index"));
    assert_eq!(ix("cc_t_pkey").comment, None);
    assert_eq!(
        ix("cc_t_pkey").constraint_comment.as_deref(),
        Some("the key")
    );
    assert_eq!(t.checks[0].comment.as_deref(), Some("the check"));
    let child = cat.lookup(&view, "cc_child").expect("cc_child");
    let (fks, _) = cat.foreign_keys_of(&view, child.oid);
    assert_eq!(fks[0].comment.as_deref(), Some("the foreign key"));
    let v = cat.lookup_view(&view, "cc_v").expect("cc_v");
    assert_eq!(v.comment.as_deref(), Some("the view"));
    assert_eq!(v.columns[0].comment, None);
    assert_eq!(v.columns[1].comment.as_deref(), Some("view column b"));
    let s = cat.lookup_sequence(&view, "cc_s").expect("cc_s");
    assert_eq!(s.comment.as_deref(), Some("the sequence"));
    let d = cat.lookup_domain(&view, "cc_d").expect("cc_d");
    assert_eq!(d.comment.as_deref(), Some("the domain"));
    assert_eq!(d.checks[0].comment.as_deref(), Some("the domain check"));
    let f = cat.lookup_functions(&view, "cc_f");
    assert_eq!(f[0].comment.as_deref(), Some("the function"));
    let o = cat.lookup_operators(&view, "===");
    assert_eq!(o[0].comment.as_deref(), Some("the operator"));
}

/// `\d+ TABLE` and `\d+ VIEW` show the columns' descriptions, `\dt+`
/// the table's, as psql's Description columns.
#[test]
fn the_shell_shows_descriptions() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "\
CREATE TABLE sd_t (a int, b text);
COMMENT ON TABLE sd_t IS 'the table';
COMMENT ON COLUMN sd_t.b IS 'Column ''b''';
CREATE VIEW sd_v AS SELECT a FROM sd_t;
COMMENT ON COLUMN sd_v.a IS 'view a';
\\d+ sd_t
\\dt+
\\d+ sd_v
";
    let (out, err, status) = common::output_texts(common::shell(dir.path(), &[], script));
    assert_eq!((status, err.as_str()), (0, ""), "{out}");
    let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
    for want in [
        " a      | integer |           |          |         | plain    |             |              |",
        " b      | text    |           |          |         | extended |             |              | Column 'b'",
        " sd_t | table |                  |     0 | 0 bytes |                 0 | the table",
        " a      | integer |           |          |         | plain   | view a",
    ] {
        assert!(lines.contains(&want), "no line {want:?} in\n{out}");
    }
}
