//! The aligned table format (psql's `print_aligned_text`, ASCII line style,
//! no `wrapped` format).
//!
//! Layout rules that make the bytes psql's:
//! - each column is as wide as its widest header or value line (display
//!   width, see [`super::text`]);
//! - headers are centred, the odd space going to the right, and every header
//!   cell is followed by one space (or `+` when the header continues on the
//!   next line), so the header line ends with a space;
//! - data rows pad every cell but a left-aligned last one (no trailing
//!   spaces), and a value that continues on the next line gets a `+` in the
//!   gap after it;
//! - border 1 separates columns with ` | ` and has a `-+-` rule under the
//!   header; border 2 adds the outer frame; border 0 separates with a space;
//! - the footer `(N rows)` and a blank line end the table.

use std::io::{self, Write};

use super::text::{self, Formatted};
use super::{pad, repeat, Align, Batch, Expanded, PrintOptions};

/// Where a horizontal rule is drawn (all look the same in ASCII style).
#[derive(Clone, Copy)]
enum Rule {
    Top,
    Middle,
    Bottom,
}

fn horizontal_line<W: Write>(
    out: &mut W,
    widths: &[usize],
    border: u8,
    _pos: Rule,
) -> io::Result<()> {
    match border {
        1 => out.write_all(b"-")?,
        2 => out.write_all(b"+-")?,
        _ => {}
    }
    for (i, &w) in widths.iter().enumerate() {
        repeat(out, "-", w)?;
        if i + 1 < widths.len() {
            out.write_all(if border == 0 { b" " } else { b"-+-" })?;
        }
    }
    match border {
        1 => out.write_all(b"-")?,
        2 => out.write_all(b"-+")?,
        _ => {}
    }
    out.write_all(b"\n")
}

/// Prints one batch as an aligned table (or hands it to the expanded printer
/// under `\x auto` when it is wider than the terminal).
pub(crate) fn print<W: Write>(out: &mut W, opts: &PrintOptions, batch: &Batch) -> io::Result<()> {
    let border = opts.border.min(2);
    let ncols = batch.columns.len();

    // Column widths from the headers and every cell of this batch (or of
    // the whole result when it was spooled).
    let mut width = vec![0usize; ncols];
    let mut width_header = vec![0usize; ncols];
    for (i, c) in batch.columns.iter().enumerate() {
        let (w, _) = text::measure(&c.name);
        width[i] = w;
        width_header[i] = w;
    }
    if let Some(all) = batch.widths {
        // A chunk of a spooled result: the widths of every row.
        for (w, &v) in width.iter_mut().zip(&all.cols) {
            *w = (*w).max(v);
        }
    } else if ncols > 0 {
        for i in 0..batch.ncells() {
            let (w, _) = text::measure(batch.cell(i));
            let col = i % ncols;
            if w > width[col] {
                width[col] = w;
            }
        }
    }

    let frame = match border {
        0 => ncols,
        1 => (ncols * 3).saturating_sub(1),
        _ => ncols * 3 + 1,
    };
    let width_total = frame + width.iter().sum::<usize>();
    let total_header_width = frame + width_header.iter().sum::<usize>();
    if opts.expanded == Expanded::Auto
        && opts.columns > 0
        && ncols > 1
        && (opts.columns < total_header_width || opts.columns < width_total)
    {
        return super::expanded::print(out, opts, batch);
    }

    if batch.start_table && !opts.tuples_only {
        if let Some(title) = batch.title {
            // Centred over the table, or flush left when it is wider.
            let (w, _) = text::measure(title);
            if w < width_total {
                pad(out, (width_total - w) / 2)?;
            }
            out.write_all(title.as_bytes())?;
            out.write_all(b"\n")?;
        }
        print_header(out, batch, &width, border)?;
    }

    let mut cells: Vec<Formatted> = (0..ncols).map(|_| Formatted::default()).collect();
    let mut curr = vec![0usize; ncols];
    let mut newline_mark = vec![false; ncols];
    // psql walks the cells: a result without columns prints no data lines.
    let nrows = if ncols == 0 { 0 } else { batch.nrows() };
    for row in 0..nrows {
        for j in 0..ncols {
            text::format_into(batch.cell(row * ncols + j), &mut cells[j]);
            curr[j] = 0;
        }
        // One display line per iteration; multi-line values take several.
        loop {
            let mut more_lines = false;
            if border == 2 {
                out.write_all(b"|")?;
            }
            for j in 0..ncols {
                let finalspaces = border == 2 || j + 1 < ncols;
                let align = batch.columns[j].align;
                if border != 0 {
                    // The left mark after a newline is a space in ASCII style.
                    out.write_all(b" ")?;
                }
                let mut chars = width[j];
                if curr[j] < cells[j].lines.len() {
                    let line = cells[j].lines[curr[j]];
                    chars = line.width;
                    if align == Align::Right {
                        pad(out, width[j] - line.width)?;
                    }
                    out.write_all(cells[j].line(curr[j]).as_bytes())?;
                    curr[j] += 1;
                    if curr[j] < cells[j].lines.len() {
                        more_lines = true;
                    }
                } else if finalspaces {
                    pad(out, width[j])?;
                }
                newline_mark[j] = curr[j] < cells[j].lines.len() && curr[j] != 0;
                if align == Align::Left && (finalspaces || newline_mark[j]) {
                    pad(out, width[j] - chars)?;
                }
                if newline_mark[j] {
                    out.write_all(b"+")?;
                } else if finalspaces {
                    out.write_all(b" ")?;
                }
                if border != 0 && j + 1 < ncols {
                    out.write_all(b"|")?;
                }
            }
            if border == 2 {
                out.write_all(b"|")?;
            }
            out.write_all(b"\n")?;
            if !more_lines {
                break;
            }
        }
    }

    if batch.stop_table {
        if border == 2 {
            horizontal_line(out, &width, border, Rule::Bottom)?;
        }
        if !opts.tuples_only {
            for f in batch.footer_lines(opts) {
                out.write_all(f.as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The header lines (centred names, `+` where a name continues) and the rule
/// under them.
fn print_header<W: Write>(
    out: &mut W,
    batch: &Batch,
    width: &[usize],
    border: u8,
) -> io::Result<()> {
    let ncols = batch.columns.len();
    if border == 2 {
        horizontal_line(out, width, border, Rule::Top)?;
    }
    let headers: Vec<Formatted> = batch
        .columns
        .iter()
        .map(|c| {
            let mut f = Formatted::default();
            text::format_into(&c.name, &mut f);
            f
        })
        .collect();
    let mut done = vec![false; ncols];
    let mut remaining = ncols;
    let mut line = 0;
    while remaining > 0 {
        if border == 2 {
            out.write_all(b"|")?;
        }
        for i in 0..ncols {
            if border != 0 {
                out.write_all(b" ")?;
            }
            if !done[i] {
                let l = headers[i].lines[line];
                let spare = width[i] - l.width;
                pad(out, spare / 2)?;
                out.write_all(headers[i].line(line).as_bytes())?;
                pad(out, spare.div_ceil(2))?;
                if line + 1 >= headers[i].lines.len() {
                    remaining -= 1;
                    done[i] = true;
                }
            } else {
                pad(out, width[i])?;
            }
            // ASCII style draws the right-hand mark even at border 0.
            out.write_all(if done[i] { b" " } else { b"+" })?;
            if border != 0 && i + 1 < ncols {
                out.write_all(b"|")?;
            }
        }
        line += 1;
        if border == 2 {
            out.write_all(b"|")?;
        }
        out.write_all(b"\n")?;
    }
    horizontal_line(out, width, border, Rule::Middle)
}
