//! The external sort of a bulk build (PostgreSQL's `tuplesort.c` for
//! B-tree index tuples): encoded leaf keys go into a [`KeySorter`] bounded
//! by a memory budget (`maintenance_work_mem`, split between the
//! participants of a parallel build); when the keys held outgrow it they
//! are sorted and written out as a *run* to a temporary file. At the end
//! every participant's last run stays in memory, and [`merge`] reads all
//! runs of all participants in one k-way merge, handing each key, in
//! ascending byte order, to the caller (the page writer of `build.rs`).
//!
//! Invariants:
//! - memory: the keys held in memory (their bytes and an entry each)
//!   never exceed the budget by more than one key; a run is at most
//!   [`MAX_RUN_BYTES`] of key bytes, so entries address it with `u32`;
//! - order: the merge yields every pushed key exactly once, in ascending
//!   `memcmp` order (ties between equal keys in any order: leaf keys end
//!   with the heap TID and are never equal);
//! - fan-in: a participant holds at most [`MAX_FANIN`] run files (more
//!   are merged into one as they appear), so the final merge opens at
//!   most that many files per participant;
//! - files: a run file lives in the data directory's temporary-file
//!   directory and is removed when its [`RunFile`] is dropped (the build
//!   finished, failed or was cancelled); files a crash left behind are
//!   removed when the database opens, with the executor's spill files.
//!
//! In memory, each key has a 32-byte entry holding its first 24 bytes
//! (the whole key of up to three integer columns and the heap TID); only
//! longer keys are also copied into one byte arena. The first sixteen
//! bytes serve as PostgreSQL's abbreviated keys: most comparisons are
//! integer comparisons, no allocation is made per key, and the merge
//! compares keys where they lie (a short key's in its sorted entry, so the
//! merge reads memory in order).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

use crate::err;
use crate::error::Result;

/// Key bytes one in-memory run may hold (entries address it with `u32`).
pub const MAX_RUN_BYTES: usize = 1 << 30;

/// Bytes an in-memory key costs beyond its own: its [`Entry`].
const ENTRY_BYTES: usize = std::mem::size_of::<Entry>();

/// Run files a participant keeps at most: when it has written this many,
/// it merges them into one (a second pass over their keys, as PostgreSQL's
/// merge passes), which bounds the files the final merge opens.
pub const MAX_FANIN: usize = 64;

/// Read and write buffer of a run file.
const IO_BUFFER: usize = 64 * 1024;

/// Numbers the run files of this process.
static NEXT_RUN: AtomicU64 = AtomicU64::new(0);

/// One key held in memory: its first [`INLINE`] bytes (zero-padded), and,
/// for a longer key, where the whole key lies in the run's arena. A key of
/// at most [`INLINE`] bytes (two or three integer columns and the heap TID)
/// lives in its entry alone: sorting moves it with its entry, so the merge
/// reads the keys of a sorted run in memory order, not scattered over an
/// arena filled in heap order.
#[derive(Debug, Clone, Copy)]
struct Entry {
    head: [u8; INLINE],
    off: u32,
    len: u32,
}

/// Bytes of a key its [`Entry`] holds.
const INLINE: usize = 24;

impl Entry {
    #[inline]
    fn new(key: &[u8], off: u32) -> Entry {
        let mut head = [0u8; INLINE];
        let n = key.len().min(INLINE);
        if n >= 16 {
            // Two fixed-size copies that overlap (no call to `memcpy`
            // for a length known only at run time): bytes 0..16 and the
            // last eight.
            head[..16].copy_from_slice(&key[..16]);
            head[n - 8..n].copy_from_slice(&key[n - 8..n]);
        } else {
            head[..n].copy_from_slice(&key[..n]);
        }
        Entry {
            head,
            off,
            len: key.len() as u32,
        }
    }

    /// Whether the whole key is in the entry.
    #[inline]
    fn inline(&self) -> bool {
        self.len as usize <= INLINE
    }

