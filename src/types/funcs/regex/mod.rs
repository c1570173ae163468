//! PostgreSQL's match semantics for regular expressions: the leftmost
//! match, and at that start the longest or the shortest match by the
//! RE's preference, then each subexpression's span by PostgreSQL's
//! dissection rules (functions-matching 9.7.3.5; [`dissect`]).
//!
//! Without back-references the backtracking engine (`fancy-regex`,
//! compiled by [`super::are`]) answers whether there is a match and where
//! the leftmost one starts, where it takes the pattern: both engines agree
//! on that, as a backtracking search tries each start in turn and finds a
//! match there if there is one (a property test, `agree`, checks it).
//! From that start a [`Program`] (an NFA simulated over position sets,
//! [`nfa`], and PostgreSQL's subexpression tree, [`dissect`]) finds the
//! end and the captures. Patterns where the backtracking engine's answer
//! is provably PostgreSQL's skip the program ([`Program::exact`]). With
//! back-references, or where the engine rejects the pattern or gives up,
//! the program searches alone ([`Program::search`]), as PostgreSQL's
//! `cfindloop`; and it decides at compile time whether PostgreSQL would
//! find the pattern too complex ([`size`]).
//!
//! Falls back to the backtracking engine's spans only where the program
//! finds no match at the start it was given, which the two engines'
//! agreement on matching rules out but for character classes outside
//! ASCII, where their definitions may differ.

#[cfg(test)]
mod agree;
mod dissect;
mod nfa;
mod parse;
mod size;

use super::are::Flags;
use dissect::{Caps, Dissect, Sub};
use nfa::{Nfa, Sim};
use parse::{Alt, Atom};

pub use dissect::TooComplex;
pub use size::MAX_BOUNDARIES;

/// A pattern ready for PostgreSQL's matching rules.
pub struct Program {
    nfa: Nfa,
    root: Sub,
    ngroups: usize,
    backrefs: bool,
    exact: bool,
    /// Back-references compare text ignoring case.
    icase: bool,
}

/// Whether a match of `alt`, at a given start, has one length only and
/// gives the RE no preference: single characters (not even `{1,1}`, which
/// prefers longer), constraints other than lookaround, groups of such.
fn fixed(alt: &Alt) -> bool {
    alt.0.len() == 1
        && alt.0[0].iter().all(|p| {
            p.min == 1
                && p.max == Some(1)
                && p.pref == 0
                && match &p.atom {
                    Atom::Char(_) | Atom::Assert(_) => true,
                    Atom::Group { body, .. } => fixed(body),
                    Atom::Look { .. } | Atom::Backref(_) => false,
                }
        })
}

/// Whether the backtracking engine's spans and captures are PostgreSQL's:
/// one branch of single characters, constraints and groups of such, then
/// at most one quantified single character at the very end. At a given
/// start every match is then the fixed part plus some repetitions of that
/// character; nothing follows them, so the greedy engine takes the most
/// and the lazy the fewest, which is PostgreSQL's longest or shortest by
/// the RE's preference, its first quantifier's.
fn exact(alt: &Alt) -> bool {
    let [branch] = alt.0.as_slice() else {
        return false;
    };
    let Some((last, init)) = branch.split_last() else {
        return true;
    };
    fixed(&Alt(vec![init.to_vec()]))
        && (fixed(&Alt(vec![vec![last.clone()]])) || matches!(last.atom, Atom::Char(_)))
}

impl Program {
    /// The program of `pattern` with `flags`, which the translation has
    /// accepted; `None` if PostgreSQL would find it too complex
    /// ([`size`]) or it needs too many states.
    pub fn new(pattern: &str, flags: Flags) -> Option<Program> {
        let parsed = parse::parse(pattern, flags);
        let mut root = dissect::tree(&parsed.root);
        let mut nfa = Nfa::default();
        let top = root.build(&mut nfa, &parsed.groups).ok()?;
        if size::too_big(&nfa, top) {
            return None;
        }
        Some(Program {
            nfa,
            root,
            ngroups: parsed.groups.len() - 1,
            backrefs: has_backref(&parsed.root),
            exact: exact(&parsed.root),
            icase: parsed.flags.icase,
        })
    }

    /// Whether the pattern has back-references, whose matches only the
    /// program finds as PostgreSQL does.
    pub fn backrefs(&self) -> bool {
        self.backrefs
    }

    /// Whether the backtracking engine's spans and captures are
    /// PostgreSQL's for this pattern.
    pub fn exact(&self) -> bool {
        self.exact
    }

    /// The match starting at byte `so`: the whole match's span and, with
    /// `caps`, each group's (`None` where it took no part); `None` if
    /// there is no match there.
    pub fn match_at(&self, s: &str, so: usize, caps: bool) -> Result<Option<Caps>, TooComplex> {
        self.match_in(&Sim::new(&self.nfa, s), s, so, caps)
    }

