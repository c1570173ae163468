//! COPY: its data formats and its execution, below the session.
//!
//! The formats, independent of tables: the options ([`CopyOptions`],
//! checked as PostgreSQL's `ProcessCopyOptions` does), reading records
//! ([`read_record`] into a buffer, or in place with
//! [`reader::RecordReader`]) and splitting them into fields
//! ([`text::split`], [`csv::split`]), and writing rows
//! ([`text::write_field`], [`csv::write_field`]).
//!
//! The execution: [`load`] (COPY FROM: records to heap pages) and
//! [`unload`] (COPY TO: a table's tuples or a query's batches to text).
//! Both take what they need from the statement that runs them as explicit
//! values ([`CopyContext`], and the table its caller looked up and locked),
//! so they serve any client API; parsing the statement, resolving names,
//! the client's data stream and the transaction around the COPY are the
//! session's (`session::copy`).
//!
//! Invariants: a record is one logical line without its end-of-line bytes
//! (a CSV record may span several physical lines inside quotes, a text
//! record continues after a backslash-escaped newline); fields are handed
//! out as byte ranges into one reusable buffer, so splitting a record does
//! no allocation once the buffers have grown. NULL is recognised on the raw
//! field as PostgreSQL does: before de-escaping in text format, and only for
//! unquoted fields in CSV.

pub mod context;
pub mod csv;
pub mod load;
pub mod out_file;
pub mod reader;
pub mod text;
pub mod unload;

pub use context::{CopyContext, CopyProgress, ProgressFn};

use std::io::BufRead;

use heapdb_grammar::ast;

use crate::err;
use crate::error::{Error, Result};

/// The data format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// PostgreSQL's text format (tab-separated, backslash escapes).
    Text,
    /// Comma-separated values with quoting.
    Csv,
}

/// Which columns `FORCE_QUOTE` applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForceQuote {
    /// None (the default).
    None,
    /// `FORCE_QUOTE *`.
    All,
    /// The named columns.
    Columns(Vec<String>),
}

/// The checked options of one COPY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyOptions {
    /// Text or CSV.
    pub format: Format,
    /// The field separator (one byte).
    pub delimiter: u8,
    /// The string that stands for NULL.
    pub null: String,
    /// The first line holds column names.
    pub header: bool,
    /// CSV quote byte.
    pub quote: u8,
    /// CSV escape byte (the quote unless given).
    pub escape: u8,
    /// Load rows already frozen (table created or truncated in this
    /// transaction only).
    pub freeze: bool,
    /// CSV output: columns always quoted.
    pub force_quote: ForceQuote,
    /// CSV input: columns whose unquoted null string is not NULL.
    pub force_not_null: Vec<String>,
}

fn redundant() -> Error {
    err!(SyntaxError, "conflicting or redundant options")
}

fn one_byte(s: &str, what: &str) -> Result<u8> {
    match s.as_bytes() {
        [b] if b.is_ascii() => Ok(*b),
        _ => Err(err!(
            FeatureNotSupported,
            "COPY {what} must be a single one-byte character"
        )),
    }
}

impl CopyOptions {
    /// Checks `options` for a COPY FROM (`is_from`) or TO, with PostgreSQL's
    /// messages for each conflict.
    pub fn from_ast(options: &[ast::CopyOption], is_from: bool) -> Result<CopyOptions> {
        let mut format = None;
        let (mut delimiter, mut null, mut header, mut quote, mut escape, mut freeze) =
            (None, None, None, None, None, None);
        let (mut force_quote, mut force_not_null) = (None, None);
        for o in options {
            match o {
                ast::CopyOption::Format(f) => {
                    if format.is_some() {
                        return Err(redundant());
                    }
                    format = Some(match f {
                        ast::CopyFormat::Text => Format::Text,
                        ast::CopyFormat::Csv => Format::Csv,
                        _ => {
                            return Err(err!(
                                FeatureNotSupported,
                                "COPY format \"binary\" is not supported"
                            ))
                        }
                    });
                }
                ast::CopyOption::Delimiter(d) => set(&mut delimiter, d.clone())?,
                ast::CopyOption::Null(n) => set(&mut null, n.clone())?,
                ast::CopyOption::Header(h) => set(&mut header, *h)?,
                ast::CopyOption::Quote(q) => set(&mut quote, q.clone())?,
                ast::CopyOption::Escape(e) => set(&mut escape, e.clone())?,
                ast::CopyOption::Freeze(f) => set(&mut freeze, *f)?,
                ast::CopyOption::Encoding(e) => {
                    let norm = e.to_ascii_lowercase().replace(['-', '_'], "");
                    if norm != "utf8" && norm != "unicode" {
                        return Err(err!(
                            InvalidParameterValue,
                            "argument to option \"encoding\" must be a valid encoding name"
                        ));
                    }
                }
                ast::CopyOption::ForceQuote(cols) => set(
                    &mut force_quote,
                    if cols.is_empty() {
                        ForceQuote::All
                    } else {
                        ForceQuote::Columns(cols.clone())
                    },
                )?,
                ast::CopyOption::ForceNotNull(cols) => set(&mut force_not_null, cols.clone())?,
            }
        }
        let format = format.unwrap_or(Format::Text);
        let csv = format == Format::Csv;
        let delimiter = match delimiter {
            Some(d) => one_byte(&d, "delimiter")?,
            None if csv => b',',
            None => b'\t',
        };
        if delimiter == b'\n' || delimiter == b'\r' {
            return Err(err!(
                InvalidParameterValue,
                "COPY delimiter cannot be newline or carriage return"
            ));
        }
        let null = null.unwrap_or_else(|| if csv { String::new() } else { "\\N".into() });
        if null.contains(['\n', '\r']) {
            return Err(err!(
                InvalidParameterValue,
                "COPY null representation cannot use newline or carriage return"
            ));
        }
        if !csv && b"\\.abcdefghijklmnopqrstuvwxyz0123456789".contains(&delimiter) {
            return Err(err!(
                FeatureNotSupported,
                "COPY delimiter cannot be \"{}\"",
                delimiter as char
            ));
        }
        if !csv && quote.is_some() {
            return Err(err!(
                FeatureNotSupported,
                "COPY quote available only in CSV mode"
            ));
        }
        let quote = match quote {
            Some(q) => one_byte(&q, "quote")?,
            None => b'"',
        };
        if csv && delimiter == quote {
            return Err(err!(
                InvalidParameterValue,
                "COPY delimiter and quote must be different"
            ));
        }
        if !csv && escape.is_some() {
            return Err(err!(
                FeatureNotSupported,
                "COPY escape available only in CSV mode"
            ));
        }
        let escape = match escape {
            Some(e) => one_byte(&e, "escape")?,
            None => quote,
        };
        if !csv && force_quote.is_some() {
            return Err(err!(
                FeatureNotSupported,
                "COPY force quote available only in CSV mode"
            ));
        }
        if force_quote.is_some() && is_from {
            return Err(err!(
                FeatureNotSupported,
                "COPY force quote only available using COPY TO"
            ));
        }
        if !csv && force_not_null.is_some() {
            return Err(err!(
                FeatureNotSupported,
                "COPY force not null available only in CSV mode"
            ));
        }
        if force_not_null.is_some() && !is_from {
            return Err(err!(
                FeatureNotSupported,
                "COPY force not null only available using COPY FROM"
            ));
        }
        if null.as_bytes().contains(&delimiter) {
            return Err(err!(
                InvalidParameterValue,
                "COPY delimiter must not appear in the NULL specification"
            ));
        }
        if csv && null.as_bytes().contains(&quote) {
            return Err(err!(
                InvalidParameterValue,
                "CSV quote character must not appear in the NULL specification"
            ));
        }
        Ok(CopyOptions {
            format,
            delimiter,
            null,
            header: header.unwrap_or(false),
            quote,
            escape,
            freeze: freeze.unwrap_or(false),
            force_quote: force_quote.unwrap_or(ForceQuote::None),
            force_not_null: force_not_null.unwrap_or_default(),
        })
    }
}

