//! Storage: 8 KiB slotted pages, relation segment files and the shared
//! buffer pool. Nothing here knows about tuples' contents or transactions.

pub mod control;
pub mod page;

/// Size of a page (block) in bytes.
pub const BLCKSZ: usize = 8192;
