//! The row-delta image codec: a heap page of equal-width rows, each byte
//! XORed with the byte one row earlier, keeps only the bytes that differ.
//!
//! Full-page images dominate the log of a VACUUM after a checkpoint: one
//! per page. LZ4 compressed an accounts page to 11.5% in about 3 µs, a
//! third of a dirty VACUUM's CPU. Its cost is per match, and a page of 61
//! rows that differ from their neighbours in two bytes each (the ctid's
//! offset, the key's low byte) is about 150 matches. Here the cost is one
//! 16-byte compare per 16 bytes with the bytes `stride` earlier, plus a
//! step per differing byte. Measured on 2,000 pages of a vacuumed 5M-row
//! accounts heap (one thread, five rounds): 1.6-2.1 µs a page against
//! lz4_flex's 2.4-3.4 µs in the same rounds, to 9.7% of the bytes against
//! 11.5%. In a VACUUM after one delete per page (`tools/vacuum_bench.rs`,
//! five alternating runs): process CPU 813 -> 728 ms and wall time 450 ->
//! 419 ms by the medians, the log 80.0 -> 69.4 MB.
//! With AVX2 the encoder packs the bytes with shuffles ([`simd`]), about
//! twice as fast again.
//!
//! Format of an encoded image of `n` bytes (`n` is known to the decoder):
//!
//! ```text
//! stride u16                    distance of the XOR, 16 <= stride < n
//! bitmap  ceil(n/16/8) bytes    bit c set: 16-byte chunk c has a byte that
//!                               differs from the byte `stride` before it
//! masks   u16 per set chunk     bit k set: byte k of the chunk differs
//! bytes   one per set mask bit  the byte XOR the byte `stride` before it
//! tail    n % 16 bytes          the last partial chunk, as it is
//! ```
//!
//! Bytes before `stride` are XORed with zero (kept as they are when not
//! zero). Decoding validates every length against `n` and never panics on
//! a damaged record; the log's CRC catches damage first anyway.
//!
//! [`row_stride`] finds the stride from the page's first line pointers;
//! pages without one (rows of different widths) are left to LZ4, as are
//! pages the codec does not shrink to a quarter.

use crate::storage::page::{self, LP_NORMAL};

/// Bytes per chunk of the bitmap.
const CHUNK: usize = 16;

/// The distance between rows of `p`, a heap page, when its first four line
/// pointers are NORMAL and evenly spaced by at least one chunk: what the
/// codec XORs against. `None` for other pages.
pub fn row_stride(p: &[u8]) -> Option<usize> {
    if page::max_offset(p) < 4 {
        return None;
    }
    let mut offs = [0usize; 4];
    for (o, off) in (1..=4).zip(offs.iter_mut()) {
        let id = page::item_id(p, o);
        if id.flags != LP_NORMAL {
            return None;
        }
        *off = id.off as usize;
    }
    let d = offs[0].checked_sub(offs[1])?;
    let even = offs.windows(2).all(|w| w[0].checked_sub(w[1]) == Some(d));
    (even && d >= CHUNK && d < p.len()).then_some(d)
}

/// Bit `k` set when byte `i + k` of `src` differs from byte `i + k -
/// stride` (XOR with zero before the stride), for the 16 bytes from `i`.
/// Bit `k` set when byte `i + k` of `src` differs from byte `i + k -
/// stride`, for the 16 bytes from `i`; the caller guarantees `stride <= i`
/// and `i + 16 <= src.len()` (checked).
#[inline(always)]
fn diff_mask(src: &[u8], i: usize, stride: usize) -> u32 {
    assert!(stride <= i && i + CHUNK <= src.len());
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8};
        // SAFETY: SSE2 is part of x86_64; the 16 bytes from `i` and from
        // `i - stride` lie inside `src` (asserted); both are unaligned
        // loads.
        unsafe {
            let a = _mm_loadu_si128(src.as_ptr().add(i).cast());
            let b = _mm_loadu_si128(src.as_ptr().add(i - stride).cast());
            !(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) as u32) & 0xffff
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    diff_mask_bytes(src, i, stride)
}

/// [`diff_mask`] byte by byte, for any `i` (bytes before the stride are
/// compared with zero): the chunks within the first stride.
fn diff_mask_bytes(src: &[u8], i: usize, stride: usize) -> u32 {
    let mut m = 0;
    for k in 0..CHUNK {
        let prev = if i + k >= stride {
            src[i + k - stride]
        } else {
            0
        };
        m |= u32::from(src[i + k] != prev) << k;
    }
    m
}

