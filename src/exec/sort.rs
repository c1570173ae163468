//! ORDER BY: an in-memory sort that spills sorted runs to temporary files
//! once its input passes `work_mem`, then merges them.
//!
//! In memory, the input batches are appended into one batch and the sort
//! orders a vector of row positions by comparing the key columns in their
//! physical form ([`cmp_at`]: integers and floats as numbers, text as byte
//! slices of the string vector — PostgreSQL's `C` collation, `char(n)`
//! without trailing spaces), so no `Value` is built per row and no row is
//! copied until output, which gathers the rows a batch at a time. When the buffered batches exceed `work_mem` they are
//! sorted and written out as a *run* (rows serialised with each value's
//! storage encoding), and the final output merges all runs plus what is
//! still in memory. NULLs sort as PostgreSQL's: last ascending, first
//! descending, unless NULLS FIRST/LAST says otherwise.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use super::vector::{Batch, Data, Vector, BATCH_SIZE};
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

/// Compares two values under a sort key's rules.
fn cmp_values(a: &Value, b: &Value, key: &SortKey, ty: &DataType) -> Ordering {
    if let Some(o) = null_order(a.is_null(), b.is_null(), key) {
        return o;
    }
    directed(compare_typed(a, b, ty), key)
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

fn cmp_rows(a: &[Value], b: &[Value], keys: &[SortKey], types: &[DataType]) -> Ordering {
    for k in keys {
        let o = cmp_values(&a[k.column], &b[k.column], k, &types[k.column]);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
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

/// A sorted run on disk.
struct Run {
    reader: BufReader<File>,
    head: Option<Vec<Value>>,
}

fn write_row(w: &mut impl Write, row: &[Value], buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    for v in row {
        if v.is_null() {
            buf.push(0);
        } else {
            buf.push(1);
            let start = buf.len();
            buf.extend_from_slice(&[0; 4]);
            v.encode(buf);
            let len = (buf.len() - start - 4) as u32;
            buf[start..start + 4].copy_from_slice(&len.to_le_bytes());
        }
    }
    w.write_all(&(buf.len() as u32).to_le_bytes())?;
    w.write_all(buf)
}

fn read_row(r: &mut impl Read, types: &[DataType]) -> std::io::Result<Option<Vec<Value>>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut buf = vec![0u8; u32::from_le_bytes(len) as usize];
    r.read_exact(&mut buf)?;
    let mut row = Vec::with_capacity(types.len());
    let mut p = 0;
    for ty in types {
        let flag = buf[p];
        p += 1;
        if flag == 0 {
            row.push(Value::Null);
        } else {
            let n = u32::from_le_bytes(buf[p..p + 4].try_into().expect("4 bytes")) as usize;
            p += 4;
            row.push(Value::decode(ty, &buf[p..p + n]));
            p += n;
        }
    }
    Ok(Some(row))
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
        }
    }

    /// Sorts `rows` and writes them out as a run.
    fn spill(&mut self, rows: &Batch) -> Result<()> {
        let order = sorted_positions(rows, self.keys);
        let mut file = tempfile::tempfile()?;
        {
            let mut w = BufWriter::new(&mut file);
            let mut buf = Vec::new();
            for &r in &order {
                write_row(&mut w, &rows.row(r as usize), &mut buf)?;
            }
            w.flush()?;
        }
        file.seek(SeekFrom::Start(0))?;
        let mut reader = BufReader::new(file);
        let head = read_row(&mut reader, &self.types)?;
        self.runs.push(Run { reader, head });
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
        } else if rows.len > 0 {
            self.spill(&rows)?;
        }
        Ok(())
    }

    /// The next row of the merge of all runs.
    fn next_merged(&mut self) -> Result<Option<Vec<Value>>> {
        let mut best: Option<usize> = None;
        for (i, r) in self.runs.iter().enumerate() {
            let Some(h) = &r.head else { continue };
            best = match best {
                None => Some(i),
                Some(b) => {
                    let bh = self.runs[b].head.as_ref().expect("best has a head");
                    if cmp_rows(h, bh, self.keys, &self.types) == Ordering::Less {
                        Some(i)
                    } else {
                        Some(b)
                    }
                }
            };
        }
        let Some(b) = best else { return Ok(None) };
        let run = &mut self.runs[b];
        let next = read_row(&mut run.reader, &self.types)?;
        Ok(std::mem::replace(&mut run.head, next))
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
        let mut len = 0;
        {
            self.ctx.check_cancel()?;
            while len < BATCH_SIZE {
                let Some(row) = self.next_merged()? else {
                    break;
                };
                for (c, v) in row.iter().enumerate() {
                    cols[c].push(v);
                }
                len += 1;
            }
        }
        if len == 0 {
            return Ok(None);
        }
        Ok(Some(Batch { columns: cols, len }))
    }
}
