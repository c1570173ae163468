//! The heap access method: tuple format ([`tuple`](mod@tuple), and
//! attribute-by-attribute forming in [`build`]), page-change records and
//! the one function that applies them ([`record`], encoded by [`codec`]), MVCC visibility with hint
//! bits ([`visibility`]), operations on one locked page ([`pageops`]), and
//! the access methods on the buffer pool: insert, delete, update
//! ([`heapam`], with the update's HOT decision and opportunistic pruning
//! in [`update`]), HOT chains as index readers follow them ([`hot`]),
//! multi-insert with COPY FREEZE's frozen pages
//! ([`multi_insert`]), scans, fetch, count and inspection ([`scan`]),
//! pruning of dead tuples and HOT chains ([`prune`]), VACUUM's page pass
//! and tail truncation ([`vacuum`]), and the in-memory free-space map
//! ([`fsm`]).

pub mod build;
pub mod codec;
pub mod format3;
pub mod fsm;
pub mod heapam;
pub mod hot;
pub mod multi_insert;
pub mod pageops;
pub mod prune;
pub mod prune_opt;
pub mod record;
pub mod scan;
pub mod tuple;
pub mod update;
pub mod vacuum;
pub mod visibility;

pub use heapam::{HeapRelation, Tid};
pub use hot::HotRule;
pub use multi_insert::{set_image_blocks, PageImages, Precompressed};
pub use prune::{PruneScratch, PruneStats};
pub use scan::HeapScan;
pub use update::NewVersion;
pub use vacuum::{PageVacuumStats, VacuumCutoffs};
pub use visibility::TmResult;
