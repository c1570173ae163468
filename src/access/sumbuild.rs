//! Building a heap page's summary slot inside VACUUM's pruning walk: the
//! values of the summarised columns are added tuple by tuple as pruning
//! decides each tuple's status, so a page VACUUM makes all-visible is not
//! walked (and its tuples not read) a second time for its summary.
//!
//! # What it owns
//!
//! [`Layout`], the summarised columns' fixed offsets compiled once per
//! [`SummarySpec`], and [`SlotBuilder`], the per-page accumulator that
//! `access::heap::prune` feeds and VACUUM (`access::heap::vacuum`) turns
//! into the slot its `VmSet` carries.
//!
//! # Invariants
//!
//! - The slot a builder gives is byte for byte the one
//!   [`super::sumfork::slot_for_page`] makes from the same page (the
//!   reference; `tests::built_slots_equal_the_page_summaries` checks it on
//!   seeded random pages, and debug builds check every VACUUM'd page): the
//!   same tuples in the same order (offset order, floats' equal extremes
//!   keeping the first met), integers exact.
//! - A builder only ever adds tuples that pruning found live to everyone.
//!   The caller uses its slot only when the page ends all-visible and the
//!   builder counted exactly the page's live count: then every tuple left
//!   on the page was added, and none that left it (pruning removes only
//!   dead tuples, and moves, freezes or hints never change a value).
//! - Anything unusual (a tuple too short for its columns, a varlena before
//!   a summarised column, more columns than the stack holds) makes the
//!   builder give up: the caller then summarises the page itself, as
//!   before. Never a wrong slot, never an error.
//!
//! The per-tuple loop is specialised to the columns' kinds: when every
//! summarised column is a 4-byte integer (`int4`, `date`) the values are
//! read at their offsets with the column count a constant, as the scan
//! fast paths read them; other fixed-width mixes take a loop over the
//! kinds; a tuple with nulls (or fewer stored columns) is deformed.

use std::sync::Arc;

use super::heap::tuple;
use super::sumfork::{Slot, SummarySpec, MAX_COLUMNS};
use super::summary::{le, ColumnSummary, FastPlan, SummaryKind};

/// Columns a tuple with nulls is deformed up to, on the stack.
const DEFORM_MAX: usize = 32;

/// The summarised columns of a spec at fixed offsets from the tuples' data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// (column number, kind, offset from the data); `n` used.
    cols: [(usize, SummaryKind, usize); MAX_COLUMNS],
    n: usize,
    /// Columns a tuple must store to be read at the offsets.
    upto: usize,
    /// Data bytes a tuple must have: the end of the last summarised value.
    end: usize,
    /// Every summarised column is a 4-byte integer (`int4`, `date`).
    int4: bool,
}

impl Layout {
    /// The layout of `kinds` over `desc`; `None` when no column is
    /// summarised, a varlena precedes a summarised one, or there are more
    /// than the builder handles.
    pub(crate) fn of(desc: &tuple::TupleDesc, kinds: &[SummaryKind]) -> Option<Layout> {
        let plan = FastPlan::of(desc, kinds)?;
        if plan.cols.len() > MAX_COLUMNS || plan.upto > DEFORM_MAX {
            return None;
        }
        let mut cols = [(0, SummaryKind::None, 0); MAX_COLUMNS];
        cols[..plan.cols.len()].copy_from_slice(&plan.cols);
        Some(Layout {
            cols,
            n: plan.cols.len(),
            upto: plan.upto,
            end: plan.end,
            int4: plan
                .cols
                .iter()
                .all(|c| matches!(c.1, SummaryKind::Int4 | SummaryKind::Date)),
        })
    }
}

/// What one page's added tuples give so far.
#[derive(Debug, Clone, Copy)]
struct Acc {
    /// Tuples added.
    live: u16,
    /// Tuples read at the layout's offsets (no nulls).
    fast: u64,
    /// Their integers' extremes and sums, per summarised column (4-byte
    /// ones sum in `isum`: a page's 291 values cannot overflow it).
    min: [i64; MAX_COLUMNS],
    max: [i64; MAX_COLUMNS],
    isum: [i64; MAX_COLUMNS],
    sum: [i128; MAX_COLUMNS],
    /// Floats (in tuple order) and the deformed tuples' values.
    cols: [ColumnSummary; MAX_COLUMNS],
    /// Gave up: no slot for this page.
    failed: bool,
}

