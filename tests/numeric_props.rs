//! Properties of `numeric` arithmetic over random values of many sizes and
//! scales, checked against exact references: `i128` fixed-point arithmetic
//! for values up to 36 digits (text, `+ - * / %`, in-place sums, order,
//! casts to bigint, hashing, `round`/`trunc`, `trim_scale`, the storage
//! payload), and a plain schoolbook product, Knuth's division and the
//! integer square root for magnitudes of up to 420 limbs.
//!
//! Then the allocation contract of the common case: decoding a stored value
//! of up to 54 digits, `+ - *`, comparison, hashing, `round`, the in-place
//! sum and text output into a reserved buffer allocate nothing.

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use heapdb::types::numeric::mag;
use heapdb::types::Numeric;

mod common;
use common::counting::{counted, Counting};

#[global_allocator]
static ALLOC: Counting = Counting;

/// A small deterministic generator (PCG-style LCG).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let x = self.0;
        (x ^ (x >> 29)).wrapping_mul(0xbf58476d1ce4e5b9) ^ (x >> 32)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A value `m / 10^s` with up to `max_digits` digits, biased to limb
    /// edges (all nines, powers of ten) and to zero.
    fn fixed(&mut self, max_digits: u32, max_scale: u32) -> (i128, u32) {
        let digits = 1 + self.below(max_digits as u64) as u32;
        let scale = self.below(max_scale as u64 + 1) as u32;
        let m: i128 = match self.below(8) {
            0 => 0,
            1 => 10i128.pow(digits) - 1,
            2 => 10i128.pow(digits - 1),
            _ => {
                let mut v: i128 = 0;
                for _ in 0..digits {
                    v = v * 10 + self.below(10) as i128;
                }
                v
            }
        };
        let m = if self.below(2) == 0 { -m } else { m };
        (m, scale)
    }
}

/// PostgreSQL's text of `m / 10^s` (all `s` decimals).
fn text(m: i128, s: u32) -> String {
    let digits = m.unsigned_abs().to_string();
    let s = s as usize;
    let mut out = String::new();
    if m < 0 {
        out.push('-');
    }
    if s == 0 {
        out.push_str(&digits);
    } else if digits.len() <= s {
        out.push_str("0.");
        out.push_str(&"0".repeat(s - digits.len()));
        out.push_str(&digits);
    } else {
        let (i, f) = digits.split_at(digits.len() - s);
        out.push_str(i);
        out.push('.');
        out.push_str(f);
    }
    out
}

fn num(m: i128, s: u32) -> Numeric {
    Numeric::parse(&text(m, s)).unwrap()
}

fn pow10(k: u32) -> Option<i128> {
    10i128.checked_pow(k)
}

/// `m` rescaled from scale `s` to the larger scale `t`.
fn up(m: i128, s: u32, t: u32) -> Option<i128> {
    m.checked_mul(pow10(t - s)?)
}

/// `n / d` rounded half away from zero.
fn div_round(n: i128, d: i128) -> i128 {
    let (q, r) = (n / d, n % d);
    if 2 * r.unsigned_abs() >= d.unsigned_abs() {
        q + if (n < 0) != (d < 0) { -1 } else { 1 }
    } else {
        q
    }
}

fn hash(n: &Numeric) -> u64 {
    let mut h = DefaultHasher::new();
    n.hash(&mut h);
    h.finish()
}

