//! Unsigned arbitrary-precision integers ("magnitudes") for [`Numeric`](super::Numeric).
//!
//! A magnitude is a [`Limbs`] of base-10^9 limbs, least significant first,
//! with no zero limb at the top (zero is the empty vector). Every function
//! here keeps that invariant.
//!
//! Why base 10^9 and not PostgreSQL's 10^4: nine decimal digits per limb
//! keep text conversion and decimal rescaling trivial, a product of two limbs
//! still fits a `u64`, and a 20-digit value is 3 limbs instead of 5, so the
//! schoolbook loops run about 5x fewer steps. Why a small vector: up to
//! [`INLINE_LIMBS`] limbs (54 digits: every `numeric(p, s)` column with
//! `p <= 54` and the products of two such 27-digit values) live inline, so
//! decoding a stored value and `+ - * cmp round` on it allocate nothing.

use smallvec::SmallVec;
use std::cmp::Ordering;

/// Limbs kept inline before a magnitude spills to the heap.
pub const INLINE_LIMBS: usize = 6;

/// A magnitude's limbs, least significant first.
pub type Limbs = SmallVec<[u32; INLINE_LIMBS]>;

/// The limb base.
pub const BASE: u64 = 1_000_000_000;

/// Powers of ten that fit one limb.
pub const POW10: [u32; 10] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

/// Drops zero limbs at the top.
pub fn trim(a: &mut Limbs) {
    while a.last() == Some(&0) {
        a.pop();
    }
}

/// The magnitude of a `u128`.
pub fn from_u128(mut v: u128) -> Limbs {
    let mut out = Limbs::new();
    while v > 0 {
        out.push((v % BASE as u128) as u32);
        v /= BASE as u128;
    }
    out
}

/// The value as a `u128`, or `None` when it does not fit.
pub fn to_u128(a: &[u32]) -> Option<u128> {
    let mut v: u128 = 0;
    for &limb in a.iter().rev() {
        v = v.checked_mul(BASE as u128)?.checked_add(limb as u128)?;
    }
    Some(v)
}

/// Compares two magnitudes.
pub fn cmp(a: &[u32], b: &[u32]) -> Ordering {
    if a.len() != b.len() {
        return a.len().cmp(&b.len());
    }
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        match x.cmp(y) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    Ordering::Equal
}

/// `a + b`.
pub fn add(a: &[u32], b: &[u32]) -> Limbs {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Limbs::with_capacity(long.len() + 1);
    let mut carry = 0u64;
    for (i, &l) in long.iter().enumerate() {
        let s = l as u64 + short.get(i).copied().unwrap_or(0) as u64 + carry;
        out.push((s % BASE) as u32);
        carry = s / BASE;
    }
    if carry > 0 {
        out.push(carry as u32);
    }
    out
}

/// `a += b`, in place (the running sum of `sum`/`avg`).
pub fn add_assign(a: &mut Limbs, b: &[u32]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    let mut carry = 0u32;
    for (i, limb) in a.iter_mut().enumerate() {
        let s = *limb + b.get(i).copied().unwrap_or(0) + carry;
        if s >= BASE as u32 {
            *limb = s - BASE as u32;
            carry = 1;
        } else {
            *limb = s;
            carry = 0;
            if i >= b.len() {
                return;
            }
        }
    }
    if carry > 0 {
        a.push(carry);
    }
}

/// `a - b`; requires `a >= b`.
pub fn sub(a: &[u32], b: &[u32]) -> Limbs {
    debug_assert!(cmp(a, b) != Ordering::Less);
    let mut out = Limbs::with_capacity(a.len());
    let mut borrow = 0i64;
    for (i, &l) in a.iter().enumerate() {
        let mut d = l as i64 - b.get(i).copied().unwrap_or(0) as i64 - borrow;
        if d < 0 {
            d += BASE as i64;
            borrow = 1;
        } else {
            borrow = 0;
        }
        out.push(d as u32);
    }
    trim(&mut out);
    out
}

