//! `\timing` output, as psql's `PrintTiming` (src/bin/psql/common.c).
//!
//! Under a second: `Time: 12.345 ms`. From a second on, the milliseconds
//! are followed by a clock reading: `(00:01.235)` (minutes:seconds), then
//! `(01:02:03.456)` past an hour and `(2 d 03:04:05.678)` past a day.
//!
//! `\timing verbose` is heapdb's own: the same line followed by the
//! statement's parse / plan / execute split (milliseconds, 3 decimals) and
//! its shared-buffer counters, e.g.
//! `Time: 12.345 ms (parse 0.010, plan 0.031, execute 12.304; shared hit=40 read=3 dirtied=0 written=0)`.
//! Past a second the clock reading stays where psql puts it and the split
//! follows in its own parentheses.

/// `\timing`'s state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimingMode {
    /// No timing lines (the default).
    #[default]
    Off,
    /// `Time: ...` after every statement.
    On,
    /// `Time: ...` with the parse/plan/execute split and buffer counters.
    Verbose,
}

/// Where a statement's time went and which buffers it touched, for
/// `\timing verbose`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TimingDetail {
    /// Milliseconds spent parsing.
    pub parse_ms: f64,
    /// Milliseconds spent binding and planning.
    pub plan_ms: f64,
    /// Milliseconds spent executing (including printing rows).
    pub execute_ms: f64,
    /// Shared buffers found in the pool.
    pub shared_hit: u64,
    /// Shared buffers read from disk.
    pub shared_read: u64,
    /// Shared buffers dirtied.
    pub shared_dirtied: u64,
    /// Shared buffers written out.
    pub shared_written: u64,
}

/// The `Time: ...` line for `elapsed_ms` milliseconds, without the newline.
pub fn format_timing(elapsed_ms: f64) -> String {
    if elapsed_ms < 1000.0 {
        return format!("Time: {elapsed_ms:.3} ms");
    }
    let mut seconds = elapsed_ms / 1000.0;
    let mut minutes = (seconds / 60.0).floor();
    seconds -= 60.0 * minutes;
    if minutes < 60.0 {
        return format!(
            "Time: {elapsed_ms:.3} ms ({:02}:{seconds:06.3})",
            minutes as i64
        );
    }
    let mut hours = (minutes / 60.0).floor();
    minutes -= 60.0 * hours;
    if hours < 24.0 {
        return format!(
            "Time: {elapsed_ms:.3} ms ({:02}:{:02}:{seconds:06.3})",
            hours as i64, minutes as i64
        );
    }
    let days = (hours / 24.0).floor();
    hours -= 24.0 * days;
    format!(
        "Time: {elapsed_ms:.3} ms ({days:.0} d {:02}:{:02}:{seconds:06.3})",
        hours as i64, minutes as i64
    )
}

/// The `\timing verbose` line, without the newline.
pub fn format_timing_verbose(elapsed_ms: f64, d: &TimingDetail) -> String {
    format!(
        "{} (parse {:.3}, plan {:.3}, execute {:.3}; shared hit={} read={} dirtied={} written={})",
        format_timing(elapsed_ms),
        d.parse_ms,
        d.plan_ms,
        d.execute_ms,
        d.shared_hit,
        d.shared_read,
        d.shared_dirtied,
        d.shared_written
    )
}

/// The line `\timing` mode `mode` prints after a statement, if any.
pub fn timing_line(mode: TimingMode, elapsed_ms: f64, detail: &TimingDetail) -> Option<String> {
    match mode {
        TimingMode::Off => None,
        TimingMode::On => Some(format_timing(elapsed_ms)),
        TimingMode::Verbose => Some(format_timing_verbose(elapsed_ms, detail)),
    }
}

#[cfg(test)]
mod tests {
    //! Expected strings are psql 15's `PrintTiming` output for the same
    //! elapsed times (`Time: 1201.519 ms (00:01.202)` is what psql printed
    //! for `select pg_sleep(1.2)`).
    use super::*;

    #[test]
    fn under_a_second_is_milliseconds_only() {
        assert_eq!(format_timing(12.345), "Time: 12.345 ms");
        assert_eq!(format_timing(0.4), "Time: 0.400 ms");
        assert_eq!(format_timing(999.9994), "Time: 999.999 ms");
    }

    #[test]
    fn past_a_second_adds_minutes_and_seconds() {
        assert_eq!(format_timing(1201.519), "Time: 1201.519 ms (00:01.202)");
        assert_eq!(format_timing(1234.567), "Time: 1234.567 ms (00:01.235)");
        assert_eq!(format_timing(61_000.0), "Time: 61000.000 ms (01:01.000)");
    }

    #[test]
    fn past_an_hour_and_a_day() {
        assert_eq!(
            format_timing(3_723_456.0),
            "Time: 3723456.000 ms (01:02:03.456)"
        );
        assert_eq!(
            format_timing(183_845_678.0),
            "Time: 183845678.000 ms (2 d 03:04:05.678)"
        );
    }

    #[test]
    fn verbose_adds_the_split_and_buffer_counters() {
        let d = TimingDetail {
            parse_ms: 0.010,
            plan_ms: 0.031,
            execute_ms: 12.304,
            shared_hit: 40,
            shared_read: 3,
            shared_dirtied: 0,
            shared_written: 0,
        };
        assert_eq!(
            format_timing_verbose(12.345, &d),
            "Time: 12.345 ms (parse 0.010, plan 0.031, execute 12.304; shared hit=40 read=3 dirtied=0 written=0)"
        );
        assert_eq!(timing_line(TimingMode::Off, 1.0, &d), None);
        assert_eq!(
            timing_line(TimingMode::On, 1.0, &d).as_deref(),
            Some("Time: 1.000 ms")
        );
    }
}
