//! Access methods: the heap (tuple format, insert/delete/update/scan,
//! visibility with hint bits), the visibility map fork, and the inspection
//! API over both.

pub mod heap;
pub mod inspect;
pub mod nbtree;
pub mod packed_cache;
pub mod sumbuild;
pub mod sumfork;
pub mod summary;
pub mod summary_cache;
pub mod vm;