impl Acc {
    fn new(l: &Layout) -> Acc {
        let mut cols = [ColumnSummary::None; MAX_COLUMNS];
        for (c, &(_, k, _)) in cols.iter_mut().zip(&l.cols[..l.n]) {
            *c = ColumnSummary::empty(k);
        }
        Acc {
            live: 0,
            fast: 0,
            min: [i64::MAX; MAX_COLUMNS],
            max: [i64::MIN; MAX_COLUMNS],
            isum: [0; MAX_COLUMNS],
            sum: [0; MAX_COLUMNS],
            cols,
            failed: false,
        }
    }

    /// The 4-byte integers of `d` at the layout's first `N` offsets.
    #[inline(always)]
    fn int4<const N: usize>(&mut self, l: &Layout, d: &[u8]) {
        for j in 0..N {
            let at = l.cols[j].2;
            let Some(b) = d.get(at..at + 4) else {
                self.failed = true;
                return;
            };
            let v = i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            self.min[j] = self.min[j].min(v);
            self.max[j] = self.max[j].max(v);
            self.isum[j] += v;
        }
    }

    /// Any fixed-width mix of `d`'s values at the layout's offsets.
    fn mixed(&mut self, l: &Layout, d: &[u8]) {
        for (j, &(_, k, at)) in l.cols[..l.n].iter().enumerate() {
            let Some(v) = d.get(at..) else {
                self.failed = true;
                return;
            };
            if self.add_value(j, k, v).is_none() {
                self.failed = true;
                return;
            }
        }
    }

    /// Adds value `v` of kind `k` to column `j`: integers of tuples read
    /// at offsets to the extremes and sums, floats in order.
    fn add_value(&mut self, j: usize, k: SummaryKind, v: &[u8]) -> Option<()> {
        let x = match k {
            SummaryKind::Int2 => i64::from(i16::from_le_bytes(le(v).ok()?)),
            SummaryKind::Int4 | SummaryKind::Date => i64::from(i32::from_le_bytes(le(v).ok()?)),
            SummaryKind::Int8 => i64::from_le_bytes(le(v).ok()?),
            SummaryKind::Float4 => {
                self.cols[j].add_float(f64::from(f32::from_le_bytes(le(v).ok()?)));
                return Some(());
            }
            SummaryKind::Float8 => {
                self.cols[j].add_float(f64::from_le_bytes(le(v).ok()?));
                return Some(());
            }
            SummaryKind::None => return Some(()),
        };
        self.min[j] = self.min[j].min(x);
        self.max[j] = self.max[j].max(x);
        self.sum[j] += i128::from(x);
        Some(())
    }

    /// A tuple with nulls or fewer stored columns: deformed, its non-null
    /// values added to `cols`.
    fn deformed(&mut self, l: &Layout, desc: &tuple::TupleDesc, t: &[u8]) {
        let mut values: [Option<&[u8]>; DEFORM_MAX] = [None; DEFORM_MAX];
        if tuple::deform(t, desc, l.upto, &mut values[..l.upto]).is_err() {
            self.failed = true;
            return;
        }
        for (j, &(i, k, _)) in l.cols[..l.n].iter().enumerate() {
            let Some(v) = values[i] else { continue };
            let c = &mut self.cols[j];
            let ok = match k {
                SummaryKind::Int2 => le(v).map(|b| c.add_int(i64::from(i16::from_le_bytes(b)))),
                SummaryKind::Int4 | SummaryKind::Date => {
                    le(v).map(|b| c.add_int(i64::from(i32::from_le_bytes(b))))
                }
                SummaryKind::Int8 => le(v).map(|b| c.add_int(i64::from_le_bytes(b))),
                SummaryKind::Float4 => le(v).map(|b| c.add_float(f64::from(f32::from_le_bytes(b)))),
                SummaryKind::Float8 => le(v).map(|b| c.add_float(f64::from_le_bytes(b))),
                SummaryKind::None => Ok(()),
            };
            if ok.is_err() {
                self.failed = true;
                return;
            }
        }
    }
}

/// One page's summary slot, built from the tuples pruning finds live (see
/// the module doc). Reused from page to page: [`SlotBuilder::start`] before
/// each page's walk, [`SlotBuilder::add`] per live tuple, then
/// [`SlotBuilder::finish`].
#[derive(Debug, Default)]
pub struct SlotBuilder {
    /// The spec the page is summarised under.
    spec: Option<Arc<SummarySpec>>,
    /// Whether tuples are being added (a spec with a layout, started and
    /// not stopped).
    active: bool,
    /// The spec's layout, copied at the start (one load per tuple less).
    layout: Option<Layout>,
    acc: Option<Acc>,
}

