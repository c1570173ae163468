//! Storage: 8 KiB slotted pages, relation segment files and the shared
//! buffer pool. Nothing here knows about tuples' contents or transactions.
