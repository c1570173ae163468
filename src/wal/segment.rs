//! Segment files: the log stream cut into [`SEG_SIZE`] files under `wal/`,
//! named by segment number in 16 hex digits (`wal/0000000000000003` holds
//! stream bytes 3 × 16 MiB up to 4 × 16 MiB). A record may span two files.
//!
//! [`SegmentFiles`] writes (positioned, `pwrite`) and syncs (`fdatasync`);
//! [`SegmentReader`] reads the stream back for recovery. A new segment file
//! is created at its full size (sparse zeros) or recycled by renaming a file
//! the last checkpoint made unnecessary; stale bytes in a recycled file are
//! rejected by the records' `prev` check.
//!
//! # Where the log ends
//!
//! The reader stops at the first position that does not hold a valid record
//! (`record` module doc). That is the normal end of the log — a torn tail:
//! the record being written when the process stopped, or nothing — only if
//! nothing valid comes after it. So at that position the reader looks
//! through the rest of the log files for a record with a valid frame that
//! names a predecessor at or after the stopping point (stale records of a
//! recycled file name older positions, and zeros never frame). If there is
//! one, the log was damaged in the middle and replay would silently drop
//! the transactions after the damage: reading fails with an error naming
//! the position (`XX001`), and the database does not open.
//!
//! Locking: none here; the writer serialises use behind its I/O mutex.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::record::{self, Lsn, ReadRecord, ANY_PREV, HEADER_SIZE};
use crate::err;
use crate::error::Result;

/// Bytes per segment file.
pub const SEG_SIZE: u64 = 16 << 20;

/// Spare (recycled) segment files kept beyond the current one.
const MAX_SPARES: usize = 4;

/// The file name of segment `seg`.
pub fn seg_name(seg: u64) -> String {
    format!("{seg:016X}")
}

fn io_err(what: &str, p: &Path, e: std::io::Error) -> crate::error::Error {
    crate::error::Error::new(
        crate::storage::reserve::code_of(&e),
        format!(
            "could not {what} file \"{}\": {}",
            p.display(),
            crate::storage::reserve::os_text(&e)
        ),
    )
}

/// The segment numbers present in `dir`, sorted.
pub fn list_segments(dir: &Path) -> Result<Vec<u64>> {
    let mut segs = Vec::new();
    let rd = fs::read_dir(dir).map_err(|e| io_err("read directory", dir, e))?;
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.len() == 16 {
            if let Ok(n) = u64::from_str_radix(name, 16) {
                segs.push(n);
            }
        }
    }
    segs.sort_unstable();
    Ok(segs)
}

/// Open segment files for writing.
#[derive(Debug)]
pub struct SegmentFiles {
    /// The `wal/` directory.
    dir: PathBuf,
    /// Open files by segment number.
    open: BTreeMap<u64, File>,
    /// Segments written since the last sync.
    unsynced: Vec<u64>,
    /// Whether to fdatasync at all (`fsync = off` in tests and benchmarks).
    pub fsync: bool,
    /// Files freed by a checkpoint, to be renamed into new segments.
    spares: Vec<PathBuf>,
}

impl SegmentFiles {
    /// Opens the writer side on `dir` (which exists).
    pub fn new(dir: &Path) -> SegmentFiles {
        SegmentFiles {
            dir: dir.to_path_buf(),
            open: BTreeMap::new(),
            unsynced: Vec::new(),
            fsync: true,
            spares: Vec::new(),
        }
    }

