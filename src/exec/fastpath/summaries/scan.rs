//! One scan's use of page summaries ([`SummaryScan`]): per block, before
//! the page is read, whether its summary (or its window's or span's
//! merge) answers it, skips it, or leaves it to be read, by the rules of
//! the parent module; and the summaries it writes for pages it read that
//! turned out all-visible.

use super::*;

/// Pages answered from summaries, skipped, and read, for EXPLAIN ANALYZE.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SummaryCounts {
    /// Taken whole from their summaries.
    pub answered: u64,
    /// Left out: their summaries exclude every row.
    pub skipped: u64,
    /// Read (no valid summary, or a boundary page).
    pub scanned: u64,
    /// Windows of pages (one summary page's worth) answered or skipped
    /// whole from their merged summary, without a look at each page.
    pub windows: u64,
}

/// One scan's use of summaries: the plan, the window of slots read last,
/// and what the answered pages contribute. A page it reads for want of a
/// valid summary that turns out all-visible gets its summary written
/// ([`SummaryScan::fill`]), so the next scan takes it whole: "set by VACUUM
/// or by the first full scan that finds the page all-visible".
pub struct SummaryScan<'r> {
    rel: &'r HeapRelation,
    plan: SummaryPlan,
    nblocks: BlockNumber,
    /// First block of the window in `slots` (`u32::MAX`: none yet).
    window: BlockNumber,
    /// The blocks' own summaries of the current window, once read.
    slots: Vec<Option<Slot>>,
    /// Whether `slots` holds the current window's summaries.
    have_slots: bool,
    /// The plan's decision for each of `slots` (`None`: no summary), made
    /// once per window by [`SummaryScan::note_window`] and read by each
    /// block's visit (the plan does not change during a scan).
    decisions: Vec<Option<PageUse>>,
    /// The answered pages' aggregates.
    pub part: PagePartial,
    /// The answered pages' live tuples not yet taken by a rows-only scan.
    pub rows: u64,
    /// Pages answered, skipped, scanned.
    pub counts: SummaryCounts,
    /// The block last visited, when it has no valid summary: the scan
    /// reads it, and [`SummaryScan::fill`] writes its summary if the page
    /// is all-visible.
    unsummarised: Option<BlockNumber>,
    /// All-visible pages without a summary read so far.
    missing: u64,
    /// A grouped plan's answered pages, per group key, in the order met
    /// (consecutive pages of one key share an entry); taken by the
    /// aggregate as it goes ([`SummaryScan::take_groups`]).
    pub groups: Vec<(i64, PagePartial)>,
    /// Whether a grouped plan may still answer pages: the aggregate turns
    /// it off when it starts spilling, as from then on a new key's group
    /// may already be in a partition file.
    grouping: bool,
    /// Windows in a row whose blocks all had valid summaries, too few of
    /// which decided their pages to pay for reading them
    /// ([`SummaryScan::note_window`]): past [`BARREN_WINDOWS`] the data
    /// does not line up with the plan (a shuffled table), and the scan
    /// stops reading blocks' own summaries (it still takes whole windows).
    barren: u32,
}

/// Windows in a row read block by block for (next to) nothing before a
/// scan stops reading blocks' own summaries: decoding a window's 32 slots
/// costs about a third of reading its pages, so a scan of data the
/// summaries cannot decide would otherwise pay that on every page.
const BARREN_WINDOWS: u32 = 8;

/// A scan fills in one in this many of the summaries it finds missing: a
/// page's summary costs about as much as reading it again, and a WAL
/// record, so filling every page would make that scan twice as slow;
/// one in 32 keeps it within a few percent, and each later scan fills in
/// another share of the pages still missing.
const FILL_EVERY: u64 = 32;

