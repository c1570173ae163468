//! A crash during a brand-new database's first open: the directory it
//! leaves is initialised again by the next open (the `init.incomplete`
//! marker is created first and removed last), never refused as damaged.

use std::path::Path;

use heapdb::Database;

mod common;
use common::{kill9, open_dir, run, shell_command};

/// Copies the files and directories of `from` named in `names` into `to`.
fn copy_some(from: &Path, to: &Path, names: &[&str]) {
    std::fs::create_dir_all(to).unwrap();
    for name in names {
        let src = from.join(name);
        if src.is_dir() {
            std::fs::create_dir_all(to.join(name)).unwrap();
            for e in std::fs::read_dir(&src).unwrap() {
                let e = e.unwrap();
                std::fs::copy(e.path(), to.join(name).join(e.file_name())).unwrap();
            }
        } else {
            std::fs::copy(&src, to.join(name)).unwrap();
        }
    }
}

/// The database in `dir` opens, takes a table and rows, and keeps them
/// across a clean shutdown; the marker is gone.
fn opens_and_works(dir: &Path) {
    let db = open_dir(dir);
    let mut s = db.session();
    run(&mut s, "CREATE TABLE t (a int)");
    run(&mut s, "INSERT INTO t SELECT generate_series(1, 10)");
    drop(s);
    db.close().unwrap();
    assert!(!dir.join("init.incomplete").exists());
    let db = open_dir(dir);
    assert_eq!(
        common::one_text(&mut db.session(), "SELECT count(*) FROM t"),
        "10"
    );
    db.close().unwrap();
}

#[test]
fn every_stage_of_an_interrupted_first_open_is_initialised_again() {
    let tmp = tempfile::tempdir().unwrap();
    // What a first open makes, in the order it makes it.
    let full = tmp.path().join("full");
    open_dir(&full).crash();
    let stages: [&[&str]; 5] = [
        &[],
        &["control"],
        &["control", "base"],
        &["control", "base", "xact", "wal"],
        &["control", "control.tmp", "base", "xact", "wal", "catalog"],
    ];
    for (i, names) in stages.iter().enumerate() {
        let dir = tmp.path().join(format!("stage{i}"));
        copy_some(&full, &dir, names);
        std::fs::write(dir.join("init.incomplete"), b"").unwrap();
        opens_and_works(&dir);
    }
    // Without the marker, files without a control file are damage, as
    // before: refused, and left as they were.
    let dir = tmp.path().join("damaged");
    copy_some(&full, &dir, &["base", "catalog"]);
    let e = Database::open(&dir).err().expect("refused");
    assert!(e.message.contains("control"), "{}", e.message);
    assert!(dir.join("catalog").exists());
}

/// splitmix64, for the kill moments.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn a_kill_during_the_first_open_leaves_a_directory_that_opens() {
    let tmp = tempfile::tempdir().unwrap();
    for round in 0..30u64 {
        let dir = tmp.path().join(format!("db{round}"));
        let child = shell_command(&dir, &["-c", "SELECT 1"])
            .spawn()
            .expect("start heapdb");
        // Anywhere in the first ~30 ms (the whole first open and more).
        let micros = mix(round) % 30_000;
        std::thread::sleep(std::time::Duration::from_micros(micros));
        kill9(child);
        opens_and_works(&dir);
    }
}
