//! CRC-32C of one 8 kB page, in three interleaved streams: the page
//! checksum's CRC ([`super::checksum`]), the same value the `crc32c` crate
//! gives, computed about a third faster.
//!
//! The `crc32` instruction has a latency of three cycles and a throughput
//! of one, so three independent streams keep it busy. The crate splits a
//! buffer into 768-byte chunks of three streams each and joins each chunk
//! with table shifts, then runs what is left (its last 512 bytes of a
//! page, and the unaligned head and tail around the checksum field) one
//! dependent step at a time. A page has a fixed size, so here it is cut
//! once: three streams of 2,728 bytes (341 words each) and an 8-byte tail,
//! joined by two shifts over 2,728 zero bytes. A shift is linear in the
//! state, so it is four lookups in tables made once, at first use, from
//! the 32 unit states (`shift_tables`).
//!
//! The streams: `A` starts from the initial state, `B` and `C` from zero;
//! by linearity the state after `A B C` is `shift(shift(a) ^ b) ^ c`.
//!
//! [`crc32c`] runs this on x86-64 CPUs with SSE 4.2 and falls back to the
//! crate elsewhere; a test checks both against the crate on random pages.
//! Where the CPU has AVX-512 and `vpclmulqdq`, [`crc32c`] folds the page by
//! carry-less multiplication instead ([`super::crc_fold`], twice as fast).

use super::BLCKSZ;

/// Bytes in each of the three streams.
const STREAM: usize = 2728;
const _: () = assert!(3 * STREAM + 8 == BLCKSZ && STREAM % 8 == 0);

/// The reflected CRC-32C polynomial.
const POLY: u32 = 0x82F6_3B78;

/// Tables that advance a CRC state over [`STREAM`] zero bytes: the state
/// after is `t[0][s & 0xff] ^ t[1][s >> 8 & 0xff] ^ t[2][..] ^ t[3][s >> 24]`.
type ShiftTables = [[u32; 256]; 4];

/// One zero byte through the CRC register, bit by bit (for making tables).
fn zero_byte(mut s: u32) -> u32 {
    for _ in 0..8 {
        s = if s & 1 != 0 { (s >> 1) ^ POLY } else { s >> 1 };
    }
    s
}

/// The shift over [`STREAM`] zero bytes as tables, from its value on the 32
/// unit states (it is linear: a state's image is the XOR of its bits').
fn shift_tables() -> &'static ShiftTables {
    static TABLES: std::sync::OnceLock<Box<ShiftTables>> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        let mut unit = [0u32; 32];
        for (i, u) in unit.iter_mut().enumerate() {
            let mut s = 1u32 << i;
            for _ in 0..STREAM {
                s = zero_byte(s);
            }
            *u = s;
        }
        let mut t = Box::new([[0u32; 256]; 4]);
        for (k, table) in t.iter_mut().enumerate() {
            for (b, v) in table.iter_mut().enumerate() {
                *v = (0..8)
                    .filter(|i| b & (1 << i) != 0)
                    .fold(0, |acc, i| acc ^ unit[8 * k + i]);
            }
        }
        t
    })
}

#[inline]
fn shift(t: &ShiftTables, s: u32) -> u32 {
    t[0][(s & 0xff) as usize]
        ^ t[1][(s >> 8 & 0xff) as usize]
        ^ t[2][(s >> 16 & 0xff) as usize]
        ^ t[3][(s >> 24) as usize]
}

/// CRC-32C of `page` continued over `extra` (the checksum appends the
/// block number): `crc32c::crc32c_append(crc32c::crc32c(page), extra)`.
pub fn crc32c(page: &[u8; BLCKSZ], extra: &[u8; 4]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(crc) = super::crc_fold::crc32c(page, extra) {
            return crc;
        }
        if is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU has SSE 4.2 (checked just above).
            return unsafe { crc32c_sse42(page, extra) };
        }
    }
    crc32c::crc32c_append(crc32c::crc32c(page), extra)
}

/// [`crc32c`] with the `crc32` instruction.
///
/// # Safety
///
/// The CPU has SSE 4.2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn crc32c_sse42(page: &[u8; BLCKSZ], extra: &[u8; 4]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u32, _mm_crc32_u64};
    let word = |i: usize| u64::from_le_bytes(page[8 * i..8 * i + 8].try_into().expect("8 bytes"));
    let words = STREAM / 8;
    let (mut a, mut b, mut c) = (u64::from(u32::MAX), 0u64, 0u64);
    for i in 0..words {
        a = _mm_crc32_u64(a, word(i));
        b = _mm_crc32_u64(b, word(words + i));
        c = _mm_crc32_u64(c, word(2 * words + i));
    }
    let t = shift_tables();
    let s = shift(t, shift(t, a as u32) ^ b as u32) ^ c as u32;
    let s = _mm_crc32_u64(u64::from(s), word(3 * words));
    !_mm_crc32_u32(s as u32, u32::from_le_bytes(*extra))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_crate_on_any_page() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut page = [0u8; BLCKSZ];
        for round in 0..200 {
            for b in page.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Some pages mostly zero, some dense.
                *b = if round % 3 == 0 && x % 7 != 0 {
                    0
                } else {
                    x as u8
                };
            }
            let extra = (round as u32).to_le_bytes();
            let want = crc32c::crc32c_append(crc32c::crc32c(&page), &extra);
            assert_eq!(crc32c(&page, &extra), want, "round {round}");
        }
        assert_eq!(
            crc32c(&[0u8; BLCKSZ], &[0; 4]),
            crc32c::crc32c_append(crc32c::crc32c(&[0u8; BLCKSZ]), &[0; 4])
        );
    }
}