/// Where [`encode`] writes: the bitmap, the masks (room for every chunk's)
/// and the differing bytes (room for every byte), and how many of each.
struct Sink<'a> {
    bitmap: &'a mut [u8],
    masks: &'a mut [u8],
    bytes: &'a mut [u8],
    nm: usize,
    nb: usize,
}

impl Sink<'_> {
    /// Records chunk `c` (from byte `i = 16 c`) with its non-zero mask `m`.
    #[inline(always)]
    fn chunk(&mut self, src: &[u8], stride: usize, c: usize, m: u32) {
        self.bitmap[c / 8] |= 1 << (c % 8);
        self.masks[2 * self.nm..2 * self.nm + 2].copy_from_slice(&(m as u16).to_le_bytes());
        self.nm += 1;
        let i = c * CHUNK;
        assert!(i + CHUNK <= src.len() && self.nb + CHUNK <= self.bytes.len());
        let mut bits = m;
        while bits != 0 {
            let b = i + bits.trailing_zeros() as usize;
            // SAFETY: `b < i + 16 <= src.len()` and `nb` grows by at most 16
            // in this chunk, both asserted above; `b - stride` is read only
            // when `b >= stride`. (Unchecked: three bounds checks per byte
            // were a third of the encoder's time.)
            unsafe {
                let prev = if b >= stride {
                    *src.get_unchecked(b - stride)
                } else {
                    0
                };
                *self.bytes.get_unchecked_mut(self.nb) = *src.get_unchecked(b) ^ prev;
            }
            self.nb += 1;
            bits &= bits - 1;
        }
    }
}

/// Encodes `src` against `stride` into `out` (cleared first).
///
/// On x86-64 CPUs with AVX2 (every one heapdb's benchmarks run on) this
/// is [`simd::encode`], which writes the same bytes about twice as fast;
/// elsewhere [`encode_portable`].
pub fn encode(src: &[u8], stride: usize, out: &mut Vec<u8>) {
    assert!(stride >= CHUNK && stride < src.len() && stride <= u16::MAX as usize);
    #[cfg(target_arch = "x86_64")]
    if simd::available() {
        // SAFETY: the CPU has the features `simd::encode` is compiled for
        // (checked just above), and the stride is in range (asserted).
        unsafe { simd::encode(src, stride, out) };
        return;
    }
    encode_portable(src, stride, out);
}

