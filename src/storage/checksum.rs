//! Page checksums: a 16-bit value in bytes 8..10 of every page on disk.
//!
//! The buffer pool computes the checksum of a page just before it writes the
//! page and verifies it just after it reads the page; nothing else reads or
//! writes those two bytes (the page layout code treats them as opaque).
//!
//! The algorithm follows PostgreSQL's `pg_checksum_page` in spirit, with
//! CRC-32C (hardware-accelerated through the `crc32c` crate) in place of
//! PostgreSQL's parallel FNV-1a:
//!
//! 1. CRC-32C over the whole page with the checksum bytes taken as zero and
//!    the *hint bits* taken as clear (below),
//! 2. then over the block number (little-endian), so a page written to the
//!    wrong place fails verification even when its bytes are intact,
//! 3. folded to 16 bits as `(crc % 65535) + 1`: the result is never zero.
//!
//! A page of all zero bytes is a valid "new" page (a block that was extended
//! but never initialised, or a hole in a file): it carries no checksum, is
//! written as zeros and always verifies.
//!
//! # Hint bits are left out
//!
//! PostgreSQL checksums hint bits too, so with `data_checksums` the first
//! hint-only change to a page after a checkpoint must log a full-page image
//! (`wal_log_hints`): a torn write of it would otherwise fail verification
//! with nothing in the log to repair it. heapdb instead computes the
//! checksum as if these bits were clear:
//!
//! - `PD_ALL_VISIBLE` in the page header's flags;
//! - in each tuple header a NORMAL line pointer points at, the four infomask
//!   hint bits (`XMIN_COMMITTED`, `XMIN_INVALID`, `XMAX_COMMITTED`,
//!   `XMAX_INVALID`: tuple bytes 20..22, [`TUPLE_INFOMASK_OFFSET`]).
//!
//! A change that only sets such bits then leaves the checksum as it was, and
//! a write of it torn at any 512-byte sector boundary is still a valid page:
//! every mix of old and new sectors differs from the old page only in bits
//! the checksum ignores (the header — LSN, checksum, flags, `lower` — and
//! the line pointers are unchanged, or all in the first sector), and every
//! such mix is a page a reader may see (an unset hint bit is always safe;
//! `PD_ALL_VISIBLE` is only set once every commit it relies on is durable,
//! see `access/heap/vacuum.rs`). So hint bits can be written out with no
//! log record and VACUUM's "hints + all-visible" needs no image.
//!
//! The price: a flipped hint bit on disk is not detected (a flipped
//! `XMIN_INVALID` hides a row, a flipped `XMIN_COMMITTED` on an aborted
//! row shows it). Every other bit of the page still is. This module knows
//! one thing about heap tuples for that (where their infomask is: a const
//! assertion in `access/heap/tuple.rs` keeps the two in step).
//!
//! The masking is a pure function of the page bytes and cannot be led out
//! of bounds by a corrupt page: line pointers are read only from below the
//! header's `lower` (clamped to the page), and only a tuple header that lies
//! wholly above the line-pointer array is masked, so masking never changes
//! a byte the masking itself reads.

use super::{BlockNumber, BLCKSZ};

/// Byte offset of the 16-bit checksum in the page header.
pub const CHECKSUM_OFFSET: usize = 8;

/// Byte offset of the page header's flags.
const FLAGS_OFFSET: usize = 10;
/// Byte offset of the page header's `lower` (end of the line pointers).
const LOWER_OFFSET: usize = 12;
/// Size of the page header (where the line pointers start).
const HEADER_SIZE: usize = 24;
/// The header flag left out of the checksum (`page::PD_ALL_VISIBLE`).
pub const HINT_PAGE_FLAGS: u16 = 0x0004;
/// Offset of the infomask within a tuple header (`tuple::T_INFOMASK`).
pub const TUPLE_INFOMASK_OFFSET: usize = 20;
/// Size of a tuple header (`tuple::HEADER_SIZE`): shorter tuples are not masked.
pub const TUPLE_HEADER_SIZE: usize = 23;
/// The infomask bits left out of the checksum (`tuple::HEAP_HINT_BITS`).
pub const HINT_INFOMASK_BITS: u16 = 0x0100 | 0x0200 | 0x0400 | 0x0800;
/// Most line pointers a page can hold (a corrupt `lower` is clamped to this).
const MAX_LINE_POINTERS: usize = (BLCKSZ - HEADER_SIZE) / 4;
/// Line pointer flag of a tuple (`page::LP_NORMAL`).
const LP_NORMAL: u32 = 1;

