//! B-tree indexes across SIGKILL: a child process (this test binary, run
//! with `--exact index_crash_child --ignored`) inserts into a table with a
//! primary key and a secondary index, acknowledging each commit, with
//! checkpoints between (so later index changes are logged as full-page
//! images first), or builds and drops an index over and over; the harness
//! kills it at a random moment, reopens the directory (recovery) and checks:
//!
//! - every acknowledged row is there, and its key is found through the
//!   primary key index: inserting it again fails with 23505;
//! - `bt_index_check` finds each index's structure sound and every row the
//!   heap holds in it; new inserts and new index builds work;
//! - a partial index's predicate survives in the catalog: it holds exactly
//!   the rows its predicate is true for, and the planner still uses it.
//!
//! A third child deletes and updates rows while another thread of it runs
//! VACUUM on the table over and over (two passes: DEAD line pointers, the
//! index bulk delete, then freeing them), so kills land in every pass. After
//! each reopen no acknowledged row is lost, `bt_index_check` passes, and a
//! VACUUM leaves each index with exactly one entry per row: an entry whose
//! line pointer had been freed and reused would stay behind and show.
//!
//! A fourth child deletes whole thousands of keys (every odd thousand) as
//! it inserts, so the VACUUM thread empties leaves and deletes and recycles
//! index pages while the child is killed: after each reopen every kept row
//! is found through the primary key, no deleted row is, both checkers pass,
//! and the next VACUUM finishes any page deletion the kill interrupted.
//!
//! A fifth child updates rows by primary key over and over: its lookups
//! mark the entries of dead versions, and inserts remove them instead of
//! splitting leaves; after each kill every row is found through both
//! indexes and both checkers pass.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use heapdb::settings::Settings;
use heapdb::{Database, Session};

mod common;
use common::{child_test, kill9, one_text, open_with, run, text, Lines};

const CHILD_ENV: &str = "HEAPDB_INDEX_CRASH_CHILD";

fn settings() -> Settings {
    let mut s = Settings::default();
    s.set_at_open("max_wal_size", "2MB").unwrap();
    // A small pool: index and heap pages are evicted all the time.
    s.set_at_open("shared_buffers", "1MB").unwrap();
    s
}

