//! A Thompson NFA of a parsed ARE and its simulation over position sets:
//! the "DFA" questions PostgreSQL's `regexec.c` asks of each node of its
//! dissection tree, answered without backtracking.
//!
//! Every node's fragment has one entry and one exit state; the exit has
//! no edges inside the fragment (only enclosing constructs add edges out
//! of it), so simulating a fragment from its entry and stopping at its
//! exit answers for that node alone, constraints (`^ $ \m \M \y \Y`,
//! lookaround) being judged at their absolute positions in the whole
//! string. Positions are byte offsets at character boundaries. A
//! back-reference matches, here, whatever its group's body could match
//! (constraints removed), as PostgreSQL's NFA does; the dissection checks
//! the actual text. Invariant: the NFA has at most [`MAX_STATES`] states.

use std::cell::RefCell;
use std::collections::HashMap;

use super::parse::{is_word, Alt, Assert, Atom, CharSet, Piece};

/// The most states a pattern may need ("regular expression is too
/// complex" beyond).
pub const MAX_STATES: usize = 200_000;

/// A fragment: entry and exit state.
#[derive(Clone, Copy, Debug)]
pub struct Frag {
    pub start: u32,
    pub end: u32,
}

#[derive(Clone, Copy, Debug)]
enum Edge {
    Eps(u32),
    Char(u32, u32),
    Assert(Assert, u32),
    Look(u32, u32),
}

struct Look {
    frag: Frag,
    behind: bool,
    negate: bool,
}

/// The automaton: states with their edges, the character sets and the
/// lookaround constraints the edges name.
#[derive(Default)]
pub struct Nfa {
    states: Vec<Vec<Edge>>,
    sets: Vec<CharSet>,
    looks: Vec<Look>,
}

/// The pattern needs more than [`MAX_STATES`] states.
#[derive(Debug)]
pub struct TooBig;

impl Nfa {
    pub fn state(&mut self) -> Result<u32, TooBig> {
        if self.states.len() >= MAX_STATES {
            return Err(TooBig);
        }
        self.states.push(Vec::new());
        Ok(self.states.len() as u32 - 1)
    }

    pub fn eps(&mut self, from: u32, to: u32) {
        self.states[from as usize].push(Edge::Eps(to));
    }

    /// A fragment matching the empty string.
    pub fn empty(&mut self) -> Result<Frag, TooBig> {
        let (start, end) = (self.state()?, self.state()?);
        self.eps(start, end);
        Ok(Frag { start, end })
    }

    /// Fragments in sequence.
    pub fn concat(&mut self, a: Frag, b: Frag) -> Frag {
        self.eps(a.end, b.start);
        Frag {
            start: a.start,
            end: b.end,
        }
    }

    /// `build` repeated `min` to `max` (`None`: unbounded) times.
    pub fn repeat(
        &mut self,
        min: u32,
        max: Option<u32>,
        build: &mut dyn FnMut(&mut Nfa) -> Result<Frag, TooBig>,
    ) -> Result<Frag, TooBig> {
        let start = self.state()?;
        let mut cur = start;
        for _ in 0..min {
            let f = build(self)?;
            self.eps(cur, f.start);
            cur = f.end;
        }
        let end = self.state()?;
        match max {
            None => {
                let f = build(self)?;
                let hub = self.state()?;
                self.eps(cur, hub);
                self.eps(hub, f.start);
                self.eps(f.end, hub);
                self.eps(hub, end);
            }
            Some(max) => {
                self.eps(cur, end);
                for _ in min..max {
                    let f = build(self)?;
                    self.eps(cur, f.start);
                    cur = f.end;
                    self.eps(cur, end);
                }
            }
        }
        Ok(Frag { start, end })
    }

    /// Alternatives.
    pub fn union(&mut self, frags: &[Frag]) -> Result<Frag, TooBig> {
        let (start, end) = (self.state()?, self.state()?);
        for f in frags {
            self.eps(start, f.start);
            self.eps(f.end, end);
        }
        Ok(Frag { start, end })
    }

