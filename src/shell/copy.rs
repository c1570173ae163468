//! The shell's side of COPY: `COPY ... FROM STDIN` / `TO STDOUT` with the
//! shell's input and output, and `\copy` with client-side files.
//!
//! psql's rules, checked side by side with psql 15:
//! - `COPY ... FROM STDIN` reads data lines from where the statement came
//!   from (the script, piped stdin, or the prompt with `>> `) up to a line
//!   `\.` or the end of input, in text and CSV alike. `-c` reads the
//!   process's standard input.
//! - The data is consumed only once the COPY asks for it: a COPY that fails
//!   before (unknown table, bad option) leaves the data lines to be read as
//!   SQL, as psql does. A COPY that fails in the data still consumes it up
//!   to `\.`, and its error is prefixed with the number of that line.
//! - `COPY ... TO STDOUT` writes to the query output (`\o`) and prints no
//!   command tag; `\copy ... to 'file'` prints `COPY n`.
//! - `\copy` rewrites itself to `COPY ... FROM STDIN` / `TO STDOUT` and runs
//!   with the named file (relative to the shell's working directory),
//!   `stdin`/`stdout` (the script's input / the query output), or
//!   `pstdin`/`pstdout` (the process's standard input / output).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};

use super::input::{LineSplitter, ScriptReader};
use super::report::{format_error, Locus};
use super::run::{Flow, Runner, Source};
use super::script::io_message;
use crate::session::{CopyIo, OutFile};

/// The data of a `COPY ... FROM STDIN`, as the shell reads it.
pub trait CopyData: BufRead {
    /// Whether the COPY has asked for any data yet.
    fn started(&self) -> bool;
    /// Reads and drops what is left, up to `\.` or the end of input.
    fn skip_rest(&mut self) -> io::Result<()>;
    /// The line of the script reached, when the data comes from a script.
    fn lineno(&self) -> Option<u64>;
}

/// Which client stream a COPY statement uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientCopy {
    /// `COPY ... FROM STDIN`.
    In,
    /// `COPY ... TO STDOUT`.
    Out,
}

/// Whether `sql` is one COPY statement using the client's stream. Only
/// statements starting with the word `copy` are parsed.
pub fn client_copy(sql: &str) -> Option<ClientCopy> {
    let t = sql.trim_start();
    let head = t.get(..4)?;
    if !head.eq_ignore_ascii_case("copy")
        || t.as_bytes()
            .get(4)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        return None;
    }
    let stmt = heapdb_grammar::parse_one(sql).ok()?;
    let heapdb_grammar::ast::Statement::Copy(c) = stmt else {
        return None;
    };
    use heapdb_grammar::ast::{CopyDirection as D, CopyTarget as T};
    match (c.direction, c.target) {
        (D::From, T::Stdin | T::Stdout) => Some(ClientCopy::In),
        (D::To, T::Stdin | T::Stdout) => Some(ClientCopy::Out),
        _ => None,
    }
}

/// Where a script's lines come from, for meta-commands that use the query
/// buffer and for COPY data: a [`ScriptReader`] or the prompt.
pub trait LineSource {
    /// The statement splitter (the query buffer).
    fn splitter(&mut self) -> &mut LineSplitter;
    /// The next data line of a `COPY ... FROM STDIN`, without its line
    /// end; `None` after the line `\.` or at the end of input.
    fn copy_data_line(&mut self) -> io::Result<Option<&[u8]>>;
    /// The line number reached.
    fn lineno(&self) -> u64;
}

impl<R: Read> LineSource for ScriptReader<R> {
    fn splitter(&mut self) -> &mut LineSplitter {
        ScriptReader::splitter(self)
    }

    fn copy_data_line(&mut self) -> io::Result<Option<&[u8]>> {
        ScriptReader::copy_data_line(self)
    }

    fn lineno(&self) -> u64 {
        ScriptReader::lineno(self)
    }
}

