//! The `heapdb` executable run as users run it: piped scripts, `-c`, `-f`,
//! exit statuses, error prefixes, `\timing`, output formats, `\i`, `\o`,
//! `\d`, a locked data directory and Ctrl-C. Expected outputs were checked
//! against psql 15 where psql has the same feature.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod common;
use common::BIN;

/// Runs heapdb on data directory `dir` with `args`, feeding `stdin`.
fn run_in(dir: &Path, args: &[&str], stdin: &str) -> Output {
    common::shell(dir, args, stdin)
}

/// The same, in a fresh data directory.
fn run(args: &[&str], stdin: &str) -> (String, String, i32) {
    let dir = tempfile::tempdir().expect("temp dir");
    let o = run_in(dir.path(), args, stdin);
    texts(o)
}

fn texts(o: Output) -> (String, String, i32) {
    common::output_texts(o)
}

#[test]
fn piped_script_prints_tags_tables_and_errors() {
    let (out, err, code) = run(
        &[],
        "create table t (a int, b text);\n\
         insert into t values (1, 'x'), (22, null);\n\
         select * from t order by a;\n\
         select nosuch from t;\n\
         begin;\nbegin;\ncommit;\n",
    );
    assert_eq!(
        out,
        "CREATE TABLE\nINSERT 0 2\n a  | b \n----+---\n  1 | x\n 22 | \n(2 rows)\n\nBEGIN\nBEGIN\nCOMMIT\n"
    );
    assert_eq!(
        err,
        "ERROR:  column \"nosuch\" does not exist\nLINE 1: select nosuch from t;\n               ^\n\
         WARNING:  there is already a transaction in progress\n"
    );
    assert_eq!(code, 0);
}

#[test]
fn returning_prints_rows_then_the_tag() {
    let (out, _, _) = run(
        &[],
        "create table t (a int);\ninsert into t values (4) returning a;\n",
    );
    assert_eq!(out, "CREATE TABLE\n a \n---\n 4\n(1 row)\n\nINSERT 0 1\n");
}

#[test]
fn quiet_drops_command_tags_but_not_rows() {
    let (out, _, code) = run(
        &["-q"],
        "create table t (a int);\ninsert into t values (5);\nselect a from t;\n",
    );
    assert_eq!(out, " a \n---\n 5\n(1 row)\n\n");
    assert_eq!(code, 0);
}

#[test]
fn dash_c_runs_in_order_and_fails_with_status_1() {
    let (out, err, code) = run(&["-c", "select 1 as x", "-c", "select nosuch"], "");
    assert_eq!(out, " x \n---\n 1\n(1 row)\n\n");
    assert_eq!(
        err,
        "ERROR:  column \"nosuch\" does not exist\nLINE 1: select nosuch\n               ^\n"
    );
    assert_eq!(code, 1);
    // The status is that of the last -c, as psql's.
    let (_, _, code) = run(&["-c", "select nosuch", "-c", "select 1"], "");
    assert_eq!(code, 0);
    // One -c string stops at its first error.
    let (out, _, code) = run(&["-c", "select 1 as a; select nosuch; select 2 as b"], "");
    assert_eq!(out, " a \n---\n 1\n(1 row)\n\n");
    assert_eq!(code, 1);
    let (_, err, code) = run(&["-c", "\\foo"], "");
    assert_eq!((err.as_str(), code), ("invalid command \\foo\n", 1));
}

#[test]
fn script_errors_name_the_file_and_the_line_the_statement_ends_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join("s.sql");
    std::fs::write(
        &script,
        "select 1 as a;\n\nselect\n  nosuch\n  ;\n\\foo\nselect 2 as b;\n",
    )
    .expect("write");
    let data = dir.path().join("data");
    let s = script.to_str().expect("utf-8 path");
    let (out, err, code) = texts(run_in(&data, &["-f", s], ""));
    assert_eq!(out, " a \n---\n 1\n(1 row)\n\n b \n---\n 2\n(1 row)\n\n");
    assert_eq!(
        err,
        format!(
            "heapdb:{s}:5: ERROR:  column \"nosuch\" does not exist\nLINE 2:   nosuch\n          ^\n\
             heapdb:{s}:6: error: invalid command \\foo\n"
        )
    );
    assert_eq!(code, 0);
    // `-f -` reads stdin under the name <stdin>.
    let (_, err, _) = texts(run_in(&data, &["-f", "-"], "select 1;\nselect nosuch;\n"));
    assert!(
        err.starts_with("heapdb:<stdin>:2: ERROR:  column \"nosuch\""),
        "{err}"
    );
}

