//! PostgreSQL's regular expressions (ARE, "advanced regular expressions")
//! compiled for the `fancy-regex` engine, and the per-thread cache of
//! compiled patterns that every regular-expression operator and function
//! goes through.
//!
//! [`translate`] rewrites an ARE into `fancy-regex` syntax, checking it
//! as PostgreSQL's `regcomp` does and failing with its messages
//! (`invalid regular expression: parentheses () not balanced`, 2201B):
//! back-references (`\1`), lookahead and lookbehind, `\m \M \y \Y`
//! (word starts, ends, boundaries), `\A \Z`, character escapes (`\e`,
//! `\uXXXX`, `\b` is backspace), bracket expressions with `[:class:]`,
//! `[.c.]` and `[=c=]`, bounds `{m,n}` (at most 255; a `{` not followed
//! by a digit is literal), the directors `***=` and `***:`, and leading
//! embedded options `(?ix)`. Every literal character is written as a
//! `\x{..}` escape where it is not alphanumeric, so no character can take
//! a meaning in the target syntax that it lacks in PostgreSQL's.
//!
//! The engine finds the leftmost match preferring earlier alternatives
//! (Perl's rule) where PostgreSQL prefers the longest; without
//! back-references the two agree on whether a string matches and where
//! the leftmost match starts, and differ in where it ends and what its
//! groups capture. The operators ask the engine where it has the pattern
//! ([`Compiled::is_match`]); the functions returning text, positions or
//! captures go through [`Compiled::find_at`], which finishes the match by
//! PostgreSQL's rules ([`super::regex`]). Patterns with back-references,
//! those the engine rejects and matches it gives up on are PostgreSQL's
//! program's alone, and so is "regular expression is too complex" at
//! compile time.
//!
//! Invariant: [`compile`] returns the same compiled pattern for the same
//! (pattern, flags) for as long as it stays among the last
//! [`CACHE_SIZE`] used, as PostgreSQL's `RE_compile_and_cache`: a
//! statement matching a column against one pattern compiles it once.

use std::cell::{OnceCell, RefCell};
use std::fmt::Write as _;
use std::rc::Rc;

use super::regex::{Program, MAX_BOUNDARIES};

use crate::err;
use crate::error::{Error, Result};
use fancy_regex::Regex;

/// How many compiled patterns each thread keeps.
pub const CACHE_SIZE: usize = 32;

/// Parsed flags (PostgreSQL's `parse_re_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Flags {
    /// `g`: every match (checked by the callers that allow it).
    pub global: bool,
    /// `i`: case-insensitive.
    pub icase: bool,
    /// `.` and negated brackets match a newline (off with `n`, `p`).
    pub dot_nl: bool,
    /// `^` and `$` match at newlines (`n`, `w`).
    pub multi_line: bool,
    /// `x`: expanded syntax (white space and `#` comments ignored).
    pub expanded: bool,
    /// `q`: the pattern is literal text.
    pub literal: bool,
}

impl Default for Flags {
    fn default() -> Flags {
        Flags {
            global: false,
            icase: false,
            dot_nl: true,
            multi_line: false,
            expanded: false,
            literal: false,
        }
    }
}

impl Flags {
    /// Applies one option letter (`b`, `e`: other regex flavours, and `t`
    /// accepted with no effect); `false` for an unknown letter.
    pub(super) fn apply(&mut self, c: char) -> bool {
        match c {
            'g' => self.global = true,
            'i' => self.icase = true,
            'c' => self.icase = false,
            'n' | 'm' => (self.dot_nl, self.multi_line) = (false, true),
            's' => (self.dot_nl, self.multi_line) = (true, false),
            'p' => (self.dot_nl, self.multi_line) = (false, false),
            'w' => (self.dot_nl, self.multi_line) = (true, true),
            'x' => self.expanded = true,
            'q' => self.literal = true,
            'e' | 't' | 'b' => {}
            _ => return false,
        }
        true
    }
}

/// The flags of a regexp function's `flags` argument.
pub fn parse_flags(opts: &str) -> Result<Flags> {
    let mut f = Flags::default();
    for c in opts.chars() {
        if !f.apply(c) {
            return Err(err!(
                InvalidParameterValue,
                "invalid regular expression option: \"{c}\""
            ));
        }
    }
    Ok(f)
}

