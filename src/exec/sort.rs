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

use super::spill::{BlockReader, SpillFile};
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

/// The positions of `b`'s rows in sorted order (a stable sort).
fn sorted_positions(b: &Batch, keys: &[SortKey]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..b.len as u32).collect();
    let texts: Vec<Option<Vec<&[u8]>>> = keys
        .iter()
        .map(|k| text_keys(&b.columns[k.column]))
        .collect();
    order.sort_by(|&i, &j| {
        let (i, j) = (i as usize, j as usize);
        for (k, text) in keys.iter().zip(&texts) {
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
    });
    order
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
            rows.extend(&b);
            if bytes > limit {
                self.spill(&rows)?;
                rows = empty();
                bytes = 0;
            }
        }
        if self.runs.is_empty() {
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
