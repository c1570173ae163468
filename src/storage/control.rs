//! The control file (`<data dir>/control`): the few facts a database needs
//! before it can read anything else.
//!
//! It holds the format version, the next transaction id and object id to hand
//! out, the location of the last checkpoint and its redo point (filled in by
//! the write-ahead log), and whether the last shutdown was clean.
//!
//! On disk it is one small fixed-layout record, little-endian:
//!
//! ```text
//! 0  magic u32 "HPDC"   4  format_version u32   8  next_xid u32   12 next_oid u32
//! 16 checkpoint_lsn u64 24 redo_lsn u64          32 clean_shutdown u8 (+3 pad)
//! 36 crc32c u32 of bytes 0..36
//! ```
//!
//! Invariant: the file on disk is always a complete, checksummed record. It is
//! replaced atomically: written to `control.tmp`, fsynced, renamed over
//! `control`, then the directory is fsynced, so a crash leaves either the old
//! or the new record, never a torn one. The next `control.tmp` is written
//! right after (its old contents are never read), so the next update
//! overwrites allocated space: a full disk does not stop the control file
//! from being updated (a clean shutdown, a checkpoint).
//!
//! A missing control file in a data directory that is not new is an error
//! ([`ControlFile::open`]): the database is never initialised again over
//! existing files.
//!
//! Locking: [`ControlFile`] is not shared by itself; the owner (the
//! transaction manager, later the checkpointer) wraps it in a mutex.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::err;
use crate::error::Result;

const MAGIC: u32 = u32::from_le_bytes(*b"HPDC");
const RECORD_LEN: usize = 40;

/// The on-disk format version this build writes and understands.
///
/// 2: page checksums leave hint bits and `PD_ALL_VISIBLE` out
/// (`storage::checksum`); a version-1 page with hint bits set would fail
/// verification, so version-1 directories are refused.
/// 3: the catalog file carries a CRC-32C and the commit log a summary of
/// its pages (`txn::clog`); older directories are refused.
/// 4: index entries name HOT chain roots only (`access::heap::hot`). A
/// version-3 directory's indexes have entries for heap-only versions and
/// its pages HOT chains whose versions differ in indexed columns, which
/// the chain-following readers would misread: it is opened
/// ([`OLDEST_CONVERTIBLE`]) and its tables with indexes converted before
/// use (`access::heap::format3`), then marked version 4.
pub const FORMAT_VERSION: u32 = 4;
/// The oldest format version an open converts to [`FORMAT_VERSION`]
/// instead of refusing.
pub const OLDEST_CONVERTIBLE: u32 = 3;
/// The first transaction id handed out in a new cluster (0 is invalid,
/// 1 bootstrap and 2 frozen, as in PostgreSQL).
pub const FIRST_NORMAL_XID: u32 = 3;
/// The first object id handed out for user objects (as PostgreSQL's
/// `FirstNormalObjectId`).
pub const FIRST_NORMAL_OID: u32 = 16384;

/// The contents of the control file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlData {
    /// On-disk format version ([`FORMAT_VERSION`]).
    pub format_version: u32,
    /// No transaction id at or above this one has been handed out.
    pub next_xid: u32,
    /// No object id at or above this one has been handed out.
    pub next_oid: u32,
    /// Location of the last checkpoint record (0 before the WAL exists).
    pub checkpoint_lsn: u64,
    /// Redo start point of the last checkpoint (0 before the WAL exists).
    pub redo_lsn: u64,
    /// True when the database was shut down cleanly (everything flushed).
    pub clean_shutdown: bool,
}

impl Default for ControlData {
    fn default() -> ControlData {
        ControlData {
            format_version: FORMAT_VERSION,
            next_xid: FIRST_NORMAL_XID,
            next_oid: FIRST_NORMAL_OID,
            checkpoint_lsn: 0,
            redo_lsn: 0,
            clean_shutdown: true,
        }
    }
}

impl ControlData {
    fn encode(&self) -> [u8; RECORD_LEN] {
        let mut b = [0u8; RECORD_LEN];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&self.format_version.to_le_bytes());
        b[8..12].copy_from_slice(&self.next_xid.to_le_bytes());
        b[12..16].copy_from_slice(&self.next_oid.to_le_bytes());
        b[16..24].copy_from_slice(&self.checkpoint_lsn.to_le_bytes());
        b[24..32].copy_from_slice(&self.redo_lsn.to_le_bytes());
        b[32] = self.clean_shutdown as u8;
        let crc = crc32c::crc32c(&b[0..36]);
        b[36..40].copy_from_slice(&crc.to_le_bytes());
        b
    }

    fn decode(b: &[u8], path: &Path) -> Result<ControlData> {
        let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        if b.len() != RECORD_LEN || u32_at(0) != MAGIC {
            return Err(err!(
                DataCorrupted,
                "control file \"{}\" is not a heapdb control file",
                path.display()
            ));
        }
        if crc32c::crc32c(&b[0..36]) != u32_at(36) {
            return Err(err!(
                DataCorrupted,
                "incorrect checksum in control file \"{}\"",
                path.display()
            ));
        }
        let format_version = u32_at(4);
        if !(OLDEST_CONVERTIBLE..=FORMAT_VERSION).contains(&format_version) {
            return Err(err!(
                ObjectNotInPrerequisiteState,
                "database files are incompatible with server"
            )
            .with_detail(format!(
                "The database cluster was initialized with format version {format_version}, \
                 but the server was compiled with format version {FORMAT_VERSION}."
            )));
        }
        Ok(ControlData {
            format_version,
            next_xid: u32_at(8),
            next_oid: u32_at(12),
            checkpoint_lsn: u64_at(16),
            redo_lsn: u64_at(24),
            clean_shutdown: b[32] != 0,
        })
    }
}