/// Data lines read from a [`LineSource`], gathered into chunks of about
/// 64 KiB.
pub struct ScriptData<'a> {
    /// The script or prompt.
    reader: &'a mut dyn LineSource,
    /// Lines read and not yet consumed, each with `\n`.
    buf: Vec<u8>,
    /// Consumed bytes of `buf`.
    pos: usize,
    /// `\.` or the end of input was reached.
    done: bool,
    /// Some data was asked for.
    started: bool,
}

const DATA_CHUNK: usize = 64 << 10;

impl<'a> ScriptData<'a> {
    /// The data that follows the statement just read from `reader`.
    pub fn new(reader: &'a mut dyn LineSource) -> Self {
        ScriptData {
            reader,
            // Grown at the first read: made for every statement of a
            // script, read only by COPY ... FROM STDIN.
            buf: Vec::new(),
            pos: 0,
            done: false,
            started: false,
        }
    }
}

impl Read for ScriptData<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ScriptData<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.started = true;
        if self.pos == self.buf.len() && !self.done {
            self.buf.clear();
            self.buf.reserve(DATA_CHUNK + 4096);
            self.pos = 0;
            while self.buf.len() < DATA_CHUNK {
                match self.reader.copy_data_line()? {
                    Some(line) => {
                        self.buf.extend_from_slice(line);
                        self.buf.push(b'\n');
                    }
                    None => {
                        self.done = true;
                        break;
                    }
                }
            }
        }
        Ok(&self.buf[self.pos..])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.buf.len());
    }
}

impl CopyData for ScriptData<'_> {
    fn started(&self) -> bool {
        self.started
    }

    fn skip_rest(&mut self) -> io::Result<()> {
        self.pos = self.buf.len();
        while !self.done {
            if self.reader.copy_data_line()?.is_none() {
                self.done = true;
            }
        }
        Ok(())
    }

    fn lineno(&self) -> Option<u64> {
        Some(self.reader.lineno())
    }
}

/// Data from a stream that is not a script: the process's standard input
/// (`-c`, `pstdin`) or a file (`\copy ... from 'file'`). A line `\.` ends
/// it only for standard input (the engine stops there too).
pub struct StreamData<R: BufRead> {
    /// The stream.
    inner: R,
    /// Some data was asked for.
    started: bool,
}

impl<R: BufRead> StreamData<R> {
    /// Data read from `inner`.
    pub fn new(inner: R) -> Self {
        StreamData {
            inner,
            started: false,
        }
    }
}

impl<R: BufRead> Read for StreamData<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.started = true;
        self.inner.read(out)
    }
}

impl<R: BufRead> BufRead for StreamData<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.started = true;
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt)
    }
}

impl<R: BufRead> CopyData for StreamData<R> {
    fn started(&self) -> bool {
        self.started
    }

    fn skip_rest(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn lineno(&self) -> Option<u64> {
        None
    }
}

/// Where `\copy` reads or writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A client-side file.
    File(String),
    /// `stdin` / `stdout`: the script's input, the query output.
    Std,
    /// `pstdin` / `pstdout`: the process's standard input / output.
    Process,
}

/// A parsed `\copy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCopy {
    /// The COPY statement to run (`FROM STDIN` or `TO STDOUT`).
    pub sql: String,
    /// Load (`from`) or unload (`to`).
    pub direction: ClientCopy,
    /// The client-side end.
    pub endpoint: Endpoint,
}