    fn file(&mut self, seg: u64) -> Result<&File> {
        if !self.open.contains_key(&seg) {
            let path = self.dir.join(seg_name(seg));
            if !path.exists() {
                self.take_spare(&path)?;
            }
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| io_err("open", &path, e))?;
            let len = f.metadata().map_err(|e| io_err("stat", &path, e))?.len();
            if len < SEG_SIZE {
                // Allocated whole, not sparse: writes into the segment
                // never need new space (a full disk fails here, before any
                // record of it is written).
                super::super::storage::reserve::allocate(&f, 0, SEG_SIZE).map_err(|e| {
                    let _ = f.set_len(len);
                    io_err("write to", &path, e)
                })?;
                if self.fsync {
                    f.sync_all().map_err(|e| io_err("fsync", &path, e))?;
                    File::open(&self.dir)
                        .and_then(|d| d.sync_all())
                        .map_err(|e| io_err("fsync", &self.dir, e))?;
                }
            }
            // Keep the files of at most two segments open.
            while self.open.len() >= 2 {
                let (&old, _) = self.open.iter().next().expect("not empty");
                if self.unsynced.contains(&old) {
                    break;
                }
                self.open.remove(&old);
            }
            self.open.insert(seg, f);
            self.reserve_spare(seg);
        }
        Ok(self.open.get(&seg).expect("inserted above"))
    }

    /// Renames a spare file (if one is kept) to `path`, the segment about
    /// to be opened. A spare that has gone (removed by hand) is skipped.
    fn take_spare(&mut self, path: &Path) -> Result<()> {
        while let Some(spare) = self.spares.pop() {
            match fs::rename(&spare, path) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err("rename", &spare, e)),
            }
        }
        Ok(())
    }

    /// A name for a new spare file, named after segment `seg` but distinct
    /// from every spare kept: the spare reserved ahead of the log takes the
    /// next segment's number, and a checkpoint later recycles that
    /// segment's own file as a spare, so the bare name can be taken
    /// (renaming onto it would drop the reserved file and keep its name in
    /// the list twice).
    fn spare_name(&self, seg: u64) -> PathBuf {
        let mut name = self.dir.join(format!("spare.{seg:016X}"));
        let mut n = 0u32;
        while self.spares.contains(&name) || name.exists() {
            n += 1;
            name = self.dir.join(format!("spare.{seg:016X}.{n}"));
        }
        name
    }

    /// Keeps one allocated spare file ready for the segment after `seg`, so
    /// that the log can always move on to its next segment without asking
    /// for space: a database whose disk filled up still opens, checkpoints
    /// and shuts down. Best effort: on a full disk there is no new spare,
    /// and the next segment asks for its space itself.
    fn reserve_spare(&mut self, seg: u64) {
        if !self.spares.is_empty() {
            return;
        }
        let spare = self.spare_name(seg + 1);
        let made = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&spare)
            .and_then(|f| {
                super::super::storage::reserve::allocate(&f, 0, SEG_SIZE)?;
                if self.fsync {
                    f.sync_all()?;
                }
                Ok(())
            });
        if made.is_ok() {
            self.spares.push(spare);
        } else {
            let _ = fs::remove_file(&spare);
        }
    }

    /// Writes `data` at stream position `start`.
    pub fn write(&mut self, start: Lsn, data: &[u8]) -> Result<()> {
        let mut at = 0usize;
        while at < data.len() {
            let pos = start + at as u64;
            let seg = pos / SEG_SIZE;
            let off = pos % SEG_SIZE;
            let n = ((SEG_SIZE - off) as usize).min(data.len() - at);
            let path = self.dir.join(seg_name(seg));
            self.file(seg)?
                .write_all_at(&data[at..at + n], off)
                .map_err(|e| io_err("write to", &path, e))?;
            if !self.unsynced.contains(&seg) {
                self.unsynced.push(seg);
            }
            at += n;
        }
        Ok(())
    }

    /// Makes every write so far durable (fdatasync of the files written).
    pub fn sync(&mut self) -> Result<()> {
        if !self.fsync {
            self.unsynced.clear();
            return Ok(());
        }
        // A segment leaves the list only once its fdatasync succeeded: a
        // failed sync is retried by the next flush, never skipped.
        while let Some(&seg) = self.unsynced.first() {
            let f = self.file(seg)?;
            f.sync_data()
                .map_err(|e| io_err("fdatasync", &self.dir.join(seg_name(seg)), e))?;
            self.unsynced.remove(0);
        }
        Ok(())
    }

    /// Removes (or keeps as spares) the segment files wholly before `keep_from`.
    pub fn remove_before(&mut self, keep_from: Lsn) -> Result<usize> {
        let first_kept = keep_from / SEG_SIZE;
        let mut removed = 0;
        for seg in list_segments(&self.dir)? {
            if seg >= first_kept {
                break;
            }
            self.open.remove(&seg);
            let path = self.dir.join(seg_name(seg));
            if self.spares.len() < MAX_SPARES {
                let spare = self.spare_name(seg);
                fs::rename(&path, &spare).map_err(|e| io_err("rename", &path, e))?;
                self.spares.push(spare);
            } else {
                fs::remove_file(&path).map_err(|e| io_err("remove", &path, e))?;
            }
            removed += 1;
        }
        Ok(removed)
    }

    /// Forgets everything after `end` (recovery found the log ends there):
    /// zeroes the rest of its segment (unless `zero_tail` is false: after a
    /// clean shutdown, see `Wal::open_clean`) and removes later segment
    /// files. The
    /// spare files left by the last run are kept as spares (their stale
    /// records name positions before `end`, which the reader never takes
    /// for a continuation).
    pub fn cut_at(&mut self, end: Lsn, zero_tail: bool) -> Result<()> {
        let last = end / SEG_SIZE;
        let rd = fs::read_dir(&self.dir).map_err(|e| io_err("read directory", &self.dir, e))?;
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with("spare.") {
                let full = e.metadata().map(|m| m.len() == SEG_SIZE).unwrap_or(false);
                if full && self.spares.len() < MAX_SPARES {
                    self.spares.push(e.path());
                } else {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
        for seg in list_segments(&self.dir)? {
            if seg > last {
                let path = self.dir.join(seg_name(seg));
                fs::remove_file(&path).map_err(|e| io_err("remove", &path, e))?;
            }
        }
        let path = self.dir.join(seg_name(last));
        if zero_tail && path.exists() {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|e| io_err("open", &path, e))?;
            zero_from(&f, end % SEG_SIZE)
                .and_then(|_| f.sync_all())
                .map_err(|e| io_err("truncate", &path, e))?;
            // Fills any hole a sparse older file has; on a full disk the
            // log still opens (a later write asks for the space itself).
            let _ = super::super::storage::reserve::allocate(&f, 0, SEG_SIZE);
        }
        Ok(())
    }
}

