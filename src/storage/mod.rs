//! Storage: 8 KiB pages, relation segment files and the shared buffer pool.
//! Nothing here knows about tuples' contents or transactions.
//!
//! The layers of this module, bottom to top:
//!
//! - [`smgr`]: a relation fork's bytes on disk, in 1 GiB segment files
//!   (`base/<n>`, `base/<n>.1`, ...; the visibility map fork in `base/<n>_vm`),
//!   read and written a block at a time with `pread`/`pwrite`, plus extend,
//!   truncate, unlink, fsync and the OS-cache hints (prefetch / evict).
//! - [`checksum`]: the 16-bit page checksum written just before every write
//!   and verified just after every read (all-zero "new" pages excepted).
//! - [`bufmgr`]: the buffer pool: fixed frames (`frames.rs`: one mapping,
//!   huge pages per 2 MiB region as regions come into use, the next regions
//!   faulted in ahead of use by `prefault.rs`), buffer descriptors, the
//!   partitioned mapping table, RAII pins and content locks, clock-sweep
//!   replacement (`clock.rs`), access strategies ([`ring`]) and counters
//!   ([`stats`]); [`recent`]: per-block hints of the buffer that last held
//!   a page, which sequential scans pin without the mapping table, and
//!   whose frame they prefetch ([`ahead`]) while reading the page before.
//!
//! Beside them, owned by the heap side: [`page`] (the slotted page layout)
//! and [`control`] (the control file); [`dirlock`] keeps a data directory
//! to one open database.
//!
//! The shared vocabulary lives here: [`BLCKSZ`], [`RelFileNode`],
//! [`ForkNumber`], [`BlockNumber`]. See `README.md` in this directory for the
//! design notes of the buffer pool.

pub mod buffer;
mod bufio;
pub mod bufmgr;
pub mod checksum;
mod clock;
pub mod control;
mod crc_fold;
mod crc_page;
mod desc;
pub mod dirlock;
mod frames;
mod mapping;
pub mod page;
mod prefault;
pub mod prefetch;
pub mod recent;
pub mod reserve;
pub mod ring;
pub mod smgr;
pub mod stats;

use std::fmt;

pub use bufio::READ_RUN;
pub use bufmgr::{
    BufferInfo, BufferPool, BufferPoolConfig, BufferReadGuard, BufferTag, BufferWriteGuard,
    PinnedBuffer, ReadMode, WalFlushHook,
};
pub use recent::RecentBuffers;
pub use ring::{Ring, RingSizes, StrategyKind};
pub use stats::BufferUsage;

/// The size of a page (and of a buffer frame) in bytes.
pub const BLCKSZ: usize = 8192;

/// A block (page) number within one fork of a relation.
pub type BlockNumber = u32;

/// The largest block number a fork may hold plus one: PostgreSQL's
/// `MaxBlockNumber + 1` (`u32::MAX` itself is reserved as "invalid").
pub const MAX_BLOCKS: u32 = u32::MAX - 1;

/// Identifies a relation's files on disk: relation `n` lives in `base/<n>`
/// (main fork) and `base/<n>_vm` (visibility-map fork).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelFileNode(pub u32);

impl fmt::Display for RelFileNode {
    /// The relation's path relative to the data directory, as PostgreSQL
    /// names relations in its messages: `base/16384`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "base/{}", self.0)
    }
}

/// One of a relation's forks, each stored in its own set of segment files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ForkNumber {
    /// The relation's data pages: `base/<n>`.
    Main = 0,
    /// The visibility map: `base/<n>_vm`.
    VisibilityMap = 1,
    /// Page summaries beside the visibility map: `base/<n>_sum`
    /// (`access::sumfork`).
    Summary = 2,
}

impl ForkNumber {
    /// All forks, in file-name order.
    pub const ALL: [ForkNumber; 3] = [
        ForkNumber::Main,
        ForkNumber::VisibilityMap,
        ForkNumber::Summary,
    ];

    /// The suffix this fork adds to the relation's file name (`""`, `"_vm"`).
    pub fn suffix(self) -> &'static str {
        match self {
            ForkNumber::Main => "",
            ForkNumber::VisibilityMap => "_vm",
            ForkNumber::Summary => "_sum",
        }
    }
}

/// The path of a relation fork relative to the data directory, as used in
/// messages: `base/16384` or `base/16384_vm`.
pub fn relpath(rel: RelFileNode, fork: ForkNumber) -> String {
    format!("base/{}{}", rel.0, fork.suffix())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relation_paths_name_the_fork() {
        assert_eq!(relpath(RelFileNode(16384), ForkNumber::Main), "base/16384");
        assert_eq!(
            relpath(RelFileNode(7), ForkNumber::VisibilityMap),
            "base/7_vm"
        );
        assert_eq!(RelFileNode(42).to_string(), "base/42");
    }
}