/// `a * m + add` for a small multiplier, in place.
pub fn mul_small_add(a: &mut Limbs, m: u32, add: u32) {
    let mut carry = add as u64;
    for limb in a.iter_mut() {
        let p = *limb as u64 * m as u64 + carry;
        *limb = (p % BASE) as u32;
        carry = p / BASE;
    }
    while carry > 0 {
        a.push((carry % BASE) as u32);
        carry /= BASE;
    }
    trim(a);
}

/// `a * b`, schoolbook by output column: a column's products are summed in
/// a `u64` sixteen at a time (each is below 10^18, so sixteen of them and a
/// limb stay below 2^64) and reduced once per sixteen, instead of a carry
/// step per product (the long operands of `exp`, `ln` and `^` spend their
/// time here). Zero limbs at the bottom (`10^k`, values rescaled up) are
/// skipped and shifted back in.
pub fn mul(a: &[u32], b: &[u32]) -> Limbs {
    if a.is_empty() || b.is_empty() {
        return Limbs::new();
    }
    let za = a.iter().take_while(|&&l| l == 0).count();
    let zb = b.iter().take_while(|&&l| l == 0).count();
    let (a, b) = (&a[za..], &b[zb..]);
    let (a, b) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut out = Limbs::with_capacity(za + zb + a.len() + b.len());
    out.resize(za + zb, 0);
    // What the previous columns carry into this one, in units of one limb.
    let mut carry = 0u64;
    for k in 0..a.len() + b.len() - 1 {
        // Column k: a[i] * b[k - i] for the i with both indexes in range.
        let lo = k.saturating_sub(b.len() - 1);
        let hi = k.min(a.len() - 1);
        let (a_part, b_part) = (&a[lo..=hi], &b[k - hi..=k - lo]);
        let (mut acc, mut over) = (carry % BASE, carry / BASE);
        for (ca, cb) in a_part.chunks(16).zip(b_part.rchunks(16)) {
            let s: u64 = ca
                .iter()
                .zip(cb.iter().rev())
                .map(|(&x, &y)| x as u64 * y as u64)
                .sum();
            acc += s;
            over += acc / BASE;
            acc %= BASE;
        }
        out.push(acc as u32);
        carry = over;
    }
    while carry > 0 {
        out.push((carry % BASE) as u32);
        carry /= BASE;
    }
    trim(&mut out);
    out
}

/// `a * 10^k`.
pub fn mul_pow10(a: &[u32], k: u32) -> Limbs {
    if a.is_empty() {
        return Limbs::new();
    }
    let zeros = (k / 9) as usize;
    let mut out = Limbs::with_capacity(zeros + a.len() + 1);
    out.resize(zeros, 0);
    out.extend_from_slice(a);
    if k % 9 != 0 {
        mul_small_add(&mut out, POW10[(k % 9) as usize], 0);
    }
    out
}

/// `floor(a / 10^k)`: whole limbs dropped, then one short division.
pub fn div_pow10(a: &[u32], k: u32) -> Limbs {
    let mut out = Limbs::from_slice(a.get((k / 9) as usize..).unwrap_or(&[]));
    if k % 9 != 0 {
        div_small(&mut out, POW10[(k % 9) as usize]);
    }
    out
}

/// Number of trailing decimal zeros of a non-zero magnitude.
pub fn trailing_zeros(a: &[u32]) -> u32 {
    let zero_limbs = a.iter().take_while(|&&l| l == 0).count();
    let mut low = a[zero_limbs];
    let mut tz = 9 * zero_limbs as u32;
    while low % 10 == 0 {
        low /= 10;
        tz += 1;
    }
    tz
}

