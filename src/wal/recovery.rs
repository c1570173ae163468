//! Crash recovery: replaying the log from the last checkpoint's redo point
//! to the end of valid log.
//!
//! Each record is replayed through the same function that made the change
//! at run time (`record::apply`), so run time and redo cannot diverge:
//!
//! - a page change is skipped when the page's LSN is already at or past the
//!   record's end (it reached disk before the crash), which makes redo
//!   idempotent: a crash during recovery followed by another recovery gives
//!   the same pages; summary slots are the exception (blind writes, never
//!   skipped, on pages zeroed when torn: `access::sumfork` says why);
//! - a full-page image, or a record that initialises its page, overwrites
//!   the page without reading it, so a page torn by the crash (its checksum
//!   fails) is never read before it is restored;
//! - a page is zeroed and rebuilt only where the record says so (it
//!   initialises the page, like PostgreSQL's `XLOG_HEAP_INIT_PAGE`, or it is
//!   a full-page image, or it sets a visibility-map bit, whose pages are
//!   made on demand); rebuilding a block of a missing file recreates the
//!   file, as PostgreSQL's redo does;
//! - any other change whose page is missing (the file is gone, the block
//!   is past its end) or never initialised (a hole below a rebuilt block
//!   of a recreated file) is skipped and noted in the invalid-page table
//!   (PostgreSQL's, in `xlogutils.c`): its relation must be dropped or
//!   truncated below the block later in the log, which forgets the note.
//!   A note left at the end of the log stops recovery with `WAL contains
//!   references to invalid pages`: the log needs a page that is not there,
//!   and guessing would hide lost data;
//! - commit and abort records set the commit log and remove the relation
//!   files dropped with them (the pending deletes: at run time a commit
//!   that drops files unlinks them only after its record is flushed, so
//!   a file is never gone while the log can still undo its drop);
//!   relation create and truncate records are replayed on the files.
//!
//! At the end, every transaction that wrote a record but has neither a
//! commit nor an abort record is marked aborted in the commit log (its
//! commit-log entry may say committed when an asynchronous commit's record
//! never reached disk: the log wins), and the relation files it created
//! (its create records name it) are removed, as its abort record would
//! have done (PostgreSQL leaves them behind). "Wrote a record" counts the
//! records replayed and the transactions a checkpoint record lists as having
//! logged changes before its redo point with no outcome yet: such a
//! transaction may have nothing after the redo point but its lost commit
//! record, and its commit-log entry must not make it half committed (the
//! changes after the redo point gone with the log's tail, those before it
//! on disk).
//!
//! Callers: `Database::open_with` runs this before opening the catalog (which
//! reads the commit log), then writes a checkpoint.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use std::os::unix::fs::FileExt;

use super::record::{self, Lsn, WalRecord, ANY_PREV, HEADER_SIZE};
use super::segment::{seg_name, SegmentReader, SEG_SIZE};
use crate::access::heap::record::{apply, HeapRecord, PageRef};
use crate::access::vm;
use crate::err;
use crate::error::Result;
use crate::storage::bufmgr::ReadMode;
use crate::storage::page;
use crate::storage::{BlockNumber, BufferPool, ForkNumber, RelFileNode};
use crate::txn::clog::{Clog, XidStatus};

/// What a pass over the log found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogEnd {
    /// Where the next record goes.
    pub end: Lsn,
    /// Where the last valid record starts.
    pub prev: Lsn,
    /// Records read.
    pub records: u64,
    /// Page changes applied (not skipped).
    pub applied: u64,
    /// Transactions marked aborted because the log has no outcome for them.
    pub in_doubt_aborted: u64,
}

/// Reads the log from `start` to its end without replaying anything (a
/// clean shutdown): finds where writing continues.
pub fn find_end(wal_dir: &Path, start: Lsn) -> Result<LogEnd> {
    let mut rd = SegmentReader::new(wal_dir, start, ANY_PREV);
    let mut records = 0;
    while rd.next_record()?.is_some() {
        records += 1;
    }
    Ok(LogEnd {
        end: rd.pos,
        prev: if records == 0 { start } else { rd.prev },
        records,
        ..LogEnd::default()
    })
}

