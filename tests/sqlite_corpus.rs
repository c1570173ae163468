//! Runs SQLite's sqllogictest scripts (`tests/sqlite/`, vendored unmodified)
//! against heapdb, with PostgreSQL 15's answers as the expected results.
//!
//! The files keep SQLite's own format (see `tests/sqlite/README.md`): one
//! result value per line, `N values hashing to <md5>` above the file's
//! `hash-threshold`, `rowsort`/`valuesort`/`nosort`, type letters I/T/R,
//! `skipif`/`onlyif` (this runner answers to `postgresql`) and `halt`.
//! Values are rendered from heapdb's PostgreSQL text output exactly as
//! `scripts/sqlite-corpus-pg.py` renders PostgreSQL's: `I` as the leading
//! integer of the text (`t`/`f` as 1/0), `R` as C's `%.3f`, `T` as the text
//! with bytes outside ' '..'~' turned into '@'; NULL as `NULL`, the empty
//! string as `(empty)`.
//!
//! Where PostgreSQL's answer differs from SQLite's, `<file>.pg` beside the
//! file holds PostgreSQL's (written by that script, never by hand) and
//! replaces the file's expectation for that record.
//!
//! Files with failing records are listed in `tests/sqlite/KNOWN_FAILING`
//! with their count of failing records; a test fails when a file fails more
//! records than listed, and also when it fails fewer (lower the count), so
//! the list only shrinks and stays true. `SQLITE_VERBOSE=1` prints each
//! failing record; `SQLITE_FILE=select1.test` runs one file of a test.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use heapdb::types::format_value;
use heapdb::{Database, Session};
use md5::{Digest, Md5};

/// One record that runs under the `postgresql` label.
enum Rec {
    Statement {
        line: usize,
        sql: String,
        expected: Expected,
    },
    Query {
        line: usize,
        sql: String,
        types: String,
        sort: String,
        expected: Expected,
    },
    HashThreshold(usize),
    Halt,
}

#[derive(Clone, PartialEq, Debug)]
enum Expected {
    Ok,
    Error,
    Lines(Vec<String>),
}

const LABEL: &str = "postgresql";

/// The records of a file that run under [`LABEL`].
fn parse(text: &str) -> Vec<Rec> {
    // Some files have CRLF line ends.
    let lines: Vec<&str> = text.split('\n').map(|l| l.trim_end_matches('\r')).collect();
    let (mut i, n) = (0, lines.len());
    let mut out = Vec::new();
    while i < n {
        if lines[i].trim().is_empty() || lines[i].starts_with('#') {
            i += 1;
            continue;
        }
        let mut skip = false;
        let mut tok: Vec<&str> = lines[i].split_whitespace().collect();
        while tok[0] == "skipif" || tok[0] == "onlyif" {
            let matches = tok.get(1).is_some_and(|l| l.eq_ignore_ascii_case(LABEL));
            skip |= if tok[0] == "skipif" {
                matches
            } else {
                !matches
            };
            i += 1;
            tok = lines[i].split_whitespace().collect();
        }
        let line = i + 1;
        i += 1;
        let mut body = Vec::new();
        while i < n && !lines[i].trim().is_empty() {
            body.push(lines[i]);
            i += 1;
        }
        if skip {
            continue;
        }
        match tok[0] {
            "statement" => out.push(Rec::Statement {
                line,
                sql: body.join("\n"),
                expected: if tok.get(1) == Some(&"error") {
                    Expected::Error
                } else {
                    Expected::Ok
                },
            }),
            "query" => {
                let sep = body.iter().position(|l| *l == "----").unwrap_or(body.len());
                out.push(Rec::Query {
                    line,
                    sql: body[..sep].join("\n"),
                    types: tok.get(1).unwrap_or(&"").to_string(),
                    sort: tok.get(2).unwrap_or(&"nosort").to_string(),
                    expected: Expected::Lines(
                        body.get(sep + 1..)
                            .unwrap_or(&[])
                            .iter()
                            .map(|s| s.to_string())
                            .collect(),
                    ),
                });
            }
            "hash-threshold" => out.push(Rec::HashThreshold(
                tok.get(1).and_then(|t| t.parse().ok()).unwrap_or(0),
            )),
            "halt" => {
                out.push(Rec::Halt);
                break;
            }
            other => panic!("line {line}: unknown record {other:?}"),
        }
    }
    out
}

/// `<file>.pg`: record line -> PostgreSQL's outcome.
fn overrides(path: &Path) -> HashMap<usize, Expected> {
    let mut p = path.as_os_str().to_owned();
    p.push(".pg");
    let text = std::fs::read_to_string(PathBuf::from(p)).unwrap_or_default();
    let mut out = HashMap::new();
    for block in text.split("\n\n") {
        let ls: Vec<&str> = block.lines().filter(|l| !l.starts_with('#')).collect();
        let Some(head) = ls.first().and_then(|h| h.strip_prefix("@ ")) else {
            continue;
        };
        let (line, what) = head.split_once(' ').expect("`@ LINE WHAT`");
        let e = match what {
            "ok" => Expected::Ok,
            "error" => Expected::Error,
            _ => Expected::Lines(ls[1..].iter().map(|s| s.to_string()).collect()),
        };
        out.insert(line.parse().expect("a line number"), e);
    }
    out
}

