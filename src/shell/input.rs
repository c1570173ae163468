//! Script input: reading piped or file input in large buffered chunks and
//! handing out complete SQL statements and meta-command lines with the line
//! numbers psql reports.
//!
//! psql's rules, which [`LineSplitter`] follows line by line:
//! - a statement ends at a `;` outside quotes, comments, dollar quotes and
//!   parentheses; its text includes the `;` and keeps its inner newlines;
//! - before a statement starts, whitespace and `--` comments are dropped
//!   (block comments are kept, as psql sends them);
//! - an empty line is dropped (and not echoed under `-a`) unless it is
//!   inside a quote, quoted name, comment or dollar quote, where it is part
//!   of the text like any other line;
//! - bytes that are not UTF-8 make their statement an error of its own
//!   ([`Item::Invalid`]), with PostgreSQL's message; the script goes on;
//! - `\;` is a `;` that does not end the statement: what it joins runs as
//!   one query string of several statements;
//! - a backslash outside quotes and comments starts a meta-command that runs
//!   to the end of the line; SQL before it stays in the query buffer (so
//!   `select 1 \g` leaves `select 1 ` there for `\g` to run);
//! - text left at end of input runs as a last statement;
//! - the line number of a statement is the line on which it ended (at end
//!   of input, the number of lines read), as psql's `psql:FILE:LINE:` shows.
//!
//! [`ScriptReader`] reads through a 1 MiB `BufReader`, one line at a time
//! into a reused buffer, so a script costs one `read` system call per
//! megabyte, not per character or line; `COPY ... FROM STDIN` data lines
//! are read raw with [`ScriptReader::copy_data_line`].
//!
//! Why not `heapdb_grammar::split_statements`: it splits a whole text held
//! in memory, while a piped script (or COPY data inside it) must stream; it
//! leaves `select 1 \g` to the SQL; and the prompt needs the lexer state
//! (`%R`) line by line. So this module keeps its own small scanner (quotes,
//! `E''` escapes, nested block comments, dollar quotes, parentheses), and a
//! test checks that both cut scripts at the same places with the same line
//! numbers.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read};

/// One unit of input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A complete SQL statement (with its `;`, if it had one) and the line
    /// on which it ended.
    Sql {
        /// The statement text.
        text: String,
        /// 1-based line on which it ended.
        line: u64,
        /// It may refer to variables (`:NAME`): false only when every `:`
        /// in it is inside a plain `'...'` string and it has no `E'...'`
        /// string, quoted identifier, comment or dollar quote, so that
        /// variable substitution would find nothing to do.
        vars: bool,
    },
    /// A meta-command line, from the backslash to the end of the line.
    Meta {
        /// The text, starting with `\`, without the line end.
        text: String,
        /// 1-based line number.
        line: u64,
    },
    /// A statement holding bytes that are not UTF-8: an error of that
    /// statement, as PostgreSQL reports it for the query psql sends.
    Invalid {
        /// `invalid byte sequence for encoding "UTF8": 0x..`.
        message: String,
        /// 1-based line on which it ended.
        line: u64,
    },
    /// An input line as read, its bytes as they were (only with echo of
    /// all input, psql's `-a`).
    Echo(Vec<u8>),
}

/// Lexical state carried from one line to the next.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Lex {
    /// Ordinary SQL text.
    #[default]
    Normal,
    /// Inside `'...'`; `escapes` for `E'...'` (backslash escapes a quote).
    Quote {
        /// Backslash escapes are active.
        escapes: bool,
    },
    /// Inside `"..."`.
    Ident,
    /// Inside `/* ... */`, at this nesting depth.
    Comment(usize),
    /// Inside a dollar-quoted string with this tag (including the `$`s).
    Dollar(String),
}

/// Splits input lines into statements and meta-command lines.
#[derive(Debug, Default)]
pub struct LineSplitter {
    /// The query buffer: the statement in progress.
    buffer: String,
    /// Lexical state at the end of the text seen so far.
    lex: Lex,
    /// Open parentheses in the statement in progress.
    parens: usize,
    /// The statement in progress may refer to variables ([`Item::Sql`]).
    vars: bool,
    /// Bytes of the statement in progress that are not UTF-8: each is
    /// held in `buffer` as U+FFFD at this offset; the bytes it replaced.
    bad: Vec<(usize, Vec<u8>)>,
    /// The same for the line being scanned, offsets in the line.
    line_bad: Vec<(usize, Vec<u8>)>,
    /// `standard_conforming_strings` is off: a backslash in `'...'`
    /// escapes the next character (so `'a\'b'` is one literal).
    backslash_quotes: bool,
}