/// splitmix64, for the kill moments.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// The child: `dir|insert|first key` inserts from the key on; `dir|copy|first
/// key` copies from it on; `dir|build` builds and drops an index of `b`
/// until killed.
#[test]
#[ignore = "the index crash harness runs this as its child process"]
fn index_crash_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let mut set = settings();
    if parts[1] == "build_ints" || parts[1] == "build_ints_no_checkpoint" {
        // No checkpoint on its own: the pages written since the last
        // checkpoint are durable only through the log's page images.
        set.set_at_open("shared_buffers", "64MB").unwrap();
        set.set_at_open("max_wal_size", "64MB").unwrap();
    }
    let db = open_with(Path::new(parts[0]), set);
    let mut s = db.session();
    let out = std::io::stdout();
    let say = |line: String| {
        let mut o = out.lock();
        writeln!(o, "{line}").unwrap();
        o.flush().unwrap();
    };
    say("ready".into());
    if parts[1] == "vacuum" {
        vacuum_child(&db, &mut s, parts[2].parse().unwrap(), &say);
    }
    if parts[1] == "update" {
        let mut k: i64 = parts[2].parse().unwrap();
        run(&mut s, "set enable_seqscan = off");
        // VACUUM prunes the pages the updates prune opportunistically.
        let vdb = db.clone();
        std::thread::spawn(move || {
            let mut v = vdb.session();
            loop {
                run(&mut v, "vacuum a");
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        loop {
            let id = 1 + (k * 7) % 3000;
            // Mostly heap-only updates; every tenth changes an indexed column.
            let also = if k % 10 == 0 { ", v = v + 1" } else { "" };
            run(
                &mut s,
                &format!("update a set f = 'v{k}'{also} where aid = {id}"),
            );
            say(format!("ack {k}"));
            k += 1;
            if k % 500 == 0 {
                run(&mut s, "checkpoint");
            }
        }
    }
    if parts[1] == "churn" {
        churn_child(&db, &mut s, parts[2].parse().unwrap(), &say);
    }
    if parts[1] == "copy" {
        copy_child(&mut s, Path::new(parts[0]), parts[2].parse().unwrap(), &say);
    }
    if parts[1] == "build_ints" || parts[1] == "build_ints_no_checkpoint" {
        // Integer keys take the build's raw encoding; each index stays.
        for i in 1.. {
            if parts[1] == "build_ints" {
                run(&mut s, "checkpoint");
            }
            run(&mut s, &format!("create index b_iv{i} on b (v, id desc)"));
            say(format!("ack {i}"));
        }
    }
    if parts[1] == "build_par" {
        // The leader and a worker scan and sort; the leader merges and
        // writes the pages.
        run(&mut s, "set max_parallel_maintenance_workers = 2");
        run(&mut s, "set min_parallel_table_scan_size = 0");
        run(&mut s, "set maintenance_work_mem = '64MB'");
    }
    if parts[1] == "build" || parts[1] == "build_par" {
        loop {
            run(&mut s, "create index b_v_idx on b (v, f)");
            say("built".into());
            run(&mut s, "drop index b_v_idx");
        }
    }
    let mut k: i64 = parts[2].parse().unwrap();
    loop {
        // Mostly single rows; every tenth statement a batch of 20.
        if k % 10 == 0 {
            run(
                &mut s,
                &format!(
                    "insert into a select g, g % 97, repeat('x', g % 40) \
                     from generate_series({k}, {}) g",
                    k + 19
                ),
            );
            k += 20;
        } else {
            run(
                &mut s,
                &format!("insert into a values ({k}, {}, 'row {k}')", k % 97),
            );
            k += 1;
        }
        say(format!("ack {}", k - 1));
        if k % 700 < 21 {
            run(&mut s, "checkpoint");
        }
    }
}

/// The COPY child: COPY FROM a file of 3,000 rows at a time from key `k`
/// into `c` (a primary key and a secondary index, whose entries COPY
/// inserts in sorted batches after the heap pages), with a checkpoint
/// every few statements; acknowledges each statement's last key.
fn copy_child(s: &mut Session, dir: &Path, mut k: i64, say: &dyn Fn(String)) -> ! {
    let file = dir.join("copy_rows.csv");
    let mut n = 0;
    loop {
        let mut rows = String::new();
        for key in k..k + 3000 {
            rows.push_str(&format!("{key},{},r{key}\n", (key * 7919) % 1009));
        }
        std::fs::write(&file, rows).unwrap();
        run(
            s,
            &format!("copy c from '{}' with (format csv)", file.display()),
        );
        k += 3000;
        say(format!("ack {}", k - 1));
        n += 1;
        if n % 3 == 0 {
            run(s, "checkpoint");
        }
    }
}

/// The VACUUM child: one thread vacuums `a` in a loop (a small
/// `maintenance_work_mem` would still be 131,072 TIDs, so rounds come from
/// the loop), this one inserts 20 rows at a time from key `k`, deletes the
/// multiples of 3 among the last 200 keys, updates a few (new versions on
/// the same page or another) and acknowledges the insert's last key.
fn vacuum_child(db: &Database, s: &mut Session, mut k: i64, say: &dyn Fn(String)) -> ! {
    let vdb = db.clone();
    std::thread::spawn(move || {
        let mut v = vdb.session();
        run(&mut v, "set max_parallel_maintenance_workers = 1");
        loop {
            run(&mut v, "vacuum a");
        }
    });
    loop {
        run(
            s,
            &format!(
                "insert into a select g, g % 97, repeat('x', g % 40) \
                 from generate_series({k}, {}) g",
                k + 19
            ),
        );
        k += 20;
        say(format!("ack {}", k - 1));
        run(
            s,
            &format!("delete from a where aid % 3 = 0 and aid >= {}", k - 200),
        );
        run(
            s,
            &format!(
                "update a set f = 'u', v = v + 1 where aid % 7 = 1 and aid >= {}",
                k - 100
            ),
        );
        if k % 1000 < 20 {
            run(s, "checkpoint");
        }
    }
}

/// The page-deletion child: inserts 200 keys at a time from `k`
/// (acknowledged), then deletes the odd-thousand keys of the batch two
/// batches back, while a thread VACUUMs the table over and over; a
/// checkpoint every ten batches.
fn churn_child(db: &Database, s: &mut Session, mut k: i64, say: &dyn Fn(String)) -> ! {
    let vdb = db.clone();
    std::thread::spawn(move || {
        let mut v = vdb.session();
        loop {
            run(&mut v, "vacuum a");
        }
    });
    // What a killed predecessor had still to delete.
    run(
        s,
        &format!(
            "delete from a where aid < {} and (aid / 1000) % 2 = 1",
            k - 400
        ),
    );
    loop {
        run(
            s,
            &format!(
                "insert into a select g, g % 97, 'c' from generate_series({k}, {}) g",
                k + 199
            ),
        );
        k += 200;
        say(format!("ack {}", k - 1));
        run(
            s,
            &format!(
                "delete from a where aid >= {} and aid < {} and (aid / 1000) % 2 = 1",
                k - 600,
                k - 400
            ),
        );
        if k % 2000 == 1 {
            run(s, "checkpoint");
        }
    }
}

/// Spawns the child with `spec` and kills it after `acks` acknowledgements
/// (or `ms` milliseconds after it is ready, when `acks` is 0); returns the
/// last acknowledged key.
fn kill_child(spec: &str, acks: u64, ms: u64) -> Option<i64> {
    let mut child = child_test("index_crash_child", CHILD_ENV, spec)
        .spawn()
        .expect("start the child");
    let lines = Lines::of(&mut child);
    let mut last = None;
    let mut seen = 0;
    while let Some(line) = lines.next() {
        if line.ends_with("ready") && acks == 0 {
            std::thread::sleep(Duration::from_millis(ms));
            break;
        }
        if let Some(k) = line.strip_prefix("ack ") {
            last = Some(k.parse().unwrap());
            seen += 1;
            if seen >= acks {
                break;
            }
        }
    }
    kill9(child);
    // Acknowledgements already in the pipe count too.
    while let Some(line) = lines.next() {
        if let Some(k) = line.strip_prefix("ack ") {
            last = Some(k.parse().unwrap());
        }
    }
    last
}

fn check_index(s: &mut Session, name: &str) -> (i64, i64) {
    let r = run(s, &format!("select * from bt_index_check('{name}')"));
    let get = |i: usize| text(&r.rows[0][i]).parse::<i64>().unwrap();
    (get(0), get(2))
}

#[test]
fn kill_during_indexed_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    {
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        run(
            &mut s,
            "create table a (aid int primary key, v int, f text)",
        );
        run(&mut s, "create index a_v_idx on a (v)");
        // A partial index: its predicate is in the catalog and bound
        // again at every reopen; its entries cover only v > 50.
        run(&mut s, "create index a_v_part on a (aid) where v > 50");
        db.close().unwrap();
    }
    let mut rng = Rng(7);
    let mut next = 1i64;
    let mut acked_to = 0i64;
    for round in 0..4 {
        let acks = 50 + rng.below(400);
        if let Some(last) = kill_child(&format!("{path}|insert|{next}"), acks, 0) {
            acked_to = last;
        }
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        let have: i64 = one_text(
            &mut s,
            &format!("select count(*) from a where aid <= {acked_to}"),
        )
        .parse()
        .unwrap();
        assert_eq!(have, acked_to, "round {round}: acknowledged rows lost");
        for k in (1..=acked_to).step_by(37).chain([acked_to]) {
            let e = s
                .execute(&format!("insert into a values ({k}, 0, 'dup')"))
                .expect_err(&format!("round {round}: key {k} not found through a_pkey"));
            assert_eq!(e.code.code(), "23505", "round {round}: {e}");
        }
        let rows: i64 = one_text(&mut s, "select count(*) from a").parse().unwrap();
        for ix in ["a_pkey", "a_v_idx"] {
            let (items, heap) = check_index(&mut s, ix);
            assert_eq!(heap, rows, "round {round}: {ix}");
            assert!(items >= rows, "round {round}: {ix} has {items} entries");
        }
        let part: i64 = one_text(&mut s, "select count(*) from a where v > 50")
            .parse()
            .unwrap();
        let (items, heap) = check_index(&mut s, "a_v_part");
        assert_eq!(heap, part, "round {round}: a_v_part");
        assert!(
            items >= part && items < rows,
            "round {round}: a_v_part has {items} entries"
        );
        run(&mut s, "set enable_seqscan = off");
        let plan = run(
            &mut s,
            "explain select count(*) from a where v > 60 and aid > 0",
        );
        assert!(
            format!("{:?}", plan.rows).contains("a_v_part"),
            "round {round}: the partial index is not used: {:?}",
            plan.rows
        );
        let through: i64 = one_text(&mut s, "select count(*) from a where v > 60 and aid > 0")
            .parse()
            .unwrap();
        run(&mut s, "reset enable_seqscan");
        let seq: i64 = one_text(&mut s, "select count(*) from a where v > 60 and aid > 0")
            .parse()
            .unwrap();
        assert_eq!(through, seq, "round {round}: a_v_part");
        next = one_text(&mut s, "select coalesce(max(aid), 0) + 1 from a")
            .parse()
            .unwrap();
        drop(s);
        db.close().unwrap();
    }
    assert!(acked_to > 0, "the child acknowledged nothing");
}

#[test]
fn kill_during_copy_into_an_indexed_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    {
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        run(&mut s, "create table c (id int primary key, v int, f text)");
        run(&mut s, "create index c_v_idx on c (v)");
        db.close().unwrap();
    }
    let mut rng = Rng(13);
    let mut next = 1i64;
    let mut acked_to = 0i64;
    for round in 0..4 {
        let acks = 1 + rng.below(6);
        if let Some(last) = kill_child(&format!("{path}|copy|{next}"), acks, 0) {
            acked_to = last;
        }
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        let rows: i64 = one_text(&mut s, "select count(*) from c").parse().unwrap();
        // Whole statements only: every acknowledged one, at most one more.
        assert!(
            rows == acked_to || rows == acked_to + 3000,
            "round {round}: {rows} rows after {acked_to} acknowledged"
        );
        for ix in ["c_pkey", "c_v_idx"] {
            let (items, heap) = check_index(&mut s, ix);
            assert_eq!(heap, rows, "round {round}: {ix}");
            assert!(items >= rows, "round {round}: {ix} has {items} entries");
        }
        for k in (1..=rows).step_by(997) {
            let e = s
                .execute(&format!("insert into c values ({k}, 0, 'dup')"))
                .expect_err(&format!("round {round}: key {k} not found through c_pkey"));
            assert_eq!(e.code.code(), "23505", "round {round}: {e}");
        }
        next = rows + 1;
        acked_to = rows;
        drop(s);
        db.close().unwrap();
    }
    assert!(next > 1, "the child acknowledged nothing");
}

