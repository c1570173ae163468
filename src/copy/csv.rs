//! Comma-separated values as PostgreSQL reads and writes them: fields are
//! quoted when they hold the delimiter, the quote, a newline or a carriage
//! return, or equal the NULL string; inside quotes the escape byte (the
//! quote by default, so `""`) makes the next quote or escape literal. An
//! unquoted field equal to the NULL string (empty by default) is NULL; a
//! quoted one never is, so `""` is the empty string.

use super::{CopyOptions, Field};

/// Whether a quoted field is still open after `bytes`, given it was open
/// before them (`in_quote`).
pub fn scan_quotes(bytes: &[u8], opts: &CopyOptions, mut in_quote: bool) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if in_quote {
            if c == opts.escape
                && opts.escape != opts.quote
                && i + 1 < bytes.len()
                && (bytes[i + 1] == opts.quote || bytes[i + 1] == opts.escape)
            {
                i += 2;
                continue;
            }
            if c == opts.quote {
                in_quote = false;
            }
        } else if c == opts.quote {
            in_quote = true;
        }
        i += 1;
    }
    in_quote
}

/// Splits a complete record into fields (see the module doc): bytes into
/// `buf`, ranges or NULL into `fields` (both cleared first). `not_null[k]`
/// keeps field `k` from being NULL (FORCE_NOT_NULL).
pub fn split(
    line: &[u8],
    opts: &CopyOptions,
    not_null: &[bool],
    buf: &mut Vec<u8>,
    fields: &mut Vec<Field>,
) {
    buf.clear();
    fields.clear();
    let null = opts.null.as_bytes();
    let mut i = 0;
    loop {
        let raw_start = i;
        let start = buf.len();
        let mut quoted = false;
        let mut in_quote = false;
        while i < line.len() {
            let c = line[i];
            if in_quote {
                if c == opts.escape
                    && i + 1 < line.len()
                    && (line[i + 1] == opts.quote || line[i + 1] == opts.escape)
                {
                    buf.push(line[i + 1]);
                    i += 2;
                    continue;
                }
                if c == opts.quote {
                    in_quote = false;
                } else {
                    buf.push(c);
                }
            } else if c == opts.delimiter {
                break;
            } else if c == opts.quote {
                in_quote = true;
                quoted = true;
            } else {
                buf.push(c);
            }
            i += 1;
        }
        let k = fields.len();
        if !quoted && &line[raw_start..i] == null && !not_null.get(k).copied().unwrap_or(false) {
            buf.truncate(start);
            fields.push(None);
        } else {
            fields.push(Some((start, buf.len())));
        }
        if i >= line.len() {
            return;
        }
        i += 1;
    }
}

/// Appends `value` as PostgreSQL's `CopyAttributeOutCSV` does: quoted when
/// `force`, when it equals the NULL string, when it is `\.` alone on the
/// line (`single`: the only column), or when it holds the delimiter, the
/// quote, CR or LF.
pub fn write_field(value: &[u8], opts: &CopyOptions, force: bool, single: bool, out: &mut Vec<u8>) {
    let quote = force
        || value == opts.null.as_bytes()
        || (single && value == b"\\.")
        || value
            .iter()
            .any(|&c| c == opts.delimiter || c == opts.quote || c == b'\n' || c == b'\r');
    if !quote {
        out.extend_from_slice(value);
        return;
    }
    out.push(opts.quote);
    for &c in value {
        if c == opts.quote || c == opts.escape {
            out.push(opts.escape);
        }
        out.push(c);
    }
    out.push(opts.quote);
}
