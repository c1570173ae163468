//! Log records and their framing: what one entry of the write-ahead log
//! holds and how it is laid out in the byte stream.
//!
//! Every record is a 24-byte header followed by a kind-specific payload,
//! little-endian throughout:
//!
//! ```text
//! 0  total_len u32   length of header + payload
//! 4  crc u32         CRC-32C of bytes 8..total_len
//! 8  prev u64        LSN (start) of the previous record
//! 16 xid u32         transaction that made the change (0: none)
//! 20 kind u8         [`WalRecord`] variant
//! 21 fork u8         fork of the page named in the payload (0 otherwise)
//! 22 pad u16
//! 24 payload
//! ```
//!
//! The end of the log is the first position where a record does not read
//! back whole: a length too small or too large, a CRC mismatch, or a `prev`
//! that does not name the record before it. The `prev` check also rejects
//! the stale contents of a recycled segment file, whose records name
//! positions of an older part of the stream.
//!
//! Payloads:
//! - `Heap`: rel u32, block u32, then the page change encoded by
//!   [`HeapRecord::encode`](crate::access::heap::record::HeapRecord::encode);
//! - compact multi-insert (a `Heap` record's compact form, PostgreSQL's
//!   `xl_multi_insert_tuple` idea): rel u32, block u32, flags u8 (init page,
//!   clear all-visible, consecutive offsets), cid u32, n u16, the first
//!   offset or all n offsets, then per tuple its length u16 and its bytes
//!   from `infomask2` on. The header fields left out are implied: xmin is the
//!   record's xid, xmax 0, the command id is the record's, ctid is the
//!   tuple's own place. About half the bytes of the plain form for narrow
//!   rows;
//! - `Fpi` (full-page image): rel u32, block u32, hole_offset u16,
//!   hole_len u16, then the page without its free-space hole (heap pages
//!   only: a visibility-map page keeps its bits and counts between `lower`
//!   and `upper`, so it has no hole: PostgreSQL's non-"standard" page);
//! - compressed `Fpi` (`wal_compression = on`, PostgreSQL's `lz4`): the same
//!   four fields, then the page without its hole as one LZ4 block (the
//!   uncompressed length is `8192 - hole_len`). Written only when it is
//!   smaller; decoded into the same [`WalRecord::Fpi`].
//! - row-delta `Fpi` (`wal_compression = on`, a heap page of equal-width
//!   rows): the same four fields, then the page without its hole in
//!   [`super::xordelta`]'s form, when that is at most a quarter of the
//!   page (else LZ4 is tried): about 1.5x as fast as LZ4 on such pages,
//!   and smaller.
//! - `Commit` / `Abort`: n u32 then n relation file nodes removed with it;
//! - `Checkpoint`: redo LSN u64, next xid u32, next oid u32;
//! - `CreateRel`: rel u32; `TruncateRel`: rel u32, nblocks u32;
//! - `Btree`: rel u32, block u32, then the index page change encoded by
//!   [`BtRecord::encode`](crate::access::nbtree::BtRecord::encode).

use crate::access::heap::record::{HeapRecord, PageRef};
use crate::access::heap::tuple;
use crate::err;
use crate::error::Result;
use crate::storage::page;
use crate::storage::BLCKSZ;

/// A position in the log: the byte offset from the start of the stream.
/// A page's LSN is the end of the record that last changed it.
pub type Lsn = u64;

/// Passed as `prev` to [`decode`]: accept any predecessor (the first record
/// read, at a checkpoint's redo point, which is known to be valid).
pub const ANY_PREV: Lsn = u64::MAX;

/// Bytes in a record header.
pub const HEADER_SIZE: usize = 24;

/// The largest record accepted when reading (a full-page image or a
/// multi-insert page is below 9 KiB; a commit dropping many tables more).
pub const MAX_RECORD: usize = 16 << 20;

/// Record kinds (byte 20 of the header).
const K_HEAP: u8 = 1;
const K_FPI: u8 = 2;
const K_COMMIT: u8 = 3;
const K_ABORT: u8 = 4;
const K_CHECKPOINT: u8 = 5;
const K_CREATE: u8 = 6;
const K_TRUNCATE: u8 = 7;
const K_MULTI: u8 = 8;
const K_FPI_LZ4: u8 = 9;
const K_FPI_XOR: u8 = 10;
const K_BTREE: u8 = 11;

