//! A hash set of distinct rows of one or more columns, kept column by
//! column: the key table of DISTINCT, INTERSECT / EXCEPT, GROUP BY on
//! several keys (or one key that is not text), `count(DISTINCT x)`,
//! `x IN (subquery)` and hash joins on several keys.
//!
//! [`KeySet`] numbers the distinct keys it is given, `0, 1, 2, ...` in the
//! order first seen, like [`super::strset::StrSet`] does for one text key.
//! The keys themselves are stored in one [`Vector`] per key column (row
//! `id` of those vectors is key `id`), and the hash table holds only the
//! ids. A key is read straight from the caller's batch columns — a row
//! position, not a `Value` — so looking up a key that is already there
//! hashes and compares the batch's own slots: no allocation, for text (the
//! string vector's bytes) as for integers. A new key appends its row to the
//! stored vectors (amortized growth, not an allocation per key; a text key's
//! bytes go into the stored string vector's one buffer).
//!
//! Equality is SQL's grouping equality, the same as [`Value`]'s `Eq`: NULL
//! equals NULL (one group, one DISTINCT row), floats treat NaN as equal to
//! NaN and `-0` as `0`, numeric ignores the display scale, intervals compare
//! by length; `char(n)` ignores trailing spaces, as its `=` does. The hash
//! ([`hash_at`]) is consistent with it.
//!
//! Invariants: ids are dense (`0..len`); `hashes[id]` is key `id`'s hash,
//! so the table grows without rehashing; every stored vector has `len`
//! rows.

use std::hash::{BuildHasher, Hash, Hasher};

use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, HashTable};

use super::{Data, Vector};
use crate::types::text::bpchar_trim;
use crate::types::{compare_typed, DataType, Value};

/// Distinct rows numbered in first-seen order (see the module doc).
#[derive(Clone)]
pub struct KeySet {
    /// Key `id` is row `id` of these vectors, one per key column.
    keys: Vec<Vector>,
    /// The hash of each key.
    hashes: Vec<u64>,
    /// Key ids, by hash.
    table: HashTable<u32>,
    /// The hash function.
    hasher: DefaultHashBuilder,
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeySet")
            .field("types", &self.keys.iter().map(|k| k.ty).collect::<Vec<_>>())
            .field("len", &self.len())
            .finish()
    }
}

/// Float equality as SQL groups floats: NaN equals NaN, `-0` equals `0`.
#[inline]
fn f64_key(v: f64) -> u64 {
    if v.is_nan() {
        f64::NAN.to_bits()
    } else if v == 0.0 {
        0
    } else {
        v.to_bits()
    }
}

/// The part of a string that is its key (`char(n)`: without trailing
/// spaces).
#[inline]
fn norm<'s>(s: &'s str, ty: &DataType) -> &'s [u8] {
    if matches!(ty, DataType::Char(_)) {
        bpchar_trim(s).as_bytes()
    } else {
        s.as_bytes()
    }
}

/// Feeds row `i` of `v` to `state`, consistently with [`eq_at`]: equal
/// keys hash alike whatever physical form holds them.
#[inline]
pub fn hash_at<H: Hasher>(v: &Vector, i: usize, state: &mut H) {
    if v.is_null(i) {
        state.write_u8(0);
        return;
    }
    match &v.data {
        Data::Bool(x) => state.write_u64(x[i] as u64 | 1 << 8),
        Data::I16(x) => state.write_u64(x[i] as i64 as u64),
        Data::I32(x) => state.write_u64(x[i] as i64 as u64),
        Data::I64(x) => state.write_u64(x[i] as u64),
        Data::F32(x) => state.write_u64(f64_key(x[i] as f64)),
        Data::F64(x) => state.write_u64(f64_key(x[i])),
        Data::Str(x) => {
            state.write(norm(x.get(i), &v.ty));
            state.write_u8(0xff);
        }
        Data::Any(x) => match &x[i] {
            Value::Bool(b) => state.write_u64(*b as u64 | 1 << 8),
            Value::Int2(n) => state.write_u64(*n as i64 as u64),
            Value::Int4(n) | Value::Date(n) => state.write_u64(*n as i64 as u64),
            Value::Int8(n) | Value::Timestamp(n) | Value::TimestampTz(n) => {
                state.write_u64(*n as u64)
            }
            Value::Float4(f) => state.write_u64(f64_key(*f as f64)),
            Value::Float8(f) => state.write_u64(f64_key(*f)),
            Value::Text(s) => {
                state.write(norm(s, &v.ty));
                state.write_u8(0xff);
            }
            other => other.hash(state),
        },
    }
}

