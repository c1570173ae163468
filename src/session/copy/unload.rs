//! COPY TO: a table's rows (as `SELECT cols FROM t`) or a query's rows,
//! formatted with each type's output function and escaped for the format,
//! handed to the writer in pieces of about 256 KiB.

use std::io::Write;

use super::*;

impl Session {
    /// The query whose rows a COPY TO writes: the COPY's own, or
    /// `SELECT cols FROM table` (checked before any file is opened).
    pub(super) fn copy_query(&mut self, c: &ast::Copy) -> Result<ast::Query> {
        Ok(match &c.source {
            ast::CopySource::Query(q) => (**q).clone(),
            ast::CopySource::Table { name, columns } => {
                let snap = self.statement_snapshot();
                let table = self.lookup_table(&snap, &name.name, LockMode::AccessShare)?;
                let cols = target_columns(&table, columns)?;
                let list: Vec<String> = cols
                    .iter()
                    .map(|&i| quote_ident(&table.columns[i].name))
                    .collect();
                let sql = format!(
                    "SELECT {} FROM {}",
                    list.join(", "),
                    quote_ident(&table.name)
                );
                match heapdb_grammar::parse_one(&sql).map_err(super::super::parse_error)? {
                    ast::Statement::Query(q) => *q,
                    _ => {
                        return Err(err!(
                            InternalError,
                            "COPY built a statement that is not a query"
                        ))
                    }
                }
            }
        })
    }

    /// Writes the rows of `query` to `out`; returns the row count.
    pub(super) fn copy_to(
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
        self.force = match &self.opts.force_quote {
            ForceQuote::None => vec![false; cols.len()],
            ForceQuote::All => vec![true; cols.len()],
            ForceQuote::Columns(names) => {
                let mut f = vec![false; cols.len()];
                for n in names {
                    match cols.iter().position(|c| c.name == *n) {
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
        };
        if !self.header_done {
            for (i, c) in cols.iter().enumerate() {
                if i > 0 {
                    self.buf.push(self.opts.delimiter);
                }
                self.field(c.name.as_bytes(), false, cols.len() == 1);
            }
            self.buf.push(b'\n');
            self.header_done = true;
        }
        Ok(())
    }

    /// Whether an integer's digits can go out as they are: no byte of
    /// `-0123456789` is the delimiter (escaped in text), the CSV quote, or
    /// in the null string (CSV quotes a value equal to it).
    fn plain_ints(&self) -> bool {
        let digitish = |c: &u8| b"-0123456789".contains(c);
        !digitish(&self.opts.delimiter)
            && (self.opts.format == Format::Text || !digitish(&self.opts.quote))
            && !self.opts.null.as_bytes().iter().any(digitish)
    }

    fn field(&mut self, v: &[u8], force: bool, single: bool) {
        match self.opts.format {
            Format::Text => text::write_field(v, self.opts.delimiter, &mut self.buf),
            Format::Csv => csv::write_field(v, self.opts, force, single, &mut self.buf),
        }
    }

    fn batch(&mut self, cols: &[Column], b: &Batch) -> Result<()> {
        if self.force.len() != cols.len() || !self.header_done {
            self.start(cols)?;
        }
        let single = cols.len() == 1;
        let plain_ints = self.plain_ints();
        for i in 0..b.len {
            for (c, col) in b.columns.iter().enumerate() {
                if c > 0 {
                    self.buf.push(self.opts.delimiter);
                }
                if col.is_null(i) {
                    self.buf.extend_from_slice(self.opts.null.as_bytes());
                    continue;
                }
                // Integers and text go out without a `Value` built per row
                // (the text without a copy); other types through their
                // output function.
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
