//! Progress reports of long statements, for a client's progress bar.
//!
//! A session may hold one [`ProgressHook`] (see
//! `Session::set_progress`); the work that knows its total calls it now and
//! then: sequential scans (pages of the relation, every
//! [`SCAN_REPORT_PAGES`] pages and at the end), COPY (bytes of the input
//! file, or rows written), VACUUM (pages). Reports are cheap when no hook is
//! set (one `Option` test per page), and the hook must be cheap too: it runs
//! on the statement's thread.

use std::sync::Arc;

use crate::access::heap::scan::ParallelBlocks;

/// What a progress report counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressUnit {
    /// Bytes of input read (COPY FROM a file).
    Bytes,
    /// Rows loaded or written (COPY).
    Rows,
    /// Pages of a relation (sequential scan, VACUUM).
    Pages,
}

/// One progress report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Work done so far.
    pub done: u64,
    /// The total work, when known.
    pub total: Option<u64>,
    /// What `done` and `total` count.
    pub unit: ProgressUnit,
}

/// The callback receiving a session's progress reports.
pub type ProgressHook = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Pages between two reports of a sequential scan.
pub const SCAN_REPORT_PAGES: u64 = 64;

/// Counts the pages of one scan and reports every [`SCAN_REPORT_PAGES`].
/// In a parallel scan the participants share the blocks, and the report is
/// the blocks handed out to all of them.
#[derive(Default)]
pub struct PageCounter<'a> {
    /// The hook, if any.
    hook: Option<ProgressHook>,
    /// Pages visited by this participant.
    done: u64,
    /// Pages in the scan.
    total: u64,
    /// The blocks shared with other participants, in a parallel scan.
    shared: Option<&'a ParallelBlocks>,
}

impl<'a> PageCounter<'a> {
    /// A counter for a scan of `total` pages reporting to `hook`.
    pub fn new(
        hook: Option<&ProgressHook>,
        total: u64,
        shared: Option<&'a ParallelBlocks>,
    ) -> PageCounter<'a> {
        PageCounter {
            hook: hook.cloned(),
            done: 0,
            total,
            shared,
        }
    }

    /// One more page visited.
    #[inline]
    pub fn page(&mut self) {
        if let Some(h) = &self.hook {
            self.done += 1;
            if self.done % SCAN_REPORT_PAGES == 0 || self.done == self.total {
                let (done, total) = match self.shared {
                    Some(b) => (u64::from(b.handed_out()), u64::from(b.nblocks())),
                    None => (self.done, self.total),
                };
                h(&Progress {
                    done,
                    total: Some(total),
                    unit: ProgressUnit::Pages,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn reports_every_n_pages_and_at_the_end() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let hook: ProgressHook = Arc::new(move |p: &Progress| s.lock().unwrap().push(p.done));
        let total = SCAN_REPORT_PAGES * 2 + 5;
        let mut c = PageCounter::new(Some(&hook), total, None);
        for _ in 0..total {
            c.page();
        }
        assert_eq!(
            *seen.lock().unwrap(),
            vec![SCAN_REPORT_PAGES, SCAN_REPORT_PAGES * 2, total]
        );
        let mut quiet = PageCounter::new(None, 10, None);
        quiet.page();
    }
}
