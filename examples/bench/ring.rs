//! `ring_sweep`: the classic ring-size experiment, heapdb only.
//!
//! heapdb is started with a small `--shared-buffers` and a table four times
//! that size (accounts rows) is built and measured at ring sizes of 1, 2, 4,
//! ..., 1024 pages (8 kB .. 8 MB), all three rings (`bulkwrite_ring_size`,
//! `bulkread_ring_size`, `vacuum_ring_size`) set alike:
//! COPY into a fresh table; VACUUM with no hint bits set yet; VACUUM of the
//! now clean table; VACUUM after deleting one tuple per page; and a qualified
//! `count(*)` (a qualifier, so every page is read rather than the
//! visibility-map counts). Each statement follows a CHECKPOINT, so dirty
//! buffers of the previous step are not the next step's cost. The printed
//! table shows where the sweet spot is (PostgreSQL's fixed 256 kB ring was
//! chosen to fit the L2 cache).

use std::path::Path;
use std::time::Duration;

use crate::report::RingRow;
use crate::session::{Memory, Session};
use crate::stats::fmt_kib;
use crate::stats::median;
use crate::systems::{Launcher, System};
use crate::workloads::{accounts_ddl, ACCOUNTS_PER_PAGE};

/// Ring sizes swept, in 8 kB pages.
pub const RING_PAGES: [u32; 11] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/// `shared_buffers` for the sweep at `scale`, in MB (128 MB at scale 1, at least 16).
pub fn sweep_shared_buffers_mb(scale: f64) -> u64 {
    ((128.0 * scale) as u64).max(16)
}

/// Rows of accounts that make a table of four times `shared_buffers_mb`.
pub fn sweep_rows(shared_buffers_mb: u64) -> i64 {
    let pages = 4 * shared_buffers_mb as i64 * 1024 * 1024 / 8192;
    pages * ACCOUNTS_PER_PAGE
}

/// The statements of one ring size: (label, untimed prep, timed statement).
pub fn sweep_statements(pages: u32, file: &Path) -> Vec<(&'static str, Vec<String>, String)> {
    let kb = pages * 8;
    let ckpt = || vec!["CHECKPOINT;".to_string()];
    let mut copy_prep = vec![
        format!("SET bulkwrite_ring_size = '{kb}kB';"),
        format!("SET bulkread_ring_size = '{kb}kB';"),
        format!("SET vacuum_ring_size = '{kb}kB';"),
        "DROP TABLE IF EXISTS ring_t;".into(),
        accounts_ddl("ring_t"),
    ];
    copy_prep.extend(ckpt());
    let vacuum = "VACUUM ring_t;".to_string();
    let mut dirty = vec![format!(
        "DELETE FROM ring_t WHERE aid % {ACCOUNTS_PER_PAGE} = 1;"
    )];
    dirty.extend(ckpt());
    vec![
        (
            "copy",
            copy_prep,
            format!("COPY ring_t FROM '{}';", file.display()),
        ),
        ("vacuum no hint bits", ckpt(), vacuum.clone()),
        ("vacuum clean", ckpt(), vacuum.clone()),
        ("vacuum dirty", dirty, vacuum),
        (
            "count(*) where aid > 0",
            ckpt(),
            "select count(*) from ring_t where aid > 0;".into(),
        ),
    ]
}

/// Runs the sweep on `heapdb` (with its `--shared-buffers` replaced by
/// `shared_buffers_mb`) over the accounts-format `file`, `runs` rounds.
pub fn sweep(heapdb: &System, shared_buffers_mb: u64, file: &Path, runs: usize) -> Vec<RingRow> {
    let sys = with_pool(heapdb, shared_buffers_mb);
    let mut session = match sys.open() {
        Ok(s) => Some(s),
        Err(e) => {
            return vec![RingRow {
                pages: 0,
                times: vec![("start".into(), Err(e))],
            }]
        }
    };
    let mut out = Vec::new();
    for pages in RING_PAGES {
        let stmts = sweep_statements(pages, file);
        let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); stmts.len()];
        let mut errors: Vec<Option<String>> = vec![None; stmts.len()];
        for _ in 0..runs {
            for (i, (_, prep, timed)) in stmts.iter().enumerate() {
                let Some(s) = session.as_mut() else { break };
                let result = prep
                    .iter()
                    .try_for_each(|p| s.run(p).map(|_| ()))
                    .and_then(|_| s.run(timed));
                match result {
                    Ok(o) => samples[i].push(o.time()),
                    Err(e) => errors[i] = Some(e),
                }
            }
        }
        let times = stmts
            .iter()
            .enumerate()
            .map(|(i, (label, _, _))| {
                let t = match &errors[i] {
                    Some(e) => Err(e.clone()),
                    None => median(&samples[i]).ok_or_else(|| "no samples".to_string()),
                };
                (label.to_string(), t)
            })
            .collect();
        eprintln!("bench: ring_sweep {} kB done", pages * 8);
        out.push(RingRow { pages, times });
    }
    if let Some(s) = session.take() {
        s.close();
    }
    out
}

