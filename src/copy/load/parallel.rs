//! COPY FROM a server-side file in text format on three threads (the
//! session's and two more), each doing every step for its own chunks of
//! the file, so neither parsing nor page placement waits for a single
//! thread.
//!
//! ```text
//!   read chunk k      parse, pack pages     count k       compress pages    place k
//!   (reader lock) --> (parallel)        --> (in order) --> (parallel)    --> (in order)
//! ```
//!
//! - *Read*: under the reader's lock a worker takes the next ~2 MiB of the
//!   file, cut after the last newline that ends a record (text format: a
//!   newline not escaped by an odd run of backslashes), the rest carried to
//!   the next chunk. Records never span chunks, so reading a chunk alone
//!   gives the records reading the whole file gives.
//! - *Parse*: records to tuples (the fast path, else the general one) packed
//!   into page images, as the single-threaded loader does; a chunk stops at
//!   its first bad record or at `\.`.
//! - *Count*, in chunk order: the chunk learns how many records come before
//!   it (line numbers) and which block its first page will land on (the
//!   blocks of the chunks before it, from where the relation ended). A bad
//!   record is reported here, by running the general path on it again with
//!   its real line number — so the first bad line of the file is the one
//!   reported, with exactly the single-threaded message and CONTEXT — and
//!   every later chunk is dropped; after `\.` too.
//! - *Compress*: each page's ctids are set for its predicted block and the
//!   page is compressed for the log (when `wal_compression` is on and the
//!   table is logged), in parallel.
//! - *Place*, in chunk order, by whichever worker is free (a worker parks
//!   its chunk with the ready ones and goes on reading; the worker placing
//!   takes the next chunk due, so no worker waits for its chunk's turn,
//!   only when three chunks are ready): the pages go onto new blocks
//!   ([`HeapRelation::insert_page_images`]); a page that lands where
//!   predicted is logged with its compressed form, any other (another
//!   session extended the table meanwhile, or the table's free space took
//!   some rows) is fixed and compressed there, and the prediction is
//!   corrected for the chunks counted next.
//!
//! Each chunk's last page is placed part full (one page in ~350 for
//! pgbench accounts), since the next chunk is packed on another thread.

use std::fs::File;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use super::record_to_tuple::FastForm;
use super::*;
use crate::access::heap::record::PageRef;
use crate::access::heap::{set_image_blocks, HeapRelation, PageImages, Precompressed};
use crate::copy::context::os_text;
use crate::copy::reader::TextRecords;
use crate::storage::{BlockNumber, Ring, BLCKSZ};
use crate::txn::{CommandId, Xid};
use crate::wal::record::{compress_fpi, CompressedFpi};

/// Input bytes per chunk (about: a chunk ends at a record's end).
const CHUNK: usize = 2 << 20;
/// Bytes asked of the file per read.
const READ: usize = 1 << 20;
/// Chunks ready to be placed before a worker waits.
const MAX_READY: usize = 3;
/// Threads loading, the session's included: three on two cores, so that
/// a worker waiting for its chunk's count leaves another to run, and a
/// loaded machine's scheduler gives the load its share.
const WORKERS: usize = 3;

/// The file and what was read of it past the last chunk's end.
struct Reader {
    file: File,
    carry: Vec<u8>,
    eof: bool,
    /// The next chunk's number.
    seq: u64,
}

/// The ordered steps' state (see the module doc).
struct State {
    /// Chunks counted.
    counted: u64,
    /// Chunks placed.
    placed: u64,
    /// Blocks the counted chunks' pages take, from where the relation
    /// ended at the start: the next chunk's first block, uncorrected.
    next_block: i64,
    /// Correction of the prediction, learnt from placements.
    shift: i64,
    /// Records of the counted chunks (the next chunk's first line - 1).
    lines: u64,
    /// Rows placed.
    rows: u64,
    /// The last chunk to place (it holds the end marker `\.`).
    limit: u64,
    /// The error that stops the load.
    error: Option<Error>,
    /// Chunks counted and compressed, waiting for their turn to be placed.
    ready: std::collections::BTreeMap<u64, Ready>,
    /// A worker is placing chunks.
    placing: bool,
    /// Buffers of placed chunks, for the next ones.
    spares: Vec<(Vec<u8>, Vec<CompressedFpi>)>,
}