/// Bytes that end a run of ordinary text in [`Lex::Normal`]: quotes,
/// comment starts, `$`, parentheses, `;`, `\` and `:`. Everything else is
/// copied as it is, so the scanner skips runs of it with one table look-up
/// per byte (a 100,000-statement script is ~20 MB of mostly such bytes).
static NORMAL_SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let special = b"'\"/-$();\\:";
    let mut k = 0;
    while k < special.len() {
        t[special[k] as usize] = true;
        k += 1;
    }
    t
};

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl LineSplitter {
    /// A splitter with an empty query buffer.
    pub fn new() -> LineSplitter {
        LineSplitter::default()
    }

    /// Follows the session's `standard_conforming_strings` (psql reads
    /// `'...'` as the server will).
    pub fn set_standard_strings(&mut self, on: bool) {
        self.backslash_quotes = !on;
    }

    /// The statement in progress (psql's query buffer).
    pub fn buffer(&self) -> &str {
        &self.buffer
    }

    /// Takes the query buffer (for `\g`), leaving it empty.
    pub fn take_buffer(&mut self) -> String {
        self.parens = 0;
        self.lex = Lex::Normal;
        self.vars = false;
        self.bad.clear();
        std::mem::take(&mut self.buffer)
    }

    /// Cuts the query buffer back to `len` bytes (the text of an `\if`
    /// branch that did not run).
    pub fn truncate(&mut self, len: usize) {
        if len < self.buffer.len() && self.buffer.is_char_boundary(len) {
            self.buffer.truncate(len);
            self.bad.retain(|(off, _)| *off < len);
            if len == 0 {
                self.take_buffer();
            }
        }
    }

    /// Clears the query buffer (`\r`, Ctrl-C at the prompt).
    pub fn reset(&mut self) {
        self.take_buffer();
    }

    /// Whether the text so far ends inside a quote, a quoted name, a
    /// comment or a dollar quote (psql's `psql_scan_in_quote`).
    pub fn in_quote(&self) -> bool {
        self.lex != Lex::Normal
    }

    /// Whether a statement is in progress (prompt 2).
    pub fn in_progress(&self) -> bool {
        !self.buffer.is_empty()
    }

    /// psql's `%R` character for the prompt: `=` when no statement is in
    /// progress, else `'`, `"`, `*`, `$` or `(` for an open quote, comment,
    /// dollar quote or parenthesis, else `-`.
    pub fn prompt_state(&self) -> char {
        match &self.lex {
            Lex::Quote { .. } => '\'',
            Lex::Ident => '"',
            Lex::Comment(_) => '*',
            Lex::Dollar(_) => '$',
            Lex::Normal if self.parens > 0 => '(',
            Lex::Normal if self.buffer.is_empty() => '=',
            Lex::Normal => '-',
        }
    }

    /// Feeds one line (with or without its line end); complete statements
    /// and meta-command lines are pushed to `out`, numbered `lineno`.
    ///
    /// Like psql, an empty line is dropped unless it is inside a quote,
    /// a quoted name, a comment or a dollar quote, where it is part of the
    /// text; other lines of a statement are joined with a newline.
    pub fn feed_line(&mut self, line: &str, lineno: u64, out: &mut VecDeque<Item>) {
        let line = line.strip_suffix('\n').unwrap_or(line);
        if line.is_empty() && self.lex == Lex::Normal {
            return;
        }
        if !self.buffer.is_empty() {
            self.buffer.push('\n');
        }
        self.scan_line(line, lineno, out);
    }

    /// [`LineSplitter::feed_line`] for a line that was not valid UTF-8: `line`
    /// is its lossy decoding, and `bad` says where each U+FFFD in it stands
    /// for which bytes. A statement that takes any of them becomes an
    /// [`Item::Invalid`].
    pub fn feed_line_with_bad_bytes(
        &mut self,
        line: &str,
        bad: Vec<(usize, Vec<u8>)>,
        lineno: u64,
        out: &mut VecDeque<Item>,
    ) {
        self.line_bad = bad;
        self.feed_line(line, lineno, out);
        self.line_bad.clear();
    }

    /// Appends `line[range]` to the query buffer, with the bad bytes it
    /// holds.
    fn copy(&mut self, line: &str, range: std::ops::Range<usize>) {
        if !self.line_bad.is_empty() {
            let base = self.buffer.len();
            for (off, bytes) in &self.line_bad {
                if range.contains(off) {
                    self.bad.push((base + off - range.start, bytes.clone()));
                }
            }
        }
        self.buffer.push_str(&line[range]);
    }

    /// The statement in the query buffer (taken), as an item ending on
    /// line `lineno`.
    fn statement(&mut self, lineno: u64) -> Item {
        let text = std::mem::take(&mut self.buffer);
        let vars = std::mem::take(&mut self.vars);
        if self.bad.is_empty() {
            return Item::Sql {
                text,
                line: lineno,
                vars,
            };
        }
        let bad = std::mem::take(&mut self.bad);
        Item::Invalid {
            message: invalid_utf8_message(&original_bytes(&text, &bad)),
            line: lineno,
        }
    }

    /// Scans one line without its line end (see [`LineSplitter::feed_line`]).
    fn scan_line(&mut self, line: &str, lineno: u64, out: &mut VecDeque<Item>) {
        let b = line.as_bytes();
        let mut i = 0;
        // Start of the part of `line` not yet copied into the buffer.
        let mut copied = 0;
        while i < b.len() {
            match &mut self.lex {
                Lex::Quote { escapes } => {
                    let closed;
                    (i, closed) = quote_end(b, i, *escapes);
                    if closed {
                        self.lex = Lex::Normal;
                    }
                }
                Lex::Ident => match b[i..].iter().position(|&c| c == b'"') {
                    Some(p) if b.get(i + p + 1) == Some(&b'"') => i += p + 2,
                    Some(p) => {
                        i += p + 1;
                        self.lex = Lex::Normal;
                    }
                    None => i = b.len(),
                },
                Lex::Comment(depth) => {
                    if b[i..].starts_with(b"*/") {
                        *depth -= 1;
                        i += 2;
                        if *depth == 0 {
                            self.lex = Lex::Normal;
                        }
                    } else if b[i..].starts_with(b"/*") {
                        *depth += 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                Lex::Dollar(tag) => match line[i..].find(tag.as_str()) {
                    Some(p) => {
                        i += p + tag.len();
                        self.lex = Lex::Normal;
                    }
                    None => i = b.len(),
                },
                Lex::Normal => {
                    // Before a statement starts, drop whitespace and `--`
                    // comments (psql sends neither).
                    if self.buffer.is_empty() && copied == i {
                        if b[i].is_ascii_whitespace() {
                            i += 1;
                            copied = i;
                            continue;
                        }
                        if b[i..].starts_with(b"--") {
                            return;
                        }
                    }
                    while i < b.len() && !NORMAL_SPECIAL[b[i] as usize] {
                        i += 1;
                    }
                    if i == b.len() {
                        break;
                    }
                    match b[i] {
                        b'\'' => {
                            // `U&'...'` never takes backslash escapes.
                            let unicode = i > 1
                                && b[i - 1] == b'&'
                                && matches!(b[i - 2], b'u' | b'U')
                                && (i < 3 || !is_ident_byte(b[i - 3]));
                            let escapes = self.backslash_quotes && !unicode
                                || i > 0
                                    && matches!(b[i - 1], b'e' | b'E')
                                    && (i < 2 || !is_ident_byte(b[i - 2]));
                            self.lex = Lex::Quote { escapes };
                            // Variable substitution reads `E'...'` strings
                            // differently (see `Item::Sql`'s `vars`).
                            self.vars |= escapes;
                            i += 1;
                        }
                        b'"' => {
                            self.lex = Lex::Ident;
                            self.vars = true;
                            i += 1;
                        }
                        b'/' if b.get(i + 1) == Some(&b'*') => {
                            self.lex = Lex::Comment(1);
                            self.vars = true;
                            i += 2;
                        }
                        b'-' if b.get(i + 1) == Some(&b'-') => {
                            // A comment inside a statement: kept, to the line end.
                            self.vars = true;
                            i = b.len();
                        }
                        b':' => {
                            self.vars = true;
                            i += 1;
                        }
                        b'$' => {
                            i = self.dollar(line, i);
                            self.vars |= matches!(self.lex, Lex::Dollar(_));
                        }
                        b'(' => {
                            self.parens += 1;
                            i += 1;
                        }
                        b')' => {
                            self.parens = self.parens.saturating_sub(1);
                            i += 1;
                        }
                        b';' if self.parens == 0 => {
                            self.copy(line, copied..i + 1);
                            out.push_back(self.statement(lineno));
                            i += 1;
                            copied = i;
                        }
                        b'\\' if b.get(i + 1) == Some(&b';') => {
                            // psql's `\;`: a semicolon that does not end the
                            // statement (several go to the server as one).
                            self.copy(line, copied..i);
                            self.buffer.push(';');
                            i += 2;
                            copied = i;
                        }
                        b'\\' => {
                            self.copy(line, copied..i);
                            let text = line[i..].trim_end_matches('\r');
                            out.push_back(Item::Meta {
                                text: text.to_string(),
                                line: lineno,
                            });
                            return;
                        }
                        _ => i += 1,
                    }
                }
            }
        }
        if copied < b.len() {
            self.copy(line, copied..b.len());
        }
    }

    /// Handles a `$` at `i` in normal text: opens a dollar quote when it
    /// starts one (`$$` or `$tag$`, not a parameter `$1` or part of a name).
    fn dollar(&mut self, line: &str, i: usize) -> usize {
        let b = line.as_bytes();
        if i > 0 && is_ident_byte(b[i - 1]) {
            return i + 1;
        }
        let mut j = i + 1;
        if b.get(j).is_some_and(u8::is_ascii_digit) {
            return i + 1;
        }
        while j < b.len() && is_ident_byte(b[j]) {
            j += 1;
        }
        if b.get(j) != Some(&b'$') {
            return i + 1;
        }
        self.lex = Lex::Dollar(line[i..=j].to_string());
        j + 1
    }

    /// At end of input: the statement left in the buffer, if it holds any
    /// text, numbered `lineno` (the number of lines read).
    pub fn finish(&mut self, lineno: u64) -> Option<Item> {
        let kept = self.buffer.trim_end().len();
        self.buffer.truncate(kept);
        self.bad.retain(|(off, _)| *off < kept);
        let item = (!self.buffer.is_empty()).then(|| self.statement(lineno));
        self.take_buffer();
        item
    }
}

/// `text` with each U+FFFD that `bad` lists put back as the bytes it
/// replaced.
fn original_bytes(text: &str, bad: &[(usize, Vec<u8>)]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(text.len());
    let mut at = 0;
    for (off, bytes) in bad {
        raw.extend_from_slice(&text.as_bytes()[at..*off]);
        raw.extend_from_slice(bytes);
        at = off + char::REPLACEMENT_CHARACTER.len_utf8();
    }
    raw.extend_from_slice(&text.as_bytes()[at..]);
    raw
}

/// PostgreSQL's message for text that is not valid UTF-8
/// (`report_invalid_encoding`): the bytes from the first invalid one, as
/// many as its first byte says the character has (`pg_utf_mblen`), at most
/// to the end of the text.
pub fn invalid_utf8_message(raw: &[u8]) -> String {
    let start = match std::str::from_utf8(raw) {
        Ok(_) => raw.len(),
        Err(e) => e.valid_up_to(),
    };
    let rest = &raw[start.min(raw.len())..];
    let len = match rest.first() {
        Some(b) if b & 0xe0 == 0xc0 => 2,
        Some(b) if b & 0xf0 == 0xe0 => 3,
        Some(b) if b & 0xf8 == 0xf0 => 4,
        _ => 1,
    };
    let shown: Vec<String> = rest
        .iter()
        .take(len)
        .map(|b| format!("0x{b:02x}"))
        .collect();
    format!(
        "invalid byte sequence for encoding \"UTF8\": {}",
        shown.join(" ")
    )
}

/// The lossy decoding of `raw` (each invalid sequence as U+FFFD), and
/// where each U+FFFD stands for which bytes.
pub fn decode_lossy(raw: &[u8]) -> (String, Vec<(usize, Vec<u8>)>) {
    let mut text = String::with_capacity(raw.len() + 8);
    let mut bad = Vec::new();
    for chunk in raw.utf8_chunks() {
        text.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            bad.push((text.len(), chunk.invalid().to_vec()));
            text.push(char::REPLACEMENT_CHARACTER);
        }
    }
    (text, bad)
}

/// Reads a script and yields its [`Item`]s.
pub struct ScriptReader<R: Read> {
    /// The buffered input.
    reader: BufReader<R>,
    /// The current line's bytes (reused).
    line: Vec<u8>,
    /// Lines read so far.
    lineno: u64,
    /// The statement splitter.
    splitter: LineSplitter,
    /// Items found and not yet handed out.
    pending: VecDeque<Item>,
    /// Queue each line as [`Item::Echo`] (psql's `-a`).
    echo_all: bool,
    /// End of input reached.
    done: bool,
}

/// Read buffer size: one system call per this many bytes of script.
const READ_CHUNK: usize = 1 << 20;

impl<R: Read> ScriptReader<R> {
    /// A reader over `input`.
    pub fn new(input: R) -> Self {
        ScriptReader {
            reader: BufReader::with_capacity(READ_CHUNK, input),
            line: Vec::with_capacity(4096),
            lineno: 0,
            splitter: LineSplitter::new(),
            pending: VecDeque::new(),
            echo_all: false,
            done: false,
        }
    }

    /// Also yield every input line as [`Item::Echo`] before its items.
    pub fn echo_all(mut self, on: bool) -> Self {
        self.echo_all = on;
        self
    }

    /// Lines read so far (the current line number).
    pub fn lineno(&self) -> u64 {
        self.lineno
    }

    /// The splitter, for `\g` (take the buffer), `\r` and `\p`.
    pub fn splitter(&mut self) -> &mut LineSplitter {
        &mut self.splitter
    }

    /// The next data line of a `COPY ... FROM STDIN` that has just been
    /// returned, without its line end; `None` after the line `\.` (which is
    /// consumed) or at end of input. Data lines are read raw, one at a time,
    /// so a large COPY streams; the splitter does not see them. The bytes
    /// are the COPY's to check: invalid UTF-8 is an error of that COPY
    /// (22021, with its line), as the server finds it, never of the script.
    pub fn copy_data_line(&mut self) -> io::Result<Option<&[u8]>> {
        self.line.clear();
        if self.reader.read_until(b'\n', &mut self.line)? == 0 {
            return Ok(None);
        }
        self.lineno += 1;
        let text = &self.line[..];
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        Ok((text != b"\\.").then_some(text))
    }

    /// Whether the next [`next_item`](Self::next_item) may block reading
    /// input: nothing is queued and the read buffer is empty. The caller
    /// flushes its output first, so a client that waits for a statement's
    /// output before writing more (a pipe, not end of file) is not stuck.
    pub fn may_block(&self) -> bool {
        self.pending.is_empty() && self.reader.buffer().is_empty()
    }

    /// The next item, `None` at end of input. A statement with bytes that
    /// are not UTF-8 is an [`Item::Invalid`]; elsewhere (a meta-command, a
    /// comment before a statement) such bytes are read as U+FFFD.
    pub fn next_item(&mut self) -> io::Result<Option<Item>> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                return Ok(Some(item));
            }
            if self.done {
                return Ok(None);
            }
            self.line.clear();
            if self.reader.read_until(b'\n', &mut self.line)? == 0 {
                self.done = true;
                return Ok(self.splitter.finish(self.lineno));
            }
            self.lineno += 1;
            let raw = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            if raw.is_empty() && !self.splitter.in_quote() {
                // psql neither echoes nor keeps such a line.
                continue;
            }
            if self.echo_all {
                let shown = raw.strip_suffix(b"\r").unwrap_or(raw).to_vec();
                self.pending.push_back(Item::Echo(shown));
            }
            match std::str::from_utf8(&self.line) {
                Ok(text) => self
                    .splitter
                    .feed_line(text, self.lineno, &mut self.pending),
                Err(_) => {
                    let (text, bad) = decode_lossy(&self.line);
                    self.splitter.feed_line_with_bad_bytes(
                        &text,
                        bad,
                        self.lineno,
                        &mut self.pending,
                    );
                }
            }
        }
    }
}

