//! The progress bar of long statements (indicatif), on standard error.
//!
//! Shown only when standard error is a terminal, for a statement that has
//! run for [`DELAY`] (or `HEAPDB_PROGRESS_DELAY_MS`) and whose work reports a
//! total: COPY FROM a file (bytes of its size), sequential scans and VACUUM
//! (pages of the relation). COPY TO, which does not know its total, shows a
//! counter of rows. The engine reports through the session's progress hook
//! ([`Session::set_progress`](crate::session::Session::set_progress)); a
//! [`Tracker`] turns reports into the bar. Piped runs install no hook and
//! pay nothing.
//!
//! Locking: the tracker's state sits behind one mutex, taken by the hook (on
//! the statement's thread) and by [`Tracker::begin`] / [`Tracker::end`]
//! around each statement; never held while calling out.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::session::{Progress, ProgressHook, ProgressUnit};

/// How long a statement runs before its bar appears.
pub const DELAY: Duration = Duration::from_secs(2);

/// The bar state of the running statement.
struct State {
    /// When the statement started (`None` between statements).
    started: Option<Instant>,
    /// The total to use for reports without one (a `\copy` file's size).
    total_override: Option<u64>,
    /// The bar, once shown.
    bar: Option<ProgressBar>,
    /// The delay before showing a bar.
    delay: Duration,
}

/// Shared between the shell and the session's hook.
#[derive(Clone)]
pub struct Tracker {
    state: Arc<Mutex<State>>,
}

impl Tracker {
    /// A tracker when standard error is a terminal, else `None`.
    pub fn for_terminal() -> Option<Tracker> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let delay = std::env::var("HEAPDB_PROGRESS_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(DELAY, Duration::from_millis);
        Some(Tracker {
            state: Arc::new(Mutex::new(State {
                started: None,
                total_override: None,
                bar: None,
                delay,
            })),
        })
    }

    /// The hook to give the session.
    pub fn hook(&self) -> ProgressHook {
        let t = self.clone();
        Arc::new(move |p: &Progress| t.report(p))
    }

    /// A statement starts; `total` is its total when the shell knows it
    /// (a `\copy` file's size).
    pub fn begin(&self, total: Option<u64>) {
        let mut s = self.lock();
        s.started = Some(Instant::now());
        s.total_override = total;
    }

    /// The statement ended: the bar, if shown, is cleared.
    pub fn end(&self) {
        let bar = {
            let mut s = self.lock();
            s.started = None;
            s.total_override = None;
            s.bar.take()
        };
        if let Some(b) = bar {
            b.finish_and_clear();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn report(&self, p: &Progress) {
        let mut s = self.lock();
        let Some(started) = s.started else { return };
        let total = p.total.or(s.total_override);
        if s.bar.is_none() {
            // A counter only for rows; anything else needs its total.
            if started.elapsed() < s.delay || (total.is_none() && p.unit != ProgressUnit::Rows) {
                return;
            }
            // The bar tells that earlier statements finished.
            crate::shell::external_sync::before_output();
            s.bar = Some(new_bar(total, p.unit));
        }
        let bar = s.bar.as_ref().expect("made above");
        if let Some(t) = total {
            if bar.length() != Some(t) {
                bar.set_length(t);
            }
        }
        bar.set_position(p.done);
    }
}

/// A bar (or a row counter without a total) drawn on standard error.
fn new_bar(total: Option<u64>, unit: ProgressUnit) -> ProgressBar {
    let (bar, template) = match (total, unit) {
        (Some(t), ProgressUnit::Bytes) => (
            ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr()),
            "[{elapsed_precise}] [{wide_bar}] {bytes}/{total_bytes} ({eta})",
        ),
        (Some(t), ProgressUnit::Pages) => (
            ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr()),
            "[{elapsed_precise}] [{wide_bar}] {pos}/{len} pages ({eta})",
        ),
        (Some(t), ProgressUnit::Rows) => (
            ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr()),
            "[{elapsed_precise}] [{wide_bar}] {pos}/{len} rows ({eta})",
        ),
        (None, _) => (
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
            "[{elapsed_precise}] {spinner} {pos} rows",
        ),
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker(delay: Duration) -> Tracker {
        Tracker {
            state: Arc::new(Mutex::new(State {
                started: None,
                total_override: None,
                bar: None,
                delay,
            })),
        }
    }

    fn pages(done: u64, total: Option<u64>) -> Progress {
        Progress {
            done,
            total,
            unit: ProgressUnit::Pages,
        }
    }

    #[test]
    fn no_bar_before_the_delay_or_between_statements() {
        let t = tracker(Duration::from_secs(3600));
        t.report(&pages(1, Some(10)));
        t.begin(None);
        t.report(&pages(1, Some(10)));
        assert!(t.lock().bar.is_none());
        t.end();
    }

    #[test]
    fn a_bar_needs_a_total_except_for_rows() {
        let t = tracker(Duration::ZERO);
        t.begin(None);
        t.report(&pages(5, None));
        assert!(t.lock().bar.is_none());
        t.report(&pages(5, Some(10)));
        assert_eq!(t.lock().bar.as_ref().map(|b| b.position()), Some(5));
        t.end();
        assert!(t.lock().bar.is_none());
        // A `\copy` file's size stands in for the total.
        t.begin(Some(100));
        t.report(&Progress {
            done: 40,
            total: None,
            unit: ProgressUnit::Bytes,
        });
        assert_eq!(t.lock().bar.as_ref().and_then(|b| b.length()), Some(100));
        t.end();
        t.begin(None);
        t.report(&Progress {
            done: 7,
            total: None,
            unit: ProgressUnit::Rows,
        });
        assert!(t.lock().bar.is_some());
        t.end();
    }
}
