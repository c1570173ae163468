//! An ARE (PostgreSQL's "advanced regular expression") as a tree: the
//! input of the NFA builder ([`super::nfa`]) and of the dissection tree
//! ([`super::dissect`]).
//!
//! The pattern has already been accepted by [`crate::types::funcs::are`]'s
//! translation, which raises PostgreSQL's syntax errors; this parser reads
//! the same syntax and may therefore be lenient. Invariant: capturing
//! groups are numbered as PostgreSQL numbers them (by their opening
//! parenthesis, not counting groups inside lookaround constraints, which
//! never capture), and [`Parsed::groups`] holds each group's body.

use super::super::are::{char_escape, strip_prefix, Flags, CLASSES};

/// A preference: `LONGER` (greedy), `SHORTER` (non-greedy) or neither.
pub const LONGER: u8 = 1;
/// Non-greedy.
pub const SHORTER: u8 = 2;

/// A named class inside a bracket expression (or `\d \s \w`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Posix(&'static str),
    Digit,
    Space,
    Word,
}

/// The set of characters one atom matches.
#[derive(Clone, Debug)]
pub struct CharSet {
    pub negated: bool,
    pub ranges: Vec<(char, char)>,
    /// Classes, each possibly negated (`\D` in a bracket).
    pub classes: Vec<(Class, bool)>,
    pub icase: bool,
    /// A negated set that must not match a newline (`n` and `p` flags).
    pub no_newline: bool,
}

/// Whether `c` is a word character for `\m \M \y \Y` and `\w`.
pub fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Class {
    fn contains(self, c: char) -> bool {
        match self {
            Class::Digit => c.is_numeric(),
            Class::Space => c.is_whitespace(),
            Class::Word => is_word(c),
            Class::Posix(name) => match name {
                "alnum" => c.is_ascii_alphanumeric(),
                "alpha" => c.is_ascii_alphabetic(),
                "blank" => c == ' ' || c == '\t',
                "cntrl" => c.is_ascii_control(),
                "digit" => c.is_ascii_digit(),
                "graph" => c.is_ascii_graphic(),
                "lower" => c.is_ascii_lowercase(),
                "print" => c.is_ascii_graphic() || c == ' ',
                "punct" => c.is_ascii_punctuation(),
                "space" => c.is_ascii_whitespace() || c == '\x0b',
                "upper" => c.is_ascii_uppercase(),
                "xdigit" => c.is_ascii_hexdigit(),
                _ => c.is_ascii_alphanumeric() || c == '_',
            },
        }
    }
}

impl CharSet {
    fn one(c: char, icase: bool) -> CharSet {
        CharSet {
            negated: false,
            ranges: vec![(c, c)],
            classes: Vec::new(),
            icase,
            no_newline: false,
        }
    }

    fn raw(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
            || self.classes.iter().any(|&(k, neg)| k.contains(c) != neg)
    }

    /// Whether the set matches `c`.
    pub fn matches(&self, c: char) -> bool {
        let mut hit = self.raw(c);
        if !hit && self.icase {
            hit = c.to_lowercase().any(|l| self.raw(l)) || c.to_uppercase().any(|u| self.raw(u));
        }
        if self.negated {
            !(hit || (self.no_newline && c == '\n'))
        } else {
            hit
        }
    }
}

/// A zero-width constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assert {
    /// `^`: the start, or after a newline when newline-sensitive.
    Bol(bool),
    /// `$`: the end, or before a newline when newline-sensitive.
    Eol(bool),
    /// `\A`.
    Bos,
    /// `\Z`.
    Eos,
    /// `\m`.
    WordStart,
    /// `\M`.
    WordEnd,
    /// `\y`.
    Boundary,
    /// `\Y`.
    NotBoundary,
}

/// An atom.
#[derive(Clone, Debug)]
pub enum Atom {
    Char(CharSet),
    Assert(Assert),
    /// A lookaround constraint: `(?=` `(?!` `(?<=` `(?<!`.
    Look {
        behind: bool,
        negate: bool,
        body: Box<Alt>,
    },
    /// A group, capturing (its number) or not.
    Group {
        cap: Option<usize>,
        body: Box<Alt>,
    },
    Backref(usize),
}

/// An atom with its quantifier (`{1,1}` with no preference when none).
#[derive(Clone, Debug)]
pub struct Piece {
    pub atom: Atom,
    pub min: u32,
    /// `None`: unbounded.
    pub max: Option<u32>,
    /// The quantifier's preference: 0, [`LONGER`] or [`SHORTER`].
    pub pref: u8,
}

impl Piece {
    /// Whether the piece is a constraint (never quantified).
    pub fn is_constraint(&self) -> bool {
        matches!(self.atom, Atom::Assert(_) | Atom::Look { .. })
    }
}