#[test]
fn on_error_stop_ends_a_script_with_status_3() {
    let script = "select 1 as a;\nselect nosuch;\nselect 2 as b;\n";
    let (out, _, code) = run(&["-v", "ON_ERROR_STOP=1"], script);
    assert_eq!((out.as_str(), code), (" a \n---\n 1\n(1 row)\n\n", 3));
    let dir = tempfile::tempdir().expect("temp dir");
    let f = dir.path().join("s.sql");
    std::fs::write(&f, script).expect("write");
    let data = dir.path().join("data");
    let (out, _, code) = texts(run_in(
        &data,
        &["-v", "ON_ERROR_STOP=1", "-f", f.to_str().expect("utf-8")],
        "",
    ));
    assert_eq!((out.as_str(), code), (" a \n---\n 1\n(1 row)\n\n", 3));
    // Without it the script goes on and exits 0.
    let (out, _, code) = run(&[], script);
    assert!(out.ends_with(" b \n---\n 2\n(1 row)\n\n"));
    assert_eq!(code, 0);
    // A meta-command error stops too.
    let (out, _, code) = run(&["-v", "ON_ERROR_STOP=1"], "\\foo\nselect 1;\n");
    assert_eq!((out.as_str(), code), ("", 3));
}

#[test]
fn missing_script_and_bad_flags_exit_1() {
    let (_, err, code) = run(&["-f", "/nonexistent/x.sql"], "");
    assert_eq!(
        err,
        "heapdb: error: /nonexistent/x.sql: No such file or directory\n"
    );
    assert_eq!(code, 1);
    let (_, err, code) = run(&["-Z"], "");
    assert!(err.starts_with("heapdb: invalid option -- 'Z'"), "{err}");
    assert_eq!(code, 1);
}

#[test]
fn timing_lines_follow_psql() {
    let (out, _, _) = run(&[], "\\timing\nselect 1 as a;\n\\timing verbose\ncreate table t (a int);\n\\timing off\nselect 1 as a;\n");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Timing is on.");
    let t = lines[6];
    assert!(t.starts_with("Time: ") && t.ends_with(" ms"), "{t}");
    let ms = &t["Time: ".len()..t.len() - 3];
    assert_eq!(ms.split('.').nth(1).map(str::len), Some(3), "{t}");
    assert!(ms.parse::<f64>().is_ok(), "{t}");
    assert_eq!(lines[7], "Timing is verbose.");
    assert_eq!(lines[8], "CREATE TABLE");
    let v = lines[9];
    assert!(v.starts_with("Time: ") && v.contains(" ms (parse "), "{v}");
    assert!(v.contains(", plan ") && v.contains(", execute "), "{v}");
    assert!(
        v.contains("; shared hit=") && v.contains(" written=") && v.ends_with(')'),
        "{v}"
    );
    assert_eq!(lines[10], "Timing is off.");
    assert!(!lines[11..].iter().any(|l| l.starts_with("Time:")));
}

#[test]
fn unaligned_tuples_only_and_csv_output() {
    let setup = "create table t (a int, b text);\ninsert into t values (1, 'x,y'), (2, null);\n";
    let q = format!("{setup}select * from t order by a;\n");
    let (out, _, _) = run(&["-q", "-A", "-t", "-F", ";"], &q);
    assert_eq!(out, "1;x,y\n2;\n");
    let (out, _, _) = run(&["-q", "-A"], &q);
    assert_eq!(out, "a|b\n1|x,y\n2|\n(2 rows)\n");
    let (out, _, _) = run(&["-q", "--csv"], &q);
    assert_eq!(out, "a,b\n1,\"x,y\"\n2,\n");
    let (out, _, _) = run(
        &["-q"],
        &format!("{setup}\\pset null '(null)'\n\\x\nselect * from t order by a;\n"),
    );
    assert_eq!(
        out,
        "-[ RECORD 1 ]\na | 1\nb | x,y\n-[ RECORD 2 ]\na | 2\nb | (null)\n\n"
    );
}