/// [`encode`] in portable code: one 16-byte compare per chunk, then a step
/// per differing byte.
fn encode_portable(src: &[u8], stride: usize, out: &mut Vec<u8>) {
    let n = src.len();
    let chunks = n / CHUNK;
    let masks_at = 2 + chunks.div_ceil(8);
    // Room for every chunk's mask; cut to the masks written below. The
    // differing bytes go to a scratch buffer and are appended after.
    out.clear();
    out.resize(masks_at + 2 * chunks, 0);
    out[..2].copy_from_slice(&(stride as u16).to_le_bytes());
    thread_local! {
        static BYTES: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BYTES.with_borrow_mut(|bytes| {
        bytes.resize(n, 0);
        let (head, masks) = out.split_at_mut(masks_at);
        let mut sink = Sink {
            bitmap: &mut head[2..],
            masks,
            bytes,
            nm: 0,
            nb: 0,
        };
        // The chunks that start within the first stride, byte by byte;
        // then the rest, whose 16 bytes all have a byte `stride` before.
        let first = stride.div_ceil(CHUNK).min(chunks);
        for c in 0..first {
            let m = diff_mask_bytes(src, c * CHUNK, stride);
            if m != 0 {
                sink.chunk(src, stride, c, m);
            }
        }
        let mut c = first;
        while c < chunks {
            // Four chunks at a time: a row's filler is mostly unchanged,
            // and one test skips 64 bytes of it.
            let k = (chunks - c).min(4);
            let mut ms = [0u32; 4];
            let mut any = 0;
            for (j, m) in ms.iter_mut().enumerate().take(k) {
                *m = diff_mask(src, (c + j) * CHUNK, stride);
                any |= *m;
            }
            if any != 0 {
                for (j, &m) in ms.iter().enumerate().take(k) {
                    if m != 0 {
                        sink.chunk(src, stride, c + j, m);
                    }
                }
            }
            c += k;
        }
        let (nm, nb) = (sink.nm, sink.nb);
        out.truncate(masks_at + 2 * nm);
        out.extend_from_slice(&bytes[..nb]);
    });
    out.extend_from_slice(&src[chunks * CHUNK..]);
}

/// The encoder with AVX2 and SSSE3: the same output as
/// [`encode_portable`], byte for byte (a test compares them).
///
/// Two things make it faster. A chunk's differing bytes are packed with
/// one byte shuffle per 8 bytes, its control looked up by the 8-bit mask
/// (a 2 KiB table), instead of a loop step per byte. And two chunks are
/// compared at once, so 32 unchanged bytes of a row's filler cost one
/// test. The chunks within the first stride compare with zeros through a
/// copy of them behind `stride` zero bytes, so they take the same path.
/// Measured on 2,000 pages of a vacuumed 5M-row accounts heap (one thread,
/// five rounds): 1.0-1.35 µs a page against 2.15-2.8 µs for the portable
/// encoder in the same rounds.
#[cfg(target_arch = "x86_64")]
mod simd {
    use super::CHUNK;
    use std::arch::x86_64::*;

    /// Whether the CPU has what [`encode`] needs (std caches the answer).
    #[inline]
    pub fn available() -> bool {
        is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("ssse3")
            && is_x86_feature_detected!("popcnt")
    }

    /// For each 8-bit mask, the positions of its set bits in order (the
    /// rest zero): the `pshufb` control that packs those bytes of 8 to the
    /// front.
    #[repr(align(64))]
    struct Pack([[u8; 8]; 256]);

    static PACK: Pack = {
        let mut t = [[0u8; 8]; 256];
        let mut m = 0;
        while m < 256 {
            let (mut k, mut j) = (0, 0);
            while k < 8 {
                if m & (1 << k) != 0 {
                    t[m][j] = k as u8;
                    j += 1;
                }
                k += 1;
            }
            m += 1;
        }
        Pack(t)
    };

    /// See the module doc of `simd`.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2, SSSE3 and POPCNT ([`available`]), and `CHUNK <=
    /// stride < src.len()`.
    #[target_feature(enable = "avx2,ssse3,popcnt")]
    pub unsafe fn encode(src: &[u8], stride: usize, out: &mut Vec<u8>) {
        let n = src.len();
        debug_assert!(stride >= CHUNK && stride < n);
        let chunks = n / CHUNK;
        let masks_at = 2 + chunks.div_ceil(8);
        // The bitmap zeroed, room for every chunk's mask after it.
        out.clear();
        out.resize(masks_at + 2 * chunks, 0);
        out[..2].copy_from_slice(&(stride as u16).to_le_bytes());
        let first = stride.div_ceil(CHUNK).min(chunks);
        thread_local! {
            static SCRATCH: std::cell::RefCell<Vec<u8>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        SCRATCH.with_borrow_mut(|scratch| {
            // The differing bytes (at most n, plus 8 for the last 8-byte
            // store), then the zero-prefixed copy of the first chunks
            // (stride + 16 * first bytes).
            let zero_at = n + 16;
            let need = zero_at + stride + first * CHUNK;
            if scratch.len() < need {
                scratch.resize(need, 0);
            }
            let bytes = scratch.as_mut_ptr();
            let z = bytes.add(zero_at);
            std::ptr::write_bytes(z, 0, stride);
            std::ptr::copy_nonoverlapping(src.as_ptr(), z.add(stride), first * CHUNK);
            let s = src.as_ptr();
            let bitmap = out.as_mut_ptr().add(2);
            let masks = out.as_mut_ptr().add(masks_at);
            let (mut nm, mut nb) = (0usize, 0usize);
            let mut c = 0;
            while c < chunks {
                let i = c * CHUNK;
                // SAFETY (all loads): a chunk below `first` lies within
                // the zero-prefixed copy (`z[i..i + 16]` and `z[stride +
                // i..]`, both below `stride + 16 * first`); any other
                // has `stride <= i` and `i + 16 <= n` (and the pair test
                // `i + 32 <= n`).
                let (a, b) = if c < first {
                    (
                        _mm_loadu_si128(z.add(stride + i).cast()),
                        _mm_loadu_si128(z.add(i).cast()),
                    )
                } else {
                    if c + 2 <= chunks {
                        let a2 = _mm256_loadu_si256(s.add(i).cast());
                        let b2 = _mm256_loadu_si256(s.add(i - stride).cast());
                        if _mm256_movemask_epi8(_mm256_cmpeq_epi8(a2, b2)) == -1 {
                            c += 2;
                            continue;
                        }
                    }
                    (
                        _mm_loadu_si128(s.add(i).cast()),
                        _mm_loadu_si128(s.add(i - stride).cast()),
                    )
                };
                let m = !(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) as u32) & 0xffff;
                if m != 0 {
                    // SAFETY: `c / 8 < chunks.div_ceil(8)` and `nm <
                    // chunks`: inside the bitmap and the masks; `nb +
                    // popcount <= n`, so each 8-byte store ends at or
                    // before `n + 8 <= zero_at`.
                    *bitmap.add(c / 8) |= 1 << (c % 8);
                    masks
                        .add(2 * nm)
                        .cast::<[u8; 2]>()
                        .write((m as u16).to_le_bytes());
                    nm += 1;
                    let x = _mm_xor_si128(a, b);
                    let (lo, hi) = ((m & 0xff) as usize, (m >> 8) as usize);
                    let pack_lo = _mm_loadl_epi64(PACK.0[lo].as_ptr().cast());
                    let pack_hi = _mm_add_epi8(
                        _mm_loadl_epi64(PACK.0[hi].as_ptr().cast()),
                        _mm_set1_epi8(8),
                    );
                    _mm_storel_epi64(bytes.add(nb).cast(), _mm_shuffle_epi8(x, pack_lo));
                    nb += lo.count_ones() as usize;
                    _mm_storel_epi64(bytes.add(nb).cast(), _mm_shuffle_epi8(x, pack_hi));
                    nb += hi.count_ones() as usize;
                }
                c += 1;
            }
            out.truncate(masks_at + 2 * nm);
            out.extend_from_slice(&scratch[..nb]);
        });
        out.extend_from_slice(&src[chunks * CHUNK..]);
    }
}

/// Decodes `enc` into `out`, whose length is the image's; `None` when
/// `enc` is not a valid encoding of that many bytes.
pub fn decode(enc: &[u8], out: &mut [u8]) -> Option<()> {
    let n = out.len();
    let stride = u16::from_le_bytes(enc.get(..2)?.try_into().ok()?) as usize;
    if stride < CHUNK || stride >= n {
        return None;
    }
    let chunks = n / CHUNK;
    let bitmap = enc.get(2..2 + chunks.div_ceil(8))?;
    let set = bitmap
        .iter()
        .map(|b| b.count_ones() as usize)
        .sum::<usize>();
    let masks_at = 2 + bitmap.len();
    let masks = enc.get(masks_at..masks_at + 2 * set)?;
    let nbytes = masks
        .chunks_exact(2)
        .map(|m| u16::from_le_bytes([m[0], m[1]]).count_ones() as usize)
        .sum::<usize>();
    let bytes_at = masks_at + masks.len();
    let mut bytes = enc.get(bytes_at..bytes_at + nbytes)?.iter();
    let tail = enc.get(bytes_at + nbytes..)?;
    if tail.len() != n - chunks * CHUNK {
        return None;
    }
    if chunks % 8 != 0 && bitmap.last().is_some_and(|&b| b >> (chunks % 8) != 0) {
        return None; // a bit past the last chunk
    }
    let mut masks = masks.chunks_exact(2);
    for c in 0..chunks {
        let i = c * CHUNK;
        let m = if bitmap[c / 8] & (1 << (c % 8)) != 0 {
            let m = masks.next()?;
            let m = u16::from_le_bytes([m[0], m[1]]);
            if m == 0 {
                return None;
            }
            m
        } else {
            0
        };
        for k in 0..CHUNK {
            let prev = if i + k >= stride {
                out[i + k - stride]
            } else {
                0
            };
            let x = if m & (1 << k) != 0 { *bytes.next()? } else { 0 };
            out[i + k] = prev ^ x;
        }
    }
    out[chunks * CHUNK..].copy_from_slice(tail);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_page(n: usize, seed: u32) -> Vec<u8> {
        // 61 rows of 128 bytes that differ from their neighbours in two
        // bytes, behind a header and line pointers: an accounts page's
        // shape.
        let mut p = vec![0u8; n];
        for (i, b) in p.iter_mut().enumerate().take(268) {
            *b = (i as u32 * 7 + seed) as u8;
        }
        let mut at = 268;
        let mut row = 0u32;
        while at + 128 <= n {
            for k in 0..128 {
                p[at + k] = b' ';
            }
            p[at + 16] = row as u8;
            p[at + 24..at + 28].copy_from_slice(&(seed * 61 + row).to_le_bytes());
            at += 128;
            row += 1;
        }
        p
    }

    fn round_trip(src: &[u8], stride: usize) -> usize {
        let mut enc = Vec::new();
        encode(src, stride, &mut enc);
        // Both encoders write the same bytes.
        let mut portable = Vec::new();
        encode_portable(src, stride, &mut portable);
        assert_eq!(enc, portable, "stride {stride}, {} bytes", src.len());
        let mut back = vec![0xa5; src.len()];
        decode(&enc, &mut back).expect("decodes");
        assert_eq!(back, src, "stride {stride}, {} bytes", src.len());
        enc.len()
    }

    #[test]
    fn rows_round_trip_and_shrink() {
        for seed in 0..20 {
            let p = rows_page(7900, seed);
            let len = round_trip(&p, 128);
            assert!(len < p.len() / 8, "{len} bytes of {}", p.len());
        }
    }

    #[test]
    fn any_bytes_round_trip_at_any_stride() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for n in [17, 31, 32, 33, 100, 1000, 8191, 8192] {
            let src: Vec<u8> = (0..n)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Runs of repeats and random bytes.
                    if i % 50 < 30 {
                        (i % 3) as u8
                    } else {
                        x as u8
                    }
                })
                .collect();
            for stride in [16, 17, 40, 128, 300, n / 2, n - 17, n - 1] {
                if stride >= CHUNK && stride < n {
                    round_trip(&src, stride);
                }
            }
        }
        // All zeros and all ones.
        round_trip(&[0u8; 8192], 128);
        round_trip(&[0xffu8; 4096], 16);
    }

    #[test]
    fn damaged_encodings_are_rejected_without_panicking() {
        let p = rows_page(7900, 3);
        let mut enc = Vec::new();
        encode(&p, 128, &mut enc);
        let mut out = vec![0u8; p.len()];
        // Every truncation, and one byte more.
        for cut in 0..enc.len() {
            assert!(decode(&enc[..cut], &mut out).is_none(), "cut at {cut}");
        }
        let mut long = enc.clone();
        long.push(0);
        assert!(decode(&long, &mut out).is_none());
        // A bad stride; the wrong image length.
        let mut bad = enc.clone();
        bad[..2].copy_from_slice(&8u16.to_le_bytes());
        assert!(decode(&bad, &mut out).is_none());
        assert!(decode(&enc, &mut vec![0u8; p.len() + 1]).is_none());
        assert!(decode(&enc, &mut vec![0u8; p.len() + 160]).is_none());
        // Flipped bytes anywhere either fail or decode to something: never
        // a panic.
        for i in 0..enc.len() {
            let mut f = enc.clone();
            f[i] ^= 0x5a;
            let _ = decode(&f, &mut out);
        }
    }

    #[test]
    fn the_stride_comes_from_evenly_spaced_line_pointers() {
        let mut p = vec![0u8; crate::storage::BLCKSZ];
        page::init(&mut p, 0);
        for i in 0..5 {
            let t = vec![1u8; 100 + if i == 4 { 40 } else { 0 }];
            page::add_item(&mut p, &t, None).expect("room");
        }
        // 100-byte rows: 104 apart after alignment.
        assert_eq!(row_stride(&p), Some(104));
        let mut q = vec![0u8; crate::storage::BLCKSZ];
        page::init(&mut q, 0);
        for len in [100, 60, 100, 100] {
            page::add_item(&mut q, &vec![1u8; len], None).expect("room");
        }
        assert_eq!(row_stride(&q), None, "uneven rows");
        let mut few = vec![0u8; crate::storage::BLCKSZ];
        page::init(&mut few, 0);
        page::add_item(&mut few, &[1u8; 50], None).expect("room");
        assert_eq!(row_stride(&few), None, "too few rows");
    }
}