    #[inline]
    fn word(&self, i: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.head[8 * i..8 * i + 8]);
        u64::from_be_bytes(w)
    }

    #[inline]
    fn abbrev(&self) -> Abbrev {
        (self.word(0), self.word(1))
    }

    /// The byte order of the keys of two entries (`ka`, `kb` their keys).
    #[inline]
    fn compare(&self, ka: &[u8], other: &Entry, kb: &[u8]) -> std::cmp::Ordering {
        (self.word(0), self.word(1), self.word(2))
            .cmp(&(other.word(0), other.word(1), other.word(2)))
            .then_with(|| {
                if self.inline() && other.inline() {
                    // Equal zero-padded heads: the longer key sorts after.
                    self.len.cmp(&other.len)
                } else {
                    ka[INLINE.min(ka.len())..].cmp(&kb[INLINE.min(kb.len())..])
                }
            })
    }
}

/// The first [`ABBREV_LEN`] bytes of a key as two big-endian integers,
/// zero-padded: ordering two keys by it agrees with their byte order
/// except on ties. Sixteen bytes hold most of a key of two or three
/// integer columns (each a marker byte and the value), so ties, which
/// need a comparison of the whole keys, are rare for them.
type Abbrev = (u64, u64);

/// Bytes of a key its [`Abbrev`] holds.
const ABBREV_LEN: usize = 16;

#[inline]
fn abbreviate(k: &[u8]) -> Abbrev {
    let mut b = [0u8; ABBREV_LEN];
    let n = k.len().min(ABBREV_LEN);
    b[..n].copy_from_slice(&k[..n]);
    let (hi, lo) = b.split_at(8);
    (
        u64::from_be_bytes(hi.try_into().unwrap_or([0; 8])),
        u64::from_be_bytes(lo.try_into().unwrap_or([0; 8])),
    )
}

/// The byte order of two keys, given their abbreviations.
#[inline]
fn compare(a: Abbrev, ka: &[u8], b: Abbrev, kb: &[u8]) -> std::cmp::Ordering {
    a.cmp(&b).then_with(|| {
        if ka.len() <= ABBREV_LEN && kb.len() <= ABBREV_LEN {
            // Equal abbreviations of short keys: the longer key sorts after.
            ka.len().cmp(&kb.len())
        } else {
            ka[ABBREV_LEN.min(ka.len())..].cmp(&kb[ABBREV_LEN.min(kb.len())..])
        }
    })
}

/// Runs shorter than this are sorted by comparisons, longer ones by
/// [`radix_sort`].
const RADIX_MIN: usize = 4096;

/// Buckets of the radix sort smaller than this are sorted by comparisons.
const BUCKET_MIN: usize = 32;

/// The head bytes in which some entries of `v` differ, as a bit mask (bit
/// `i` for byte `i`): one pass of word operations, so that the radix sort
/// spends no histogram pass on a byte every key shares (a column's marker
/// byte, the high bytes of small integers).
fn varying_bytes(v: &[Entry]) -> u32 {
    let Some(first) = v.first() else {
        return 0;
    };
    let words = |e: &Entry| [e.word(0), e.word(1), e.word(2)];
    let f = words(first);
    let mut diff = [0u64; 3];
    for e in v {
        let w = words(e);
        for i in 0..3 {
            diff[i] |= w[i] ^ f[i];
        }
    }
    let mut mask = 0u32;
    for (i, d) in diff.iter().enumerate() {
        for (j, b) in d.to_be_bytes().iter().enumerate() {
            if *b != 0 {
                mask |= 1 << (8 * i + j);
            }
        }
    }
    mask
}

/// Sorts entries in place in key order: a most-significant-digit radix
/// sort on the bytes of the entries' heads (an American flag sort: each
/// pass counts one byte's values and permutes the entries into their
/// buckets by swaps, with no second buffer, so a build touches no memory
/// beyond its entries), recursing into each bucket on the next byte in
/// which keys differ; small buckets, and keys whose heads are all equal,
/// are sorted by [`Entry::compare`]. Heads are zero-padded keys, so their
/// byte order is the keys' order up to ties, which the comparison breaks.
fn radix_sort(v: &mut [Entry], arena: &[u8]) {
    let varying = varying_bytes(v);
    radix_sort_from(v, 0, varying, arena);
}