/// `invalid regular expression: {msg}` (2201B).
fn invalid(msg: &str) -> Error {
    err!(
        InvalidRegularExpression,
        "invalid regular expression: {msg}"
    )
}

/// Byte spans of a match: `[0]` the whole match, `[k]` group `k` (`None`
/// where it took no part).
pub type Spans = Vec<Option<(usize, usize)>>;

/// A compiled pattern: the [`Program`], which finds matches by
/// PostgreSQL's rules, and, where it takes the pattern and agrees with
/// PostgreSQL on whether and where a match starts, the backtracking
/// engine's form, which answers that faster. Patterns with
/// back-references have no such form: a back-reference to a group that
/// matched nothing, or was iterated, and PostgreSQL's search order
/// change those answers (`()*\1`, `$()|^\1`).
pub struct Compiled {
    fancy: Option<Regex>,
    pattern: String,
    flags: Flags,
    /// Built at compile time where the pattern may be too complex or has
    /// back-references, else on first use.
    program: OnceCell<Program>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("pattern", &self.pattern)
            .finish()
    }
}

impl Compiled {
    fn program(&self) -> Result<&Program> {
        if let Some(p) = self.program.get() {
            return Ok(p);
        }
        let p = Program::new(&self.pattern, self.flags)
            .ok_or_else(|| invalid("regular expression is too complex"))?;
        Ok(self.program.get_or_init(|| p))
    }

    /// Whether `s` has a match (the operators `~ ~* !~ !~*`).
    pub fn is_match(&self, s: &str) -> Result<bool> {
        if let Some(re) = &self.fancy {
            if let Ok(found) = re.is_match(s) {
                return Ok(found);
            }
        }
        // No backtracking form, or it gave up.
        self.program()?.is_match(s).map_err(|_| too_complex())
    }

    /// The backtracking form, if any, and the program.
    #[cfg(test)]
    pub(super) fn engines(&self) -> (Option<&Regex>, &Program) {
        (self.fancy.as_ref(), self.program().expect("small pattern"))
    }

    /// The leftmost match at or after byte `from`, PostgreSQL's: its span
    /// and, with `caps`, its groups' spans (else only the whole match's).
    pub fn find_at(&self, s: &str, from: usize, caps: bool) -> Result<Option<Spans>> {
        let program = self.program()?;
        let Some(fancy) = &self.fancy else {
            return program.search(s, from, caps).map_err(|_| too_complex());
        };
        let fancy_spans = || -> Result<Option<Spans>> {
            let found = fancy
                .captures_from_pos(s, from)
                .map_err(|_| too_complex())?;
            Ok(found.map(|c| {
                (0..c.len())
                    .map(|k| c.get(k).map(|m| (m.start(), m.end())))
                    .collect()
            }))
        };
        if program.exact() && caps {
            return fancy_spans();
        }
        let m = match fancy.find_from_pos(s, from) {
            Ok(Some(m)) => m,
            Ok(None) => return Ok(None),
            // The backtracking engine gave up: search start by start.
            Err(_) => return program.search(s, from, caps).map_err(|_| too_complex()),
        };
        if program.exact() {
            return Ok(Some(vec![Some((m.start(), m.end()))]));
        }
        let own = program
            .match_at(s, m.start(), caps)
            .map_err(|_| too_complex())?;
        match own {
            Some(spans) => Ok(Some(spans)),
            None => fancy_spans(),
        }
    }
}

thread_local! {
    static CACHE: RefCell<Vec<(String, Flags, Rc<Compiled>)>> = const { RefCell::new(Vec::new()) };
}