/// Whether row `i` of `a` and row `j` of `b` are the same key (NULL equals
/// NULL; see the module doc). Both columns are of one SQL type; they are
/// read in their physical form without building a `Value`, except in the
/// mixed-form fallback no plan produces.
#[inline]
pub fn eq_at(a: &Vector, i: usize, b: &Vector, j: usize) -> bool {
    match (a.is_null(i), b.is_null(j)) {
        (false, false) => {}
        (x, y) => return x == y,
    }
    match (&a.data, &b.data) {
        (Data::Str(x), Data::Str(y)) => norm(x.get(i), &a.ty) == norm(y.get(j), &b.ty),
        (Data::I32(x), Data::I32(y)) => x[i] == y[j],
        (Data::I64(x), Data::I64(y)) => x[i] == y[j],
        (Data::I16(x), Data::I16(y)) => x[i] == y[j],
        (Data::Bool(x), Data::Bool(y)) => x[i] == y[j],
        (Data::F64(x), Data::F64(y)) => f64_key(x[i]) == f64_key(y[j]),
        (Data::F32(x), Data::F32(y)) => f64_key(x[i] as f64) == f64_key(y[j] as f64),
        (Data::Any(x), Data::Any(y)) if !a.ty.is_string() => x[i] == y[j],
        _ => compare_typed(&a.get(i), &b.get(j), &a.ty).is_eq(),
    }
}

