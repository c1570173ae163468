//! Reading COPY records in place: [`RecordReader`] hands out each record
//! as a slice of the input's own buffer when the record lies wholly inside
//! it (nearly always, with a large `BufReader`), and copies only the rare
//! record that straddles the end of the buffer.
//!
//! A record is what [`super::read_record`] defines: one logical line
//! without its end-of-line bytes (`\n`, or `\r\n`); a text record goes on
//! after a newline escaped by an odd run of backslashes, a CSV record while
//! a quoted field is open, and input that ends inside quotes is an error.
//! The two readers give the same records for the same input (unit tests
//! below feed both byte by byte and in one piece).
//!
//! Consumption is exact: a record's bytes are consumed from the input when
//! the next record is asked for, or when the reader is dropped, never
//! more. So `COPY ... FROM STDIN` stops right after the `\.` line, and
//! whatever follows stays in the client's stream.

use std::io::BufRead;

use super::{csv, CopyOptions, Format};
use crate::err;
use crate::error::Result;

/// Reads records from a [`BufRead`] without copying them (see the module
/// doc).
pub struct RecordReader<'a> {
    input: &'a mut dyn BufRead,
    opts: &'a CopyOptions,
    /// Bytes of the input's buffer that the last in-place record used:
    /// consumed at the next call (or on drop).
    pending: usize,
    /// A record that straddled the input's buffer, assembled here.
    carry: Vec<u8>,
    /// Bytes consumed from the input so far.
    consumed: u64,
}

impl<'a> RecordReader<'a> {
    /// A reader of `input` in the format of `opts`.
    pub fn new(input: &'a mut dyn BufRead, opts: &'a CopyOptions) -> RecordReader<'a> {
        RecordReader {
            input,
            opts,
            pending: 0,
            carry: Vec::new(),
            consumed: 0,
        }
    }

    /// Input bytes read so far, the current record's included.
    pub fn bytes(&self) -> u64 {
        self.consumed + self.pending as u64
    }

    /// What was read of a record that failed (for an error's CONTEXT
    /// line): the bytes gathered when [`RecordReader::next`] returned an
    /// error.
    pub fn partial(&self) -> &[u8] {
        &self.carry
    }

    fn consume(&mut self, n: usize) {
        self.input.consume(n);
        self.consumed += n as u64;
    }

    /// Whether the physical line ending the record so far, `line` (without
    /// its `\n`), ends the record: in text, unless the newline is escaped;
    /// in CSV, unless a quoted field is still open after `scan` (that
    /// physical line, `\n` included), given the state `in_quote` before it.
    fn ends(opts: &CopyOptions, line: &[u8], scan: &[u8], in_quote: &mut bool) -> bool {
        match opts.format {
            Format::Text => line.iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 0,
            Format::Csv => {
                *in_quote = csv::scan_quotes(scan, opts, *in_quote);
                !*in_quote
            }
        }
    }

    /// The next record, or `None` at the end of the input.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<&[u8]>> {
        let pending = std::mem::take(&mut self.pending);
        self.consume(pending);
        self.carry.clear();
        let mut in_quote = false;
        // Start of the physical line being looked at, within `carry`.
        let mut line_start = 0;
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                if self.carry.is_empty() {
                    return Ok(None);
                }
                // The last line has no newline: it is kept as it is (a
                // `\r` before the end stays, as `read_record` keeps it).
                if self.opts.format == Format::Csv {
                    let rest = &self.carry[line_start..];
                    if csv::scan_quotes(rest, self.opts, in_quote) {
                        return Err(err!(BadCopyFileFormat, "unterminated CSV quoted field"));
                    }
                }
                return Ok(Some(&self.carry));
            }
            let Some(nl) = memchr::memchr(b'\n', buf) else {
                let n = buf.len();
                self.carry.extend_from_slice(buf);
                self.consume(n);
                continue;
            };
            if self.carry.is_empty() {
                // The common case: the whole record is in the buffer.
                let mut q = in_quote;
                if Self::ends(self.opts, &buf[..nl], &buf[..=nl], &mut q) {
                    self.pending = nl + 1;
                    let end = if nl > 0 && buf[nl - 1] == b'\r' {
                        nl - 1
                    } else {
                        nl
                    };
                    // Borrowed again: `fill_buf` returns the same bytes
                    // until they are consumed.
                    let buf = self.input.fill_buf()?;
                    return Ok(Some(&buf[..end]));
                }
                in_quote = q;
                self.carry.extend_from_slice(&buf[..=nl]);
                self.consume(nl + 1);
                line_start = self.carry.len();
                continue;
            }
            self.carry.extend_from_slice(&buf[..=nl]);
            self.consume(nl + 1);
            let len = self.carry.len();
            if Self::ends(
                self.opts,
                &self.carry[..len - 1],
                &self.carry[line_start..],
                &mut in_quote,
            ) {
                self.carry.pop();
                if self.carry.last() == Some(&b'\r') {
                    self.carry.pop();
                }
                return Ok(Some(&self.carry));
            }
            line_start = len;
        }
    }
}

impl Drop for RecordReader<'_> {
    fn drop(&mut self) {
        // The last record handed out is consumed: the input resumes after it.
        let pending = std::mem::take(&mut self.pending);
        self.consume(pending);
    }
}