/// [`find_end`] after a clean shutdown, whose checkpoint record the control
/// file says ends at `checkpoint_end`: reads only the bytes from `start` (the
/// redo point) to there, and the header after, as PostgreSQL reads only the
/// shutdown checkpoint. [`find_end`] reads the whole segment and searches
/// the rest of it for valid records past damage; after a clean shutdown the
/// log's end is known, so that search finds nothing by construction. Any
/// surprise (the records do not decode or do not end exactly at
/// `checkpoint_end`, a header continuing the chain follows, the range spans
/// segments or is large) falls back to [`find_end`], which decides and
/// reports damage as before.
pub fn find_end_clean(wal_dir: &Path, start: Lsn, checkpoint_end: Lsn) -> Result<LogEnd> {
    /// Larger ranges (not a shutdown's single record) take the full read.
    const WINDOW: u64 = 1 << 20;
    let tail = checkpoint_end + HEADER_SIZE as u64;
    if checkpoint_end <= start
        || checkpoint_end - start > WINDOW
        || start / SEG_SIZE != (tail - 1) / SEG_SIZE
    {
        return find_end(wal_dir, start);
    }
    let mut bytes = vec![0u8; (tail - start) as usize];
    let path = wal_dir.join(seg_name(start / SEG_SIZE));
    let read =
        std::fs::File::open(&path).and_then(|f| f.read_exact_at(&mut bytes, start % SEG_SIZE));
    if read.is_err() {
        return find_end(wal_dir, start);
    }
    let (mut pos, mut prev, mut records) = (start, ANY_PREV, 0u64);
    while pos < checkpoint_end {
        let off = (pos - start) as usize;
        let Some(len) = record::header_len(&bytes[off..]) else {
            return find_end(wal_dir, start);
        };
        if pos + len as u64 > checkpoint_end {
            return find_end(wal_dir, start);
        }
        let Some(r) = record::decode(&bytes[off..off + len], pos, prev)? else {
            return find_end(wal_dir, start);
        };
        (prev, pos, records) = (pos, r.end, records + 1);
    }
    let next = &bytes[(checkpoint_end - start) as usize..];
    let linked = u64::from_le_bytes(next[8..16].try_into().expect("8 bytes")) == prev;
    if pos != checkpoint_end || (record::header_len(next).is_some() && linked) {
        return find_end(wal_dir, start);
    }
    Ok(LogEnd {
        end: checkpoint_end,
        prev,
        records,
        ..LogEnd::default()
    })
}

fn fork_of(f: u8) -> ForkNumber {
    match f {
        0 => ForkNumber::Main,
        2 => ForkNumber::Summary,
        _ => ForkNumber::VisibilityMap,
    }
}

fn will_init(rec: &HeapRecord) -> bool {
    matches!(
        rec,
        HeapRecord::Insert {
            init_page: true,
            ..
        } | HeapRecord::MultiInsert {
            init_page: true,
            ..
        } | HeapRecord::UpdateNew {
            init_page: true,
            ..
        }
    )
}

/// PostgreSQL's invalid-page table (`xlogutils.c`): the pages that records
/// changed but redo found missing (the file gone, the block past its end,
/// or a never-initialised page), with the end of the first such record.
/// A later drop of the relation or truncation below the block forgets them;
/// any left at the end of the log mean the log references pages that
/// should exist, and recovery stops.
#[derive(Default)]
struct InvalidPages(HashMap<(u32, ForkNumber), BTreeMap<BlockNumber, Lsn>>);

impl InvalidPages {
    fn note(&mut self, rel: RelFileNode, fork: ForkNumber, block: BlockNumber, end: Lsn) {
        self.0
            .entry((rel.0, fork))
            .or_default()
            .entry(block)
            .or_insert(end);
    }

    /// The relation's files were removed: none of its pages are expected.
    fn forget_relation(&mut self, rel: u32) {
        self.0.retain(|&(r, _), _| r != rel);
    }

    /// The fork was truncated to `nblocks`: the blocks past it are gone.
    fn forget_from(&mut self, rel: u32, fork: ForkNumber, nblocks: BlockNumber) {
        if let Some(m) = self.0.get_mut(&(rel, fork)) {
            m.split_off(&nblocks);
            if m.is_empty() {
                self.0.remove(&(rel, fork));
            }
        }
    }

