//! Page summaries: for an all-visible heap page, per summarised column the
//! number of non-null values of its live tuples and their minimum, maximum
//! and (integers only) sum, so that ungrouped aggregates can take a whole
//! page from its summary instead of reading its tuples.
//!
//! # What it owns
//!
//! The summary of one page ([`PageSummary`]): how it is computed from the
//! page's tuples ([`summarize`]), how summaries of pages combine
//! ([`ColumnSummary::merge`]) and their byte encoding ([`PageSummary::encode`],
//! [`PageSummary::decode`]), the form in which they are kept beside the
//! visibility map.
//!
//! # Invariants
//!
//! - A summary describes exactly the tuples of a page whose all-visible bit
//!   is set: on such a page every NORMAL line pointer holds a tuple visible
//!   to every snapshot, so the summary is the page's answer for any
//!   snapshot. It is valid exactly while the bit stays set; whoever clears
//!   the bit drops the summary with it, and whoever sets the bit computes
//!   it from the page under the same lock.
//! - Integer kinds (`int2`, `int4`, `int8`, `date`) keep the exact sum in an
//!   `i128`: a page holds at most 291 tuples, so no page sum can overflow,
//!   and sums of page sums are exact as the executor's are.
//! - Floating-point kinds keep count, min and max only: a sum added page by
//!   page rounds differently from one added tuple by tuple, and answers
//!   from summaries must equal a full scan's to the bit. Minimum and
//!   maximum follow PostgreSQL's order for floats (NaN above everything;
//!   `-0` equals `0`, the value met first kept, as a scan keeps it).
//! - Other types are not summarised ([`SummaryKind::None`]).

use std::cmp::Ordering;

use super::heap::tuple::{self, TupleDesc};
use crate::err;
use crate::error::Result;
use crate::storage::page;

/// How a column is summarised (from its type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryKind {
    /// Not summarised.
    None,
    /// `int2`: 2 bytes, little-endian.
    Int2,
    /// `int4`: 4 bytes, little-endian.
    Int4,
    /// `int8`: 8 bytes, little-endian.
    Int8,
    /// `date`: days as 4 bytes, little-endian (summarised as an integer).
    Date,
    /// `float4`: IEEE single, little-endian.
    Float4,
    /// `float8`: IEEE double, little-endian.
    Float8,
}

impl SummaryKind {
    /// How a column of type `ty` is summarised.
    pub fn of(ty: &crate::types::DataType) -> SummaryKind {
        use crate::types::DataType;
        match ty {
            DataType::Int2 => SummaryKind::Int2,
            DataType::Int4 => SummaryKind::Int4,
            DataType::Int8 => SummaryKind::Int8,
            DataType::Date => SummaryKind::Date,
            DataType::Float4 => SummaryKind::Float4,
            DataType::Float8 => SummaryKind::Float8,
            _ => SummaryKind::None,
        }
    }

    /// Whether the kind keeps a sum (the integer kinds).
    pub fn has_sum(self) -> bool {
        matches!(
            self,
            SummaryKind::Int2 | SummaryKind::Int4 | SummaryKind::Int8 | SummaryKind::Date
        )
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            SummaryKind::None => 0,
            SummaryKind::Int2 => 1,
            SummaryKind::Int4 => 2,
            SummaryKind::Int8 => 3,
            SummaryKind::Date => 4,
            SummaryKind::Float4 => 5,
            SummaryKind::Float8 => 6,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<SummaryKind> {
        Some(match c {
            0 => SummaryKind::None,
            1 => SummaryKind::Int2,
            2 => SummaryKind::Int4,
            3 => SummaryKind::Int8,
            4 => SummaryKind::Date,
            5 => SummaryKind::Float4,
            6 => SummaryKind::Float8,
            _ => return None,
        })
    }
}

/// The summary of one column over some pages' live tuples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColumnSummary {
    /// A column that is not summarised.
    None,
    /// An integer column: `count` non-null values, their min, max and sum
    /// (min and max meaningless while `count` is 0).
    Int {
        /// Non-null values.
        count: u64,
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
        /// Exact sum.
        sum: i128,
    },
    /// A floating-point column: `count` non-null values, their min and max
    /// in PostgreSQL's order (meaningless while `count` is 0).
    Float {
        /// Non-null values.
        count: u64,
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
}

/// PostgreSQL's order for floats: NaN equals NaN and is above everything.
pub fn float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

impl ColumnSummary {
    /// The empty summary of a column of `kind`.
    pub fn empty(kind: SummaryKind) -> ColumnSummary {
        match kind {
            SummaryKind::None => ColumnSummary::None,
            SummaryKind::Float4 | SummaryKind::Float8 => ColumnSummary::Float {
                count: 0,
                min: 0.0,
                max: 0.0,
            },
            _ => ColumnSummary::Int {
                count: 0,
                min: 0,
                max: 0,
                sum: 0,
            },
        }
    }

