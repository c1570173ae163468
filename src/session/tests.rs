//! End-to-end checks of the session: statements against a real data
//! directory. The broad SQL coverage is in `tests/slt/`; these cover the
//! session's own rules (transactions, restart, streaming).

use super::*;
use crate::types::Value;

fn db() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let s = Settings {
        shared_buffers: 256,
        ..Settings::default()
    };
    let db = Database::open_with(dir.path(), s).unwrap();
    (dir, db)
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
}

#[test]
fn create_insert_select_roundtrip() {
    let (_d, db) = db();
    let mut s = db.session();
    s.execute("create table t (a int not null, b text, c int8 default 7)")
        .unwrap();
    let r = s
        .execute("insert into t (a, b) values (1, 'x'), (2, null), (3, 'z')")
        .unwrap();
    assert_eq!(r.tag, "INSERT 0 3");
    let r = s
        .execute("select a, b, c from t where a >= 2 order by a desc")
        .unwrap();
    assert_eq!(r.tag, "SELECT 2");
    assert_eq!(
        r.rows,
        vec![
            vec![Value::Int4(3), Value::text("z"), Value::Int8(7)],
            vec![Value::Int4(2), Value::Null, Value::Int8(7)]
        ]
    );
    assert_eq!(
        rows(&mut s, "select count(*), sum(a) from t"),
        vec![vec![Value::Int8(3), Value::Int8(6)]]
    );
    let e = s.execute("insert into t values (null, 'n')").unwrap_err();
    assert_eq!(e.code, SqlState::NotNullViolation);
    assert_eq!(
        e.detail.as_deref(),
        Some("Failing row contains (null, n, 7).")
    );
    assert_eq!(
        rows(&mut s, "select count(*) from t"),
        vec![vec![Value::Int8(3)]]
    );
}

#[test]
fn failed_block_and_rollback() {
    let (_d, db) = db();
    let mut s = db.session();
    s.execute("create table t (a int)").unwrap();
    s.execute("begin").unwrap();
    assert_eq!(s.txn_status(), TxnStatus::InBlock);
    s.execute("insert into t values (1)").unwrap();
    assert!(s.execute("select 1/0").is_err());
    assert_eq!(s.txn_status(), TxnStatus::Failed);
    let e = s.execute("select 1").unwrap_err();
    assert_eq!(e.code, SqlState::InFailedSqlTransaction);
    assert_eq!(s.execute("commit").unwrap().tag, "ROLLBACK");
    assert_eq!(
        rows(&mut s, "select count(*) from t"),
        vec![vec![Value::Int8(0)]]
    );
}

#[test]
fn own_changes_and_other_sessions() {
    let (_d, db) = db();
    let mut a = db.session();
    let mut b = db.session();
    a.execute("create table t (a int)").unwrap();
    a.execute("begin").unwrap();
    a.execute("insert into t select * from generate_series(1, 10)")
        .unwrap();
    a.execute("insert into t select * from t").unwrap();
    assert_eq!(
        rows(&mut a, "select count(*) from t"),
        vec![vec![Value::Int8(20)]]
    );
    assert_eq!(
        rows(&mut b, "select count(*) from t"),
        vec![vec![Value::Int8(0)]]
    );
    a.execute("commit").unwrap();
    assert_eq!(
        rows(&mut b, "select count(*) from t"),
        vec![vec![Value::Int8(20)]]
    );
}

#[test]
fn ddl_is_transactional_and_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        let mut s = db.session();
        s.execute("begin; create table gone (a int); rollback")
            .unwrap();
        s.execute("create table kept (a int, b varchar(5))")
            .unwrap();
        s.execute("insert into kept values (1, 'abc'), (2, 'de')")
            .unwrap();
        assert!(s.execute("select * from gone").is_err());
        s.execute("begin; truncate kept; rollback").unwrap();
    }
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    assert_eq!(
        rows(&mut s, "select b from kept order by a"),
        vec![vec![Value::text("abc")], vec![Value::text("de")]]
    );
    let e = s.execute("select * from gone").unwrap_err();
    assert_eq!(e.message, "relation \"gone\" does not exist");
}

#[test]
fn typed_aggregation_matches_sql_rules() {
    // These shapes take the typed fast path of the aggregate operator.
    let (_d, db) = db();
    let mut s = db.session();
    s.execute("create table g (k int, a int, b bigint)")
        .unwrap();
    assert_eq!(
        rows(&mut s, "select count(*), sum(a), count(b) from g"),
        vec![vec![Value::Int8(0), Value::Null, Value::Int8(0)]]
    );
    s.execute("insert into g values (1, 10, 100), (2, null, 200), (1, 5, null), (null, 7, 9223372036854775807), (null, 1, 1)")
        .unwrap();
    let r = rows(
        &mut s,
        "select k, count(*), count(a), sum(a), sum(b) from g group by k order by k",
    );
    let big = crate::types::parse_value(
        "9223372036854775808",
        &crate::types::DataType::Numeric(None),
    )
    .unwrap();
    assert_eq!(
        r,
        vec![
            vec![
                Value::Int4(1),
                Value::Int8(2),
                Value::Int8(2),
                Value::Int8(15),
                crate::types::parse_value("100", &crate::types::DataType::Numeric(None)).unwrap()
            ],
            vec![
                Value::Int4(2),
                Value::Int8(1),
                Value::Int8(0),
                Value::Null,
                crate::types::parse_value("200", &crate::types::DataType::Numeric(None)).unwrap()
            ],
            vec![
                Value::Null,
                Value::Int8(2),
                Value::Int8(2),
                Value::Int8(8),
                big
            ],
        ]
    );
}
