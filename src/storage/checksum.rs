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
//! 1. CRC-32C over the whole page with the checksum bytes taken as zero,
//! 2. then over the block number (little-endian), so a page written to the
//!    wrong place fails verification even when its bytes are intact,
//! 3. folded to 16 bits as `(crc % 65535) + 1`: the result is never zero.
//!
//! A page of all zero bytes is a valid "new" page (a block that was extended
//! but never initialised, or a hole in a file): it carries no checksum, is
//! written as zeros and always verifies.

use super::{BlockNumber, BLCKSZ};

/// Byte offset of the 16-bit checksum in the page header.
pub const CHECKSUM_OFFSET: usize = 8;

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

/// The checksum of `page` as stored at block `block`: never zero.
///
/// The stored checksum bytes themselves are ignored (taken as zero).
pub fn page_checksum(page: &[u8], block: BlockNumber) -> u16 {
    debug_assert_eq!(page.len(), BLCKSZ);
    let crc = crc32c::crc32c(&page[..CHECKSUM_OFFSET]);
    let crc = crc32c::crc32c_append(crc, &[0, 0]);
    let crc = crc32c::crc32c_append(crc, &page[CHECKSUM_OFFSET + 2..]);
    let crc = crc32c::crc32c_append(crc, &block.to_le_bytes());
    ((crc % 65535) + 1) as u16
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
    let sum = page_checksum(page, block);
    page[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].copy_from_slice(&sum.to_le_bytes());
}

/// Whether `page`, read from block `block`, is intact: either all zeros or
/// carrying the right checksum.
pub fn verify_page(page: &[u8], block: BlockNumber) -> bool {
    let stored = stored_checksum(page);
    if stored == 0 {
        // Only a new page may lack a checksum.
        return page_is_all_zero(page);
    }
    stored == page_checksum(page, block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_page() -> Vec<u8> {
        let mut page = vec![0u8; BLCKSZ];
        for (i, b) in page.iter_mut().enumerate() {
            *b = (i * 7 % 251) as u8;
        }
        page
    }

    #[test]
    fn zero_pages_verify_and_stay_zero() {
        let mut page = vec![0u8; BLCKSZ];
        assert!(verify_page(&page, 0));
        assert!(verify_page(&page, 12345));
        set_page_checksum(&mut page, 3);
        assert!(page_is_all_zero(&page));
    }

    #[test]
    fn checksum_is_never_zero_and_detects_flips_and_misplacement() {
        let mut page = sample_page();
        set_page_checksum(&mut page, 7);
        assert_ne!(stored_checksum(&page), 0);
        assert!(verify_page(&page, 7));
        assert!(!verify_page(&page, 8), "block number is mixed in");
        for pos in [0usize, 9, 10, 100, BLCKSZ - 1] {
            let mut bad = page.clone();
            bad[pos] ^= 0x10;
            assert!(!verify_page(&bad, 7), "flip at {pos} undetected");
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
        assert!(!verify_page(&page, 0));
    }
}
