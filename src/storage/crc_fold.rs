//! CRC-32C of one 8 kB page by carry-less multiplication: the same value
//! as [`super::crc_page::crc32c`]'s `crc32`-instruction streams, in half
//! their time on CPUs that multiply 512 bits at a time.
//!
//! # How folding works
//!
//! A reflected CRC is the message, read as a polynomial over GF(2), times
//! `x^32` modulo the CRC polynomial `P`. Any 16 bytes `A` followed by 16
//! more `B` are congruent (mod `P`) to `A·x^128 + B`, and `A·x^D` reduces
//! to a value of 96 bits with two 64×32-bit carry-less products:
//! `A_hi·(x^(D+64) mod P) + A_lo·(x^D mod P)`. So the page is *folded*
//! into a few 128-bit accumulators (each moved `D` bits further by two
//! products and added to the next bytes at that distance), the
//! accumulators are folded into one, and the `crc32` instruction reduces
//! those last 16 bytes: the CRC of the page is the CRC of any message
//! congruent to it. The initial value `!0` is the same as XOR-ing `!0`
//! into the page's first four bytes with a zero start.
//!
//! In the reflected bit order a lane's bit `j` is the coefficient of
//! `x^(127-j)`, and a carry-less product of two reflected 64-bit values is
//! the reflected product times `x`; the constants absorb that factor
//! (`x^(D+63)` and `x^(D-1)` instead of `x^(D+64)` and `x^D`), made at
//! compile time by [`xpow`].
//!
//! Four 512-bit accumulators over 256-byte blocks with `vpclmulqdq` and
//! AVX-512 (`avx512::crc32c_vpclmul`): 126 ns a page where the three `crc32`
//! streams take 245 (AMD family 26). Four 128-bit accumulators with plain
//! `pclmulqdq` took 500 ns there, slower than the streams, so there is no
//! such path. [`crc32c`] checks the CPU first (valgrind hides AVX-512,
//! so under it the streams run), and compilers before Rust 1.89 leave the
//! folding out (`rustversion`: its intrinsics are newer than the crate's
//! `rust-version`). Tests
//! compare the folding with the `crc32c` crate on random pages.

#![cfg(target_arch = "x86_64")]

use super::BLCKSZ;

/// The reflected CRC-32C polynomial.
const POLY: u32 = 0x82F6_3B78;

/// `x^n mod P`, reflected (bit `j` is the coefficient of `x^(31-j)`).
const fn xpow(n: u32) -> u32 {
    let mut s = 0x8000_0000u32;
    let mut i = 0;
    while i < n {
        s = if s & 1 != 0 { (s >> 1) ^ POLY } else { s >> 1 };
        i += 1;
    }
    s
}

/// The two multipliers that move a 128-bit lane `bits` bits further, each
/// reflected into 64 bits: for the lane's low half (its higher-degree
/// coefficients) and for its high half.
const fn fold_by(bits: u32) -> (i64, i64) {
    (
        ((xpow(bits + 63) as u64) << 32) as i64,
        ((xpow(bits - 1) as u64) << 32) as i64,
    )
}

const FOLD_128: (i64, i64) = fold_by(128);
const FOLD_512: (i64, i64) = fold_by(512);
const FOLD_2048: (i64, i64) = fold_by(2048);

const _: () = assert!(BLCKSZ % 256 == 0);

/// CRC-32C of `page` continued over `extra` by folding, or `None` where
/// the CPU cannot fold 512 bits at a time.
#[rustversion::since(1.89)]
pub fn crc32c(page: &[u8; BLCKSZ], extra: &[u8; 4]) -> Option<u32> {
    if !avx512::vpclmul_available() {
        return None;
    }
    // SAFETY: the CPU has what the folding needs (checked just above).
    Some(unsafe { avx512::crc32c_vpclmul(page, extra) })
}

/// Always `None`: the AVX-512 intrinsics need Rust 1.89 (the crate's
/// `rust-version` is older), so compilers before it leave the folding out.
#[rustversion::before(1.89)]
pub fn crc32c(_page: &[u8; BLCKSZ], _extra: &[u8; 4]) -> Option<u32> {
    None
}

