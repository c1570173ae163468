//! The file a COPY TO writes (`COPY ... TO 'file'`, the shell's `\copy ...
//! to 'file'`): an existing regular file is written over in place and cut
//! to the output's length when the COPY ends, instead of being truncated
//! when it is opened.
//!
//! Why: the usual way, `open(O_TRUNC)` and then writing, makes the kernel
//! free every page-cache page and disk block of the old contents and then
//! allocate new ones for the same bytes. Measured here (ext4, 490 MB, the
//! size of the 5M-row accounts export; `tools/write_floor.rs`, medians,
//! 256 KiB – 4 MiB writes): the truncating open takes 108–130 ms (most of
//! it waiting for the journal), writing into the emptied file 290–320 ms,
//! into a new file 110–170 ms, over the old file's pages in place 56–88 ms
//! (~55 ms of system CPU against ~145–165 ms). Re-exporting to the same path
//! is the common case (a nightly dump, a benchmark's rounds), so heapdb
//! writes over what is there.
//!
//! What a reader of the file sees is the same as with PostgreSQL's
//! truncating open once the COPY has ended, successfully or not: the file
//! holds exactly the bytes written (on an error, [`OutFile`] is dropped and
//! cuts the file to what was written so far, as PostgreSQL's partial
//! output). The difference is while it runs, and after a crash of the
//! process in the middle: then the new bytes are followed by the old
//! file's tail, where PostgreSQL would leave only the new bytes. Anything
//! but a regular file (a FIFO, `/dev/null`, a terminal) is written as it
//! is, with no cut.

use std::fs::{File, OpenOptions};
use std::io::{self, IoSlice, Write};
use std::path::Path;

/// A COPY TO file being written (see the module doc).
pub struct OutFile {
    file: File,
    /// Bytes written so far (from the start of the file).
    written: u64,
    /// The file is regular and was not empty: cut it at the end.
    cut: bool,
    /// `finish` ran (so dropping does not cut again).
    done: bool,
}

impl OutFile {
    /// Opens `path` for writing, creating it (mode 0666 less the umask, as
    /// `File::create`) if it does not exist. The errors are the open's.
    pub fn create(path: impl AsRef<Path>) -> io::Result<OutFile> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let meta = file.metadata()?;
        Ok(OutFile {
            file,
            written: 0,
            cut: meta.is_file() && meta.len() > 0,
            done: false,
        })
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Ends the COPY's writing: the file is cut to the bytes written.
    pub fn finish(mut self) -> io::Result<()> {
        self.done = true;
        if self.cut {
            self.file.set_len(self.written)?;
        }
        Ok(())
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let n = self.file.write_vectored(bufs)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for OutFile {
    /// A COPY that failed leaves only what it wrote, as a truncating open
    /// would have.
    fn drop(&mut self) {
        if self.cut && !self.done {
            let _ = self.file.set_len(self.written);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_file_holds_exactly_the_new_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, vec![b'x'; 100_000]).unwrap();
        let mut f = OutFile::create(&path).unwrap();
        f.write_all(b"new\n").unwrap();
        f.write_all(b"rows\n").unwrap();
        assert_eq!(f.written(), 9);
        f.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new\nrows\n");

        // Longer than the old contents: extended, nothing cut.
        let mut f = OutFile::create(&path).unwrap();
        f.write_all(&[b'y'; 20]).unwrap();
        f.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), [b'y'; 20]);

        // A new file.
        let fresh = dir.path().join("fresh");
        let mut f = OutFile::create(&fresh).unwrap();
        f.write_all(b"a\n").unwrap();
        f.finish().unwrap();
        assert_eq!(std::fs::read(&fresh).unwrap(), b"a\n");
    }

    #[test]
    fn a_copy_that_fails_leaves_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, vec![b'x'; 10_000]).unwrap();
        {
            let mut f = OutFile::create(&path).unwrap();
            f.write_all(b"part").unwrap();
            // Dropped without finish: the error path.
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"part");
        {
            let _f = OutFile::create(&path).unwrap();
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"");
    }

    #[test]
    fn a_device_is_written_without_a_cut() {
        let mut f = OutFile::create("/dev/null").unwrap();
        f.write_all(b"gone").unwrap();
        f.finish().unwrap();
    }
}
