//! Access methods: the heap (tuple format, insert/delete/update/scan,
//! visibility with hint bits) and the visibility map fork.

pub mod heap;
pub mod vm;
