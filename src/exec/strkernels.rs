//! Typed loops over string vectors: comparisons, LIKE, `||` and the common
//! text functions, without a `Value` per row.
//!
//! Every kernel reads the values as `&str` slices of the input's
//! [`StrVec`] buffer. Comparisons order bytes, which is PostgreSQL's `C`
//! collation (heapdb's only one, as [`crate::types::compare`] says), and
//! ignore trailing spaces when an operand is `char(n)`. Kernels that make
//! new strings (`||`, `lower`, `upper`) write them into the output vector's
//! one buffer. Each returns `None` when it does not apply (an operand not in
//! the string form), and the caller takes the general per-row path.
//!
//! NULL rows hold the empty string, so the loops run over them harmlessly;
//! the result's null mask is the merged masks of the operands.

use std::cmp::Ordering;

use super::strvec::StrVec;
use super::vector::{Data, Vector};
use crate::types::funcs::string::LikePattern;
use crate::types::funcs::ScalarFunc;
use crate::types::text::bpchar_trim;
use crate::types::{BinaryOp, DataType};

/// The merged null mask of two operands.
fn merge_nulls(a: &Vector, b: &Vector) -> Option<Vec<bool>> {
    match (&a.nulls, &b.nulls) {
        (None, None) => None,
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (Some(x), Some(y)) => Some(x.iter().zip(y).map(|(&p, &q)| p || q).collect()),
    }
}

/// Whether an ordering satisfies comparison `op` (`None`: not a
/// comparison).
#[inline]
fn holds(op: BinaryOp, o: Ordering) -> bool {
    match op {
        BinaryOp::Eq => o == Ordering::Equal,
        BinaryOp::NotEq => o != Ordering::Equal,
        BinaryOp::Lt => o == Ordering::Less,
        BinaryOp::LtEq => o != Ordering::Greater,
        BinaryOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    }
}

/// The comparable part of a string of type `ty`.
#[inline]
fn key(s: &str, trim: bool) -> &[u8] {
    if trim {
        bpchar_trim(s).as_bytes()
    } else {
        s.as_bytes()
    }
}

/// `a op c` for a string column `a` and a non-NULL text constant `c`.
pub fn compare_scalar(op: BinaryOp, a: &Vector, c: &str) -> Option<Vector> {
    let Data::Str(x) = &a.data else { return None };
    if !op.is_comparison() {
        return None;
    }
    let trim = matches!(a.ty, DataType::Char(_));
    let c = key(c, trim);
    // Equality is the hot case (`where name = 'x'`): slice equality checks
    // the lengths first, so most rows are rejected without reading bytes.
    let out: Vec<bool> = match op {
        BinaryOp::Eq => x.iter().map(|s| key(s, trim) == c).collect(),
        BinaryOp::NotEq => x.iter().map(|s| key(s, trim) != c).collect(),
        _ => x.iter().map(|s| holds(op, key(s, trim).cmp(c))).collect(),
    };
    Some(Vector {
        ty: DataType::Bool,
        data: Data::Bool(out),
        nulls: a.nulls.clone(),
    })
}

/// `a op b` for two string columns.
pub fn compare(op: BinaryOp, a: &Vector, b: &Vector) -> Option<Vector> {
    let (Data::Str(x), Data::Str(y)) = (&a.data, &b.data) else {
        return None;
    };
    if !op.is_comparison() {
        return None;
    }
    let trim = matches!(a.ty, DataType::Char(_)) || matches!(b.ty, DataType::Char(_));
    let out: Vec<bool> = x
        .iter()
        .zip(y.iter())
        .map(|(p, q)| holds(op, key(p, trim).cmp(key(q, trim))))
        .collect();
    Some(Vector {
        ty: DataType::Bool,
        data: Data::Bool(out),
        nulls: merge_nulls(a, b),
    })
}

