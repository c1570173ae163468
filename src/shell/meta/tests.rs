//! Meta-command tests. Expected output lines are what psql 15 printed for
//! the same lines run from a script file (`psql -X -f m.sql`), with psql's
//! `psql:m.sql:N: error: ` prefix left to the wiring.

use super::*;

/// Runs meta-command lines through a fresh state; returns what psql would
/// show: stdout lines and `error: ` / `warning: ` lines, in order.
fn session(lines: &[&str]) -> String {
    let mut st = ShellState::default();
    session_with(&mut st, lines)
}

fn session_with(st: &mut ShellState, lines: &[&str]) -> String {
    let mut shown = Vec::new();
    for line in lines {
        for parsed in parse_meta_line(line, &st.vars) {
            match parsed {
                Err(e) => shown.extend_from_slice(format!("error: {e}\n").as_bytes()),
                Ok(m) => {
                    for w in &m.warnings {
                        shown.extend_from_slice(format!("warning: {w}\n").as_bytes());
                    }
                    match st.execute(m.command, &mut shown) {
                        Ok(Outcome::Continue) => {}
                        Ok(other) => shown.extend_from_slice(format!("=> {other:?}\n").as_bytes()),
                        Err(e) => shown.extend_from_slice(format!("error: {e}\n").as_bytes()),
                    }
                }
            }
        }
    }
    String::from_utf8(shown).expect("utf-8")
}

#[test]
fn echo_quoting_and_variables() {
    let out = session(&[
        r#"\echo a 'b  c' "d e" a'x y'b :x"#,
        r"\set v 'hello'",
        r"\set w a b c",
        r#"\echo :v :'v' :"v" :w :nosuch :'nosuch'"#,
        r"\echo 'a\nb\tc' 'it''s'",
        r"\echo -n no newline",
        r"\echo",
    ]);
    assert_eq!(
        out,
        "a b  c \"d e\" ax yb :x\nhello 'hello' \"hello\" abc :nosuch :'nosuch'\na\nb\tc it's\nno newline\n"
    );
}

#[test]
fn set_errors_and_steering_variables() {
    let mut st = ShellState::default();
    let out = session_with(
        &mut st,
        &[
            r"\set x-y 1",
            r"\set ON_ERROR_STOP foo",
            r"\set FETCH_COUNT abc",
            r"\unset",
            r"\i",
            r"\set ON_ERROR_STOP",
            r"\echo :ON_ERROR_STOP",
            r"\set FETCH_COUNT 10",
            r"\set QUIET",
            r"\set ECHO foo",
        ],
    );
    assert_eq!(
        out,
        "error: invalid variable name: \"x-y\"\n\
         error: unrecognized value \"foo\" for \"ON_ERROR_STOP\": Boolean expected\n\
         error: invalid value \"abc\" for \"FETCH_COUNT\": integer expected\n\
         error: \\unset: missing required argument\n\
         error: \\i: missing required argument\n\
         on\n\
         error: unrecognized value \"foo\" for \"ECHO\"\nAvailable values are: none, errors, queries, all.\n"
    );
    assert!(st.on_error_stop && st.quiet);
    assert_eq!(st.print.fetch_count, 10);
    session_with(
        &mut st,
        &[
            r"\unset ON_ERROR_STOP",
            r"\unset FETCH_COUNT",
            r"\set ECHO queries",
        ],
    );
    assert!(!st.on_error_stop);
    assert_eq!(st.print.fetch_count, 0);
    assert_eq!(st.echo, Echo::Queries);
}