    /// An error naming the first page left, if any.
    fn check(&self) -> Result<()> {
        let first = self
            .0
            .iter()
            .flat_map(|(&(rel, fork), m)| m.iter().map(move |(&b, &end)| (end, rel, fork, b)))
            .min();
        let Some((end, rel, fork, block)) = first else {
            return Ok(());
        };
        let pages: usize = self.0.values().map(BTreeMap::len).sum();
        Err(
            err!(DataCorrupted, "WAL contains references to invalid pages").with_detail(format!(
                "The record ending at {} changes block {block} of relation {}, which is \
             missing or was never initialised, and no later record drops or truncates \
             it ({pages} such pages in all).",
                super::lsn_text(end),
                crate::storage::relpath(RelFileNode(rel), fork)
            )),
        )
    }
}

/// Replays one page change ending at `end`. Returns whether it was applied.
///
/// A page is zeroed and rebuilt only when the record says so (it
/// initialises the page, or sets a visibility-map bit, whose pages are
/// created on demand). Any other record whose page is missing or new is
/// noted in `invalid` and skipped: its relation is dropped or truncated
/// later in the log (checked at the end), and replaying it into a
/// zero-filled page would fail or invent a page.
fn redo_page(
    pool: &BufferPool,
    page: PageRef,
    rec: &HeapRecord,
    end: Lsn,
    invalid: &mut InvalidPages,
) -> Result<bool> {
    let rel = RelFileNode(page.rel);
    let fork = fork_of(page.fork);
    let init = will_init(rec);
    // Map and summary pages are created on demand, by the records that set
    // their entries.
    let is_vm_set = matches!(rec, HeapRecord::VmSet { .. });
    if !init && !pool.relation_exists(rel, ForkNumber::Main) {
        invalid.note(rel, fork, page.block, end);
        return Ok(false);
    }
    let exists = pool.relation_exists(rel, fork);
    let beyond = !exists || page.block >= pool.nblocks(rel, fork)?;
    let mode = if init || (beyond && is_vm_set) {
        ReadMode::ZeroPage
    } else if beyond {
        // Clearing a bit of a visibility-map page that does not exist
        // clears nothing; any other change needs its page.
        if !matches!(rec, HeapRecord::VmClear { .. }) {
            invalid.note(rel, fork, page.block, end);
        }
        return Ok(false);
    } else {
        ReadMode::Normal
    };
    let buf = pool
        .read_buffer_extended(rel, fork, page.block, mode, None)
        .map_err(|e| {
            err!(
                DataCorrupted,
                "could not replay WAL record ending at {}: {}",
                super::lsn_text(end),
                e.message
            )
            .with_hint("The page has no full-page image in the log to restore it from.")
        })?;
    let mut g = buf.write();
    if fork == ForkNumber::Main && !init && page::is_new(&g[..]) {
        // A hole left by a later block's rebuilding (the file was removed
        // after this record and is being recreated by redo).
        invalid.note(rel, fork, page.block, end);
        return Ok(false);
    }
    if !init && g.lsn() >= end {
        return Ok(false);
    }
    if fork == ForkNumber::VisibilityMap {
        vm::init_if_new(&mut g[..]);
    }
    apply(rec, &mut g[..])?;
    g.set_lsn(end);
    g.mark_dirty();
    Ok(true)
}

/// Replays heap record `rec` on `page`: what a `VmSet` carries first (the
/// heap page's flag, then the summary slot), then the record itself; a
/// lone `SummarySet` as a summary slot. Returns the pages changed.
fn redo_heap(
    pool: &BufferPool,
    page: PageRef,
    rec: &HeapRecord,
    end: Lsn,
    invalid: &mut InvalidPages,
) -> Result<u64> {
    let rel = RelFileNode(page.rel);
    let mut applied = 0;
    match rec {
        HeapRecord::SummarySet { heap_block, slot } => {
            return Ok(redo_summary(pool, rel, *heap_block, slot, end, invalid)? as u64);
        }
        HeapRecord::VmSet {
            heap_block,
            heap_all_visible,
            slot,
            ..
        } => {
            if *heap_all_visible {
                let heap = PageRef {
                    rel: page.rel,
                    fork: ForkNumber::Main as u8,
                    block: *heap_block,
                };
                applied += redo_page(pool, heap, &HeapRecord::SetAllVisible, end, invalid)? as u64;
            }
            if let Some(s) = slot {
                applied += redo_summary(pool, rel, *heap_block, s, end, invalid)? as u64;
            }
        }
        _ => {}
    }
    Ok(applied + redo_page(pool, page, rec, end, invalid)? as u64)
}

