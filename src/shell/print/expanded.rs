//! The expanded aligned format (`\x on`; psql's `print_aligned_vertical`).
//!
//! Each row becomes a record: a rule line `-[ RECORD n ]-----` and then one
//! line per column, `name | value`, names padded to the widest name. Values
//! with newlines continue on the next lines with `+` marks. Records are
//! numbered across batches. The `(N rows)` footer is printed only for an
//! empty result, as psql does.

use std::io::{self, Write};

use super::text::{self, Formatted};
use super::{pad, Batch, PrintOptions};

/// One record header or frame line (psql's `print_aligned_vertical_line`).
fn record_line<W: Write>(
    out: &mut W,
    border: u8,
    record: u64,
    hwidth: usize,
    dwidth: usize,
) -> io::Result<()> {
    let fill = if border > 0 { "-" } else { " " };
    match border {
        2 => out.write_all(b"+-")?,
        1 => out.write_all(b"-")?,
        _ => {}
    }
    let mut reclen: isize = 0;
    if record > 0 {
        let label = if border == 0 {
            format!("* Record {record}")
        } else {
            format!("[ RECORD {record} ]")
        };
        out.write_all(label.as_bytes())?;
        reclen = label.len() as isize;
    }
    if border != 2 {
        reclen += 1;
    }
    for _ in reclen.max(0) as usize..hwidth {
        out.write_all(fill.as_bytes())?;
    }
    reclen -= hwidth as isize;
    let marks: &[&str] = if border > 0 { &["-", "+", "-"] } else { &[" "] };
    for m in marks {
        if reclen <= 0 {
            out.write_all(m.as_bytes())?;
        }
        reclen -= 1;
    }
    for _ in reclen.max(0) as usize..dwidth {
        out.write_all(fill.as_bytes())?;
    }
    if border == 2 {
        out.write_all(b"-+")?;
    }
    out.write_all(b"\n")
}

/// Prints one batch in expanded layout.
pub(crate) fn print<W: Write>(out: &mut W, opts: &PrintOptions, batch: &Batch) -> io::Result<()> {
    let border = opts.border.min(2);
    let ncols = batch.columns.len();
    let ncells = if ncols == 0 { 0 } else { batch.ncells() };

    if ncells == 0 && batch.start_table && batch.stop_table {
        if !opts.tuples_only {
            for f in batch.footer_lines(opts) {
                out.write_all(f.as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
        return out.write_all(b"\n");
    }
    if batch.start_table && !opts.tuples_only {
        if let Some(title) = batch.title {
            out.write_all(title.as_bytes())?;
            out.write_all(b"\n")?;
        }
    }

    let (mut hwidth, mut hmultiline) = (0, false);
    for c in batch.columns {
        let (w, h) = text::measure(&c.name);
        hwidth = hwidth.max(w);
        hmultiline |= h > 1;
    }
    let (mut dwidth, mut dmultiline) = (0, false);
    if let Some(all) = batch.widths {
        // A chunk of a spooled result: the widths of every row.
        (dwidth, dmultiline) = (all.data, all.data_multiline);
    } else {
        for i in 0..ncells {
            let (w, h) = text::measure(batch.cell(i));
            dwidth = dwidth.max(w);
            dmultiline |= h > 1;
        }
    }

    // psql 15 widens the data column for the record header lines only in
    // its `wrapped` format, which heapdb does not have: widths stay native.

    let mut record = batch.prior_records + 1;
    let mut header = Formatted::default();
    let mut data = Formatted::default();
    for i in 0..ncells {
        if i % ncols == 0 {
            if !opts.tuples_only {
                record_line(out, border, record, hwidth, dwidth)?;
                record += 1;
            } else if i != 0 || !batch.start_table || border == 2 {
                record_line(out, border, 0, hwidth, dwidth)?;
            }
        }
        text::format_into(&batch.columns[i % ncols].name, &mut header);
        text::format_into(batch.cell(i), &mut data);
        let (mut hline, mut dline) = (0, 0);
        let (mut hcomplete, mut dcomplete) = (false, false);
        while !dcomplete || !hcomplete {
            if border == 2 {
                out.write_all(b"|")?;
            }
            if !hcomplete {
                if border == 2 {
                    out.write_all(b" ")?;
                }
                let l = header.lines[hline];
                out.write_all(header.line(hline).as_bytes())?;
                pad(out, hwidth - l.width)?;
                let last = hline + 1 >= header.lines.len();
                if border > 0 || hmultiline {
                    out.write_all(if last { b" " } else { b"+" })?;
                }
                if last {
                    hcomplete = true;
                } else {
                    hline += 1;
                }
            } else {
                let mut w = hwidth + usize::from(border);
                if border == 0 && hmultiline {
                    w += 1;
                }
                // psql prints "%*s" of " ": at least one space.
                pad(out, w.max(1))?;
            }
            if border > 0 {
                out.write_all(b"|")?;
            }
            if !dcomplete {
                out.write_all(b" ")?;
                let l = data.lines[dline];
                out.write_all(data.line(dline).as_bytes())?;
                let spare = dwidth.saturating_sub(l.width);
                if dline + 1 < data.lines.len() {
                    if border > 1 || dmultiline {
                        pad(out, spare)?;
                        out.write_all(b"+")?;
                    }
                    dline += 1;
                } else {
                    if border > 1 {
                        pad(out, spare)?;
                        out.write_all(b" ")?;
                    }
                    dcomplete = true;
                }
                if border == 2 {
                    out.write_all(b"|")?;
                }
                out.write_all(b"\n")?;
            } else if border < 2 {
                out.write_all(b"\n")?;
            } else {
                pad(out, dwidth)?;
                out.write_all(b"  |\n")?;
            }
        }
    }

    if batch.stop_table {
        if border == 2 {
            record_line(out, border, 0, hwidth, dwidth)?;
        }
        // Only given footers: records are numbered, `(N rows)` would repeat.
        if let (Some(footers), false) = (batch.footers, opts.tuples_only) {
            if border < 2 {
                out.write_all(b"\n")?;
            }
            for f in footers {
                out.write_all(f.as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}
