//! Property test: where a pattern has a backtracking form, it and the
//! program agree on whether a string matches and where the leftmost match
//! starts (the fast path the operators take against the general one).
//! Patterns and strings come from a fixed-seed generator over a small
//! alphabet, so that matches are frequent.

use super::super::are::{compile, Flags};

/// A small linear congruential generator (no dependency, same cases on
/// every run).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

fn alt(r: &mut Rng, depth: u32, out: &mut String) {
    for b in 0..1 + r.below(3) {
        if b > 0 {
            out.push('|');
        }
        for _ in 0..r.below(4) {
            piece(r, depth, out);
        }
    }
}

fn piece(r: &mut Rng, depth: u32, out: &mut String) {
    match r.below(10) {
        0 => out.push_str(r.pick(&["^", "$", r"\m", r"\M", r"\y"])),
        1 if depth < 2 => {
            out.push_str(r.pick(&["(?=", "(?!", "(?<=", "(?<!"]));
            alt(r, depth + 1, out);
            out.push(')');
        }
        2 | 3 if depth < 2 => {
            out.push_str(r.pick(&["(", "(?:"]));
            alt(r, depth + 1, out);
            out.push(')');
        }
        _ => out.push_str(r.pick(&["a", "b", ".", "[ab]", "c"])),
    }
    if r.below(2) == 0 {
        out.push_str(r.pick(&["*", "+", "?", "{2}", "{1,2}", "*?", "+?", "{0,1}?"]));
    }
}

#[test]
fn backtracking_form_agrees_with_program() {
    let mut r = Rng(20_251_205);
    let mut checked = 0;
    for _ in 0..3000 {
        let mut p = String::new();
        alt(&mut r, 0, &mut p);
        let Ok(re) = compile(&p, Flags::default()) else {
            continue;
        };
        let (Some(fancy), program) = re.engines() else {
            continue;
        };
        for _ in 0..4 {
            let s: String = (0..r.below(7))
                .map(|_| r.pick(&["a", "b", "c", " "]))
                .collect();
            let Ok(found) = fancy.find(&s) else { continue };
            let own = program.search(&s, 0, false).ok().flatten();
            let start = |m: &Option<Vec<Option<(usize, usize)>>>| {
                m.as_ref().and_then(|v| v[0]).map(|(a, _)| a)
            };
            assert_eq!(
                found.map(|m| m.start()),
                start(&own),
                "pattern {p:?} on {s:?}"
            );
            checked += 1;
        }
    }
    assert!(checked > 5000, "{checked} cases");
}
