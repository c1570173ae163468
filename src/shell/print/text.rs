//! Display width and line splitting of one cell, as psql's `pg_wcssize` /
//! `pg_wcsformat` (src/fe_utils/mbprint.c) do for UTF-8.
//!
//! A cell's text is shown, not printed raw: a newline starts a new display
//! line, a tab becomes spaces up to the next multiple of 8 columns, a carriage
//! return shows as `\r`, other ASCII control characters as `\xHH` (upper-case
//! hex), and C1 control characters (U+0080..U+009F) as `\uHHHH`. Every other
//! character counts its terminal display width: 2 for wide East Asian
//! characters, 0 for combining marks, 1 otherwise.
//!
//! Invariant: [`measure`] and [`format_into`] agree: the widest line of
//! `format_into`'s output is `measure`'s width, and it yields `measure`'s
//! number of lines. The aligned printers size columns with the first and print
//! with the second.

use std::fmt::Write as _;
use unicode_width::UnicodeWidthChar;

/// What a character becomes on screen.
enum Shown {
    /// A line break.
    Newline,
    /// A tab, expanded to the next multiple of 8 columns.
    Tab,
    /// An escape text such as `\r`, `\x01` or `\u0085` (its display width is
    /// its length).
    Escape,
    /// The character itself, with this display width.
    Plain(usize),
}

fn classify(c: char) -> Shown {
    match c {
        '\n' => Shown::Newline,
        '\t' => Shown::Tab,
        '\r' => Shown::Escape,
        c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => Shown::Escape,
        c => Shown::Plain(c.width().unwrap_or(0)),
    }
}

fn escape_text(c: char, out: &mut String) {
    match c {
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x80 => {
            write!(out, "\\x{:02X}", c as u32).expect("writing to a String cannot fail")
        }
        c => write!(out, "\\u{:04X}", c as u32).expect("writing to a String cannot fail"),
    }
}

fn escape_width(c: char) -> usize {
    match c {
        '\r' => 2,
        c if (c as u32) < 0x80 => 4,
        _ => 6,
    }
}

/// True when every byte is printable ASCII: then the text is one line whose
/// width is its length, and the slow path below is not needed (the common
/// case for numbers and plain words).
#[inline]
fn is_plain_ascii(s: &str) -> bool {
    s.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// The display width of the widest line of `s` and its number of lines.
pub fn measure(s: &str) -> (usize, usize) {
    if is_plain_ascii(s) {
        return (s.len(), 1);
    }
    let (mut width, mut line, mut lines) = (0, 0, 1);
    for c in s.chars() {
        match classify(c) {
            Shown::Newline => {
                width = width.max(line);
                line = 0;
                lines += 1;
            }
            Shown::Tab => line += 8 - line % 8,
            Shown::Escape => line += escape_width(c),
            Shown::Plain(w) => line += w,
        }
    }
    (width.max(line), lines)
}

/// One display line of a formatted cell: a byte range of the formatted text
/// and its display width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    /// Start byte in the formatted text.
    pub start: usize,
    /// End byte (exclusive) in the formatted text.
    pub end: usize,
    /// Display width of the line.
    pub width: usize,
}

/// A cell formatted for display: its shown text and its lines.
#[derive(Debug, Default)]
pub struct Formatted {
    /// The shown text, lines concatenated without separators.
    pub text: String,
    /// The display lines, at least one.
    pub lines: Vec<Line>,
}

impl Formatted {
    /// The text of line `i`.
    pub fn line(&self, i: usize) -> &str {
        let l = self.lines[i];
        &self.text[l.start..l.end]
    }
}

/// Formats `s` into `out` (reusing its buffers) as psql's `pg_wcsformat`.
pub fn format_into(s: &str, out: &mut Formatted) {
    out.text.clear();
    out.lines.clear();
    if is_plain_ascii(s) {
        out.text.push_str(s);
        out.lines.push(Line {
            start: 0,
            end: s.len(),
            width: s.len(),
        });
        return;
    }
    let (mut start, mut width) = (0, 0);
    for c in s.chars() {
        match classify(c) {
            Shown::Newline => {
                out.lines.push(Line {
                    start,
                    end: out.text.len(),
                    width,
                });
                start = out.text.len();
                width = 0;
            }
            Shown::Tab => loop {
                out.text.push(' ');
                width += 1;
                if width % 8 == 0 {
                    break;
                }
            },
            Shown::Escape => {
                escape_text(c, &mut out.text);
                width += escape_width(c);
            }
            Shown::Plain(w) => {
                out.text.push(c);
                width += w;
            }
        }
    }
    out.lines.push(Line {
        start,
        end: out.text.len(),
        width,
    });
}

/// The display width of `s` taken as one line (header lines, record labels).
pub fn width(s: &str) -> usize {
    if is_plain_ascii(s) {
        return s.len();
    }
    s.chars()
        .map(|c| match classify(c) {
            Shown::Plain(w) => w,
            Shown::Escape => escape_width(c),
            Shown::Tab => 8,
            Shown::Newline => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<(String, usize)> {
        let mut f = Formatted::default();
        format_into(s, &mut f);
        (0..f.lines.len())
            .map(|i| (f.line(i).to_string(), f.lines[i].width))
            .collect()
    }

    #[test]
    fn plain_ascii_is_one_line_of_its_length() {
        assert_eq!(measure("hello"), (5, 1));
        assert_eq!(lines("hello"), vec![("hello".into(), 5)]);
        assert_eq!(measure(""), (0, 1));
    }

    #[test]
    fn newlines_split_and_width_is_the_widest_line() {
        assert_eq!(measure("a\nbbb\n"), (3, 3));
        assert_eq!(
            lines("a\nbbb\n"),
            vec![("a".into(), 1), ("bbb".into(), 3), ("".into(), 0)]
        );
    }

    #[test]
    fn control_characters_are_escaped_as_psql_shows_them() {
        assert_eq!(lines("a\tb"), vec![("a       b".into(), 9)]);
        assert_eq!(lines("x\ry"), vec![("x\\ry".into(), 4)]);
        assert_eq!(lines("\u{1}\u{7f}"), vec![("\\x01\\x7F".into(), 8)]);
        assert_eq!(lines("\u{85}"), vec![("\\u0085".into(), 6)]);
        assert_eq!(measure("a\tb"), (9, 1));
    }

    #[test]
    fn wide_and_combining_characters_count_display_columns() {
        assert_eq!(measure("日本"), (4, 1));
        assert_eq!(measure("e\u{301}"), (1, 1));
        assert_eq!(width("日本語"), 6);
    }
}