impl<R: Read> Iterator for ScriptReader<R> {
    type Item = io::Result<Item>;

    fn next(&mut self) -> Option<io::Result<Item>> {
        self.next_item().transpose()
    }
}

/// Where a quoted string that is open at `i` of `b` ends: the position
/// after its closing quote and `true`, or the line's end and `false` when
/// it goes on. Doubled quotes, and with `escapes` (`E'...'`) backslash
/// escapes, do not close it.
fn quote_end(b: &[u8], mut i: usize, escapes: bool) -> (usize, bool) {
    while i < b.len() {
        let rest = &b[i..];
        let found = if escapes {
            memchr::memchr2(b'\'', b'\\', rest)
        } else {
            memchr::memchr(b'\'', rest)
        };
        let Some(p) = found else {
            return (b.len(), false);
        };
        i += p;
        // A backslash escape, or a doubled quote.
        if b[i] == b'\\' || b.get(i + 1) == Some(&b'\'') {
            i += 2;
        } else {
            return (i + 1, true);
        }
    }
    (i.min(b.len()), false)
}

#[cfg(test)]
mod tests {
    //! Statement texts and line numbers are what psql 15 sent and reported
    //! for the same scripts (`psql -X -f s.sql`): e.g. for the script in
    //! `psql_rules`, psql reported errors at lines 3, 4 and 9, with
    //! `LINE 2:  x;` for the first (the leading comment line dropped).
    use super::*;