#[test]
fn include_files_relative_and_absolute() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).expect("mkdir");
    std::fs::write(sub.join("inner.sql"), "select 'inner' as w;\n").expect("write");
    std::fs::write(
        sub.join("outer.sql"),
        "\\ir inner.sql\nselect 'outer' as w;\n",
    )
    .expect("write");
    let data = dir.path().join("data");
    let outer = sub.join("outer.sql");
    let script = format!(
        "\\i {}\n\\i nosuch.sql\nselect 'end' as w;\n",
        outer.display()
    );
    let (out, err, code) = texts(run_in(&data, &[], &script));
    assert_eq!(
        out,
        "   w   \n-------\n inner\n(1 row)\n\n   w   \n-------\n outer\n(1 row)\n\n  w  \n-----\n end\n(1 row)\n\n"
    );
    assert_eq!(err, "nosuch.sql: No such file or directory\n");
    assert_eq!(code, 0);
}

#[test]
fn output_file_takes_results_but_not_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("out.txt");
    let data = dir.path().join("data");
    let script = format!(
        "\\o {}\nselect 1 as a;\nselect nosuch;\n\\o\nselect 2 as b;\n",
        file.display()
    );
    let (out, err, _) = texts(run_in(&data, &[], &script));
    assert_eq!(out, " b \n---\n 2\n(1 row)\n\n");
    assert!(err.starts_with("ERROR:  column \"nosuch\""));
    assert_eq!(
        std::fs::read_to_string(&file).expect("read"),
        " a \n---\n 1\n(1 row)\n\n"
    );
}

#[test]
fn describe_lists_and_describes_tables() {
    let (out, err, _) = run(
        &[],
        "\\d\ncreate table t (a int not null default 3, b text);\n\\dt\n\\d T\n\\d nosuch\n\\conninfo\n",
    );
    assert_eq!(
        err,
        "Did not find any relations.\nDid not find any relation named \"nosuch\".\n"
    );
    let expected = "CREATE TABLE\n\
                    \x20                List of relations\n\
                    \x20Name | Type  | Rows (estimated) | Pages |  Size   \n\
                    ------+-------+------------------+-------+---------\n\
                    \x20t    | table |                  |     0 | 0 bytes\n\
                    (1 row)\n\n\
                    \x20                Table \"public.t\"\n\
                    \x20Column |  Type   | Collation | Nullable | Default \n\
                    --------+---------+-----------+----------+---------\n\
                    \x20a      | integer |           | not null | 3\n\
                    \x20b      | text    |           |          | \n\n";
    assert!(out.starts_with(expected), "{out}");
    assert!(
        out.contains("You are connected to database \"") && out.contains("(heapdb "),
        "{out}"
    );
}

#[test]
fn describe_plus_shows_the_packed_columns_held() {
    let (out, err, _) = run(
        &[],
        "create table t (a int, b int, c date, s text);\n\
         insert into t select g, g % 10, date '2000-01-01' + g, 'x' from generate_series(1, 2000) g;\n\
         vacuum t;\n\\d+ t\n\
         set enable_page_summaries = off;\nselect count(*) from t where b > 4;\n\\d+ t\n",
    );
    assert_eq!(err, "");
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("Packed columns:"))
        .collect();
    assert_eq!(
        lines.first().copied(),
        Some("Packed columns: a (none), b (none), c (none)"),
        "{out}"
    );
    let held = lines.get(1).copied().unwrap_or_default();
    assert!(
        held.starts_with("Packed columns: a (none), b (")
            && held.ends_with(" bytes), c (none)")
            && held.contains(" pages, "),
        "{out}"
    );
}