#[test]
fn kill_during_create_index() {
    kill_during_build("build", 11);
}

/// As [`kill_during_create_index`], with the heap scanned and sorted by
/// the leader and a worker thread.
#[test]
fn kill_during_parallel_create_index() {
    kill_during_build("build_par", 17);
}

fn kill_during_build(mode: &str, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    {
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        run(&mut s, "create table b (id int primary key, v int, f text)");
        run(
            &mut s,
            "insert into b select g, g % 1000, repeat('y', g % 30) from generate_series(1, 30000) g",
        );
        run(&mut s, "checkpoint");
        db.close().unwrap();
    }
    let mut rng = Rng(seed);
    for _ in 0..4 {
        kill_child(&format!("{path}|{mode}"), 0, 20 + rng.below(300));
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        assert_eq!(one_text(&mut s, "select count(*) from b"), "30000");
        check_index(&mut s, "b_pkey");
        // The index either committed whole or is gone.
        if s.execute("select * from bt_index_check('b_v_idx')").is_ok() {
            assert_eq!(check_index(&mut s, "b_v_idx").1, 30000);
            run(&mut s, "drop index b_v_idx");
        }
        run(&mut s, "create index b_v_idx2 on b (v)");
        assert_eq!(check_index(&mut s, "b_v_idx2"), (30000, 30000));
        run(&mut s, "drop index b_v_idx2");
        drop(s);
        db.close().unwrap();
    }
}