/// One decoded log record (the header's xid and prev are returned beside).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalRecord {
    /// A page change, to be replayed by `record::apply`.
    Heap {
        /// The page changed.
        page: PageRef,
        /// The change.
        rec: HeapRecord,
    },
    /// A full-page image: the page as it was right after the change logged
    /// by this record (the first change after a checkpoint).
    Fpi {
        /// The page.
        page: PageRef,
        /// The 8 KiB image, hole restored as zeros.
        image: Box<[u8; BLCKSZ]>,
    },
    /// Transaction `xid` committed; the relation files listed go with it.
    Commit {
        /// Relation file nodes removed at commit (DROP TABLE, TRUNCATE).
        drops: Vec<u32>,
    },
    /// Transaction `xid` aborted; the relation files listed go with it.
    Abort {
        /// Relation file nodes removed at abort (tables it created).
        drops: Vec<u32>,
    },
    /// A checkpoint finished; redo may start at `redo`.
    Checkpoint {
        /// Where the checkpoint began: every change before it is on disk.
        redo: Lsn,
        /// The next transaction id at the checkpoint.
        next_xid: u32,
        /// The next object id at the checkpoint.
        next_oid: u32,
        /// Transactions that had logged changes before `redo` but no
        /// commit or abort record: recovery from `redo` aborts those it
        /// finds no outcome for.
        open_xids: Vec<u32>,
    },
    /// A relation's files were created.
    CreateRel {
        /// Its relation file node.
        rel: u32,
    },
    /// A B-tree page change, replayed by `nbtree::wal::apply`.
    Btree {
        /// The index page changed.
        page: PageRef,
        /// The change.
        rec: crate::access::nbtree::BtRecord,
    },
    /// A relation fork was cut to `nblocks` blocks (VACUUM).
    TruncateRel {
        /// Relation file node.
        rel: u32,
        /// Fork (0 main, 1 visibility map).
        fork: u8,
        /// Blocks kept.
        nblocks: u32,
    },
}

/// A record read back from the log with its place in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRecord {
    /// Where the record starts.
    pub start: Lsn,
    /// Where it ends (the LSN pages changed by it carry).
    pub end: Lsn,
    /// The transaction that wrote it (0: none).
    pub xid: u32,
    /// The record.
    pub rec: WalRecord,
}

/// Appends a header with `total_len`/`crc` left zero; [`finish`] fills them.
fn begin(out: &mut Vec<u8>, prev: Lsn, xid: u32, kind: u8, fork: u8) -> usize {
    let at = out.len();
    out.extend_from_slice(&[0u8; 8]);
    out.extend_from_slice(&prev.to_le_bytes());
    out.extend_from_slice(&xid.to_le_bytes());
    out.extend_from_slice(&[kind, fork, 0, 0]);
    at
}

/// Fills in the length and CRC of the record started at `at`; returns its
/// length.
fn finish(out: &mut [u8], at: usize) -> usize {
    let len = out.len() - at;
    let crc = crc32c::crc32c(&out[at + 8..]);
    out[at..at + 4].copy_from_slice(&(len as u32).to_le_bytes());
    out[at + 4..at + 8].copy_from_slice(&crc.to_le_bytes());
    len
}

/// Where a tuple's header stops being implied by the compact form.
const COMPACT_FROM: usize = tuple::T_INFOMASK2;

/// Appends a multi-insert in the compact form when every tuple's implied
/// header fields hold; returns its length, or `None` (nothing appended).
fn encode_multi(
    out: &mut Vec<u8>,
    prev: Lsn,
    xid: u32,
    page: PageRef,
    rec: &HeapRecord,
) -> Option<usize> {
    let HeapRecord::MultiInsert {
        init_page,
        clear_all_visible,
        offsets,
        lens,
        data,
    } = rec
    else {
        return None;
    };
    let n = offsets.len();
    if n == 0 || n != lens.len() || n > u16::MAX as usize {
        return None;
    }
    let cid = tuple::raw_cid(data.get(..tuple::HEADER_SIZE)?);
    let mut at = 0usize;
    for (&o, &l) in offsets.iter().zip(lens) {
        let t = data.get(at..at + l as usize)?;
        if t.len() < tuple::HEADER_SIZE
            || tuple::xmin(t) != xid
            || tuple::xmax(t) != 0
            || tuple::raw_cid(t) != cid
            || tuple::ctid(t) != (page.block, o)
        {
            return None;
        }
        at += l as usize;
    }
    let consecutive = offsets.windows(2).all(|w| w[1] == w[0] + 1);
    let start = begin(out, prev, xid, K_MULTI, page.fork);
    out.extend_from_slice(&page.rel.to_le_bytes());
    out.extend_from_slice(&page.block.to_le_bytes());
    out.push(*init_page as u8 | (*clear_all_visible as u8) << 1 | (consecutive as u8) << 2);
    out.extend_from_slice(&cid.to_le_bytes());
    out.extend_from_slice(&(n as u16).to_le_bytes());
    let listed = if consecutive {
        &offsets[..1]
    } else {
        &offsets[..]
    };
    for o in listed {
        out.extend_from_slice(&o.to_le_bytes());
    }
    let mut at = 0usize;
    for &l in lens {
        out.extend_from_slice(&l.to_le_bytes());
        out.extend_from_slice(&data[at + COMPACT_FROM..at + l as usize]);
        at += l as usize;
    }
    Some(finish(out, start))
}

