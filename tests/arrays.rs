//! Arrays in table columns: their storage encoding survives a clean close
//! and reopen and a crash (SIGKILL, then WAL recovery), for fixed-width and
//! varlena element types, NULL elements and empty arrays; COPY writes and
//! reads them in PostgreSQL's `{...}` text form.

mod common;

use std::io::Write;

use common::*;

const CREATE: &str =
    "create table arr (id int, i int[], t text[], n numeric[], b bool[], d date[], v varchar(3)[])";

const INSERT: &str = "insert into arr values \
    (1, '{1,NULL,-3}', '{a,\"b c\",\"\",\"NULL\",NULL}', '{1.50,NULL}', '{t,f}', '{2024-02-29}', '{abc}'), \
    (2, '{}', '{}', NULL, '{NULL}', '{}', '{x,yz}'), \
    (3, NULL, array['x\"y', 'c,d', 'e\\f'], '{-0.001,1e20}', NULL, NULL, NULL)";

/// What the rows look like after [`INSERT`], as the shell prints them.
fn expected() -> Vec<Vec<String>> {
    let row = |r: &[&str]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        row(&[
            "1",
            "{1,NULL,-3}",
            r#"{a,"b c","","NULL",NULL}"#,
            "{1.50,NULL}",
            "{t,f}",
            "{2024-02-29}",
            "{abc}",
        ]),
        row(&["2", "{}", "{}", "", "{NULL}", "{}", "{x,yz}"]),
        row(&[
            "3",
            "",
            r#"{"x\"y","c,d","e\\f"}"#,
            "{-0.001,100000000000000000000}",
            "",
            "",
            "",
        ]),
    ]
}

const SELECT: &str = "select id, i, t, n, b, d, v from arr order by id";

#[test]
fn array_columns_survive_close_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open_dir(dir.path());
        let mut s = db.session();
        run(&mut s, CREATE);
        run(&mut s, INSERT);
        assert_eq!(texts(&mut s, SELECT), expected());
    }
    let db = open_dir(dir.path());
    let mut s = db.session();
    assert_eq!(texts(&mut s, SELECT), expected());
    // The values read back are arrays, not text: subscripts and functions work.
    assert_eq!(one_text(&mut s, "select i[3] from arr where id = 1"), "-3");
    assert_eq!(
        one_text(&mut s, "select array_length(t, 1) from arr where id = 1"),
        "5"
    );
    // An over-long varchar(3) element is refused on assignment and changes nothing.
    let e = s
        .execute("insert into arr (id, v) values (9, '{abcd}')")
        .unwrap_err();
    assert_eq!(e.message, "value too long for type character varying(3)");
    assert_eq!(one_text(&mut s, "select count(*) from arr"), "3");
}

#[test]
fn array_columns_survive_a_crash() {
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
}

#[test]
fn copy_writes_and_reads_the_text_form() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "{CREATE};\n{INSERT};\n\
         copy arr to stdout;\n\
         create table arr2 (id int, i int[], t text[], n numeric[], b bool[], d date[], v varchar(3)[]);\n\
         copy arr2 from stdin;\n\
         1\t{{7,NULL}}\t{{\"a b\",\"\\\\\\\\x\"}}\t\\N\t{{f}}\t{{}}\t{{ab}}\n\
         \\.\n\
         select i, t from arr2;\n"
    );
    let (out, err, code) = output_texts(shell(dir.path(), &["-X", "-q", "-A", "-t"], &script));
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "1\t{1,NULL,-3}\t{a,\"b c\",\"\",\"NULL\",NULL}\t{1.50,NULL}\t{t,f}\t{2024-02-29}\t{abc}",
            "2\t{}\t{}\t\\N\t{NULL}\t{}\t{x,yz}",
            "3\t\\N\t{\"x\\\\\"y\",\"c,d\",\"e\\\\\\\\f\"}\t{-0.001,100000000000000000000}\t\\N\t\\N\t\\N",
            "{7,NULL}|{\"a b\",\"\\\\x\"}",
        ]
    );
}

#[test]
fn an_index_on_an_array_column_is_refused_and_changes_nothing() {
    let (_dir, db) = open(64);
    let mut s = db.session();
    run(&mut s, "create table ai (a int[])");
    let e = s.execute("create index ai_a on ai (a)").unwrap_err();
    assert_eq!(
        e.message,
        "data type integer[] has no default operator class for access method \"btree\""
    );
    assert_eq!(e.code.code(), "42704");
    run(&mut s, "insert into ai values ('{1}')");
    assert_eq!(
        one_text(&mut s, "select count(*) from ai where a = '{1}'"),
        "1"
    );
}