    /// The items of `script`, with `vars` left out (set to false): the
    /// test below checks it.
    fn items(script: &str) -> Vec<Item> {
        ScriptReader::new(script.as_bytes())
            .map(|r| match r.expect("valid input") {
                Item::Sql { text, line, .. } => Item::Sql {
                    text,
                    line,
                    vars: false,
                },
                other => other,
            })
            .collect()
    }

    fn sql(text: &str, line: u64) -> Item {
        Item::Sql {
            text: text.into(),
            line,
            vars: false,
        }
    }

    /// Statements said to refer to no variable really have nothing to
    /// substitute, whatever variables are set; the plain ones (colons only
    /// in plain strings) are said so.
    #[test]
    fn statements_without_variables_are_told_apart() {
        let mut vars = crate::shell::meta::vars::Variables::default();
        for name in ["x", "y", "a", "b"] {
            vars.set(name, "VALUE").unwrap();
        }
        // (text, plain: colons only inside plain strings, if any)
        let pieces = [
            ("select 1", true),
            (" 'Thu Jan 07 15:15:00 1999 EST'", true),
            (" ':x'", true),
            (" 'it''s :x'", true),
            (" ( ':a' )", true),
            (" :x", false),
            (" :'y'", false),
            (" :\"a\"", false),
            (" a::text", false),
            (" E'\\':x'", false),
            (" e'q', ':b'", false),
            (" \"c:x\"", false),
            (" /* :x */", false),
            (" -- :x\n", false),
            (" $$ :x $$", false),
            (" $t$ ' $t$, ':x'", false),
            (" x:y", false),
        ];
        let mut plain = 0;
        for (a, a_plain) in pieces {
            for (b, b_plain) in pieces {
                let script = format!("select 1{a}{b};\n");
                let got: Vec<Item> = ScriptReader::new(script.as_bytes())
                    .map(|r| r.unwrap())
                    .collect();
                let [Item::Sql { text, vars: v, .. }] = got.as_slice() else {
                    panic!("{script:?}: {got:?}");
                };
                if !v {
                    plain += 1;
                    assert!(
                        matches!(vars.substitute_sql(text), std::borrow::Cow::Borrowed(_)),
                        "{script:?}"
                    );
                }
                assert_eq!(!v, a_plain && b_plain, "{script:?}");
            }
        }
        assert_eq!(plain, 25);
        let insert =
            "INSERT INTO fehistory_1 values (64,'D',NULL,'Thu Jan 07 15:15:00 1999 EST');\n";
        let got: Vec<Item> = ScriptReader::new(insert.as_bytes())
            .map(|r| r.unwrap())
            .collect();
        assert!(matches!(got[0], Item::Sql { vars: false, .. }));
    }

