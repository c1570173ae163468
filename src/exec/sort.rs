//! ORDER BY: an in-memory sort that spills sorted runs to temporary files
//! once its input passes `work_mem`, then merges them.
//!
//! In memory, the input batches are appended into one batch and the sort
//! orders a vector of row positions by comparing the key columns in their
//! physical form ([`cmp_at`]: integers and floats as numbers, text as byte
//! slices of the string vector — PostgreSQL's `C` collation, `char(n)`
//! without trailing spaces), so no `Value` is built per row and no row is
//! copied until output, which gathers the rows a batch at a time.
//!
//! When the buffered batches exceed `work_mem` they are sorted and written
//! out as a *run*: a temporary file of [`super::spill`] (blocks of up to
//! [`BATCH_SIZE`] rows, column by column in the vectors' own layout). The final output merges all runs plus what is
//! still in memory: each run holds one decoded block, the runs are kept
//! ordered by their current row (ties by run order, so equal keys keep
//! their input order), and the smallest row is copied slot by slot into the
//! output vectors — no `Value` per row on this path either.
//!
//! NULLs sort as PostgreSQL's: last ascending, first descending, unless
//! NULLS FIRST/LAST says otherwise.

use std::cmp::Ordering;

use super::qsort::pg_qsort;
use super::spill::{BlockReader, SpillFile};
use super::topn::BoundedHeap;
use super::vector::{Batch, Data, Vector, BATCH_SIZE};
use super::{ExecContext, Operator};
use crate::error::Result;
use crate::nodes::SortKey;
use crate::types::compare::float_cmp;
use crate::types::text::bpchar_trim;
use crate::types::{compare_typed, DataType};

/// The order of two sort-key values of which at least one is NULL (NULLS
/// FIRST / LAST, independent of DESC), or `None` when neither is.
#[inline]
fn null_order(a_null: bool, b_null: bool, key: &SortKey) -> Option<Ordering> {
    match (a_null, b_null) {
        (false, false) => None,
        (true, true) => Some(Ordering::Equal),
        (true, false) if key.nulls_first => Some(Ordering::Less),
        (true, false) => Some(Ordering::Greater),
        (false, true) if key.nulls_first => Some(Ordering::Greater),
        (false, true) => Some(Ordering::Less),
    }
}

/// `o` under the key's direction.
#[inline]
fn directed(o: Ordering, key: &SortKey) -> Ordering {
    if key.descending {
        o.reverse()
    } else {
        o
    }
}

/// Compares rows `i` and `j` of column `v` under a sort key's rules,
/// reading the column's physical form (no `Value` for the typed forms).
#[inline]
fn cmp_at(v: &Vector, i: usize, j: usize, key: &SortKey) -> Ordering {
    if let Some(o) = null_order(v.is_null(i), v.is_null(j), key) {
        return o;
    }
    let o = match &v.data {
        Data::Str(x) if matches!(v.ty, DataType::Char(_)) => bpchar_trim(x.get(i))
            .as_bytes()
            .cmp(bpchar_trim(x.get(j)).as_bytes()),
        Data::Str(x) => x.get(i).as_bytes().cmp(x.get(j).as_bytes()),
        Data::I16(x) => x[i].cmp(&x[j]),
        Data::I32(x) => x[i].cmp(&x[j]),
        Data::I64(x) => x[i].cmp(&x[j]),
        Data::F64(x) => float_cmp(x[i], x[j]),
        Data::F32(x) => float_cmp(x[i] as f64, x[j] as f64),
        Data::Bool(x) => x[i].cmp(&x[j]),
        Data::Any(x) => compare_typed(&x[i], &x[j], &v.ty),
    };
    directed(o, key)
}

/// A text sort key's values as byte slices, resolved once before the sort
/// so that a comparison is one slice comparison (no offset lookups, no
/// type dispatch); `char(n)` values without their trailing spaces.
fn text_keys(v: &Vector) -> Option<Vec<&[u8]>> {
    let Data::Str(x) = &v.data else { return None };
    let trim = matches!(v.ty, DataType::Char(_));
    Some(
        x.iter()
            .map(|s| {
                if trim {
                    bpchar_trim(s).as_bytes()
                } else {
                    s.as_bytes()
                }
            })
            .collect(),
    )
}