impl SlotBuilder {
    /// Starts a page under `spec` (nothing is built without one, or when
    /// its columns have no fixed layout).
    pub fn start(&mut self, spec: Option<Arc<SummarySpec>>) {
        self.layout = spec.as_ref().and_then(|s| s.layout);
        self.acc = self.layout.as_ref().map(Acc::new);
        self.active = self.acc.is_some();
        self.spec = spec;
    }

    /// Stops building this page: it will not be all-visible.
    #[inline]
    pub fn stop(&mut self) {
        self.active = false;
        self.acc = None;
    }

    /// Whether tuples are being added.
    #[inline]
    pub fn building(&self) -> bool {
        self.active
    }

    /// Adds tuple `t` (whole, header included), live to everyone, in
    /// offset order.
    #[inline]
    pub fn add(&mut self, t: &[u8]) {
        if !self.active {
            return;
        }
        let (Some(acc), Some(l), Some(spec)) = (&mut self.acc, &self.layout, &self.spec) else {
            return;
        };
        // At most MaxHeapTuplesPerPage: no wrap.
        acc.live = acc.live.wrapping_add(1);
        let data = (tuple::infomask(t) & tuple::HEAP_HASNULL == 0 && tuple::natts(t) >= l.upto)
            .then(|| {
                let h = tuple::hoff(t);
                t.get(h..h + l.end)
            })
            .flatten();
        let Some(d) = data else {
            acc.deformed(l, &spec.desc, t);
            return;
        };
        acc.fast += 1;
        if l.int4 {
            match l.n {
                1 => acc.int4::<1>(l, d),
                2 => acc.int4::<2>(l, d),
                3 => acc.int4::<3>(l, d),
                4 => acc.int4::<4>(l, d),
                5 => acc.int4::<5>(l, d),
                _ => acc.int4::<6>(l, d),
            }
        } else {
            acc.mixed(l, d);
        }
    }

    /// The page's slot, when the builder added exactly `count` tuples and
    /// did not give up; `None` otherwise (the caller then summarises the
    /// page itself). Ends the page.
    pub fn finish(&mut self, count: u16) -> Option<Vec<u8>> {
        self.active = false;
        let mut acc = self.acc.take()?;
        let spec = self.spec.as_ref()?;
        let l = spec.layout.as_ref()?;
        if acc.failed || acc.live != count {
            return None;
        }
        let mut listed = [(0usize, SummaryKind::None, ColumnSummary::None); MAX_COLUMNS];
        for (j, &(i, k, _)) in l.cols[..l.n].iter().enumerate() {
            if acc.fast > 0 {
                if let ColumnSummary::Int {
                    count,
                    min,
                    max,
                    sum,
                } = &mut acc.cols[j]
                {
                    if *count == 0 {
                        (*min, *max) = (acc.min[j], acc.max[j]);
                    } else {
                        *min = (*min).min(acc.min[j]);
                        *max = (*max).max(acc.max[j]);
                    }
                    *count += acc.fast;
                    *sum += acc.sum[j] + i128::from(acc.isum[j]);
                }
            }
            listed[j] = (i, k, acc.cols[j]);
        }
        Some(Slot::encode_listed(
            acc.live,
            spec.desc.len(),
            &listed[..l.n],
        ))
    }
}