#[inline]
fn rd16(p: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}

#[inline]
fn wr16(p: &mut [u8], at: usize, v: u16) {
    p[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

/// Clears the hint bits of the infomask line pointer `k` (0-based) masks,
/// if it masks one (see the module doc for the bounds) and they are set,
/// noting its position and old value in `saved[*n]`.
#[inline(always)]
fn mask_one(
    p: &mut [u8; BLCKSZ],
    k: usize,
    lp_end: usize,
    saved: &mut [std::mem::MaybeUninit<u32>; MAX_LINE_POINTERS],
    n: &mut usize,
) {
    let at = HEADER_SIZE + 4 * k;
    let raw = u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]]);
    let (off, flags, len) = (
        (raw & 0x7fff) as usize,
        (raw >> 15) & 3,
        (raw >> 17) as usize,
    );
    if flags != LP_NORMAL
        || len < TUPLE_HEADER_SIZE
        || off < lp_end
        || off + TUPLE_HEADER_SIZE > BLCKSZ
    {
        return;
    }
    let pos = off + TUPLE_INFOMASK_OFFSET;
    let was = rd16(p, pos);
    if was & HINT_INFOMASK_BITS != 0 {
        saved[*n].write(((pos as u32) << 16) | u32::from(was));
        *n += 1;
        wr16(p, pos, was & !HINT_INFOMASK_BITS);
    }
}

/// Whether any of the four line pointers at byte `at` is NORMAL with a
/// length of at least a tuple header: the first two tests of
/// [`mask_one`], four at once with SSE2 (every x86-64 CPU has it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn any_maskable4(p: &[u8; BLCKSZ], at: usize) -> bool {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi32, _mm_cmpgt_epi32, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_set1_epi32, _mm_srli_epi32,
    };
    let lps = &p[at..at + 16];
    // SAFETY: `lps` is 16 readable bytes; SSE2 is part of x86-64; the load
    // is unaligned.
    unsafe {
        let v = _mm_loadu_si128(lps.as_ptr().cast::<__m128i>());
        let normal = _mm_cmpeq_epi32(
            _mm_and_si128(_mm_srli_epi32::<15>(v), _mm_set1_epi32(3)),
            _mm_set1_epi32(LP_NORMAL as i32),
        );
        // Lengths are 15 bits: a signed comparison is exact.
        let long = _mm_cmpgt_epi32(
            _mm_srli_epi32::<17>(v),
            _mm_set1_epi32(TUPLE_HEADER_SIZE as i32 - 1),
        );
        _mm_movemask_epi8(_mm_and_si128(normal, long)) != 0
    }
}

/// Whether every byte of `page` is zero (a never-initialised page).
///
/// Compares 8 bytes at a time; the early exit on the first non-zero word
/// makes this nearly free for initialised pages (their header is non-zero).
pub fn page_is_all_zero(page: &[u8]) -> bool {
    let (head, words, tail) = {
        // SAFETY: every bit pattern is a valid u64; align_to only splits.
        unsafe { page.align_to::<u64>() }
    };
    head.iter().all(|&b| b == 0) && words.iter().all(|&w| w == 0) && tail.iter().all(|&b| b == 0)
}

/// The CRC part of the checksum over `page` as it is, its checksum bytes
/// taken as zero: on a page the caller may change for a moment, they are
/// zeroed for one pass over the whole page ([`super::crc_page::crc32c`])
/// and put back.
#[inline]
fn crc_of_in_place(page: &mut [u8], block: BlockNumber) -> u16 {
    let Ok(p) = <&mut [u8; BLCKSZ]>::try_from(page) else {
        unreachable!("a page is BLCKSZ bytes");
    };
    let stored = [p[CHECKSUM_OFFSET], p[CHECKSUM_OFFSET + 1]];
    p[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].fill(0);
    let crc = super::crc_page::crc32c(p, &block.to_le_bytes());
    p[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].copy_from_slice(&stored);
    ((crc % 65535) + 1) as u16
}