/// CREATE INDEX writes its pages straight to the file and logs each as a
/// page image, leaving the fsync to the next checkpoint: a crash that
/// loses every write no checkpoint made durable (simulated: the kill,
/// then the files the builds made cut to nothing) must leave every
/// committed index whole after redo from the images alone.
#[test]
fn built_index_files_lost_in_a_crash_are_redone_from_their_images() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    {
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        run(&mut s, "create table b (id int primary key, v int, f text)");
        run(
            &mut s,
            "insert into b select g, g % 1000, repeat('y', g % 30) from generate_series(1, 30000) g",
        );
        run(&mut s, "checkpoint");
        db.close().unwrap();
    }
    let base = dir.path().join("base");
    let files = || -> std::collections::BTreeSet<std::path::PathBuf> {
        std::fs::read_dir(&base)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect()
    };
    let before = files();
    let last = kill_child(&format!("{path}|build_ints_no_checkpoint"), 2, 0)
        .expect("no build acknowledged");
    let mut cut = 0;
    for f in files().difference(&before) {
        std::fs::OpenOptions::new()
            .write(true)
            .open(f)
            .unwrap()
            .set_len(0)
            .unwrap();
        cut += 1;
    }
    assert!(cut as i64 >= last, "{cut} files cut for {last} indexes");
    let db = open_with(dir.path(), settings());
    let mut s = db.session();
    for i in 1..=last {
        assert_eq!(check_index(&mut s, &format!("b_iv{i}")), (30000, 30000));
    }
    assert_eq!(one_text(&mut s, "select count(*) from b where v = 7"), "30");
}

