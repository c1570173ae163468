//! What the disk allows a cold ANALYZE, measured outside heapdb.
//!
//! ANALYZE reads a sorted random sample of 8 kB blocks (30,000 of the
//! ~82,000 of 5M pgbench accounts). This probe reads such a sample from a
//! file evicted from the OS cache (`posix_fadvise(DONTNEED)` before every
//! variant) in each way a reader could, and prints the time and the bytes
//! the device delivered (`/proc/self/io` `read_bytes`), so the bound on
//! "prefetch N times faster than none" is a device figure, not a guess:
//!
//! - `seq-1M`, `seq-8k`: the whole file in 1 MB / 8 kB `pread`s (the
//!   kernel's read-ahead at work for the second);
//! - `qd1`: one 8 kB `pread` per sampled block, in order, nothing announced
//!   (what ANALYZE with `maintenance_io_concurrency = 0` does);
//! - `willneed-N`: the same with `posix_fadvise(WILLNEED)` of each block N
//!   sampled blocks ahead (PostgreSQL 15's `PrefetchBuffer`);
//! - `runs-N`: WILLNEED of each run of adjacent sampled blocks inside a
//!   128 kB stretch, N stretches ahead (heapdb's read-ahead until 2026-12-01);
//! - `span-K`: one `pread` of each K kB window that holds sampled blocks,
//!   gaps included (more bytes, fewer requests);
//! - `threads-T`: T threads taking the next sampled block from a shared
//!   counter, each an 8 kB `pread` (a real queue depth of T);
//!   `runthreads-T`: the same per run of adjacent sampled blocks;
//!   `spanK-tT`: T threads reading K kB windows (gaps included);
//! - `m-gG-xX-dD`: WILLNEED of spans that merge sampled blocks at most G
//!   blocks apart (`gall`: any gap), at most X blocks long, D spans ahead,
//!   the reader doing 8 kB `pread`s.
//!
//! Every variant runs with the file's advice left NORMAL (the kernel's
//! read-ahead on; `read_ahead_kb` of the device applies) and with
//! `POSIX_FADV_RANDOM` (read-ahead off for that descriptor); `--advice
//! normal|random` runs one. Rounds are outermost (each round runs every
//! variant), so a change in the machine's load falls on all alike; cells
//! are medians. `--work-us N` spins N µs after each 8 kB read of the
//! single-reader variants, standing in for ANALYZE's CPU per page;
//! `--only a,b` runs the variants whose names start so.
//!
//!     cargo run --release --example read_probe -- FILE [--mb 670] [--sample 30000] [--rounds 3]
//!
//! FILE is created (filled with non-zero bytes) if it is missing or
//! shorter than `--mb`; it is never deleted.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const BLCKSZ: u64 = 8192;