/// `pattern` compiled with `flags`, from the cache when it is there.
pub fn compile(pattern: &str, flags: Flags) -> Result<Rc<Compiled>> {
    let hit = CACHE.with(|c| {
        let mut c = c.borrow_mut();
        let k = c.iter().position(|(p, f, _)| *f == flags && p == pattern)?;
        // Most recently used first.
        let e = c.remove(k);
        let re = e.2.clone();
        c.insert(0, e);
        Some(re)
    });
    if let Some(re) = hit {
        return Ok(re);
    }
    let target = translate(pattern, flags)?;
    // The program decides "too complex" and serves back-references; a
    // short pattern without bounds or many word boundaries (each of which
    // may double PostgreSQL's automaton) is never too complex, and one
    // without a back-reference builds it on first use.
    let program = OnceCell::new();
    let maybe_backref = pattern
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'\\' && (b'1'..=b'9').contains(&w[1]));
    let boundaries = pattern
        .as_bytes()
        .windows(2)
        .filter(|w| w[0] == b'\\' && (w[1] == b'y' || w[1] == b'Y'))
        .count();
    if maybe_backref
        || pattern.len() > 200
        || pattern.contains('{')
        || boundaries >= MAX_BOUNDARIES as usize
    {
        let p = Program::new(pattern, flags)
            .ok_or_else(|| invalid("regular expression is too complex"))?;
        let _ = program.set(p);
    }
    // The engine rejects some patterns PostgreSQL takes (a repeated
    // lookahead, a lookbehind of varying length): the program alone
    // serves them.
    let fancy = if program.get().is_some_and(Program::backrefs) {
        None
    } else {
        fancy_regex::RegexBuilder::new(&target).build().ok()
    };
    let re = Rc::new(Compiled {
        fancy,
        pattern: pattern.to_string(),
        flags,
        program,
    });
    if re.fancy.is_none() {
        re.program()?;
    }
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        c.truncate(CACHE_SIZE - 1);
        c.insert(0, (pattern.to_string(), flags, re.clone()));
    });
    Ok(re)
}

/// A match that needs more work than allowed.
fn too_complex() -> Error {
    err!(ProgramLimitExceeded, "regular expression is too complex")
}

/// Writes character `c` so that it stands for itself.
fn lit(out: &mut String, c: char) {
    if c.is_alphanumeric() {
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:X}}}", c as u32);
    }
}

/// The body of the ARE `pattern` after its director (`***=`, `***:`) and
/// leading embedded options (`(?i)`), which are applied to `flags`.
pub fn strip_prefix<'p>(pattern: &'p str, flags: &mut Flags) -> Result<&'p str> {
    let mut p = pattern;
    if let Some(rest) = p.strip_prefix("***=") {
        flags.literal = true;
        p = rest;
    } else if let Some(rest) = p.strip_prefix("***:") {
        p = rest;
    }
    if !flags.literal {
        // Embedded options, only at the start.
        if let Some(rest) = p.strip_prefix("(?") {
            let end = rest
                .find(')')
                .ok_or_else(|| invalid("parentheses () not balanced"))?;
            let opts = &rest[..end];
            if opts.chars().all(|c| c.is_ascii_alphabetic()) {
                for c in opts.chars() {
                    if !flags.apply(c) || c == 'g' {
                        return Err(invalid("invalid embedded option"));
                    }
                }
                p = &rest[end + 1..];
            }
        }
    }
    Ok(p)
}

/// The ARE `pattern` with `flags` in `fancy-regex` syntax.
pub fn translate(pattern: &str, mut flags: Flags) -> Result<String> {
    let p = strip_prefix(pattern, &mut flags)?;
    let mut out = String::with_capacity(p.len() + 16);
    out.push_str("(?");
    if flags.icase {
        out.push('i');
    }
    if flags.dot_nl {
        out.push('s');
    }
    if flags.multi_line {
        out.push('m');
    }
    out.push_str("u)");
    if flags.literal {
        p.chars().for_each(|c| lit(&mut out, c));
        return Ok(out);
    }
    Translator {
        chars: p.chars().collect(),
        at: 0,
        out,
        closed: Vec::new(),
        open: Vec::new(),
        expanded: flags.expanded,
    }
    .run()
}

/// An open parenthesis.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Paren {
    /// A lookaround constraint.
    Look,
    /// Capturing group number `k` (1-based).
    Capture(usize),
    /// A group that does not capture: `(?:`, or `(` inside a constraint.
    Plain,
}

/// What the previous item was, for the quantifier checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    /// Nothing quantifiable: the start, `(`, `|`, an anchor or constraint.
    None,
    /// An atom.
    Atom,
    /// A quantifier (only `?` may follow, once: non-greedy).
    Quant,
    /// A non-greedy quantifier.
    Done,
}

struct Translator {
    chars: Vec<char>,
    at: usize,
    out: String,
    /// For each capturing group opened so far, whether it is closed (a
    /// back-reference may only name a closed one).
    closed: Vec<bool>,
    /// The open parentheses, innermost last.
    open: Vec<Paren>,
    expanded: bool,
}

