//! B-tree indexes (PostgreSQL's nbtree): Lehman–Yao trees with right-links
//! and high keys over the shared buffer pool, the heap TID as the last key
//! column, suffix-truncated pivots, splits finished by the next inserter
//! after a crash, a sorted bulk build, scans in both directions, page-change
//! records for the log, inspection and a structural checker. The design is
//! described in the README beside this file.
//!
//! Module map: [`keys`] (descriptor and order-preserving key encoding),
//! [`btpage`] (page format, meta page), [`wal`] (records, their encoding and
//! the one `apply`), [`tree`] (create, descend, insert, split), [`split`]
//! (choosing split points), [`scan`] (cursors), [`build`] (bulk build),
//! [`buildout`] (its page output), [`sortbuild`] (its external sort), [`batch`] (sorted batch inserts),
//! [`inspect`] (pageinspect rows), [`check`] (amcheck), [`vacuum`] (bulk delete), [`pagedel`] (page deletion and recycling),
//! [`rowsize`] (PostgreSQL's index row size limit).

pub mod batch;
pub mod btpage;
pub mod build;
mod buildout;
pub mod check;
pub mod inspect;
pub mod keys;
pub mod pagedel;
pub mod rowsize;
pub mod scan;
pub mod sortbuild;
pub mod split;
pub mod tree;
pub mod vacuum;
pub mod wal;

pub use keys::{IndexDesc, KeyColumn, Tid};
pub use scan::{BtScan, Counted, Direction, ScanItem, ScanPos};
pub use tree::BTree;
pub use wal::{BtLog, BtRecord};