/// The positions of `b`'s rows in sorted order, rows with equal keys
/// placed as PostgreSQL's sort places them ([`pg_qsort`]).
///
/// The first key is turned into a fixed-width prefix per row first (as
/// PostgreSQL's abbreviated keys): exact for numbers and booleans, the first
/// eight bytes for text, so most comparisons are one integer comparison over
/// a contiguous array; equal prefixes compare the rest of the keys (all of
/// them after an inexact prefix). The comparison's outcomes are the full
/// comparison's, so the order, ties included, is the same.
fn sorted_positions(b: &Batch, keys: &[SortKey]) -> Vec<u32> {
    let texts: Vec<Option<Vec<&[u8]>>> = keys
        .iter()
        .map(|k| text_keys(&b.columns[k.column]))
        .collect();
    let rest = |i: usize, j: usize, from: usize| -> Ordering {
        for (k, text) in keys.iter().zip(&texts).skip(from) {
            let col = &b.columns[k.column];
            let o = match text {
                Some(t) if !col.is_null(i) && !col.is_null(j) => {
                    let o = t[i].cmp(t[j]);
                    if k.descending {
                        o.reverse()
                    } else {
                        o
                    }
                }
                _ => cmp_at(col, i, j, k),
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    };
    let prefixed = keys
        .first()
        .and_then(|k| prefixes(&b.columns[k.column], texts[0].as_deref(), k));
    let Some((mut items, exact)) = prefixed else {
        let mut order: Vec<u32> = (0..b.len as u32).collect();
        pg_qsort(&mut order, &mut |&i, &j| rest(i as usize, j as usize, 0));
        return order;
    };
    pg_qsort(&mut items, &mut |a, b| {
        let o = (a.rank, a.key).cmp(&(b.rank, b.key));
        if o != Ordering::Equal {
            return o;
        }
        // Equal prefixes: two NULLs or an exact prefix settle the first key.
        let from = usize::from(a.rank != 1 || exact);
        rest(a.pos as usize, b.pos as usize, from)
    });
    items.into_iter().map(|i| i.pos).collect()
}

/// One row's first sort key as a fixed-width prefix (see [`prefixes`]).
struct Prefixed {
    /// 0: NULL sorting first; 1: a value; 2: NULL sorting last.
    rank: u8,
    /// The value mapped to an unsigned integer in the key's order.
    key: u64,
    pos: u32,
}

/// The first key's prefixes for every row of `v`, and whether they are
/// exact (equal prefixes mean equal values); `None` for the forms without
/// one. `text` is the column's values as [`text_keys`] resolved them.
fn prefixes(v: &Vector, text: Option<&[&[u8]]>, key: &SortKey) -> Option<(Vec<Prefixed>, bool)> {
    const SIGN: u64 = 1 << 63;
    let float = |f: f64| -> u64 {
        if f.is_nan() {
            return u64::MAX; // NaN sorts above every number, equal to NaN
        }
        let bits = if f == 0.0 { 0 } else { f.to_bits() }; // -0 = 0
        if bits & SIGN != 0 {
            !bits
        } else {
            bits | SIGN
        }
    };
    let (exact, of): (bool, Box<dyn Fn(usize) -> u64 + '_>) = match (&v.data, text) {
        (_, Some(t)) => (
            false,
            Box::new(move |i| {
                let mut buf = [0u8; 8];
                let n = t[i].len().min(8);
                buf[..n].copy_from_slice(&t[i][..n]);
                u64::from_be_bytes(buf)
            }),
        ),
        (Data::I16(x), _) => (true, Box::new(move |i| (x[i] as i64 as u64) ^ SIGN)),
        (Data::I32(x), _) => (true, Box::new(move |i| (x[i] as i64 as u64) ^ SIGN)),
        (Data::I64(x), _) => (true, Box::new(move |i| (x[i] as u64) ^ SIGN)),
        (Data::F64(x), _) => (true, Box::new(move |i| float(x[i]))),
        (Data::F32(x), _) => (true, Box::new(move |i| float(x[i] as f64))),
        (Data::Bool(x), _) => (true, Box::new(move |i| x[i] as u64)),
        _ => return None,
    };
    let null_rank = if key.nulls_first { 0 } else { 2 };
    let items = (0..v.len())
        .map(|i| {
            if v.is_null(i) {
                Prefixed {
                    rank: null_rank,
                    key: 0,
                    pos: i as u32,
                }
            } else {
                let k = of(i);
                Prefixed {
                    rank: 1,
                    key: if key.descending { !k } else { k },
                    pos: i as u32,
                }
            }
        })
        .collect();
    Some((items, exact))
}

/// Compares rows `a` and `b` of `rows` under the sort keys.
fn cmp_rows(rows: &Batch, keys: &[SortKey], a: u32, b: u32) -> Ordering {
    let (a, b) = (a as usize, b as usize);
    for k in keys {
        let o = cmp_at(&rows.columns[k.column], a, b, k);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Approximate bytes a batch holds.
pub(crate) fn batch_bytes(b: &Batch) -> usize {
    b.columns
        .iter()
        .map(|c| match (&c.data, c.ty.attlen()) {
            (Data::Str(s), _) => s.byte_len() + 4 * c.len(),
            (_, -1) => 48 * c.len(),
            (_, n) => n as usize * c.len(),
        })
        .sum::<usize>()
        + 8 * b.len
}

/// A sorted run on disk, read back a block at a time.
struct Run {
    /// The run's file (deleted when the run is dropped).
    _file: SpillFile,
    reader: BlockReader,
    /// The block being merged.
    block: Batch,
    /// The current row of `block` (the run's head).
    pos: usize,
}

impl Run {
    /// Moves to the run's next row; false once the run is exhausted.
    fn advance(&mut self) -> Result<bool> {
        self.pos += 1;
        if self.pos < self.block.len {
            return Ok(true);
        }
        match self.reader.next_block()? {
            Some(b) => {
                self.block = b;
                self.pos = 0;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// The order of the heads of runs `a` and `b` under `keys`; ties go to the
/// earlier run, so the merge keeps equal keys in input order.
fn cmp_heads(runs: &[Run], a: usize, b: usize, keys: &[SortKey]) -> Ordering {
    let (x, y) = (&runs[a], &runs[b]);
    for k in keys {
        let (u, v) = (&x.block.columns[k.column], &y.block.columns[k.column]);
        let o = null_order(u.is_null(x.pos), v.is_null(y.pos), k)
            .unwrap_or_else(|| directed(u.cmp_at(x.pos, v, y.pos), k));
        if o != Ordering::Equal {
            return o;
        }
    }
    a.cmp(&b)
}

/// The sort operator.
pub struct SortOp<'a> {
    input: Option<Box<dyn Operator + 'a>>,
    keys: &'a [SortKey],
    types: Vec<DataType>,
    ctx: &'a ExecContext,
    /// Only this many first rows are wanted (a LIMIT above): past twice
    /// as many input rows the sort keeps a top-N heap ([`BoundedHeap`]).
    pub bound: Option<usize>,
    /// The top-N heap, once the input passed twice the bound.
    topn: Option<BoundedHeap>,
    /// The in-memory input (all of it when nothing spilled).
    rows: Batch,
    /// `rows`' positions in sorted order, once the input is exhausted.
    order: Vec<u32>,
    /// The next position of `order` to emit.
    next_row: usize,
    runs: Vec<Run>,
    /// The runs not yet exhausted, ordered by their heads.
    active: Vec<usize>,
}

impl<'a> SortOp<'a> {
    /// Sorts `input` by `keys`.
    pub fn new(
        input: Box<dyn Operator + 'a>,
        keys: &'a [SortKey],
        types: Vec<DataType>,
        ctx: &'a ExecContext,
    ) -> SortOp<'a> {
        SortOp {
            input: Some(input),
            keys,
            types,
            ctx,
            bound: None,
            topn: None,
            rows: Batch::default(),
            order: Vec::new(),
            next_row: 0,
            runs: Vec::new(),
            active: Vec::new(),
        }
    }

    /// Sorts `rows` and writes them out as a run.
    fn spill(&mut self, rows: &Batch) -> Result<()> {
        let order = sorted_positions(rows, self.keys);
        let mut file = SpillFile::create(self.ctx)?;
        let mut scratch = Vec::new();
        for chunk in order.chunks(BATCH_SIZE) {
            self.ctx.check_cancel()?;
            file.write_rows(rows, chunk, &mut scratch)?;
        }
        let mut reader = file.reader()?;
        if let Some(block) = reader.next_block()? {
            self.runs.push(Run {
                _file: file,
                reader,
                block,
                pos: 0,
            });
        }
        Ok(())
    }

    fn consume(&mut self, mut input: Box<dyn Operator + 'a>) -> Result<()> {
        let limit = self.ctx.work_mem.max(64 * 1024);
        let types = self.types.clone();
        let empty = || Batch {
            columns: types.iter().map(|t| Vector::new(*t)).collect(),
            len: 0,
        };
        let mut rows = empty();
        let mut bytes = 0;
        while let Some(b) = input.next()? {
            self.ctx.check_cancel()?;
            bytes += batch_bytes(&b);
            let before = rows.len;
            rows.extend(&b);
            if let Some(bound) = self.bound.filter(|_| self.runs.is_empty()) {
                if self.keep_top(&mut rows, before, bound, bytes > limit) {
                    bytes = batch_bytes(&rows);
                    continue;
                }
            }
            if bytes > limit {
                self.spill(&rows)?;
                rows = empty();
                bytes = 0;
            }
        }
        if let Some(heap) = self.topn.take() {
            self.order = heap.into_sorted(&mut |a, b| cmp_rows(&rows, self.keys, a, b));
            self.rows = rows;
        } else if self.runs.is_empty() {
            self.order = sorted_positions(&rows, self.keys);
            self.rows = rows;
        } else {
            if rows.len > 0 {
                self.spill(&rows)?;
            }
            self.start_merge();
        }
        Ok(())
    }

    /// Feeds the rows from `from` on into the top-N heap, making it first
    /// when the input has passed twice the bound (or filled `work_mem` past
    /// the bound), as PostgreSQL's `puttuple_common`; then drops the rows the
    /// heap no longer holds once they outnumber it. Whether the heap is on.
    fn keep_top(&mut self, rows: &mut Batch, from: usize, bound: usize, full: bool) -> bool {
        let keys = self.keys;
        let heap = match &mut self.topn {
            Some(h) => {
                for r in from..rows.len {
                    h.push(r as u32, &mut |a, b| cmp_rows(rows, keys, a, b));
                }
                h
            }
            None if rows.len > 2 * bound || (full && rows.len > bound) => {
                // The switch happens at the row that passes twice the bound;
                // every later row meets the heap one at a time.
                let first = if rows.len > 2 * bound {
                    2 * bound + 1
                } else {
                    rows.len
                };
                let mut cmp = |a, b| cmp_rows(rows, keys, a, b);
                let mut h = BoundedHeap::build(0..first as u32, bound, &mut cmp);
                for r in first..rows.len {
                    h.push(r as u32, &mut cmp);
                }
                self.topn.insert(h)
            }
            None => return false,
        };
        if rows.len >= 4 * bound.max(super::vector::BATCH_SIZE) {
            // Keep only the heap's rows, in heap order: position i of the
            // new batch is the heap's i-th element.
            *rows = rows.take(&heap.heap);
            for (i, p) in heap.heap.iter_mut().enumerate() {
                *p = i as u32;
            }
        }
        true
    }

    /// Orders the runs by their heads, once every run is written.
    fn start_merge(&mut self) {
        let mut active: Vec<usize> = (0..self.runs.len()).collect();
        active.sort_by(|&a, &b| cmp_heads(&self.runs, a, b, self.keys));
        self.active = active;
    }

    /// Copies up to a batch of the merge's next rows into `cols`; returns
    /// how many.
    fn merge_into(&mut self, cols: &mut [Vector]) -> Result<usize> {
        let mut len = 0;
        while len < BATCH_SIZE && !self.active.is_empty() {
            let r = self.active.remove(0);
            let run = &self.runs[r];
            for (c, v) in cols.iter_mut().zip(&run.block.columns) {
                c.push_from(v, run.pos);
            }
            len += 1;
            if self.runs[r].advance()? {
                // Back into its place among the other heads (few runs: a
                // binary search and a short move of indices).
                let (runs, keys) = (&self.runs, self.keys);
                let at = self
                    .active
                    .partition_point(|&o| cmp_heads(runs, o, r, keys) == Ordering::Less);
                self.active.insert(at, r);
            }
        }
        Ok(len)
    }
}

impl Operator for SortOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if let Some(input) = self.input.take() {
            self.consume(input)?;
        }
        if self.runs.is_empty() {
            let end = (self.next_row + BATCH_SIZE).min(self.order.len());
            if end == self.next_row {
                return Ok(None);
            }
            let out = self.rows.take(&self.order[self.next_row..end]);
            self.next_row = end;
            return Ok(Some(out));
        }
        let mut cols: Vec<Vector> = self
            .types
            .iter()
            .map(|t| Vector::with_capacity(*t, BATCH_SIZE))
            .collect();
        self.ctx.check_cancel()?;
        let len = self.merge_into(&mut cols)?;
        if len == 0 {
            return Ok(None);
        }
        Ok(Some(Batch { columns: cols, len }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Value;

    /// The prefixed sort orders rows as the full comparison does, for every
    /// typed form, direction and NULL placement (ties aside).
    #[test]
    fn prefixed_sort_agrees_with_the_full_comparison() {
        let mut seed = 3u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        let floats = [
            0.0,
            -0.0,
            1.5,
            -1.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let texts = ["", "a", "ab", "abcdefgh", "abcdefghi", "abcdefgha", "b"];
        for ty in [
            DataType::Int2,
            DataType::Int4,
            DataType::Int8,
            DataType::Float8,
            DataType::Text,
            DataType::Bool,
        ] {
            let values: Vec<Value> = (0..300)
                .map(|_| {
                    let r = next();
                    if r % 9 == 0 {
                        return Value::Null;
                    }
                    match ty {
                        DataType::Int2 => Value::Int2((r % 7) as i16 - 3),
                        DataType::Int4 => Value::Int4((r % 11) as i32 - 5),
                        DataType::Int8 => Value::Int8(if r % 5 == 0 {
                            i64::MIN
                        } else {
                            r as i64 - (1 << 30)
                        }),
                        DataType::Float8 => Value::Float8(floats[(r % 7) as usize]),
                        DataType::Bool => Value::Bool(r % 2 == 0),
                        _ => Value::Text(texts[(r % 7) as usize].into()),
                    }
                })
                .collect();
            let second: Vec<Value> = (0..300).map(|_| Value::Int4((next() % 3) as i32)).collect();
            let b = Batch {
                columns: vec![
                    Vector::from_values(ty, &values),
                    Vector::from_values(DataType::Int4, &second),
                ],
                len: 300,
            };
            for (descending, nulls_first) in
                [(false, false), (true, true), (false, true), (true, false)]
            {
                let keys = [
                    SortKey {
                        column: 0,
                        descending,
                        nulls_first,
                    },
                    SortKey {
                        column: 1,
                        descending: false,
                        nulls_first: false,
                    },
                ];
                let got = sorted_positions(&b, &keys);
                for w in got.windows(2) {
                    assert_ne!(
                        cmp_rows(&b, &keys, w[0], w[1]),
                        Ordering::Greater,
                        "{ty:?} desc={descending} nulls_first={nulls_first}"
                    );
                }
                let mut all = got.clone();
                all.sort_unstable();
                assert_eq!(all, (0..300).collect::<Vec<u32>>());
            }
        }
    }
}