/// The checksum of `page` at block `block`, computed in place: the hint bits
/// are cleared, the CRC taken, and every byte put back as it was (in reverse
/// order, so overlapping tuple headers of a corrupt page restore exactly).
/// The page is unchanged on return.
///
/// One pass over the line pointers clears the hint bits of each masked
/// infomask in line-pointer order (each read after the clears before it,
/// as the definition says) and remembers only those it changed: a page of
/// tuples without hints, or of index entries too short to be masked, saves
/// nothing and restores nothing.
pub fn page_checksum_in_place(page: &mut [u8], block: BlockNumber) -> u16 {
    let Ok(p) = <&mut [u8; BLCKSZ]>::try_from(page) else {
        unreachable!("a page is BLCKSZ bytes");
    };
    // Position and original value of each changed infomask (`pos << 16 |
    // value`): a page holds at most MAX_LINE_POINTERS of them. On the stack
    // and left uninitialised: zeroing 8 kB per call was a third of the cost.
    let mut saved = [std::mem::MaybeUninit::<u32>::uninit(); MAX_LINE_POINTERS];
    let mut n = 0;
    let flags = rd16(p, FLAGS_OFFSET);
    let lower = rd16(p, LOWER_OFFSET) as usize;
    if lower > HEADER_SIZE {
        let count = ((lower - HEADER_SIZE) / 4).min(MAX_LINE_POINTERS);
        let lp_end = HEADER_SIZE + 4 * count;
        let mut i = 0;
        // Four line pointers at a time past those that cannot be masked
        // (an index page's entries are all too short): a vector test.
        #[cfg(target_arch = "x86_64")]
        while i + 4 <= count {
            if any_maskable4(p, HEADER_SIZE + 4 * i) {
                for k in i..i + 4 {
                    mask_one(p, k, lp_end, &mut saved, &mut n);
                }
            }
            i += 4;
        }
        for k in i..count {
            mask_one(p, k, lp_end, &mut saved, &mut n);
        }
    }
    wr16(p, FLAGS_OFFSET, flags & !HINT_PAGE_FLAGS);
    let sum = crc_of_in_place(p, block);
    wr16(p, FLAGS_OFFSET, flags);
    for slot in saved[..n].iter().rev() {
        // SAFETY: the first n slots were written above.
        let v = unsafe { slot.assume_init() };
        wr16(p, (v >> 16) as usize, v as u16);
    }
    sum
}

/// The checksum of `page` as stored at block `block`: never zero.
///
/// The stored checksum bytes themselves are ignored (taken as zero), and so
/// are the hint bits (see the module doc). Works on a copy; the buffer
/// pool's paths, which own their bytes, use [`set_page_checksum`] and
/// [`verify_page`] instead.
pub fn page_checksum(page: &[u8], block: BlockNumber) -> u16 {
    debug_assert_eq!(page.len(), BLCKSZ);
    let mut copy = [0u8; BLCKSZ];
    copy.copy_from_slice(page);
    page_checksum_in_place(&mut copy, block)
}

/// The checksum stored in `page`'s header.
pub fn stored_checksum(page: &[u8]) -> u16 {
    u16::from_le_bytes([page[CHECKSUM_OFFSET], page[CHECKSUM_OFFSET + 1]])
}

/// Writes the checksum of `page` at block `block` into its header, unless the
/// page is all zeros (new pages stay all zeros on disk).
pub fn set_page_checksum(page: &mut [u8], block: BlockNumber) {
    if page_is_all_zero(page) {
        return;
    }
    let sum = page_checksum_in_place(page, block);
    page[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].copy_from_slice(&sum.to_le_bytes());
}