/// Rebuilds the multi-insert record from its compact payload `p`.
fn decode_multi(p: &[u8], xid: u32, block: u32) -> Result<HeapRecord> {
    let short = || corrupt("truncated multi-insert");
    let u16_at = |at: usize| -> Result<u16> {
        p.get(at..at + 2)
            .map(|s| u16::from_le_bytes(s.try_into().expect("2 bytes")))
            .ok_or_else(short)
    };
    let flags = *p.get(8).ok_or_else(short)?;
    let cid = u32_at(p, 9)?;
    let n = u16_at(13)? as usize;
    let mut at = 15;
    let offsets: Vec<u16> = if flags & 4 != 0 {
        let first = u16_at(at)?;
        at += 2;
        (0..n as u16).map(|i| first + i).collect()
    } else {
        let o = (0..n).map(|i| u16_at(at + 2 * i)).collect::<Result<_>>()?;
        at += 2 * n;
        o
    };
    let (mut lens, mut data) = (Vec::with_capacity(n), Vec::new());
    for &o in &offsets {
        let l = u16_at(at)? as usize;
        at += 2;
        if l < tuple::HEADER_SIZE {
            return Err(corrupt("multi-insert tuple shorter than its header"));
        }
        let rest = p.get(at..at + l - COMPACT_FROM).ok_or_else(short)?;
        at += l - COMPACT_FROM;
        let t0 = data.len();
        data.resize(t0 + COMPACT_FROM, 0);
        data.extend_from_slice(rest);
        let t = &mut data[t0..];
        tuple::set_xmin(t, xid);
        tuple::set_xmax(t, 0);
        tuple::set_raw_cid(t, cid);
        tuple::set_ctid(t, block, o);
        lens.push(l as u16);
    }
    if at != p.len() {
        return Err(corrupt("trailing bytes after a multi-insert"));
    }
    Ok(HeapRecord::MultiInsert {
        init_page: flags & 1 != 0,
        clear_all_visible: flags & 2 != 0,
        offsets,
        lens,
        data,
    })
}

/// Appends a heap page-change record (a multi-insert in its compact form
/// when it can be); returns its length.
pub fn encode_heap(
    out: &mut Vec<u8>,
    prev: Lsn,
    xid: u32,
    page: PageRef,
    rec: &HeapRecord,
) -> usize {
    if let Some(len) = encode_multi(out, prev, xid, page, rec) {
        return len;
    }
    let at = begin(out, prev, xid, K_HEAP, page.fork);
    out.extend_from_slice(&page.rel.to_le_bytes());
    out.extend_from_slice(&page.block.to_le_bytes());
    rec.encode(out);
    finish(out, at)
}

/// Appends a B-tree page-change record; returns its length.
pub fn encode_btree(
    out: &mut Vec<u8>,
    prev: Lsn,
    xid: u32,
    page: PageRef,
    rec: &crate::access::nbtree::BtRecord,
) -> usize {
    let at = begin(out, prev, xid, K_BTREE, page.fork);
    out.extend_from_slice(&page.rel.to_le_bytes());
    out.extend_from_slice(&page.block.to_le_bytes());
    out.extend_from_slice(&rec.encode());
    finish(out, at)
}

/// The free-space hole of a standard page (between `lower` and `upper`),
/// as (offset, length); (0, 0) when the page does not look standard.
fn hole(p: &[u8]) -> (usize, usize) {
    if page::is_new(p) || page::verify_header(p).is_err() {
        return (0, 0);
    }
    let (lo, up) = (page::lower(p) as usize, page::upper(p) as usize);
    if lo >= page::PAGE_HEADER_SIZE && lo <= up && up <= BLCKSZ {
        (lo, up - lo)
    } else {
        (0, 0)
    }
}