/// A chunk ready to be placed.
struct Ready {
    pages: Vec<u8>,
    rows: u64,
    /// The predicted block of its first page, when it was compressed.
    first: Option<BlockNumber>,
    /// Its pages compressed for those blocks.
    packed: Vec<CompressedFpi>,
    /// Where its pages end by the uncorrected prediction.
    end_block: i64,
}

/// What only the placing worker touches.
struct Placer {
    ring: Ring,
    fill_first: bool,
}

/// A bad record found while parsing a chunk.
enum Failure {
    /// The record at this line of the chunk: reported again at count time.
    Record(u64, Vec<u8>),
    /// An error without a line (a row no page can hold).
    Plain(Error),
}

/// One chunk's parse result.
struct Parsed {
    pages: Vec<u8>,
    records: u64,
    rows: u64,
    end: bool,
    failure: Option<Failure>,
}

/// A load shared by the workers.
pub(super) struct ParallelLoad<'a> {
    pub parser: &'a Parser<'a>,
    pub rel: &'a HeapRelation,
    pub xid: Xid,
    pub cid: CommandId,
    pub freeze: bool,
    pub cancel: &'a AtomicBool,
    reader: Mutex<Reader>,
    state: Mutex<State>,
    changed: Condvar,
    placer: Mutex<Placer>,
    /// Input bytes read so far.
    bytes: AtomicU64,
    stopped: AtomicBool,
    compress: bool,
}

