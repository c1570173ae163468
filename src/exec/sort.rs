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
//! out as a *run*: blocks of up to [`BATCH_SIZE`] rows, each written column
//! by column in the vectors' own layout (null mask, fixed-width values as
//! little-endian bytes, a string column as its end offsets then its byte
//! buffer; only numeric and interval values go through their storage
//! encoding one by one). The final output merges all runs plus what is
//! still in memory: each run holds one decoded block, the runs are kept
//! ordered by their current row (ties by run order, so equal keys keep
//! their input order), and the smallest row is copied slot by slot into the
//! output vectors — no `Value` per row on this path either.
//!
//! NULLs sort as PostgreSQL's: last ascending, first descending, unless
//! NULLS FIRST/LAST says otherwise.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use super::vector::{Batch, Data, StrVec, Vector, BATCH_SIZE};
use super::{ExecContext, Operator};
use crate::error::Result;
use crate::plan::SortKey;
use crate::types::compare::float_cmp;
use crate::types::text::bpchar_trim;
use crate::types::{compare_typed, DataType, Value};

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
fn batch_bytes(b: &Batch) -> usize {
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
    reader: BufReader<File>,
    /// The bytes of the block last read.
    buf: Vec<u8>,
    /// The block being merged.
    block: Batch,
    /// The current row of `block` (the run's head).
    pos: usize,
}

impl Run {
    /// Moves to the run's next row; false once the run is exhausted.
    fn advance(&mut self, types: &[DataType]) -> Result<bool> {
        self.pos += 1;
        if self.pos < self.block.len {
            return Ok(true);
        }
        match read_block(&mut self.reader, types, &mut self.buf)? {
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

/// Writes rows `rows` of `b` (in that order) as one block of a run (see
/// the module doc), gathered straight into `scratch`.
fn write_block(
    w: &mut impl Write,
    b: &Batch,
    rows: &[u32],
    scratch: &mut Vec<u8>,
) -> std::io::Result<()> {
    fn put<T: Copy, const N: usize>(
        out: &mut Vec<u8>,
        v: &[T],
        rows: &[u32],
        bytes: impl Fn(T) -> [u8; N],
    ) {
        for &r in rows {
            out.extend_from_slice(&bytes(v[r as usize]));
        }
    }
    scratch.clear();
    let out = scratch;
    out.extend_from_slice(&(rows.len() as u32).to_le_bytes());
    for c in &b.columns {
        match &c.nulls {
            Some(n) => {
                out.push(1);
                out.extend(rows.iter().map(|&r| n[r as usize] as u8));
            }
            None => out.push(0),
        }
        match &c.data {
            Data::Bool(v) => out.extend(rows.iter().map(|&r| v[r as usize] as u8)),
            Data::I16(v) => put(out, v, rows, i16::to_le_bytes),
            Data::I32(v) => put(out, v, rows, i32::to_le_bytes),
            Data::I64(v) => put(out, v, rows, i64::to_le_bytes),
            Data::F32(v) => put(out, v, rows, f32::to_le_bytes),
            Data::F64(v) => put(out, v, rows, f64::to_le_bytes),
            Data::Str(v) => {
                let mut end = 0u32;
                for &r in rows {
                    end += v.get(r as usize).len() as u32;
                    out.extend_from_slice(&end.to_le_bytes());
                }
                for &r in rows {
                    out.extend_from_slice(v.get(r as usize).as_bytes());
                }
            }
            Data::Any(v) => {
                for &r in rows {
                    let start = out.len();
                    out.extend_from_slice(&[0; 4]);
                    v[r as usize].encode(out);
                    let len = (out.len() - start - 4) as u32;
                    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
                }
            }
        }
    }
    w.write_all(&(out.len() as u64).to_le_bytes())?;
    w.write_all(out)
}

/// A run file that does not hold what [`write_block`] wrote.
fn corrupt_run() -> crate::error::Error {
    crate::error::Error::internal("sort run file is corrupt".to_string())
}

/// Reads the next block of a run (`None` at its end), through `buf` (the
/// run's, reused from block to block).
fn read_block(r: &mut impl Read, types: &[DataType], buf: &mut Vec<u8>) -> Result<Option<Batch>> {
    let mut len = [0u8; 8];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    buf.clear();
    buf.resize(u64::from_le_bytes(len) as usize, 0);
    r.read_exact(buf)?;
    let mut p = 0usize;
    let mut take = |k: usize| -> Result<&[u8]> {
        let s = buf.get(p..p + k).ok_or_else(corrupt_run)?;
        p += k;
        Ok(s)
    };
    fn get<T, const N: usize>(b: &[u8], from: impl Fn([u8; N]) -> T) -> Vec<T> {
        b.chunks_exact(N)
            .map(|c| from(c.try_into().expect("N bytes")))
            .collect()
    }
    let n = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
    let mut columns = Vec::with_capacity(types.len());
    for ty in types {
        let nulls = match take(1)?[0] {
            0 => None,
            _ => Some(take(n)?.iter().map(|&x| x != 0).collect()),
        };
        let data = match Data::with_capacity(ty, 0) {
            Data::Bool(_) => Data::Bool(take(n)?.iter().map(|&x| x != 0).collect()),
            Data::I16(_) => Data::I16(get(take(2 * n)?, i16::from_le_bytes)),
            Data::I32(_) => Data::I32(get(take(4 * n)?, i32::from_le_bytes)),
            Data::I64(_) => Data::I64(get(take(8 * n)?, i64::from_le_bytes)),
            Data::F32(_) => Data::F32(get(take(4 * n)?, f32::from_le_bytes)),
            Data::F64(_) => Data::F64(get(take(8 * n)?, f64::from_le_bytes)),
            Data::Str(_) => {
                let ends = get(take(4 * n)?, u32::from_le_bytes);
                let bytes = ends.last().map_or(0, |&e| e as usize);
                let text = std::str::from_utf8(take(bytes)?).map_err(|_| corrupt_run())?;
                Data::Str(StrVec::from_raw_parts(text.to_owned(), ends).ok_or_else(corrupt_run)?)
            }
            Data::Any(_) => {
                let mut v = Vec::with_capacity(n);
                for i in 0..n {
                    let k = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
                    let bytes = take(k)?;
                    let null = nulls.as_ref().is_some_and(|m: &Vec<bool>| m[i]);
                    v.push(if null {
                        Value::Null
                    } else {
                        Value::decode(ty, bytes)
                    });
                }
                Data::Any(v)
            }
        };
        let mut col = Vector::from_data(*ty, data);
        col.nulls = nulls;
        columns.push(col);
    }
    Ok(Some(Batch { columns, len: n }))
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
        let mut file = tempfile::tempfile()?;
        let mut scratch = Vec::new();
        {
            let mut w = BufWriter::new(&mut file);
            for chunk in order.chunks(BATCH_SIZE) {
                self.ctx.check_cancel()?;
                write_block(&mut w, rows, chunk, &mut scratch)?;
            }
            w.flush()?;
        }
        file.seek(SeekFrom::Start(0))?;
        let mut reader = BufReader::new(file);
        let mut buf = scratch;
        if let Some(block) = read_block(&mut reader, &self.types, &mut buf)? {
            self.runs.push(Run {
                reader,
                buf,
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
            if self.runs[r].advance(&self.types)? {
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
