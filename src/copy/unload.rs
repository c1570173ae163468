//! COPY TO: a table's rows or a query's, formatted for the text or CSV
//! format and handed to a writer.
//!
//! `COPY table TO` formats each visible tuple straight from the page bytes
//! on two threads, chunk by chunk, while the calling thread writes the
//! chunks in order (`table_out`; text-format rows of integers and strings
//! through `text_row`'s writer). `COPY (query) TO` formats the executor's
//! batches ([`RowWriter`]): the caller runs the query (the planner is above
//! COPY) and hands each batch over; each value goes out through its type's
//! output function (integers and text straight from their vectors),
//! escaped for the format, to the writer in pieces of about 256 KiB. A
//! file that exists is written over in place and cut to length at the end
//! rather than truncated when opened ([`super::out_file`] says why and what
//! that changes).

mod table_out;
mod text_row;

use std::io::Write;

pub use self::table_out::{table_to, TableUnload};
use super::context::{write_error, OUT_CHUNK};
use super::{csv, text, CopyOptions, CopyProgress, ForceQuote, Format};
use crate::access::heap::tuple;
use crate::err;
use crate::error::Result;
use crate::exec::scan::tuple_desc;
use crate::exec::vector::{Batch, Data};
use crate::types::io::int_digits;
use crate::types::{format_value, DataType, Value};

/// Formats a query's rows into a buffer and hands it to the writer in
/// pieces of about [`OUT_CHUNK`] bytes.
pub struct RowWriter<'a> {
    opts: &'a CopyOptions,
    out: &'a mut dyn Write,
    buf: Vec<u8>,
    /// One value's text form (reused).
    text: String,
    header_done: bool,
    /// CSV: per output column, FORCE_QUOTE applies.
    force: Vec<bool>,
    rows: u64,
}

impl<'a> RowWriter<'a> {
    /// A writer of rows in `opts`' format to `out`.
    pub fn new(opts: &'a CopyOptions, out: &'a mut dyn Write) -> RowWriter<'a> {
        RowWriter {
            opts,
            out,
            buf: Vec::with_capacity(OUT_CHUNK + 8192),
            text: String::new(),
            header_done: !opts.header,
            force: Vec::new(),
            rows: 0,
        }
    }

    /// Formats the rows of batch `b`, whose columns are named `names`
    /// (read only for the first batch: FORCE_QUOTE's columns and the
    /// header); writes out what has gathered past [`OUT_CHUNK`] bytes and
    /// then reports progress.
    pub fn batch<'n>(
        &mut self,
        names: impl Iterator<Item = &'n str>,
        b: &Batch,
        progress: Option<&mut dyn FnMut(&CopyProgress)>,
    ) -> Result<()> {
        if self.force.len() != b.columns.len() || !self.header_done {
            self.start(&names.collect::<Vec<_>>())?;
        }
        self.rows_of(b);
        if self.buf.len() >= OUT_CHUNK {
            self.flush()?;
            if let Some(p) = progress {
                p(&CopyProgress {
                    rows: self.rows,
                    ..CopyProgress::default()
                });
            }
        }
        Ok(())
    }

    /// Ends the output of a query whose columns are `names`: the header
    /// if no batch came, and what is left in the buffer. Returns the row
    /// count, also reported to `progress`.
    pub fn finish<'n>(
        mut self,
        names: impl Iterator<Item = &'n str>,
        progress: Option<&mut dyn FnMut(&CopyProgress)>,
    ) -> Result<u64> {
        if !self.header_done {
            self.start(&names.collect::<Vec<_>>())?;
        }
        self.flush()?;
        if let Some(p) = progress {
            p(&CopyProgress {
                rows: self.rows,
                ..CopyProgress::default()
            });
        }
        Ok(self.rows)
    }

    /// Checks FORCE_QUOTE's columns and writes the header line if asked.
    fn start(&mut self, names: &[&str]) -> Result<()> {
        self.force = force_flags(self.opts, names)?;
        if !self.header_done {
            write_header(self.opts, names, &mut self.buf);
            self.header_done = true;
        }
        Ok(())
    }

    fn field(&mut self, v: &[u8], force: bool, single: bool) {
        write_field(self.opts, v, force, single, &mut self.buf);
    }

    fn rows_of(&mut self, b: &Batch) {
        let single = b.columns.len() == 1;
        let plain_ints = plain_ints(self.opts);
        for i in 0..b.len {
            for (c, col) in b.columns.iter().enumerate() {
                if c > 0 {
                    self.buf.push(self.opts.delimiter);
                }
                if col.is_null(i) {
                    self.buf.extend_from_slice(self.opts.null.as_bytes());
                    continue;
                }
                // Integers and text (string vectors included) go out without
                // a `Value` built per row, the text without a copy; other
                // types through their output function.
                let int = match (&col.data, &col.ty) {
                    (Data::I16(v), DataType::Int2) => Some(i64::from(v[i])),
                    (Data::I32(v), DataType::Int4) => Some(i64::from(v[i])),
                    (Data::I64(v), DataType::Int8) => Some(v[i]),
                    _ => None,
                };
                if let Some(x) = int {
                    let mut scratch = [0; 20];
                    let digits = int_digits(x, &mut scratch).as_bytes();
                    if plain_ints && !self.force[c] {
                        self.buf.extend_from_slice(digits);
                    } else {
                        self.field(digits, self.force[c], single);
                    }
                    continue;
                }
                if let Data::Str(sv) = &col.data {
                    // A string vector's bytes are the output form.
                    self.field(sv.get(i).as_bytes(), self.force[c], single);
                    continue;
                }
                if let Data::Any(vs) = &col.data {
                    if let Value::Text(s) = &vs[i] {
                        self.field(s.as_bytes(), self.force[c], single);
                        continue;
                    }
                }
                let v = col.get(i);
                let mut t = std::mem::take(&mut self.text);
                t.clear();
                format_value(&v, &mut t);
                self.field(t.as_bytes(), self.force[c], single);
                self.text = t;
            }
            self.buf.push(b'\n');
        }
        self.rows += b.len as u64;
    }

    fn flush(&mut self) -> Result<()> {
        self.out.write_all(&self.buf).map_err(|e| write_error(&e))?;
        self.buf.clear();
        Ok(())
    }
}