/// [`radix_sort`] of `v`, whose heads agree on the bytes before `depth`
/// and on every byte not in `varying`.
fn radix_sort_from(v: &mut [Entry], mut depth: usize, varying: u32, arena: &[u8]) {
    let mut counts = [0usize; 256];
    loop {
        while depth < INLINE && varying & (1 << depth) == 0 {
            depth += 1;
        }
        if v.len() < BUCKET_MIN || depth == INLINE {
            v.sort_unstable_by(|a, b| a.compare(key_of(arena, a), b, key_of(arena, b)));
            return;
        }
        counts.fill(0);
        for e in v.iter() {
            counts[usize::from(e.head[depth])] += 1;
        }
        if counts[usize::from(v[0].head[depth])] < v.len() {
            break;
        }
        depth += 1; // every entry of this bucket has the same byte here
    }
    let mut next = [0usize; 256];
    let mut ends = [0usize; 256];
    let mut open = [0u8; 256];
    let mut nopen = 0;
    let mut at = 0;
    for (b, &n) in counts.iter().enumerate() {
        next[b] = at;
        at += n;
        ends[b] = at;
        if n > 0 {
            open[nopen] = b as u8;
            nopen += 1;
        }
    }
    // Rounds over the buckets not yet filled: each entry of a bucket's
    // unplaced part is swapped into the next free slot of its own bucket,
    // which places that entry for good; the one it displaces waits for the
    // next round. Unlike following one cycle of swaps at a time, the
    // swaps of a round do not wait for each other's cache misses.
    while nopen > 0 {
        let mut still = 0;
        for k in 0..nopen {
            let b = usize::from(open[k]);
            let end = ends[b];
            let mut i = next[b];
            while i < end {
                let d = usize::from(v[i].head[depth]);
                let t = next[d];
                next[d] = t + 1;
                v.swap(i, t);
                i += 1;
            }
            if next[b] < end {
                open[still] = b as u8;
                still += 1;
            }
        }
        nopen = still;
    }
    let mut start = 0;
    for &n in &counts {
        if n > 1 {
            radix_sort_from(&mut v[start..start + n], depth + 1, varying, arena);
        }
        start += n;
    }
}

/// Sorted keys in memory: a byte arena and entries in key order.
#[derive(Debug, Default)]
pub struct MemRun {
    arena: Vec<u8>,
    entries: Vec<Entry>,
}

impl MemRun {
    #[inline]
    fn key<'e>(&'e self, e: &'e Entry) -> &'e [u8] {
        key_of(&self.arena, e)
    }

    fn sort(&mut self) {
        let arena = &self.arena;
        if self.entries.len() < RADIX_MIN {
            self.entries
                .sort_unstable_by(|a, b| a.compare(key_of(arena, a), b, key_of(arena, b)));
            return;
        }
        radix_sort(&mut self.entries, arena);
    }