fn leading_int(s: &str) -> i64 {
    let s = s.trim_start();
    let b = s.as_bytes();
    let mut end = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = end;
    while end < b.len() && b[end].is_ascii_digit() {
        end += 1;
    }
    if end == digits {
        return 0;
    }
    s[..end].parse().unwrap_or(0)
}

fn leading_float(s: &str) -> f64 {
    let s = s.trim_start();
    for (word, v) in [
        ("Infinity", f64::INFINITY),
        ("-Infinity", f64::NEG_INFINITY),
        ("NaN", f64::NAN),
    ] {
        if s.starts_with(word) {
            return v;
        }
    }
    // The longest prefix that parses (PostgreSQL's text is a whole number).
    (1..=s.len())
        .rev()
        .filter(|&k| s.is_char_boundary(k))
        .find_map(|k| s[..k].parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// One value (PostgreSQL text form, `None` for NULL) as the C harness prints it.
fn render(value: Option<&str>, letter: char) -> String {
    let Some(v) = value else {
        return "NULL".into();
    };
    let bool_num = match v {
        "t" => Some("1"),
        "f" => Some("0"),
        _ => None,
    };
    match letter {
        'I' => bool_num.map_or_else(|| leading_int(v).to_string(), str::to_string),
        'R' => {
            let x = leading_float(bool_num.unwrap_or(v));
            if x.is_nan() {
                "nan".into()
            } else {
                format!("{x:.3}")
            }
        }
        _ if v.is_empty() => "(empty)".into(),
        _ => v
            .bytes()
            .map(|b| {
                if (b' '..=b'~').contains(&b) {
                    b as char
                } else {
                    '@'
                }
            })
            .collect(),
    }
}

/// The lines a query's result compares as (values, or their count and md5).
fn result_lines(
    rows: Vec<Vec<Option<String>>>,
    types: &str,
    sort: &str,
    threshold: usize,
) -> Vec<String> {
    let letters: Vec<char> = types.chars().collect();
    if rows.iter().any(|r| r.len() != letters.len()) {
        return vec!["wrong number of columns".into()];
    }
    let mut rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .zip(&letters)
                .map(|(v, &t)| render(v.as_deref(), t))
                .collect()
        })
        .collect();
    let values: Vec<String> = match sort {
        "rowsort" => {
            rows.sort();
            rows.concat()
        }
        "valuesort" => {
            let mut v = rows.concat();
            v.sort();
            v
        }
        _ => rows.concat(),
    };
    if threshold > 0 && values.len() > threshold {
        let mut md5 = Md5::new();
        for v in &values {
            md5.update(v.as_bytes());
            md5.update(b"\n");
        }
        return vec![format!(
            "{} values hashing to {:x}",
            values.len(),
            md5.finalize()
        )];
    }
    values
}

/// Runs one statement: its rows as PostgreSQL text (`None` for NULL), or
/// `Err` when heapdb refuses it (or panics).
fn run_sql(session: &mut Session, sql: &str) -> Result<Vec<Vec<Option<String>>>, String> {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| session.execute(sql)));
    match r {
        Err(_) => Err("panic".into()),
        Ok(Err(e)) => Err(e.message),
        Ok(Ok(res)) => Ok(res
            .rows
            .iter()
            .map(|row| {
                row.iter()
                    .map(|v| {
                        (!v.is_null()).then(|| {
                            let mut s = String::new();
                            format_value(v, &mut s);
                            s
                        })
                    })
                    .collect()
            })
            .collect()),
    }
}

struct FileRun {
    records: usize,
    failures: Vec<String>,
    secs: f64,
}

fn run_file(path: &Path) -> FileRun {
    let text = std::fs::read_to_string(path).expect("read corpus file");
    let over = overrides(path);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Database::open(dir.path()).expect("open database");
    let mut session = db.session();
    let mut threshold = 8;
    let mut run = FileRun {
        records: 0,
        failures: Vec::new(),
        secs: 0.0,
    };
    let start = Instant::now();
    for rec in parse(&text) {
        let (line, sql, got, expected) = match rec {
            Rec::Halt => break,
            Rec::HashThreshold(n) => {
                threshold = n;
                continue;
            }
            Rec::Statement {
                line,
                sql,
                expected,
            } => {
                let got = match run_sql(&mut session, &sql) {
                    Ok(_) => (Expected::Ok, String::new()),
                    Err(e) => (Expected::Error, e),
                };
                (line, sql, got, expected)
            }
            Rec::Query {
                line,
                sql,
                types,
                sort,
                expected,
            } => {
                let got = match run_sql(&mut session, &sql) {
                    Ok(rows) => (
                        Expected::Lines(result_lines(rows, &types, &sort, threshold)),
                        String::new(),
                    ),
                    Err(e) => (Expected::Error, e),
                };
                (line, sql, got, expected)
            }
        };
        run.records += 1;
        let want = over.get(&line).cloned().unwrap_or(expected);
        if got.0 != want {
            run.failures.push(format!(
                "{}:{line}: expected {want:?}, got {:?} {}\n    {sql}",
                path.display(),
                got.0,
                got.1
            ));
        }
    }
    run.secs = start.elapsed().as_secs_f64();
    run
}