    /// The fragment of `alt`; `groups` are the capturing groups' bodies
    /// (for back-references); `bare`: constraints match everywhere (a
    /// back-reference's copy).
    pub fn alt(&mut self, alt: &Alt, groups: &[Alt], bare: bool) -> Result<Frag, TooBig> {
        let mut frags = Vec::with_capacity(alt.0.len());
        for branch in &alt.0 {
            frags.push(self.branch(branch, groups, bare)?);
        }
        if frags.len() == 1 {
            return Ok(frags[0]);
        }
        self.union(&frags)
    }

    /// The fragment of a sequence of pieces.
    pub fn branch(&mut self, pieces: &[Piece], groups: &[Alt], bare: bool) -> Result<Frag, TooBig> {
        let mut f = self.empty()?;
        for p in pieces {
            let g = if p.min == 1 && p.max == Some(1) {
                self.atom(&p.atom, groups, bare)?
            } else {
                self.repeat(p.min, p.max, &mut |n| n.atom(&p.atom, groups, bare))?
            };
            f = self.concat(f, g);
        }
        Ok(f)
    }

    fn atom(&mut self, atom: &Atom, groups: &[Alt], bare: bool) -> Result<Frag, TooBig> {
        let (start, end) = (self.state()?, self.state()?);
        let edge = match atom {
            Atom::Char(set) => {
                self.sets.push(set.clone());
                Edge::Char(self.sets.len() as u32 - 1, end)
            }
            Atom::Assert(_) | Atom::Look { .. } if bare => Edge::Eps(end),
            Atom::Assert(a) => Edge::Assert(*a, end),
            Atom::Look {
                behind,
                negate,
                body,
            } => {
                let mut frag = self.alt(body, groups, false)?;
                if *behind {
                    // Any text before the body: the check runs from the
                    // start of the string to the position.
                    let any = CharSet {
                        negated: true,
                        ranges: Vec::new(),
                        classes: Vec::new(),
                        icase: false,
                        no_newline: false,
                    };
                    let prefix = self.repeat(0, None, &mut |n| {
                        n.atom(&Atom::Char(any.clone()), groups, true)
                    })?;
                    frag = self.concat(prefix, frag);
                }
                self.looks.push(Look {
                    frag,
                    behind: *behind,
                    negate: *negate,
                });
                Edge::Look(self.looks.len() as u32 - 1, end)
            }
            Atom::Group { body, .. } => {
                let f = self.alt(body, groups, bare)?;
                self.eps(start, f.start);
                self.eps(f.end, end);
                return Ok(Frag { start, end });
            }
            Atom::Backref(k) => {
                let body = groups.get(*k).cloned().unwrap_or_default();
                let f = self.alt(&body, groups, true)?;
                self.eps(start, f.start);
                self.eps(f.end, end);
                return Ok(Frag { start, end });
            }
        };
        self.states[start as usize].push(edge);
        Ok(Frag { start, end })
    }
}

/// What a run looks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// The last accepting position.
    Longest,
    /// The first accepting position at or after this one.
    Shortest(usize),
}

/// Simulations of one NFA over one string, with the lookaround answers
/// remembered.
pub struct Sim<'a> {
    nfa: &'a Nfa,
    s: &'a str,
    looks: RefCell<HashMap<(u32, usize), bool>>,
}

/// The work lists of one run.
struct Sets {
    mark: Vec<u32>,
    gen: u32,
    cur: Vec<u32>,
    next: Vec<u32>,
    stack: Vec<u32>,
}