    /// Bytes held (keys and entries).
    fn bytes(&self) -> usize {
        self.arena.len() + self.entries.len() * ENTRY_BYTES
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds no key.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl Drop for MemRun {
    fn drop(&mut self) {
        spare::give(std::mem::take(&mut self.entries));
    }
}

/// Entry buffers kept between sorts, up to [`spare::KEPT_BYTES`] of
/// capacity in all: a large sort's entries are memory the kernel must
/// zero when first touched (a tenth of a 1M-row build's cycles), and a
/// buffer freed at the end of a build is handed back to it, so each build
/// of a process after its first, and each of the participants of a
/// parallel build, would pay that again. A kept buffer is reused by the
/// next sort that reserves room ([`KeySorter::reserve`]).
mod spare {
    use super::Entry;
    use std::sync::Mutex;

    /// Capacity kept at most, in bytes.
    pub(super) const KEPT_BYTES: usize = 128 << 20;

    static KEPT: Mutex<Vec<Vec<Entry>>> = Mutex::new(Vec::new());

    fn bytes(v: &Vec<Entry>) -> usize {
        v.capacity() * std::mem::size_of::<Entry>()
    }

    /// The kept buffer of the largest capacity, if it has room for
    /// `want` entries (emptied).
    pub(super) fn take(want: usize) -> Option<Vec<Entry>> {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        let (i, _) = kept.iter().enumerate().max_by_key(|(_, v)| v.capacity())?;
        if kept[i].capacity() < want {
            return None;
        }
        let mut v = kept.swap_remove(i);
        v.clear();
        Some(v)
    }

    /// Keeps `v` if it is large enough to matter and fits in the bound.
    pub(super) fn give(v: Vec<Entry>) {
        if bytes(&v) < 1 << 20 {
            return;
        }
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        let held: usize = kept.iter().map(bytes).sum();
        if held + bytes(&v) <= KEPT_BYTES {
            kept.push(v);
        }
    }
}

/// The key of `e`: in the entry, or in `arena`.
#[inline]
fn key_of<'e>(arena: &'e [u8], e: &'e Entry) -> &'e [u8] {
    if e.inline() {
        &e.head[..e.len as usize]
    } else {
        &arena[e.off as usize..e.off as usize + e.len as usize]
    }
}

/// A sorted run written to a temporary file: each key as a `u32`
/// little-endian length and its bytes. Removed when dropped.
#[derive(Debug)]
pub struct RunFile {
    path: PathBuf,
    keys: u64,
}

impl RunFile {
    /// Writes the keys `fill` hands over (in order) to a new file in `dir`.
    fn write(
        dir: &Path,
        fill: impl FnOnce(&mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()>,
    ) -> Result<RunFile> {
        std::fs::create_dir_all(dir).map_err(|e| io_error("create directory", dir, e))?;
        let n = NEXT_RUN.fetch_add(1, AtomicOrdering::Relaxed);
        let path = dir.join(format!("pgsql_tmp{}.btsort{n}", std::process::id()));
        let file = File::create(&path).map_err(|e| io_error("create file", &path, e))?;
        // From here the file is removed on every path, errors included.
        let mut rf = RunFile { path, keys: 0 };
        let mut w = BufWriter::with_capacity(IO_BUFFER, file);
        let mut keys = 0u64;
        let path = &rf.path;
        fill(&mut |k: &[u8]| {
            keys += 1;
            w.write_all(&(k.len() as u32).to_le_bytes())
                .and_then(|()| w.write_all(k))
                .map_err(|e| io_error("write to file", path, e))
        })?;
        w.flush().map_err(|e| io_error("write to file", path, e))?;
        rf.keys = keys;
        Ok(rf)
    }

    fn source(&self) -> Result<Source<'_>> {
        let file = File::open(&self.path).map_err(|e| io_error("open file", &self.path, e))?;
        Ok(Source::File {
            r: BufReader::with_capacity(IO_BUFFER, file),
            left: self.keys,
            path: &self.path,
            key: Vec::new(),
        })
    }
}

impl Drop for RunFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> crate::error::Error {
    err!(IoError, "could not {what} \"{}\": {e}", path.display())
}

/// One participant's keys, sorted: the runs it spilled and its last run,
/// still in memory.
#[derive(Debug, Default)]
pub struct SortedRuns {
    /// Runs written to temporary files, in the order they were made.
    pub files: Vec<RunFile>,
    /// The last run.
    pub mem: MemRun,
}

impl SortedRuns {
    /// Keys over all runs.
    pub fn keys(&self) -> u64 {
        self.files.iter().map(|f| f.keys).sum::<u64>() + self.mem.len() as u64
    }
}

/// Collects keys in memory up to a budget, spilling sorted runs to
/// temporary files beyond it (see the module doc).
#[derive(Debug)]
pub struct KeySorter {
    budget: usize,
    dir: PathBuf,
    cur: MemRun,
    files: Vec<RunFile>,
    /// Runs written so far (merged ones not counted).
    written: usize,
}

impl KeySorter {
    /// A sorter holding at most `budget` bytes of keys in memory (at least
    /// one key), spilling to files in `dir`.
    pub fn new(budget: usize, dir: PathBuf) -> KeySorter {
        KeySorter {
            budget: budget.min(MAX_RUN_BYTES),
            dir,
            cur: MemRun::default(),
            files: Vec::new(),
            written: 0,
        }
    }

    /// Reserves room for about `bytes` of keys (within the budget), so
    /// that the arena and the entries are not copied as they grow; the
    /// memory is only touched as keys arrive.
    pub fn reserve(&mut self, bytes: usize) {
        let bytes = bytes.min(self.budget);
        self.cur.arena.reserve(bytes);
        let want = bytes / (ENTRY_BYTES + 8);
        if self.cur.entries.capacity() < want {
            if let Some(kept) = spare::take(want) {
                self.cur.entries = kept;
            }
        }
        self.cur.entries.reserve(want);
    }

    /// Adds a key (copied).
    #[inline]
    pub fn push(&mut self, key: &[u8]) -> Result<()> {
        let long = key.len() > INLINE;
        let cost = if long { key.len() } else { 0 } + ENTRY_BYTES;
        if !self.cur.entries.is_empty() && self.cur.bytes() + cost > self.budget {
            self.spill()?;
        }
        let off = self.cur.arena.len();
        if long {
            self.cur.arena.extend_from_slice(key);
        }
        self.cur.entries.push(Entry::new(key, off as u32));
        Ok(())
    }

    /// Sorts the keys held and writes them out as a run; at
    /// [`MAX_FANIN`] runs, merges them into one.
    fn spill(&mut self) -> Result<()> {
        self.cur.sort();
        let cur = &self.cur;
        self.files.push(RunFile::write(
            &self.dir,
            |w: &mut dyn FnMut(&[u8]) -> Result<()>| {
                cur.entries.iter().try_for_each(|e| w(cur.key(e)))
            },
        )?);
        self.written += 1;
        self.cur.arena.clear();
        self.cur.entries.clear();
        if self.files.len() >= MAX_FANIN {
            let files = std::mem::take(&mut self.files);
            let sources = files.iter().map(RunFile::source).collect::<Result<_>>()?;
            let merged = RunFile::write(&self.dir, |w| merge_sources(sources, w))?;
            self.files.push(merged);
        }
        Ok(())
    }

    /// Runs written to files so far (not counting merges of runs).
    pub fn spilled_runs(&self) -> usize {
        self.written
    }

    /// Sorts the last run and hands over all runs.
    pub fn finish(mut self) -> SortedRuns {
        self.cur.sort();
        SortedRuns {
            files: self.files,
            mem: self.cur,
        }
    }
}

/// One input of the merge.
enum Source<'a> {
    Mem {
        run: &'a MemRun,
        pos: usize,
    },
    File {
        r: BufReader<File>,
        left: u64,
        path: &'a Path,
        /// The current key (read ahead).
        key: Vec<u8>,
    },
}

impl Source<'_> {
    /// Moves to the next key; false at the end.
    fn advance(&mut self) -> Result<bool> {
        match self {
            Source::Mem { run, pos } => {
                *pos += 1;
                Ok(*pos < run.entries.len())
            }
            Source::File { r, left, path, key } => {
                if *left == 0 {
                    return Ok(false);
                }
                *left -= 1;
                let mut len = [0u8; 4];
                r.read_exact(&mut len)
                    .map_err(|e| io_error("read file", path, e))?;
                key.resize(u32::from_le_bytes(len) as usize, 0);
                r.read_exact(key)
                    .map_err(|e| io_error("read file", path, e))?;
                Ok(true)
            }
        }
    }

