//! What a running COPY takes from the client API that starts it
//! ([`CopyContext`]): the statement's transaction and snapshot, its cancel
//! flag and where progress reports go. The table (looked up and locked in
//! the catalog), its relation and the column list come with the direction's
//! own description ([`load::LoadTarget`](super::load::LoadTarget),
//! [`unload::TableUnload`](super::unload::TableUnload)).
//!
//! COPY sits below the session: it never looks at a session's state, prints,
//! or assumes one client, so any front end (the embedded API, the shell, a
//! wire-protocol server) runs it by filling in these values.
//!
//! Also here: opening the server-side files a COPY names, with
//! PostgreSQL's messages.

use std::fs::File;
use std::io::BufReader;
use std::sync::atomic::AtomicBool;

use crate::err;
use crate::error::{Error, Result};
use crate::txn::{CommandId, Snapshot, Xid};

/// How far a running COPY has got, handed to the progress callback after
/// every batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CopyProgress {
    /// Input bytes read so far (COPY FROM).
    pub bytes: u64,
    /// The input file's size, when known (COPY FROM a file).
    pub total_bytes: Option<u64>,
    /// Rows loaded or written so far.
    pub rows: u64,
}

/// The progress callback type.
pub type ProgressFn<'a> = &'a mut dyn FnMut(&CopyProgress);

/// The statement a COPY runs in, as its caller hands it down.
pub struct CopyContext<'a> {
    /// The transaction whose rows COPY FROM writes.
    pub xid: Xid,
    /// The statement's command id within it.
    pub cid: CommandId,
    /// The transaction's start time (`now`-relative input such as
    /// `'today'`).
    pub now: i64,
    /// The statement's snapshot: the rows COPY TO of a table writes.
    pub snapshot: &'a Snapshot,
    /// Set from another thread to cancel the statement; checked between
    /// batches.
    pub cancel: &'a AtomicBool,
    /// Called after every batch with how far the COPY has got.
    pub progress: Option<ProgressFn<'a>>,
    /// The session's ring sizes: COPY TO of a table reads it through a
    /// bulk-read ring of its `bulkread_ring_size` when it needs one.
    pub ring_sizes: crate::storage::RingSizes,
}

impl CopyContext<'_> {
    /// Reports `p` to the progress callback, if there is one.
    pub(crate) fn report(&mut self, p: CopyProgress) {
        if let Some(f) = self.progress.as_deref_mut() {
            f(&p);
        }
    }
}

/// Output is handed to the writer in pieces of about this size.
pub(crate) const OUT_CHUNK: usize = 256 << 10;

/// An OS error's text without Rust's ` (os error N)` suffix, as `%m` prints.
pub fn os_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// PostgreSQL's error for a COPY file that cannot be opened (`how`:
/// "reading" or "writing").
pub fn file_error(e: std::io::Error, path: &str, how: &str) -> Error {
    let code = Error::from(std::io::Error::from(e.kind())).code;
    Error::new(
        code,
        format!("could not open file \"{path}\" for {how}: {}", os_text(&e)),
    )
}

/// PostgreSQL's error for a failed write of COPY's output.
pub fn write_error(e: &std::io::Error) -> Error {
    err!(IoError, "could not write to COPY file: {}", os_text(e))
}

/// Opens `path` for COPY FROM: the reader and the file's size.
pub(crate) fn open_input(path: &str) -> Result<(BufReader<File>, u64)> {
    let f = File::open(path).map_err(|e| file_error(e, path, "reading"))?;
    let meta = f.metadata()?;
    if meta.is_dir() {
        return Err(err!(WrongObjectType, "\"{path}\" is a directory"));
    }
    Ok((BufReader::with_capacity(1 << 20, f), meta.len()))
}