    fn meta(text: &str, line: u64) -> Item {
        Item::Meta {
            text: text.into(),
            line,
        }
    }

    #[test]
    fn psql_rules() {
        let script = "-- hello\nselect\n x; -- trailing\n/* block */ select y;  select 1 \\g\nselect 2 \\echo mid\n;\n\n  select z\n\n";
        assert_eq!(
            items(script),
            vec![
                sql("select\n x;", 3),
                sql("/* block */ select y;", 4),
                meta("\\g", 4),
                meta("\\echo mid", 5),
                sql("select 1 \nselect 2 \n;", 6),
                sql("select z", 9),
            ]
        );
    }

    #[test]
    fn empty_lines_inside_a_statement_are_dropped_as_psql_does() {
        // psql 15 reported `LINE 2: x;` and `LINE 3:  y;` for this script:
        // an empty line is dropped, a line of spaces is kept.
        assert_eq!(
            items("select\n\nx;\nselect\n  \n y;\n"),
            vec![sql("select\nx;", 3), sql("select\n  \n y;", 6)]
        );
    }

    #[test]
    fn backslashes_escape_quotes_without_standard_strings() {
        let script = "select 'a\\';b';\nselect U&'\\';\nselect 'c\\';\n";
        let mut r = ScriptReader::new(script.as_bytes());
        r.splitter().set_standard_strings(false);
        // A quote with escapes marks the statement for variable
        // substitution's reading, as `E'...'` does.
        let escaped = Item::Sql {
            text: "select 'a\\';b';".to_string(),
            line: 1,
            vars: true,
        };
        assert_eq!(r.next_item().unwrap(), Some(escaped));
        assert_eq!(r.next_item().unwrap(), Some(sql("select U&'\\';", 2)));
        r.splitter().set_standard_strings(true);
        assert_eq!(r.next_item().unwrap(), Some(sql("select 'c\\';", 3)));
    }

