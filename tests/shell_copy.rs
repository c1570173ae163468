//! COPY through the shell: `COPY ... FROM STDIN` with data in piped and `-f`
//! scripts, `-c` reading the process's stdin, `COPY ... TO STDOUT` to the
//! output and `\o`, and `\copy` with client-side files, `stdin`, `pstdin`
//! and `stdout`. Every expected output below is what psql 15 printed for
//! the same script against PostgreSQL 15 (with `psql:` read as `heapdb:`).

use std::path::Path;

mod common;

/// Runs heapdb in working directory `dir` (data in `dir/db`) with `args`,
/// feeding `stdin`; returns stdout, stderr and the exit status.
fn run_in(dir: &Path, args: &[&str], stdin: &str) -> (String, String, i32) {
    let mut command = common::shell_command(&dir.join("db"), args);
    command.current_dir(dir);
    common::output_texts(common::feed(command, stdin.as_bytes()))
}

/// A script with good and bad COPY data, a COPY that fails before its data
/// (whose lines then run as SQL, as in psql) and a last COPY ended by the
/// end of input.
const SCRIPT: &str = "create table t (a int, b text);
copy t from stdin;
1\tone
x\ttwo
3\tthree
\\.
select count(*) from t;
copy t from stdin with (format csv);
1,\"a
b\"
\\.
copy t to stdout;
copy t (a) to stdout with csv header;
copy t from stdin;
1\t2\t3
\\.
copy nosuch from stdin;
5\tx
\\.
select 'after';
copy t from stdin;
7\tseven
";

const SCRIPT_OUT: &str = "CREATE TABLE
 count 
-------
     0
(1 row)

COPY 1
1\ta\\nb
a
1
COPY 1
";

#[test]
fn copy_from_stdin_in_a_file_script_as_psql() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("c1.sql"), SCRIPT).expect("write script");
    let (out, err, code) = run_in(dir.path(), &["-f", "c1.sql"], "");
    assert_eq!(out, SCRIPT_OUT);
    assert_eq!(
        err,
        "heapdb:c1.sql:6: ERROR:  invalid input syntax for type integer: \"x\"
CONTEXT:  COPY t, line 2, column a: \"x\"
heapdb:c1.sql:16: ERROR:  extra data after last expected column
CONTEXT:  COPY t, line 1: \"1\t2\t3\"
heapdb:c1.sql:17: ERROR:  relation \"nosuch\" does not exist
heapdb:c1.sql:19: error: invalid command \\.
heapdb:c1.sql:20: ERROR:  syntax error at or near \"5\"
LINE 1: 5 x
        ^
"
    );
    assert_eq!(code, 0);
    // The failed COPYs left nothing behind.
    let (out, _, _) = run_in(dir.path(), &["-A", "-t", "-c", "select a, b from t"], "");
    assert_eq!(out, "1|a\nb\n7|seven\n");
}

#[test]
fn copy_from_stdin_in_a_piped_script_has_no_prefix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (out, err, _) = run_in(dir.path(), &[], SCRIPT);
    assert_eq!(out, SCRIPT_OUT);
    assert!(err.starts_with(
        "ERROR:  invalid input syntax for type integer: \"x\"\nCONTEXT:  COPY t, line 2, column a: \"x\"\nERROR:  extra data"
    ), "{err}");
}

#[test]
fn on_error_stop_stops_after_the_data_of_a_failed_copy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "create table t (a int);\ncopy t from stdin;\n1\nx\n\\.\nselect 'not reached';\n";
    let (out, err, code) = run_in(dir.path(), &["-v", "ON_ERROR_STOP=1"], script);
    assert_eq!(out, "CREATE TABLE\n");
    assert!(err.starts_with("ERROR:  invalid input syntax"), "{err}");
    assert_eq!(code, 3);
}

#[test]
fn dash_c_copy_reads_the_process_stdin() {
    let dir = tempfile::tempdir().expect("temp dir");
    run_in(dir.path(), &["-c", "create table t (a int, b text)"], "");
    let (out, err, code) = run_in(
        dir.path(),
        &["-c", "copy t from stdin", "-c", "copy t to stdout"],
        "7\tseven\n8\teight\n\\.\n",
    );
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("COPY 2\n7\tseven\n8\teight\n", "", 0)
    );
}

#[test]
fn copy_to_stdout_follows_the_output_target() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "create table t (a int, b text);\ninsert into t values (1, 'x');\ncopy t to stdout;\n\\o o.txt\ncopy t to stdout;\nselect 1;\n";
    let (out, err, _) = run_in(dir.path(), &[], script);
    assert_eq!(err, "");
    assert_eq!(out, "CREATE TABLE\nINSERT 0 1\n1\tx\n");
    let file = std::fs::read_to_string(dir.path().join("o.txt")).expect("o.txt");
    assert_eq!(file, "1\tx\n ?column? \n----------\n        1\n(1 row)\n\n");
}

#[test]
fn backslash_copy_uses_client_files_and_streams() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("d.txt"), "1\tfile\n").expect("data file");
    let script = "create table t (a int, b text);
\\copy t from d.txt
\\copy t from 'd.txt' with (format text)
\\copy t to o2.txt
\\copy t to stdout
\\copy (select 1) to stdout csv
\\copy t from nofile.txt
\\copy
\\copy t
\\copy t from
\\copy nosuch from d.txt
\\copy t (a) from stdin
42
\\.
\\copy t from 'd.txt' with (format bogus)
\\copy t to '/nonexistent/x'
select 'end';
";
    std::fs::write(dir.path().join("c2.sql"), script).expect("write script");
    // An older, longer o2.txt: `\copy ... to` leaves only the new rows.
    std::fs::write(dir.path().join("o2.txt"), "stale\n".repeat(10_000)).expect("old o2.txt");
    let (out, err, code) = run_in(dir.path(), &["-f", "c2.sql"], "");
    assert_eq!(
        out,
        "CREATE TABLE\nCOPY 1\nCOPY 1\nCOPY 2\n1\tfile\n1\tfile\n1\nCOPY 1\n ?column? \n----------\n end\n(1 row)\n\n"
    );
    assert_eq!(
        err,
        "heapdb:c2.sql:7: error: nofile.txt: No such file or directory
heapdb:c2.sql:8: error: \\copy: arguments required
heapdb:c2.sql:9: error: \\copy: parse error at end of line
heapdb:c2.sql:10: error: \\copy: parse error at end of line
heapdb:c2.sql:11: ERROR:  relation \"nosuch\" does not exist
heapdb:c2.sql:15: ERROR:  COPY format \"bogus\" not recognized
LINE 1: COPY  t FROM STDIN with (format bogus)
                                 ^
heapdb:c2.sql:16: error: /nonexistent/x: No such file or directory
"
    );
    assert_eq!(code, 0);
    let file = std::fs::read_to_string(dir.path().join("o2.txt")).expect("o2.txt");
    assert_eq!(file, "1\tfile\n1\tfile\n");
}

#[test]
fn backslash_copy_from_pstdin_reads_the_process_stdin() {
    let dir = tempfile::tempdir().expect("temp dir");
    run_in(dir.path(), &["-c", "create table t (a int, b text)"], "");
    let (out, _, _) = run_in(
        dir.path(),
        &[
            "-c",
            "\\copy t from pstdin with csv",
            "-c",
            "\\copy t to pstdout with csv",
        ],
        "1,\"x,y\"\n2,\n",
    );
    assert_eq!(out, "COPY 2\n1,\"x,y\"\n2,\n");
}
