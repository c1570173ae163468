//! The executor's specialised fast paths: typed code for the common shapes
//! of scans, aggregations and hash joins, each taken only when its
//! conditions hold and each giving exactly the general path's answer (see
//! `README.md` in this folder for when each applies and the test that
//! checks it against the general path).

pub mod fixed_scan;
pub mod hash_agg;
pub mod join_agg;
pub mod join_tables;
pub mod lookup;
pub mod packed;
pub mod page_agg;
pub mod page_group;
pub mod page_pred;
pub mod summaries;