impl Translator {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.at + k).copied()
    }

    fn run(mut self) -> Result<String> {
        let mut prev = Prev::None;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            prev = match c {
                '(' => self.group()?,
                ')' => {
                    let paren = self
                        .open
                        .pop()
                        .ok_or_else(|| invalid("parentheses () not balanced"))?;
                    if let Paren::Capture(k) = paren {
                        self.closed[k - 1] = true;
                    }
                    if self.out.ends_with('(') || self.out.ends_with("(?:") {
                        // An empty group, which the engine cannot repeat:
                        // something matching the empty string only.
                        self.out.push_str("a{0}");
                    }
                    self.out.push(')');
                    if paren == Paren::Look {
                        Prev::None
                    } else {
                        Prev::Atom
                    }
                }
                '|' => {
                    self.out.push('|');
                    Prev::None
                }
                '^' | '$' => {
                    self.out.push(c);
                    Prev::None
                }
                '.' => {
                    self.out.push('.');
                    Prev::Atom
                }
                '[' => {
                    self.bracket()?;
                    Prev::Atom
                }
                '\\' => self.escape()?,
                '*' | '+' | '?' => {
                    quantifier(prev, c == '?')?;
                    self.out.push(c);
                    if prev == Prev::Quant {
                        Prev::Done
                    } else {
                        Prev::Quant
                    }
                }
                '{' if self.peek(0).is_some_and(|d| d.is_ascii_digit()) => {
                    quantifier(prev, false)?;
                    self.bound()?;
                    Prev::Quant
                }
                c if self.expanded && c.is_whitespace() => prev,
                '#' if self.expanded => {
                    while self.peek(0).is_some_and(|d| d != '\n') {
                        self.at += 1;
                    }
                    prev
                }
                c => {
                    lit(&mut self.out, c);
                    Prev::Atom
                }
            };
        }
        if !self.open.is_empty() {
            return Err(invalid("parentheses () not balanced"));
        }
        Ok(self.out)
    }

    /// After `(`: a group, a non-capturing group, a constraint or a comment.
    fn group(&mut self) -> Result<Prev> {
        if self.peek(0) != Some('?') {
            // Inside a constraint groups do not capture, nor count.
            if self.open.contains(&Paren::Look) {
                self.open.push(Paren::Plain);
                self.out.push_str("(?:");
            } else {
                self.closed.push(false);
                self.open.push(Paren::Capture(self.closed.len()));
                self.out.push('(');
            }
            return Ok(Prev::None);
        }
        let forms: [(&str, bool); 5] = [
            (":", false),
            ("=", true),
            ("!", true),
            ("<=", true),
            ("<!", true),
        ];
        for (form, constraint) in forms {
            let n = form.chars().count();
            if (0..n).all(|k| self.peek(1 + k) == form.chars().nth(k)) {
                self.at += 1 + n;
                self.open.push(if constraint {
                    Paren::Look
                } else {
                    Paren::Plain
                });
                self.out.push_str("(?");
                self.out.push_str(form);
                return Ok(Prev::None);
            }
        }
        if self.peek(1) == Some('#') {
            // A comment, to the next `)`.
            while let Some(c) = self.peek(0) {
                self.at += 1;
                if c == ')' {
                    return Ok(Prev::None);
                }
            }
            return Err(invalid("parentheses () not balanced"));
        }
        Err(invalid("quantifier operand invalid"))
    }

    /// After `{` and before a digit: `m}`, `m,}` or `m,n}`.
    fn bound(&mut self) -> Result<()> {
        let num = |t: &mut Translator| -> Option<u32> {
            let mut v: Option<u32> = None;
            while let Some(d) = t.peek(0).and_then(|c| c.to_digit(10)) {
                t.at += 1;
                v = Some(v.unwrap_or(0).saturating_mul(10).saturating_add(d));
            }
            v
        };
        let m = num(self).unwrap_or(0);
        let mut n = Some(m);
        if self.peek(0) == Some(',') {
            self.at += 1;
            n = num(self);
        }
        if self.peek(0) != Some('}') {
            return Err(invalid("braces {} not balanced"));
        }
        self.at += 1;
        if m > 255 || n.is_some_and(|n| n > 255 || n < m) {
            return Err(invalid("invalid repetition count(s)"));
        }
        match n {
            Some(n) if n == m => write!(self.out, "{{{m}}}"),
            Some(n) => write!(self.out, "{{{m},{n}}}"),
            None => write!(self.out, "{{{m},}}"),
        }
        .expect("writing to a String");
        Ok(())
    }

    /// After `\` outside brackets.
    fn escape(&mut self) -> Result<Prev> {
        let c = self
            .peek(0)
            .ok_or_else(|| invalid("invalid escape \\ sequence"))?;
        self.at += 1;
        let constraint = match c {
            'm' => Some(r"\b(?=\w)"),
            'M' => Some(r"\b(?<=\w)"),
            'y' => Some(r"\b"),
            'Y' => Some(r"\B"),
            'A' => Some(r"\A"),
            'Z' => Some(r"\z"),
            _ => None,
        };
        if let Some(s) = constraint {
            self.out.push_str(s);
            return Ok(Prev::None);
        }
        if matches!(c, 'd' | 'D' | 's' | 'S' | 'w' | 'W') {
            self.out.push('\\');
            self.out.push(c);
            return Ok(Prev::Atom);
        }
        if let Some(d) = c.to_digit(10).filter(|d| *d > 0) {
            // No back-references inside lookaround constraints.
            let closed = self.closed.get(d as usize - 1) == Some(&true);
            if !closed || self.open.contains(&Paren::Look) {
                return Err(invalid("invalid backreference number"));
            }
            write!(self.out, "\\{d}").expect("writing to a String");
            return Ok(Prev::Atom);
        }
        let ch = self.char_escape(c)?;
        lit(&mut self.out, ch);
        Ok(Prev::Atom)
    }

    fn char_escape(&mut self, c: char) -> Result<char> {
        char_escape(&self.chars, &mut self.at, c)
    }

    /// After `[`: a bracket expression, written as a class.
    fn bracket(&mut self) -> Result<()> {
        let unbalanced = || invalid("brackets [] not balanced");
        self.out.push('[');
        if self.peek(0) == Some('^') {
            self.at += 1;
            self.out.push('^');
        }
        let mut first = true;
        loop {
            let c = self.peek(0).ok_or_else(unbalanced)?;
            self.at += 1;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = match c {
                '[' if matches!(self.peek(0), Some(':')) => {
                    let name = self.bracket_name(':')?;
                    if !CLASSES.contains(&name.as_str()) {
                        return Err(invalid("invalid character class"));
                    }
                    let _ = write!(self.out, "[:{name}:]");
                    continue;
                }
                '[' if matches!(self.peek(0), Some('.' | '=')) => {
                    let delim = self.peek(0).unwrap_or('.');
                    let name = self.bracket_name(delim)?;
                    let mut it = name.chars();
                    match (it.next(), it.next()) {
                        (Some(ch), None) => ch,
                        _ => return Err(invalid("invalid collating element")),
                    }
                }
                '\\' => {
                    let e = self.peek(0).ok_or_else(unbalanced)?;
                    self.at += 1;
                    if matches!(e, 'd' | 'D' | 's' | 'S' | 'w' | 'W') {
                        self.out.push('\\');
                        self.out.push(e);
                        continue;
                    }
                    self.char_escape(e)?
                }
                c => c,
            };
            if self.peek(0) == Some('-') && self.peek(1).is_some_and(|d| d != ']') {
                self.at += 1;
                let hi = match self.peek(0).ok_or_else(unbalanced)? {
                    '\\' => {
                        self.at += 1;
                        let e = self.peek(0).ok_or_else(unbalanced)?;
                        self.at += 1;
                        self.char_escape(e)?
                    }
                    h => {
                        self.at += 1;
                        h
                    }
                };
                if hi < lo {
                    return Err(invalid("invalid character range"));
                }
                lit(&mut self.out, lo);
                self.out.push('-');
                lit(&mut self.out, hi);
            } else {
                lit(&mut self.out, lo);
            }
        }
        self.out.push(']');
        Ok(())
    }

    /// After `[` and at `delim`: the name up to `delim]`.
    fn bracket_name(&mut self, delim: char) -> Result<String> {
        self.at += 1;
        let mut name = String::new();
        loop {
            let c = self
                .peek(0)
                .ok_or_else(|| invalid("brackets [] not balanced"))?;
            self.at += 1;
            if c == delim && self.peek(0) == Some(']') {
                self.at += 1;
                return Ok(name);
            }
            name.push(c);
        }
    }
}

