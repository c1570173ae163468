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

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use hashbrown::HashMap;

use super::parse::{is_word, Alt, Assert, Atom, CharSet, Piece};

/// The most states a pattern may need ("regular expression is too
/// complex" beyond): a pattern of some 400,000 characters, which
/// PostgreSQL's compile-space limit also takes.
pub const MAX_STATES: usize = 1_000_000;

/// A fragment: entry and exit state.
#[derive(Clone, Copy, Debug)]
pub struct Frag {
    pub start: u32,
    pub end: u32,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Edge {
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
    pub(super) states: Vec<Vec<Edge>>,
    sets: Vec<CharSet>,
    looks: Vec<Look>,
    /// [`Sim::closure`]'s answers, by (state, exit), for every string
    /// matched.
    closures: RefCell<HashMap<(u32, u32), Closure>>,
}

/// What a state reaches through empty edges, up to a fragment's exit: the
/// states that matter there (with a consuming edge, or the exit), and the
/// constraint edges on the way, whose answers depend on the position.
#[derive(Clone)]
struct Closure {
    states: Rc<[u32]>,
    constraints: Rc<[Edge]>,
}

/// How many closures an automaton remembers.
const MAX_CLOSURES: usize = 100_000;

/// The pattern needs more than [`MAX_STATES`] states.
#[derive(Debug)]
pub struct TooBig;

impl Nfa {
    /// Whether lookaround constraint `k` looks behind, and is negated.
    pub(super) fn look_kind(&self, k: u32) -> (bool, bool) {
        let l = &self.looks[k as usize];
        (l.behind, l.negate)
    }

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
    /// Every accepting position.
    All,
    /// The first accepting position at or after this one.
    First(usize),
}

/// Where a fragment can end from one start, as far as a run went.
struct Ends {
    /// The accepting positions found, ascending.
    at: Rc<Vec<usize>>,
    /// The run went up to here, or to the end if `done`.
    reached: usize,
    /// No state was left: there are no more.
    done: bool,
}

/// How many remembered end positions a simulation keeps before it
/// forgets them all (a bound on its memory for long strings).
const MEMO_BUDGET: usize = 1 << 20;

/// Simulations of one NFA over one string, with the lookaround answers
/// and the ends found from each start remembered: the dissection asks
/// the same fragment from the same start again with other limits.
pub struct Sim<'a> {
    nfa: &'a Nfa,
    s: &'a str,
    looks: RefCell<HashMap<(u32, usize), bool>>,
    ends: RefCell<HashMap<(u32, u32, usize), Ends>>,
    /// End positions held in `ends`.
    held: Cell<usize>,
    /// Work lists to reuse (a run may start another, for lookaround).
    spare: RefCell<Vec<Sets>>,
}

