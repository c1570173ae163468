//! The executor: plans run as trees of operators exchanging batches.
//!
//! - [`vector`]: column vectors and batches, the unit of data.
//! - [`expr`]: compiled expressions evaluated over whole batches, with the
//!   typed loops of [`kernels`] for the hot operators.
//! - [`functions`]: scalar functions by name and argument types.
//!
//! Shape (see DESIGN.md's Executor section): operators pass batches of up to
//! [`vector::BATCH_SIZE`] rows (a scan passes whole pages' worth), never a
//! row per call; expressions are compiled once per statement; the hot loops
//! do no allocation per row.

pub mod expr;
pub mod functions;
pub mod kernels;
pub mod vector;