    /// The number of non-null values (0 for a column not summarised).
    pub fn count(&self) -> u64 {
        match *self {
            ColumnSummary::None => 0,
            ColumnSummary::Int { count, .. } | ColumnSummary::Float { count, .. } => count,
        }
    }

    pub(crate) fn add_int(&mut self, v: i64) {
        if let ColumnSummary::Int {
            count,
            min,
            max,
            sum,
        } = self
        {
            if *count == 0 {
                (*min, *max) = (v, v);
            } else {
                *min = (*min).min(v);
                *max = (*max).max(v);
            }
            *count += 1;
            *sum += i128::from(v);
        }
    }

    pub(crate) fn add_float(&mut self, v: f64) {
        if let ColumnSummary::Float { count, min, max } = self {
            if *count == 0 {
                (*min, *max) = (v, v);
            } else {
                if float_cmp(v, *min) == Ordering::Less {
                    *min = v;
                }
                if float_cmp(v, *max) == Ordering::Greater {
                    *max = v;
                }
            }
            *count += 1;
        }
    }

    /// Adds `other` (the summary of later pages of the same column) to
    /// this one. Equal extremes keep this one's, as a scan keeps the value
    /// it met first. Summaries of different kinds do not combine: the
    /// result is then [`ColumnSummary::None`].
    pub fn merge(&mut self, other: &ColumnSummary) {
        match (&mut *self, other) {
            (_, o) if o.count() == 0 && !matches!(o, ColumnSummary::None) => {}
            (s, o) if s.count() == 0 && std::mem::discriminant(s) == std::mem::discriminant(o) => {
                *s = *o;
            }
            (
                ColumnSummary::Int {
                    count,
                    min,
                    max,
                    sum,
                },
                ColumnSummary::Int {
                    count: c,
                    min: lo,
                    max: hi,
                    sum: s,
                },
            ) => {
                *count += c;
                *min = (*min).min(*lo);
                *max = (*max).max(*hi);
                *sum += s;
            }
            (
                ColumnSummary::Float { count, min, max },
                ColumnSummary::Float {
                    count: c,
                    min: lo,
                    max: hi,
                },
            ) => {
                *count += c;
                if float_cmp(*lo, *min) == Ordering::Less {
                    *min = *lo;
                }
                if float_cmp(*hi, *max) == Ordering::Greater {
                    *max = *hi;
                }
            }
            _ => *self = ColumnSummary::None,
        }
    }
}

/// The summary of one all-visible heap page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageSummary {
    /// Live tuples (NORMAL line pointers), as the count beside the VM bit.
    pub live: u16,
    /// One per column of the table, in order.
    pub columns: Vec<ColumnSummary>,
}

/// Bytes of one encoded column: kind, count (u16), min, max (8 each), sum
/// (16).
const COLUMN_BYTES: usize = 1 + 2 + 8 + 8 + 16;

impl PageSummary {
    /// The encoded length of a summary of `ncolumns` columns.
    pub fn encoded_len(ncolumns: usize) -> usize {
        4 + ncolumns * COLUMN_BYTES
    }

