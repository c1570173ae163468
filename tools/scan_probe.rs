//! The standalone scan loop behind `src/storage/prefetch.rs` and the clock's
//! runs (`src/storage/clock.rs`): heapdb's access pattern over a cached heap
//! with nothing else in the loop, to see what bounds a scan.
//!
//! It builds heap-like pages in one huge-page buffer (tuples placed from
//! the page's end down, as heapdb places them; every line pointer NORMAL)
//! and counts, per line pointer, the tuples whose header word matches and
//! whose column is non-negative: the fused loop's reads (pointer, header
//! word, one value). Variants, each the best of 5 runs:
//! - prefetch of the next page: none, all 128 lines at the page's start
//!   (heapdb before 2026-12-01), a few lines per tuple in address order
//!   (`ahead.rs`'s `Spread`, what heapdb does for narrow rows), or per
//!   tuple the line at its own offset in the next frame (`Ahead::at`,
//!   what heapdb does for rows of two lines or more since 2026-12-02);
//! - pages visited in buffer order (neighbouring frames) or shuffled;
//! - one thread, or two splitting the pages;
//!
//! plus a plain read of every line of the buffer (the bandwidth floor).
//! Two layouts: `t` (40-byte tuples, 185 a page, 20M rows) and
//! `pgbench_accounts` (128-byte tuples, 61 a page, 5M rows).
//!
//! Run: `cargo run --release --example scan_probe` (about 1.6 GB of memory;
//! use `chrt -f 10` on a busy machine).

use std::time::Instant;

const PAGE: usize = 8192;
const HEADER: usize = 24;
const LINES: usize = PAGE / 64;

/// The header word (bytes 16..24) every tuple carries: 4 attributes, no
/// NULLs, data at 24.
const EXPECT: u64 = (4u64 << 16) | (24u64 << 48);
const MASK: u64 = (0x7ffu64 << 16) | (1u64 << 32) | (0xffu64 << 48);

/// A zeroed buffer of `len` bytes, 2 MiB aligned and advised into huge
/// pages (as heapdb's pool frames).
fn huge_buffer(len: usize) -> &'static mut [u8] {
    const HUGE: usize = 2 << 20;
    // SAFETY: an anonymous private mapping, never unmapped (the process
    // ends after the probe); the aligned slice lies inside it.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len + HUGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED, "mmap of {len} bytes");
        let a = ((p as usize + HUGE - 1) & !(HUGE - 1)) as *mut u8;
        libc::madvise(a.cast(), len, libc::MADV_HUGEPAGE);
        std::slice::from_raw_parts_mut(a, len)
    }
}

/// `pages` pages of `per_page` tuples of `width` bytes.
fn build(pages: usize, per_page: usize, width: usize) -> &'static [u8] {
    let buf = huge_buffer(pages * PAGE);
    for p in 0..pages {
        let pg = &mut buf[p * PAGE..(p + 1) * PAGE];
        pg[12..14].copy_from_slice(&((HEADER + 4 * per_page) as u16).to_le_bytes());
        for i in 0..per_page {
            let off = PAGE - (i + 1) * width;
            let lp = (off as u32) | (1 << 15) | ((width as u32) << 17);
            pg[HEADER + 4 * i..HEADER + 4 * i + 4].copy_from_slice(&lp.to_le_bytes());
            pg[off + 16..off + 24].copy_from_slice(&EXPECT.to_le_bytes());
            pg[off + 28..off + 32].copy_from_slice(&((i % 1000) as i32).to_le_bytes());
        }
    }
    buf
}

#[derive(Clone, Copy, PartialEq)]
enum Prefetch {
    None,
    Burst,
    Spread,
    AtTuple,
}