impl<'a> Sim<'a> {
    pub fn new(nfa: &'a Nfa, s: &'a str) -> Sim<'a> {
        Sim {
            nfa,
            s,
            looks: RefCell::new(HashMap::new()),
        }
    }

    /// The last position at or before `limit` where `f` can end, starting
    /// at `begin`.
    pub fn longest(&self, f: Frag, begin: usize, limit: usize) -> Option<usize> {
        self.run(f, begin, limit, Want::Longest)
    }

    /// The first position in `from..=limit` where `f` can end, starting
    /// at `begin`.
    pub fn shortest(&self, f: Frag, begin: usize, from: usize, limit: usize) -> Option<usize> {
        if from > limit {
            return None;
        }
        self.run(f, begin, limit, Want::Shortest(from))
    }

    /// Whether `f` can match exactly `begin..end`.
    pub fn exact(&self, f: Frag, begin: usize, end: usize) -> bool {
        self.longest(f, begin, end) == Some(end)
    }

    fn check(&self, a: Assert, pos: usize) -> bool {
        let prev = self.s[..pos].chars().next_back();
        let next = self.s[pos..].chars().next();
        let w = |c: Option<char>| c.is_some_and(is_word);
        match a {
            Assert::Bol(nl) => pos == 0 || (nl && prev == Some('\n')),
            Assert::Eol(nl) => pos == self.s.len() || (nl && next == Some('\n')),
            Assert::Bos => pos == 0,
            Assert::Eos => pos == self.s.len(),
            Assert::WordStart => !w(prev) && w(next),
            Assert::WordEnd => w(prev) && !w(next),
            Assert::Boundary => w(prev) != w(next),
            Assert::NotBoundary => w(prev) == w(next),
        }
    }

    fn look(&self, k: u32, pos: usize) -> bool {
        if let Some(&v) = self.looks.borrow().get(&(k, pos)) {
            return v;
        }
        let l = &self.nfa.looks[k as usize];
        let found = if l.behind {
            self.exact(l.frag, 0, pos)
        } else {
            self.longest(l.frag, pos, self.s.len()).is_some()
        };
        let v = found != l.negate;
        self.looks.borrow_mut().insert((k, pos), v);
        v
    }

    /// Adds `from` and what it reaches without consuming to `sets.cur`.
    fn close(&self, sets: &mut Sets, from: u32, pos: usize, exit: u32) {
        sets.stack.push(from);
        while let Some(st) = sets.stack.pop() {
            if sets.mark[st as usize] == sets.gen {
                continue;
            }
            sets.mark[st as usize] = sets.gen;
            sets.cur.push(st);
            if st == exit {
                continue;
            }
            for e in &self.nfa.states[st as usize] {
                match *e {
                    Edge::Eps(t) => sets.stack.push(t),
                    Edge::Assert(a, t) if self.check(a, pos) => sets.stack.push(t),
                    Edge::Look(k, t) if self.look(k, pos) => sets.stack.push(t),
                    _ => {}
                }
            }
        }
    }

    fn run(&self, f: Frag, begin: usize, limit: usize, want: Want) -> Option<usize> {
        let n = self.nfa.states.len();
        let mut sets = Sets {
            mark: vec![0; n],
            gen: 1,
            cur: Vec::new(),
            next: Vec::new(),
            stack: Vec::new(),
        };
        let mut pos = begin;
        self.close(&mut sets, f.start, pos, f.end);
        let mut last = None;
        loop {
            if sets.mark[f.end as usize] == sets.gen {
                match want {
                    Want::Longest => last = Some(pos),
                    Want::Shortest(from) if pos >= from => return Some(pos),
                    Want::Shortest(_) => {}
                }
            }
            if pos >= limit || sets.cur.is_empty() {
                return last;
            }
            let Some(c) = self.s[pos..].chars().next() else {
                return last;
            };
            if pos + c.len_utf8() > limit {
                return last;
            }
            sets.next.clear();
            for &st in &sets.cur {
                if st == f.end {
                    continue;
                }
                for e in &self.nfa.states[st as usize] {
                    if let Edge::Char(k, t) = *e {
                        if self.nfa.sets[k as usize].matches(c) {
                            sets.next.push(t);
                        }
                    }
                }
            }
            pos += c.len_utf8();
            sets.gen += 1;
            sets.cur.clear();
            let next = std::mem::take(&mut sets.next);
            for &t in &next {
                self.close(&mut sets, t, pos, f.end);
            }
            sets.next = next;
        }
    }
}