/// CREATE INDEX writes its pages and logs each as a page image; a kill
/// right after a build must leave every committed index whole after redo
/// (which rewrites the images over the pages), and a build in flight
/// either committed whole or gone.
#[test]
fn kill_after_create_index_recovers_the_built_pages_from_their_images() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    {
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        run(&mut s, "create table b (id int primary key, v int, f text)");
        run(
            &mut s,
            "insert into b select g, g % 1000, repeat('y', g % 30) from generate_series(1, 30000) g",
        );
        run(&mut s, "checkpoint");
        db.close().unwrap();
    }
    let mut rng = Rng(23);
    let mut built = 0;
    for round in 0..4 {
        let acks = 1 + rng.below(2);
        let last = kill_child(&format!("{path}|build_ints"), acks, 0)
            .unwrap_or_else(|| panic!("round {round}: no build acknowledged"));
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        for i in 1..=last {
            let name = format!("b_iv{i}");
            assert_eq!(
                check_index(&mut s, &name),
                (30000, 30000),
                "round {round}: {name}"
            );
        }
        // The build in flight at the kill committed whole or is gone.
        let next = format!("b_iv{}", last + 1);
        if s.execute(&format!("select * from bt_index_check('{next}')"))
            .is_ok()
        {
            assert_eq!(
                check_index(&mut s, &next),
                (30000, 30000),
                "round {round}: {next}"
            );
            run(&mut s, &format!("drop index {next}"));
        }
        assert_eq!(one_text(&mut s, "select count(*) from b where v = 7"), "30");
        for i in 1..=last {
            run(&mut s, &format!("drop index b_iv{i}"));
        }
        built += last;
        drop(s);
        db.close().unwrap();
    }
    assert!(built >= 4);
}