#[test]
fn locked_data_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let _db = heapdb::database::Database::open(dir.path()).expect("open");
    let (_, err, code) = texts(run_in(dir.path(), &["-c", "select 1"], ""));
    assert!(err.starts_with("heapdb: error: data directory \""), "{err}");
    assert!(err.contains("is in use by another heapdb process"), "{err}");
    assert_eq!(code, 1);
}

#[test]
fn variables_substitute_and_echo() {
    let (out, _, _) = run(
        &["-q", "-v", "n=42", "-e"],
        "select :n as v, :'n' as s;\n\\echo done :n\n",
    );
    assert_eq!(
        out,
        "select 42 as v, '42' as s;\n v  | s  \n----+----\n 42 | 42\n(1 row)\n\ndone 42\n"
    );
}

#[test]
fn sigint_cancels_the_running_statement_and_the_script_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start heapdb");
    let mut input = child.stdin.take().expect("stdin piped");
    let before = common::cpu_time(child.id());
    input
        .write_all(b"select count(*) from generate_series(1, 10000000000);\nselect 2 as after;\n")
        .expect("write");
    // Keep stdin open until the signal is sent, so the script is still
    // running; signal once the statement is computing (a signal between
    // statements ends a script with status 130).
    common::wait_for_cpu(child.id(), before, Duration::from_millis(400));
    // SAFETY: signalling our own child process by its id.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    drop(input);
    let (out, err, code) = texts(child.wait_with_output().expect("heapdb runs"));
    assert_eq!(err, "ERROR:  canceling statement due to user request\n");
    assert_eq!(out, " after \n-------\n     2\n(1 row)\n\n");
    assert_eq!(code, 0);
}

#[test]
fn piped_input_that_waits_for_output_gets_it_before_the_shell_reads_on() {
    // A client (the bench, a driver script) writes a statement and a marker,
    // then waits for the marker before writing more: the shell must flush
    // its output before it blocks reading the pipe.
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.path())
        .args(["-X", "-q", "-A", "-t"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start heapdb");
    let mut input = child.stdin.take().expect("stdin piped");
    let out = child.stdout.take().expect("stdout piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            if tx.send(line.expect("utf-8 line")).is_err() {
                return;
            }
        }
    });
    let next = || {
        rx.recv_timeout(Duration::from_secs(20))
            .expect("output arrives")
    };
    for round in 1..=2 {
        writeln!(input, "select {round} * 21;\n\\echo mark{round}").expect("write");
        input.flush().expect("flush");
        assert_eq!(next(), (round * 21).to_string());
        assert_eq!(next(), format!("mark{round}"));
    }
    drop(input);
    assert!(child.wait().expect("heapdb exits").success());
}

#[test]
fn a_script_read_ahead_keeps_query_buffer_copy_data_and_variables_in_order() {
    // Piped scripts are read and split on a second thread: the items that
    // use the reader (\g's query buffer, COPY data lines, a variable that
    // turns into a COPY) must find it where a one-thread loop leaves it.
    let script = "create table t (a int, b text);\n\
        insert into t values (1, 'one');\n\
        insert into t values (2, 'two');\n\
        \\set c 'copy t from stdin'\n\
        :c;\n\
        3\tthree\n\
        \\.\n\
        insert into t values (4, 'fo:ur');\n\
        select count(*) from t where a <\n\
        5 \\g\n\
        copy t from stdin;\n\
        5\tfive\n\
        \\.\n\
        insert into t values (6, 'six'); \\echo after six\n\
        select a, b from t order by a;\n\
        \\p\n";
    let (out, err, code) = run(&["-q", "-A", "-t"], script);
    assert_eq!(err, "");
    assert_eq!(
        out,
        "4\nafter six\n1|one\n2|two\n3|three\n4|fo:ur\n5|five\n6|six\nselect a, b from t order by a;\n"
    );
    assert_eq!(code, 0);
}

