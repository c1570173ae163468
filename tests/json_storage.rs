//! `json` and `jsonb` columns: values survive a clean close and reopen and a
//! crash (SIGKILL, then WAL recovery) as they were written (`json` text
//! verbatim, duplicate keys and spacing included; `jsonb` normalized), read
//! back as JSON values rather than text, and COPY writes and reads their
//! text forms.

mod common;

use std::io::Write;

use common::*;

const CREATE: &str = "create table jt (id int, j json, b jsonb)";

const INSERT: &str = "insert into jt values \
    (1, '{\"a\": 1,  \"a\": [1,   2]}', '{\"b\": [1, 2.50], \"a\": {\"c\": null}, \"a\": true}'), \
    (2, '\"tab\\there\"', '\"\\u00e9\\n\"'), \
    (3, NULL, 'null'), \
    (4, '[]', '[{}, [], 1e3, -0.0]')";

fn expected() -> Vec<Vec<String>> {
    let row = |r: &[&str]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        row(&[
            "1",
            r#"{"a": 1,  "a": [1,   2]}"#,
            r#"{"a": true, "b": [1, 2.50]}"#,
        ]),
        row(&["2", r#""tab\there""#, "\"é\\n\""]),
        row(&["3", "", "null"]),
        row(&["4", "[]", "[{}, [], 1000, 0.0]"]),
    ]
}

const SELECT: &str = "select id, j, b from jt order by id";

/// Reads that only work on JSON values, not on their text.
fn check_reads(s: &mut heapdb::Session) {
    assert_eq!(
        one_text(s, "select b -> 'b' ->> 1 from jt where id = 1"),
        "2.50"
    );
    assert_eq!(
        one_text(s, "select j -> 'a' from jt where id = 1"),
        "[1,   2]"
    );
    assert_eq!(
        one_text(s, "select count(*) from jt where b @> '{\"a\": true}'"),
        "1"
    );
    assert_eq!(
        one_text(s, "select string_agg(id::text, ',' order by b) from jt"),
        "3,2,4,1"
    );
}

#[test]
fn json_columns_survive_close_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open_dir(dir.path());
        let mut s = db.session();
        run(&mut s, CREATE);
        run(&mut s, INSERT);
        assert_eq!(texts(&mut s, SELECT), expected());
        check_reads(&mut s);
    }
    let db = open_dir(dir.path());
    let mut s = db.session();
    assert_eq!(texts(&mut s, SELECT), expected());
    check_reads(&mut s);
    // Bad input is refused with PostgreSQL's detail and context, and
    // changes nothing.
    let e = s
        .execute("insert into jt values (9, '{\"a\": 1,}', '1')")
        .unwrap_err();
    assert_eq!(e.message, "invalid input syntax for type json");
    assert_eq!(e.code.code(), "22P02");
    assert_eq!(
        e.detail.as_deref(),
        Some("Expected string, but found \"}\".")
    );
    assert_eq!(e.context.as_deref(), Some("JSON data, line 1: {\"a\": 1,}"));
    assert_eq!(one_text(&mut s, "select count(*) from jt"), "4");
}

#[test]
fn json_columns_survive_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = shell_command(dir.path(), &["-X", "-q"]).spawn().unwrap();
    let lines = Lines::of(&mut child);
    {
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(stdin, "{CREATE};\n{INSERT};\nselect 'ready' as r;").unwrap();
        stdin.flush().unwrap();
    }
    assert!(
        lines.until(|l| l.trim() == "ready"),
        "the shell ended early"
    );
    let db = kill9_and_reopen(child, dir.path(), 128);
    let mut s = db.session();
    assert_eq!(texts(&mut s, SELECT), expected());
    check_reads(&mut s);
}

#[test]
fn copy_writes_and_reads_the_text_forms() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "{CREATE};\n{INSERT};\n\
         copy jt to stdout;\n\
         create table jt2 (id int, j json, b jsonb);\n\
         copy jt2 from stdin;\n\
         7\t{{\"k\":  \"v\", \"k\": 1}}\t{{\"k\":  \"v\", \"k\": 1}}\n\
         \\.\n\
         select j, b from jt2;\n"
    );
    let (out, err, code) = output_texts(shell(dir.path(), &["-X", "-q", "-A", "-t"], &script));
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            r#"1	{"a": 1,  "a": [1,   2]}	{"a": true, "b": [1, 2.50]}"#,
            "2\t\"tab\\\\there\"\t\"é\\\\n\"",
            "3\t\\N\tnull",
            "4\t[]\t[{}, [], 1000, 0.0]",
            r#"{"k":  "v", "k": 1}|{"k": 1}"#,
        ]
    );
}
