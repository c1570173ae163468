use super::*;
use crate::types::compare::compare_typed;

/// A small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<T: Clone>(&mut self, v: &[T]) -> T {
        v[(self.next() % v.len() as u64) as usize].clone()
    }
}

fn num(s: &str) -> Value {
    Value::numeric(Numeric::parse(s).unwrap())
}

fn samples(ty: &DataType, r: &mut Rng) -> Value {
    let specials_f = [
        0.0,
        -0.0,
        1.5,
        -1.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e-300,
        -1e300,
    ];
    match ty {
        DataType::Bool => Value::Bool(r.next() % 2 == 0),
        DataType::Int2 => Value::Int2(r.pick(&[i16::MIN, -1, 0, 1, i16::MAX, 300, -300])),
        DataType::Int4 => Value::Int4(r.next() as i32 >> (r.next() % 31)),
        DataType::Int8 => Value::Int8(r.next() as i64 >> (r.next() % 63)),
        DataType::Float4 => Value::Float4(r.pick(&specials_f) as f32 * (r.next() % 5) as f32),
        DataType::Float8 => Value::Float8(r.pick(&specials_f) * (r.next() % 7) as f64),
        DataType::Numeric(_) => num(r.pick(&[
            "0",
            "0.00",
            "1",
            "1.0",
            "1.5",
            "-1",
            "-1.5",
            "-1.50",
            "10",
            "100",
            "-100",
            "0.001",
            "-0.001",
            "123456789012345678901234567890",
            "-99999.9999",
            "NaN",
            "Infinity",
            "-Infinity",
            "9.99",
            "10.01",
            "1e10",
            "-1e-10",
        ])),
        DataType::Text | DataType::Name | DataType::Varchar(_) | DataType::Char(_) => {
            let parts = [
                "", "a", "ab", "a\0", "a\0b", "b", "\u{e9}", "a ", "ab  ", "Z", "\x01",
            ];
            let s = format!("{}{}", r.pick(&parts), r.pick(&parts));
            Value::text(&s)
        }
        DataType::Date => Value::Date(r.pick(&[i32::MIN, -5, 0, 5, 10_000, i32::MAX])),
        DataType::Timestamp(_) => Value::Timestamp(r.next() as i64 >> (r.next() % 63)),
        DataType::TimestampTz(_) => Value::TimestampTz(r.next() as i64 >> (r.next() % 63)),
        DataType::Interval => Value::Interval(Interval {
            months: (r.next() % 5) as i32 - 2,
            days: (r.next() % 70) as i32 - 35,
            micros: (r.next() % 1000) as i64 - 500,
        }),
        DataType::Unknown => Value::text("x"),
        DataType::Time(_) => Value::Time(r.pick(&[0, 1, 3_600_000_000, 86_400_000_000])),
        DataType::TimeTz(_) => Value::TimeTz(
            r.pick(&[0, 1, 3_600_000_000, 86_400_000_000]),
            r.pick(&[0, 3600, -3600, -19_800, 57_599]),
        ),
        DataType::Bytea => {
            let parts: [&[u8]; 7] = [b"", b"\0", b"\0\0", b"\x01", b"\xff", b"a", b"\xff\0"];
            Value::Bytea([r.pick(&parts), r.pick(&parts)].concat().into())
        }
        // Arrays and JSON are not index keys.
        DataType::Array(_) | DataType::Json | DataType::Jsonb | DataType::Point => Value::Null,
    }
}

const TYPES: [DataType; 17] = [
    DataType::Bool,
    DataType::Int2,
    DataType::Int4,
    DataType::Int8,
    DataType::Float4,
    DataType::Float8,
    DataType::Numeric(None),
    DataType::Text,
    DataType::Name,
    DataType::Char(4),
    DataType::Date,
    DataType::Timestamp(None),
    DataType::TimestampTz(None),
    DataType::Interval,
    DataType::Bytea,
    DataType::Time(None),
    DataType::TimeTz(None),
];