    #[test]
    fn g_takes_the_buffer() {
        let mut r = ScriptReader::new("select 1 \\g\nselect 2;\n".as_bytes());
        assert_eq!(r.next_item().unwrap(), Some(meta("\\g", 1)));
        assert_eq!(r.splitter().take_buffer(), "select 1 ");
        assert_eq!(r.next_item().unwrap(), Some(sql("select 2;", 2)));
        assert_eq!(r.next_item().unwrap(), None);
    }

    #[test]
    fn semicolons_and_backslashes_inside_quotes_do_not_split() {
        let script = "select 'a;b\\c', \"x;y\", E'it\\'s;', $$ ; \\q $$, $t$;$t$, (1;2);\n";
        assert_eq!(items(script), vec![sql(script.trim_end(), 1)]);
        let script = "select 'multi\nline; still' ;select /* a /* nested ; */ ; */ 1;\n";
        assert_eq!(
            items(script),
            vec![
                sql("select 'multi\nline; still' ;", 2),
                sql("select /* a /* nested ; */ ; */ 1;", 2)
            ]
        );
    }

    #[test]
    fn backslash_semicolon_joins_statements() {
        assert_eq!(
            items("select 1 \\; select 2;\nselect 3\\;\nselect 4;\n"),
            vec![
                sql("select 1 ; select 2;", 1),
                sql("select 3;\nselect 4;", 3)
            ]
        );
    }

