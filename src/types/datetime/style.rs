//! The output styles (and `DateStyle`'s input field order) of `date`, `timestamp` and `interval` (PostgreSQL's
//! `DateStyle` and `IntervalStyle`), as the session sets them for the
//! statement it runs.
//!
//! PostgreSQL keeps these as per-backend globals read by the output
//! functions; heapdb keeps them per thread: a session sets them
//! ([`set_output_style`]) on the thread that runs a statement and prints
//! its rows, before the statement and again after it (a `SET` changes
//! them). Threads that never set them print ISO dates and `postgres`
//! intervals, the defaults.

use std::cell::Cell;

/// How dates and timestamps are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DateOut {
    /// `1999-01-08 04:05:06`.
    #[default]
    Iso,
    /// `01/08/1999 04:05:06` (day first with DMY).
    Sql,
    /// `Fri Jan 08 04:05:06 1999` (`Fri 08 Jan ...` with DMY); dates
    /// `01-08-1999`.
    Postgres,
    /// `08.01.1999 04:05:06`.
    German,
}

/// How intervals are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IntervalOut {
    /// `1 year 2 mons 3 days 04:05:06`.
    #[default]
    Postgres,
    /// `@ 1 year 2 mons 3 days 4 hours 5 mins 6 secs`.
    Verbose,
    /// `+1-2 +3 +4:05:06`.
    SqlStandard,
    /// `P1Y2M3DT4H5M6S`.
    Iso8601,
}

/// The styles one statement prints with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OutputStyle {
    /// `DateStyle`'s format.
    pub date: DateOut,
    /// `DateStyle`'s order is DMY (day before month where it matters).
    pub day_first: bool,
    /// `DateStyle`'s order is YMD (read by date input only).
    pub year_first: bool,
    /// `IntervalStyle`.
    pub interval: IntervalOut,
}

thread_local! {
    static STYLE: Cell<OutputStyle> = const { Cell::new(OutputStyle {
        date: DateOut::Iso,
        day_first: false,
        year_first: false,
        interval: IntervalOut::Postgres,
    }) };
}

/// Sets the styles this thread prints with.
pub fn set_output_style(style: OutputStyle) {
    STYLE.with(|s| s.set(style));
}

/// The styles this thread prints with.
pub fn output_style() -> OutputStyle {
    STYLE.with(Cell::get)
}