/// Replays a summary slot write (`access::sumfork`'s module doc says why
/// this is safe without full-page images): the page is read as
/// PostgreSQL's `RBM_ZERO_ON_ERROR` reads it (a page failing its checksum
/// is zeroed, then initialised: never patched), created on demand like a
/// map page, and written whatever its LSN (a slot write is blind, so
/// replaying it again is harmless, and a torn page's LSN cannot be
/// trusted).
fn redo_summary(
    pool: &BufferPool,
    rel: RelFileNode,
    heap_block: BlockNumber,
    slot: &[u8],
    end: Lsn,
    invalid: &mut InvalidPages,
) -> Result<bool> {
    let fork = ForkNumber::Summary;
    let block = crate::access::sumfork::summary_block(heap_block);
    if !pool.relation_exists(rel, ForkNumber::Main) {
        invalid.note(rel, fork, block, end);
        return Ok(false);
    }
    let beyond = !pool.relation_exists(rel, fork) || block >= pool.nblocks(rel, fork)?;
    let buf = if beyond {
        pool.read_buffer_extended(rel, fork, block, ReadMode::ZeroPage, None)?
    } else {
        match pool.read_buffer_extended(rel, fork, block, ReadMode::Normal, None) {
            Ok(b) => b,
            Err(e) if e.code == crate::error::SqlState::DataCorrupted => {
                pool.read_buffer_extended(rel, fork, block, ReadMode::ZeroPage, None)?
            }
            Err(e) => return Err(e),
        }
    };
    let mut g = buf.write();
    if !crate::access::sumfork::redo_slot(&mut g[..], heap_block, slot) {
        return Err(err!(
            DataCorrupted,
            "could not replay WAL record ending at {}: summary slot of the wrong length",
            super::lsn_text(end)
        ));
    }
    if g.lsn() < end {
        g.set_lsn(end);
    }
    g.mark_dirty();
    Ok(true)
}

/// Removes a relation's files, if any are left.
fn drop_files(pool: &BufferPool, rel: u32) -> Result<()> {
    if ForkNumber::ALL
        .iter()
        .any(|&f| pool.relation_exists(RelFileNode(rel), f))
    {
        pool.drop_relation(RelFileNode(rel))?;
    }
    Ok(())
}