    /// The current key (valid after `advance` returned true).
    #[inline]
    fn key(&self) -> &[u8] {
        match self {
            Source::Mem { run, pos } => run.key(&run.entries[*pos]),
            Source::File { key, .. } => key,
        }
    }

    /// The current key's abbreviation.
    #[inline]
    fn abbrev(&self) -> Abbrev {
        match self {
            Source::Mem { run, pos } => run.entries[*pos].abbrev(),
            Source::File { key, .. } => abbreviate(key),
        }
    }
}

/// Hands every key of `parts` to `emit` in ascending order (a k-way merge
/// of all runs; a single in-memory run is read straight through).
pub fn merge(parts: &[SortedRuns], emit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
    let mut sources = Vec::new();
    for p in parts {
        for f in &p.files {
            sources.push(f.source()?);
        }
        if !p.mem.is_empty() {
            sources.push(Source::Mem {
                run: &p.mem,
                pos: 0,
            });
        }
    }
    merge_sources(sources, emit)
}

/// The k-way merge: a binary heap of the sources that still have keys,
/// ordered by their current key (abbreviation first), whose top is
/// replaced and sifted down after each key; keys are compared where they
/// are, never copied for the heap.
fn merge_sources(
    mut sources: Vec<Source<'_>>,
    emit: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    match sources.as_slice() {
        [Source::Mem { run, .. }] => {
            for e in &run.entries {
                emit(run.key(e))?;
            }
            return Ok(());
        }
        [Source::Mem { run: a, .. }, Source::Mem { run: b, .. }] => return merge_two(a, b, emit),
        _ => {}
    }
    // File sources start before their first key; memory ones at it.
    let mut heap: Vec<(Abbrev, usize)> = Vec::with_capacity(sources.len());
    for (i, s) in sources.iter_mut().enumerate() {
        let has = match s {
            Source::Mem { run, .. } => !run.entries.is_empty(),
            Source::File { .. } => s.advance()?,
        };
        if has {
            heap.push((s.abbrev(), i));
        }
    }
    // The keys are looked at only when the abbreviations tie.
    let less =
        |sources: &[Source<'_>], a: &(Abbrev, usize), b: &(Abbrev, usize)| match a.0.cmp(&b.0) {
            std::cmp::Ordering::Equal => {
                compare(a.0, sources[a.1].key(), b.0, sources[b.1].key())
                    == std::cmp::Ordering::Less
            }
            o => o == std::cmp::Ordering::Less,
        };
    for i in (0..heap.len() / 2).rev() {
        sift_down(&mut heap, i, |a, b| less(&sources, a, b));
    }
    while let Some(&(_, i)) = heap.first() {
        emit(sources[i].key())?;
        if sources[i].advance()? {
            heap[0] = (sources[i].abbrev(), i);
        } else {
            heap.swap_remove(0);
        }
        sift_down(&mut heap, 0, |a, b| less(&sources, a, b));
    }
    Ok(())
}

