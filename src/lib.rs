//! heapdb: an in-process SQL database whose storage and executor follow
//! PostgreSQL's heap design.
//!
//! The layers, top to bottom (each uses only the layers below it; see
//! `README.md` and the design notes in each module):
//!
//! - [`types`]: SQL values, type ids, text input/output, comparison, hashing.
//! - [`txn`]: transaction ids, the commit log, snapshots.
//! - [`access`]: heap tuples, heap access methods, visibility and hint bits,
//!   the visibility map.
//! - [`storage`]: 8 KiB pages, segment files, the buffer pool.
//! - [`commands`]: VACUUM and ANALYZE over whole heaps.
//! - [`wal`]: the write-ahead log, checkpoints and crash recovery.
//! - [`error`]: the one error type, with PostgreSQL SQLSTATE codes.

pub mod access;
pub mod catalog;
pub mod commands;
pub mod copy;
pub mod database;
pub mod error;
pub mod exec;
pub mod nodes;
pub mod plan;
pub mod session;
pub mod settings;
pub mod shell;
pub mod storage;
pub mod txn;
pub mod types;
pub mod vector;
pub mod wal;

pub use database::Database;
pub use error::{Error, Result, SqlState};
pub use session::{QueryResult, Session};
