//! PostgreSQL's "regular expression is too complex" (`REG_ETOOBIG`) at
//! compile time, estimated on our NFA.
//!
//! PostgreSQL's compiler fails once the states and arcs it has allocated
//! exceed a fixed space. It removes empty arcs by giving each state the
//! arcs of every state it reaches through empty arcs; where empty arcs
//! chain (`x*y*z*...`) that copying grows with the square of the pattern.
//! The estimate: the states our NFA would keep (the targets of consuming
//! and constraint edges, each taken at the end of its chain of single
//! empty edges, where PostgreSQL's construction would have put it), a
//! fixed weight for each, and for each the non-empty edges it reaches
//! through empty edges. The weight and the limit are calibrated against
//! PostgreSQL 15: `repeat('x*', 1542)` compiles and 1543 does not,
//! `repeat('a', 43610)` compiles and 43705 does not, `repeat('(?:a|b|c)*',
//! 890)` compiles (and so, here, do a few more). Lookaround bodies are
//! separate automata in PostgreSQL and are not counted.

use super::nfa::{Edge, Frag, Nfa};

/// The most arcs the copying may make, each kept state counting as
/// [`STATE_WEIGHT`] arcs.
const MAX_ARCS: usize = 1_232_300;

/// A kept state's cost in arcs.
const STATE_WEIGHT: usize = 27;

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
    let n = nfa.states.len();
    let consuming: usize = nfa
        .states
        .iter()
        .flatten()
        .filter(|e| !matches!(e, Edge::Eps(_)))
        .count();
    // Every kept state reaching every edge stays under the limit.
    let most = (consuming + 1).saturating_mul(consuming + STATE_WEIGHT);
    if most <= MAX_ARCS {
        return false;
    }
    // The states of the main automaton, and the kept ones among them.
    let mut seen = vec![false; n];
    let mut kept = vec![false; n];
    let mut stack = vec![top.start];
    seen[top.start as usize] = true;
    while let Some(st) = stack.pop() {
        for e in &nfa.states[st as usize] {
            let t = target(e);
            if !matches!(e, Edge::Eps(_)) {
                kept[settle(nfa, t) as usize] = true;
            }
            if !seen[t as usize] {
                seen[t as usize] = true;
                stack.push(t);
            }
        }
    }
    let mut mark = vec![0u32; n];
    let mut total = STATE_WEIGHT * kept.iter().filter(|&&k| k).count();
    for (k, st) in (0..n as u32).filter(|&s| kept[s as usize]).enumerate() {
        let gen = k as u32 + 1;
        stack.push(st);
        mark[st as usize] = gen;
        while let Some(s) = stack.pop() {
            for e in &nfa.states[s as usize] {
                match *e {
                    Edge::Eps(t) if mark[t as usize] != gen => {
                        mark[t as usize] = gen;
                        stack.push(t);
                    }
                    Edge::Eps(_) => {}
                    _ => total += 1,
                }
            }
        }
        if total > MAX_ARCS {
            return true;
        }
    }
    false
}