/// Zeroes a segment file from `from` to its end by overwriting the bytes
/// that are not zero (never shortening it: the space stays allocated, so
/// opening needs no new space on a full disk), then sets its length to
/// [`SEG_SIZE`].
fn zero_from(f: &File, from: u64) -> std::io::Result<()> {
    let len = f.metadata()?.len().min(SEG_SIZE);
    let mut buf = vec![0u8; 1 << 20];
    let mut at = from;
    while at < len {
        let n = ((len - at) as usize).min(buf.len());
        f.read_exact_at(&mut buf[..n], at)?;
        if buf[..n].iter().any(|&b| b != 0) {
            buf[..n].fill(0);
            f.write_all_at(&buf[..n], at)?;
        }
        at += n as u64;
    }
    if f.metadata()?.len() != SEG_SIZE {
        f.set_len(SEG_SIZE)?;
    }
    Ok(())
}

/// Reads records back from the segment files, one segment in memory at a
/// time.
#[derive(Debug)]
pub struct SegmentReader {
    /// The `wal/` directory.
    dir: PathBuf,
    /// The segment in memory and its bytes (empty when the file is missing).
    cur: Option<(u64, Vec<u8>)>,
    /// Where the next record starts.
    pub pos: Lsn,
    /// Where the record before `pos` starts.
    pub prev: Lsn,
}

impl SegmentReader {
    /// A reader starting at `pos`, whose previous record started at `prev`.
    pub fn new(dir: &Path, pos: Lsn, prev: Lsn) -> SegmentReader {
        SegmentReader {
            dir: dir.to_path_buf(),
            cur: None,
            pos,
            prev,
        }
    }

    fn segment(&mut self, seg: u64) -> Result<&[u8]> {
        if self.cur.as_ref().map(|c| c.0) != Some(seg) {
            let path = self.dir.join(seg_name(seg));
            let bytes = match fs::read(&path) {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                Err(e) => return Err(io_err("read", &path, e)),
            };
            self.cur = Some((seg, bytes));
        }
        Ok(&self.cur.as_ref().expect("loaded above").1)
    }

    /// Copies stream bytes `pos..pos+n` into `out`; false when the log does
    /// not have them.
    fn read_at(&mut self, pos: Lsn, n: usize, out: &mut Vec<u8>) -> Result<bool> {
        out.clear();
        while out.len() < n {
            let p = pos + out.len() as u64;
            let (seg, off) = (p / SEG_SIZE, (p % SEG_SIZE) as usize);
            let bytes = self.segment(seg)?;
            if off >= bytes.len() {
                return Ok(false);
            }
            let take = (n - out.len()).min(bytes.len() - off);
            out.extend_from_slice(&bytes[off..off + take]);
        }
        Ok(true)
    }

