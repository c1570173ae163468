//! The direct paths of single-row `INSERT ... VALUES (literals)` against the
//! general one: every statement runs as a plain one-row INSERT (bound
//! straight from its text when the grammar's scan reads it, else from its
//! tree), once more with a comment after the row (the scan declines it, so
//! the row is bound from the tree), and once with its row written twice
//! (two rows always take the general path). All must give the same error
//! (code, message, detail, position) or store the same row.

use heapdb::Session;

mod common;

const DDL: &str = "CREATE TABLE t (a int2, b int4 NOT NULL, c int8, d numeric(5,2), \
    e char(3), f varchar(4), g text, h bool, i timestamp, j date, k float8); \
    CREATE TABLE u (a int, b int DEFAULT 7, c text DEFAULT 'x')";

/// Row lists for `INSERT INTO <table><cols> VALUES <row>`: (table and
/// column list, the row).
const CASES: &[(&str, &str)] = &[
    ("t", "(1, 2, 3, 4.5, 'ab', 'cd', 'text', true, 'Thu Jan 07 15:15:00 1999 EST', '1999-01-08', 1.5)"),
    ("t", "(NULL, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"),
    ("t", "(1, 2)"),
    ("t", "(1)"),
    ("t", "(NULL, NULL)"),
    ("t", "(99999, 2)"),
    ("t", "(1, 2147483648)"),
    ("t", "(1, '2147483648')"),
    ("t", "(1, 'abc')"),
    ("t", "('12', '34', '56')"),
    ("t", "(1, 2, 9223372036854775808)"),
    ("t", "(1, 2, 3, 123.456)"),
    ("t", "(1, 2, 3, 12345.6)"),
    ("t", "(1, 2, 3, '1e2')"),
    ("t", "(1, 2, 3, 4, 'a')"),
    ("t", "(1, 2, 3, 4, 'abc  ')"),
    ("t", "(1, 2, 3, 4, 'abcd')"),
    ("t", "(1, 2, 3, 4, 'a', 'abcd  ')"),
    ("t", "(1, 2, 3, 4, 'a', 'abcde')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'it''s')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 5)"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', 'yes')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', 1)"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', 'maybe')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, '1999-02-30')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, 'infinity', '-infinity')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, '1999-01-08 04:05:06', 'Jan 8, 1999')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, 'Fri Jan 08 24:00:00 1999', '1999-1-8')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, 'Sat Jan 09 10:00:00 1999 XYZ')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, NULL, NULL, '1e308')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, NULL, NULL, 'NaN')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, NULL, NULL, 7)"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, NULL, NULL, 1.5, 12)"),
    // Two errors in one row: the type mismatch is found first.
    ("t", "('x', 2, 3, 4, 'a', 'b', 'c', 1)"),
    ("t", "(99999, 2, 9223372036854775808)"),
    ("t (b, a)", "(5, 6)"),
    ("t (b, a)", "(99999, 99999)"),
    ("t (a, b)", "(1)"),
    ("t (a)", "(1)"),
    ("t (a, nope)", "(1, 2)"),
    ("t (a, a)", "(1, 2)"),
    ("t (k, b, j)", "('-1.5e3', -0, '2000-02-29')"),
    ("u", "(1)"),
    ("u", "(1, 2, 'y')"),
    ("u (a, b, c)", "(1, NULL, NULL)"),
    ("u (c)", "('z')"),
    ("nope", "(1)"),
    // Pairs the scanned binding reads itself, at their edges.
    ("t", "(32767, 2147483647, 9223372036854775807)"),
    ("t", "(32768, 2)"),
    ("t", "(1, 2147483648)"),
    ("t", "(007, 0, 00000000000000000000001)"),
    ("t", "(1.5, 2.5, 3.5)"),
    ("t", "(true, 2)"),
    ("t", "(1, 2, 3, 4, 'é')"),
    ("t", "(1, 2, 3, 4, 'éé ')"),
    ("t", "(1, 2, 3, 4, 'éééé')"),
    ("t", "(1, 2, 3, 4, 'a''b', 'ab''c', '''')"),
    ("t", "(1, 2, 3, 4, '', '', '')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, 'epoch', 'epoch')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, 'Thu Jan 07 15:15:00 1999 PST')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, '1999-01-08 04:05:06.789')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, 'Thu Jan 07 25:15:00 1999 EST')"),
    ("t", "(1, 2, 3, 4, 'a', 'b', 'c', false, NULL, NULL, 1e3)"),
    ("T", "(1, 2)"),
    ("\"T\"", "(1, 2)"),
    ("u", "(1, 2, 'y', 4)"),
    ("u", "()"),
];

