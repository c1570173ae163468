//! Golden plans: `EXPLAIN (COSTS OFF)` of the queries in tests/plans/*.sql,
//! compared line for line with the checked-in tests/plans/*.out, so that a
//! change to the planner shows as a diff of plans.
//!
//! Every file runs in a fresh database loaded by tests/plans/setup.sql (a
//! fixed load, then ANALYZE, which reads every row of tables that small:
//! the statistics and the plans are the same on every run). A query file
//! holds statements, each ending with `;` at the end of a line; lines
//! starting with `--` are comments, copied to the output. A `set`,
//! `create index` or `analyze` statement runs as it is (for the settings
//! and indexes that change plans); every other statement is explained.
//! The output shows each statement and its plan, then an empty line.
//!
//! To accept a planning change, regenerate the files and review the diff:
//!
//! ```text
//! HEAPDB_BLESS=1 cargo test --release --test planner_golden
//! git diff tests/plans
//! ```
//!
//! A new query file gets its `.out` the same way; read every plan in it
//! before committing it.

use std::path::{Path, PathBuf};

use heapdb::Session;

mod common;

fn plans_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plans")
}

/// The statements of a file: each ends with `;` at the end of a line;
/// comment lines stand alone (as `Err`), copied to the output.
fn statements(text: &str) -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    let mut stmt = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if stmt.is_empty() && (trimmed.starts_with("--") || trimmed.is_empty()) {
            if !trimmed.is_empty() {
                out.push(Err(trimmed.to_string()));
            }
            continue;
        }
        if !stmt.is_empty() {
            stmt.push('\n');
        }
        stmt.push_str(line);
        if trimmed.ends_with(';') {
            out.push(Ok(std::mem::take(&mut stmt)));
        }
    }
    assert!(stmt.is_empty(), "a statement without its ';': {stmt}");
    out
}

/// The golden text of one query file, run in `s`.
fn render(s: &mut Session, text: &str) -> String {
    let mut out = String::new();
    for item in statements(text) {
        let stmt = match item {
            Err(comment) => {
                out.push_str(&comment);
                out.push('\n');
                continue;
            }
            Ok(stmt) => stmt,
        };
        let sql = stmt.trim_end_matches(';');
        let lower = sql.trim_start().to_ascii_lowercase();
        if ["set ", "create index ", "analyze"]
            .iter()
            .any(|p| lower.starts_with(p))
        {
            common::run(s, sql);
            out.push_str(&stmt);
            out.push_str("\n\n");
            continue;
        }
        let explain = format!("EXPLAIN (COSTS OFF) {sql}");
        out.push_str(&stmt);
        out.push('\n');
        for line in common::lines(s, &explain) {
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// The first line where `want` and `got` differ, with both versions.
fn first_difference(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let n = (0..w.len().max(g.len()))
        .find(|&i| w.get(i) != g.get(i))
        .unwrap_or(0);
    format!(
        "line {}:\n  expected: {:?}\n  got:      {:?}",
        n + 1,
        w.get(n).copied().unwrap_or("<end>"),
        g.get(n).copied().unwrap_or("<end>")
    )
}

#[test]
fn plans_match_the_golden_files() {
    let dir = plans_dir();
    let setup = std::fs::read_to_string(dir.join("setup.sql")).expect("tests/plans/setup.sql");
    let bless = std::env::var_os("HEAPDB_BLESS").is_some_and(|v| v != "0");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/plans")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql") && !p.ends_with("setup.sql"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "query files in {}", dir.display());
    let mut failures = Vec::new();
    for file in &files {
        let (_d, db) = common::open(1024);
        let mut s = db.session();
        common::run(&mut s, &setup);
        let text = std::fs::read_to_string(file).expect("query file");
        let got = render(&mut s, &text);
        let golden = file.with_extension("out");
        if bless {
            std::fs::write(&golden, &got).expect("write golden file");
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!(
                "{}: the plans differ, {}",
                golden.display(),
                first_difference(&want, &got)
            )),
            Err(e) => failures.push(format!("{}: {e}", golden.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n\nIf the new plans are right: HEAPDB_BLESS=1 cargo test --release \
         --test planner_golden, then review `git diff tests/plans`.",
        failures.join("\n")
    );
}

#[test]
fn statements_split_at_semicolons_that_end_lines() {
    let got = statements("-- a\nselect 1;\nselect 'a;b'\n  from t;\n\n-- b\n");
    assert_eq!(
        got,
        vec![
            Err("-- a".to_string()),
            Ok("select 1;".to_string()),
            Ok("select 'a;b'\n  from t;".to_string()),
            Err("-- b".to_string()),
        ]
    );
}
