//! The interactive prompt, driven through a pseudo-terminal: psql's prompts,
//! a multi-line statement, transaction states, history across two runs,
//! tab completion of a table name, and Ctrl-C (at the prompt and during a
//! long statement), COPY data typed at the `>> ` prompt, and the progress
//! bar of a long scan (shown on a terminal, never in piped output).
//!
//! The terminal is a plain `openpty` pair (no extra crate): the child gets
//! the slave side as its controlling terminal, a thread reads the master
//! side into a transcript (answering rustyline's cursor-position queries),
//! and the test types into the master.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_heapdb");

/// A heapdb prompt on a pseudo-terminal.
struct Term {
    child: Child,
    master: File,
    /// Everything the shell wrote, escape sequences included.
    transcript: Arc<Mutex<String>>,
    /// How much of the transcript earlier expectations consumed.
    seen: usize,
}

impl Term {
    fn start(data: &Path, history: &Path) -> Term {
        Term::start_with(data, history, &[])
    }

    /// Starts with extra environment variables.
    fn start_with(data: &Path, history: &Path, env: &[(&str, &str)]) -> Term {
        let (mut m, mut s) = (0, 0);
        // SAFETY: openpty writes two descriptors into the locals.
        let rc = unsafe {
            libc::openpty(
                &mut m,
                &mut s,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty");
        // SAFETY: both descriptors were just opened and are owned here.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
        let mut cmd = Command::new(BIN);
        cmd.arg("--data-dir")
            .arg(data)
            .env("HEAPDB_HISTORY", history)
            .env("TERM", "xterm")
            .env_remove("HEAPDB_DATA")
            .envs(env.iter().copied())
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stdout(Stdio::from(slave.try_clone().expect("dup")))
            .stderr(Stdio::from(slave));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                libc::ioctl(0, libc::TIOCSCTTY as _, 0);
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start heapdb");
        let master = File::from(master);
        let transcript = Arc::new(Mutex::new(String::new()));
        let mut reader = master.try_clone().expect("dup master");
        let mut answer = master.try_clone().expect("dup master");
        let t = transcript.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let chunk = String::from_utf8_lossy(&buf[..n]);
                if chunk.contains("\x1b[6n") {
                    // Cursor position report: column 1.
                    let _ = answer.write_all(b"\x1b[1;1R");
                }
                t.lock().expect("transcript").push_str(&chunk);
            }
        });
        Term {
            child,
            master,
            transcript,
            seen: 0,
        }
    }

    fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).expect("type");
        self.master.flush().expect("flush");
    }

    /// Waits until `needle` appears after what earlier calls consumed.
    fn expect(&mut self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            {
                let t = self.transcript.lock().expect("transcript");
                if let Some(i) = t[self.seen..].find(needle) {
                    self.seen += i + needle.len();
                    return;
                }
                if Instant::now() > deadline {
                    panic!("no {needle:?} in {:?}", &t[self.seen..]);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Leaves with `\q` and waits for the exit.
    fn quit(mut self) {
        self.send("\\q\r");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                assert!(status.success(), "{status:?}");
                return;
            }
            assert!(Instant::now() < deadline, "heapdb did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn prompts_follow_the_statement_and_transaction_state() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("mydb");
    let mut t = Term::start(&data, &dir.path().join("hist"));
    t.expect("Type \"\\?\" for help.");
    t.expect("mydb=> ");
    t.send("select\r");
    t.expect("mydb-> ");
    t.send("  6 * 7 as answer;\r");
    t.expect(" answer \r\n--------\r\n     42\r\n(1 row)");
    t.expect("mydb=> ");
    t.send("begin;\r");
    t.expect("BEGIN");
    t.expect("mydb=*> ");
    t.send("select nosuch;\r");
    t.expect("ERROR:  column \"nosuch\" does not exist");
    t.expect("mydb=!> ");
    t.send("rollback;\r");
    t.expect("ROLLBACK");
    t.expect("mydb=> ");
    t.quit();
}

#[test]
fn history_persists_across_runs_and_tab_completes_tables() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("db");
    let hist = dir.path().join("hist");
    let mut t = Term::start(&data, &hist);
    t.expect("db=> ");
    t.send("create table customers_archive (id int);\r");
    t.expect("CREATE TABLE");
    t.expect("db=> ");
    t.send("select 'from history'\r");
    // Type only at a prompt: rustyline flushes input typed ahead.
    t.expect("db-> ");
    t.send("  as h;\r");
    t.expect("from history\r\n(1 row)");
    t.expect("db=> ");
    t.quit();

    let mut t = Term::start(&data, &hist);
    t.expect("db=> ");
    // Up arrow twice (past `\q`): the statement, both lines as one entry.
    t.send("\x1b[A\x1b[A\r");
    t.expect("from history\r\n(1 row)");
    t.expect("db=> ");
    t.send("select count(*) as n from customers_ar\t");
    t.expect("customers_archive");
    t.send(";\r");
    t.expect(" n \r\n---\r\n 0\r\n(1 row)");
    t.expect("db=> ");
    t.quit();
}

#[test]
fn ctrl_c_clears_the_line_and_cancels_a_running_statement() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut t = Term::start(&dir.path().join("db"), &dir.path().join("hist"));
    t.expect("db=> ");
    // At the prompt: the half-typed statement is discarded.
    t.send("select 1 as discarded\r");
    t.expect("db-> ");
    t.send("\x03");
    t.expect("db=> ");
    t.send("select 5 as k;\r");
    t.expect(" k \r\n---\r\n 5\r\n(1 row)");
    t.expect("db=> ");
    // While a statement runs: it is cancelled and the prompt comes back.
    let before = common::cpu_time(t.child.id());
    t.send("select count(*) from generate_series(1, 10000000000);\r");
    // Ctrl-C once the statement is computing (at the prompt it clears the line).
    common::wait_for_cpu(t.child.id(), before, Duration::from_millis(400));
    t.send("\x03");
    t.expect("ERROR:  canceling statement due to user request");
    t.expect("db=> ");
    t.send("select 7 as z;\r");
    t.expect(" z \r\n---\r\n 7\r\n(1 row)");
    t.expect("db=> ");
    t.quit();
}

#[test]
fn copy_from_stdin_prompts_for_data_as_psql() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut t = Term::start(&dir.path().join("db"), &dir.path().join("hist"));
    t.expect("db=> ");
    t.send("create table t (a int, b text);\r");
    t.expect("CREATE TABLE");
    t.expect("db=> ");
    // A COPY that fails before its data asks for none.
    t.send("copy nosuch from stdin;\r");
    t.expect("ERROR:  relation \"nosuch\" does not exist");
    t.expect("db=> ");
    // (CSV: a tab would ask the line editor for a completion.)
    t.send("copy t from stdin with csv;\r");
    t.expect("Enter data to be copied followed by a newline.\r\nEnd with a backslash and a period on a line by itself, or an EOF signal.");
    t.expect(">> ");
    t.send("1,one\r");
    t.expect(">> ");
    t.send("2,two\r");
    t.expect(">> ");
    t.send("\\.\r");
    t.expect("COPY 2");
    t.expect("db=> ");
    t.send("select count(*) as n from t;\r");
    t.expect(" n \r\n---\r\n 2\r\n(1 row)");
    t.expect("db=> ");
    t.quit();
}