/// Divides in place by a small divisor (> 0) and returns the remainder.
pub fn div_small(a: &mut Limbs, d: u32) -> u32 {
    let mut rem = 0u64;
    for limb in a.iter_mut().rev() {
        let cur = rem * BASE + *limb as u64;
        *limb = (cur / d as u64) as u32;
        rem = cur % d as u64;
    }
    trim(a);
    rem as u32
}

/// `(a / b, a % b)` for `b != 0` (Knuth's algorithm D in base 10^9).
pub fn divrem(a: &[u32], b: &[u32]) -> (Limbs, Limbs) {
    assert!(!b.is_empty(), "divisor checked non-zero by the caller");
    if cmp(a, b) == Ordering::Less {
        return (Limbs::new(), Limbs::from_slice(a));
    }
    if b.len() == 1 {
        let mut q = Limbs::from_slice(a);
        let r = div_small(&mut q, b[0]);
        let mut rem = Limbs::new();
        if r != 0 {
            rem.push(r);
        }
        return (q, rem);
    }
    // Normalize so the divisor's top limb is at least BASE / 2.
    let f = (BASE / (*b.last().expect("non-empty") as u64 + 1)) as u32;
    let mut u = Limbs::from_slice(a);
    let mut v = Limbs::from_slice(b);
    mul_small_add(&mut u, f, 0);
    mul_small_add(&mut v, f, 0);
    let n = v.len();
    // One spare top limb (zero) for the first quotient step.
    u.push(0);
    let m = u.len() - n - 1;
    let mut q = Limbs::from_elem(0, m + 1);
    // Plain slices in the loop: indexing a small vector checks where its
    // limbs live on every access.
    let (u, v) = (&mut u[..], &v[..]);
    let vtop = v[n - 1] as u64;
    let vnext = v[n - 2] as u64;
    for j in (0..=m).rev() {
        let num = u[j + n] as u64 * BASE + u[j + n - 1] as u64;
        let mut qhat = num / vtop;
        let mut rhat = num % vtop;
        while qhat >= BASE || qhat * vnext > rhat * BASE + u[j + n - 2] as u64 {
            qhat -= 1;
            rhat += vtop;
            if rhat >= BASE {
                break;
            }
        }
        // u[j..=j+n] -= qhat * v
        let mut borrow = 0i64;
        let mut carry = 0u64;
        for i in 0..n {
            let p = qhat * v[i] as u64 + carry;
            carry = p / BASE;
            let mut t = u[i + j] as i64 - (p % BASE) as i64 - borrow;
            if t < 0 {
                t += BASE as i64;
                borrow = 1;
            } else {
                borrow = 0;
            }
            u[i + j] = t as u32;
        }
        let mut t = u[j + n] as i64 - carry as i64 - borrow;
        if t < 0 {
            // qhat was one too large: add v back.
            t += BASE as i64;
            u[j + n] = t as u32;
            qhat -= 1;
            let mut c = 0u64;
            for i in 0..n {
                let s = u[i + j] as u64 + v[i] as u64 + c;
                u[i + j] = (s % BASE) as u32;
                c = s / BASE;
            }
            u[j + n] = ((u[j + n] as u64 + c) % BASE) as u32;
        } else {
            u[j + n] = t as u32;
        }
        q[j] = qhat as u32;
    }
    trim(&mut q);
    let mut r = Limbs::from_slice(&u[..n]);
    trim(&mut r);
    let rest = div_small(&mut r, f);
    debug_assert_eq!(rest, 0);
    (q, r)
}

/// Decimal digits of a magnitude (`"0"` for zero).
pub fn to_decimal(a: &[u32]) -> String {
    let mut s = String::with_capacity(a.len() * 9 + 1);
    write_decimal(a, &mut s);
    s
}

/// Appends the decimal digits of a magnitude (`0` for zero).
pub fn write_decimal(a: &[u32], out: &mut String) {
    use std::fmt::Write;
    match a.split_last() {
        None => out.push('0'),
        Some((top, rest)) => {
            let _ = write!(out, "{top}");
            for limb in rest.iter().rev() {
                let _ = write!(out, "{limb:09}");
            }
        }
    }
}