#[test]
fn pset_messages() {
    let out = session(&[
        r"\pset border 2",
        r"\pset border",
        r"\pset null '(nil)'",
        r"\pset null",
        r"\pset format csv",
        r"\pset format aligned",
        r"\pset format foo",
        r"\pset tuples_only",
        r"\pset tuples_only",
        r"\pset footer off",
        r"\pset fieldsep ';'",
        r"\pset foo",
        r"\x",
        r"\x",
        r"\x auto",
        r"\x foo",
        r"\timing",
        r"\timing off",
        r"\timing foo",
    ]);
    assert_eq!(
        out,
        "Border style is 2.\nBorder style is 2.\nNull display is \"(nil)\".\nNull display is \"(nil)\".\n\
         Output format is csv.\nOutput format is aligned.\n\
         error: \\pset: allowed formats are aligned, csv, unaligned\n\
         Tuples only is on.\nTuples only is off.\nField separator is \";\".\n\
         error: \\pset: unknown option: foo\n\
         Expanded display is on.\nExpanded display is off.\nExpanded display is used automatically.\n\
         error: unrecognized value \"foo\" for \"expanded\"\nAvailable values are: on, off, auto.\n\
         Timing is on.\nTiming is off.\n\
         error: unrecognized value \"foo\" for \"\\timing\": Boolean expected\nTiming is off.\n"
    );
}

#[test]
fn more_pset_messages() {
    let out = session(&[
        r"\pset footer",
        r"\pset footer",
        r"\pset footer on",
        r"\pset tuples_only foo",
        r"\pset border 7",
        r"\pset border x",
        r"\pset expanded",
        r"\pset recordsep",
        r"\pset recordsep 'x'",
        r"\pset csv_fieldsep ';;'",
        r"\pset csv_fieldsep",
        r"\pset columns",
        r"\pset columns 80",
        r"\pset format u",
        r"\t",
        r"\t",
        r"\a",
        r"\a",
        r"\x on",
        r"\x",
        r"\pset title",
        r"\pset title 'My T'",
        r"\pset title",
    ]);
    assert_eq!(
        out,
        "Default footer is off.\nDefault footer is on.\n\
         error: unrecognized value \"foo\" for \"tuples_only\": Boolean expected\n\
         Border style is 7.\nBorder style is 0.\nExpanded display is on.\n\
         Record separator is <newline>.\nRecord separator is \"x\".\n\
         error: \\pset: csv_fieldsep must be a single one-byte character\n\
         Field separator for CSV is \",\".\nTarget width is unset.\nTarget width is 80.\n\
         Output format is unaligned.\nTuples only is on.\nTuples only is off.\n\
         Output format is aligned.\nOutput format is unaligned.\n\
         Expanded display is on.\nExpanded display is off.\n\
         Title is unset.\nTitle is \"My T\".\nTitle is unset.\n"
    );
}

#[test]
fn quiet_suppresses_confirmations() {
    let mut st = ShellState::default();
    st.set_var("QUIET", Some("on")).unwrap();
    assert_eq!(
        session_with(&mut st, &[r"\pset border 2", r"\x", r"\timing"]),
        ""
    );
    assert_eq!(st.print.border, 2);
}

#[test]
fn pset_listing_format() {
    let mut st = ShellState::default();
    session_with(
        &mut st,
        &[
            r"\pset null '(nil)'",
            r"\pset fieldsep ';'",
            r"\pset footer off",
            r"\pset border 2",
        ],
    );
    // psql 15 printed these lines (among its other options) for `\pset`.
    let l = st.pset_listing();
    for line in [
        "border                   2\n",
        "columns                  0\n",
        "csv_fieldsep             ','\n",
        "expanded                 off\n",
        "fieldsep                 ';'\n",
        "footer                   off\n",
        "format                   aligned\n",
        "null                     '(nil)'\n",
        "recordsep                '\\n'\n",
        "tuples_only              off\n",
    ] {
        assert!(l.contains(line), "{line:?} in {l}");
    }
}