/// The text-format records of `chunk`, a slice holding whole records
/// (COPY's parallel loader cuts its chunks after a record's end): the
/// records [`super::read_record`] reads from the same bytes, each a slice
/// of `chunk` (a record with an escaped newline is one slice too).
pub struct TextRecords<'a> {
    rest: &'a [u8],
}

impl<'a> TextRecords<'a> {
    /// The records of `chunk`.
    pub fn new(chunk: &'a [u8]) -> TextRecords<'a> {
        TextRecords { rest: chunk }
    }
}

impl<'a> Iterator for TextRecords<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let rest = self.rest;
        let mut from = 0;
        while let Some(i) = memchr::memchr(b'\n', &rest[from..]) {
            let nl = from + i;
            // A newline after an odd run of backslashes is data.
            if rest[..nl].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 0 {
                self.rest = &rest[nl + 1..];
                let end = if nl > 0 && rest[nl - 1] == b'\r' {
                    nl - 1
                } else {
                    nl
                };
                return Some(&rest[..end]);
            }
            from = nl + 1;
        }
        // The last record has no newline: kept as it is.
        self.rest = &[];
        Some(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heapdb_grammar::ast::{CopyFormat, CopyOption};
    use std::io::BufReader;

    fn opts(csv: bool) -> CopyOptions {
        let o = if csv {
            vec![CopyOption::Format(CopyFormat::Csv)]
        } else {
            vec![]
        };
        CopyOptions::from_ast(&o, true).expect("valid options")
    }

    /// Records by `read_record`, or its error.
    fn by_read_record(input: &[u8], o: &CopyOptions) -> (Vec<Vec<u8>>, Option<String>) {
        let mut r = BufReader::with_capacity(3, input);
        let (mut out, mut line) = (Vec::new(), Vec::new());
        loop {
            match super::super::read_record(&mut r, o, &mut line) {
                Ok(true) => out.push(line.clone()),
                Ok(false) => return (out, None),
                Err(e) => return (out, Some(format!("{}|{:?}", e.message, line))),
            }
        }
    }

    /// Records by `RecordReader` over a buffer of `cap` bytes.
    fn by_reader(input: &[u8], o: &CopyOptions, cap: usize) -> (Vec<Vec<u8>>, Option<String>) {
        let mut r = BufReader::with_capacity(cap, input);
        let mut rr = RecordReader::new(&mut r, o);
        let mut out = Vec::new();
        loop {
            match rr.next() {
                Ok(Some(rec)) => out.push(rec.to_vec()),
                Ok(None) => {
                    assert_eq!(rr.bytes(), input.len() as u64);
                    return (out, None);
                }
                Err(e) => return (out, Some(format!("{}|{:?}", e.message, rr.partial()))),
            }
        }
    }

    #[test]
    fn same_records_as_read_record() {
        let inputs: &[&[u8]] = &[
            b"",
            b"a\tb\n",
            b"a\tb",
            b"a\r\nb\r\n",
            b"a\rb\r",
            b"\n\n\n",
            b"x\\\ny\nz\n",
            b"x\\\\\ny\n",
            b"x\\\\\\\ny\\\n\\\nq\n",
            b"\\.\nafter\n",
            b"1,\"a\nb\",c\nd\n",
            b"1,\"ab\n2,x\n",
            b"1,\"ab\"\"\n\"\nz",
            b"\"\"\"\n\"\n",
            b"end\\",
            b"long line with many bytes in it\tand more\n\\\\\n",
        ];
        for input in inputs {
            for csv in [false, true] {
                let o = opts(csv);
                let want = by_read_record(input, &o);
                for cap in [1, 2, 3, 5, 8, 64, 4096] {
                    assert_eq!(
                        by_reader(input, &o, cap),
                        want,
                        "input {:?}, csv {csv}, buffer {cap}",
                        String::from_utf8_lossy(input)
                    );
                }
            }
        }
    }

    #[test]
    fn text_records_of_a_slice_are_read_records() {
        let o = opts(false);
        for input in [
            &b""[..],
            b"a\tb\n",
            b"a\tb",
            b"a\r\nb\r\n",
            b"a\rb\r",
            b"\n\n\n",
            b"x\\\ny\nz\n",
            b"x\\\\\ny\n",
            b"x\\\\\\\ny\\\n\\\nq\n",
            b"end\\",
            b"x\\\n",
            b"\\.\nafter\n",
        ] {
            let got: Vec<Vec<u8>> = TextRecords::new(input).map(|r| r.to_vec()).collect();
            assert_eq!(
                got,
                by_read_record(input, &o).0,
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn consumes_exactly_the_records_read() {
        let o = opts(false);
        let data = b"1\n\\.\nnot data\n";
        let mut r = BufReader::with_capacity(64, &data[..]);
        {
            let mut rr = RecordReader::new(&mut r, &o);
            assert_eq!(rr.next().unwrap(), Some(&b"1"[..]));
            assert_eq!(rr.next().unwrap(), Some(&b"\\."[..]));
        }
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut r, &mut rest).unwrap();
        assert_eq!(rest, "not data\n");
    }
}
