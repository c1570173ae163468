//! Pin/unpin benchmark: the cost of `read_buffer` on a cached page followed
//! by dropping the pin (the fast path every page access takes).
//!
//! Run: `cargo run --release --example pin_bench [iterations]`. Prints ns per
//! pin+unpin pair, single-threaded (one page and many pages), with a shared
//! content lock taken as well, and with 2 threads on different pages; then
//! the throughput of extension through a bulk-write ring and of the page
//! checksum. Single-threaded figures show wall-clock and CPU time: on a
//! shared machine the CPU time is the fairer measure.

use std::hint::black_box;
use std::time::Instant;

use heapdb::storage::{BufferPool, ForkNumber, RelFileNode};

/// This thread's CPU time in ns: unlike wall-clock time it does not count
/// the time the thread waits for a core on a loaded machine.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: plain syscall writing into a local struct.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn main() -> heapdb::Result<()> {
    let iters: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000_000);
    let dir = std::env::temp_dir().join(format!("heapdb-pin-bench-{}", std::process::id()));
    let pool = BufferPool::open(&dir, 1024)?;
    let rel = RelFileNode(1);
    pool.create_relation(rel, ForkNumber::Main)?;
    let pages = 512u32;
    for _ in 0..pages {
        let (_, buf) = pool.extend(rel, ForkNumber::Main, None)?;
        buf.write().mark_dirty();
    }

    let run = |label: &str, f: &dyn Fn(u64) -> heapdb::Result<()>| -> heapdb::Result<()> {
        f(iters / 10)?; // warm up
        let t = Instant::now();
        let cpu = thread_cpu_ns();
        f(iters)?;
        let cpu_ns = (thread_cpu_ns() - cpu) as f64 / iters as f64;
        let ns = t.elapsed().as_nanos() as f64 / iters as f64;
        println!("{label:<44} {ns:7.1} ns per pin+unpin ({cpu_ns:.1} ns of CPU time)");
        Ok(())
    };

    run("one cached page", &|n| {
        for _ in 0..n {
            black_box(pool.read_buffer(rel, ForkNumber::Main, black_box(7), None)?);
        }
        Ok(())
    })?;
    run("512 cached pages in turn", &|n| {
        for i in 0..n {
            black_box(pool.read_buffer(rel, ForkNumber::Main, (i % pages as u64) as u32, None)?);
        }
        Ok(())
    })?;
    run("512 cached pages, plus shared content lock", &|n| {
        for i in 0..n {
            let buf = pool.read_buffer(rel, ForkNumber::Main, (i % pages as u64) as u32, None)?;
            black_box(buf.read()[0]);
        }
        Ok(())
    })?;
    let t = Instant::now();
    std::thread::scope(|s| {
        for th in 0..2u64 {
            let pool = &pool;
            s.spawn(move || {
                for i in 0..iters {
                    let block = ((i % 256) + th * 256) as u32;
                    black_box(
                        pool.read_buffer(rel, ForkNumber::Main, block, None)
                            .expect("cached"),
                    );
                }
            });
        }
    });
    let ns = t.elapsed().as_nanos() as f64 / iters as f64;
    println!(
        "{:<44} {ns:7.1} ns per pin+unpin (per thread)",
        "2 threads, different pages"
    );
    // Extension through a bulk-write ring (the multi-insert path): every
    // page is new, and the ring writes them out as it cycles.
    let load = RelFileNode(2);
    pool.create_relation(load, ForkNumber::Main)?;
    let mut ring = pool.ring(heapdb::storage::StrategyKind::BulkWrite);
    let n = 50_000u32;
    let t = Instant::now();
    for _ in 0..n {
        let (_, buf) = pool.extend(load, ForkNumber::Main, Some(&mut ring))?;
        let mut g = buf.write();
        g[24] = 1;
        g.mark_dirty();
    }
    pool.flush_relation(load)?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{:<44} {:7.0} pages/s ({:.0} MB/s, incl. writes and fsync)",
        "extend + write through bulk-write ring",
        n as f64 / secs,
        n as f64 * 8192.0 / secs / 1e6
    );
    // Page checksum (computed on every write, verified on every read).
    let mut page = vec![0u8; 8192];
    for (i, b) in page.iter_mut().enumerate() {
        *b = (i * 13) as u8;
    }
    let n = 200_000u32;
    let t = Instant::now();
    let mut acc = 0u32;
    for i in 0..n {
        acc =
            acc.wrapping_add(heapdb::storage::checksum::page_checksum(black_box(&page), i) as u32);
    }
    black_box(acc);
    let ns = t.elapsed().as_nanos() as f64 / n as f64;
    println!(
        "{:<44} {ns:7.0} ns per 8 KiB page ({:.1} GB/s)",
        "page checksum",
        8192.0 / ns
    );
    let s = pool.stats();
    println!(
        "counters: hits {} reads {} dirtied {} written {}",
        s.shared_hit, s.shared_read, s.shared_dirtied, s.shared_written
    );
    drop(pool);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