    #[test]
    fn parameters_and_names_with_dollars_are_not_quotes() {
        let script = "select $1, a$b$c; select 2;";
        assert_eq!(
            items(script),
            vec![sql("select $1, a$b$c;", 1), sql("select 2;", 1)]
        );
    }

    #[test]
    fn many_statements_on_one_line_share_its_number() {
        assert_eq!(
            items("\n\nselect 1; select 2;select 3;\n"),
            vec![
                sql("select 1;", 3),
                sql("select 2;", 3),
                sql("select 3;", 3)
            ]
        );
    }

    #[test]
    fn crlf_lines_and_no_final_newline() {
        assert_eq!(
            items("select 1;\r\n\\echo hi\r\nselect\r\n2"),
            vec![
                sql("select 1;", 1),
                meta("\\echo hi", 2),
                sql("select\r\n2", 4)
            ]
        );
    }

    #[test]
    fn echo_all_yields_lines_first() {
        let got: Vec<Item> = ScriptReader::new("select 1;\n\\q\n".as_bytes())
            .echo_all(true)
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(
            got,
            vec![
                Item::Echo(b"select 1;".to_vec()),
                sql("select 1;", 1),
                Item::Echo(b"\\q".to_vec()),
                meta("\\q", 2)
            ]
        );
    }

    #[test]
    fn prompt_state_follows_the_lexer() {
        let mut s = LineSplitter::new();
        let mut out = VecDeque::new();
        assert_eq!(s.prompt_state(), '=');
        s.feed_line("select (", 1, &mut out);
        assert_eq!(s.prompt_state(), '(');
        s.feed_line(") , 'abc", 2, &mut out);
        assert_eq!(s.prompt_state(), '\'');
        s.feed_line("' /* x", 3, &mut out);
        assert_eq!(s.prompt_state(), '*');
        s.feed_line("*/ , $$", 4, &mut out);
        assert_eq!(s.prompt_state(), '$');
        s.feed_line("$$, \"a", 5, &mut out);
        assert_eq!(s.prompt_state(), '"');
        s.feed_line("\"", 6, &mut out);
        assert_eq!(s.prompt_state(), '-');
        s.feed_line(";", 7, &mut out);
        assert_eq!(s.prompt_state(), '=');
        assert_eq!(out.len(), 1);
    }

    fn invalid(bytes: &str, line: u64) -> Item {
        Item::Invalid {
            message: format!("invalid byte sequence for encoding \"UTF8\": {bytes}"),
            line,
        }
    }

    #[test]
    fn invalid_utf8_fails_only_its_statement() {
        // The bytes shown are PostgreSQL 15's for the statement psql sent:
        // as many as the first invalid byte says, up to the statement's end.
        let mut r = ScriptReader::new(
            &b"select 1;\nselect '\xff';\nselect 'x\xc3(', 'y\xe2\n\nz'; select 2; -- \xff\n\\echo \xfe\nselect 3\xf0;"[..],
        );
        assert_eq!(r.next_item().unwrap(), Some(sql("select 1;", 1)));
        assert_eq!(r.next_item().unwrap(), Some(invalid("0xff", 2)));
        assert_eq!(r.next_item().unwrap(), Some(invalid("0xc3 0x28", 5)));
        assert_eq!(r.next_item().unwrap(), Some(sql("select 2;", 5)));
        assert_eq!(r.next_item().unwrap(), Some(meta("\\echo \u{fffd}", 6)));
        assert_eq!(r.next_item().unwrap(), Some(invalid("0xf0 0x3b", 7)));
        assert_eq!(r.next_item().unwrap(), None);
        let mut r = ScriptReader::new(&b"select 1\xe2\n\nx;\nselect '\xe2\n\n'"[..]);
        assert_eq!(r.next_item().unwrap(), Some(invalid("0xe2 0x0a 0x78", 3)));
        assert_eq!(r.next_item().unwrap(), Some(invalid("0xe2 0x0a 0x0a", 6)));
    }