/// Per output column, whether FORCE_QUOTE applies (checking that its
/// columns are among `names`).
pub(super) fn force_flags(opts: &CopyOptions, names: &[&str]) -> Result<Vec<bool>> {
    Ok(match &opts.force_quote {
        ForceQuote::None => vec![false; names.len()],
        ForceQuote::All => vec![true; names.len()],
        ForceQuote::Columns(wanted) => {
            let mut f = vec![false; names.len()];
            for n in wanted {
                match names.iter().position(|c| *c == n) {
                    Some(i) => f[i] = true,
                    None => {
                        return Err(err!(
                            InvalidColumnReference,
                            "FORCE_QUOTE column \"{n}\" not referenced by COPY"
                        ))
                    }
                }
            }
            f
        }
    })
}

/// Appends the header line (the column names as fields).
pub(super) fn write_header(opts: &CopyOptions, names: &[&str], out: &mut Vec<u8>) {
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            out.push(opts.delimiter);
        }
        write_field(opts, n.as_bytes(), false, names.len() == 1, out);
    }
    out.push(b'\n');
}

/// Appends one value escaped for the format.
#[inline]
pub(super) fn write_field(
    opts: &CopyOptions,
    v: &[u8],
    force: bool,
    single: bool,
    out: &mut Vec<u8>,
) {
    match opts.format {
        Format::Text => text::write_field(v, opts.delimiter, out),
        Format::Csv => csv::write_field(v, opts, force, single, out),
    }
}

/// Whether an integer's digits can go out as they are: no byte of
/// `-0123456789` is the delimiter (escaped in text), the CSV quote, or in
/// the null string (CSV quotes a value equal to it).
pub(super) fn plain_ints(opts: &CopyOptions) -> bool {
    let digitish = |c: &u8| b"-0123456789".contains(c);
    !digitish(&opts.delimiter)
        && (opts.format == Format::Text || !digitish(&opts.quote))
        && !opts.null.as_bytes().iter().any(digitish)
}
