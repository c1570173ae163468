//! The shell when something goes wrong around the statements: an error
//! during shutdown is a failure of the run (the shell prints it and exits
//! non-zero even when every statement succeeded: the next open has to
//! recover), and invalid UTF-8 in a script's COPY data is an error of that
//! COPY only, as psql and the server make it.

mod common;
use common::shell_command;

#[test]
fn a_failed_shutdown_checkpoint_makes_the_exit_status_non_zero() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("db");
    let script = format!(
        "CREATE TABLE t (a int);\nINSERT INTO t SELECT generate_series(1, 1000);\n\\! rm -rf '{}'\n",
        dir.display()
    );
    let out = shell_command(&dir, &["-c", &script])
        .output()
        .expect("heapdb runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("INSERT 0 1000"), "{stdout}");
    // The directory is gone: the shutdown checkpoint cannot write its
    // files, and says so.
    assert!(
        stderr.contains("heapdb: error during shutdown: could not"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // The same run without the removal exits 0.
    let ok = shell_command(
        &parent.path().join("db2"),
        &[
            "-c",
            "CREATE TABLE t (a int); INSERT INTO t SELECT generate_series(1, 1000);",
        ],
    )
    .output()
    .expect("heapdb runs");
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

#[test]
fn invalid_utf8_in_copy_data_fails_only_that_copy() {
    let parent = tempfile::tempdir().unwrap();
    let script = parent.path().join("s.sql");
    let mut text = b"CREATE TABLE t (a text);\nCOPY t FROM STDIN;\nabc\n".to_vec();
    text.extend_from_slice(b"\xff\xfe bad\n\\.\nSELECT count(*) FROM t;\nSELECT 'after' AS x;\n");
    std::fs::write(&script, text).unwrap();
    let out = shell_command(&parent.path().join("db"), &["-f"])
        .arg(&script)
        .output()
        .expect("heapdb runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // psql 15 prints `psql:s.sql:5: ERROR:  invalid byte sequence for
    // encoding "UTF8": 0xff` (SQLSTATE 22021), `CONTEXT:  COPY t, line 2`.
    let prefix = format!("heapdb:{}:5: ERROR:  ", script.display());
    assert!(
        stderr.starts_with(&format!(
            "{prefix}invalid byte sequence for encoding \"UTF8\": 0xff\nCONTEXT:  COPY t, line 2"
        )),
        "{stderr}"
    );
    // The COPY loaded nothing, and the script went on.
    assert!(
        stdout.contains(" count \n-------\n     0\n(1 row)"),
        "{stdout}"
    );
    assert!(stdout.contains("after"), "{stdout}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}