/// The control file of one data directory: its path and last written contents.
#[derive(Debug)]
pub struct ControlFile {
    /// `<data dir>/control`.
    path: PathBuf,
    /// What the file on disk holds now.
    data: ControlData,
}

impl ControlFile {
    /// Reads `<data_dir>/control`, which must exist.
    pub fn open(data_dir: &Path) -> Result<ControlFile> {
        let path = data_dir.join("control");
        match fs::read(&path) {
            Ok(bytes) => {
                let data = ControlData::decode(&bytes, &path)?;
                Ok(ControlFile { path, data })
            }
            Err(e) => Err(crate::error::Error::new(
                crate::storage::reserve::code_of(&e),
                format!("could not open file \"{}\": {e}", path.display()),
            )
            .with_detail(
                "The data directory is not empty, so it is not initialised again; \
                     its control file is needed to open it.",
            )),
        }
    }

    /// Reads `<data_dir>/control`, or creates it with default contents when
    /// the directory has none. Returns the file and whether it was created.
    pub fn open_or_create(data_dir: &Path) -> Result<(ControlFile, bool)> {
        let path = data_dir.join("control");
        match fs::read(&path) {
            Ok(bytes) => {
                let data = ControlData::decode(&bytes, &path)?;
                Ok((ControlFile { path, data }, false))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut f = ControlFile {
                    path,
                    data: ControlData::default(),
                };
                f.write(ControlData::default())?;
                Ok((f, true))
            }
            Err(e) => Err(err!(
                IoError,
                "could not open file \"{}\": {e}",
                path.display()
            )),
        }
    }

    /// The contents as last written.
    pub fn data(&self) -> ControlData {
        self.data
    }

    /// Replaces the contents on disk atomically (temp file, fsync, rename,
    /// directory fsync).
    pub fn write(&mut self, data: ControlData) -> Result<()> {
        let tmp = self.path.with_extension("tmp");
        let io = |what: &str, p: &Path, e: std::io::Error| {
            crate::error::Error::new(
                crate::storage::reserve::code_of(&e),
                format!(
                    "could not {what} file \"{}\": {}",
                    p.display(),
                    crate::storage::reserve::os_text(&e)
                ),
            )
        };
        {
            // Not truncated: a `control.tmp` left by the last write has its
            // space allocated already (module doc).
            let f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&tmp)
                .map_err(|e| io("create", &tmp, e))?;
            f.write_all_at(&data.encode(), 0)
                .and_then(|_| f.set_len(RECORD_LEN as u64))
                .map_err(|e| io("write", &tmp, e))?;
            f.sync_all().map_err(|e| io("fsync", &tmp, e))?;
        }
        fs::rename(&tmp, &self.path).map_err(|e| io("rename", &tmp, e))?;
        if let Some(dir) = self.path.parent() {
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| io("fsync", dir, e))?;
        }
        self.data = data;
        // Space for the next update; failing here only means the next
        // update asks for the space itself.
        let _ = fs::write(&tmp, [0u8; RECORD_LEN]);
        Ok(())
    }

    /// Applies `change` to a copy of the contents and writes the result.
    pub fn update(&mut self, change: impl FnOnce(&mut ControlData)) -> Result<()> {
        let mut d = self.data;
        change(&mut d);
        self.write(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_update_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let (mut c, created) = ControlFile::open_or_create(dir.path()).unwrap();
        assert!(created);
        assert_eq!(c.data(), ControlData::default());
        c.update(|d| {
            d.next_xid = 1000;
            d.next_oid = 20000;
            d.checkpoint_lsn = 1 << 40;
            d.redo_lsn = 77;
            d.clean_shutdown = false;
        })
        .unwrap();
        drop(c);
        let (c, created) = ControlFile::open_or_create(dir.path()).unwrap();
        assert!(!created);
        let d = c.data();
        assert_eq!(
            (d.next_xid, d.next_oid, d.checkpoint_lsn, d.redo_lsn),
            (1000, 20000, 1 << 40, 77)
        );
        assert!(!d.clean_shutdown);
        // The next update's file, allocated ahead.
        assert_eq!(
            fs::read(dir.path().join("control.tmp")).unwrap(),
            vec![0u8; RECORD_LEN]
        );
    }

    #[test]
    fn corruption_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        ControlFile::open_or_create(dir.path()).unwrap();
        let path = dir.path().join("control");
        let mut b = fs::read(&path).unwrap();
        b[9] ^= 1;
        fs::write(&path, &b).unwrap();
        let e = ControlFile::open_or_create(dir.path()).unwrap_err();
        assert_eq!(e.code, crate::SqlState::DataCorrupted);
        assert_eq!(
            e.message,
            format!("incorrect checksum in control file \"{}\"", path.display())
        );
        fs::write(&path, b"short").unwrap();
        assert!(ControlFile::open_or_create(dir.path()).is_err());
        assert!(ControlFile::open(dir.path()).is_err());
        fs::remove_file(&path).unwrap();
        let e = ControlFile::open(dir.path()).unwrap_err();
        assert!(
            e.message.starts_with("could not open file"),
            "{}",
            e.message
        );
    }
}