/// The order a column imposes on two values, NULLs and DESC included.
fn model_cmp(col: &KeyColumn, a: &Value, b: &Value) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => {
            if col.nulls_first {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (false, true) => {
            if col.nulls_first {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (false, false) => {
            let c = compare_typed(a, b, &col.ty);
            if col.desc {
                c.reverse()
            } else {
                c
            }
        }
    }
}

#[test]
fn byte_order_follows_the_type_order_for_every_type_and_direction() {
    let mut r = Rng(0x9e3779b97f4a7c15);
    for ty in TYPES {
        for (desc, nf) in [(false, false), (false, true), (true, true), (true, false)] {
            let col = KeyColumn {
                ty,
                desc,
                nulls_first: nf,
            };
            let d = IndexDesc::new(vec![col.clone()]);
            for _ in 0..400 {
                let gen = |r: &mut Rng| {
                    if r.next() % 10 == 0 {
                        Value::Null
                    } else {
                        samples(&ty, r)
                    }
                };
                let (a, b) = (gen(&mut r), gen(&mut r));
                let (mut ka, mut kb) = (Vec::new(), Vec::new());
                encode_key(&d, std::slice::from_ref(&a), &mut ka).unwrap();
                encode_key(&d, std::slice::from_ref(&b), &mut kb).unwrap();
                assert_eq!(
                    ka.cmp(&kb),
                    model_cmp(&col, &a, &b),
                    "{ty:?} desc={desc} nf={nf}: {a:?} vs {b:?}"
                );
                // Decoding gives back an equal value.
                let (vals, tid) = decode_key(&d, &ka).unwrap();
                assert_eq!(tid, None);
                assert_eq!(
                    model_cmp(&col, &vals[0], &a),
                    Ordering::Equal,
                    "{ty:?}: {a:?} decoded as {:?}",
                    vals[0]
                );
            }
        }
    }
}

#[test]
fn multi_column_keys_order_lexicographically_then_by_tid() {
    let mut r = Rng(12345);
    let cols = vec![
        KeyColumn::asc(DataType::Text),
        KeyColumn::desc(DataType::Int4),
        KeyColumn::asc(DataType::Numeric(None)),
    ];
    let d = IndexDesc::new(cols.clone());
    for _ in 0..3000 {
        let row = |r: &mut Rng| -> (Vec<Value>, Tid) {
            let v = cols
                .iter()
                .map(|c| {
                    if r.next() % 8 == 0 {
                        Value::Null
                    } else {
                        samples(&c.ty, r)
                    }
                })
                .collect();
            (v, ((r.next() % 3) as u32, (r.next() % 3) as u16))
        };
        let (a, b) = (row(&mut r), row(&mut r));
        let ka = leaf_key(&d, &a.0, a.1).unwrap();
        let kb = leaf_key(&d, &b.0, b.1).unwrap();
        let model = cols
            .iter()
            .zip(a.0.iter().zip(&b.0))
            .map(|(c, (x, y))| model_cmp(c, x, y))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
            .then(a.1.cmp(&b.1));
        assert_eq!(ka.cmp(&kb), model, "{a:?} vs {b:?}");
        assert_eq!(tid_of(&ka), a.1);
        assert_eq!(decode_key(&d, &ka).unwrap().1, Some(a.1));
        // A search key on the first column is a prefix of the full key.
        let mut s = Vec::new();
        encode_key(&d, &a.0[..1], &mut s).unwrap();
        assert_eq!(prefix_cmp(&ka, &s), Ordering::Equal);
        if ka < kb {
            let p = truncate_pivot(&d, &ka, &kb).unwrap();
            assert!(ka < p && p <= kb, "pivot between {a:?} and {b:?}");
            let (pv, _) = decode_key(&d, &p).unwrap();
            assert!(pv.len() <= 3);
        }
    }
}

#[test]
fn truncation_keeps_only_the_distinguishing_columns() {
    let d = IndexDesc::new(vec![
        KeyColumn::asc(DataType::Int4),
        KeyColumn::asc(DataType::Text),
    ]);
    let k = |a: i32, b: &str, t: Tid| leaf_key(&d, &[Value::Int4(a), Value::text(b)], t).unwrap();
    let p = truncate_pivot(&d, &k(1, "zz", (9, 9)), &k(2, "a", (1, 1))).unwrap();
    assert_eq!(decode_key(&d, &p).unwrap(), (vec![Value::Int4(2)], None));
    let p = truncate_pivot(&d, &k(2, "a", (9, 9)), &k(2, "b", (1, 1))).unwrap();
    assert_eq!(
        decode_key(&d, &p).unwrap(),
        (vec![Value::Int4(2), Value::text("b")], None)
    );
    let p = truncate_pivot(&d, &k(2, "b", (1, 1)), &k(2, "b", (1, 2))).unwrap();
    assert_eq!(decode_key(&d, &p).unwrap().1, Some((1, 2)));
}

#[test]
fn bad_values_and_corrupt_keys_are_errors() {
    let d = IndexDesc::new(vec![KeyColumn::asc(DataType::Int2)]);
    let e = leaf_key(&d, &[Value::Int4(70000)], (0, 1)).unwrap_err();
    assert_eq!(e.code.code(), "22003");
    assert!(leaf_key(&d, &[Value::text("x")], (0, 1)).is_err());
    assert!(leaf_key(&d, &[], (0, 1)).is_err());
    assert!(decode_key(&d, &[7, 1, 2]).is_err());
    assert!(decode_key(&d, &[1, 0x80]).is_err());
}

#[test]
fn raw_integer_encoding_equals_the_encoding_of_the_decoded_value() {
    let mut r = Rng(0x5eed);
    let types = [
        DataType::Int2,
        DataType::Int4,
        DataType::Int8,
        DataType::Date,
        DataType::Timestamp(None),
    ];
    for ty in types {
        for col in [KeyColumn::asc(ty), KeyColumn::desc(ty)] {
            let one = IndexDesc::new(vec![col.clone()]);
            let width = match ty {
                DataType::Int2 => 2,
                DataType::Int4 | DataType::Date => 4,
                _ => 8,
            };
            let edges = [
                0u64,
                1,
                u64::MAX,
                1 << (width * 8 - 1),
                (1 << (width * 8 - 1)) - 1,
            ];
            for i in 0..400 {
                let x = match edges.get(i) {
                    Some(e) => *e,
                    None => r.next(),
                };
                let raw = x.to_le_bytes()[..width].to_vec();
                let (mut fast, mut slow) = (Vec::new(), Vec::new());
                assert!(encode_raw_int(&col, Some(&raw), &mut fast));
                encode_key(&one, &[Value::decode(&ty, &raw)], &mut slow).unwrap();
                assert_eq!(fast, slow, "{ty:?} desc {} raw {raw:?}", col.desc);
            }
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            assert!(encode_raw_int(&col, None, &mut fast));
            encode_key(&one, &[Value::Null], &mut slow).unwrap();
            assert_eq!(fast, slow, "NULL of {ty:?}");
        }
    }
    let mut out = Vec::new();
    assert!(!encode_raw_int(
        &KeyColumn::asc(DataType::Text),
        Some(b"ab"),
        &mut out
    ));
    assert!(!encode_raw_int(
        &KeyColumn::asc(DataType::Int4),
        Some(&[1, 2]),
        &mut out
    ));
    assert!(out.is_empty());
}