#[test]
fn arithmetic_matches_exact_fixed_point() {
    let mut rng = Rng(0x5eed_1234);
    for round in 0..20_000 {
        let max_digits = [4, 9, 18, 27, 36][round % 5];
        let (am, asc) = rng.fixed(max_digits, 12);
        let (bm, bsc) = rng.fixed(max_digits, 12);
        let (a, b) = (num(am, asc), num(bm, bsc));
        assert_eq!(a.to_string(), text(am, asc));
        let ctx = format!("{a} and {b}");
        let t = asc.max(bsc);
        if let (Some(x), Some(y)) = (up(am, asc, t), up(bm, bsc, t)) {
            assert_eq!(Ord::cmp(&a, &b), x.cmp(&y), "cmp {ctx}");
            if let Some(sum) = x.checked_add(y) {
                assert_eq!(a.add(&b).to_string(), text(sum, t), "add {ctx}");
                let mut acc = a.clone();
                acc.add_assign(&b);
                assert_eq!(acc.to_string(), text(sum, t), "add_assign {ctx}");
            }
            if let Some(diff) = x.checked_sub(y) {
                assert_eq!(a.sub(&b).to_string(), text(diff, t), "sub {ctx}");
            }
            if y != 0 {
                assert_eq!(a.rem(&b).unwrap().to_string(), text(x % y, t), "rem {ctx}");
            }
        }
        if let Some(p) = am.checked_mul(bm) {
            assert_eq!(a.mul(&b).to_string(), text(p, asc + bsc), "mul {ctx}");
        }
        if bm != 0 {
            // The quotient at the scale the division chose.
            let q = a.div(&b).unwrap();
            let r = q.scale() as u32;
            let n = pow10(bsc + r).and_then(|p| am.checked_mul(p));
            if let (Some(n), Some(d)) = (n, pow10(asc).and_then(|p| bm.checked_mul(p))) {
                assert_eq!(q.to_string(), text(div_round(n, d), r), "div {ctx}");
            }
        }
        // Equal values hash alike whatever their scale.
        if let Some(m) = am.checked_mul(1000) {
            let wider = num(m, asc + 3);
            assert_eq!(a, wider);
            assert_eq!(hash(&a), hash(&wider), "hash {a}");
        }
        // round / trunc to every position around the value's digits.
        let k = rng.below(asc as u64 + 6) as i32 - 3;
        let got_round = a.round_scale(k).to_string();
        let got_trunc = a.trunc_scale(k).to_string();
        let (want_round, want_trunc) = if k >= asc as i32 {
            let m = am * 10i128.pow(k as u32 - asc);
            (text(m, k as u32), text(m, k as u32))
        } else {
            let d = 10i128.pow((asc as i32 - k) as u32);
            let (r, t) = (div_round(am, d), am / d);
            if k >= 0 {
                (text(r, k as u32), text(t, k as u32))
            } else {
                let back = 10i128.pow((-k) as u32);
                (text(r * back, 0), text(t * back, 0))
            }
        };
        assert_eq!(got_round, want_round, "round({a}, {k})");
        assert_eq!(got_trunc, want_trunc, "trunc({a}, {k})");
        // numeric -> bigint rounds half away from zero.
        let whole = div_round(am, 10i128.pow(asc));
        assert_eq!(a.to_i64_round(), i64::try_from(whole).ok(), "int8({a})");
        // trim_scale: the same digits without trailing fractional zeros.
        let mut trimmed = text(am, asc);
        if trimmed.contains('.') {
            trimmed.truncate(trimmed.trim_end_matches('0').trim_end_matches('.').len());
        }
        assert_eq!(a.normalized().to_string(), trimmed, "normalized {a}");
        // The storage payload round-trips.
        let mut buf = Vec::new();
        a.encode(&mut buf);
        assert_eq!(buf.len(), a.encoded_len());
        let back = Numeric::decode(&buf).unwrap();
        assert_eq!(back.to_string(), a.to_string());
    }
}

#[test]
fn running_sums_match_exact_sums() {
    let mut rng = Rng(77);
    for _ in 0..500 {
        let scale = rng.below(6) as u32;
        let mut acc = Numeric::zero();
        let mut plain = Numeric::zero();
        let mut exact: i128 = 0;
        let mut top = 0;
        for _ in 0..200 {
            let (m, s) = rng.fixed(18, scale);
            let v = num(m, s);
            acc.add_assign(&v);
            plain = plain.add(&v);
            top = top.max(s);
            exact += m * 10i128.pow(scale - s);
        }
        // The sum carries the largest scale seen; compare at the common one.
        let want = num(exact, scale);
        assert_eq!(acc, want);
        assert_eq!(acc.to_string(), plain.to_string());
        assert_eq!(acc.scale() as u32, top);
    }
}