    /// Appends the summary's bytes to `out` (little-endian; see
    /// [`PageSummary::encoded_len`]). `kinds` are the columns' kinds.
    pub fn encode(&self, kinds: &[SummaryKind], out: &mut Vec<u8>) {
        out.extend_from_slice(&self.live.to_le_bytes());
        out.extend_from_slice(&(self.columns.len() as u16).to_le_bytes());
        for (c, k) in self.columns.iter().zip(kinds) {
            let (kind, count, min, max, sum) = match *c {
                ColumnSummary::None => (SummaryKind::None, 0, [0; 8], [0; 8], 0i128),
                ColumnSummary::Int {
                    count,
                    min,
                    max,
                    sum,
                } => (*k, count, min.to_le_bytes(), max.to_le_bytes(), sum),
                ColumnSummary::Float { count, min, max } => {
                    (*k, count, min.to_le_bytes(), max.to_le_bytes(), 0)
                }
            };
            out.push(kind.code());
            // A page's count fits: at most MaxHeapTuplesPerPage values.
            out.extend_from_slice(&(count.min(u64::from(u16::MAX)) as u16).to_le_bytes());
            out.extend_from_slice(&min);
            out.extend_from_slice(&max);
            out.extend_from_slice(&sum.to_le_bytes());
        }
    }

    /// Decodes a summary written by [`PageSummary::encode`]; the kinds it
    /// was written with are returned beside it. Fails (XX001) on bytes that
    /// are not a summary.
    pub fn decode(b: &[u8]) -> Result<(PageSummary, Vec<SummaryKind>)> {
        let bad = || err!(DataCorrupted, "page summary is corrupted");
        let word = |at: usize| -> Result<u16> {
            b.get(at..at + 2)
                .map(|x| u16::from_le_bytes([x[0], x[1]]))
                .ok_or_else(bad)
        };
        let live = word(0)?;
        let n = word(2)? as usize;
        if b.len() < PageSummary::encoded_len(n) {
            return Err(bad());
        }
        let mut columns = Vec::with_capacity(n);
        let mut kinds = Vec::with_capacity(n);
        for i in 0..n {
            let c = &b[4 + i * COLUMN_BYTES..4 + (i + 1) * COLUMN_BYTES];
            let kind = SummaryKind::from_code(c[0]).ok_or_else(bad)?;
            let count = u64::from(u16::from_le_bytes([c[1], c[2]]));
            let eight = |at: usize| {
                let mut x = [0u8; 8];
                x.copy_from_slice(&c[at..at + 8]);
                x
            };
            let mut sum = [0u8; 16];
            sum.copy_from_slice(&c[19..35]);
            columns.push(match kind {
                SummaryKind::None => ColumnSummary::None,
                SummaryKind::Float4 | SummaryKind::Float8 => ColumnSummary::Float {
                    count,
                    min: f64::from_le_bytes(eight(3)),
                    max: f64::from_le_bytes(eight(11)),
                },
                _ => ColumnSummary::Int {
                    count,
                    min: i64::from_le_bytes(eight(3)),
                    max: i64::from_le_bytes(eight(11)),
                    sum: i128::from_le_bytes(sum),
                },
            });
            kinds.push(kind);
        }
        Ok((PageSummary { live, columns }, kinds))
    }
}

/// Summarises heap page `p`, which must be all-visible (every NORMAL line
/// pointer a live tuple), whose tuples `desc` describes; `kinds` gives each
/// column's kind (missing entries: not summarised). Nulls and columns a
/// tuple does not store (added later, null) are not counted. Fails as
/// `tuple::deform` does on a corrupt tuple.
pub fn summarize(p: &[u8], desc: &TupleDesc, kinds: &[SummaryKind]) -> Result<PageSummary> {
    match FastPlan::of(desc, kinds) {
        Some(plan) => summarize_fast(p, desc, kinds, &plan),
        None => summarize_general(p, desc, kinds),
    }
}

