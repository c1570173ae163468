//! The aligned printer's overflow: cell texts of a result too large to hold
//! in memory, kept in an anonymous temporary file while the column widths
//! are measured, then read back in bounded chunks and printed with the
//! widths of the whole result.
//!
//! psql prints an aligned result (without `FETCH_COUNT`) as one table whose
//! columns are as wide as the widest value of the whole result, so it holds
//! every row in memory. Here the rows go to this spool once the buffered text
//! passes [`super::PrintOptions::spool_bytes`]; the output is byte for byte
//! the one-table output, and memory stays about twice that bound.
//!
//! Invariants: the spool holds whole rows, cell after cell, each as a
//! little-endian `u32` length and its UTF-8 bytes; [`Widths`] covers every
//! spooled cell; the file is unlinked from creation (`tempfile::tempfile`,
//! in `TMPDIR` or the system's temporary directory), so nothing is left
//! behind however the process ends.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use super::text;

/// Display widths of every cell of a result, measured as rows are spooled.
#[derive(Debug, Clone, Default)]
pub(crate) struct Widths {
    /// The widest value of each column (not counting the header).
    pub cols: Vec<usize>,
    /// The widest value of all columns (the expanded layout's data width).
    pub data: usize,
    /// Some value has more than one line (the expanded layout's `+` marks).
    pub data_multiline: bool,
}

/// The temporary file of one result and the widths of what it holds.
pub(crate) struct Spool {
    /// Where cells are appended.
    file: BufWriter<File>,
    /// Widths of every spooled cell.
    pub widths: Widths,
    /// Rows written.
    pub rows: u64,
}

impl Spool {
    /// An empty spool for a result of `ncols` columns.
    pub fn new(ncols: usize) -> io::Result<Spool> {
        Ok(Spool {
            file: BufWriter::with_capacity(1 << 16, tempfile::tempfile()?),
            widths: Widths {
                cols: vec![0; ncols],
                ..Widths::default()
            },
            rows: 0,
        })
    }

    /// Appends `rows` rows whose cells are `text` split at `ends`, measuring
    /// each cell.
    pub fn append(&mut self, text: &str, ends: &[usize], rows: usize) -> io::Result<()> {
        let ncols = self.widths.cols.len();
        let mut start = 0;
        for (i, &end) in ends.iter().enumerate() {
            let cell = &text[start..end];
            let (w, h) = text::measure(cell);
            let col = &mut self.widths.cols[i % ncols];
            *col = (*col).max(w);
            self.widths.data = self.widths.data.max(w);
            self.widths.data_multiline |= h > 1;
            let len = u32::try_from(cell.len())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "cell over 4 GB"))?;
            self.file.write_all(&len.to_le_bytes())?;
            self.file.write_all(cell.as_bytes())?;
            start = end;
        }
        self.rows += rows as u64;
        Ok(())
    }

    /// Ends writing and returns a reader from the first row.
    pub fn into_reader(self) -> io::Result<(SpoolReader, Widths, u64)> {
        let mut file = self.file.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        let reader = SpoolReader {
            file: BufReader::with_capacity(1 << 16, file),
            ncols: self.widths.cols.len(),
        };
        Ok((reader, self.widths, self.rows))
    }
}

/// Reads a spool back, a bounded chunk of whole rows at a time.
pub(crate) struct SpoolReader {
    file: BufReader<File>,
    ncols: usize,
}

impl SpoolReader {
    /// Reads up to `max_rows` rows, stopping after the row at which `text`
    /// passes `max_bytes`; clears `text` and `ends` first. Returns the rows
    /// read.
    pub fn read_chunk(
        &mut self,
        text: &mut String,
        ends: &mut Vec<usize>,
        max_rows: u64,
        max_bytes: usize,
    ) -> io::Result<usize> {
        text.clear();
        ends.clear();
        let mut rows = 0;
        let mut bytes = Vec::new();
        while (rows as u64) < max_rows && (rows == 0 || text.len() < max_bytes) {
            for _ in 0..self.ncols {
                let mut len = [0u8; 4];
                self.file.read_exact(&mut len)?;
                bytes.resize(u32::from_le_bytes(len) as usize, 0);
                self.file.read_exact(&mut bytes)?;
                let cell = std::str::from_utf8(&bytes)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                text.push_str(cell);
                ends.push(text.len());
            }
            rows += 1;
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Align, ColumnInfo, Expanded, PrintOptions, ResultPrinter};

    /// Prints `rows` with `opts`; returns the text and whether it spooled.
    fn print(
        opts: &PrintOptions,
        cols: &[ColumnInfo],
        rows: &[Vec<Option<String>>],
    ) -> (String, bool) {
        let mut out = Vec::new();
        let mut p = ResultPrinter::new(&mut out, opts, cols);
        for r in rows {
            let row: Vec<Option<&str>> = r.iter().map(|v| v.as_deref()).collect();
            p.push_row(&row).expect("write to a Vec");
        }
        let spooled = p.spooled();
        p.finish().expect("write to a Vec");
        (String::from_utf8(out).expect("utf-8 output"), spooled)
    }

    /// A result whose widest values come late, with NULLs, multi-line,
    /// wide and control characters: a chunk's own widths would differ
    /// from the whole result's.
    fn rows() -> Vec<Vec<Option<String>>> {
        (0..2000u32)
            .map(|i| {
                let s = match i % 7 {
                    0 => Some(format!("line{i}\nnext")),
                    1 => None,
                    2 => Some("日本".repeat((i % 5) as usize)),
                    3 => Some(format!("tab\t{i}")),
                    _ => Some("x".repeat((i / 40) as usize)),
                };
                vec![Some(i.to_string()), s, Some(String::new())]
            })
            .collect()
    }

    #[test]
    fn spooled_output_equals_in_memory_output() {
        let cols = [
            ColumnInfo::new("n", Align::Right),
            ColumnInfo::new("value", Align::Left),
            ColumnInfo::new("e\nmpty", Align::Left),
        ];
        let rows = rows();
        for border in 0..3 {
            for expanded in [Expanded::Off, Expanded::On, Expanded::Auto] {
                for tuples_only in [false, true] {
                    let opts = PrintOptions {
                        border,
                        expanded,
                        tuples_only,
                        columns: 40,
                        title: Some("T".into()),
                        null_display: "(null)".into(),
                        ..PrintOptions::default()
                    };
                    let (whole, spooled) = print(&opts, &cols, &rows);
                    assert!(!spooled, "the default bound holds this result in memory");
                    for bound in [0, 1, 100, 5000] {
                        let small = PrintOptions {
                            spool_bytes: bound,
                            ..opts.clone()
                        };
                        let (got, spooled) = print(&small, &cols, &rows);
                        assert!(spooled, "bound {bound}: the rows went to the spool");
                        assert_eq!(
                            got, whole,
                            "border {border} {expanded:?} {tuples_only} {bound}"
                        );
                    }
                }
            }
        }
    }
}
