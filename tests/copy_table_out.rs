//! COPY of a table TO (formatted straight from the heap pages, on a
//! scanner thread) writes exactly what COPY of the same rows as a query
//! writes, over many output buffers, seeing only the rows its snapshot
//! sees; a failing writer stops it with an error.

use std::io::Write;

use heapdb::Database;

fn setup() -> (tempfile::TempDir, heapdb::Session) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path().join("db")).unwrap();
    let mut s = db.session();
    s.execute(
        "CREATE TABLE t (a int, b bigint, c smallint, d text, e char(6), f numeric, g date, h varchar(10))",
    )
    .unwrap();
    s.execute(
        "INSERT INTO t SELECT i, i::bigint * 1000000007, (i % 30000) - 15000, \
         CASE WHEN i % 7 = 0 THEN NULL WHEN i % 11 = 0 THEN 'tab\there\\back' ELSE 'row ' || i END, \
         CASE WHEN i % 5 = 0 THEN NULL ELSE 'x' || (i % 100) END, \
         i / 7.0, date '2000-01-01' + (i % 5000), 'v,\"' || (i % 13) \
         FROM generate_series(1, 60000) AS i",
    )
    .unwrap();
    s.execute("DELETE FROM t WHERE a % 9 = 4").unwrap();
    (dir, s)
}

fn scalar(s: &mut heapdb::Session, sql: &str) -> String {
    s.execute(sql).unwrap().rows[0][0].to_string()
}

fn out(s: &mut heapdb::Session, sql: &str) -> (Vec<u8>, String) {
    let mut got = Vec::new();
    let r = s
        .copy_out(sql, &mut got)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    (got, r.tag)
}

#[test]
fn table_copy_matches_the_query_copy_in_both_formats() {
    let (_dir, mut s) = setup();
    let n = scalar(&mut s, "SELECT count(*) FROM t");
    for opts in [
        "",
        "WITH (HEADER)",
        "WITH (DELIMITER '|', NULL 'NIL')",
        "CSV",
        "CSV HEADER",
        "WITH (FORMAT csv, FORCE_QUOTE (h, a))",
        "WITH (FORMAT csv, DELIMITER '1', QUOTE '-')",
    ] {
        let (table, tag) = out(&mut s, &format!("COPY t TO STDOUT {opts}"));
        let (query, _) = out(&mut s, &format!("COPY (SELECT * FROM t) TO STDOUT {opts}"));
        assert!(
            table.len() > 3 << 20,
            "several output buffers: {}",
            table.len()
        );
        assert_eq!(tag, format!("COPY {n}"), "{opts}");
        assert!(
            table == query,
            "COPY t and COPY (SELECT * FROM t) differ with {opts:?}"
        );
        let cols = "COPY t (h, a, e) TO STDOUT";
        let (table, _) = out(&mut s, &format!("{cols} {opts}"));
        let (query, _) = out(
            &mut s,
            &format!("COPY (SELECT h, a, e FROM t) TO STDOUT {opts}"),
        );
        assert!(table == query, "column list with {opts:?}");
    }
}

#[test]
fn table_copy_sees_its_snapshot_only() {
    let (_dir, mut s) = setup();
    s.execute("BEGIN").unwrap();
    s.execute("DELETE FROM t WHERE a > 100").unwrap();
    s.execute("INSERT INTO t (a) VALUES (-1)").unwrap();
    let (mine, tag) = out(&mut s, "COPY t (a) TO STDOUT");
    let want: Vec<u8> = (1..=100)
        .filter(|a| a % 9 != 4)
        .map(|a| format!("{a}\n"))
        .chain(["-1\n".to_string()])
        .collect::<String>()
        .into_bytes();
    assert_eq!(
        String::from_utf8_lossy(&mine),
        String::from_utf8_lossy(&want)
    );
    assert_eq!(tag, format!("COPY {}", 100 - 11 + 1));
    s.execute("ROLLBACK").unwrap();
}

/// A writer that fails after `left` bytes.
struct Failing {
    left: usize,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() > self.left {
            return Err(std::io::Error::other("disk full"));
        }
        self.left -= buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_writer_stops_the_copy_with_an_error() {
    let (_dir, mut s) = setup();
    let mut w = Failing { left: 2 << 20 };
    let e = s.copy_out("COPY t TO STDOUT", &mut w).unwrap_err();
    assert_eq!(e.message, "could not write to COPY file: disk full");
    // The session goes on.
    assert_eq!(scalar(&mut s, "SELECT count(*) FROM t WHERE a = 1"), "1");
}

#[test]
fn copy_to_an_existing_file_leaves_exactly_the_new_rows() {
    let (dir, mut s) = setup();
    let path = dir.path().join("out.tsv");
    let sql = |what: &str| format!("COPY {what} TO '{}'", path.display());
    // An older, longer file: written over and cut to the new length.
    std::fs::write(&path, vec![b'z'; 12 << 20]).unwrap();
    let (want, _) = out(&mut s, "COPY t TO STDOUT");
    s.execute(&sql("t")).unwrap();
    assert!(
        std::fs::read(&path).unwrap() == want,
        "table over a longer file"
    );
    // Shorter output, then longer again (the file is extended).
    let (few, _) = out(&mut s, "COPY (SELECT a FROM t WHERE a < 50) TO STDOUT");
    s.execute(&sql("(SELECT a FROM t WHERE a < 50)")).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), few);
    s.execute(&sql("t")).unwrap();
    assert!(
        std::fs::read(&path).unwrap() == want,
        "table over a shorter file"
    );
}

