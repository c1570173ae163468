//! The write-ahead log: nothing committed is ever lost, nothing uncommitted
//! ever appears, whatever instant the process dies at.
//!
//! # Pieces
//!
//! - [`record`]: the records (page change, full-page image, commit, abort,
//!   checkpoint, relation create/truncate) and their framing: a header with
//!   length, CRC-32C, the previous record's position and the xid.
//! - [`segment`]: the stream cut into 16 MiB files under `wal/`; writing,
//!   syncing, reading back, recycling.
//! - [`writer`]: [`Wal`], the insert buffer, group-commit flushing, the
//!   background flusher for `synchronous_commit = off`, counters.
//! - [`checkpoint`]: [`Checkpointer`], checkpoints and their background
//!   thread.
//! - [`recovery`]: redo from the last checkpoint at open.
//!
//! # The rules
//!
//! 1. *One change, one record, one apply.* Every heap and visibility-map
//!    page change is a `HeapRecord` applied by `record::apply` at run time
//!    (`HeapRelation::log_apply`, which logs it and sets the page LSN) and
//!    again in redo.
//! 2. *Write-ahead.* The buffer pool calls [`Wal`] (its `WalFlushHook`)
//!    with a page's LSN before writing the page.
//! 3. *Commit.* A transaction that logged anything (or changed the catalog
//!    or drops files) inserts a commit record, waits for its flush when
//!    `synchronous_commit` is on or it drops files (one fdatasync serves every waiter it
//!    covers), then sets the commit log. With it off, the commit log is set
//!    at once and the background flusher writes the record within 200 ms;
//!    hint bits saying "committed" wait for that flush (`Clog::commit_hint_ok`).
//!    A flush that fails stops the instance (`writer`, PostgreSQL's PANIC):
//!    the commit is not set in the commit log, nothing more is written and
//!    no statement runs until a reopen's recovery.
//! 4. *Torn pages.* The first change to a page after a checkpoint's redo
//!    point logs the whole page. Hint-only changes (hint bits, and
//!    VACUUM's `PD_ALL_VISIBLE`, logged as a record but never as an image
//!    and without moving the page's LSN) need no image: the page checksum
//!    leaves those bits out, so any torn mix of such a write is a valid
//!    page (`storage::checksum`).
//! 5. *Recovery* replays from the redo point in the control file to the end
//!    of valid log, idempotently, marks transactions without an outcome
//!    aborted (those with records replayed and those the checkpoint record
//!    lists as having logged before its redo point), and checkpoints.
//! 6. *Files* (PostgreSQL's `storage.c`). Creating a relation's files logs
//!    and flushes a create record first (under the creating transaction,
//!    logged again after each checkpoint's redo point while that
//!    transaction runs, so recovery removes the files of one that never
//!    ends); VACUUM's truncation logs and flushes a
//!    truncate record before cutting the file. Removing files is a
//!    transaction's *pending delete*: DROP TABLE and TRUNCATE (which gives
//!    the table a new file) list the old file for commit, a table created
//!    in the transaction lists its file for abort. The commit or abort
//!    record names the files, and the unlink comes after the record: a
//!    commit that removes files waits for its flush whatever
//!    `synchronous_commit` says, so an old file is never gone while a
//!    crash could still undo its drop. Redo of the record unlinks them.
//!    Redo of the dropped files' earlier changes skips them through the
//!    invalid-page table ([`recovery`]): a page is rebuilt from nothing
//!    only where a record says so.
//!
//! LSNs are byte positions in the stream (`u64`); a page's LSN is the end of
//! the record that last changed it, so "flushed up to the page LSN" means
//! the whole record is durable.

mod btree;
pub mod checkpoint;
pub mod record;
pub mod recovery;
pub mod segment;
pub mod writer;
pub mod xordelta;

pub use checkpoint::Checkpointer;
pub use record::{lsn_text, Lsn, WalRecord};
pub use writer::{Wal, WalStats};

#[cfg(test)]
mod tests;