#[test]
fn cd_does_not_move_a_relative_data_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let away = elsewhere.path().to_str().expect("utf-8 path");
    let o = Command::new(BIN)
        .current_dir(dir.path())
        .args(["-D", "data", "-q"])
        .env_remove("HEAPDB_DATA")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            let script = format!(
                "create table t (a int);\n\\cd {away}\ncreate table u (b int);\n\
                 insert into t values (1);\ninsert into u values (2);\n\
                 select a, b from t, u;\n"
            );
            c.stdin
                .take()
                .expect("stdin")
                .write_all(script.as_bytes())?;
            c.wait_with_output()
        })
        .expect("heapdb runs");
    let (out, err, code) = texts(o);
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        (" a | b \n---+---\n 1 | 2\n(1 row)\n\n", "", 0)
    );
    // Nothing was written under the directory `\cd` moved to.
    assert_eq!(
        std::fs::read_dir(elsewhere.path()).expect("list").count(),
        0
    );
}

#[test]
fn shell_escape_runs_in_order_and_cd_moves_both_shells() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).expect("mkdir");
    let sub_s = sub.to_str().expect("utf-8 path");
    let script = format!(
        "select 1 as a;\n\\! echo from-sh; exit 3\nselect 2 as b;\n\
         \\cd {sub_s}\n\\! pwd\n\\o out.txt\nselect 3 as c;\n\\o\n\
         \\cd /heapdb/no/such/dir\n\\! heapdb-no-such-command-anywhere 2>/dev/null\n\\! pwd\n"
    );
    let (out, err, code) = texts(run_in(&dir.path().join("data"), &[], &script));
    // The child's output lands between the statements' (stdout is flushed
    // first), a non-zero exit status is not an error, and `\o out.txt`
    // opens its file in the directory `\cd` moved to.
    assert_eq!(
        out,
        format!(" a \n---\n 1\n(1 row)\n\nfrom-sh\n b \n---\n 2\n(1 row)\n\n{sub_s}\n{sub_s}\n")
    );
    assert_eq!(
        std::fs::read_to_string(sub.join("out.txt")).expect("\\o wrote in the new directory"),
        " c \n---\n 3\n(1 row)\n\n"
    );
    assert_eq!(
        err,
        "\\cd: could not change directory to \"/heapdb/no/such/dir\": No such file or directory\n\
         \\!: failed\n"
    );
    assert_eq!(code, 0);
}

#[test]
fn setenv_and_getenv_reach_shell_escapes_and_variables() {
    let (out, err, code) = run(
        &[],
        "\\setenv HEAPDB_CLI_T 'two words'\n\\! echo \"[$HEAPDB_CLI_T]\"\n\
         \\getenv v HEAPDB_CLI_T\n\\echo :v\n\
         \\setenv HEAPDB_CLI_T\n\\! echo \"[$HEAPDB_CLI_T]\"\n\
         \\set w kept\n\\getenv w HEAPDB_CLI_T\n\\echo :w\n\
         \\setenv a=b c\n\\getenv onlyone\n",
    );
    assert_eq!(out, "[two words]\ntwo words\n[]\nkept\n");
    assert_eq!(
        err,
        "\\setenv: environment variable name must not contain \"=\"\n\
         \\getenv: missing required argument\n"
    );
    assert_eq!(code, 0);
}

#[test]
fn gx_expands_one_query_and_reruns_the_last() {
    let (out, err, code) = run(
        &[],
        "select 1 as a, 2 as b \\gx\nselect 3 as c;\n\\gx\n\\x\nselect 4 as d \\gx\nselect 5 as e;\n",
    );
    // `\gx` expands its query only; with nothing in the buffer it re-runs
    // the last one; under `\x` it leaves expanded output on.
    assert_eq!(
        out,
        "-[ RECORD 1 ]\na | 1\nb | 2\n\n c \n---\n 3\n(1 row)\n\n-[ RECORD 1 ]\nc | 3\n\n\
         Expanded display is on.\n-[ RECORD 1 ]\nd | 4\n\n-[ RECORD 1 ]\ne | 5\n\n"
    );
    assert_eq!((err.as_str(), code), ("", 0));
}