impl<'r> SummaryScan<'r> {
    /// A scan of `rel`'s first `nblocks` blocks with `plan`, shared between
    /// the heap scan's block filter and the operator.
    pub fn shared(
        rel: &'r HeapRelation,
        plan: SummaryPlan,
        nblocks: BlockNumber,
    ) -> Rc<RefCell<SummaryScan<'r>>> {
        Rc::new(RefCell::new(SummaryScan {
            rel,
            part: plan.empty(),
            plan,
            nblocks,
            window: BlockNumber::MAX,
            slots: Vec::new(),
            have_slots: false,
            decisions: Vec::new(),
            rows: 0,
            counts: SummaryCounts::default(),
            unsummarised: None,
            missing: 0,
            groups: Vec::new(),
            grouping: true,
            barren: 0,
        }))
    }

    /// The compiled plan.
    pub fn plan(&self) -> &SummaryPlan {
        &self.plan
    }

    /// Decides block `block` before it is read, the scan holding the
    /// blocks up to `limit`: returns how many blocks from `block` are
    /// answered or skipped (the scan leaves them unread), 0 to read it.
    ///
    /// At the start of a window (the blocks of one summary page) the
    /// window's merged summary ([`HeapRelation::window_summary`], cached
    /// per relation) decides all its blocks at once when it can: a
    /// decision on the merge holds for every block (`Slot::merged`). Else
    /// each block is decided from its own summary.
    pub fn visit(&mut self, block: BlockNumber, limit: BlockNumber) -> Result<BlockNumber> {
        if block % BLOCKS_PER_SPAN == 0 {
            let n = self.visit_span(block, limit)?;
            if n > 0 {
                return Ok(n);
            }
        }
        let start = block - block % sumfork::BLOCKS_PER_PAGE;
        if self.window != start {
            let end = self
                .nblocks
                .min(start + sumfork::BLOCKS_PER_PAGE)
                .max(block + 1);
            self.window = start;
            let merged = self.rel.window_summary(start, end, &mut self.slots)?;
            self.have_slots = !self.slots.is_empty();
            if let (Some(m), true) = (merged, block == start && limit >= end) {
                let n = end - start;
                match self.plan.decide(&m) {
                    PageUse::Answer if self.answerable() => {
                        self.answer(&m);
                        self.counts.answered += u64::from(n);
                        self.counts.windows += 1;
                        // A window decided whole is no barren one.
                        self.barren = 0;
                        return Ok(n);
                    }
                    PageUse::Skip => {
                        self.counts.skipped += u64::from(n);
                        self.counts.windows += 1;
                        self.barren = 0;
                        return Ok(n);
                    }
                    PageUse::Answer | PageUse::Scan => {}
                }
            }
            // Decided block by block: each block's decision, once.
            if self.have_slots {
                self.note_window();
            }
        }
        if !self.have_slots {
            if self.barren >= BARREN_WINDOWS {
                self.unsummarised = None;
                self.counts.scanned += 1;
                return Ok(0);
            }
            let end = self
                .nblocks
                .min(start + sumfork::BLOCKS_PER_PAGE)
                .max(block + 1);
            self.rel.read_summaries(start, end, &mut self.slots)?;
            self.have_slots = true;
            self.note_window();
        }
        // By reference: a slot is a few hundred bytes.
        let slot = self
            .slots
            .get((block - start) as usize)
            .and_then(Option::as_ref);
        let decision = self
            .decisions
            .get((block - start) as usize)
            .copied()
            .flatten()
            .unwrap_or(PageUse::Scan);
        self.unsummarised = slot.is_none().then_some(block);
        match (decision, slot) {
            (PageUse::Answer, Some(s)) if self.answerable() => {
                let s = *s;
                self.answer(&s);
                self.counts.answered += 1;
                Ok(1)
            }
            (PageUse::Skip, _) => {
                self.counts.skipped += 1;
                Ok(1)
            }
            _ => {
                self.counts.scanned += 1;
                Ok(0)
            }
        }
    }
}