fn read_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("read_bytes: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// User + system CPU seconds of this process (all threads).
fn cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn fadvise(f: &File, off: u64, len: u64, advice: i32) {
    // SAFETY: a valid open descriptor; the call only changes cache state.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), off as i64, len as i64, advice) };
    assert_eq!(rc, 0, "posix_fadvise");
}

fn evict(path: &str) {
    let f = File::open(path).expect("open to evict");
    fadvise(&f, 0, 0, libc::POSIX_FADV_DONTNEED);
}

/// PostgreSQL's BlockSampler (Knuth's algorithm S): `k` of `n` blocks, sorted.
fn sample(n: u64, k: u64, seed: u64) -> Vec<u64> {
    let mut x = seed | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut out = Vec::with_capacity(k as usize);
    for b in 0..n {
        let need = k - out.len() as u64;
        if need == 0 {
            break;
        }
        if next() * ((n - b) as f64) < need as f64 {
            out.push(b);
        }
    }
    out
}

fn pread8k(f: &File, buf: &mut [u8], block: u64) {
    f.read_exact_at(&mut buf[..BLCKSZ as usize], block * BLCKSZ)
        .expect("pread");
    work();
}

enum Way {
    Seq(u64),
    Qd1,
    WillNeed(usize),
    Runs(usize),
    Span(u64),
    Threads(usize),
    RunThreads(usize),
    SpanThreads(u64, usize),
    /// WILLNEED of spans that merge sampled blocks at most `gap` blocks
    /// apart, at most `max` blocks each, `depth` spans ahead.
    Merge {
        gap: u64,
        max: u64,
        depth: usize,
    },
}

/// Busy work per sampled block read by a single reader (`--work-us`),
/// standing in for ANALYZE's CPU per page.
static WORK_NS: AtomicUsize = AtomicUsize::new(0);

fn work() {
    let ns = WORK_NS.load(Ordering::Relaxed) as u128;
    if ns > 0 {
        let t = Instant::now();
        while t.elapsed().as_nanos() < ns {
            std::hint::spin_loop();
        }
    }
}

/// Spans covering `blocks`: (first block, blocks, last list index).
fn merged(blocks: &[u64], gap: u64, max: u64) -> Vec<(u64, u64, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < blocks.len() {
        let first = blocks[i];
        while i + 1 < blocks.len()
            && blocks[i + 1] - blocks[i] - 1 <= gap
            && blocks[i + 1] - first < max
        {
            i += 1;
        }
        out.push((first, blocks[i] - first + 1, i));
        i += 1;
    }
    out
}

fn run(f: &File, blocks: &[u64], nblocks: u64, way: &Way) {
    let mut buf = vec![0u8; 1 << 20];
    match *way {
        Way::Seq(chunk) => {
            let mut off = 0;
            while off < nblocks * BLCKSZ {
                let n = chunk.min(nblocks * BLCKSZ - off);
                f.read_exact_at(&mut buf[..n as usize], off).expect("pread");
                off += n;
            }
        }
        Way::Qd1 => blocks.iter().for_each(|&b| pread8k(f, &mut buf, b)),
        Way::WillNeed(n) => {
            for (i, &b) in blocks.iter().enumerate() {
                if i == 0 {
                    for &a in &blocks[..n.min(blocks.len())] {
                        fadvise(f, a * BLCKSZ, BLCKSZ, libc::POSIX_FADV_WILLNEED);
                    }
                } else if let Some(&a) = blocks.get(i + n - 1) {
                    fadvise(f, a * BLCKSZ, BLCKSZ, libc::POSIX_FADV_WILLNEED);
                }
                pread8k(f, &mut buf, b);
            }
        }
        Way::Runs(n) => {
            // Stretches of at most 16 blocks, announced run by run, n ahead.
            let mut stretches = Vec::new();
            let mut i = 0;
            while i < blocks.len() {
                let first = blocks[i];
                let mut last = i;
                while last + 1 < blocks.len() && blocks[last + 1] < first + 16 {
                    last += 1;
                }
                stretches.push((i, last));
                i = last + 1;
            }
            let announce = |&(a, z): &(usize, usize)| {
                let mut k = a;
                while k <= z {
                    let r = k;
                    while k < z && blocks[k + 1] == blocks[k] + 1 {
                        k += 1;
                    }
                    let len = (blocks[k] - blocks[r] + 1) * BLCKSZ;
                    fadvise(f, blocks[r] * BLCKSZ, len, libc::POSIX_FADV_WILLNEED);
                    k += 1;
                }
            };
            stretches.iter().take(n).for_each(announce);
            for (s, &(a, z)) in stretches.iter().enumerate() {
                if s > 0 {
                    if let Some(st) = stretches.get(s + n - 1) {
                        announce(st);
                    }
                }
                (a..=z).for_each(|k| pread8k(f, &mut buf, blocks[k]));
            }
        }
        Way::Span(kb) => {
            let per = kb * 1024 / BLCKSZ;
            let mut i = 0;
            while i < blocks.len() {
                let w = blocks[i] / per;
                let end = ((w + 1) * per).min(nblocks);
                let first = blocks[i];
                while i < blocks.len() && blocks[i] < end {
                    i += 1;
                }
                let last = blocks[i - 1];
                let len = ((last - first + 1) * BLCKSZ) as usize;
                f.read_exact_at(&mut buf[..len], first * BLCKSZ)
                    .expect("pread");
            }
        }
        Way::Merge { gap, max, depth } => {
            let spans = merged(blocks, gap, max);
            let advise = |&(b, n, _): &(u64, u64, usize)| {
                fadvise(f, b * BLCKSZ, n * BLCKSZ, libc::POSIX_FADV_WILLNEED)
            };
            spans.iter().take(depth).for_each(advise);
            let mut s = 0;
            for (i, &b) in blocks.iter().enumerate() {
                if i > spans[s].2 {
                    s += 1;
                    if let Some(sp) = spans.get(s + depth - 1) {
                        advise(sp);
                    }
                }
                pread8k(f, &mut buf, b);
            }
        }
        Way::SpanThreads(kb, t) => {
            // Windows of kb kB holding sampled blocks, read first to last
            // sampled block, by t threads.
            let per = kb * 1024 / BLCKSZ;
            let mut spans = Vec::new();
            let mut i = 0;
            while i < blocks.len() {
                let end = ((blocks[i] / per + 1) * per).min(nblocks);
                let first = blocks[i];
                while i < blocks.len() && blocks[i] < end {
                    i += 1;
                }
                spans.push((first, blocks[i - 1] - first + 1));
            }
            let next = AtomicUsize::new(0);
            std::thread::scope(|s| {
                for _ in 0..t {
                    s.spawn(|| {
                        let mut buf = vec![0u8; (kb * 1024) as usize];
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&(b, n)) = spans.get(i) else { break };
                            f.read_exact_at(&mut buf[..(n * BLCKSZ) as usize], b * BLCKSZ)
                                .expect("pread");
                        }
                    });
                }
            });
        }
        Way::RunThreads(t) => {
            let mut runs = Vec::new();
            let mut i = 0;
            while i < blocks.len() {
                let r = i;
                while i + 1 < blocks.len() && blocks[i + 1] == blocks[i] + 1 {
                    i += 1;
                }
                runs.push((blocks[r], blocks[i] - blocks[r] + 1));
                i += 1;
            }
            let next = AtomicUsize::new(0);
            std::thread::scope(|s| {
                for _ in 0..t {
                    s.spawn(|| {
                        let mut buf = vec![0u8; 1 << 20];
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&(b, n)) = runs.get(i) else { break };
                            f.read_exact_at(&mut buf[..(n * BLCKSZ) as usize], b * BLCKSZ)
                                .expect("pread");
                        }
                    });
                }
            });
        }
        Way::Threads(t) => {
            let next = AtomicUsize::new(0);
            std::thread::scope(|s| {
                for _ in 0..t {
                    s.spawn(|| {
                        let mut buf = vec![0u8; BLCKSZ as usize];
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&b) = blocks.get(i) else { break };
                            pread8k(f, &mut buf, b);
                        }
                    });
                }
            });
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse().expect("a number"))
            .unwrap_or(default)
    };
    let path = args
        .first()
        .filter(|a| !a.starts_with("--"))
        .expect("usage: read_probe FILE [--mb N] [--sample K] [--rounds R] [--only NAME,...]")
        .clone();
    let opt_str = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').map(str::to_string).collect());
    let mb = opt("--mb", 670);
    let k = opt("--sample", 30_000);
    let rounds = opt("--rounds", 3);
    WORK_NS.store(opt("--work-us", 0) as usize * 1000, Ordering::Relaxed);
    let size = mb << 20;
    if std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) < size {
        let mut f = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .expect("create");
        let chunk: Vec<u8> = (0..1 << 20).map(|i| (i % 251 + 1) as u8).collect();
        for _ in 0..mb {
            f.write_all(&chunk).expect("write");
        }
        f.sync_all().expect("fsync");
    }
    let nblocks = size / BLCKSZ;
    let blocks = sample(nblocks, k.min(nblocks), 0x5eed);
    println!(
        "{path}: {nblocks} blocks ({mb} MB), sample {} blocks ({} MB), rounds {rounds} (median)",
        blocks.len(),
        (blocks.len() as u64 * BLCKSZ) >> 20
    );
    let ways: Vec<(String, Way)> = vec![
        ("seq-1M".into(), Way::Seq(1 << 20)),
        ("seq-8k".into(), Way::Seq(BLCKSZ)),
        ("qd1".into(), Way::Qd1),
        ("willneed-8".into(), Way::WillNeed(8)),
        ("willneed-32".into(), Way::WillNeed(32)),
        ("willneed-128".into(), Way::WillNeed(128)),
        ("willneed-512".into(), Way::WillNeed(512)),
        ("runs-10".into(), Way::Runs(10)),
        ("runs-64".into(), Way::Runs(64)),
        ("span-32".into(), Way::Span(32)),
        ("span-128".into(), Way::Span(128)),
        ("span-1024".into(), Way::Span(1024)),
        ("threads-2".into(), Way::Threads(2)),
        ("threads-4".into(), Way::Threads(4)),
        ("threads-8".into(), Way::Threads(8)),
        ("threads-16".into(), Way::Threads(16)),
        ("threads-32".into(), Way::Threads(32)),
        ("threads-64".into(), Way::Threads(64)),
        ("threads-128".into(), Way::Threads(128)),
        ("runthreads-4".into(), Way::RunThreads(4)),
        ("span128-t4".into(), Way::SpanThreads(128, 4)),
        ("span128-t16".into(), Way::SpanThreads(128, 16)),
        ("span1024-t2".into(), Way::SpanThreads(1024, 2)),
        ("span1024-t4".into(), Way::SpanThreads(1024, 4)),
        ("span1024-t8".into(), Way::SpanThreads(1024, 8)),
        ("runthreads-16".into(), Way::RunThreads(16)),
        ("runthreads-64".into(), Way::RunThreads(64)),
    ];
    let mut ways = ways;
    for (gap, max) in [(0, 16), (4, 32), (1 << 20, 256)] {
        for depth in [16, 64] {
            ways.push((
                format!("m-g{gap}-x{max}-d{depth}").replace("g1048576", "gall"),
                Way::Merge { gap, max, depth },
            ));
        }
    }
    let chosen: Vec<&(String, Way)> = ways
        .iter()
        .filter(|(name, _)| {
            only.as_ref()
                .map_or(true, |o| o.iter().any(|w| name.starts_with(w.as_str())))
        })
        .collect();
    // Rounds outermost, so a change in the machine's load falls on every
    // variant alike; each cell is the median of its rounds.
    let advices: Vec<i32> = match opt_str("--advice").as_deref() {
        Some("normal") => vec![libc::POSIX_FADV_NORMAL],
        Some("random") => vec![libc::POSIX_FADV_RANDOM],
        _ => vec![libc::POSIX_FADV_NORMAL, libc::POSIX_FADV_RANDOM],
    };
    let mut header = format!("{:<18}", "way");
    for &a in &advices {
        let name = if a == libc::POSIX_FADV_NORMAL {
            "normal"
        } else {
            "random"
        };
        header += &format!(
            " {:>10} {:>7} {:>9}",
            format!("{name} ms"),
            "cpu ms",
            "MB read"
        );
    }
    println!("{header}");
    let mut cells = vec![vec![(Vec::new(), Vec::new(), Vec::new()); advices.len()]; chosen.len()];
    for _ in 0..rounds {
        for (w, (_, way)) in chosen.iter().enumerate() {
            for (a, &advice) in advices.iter().enumerate() {
                evict(&path);
                let f = File::open(&path).expect("open");
                fadvise(&f, 0, 0, advice);
                let before = read_bytes();
                let c0 = cpu();
                let t = Instant::now();
                run(&f, &blocks, nblocks, way);
                let cell = &mut cells[w][a];
                cell.0.push(t.elapsed().as_secs_f64() * 1e3);
                cell.1.push((cpu() - c0) * 1e3);
                cell.2
                    .push((read_bytes() - before) as f64 / (1 << 20) as f64);
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (w, (name, _)) in chosen.iter().enumerate() {
        let mut line = format!("{name:<18}");
        for cell in &mut cells[w] {
            line += &format!(
                " {:>10.1} {:>7.0} {:>9.0}",
                median(&mut cell.0),
                median(&mut cell.1),
                median(&mut cell.2)
            );
        }
        println!("{line}");
    }
}