fn open(dir: &std::path::Path) -> Session {
    let db = common::open_at(dir, 256);
    let mut s = db.session();
    s.execute(DDL).unwrap();
    s
}

type Outcome = Result<String, (String, String, Option<String>, Option<usize>)>;

fn run(s: &mut Session, sql: &str) -> Outcome {
    s.execute(sql)
        .map(|r| r.tag)
        .map_err(|e| (format!("{:?}", e.code), e.message, e.detail, e.position))
}

fn rows(s: &mut Session, table: &str) -> Vec<String> {
    s.execute(&format!("SELECT * FROM {table}"))
        .unwrap()
        .rows
        .iter()
        .map(|r| format!("{r:?}"))
        .collect()
}

#[test]
fn one_literal_row_inserts_as_the_general_path_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut one = open(&dir.path().join("one"));
    let mut tree = open(&dir.path().join("tree"));
    let mut two = open(&dir.path().join("two"));
    for (target, row) in CASES {
        let single = format!("INSERT INTO {target} VALUES {row}");
        // The comment comes after the row: the literals keep their offsets.
        let commented = format!("INSERT INTO {target} VALUES {row} /* tree */");
        let double = format!("INSERT INTO {target} VALUES {row}, {row}");
        let a = run(&mut one, &single);
        let c = run(&mut tree, &commented);
        let b = run(&mut two, &double);
        match (&a, &b) {
            (Ok(ta), Ok(tb)) => {
                assert_eq!(ta, "INSERT 0 1", "{single}");
                assert_eq!(tb, "INSERT 0 2", "{double}");
            }
            (Err(ea), Err(eb)) => assert_eq!(ea, eb, "{single}"),
            _ => panic!("{single}: {a:?} but {double}: {b:?}"),
        }
        assert_eq!(a, c, "{single} vs {commented}");
    }
    for table in ["t", "u"] {
        let a = rows(&mut one, table);
        let c = rows(&mut tree, table);
        let b = rows(&mut two, table);
        let doubled: Vec<String> = a.iter().flat_map(|r| [r.clone(), r.clone()]).collect();
        assert_eq!(doubled, b, "table {table}");
        assert_eq!(a, c, "table {table}");
        assert!(!a.is_empty());
    }
}

/// Inside a transaction block the direct path writes under the block's
/// xid: ROLLBACK removes the rows, a failed INSERT aborts the block.
#[test]
fn direct_inserts_follow_the_transaction_block() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = open(dir.path());
    s.execute("BEGIN").unwrap();
    s.execute("INSERT INTO t VALUES (1, 2)").unwrap();
    s.execute("INSERT INTO t VALUES (1, 3)").unwrap();
    assert_eq!(rows(&mut s, "t").len(), 2);
    s.execute("ROLLBACK").unwrap();
    assert!(rows(&mut s, "t").is_empty());
    s.execute("BEGIN").unwrap();
    s.execute("INSERT INTO t VALUES (1, 2)").unwrap();
    assert!(s.execute("INSERT INTO t VALUES (1, NULL)").is_err());
    let e = s.execute("INSERT INTO t VALUES (1, 4)").unwrap_err();
    assert!(e.message.starts_with("current transaction is aborted"));
    s.execute("COMMIT").unwrap();
    assert!(rows(&mut s, "t").is_empty());
    // A dropped and recreated table of the same name gets new columns.
    s.execute("INSERT INTO t VALUES (1, 2)").unwrap();
    s.execute("DROP TABLE t").unwrap();
    s.execute("CREATE TABLE t (x text NOT NULL, y char(2))")
        .unwrap();
    s.execute("INSERT INTO t VALUES ('a', 'b')").unwrap();
    assert_eq!(
        s.execute("SELECT x || y || '|' FROM t").unwrap().rows[0][0].to_string(),
        "ab|"
    );
}

/// An INSERT whose row and target list differ in length points where
/// PostgreSQL does: at the first target column without a value, or at the
/// first value without a column.
#[test]
fn count_mismatches_point_where_postgresql_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = open(dir.path());
    let cases = [
        ("INSERT INTO u (a, b, c) VALUES (1, 2)", "c)"),
        ("INSERT INTO u (a, b, c) VALUES (DEFAULT, DEFAULT)", "c)"),
        ("INSERT INTO u (a, b) SELECT 1", "b)"),
        ("INSERT INTO u (a) VALUES (1, 2)", "2)"),
        ("INSERT INTO u (a) VALUES (DEFAULT, DEFAULT)", "DEFAULT)"),
        ("INSERT INTO u (a) VALUES (1, 2 + 3)", "2 + 3"),
    ];
    for (sql, at) in cases {
        let e = s.execute(sql).unwrap_err();
        assert_eq!(e.position, sql.rfind(at), "{sql}: {}", e.message);
    }
}