#[test]
fn a_long_scan_shows_a_progress_bar_on_the_terminal_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("db");
    let setup = "create table big (a int, b text);\n\
        insert into big select g, repeat('x', 400) from generate_series(1, 20000) g;\n";
    let o = Command::new(BIN)
        .arg("--data-dir")
        .arg(&data)
        .args(["-c", setup, "-c", "select count(*) from big where b <> 'y'"])
        .env("HEAPDB_PROGRESS_DELAY_MS", "0")
        .env_remove("HEAPDB_DATA")
        .stdin(Stdio::null())
        .output()
        .expect("run heapdb");
    assert!(o.status.success(), "{o:?}");
    // Piped: never a bar, whatever the delay.
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    assert!(String::from_utf8_lossy(&o.stdout).contains("20000"));

    // On a terminal, with the delay cut to nothing, the scan shows the
    // relation's pages as they are read; the bar is cleared at the end.
    let mut t = Term::start_with(
        &data,
        &dir.path().join("hist"),
        &[("HEAPDB_PROGRESS_DELAY_MS", "0")],
    );
    t.expect("db=> ");
    t.send("select count(*) as n from big where b <> 'y';\r");
    t.expect(" pages");
    t.expect("20000");
    t.expect("db=> ");
    t.quit();
}

#[test]
fn history_is_saved_where_its_directory_is_missing_and_a_failure_is_told_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("db");
    let hist = dir.path().join("share/heapdb/hist");
    let mut t = Term::start(&data, &hist);
    t.expect("db=> ");
    t.send("select 'kept' as h;\r");
    t.expect("kept\r\n(1 row)");
    t.expect("db=> ");
    t.quit();
    let saved = std::fs::read_to_string(&hist).expect("history file written");
    assert!(saved.contains("select 'kept' as h;"), "{saved:?}");

    // A directory that cannot be made (a file is in the way): one warning.
    let blocked = dir.path().join("file");
    std::fs::write(&blocked, "").expect("write file");
    let hist = blocked.join("hist");
    let mut t = Term::start(&data, &hist);
    t.expect("db=> ");
    t.send("select 1 as one;\r");
    let warning = format!(
        "heapdb: warning: could not save history to file \"{}\": Not a directory",
        hist.display()
    );
    t.expect(&warning);
    t.expect("db=> ");
    t.send("select 2 as two;\r");
    t.expect(" two \r\n");
    t.expect("db=> ");
    let transcript = t.transcript.clone();
    t.quit();
    let transcript = transcript.lock().expect("transcript").clone();
    assert_eq!(transcript.matches(&warning).count(), 1, "{transcript:?}");
}