/// The character a character-entry escape `\c...` stands for.
pub(super) fn char_escape(chars: &[char], at: &mut usize, c: char) -> Result<char> {
    let bad = || invalid("invalid escape \\ sequence");
    Ok(match c {
        'a' => '\x07',
        'b' => '\x08',
        'B' => '\\',
        'e' => '\x1b',
        'f' => '\x0c',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'v' => '\x0b',
        'c' => {
            let x = chars.get(*at).copied().ok_or_else(bad)?;
            *at += 1;
            char::from_u32(x as u32 & 0x1f).ok_or_else(bad)?
        }
        'x' | 'u' | 'U' | '0' => {
            let (radix, max) = match c {
                'x' => (16, 8),
                'u' => (16, 4),
                'U' => (16, 8),
                _ => (8, 3),
            };
            let mut v = 0u32;
            let mut n = 0;
            while n < max {
                match chars.get(*at).copied().and_then(|d| d.to_digit(radix)) {
                    Some(d) => v = v * radix + d,
                    None => break,
                }
                *at += 1;
                n += 1;
            }
            if (c == 'u' && n != 4) || (c == 'U' && n != 8) || (c == 'x' && n == 0) {
                return Err(bad());
            }
            char::from_u32(v).ok_or_else(bad)?
        }
        c if c.is_alphanumeric() => return Err(bad()),
        c => c,
    })
}

