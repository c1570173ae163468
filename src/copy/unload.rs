//! COPY TO of a query's rows: formatted from the executor's batches with
//! each type's output function, escaped for the format, handed to the writer
//! in pieces of about 256 KiB. A table's rows take the faster path of
//! `table_out`, straight from the heap pages.

use std::io::Write;

use super::table_out::TableUnload;
use super::*;

/// What a COPY TO writes.
pub(super) enum Unload {
    /// `COPY (query) TO`.
    Query(ast::Query),
    /// `COPY table [(cols)] TO`.
    Table(TableUnload),
}

impl Session {
    /// What a COPY TO writes: the COPY's own query, or the table's columns
    /// (checked before any file is opened).
    pub(super) fn copy_source(&mut self, c: &ast::Copy) -> Result<Unload> {
        Ok(match &c.source {
            ast::CopySource::Query(q) => Unload::Query((**q).clone()),
            ast::CopySource::Table { name, columns } => {
                let snap = self.statement_snapshot();
                let table = self.lookup_table(&snap, &name.name, LockMode::AccessShare)?;
                let cols = target_columns(&table, columns)?;
                Unload::Table(TableUnload { table, cols, snap })
            }
        })
    }

    /// Writes the rows of `source` to `out`; returns the row count.
    pub(super) fn copy_to(
        &mut self,
        source: &Unload,
        opts: &CopyOptions,
        out: &mut dyn Write,
        progress: Option<&mut dyn FnMut(&CopyProgress)>,
    ) -> Result<u64> {
        match source {
            Unload::Query(q) => self.copy_query_to(q, opts, out, progress),
            Unload::Table(t) => self.copy_table_to(t, opts, out, progress),
        }
    }

    /// Writes the rows of `query` to `out`; returns the row count.
    fn copy_query_to(
        &mut self,
        query: &ast::Query,
        opts: &CopyOptions,
        out: &mut dyn Write,
        mut progress: Option<&mut dyn FnMut(&CopyProgress)>,
    ) -> Result<u64> {
        let mut w = RowWriter {
            opts,
            out,
            buf: Vec::with_capacity(OUT_CHUNK + 8192),
            text: String::new(),
            header_done: !opts.header,
            force: Vec::new(),
            rows: 0,
        };
        let result = self.run_query(query, &mut |cols, b| {
            w.batch(cols, b)?;
            if w.buf.len() >= OUT_CHUNK {
                w.flush()?;
                if let Some(p) = progress.as_deref_mut() {
                    p(&CopyProgress {
                        rows: w.rows,
                        ..CopyProgress::default()
                    });
                }
            }
            Ok(())
        })?;
        if !w.header_done {
            w.start(&result.columns)?;
        }
        w.flush()?;
        if let Some(p) = progress {
            p(&CopyProgress {
                rows: w.rows,
                ..CopyProgress::default()
            });
        }
        Ok(w.rows)
    }
}

/// Formats rows into a buffer and hands it to the writer.
struct RowWriter<'a> {
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

impl RowWriter<'_> {
    /// Checks FORCE_QUOTE's columns and writes the header line if asked.
    fn start(&mut self, cols: &[Column]) -> Result<()> {
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        self.force = force_flags(self.opts, &names)?;
        if !self.header_done {
            write_header(self.opts, &names, &mut self.buf);
            self.header_done = true;
        }
        Ok(())
    }

    fn field(&mut self, v: &[u8], force: bool, single: bool) {
        write_field(self.opts, v, force, single, &mut self.buf);
    }

    fn batch(&mut self, cols: &[Column], b: &Batch) -> Result<()> {
        if self.force.len() != cols.len() || !self.header_done {
            self.start(cols)?;
        }
        let single = cols.len() == 1;
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
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.out
            .write_all(&self.buf)
            .map_err(|e| err!(IoError, "could not write to COPY file: {}", os_text(&e)))?;
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
