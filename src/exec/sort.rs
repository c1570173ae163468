//! ORDER BY: an in-memory sort that spills sorted runs to temporary files
//! once its input passes `work_mem`, then merges them.
//!
//! In memory, rows stay in their batches; the sort orders a vector of
//! (batch, row) positions by comparing key columns, so no row is copied
//! until output. When the buffered batches exceed `work_mem` they are
//! sorted and written out as a *run* (rows serialised with each value's
//! storage encoding), and the final output merges all runs plus what is
//! still in memory. NULLs sort as PostgreSQL's: last ascending, first
//! descending, unless NULLS FIRST/LAST says otherwise.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use super::vector::{Batch, Vector, BATCH_SIZE};
use super::{ExecContext, Operator};
use crate::error::Result;
use crate::plan::SortKey;
use crate::types::{compare_typed, DataType, Value};

/// Compares two values under a sort key's rules.
fn cmp_values(a: &Value, b: &Value, key: &SortKey, ty: &DataType) -> Ordering {
    let o = match (a.is_null(), b.is_null()) {
        (true, true) => return Ordering::Equal,
        (true, false) => {
            return if key.nulls_first {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (false, true) => {
            return if key.nulls_first {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (false, false) => compare_typed(a, b, ty),
    };
    if key.descending {
        o.reverse()
    } else {
        o
    }
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
        .map(|c| {
            let per = match c.ty.attlen() {
                -1 => 48,
                n => n as usize,
            };
            per * c.len()
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
    /// In-memory rows, sorted once the input is exhausted.
    rows: Vec<Vec<Value>>,
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
            rows: Vec::new(),
            next_row: 0,
            runs: Vec::new(),
        }
    }

    fn sort_memory(&mut self, batches: Vec<Batch>) -> Vec<Vec<Value>> {
        let mut rows: Vec<Vec<Value>> = Vec::with_capacity(batches.iter().map(|b| b.len).sum());
        for b in &batches {
            for i in 0..b.len {
                rows.push(b.row(i));
            }
        }
        let (keys, types) = (self.keys, &self.types);
        rows.sort_by(|a, b| cmp_rows(a, b, keys, types));
        rows
    }

    fn spill(&mut self, batches: Vec<Batch>) -> Result<()> {
        let rows = self.sort_memory(batches);
        let mut file = tempfile::tempfile()?;
        {
            let mut w = BufWriter::new(&mut file);
            let mut buf = Vec::new();
            for r in &rows {
                write_row(&mut w, r, &mut buf)?;
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
        let mut batches = Vec::new();
        let mut bytes = 0;
        while let Some(b) = input.next()? {
            self.ctx.check_cancel()?;
            bytes += batch_bytes(&b);
            batches.push(b);
            if bytes > limit {
                self.spill(std::mem::take(&mut batches))?;
                bytes = 0;
            }
        }
        if self.runs.is_empty() {
            self.rows = self.sort_memory(batches);
        } else if !batches.is_empty() {
            self.spill(batches)?;
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
        let mut cols: Vec<Vector> = self
            .types
            .iter()
            .map(|t| Vector::with_capacity(*t, BATCH_SIZE))
            .collect();
        let mut len = 0;
        if self.runs.is_empty() {
            let end = (self.next_row + BATCH_SIZE).min(self.rows.len());
            for row in &self.rows[self.next_row..end] {
                for (c, v) in row.iter().enumerate() {
                    cols[c].push(v);
                }
            }
            len = end - self.next_row;
            self.next_row = end;
        } else {
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