/// heapdb's launcher with its `--shared-buffers` replaced.
fn with_pool(heapdb: &System, shared_buffers_mb: u64) -> System {
    let mut sys = System {
        kind: heapdb.kind,
        launcher: heapdb.launcher.clone(),
        unavailable: None,
    };
    if let Launcher::Heapdb { shared_buffers, .. } = &mut sys.launcher {
        *shared_buffers = format!("{shared_buffers_mb}MB");
    }
    sys
}

/// What [`scan_memory`] measured.
#[derive(Debug, Clone, Copy)]
pub struct ScanMemory {
    /// The bulk-read ring, in 8 kB buffers.
    pub ring: u64,
    /// The scan's participants (the leader and its parallel workers), who
    /// share the ring.
    pub participants: u64,
    /// Pages of the warm-up table (no ring: under a quarter of the pool).
    pub warm_pages: u64,
    /// After start-up.
    pub fresh: Memory,
    /// After the warm-up scan of the small table.
    pub start: Memory,
    /// After the first scan of the big table.
    pub first: Memory,
    /// After a second scan in the same process.
    pub second: Memory,
}

/// Pages of the warm-up table for a pool of `shared_buffers_mb`: three
/// quarters of the quarter of the pool below which a scan takes no ring,
/// so it is read into the pool like any small table (and, from 8 MB, in
/// parallel like the big one).
pub fn warm_pages(shared_buffers_mb: u64) -> u64 {
    shared_buffers_mb * 1024 / 8 / 4 * 3 / 4
}

/// The memory target: a fresh heapdb with a pool of `shared_buffers_mb`
/// scans `ring_t` (left by the sweep, four times the pool) at the default
/// 256 kB ring, then once more. The growth of its peak RSS should be about
/// the ring, not the table or the pool.
///
/// A process's first scan also runs code for the first time and starts
/// the workers' stacks and malloc arenas: costs of the first query of any
/// kind, not of the table's size. So the same scan of a small table
/// (`ring_w`, [`warm_pages`], built here from `ring_t`) runs first, and the
/// growth is taken from after it; [`memory_note`] gives both figures and
/// what they are made of.
pub fn scan_memory(heapdb: &System, shared_buffers_mb: u64) -> Result<ScanMemory, String> {
    let sys = with_pool(heapdb, shared_buffers_mb);
    let warm_pages = warm_pages(shared_buffers_mb);
    let mut prep = sys.open()?;
    for stmt in [
        "DROP TABLE IF EXISTS ring_w;".to_string(),
        accounts_ddl("ring_w"),
        format!(
            "INSERT INTO ring_w SELECT * FROM ring_t WHERE aid <= {};",
            warm_pages as i64 * ACCOUNTS_PER_PAGE
        ),
        "VACUUM ring_w;".into(),
        "CHECKPOINT;".into(),
    ] {
        prep.run(&stmt)?;
    }
    prep.close();
    let mut s = sys.open()?;
    s.run("SET bulkread_ring_size = '256kB';")?;
    let workers: u64 = s
        .query("SHOW max_parallel_workers_per_gather;")?
        .iter()
        .find_map(|l| l.trim().parse().ok())
        .ok_or("no max_parallel_workers_per_gather")?;
    let mem = |s: &Session| s.memory().ok_or("no memory figures in /proc");
    let fresh = mem(&s)?;
    s.run("select count(*) from ring_w where aid > 0;")?;
    let start = mem(&s)?;
    let scan = "select count(*) from ring_t where aid > 0;";
    s.run(scan)?;
    let first = mem(&s)?;
    s.run(scan)?;
    let second = mem(&s)?;
    s.close();
    Ok(ScanMemory {
        ring: 256 / 8,
        participants: workers + 1,
        warm_pages,
        fresh,
        start,
        first,
        second,
    })
}

/// `+N KiB` (or `-N KiB`) from `a` to `b`.
fn grew(a: u64, b: u64) -> String {
    if b >= a {
        format!("+{}", fmt_kib(b - a))
    } else {
        format!("-{}", fmt_kib(a - b))
    }
}

