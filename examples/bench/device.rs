//! What the disk leaves a cold ANALYZE's prefetch, measured in the same run
//! on the heap file the ANALYZE read.
//!
//! The target asks a cold ANALYZE with prefetch to be 3x faster than with
//! `maintenance_io_concurrency = 0`. Without prefetch, ANALYZE reads its
//! sorted sample with plain 8 kB `pread`s and the kernel's own read-ahead
//! left on (as PostgreSQL does), which streams a dense sample's whole file.
//! The best any prefetch can do is to have every sampled block in flight
//! at once: the device's random-read rate at a deep queue. So the ratio of
//! the two device times, with no CPU in the loop, bounds prefetch / none:
//!
//! - `in order`: the sample's blocks in ascending order, one 8 kB `pread`
//!   each, the file's advice NORMAL (what "none" gets from the disk);
//! - `in flight`: the same blocks read by [`THREADS`] threads taking the
//!   next block from a shared counter, the file's advice RANDOM (no
//!   read-ahead, so only the sample's bytes are read), i.e. that many
//!   requests queued at the device at all times.
//!
//! Each is preceded by evicting the file (`posix_fadvise(DONTNEED)`), and
//! the two alternate for [`ROUNDS`] rounds; the medians are reported.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use heapdb::commands::stats::{BlockSampler, Rng};

use crate::evict::evict_file;
use crate::stats::median;

/// Reads kept in flight by the `in flight` variant (the deepest queue that
/// helped in `tools/read_probe`).
pub const THREADS: usize = 128;
/// Rounds of each variant.
pub const ROUNDS: usize = 3;
const BLCKSZ: u64 = 8192;

/// `k` of `n` block numbers, ascending, from a fixed seed: ANALYZE's own
/// block sampler, so the device reads what an ANALYZE would.
pub fn sample(n: u64, k: u64, seed: u64) -> Vec<u64> {
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    let k = u32::try_from(k).unwrap_or(u32::MAX);
    BlockSampler::new(n, k)
        .blocks(&mut Rng::new(seed))
        .into_iter()
        .map(u64::from)
        .collect()
}

fn advise(f: &File, advice: i32) -> Result<(), String> {
    // SAFETY: a valid open descriptor; the call only changes cache policy.
    match unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, advice) } {
        0 => Ok(()),
        rc => Err(format!(
            "posix_fadvise: {}",
            std::io::Error::from_raw_os_error(rc)
        )),
    }
}

fn in_order(path: &Path, blocks: &[u64]) -> Result<Duration, String> {
    evict_file(path)?;
    let f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = vec![0u8; BLCKSZ as usize];
    let t = Instant::now();
    for &b in blocks {
        f.read_exact_at(&mut buf, b * BLCKSZ)
            .map_err(|e| format!("pread: {e}"))?;
    }
    Ok(t.elapsed())
}

fn in_flight(path: &Path, blocks: &[u64]) -> Result<Duration, String> {
    evict_file(path)?;
    let f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    advise(&f, libc::POSIX_FADV_RANDOM)?;
    let next = AtomicUsize::new(0);
    let t = Instant::now();
    let failed = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    let mut buf = vec![0u8; BLCKSZ as usize];
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&b) = blocks.get(i) else {
                            return false;
                        };
                        if f.read_exact_at(&mut buf, b * BLCKSZ).is_err() {
                            return true;
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().any(|h| h.join().unwrap_or(true))
    });
    if failed {
        return Err(format!("pread of {} failed", path.display()));
    }
    Ok(t.elapsed())
}

/// The report's line for the cold ANALYZE: both device times for a sample
/// of `k` blocks of the heap file `path`, and the bound on prefetch / none
/// they give.
pub fn analyze_bound(path: &Path, k: u64) -> Result<String, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    let nblocks = len / BLCKSZ;
    let blocks = sample(nblocks, k, 0x5eed);
    if blocks.is_empty() {
        return Err(format!("{} is empty", path.display()));
    }
    let (mut order, mut flight) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        order.push(in_order(path, &blocks)?);
        flight.push(in_flight(path, &blocks)?);
    }
    let (Some(a), Some(b)) = (median(&order), median(&flight)) else {
        return Err("no rounds".into());
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    Ok(format!(
        "analyze_cold: the disk reads the sample's {} of {nblocks} blocks ({:.0} MB) \
         in order with the kernel's read-ahead (what no prefetch gets) in {:.0} ms, \
         and with all {THREADS} in flight, read-ahead off (the best a prefetch can \
         get) in {:.0} ms: prefetch / none can reach at most {:.2}x on this disk \
         (target 3x; medians of {ROUNDS}, the file evicted before each)",
        blocks.len(),
        (blocks.len() as u64 * BLCKSZ) as f64 / 1e6,
        ms(a),
        ms(b),
        ms(a) / ms(b),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_is_sorted_distinct_and_of_the_asked_size() {
        let s = sample(1000, 300, 7);
        assert_eq!(s.len(), 300);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert!(*s.last().unwrap() < 1000);
        assert_eq!(sample(10, 300, 7), (0..10).collect::<Vec<_>>());
        assert_eq!(s, sample(1000, 300, 7), "the same seed, the same sample");
    }

    #[test]
    fn both_variants_read_a_real_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("heap");
        std::fs::write(&path, vec![1u8; 64 * BLCKSZ as usize]).unwrap();
        let line = analyze_bound(&path, 16).unwrap();
        assert!(line.contains("16 of 64 blocks"), "{line}");
        let short = dir.path().join("empty");
        std::fs::write(&short, b"").unwrap();
        assert!(analyze_bound(&short, 16).is_err());
    }
}
