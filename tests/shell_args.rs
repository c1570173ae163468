//! The `heapdb` binary's command line: `--version`, `--help`, and psql's
//! error lines with exit status 1 for bad flags (psql 15 printed
//! `psql: invalid option -- 'Z'` and the `Try "psql --help"` hint).

use std::process::Command;

mod common;

fn heapdb(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(common::BIN)
        .args(args)
        .env_remove("HEAPDB_DATA")
        .output()
        .expect("run heapdb");
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

#[test]
fn version_and_help_exit_zero() {
    let (code, out, _) = heapdb(&["--version"]);
    assert_eq!(
        (code, out),
        (0, format!("heapdb {}\n", env!("CARGO_PKG_VERSION")))
    );
    let (code, out, _) = heapdb(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("  -c, --command=COMMAND"), "{out}");
    let (code, out, _) = heapdb(&["--help=commands"]);
    assert_eq!(code, 0);
    assert!(out.contains("\\timing [on|off|verbose]"), "{out}");
}

#[test]
fn bad_flags_exit_one_with_psqls_wording() {
    let (code, out, err) = heapdb(&["-Z"]);
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert_eq!(
        err,
        "heapdb: invalid option -- 'Z'\nheapdb: hint: Try \"heapdb --help\" for more information.\n"
    );
    let (code, _, err) = heapdb(&["--file"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("heapdb: option '--file' requires an argument\n"),
        "{err}"
    );
    let (code, _, err) = heapdb(&["--shared-buffers", "lots"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("heapdb: error: invalid value for parameter \"shared_buffers\""),
        "{err}"
    );
}