/// PostgreSQL's character class names.
pub(super) const CLASSES: &[&str] = &[
    "alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space",
    "upper", "xdigit", "word",
];

/// Whether a quantifier may follow `prev` (`lazy`: it is a `?`, which
/// may make the quantifier before it non-greedy).
fn quantifier(prev: Prev, lazy: bool) -> Result<()> {
    match prev {
        Prev::Atom => Ok(()),
        Prev::Quant if lazy => Ok(()),
        _ => Err(invalid("quantifier operand invalid")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_match(p: &str, s: &str) -> bool {
        compile(p, Flags::default()).unwrap().is_match(s).unwrap()
    }

    fn error(p: &str) -> String {
        compile(p, Flags::default()).unwrap_err().message
    }

    #[test]
    fn postgres_syntax() {
        assert!(is_match(r"^([bc])\1*$", "bbbbb"));
        assert!(!is_match(r"^([bc])\1*$", "bbc"));
        assert!(is_match(r"\mfoo\M", "a foo b"));
        assert!(!is_match(r"\mfoo\M", "afoo"));
        assert!(is_match(r"[[:alpha:]]+\y", "abc"));
        assert!(is_match("a{", "xa{"));
        assert!(is_match("(?i)ABC", "abc"));
        assert!(is_match("***=a.b", "xa.b"));
        assert!(!is_match("***=a.b", "axb"));
        assert!(is_match(r"[a\]]", "]"));
        assert!(is_match("[]a]", "]"));
        assert!(is_match("a-b", "a-b"));
        assert!(is_match("[a-]", "-"));
        assert!(is_match("a(?=b)", "ab"));
        assert!(is_match("x  y", "x  y"));
        assert!(is_match("^(?:){1,1}?(o.a){1,1}(?:.)$", "omas"));
    }

    #[test]
    fn postgres_errors() {
        let e = |m: &str| format!("invalid regular expression: {m}");
        assert_eq!(error("a{1"), e("braces {} not balanced"));
        assert_eq!(error("a{3,1}"), e("invalid repetition count(s)"));
        assert_eq!(error("(a"), e("parentheses () not balanced"));
        assert_eq!(error("a)"), e("parentheses () not balanced"));
        assert_eq!(error("[a"), e("brackets [] not balanced"));
        assert_eq!(error("*a"), e("quantifier operand invalid"));
        assert_eq!(error("a**"), e("quantifier operand invalid"));
        assert_eq!(error(r"(a)\2"), e("invalid backreference number"));
        assert_eq!(error("[z-a]"), e("invalid character range"));
        assert_eq!(error("[[:foo:]]"), e("invalid character class"));
        assert_eq!(error(r"\q"), e("invalid escape \\ sequence"));
        assert_eq!(error("a\\"), e("invalid escape \\ sequence"));
    }
}