fn set<T>(slot: &mut Option<T>, v: T) -> Result<()> {
    if slot.is_some() {
        return Err(redundant());
    }
    *slot = Some(v);
    Ok(())
}

/// Reads the next record into `line` (cleared first, end-of-line bytes
/// removed). Returns false at end of input. A text record goes on after a
/// backslash-escaped newline; a CSV record goes on while a quoted field is
/// open, and input that ends inside quotes is an error
/// (`unterminated CSV quoted field`). `lines` counts physical lines read.
pub fn read_record(
    input: &mut dyn BufRead,
    opts: &CopyOptions,
    line: &mut Vec<u8>,
) -> Result<bool> {
    line.clear();
    let mut in_quote = false;
    let mut scanned = 0;
    loop {
        let n = input.read_until(b'\n', line)?;
        if n == 0 {
            if line.is_empty() {
                return Ok(false);
            }
            if in_quote {
                return Err(err!(BadCopyFileFormat, "unterminated CSV quoted field"));
            }
            return Ok(true);
        }
        let ended = line.last() == Some(&b'\n');
        match opts.format {
            Format::Text => {
                // A newline escaped by an odd run of backslashes is data.
                let body = &line[..line.len() - usize::from(ended)];
                let run = body.iter().rev().take_while(|&&b| b == b'\\').count();
                if ended && run % 2 == 1 {
                    continue;
                }
            }
            Format::Csv => {
                in_quote = csv::scan_quotes(&line[scanned..], opts, in_quote);
                scanned = line.len();
                if in_quote {
                    if !ended {
                        return Err(err!(BadCopyFileFormat, "unterminated CSV quoted field"));
                    }
                    continue;
                }
            }
        }
        if ended {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        return Ok(true);
    }
}

/// One field of a split record: a byte range into the field buffer, or
/// NULL.
pub type Field = Option<(usize, usize)>;

/// The longest data shown in an error's CONTEXT (PostgreSQL's
/// `MAX_COPY_DATA_DISPLAY`); longer data is cut and ends in `...`.
pub const MAX_DISPLAY: usize = 100;

/// `s` cut for display in a CONTEXT line.
pub fn limit_display(s: &[u8]) -> String {
    let s = String::from_utf8_lossy(s);
    if s.len() <= MAX_DISPLAY {
        return s.into_owned();
    }
    let mut end = MAX_DISPLAY;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// The field bytes as UTF-8, with PostgreSQL's error for invalid bytes.
pub fn field_str(bytes: &[u8]) -> Result<&str> {
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.contains('\0') => Ok(s),
        Ok(_) => Err(err!(
            CharacterNotInRepertoire,
            "invalid byte sequence for encoding \"UTF8\": 0x00"
        )),
        Err(e) => {
            let bad = &bytes[e.valid_up_to()..];
            let n = e.error_len().unwrap_or(bad.len()).min(bad.len());
            let hex: Vec<String> = bad[..n].iter().map(|b| format!("0x{b:02x}")).collect();
            Err(err!(
                CharacterNotInRepertoire,
                "invalid byte sequence for encoding \"UTF8\": {}",
                hex.join(" ")
            ))
        }
    }
}

#[cfg(test)]
mod tests;
