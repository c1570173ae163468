//! External synchrony of the `heapdb` shell under SIGKILL: a script piped
//! into the shell with `synchronous_commit = on` has its commits flushed
//! only before the shell writes output (see `heapdb::shell::external_sync`), so every
//! INSERT whose command tag the harness read must survive a kill at a
//! random moment; rows whose tags were never read may or may not. The rows
//! present are always a prefix of the script (autocommitted statements
//! commit in order). The same holds with `-v COMMIT_ACK=immediate`.
//!
//! Rounds: `HEAPDB_CRASH_SHELL_ROUNDS` (default 4).

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use heapdb::settings::Settings;
use heapdb::Database;

mod common;

/// splitmix64, for the kill points.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The rows of `t` after recovery: (count, min, max).
fn recovered(dir: &Path) -> (i64, i64, i64) {
    let db = Database::open_with(
        dir,
        Settings {
            shared_buffers: 256,
            ..Settings::default()
        },
    )
    .unwrap();
    let mut s = db.session();
    let r = s
        .execute("SELECT count(*), coalesce(min(id), 0), coalesce(max(id), 0) FROM t")
        .unwrap();
    let n = |i: usize| r.rows[0][i].to_string().parse::<i64>().unwrap();
    let out = (n(0), n(1), n(2));
    // The database takes new writes after recovery.
    s.execute("INSERT INTO t VALUES (-1)").unwrap();
    out
}

/// Pipes `statements` INSERTs into a shell, kills it after reading
/// `kill_after` INSERT tags, and checks the recovered table.
fn round(dir: &Path, extra_args: &[&str], statements: u32, kill_after: u32) {
    let mut child = common::shell_command(dir, extra_args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let mut script =
            String::from("CREATE TABLE t (id int NOT NULL);\nSET synchronous_commit = on;\n");
        for i in 1..=statements {
            script.push_str(&format!("INSERT INTO t VALUES ({i});\n"));
        }
        // The child is killed while reading: a broken pipe is expected.
        let _ = stdin.write_all(script.as_bytes());
    });
    let mut acked = 0u32;
    let lines = common::Lines::of(&mut child);
    while acked < kill_after {
        match lines.next() {
            Some(l) if l == "INSERT 0 1" => acked += 1,
            Some(_) => {}
            None => break,
        }
    }
    common::kill9(child);
    writer.join().unwrap();
    let (count, min, max) = recovered(dir);
    assert!(
        count >= i64::from(acked),
        "{extra_args:?}: {acked} commits were reported, {count} rows survived"
    );
    if count > 0 {
        assert_eq!((min, max), (1, count), "{extra_args:?}: not a prefix");
    }
}

#[test]
fn reported_commits_survive_a_kill() {
    let rounds: u64 = std::env::var("HEAPDB_CRASH_SHELL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let base = tempfile::tempdir().unwrap();
    for r in 0..rounds {
        let seed = mix(r + 1);
        // Deferred acknowledgements: output leaves in 64 KiB pieces
        // (about 5,900 tags each), each preceded by a flush.
        let dir = base.path().join(format!("deferred{r}"));
        round(&dir, &[], 60_000, 3_000 + (seed % 30_000) as u32);
        // Every commit waits for its flush.
        let dir = base.path().join(format!("immediate{r}"));
        round(
            &dir,
            &["-v", "COMMIT_ACK=immediate"],
            2_000,
            50 + (seed % 300) as u32,
        );
    }
}

/// A script that ends normally leaves every row durable: the exit status
/// acknowledges them, so the shell flushes before it exits, even with
/// nothing printed (`-q`).
#[test]
fn a_quiet_script_is_durable_at_exit() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("db");
    let script = base.path().join("s.sql");
    let mut text = String::from("CREATE TABLE t (id int NOT NULL);\n");
    for i in 1..=500 {
        text.push_str(&format!("INSERT INTO t VALUES ({i});\n"));
    }
    std::fs::write(&script, text).unwrap();
    let script = script.to_str().expect("a UTF-8 temp path");
    let out = common::shell_command(&dir, &["-q", "-f", script])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    assert_eq!(recovered(&dir), (500, 1, 500));
}