/// Runs heapdb in a fresh data directory on `stdin` as raw bytes.
fn run_bytes(args: &[&str], stdin: &[u8]) -> (String, String, i32) {
    let dir = tempfile::tempdir().expect("temp dir");
    let o = common::feed(common::shell_command(dir.path(), args), stdin);
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

#[test]
fn invalid_utf8_fails_its_statement_and_the_script_goes_on() {
    // psql 15 against PostgreSQL 15 printed exactly this, and exited 0.
    let script = b"select 1 as a;\nselect 'a\xffb' as x;\nselect 'x\xc3(' ;\nselect 2 as b;\n";
    let (out, err, code) = run_bytes(&[], script);
    assert_eq!(out, " a \n---\n 1\n(1 row)\n\n b \n---\n 2\n(1 row)\n\n");
    assert_eq!(
        err,
        "ERROR:  invalid byte sequence for encoding \"UTF8\": 0xff\n\
         ERROR:  invalid byte sequence for encoding \"UTF8\": 0xc3 0x28\n"
    );
    assert_eq!(code, 0);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.sql");
    std::fs::write(&path, script).expect("write script");
    let (_, err, code) = run_bytes(&["-f", path.to_str().expect("utf-8 path")], b"");
    let name = path.display();
    assert_eq!(
        err,
        format!(
            "heapdb:{name}:2: ERROR:  invalid byte sequence for encoding \"UTF8\": 0xff\n\
             heapdb:{name}:3: ERROR:  invalid byte sequence for encoding \"UTF8\": 0xc3 0x28\n"
        )
    );
    assert_eq!(code, 0);
    // Under ON_ERROR_STOP it stops the script with status 3, as psql.
    let (out, _, code) = run_bytes(&["-v", "ON_ERROR_STOP=1"], script);
    assert_eq!(out, " a \n---\n 1\n(1 row)\n\n");
    assert_eq!(code, 3);
}

#[test]
fn invalid_utf8_inside_a_block_aborts_it() {
    let script = b"create table t (a text);\nbegin;\ninsert into t values ('ok');\n\
                   insert into t values ('\xe9t\xe9');\ncommit;\nselect count(*) from t;\n";
    let (out, err, _) = run_bytes(&["-q", "-t"], script);
    assert_eq!(out, "     0\n\n");
    assert_eq!(
        err,
        "ERROR:  invalid byte sequence for encoding \"UTF8\": 0xe9 0x74 0xe9\n"
    );
}

#[test]
fn blank_lines_inside_literals_quoted_names_and_comments_are_kept() {
    let script = "create table \"a\n\nb\" (v text);\n\
                  insert into \"a\n\nb\" values ('x\n\ny'), ($$p\n\n\nq$$), (E'e\n\nf');\n\
                  select /* one\n\ntwo */ length(v), v from \"a\n\nb\" order by v;\n";
    let (out, err, code) = run(&["-A", "-t", "-q"], script);
    assert_eq!(err, "");
    assert_eq!(out, "4|e\n\nf\n5|p\n\n\nq\n4|x\n\ny\n");
    assert_eq!(code, 0);
}

#[test]
fn a_syntax_error_inside_a_block_aborts_it() {
    let (out, err, code) = run(
        &[],
        "begin;\ncreate table tt (a int);\ninsert into tt values (1);\nselec oops;\n\
         select 1;\ncommit;\nselect * from tt;\n",
    );
    assert_eq!(out, "BEGIN\nCREATE TABLE\nINSERT 0 1\nROLLBACK\n");
    assert_eq!(
        err,
        "ERROR:  syntax error at or near \"selec\"\nLINE 1: selec oops;\n        ^\n\
         ERROR:  current transaction is aborted, commands ignored until end of transaction block\n\
         ERROR:  relation \"tt\" does not exist\nLINE 1: select * from tt;\n                      ^\n"
    );
    assert_eq!(code, 0);
}

#[test]
fn gset_and_conditionals_follow_psql() {
    // psql 15 printed exactly this for the same script.
    let script = "select 10 as a, 'x y' as b, null as c \\gset p_\n\
        \\echo :p_a :p_b :p_c\n\
        select 1 as n from generate_series(1,2) \\gset\n\
        select 1 as n where false \\gset\n\
        select 2 as x \\gset \\echo :x\n\
        select true as ok \\gset\n\
        \\if :ok\n  \\if no\n    select 'skipped' as s;\n    \\echo :nosuch\n\
          \\elif 1\n    select 'elif ran' as s;\n  \\else\n    \\echo not here\n  \\endif\n\
        \\else\n  \\quit\n\\endif\n\
        \\if maybe\n  \\echo no\n\\endif\n\
        select 'partial'\n\\if off\nselect 'dropped'\n\\endif\nas kept;\n\
        \\else\n\\if true\n\\quit\n\\endif\nselect 'not reached' as r;\n";
    let (out, err, code) = run(&["-q"], script);
    assert_eq!(
        out,
        "10 x y :p_c\n2\n    s     \n----------\n elif ran\n(1 row)\n\n  kept   \n---------\n partial\n(1 row)\n\n"
    );
    assert_eq!(
        err,
        "more than one row returned for \\gset\nno rows returned for \\gset\n\
         unrecognized value \"maybe\" for \"\\if expression\": Boolean expected\n\
         \\else: no matching \\if\n"
    );
    assert_eq!(code, 0);
}

#[test]
fn echo_all_skips_empty_lines_outside_literals() {
    let script = "-- a\n\nselect 1 as a;\n\n\n\\if false\n\nselect 'x\n\ny';\n\\endif\n\n";
    let (out, _, _) = run(&["-a", "-q"], script);
    assert_eq!(
        out,
        "-- a\nselect 1 as a;\n a \n---\n 1\n(1 row)\n\n\\if false\nselect 'x\n\ny';\n\\endif\n"
    );
}

#[test]
fn pgtz_pgdatestyle_and_pgoptions_are_the_session_defaults() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "show timezone;\nshow datestyle;\nshow IntervalStyle;\n\
                  set timezone = 'europe/london';\nshow TimeZone;\nreset timezone;\nshow timezone;\n";
    let o = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.path())
        .args(["-q", "-A", "-t"])
        .env_remove("HEAPDB_DATA")
        .env("PGTZ", "America/Los_Angeles")
        .env("PGDATESTYLE", "Postgres, MDY")
        .env("PGOPTIONS", "-c intervalstyle=postgres_verbose")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin
                .take()
                .expect("stdin piped")
                .write_all(script.as_bytes())?;
            c.wait_with_output()
        })
        .expect("heapdb runs");
    let (out, err, code) = texts(o);
    assert_eq!(err, "");
    let zone_files = Path::new("/usr/share/zoneinfo/Europe/London").exists();
    if zone_files {
        assert_eq!(
            out,
            "America/Los_Angeles\nPostgres, MDY\npostgres_verbose\nEurope/London\nAmerica/Los_Angeles\n"
        );
    }
    assert_eq!(code, 0);
    // A value the server would refuse refuses the start.
    let o = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.path())
        .args(["-c", "select 1"])
        .env_remove("HEAPDB_DATA")
        .env("PGTZ", "nosuch")
        .output()
        .expect("heapdb runs");
    let (out, err, code) = texts(o);
    assert_eq!(out, "");
    assert_eq!(
        err,
        "heapdb: error: invalid value for parameter \"TimeZone\": \"nosuch\"\n"
    );
    assert_eq!(code, 1);
}