/// The folding itself: compiled only by Rust 1.89 and later (so the lint
/// about items newer than `rust-version` does not apply).
#[rustversion::since(1.89)]
#[allow(clippy::incompatible_msrv)]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{BLCKSZ, FOLD_128, FOLD_2048, FOLD_512};

    /// Whether [`crc32c_vpclmul`] may run here.
    pub fn vpclmul_available() -> bool {
        is_x86_feature_detected!("vpclmulqdq")
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("pclmulqdq")
            && is_x86_feature_detected!("sse4.2")
    }

    /// `acc` moved by the distance `k` was made for, plus `next`.
    #[inline(always)]
    unsafe fn fold16(acc: __m128i, k: __m128i, next: __m128i) -> __m128i {
        // SAFETY (of the intrinsics): the callers' target features.
        let lo = _mm_clmulepi64_si128::<0x00>(acc, k);
        let hi = _mm_clmulepi64_si128::<0x11>(acc, k);
        _mm_xor_si128(_mm_xor_si128(lo, hi), next)
    }

    /// The CRC of the 16 bytes `acc` continued over `extra`, from a zero
    /// start, finished (inverted).
    #[inline(always)]
    unsafe fn finish(acc: __m128i, extra: &[u8; 4]) -> u32 {
        let lo = _mm_cvtsi128_si64(acc) as u64;
        let hi = _mm_extract_epi64::<1>(acc) as u64;
        let s = _mm_crc32_u64(_mm_crc32_u64(0, lo), hi);
        !_mm_crc32_u32(s as u32, u32::from_le_bytes(*extra))
    }

    /// `acc`'s four lanes each moved by the distance `k` was made for, plus
    /// `next`.
    #[inline(always)]
    unsafe fn fold64(acc: __m512i, k: __m512i, next: __m512i) -> __m512i {
        let lo = _mm512_clmulepi64_epi128::<0x00>(acc, k);
        let hi = _mm512_clmulepi64_epi128::<0x11>(acc, k);
        // 0x96: the XOR of all three operands.
        _mm512_ternarylogic_epi64::<0x96>(lo, hi, next)
    }

    /// CRC-32C of `page` continued over `extra`, folded 256 bytes at a time.
    ///
    /// # Safety
    ///
    /// The CPU has `vpclmulqdq`, AVX-512F, `pclmulqdq` and SSE 4.2
    /// ([`vpclmul_available`]).
    #[target_feature(enable = "vpclmulqdq,avx512f,pclmulqdq,sse4.2")]
    pub unsafe fn crc32c_vpclmul(page: &[u8; BLCKSZ], extra: &[u8; 4]) -> u32 {
        let p = page.as_ptr();
        // SAFETY: every load is of 64 bytes inside the page (offsets below
        // BLCKSZ - 63); the loads are unaligned.
        let load = |at: usize| unsafe { _mm512_loadu_si512(p.add(at).cast::<__m512i>()) };
        let mut x = [load(0), load(64), load(128), load(192)];
        x[0] = _mm512_xor_si512(x[0], _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, 0xFFFF_FFFF));
        let k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(FOLD_2048.1, FOLD_2048.0));
        for block in (256..BLCKSZ).step_by(256) {
            for (i, acc) in x.iter_mut().enumerate() {
                *acc = fold64(*acc, k2048, load(block + 64 * i));
            }
        }
        let k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(FOLD_512.1, FOLD_512.0));
        let acc = fold64(fold64(fold64(x[0], k512, x[1]), k512, x[2]), k512, x[3]);
        let k128 = _mm_set_epi64x(FOLD_128.1, FOLD_128.0);
        let lane = |acc| {
            [
                _mm512_extracti32x4_epi32::<0>(acc),
                _mm512_extracti32x4_epi32::<1>(acc),
                _mm512_extracti32x4_epi32::<2>(acc),
                _mm512_extracti32x4_epi32::<3>(acc),
            ]
        };
        let l = lane(acc);
        let one = fold16(fold16(fold16(l[0], k128, l[1]), k128, l[2]), k128, l[3]);
        finish(one, extra)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Random pages: some mostly zero, some dense, some all ones.
        fn pages(rounds: usize) -> impl Iterator<Item = (usize, Box<[u8; BLCKSZ]>)> {
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
            (0..rounds).map(move |round| {
                let mut page = Box::new([0u8; BLCKSZ]);
                for b in page.iter_mut() {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    *b = match round % 4 {
                        0 if x % 7 != 0 => 0,
                        3 => 0xff,
                        _ => x as u8,
                    };
                }
                (round, page)
            })
        }

        fn reference(page: &[u8; BLCKSZ], extra: &[u8; 4]) -> u32 {
            crc32c::crc32c_append(crc32c::crc32c(page), extra)
        }

        #[test]
        fn vpclmul_folding_is_the_crc() {
            if !vpclmul_available() {
                return;
            }
            for (round, page) in pages(300) {
                let extra = (round as u32).wrapping_mul(2_654_435_761).to_le_bytes();
                // SAFETY: checked above.
                let got = unsafe { crc32c_vpclmul(&page, &extra) };
                assert_eq!(got, reference(&page, &extra), "round {round}");
            }
        }

        #[test]
        fn the_folded_crc_follows_single_bit_flips() {
            if !vpclmul_available() {
                return;
            }
            let (_, page) = pages(2).nth(1).expect("a page");
            let extra = [1, 2, 3, 4];
            let mut flipped = page.clone();
            for bit in (0..BLCKSZ * 8).step_by(37) {
                flipped[bit / 8] ^= 1 << (bit % 8);
                let want = reference(&flipped, &extra);
                // SAFETY: checked above.
                assert_eq!(
                    unsafe { crc32c_vpclmul(&flipped, &extra) },
                    want,
                    "bit {bit}"
                );
                flipped[bit / 8] ^= 1 << (bit % 8);
            }
        }
    }
}