/// Replays the log from `start` (a checkpoint's redo point) into `pool`
/// and `clog`; see the module doc.
pub fn redo(wal_dir: &Path, start: Lsn, pool: &BufferPool, clog: &Clog) -> Result<LogEnd> {
    let mut rd = SegmentReader::new(wal_dir, start, ANY_PREV);
    let mut out = LogEnd::default();
    let mut wrote = HashSet::new();
    let mut ended = HashSet::new();
    let mut invalid = InvalidPages::default();
    // Relations each transaction created (create records logged under it).
    let mut created: HashMap<u32, Vec<u32>> = HashMap::new();
    while let Some(r) = rd.next_record()? {
        out.records += 1;
        if r.xid != 0 {
            wrote.insert(r.xid);
        }
        match &r.rec {
            WalRecord::Heap { page, rec } => {
                out.applied += redo_heap(pool, *page, rec, r.end, &mut invalid)?;
            }
            WalRecord::Fpi { page, image } => {
                let buf = pool.read_buffer_extended(
                    RelFileNode(page.rel),
                    fork_of(page.fork),
                    page.block,
                    ReadMode::ZeroPage,
                    None,
                )?;
                let mut g = buf.write();
                g.copy_from_slice(&image[..]);
                g.set_lsn(r.end);
                g.mark_dirty();
                out.applied += 1;
            }
            WalRecord::Commit { drops } | WalRecord::Abort { drops } => {
                let status = if matches!(r.rec, WalRecord::Commit { .. }) {
                    XidStatus::Committed
                } else {
                    XidStatus::Aborted
                };
                clog.set_status(r.xid, status)?;
                ended.insert(r.xid);
                // The files dropped with the transaction go with it.
                for &d in drops {
                    drop_files(pool, d)?;
                    invalid.forget_relation(d);
                }
            }
            WalRecord::Btree { page, rec } => {
                out.applied += super::btree::redo(pool, *page, rec, r.end, &mut |rel, b| {
                    invalid.note(rel, ForkNumber::Main, b, r.end)
                })? as u64;
            }
            WalRecord::CreateRel { rel } => {
                // The main fork only, as at run time for an index; a heap's
                // visibility map and summary forks are made by the records
                // that set their pages, or when the heap is opened.
                if !pool.relation_exists(RelFileNode(*rel), ForkNumber::Main) {
                    pool.create_relation(RelFileNode(*rel), ForkNumber::Main)?;
                }
                if r.xid != 0 {
                    created.entry(r.xid).or_default().push(*rel);
                }
            }
            WalRecord::TruncateRel { rel, fork, nblocks } => {
                let (rel, fork) = (RelFileNode(*rel), fork_of(*fork));
                if pool.relation_exists(rel, fork) && pool.nblocks(rel, fork)? > *nblocks {
                    pool.truncate_relation(rel, fork, *nblocks)?;
                }
                invalid.forget_from(rel.0, fork, *nblocks);
            }
            // Transactions that wrote before the redo point and had no
            // outcome then: without a commit record below they are in doubt.
            WalRecord::Checkpoint { open_xids, .. } => wrote.extend(open_xids.iter().copied()),
        }
    }
    for x in wrote.difference(&ended) {
        clog.set_status(*x, XidStatus::Aborted)?;
        out.in_doubt_aborted += 1;
        // What its abort would have removed: the files it created, which
        // no committed catalog entry names.
        for &rel in created.get(x).into_iter().flatten() {
            drop_files(pool, rel)?;
            invalid.forget_relation(rel);
        }
    }
    invalid.check()?;
    out.end = rd.pos;
    out.prev = if out.records == 0 { start } else { rd.prev };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::access::heap::pageops::prepare_new_tuple;
    use crate::access::heap::tuple::{form_tuple, Attr, TupleDesc};
    use crate::wal::Wal;

    fn insert(block: u32, init_page: bool) -> HeapRecord {
        let d = TupleDesc::new(vec![Attr::fixed(4, 4)]).unwrap();
        let mut t = Vec::new();
        form_tuple(&d, &[Some(&7u32.to_le_bytes())], &mut t).unwrap();
        prepare_new_tuple(&mut t, 3, 0, block, 1, false, false);
        HeapRecord::Insert {
            offset: 1,
            init_page,
            clear_all_visible: false,
            tuple: t,
        }
    }

    fn heap(rel: u32, fork: u8, block: u32, rec: HeapRecord) -> WalRecord {
        WalRecord::Heap {
            page: PageRef { rel, fork, block },
            rec,
        }
    }

    /// Writes `recs` (each with xid 3) and replays them into a fresh pool.
    fn replay(recs: &[WalRecord]) -> (tempfile::TempDir, Arc<BufferPool>, Result<LogEnd>) {
        let dir = tempfile::tempdir().unwrap();
        let wal_dir = dir.path().join("wal");
        let wal = Wal::open(&wal_dir, 0, 0, 0, false).unwrap();
        let mut end = 0;
        for r in recs {
            end = wal.insert(3, r);
        }
        wal.flush(end).unwrap();
        drop(wal);
        let pool = BufferPool::open(dir.path(), 64).unwrap();
        let clog = Clog::open(dir.path()).unwrap();
        let r = redo(&wal_dir, 0, &pool, &clog);
        (dir, pool, r)
    }

    #[test]
    fn records_of_a_relation_dropped_later_are_skipped() {
        // The file is gone; an insert rebuilds block 5 (recreating it),
        // an all-visible flag and a visibility-map bit for block 2 fall in
        // the hole below, a delete in block 9 is past the end: all skipped,
        // and the commit that drops the relation removes the file again.
        let (_d, pool, r) = replay(&[
            heap(500, 0, 5, insert(5, true)),
            heap(500, 0, 2, HeapRecord::SetAllVisible),
            heap(500, 0, 9, HeapRecord::SetAllVisible),
            WalRecord::Commit { drops: vec![500] },
        ]);
        let r = r.unwrap();
        assert_eq!(r.applied, 1);
        assert!(!pool.relation_exists(RelFileNode(500), ForkNumber::Main));
    }

    #[test]
    fn a_truncation_later_in_the_log_forgets_the_pages_past_it() {
        let (_d, pool, r) = replay(&[
            WalRecord::CreateRel { rel: 501 },
            heap(501, 0, 0, insert(0, true)),
            heap(501, 0, 3, HeapRecord::SetAllVisible),
            WalRecord::TruncateRel {
                rel: 501,
                fork: 0,
                nblocks: 1,
            },
            WalRecord::Commit { drops: vec![] },
        ]);
        r.unwrap();
        assert_eq!(pool.nblocks(RelFileNode(501), ForkNumber::Main).unwrap(), 1);
    }

    #[test]
    fn a_missing_page_nothing_explains_stops_recovery() {
        for recs in [
            // The file never existed and nothing drops it.
            vec![heap(502, 0, 0, HeapRecord::SetAllVisible)],
            // A hole below a rebuilt block of a live relation.
            vec![
                WalRecord::CreateRel { rel: 503 },
                heap(503, 0, 4, insert(4, true)),
                heap(503, 0, 1, HeapRecord::SetAllVisible),
            ],
            // Truncated, but not below the page.
            vec![
                heap(504, 0, 6, insert(6, true)),
                heap(504, 0, 3, HeapRecord::SetAllVisible),
                WalRecord::TruncateRel {
                    rel: 504,
                    fork: 0,
                    nblocks: 4,
                },
            ],
        ] {
            // Committed: the files stay (a transaction cut off by the
            // crash would have its files removed, and the notes with them).
            let mut recs = recs;
            recs.push(WalRecord::Commit { drops: vec![] });
            let (_d, _pool, r) = replay(&recs);
            let e = r.unwrap_err();
            assert_eq!(e.message, "WAL contains references to invalid pages");
            assert!(
                e.detail.as_deref().unwrap_or("").contains("base/50"),
                "{e:?}"
            );
        }
    }

    #[test]
    fn files_of_a_transaction_without_an_outcome_are_removed_with_their_notes() {
        let (_d, pool, r) = replay(&[
            WalRecord::CreateRel { rel: 506 },
            heap(506, 0, 4, insert(4, true)),
            heap(506, 0, 1, HeapRecord::SetAllVisible),
        ]);
        assert_eq!(r.unwrap().in_doubt_aborted, 1);
        assert!(!pool.relation_exists(RelFileNode(506), ForkNumber::Main));
    }

    #[test]
    fn a_file_created_before_the_redo_point_by_an_unfinished_transaction_goes() {
        // Transaction 7 creates relation 610 and 8 creates 611 and commits;
        // a checkpoint begins while 7 runs; the log ends before 7 does.
        // Recovery from the redo point removes 610 (its create record is
        // logged again after the redo point) and keeps 611, and makes no
        // visibility-map fork for either.
        let dir = tempfile::tempdir().unwrap();
        let wal_dir = dir.path().join("wal");
        let wal = Wal::open(&wal_dir, 0, 0, 0, false).unwrap();
        let pool = BufferPool::open(dir.path(), 64).unwrap();
        for (xid, rel) in [(7, 610), (8, 611)] {
            wal.insert(xid, &WalRecord::CreateRel { rel });
            pool.create_relation(RelFileNode(rel), ForkNumber::Main)
                .unwrap();
        }
        wal.insert(8, &WalRecord::Commit { drops: vec![] });
        let (redo_at, open) = wal.begin_checkpoint();
        assert_eq!(open, vec![7]);
        let end = wal.insert(0, &heap(612, 0, 0, insert(0, true)));
        wal.flush(end).unwrap();
        drop(wal);
        drop(pool);
        let pool = BufferPool::open(dir.path(), 64).unwrap();
        let clog = Clog::open(dir.path()).unwrap();
        let r = redo(&wal_dir, redo_at, &pool, &clog).unwrap();
        assert_eq!(r.in_doubt_aborted, 1);
        assert!(!pool.relation_exists(RelFileNode(610), ForkNumber::Main));
        assert!(pool.relation_exists(RelFileNode(611), ForkNumber::Main));
        for rel in [610, 611] {
            assert!(!pool.relation_exists(RelFileNode(rel), ForkNumber::VisibilityMap));
        }
    }

    #[test]
    fn clearing_a_bit_of_a_missing_visibility_map_page_is_not_an_error() {
        let (_d, _pool, r) = replay(&[
            WalRecord::CreateRel { rel: 505 },
            heap(505, 0, 0, insert(0, true)),
            heap(505, 1, 0, HeapRecord::VmClear { heap_block: 0 }),
        ]);
        r.unwrap();
    }
}
