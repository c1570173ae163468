//! VACUUM's heap pass shared with a worker thread
//! (`max_parallel_maintenance_workers`, one participant per core, chunks of
//! an eighth of a visibility-map page): the same table vacuumed serially and
//! in parallel ends in the same state and the same report, buffer counters
//! included (the worker's count for the statement; the worker's own pin of
//! a map page may add one hit).

use heapdb::settings::Settings;
use heapdb::{Database, QueryResult, Session};

mod common;
use common::{one_text, run, text};

/// The VERBOSE report without its timing and rate lines.
fn report(r: &QueryResult) -> Vec<String> {
    r.notices
        .iter()
        .flat_map(|n| n.message.lines().map(str::to_string).collect::<Vec<_>>())
        .filter(|l| {
            !l.starts_with("system usage")
                && !l.starts_with("avg read rate")
                && !l.starts_with("removable cutoff")
        })
        .map(|l| {
            l.replace("\"heapdb.public.t1\"", "T")
                .replace("\"heapdb.public.t2\"", "T")
        })
        .collect()
}

/// The buffer hits of the VERBOSE report.
fn hits(r: &QueryResult) -> u64 {
    let line = report(r)
        .into_iter()
        .find(|l| l.starts_with("buffer usage: "))
        .expect("a buffer usage line");
    line["buffer usage: ".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("hits in {line:?}"))
}

/// The VERBOSE report without its hit count.
fn without_hits(r: &QueryResult) -> Vec<String> {
    report(r)
        .into_iter()
        .map(|l| match l.strip_prefix("buffer usage: ") {
            Some(rest) => format!("buffer usage: N{}", &rest[rest.find(' ').unwrap_or(0)..]),
            None => l,
        })
        .collect()
}

/// Every page's flags, item flags and the map, in one string per table.
fn state(s: &mut Session, t: &str) -> String {
    let pages: u32 = one_text(s, &format!("select relation_pages('{t}')"))
        .parse()
        .unwrap();
    let mut out = one_text(
        s,
        &format!(
            "select count(*) || ' ' || sum(id) || ' ' || sum(length(v)) from {t} where id >= 0"
        ),
    );
    out += &format!(
        " | {}",
        one_text(
            s,
            &format!(
                "select count(*) filter (where all_visible) || ' ' || sum(live_tuples) \
                 from heap_visibility_map('{t}')"
            )
        )
    );
    for b in (0..pages).step_by(97) {
        out += &format!(
            " | {b}: {} {}",
            one_text(
                s,
                &format!("select flag_names from page_header('{t}', {b})")
            ),
            run(
                s,
                &format!("select lp_flags, t_flags from heap_page_items('{t}', {b})")
            )
            .rows
            .iter()
            .map(|r| format!("{}:{}", text(&r[0]), text(&r[1])))
            .collect::<Vec<_>>()
            .join(",")
        );
    }
    out
}

#[test]
fn a_parallel_heap_pass_matches_the_serial_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(
        dir.path(),
        Settings {
            shared_buffers: 8192,
            ..Settings::default()
        },
    )
    .unwrap();
    let mut s = db.session();
    for t in ["t1", "t2"] {
        run(&mut s, &format!("create table {t} (id int, v text)"));
        // About 2,400 pages: more than five chunks of 452.
        run(
            &mut s,
            &format!(
                "insert into {t} select g, repeat('x', 20 + g % 40) \
                 from generate_series(1, 250000) g"
            ),
        );
        // Updated rows move to the end; deleting them too leaves an empty
        // tail to cut off.
        run(
            &mut s,
            &format!("update {t} set v = 'u' where id % 1001 = 0"),
        );
        run(
            &mut s,
            &format!("delete from {t} where id % 97 = 0 or id > 240000 or v = 'u'"),
        );
    }
    let pages: u32 = one_text(&mut s, "select relation_pages('t1')")
        .parse()
        .unwrap();
    assert!(pages > 5 * 452, "{pages} pages");
    run(&mut s, "checkpoint");
    run(&mut s, "set max_parallel_maintenance_workers = 0");
    let serial = run(&mut s, "vacuum verbose t1");
    run(&mut s, "set max_parallel_maintenance_workers = 1");
    let parallel = run(&mut s, "vacuum verbose t2");
    // Each participant keeps the map page it sets bits on pinned, so the
    // worker's pin of it is the one hit more the parallel pass may count.
    let (serial_hits, parallel_hits) = (hits(&serial), hits(&parallel));
    assert!(
        (serial_hits..=serial_hits + 1).contains(&parallel_hits),
        "{serial_hits} hits serially, {parallel_hits} in parallel"
    );
    assert_eq!(without_hits(&serial), without_hits(&parallel));
    assert!(
        report(&serial).iter().any(|l| l.contains(" removed, ")
            && l.starts_with("pages:")
            && !l.starts_with("pages: 0 removed")),
        "the empty tail was cut: {:?}",
        report(&serial)
    );
    assert_eq!(state(&mut s, "t1"), state(&mut s, "t2"));
    // A clean VACUUM skips everything either way.
    let serial = run(&mut s, "vacuum verbose t1");
    let parallel = run(&mut s, "vacuum verbose t2");
    assert_eq!(report(&serial), report(&parallel));
    // FREEZE, in parallel, freezes every page.
    run(&mut s, "vacuum freeze t2");
    assert_eq!(
        one_text(
            &mut s,
            "select count(*) from heap_visibility_map('t2') where not all_frozen"
        ),
        "0"
    );
    assert_eq!(
        one_text(&mut s, "select count(*) from t2"),
        one_text(&mut s, "select count(*) from t1")
    );
}

#[test]
fn a_canceled_parallel_vacuum_stops_and_reports_57014() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    run(&mut s, "create table t1 (id int, v text)");
    run(
        &mut s,
        "insert into t1 select g, repeat('x', 30) from generate_series(1, 200000) g",
    );
    // The first progress report (64 pages in) cancels the statement, as a
    // Ctrl-C would: both participants stop.
    let cancel = s.cancel_flag();
    s.set_progress(Some(std::sync::Arc::new(
        move |_: &heapdb::session::Progress| {
            cancel.store(true, std::sync::atomic::Ordering::Relaxed)
        },
    )));
    let e = s.execute("vacuum t1").unwrap_err();
    assert_eq!(e.code.code(), "57014");
    s.set_progress(None);
    let left = one_text(
        &mut s,
        "select count(*) from heap_visibility_map('t1') where not all_visible",
    );
    assert_ne!(left, "0", "stopped before the end");
    run(&mut s, "vacuum t1");
    assert_eq!(
        one_text(
            &mut s,
            "select count(*) from heap_visibility_map('t1') where not all_visible"
        ),
        "0"
    );
}