/// Parses `\copy`'s arguments as psql's `parse_slash_copy`: `table
/// [(cols)] | (query)`, `from | to`, a file name (quoted or bare), `stdin`,
/// `stdout`, `pstdin` or `pstdout`, then COPY's options verbatim.
pub fn parse_slash_copy(args: &str) -> Result<SlashCopy, String> {
    let parse_error = |at: &str| {
        if at.is_empty() {
            "\\copy: parse error at end of line".to_string()
        } else {
            format!("\\copy: parse error at \"{at}\"")
        }
    };
    let b = args.as_bytes();
    // Find `from` or `to` as a word outside parentheses and quotes.
    let (mut i, mut depth) = (0usize, 0usize);
    let mut split = None;
    while i < b.len() {
        match b[i] {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b'\'' | b'"' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
            }
            c if depth == 0 && c.is_ascii_alphabetic() && (i == 0 || !is_word(b[i - 1])) => {
                let end = (i..b.len()).find(|&j| !is_word(b[j])).unwrap_or(b.len());
                let word = &args[i..end];
                if i > 0 && (word.eq_ignore_ascii_case("from") || word.eq_ignore_ascii_case("to")) {
                    split = Some((i, end));
                    break;
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    let Some((kw_start, kw_end)) = split else {
        return Err(parse_error(""));
    };
    let before = args[..kw_start].trim();
    let direction = if args[kw_start..kw_end].eq_ignore_ascii_case("from") {
        ClientCopy::In
    } else {
        ClientCopy::Out
    };
    let rest = args[kw_end..].trim_start();
    let (name, after) = if let Some(quoted) = rest.strip_prefix('\'') {
        let mut name = String::new();
        let mut chars = quoted.char_indices().peekable();
        let mut end = None;
        while let Some((k, c)) = chars.next() {
            if c == '\'' {
                if chars.peek().map(|p| p.1) == Some('\'') {
                    name.push('\'');
                    chars.next();
                } else {
                    end = Some(k + 1);
                    break;
                }
            } else {
                name.push(c);
            }
        }
        let end = end.ok_or_else(|| parse_error(""))?;
        (Some(name), &quoted[end..])
    } else {
        let end = rest
            .find(|c: char| c.is_whitespace() || c == ';')
            .unwrap_or(rest.len());
        ((end > 0).then(|| rest[..end].to_string()), &rest[end..])
    };
    let Some(name) = name else {
        return Err(parse_error(""));
    };
    let endpoint = match name.to_ascii_lowercase().as_str() {
        "stdin" if direction == ClientCopy::In => Endpoint::Std,
        "stdout" if direction == ClientCopy::Out => Endpoint::Std,
        "pstdin" if direction == ClientCopy::In => Endpoint::Process,
        "pstdout" if direction == ClientCopy::Out => Endpoint::Process,
        "stdin" | "stdout" | "pstdin" | "pstdout" => return Err(parse_error(&name)),
        _ => Endpoint::File(expand_tilde(&name)),
    };
    let target = match direction {
        ClientCopy::In => "FROM STDIN",
        ClientCopy::Out => "TO STDOUT",
    };
    let after = after.trim();
    let sql = if after.is_empty() {
        format!("COPY  {before} {target}")
    } else {
        format!("COPY  {before} {target} {after}")
    };
    Ok(SlashCopy {
        sql,
        direction,
        endpoint,
    })
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// `~/x` with the home directory, as psql's `expand_tilde`.
fn expand_tilde(name: &str) -> String {
    match (name.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => format!("{home}/{rest}"),
        _ => name.to_string(),
    }
}

impl Runner {
    /// Runs `sql`, a `COPY ... FROM STDIN`, with `data` (the process's
    /// standard input when `None`). `line` is the statement's line.
    pub(crate) fn run_copy_in(
        &mut self,
        sql: &str,
        data: Option<&mut dyn CopyData>,
        total_bytes: Option<u64>,
        src: &Source,
        line: u64,
    ) -> (Flow, Option<u64>) {
        let mut stdin_data;
        let data: &mut dyn CopyData = match data {
            Some(d) => d,
            None => {
                stdin_data = StreamData::new(io::stdin().lock());
                &mut stdin_data
            }
        };
        let out = self.session_copy(sql, CopyIo::In(&mut *data), total_bytes);
        let line = if data.started() {
            let _ = data.skip_rest();
            data.lineno().unwrap_or(line)
        } else {
            line
        };
        self.copy_finish(sql, out, src, line, true)
    }

    /// Runs `sql`, a `COPY ... TO STDOUT`, writing to `out` (the query
    /// output when `None`). Prints the tag only when `tag` (`\copy` to a
    /// file).
    pub(crate) fn run_copy_out(
        &mut self,
        sql: &str,
        out: Option<&mut dyn Write>,
        tag: bool,
        src: &Source,
        line: u64,
    ) -> (Flow, Option<u64>) {
        let result = match out {
            Some(w) => self.session_copy(sql, CopyIo::Out(w), None),
            None => {
                // The query output is part of `self`: write to a buffer
                // of it taken out for the statement.
                let mut target = std::mem::take(&mut self.state.output);
                let r = match &mut target {
                    super::meta::Output::Stdout => {
                        let mut w = std::mem::replace(&mut self.stdout, Box::new(io::sink()));
                        let r = self.session_copy(sql, CopyIo::Out(&mut w), None);
                        self.stdout = w;
                        r
                    }
                    file => self.session_copy(sql, CopyIo::Out(file), None),
                };
                self.state.output = target;
                r
            }
        };
        self.copy_finish(sql, result, src, line, tag)
    }

    /// Runs the COPY `sql` with the client stream `io`, marked as running
    /// for Ctrl-C.
    fn session_copy(
        &mut self,
        sql: &str,
        io: CopyIo<'_>,
        total_bytes: Option<u64>,
    ) -> crate::session::Result<crate::session::QueryResult> {
        self.statement_begins(total_bytes);
        let r = self.session.copy_with(sql, io, None);
        self.statement_ends();
        r
    }

    /// Prints a COPY's tag (when `tag`) or error; returns the flow and the
    /// row count.
    fn copy_finish(
        &mut self,
        sql: &str,
        result: crate::session::Result<crate::session::QueryResult>,
        src: &Source,
        line: u64,
        tag: bool,
    ) -> (Flow, Option<u64>) {
        match result {
            Ok(r) => {
                if tag && !self.state.quiet {
                    let text = format!("{}\n", r.tag);
                    let _ = self.query_output().write_all(text.as_bytes());
                }
                let rows = r.tag.strip_prefix("COPY ").and_then(|n| n.parse().ok());
                (Flow::Continue, rows)
            }
            Err(e) => {
                let locus = src.file.as_deref().map(|file| Locus { file, line });
                let text = format_error(&e, Some(sql), locus);
                self.eprint(&text);
                self.had_error = true;
                (self.error_flow(src), None)
            }
        }
    }

    /// `\copy ARGS`; `script` is the data source for `\copy ... from stdin`.
    pub(crate) fn slash_copy(
        &mut self,
        args: &str,
        script: Option<&mut dyn CopyData>,
        src: &Source,
        line: u64,
    ) -> Flow {
        let copy = match parse_slash_copy(args) {
            Ok(c) => c,
            Err(msg) => return self.shell_error(&msg, src, line),
        };
        // A file or stream written from here is output too (shell::external_sync).
        super::external_sync::before_output();
        let flow = match (copy.direction, copy.endpoint) {
            (ClientCopy::In, Endpoint::File(path)) => {
                let (file, size) = match File::open(&path).and_then(|f| {
                    let m = f.metadata()?;
                    if m.is_dir() {
                        return Err(io::Error::other("Is a directory"));
                    }
                    Ok((f, m.len()))
                }) {
                    Ok(x) => x,
                    Err(e) => {
                        return self.shell_error(&format!("{path}: {}", io_message(&e)), src, line)
                    }
                };
                let mut data = StreamData::new(BufReader::with_capacity(1 << 20, file));
                self.run_copy_in(&copy.sql, Some(&mut data), Some(size), src, line)
                    .0
            }
            (ClientCopy::In, Endpoint::Std) => match script {
                Some(d) => self.run_copy_in(&copy.sql, Some(d), None, src, line).0,
                None => self.run_copy_in(&copy.sql, None, None, src, line).0,
            },
            (ClientCopy::In, Endpoint::Process) => {
                self.run_copy_in(&copy.sql, None, None, src, line).0
            }
            (ClientCopy::Out, Endpoint::File(path)) => {
                // Written over in place and cut to length at the end, as
                // the server-side COPY TO does (`copy::out_file` says why).
                let file = match OutFile::create(&path) {
                    Ok(f) => f,
                    Err(e) => {
                        return self.shell_error(&format!("{path}: {}", io_message(&e)), src, line)
                    }
                };
                let mut w = io::BufWriter::with_capacity(1 << 20, file);
                let flow = self
                    .run_copy_out(&copy.sql, Some(&mut w), true, src, line)
                    .0;
                let done = w
                    .into_inner()
                    .map_err(io::IntoInnerError::into_error)
                    .and_then(OutFile::finish);
                if let Err(e) = done {
                    return self.shell_error(&format!("{path}: {}", io_message(&e)), src, line);
                }
                flow
            }
            (ClientCopy::Out, Endpoint::Std) => {
                self.run_copy_out(&copy.sql, None, false, src, line).0
            }
            (ClientCopy::Out, Endpoint::Process) => {
                self.flush();
                let mut out = io::stdout().lock();
                self.run_copy_out(&copy.sql, Some(&mut out), false, src, line)
                    .0
            }
        };
        flow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_copy_is_found_by_parsing() {
        assert_eq!(client_copy("copy t from stdin;"), Some(ClientCopy::In));
        assert_eq!(
            client_copy("  COPY t (a) FROM STDIN WITH CSV"),
            Some(ClientCopy::In)
        );
        assert_eq!(
            client_copy("copy (select 1) to stdout"),
            Some(ClientCopy::Out)
        );
        assert_eq!(client_copy("copy t from '/tmp/x'"), None);
        assert_eq!(client_copy("copyx from stdin"), None);
        assert_eq!(client_copy("select 1"), None);
        assert_eq!(client_copy("copy t from"), None);
    }

    #[test]
    fn slash_copy_rewrites_to_client_streams() {
        let c = parse_slash_copy("t from d.txt").unwrap();
        assert_eq!(c.sql, "COPY  t FROM STDIN");
        assert_eq!(c.endpoint, Endpoint::File("d.txt".into()));
        assert_eq!(c.direction, ClientCopy::In);
        let c = parse_slash_copy("t (a, b) from 'my file.csv' with (format csv)").unwrap();
        assert_eq!(c.sql, "COPY  t (a, b) FROM STDIN with (format csv)");
        assert_eq!(c.endpoint, Endpoint::File("my file.csv".into()));
        let c = parse_slash_copy("(select 'from', 1) to stdout csv").unwrap();
        assert_eq!(c.sql, "COPY  (select 'from', 1) TO STDOUT csv");
        assert_eq!((c.direction, c.endpoint), (ClientCopy::Out, Endpoint::Std));
        let c = parse_slash_copy("t to PSTDOUT").unwrap();
        assert_eq!(c.endpoint, Endpoint::Process);
        let c = parse_slash_copy("t from 'it''s'").unwrap();
        assert_eq!(c.endpoint, Endpoint::File("it's".into()));
    }

    #[test]
    fn slash_copy_errors_as_psql() {
        let end = Err("\\copy: parse error at end of line".to_string());
        assert_eq!(parse_slash_copy("t"), end);
        assert_eq!(parse_slash_copy("t from"), end);
        assert_eq!(parse_slash_copy("t from 'open"), end);
        assert_eq!(
            parse_slash_copy("t from stdout"),
            Err("\\copy: parse error at \"stdout\"".to_string())
        );
    }

    #[test]
    fn script_data_stops_at_the_end_marker_and_skips_the_rest() {
        let script = "copy t from stdin;\n1\n2\n3\n\\.\nselect 1;\n";
        let mut r = ScriptReader::new(script.as_bytes());
        r.next_item().unwrap();
        let mut d = ScriptData::new(&mut r);
        assert!(!d.started());
        let mut first = String::new();
        d.read_line(&mut first).unwrap();
        assert_eq!(first, "1\n");
        d.skip_rest().unwrap();
        assert_eq!(d.lineno(), Some(5));
        let mut rest = String::new();
        d.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "");
        assert!(r.next_item().unwrap().is_some());
    }
}