    /// The next valid record, or `None` at the end of the log; an error
    /// when valid records follow the stopping point (module doc).
    pub fn next_record(&mut self) -> Result<Option<ReadRecord>> {
        let mut buf = Vec::new();
        if !self.read_at(self.pos, HEADER_SIZE, &mut buf)? {
            return self.at_end().map(|_| None);
        }
        let Some(len) = record::header_len(&buf) else {
            return self.at_end().map(|_| None);
        };
        if !self.read_at(self.pos, len, &mut buf)? {
            return self.at_end().map(|_| None);
        }
        // A record that does not decode (bad payload behind a good CRC)
        // cannot be replayed: it ends the log too, but loudly.
        let Some(r) = record::decode(&buf, self.pos, self.prev)? else {
            return self.at_end().map(|_| None);
        };
        self.prev = self.pos;
        self.pos = r.end;
        Ok(Some(r))
    }

    /// Called where reading stops: fails when a valid record follows.
    fn at_end(&mut self) -> Result<()> {
        let end = self.pos;
        let Some(found) = self.valid_record_after(end)? else {
            return Ok(());
        };
        let mut buf = Vec::new();
        let have = self.read_at(end, HEADER_SIZE, &mut buf)?;
        let len = if have {
            record::header_len(&buf).unwrap_or(HEADER_SIZE)
        } else {
            0
        };
        if have && !self.read_at(end, len, &mut buf)? {
            // Whatever the log has from `end` on.
            buf.clear();
            let mut p = end;
            let mut part = Vec::new();
            while self.read_at(p, 1, &mut part)? && buf.len() < len {
                buf.push(part[0]);
                p += 1;
            }
        }
        let why = if !have {
            format!(
                "segment file \"{}\" is missing or short",
                self.dir.join(seg_name(end / SEG_SIZE)).display()
            )
        } else {
            record::frame_problem(&buf, self.prev)
                .unwrap_or_else(|| "record contents do not decode".into())
        };
        Err(err!(
            DataCorrupted,
            "invalid WAL record at {}: {why}",
            record::lsn_text(end)
        )
        .with_detail(format!(
            "A valid record follows at {}: the log is damaged in the middle, not at its end, \
             and replaying only up to the damage would lose the transactions after it.",
            record::lsn_text(found)
        ))
        .with_hint(
            "Restore the data directory from a backup. heapdb does not start with part of its log missing.",
        ))
    }

    /// The first position after `end` holding a record with a valid frame
    /// whose predecessor is at or after `end`, in this or a later segment.
    fn valid_record_after(&mut self, end: Lsn) -> Result<Option<Lsn>> {
        let mut buf = Vec::new();
        if !self.dir.exists() {
            return Ok(None);
        }
        for seg in list_segments(&self.dir)? {
            if seg < end / SEG_SIZE {
                continue;
            }
            let base = seg * SEG_SIZE;
            let len = self.segment(seg)?.len();
            let from = if seg == end / SEG_SIZE {
                (end % SEG_SIZE) as usize + 1
            } else {
                0
            };
            let mut off = from;
            while off + HEADER_SIZE <= len {
                // Candidates: a predecessor in [end, here) and a plausible
                // length (a plain scan; zeros and stale records fail fast).
                let cand = {
                    let bytes = self.segment(seg)?;
                    (off..=len - HEADER_SIZE).find(|&o| {
                        let prev =
                            u64::from_le_bytes(bytes[o + 8..o + 16].try_into().expect("8 bytes"));
                        prev >= end
                            && prev < base + o as u64
                            && record::header_len(&bytes[o..]).is_some()
                    })
                };
                let Some(o) = cand else { break };
                let p = base + o as u64;
                let n = record::header_len(&self.segment(seg)?[o..]).expect("checked");
                if self.read_at(p, n, &mut buf)? && record::frame_problem(&buf, ANY_PREV).is_none()
                {
                    return Ok(Some(p));
                }
                off = o + 1;
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod spare_tests {
    use super::*;

    /// The log moves through segments with checkpoints recycling old ones
    /// in between: every segment opens, whatever the spares were named.
    /// (A checkpoint used to rename a recycled segment onto the spare
    /// reserved under the same number, and a later segment then failed to
    /// open: `could not rename file ".../spare.0000000000000002"`.)
    #[test]
    fn recycled_segments_never_collide_with_the_reserved_spare() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut f = SegmentFiles::new(dir.path());
        f.fsync = false;
        for seg in 0..9u64 {
            f.write(seg * SEG_SIZE + 8, b"record")
                .expect("segment opens");
            if seg >= 1 {
                f.remove_before(seg * SEG_SIZE)
                    .expect("checkpoint recycles");
            }
            let mut names: Vec<_> = f.spares.clone();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), f.spares.len(), "a spare is listed twice");
            assert!(
                f.spares.iter().all(|p| p.exists()),
                "a listed spare is gone"
            );
        }
    }
}
