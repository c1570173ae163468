//! PostgreSQL's subexpression tree and its dissection of a match
//! (`regcomp.c`'s `parse`/`parsebranch`/`parseqatom`, `regexec.c`'s
//! `cdissect` and friends).
//!
//! The tree: a branch's atoms without captures or back-references are
//! folded into leaves matched whole; a capturing group, a back-reference
//! or an atom whose preference clashes with the branch's so far starts a
//! concatenation (the leaf before it, then it and the rest of the branch).
//! Preferences: an atom's quantifier gives one (`{m}` passes the
//! operand's through), a branch has the preference of its first atom
//! that has one, an alternation of two or more branches prefers longer.
//! Dissection of a span: a concatenation splits at the longest (or, when
//! its left part prefers shorter, the shortest) midpoint where both parts
//! can match, an alternation takes the first branch that matches the
//! whole span, an iteration takes as long (short) iterations as it can
//! from the left, a capture records the span it was given, a
//! back-reference compares text. Invariant: a node is dissected only over
//! a span its fragment matches exactly.

use super::nfa::{Frag, Nfa, Sim, TooBig};
use super::parse::{Alt, Atom, Piece, LONGER, SHORTER};

/// Mixed preferences below.
const MIXED: u8 = 4;
/// A capture here or below.
const CAP: u8 = 8;
/// A back-reference here or below.
const BACKR: u8 = 16;

fn up(f: u8) -> u8 {
    let mixed = if f & LONGER != 0 && f & SHORTER != 0 {
        MIXED
    } else {
        0
    };
    (f & (MIXED | CAP | BACKR)) | mixed
}

fn pref(f: u8) -> u8 {
    f & (LONGER | SHORTER)
}

fn combine(f1: u8, f2: u8) -> u8 {
    up(f1 | f2) | if pref(f1) != 0 { pref(f1) } else { pref(f2) }
}

fn messy(f: u8) -> bool {
    f & (MIXED | CAP | BACKR) != 0
}

/// A node of the tree.
pub enum Kind {
    /// Matched whole, no structure inside.
    Leaf(Alt),
    /// A capturing group `(k)`.
    Cap(usize, Box<Sub>),
    Concat(Box<Sub>, Box<Sub>),
    Alt(Vec<Sub>),
    /// An iteration `{min,max}` of a node with captures or back-references.
    Iter(Box<Sub>, u32, Option<u32>),
    /// A back-reference `\k` repeated `{min,max}`.
    Backref(usize, u32, Option<u32>),
}

pub struct Sub {
    pub kind: Kind,
    pub flags: u8,
    /// The node's fragment in the NFA (set by [`Sub::build`]).
    pub frag: Option<Frag>,
}

fn sub(kind: Kind, flags: u8) -> Sub {
    Sub {
        kind,
        flags,
        frag: None,
    }
}

fn leaf(pieces: Vec<Piece>, flags: u8) -> Sub {
    sub(Kind::Leaf(Alt(vec![pieces])), flags)
}

/// The tree of `alt` (PostgreSQL's `parse`).
pub fn tree(alt: &Alt) -> Sub {
    if alt.0.len() == 1 {
        return branch(&alt.0[0]);
    }
    let mut flags = LONGER;
    let subs: Vec<Sub> = alt.0.iter().map(|b| branch(b)).collect();
    for b in &subs {
        flags |= up(flags | b.flags);
    }
    if !messy(flags) {
        return sub(Kind::Leaf(alt.clone()), flags);
    }
    sub(Kind::Alt(subs), flags)
}