    #[test]
    fn empty_lines_inside_quotes_comments_and_dollar_quotes_are_kept() {
        let script =
            "select 'a\n\nb', \"c\n\nd\", /* e\n\n*/ $x$\n\n$x$, E'\\'\n\n';\n\n\nselect 1;\n";
        let first = &script[..script.find(";\n\n\n").unwrap() + 1];
        assert_eq!(items(script), vec![sql(first, 11), sql("select 1;", 14)]);
        // Echoed as psql does: every line but the empty ones outside them.
        let echoed: Vec<Item> = ScriptReader::new("select 'a\n\nb';\n\n\\q\n".as_bytes())
            .echo_all(true)
            .map(|r| r.unwrap())
            .filter(|i| matches!(i, Item::Echo(_)))
            .collect();
        let lines: Vec<&[u8]> = vec![b"select 'a", b"", b"b';", b"\\q"];
        assert_eq!(
            echoed,
            lines
                .into_iter()
                .map(|l| Item::Echo(l.to_vec()))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn copy_data_lines_run_to_backslash_dot() {
        let script = "copy t from stdin;\n1\tone\r\n2\ttwo\n\\.\nselect 1;\n";
        let mut r = ScriptReader::new(script.as_bytes());
        assert_eq!(r.next_item().unwrap(), Some(sql("copy t from stdin;", 1)));
        assert_eq!(r.copy_data_line().unwrap(), Some(&b"1\tone"[..]));
        assert_eq!(r.copy_data_line().unwrap(), Some(&b"2\ttwo"[..]));
        assert_eq!(r.copy_data_line().unwrap(), None);
        assert_eq!(r.next_item().unwrap(), Some(sql("select 1;", 5)));
        assert_eq!(r.next_item().unwrap(), None);
    }

    #[test]
    fn statement_boundaries_agree_with_the_grammar_splitter() {
        // The grammar crate's splitter works on whole texts; this reader
        // streams. Both must cut scripts at the same places and report the
        // same end lines (the grammar's text has no `;`). Two cases differ
        // and are left out: psql drops an empty line inside a statement
        // (the grammar keeps it), and numbers an unterminated last
        // statement with the count of lines read (the grammar counts a
        // final newline as one more line).
        let scripts = [
            "select 1;\nselect 2; select\n3\n;\n",
            "insert into t values ('a;b', E'c\\'d;', \"x;y\");\nselect $$;$$, $q$\n;\n$q$;\n",
            "create table t (a int, b text);\n-- comment;\nselect (1;\n2);\nselect 'multi\nline';",
            "\\timing on\nselect 1;\n\\echo x\n  select\n  \n  2;\n",
            "select /* a ; /* b ; */ c */ 1;\nselect 1 -- trailing ;\n;\n",
        ];
        for script in scripts {
            let pieces = heapdb_grammar::split_statements(script);
            let mine = items(script);
            assert_eq!(
                pieces.len(),
                mine.len(),
                "{script:?}: {pieces:?} vs {mine:?}"
            );
            for (p, m) in pieces.iter().zip(&mine) {
                match m {
                    Item::Sql { text, line, .. } => {
                        let text = text.strip_suffix(';').unwrap_or(text).trim_end();
                        assert_eq!((text, *line), (p.text, p.end_line as u64), "{script:?}");
                    }
                    Item::Meta { text, line } => {
                        assert_eq!(
                            (text.as_str(), *line),
                            (p.text, p.end_line as u64),
                            "{script:?}"
                        )
                    }
                    Item::Echo(_) | Item::Invalid { .. } => unreachable!("no echo, valid text"),
                }
            }
        }
    }

    #[test]
    fn large_scripts_stream_through() {
        let stmt = "INSERT INTO fehistory_1 values (64,14,252,'D','-','-','s',1,4027,NULL,'S',1,4088,NULL,32,'Thu Jan 07 15:15:00 1999 EST','Fri Jan 08 08:30:38 1999 EST',4027,32,NULL,NULL,46,NULL);\n";
        let script = stmt.repeat(20_000);
        let mut n = 0;
        for (k, item) in ScriptReader::new(script.as_bytes()).enumerate() {
            match item.unwrap() {
                Item::Sql { text, line, vars } => {
                    assert_eq!(text, stmt.trim_end());
                    assert!(!vars);
                    assert_eq!(line, k as u64 + 1);
                    n += 1;
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(n, 20_000);
    }
}
