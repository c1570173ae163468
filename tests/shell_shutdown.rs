//! An error during shutdown is a failure of the run: the shell prints it
//! and exits non-zero even when every statement succeeded (the next open
//! has to recover).

use std::process::Command;

#[test]
fn a_failed_shutdown_checkpoint_makes_the_exit_status_non_zero() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("db");
    let script = format!(
        "CREATE TABLE t (a int);\nINSERT INTO t SELECT generate_series(1, 1000);\n\\! rm -rf '{}'\n",
        dir.display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_heapdb"))
        .arg("--data-dir")
        .arg(&dir)
        .args(["-c", &script])
        .env_remove("HEAPDB_DATA")
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
    let ok = Command::new(env!("CARGO_BIN_EXE_heapdb"))
        .arg("--data-dir")
        .arg(parent.path().join("db2"))
        .args([
            "-c",
            "CREATE TABLE t (a int); INSERT INTO t SELECT generate_series(1, 1000);",
        ])
        .env_remove("HEAPDB_DATA")
        .output()
        .expect("heapdb runs");
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}