    /// [`Program::match_at`] with the simulation of `s` given.
    fn match_in(
        &self,
        sim: &Sim,
        s: &str,
        so: usize,
        caps: bool,
    ) -> Result<Option<Caps>, TooComplex> {
        let top = self.root.frag.expect("built");
        let shorter = self.root.flags & parse::SHORTER != 0;
        let mut d = Dissect {
            sim,
            s,
            steps: 0,
            icase: self.icase,
        };
        let mut spans: Caps = vec![None; self.ngroups + 1];
        if !self.backrefs {
            let end = if shorter {
                sim.shortest(top, so, so, s.len())
            } else {
                sim.longest(top, so, s.len())
            };
            let Some(end) = end else { return Ok(None) };
            if caps && self.ngroups > 0 {
                d.dissect(&self.root, so, end, &mut spans)?;
            }
            spans[0] = Some((so, end));
            return Ok(Some(spans));
        }
        // PostgreSQL's `cfindloop` at one start: candidate ends in order
        // of preference until one survives the back-reference checks.
        let (mut from, mut limit) = (so, s.len());
        loop {
            let end = if shorter {
                sim.shortest(top, so, from, limit)
            } else {
                sim.longest(top, so, limit)
            };
            let Some(end) = end else { return Ok(None) };
            spans.iter_mut().for_each(|c| *c = None);
            if d.dissect(&self.root, so, end, &mut spans)? {
                spans[0] = Some((so, end));
                return Ok(Some(spans));
            }
            if shorter {
                if end >= limit {
                    return Ok(None);
                }
                from = end + 1;
            } else {
                if end == so {
                    return Ok(None);
                }
                limit = end - 1;
            }
        }
    }
}

impl Program {
    /// The leftmost match at or after byte `from` (PostgreSQL's `find`
    /// and `cfindloop`). A round finds the first position where any match
    /// starting at or after its start can end (`close`), then tries each
    /// start up to `close`. Without back-references a match is found
    /// there; with them every candidate may fail the dissection, and the
    /// next round starts after `close`, but only while that is before the
    /// end of the string: as PostgreSQL's, an empty match at the very end
    /// is then not tried (`'a' ~ '$()|^\1'` is false).
    pub fn search(&self, s: &str, from: usize, caps: bool) -> Result<Option<Caps>, TooComplex> {
        let sim = Sim::new(&self.nfa, s);
        let top = self.root.frag.expect("built");
        let mut round = from;
        loop {
            let Some(close) = sim.first_end(top, round) else {
                return Ok(None);
            };
            let mut at = round;
            while at <= close {
                if let Some(found) = self.match_in(&sim, s, at, caps)? {
                    return Ok(Some(found));
                }
                at += next_len(s, at);
            }
            round = close + next_len(s, close);
            if round >= s.len() {
                return Ok(None);
            }
        }
    }

    /// Whether `s` has a match.
    pub fn is_match(&self, s: &str) -> Result<bool, TooComplex> {
        if self.backrefs {
            return Ok(self.search(s, 0, false)?.is_some());
        }
        let sim = Sim::new(&self.nfa, s);
        Ok(sim.first_end(self.root.frag.expect("built"), 0).is_some())
    }
}

/// The length of the character at byte `at` (1 at the end).
fn next_len(s: &str, at: usize) -> usize {
    s[at..].chars().next().map_or(1, char::len_utf8)
}

fn has_backref(alt: &Alt) -> bool {
    alt.0.iter().flatten().any(|p| match &p.atom {
        Atom::Backref(_) => true,
        Atom::Group { body, .. } => has_backref(body),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    //! Expected values are PostgreSQL 15's.
    use super::*;

    fn spans(p: &str, s: &str) -> Vec<Option<&'static str>> {
        let prog = Program::new(p, Flags::default()).expect("small pattern");
        let found = prog.search(s, 0, true).ok().flatten().expect("a match");
        found
            .iter()
            .map(|r| r.map(|(a, b)| &*String::leak(s[a..b].to_string())))
            .collect()
    }

    #[test]
    fn longest_and_shortest() {
        assert_eq!(spans("a|ab", "abcd"), [Some("ab")]);
        assert_eq!(
            spans("(a|ab)(c|bcd)(d*)", "abcd"),
            [Some("abcd"), Some("ab"), Some("c"), Some("d")]
        );
        assert_eq!(
            spans("^(l*){1,1}?(.*){1,1}?(f*)$", "llmmmfff")[1..],
            [Some(""), Some("llmmm"), Some("fff")]
        );
        assert_eq!(spans("(a{0,2}?)(a{1,})", "aaa")[1..], [Some(""), Some("a")]);
    }

    #[test]
    fn iterations_and_backrefs() {
        assert_eq!(spans("(?:(a)|b)*", "ab")[1..], [None]);
        assert_eq!(spans("(aa|aaa)*", "aaaaa")[1..], [Some("aa")]);
        assert_eq!(
            spans("^([^/]+?)(?:/([^/]+?))(?:/([^/]+?))?$", "foo/bar/baz")[1..],
            [Some("foo"), Some("bar"), Some("baz")]
        );
        assert_eq!(spans(r"(x+)\1", "xxxx")[1..], [Some("xx")]);
        assert_eq!(
            spans(r"(\w)(.*?\1)", "Programmer")[1..],
            [Some("r"), Some("ogr")]
        );
    }

    #[test]
    fn exact_patterns() {
        let exact = |p: &str| Program::new(p, Flags::default()).unwrap().exact();
        assert!(exact("[a-f]+"));
        assert!(exact("abc"));
        assert!(exact(r"(ab)c\d*?"));
        assert!(!exact("a|b"));
        assert!(!exact("a*b"));
        assert!(!exact("[ab]{1,1}[ab]??"));
    }
}