#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing the program sees.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The fused loop's reads over the pages `order` names; returns the count
/// (and whether every header word matched, folded into it).
#[inline(never)]
fn scan(buf: &[u8], order: &[usize], how: Prefetch) -> u64 {
    let mut count = 0u64;
    let mut bad = 0u64;
    for (k, &p) in order.iter().enumerate() {
        let pg = &buf[p * PAGE..(p + 1) * PAGE];
        let next = order.get(k + 1).map(|&n| buf[n * PAGE..].as_ptr());
        let lower = u16::from_le_bytes([pg[12], pg[13]]) as usize;
        let max = (lower - HEADER) / 4;
        if let (Prefetch::Burst, Some(f)) = (how, next) {
            for l in 0..LINES {
                prefetch(f.wrapping_add(l * 64));
            }
        }
        let per = LINES.div_ceil(max);
        let src = pg.as_ptr();
        for i in 0..max {
            if let (Prefetch::Spread, Some(f)) = (how, next) {
                for j in 0..per {
                    let l = i * per + j;
                    if l < LINES {
                        prefetch(f.wrapping_add(l * 64));
                    }
                }
            }
            let at = HEADER + 4 * i;
            let lp = u32::from_le_bytes(pg[at..at + 4].try_into().unwrap());
            let h = ((lp & 0x7fff) as usize).min(PAGE - 32);
            if let (Prefetch::AtTuple, Some(f)) = (how, next) {
                prefetch(f.wrapping_add(h));
            }
            // SAFETY: `h + 32 <= PAGE`: both reads are inside the page.
            unsafe {
                let w = u64::from_le_bytes((src.add(h + 16) as *const [u8; 8]).read());
                bad |= (w & MASK) ^ EXPECT;
                let v = i32::from_le_bytes((src.add(h + 28) as *const [u8; 4]).read());
                count += u64::from(v >= 0);
            }
        }
    }
    count + bad
}

/// The best of 5 runs of `scan` over `order`, split between `threads`.
fn best_ms(buf: &[u8], order: &[usize], how: Prefetch, threads: usize) -> f64 {
    let share = order.len().div_ceil(threads);
    (0..5)
        .map(|_| {
            let t = Instant::now();
            std::thread::scope(|s| {
                for part in order.chunks(share) {
                    s.spawn(move || std::hint::black_box(scan(buf, part, how)));
                }
            });
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::MAX, f64::min)
}

/// The best of 5 plain reads of every line of `buf` on `threads` threads.
fn floor_ms(buf: &[u8], threads: usize) -> f64 {
    let share = buf.len().div_ceil(threads);
    (0..5)
        .map(|_| {
            let t = Instant::now();
            std::thread::scope(|s| {
                for part in buf.chunks(share) {
                    s.spawn(move || {
                        std::hint::black_box(part.chunks(64).map(|l| u64::from(l[0])).sum::<u64>())
                    });
                }
            });
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::MAX, f64::min)
}

fn main() {
    for (name, pages, per_page, width) in [
        ("t (20M rows)", 108_109usize, 185usize, 40usize),
        ("pgbench_accounts (5M rows)", 81_968, 61, 128),
    ] {
        let buf = build(pages, per_page, width);
        let in_order: Vec<usize> = (0..pages).collect();
        let mut shuffled = in_order.clone();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in (1..pages).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            shuffled.swap(i, (x % (i as u64 + 1)) as usize);
        }
        println!("{name}: {} MB", pages * PAGE / 1_000_000);
        for (frames, order) in [
            ("neighbouring frames", &in_order),
            ("shuffled frames", &shuffled),
        ] {
            for (label, how) in [
                ("no prefetch", Prefetch::None),
                ("128-line burst", Prefetch::Burst),
                ("spread", Prefetch::Spread),
                ("at each tuple", Prefetch::AtTuple),
            ] {
                let one = best_ms(buf, order, how, 1);
                let two = best_ms(buf, order, how, 2);
                println!("  {frames:20} {label:15} 1 thread {one:6.1} ms   2 threads {two:6.1} ms");
            }
        }
        println!(
            "  read of every line    1 thread {:6.1} ms   2 threads {:6.1} ms",
            floor_ms(buf, 1),
            floor_ms(buf, 2)
        );
    }
}
