//! PostgreSQL's "regular expression is too complex" (`REG_ETOOBIG`) at
//! compile time, estimated on our NFA.
//!
//! PostgreSQL's compiler fails once the states and arcs it has allocated
//! exceed a fixed space. Two kinds of growth reach it:
//!
//! - Removing empty arcs gives each state the arcs of every state it
//!   reaches through empty arcs; where empty arcs chain (`x*y*z*...`)
//!   that copying grows with the square of the pattern. Constraints
//!   (`^ $ \m \M \y \Y \A \Z`) are then pulled back and pushed forward
//!   across the empty paths around them, copying the states on the way,
//!   so a chain of empty paths joined by constraints grows likewise, by
//!   a factor that depends on the constraint: a `\M` (a word character
//!   behind, a non-word one ahead) costs more than a bare empty path, a
//!   `$` less (little can follow it).
//! - A word boundary (`\y`, `\Y`) is two alternatives (a word character
//!   behind and a non-word one ahead, or the reverse); constraints that
//!   meet on an empty path are combined pairwise, so `k` boundaries in a
//!   row without a character between them make some `2^k` states.
//!
//! The estimate: the states our NFA would keep (the targets of consuming
//! edges, each taken at the end of its chain of single empty edges, where
//! PostgreSQL's construction would have put it), a fixed weight for each,
//! and for each the consuming edges it reaches through empty edges and
//! constraints, each weighted by the kinds of constraint crossed on the
//! way ([`FACTOR`]); and, apart from that sum (PostgreSQL's two growths
//! do not add up), at most 17 boundaries on one empty path. The weights
//! and the limit are calibrated against PostgreSQL 15 (the boundary
//! cases are in `tests/slt/regex_too_complex.slt`): `repeat('x*', 1542)`
//! compiles and 1543 does not, `repeat('a', 43610)` compiles and 43705
//! does not, and likewise `\Mx*` at 995, `\mx*` at 1305, `$x*` at 2464,
//! `\Zx*` at 1743, `\y` at 18. Known to differ: `\mx*\M` (PostgreSQL
//! rejects from 851 repetitions, this from 840), `\Mx?` (997, 995),
//! `x{0,3}` (890, 880), `x?\Y$` (17, 18), `(?!x)x*` (1421, never).
//! Lookaround is not crossed: PostgreSQL rejects `(?!x)x*` but not
//! `(?!x)x?` at any size, and takes minutes to compile positive
//! lookaround at these sizes, so no one weight fits.
//! Lookaround bodies are separate automata in PostgreSQL and are not
//! counted.

use super::nfa::{Edge, Frag, Nfa};
use super::parse::Assert;

/// The most arcs the copying may make, each kept state counting as
/// [`STATE_WEIGHT`] arcs; in millionths.
const MAX_COST: u64 = 1_232_300 * 1_000_000;

/// A kept state's cost in arcs, in millionths.
const STATE_WEIGHT: u64 = 27 * 1_000_000;

/// The fewest boundaries on one empty path that are too complex alone.
pub const MAX_BOUNDARIES: u32 = 18;

/// A constraint's kind: its bit in the set of those crossed on a path
/// and its index in [`FACTOR`].
fn kind(nfa: &Nfa, e: &Edge) -> Option<usize> {
    Some(match *e {
        Edge::Assert(Assert::Bol(_) | Assert::Bos, _) => 0,
        Edge::Assert(Assert::Eol(_), _) => 1,
        Edge::Assert(Assert::Eos, _) => 2,
        Edge::Assert(Assert::WordStart, _) => 3,
        Edge::Assert(Assert::WordEnd, _) => 4,
        Edge::Assert(Assert::Boundary | Assert::NotBoundary, _) => 5,
        Edge::Look(k, _) => match nfa.look_kind(k) {
            (false, false) => 6,
            (false, true) => 7,
            (true, false) => 8,
            (true, true) => 9,
        },
        _ => return None,
    })
}

/// What a consuming edge reached across a constraint of each kind (in
/// [`kind`]'s order) costs, in millionths of one reached without:
/// nothing crosses a `^` or `\A` (what precedes it must be empty); a
/// lookaround whose factor is 0 is not crossed but counted and kept as
/// a consuming edge.
const FACTOR: [u64; 10] = [
    0, 383_531, 780_000, 1_406_000, 2_440_000, 1_000_000, 0, 0, 0, 0,
];

/// The cost of a consuming edge reached across the kinds in `mask`.
fn cost(mask: u16) -> u64 {
    let mut c = 1_000_000;
    for (k, f) in FACTOR.iter().enumerate() {
        if mask & (1 << k) != 0 {
            c = c * f / 1_000_000;
        }
    }
    c
}

fn target(e: &Edge) -> u32 {
    match *e {
        Edge::Eps(t) | Edge::Char(_, t) | Edge::Assert(_, t) | Edge::Look(_, t) => t,
    }
}