/// The slot of all-visible page `p` with `count` live tuples under
/// `spec`: built by a [`SlotBuilder`] over its NORMAL tuples when the
/// spec's columns have a fixed layout, else (or when the builder gives up)
/// [`super::sumfork::slot_for_page`]'s.
pub fn slot_of_page(spec: &Arc<SummarySpec>, p: &[u8], count: u16) -> Vec<u8> {
    let mut b = SlotBuilder::default();
    b.start(Some(spec.clone()));
    if b.building() {
        for off in 1..=crate::storage::page::max_offset(p) {
            if let Some(t) =
                crate::storage::page::get_item(p, off).filter(|t| t.len() >= tuple::HEADER_SIZE)
            {
                b.add(t);
            }
        }
        if let Some(s) = b.finish(count) {
            return s;
        }
    }
    super::sumfork::slot_for_page(Some(spec), p, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::heap::tuple::desc_of_types;
    use crate::access::sumfork::slot_for_page;
    use crate::storage::page;
    use crate::types::DataType;

    /// A page holding `rows` (each value's bytes, or NULL) of a table of
    /// `types`, as many as fit.
    fn page_of(types: &[DataType], rows: &[Vec<Option<Vec<u8>>>]) -> Vec<u8> {
        let desc = desc_of_types(types).unwrap();
        let mut p = vec![0u8; crate::storage::BLCKSZ];
        page::init(&mut p, 0);
        let mut t = Vec::new();
        for r in rows {
            let values: Vec<Option<&[u8]>> = r.iter().map(|v| v.as_deref()).collect();
            tuple::form_tuple(&desc, &values, &mut t).unwrap();
            if page::add_item(&mut p, &t, None).is_none() {
                break;
            }
        }
        p
    }

    fn build(spec: &Arc<SummarySpec>, p: &[u8]) -> Option<Vec<u8>> {
        let mut b = SlotBuilder::default();
        b.start(Some(spec.clone()));
        let mut n = 0u16;
        for off in 1..=page::max_offset(p) {
            if let Some(t) = page::get_item(p, off).filter(|t| t.len() >= tuple::HEADER_SIZE) {
                b.add(t);
                n += 1;
            }
        }
        b.finish(n)
    }

    /// Seeded random pages of several column mixes (4-byte integers only,
    /// mixed widths and floats, a text column after them, nulls, tuples
    /// stored before a column was added): the built slot is the page's
    /// summary slot, byte for byte.
    #[test]
    fn built_slots_equal_the_page_summaries() {
        use DataType::*;
        let mixes: [&[DataType]; 5] = [
            &[Int4, Int4, Int4, Text],
            &[Int4, Date, Int4],
            &[Int2, Int8, Float8, Float4, Int4, Text],
            &[Float8, Int8, Date, Int4, Int2, Int4, Int8, Int4],
            &[Int8],
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut built = 0;
        for round in 0..300 {
            let types = mixes[round % mixes.len()];
            let nulls = round % 3 == 0;
            let nrows = (next() % 120) as usize;
            let rows: Vec<Vec<Option<Vec<u8>>>> = (0..nrows)
                .map(|_| {
                    types
                        .iter()
                        .map(|t| {
                            if nulls && next() % 7 == 0 {
                                return None;
                            }
                            let x = next();
                            let small = (x % 41) as i64 - 20;
                            Some(match t {
                                Int2 => (small as i16).to_le_bytes().to_vec(),
                                Int4 => (if x % 13 == 0 { i32::MIN } else { x as i32 })
                                    .to_le_bytes()
                                    .to_vec(),
                                Int8 => (if x % 11 == 0 { i64::MAX } else { x as i64 })
                                    .to_le_bytes()
                                    .to_vec(),
                                Date => (small as i32).to_le_bytes().to_vec(),
                                Float4 => (if x % 9 == 0 { -0.0 } else { small as f32 })
                                    .to_le_bytes()
                                    .to_vec(),
                                Float8 => (match x % 10 {
                                    0 => f64::NAN,
                                    1 => -0.0,
                                    2 => 0.0,
                                    _ => small as f64 / 3.0,
                                })
                                .to_le_bytes()
                                .to_vec(),
                                _ => vec![b'x'; (x % 30) as usize],
                            })
                        })
                        .collect()
                })
                .collect();
            let p = page_of(types, &rows);
            let spec = Arc::new(SummarySpec::of_types(types).unwrap());
            let live = (1..=page::max_offset(&p))
                .filter(|&o| page::get_item(&p, o).is_some())
                .count() as u16;
            let want = slot_for_page(Some(&spec), &p, live);
            match build(&spec, &p) {
                Some(s) => {
                    built += 1;
                    assert_eq!(s, want, "round {round} ({types:?})");
                }
                None => assert!(spec.layout.is_none(), "round {round}"),
            }
            // A builder that counted other than the page's count gives none.
            let mut b = SlotBuilder::default();
            b.start(Some(spec.clone()));
            assert_eq!(b.finish(live + 1), None);
        }
        assert!(built > 200, "the builder built {built} slots");
        // Stopped (or never started): nothing.
        let spec = Arc::new(SummarySpec::of_types(&[Int4]).unwrap());
        let mut b = SlotBuilder::default();
        b.start(Some(spec));
        b.stop();
        assert!(!b.building());
        assert_eq!(b.finish(0), None);
        assert_eq!(SlotBuilder::default().finish(0), None);
    }
}