/// Merges two in-memory runs by walking both (a parallel build of two
/// participants, neither of which spilled: the serial part of such a
/// build, so no heap of sources, one comparison of entries per key).
fn merge_two(a: &MemRun, b: &MemRun, emit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
    let (ea, eb) = (&a.entries[..], &b.entries[..]);
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (ea.get(i), eb.get(j)) {
        let (kx, ky) = (a.key(x), b.key(y));
        if x.compare(kx, y, ky) != std::cmp::Ordering::Greater {
            emit(kx)?;
            i += 1;
        } else {
            emit(ky)?;
            j += 1;
        }
    }
    for e in &ea[i..] {
        emit(a.key(e))?;
    }
    for e in &eb[j..] {
        emit(b.key(e))?;
    }
    Ok(())
}

/// Restores the min-heap order below `i` of `h` under `less`.
#[inline]
fn sift_down<T: Copy>(h: &mut [T], mut i: usize, less: impl Fn(&T, &T) -> bool) {
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut m = i;
        if l < h.len() && less(&h[l], &h[m]) {
            m = l;
        }
        if r < h.len() && less(&h[r], &h[m]) {
            m = r;
        }
        if m == i {
            return;
        }
        h.swap(i, m);
        i = m;
    }
}

#[cfg(test)]
#[path = "sortbuild_tests.rs"]
mod tests;