/// The end of the chain of single empty edges from `st`.
fn settle(nfa: &Nfa, mut st: u32) -> u32 {
    // A chain visits each state once; the bound guards a cycle.
    for _ in 0..nfa.states.len() {
        match nfa.states[st as usize].as_slice() {
            [Edge::Eps(t)] => st = *t,
            _ => break,
        }
    }
    st
}

/// Whether PostgreSQL would find the pattern of `top` too complex.
pub fn too_big(nfa: &Nfa, top: Frag) -> bool {
    let (mut consuming, mut boundaries) = (0u64, 0u32);
    for e in nfa.states.iter().flatten() {
        match e {
            Edge::Eps(_) => {}
            Edge::Assert(Assert::Boundary | Assert::NotBoundary, _) => {
                boundaries += 1;
                consuming += 1;
            }
            _ => consuming += 1,
        }
    }
    // The boundaries' growth is a separate phase, not added to the rest.
    if boundaries >= MAX_BOUNDARIES && most_boundaries(nfa) >= MAX_BOUNDARIES {
        return true;
    }
    // Every kept state reaching every edge at the dearest weight stays
    // under the limit.
    let dearest = FACTOR
        .iter()
        .fold(1_000_000u64, |c, &x| c * x.max(1_000_000) / 1_000_000);
    let most = (consuming + 1).saturating_mul(consuming.saturating_mul(dearest) + STATE_WEIGHT);
    if most <= MAX_COST {
        return false;
    }
    // The states of the main automaton, and the kept ones among them:
    // the targets of consuming edges, and of lookaround not crossed.
    let n = nfa.states.len();
    let crossed = |e: &Edge| kind(nfa, e).map(|k| (k, FACTOR[k]));
    let mut seen = vec![false; n];
    let mut kept = vec![false; n];
    let mut stack = vec![top.start];
    seen[top.start as usize] = true;
    while let Some(st) = stack.pop() {
        for e in &nfa.states[st as usize] {
            let t = target(e);
            if matches!(e, Edge::Char(..) | Edge::Look(..)) && crossed(e).map_or(true, |c| c.1 == 0)
            {
                kept[settle(nfa, t) as usize] = true;
            }
            if !seen[t as usize] {
                seen[t as usize] = true;
                stack.push(t);
            }
        }
    }
    let mut total = STATE_WEIGHT * kept.iter().filter(|&&k| k).count() as u64;
    let mut mark = vec![0u32; n];
    let mut work: Vec<(u32, u16)> = Vec::new();
    for (k, st) in (0..n as u32).filter(|&s| kept[s as usize]).enumerate() {
        let gen = k as u32 + 1;
        work.push((st, 0));
        mark[st as usize] = gen;
        while let Some((s, mask)) = work.pop() {
            for e in &nfa.states[s as usize] {
                let (t, mask) = match (e, crossed(e)) {
                    (Edge::Eps(t), _) => (*t, mask),
                    (_, Some((k, x))) if x > 0 => (target(e), mask | 1 << k),
                    (Edge::Assert(..), _) => continue,
                    _ => {
                        total += cost(mask);
                        continue;
                    }
                };
                if mark[t as usize] != gen {
                    mark[t as usize] = gen;
                    work.push((t, mask));
                }
            }
        }
        if total > MAX_COST {
            return true;
        }
    }
    false
}

/// The most word boundaries on one path of empty edges and constraints
/// (a path through a cycle counts each once).
fn most_boundaries(nfa: &Nfa) -> u32 {
    const UNSEEN: u32 = u32::MAX;
    const OPEN: u32 = u32::MAX - 1;
    let n = nfa.states.len();
    let mut best = vec![UNSEEN; n];
    let mut top = 0;
    // Depth first over the empty edges, longest path to each state's
    // furthest reach; an edge back into the open path is skipped.
    for root in 0..n {
        if best[root] != UNSEEN {
            continue;
        }
        let mut stack: Vec<(u32, usize, u32)> = vec![(root as u32, 0, 0)];
        best[root] = OPEN;
        while let Some(&(s, next, acc)) = stack.last() {
            let edges = &nfa.states[s as usize];
            if next == edges.len() {
                best[s as usize] = acc;
                top = top.max(acc);
                stack.pop();
                if let Some(parent) = stack.last_mut() {
                    let w = boundary(&nfa.states[parent.0 as usize][parent.1 - 1]);
                    parent.2 = parent.2.max(acc + w);
                }
                continue;
            }
            let e = edges[next];
            let last = stack.len() - 1;
            stack[last].1 += 1;
            let t = match e {
                Edge::Eps(t) | Edge::Assert(_, t) => t,
                _ => continue,
            };
            match best[t as usize] {
                OPEN => {}
                UNSEEN => {
                    best[t as usize] = OPEN;
                    stack.push((t, 0, 0));
                }
                b => stack[last].2 = acc.max(b + boundary(&e)),
            }
        }
    }
    top
}

fn boundary(e: &Edge) -> u32 {
    matches!(e, Edge::Assert(Assert::Boundary | Assert::NotBoundary, _)) as u32
}