/// Appends a full-page image of `p` (a heap page's free-space hole left
/// out); returns its length.
pub fn encode_fpi(out: &mut Vec<u8>, prev: Lsn, xid: u32, page: PageRef, p: &[u8]) -> usize {
    let (ho, hl) = if page.fork == 0 { hole(p) } else { (0, 0) };
    let at = begin(out, prev, xid, K_FPI, page.fork);
    out.extend_from_slice(&page.rel.to_le_bytes());
    out.extend_from_slice(&page.block.to_le_bytes());
    out.extend_from_slice(&(ho as u16).to_le_bytes());
    out.extend_from_slice(&(hl as u16).to_le_bytes());
    out.extend_from_slice(&p[..ho]);
    out.extend_from_slice(&p[ho + hl..]);
    finish(out, at)
}

/// A full-page image compressed outside the log's insert lock
/// ([`compress_fpi`]), ready for [`encode_fpi_compressed`].
///
/// Its buffers are kept between uses (one per thread in the log writer):
/// zero-filling an 8 kB source and an 8 kB output on every image was a
/// fifth of the cost of compressing it.
#[derive(Debug, Default)]
pub struct CompressedFpi {
    /// The page's hole (offset, length), as [`encode_fpi`] leaves it out.
    hole: (usize, usize),
    /// The compressed image is `out[..len]`.
    out: Vec<u8>,
    /// Length of the compressed image; 0 when compression did not pay
    /// (the plain image is written then).
    len: usize,
    /// The record kind of the compressed image: `K_FPI_LZ4` or
    /// `K_FPI_XOR`.
    kind: u8,
}

impl CompressedFpi {
    /// The compressed image; empty when the plain one is to be written.
    fn data(&self) -> &[u8] {
        &self.out[..self.len]
    }
}

/// Compresses the image of `page` (bytes `p`) without its hole, as
/// [`encode_fpi`] would leave it out, into `out` (its buffer is reused).
/// Leaves `out`'s image empty when the compressed form would not be smaller.
///
/// The page without its hole and LZ4's output area are one reused pair per
/// thread, and `out` keeps only the compressed bytes: COPY holds a
/// `CompressedFpi` for each of a few hundred pages compressed ahead, which
/// 16 KB of scratch each would take out of the cache.
pub fn compress_fpi(page: PageRef, p: &[u8], out: &mut CompressedFpi) {
    thread_local! {
        static SCRATCH: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = Default::default();
    }
    let (ho, hl) = if page.fork == 0 { hole(p) } else { (0, 0) };
    out.hole = (ho, hl);
    let raw = BLCKSZ - hl;
    let stride = if page.fork == 0 {
        super::xordelta::row_stride(p)
    } else {
        None
    };
    SCRATCH.with_borrow_mut(|(src, dst)| {
        src.clear();
        src.extend_from_slice(&p[..ho]);
        src.extend_from_slice(&p[ho + hl..]);
        if let Some(stride) = stride.filter(|&s| s < raw) {
            super::xordelta::encode(src, stride, &mut out.out);
            if out.out.len() <= raw / 4 {
                out.len = out.out.len();
                out.kind = K_FPI_XOR;
                return;
            }
        }
        out.kind = K_FPI_LZ4;
        let max = lz4_flex::block::get_maximum_output_size(raw);
        if dst.len() < max {
            dst.resize(max, 0);
        }
        out.len = match lz4_flex::block::compress_into(src, dst) {
            Ok(n) if n < raw => n,
            _ => 0,
        };
        out.out.clear();
        out.out.extend_from_slice(&dst[..out.len]);
    });
}

/// Appends the full-page image of `p` in its compressed form when `c`
/// (made from `p` by [`compress_fpi`]) holds one, else in its plain form;
/// returns its length.
pub fn encode_fpi_compressed(
    out: &mut Vec<u8>,
    prev: Lsn,
    xid: u32,
    page: PageRef,
    p: &[u8],
    c: &CompressedFpi,
) -> usize {
    if c.data().is_empty() {
        return encode_fpi(out, prev, xid, page, p);
    }
    let (ho, hl) = c.hole;
    let at = begin(out, prev, xid, c.kind, page.fork);
    out.extend_from_slice(&page.rel.to_le_bytes());
    out.extend_from_slice(&page.block.to_le_bytes());
    out.extend_from_slice(&(ho as u16).to_le_bytes());
    out.extend_from_slice(&(hl as u16).to_le_bytes());
    out.extend_from_slice(c.data());
    finish(out, at)
}