#[test]
fn client_min_messages_hides_notices_and_connect_starts_a_new_session() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (out, err, code) = texts(run_in(
        &dir.path().join("db"),
        &["-q"],
        "set client_min_messages = warning;\ndrop table if exists nosuch;\n\
         reset client_min_messages;\ndrop table if exists nosuch;\n\
         set work_mem = '1MB';\nbegin;\ncreate table t (a int);\n\\c -\n\
         show work_mem;\nselect * from t;\n\\c other\n\\connect - bob\n",
    ));
    assert_eq!(out, " work_mem \n----------\n 4MB\n(1 row)\n\n");
    assert_eq!(
        err,
        "NOTICE:  table \"nosuch\" does not exist, skipping\n\
         ERROR:  relation \"t\" does not exist\nLINE 1: select * from t;\n                      ^\n\
         \\connect: database \"other\" does not exist (heapdb serves \"db\" only)\n\
         Previous connection kept\n\
         \\connect: role \"bob\" does not exist (heapdb has no roles)\nPrevious connection kept\n"
    );
    assert_eq!(code, 0);
}

#[test]
fn backslash_semicolon_sends_several_statements_as_one_string() {
    // psql 15 and PostgreSQL 15 printed the same for this script: every
    // result shown, the first error ends the string, and outside a block
    // the string is one transaction (the first INSERT is undone).
    let (out, err, code) = run(
        &["-q"],
        "create table semi (a int);\n\
         select 1 as one \\; select 2 as two;\n\
         insert into semi values (1) \\; select 1/0 \\; insert into semi values (2);\n\
         select count(*) from semi;\n\
         select 5 \\; select 6 + \\; select 7;\n\
         begin \\; insert into semi values (3) \\; select 9/0 as nine \\; rollback \\; select 10 as ten;\n\
         rollback;\nselect count(*) from semi;\n\
         copy (select 1) to stdout\\; select 3 as three;\n",
    );
    assert_eq!(
        out,
        " one \n-----\n   1\n(1 row)\n\n two \n-----\n   2\n(1 row)\n\n\
         \x20count \n-------\n     0\n(1 row)\n\n\
         \x20count \n-------\n     0\n(1 row)\n\n1\n three \n-------\n     3\n(1 row)\n\n"
    );
    assert_eq!(
        err,
        "ERROR:  division by zero\n\
         ERROR:  syntax error at or near \";\"\nLINE 1: select 5 ; select 6 + ; select 7;\n                              ^\n\
         ERROR:  division by zero\n"
    );
    assert_eq!(code, 0);
}

