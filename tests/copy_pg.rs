//! COPY TO output compared byte for byte with PostgreSQL 15's (the files in
//! tests/data/copy, made by scripts/copy-pg.sh from types.sql), and round
//! trips of those files through COPY FROM in both formats.

use std::path::{Path, PathBuf};

use heapdb::Session;

mod common;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/copy")
        .join(name)
}

fn open() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let db = common::open_at(&dir.path().join("db"), 256);
    let mut s = db.session();
    let sql = std::fs::read_to_string(data("types.sql")).unwrap();
    s.execute(&sql).unwrap();
    (dir, s)
}

/// The copies made by scripts/copy-pg.sh: (file, COPY source, options).
const CASES: &[(&str, &str, &str)] = &[
    ("text.out", "types", ""),
    ("text_header.out", "types", "WITH (HEADER)"),
    (
        "text_opts.out",
        "types (id, t, v, f8)",
        "WITH (DELIMITER '|', NULL 'NIL')",
    ),
    ("csv.out", "types", "WITH (FORMAT csv)"),
    ("csv_header.out", "types", "CSV HEADER"),
    (
        "csv_opts.out",
        "types (id, t, c)",
        "WITH (FORMAT csv, DELIMITER ';', NULL '\\N', QUOTE '''', ESCAPE '\\', FORCE_QUOTE (c))",
    ),
    (
        "csv_force_all.out",
        "types (id, v)",
        "WITH (FORMAT csv, FORCE_QUOTE *)",
    ),
    // Integers and strings only: the fast row writer (text format), with
    // escapes around its 16-byte steps, both varlena header sizes, a NULL,
    // another delimiter, a column subset, and one stepping over other types.
    ("types_ints.out", "types (id, i2, i4, i8, t, v, c)", ""),
    ("texts.out", "texts", ""),
    (
        "texts_opts.out",
        "texts",
        "WITH (DELIMITER '|', NULL 'NIL', HEADER)",
    ),
    ("texts_cols.out", "texts (k, t, c)", "WITH (DELIMITER ',')"),
    (
        "query.out",
        "(SELECT id, t || '!' AS bang, i2 * 2 AS twice FROM types WHERE id > 3 ORDER BY id DESC)",
        "WITH (FORMAT csv, HEADER)",
    ),
];

#[test]
fn copy_to_stdout_matches_postgres_bytes() {
    let (_dir, mut s) = open();
    for (file, src, opts) in CASES {
        let want = std::fs::read(data(file)).unwrap();
        let mut got = Vec::new();
        let r = s
            .copy_out(&format!("COPY {src} TO STDOUT {opts}"), &mut got)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "{file}"
        );
        let rows = match *src {
            _ if *file == "query.out" => 6,
            _ if src.starts_with("texts") => 12,
            _ => 9,
        };
        assert_eq!(r.tag, format!("COPY {rows}"), "{file}");
    }
}

#[test]
fn copy_to_file_matches_postgres_bytes() {
    let (dir, mut s) = open();
    for (file, src, opts) in CASES {
        let path = dir.path().join(file);
        let r = s
            .execute(&format!("COPY {src} TO '{}' {opts}", path.display()))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(r.tag.starts_with("COPY "), "{}", r.tag);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            std::fs::read(data(file)).unwrap(),
            "{file}"
        );
    }
}

#[test]
fn postgres_files_load_back_identically() {
    let (dir, mut s) = open();
    for (file, src, opts) in CASES.iter().filter(|c| !c.1.starts_with('(')) {
        let (table, cols) = src.split_once(' ').unwrap_or((src, ""));
        let (ddl, rows) = match table {
            "types" => ("id int NOT NULL, b boolean, i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, n numeric, n2 numeric(10,2), t text, v varchar(12), c char(5), d date, ts timestamp, iv interval", 9),
            _ => ("id int, k smallint, big bigint, t text, v varchar(300), c char(20)", 12),
        };
        let cols = if cols.is_empty() {
            String::new()
        } else {
            format!(" {cols}")
        };
        s.execute("DROP TABLE IF EXISTS back").unwrap();
        s.execute(&format!("CREATE TABLE back ({ddl})")).unwrap();
        // FORCE_QUOTE is for COPY TO only.
        let load_opts = opts
            .replace(", FORCE_QUOTE (c)", "")
            .replace(", FORCE_QUOTE *", "");
        let r = s
            .execute(&format!(
                "COPY back{cols} FROM '{}' {load_opts}",
                data(file).display()
            ))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(r.tag, format!("COPY {rows}"), "{file}");
        let again = dir.path().join(format!("again-{file}"));
        s.execute(&format!("COPY back{cols} TO '{}' {opts}", again.display()))
            .unwrap();
        assert_eq!(
            std::fs::read(&again).unwrap(),
            std::fs::read(data(file)).unwrap(),
            "{file}"
        );
    }
}