/// Appends any other record; returns its length.
pub fn encode(out: &mut Vec<u8>, prev: Lsn, xid: u32, rec: &WalRecord) -> usize {
    match rec {
        WalRecord::Heap { page, rec } => encode_heap(out, prev, xid, *page, rec),
        WalRecord::Fpi { page, image } => encode_fpi(out, prev, xid, *page, &image[..]),
        WalRecord::Commit { drops } | WalRecord::Abort { drops } => {
            let kind = if matches!(rec, WalRecord::Commit { .. }) {
                K_COMMIT
            } else {
                K_ABORT
            };
            let at = begin(out, prev, xid, kind, 0);
            out.extend_from_slice(&(drops.len() as u32).to_le_bytes());
            for r in drops {
                out.extend_from_slice(&r.to_le_bytes());
            }
            finish(out, at)
        }
        WalRecord::Checkpoint {
            redo,
            next_xid,
            next_oid,
            open_xids,
        } => {
            let at = begin(out, prev, xid, K_CHECKPOINT, 0);
            out.extend_from_slice(&redo.to_le_bytes());
            out.extend_from_slice(&next_xid.to_le_bytes());
            out.extend_from_slice(&next_oid.to_le_bytes());
            out.extend_from_slice(&(open_xids.len() as u32).to_le_bytes());
            for x in open_xids {
                out.extend_from_slice(&x.to_le_bytes());
            }
            finish(out, at)
        }
        WalRecord::Btree { page, rec } => encode_btree(out, prev, xid, *page, rec),
        WalRecord::CreateRel { rel } => {
            let at = begin(out, prev, xid, K_CREATE, 0);
            out.extend_from_slice(&rel.to_le_bytes());
            finish(out, at)
        }
        WalRecord::TruncateRel { rel, fork, nblocks } => {
            let at = begin(out, prev, xid, K_TRUNCATE, *fork);
            out.extend_from_slice(&rel.to_le_bytes());
            out.extend_from_slice(&nblocks.to_le_bytes());
            finish(out, at)
        }
    }
}

/// The length a header announces, if it is plausible.
pub fn header_len(h: &[u8]) -> Option<usize> {
    let len = u32::from_le_bytes(h[0..4].try_into().expect("4 bytes")) as usize;
    (HEADER_SIZE..=MAX_RECORD).contains(&len).then_some(len)
}

fn corrupt(what: &str) -> crate::error::Error {
    err!(DataCorrupted, "invalid WAL record: {what}")
}

/// Why `b` (the bytes at a record's start; its announced length, or less
/// when the log has no more) is not a valid record following `prev`, or
/// `None` when its framing is valid. For messages about the end of the log.
pub fn frame_problem(b: &[u8], prev: Lsn) -> Option<String> {
    if b.len() < HEADER_SIZE {
        return Some("the log ends inside a record header".into());
    }
    let Some(len) = header_len(b) else {
        let len = u32::from_le_bytes(b[0..4].try_into().expect("4 bytes"));
        return Some(format!("invalid record length {len}"));
    };
    if b.len() < len {
        return Some(format!("the log ends inside a record of length {len}"));
    }
    let crc = u32::from_le_bytes(b[4..8].try_into().expect("4 bytes"));
    if crc32c::crc32c(&b[8..len]) != crc {
        return Some("incorrect record checksum".into());
    }
    let got = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes"));
    if prev != ANY_PREV && got != prev {
        return Some(format!(
            "record names {} as its predecessor, not {}",
            lsn_text(got),
            lsn_text(prev)
        ));
    }
    None
}

fn u32_at(b: &[u8], at: usize) -> Result<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes(s.try_into().expect("4 bytes")))
        .ok_or_else(|| corrupt("truncated payload"))
}