/// The product as it was computed before the column-wise loop: a carry
/// step per limb product.
fn reference_mul(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = vec![0u64; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        let mut carry = 0u64;
        for (j, &y) in b.iter().enumerate() {
            let t = out[i + j] + x as u64 * y as u64 + carry;
            out[i + j] = t % mag::BASE;
            carry = t / mag::BASE;
        }
        out[i + b.len()] += carry;
    }
    let mut v: Vec<u32> = out.into_iter().map(|x| x as u32).collect();
    while v.last() == Some(&0) {
        v.pop();
    }
    v
}

fn limbs(rng: &mut Rng, n: usize) -> mag::Limbs {
    let mut v = mag::Limbs::new();
    // Zero limbs at the bottom, as a value scaled by a power of ten has.
    for _ in 0..rng.below(4) * rng.below(3) {
        v.push(0);
    }
    let all_nines = rng.below(4) == 0;
    for _ in 0..n {
        v.push(if all_nines {
            999_999_999
        } else {
            rng.below(mag::BASE) as u32
        });
    }
    mag::trim(&mut v);
    v
}

#[test]
fn long_products_and_quotients_are_exact() {
    let mut rng = Rng(4242);
    for _ in 0..400 {
        let (la, lb) = (1 + rng.below(300) as usize, 1 + rng.below(120) as usize);
        let (a, b) = (limbs(&mut rng, la), limbs(&mut rng, lb));
        let p = mag::mul(&a, &b);
        assert_eq!(p.as_slice(), reference_mul(&a, &b).as_slice());
        assert_eq!(mag::mul(&b, &a), p);
        if b.is_empty() {
            continue;
        }
        // (a * b + r) / b = (a, r) for r < b.
        let r = mag::divrem(&a, &b).1;
        let (q, rem) = mag::divrem(&mag::add(&p, &r), &b);
        assert_eq!(q, a);
        assert_eq!(rem, r);
        // isqrt: r^2 <= p < (r + 1)^2.
        let r = mag::isqrt(&p);
        assert_ne!(mag::cmp(&mag::mul(&r, &r), &p), Ordering::Greater);
        let r1 = mag::add(&r, &[1]);
        assert_eq!(mag::cmp(&mag::mul(&r1, &r1), &p), Ordering::Greater);
        let mut s = a.clone();
        mag::add_assign(&mut s, &b);
        assert_eq!(s, mag::add(&a, &b));
        assert_eq!(mag::cmp(&mag::sub(&s, &b), &a), Ordering::Equal);
    }
}

#[test]
fn common_operations_allocate_nothing() {
    let a = Numeric::parse("-123456789012345678901234.567").unwrap();
    let b = Numeric::parse("98765.4321").unwrap();
    let mut payload = Vec::new();
    a.encode(&mut payload);
    let mut out = String::with_capacity(256);
    let ((), n) = counted(|| {
        let x = Numeric::decode(&payload).unwrap();
        let s = x.add(&b);
        let d = x.sub(&b);
        let p = b.mul(&b).mul(&b);
        let r = s.round_scale(2);
        let t = d.trunc_scale(-3);
        let mut acc = Numeric::zero();
        for _ in 0..100 {
            acc.add_assign(&b);
            acc.add_assign(&x);
        }
        assert_eq!(Ord::cmp(&x, &b), Ordering::Less);
        assert_ne!(hash(&p), hash(&r));
        r.write_text(&mut out);
        t.write_text(&mut out);
        acc.write_text(&mut out);
        Numeric::parse("0.000125").unwrap().write_text(&mut out);
    });
    assert_eq!(n, 0, "allocations in the common numeric operations");
    assert_eq!(
        out,
        "-123456789012345678802469.13-123456789012345678999000\
         -12345678901234567880246913.49000.000125"
    );
}