/// The columns summarised, when every one of them has a fixed offset from
/// the tuple's data (no varlena before it): for tuples without nulls their
/// values are read at those offsets, without deforming (VACUUM summarises
/// every page it makes all-visible, so this is on its path).
#[derive(Debug, Clone)]
pub(crate) struct FastPlan {
    /// (column, kind, offset from the data), in column order.
    pub(crate) cols: Vec<(usize, SummaryKind, usize)>,
    /// Columns a tuple must have (the last summarised one's number + 1).
    pub(crate) upto: usize,
    /// Data bytes a tuple must have: the end of the last summarised value.
    pub(crate) end: usize,
}

impl FastPlan {
    pub(crate) fn of(desc: &TupleDesc, kinds: &[SummaryKind]) -> Option<FastPlan> {
        let mut cols = Vec::new();
        let (mut off, mut end) = (0usize, 0usize);
        for (i, a) in desc.attrs().iter().enumerate() {
            let kind = kinds.get(i).copied().unwrap_or(SummaryKind::None);
            if a.len < 0 {
                if kinds
                    .get(i..)
                    .unwrap_or(&[])
                    .iter()
                    .any(|k| *k != SummaryKind::None)
                {
                    return None;
                }
                break;
            }
            let at = tuple::align_to(off, a.align);
            off = at + a.len as usize;
            if kind != SummaryKind::None {
                let want = match kind {
                    SummaryKind::Int2 => 2,
                    SummaryKind::Int4 | SummaryKind::Date | SummaryKind::Float4 => 4,
                    _ => 8,
                };
                if a.len as usize != want {
                    return None;
                }
                cols.push((i, kind, at));
                end = off;
            }
        }
        let upto = cols.last().map(|c| c.0 + 1)?;
        Some(FastPlan { cols, upto, end })
    }
}

/// [`summarize`] through `plan`: tuples without nulls that have every
/// summarised column are read at the plan's offsets (integers gathered
/// apart and added at the end: their min, max and sum do not depend on
/// the order; floats added in tuple order, as the general path adds them,
/// since equal extremes keep the first met); any other tuple is deformed.
fn summarize_fast(
    p: &[u8],
    desc: &TupleDesc,
    kinds: &[SummaryKind],
    plan: &FastPlan,
) -> Result<PageSummary> {
    let ncols = desc.len();
    let kind = |i: usize| kinds.get(i).copied().unwrap_or(SummaryKind::None);
    let mut columns: Vec<ColumnSummary> =
        (0..ncols).map(|i| ColumnSummary::empty(kind(i))).collect();
    let n = plan.cols.len();
    let mut min = [i64::MAX; 32];
    let mut max = [i64::MIN; 32];
    let mut sum = [0i128; 32];
    if n > min.len() {
        return summarize_general(p, desc, kinds);
    }
    let mut fast = 0u64;
    let mut values: Vec<Option<&[u8]>> = Vec::new();
    let mut live = 0u16;
    for off in 1..=page::max_offset(p) {
        let Some(t) = page::get_item(p, off).filter(|t| t.len() >= tuple::HEADER_SIZE) else {
            continue;
        };
        live += 1;
        let hoff = tuple::hoff(t);
        let data = (tuple::infomask(t) & tuple::HEAP_HASNULL == 0 && tuple::natts(t) >= plan.upto)
            .then(|| t.get(hoff..hoff + plan.end))
            .flatten();
        let Some(d) = data else {
            if values.is_empty() {
                values.resize(plan.upto, None);
            }
            add_deformed(t, desc, kind, plan.upto, &mut values, &mut columns)?;
            continue;
        };
        fast += 1;
        for (j, &(i, k, at)) in plan.cols.iter().enumerate() {
            let v = match k {
                SummaryKind::Int2 => i64::from(i16::from_le_bytes([d[at], d[at + 1]])),
                SummaryKind::Int4 | SummaryKind::Date => {
                    i64::from(i32::from_le_bytes(le(&d[at..])?))
                }
                SummaryKind::Int8 => i64::from_le_bytes(le(&d[at..])?),
                SummaryKind::Float4 => {
                    columns[i].add_float(f64::from(f32::from_le_bytes(le(&d[at..])?)));
                    continue;
                }
                SummaryKind::Float8 => {
                    columns[i].add_float(f64::from_le_bytes(le(&d[at..])?));
                    continue;
                }
                SummaryKind::None => continue,
            };
            min[j] = min[j].min(v);
            max[j] = max[j].max(v);
            sum[j] += i128::from(v);
        }
    }
    if fast > 0 {
        for (j, &(i, _, _)) in plan.cols.iter().enumerate() {
            if let ColumnSummary::Int {
                count,
                min: lo,
                max: hi,
                sum: total,
            } = &mut columns[i]
            {
                if *count == 0 {
                    (*lo, *hi) = (min[j], max[j]);
                } else {
                    *lo = (*lo).min(min[j]);
                    *hi = (*hi).max(max[j]);
                }
                *count += fast;
                *total += sum[j];
            }
        }
    }
    Ok(PageSummary { live, columns })
}