/// `tests/sqlite/KNOWN_FAILING`: file (relative to tests/sqlite) -> count.
fn known_failing(dir: &Path) -> HashMap<String, usize> {
    std::fs::read_to_string(dir.join("KNOWN_FAILING"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (f, n) = l.rsplit_once(' ').expect("`FILE COUNT` lines");
            (f.trim().to_string(), n.parse().expect("a record count"))
        })
        .collect()
}

/// Runs the named files (relative to tests/sqlite) and checks them against
/// the known-failing counts.
fn run_files(names: &[&str]) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sqlite");
    let known = known_failing(&dir);
    let only = std::env::var("SQLITE_FILE").ok();
    let verbose = std::env::var("SQLITE_VERBOSE").is_ok();
    let mut problems = Vec::new();
    for name in names {
        if only.as_ref().is_some_and(|o| o != name) {
            continue;
        }
        let run = run_file(&dir.join(name));
        let n = run.failures.len();
        eprintln!(
            "{name}: {} records, {} agree, {:.1}s",
            run.records,
            run.records - n,
            run.secs
        );
        if verbose {
            for f in &run.failures {
                eprintln!("{f}");
            }
        }
        let listed = known.get(*name).copied().unwrap_or(0);
        if n > listed {
            problems.push(format!(
                "{name}: {n} failing records, {listed} known; first:\n{}",
                run.failures[0]
            ));
        } else if n < listed {
            problems.push(format!(
                "{name}: {n} failing records now: lower its count in tests/sqlite/KNOWN_FAILING \
                 from {listed}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn select1() {
    run_files(&["select1.test"]);
}

#[test]
fn select2() {
    run_files(&["select2.test"]);
}

#[test]
fn select3() {
    run_files(&["select3.test"]);
}

#[test]
fn select4() {
    run_files(&["select4.test"]);
}

#[test]
fn select5() {
    run_files(&["select5.test"]);
}

#[test]
fn evidence() {
    run_files(&[
        "evidence/in1.test",
        "evidence/in2.test",
        "evidence/slt_lang_aggfunc.test",
        "evidence/slt_lang_createview.test",
        "evidence/slt_lang_dropindex.test",
        "evidence/slt_lang_droptable.test",
        "evidence/slt_lang_dropview.test",
        "evidence/slt_lang_reindex.test",
        "evidence/slt_lang_replace.test",
        "evidence/slt_lang_update.test",
    ]);
}

#[test]
fn random() {
    run_files(&[
        "random/aggregates/slt_good_0.test",
        "random/aggregates/slt_good_1.test",
        "random/aggregates/slt_good_129.test",
        "random/groupby/slt_good_0.test",
        "random/groupby/slt_good_13.test",
        "random/expr/slt_good_0.test",
    ]);
}

/// Any files, named by `SQLITE_RUN` (comma-separated paths, relative to
/// tests/sqlite or absolute; each with its `.pg` beside it): for trying
/// further files of SQLite's corpus before vendoring them.
#[test]
#[ignore]
fn chosen_files() {
    let names = std::env::var("SQLITE_RUN").unwrap_or_default();
    let names: Vec<&str> = names.split(',').filter(|n| !n.is_empty()).collect();
    run_files(&names);
}

/// The renderer agrees with C's `printf` and `atol` on the cases that
/// matter, so heapdb's and PostgreSQL's answers hash alike.
#[test]
fn render_like_the_c_harness() {
    assert_eq!(render(Some("2.5000000000000000"), 'I'), "2");
    assert_eq!(render(Some("-7"), 'I'), "-7");
    assert_eq!(render(Some("t"), 'I'), "1");
    assert_eq!(render(Some("0.0625"), 'R'), "0.062");
    assert_eq!(render(Some("-0.0001"), 'R'), "-0.000");
    assert_eq!(render(Some("1e+20"), 'R'), "100000000000000000000.000");
    assert_eq!(render(Some(""), 'T'), "(empty)");
    assert_eq!(render(Some("a\tb"), 'T'), "a@b");
    assert_eq!(render(None, 'R'), "NULL");
    let rows = vec![vec![Some("b".into())], vec![Some("a".into())]];
    assert_eq!(result_lines(rows.clone(), "T", "rowsort", 8), ["a", "b"]);
    assert_eq!(
        result_lines(rows, "T", "nosort", 1),
        ["2 values hashing to d6b441411dbef1d4999fdc4fbdbc7828"]
    );
}