/// The tree of one branch (`parsebranch`, `parseqatom`).
fn branch(pieces: &[Piece]) -> Sub {
    let mut prefix: Vec<Piece> = Vec::new();
    let mut flags = 0;
    for (i, p) in pieces.iter().enumerate() {
        if p.is_constraint() {
            prefix.push(p.clone());
            continue;
        }
        if p.max == Some(0) {
            // `{0}`: matches the empty string.
            continue;
        }
        let (node, atom_flags) = match &p.atom {
            Atom::Group { cap, body } => {
                let t = tree(body);
                match cap {
                    Some(k) => {
                        let f = t.flags | CAP;
                        (Some(sub(Kind::Cap(*k, Box::new(t)), f)), f)
                    }
                    None => {
                        let f = t.flags;
                        (Some(t), f)
                    }
                }
            }
            Atom::Backref(_) => (None, BACKR),
            _ => (None, 0),
        };
        let f = flags | p.pref | atom_flags;
        let plain = matches!(p.atom, Atom::Char(_) | Atom::Group { cap: None, .. });
        if plain && !messy(up(f)) {
            prefix.push(p.clone());
            flags = f;
            continue;
        }
        let atom = messy_atom(p, node, atom_flags);
        let mut t_flags = combine(p.pref, atom_flags);
        let rest = match &pieces[i + 1..] {
            [] => leaf(Vec::new(), 0),
            rest => branch(rest),
        };
        t_flags |= combine(t_flags, rest.flags);
        let t = sub(Kind::Concat(Box::new(atom), Box::new(rest)), t_flags);
        let top_flags = flags | combine(flags, t_flags);
        return sub(
            Kind::Concat(Box::new(leaf(prefix, flags)), Box::new(t)),
            top_flags,
        );
    }
    leaf(prefix, flags)
}

/// The node of an atom that needs one: a capture, a back-reference, or a
/// preference clash (`parseqatom`'s hard part).
fn messy_atom(p: &Piece, node: Option<Sub>, atom_flags: u8) -> Sub {
    let q = p.pref;
    let f = combine(q, atom_flags);
    if let Atom::Backref(k) = p.atom {
        return sub(Kind::Backref(k, p.min, p.max), BACKR | f);
    }
    let own = atom_flags & (LONGER | SHORTER | MIXED);
    let vacuous = p.min == 1 && p.max == Some(1) && (q == 0 || own == 0 || q == own);
    match node {
        Some(node) if vacuous => node,
        _ if atom_flags & (CAP | BACKR) == 0 => leaf(vec![p.clone()], f),
        Some(node) if p.min > 0 && atom_flags & BACKR == 0 => {
            // x{m,n} as x{m-1,n-1}x: captures from the last iteration only.
            let mut first = p.clone();
            first.min -= 1;
            first.max = p.max.map(|n| n - 1);
            let left = leaf(vec![first], pref(f));
            sub(Kind::Concat(Box::new(left), Box::new(node)), f)
        }
        Some(node) => sub(Kind::Iter(Box::new(node), p.min, p.max), f),
        None => leaf(vec![p.clone()], f),
    }
}

impl Sub {
    /// Builds the node's fragment (and its children's, the first time).
    pub fn build(&mut self, nfa: &mut Nfa, groups: &[Alt]) -> Result<Frag, TooBig> {
        let f = match &mut self.kind {
            Kind::Leaf(alt) => nfa.alt(alt, groups, false)?,
            Kind::Cap(_, c) => c.build(nfa, groups)?,
            Kind::Concat(l, r) => {
                let a = l.build(nfa, groups)?;
                let b = r.build(nfa, groups)?;
                nfa.concat(a, b)
            }
            Kind::Alt(subs) => {
                let mut frags = Vec::with_capacity(subs.len());
                for s in subs.iter_mut() {
                    frags.push(s.build(nfa, groups)?);
                }
                nfa.union(&frags)?
            }
            Kind::Iter(c, min, max) => {
                let (min, max) = (*min, *max);
                nfa.repeat(min, max, &mut |n| c.build(n, groups))?
            }
            Kind::Backref(k, min, max) => {
                let body = groups.get(*k).cloned().unwrap_or_default();
                let (min, max) = (*min, *max);
                nfa.repeat(min, max, &mut |n| n.alt(&body, groups, true))?
            }
        };
        if self.frag.is_none() {
            self.frag = Some(f);
        }
        Ok(f)
    }

    fn fr(&self) -> Frag {
        self.frag.expect("built")
    }

    fn shorter(&self) -> bool {
        self.flags & SHORTER != 0
    }
}

/// Captured spans by group number (index 0: the whole match).
pub type Caps = Vec<Option<(usize, usize)>>;

/// Dissection of matches of one string.
pub struct Dissect<'a> {
    pub sim: &'a Sim<'a>,
    pub s: &'a str,
    /// Node visits so far.
    pub steps: usize,
    /// Back-references compare ignoring case.
    pub icase: bool,
}

/// How many node visits one dissection may make ("too complex" beyond).
const MAX_STEPS: usize = 1_000_000;

/// The dissection failed for lack of resources.
pub struct TooComplex;

