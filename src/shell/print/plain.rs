//! The unaligned (`-A`) and csv (`--csv`) formats, normal and expanded
//! (psql's `print_unaligned_text`, `print_unaligned_vertical`,
//! `print_csv_text`, `print_csv_vertical`).
//!
//! These formats do not depend on other rows, so a batch boundary changes
//! nothing in the output: a continuing batch starts with the record
//! separator the previous one left pending.

use std::io::{self, Write};

use super::{Batch, PrintOptions};

/// Unaligned: header, then one line per row, fields joined by `field_sep`,
/// records by `record_sep`, then the footer; the last record ends with a
/// newline whatever the record separator.
pub(crate) fn unaligned_text<W: Write>(
    out: &mut W,
    opts: &PrintOptions,
    batch: &Batch,
) -> io::Result<()> {
    let ncols = batch.columns.len();
    let fsep = opts.field_sep.as_bytes();
    let rsep = opts.record_sep.as_bytes();
    let mut need_recordsep = false;
    if batch.start_table {
        if let (Some(title), false) = (batch.title, opts.tuples_only) {
            out.write_all(title.as_bytes())?;
            out.write_all(rsep)?;
        }
        if !opts.tuples_only {
            for (i, c) in batch.columns.iter().enumerate() {
                if i > 0 {
                    out.write_all(fsep)?;
                }
                out.write_all(c.name.as_bytes())?;
            }
            need_recordsep = true;
        }
    } else {
        need_recordsep = true;
    }
    let ncells = if ncols == 0 { 0 } else { batch.ncells() };
    for i in 0..ncells {
        if need_recordsep {
            out.write_all(rsep)?;
            need_recordsep = false;
        }
        out.write_all(batch.cell(i).as_bytes())?;
        if (i + 1) % ncols != 0 {
            out.write_all(fsep)?;
        } else {
            need_recordsep = true;
        }
    }
    if batch.stop_table {
        if !opts.tuples_only {
            for f in batch.footer_lines(opts) {
                if need_recordsep {
                    out.write_all(rsep)?;
                }
                out.write_all(f.as_bytes())?;
                need_recordsep = true;
            }
        }
        if need_recordsep {
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Unaligned expanded: `name|value` lines, records separated by an empty
/// record; no footer.
pub(crate) fn unaligned_vertical<W: Write>(
    out: &mut W,
    opts: &PrintOptions,
    batch: &Batch,
) -> io::Result<()> {
    let ncols = batch.columns.len();
    let fsep = opts.field_sep.as_bytes();
    let rsep = opts.record_sep.as_bytes();
    let mut need_recordsep = !batch.start_table;
    if let (Some(title), true, false) = (batch.title, batch.start_table, opts.tuples_only) {
        out.write_all(title.as_bytes())?;
        need_recordsep = true;
    }
    let ncells = if ncols == 0 { 0 } else { batch.ncells() };
    for i in 0..ncells {
        if need_recordsep {
            out.write_all(rsep)?;
            out.write_all(rsep)?;
            need_recordsep = false;
        }
        out.write_all(batch.columns[i % ncols].name.as_bytes())?;
        out.write_all(fsep)?;
        out.write_all(batch.cell(i).as_bytes())?;
        if (i + 1) % ncols != 0 {
            out.write_all(rsep)?;
        } else {
            need_recordsep = true;
        }
    }
    if batch.stop_table {
        if let (Some(footers), false) = (batch.footers, opts.tuples_only) {
            out.write_all(rsep)?;
            for f in footers {
                out.write_all(rsep)?;
                out.write_all(f.as_bytes())?;
            }
        }
        if need_recordsep {
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Writes one csv field, quoted when it holds the separator, a quote, CR or
/// LF, is exactly `\.`, or the separator is `\` or `.` (so no line can read as
/// COPY's end-of-data marker).
fn csv_field<W: Write>(out: &mut W, s: &str, sep: char) -> io::Result<()> {
    let quote =
        s.contains(sep) || s.contains(['\r', '\n', '"']) || s == "\\." || sep == '\\' || sep == '.';
    if !quote {
        return out.write_all(s.as_bytes());
    }
    out.write_all(b"\"")?;
    let mut rest = s;
    while let Some(k) = rest.find('"') {
        out.write_all(&rest.as_bytes()[..=k])?;
        out.write_all(b"\"")?;
        rest = &rest[k + 1..];
    }
    out.write_all(rest.as_bytes())?;
    out.write_all(b"\"")
}

fn write_sep<W: Write>(out: &mut W, sep: char) -> io::Result<()> {
    let mut buf = [0u8; 4];
    out.write_all(sep.encode_utf8(&mut buf).as_bytes())
}

/// Csv: header line (unless tuples only), then one line per row; never a
/// footer.
pub(crate) fn csv_text<W: Write>(
    out: &mut W,
    opts: &PrintOptions,
    batch: &Batch,
) -> io::Result<()> {
    let sep = opts.csv_field_sep;
    let ncols = batch.columns.len();
    if batch.start_table && !opts.tuples_only {
        for (i, c) in batch.columns.iter().enumerate() {
            if i > 0 {
                write_sep(out, sep)?;
            }
            csv_field(out, &c.name, sep)?;
        }
        out.write_all(b"\n")?;
    }
    let ncells = if ncols == 0 { 0 } else { batch.ncells() };
    for i in 0..ncells {
        csv_field(out, batch.cell(i), sep)?;
        if (i + 1) % ncols != 0 {
            write_sep(out, sep)?;
        } else {
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Csv expanded: one `name,value` line per cell.
pub(crate) fn csv_vertical<W: Write>(
    out: &mut W,
    opts: &PrintOptions,
    batch: &Batch,
) -> io::Result<()> {
    let sep = opts.csv_field_sep;
    let ncols = batch.columns.len();
    let ncells = if ncols == 0 { 0 } else { batch.ncells() };
    for i in 0..ncells {
        csv_field(out, &batch.columns[i % ncols].name, sep)?;
        write_sep(out, sep)?;
        csv_field(out, batch.cell(i), sep)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
