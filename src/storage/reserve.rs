//! Reserving disk space ahead of writes, so that a full disk fails the
//! statement that needs the space and never a later write of data that was
//! already promised (a dirty page, the commit log, the write-ahead log).
//!
//! [`allocate`] is PostgreSQL's `mdzeroextend`: `posix_fallocate`-style
//! allocation where the file system supports it (`fallocate(2)`, which
//! tmpfs, ext4 and xfs do), else writing zeros. After it returns `Ok`, a
//! write into the range needs no new blocks. `keep_size` allocates without
//! changing the file's length (`FALLOC_FL_KEEP_SIZE`), for space reserved
//! beyond the end of a relation whose length is its logical size.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use crate::error::SqlState;

/// An OS error's text without Rust's ` (os error N)` suffix, as
/// PostgreSQL's `%m` prints it (`No space left on device`).
pub fn os_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The SQLSTATE of an I/O error (53100 for a full disk).
pub fn code_of(e: &std::io::Error) -> SqlState {
    if e.raw_os_error() == Some(libc::ENOSPC) {
        return SqlState::DiskFull;
    }
    crate::error::Error::from(std::io::Error::new(e.kind(), "")).code
}

/// Allocates `len` bytes of `f` from `off` (see the module doc); the file
/// grows to at least `off + len`.
pub fn allocate(f: &File, off: u64, len: u64) -> std::io::Result<()> {
    allocate_mode(f, off, len, false)
}

/// Allocates `len` bytes from `off` without changing the file's length.
pub fn allocate_keep_size(f: &File, off: u64, len: u64) -> std::io::Result<()> {
    allocate_mode(f, off, len, true)
}

fn allocate_mode(f: &File, off: u64, len: u64, keep_size: bool) -> std::io::Result<()> {
    if len == 0 {
        return Ok(());
    }
    let mode = if keep_size {
        libc::FALLOC_FL_KEEP_SIZE
    } else {
        0
    };
    loop {
        // SAFETY: fallocate on a descriptor we own; no memory is passed.
        let rc = unsafe { libc::fallocate(f.as_raw_fd(), mode, off as i64, len as i64) };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => break,
            _ => return Err(e),
        }
    }
    if keep_size {
        // Without fallocate nothing can be reserved past the end; the
        // write itself will ask for the space.
        return Ok(());
    }
    // Zeros over whatever of the range lies past the end (data before the
    // end is left alone: it is allocated unless the file is sparse there).
    let end = f.metadata()?.len();
    let mut at = off.max(end);
    let zeros = vec![0u8; 1 << 16];
    while at < off + len {
        let n = ((off + len - at) as usize).min(zeros.len());
        f.write_all_at(&zeros[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn allocates_blocks_with_or_without_the_length() {
        let dir = tempfile::tempdir().unwrap();
        let f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.path().join("f"))
            .unwrap();
        allocate(&f, 0, 1 << 20).unwrap();
        let m = f.metadata().unwrap();
        assert_eq!(m.len(), 1 << 20);
        assert!(m.blocks() * 512 >= 1 << 20, "{} blocks", m.blocks());
        allocate_keep_size(&f, 1 << 20, 1 << 20).unwrap();
        let m = f.metadata().unwrap();
        assert_eq!(m.len(), 1 << 20);
        assert!(m.blocks() * 512 >= 2 << 20, "{} blocks", m.blocks());
    }
}