impl<'a> ParallelLoad<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        parser: &'a Parser<'a>,
        rel: &'a HeapRelation,
        (xid, cid): (Xid, CommandId),
        freeze: bool,
        file: File,
        ring: Ring,
        cancel: &'a AtomicBool,
    ) -> Result<ParallelLoad<'a>> {
        Ok(ParallelLoad {
            parser,
            rel,
            xid,
            cid,
            freeze,
            cancel,
            reader: Mutex::new(Reader {
                file,
                carry: Vec::new(),
                eof: false,
                seq: 0,
            }),
            state: Mutex::new(State {
                counted: 0,
                placed: 0,
                next_block: i64::from(rel.nblocks()?),
                shift: 0,
                lines: 0,
                rows: 0,
                limit: u64::MAX,
                error: None,
                ready: Default::default(),
                placing: false,
                spares: Vec::new(),
            }),
            changed: Condvar::new(),
            placer: Mutex::new(Placer {
                ring,
                fill_first: true,
            }),
            bytes: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            compress: rel.compresses_images_of(xid),
        })
    }

    /// Runs the load on this thread and one more; `progress(rows, bytes)`
    /// is called on this thread after each of its chunks. Returns the rows
    /// loaded.
    pub(super) fn run(&self, progress: &mut dyn FnMut(u64, u64)) -> Result<u64> {
        let styles = &crate::types::ThreadStyles::current();
        std::thread::scope(|s| {
            for _ in 1..WORKERS {
                s.spawn(move || {
                    styles.apply();
                    self.work(&mut |_, _| {})
                });
            }
            self.work(progress);
        });
        let mut st = self.lock();
        if let Some(e) = st.error.take() {
            return Err(e);
        }
        progress(st.rows, self.bytes.load(Ordering::Relaxed));
        Ok(st.rows)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("COPY state poisoned")
    }

    /// Stops the load with `e` (unless it stopped already).
    fn fail(&self, st: &mut State, e: Error) {
        if st.error.is_none() {
            st.error = Some(e);
        }
        self.stopped.store(true, Ordering::Relaxed);
        self.changed.notify_all();
    }

    /// Waits until `ready(state)` or the load stopped; `None` if it stopped.
    fn wait_for(&self, ready: impl Fn(&State) -> bool) -> Option<MutexGuard<'_, State>> {
        let mut st = self.lock();
        while st.error.is_none() && !ready(&st) {
            st = self.changed.wait(st).expect("COPY state poisoned");
        }
        st.error.is_none().then_some(st)
    }

    /// One worker: chunks until the file ends or the load stops, then
    /// placing what is left ready.
    fn work(&self, progress: &mut dyn FnMut(u64, u64)) {
        let p = self.parser;
        let mut fast = FastForm::new(p.table, p.opts, p.targets, p.desc, p.now);
        let mut scratch = Scratch::default();
        let mut chunk = Vec::with_capacity(CHUNK + READ);
        while !self.stopped.load(Ordering::Relaxed) {
            let (spare, mut packed) = self.lock().spares.pop().unwrap_or_default();
            let seq = match self.read_chunk(&mut chunk) {
                Ok(Some(seq)) => seq,
                Ok(None) => break,
                Err(e) => return self.fail(&mut self.lock(), e),
            };
            let parsed = self.parse(seq, &chunk, &mut fast, &mut scratch, spare);
            let Some((first, end_block)) = self.count(seq, &parsed) else {
                break;
            };
            let mut pages = parsed.pages;
            let npages = pages.len() / BLCKSZ;
            let mut predicted = None;
            if self.compress && first >= 0 {
                let first = first as BlockNumber;
                set_image_blocks(&mut pages, first);
                if packed.len() < npages {
                    packed.resize_with(npages, CompressedFpi::default);
                }
                for (i, img) in pages.chunks_exact(BLCKSZ).enumerate() {
                    let page = PageRef {
                        rel: self.rel.rel().0,
                        fork: 0,
                        block: first + i as BlockNumber,
                    };
                    compress_fpi(page, img, &mut packed[i]);
                }
                predicted = Some(first);
            }
            let ready = Ready {
                pages,
                rows: parsed.rows,
                first: predicted,
                packed,
                end_block,
            };
            if !self.park(seq, ready) {
                return;
            }
            let rows = self.lock().rows;
            progress(rows, self.bytes.load(Ordering::Relaxed));
        }
        self.finish();
    }

    /// Puts chunk `seq` with the ready ones, then places whatever chunks
    /// are due while no other worker places (so no worker waits for its
    /// own chunk's turn: whoever is free places). Waits only while too many
    /// chunks are ready. False when the load stopped.
    fn park(&self, seq: u64, ready: Ready) -> bool {
        let mut st = self.lock();
        if st.error.is_some() {
            return false;
        }
        st.ready.insert(seq, ready);
        loop {
            st = self.place_due(st);
            if st.error.is_some() {
                return false;
            }
            if st.ready.len() < MAX_READY {
                return true;
            }
            st = self.changed.wait(st).expect("COPY state poisoned");
        }
    }

    /// After the last chunk: places what is due until nothing is ready.
    fn finish(&self) {
        let mut st = self.lock();
        loop {
            st = self.place_due(st);
            if st.error.is_some() || (st.ready.is_empty() && !st.placing) {
                return;
            }
            st = self.changed.wait(st).expect("COPY state poisoned");
        }
    }

    /// Places the ready chunks whose turn it is, in order, unless another
    /// worker is placing (it places them then).
    fn place_due<'g>(&'g self, mut st: MutexGuard<'g, State>) -> MutexGuard<'g, State> {
        while st.error.is_none() && !st.placing {
            let seq = st.placed;
            let Some(r) = st.ready.remove(&seq) else {
                break;
            };
            st.placing = true;
            drop(st);
            let placed = self.place(&r);
            st = self.lock();
            st.placing = false;
            match placed {
                // Chunks counted from now on start where the relation ends.
                Ok(end) => st.shift = i64::from(end) - r.end_block,
                Err(e) => {
                    self.fail(&mut st, e);
                    break;
                }
            }
            st.rows += r.rows;
            st.placed += 1;
            st.spares.push((r.pages, r.packed));
            self.changed.notify_all();
        }
        st
    }

    /// Reads the next chunk into `chunk`; its number, or `None` at the end.
    fn read_chunk(&self, chunk: &mut Vec<u8>) -> Result<Option<u64>> {
        let mut r = self.reader.lock().expect("COPY reader poisoned");
        chunk.clear();
        chunk.extend_from_slice(&r.carry);
        r.carry.clear();
        let mut cut = None;
        loop {
            if !r.eof && (chunk.len() < CHUNK || cut.is_none()) {
                // Into the spare capacity: no zeroing of what is read over.
                let n = (&mut r.file)
                    .take(READ as u64)
                    .read_to_end(chunk)
                    .map_err(|e| err!(IoError, "could not read from COPY file: {}", os_text(&e)))?;
                self.bytes.fetch_add(n as u64, Ordering::Relaxed);
                r.eof = n == 0;
                cut = last_record_end(chunk);
                continue;
            }
            break;
        }
        let cut = if r.eof {
            chunk.len()
        } else {
            cut.expect("read until a record ends")
        };
        r.carry.extend_from_slice(&chunk[cut..]);
        chunk.truncate(cut);
        if chunk.is_empty() {
            return Ok(None);
        }
        let seq = r.seq;
        r.seq += 1;
        Ok(Some(seq))
    }

    /// Parses chunk `seq` into page images (in `spare`'s memory).
    fn parse(
        &self,
        seq: u64,
        chunk: &[u8],
        fast: &mut Option<FastForm>,
        scratch: &mut Scratch,
        spare: Vec<u8>,
    ) -> Parsed {
        let p = self.parser;
        let mut images = PageImages::with_buffer(spare, self.xid, self.cid, self.freeze)
            .reserving(self.rel.fill_reserve());
        let mut tup = Vec::with_capacity(256);
        let (mut records, mut rows, mut end, mut failure) = (0u64, 0u64, false, None);
        for record in TextRecords::new(chunk) {
            records += 1;
            if seq == 0 && records == 1 && p.opts.header {
                continue;
            }
            if record == b"\\." {
                end = true;
                break;
            }
            tup.clear();
            if fast
                .as_mut()
                .and_then(|f| f.form(record, &mut tup))
                .is_none()
                && p.general(record, records, scratch, &mut tup).is_err()
            {
                failure = Some(Failure::Record(records, record.to_vec()));
                break;
            }
            if let Err(e) = images.push(&tup) {
                failure = Some(Failure::Plain(e));
                break;
            }
            rows += 1;
        }
        Parsed {
            pages: images.take_all(),
            records,
            rows,
            end,
            failure,
        }
    }

    /// Counts chunk `seq` in order (see the module doc): the predicted
    /// block of its first page and the uncorrected prediction of the next
    /// chunk's, or `None` when the load stops or the chunk comes after the
    /// end marker.
    fn count(&self, seq: u64, parsed: &Parsed) -> Option<(i64, i64)> {
        let mut st = self.wait_for(|st| st.counted == seq || seq > st.limit)?;
        if seq > st.limit {
            return None;
        }
        if let Some(f) = &parsed.failure {
            let e = match f {
                Failure::Record(line, record) => {
                    let mut tup = Vec::new();
                    match self.parser.general(
                        record,
                        st.lines + line,
                        &mut Scratch::default(),
                        &mut tup,
                    ) {
                        Err(e) => e,
                        Ok(_) => err!(InternalError, "a COPY record failed only once"),
                    }
                }
                Failure::Plain(e) => e.clone(),
            };
            self.fail(&mut st, e);
            return None;
        }
        if parsed.end {
            // Nothing after `\.` is loaded: no more chunks are read.
            st.limit = seq;
            self.stopped.store(true, Ordering::Relaxed);
        }
        let first = st.next_block + st.shift;
        st.next_block += (parsed.pages.len() / BLCKSZ) as i64;
        st.lines += parsed.records;
        st.counted += 1;
        self.changed.notify_all();
        Some((first, st.next_block))
    }

    /// Places one chunk's pages; the relation's size after them.
    fn place(&self, r: &Ready) -> Result<BlockNumber> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(err!(
                QueryCanceled,
                "canceling statement due to user request"
            ));
        }
        let pre: Vec<Precompressed<'_>> = match r.first {
            Some(first) => (0..r.pages.len() / BLCKSZ)
                .map(|i| (first + i as BlockNumber, &r.packed[i]))
                .collect(),
            None => Vec::new(),
        };
        let mut pl = self.placer.lock().expect("COPY placer poisoned");
        let Placer { ring, fill_first } = &mut *pl;
        self.rel.insert_page_images(
            &r.pages,
            (self.xid, self.cid),
            self.freeze,
            Some(ring),
            fill_first,
            &pre,
        )?;
        self.rel.nblocks()
    }
}

/// Where the last complete text record of `chunk` ends (after its
/// newline), if one does.
fn last_record_end(chunk: &[u8]) -> Option<usize> {
    let mut end = chunk.len();
    while let Some(nl) = memchr::memrchr(b'\n', &chunk[..end]) {
        let run = chunk[..nl]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if run % 2 == 0 {
            return Some(nl + 1);
        }
        end = nl;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::last_record_end;

    #[test]
    fn chunks_are_cut_after_a_record_end_only() {
        assert_eq!(last_record_end(b"a\nb\nc"), Some(4));
        assert_eq!(last_record_end(b"a\nb\n"), Some(4));
        assert_eq!(last_record_end(b"abc"), None);
        // An escaped newline does not end a record; an escaped backslash
        // before a newline does not escape it.
        assert_eq!(last_record_end(b"a\nb\\\nc"), Some(2));
        assert_eq!(last_record_end(b"a\nb\\\\\nc"), Some(6));
        assert_eq!(last_record_end(b"b\\\nc\\\n"), None);
        assert_eq!(last_record_end(b"\n"), Some(1));
    }
}
