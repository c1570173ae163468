//! The heap access method: tuple format ([`tuple`]), page-change records and
//! the one function that applies them ([`record`]), MVCC visibility with hint
//! bits ([`visibility`]).

pub mod record;
pub mod tuple;
pub mod visibility;