/// Whether `page`, read from block `block`, is intact: either all zeros or
/// carrying the right checksum. Takes the page mutably only to mask the
/// hint bits while it computes; the bytes are unchanged on return.
pub fn verify_page(page: &mut [u8], block: BlockNumber) -> bool {
    let stored = stored_checksum(page);
    if stored == 0 {
        // Only a new page may lack a checksum.
        return page_is_all_zero(page);
    }
    stored == page_checksum_in_place(page, block)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CRC part of the checksum as defined (checksum bytes as zero),
    /// with the `crc32c` crate over the page's three pieces.
    fn crc_of(page: &[u8], block: BlockNumber) -> u16 {
        let crc = crc32c::crc32c(&page[..CHECKSUM_OFFSET]);
        let crc = crc32c::crc32c_append(crc, &[0, 0]);
        let crc = crc32c::crc32c_append(crc, &page[CHECKSUM_OFFSET + 2..]);
        let crc = crc32c::crc32c_append(crc, &block.to_le_bytes());
        ((crc % 65535) + 1) as u16
    }
    use crate::storage::page;

    /// The definition of what the checksum masks: calls `f` with the byte
    /// offset of every tuple infomask whose hint bits it clears, in
    /// line-pointer order (see the module doc for the bounds).
    fn for_each_masked_infomask(page: &[u8], mut f: impl FnMut(usize)) {
        let lower = rd16(page, LOWER_OFFSET) as usize;
        if lower <= HEADER_SIZE {
            return;
        }
        let count = ((lower - HEADER_SIZE) / 4).min(MAX_LINE_POINTERS);
        let lp_end = HEADER_SIZE + 4 * count;
        for lp in page[HEADER_SIZE..lp_end].chunks_exact(4) {
            let raw = u32::from_le_bytes([lp[0], lp[1], lp[2], lp[3]]);
            let (off, flags, len) = (
                (raw & 0x7fff) as usize,
                (raw >> 15) & 3,
                (raw >> 17) as usize,
            );
            if flags == LP_NORMAL
                && len >= TUPLE_HEADER_SIZE
                && off >= lp_end
                && off + TUPLE_HEADER_SIZE <= BLCKSZ
            {
                f(off + TUPLE_INFOMASK_OFFSET);
            }
        }
    }

    fn sample_page() -> Vec<u8> {
        let mut page = vec![0u8; BLCKSZ];
        for (i, b) in page.iter_mut().enumerate() {
            *b = (i * 7 % 251) as u8;
        }
        page
    }

    /// A heap-like page: 60 tuples of 121 bytes (pgbench_accounts' size),
    /// each with a distinct body and no hint bits, LSN 4711.
    fn heap_page() -> Vec<u8> {
        let mut p = vec![0u8; BLCKSZ];
        page::init(&mut p, 0);
        page::set_lsn(&mut p, 4711);
        for k in 0..60u32 {
            let mut t = vec![0u8; 121];
            for (i, b) in t.iter_mut().enumerate() {
                *b = (i as u32 * 13 + k * 7) as u8;
            }
            t[..4].copy_from_slice(&(1000 + k).to_le_bytes());
            // infomask: HASVARWIDTH only, no hints.
            t[TUPLE_INFOMASK_OFFSET..TUPLE_INFOMASK_OFFSET + 2]
                .copy_from_slice(&0x0002u16.to_le_bytes());
            page::add_item(&mut p, &t, None).expect("fits");
        }
        p
    }

    /// `old` with hint bits set on its tuples (a different mix per tuple)
    /// and PD_ALL_VISIBLE: what VACUUM after a load makes of a page.
    fn with_hints(old: &[u8]) -> Vec<u8> {
        let mut p = old.to_vec();
        let bits = [0x0100u16, 0x0900, 0x0500, 0x0300, 0x0d00];
        for o in 1..=page::max_offset(&p) {
            let t = page::get_item_mut(&mut p, o).unwrap();
            let m = rd16(t, TUPLE_INFOMASK_OFFSET) | bits[o as usize % bits.len()];
            wr16(t, TUPLE_INFOMASK_OFFSET, m);
        }
        page::set_all_visible(&mut p);
        p
    }

    /// The page made of sector `s` of `new` where bit `s` of `mask` is set,
    /// of `old` elsewhere (512-byte sectors).
    fn mix(old: &[u8], new: &[u8], mask: u32) -> Vec<u8> {
        let mut p = old.to_vec();
        for s in 0..BLCKSZ / 512 {
            if mask & (1 << s) != 0 {
                p[s * 512..(s + 1) * 512].copy_from_slice(&new[s * 512..(s + 1) * 512]);
            }
        }
        p
    }

    #[test]
    fn zero_pages_verify_and_stay_zero() {
        let mut page = vec![0u8; BLCKSZ];
        assert!(verify_page(&mut page, 0));
        assert!(verify_page(&mut page, 12345));
        set_page_checksum(&mut page, 3);
        assert!(page_is_all_zero(&page));
    }

    #[test]
    fn checksum_is_never_zero_and_detects_flips_and_misplacement() {
        for mut page in [sample_page(), heap_page()] {
            set_page_checksum(&mut page, 7);
            assert_ne!(stored_checksum(&page), 0);
            assert!(verify_page(&mut page, 7));
            assert!(!verify_page(&mut page, 8), "block number is mixed in");
            for pos in [0usize, 9, 10, 12, 24, 100, 5000, BLCKSZ - 1] {
                let mut bad = page.clone();
                bad[pos] ^= 0x10;
                assert!(!verify_page(&mut bad, 7), "flip at {pos} undetected");
            }
        }
    }

    #[test]
    fn checksum_ignores_its_own_bytes() {
        let mut page = sample_page();
        let a = page_checksum(&page, 1);
        page[CHECKSUM_OFFSET] = 0xAB;
        page[CHECKSUM_OFFSET + 1] = 0xCD;
        assert_eq!(page_checksum(&page, 1), a);
    }

    #[test]
    fn non_zero_page_without_checksum_fails() {
        let mut page = vec![0u8; BLCKSZ];
        page[100] = 1;
        assert!(!verify_page(&mut page, 0));
    }

    #[test]
    fn hint_bits_leave_the_checksum_unchanged_and_nothing_else_does() {
        let old = heap_page();
        let new = with_hints(&old);
        assert_ne!(old, new);
        assert_eq!(page_checksum(&old, 5), page_checksum(&new, 5));
        // Every other bit of a tuple header's infomask and of the flags counts.
        let o = page::item_id(&old, 17).off as usize;
        for bit in (0..16).filter(|b| HINT_INFOMASK_BITS & (1 << b) == 0) {
            let mut p = new.clone();
            p[o + TUPLE_INFOMASK_OFFSET + bit / 8] ^= 1 << (bit % 8);
            assert_ne!(page_checksum(&p, 5), page_checksum(&new, 5), "bit {bit}");
        }
        for bit in (0..16).filter(|b| HINT_PAGE_FLAGS & (1 << b) == 0) {
            let mut p = new.clone();
            p[FLAGS_OFFSET + bit / 8] ^= 1 << (bit % 8);
            assert_ne!(page_checksum(&p, 5), page_checksum(&new, 5), "flag {bit}");
        }
        // The same bits elsewhere (a tuple's body, the free space) count.
        for pos in [o + TUPLE_INFOMASK_OFFSET + 2, o - 1, 1000] {
            let mut p = new.clone();
            p[pos] ^= 0x01;
            assert_ne!(page_checksum(&p, 5), page_checksum(&new, 5), "byte {pos}");
        }
        // Computing in place gives the same and changes nothing.
        let mut p = new.clone();
        assert_eq!(page_checksum_in_place(&mut p, 5), page_checksum(&new, 5));
        assert_eq!(p, new);
    }

    #[test]
    fn every_torn_mix_of_a_hint_only_change_verifies() {
        let mut old = heap_page();
        set_page_checksum(&mut old, 9);
        let mut new = with_hints(&old);
        set_page_checksum(&mut new, 9);
        assert_eq!(stored_checksum(&old), stored_checksum(&new));
        let differ = (0..16u32)
            .filter(|&s| old[s as usize * 512..][..512] != new[s as usize * 512..][..512])
            .count();
        assert!(differ >= 12, "the change spans most sectors ({differ})");
        for mask in 0..1u32 << 16 {
            let mut p = mix(&old, &new, mask);
            assert!(
                verify_page(&mut p, 9),
                "sectors {mask:#06x} of the new page"
            );
        }
    }

    #[test]
    fn torn_mixes_of_a_real_change_fail() {
        let mut old = heap_page();
        set_page_checksum(&mut old, 9);
        // Hint bits everywhere plus a real change: a delete's xmax on two
        // tuples in different sectors and a new LSN (header sector).
        let hinted = with_hints(&old);
        let mut new = hinted.clone();
        for o in [3u16, 50] {
            let t = page::get_item_mut(&mut new, o).unwrap();
            t[4..8].copy_from_slice(&77u32.to_le_bytes());
        }
        page::set_lsn(&mut new, 9000);
        set_page_checksum(&mut new, 9);
        let sector = |p: &[u8], s: u32| p[s as usize * 512..][..512].to_vec();
        let real: Vec<u32> = (0..16u32)
            .filter(|&s| sector(&hinted, s) != sector(&new, s))
            .collect();
        assert_eq!(real.len(), 3, "header and two tuples: {real:?}");
        // Sectors that differ by hint bits only come from the new page; of
        // the really changed ones, any proper non-empty subset.
        let hint_only = !real.iter().map(|s| 1u32 << s).sum::<u32>() & 0xffff;
        for m in 1..(1u32 << real.len()) - 1 {
            let mask: u32 = (0..real.len())
                .filter(|i| m & (1 << i) != 0)
                .map(|i| 1 << real[i])
                .sum();
            let mut p = mix(&old, &new, mask | hint_only);
            assert!(!verify_page(&mut p, 9), "mix {mask:#06x} verified");
        }
    }

    /// A page of `n` line pointers whose tuples carry random infomasks
    /// (some with hint bits, some without), some line pointers unused,
    /// dead or redirected, and entries of random lengths (index-like ones
    /// too short to be masked).
    fn random_page(next: &mut impl FnMut() -> u64) -> Vec<u8> {
        let mut p = vec![0u8; BLCKSZ];
        page::init(&mut p, 0);
        page::set_lsn(&mut p, next() % 100_000);
        let short = next() % 3 == 0;
        loop {
            let len = if short {
                8 + (next() % 16) as usize
            } else {
                16 + (next() % 140) as usize
            };
            let mut t = vec![0u8; len];
            for b in t.iter_mut() {
                *b = next() as u8;
            }
            if page::add_item(&mut p, &t, None).is_none() {
                break;
            }
        }
        if next() % 2 == 0 {
            page::set_all_visible(&mut p);
        }
        // Some line pointers not NORMAL (flags 0, 2, 3).
        for o in 1..=page::max_offset(&p) {
            if next() % 8 == 0 {
                let at = HEADER_SIZE + 4 * (o as usize - 1);
                let raw = u32::from_le_bytes(p[at..at + 4].try_into().unwrap());
                let raw = (raw & !(3 << 15)) | (((next() % 4) as u32 & !1) << 15);
                p[at..at + 4].copy_from_slice(&raw.to_le_bytes());
            }
        }
        p
    }

    #[test]
    fn in_place_checksum_is_the_definition_on_random_pages() {
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for round in 0..400 {
            let mut p = random_page(&mut next);
            let block = (next() % 1000) as BlockNumber;
            let before = p.clone();
            let got = page_checksum_in_place(&mut p, block);
            assert_eq!(p, before, "round {round}: bytes put back");
            let mut masked = p.clone();
            let mut at = Vec::new();
            for_each_masked_infomask(&p, |pos| at.push(pos));
            for pos in at {
                let v = rd16(&masked, pos);
                wr16(&mut masked, pos, v & !HINT_INFOMASK_BITS);
            }
            let f = rd16(&masked, FLAGS_OFFSET);
            wr16(&mut masked, FLAGS_OFFSET, f & !HINT_PAGE_FLAGS);
            assert_eq!(crc_of(&masked, block), got, "round {round}: as defined");
            set_page_checksum(&mut p, block);
            assert!(verify_page(&mut p, block), "round {round}");
        }
    }

    #[test]
    fn corrupt_line_pointers_never_panic_and_are_put_back() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for round in 0..500 {
            let mut p = heap_page();
            // Random line pointers (some pointing into the header, the line
            // pointer array, past the end, at each other) and a random lower.
            for lp in 0..(next() % 64) as usize {
                let at = 24 + 4 * lp;
                p[at..at + 4].copy_from_slice(&(next() as u32).to_le_bytes());
            }
            let lower = match round % 4 {
                0 => 0xffff,
                1 => (next() % BLCKSZ as u64) as u16,
                _ => page::lower(&p),
            };
            p[LOWER_OFFSET..LOWER_OFFSET + 2].copy_from_slice(&lower.to_le_bytes());
            let before = p.clone();
            let a = page_checksum_in_place(&mut p, 1);
            assert_eq!(p, before, "round {round}: bytes put back");
            // The definition, on a copy: every masked infomask cleared in
            // line-pointer order (each read after the clears before it).
            let mut masked = p.clone();
            let mut at = Vec::new();
            for_each_masked_infomask(&p, |pos| at.push(pos));
            for pos in at {
                let v = rd16(&masked, pos);
                wr16(&mut masked, pos, v & !HINT_INFOMASK_BITS);
            }
            let f = rd16(&masked, FLAGS_OFFSET);
            wr16(&mut masked, FLAGS_OFFSET, f & !HINT_PAGE_FLAGS);
            assert_eq!(crc_of(&masked, 1), a, "round {round}: as defined");
            assert_eq!(page_checksum(&p, 1), a, "round {round}: deterministic");
            set_page_checksum(&mut p, 1);
            assert!(verify_page(&mut p, 1));
        }
    }
}