/// Decodes the complete record `b` (header included) that starts at `start`
/// and must follow the record starting at `prev`. `Ok(None)` means "not a
/// valid record here": the end of the log.
pub fn decode(b: &[u8], start: Lsn, prev: Lsn) -> Result<Option<ReadRecord>> {
    if b.len() < HEADER_SIZE || header_len(b) != Some(b.len()) {
        return Ok(None);
    }
    let crc = u32::from_le_bytes(b[4..8].try_into().expect("4 bytes"));
    if crc32c::crc32c(&b[8..]) != crc {
        return Ok(None);
    }
    if prev != ANY_PREV && u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")) != prev {
        return Ok(None);
    }
    let xid = u32_at(b, 16)?;
    let (kind, fork) = (b[20], b[21]);
    let p = &b[HEADER_SIZE..];
    let page_ref = || -> Result<PageRef> {
        Ok(PageRef {
            rel: u32_at(p, 0)?,
            fork,
            block: u32_at(p, 4)?,
        })
    };
    let rels = || -> Result<Vec<u32>> {
        let n = u32_at(p, 0)? as usize;
        if p.len() != 4 + 4 * n {
            return Err(corrupt("bad relation list"));
        }
        (0..n).map(|i| u32_at(p, 4 + 4 * i)).collect()
    };
    let rec = match kind {
        K_HEAP => WalRecord::Heap {
            page: page_ref()?,
            rec: HeapRecord::decode(p.get(8..).ok_or_else(|| corrupt("short"))?)?,
        },
        K_MULTI => {
            let page = page_ref()?;
            WalRecord::Heap {
                page,
                rec: decode_multi(p, xid, page.block)?,
            }
        }
        K_FPI | K_FPI_LZ4 | K_FPI_XOR => {
            let ho = u16::from_le_bytes(
                p.get(8..10)
                    .ok_or_else(|| corrupt("short"))?
                    .try_into()
                    .expect("2"),
            ) as usize;
            let hl = u16::from_le_bytes(
                p.get(10..12)
                    .ok_or_else(|| corrupt("short"))?
                    .try_into()
                    .expect("2"),
            ) as usize;
            if ho + hl > BLCKSZ {
                return Err(corrupt("bad full-page image"));
            }
            let mut unpacked = [0u8; BLCKSZ];
            let data = if kind == K_FPI_LZ4 {
                let raw = &mut unpacked[..BLCKSZ - hl];
                match lz4_flex::block::decompress_into(&p[12..], raw) {
                    Ok(n) if n == raw.len() => &unpacked[..n],
                    _ => return Err(corrupt("bad compressed full-page image")),
                }
            } else if kind == K_FPI_XOR {
                let raw = &mut unpacked[..BLCKSZ - hl];
                super::xordelta::decode(&p[12..], raw)
                    .ok_or_else(|| corrupt("bad row-delta full-page image"))?;
                &unpacked[..BLCKSZ - hl]
            } else {
                &p[12..]
            };
            if data.len() != BLCKSZ - hl {
                return Err(corrupt("bad full-page image"));
            }
            let mut image = Box::new([0u8; BLCKSZ]);
            image[..ho].copy_from_slice(&data[..ho]);
            image[ho + hl..].copy_from_slice(&data[ho..]);
            WalRecord::Fpi {
                page: page_ref()?,
                image,
            }
        }
        K_COMMIT => WalRecord::Commit { drops: rels()? },
        K_ABORT => WalRecord::Abort { drops: rels()? },
        K_CHECKPOINT => WalRecord::Checkpoint {
            redo: u64::from(u32_at(p, 0)?) | u64::from(u32_at(p, 4)?) << 32,
            next_xid: u32_at(p, 8)?,
            next_oid: u32_at(p, 12)?,
            // Absent in records written before the list existed.
            open_xids: if p.len() > 16 {
                let n = u32_at(p, 16)? as usize;
                if p.len() != 20 + 4 * n {
                    return Err(corrupt("bad transaction list"));
                }
                (0..n)
                    .map(|i| u32_at(p, 20 + 4 * i))
                    .collect::<Result<_>>()?
            } else {
                Vec::new()
            },
        },
        K_CREATE => WalRecord::CreateRel { rel: u32_at(p, 0)? },
        K_BTREE => WalRecord::Btree {
            page: page_ref()?,
            rec: crate::access::nbtree::BtRecord::decode(
                p.get(8..).ok_or_else(|| corrupt("short"))?,
            )?,
        },
        K_TRUNCATE => WalRecord::TruncateRel {
            rel: u32_at(p, 0)?,
            fork,
            nblocks: u32_at(p, 4)?,
        },
        k => return Err(corrupt(&format!("unknown kind {k}"))),
    };
    Ok(Some(ReadRecord {
        start,
        end: start + b.len() as u64,
        xid,
        rec,
    }))
}