#[test]
fn kill_during_vacuum_of_an_indexed_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    {
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        run(
            &mut s,
            "create table a (aid int primary key, v int, f text)",
        );
        run(&mut s, "create index a_v_idx on a (v)");
        run(&mut s, "create index a_v_part on a (aid) where v > 50");
        db.close().unwrap();
    }
    let mut rng = Rng(13);
    let mut next = 1i64;
    let mut acked_to = 0i64;
    for round in 0..6 {
        let acks = 30 + rng.below(300);
        if let Some(last) = kill_child(&format!("{path}|vacuum|{next}"), acks, 0) {
            acked_to = last;
        }
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        // Multiples of 3 may have been deleted; no other row ever is.
        let have: i64 = one_text(
            &mut s,
            &format!("select count(*) from a where aid <= {acked_to} and aid % 3 <> 0"),
        )
        .parse()
        .unwrap();
        assert_eq!(
            have,
            acked_to - acked_to / 3,
            "round {round}: acknowledged rows lost"
        );
        for k in (1..=acked_to).filter(|k| k % 3 != 0).step_by(29) {
            let e = s
                .execute(&format!("insert into a values ({k}, 0, 'dup')"))
                .expect_err(&format!("round {round}: key {k} not found through a_pkey"));
            assert_eq!(e.code.code(), "23505", "round {round}: {e}");
        }
        let rows: i64 = one_text(&mut s, "select count(*) from a").parse().unwrap();
        for ix in ["a_pkey", "a_v_idx"] {
            let (items, heap) = check_index(&mut s, ix);
            assert_eq!(heap, rows, "round {round}: {ix}");
            assert!(items >= rows, "round {round}: {ix} has {items} entries");
        }
        let part: i64 = one_text(&mut s, "select count(*) from a where v > 50")
            .parse()
            .unwrap();
        let (items, heap) = check_index(&mut s, "a_v_part");
        assert_eq!(heap, part, "round {round}: a_v_part");
        assert!(
            items >= part && items < rows,
            "round {round}: a_v_part has {items} entries"
        );
        run(&mut s, "set enable_seqscan = off");
        let plan = run(
            &mut s,
            "explain select count(*) from a where v > 60 and aid > 0",
        );
        assert!(
            format!("{:?}", plan.rows).contains("a_v_part"),
            "round {round}: the partial index is not used: {:?}",
            plan.rows
        );
        let through: i64 = one_text(&mut s, "select count(*) from a where v > 60 and aid > 0")
            .parse()
            .unwrap();
        run(&mut s, "reset enable_seqscan");
        let seq: i64 = one_text(&mut s, "select count(*) from a where v > 60 and aid > 0")
            .parse()
            .unwrap();
        assert_eq!(through, seq, "round {round}: a_v_part");
        // VACUUM finishes what the killed one left (DEAD line pointers
        // included): then each index holds exactly the rows.
        run(&mut s, "vacuum a");
        for ix in ["a_pkey", "a_v_idx"] {
            assert_eq!(check_index(&mut s, ix), (rows, rows), "round {round}: {ix}");
        }
        next = one_text(&mut s, "select coalesce(max(aid), 0) + 1 from a")
            .parse()
            .unwrap();
        drop(s);
        db.close().unwrap();
    }
    assert!(acked_to > 0, "the child acknowledged nothing");
}

#[test]
fn kill_during_index_page_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    {
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        run(
            &mut s,
            "create table a (aid int primary key, v int, f text)",
        );
        run(&mut s, "create index a_v_idx on a (v)");
        db.close().unwrap();
    }
    let mut rng = Rng(29);
    let mut next = 1i64;
    let mut acked_to = 0i64;
    let mut deleted_pages = 0i64;
    for round in 0..6 {
        let acks = 20 + rng.below(120);
        if let Some(last) = kill_child(&format!("{path}|churn|{next}"), acks, 0) {
            acked_to = last;
        }
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        // Even thousands are kept; odd ones are gone once deleted before
        // the last acknowledgement.
        let kept: i64 = one_text(
            &mut s,
            &format!("select count(*) from a where aid <= {acked_to} and (aid / 1000) % 2 = 0"),
        )
        .parse()
        .unwrap();
        let want = (1..=acked_to).filter(|k| (k / 1000) % 2 == 0).count() as i64;
        assert_eq!(kept, want, "round {round}: acknowledged rows lost");
        let gone: i64 = one_text(
            &mut s,
            &format!(
                "select count(*) from a where aid < {} and (aid / 1000) % 2 = 1",
                acked_to - 599
            ),
        )
        .parse()
        .unwrap();
        assert_eq!(gone, 0, "round {round}: deleted rows are back");
        for k in (1..=acked_to).filter(|k| (k / 1000) % 2 == 0).step_by(37) {
            let e = s
                .execute(&format!("insert into a values ({k}, 0, 'dup')"))
                .expect_err(&format!("round {round}: key {k} not found through a_pkey"));
            assert_eq!(e.code.code(), "23505", "round {round}: {e}");
        }
        let rows: i64 = one_text(&mut s, "select count(*) from a").parse().unwrap();
        for ix in ["a_pkey", "a_v_idx"] {
            run(&mut s, &format!("select bt_index_parent_check('{ix}')"));
            let (items, heap) = check_index(&mut s, ix);
            assert_eq!(heap, rows, "round {round}: {ix}");
            assert!(items >= rows, "round {round}: {ix} has {items} entries");
        }
        let r = run(&mut s, "vacuum verbose a");
        for ix in ["a_pkey", "a_v_idx"] {
            run(&mut s, &format!("select bt_index_parent_check('{ix}')"));
            assert_eq!(check_index(&mut s, ix), (rows, rows), "round {round}: {ix}");
        }
        // `index "a_pkey": pages: N in total, N newly deleted, N currently
        // deleted, N reusable`: pages deleted by this VACUUM or before.
        for line in r.notices.iter().flat_map(|n| n.message.lines()) {
            if line.starts_with("index \"a_pkey\"") {
                let w: Vec<&str> = line.split_whitespace().collect();
                deleted_pages += w[9].parse::<i64>().unwrap();
            }
        }
        next = one_text(&mut s, "select coalesce(max(aid), 0) + 1 from a")
            .parse()
            .unwrap();
        drop(s);
        db.close().unwrap();
    }
    assert!(acked_to > 0, "the child acknowledged nothing");
    eprintln!("acknowledged up to {acked_to}; {deleted_pages} a_pkey pages seen deleted");
    assert!(deleted_pages > 0, "no index page was ever deleted");
}