#[test]
fn a_copy_to_a_file_that_fails_leaves_only_what_it_wrote() {
    let (dir, mut s) = setup();
    let path = dir.path().join("out.tsv");
    std::fs::write(&path, vec![b'z'; 24 << 20]).unwrap();
    // Fails at a = 50000, after several output pieces were written.
    let e = s
        .execute(&format!(
            "COPY (SELECT a, 1 / (a - 50000), repeat('x', 200) FROM t) TO '{}'",
            path.display()
        ))
        .unwrap_err();
    assert_eq!(e.message, "division by zero");
    let got = std::fs::read(&path).unwrap();
    assert!(got.len() > 1 << 20, "some rows were written: {}", got.len());
    assert!(got.len() < 24 << 20);
    assert!(!got.contains(&b'z'), "nothing of the old file is left");
    assert_eq!(got.last(), Some(&b'\n'));
}

#[test]
fn the_fast_row_writer_matches_the_query_copy() {
    // Integers and strings only (text format takes the fast row writer),
    // over many output buffers: escapes in some rows, NULLs in others,
    // strings on both sides of 16 bytes and of the 1-byte varlena header.
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path().join("db")).unwrap();
    let mut s = db.session();
    s.execute("CREATE TABLE f (a int, b bigint, c smallint, d text, e char(9), g varchar(200))")
        .unwrap();
    s.execute(
        "INSERT INTO f SELECT i * 7919 - 200000000, i::bigint * -1000000007, (i % 60000) - 30000, \
         CASE WHEN i % 13 = 0 THEN NULL WHEN i % 11 = 0 THEN repeat('a', i % 300) || E'\\t|\\\\' \
              ELSE repeat('x', i % 140) END, \
         CASE WHEN i % 17 = 0 THEN E'\\n' ELSE 'e' || (i % 100) END, \
         repeat('é', i % 150) || '|' \
         FROM generate_series(1, 60000) AS i",
    )
    .unwrap();
    for opts in ["", "WITH (DELIMITER '|', NULL 'NIL')", "WITH (HEADER)"] {
        let (table, tag) = out(&mut s, &format!("COPY f TO STDOUT {opts}"));
        let (query, _) = out(&mut s, &format!("COPY (SELECT * FROM f) TO STDOUT {opts}"));
        assert!(table.len() > 3 << 20, "several buffers: {}", table.len());
        assert_eq!(tag, "COPY 60000");
        assert!(
            table == query,
            "COPY f and COPY (SELECT * FROM f) differ with {opts:?}"
        );
        let (table, _) = out(&mut s, &format!("COPY f (b, d, g) TO STDOUT {opts}"));
        let (query, _) = out(
            &mut s,
            &format!("COPY (SELECT b, d, g FROM f) TO STDOUT {opts}"),
        );
        assert!(table == query, "column subset with {opts:?}");
    }
}

/// The formatter threads of a table's COPY TO print as the session does:
/// its DateStyle and `extra_float_digits` (PostgreSQL 15 prints
/// `0.333333333333333`, a tab, `02.01.2020` for the first row below).
#[test]
fn table_copy_formats_with_the_session_styles() {
    let (_dir, mut s) = setup();
    s.execute("CREATE TABLE fl (x float8, d date)").unwrap();
    s.execute(
        "INSERT INTO fl SELECT i / 3.0::float8, date '2020-01-01' + i \
         FROM generate_series(1, 20000) AS i",
    )
    .unwrap();
    s.execute("SET extra_float_digits = 0").unwrap();
    s.execute("SET datestyle = 'German'").unwrap();
    let (table, _) = out(&mut s, "COPY fl TO STDOUT");
    let (query, _) = out(&mut s, "COPY (SELECT * FROM fl) TO STDOUT");
    let first = String::from_utf8(table.clone()).unwrap();
    assert_eq!(
        first.lines().next(),
        Some("0.333333333333333\t02.01.2020"),
        "the table's COPY ignored the session's styles"
    );
    assert_eq!(table, query);
}