/// `a || b` for two string columns (a NULL operand makes a NULL result).
pub fn concat(a: &Vector, b: &Vector) -> Option<Vector> {
    let (Data::Str(x), Data::Str(y)) = (&a.data, &b.data) else {
        return None;
    };
    let mut out = StrVec::with_capacity(x.len(), x.byte_len() + y.byte_len());
    for (p, q) in x.iter().zip(y.iter()) {
        out.push_with(|buf| {
            buf.push_str(p);
            buf.push_str(q);
        });
    }
    Some(Vector {
        ty: DataType::Text,
        data: Data::Str(out),
        nulls: merge_nulls(a, b),
    })
}

/// `a [NOT] IN (items)` for a string column and constant items (`None`: a
/// NULL item), with SQL's three-valued result: a row that matches no item
/// is NULL when some item is NULL.
pub fn in_list(a: &Vector, items: &[Option<&str>], negated: bool) -> Option<Vector> {
    let Data::Str(x) = &a.data else { return None };
    let trim = matches!(a.ty, DataType::Char(_));
    let saw_null = items.iter().any(Option::is_none);
    let keys: Vec<&[u8]> = items.iter().flatten().map(|s| key(s, trim)).collect();
    let mut data = Vec::with_capacity(x.len());
    let mut nulls = a.nulls.clone().unwrap_or_else(|| vec![false; x.len()]);
    for (i, s) in x.iter().enumerate() {
        let k = key(s, trim);
        let found = keys.contains(&k);
        data.push(found != negated);
        nulls[i] |= !found && saw_null;
    }
    let any_null = nulls.iter().any(|&n| n);
    Some(Vector {
        ty: DataType::Bool,
        data: Data::Bool(data),
        nulls: any_null.then_some(nulls),
    })
}

/// `a [NOT] LIKE pattern` for a string column and a compiled pattern.
pub fn like(a: &Vector, pattern: &LikePattern, negated: bool) -> Option<Vector> {
    let Data::Str(x) = &a.data else { return None };
    let out = x.iter().map(|s| pattern.matches(s) != negated).collect();
    Some(Vector {
        ty: DataType::Bool,
        data: Data::Bool(out),
        nulls: a.nulls.clone(),
    })
}

/// PostgreSQL's one-to-one case mapping of `c` (a character whose mapping
/// is several characters stays as it is), as `lower` / `upper` compute it.
#[inline]
fn map_char(c: char, upper: bool) -> char {
    let mut m: [Option<char>; 2] = [None, None];
    let mut fill = |it: &mut dyn Iterator<Item = char>| {
        m = [it.next(), it.next()];
    };
    if upper {
        fill(&mut c.to_uppercase());
    } else {
        fill(&mut c.to_lowercase());
    }
    match m {
        [Some(one), None] => one,
        _ => c,
    }
}

