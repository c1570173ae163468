//! A crash during VACUUM (`Database::crash` while VACUUM runs in another
//! thread: whatever pages and log it had written by then are all the next
//! open finds): after recovery the table's contents are unchanged and the
//! visibility map never claims a page all-visible that is not.

use heapdb::{Database, Session};

mod common;
use common::{one_text, run, text};

/// count, sums and a checksum-like digest of the rows, through a full scan.
fn contents(s: &mut Session) -> String {
    one_text(
        s,
        "select count(*) || ' ' || sum(id) || ' ' || sum(length(v)) || ' ' || sum(id * length(v)) \
         from t where id >= 0",
    )
}

/// Every page the VM calls all-visible has PD_ALL_VISIBLE, only live
/// tuples, and exactly the live count the VM records.
fn check_vm(s: &mut Session) {
    let vm = run(
        s,
        "select blkno, live_tuples from heap_visibility_map('t') where all_visible",
    );
    for row in &vm.rows {
        let (b, live) = (text(&row[0]), text(&row[1]));
        let flags = one_text(s, &format!("select flag_names from page_header('t', {b})"));
        assert!(flags.contains("ALL_VISIBLE"), "block {b}: {flags}");
        let items = run(
            s,
            &format!(
                "select t_xmax, t_flags from heap_page_items('t', {b}) where lp_flags = 'NORMAL'"
            ),
        );
        assert_eq!(items.rows.len().to_string(), live, "block {b}: live count");
        for it in &items.rows {
            let (xmax, flags) = (text(&it[0]), text(&it[1]));
            assert!(
                xmax == "0" || flags.contains("XMAX_INVALID"),
                "block {b}: a deleted tuple on an all-visible page ({xmax} {flags})"
            );
        }
    }
    // Page summaries (valid only under a set bit) agree with a full scan:
    // a bit that outlived its slot, or a slot patched from a torn page,
    // would answer differently.
    for q in [
        "select count(*), sum(id), min(id), max(id) from t",
        "select count(*), sum(id) from t where id between 1000 and 20000",
    ] {
        run(s, "set enable_page_summaries = on");
        let with = common::rows_text(&run(s, q));
        run(s, "set enable_page_summaries = off");
        assert_eq!(with, common::rows_text(&run(s, q)), "{q}");
    }
    // count(*) sums the VM's counts; a filtered count with page summaries
    // off scans every page.
    run(s, "set enable_page_summaries = off");
    assert_eq!(
        one_text(s, "select count(*) from t"),
        one_text(s, "select count(*) from t where id >= 0")
    );
}

fn crash_during_vacuum(round: u64, freeze: bool) {
    let dir = tempfile::tempdir().expect("temp dir");
    let expected = {
        let db = Database::open(dir.path()).expect("open");
        let mut s = db.session();
        run(&mut s, "create table t (id int, v text)");
        run(
            &mut s,
            "insert into t select g, repeat('x', 20 + g % 30) from generate_series(1, 30000) g",
        );
        run(&mut s, "checkpoint");
        run(&mut s, "delete from t where id % 3 = 0");
        run(&mut s, "update t set v = 'updated' where id % 7 = 0");
        run(&mut s, "delete from t where id > 28000");
        let expected = contents(&mut s);
        let vacuum = {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut s = db.session();
                let sql = if freeze {
                    "vacuum freeze t"
                } else {
                    "vacuum t"
                };
                // The crash may stop it anywhere; its result does not matter.
                let _ = s.execute(sql);
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(round * 3));
        db.clone().crash();
        vacuum.join().expect("vacuum thread");
        db.crash();
        expected
    };
    let db = Database::open(dir.path()).expect("recover");
    let mut s = db.session();
    assert_eq!(contents(&mut s), expected, "round {round}: contents");
    check_vm(&mut s);
    // A VACUUM after recovery finishes the job and keeps the rows.
    run(&mut s, "vacuum t");
    assert_eq!(contents(&mut s), expected);
    check_vm(&mut s);
}

#[test]
fn crash_during_vacuum_keeps_rows_and_an_honest_visibility_map() {
    for round in 0..6 {
        crash_during_vacuum(round, round % 2 == 1);
    }
}