/// Adds tuple `t`'s first `upto` columns (deformed into `values`) to
/// `columns`.
pub(crate) fn add_deformed<'t>(
    t: &'t [u8],
    desc: &TupleDesc,
    kind: impl Fn(usize) -> SummaryKind,
    upto: usize,
    values: &mut [Option<&'t [u8]>],
    columns: &mut [ColumnSummary],
) -> Result<()> {
    tuple::deform(t, desc, upto, values)?;
    for (i, v) in values.iter().enumerate() {
        let Some(v) = v else { continue };
        match kind(i) {
            SummaryKind::None => {}
            SummaryKind::Int2 => columns[i].add_int(i64::from(i16::from_le_bytes(le(v)?))),
            SummaryKind::Int4 | SummaryKind::Date => {
                columns[i].add_int(i64::from(i32::from_le_bytes(le(v)?)))
            }
            SummaryKind::Int8 => columns[i].add_int(i64::from_le_bytes(le(v)?)),
            SummaryKind::Float4 => columns[i].add_float(f64::from(f32::from_le_bytes(le(v)?))),
            SummaryKind::Float8 => columns[i].add_float(f64::from_le_bytes(le(v)?)),
        }
    }
    Ok(())
}

/// [`summarize`] deforming every tuple (the reference the fast path is
/// tested against).
pub(crate) fn summarize_general(
    p: &[u8],
    desc: &TupleDesc,
    kinds: &[SummaryKind],
) -> Result<PageSummary> {
    let ncols = desc.len();
    let kind = |i: usize| kinds.get(i).copied().unwrap_or(SummaryKind::None);
    let mut columns: Vec<ColumnSummary> =
        (0..ncols).map(|i| ColumnSummary::empty(kind(i))).collect();
    let upto = (0..ncols)
        .rev()
        .find(|&i| kind(i) != SummaryKind::None)
        .map_or(0, |i| i + 1);
    let mut values: Vec<Option<&[u8]>> = vec![None; upto];
    let mut live = 0u16;
    for off in 1..=page::max_offset(p) {
        let Some(t) = page::get_item(p, off).filter(|t| t.len() >= tuple::HEADER_SIZE) else {
            continue;
        };
        live += 1;
        if upto == 0 {
            continue;
        }
        add_deformed(t, desc, kind, upto, &mut values, &mut columns)?;
    }
    Ok(PageSummary { live, columns })
}

/// The first `N` bytes of a value, for `from_le_bytes`.
pub(crate) fn le<const N: usize>(v: &[u8]) -> Result<[u8; N]> {
    v.get(..N)
        .and_then(|x| x.try_into().ok())
        .ok_or_else(|| err!(DataCorrupted, "heap tuple is corrupted: value too short"))
}

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;