#[test]
fn engine_commands_and_warnings() {
    let out = session(&[
        r"\dt+ foo bar",
        r"\d t",
        r"\foo",
        r"\copy t from 'x.csv' with (format csv)",
        r"\h select",
        r"\q extra",
        r"\i script.sql",
        r"\ir sub/x.sql",
        r"\watch 0.5",
        r"\watch abc",
        r"\pset border 2 \x",
        r"\conninfo",
    ]);
    assert_eq!(
        out,
        "warning: \\dt+: extra argument \"bar\" ignored\n\
         => Wiring(ListTables { pattern: Some(\"foo\"), plus: true })\n\
         => Wiring(Describe { pattern: Some(\"t\"), plus: false })\n\
         error: invalid command \\foo\n\
         => Wiring(Copy(\"t from 'x.csv' with (format csv)\"))\n\
         => Wiring(SqlHelp(Some(\"select\")))\n\
         warning: \\q: extra argument \"extra\" ignored\n=> Quit\n\
         => Include { path: \"script.sql\", relative: false }\n\
         => Include { path: \"sub/x.sql\", relative: true }\n\
         => Wiring(Watch(0.5))\n\
         error: \\watch: incorrect interval value \"abc\"\n\
         Border style is 2.\nExpanded display is on.\n\
         => Wiring(ConnInfo)\n"
    );
}

#[test]
fn output_redirection_and_qecho() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("out.txt");
    let p = path.to_str().expect("utf-8 path");
    let mut st = ShellState::default();
    let shown = session_with(
        &mut st,
        &[
            &format!(r"\o {p}"),
            r"\qecho to file",
            r"\echo to stdout",
            r"\o",
        ],
    );
    assert_eq!(shown, "to stdout\n");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "to file\n");
    let missing = dir.path().join("no/such/dir/f");
    let shown = session_with(&mut st, &[&format!(r"\o {}", missing.display())]);
    assert_eq!(
        shown,
        format!("error: {}: No such file or directory\n", missing.display())
    );
}

#[test]
fn quoted_argument_escapes() {
    let vars = Variables::default();
    let m = parse_meta_line(r"\echo '\x41\101\\' 'a''b'", &vars);
    match &m[..] {
        [Ok(Meta {
            command: MetaCommand::Echo { text, .. },
            ..
        })] => assert_eq!(text, "AA\\ a'b"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn state_from_command_line() {
    use crate::shell::args::{parse_args, Command};
    use crate::shell::print::{Expanded, Format};
    let args = |v: &[&str]| match parse_args(v.iter().copied(), None) {
        Ok(Command::Run(a)) => a,
        other => panic!("{other:?}"),
    };
    let st = ShellState::from_args(&args(&[
        "-qAt",
        "-F;",
        "-x",
        "-v",
        "ON_ERROR_STOP=1",
        "-v",
        "FETCH_COUNT=50",
        "-e",
    ]))
    .expect("valid flags");
    assert!(st.quiet && st.on_error_stop && st.print.tuples_only);
    assert_eq!(st.print.format, Format::Unaligned);
    assert_eq!(st.print.field_sep, ";");
    assert_eq!(st.print.expanded, Expanded::On);
    assert_eq!(st.print.fetch_count, 50);
    assert_eq!(st.echo, Echo::Queries);
    let st = ShellState::from_args(&args(&[
        "--csv",
        "-P",
        "null=(nil)",
        "-P",
        "border=2",
        "-a",
    ]))
    .unwrap();
    assert_eq!(st.print.format, Format::Csv);
    assert_eq!(st.print.null_display, "(nil)");
    assert_eq!(st.print.border, 2);
    assert_eq!(st.echo, Echo::All);
    // psql 15: `psql -P foo` printed these two lines and exited with 1.
    assert_eq!(
        ShellState::from_args(&args(&["-P", "foo"])).unwrap_err(),
        "heapdb: error: \\pset: unknown option: foo\nheapdb: error: could not set printing parameter \"foo\""
    );
    assert_eq!(
        ShellState::from_args(&args(&["-v", "ON_ERROR_STOP=maybe"])).unwrap_err(),
        "heapdb: error: unrecognized value \"maybe\" for \"ON_ERROR_STOP\": Boolean expected"
    );
}
