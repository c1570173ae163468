//! Transactions: 32-bit transaction ids, the commit log and MVCC snapshots.