/// Branches separated by `|`, each a sequence of pieces.
#[derive(Clone, Debug, Default)]
pub struct Alt(pub Vec<Vec<Piece>>);

/// A parsed pattern.
pub struct Parsed {
    pub root: Alt,
    /// `groups[k]`: the body of capturing group `k` (index 0 unused).
    pub groups: Vec<Alt>,
    /// The flags with the pattern's embedded options applied.
    pub flags: Flags,
}

/// Parses `pattern` (already validated by the translation).
pub fn parse(pattern: &str, mut flags: Flags) -> Parsed {
    // Validated by the translation, which applied the same prefix.
    let p = strip_prefix(pattern, &mut flags).unwrap_or(pattern);
    let mut parser = Parser {
        chars: p.chars().collect(),
        at: 0,
        flags,
        groups: vec![Alt::default()],
    };
    let root = if flags.literal {
        let pieces = p
            .chars()
            .map(|c| plain(Atom::Char(CharSet::one(c, flags.icase))))
            .collect();
        Alt(vec![pieces])
    } else {
        parser.alt(false)
    };
    Parsed {
        root,
        groups: parser.groups,
        flags,
    }
}

fn plain(atom: Atom) -> Piece {
    Piece {
        atom,
        min: 1,
        max: Some(1),
        pref: 0,
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    flags: Flags,
    groups: Vec<Alt>,
}

impl Parser {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.at + k).copied()
    }

    /// Branches up to `)` (consumed) or the end; `in_look`: inside a
    /// lookaround constraint, where groups do not capture.
    fn alt(&mut self, in_look: bool) -> Alt {
        let mut branches = vec![Vec::new()];
        while let Some(c) = self.peek(0) {
            self.at += 1;
            let atom = match c {
                ')' => break,
                '|' => {
                    branches.push(Vec::new());
                    continue;
                }
                '(' => match self.group(in_look) {
                    Some(a) => a,
                    None => continue,
                },
                '^' => Atom::Assert(Assert::Bol(self.flags.multi_line)),
                '$' => Atom::Assert(Assert::Eol(self.flags.multi_line)),
                '.' => Atom::Char(CharSet {
                    negated: true,
                    ranges: Vec::new(),
                    classes: Vec::new(),
                    icase: false,
                    no_newline: !self.flags.dot_nl,
                }),
                '[' => Atom::Char(self.bracket()),
                '\\' => self.escape(),
                '*' | '+' | '?' => {
                    self.quantify(branches.last_mut().expect("a branch"), c);
                    continue;
                }
                '{' if self.peek(0).is_some_and(|d| d.is_ascii_digit()) => {
                    self.bound(branches.last_mut().expect("a branch"));
                    continue;
                }
                c if self.flags.expanded && c.is_whitespace() => continue,
                '#' if self.flags.expanded => {
                    while self.peek(0).is_some_and(|d| d != '\n') {
                        self.at += 1;
                    }
                    continue;
                }
                c => Atom::Char(CharSet::one(c, self.flags.icase)),
            };
            branches.last_mut().expect("a branch").push(plain(atom));
        }
        Alt(branches)
    }

    /// The preference a `?` after a quantifier gives.
    fn lazy(&mut self) -> u8 {
        if self.peek(0) == Some('?') {
            self.at += 1;
            SHORTER
        } else {
            LONGER
        }
    }

    fn quantify(&mut self, branch: &mut [Piece], c: char) {
        let pref = self.lazy();
        if let Some(p) = branch.last_mut() {
            (p.min, p.max) = match c {
                '*' => (0, None),
                '+' => (1, None),
                _ => (0, Some(1)),
            };
            p.pref = pref;
        }
    }

    fn num(&mut self) -> Option<u32> {
        let mut v: Option<u32> = None;
        while let Some(d) = self.peek(0).and_then(|c| c.to_digit(10)) {
            self.at += 1;
            v = Some(v.unwrap_or(0).saturating_mul(10).saturating_add(d));
        }
        v
    }

    /// After `{`: `{m}` keeps the operand's preference, `{m,}` and
    /// `{m,n}` exercise one.
    fn bound(&mut self, branch: &mut [Piece]) {
        let m = self.num().unwrap_or(0);
        let (max, comma) = if self.peek(0) == Some(',') {
            self.at += 1;
            (self.num(), true)
        } else {
            (Some(m), false)
        };
        self.at += 1; // '}'
        let pref = self.lazy();
        if let Some(p) = branch.last_mut() {
            p.min = m;
            p.max = max;
            p.pref = if comma { pref } else { 0 };
        }
    }

    /// After `(`; `None` for a comment.
    fn group(&mut self, in_look: bool) -> Option<Atom> {
        if self.peek(0) != Some('?') {
            let cap = if in_look {
                None
            } else {
                self.groups.push(Alt::default());
                Some(self.groups.len() - 1)
            };
            let body = self.alt(in_look);
            if let Some(k) = cap {
                self.groups[k] = body.clone();
            }
            return Some(Atom::Group {
                cap,
                body: Box::new(body),
            });
        }
        let forms: [(&str, Option<(bool, bool)>); 5] = [
            (":", None),
            ("=", Some((false, false))),
            ("!", Some((false, true))),
            ("<=", Some((true, false))),
            ("<!", Some((true, true))),
        ];
        for (form, look) in forms {
            let n = form.chars().count();
            if (0..n).all(|k| self.peek(1 + k) == form.chars().nth(k)) {
                self.at += 1 + n;
                return Some(match look {
                    None => Atom::Group {
                        cap: None,
                        body: Box::new(self.alt(in_look)),
                    },
                    Some((behind, negate)) => Atom::Look {
                        behind,
                        negate,
                        body: Box::new(self.alt(true)),
                    },
                });
            }
        }
        // A comment, to the next `)`.
        while let Some(c) = self.peek(0) {
            self.at += 1;
            if c == ')' {
                break;
            }
        }
        None
    }

    fn class_escape(e: char) -> Option<(Class, bool)> {
        Some(match e {
            'd' => (Class::Digit, false),
            'D' => (Class::Digit, true),
            's' => (Class::Space, false),
            'S' => (Class::Space, true),
            'w' => (Class::Word, false),
            'W' => (Class::Word, true),
            _ => return None,
        })
    }

    /// After `\` outside brackets.
    fn escape(&mut self) -> Atom {
        let c = self.peek(0).unwrap_or('\\');
        self.at += 1;
        let a = match c {
            'm' => Some(Assert::WordStart),
            'M' => Some(Assert::WordEnd),
            'y' => Some(Assert::Boundary),
            'Y' => Some(Assert::NotBoundary),
            'A' => Some(Assert::Bos),
            'Z' => Some(Assert::Eos),
            _ => None,
        };
        if let Some(a) = a {
            return Atom::Assert(a);
        }
        if let Some((k, neg)) = Self::class_escape(c) {
            return Atom::Char(CharSet {
                negated: neg,
                ranges: Vec::new(),
                classes: vec![(k, false)],
                icase: self.flags.icase,
                no_newline: !self.flags.dot_nl,
            });
        }
        if let Some(d) = c.to_digit(10).filter(|d| *d > 0) {
            return Atom::Backref(d as usize);
        }
        let ch = char_escape(&self.chars, &mut self.at, c).unwrap_or(c);
        Atom::Char(CharSet::one(ch, self.flags.icase))
    }

    /// After `[`.
    fn bracket(&mut self) -> CharSet {
        let mut set = CharSet {
            negated: false,
            ranges: Vec::new(),
            classes: Vec::new(),
            icase: self.flags.icase,
            no_newline: !self.flags.dot_nl,
        };
        if self.peek(0) == Some('^') {
            self.at += 1;
            set.negated = true;
        }
        let mut first = true;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = match c {
                '[' if matches!(self.peek(0), Some(':')) => {
                    let name = self.bracket_name(':');
                    if let Some(n) = CLASSES.iter().find(|n| **n == name) {
                        set.classes.push((Class::Posix(n), false));
                    }
                    continue;
                }
                '[' if matches!(self.peek(0), Some('.' | '=')) => {
                    let delim = self.peek(0).unwrap_or('.');
                    self.bracket_name(delim).chars().next().unwrap_or(' ')
                }
                '\\' => {
                    let e = self.peek(0).unwrap_or('\\');
                    self.at += 1;
                    if let Some(k) = Self::class_escape(e) {
                        set.classes.push(k);
                        continue;
                    }
                    char_escape(&self.chars, &mut self.at, e).unwrap_or(e)
                }
                c => c,
            };
            if self.peek(0) == Some('-') && self.peek(1).is_some_and(|d| d != ']') {
                self.at += 1;
                let h = self.peek(0).unwrap_or(lo);
                self.at += 1;
                let hi = if h == '\\' {
                    let e = self.peek(0).unwrap_or('\\');
                    self.at += 1;
                    char_escape(&self.chars, &mut self.at, e).unwrap_or(e)
                } else {
                    h
                };
                set.ranges.push((lo, hi));
            } else {
                set.ranges.push((lo, lo));
            }
        }
        set
    }

    /// After `[` and at `delim`: the name up to `delim]`.
    fn bracket_name(&mut self, delim: char) -> String {
        self.at += 1;
        let mut name = String::new();
        while let Some(c) = self.peek(0) {
            self.at += 1;
            if c == delim && self.peek(0) == Some(']') {
                self.at += 1;
                break;
            }
            name.push(c);
        }
        name
    }
}