/// The work lists of one run.
struct Sets {
    mark: Vec<u32>,
    /// The states whose closure this generation has added.
    done: Vec<u32>,
    /// States whose closure is still to add.
    todo: Vec<u32>,
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
            ends: RefCell::new(HashMap::new()),
            held: Cell::new(0),
            spare: RefCell::new(Vec::new()),
        }
    }

    /// The ends of `f` from `begin`, found at least up to `limit`.
    fn ends(&self, f: Frag, begin: usize, limit: usize) -> Rc<Vec<usize>> {
        if let Some(e) = self.ends.borrow().get(&(f.start, f.end, begin)) {
            if e.done || e.reached >= limit {
                return e.at.clone();
            }
        }
        let (at, done) = self.run(f, begin, limit, Want::All, false);
        let at = Rc::new(at);
        if self.held.get() + at.len() > MEMO_BUDGET {
            self.ends.borrow_mut().clear();
            self.held.set(0);
        }
        self.held.set(self.held.get() + at.len());
        let e = Ends {
            at: at.clone(),
            reached: limit,
            done,
        };
        self.ends.borrow_mut().insert((f.start, f.end, begin), e);
        at
    }

    /// The last position at or before `limit` where `f` can end, starting
    /// at `begin`.
    pub fn longest(&self, f: Frag, begin: usize, limit: usize) -> Option<usize> {
        let at = self.ends(f, begin, limit);
        let k = at.partition_point(|&p| p <= limit);
        k.checked_sub(1).map(|k| at[k])
    }

    /// The first position in `from..=limit` where `f` can end, starting
    /// at `begin`.
    pub fn shortest(&self, f: Frag, begin: usize, from: usize, limit: usize) -> Option<usize> {
        if from > limit {
            return None;
        }
        if let Some(e) = self.ends.borrow().get(&(f.start, f.end, begin)) {
            if e.done || e.reached >= limit {
                let k = e.at.partition_point(|&p| p < from);
                return e.at.get(k).copied().filter(|&p| p <= limit);
            }
        }
        // Not remembered: stop at the first end rather than find them all.
        self.run(f, begin, limit, Want::First(from), false)
            .0
            .first()
            .copied()
    }

    /// The first position at or after `from` where a match of `f` that
    /// starts at or after `from` can end (PostgreSQL's search DFA, which
    /// is the RE with a leading `.*`).
    pub fn first_end(&self, f: Frag, from: usize) -> Option<usize> {
        let (at, _) = self.run(f, from, self.s.len(), Want::First(from), true);
        at.first().copied()
    }

    /// Whether `f` can match exactly `begin..end`.
    pub fn exact(&self, f: Frag, begin: usize, end: usize) -> bool {
        self.ends(f, begin, end).binary_search(&end).is_ok()
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
        let mut todo = std::mem::take(&mut sets.todo);
        todo.push(from);
        while let Some(st) = todo.pop() {
            if sets.done[st as usize] == sets.gen {
                continue;
            }
            sets.done[st as usize] = sets.gen;
            let Some(c) = self.closure(st, exit) else {
                self.walk(sets, st, pos, exit);
                continue;
            };
            for &t in c.states.iter() {
                if sets.mark[t as usize] != sets.gen {
                    sets.mark[t as usize] = sets.gen;
                    sets.cur.push(t);
                }
            }
            for e in c.constraints.iter() {
                match *e {
                    Edge::Assert(a, t) if self.check(a, pos) => todo.push(t),
                    Edge::Look(k, t) if self.look(k, pos) => todo.push(t),
                    _ => {}
                }
            }
        }
        sets.todo = todo;
    }

    /// [`Sim::close`] edge by edge, where the closures are not remembered.
    fn walk(&self, sets: &mut Sets, from: u32, pos: usize, exit: u32) {
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

    /// What `from` reaches through empty edges, stopping at `exit`;
    /// `None` when too many are remembered.
    fn closure(&self, from: u32, exit: u32) -> Option<Closure> {
        let mut memo = self.nfa.closures.borrow_mut();
        if let Some(c) = memo.get(&(from, exit)) {
            return Some(c.clone());
        }
        if memo.len() >= MAX_CLOSURES {
            return None;
        }
        let mut seen = hashbrown::HashSet::new();
        let mut stack = vec![from];
        let (mut states, mut constraints) = (Vec::new(), Vec::new());
        while let Some(st) = stack.pop() {
            if !seen.insert(st) {
                continue;
            }
            if st == exit {
                states.push(st);
                continue;
            }
            let edges = &self.nfa.states[st as usize];
            if edges.iter().any(|e| matches!(e, Edge::Char(..))) {
                states.push(st);
            }
            for e in edges {
                match *e {
                    Edge::Eps(t) => stack.push(t),
                    Edge::Assert(..) | Edge::Look(..) => constraints.push(*e),
                    Edge::Char(..) => {}
                }
            }
        }
        let c = Closure {
            states: states.into(),
            constraints: constraints.into(),
        };
        memo.insert((from, exit), c.clone());
        Some(c)
    }

    /// A run of `f` from `begin` up to `limit`: the accepting positions
    /// it wants, and whether it ran out of states (or string) before
    /// `limit`. `unanchored`: a match may also start at every later
    /// position.
    fn run(
        &self,
        f: Frag,
        begin: usize,
        limit: usize,
        want: Want,
        unanchored: bool,
    ) -> (Vec<usize>, bool) {
        let n = self.nfa.states.len();
        let mut sets = self.spare.borrow_mut().pop().unwrap_or_else(|| Sets {
            mark: vec![0; n],
            done: vec![0; n],
            todo: Vec::new(),
            gen: 0,
            cur: Vec::new(),
            next: Vec::new(),
            stack: Vec::new(),
        });
        let found = self.scan(&mut sets, f, begin, limit, want, unanchored);
        self.spare.borrow_mut().push(sets);
        found
    }

    fn scan(
        &self,
        sets: &mut Sets,
        f: Frag,
        begin: usize,
        limit: usize,
        want: Want,
        unanchored: bool,
    ) -> (Vec<usize>, bool) {
        let mut found = Vec::new();
        let mut pos = begin;
        sets.cur.clear();
        self.advance(sets);
        self.close(sets, f.start, pos, f.end);
        loop {
            if sets.mark[f.end as usize] == sets.gen {
                match want {
                    Want::All => found.push(pos),
                    Want::First(from) if pos >= from => return (vec![pos], false),
                    Want::First(_) => {}
                }
            }
            if sets.cur.is_empty() && !unanchored {
                return (found, true);
            }
            if pos >= limit {
                return (found, pos >= self.s.len());
            }
            let Some(c) = self.s[pos..].chars().next() else {
                return (found, true);
            };
            if pos + c.len_utf8() > limit {
                return (found, false);
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
            self.advance(sets);
            sets.cur.clear();
            let next = std::mem::take(&mut sets.next);
            for &t in &next {
                self.close(sets, t, pos, f.end);
            }
            if unanchored {
                self.close(sets, f.start, pos, f.end);
            }
            sets.next = next;
        }
    }

    /// A new generation of marks (clearing them when the counter wraps).
    fn advance(&self, sets: &mut Sets) {
        sets.gen = sets.gen.wrapping_add(1);
        if sets.gen == 0 {
            sets.mark.iter_mut().for_each(|m| *m = 0);
            sets.done.iter_mut().for_each(|m| *m = 0);
            sets.gen = 1;
        }
    }
}
