//! Transactions: 32-bit transaction ids, the commit log and MVCC snapshots.
//!
//! - [`clog`]: the commit log in `xact/`, two bits of status per xid.
//! - [`snapshot`]: which transactions a statement may see.
//! - [`manager`]: hands out xids (persisted in ranges in the control file),
//!   commits and aborts, builds snapshots, knows the oldest running xmin.
//! - [`query_snapshots`]: the snapshot each query of a VOLATILE function
//!   reads with under READ COMMITTED.
//! - [`lock`]: table and transaction locks with deadlock detection.
//!
//! Transaction ids are plain `u32`s compared numerically: 0 is invalid,
//! 1 bootstrap, 2 frozen, 3 the first normal id. Wraparound (and so freezing
//! for it) is out of scope: a cluster has four billion ids.
//! A command id numbers the statements within one transaction; a statement
//! sees the rows its own transaction wrote in earlier commands, never its own.

pub mod clog;
pub mod lock;
pub mod manager;
pub mod query_snapshots;
pub mod snapshot;

pub use clog::{Clog, XidStatus};
pub use lock::{LockManager, LockMode, LockTag};
pub use manager::TxnManager;
pub use query_snapshots::QuerySnapshots;
pub use snapshot::Snapshot;

/// A transaction id.
pub type Xid = u32;
/// A command id within a transaction.
pub type CommandId = u32;

/// The invalid transaction id (no transaction).
pub const INVALID_XID: Xid = 0;
/// The bootstrap transaction id: always committed.
pub const BOOTSTRAP_XID: Xid = 1;
/// The frozen transaction id: committed and older than every snapshot.
pub const FROZEN_XID: Xid = 2;
/// The first transaction id handed to a user transaction.
pub const FIRST_NORMAL_XID: Xid = crate::storage::control::FIRST_NORMAL_XID;