#[test]
fn kill_during_updates_by_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    {
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        run(
            &mut s,
            // Room on each page: heap-only updates, and fetches and
            // updates that prune pages, between the kills.
            "create table a (aid int primary key, v int, f text) with (fillfactor = 80)",
        );
        run(&mut s, "create index a_v_idx on a (v)");
        run(
            &mut s,
            "insert into a select g, g % 50, 'v' from generate_series(1, 3000) g",
        );
        db.close().unwrap();
    }
    let mut rng = Rng(41);
    let mut next = 0i64;
    for round in 0..5 {
        let acks = 500 + rng.below(3000);
        if let Some(last) = kill_child(&format!("{path}|update|{next}"), acks, 0) {
            next = last + 1;
        }
        let db = open_with(dir.path(), settings());
        let mut s = db.session();
        let rows: i64 = one_text(&mut s, "select count(*) from a").parse().unwrap();
        assert_eq!(rows, 3000, "round {round}");
        // The last acknowledged update is there.
        if next > 0 {
            let k = next - 1;
            let f = one_text(
                &mut s,
                &format!("select f from a where aid = {}", 1 + (k * 7) % 3000),
            );
            assert_eq!(f, format!("v{k}"), "round {round}");
        }
        for k in (1..=3000).step_by(31) {
            let e = s
                .execute(&format!("insert into a values ({k}, 0, 'dup')"))
                .expect_err(&format!("round {round}: key {k} not found through a_pkey"));
            assert_eq!(e.code.code(), "23505", "round {round}: {e}");
        }
        for ix in ["a_pkey", "a_v_idx"] {
            run(&mut s, &format!("select bt_index_parent_check('{ix}')"));
            let (items, heap) = check_index(&mut s, ix);
            assert_eq!(heap, 3000, "round {round}: {ix}");
            assert!(items >= 3000, "round {round}: {ix}");
        }
        // Heap and indexes agree: each path returns the sequential scan's rows.
        for v in [0, 7, 25, 49, 50, 51, 60] {
            let q = format!("select aid, f from a where v = {v} order by aid");
            run(&mut s, "set enable_seqscan = on");
            run(&mut s, "set enable_indexscan = off");
            run(&mut s, "set enable_bitmapscan = off");
            let want = common::texts(&mut s, &q);
            for path in ["indexscan", "bitmapscan"] {
                run(&mut s, "set enable_seqscan = off");
                run(&mut s, "set enable_indexscan = off");
                run(&mut s, "set enable_bitmapscan = off");
                run(&mut s, &format!("set enable_{path} = on"));
                assert_eq!(common::texts(&mut s, &q), want, "round {round} {path}: {q}");
            }
            run(&mut s, "reset enable_seqscan");
            run(&mut s, "reset enable_indexscan");
            run(&mut s, "reset enable_bitmapscan");
        }
        if round % 2 == 1 {
            run(&mut s, "vacuum a");
            for ix in ["a_pkey", "a_v_idx"] {
                assert_eq!(check_index(&mut s, ix), (3000, 3000), "round {round}: {ix}");
            }
        }
        drop(s);
        db.close().unwrap();
    }
    assert!(next > 0, "the child acknowledged nothing");
}