/// PostgreSQL's text form of an LSN: `16/B374D848` (high and low 32 bits).
pub fn lsn_text(lsn: Lsn) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn & 0xffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<WalRecord> {
        let page = PageRef {
            rel: 16384,
            fork: 1,
            block: 7,
        };
        let mut image = Box::new([0u8; BLCKSZ]);
        page::init(&mut image[..], 0);
        page::add_item(&mut image[..], &[5u8; 40], None).unwrap();
        let heap_page = PageRef { fork: 0, ..page };
        let mut vm_image = Box::new([0u8; BLCKSZ]);
        crate::access::vm::init_if_new(&mut vm_image[..]);
        crate::access::vm::set(&mut vm_image[..], 0, 3, 61);
        crate::access::vm::set(&mut vm_image[..], 3000, 1, 7);
        vec![
            WalRecord::Heap {
                page,
                rec: HeapRecord::VmClear { heap_block: 3 },
            },
            WalRecord::Fpi {
                page: heap_page,
                image,
            },
            WalRecord::Fpi {
                page,
                image: vm_image,
            },
            WalRecord::Commit { drops: vec![1, 2] },
            WalRecord::Abort { drops: vec![] },
            WalRecord::Checkpoint {
                redo: 1 << 40 | 5,
                next_xid: 9,
                next_oid: 17000,
                open_xids: vec![],
            },
            WalRecord::Checkpoint {
                redo: 77,
                next_xid: 30,
                next_oid: 17001,
                open_xids: vec![5, 28],
            },
            WalRecord::CreateRel { rel: 5 },
            WalRecord::TruncateRel {
                rel: 5,
                fork: 0,
                nblocks: 3,
            },
        ]
    }

    #[test]
    fn records_round_trip_and_chain() {
        let mut buf = Vec::new();
        let mut starts = Vec::new();
        let mut prev = 0;
        for (i, r) in samples().iter().enumerate() {
            starts.push((buf.len(), prev));
            prev = buf.len() as u64;
            encode(&mut buf, starts[i].1, i as u32, r);
        }
        let fpi_len = starts[2].0 - starts[1].0;
        assert!(fpi_len < 200, "the hole is left out: {fpi_len}");
        for (i, r) in samples().iter().enumerate() {
            let (at, prev) = starts[i];
            let len = header_len(&buf[at..]).unwrap();
            let got = decode(&buf[at..at + len], at as u64, prev)
                .unwrap()
                .unwrap();
            assert_eq!((&got.rec, got.xid), (r, i as u32));
            assert_eq!(got.end, (at + len) as u64);
            // A wrong predecessor (a recycled segment) ends the log.
            assert!(decode(&buf[at..at + len], at as u64, prev + 1)
                .unwrap()
                .is_none());
        }
    }

    #[test]
    fn multi_inserts_are_logged_compactly_and_decode_whole() {
        use crate::access::heap::pageops::prepare_new_tuple;
        use crate::access::heap::tuple::{form_tuple, Attr, TupleDesc};
        let d = TupleDesc::new(vec![Attr::fixed(4, 4); 4]).unwrap();
        let page = PageRef {
            rel: 9,
            fork: 0,
            block: 12,
        };
        let (mut data, mut lens) = (Vec::new(), Vec::new());
        for (i, off) in [3u16, 4, 5, 9].into_iter().enumerate() {
            let v = (i as u32).to_le_bytes();
            let mut t = Vec::new();
            form_tuple(&d, &[Some(&v), Some(&v), None, Some(&v)], &mut t).unwrap();
            prepare_new_tuple(&mut t, 77, 5, 12, off, false, false);
            lens.push(t.len() as u16);
            data.extend_from_slice(&t);
        }
        for offsets in [vec![3u16, 4, 5, 6], vec![3, 4, 5, 9]] {
            let rec = HeapRecord::MultiInsert {
                init_page: false,
                clear_all_visible: true,
                offsets: offsets.clone(),
                lens: lens.clone(),
                data: data.clone(),
            };
            let mut plain = Vec::new();
            rec.encode(&mut plain);
            let mut buf = Vec::new();
            let len = encode_heap(&mut buf, 0, 77, page, &rec);
            let got = decode(&buf, 0, 0).unwrap().unwrap().rec;
            assert_eq!(got, WalRecord::Heap { page, rec });
            if offsets[3] == 6 {
                // The fourth tuple's ctid says 9: not implied, plain form.
                assert!(len > plain.len());
            } else {
                let payload = len - HEADER_SIZE - 8;
                assert!(
                    payload < plain.len() * 3 / 4,
                    "{payload} vs {}",
                    plain.len()
                );
            }
        }
    }

    #[test]
    fn damaged_records_end_the_log() {
        let mut buf = Vec::new();
        encode(&mut buf, 0, 3, &WalRecord::Commit { drops: vec![7] });
        let good = buf.clone();
        assert!(decode(&good, 0, 0).unwrap().is_some());
        for i in [4, 9, 17, 25] {
            let mut b = good.clone();
            b[i] ^= 0x40;
            assert!(decode(&b, 0, 0).unwrap().is_none(), "flip at {i}");
        }
        assert!(decode(&good[..good.len() - 1], 0, 0).unwrap().is_none());
        assert!(decode(&[0u8; HEADER_SIZE], 0, 0).unwrap().is_none());
        assert_eq!(lsn_text(0x16_B374_D848), "16/B374D848");
    }

    #[test]
    fn compressed_full_page_images_round_trip_and_fall_back_when_they_do_not_pay() {
        let page = PageRef {
            rel: 16384,
            fork: 0,
            block: 3,
        };
        let mut img = Box::new([0u8; BLCKSZ]);
        page::init(&mut img[..], 0);
        for i in 0..60u32 {
            let mut t = vec![b' '; 120];
            t[..4].copy_from_slice(&i.to_le_bytes());
            page::add_item(&mut img[..], &t, None).unwrap();
        }
        let mut c = CompressedFpi::default();
        compress_fpi(page, &img[..], &mut c);
        let mut buf = Vec::new();
        let len = encode_fpi_compressed(&mut buf, 0, 0, page, &img[..], &c);
        let mut plain = Vec::new();
        encode_fpi(&mut plain, 0, 0, page, &img[..]);
        assert!(len * 4 < plain.len(), "{len} vs {}", plain.len());
        assert_eq!(
            buf[20], K_FPI_XOR,
            "equal-width rows take the row-delta form"
        );
        let got = decode(&buf, 0, 0).unwrap().unwrap().rec;
        assert_eq!(
            got,
            WalRecord::Fpi {
                page,
                image: img.clone()
            }
        );
        // A corrupt block (with a matching CRC) is an error, not a panic.
        let mut bad = buf.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x55;
        bad[HEADER_SIZE + 12] = 0xff;
        bad[HEADER_SIZE + 13] = 0xff;
        let crc = crc32c::crc32c(&bad[8..]);
        bad[4..8].copy_from_slice(&crc.to_le_bytes());
        assert!(decode(&bad, 0, 0).is_err());
        // Rows of different widths go to LZ4, and come back the same.
        let mut uneven = Box::new([0u8; BLCKSZ]);
        page::init(&mut uneven[..], 0);
        for i in 0..60usize {
            let t = vec![b'x'; 40 + (i * 37) % 90];
            page::add_item(&mut uneven[..], &t, None).unwrap();
        }
        compress_fpi(page, &uneven[..], &mut c);
        let mut lz = Vec::new();
        encode_fpi_compressed(&mut lz, 0, 0, page, &uneven[..], &c);
        assert_eq!(lz[20], K_FPI_LZ4);
        let got = decode(&lz, 0, 0).unwrap().unwrap().rec;
        assert_eq!(
            got,
            WalRecord::Fpi {
                page,
                image: uneven
            }
        );
        let mut bad = lz.clone();
        bad[HEADER_SIZE + 12] = 0xff;
        let crc = crc32c::crc32c(&bad[8..]);
        bad[4..8].copy_from_slice(&crc.to_le_bytes());
        assert!(decode(&bad, 0, 0).is_err());
        // A visibility-map page has no hole: its bits survive compression.
        let vm_page = PageRef { fork: 1, ..page };
        let mut vm_image = Box::new([0u8; BLCKSZ]);
        crate::access::vm::init_if_new(&mut vm_image[..]);
        crate::access::vm::set(&mut vm_image[..], 3000, 1, 7);
        compress_fpi(vm_page, &vm_image[..], &mut c);
        let mut buf = Vec::new();
        encode_fpi_compressed(&mut buf, 0, 0, vm_page, &vm_image[..], &c);
        let got = decode(&buf, 0, 0).unwrap().unwrap().rec;
        assert_eq!(
            got,
            WalRecord::Fpi {
                page: vm_page,
                image: vm_image
            }
        );
        // Incompressible bytes: the plain image, which decodes the same.
        let mut noise = Box::new([0u8; BLCKSZ]);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for b in noise.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        compress_fpi(page, &noise[..], &mut c);
        let mut buf = Vec::new();
        let len = encode_fpi_compressed(&mut buf, 0, 0, page, &noise[..], &c);
        assert_eq!(len, HEADER_SIZE + 12 + BLCKSZ);
        let got = decode(&buf, 0, 0).unwrap().unwrap().rec;
        assert_eq!(got, WalRecord::Fpi { page, image: noise });
    }
}
