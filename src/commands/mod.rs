//! Utility commands that work on whole relations rather than on rows:
//! VACUUM ([`vacuum`]), ANALYZE ([`analyze`], with the statistics it
//! computes in [`stats`]) and the build of a new index ([`index_build`]).
//!
//! These modules do the work over a [`HeapRelation`](crate::access::heap::HeapRelation)
//! and return a report; the session (`src/session/maintenance.rs`) resolves
//! names, runs them inside its transaction handling, stores results in the
//! catalog and turns the reports into VERBOSE `INFO` messages. Nothing here
//! prints.

pub mod analyze;
pub mod context;
pub mod index_build;
pub mod indexcmds;
pub mod inspect_btree;
pub mod readahead;
pub mod stats;
pub mod tablecmds;
pub mod vacuum;