/// Number of decimal digits (0 for zero).
pub fn decimal_len(a: &[u32]) -> u32 {
    match a.last() {
        None => 0,
        Some(&top) => {
            let mut d = 1;
            while d < 10 && top >= POW10[d as usize] {
                d += 1;
            }
            (a.len() as u32 - 1) * 9 + d
        }
    }
}

/// Parses a string of ASCII decimal digits (caller checked).
pub fn from_decimal(digits: &[u8]) -> Limbs {
    let mut out = Limbs::with_capacity(digits.len() / 9 + 1);
    let mut end = digits.len();
    while end > 0 {
        let start = end.saturating_sub(9);
        let mut limb = 0u32;
        for &c in &digits[start..end] {
            limb = limb * 10 + (c - b'0') as u32;
        }
        out.push(limb);
        end = start;
    }
    trim(&mut out);
    out
}

/// Integer square root (floor) by Newton's iteration.
pub fn isqrt(a: &[u32]) -> Limbs {
    if a.is_empty() {
        return Limbs::new();
    }
    let mut x = isqrt_start(a);
    loop {
        let (q, _) = divrem(a, &x);
        let mut y = add(&x, &q);
        div_small(&mut y, 2);
        if cmp(&y, &x) != Ordering::Less {
            return x;
        }
        x = y;
    }
}

/// A start for Newton's iteration at or above `sqrt(a)`: from the square
/// root of the top two or three limbs in `f64` (about 15 right digits, so
/// the iteration needs a few steps instead of dozens for long values).
fn isqrt_start(a: &[u32]) -> Limbs {
    let len = a.len();
    if len <= 3 {
        return mul_pow10(&[1], decimal_len(a).div_ceil(2));
    }
    // An even number of limbs below the top ones, so that the power of
    // ten they stand for has an exact square root.
    let t = if (len - 2) % 2 == 0 { 2 } else { 3 };
    let top = to_u128(&a[len - t..]).expect("three limbs fit a u128") as f64;
    // a < (top + 1) * 10^e; the margin covers f64's rounding.
    let root = ((top + 1.0).sqrt() * (1.0 + 1e-12)).ceil() as u128 + 1;
    mul_pow10(&from_u128(root), 9 * (len - t) as u32 / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Limbs {
        from_decimal(s.as_bytes())
    }

    #[test]
    fn arithmetic_round_trips_through_decimal() {
        let a = n("123456789012345678901234567890");
        let b = n("987654321987654321");
        assert_eq!(to_decimal(&add(&a, &b)), "123456789013333333223222222211");
        assert_eq!(to_decimal(&sub(&a, &b)), "123456789011358024579246913569");
        assert_eq!(
            to_decimal(&mul(&a, &b)),
            "121932631246761163237311385323609205901126352690"
        );
        let (q, r) = divrem(&a, &b);
        assert_eq!(to_decimal(&q), "124999998748");
        assert_eq!(to_decimal(&r), "432099904777777782");
        assert_eq!(to_decimal(&mul_pow10(&n("12"), 11)), "1200000000000");
        assert_eq!(decimal_len(&n("1000000000")), 10);
        assert_eq!(
            to_decimal(&isqrt(&n("200000000000000000000000000000"))),
            "447213595499957"
        );
    }

    #[test]
    fn division_matches_u128_on_many_values() {
        let mut x: u128 = 0x1234_5678_9abc_def0_1122_3344;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let a = x >> (x % 64);
            let b = (x.rotate_left(37) >> (x % 100)) | 1;
            let (q, r) = divrem(&from_u128(a), &from_u128(b));
            assert_eq!(to_u128(&q), Some(a / b), "{a} / {b}");
            assert_eq!(to_u128(&r), Some(a % b), "{a} % {b}");
        }
    }
}