impl Dissect<'_> {
    fn zap(t: &Sub, caps: &mut Caps) {
        match &t.kind {
            Kind::Leaf(_) | Kind::Backref(..) => {}
            Kind::Cap(k, c) => {
                if let Some(slot) = caps.get_mut(*k) {
                    *slot = None;
                }
                Self::zap(c, caps);
            }
            Kind::Concat(l, r) => {
                Self::zap(l, caps);
                Self::zap(r, caps);
            }
            Kind::Alt(subs) => subs.iter().for_each(|s| Self::zap(s, caps)),
            Kind::Iter(c, ..) => Self::zap(c, caps),
        }
    }

    fn chars(&self, a: usize, b: usize) -> usize {
        self.s[a..b].chars().count()
    }

    /// Dissects `t` over `b..e`, recording captures (`cdissect`).
    pub fn dissect(
        &mut self,
        t: &Sub,
        b: usize,
        e: usize,
        caps: &mut Caps,
    ) -> Result<bool, TooComplex> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(TooComplex);
        }
        match &t.kind {
            Kind::Leaf(_) => Ok(true),
            Kind::Cap(k, c) => {
                let ok = self.dissect(c, b, e, caps)?;
                if ok {
                    if let Some(slot) = caps.get_mut(*k) {
                        *slot = Some((b, e));
                    }
                }
                Ok(ok)
            }
            Kind::Backref(k, min, max) => Ok(self.backref(caps, *k, *min, *max, b, e)),
            Kind::Alt(subs) => {
                for s in subs {
                    if self.sim.exact(s.fr(), b, e) && self.dissect(s, b, e, caps)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Kind::Concat(l, r) => self.concat(l, r, b, e, caps),
            Kind::Iter(c, min, max) => {
                if c.shorter() {
                    self.rev_iter(c, *min, *max, b, e, caps)
                } else {
                    self.iter(c, *min, *max, b, e, caps)
                }
            }
        }
    }

    /// `ccondissect` and `crevcondissect`.
    fn concat(
        &mut self,
        l: &Sub,
        r: &Sub,
        b: usize,
        e: usize,
        caps: &mut Caps,
    ) -> Result<bool, TooComplex> {
        let sim = self.sim;
        let rev = l.shorter();
        let mut mid = if rev {
            sim.shortest(l.fr(), b, b, e)
        } else {
            sim.longest(l.fr(), b, e)
        };
        while let Some(m) = mid {
            if sim.exact(r.fr(), m, e) && self.dissect(l, b, m, caps)? {
                if self.dissect(r, m, e, caps)? {
                    return Ok(true);
                }
                // A failed dissection leaves no captures behind (the right
                // part cleared its own).
                Self::zap(l, caps);
            }
            mid = if rev {
                if m == e {
                    return Ok(false);
                }
                sim.shortest(l.fr(), b, m + 1, e)
            } else {
                if m == b {
                    return Ok(false);
                }
                sim.longest(l.fr(), b, m - 1)
            };
        }
        Ok(false)
    }

    /// `cbrdissect`.
    fn backref(
        &self,
        caps: &Caps,
        k: usize,
        min: u32,
        max: Option<u32>,
        b: usize,
        e: usize,
    ) -> bool {
        let Some(Some((so, eo))) = caps.get(k).copied() else {
            return false;
        };
        let text = &self.s[so..eo];
        if text.is_empty() {
            return b == e;
        }
        if b == e {
            return min == 0;
        }
        // Counted and compared by characters, as PostgreSQL's `cbrdissect`
        // (case-folded under the `i` flag).
        let (brlen, tlen) = (self.chars(so, eo), self.chars(b, e));
        if tlen % brlen != 0 {
            return false;
        }
        let reps = (tlen / brlen) as u32;
        if reps < min || max.is_some_and(|m| reps > m) {
            return false;
        }
        if !self.icase {
            return self.s.as_bytes()[b..e]
                .chunks(text.len())
                .all(|c| c == text.as_bytes());
        }
        let fold = |c: char| c.to_lowercase().next().unwrap_or(c);
        let target: Vec<char> = self.s[b..e].chars().collect();
        target
            .chunks(brlen)
            .all(|c| c.iter().copied().map(fold).eq(text.chars().map(fold)))
    }

    /// `citerdissect`: iterations as long as possible from the left.
    fn iter(
        &mut self,
        c: &Sub,
        min: u32,
        max: Option<u32>,
        b: usize,
        e: usize,
        caps: &mut Caps,
    ) -> Result<bool, TooComplex> {
        let sim = self.sim;
        // Zero iterations are considered last, after trying to match (and
        // so capture) once even an empty span.
        let zero_ok = min == 0 && b == e;
        let min = (min as usize).max(1);
        let room = self.chars(b, e);
        let max_n = max.map_or(room, |m| room.min(m as usize)).max(min);
        let mut ends = vec![b; max_n + 1];
        let mut verified = 0;
        let mut k = 1;
        let mut limit = e;
        'outer: while k > 0 {
            let backtrack;
            match sim.longest(c.fr(), ends[k - 1], limit) {
                None => {
                    k -= 1;
                    backtrack = true;
                }
                Some(end) => {
                    ends[k] = end;
                    if verified >= k {
                        verified = k - 1;
                    }
                    if end != e {
                        if k >= max_n {
                            k -= 1;
                            backtrack = true;
                        } else if end == ends[k - 1] && (k >= min || min - k < self.chars(end, e)) {
                            backtrack = true;
                        } else {
                            k += 1;
                            limit = e;
                            continue 'outer;
                        }
                    } else if k < min {
                        backtrack = true;
                    } else {
                        let mut i = verified + 1;
                        while i <= k {
                            Self::zap(c, caps);
                            if !self.dissect(c, ends[i - 1], ends[i], caps)? {
                                break;
                            }
                            verified = i;
                            i += 1;
                        }
                        if i > k {
                            return Ok(true);
                        }
                        backtrack = true;
                    }
                }
            }
            if backtrack {
                while k > 0 {
                    let prev = ends[k - 1];
                    if ends[k] > prev {
                        limit = ends[k]
                            - self.s[..ends[k]]
                                .chars()
                                .next_back()
                                .map_or(1, char::len_utf8);
                        if limit > prev || (k < min && min - k >= self.chars(prev, e)) {
                            break;
                        }
                    }
                    k -= 1;
                }
            }
        }
        Ok(zero_ok)
    }

    /// `creviterdissect`: iterations as short as possible from the left.
    fn rev_iter(
        &mut self,
        c: &Sub,
        min: u32,
        max: Option<u32>,
        b: usize,
        e: usize,
        caps: &mut Caps,
    ) -> Result<bool, TooComplex> {
        let sim = self.sim;
        let mut min = min as usize;
        if min == 0 {
            if b == e {
                return Ok(true);
            }
            min = 1;
        }
        let room = self.chars(b, e);
        let max_n = max.map_or(room, |m| room.min(m as usize)).max(min);
        let mut ends = vec![b; max_n + 1];
        let mut verified = 0;
        let mut k = 1;
        let mut limit = b;
        while k > 0 {
            if limit == ends[k - 1] && limit != e && (k >= min || min - k < self.chars(limit, e)) {
                limit += self.s[limit..].chars().next().map_or(1, char::len_utf8);
            }
            // The last allowed iteration must reach the end.
            if k >= max_n {
                limit = e;
            }
            let backtrack;
            match sim.shortest(c.fr(), ends[k - 1], limit, e) {
                None => {
                    k -= 1;
                    backtrack = true;
                }
                Some(end) => {
                    ends[k] = end;
                    if verified >= k {
                        verified = k - 1;
                    }
                    if end != e {
                        if k >= max_n {
                            k -= 1;
                            backtrack = true;
                        } else {
                            k += 1;
                            limit = ends[k - 1];
                            continue;
                        }
                    } else if k < min {
                        backtrack = true;
                    } else {
                        let mut i = verified + 1;
                        while i <= k {
                            Self::zap(c, caps);
                            if !self.dissect(c, ends[i - 1], ends[i], caps)? {
                                break;
                            }
                            verified = i;
                            i += 1;
                        }
                        if i > k {
                            return Ok(true);
                        }
                        backtrack = true;
                    }
                }
            }
            if backtrack {
                while k > 0 {
                    if ends[k] < e {
                        limit =
                            ends[k] + self.s[ends[k]..].chars().next().map_or(1, char::len_utf8);
                        break;
                    }
                    k -= 1;
                }
            }
        }
        Ok(false)
    }
}