/// psql shows a statement's notices as they arrive: before its rows and
/// before its error. Both streams go to one file here, as `2>&1` would.
#[test]
fn notices_come_before_the_rows_and_the_error_of_their_statement() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.txt");
    let file = std::fs::File::create(&out_path).unwrap();
    let mut c = common::shell_command(&dir.path().join("data"), &["-X", "-q"]);
    c.stdout(Stdio::from(file.try_clone().unwrap()))
        .stderr(Stdio::from(file));
    let o = common::feed(
        c,
        b"create function f(x int) returns int language plpgsql as \
          $$ begin raise notice 'saw %', x; return x; end $$;\n\
          select f(1);\n\
          select f(2) + 2147483647;\n\
          drop table if exists nosuch;\n",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "a failed statement of a piped script does not stop it"
    );
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert_eq!(
        text,
        "NOTICE:  saw 1\n f \n---\n 1\n(1 row)\n\n\
         NOTICE:  saw 2\nERROR:  integer out of range\n\
         NOTICE:  table \"nosuch\" does not exist, skipping\n"
    );
}

#[test]
fn di_lists_indexes_with_psql_columns() {
    let (out, _, _) = run(
        &["-q"],
        "create table t (a int constraint t_a primary key, b int unique);\n\\di\n\\di *_key\n",
    );
    let expected = "             List of relations\n\
                    \x20Schema |  Name   | Type  | Owner  | Table \n\
                    --------+---------+-------+--------+-------\n\
                    \x20public | t_a     | index | heapdb | t\n\
                    \x20public | t_b_key | index | heapdb | t\n\
                    (2 rows)\n\n\
                    \x20            List of relations\n\
                    \x20Schema |  Name   | Type  | Owner  | Table \n\
                    --------+---------+-------+--------+-------\n\
                    \x20public | t_b_key | index | heapdb | t\n\
                    (1 row)\n\n";
    assert_eq!(out, expected);
}