/// The memory line under the sweep's table: the growth of the peak RSS
/// over the big table's first scan, after the warm-up and in all, and what
/// each is made of.
pub fn memory_note(m: &ScanMemory) -> String {
    let share = (m.ring / m.participants.max(1)).max(1);
    format!(
        "a fresh heapdb scanned a {} table (no ring) and then the table: its peak RSS went from {} to {} over that scan ({}), \
         at a {} kB bulk-read ring shared by the scan's {} participants ({} buffers each, {} of frames in all): \
         anonymous memory {} ({} in huge pages), file-backed {}{}; \
         counted from start-up instead (the small table's pages in the pool, code run for the first time, the workers' stacks and malloc arenas), {}: \
         anonymous {}, file-backed {}; a second scan: {}",
        fmt_kib(m.warm_pages * 8),
        fmt_kib(m.start.peak),
        fmt_kib(m.first.peak),
        grew(m.start.peak, m.first.peak),
        m.ring * 8,
        m.participants,
        share,
        fmt_kib(share * m.participants * 8),
        grew(m.start.anon, m.first.anon),
        grew(m.start.anon_huge, m.first.anon_huge),
        grew(m.start.file, m.first.file),
        if m.start.anon_huge > 0 {
            " (the pool's frames are in 2 MB huge pages, so the ring's may lie in one the warm-up made resident)"
        } else {
            ""
        },
        grew(m.fresh.peak, m.first.peak),
        grew(m.fresh.anon, m.first.anon),
        grew(m.fresh.file, m.first.file),
        grew(m.first.peak, m.second.peak),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_note_says_what_the_growth_is_made_of() {
        let m = |peak, anon, file, anon_huge| Memory {
            peak,
            anon,
            file,
            anon_huge,
        };
        let note = memory_note(&ScanMemory {
            ring: 32,
            participants: 3,
            warm_pages: 3072,
            fresh: m(20_000, 16_000, 4_000, 0),
            start: m(27_000, 22_000, 5_000, 0),
            first: m(27_256, 22_240, 5_016, 0),
            second: m(27_256, 22_240, 5_016, 0),
        });
        assert!(
            note.starts_with("a fresh heapdb scanned a 24.0 MiB table"),
            "{note}"
        );
        assert!(
            note.contains("from 26.4 MiB to 26.6 MiB over that scan (+256 KiB)"),
            "{note}"
        );
        assert!(
            note.contains("3 participants (10 buffers each, 240 KiB of frames in all)"),
            "{note}"
        );
        assert!(
            note.contains("anonymous memory +240 KiB (+0 KiB in huge pages), file-backed +16 KiB"),
            "{note}"
        );
        assert!(
            note.contains("malloc arenas), +7.1 MiB: anonymous +6.1 MiB, file-backed +1016 KiB"),
            "{note}"
        );
        assert!(note.ends_with("a second scan: +0 KiB"), "{note}");
        assert!(!note.contains("huge pages, so"), "{note}");
        let huge = memory_note(&ScanMemory {
            ring: 32,
            participants: 3,
            warm_pages: 3072,
            fresh: m(20_000, 16_000, 4_000, 0),
            start: m(27_000, 22_000, 5_000, 20_480),
            first: m(27_000, 22_000, 5_000, 20_480),
            second: m(27_000, 22_000, 5_000, 20_480),
        });
        assert!(
            huge.contains("(+0 KiB), at a 256 kB")
                && huge.contains("2 MB huge pages, so the ring's"),
            "{huge}"
        );
    }

    #[test]
    fn warm_up_table_takes_no_ring_and_goes_parallel() {
        // 128 MB pool: 16384 buffers; a ring from 4096 pages; parallel from 1024.
        assert_eq!(warm_pages(128), 3072);
        assert!(warm_pages(128) < 16384 / 4 && warm_pages(128) >= 1024);
        assert_eq!(grew(10, 4), "-6 KiB");
    }

    #[test]
    fn table_is_four_times_the_pool() {
        assert_eq!(sweep_shared_buffers_mb(1.0), 128);
        assert_eq!(sweep_shared_buffers_mb(0.01), 16);
        // 128 MB pool -> 512 MB table -> 65536 pages of 60 rows.
        assert_eq!(sweep_rows(128), 65_536 * 60);
    }

    #[test]
    fn statements_set_all_three_rings() {
        let s = sweep_statements(32, Path::new("/w/ring.tsv"));
        let labels: Vec<&str> = s.iter().map(|(l, _, _)| *l).collect();
        assert_eq!(
            labels,
            [
                "copy",
                "vacuum no hint bits",
                "vacuum clean",
                "vacuum dirty",
                "count(*) where aid > 0"
            ]
        );
        let prep = &s[0].1;
        for ring in [
            "bulkwrite_ring_size",
            "bulkread_ring_size",
            "vacuum_ring_size",
        ] {
            assert!(prep.contains(&format!("SET {ring} = '256kB';")), "{prep:?}");
        }
        assert_eq!(s[0].2, "COPY ring_t FROM '/w/ring.tsv';");
        assert!(s[3].1[0].starts_with("DELETE FROM ring_t WHERE aid % 60 = 1"));
        assert!(s
            .iter()
            .skip(1)
            .all(|(_, p, _)| p.last().unwrap() == "CHECKPOINT;"));
    }
}