impl SummaryScan<'_> {
    /// At the first block of a span of [`BLOCKS_PER_SPAN`] blocks that
    /// the table and the scan's range hold whole: the span's merged
    /// summary ([`HeapRelation::span_summary`], cached per relation)
    /// decides all its blocks at once when it can (a decision on the
    /// merge holds for each window, and so for each block). Returns the
    /// blocks answered or skipped, 0 when the span is left to its windows.
    fn visit_span(&mut self, block: BlockNumber, limit: BlockNumber) -> Result<BlockNumber> {
        let end = block.saturating_add(BLOCKS_PER_SPAN);
        if end > limit || end > self.nblocks {
            return Ok(0);
        }
        let Some(m) = self.rel.span_summary(block, end)? else {
            return Ok(0);
        };
        let windows = u64::from(BLOCKS_PER_SPAN / sumfork::BLOCKS_PER_PAGE);
        match self.plan.decide(&m) {
            PageUse::Answer if self.answerable() => {
                self.answer(&m);
                self.counts.answered += u64::from(BLOCKS_PER_SPAN);
            }
            PageUse::Skip => self.counts.skipped += u64::from(BLOCKS_PER_SPAN),
            PageUse::Answer | PageUse::Scan => return Ok(0),
        }
        self.counts.windows += windows;
        self.barren = 0;
        Ok(BLOCKS_PER_SPAN)
    }

    /// Counts the window whose blocks' summaries were just read towards
    /// [`BARREN_WINDOWS`] when fewer than a third of its blocks are decided
    /// (answered or skipped): decoding the window costs about a third of
    /// reading its pages from the heap, and more than that of taking them
    /// from the packed column cache, so a smaller share saves less than it
    /// costs (shuffled accounts at 20M rows under a 2.5% range of `aid`:
    /// a fifth of the pages skipped, and the summaries cost as much as
    /// folding every page). A block without one (to be filled in) resets
    /// the count.
    fn note_window(&mut self) {
        self.decisions.clear();
        let plan = &self.plan;
        self.decisions.extend(
            self.slots
                .iter()
                .map(|s| s.as_ref().map(|s| plan.decide(s))),
        );
        let mut decided = 0;
        for d in &self.decisions {
            match d {
                None => {
                    self.barren = 0;
                    return;
                }
                Some(d) => decided += usize::from(*d != PageUse::Scan),
            }
        }
        let barren = decided * 3 < self.slots.len();
        self.barren = if barren { self.barren + 1 } else { 0 };
    }

    /// Whether an answered page may be taken: always, but for a grouped
    /// plan once the aggregate has stopped taking groups.
    fn answerable(&self) -> bool {
        self.grouping || !self.plan.grouped()
    }

    /// Folds an answered page (or window) in: into the one partial, or
    /// into its key's partial for a grouped plan.
    fn answer(&mut self, slot: &Slot) {
        self.rows += u64::from(slot.live);
        let Some(key) = self.plan.key_of(slot) else {
            self.plan.fold(slot, &mut self.part);
            return;
        };
        if self.groups.last().map(|g| g.0) != Some(key) {
            self.groups.push((key, self.plan.empty()));
        }
        if let Some((_, part)) = self.groups.last_mut() {
            self.plan.fold(slot, part);
        }
    }

    /// The answered pages' partials per group key since the last call.
    pub fn take_groups(&mut self) -> Vec<(i64, PagePartial)> {
        std::mem::take(&mut self.groups)
    }

    /// Stops answering pages of a grouped plan (they are read instead).
    pub fn stop_grouping(&mut self) {
        self.grouping = false;
    }

    /// Whether block `block`, about to be answered without reading its
    /// page (the packed column cache), should be read instead because
    /// [`SummaryScan::fill`] would write its summary now; when not, the
    /// block counts as a page left without one, as if read.
    pub fn fill_wanted(&mut self, block: BlockNumber) -> bool {
        if self.unsummarised != Some(block) {
            return false;
        }
        if self.missing % FILL_EVERY == 0 {
            return true;
        }
        self.unsummarised = None;
        self.missing += 1;
        false
    }

    /// Called with each ALL_VISIBLE page the scan reads, under its lock:
    /// writes the summary of the block last visited when it had none and
    /// its all-visible bit is set (`HeapRelation::fill_summary`), for the
    /// first such page and one in [`FILL_EVERY`] after it.
    pub fn fill(&mut self, block: BlockNumber, page: &[u8]) -> Result<()> {
        if self.unsummarised.take() == Some(block) {
            self.missing += 1;
            if self.missing % FILL_EVERY == 1 {
                self.rel.fill_summary(block, page)?;
            }
        }
        Ok(())
    }
}