/// A one-argument text function over a string column: `length`,
/// `octet_length`, `lower`, `upper`; `None` for any other call.
pub fn func(f: ScalarFunc, args: &[&Vector]) -> Option<Vector> {
    let [a] = args else { return None };
    let Data::Str(x) = &a.data else { return None };
    let ints = |g: &dyn Fn(&str) -> usize| {
        let out: Vec<i32> = x.iter().map(|s| g(s) as i32).collect();
        Some(Vector {
            ty: DataType::Int4,
            data: Data::I32(out),
            nulls: a.nulls.clone(),
        })
    };
    let case = |upper: bool| {
        let mut out = StrVec::with_capacity(x.len(), x.byte_len());
        for s in x.iter() {
            out.push_with(|buf| {
                if s.is_ascii() {
                    // The common case: byte for byte.
                    buf.extend(s.bytes().map(|b| {
                        char::from(if upper {
                            b.to_ascii_uppercase()
                        } else {
                            b.to_ascii_lowercase()
                        })
                    }));
                } else {
                    buf.extend(s.chars().map(|c| map_char(c, upper)));
                }
            });
        }
        Some(Vector {
            ty: DataType::Text,
            data: Data::Str(out),
            nulls: a.nulls.clone(),
        })
    };
    match f {
        ScalarFunc::Length => ints(&|s| s.chars().count()),
        ScalarFunc::BpcharLength => ints(&|s| bpchar_trim(s).chars().count()),
        ScalarFunc::OctetLength => ints(&|s| s.len()),
        ScalarFunc::Lower => case(false),
        ScalarFunc::Upper => case(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Value;

    fn strs(ty: DataType, vals: &[Option<&str>]) -> Vector {
        let v: Vec<Value> = vals
            .iter()
            .map(|s| s.map_or(Value::Null, Value::text))
            .collect();
        Vector::from_values(ty, &v)
    }

    fn bools(v: &Vector) -> Vec<Option<bool>> {
        (0..v.len()).map(|i| v.get(i).as_bool()).collect()
    }

    #[test]
    fn comparisons_order_bytes_and_keep_nulls() {
        let a = strs(DataType::Text, &[Some("b"), None, Some("a"), Some("bb")]);
        let r = compare_scalar(BinaryOp::Eq, &a, "b").unwrap();
        assert_eq!(bools(&r), [Some(true), None, Some(false), Some(false)]);
        let r = compare_scalar(BinaryOp::Lt, &a, "b").unwrap();
        assert_eq!(bools(&r), [Some(false), None, Some(true), Some(false)]);
        let b = strs(DataType::Text, &[Some("B"), Some("x"), None, Some("b")]);
        let r = compare(BinaryOp::Gt, &a, &b).unwrap();
        // 'b' > 'B' in the C collation (bytes).
        assert_eq!(bools(&r), [Some(true), None, None, Some(true)]);
    }

    #[test]
    fn in_list_is_three_valued() {
        let a = strs(DataType::Text, &[Some("a"), None, Some("b"), Some("c")]);
        let r = in_list(&a, &[Some("a"), Some("c")], false).unwrap();
        assert_eq!(bools(&r), [Some(true), None, Some(false), Some(true)]);
        let r = in_list(&a, &[Some("a"), None], true).unwrap();
        assert_eq!(bools(&r), [Some(false), None, None, None]);
        let c = strs(DataType::Char(3), &[Some("a  ")]);
        assert_eq!(
            bools(&in_list(&c, &[Some("a")], false).unwrap()),
            [Some(true)]
        );
    }

    #[test]
    fn char_n_compares_without_trailing_spaces() {
        let a = strs(DataType::Char(3), &[Some("a  "), Some("ab ")]);
        let r = compare_scalar(BinaryOp::Eq, &a, "a").unwrap();
        assert_eq!(bools(&r), [Some(true), Some(false)]);
        let t = strs(DataType::Text, &[Some("a  "), Some("ab ")]);
        let r = compare_scalar(BinaryOp::Eq, &t, "a").unwrap();
        assert_eq!(bools(&r), [Some(false), Some(false)]);
    }

    #[test]
    fn like_concat_and_functions() {
        let a = strs(DataType::Text, &[Some("Hello"), None, Some("ÄbC")]);
        let p = LikePattern::new("h%", None, true).unwrap();
        assert_eq!(
            bools(&like(&a, &p, false).unwrap()),
            [Some(true), None, Some(false)]
        );
        let b = strs(DataType::Text, &[Some("!"), Some("x"), Some("")]);
        let c = concat(&a, &b).unwrap();
        assert_eq!(c.get(0), Value::text("Hello!"));
        assert!(c.is_null(1));
        assert_eq!(c.get(2), Value::text("ÄbC"));
        let up = func(ScalarFunc::Upper, &[&a]).unwrap();
        assert_eq!(up.get(2), Value::text("ÄBC"));
        let low = func(ScalarFunc::Lower, &[&a]).unwrap();
        assert_eq!(low.get(0), Value::text("hello"));
        assert_eq!(low.get(2), Value::text("äbc"));
        let len = func(ScalarFunc::Length, &[&a]).unwrap();
        assert_eq!(len.get(2), Value::Int4(3));
        assert!(len.is_null(1));
        let octets = func(ScalarFunc::OctetLength, &[&a]).unwrap();
        assert_eq!(octets.get(2), Value::Int4(4));
        // The per-row function and the kernel agree.
        for f in [ScalarFunc::Lower, ScalarFunc::Upper, ScalarFunc::Length] {
            let k = func(f, &[&a]).unwrap();
            for i in [0, 2] {
                assert_eq!(k.get(i), f.eval(&[a.get(i)]).unwrap(), "{f:?}");
            }
        }
    }
}