impl KeySet {
    /// An empty set of keys with these column types.
    pub fn new(types: &[DataType]) -> KeySet {
        KeySet {
            keys: types.iter().map(|t| Vector::new(*t)).collect(),
            hashes: Vec::new(),
            table: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
        }
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True when no key was inserted.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Approximate bytes the set holds (for the memory limit of a hash
    /// table).
    pub fn mem_bytes(&self) -> usize {
        self.keys.iter().map(super::vector_bytes).sum::<usize>()
            + self.hashes.capacity() * 8
            + self.table.capacity() * 5
    }

    /// The stored keys: row `id` of column `c` is key `id`'s `c`-th value.
    pub fn keys(&self) -> &[Vector] {
        &self.keys
    }

    /// The hash of row `row` of `cols` (one column per key column).
    #[inline]
    fn hash_row(&self, cols: &[&Vector], row: usize) -> u64 {
        let mut h = self.hasher.build_hasher();
        for c in cols {
            hash_at(c, row, &mut h);
        }
        h.finish()
    }

    /// The id of the key in row `row` of `cols`, if present.
    #[inline]
    pub fn find(&self, cols: &[&Vector], row: usize) -> Option<u32> {
        debug_assert_eq!(cols.len(), self.keys.len());
        let h = self.hash_row(cols, row);
        let keys = &self.keys;
        self.table
            .find(h, |&id| {
                cols.iter()
                    .zip(keys)
                    .all(|(c, k)| eq_at(c, row, k, id as usize))
            })
            .copied()
    }

    /// The id of the key in row `row` of `cols`, inserted when new; the
    /// flag says it was new.
    #[inline]
    pub fn insert(&mut self, cols: &[&Vector], row: usize) -> (u32, bool) {
        debug_assert_eq!(cols.len(), self.keys.len());
        let h = self.hash_row(cols, row);
        let (keys, hashes) = (&mut self.keys, &mut self.hashes);
        match self.table.entry(
            h,
            |&id| {
                cols.iter()
                    .zip(keys.iter())
                    .all(|(c, k)| eq_at(c, row, k, id as usize))
            },
            |&id| hashes[id as usize],
        ) {
            Entry::Occupied(o) => (*o.get(), false),
            Entry::Vacant(v) => {
                let id = u32::try_from(hashes.len()).expect("fewer than 2^32 distinct keys");
                for (k, c) in keys.iter_mut().zip(cols) {
                    k.push_from(c, row);
                }
                hashes.push(h);
                v.insert(id);
                (id, true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::numeric::Numeric;

    fn col(ty: DataType, vals: &[Value]) -> Vector {
        Vector::from_values(ty, vals)
    }

    #[test]
    fn numbers_distinct_rows_with_sql_grouping_equality() {
        let a = col(
            DataType::Int4,
            &[
                Value::Int4(1),
                Value::Int4(1),
                Value::Null,
                Value::Int4(2),
                Value::Null,
            ],
        );
        let b = col(
            DataType::Text,
            &[
                Value::text("x"),
                Value::text("x"),
                Value::Null,
                Value::text("x"),
                Value::Null,
            ],
        );
        let mut s = KeySet::new(&[DataType::Int4, DataType::Text]);
        let ids: Vec<_> = (0..5).map(|r| s.insert(&[&a, &b], r)).collect();
        assert_eq!(
            ids,
            [(0, true), (0, false), (1, true), (2, true), (1, false)],
            "NULL groups with NULL"
        );
        assert_eq!(s.len(), 3);
        assert_eq!(s.keys()[1].str_at(2), Some("x"));
        assert!(s.keys()[0].is_null(1));
        assert_eq!(s.find(&[&a, &b], 3), Some(2));
        let c = col(DataType::Int4, &[Value::Int4(2)]);
        let d = col(DataType::Text, &[Value::text("y")]);
        assert_eq!(s.find(&[&c, &d], 0), None);
    }

    #[test]
    fn floats_numerics_intervals_and_char_keys() {
        let f = col(
            DataType::Float8,
            &[
                Value::Float8(0.0),
                Value::Float8(-0.0),
                Value::Float8(f64::NAN),
                Value::Float8(-f64::NAN),
            ],
        );
        let mut s = KeySet::new(&[DataType::Float8]);
        let ids: Vec<_> = (0..4).map(|r| s.insert(&[&f], r).0).collect();
        assert_eq!(ids, [0, 0, 1, 1]);
        let n = col(
            DataType::Numeric(None),
            &[
                Value::numeric(Numeric::parse("1.0").unwrap()),
                Value::numeric(Numeric::parse("1.00").unwrap()),
                Value::numeric(Numeric::parse("10").unwrap()),
            ],
        );
        let mut s = KeySet::new(&[DataType::Numeric(None)]);
        let ids: Vec<_> = (0..3).map(|r| s.insert(&[&n], r).0).collect();
        assert_eq!(ids, [0, 0, 1]);
        assert_eq!(
            crate::types::io::value_to_string(&s.keys()[0].get(0)),
            "1.0"
        );
        let c = col(
            DataType::Char(4),
            &[Value::text("ab  "), Value::text("ab"), Value::text("abc ")],
        );
        let mut s = KeySet::new(&[DataType::Char(4)]);
        let ids: Vec<_> = (0..3).map(|r| s.insert(&[&c], r).0).collect();
        assert_eq!(ids, [0, 0, 1], "char(n) ignores trailing spaces");
        let t = col(DataType::Text, &[Value::text("ab  "), Value::text("ab")]);
        let mut s = KeySet::new(&[DataType::Text]);
        assert_eq!(s.insert(&[&t], 0).0, 0);
        assert_eq!(s.insert(&[&t], 1).0, 1, "text keeps its spaces");
    }

    #[test]
    fn many_keys_grow_the_table() {
        let v: Vec<Value> = (0..20_000)
            .map(|i| Value::text(&format!("k{}", i % 5000)))
            .collect();
        let c = col(DataType::Text, &v);
        let mut s = KeySet::new(&[DataType::Text]);
        for r in 0..v.len() {
            let (id, new) = s.insert(&[&c], r);
            assert_eq!(id as usize, r % 5000);
            assert_eq!(new, r < 5000);
        }
        assert_eq!(s.len(), 5000);
    }
}
