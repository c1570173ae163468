//! The hash join's typed tables for one integer or text key.
//!
//! When a hash join has exactly one key and it is `int2`, `int4` or `int8`
//! on both sides, [`IntTable`] replaces the general table of `Vec<Value>`
//! keys; a `text` / `varchar` / `char` key on both sides takes [`StrTable`]
//! (the build keys numbered by a [`StrSet`], whose arena holds each
//! distinct key once; a probe hashes the probe row's bytes and compares
//! them with the arena's — no `Value`, no allocation per row).
//! [`KeyTable`] is either. [`IntTable`]: build rows are chained per key through one `next` array, and the
//! chain heads live in a direct array indexed by `key - min` when the keys
//! are dense (the common case: a dimension table's small serial ids, e.g.
//! 50 branches), else in a `hashbrown` map from `i64`. A probe of an `int4`
//! column reads the slice directly: no `Value` per row, no hashing in the
//! dense case.
//!
//! Invariants: a chain lists its build rows in ascending order (chains are
//! built back to front), so join output comes in the same order as the
//! general table's; NULL keys are never entered and never match.

use hashbrown::HashMap;

use crate::exec::strset::StrSet;
use crate::exec::vector::{Data, Vector};
use crate::types::DataType;

/// End of a chain (and, in a direct array, no build row).
pub const END: u32 = u32::MAX;

/// Build rows by integer key.
#[derive(Debug)]
pub struct IntTable {
    /// The smallest key, and the chain heads of keys `min..` (dense keys).
    direct: Option<(i64, Vec<u32>)>,
    /// Chain heads by key (sparse keys).
    map: HashMap<i64, u32>,
    /// The next build row with the same key, per build row.
    next: Vec<u32>,
    /// No key occurs twice on the build side (every chain has one row): a
    /// probe row then has at most one match.
    unique: bool,
}

/// Whether the integer table serves a join on these key types.
pub fn eligible(build: &[DataType], probe: &[DataType]) -> bool {
    let int = |t: &DataType| matches!(t, DataType::Int2 | DataType::Int4 | DataType::Int8);
    build.len() == 1 && probe.len() == 1 && int(&build[0]) && build[0] == probe[0]
}

/// Whether the text table serves a join on these key types: one string key
/// on each side, both `char(n)` (blank-insensitive) or neither.
pub fn eligible_text(build: &[DataType], probe: &[DataType]) -> bool {
    let is_char = |t: &DataType| matches!(t, DataType::Char(_));
    build.len() == 1
        && probe.len() == 1
        && build[0].is_string()
        && probe[0].is_string()
        && is_char(&build[0]) == is_char(&probe[0])
}

/// A typed join table: for one integer key or one text key.
#[derive(Debug)]
pub enum KeyTable {
    /// One integer key.
    Int(IntTable),
    /// One text key.
    Str(StrTable),
}

impl KeyTable {
    /// The typed table for a join of these key types, built from the build
    /// side's key column; `None` when neither applies.
    pub fn build(build: &[DataType], probe: &[DataType], keys: &Vector) -> Option<KeyTable> {
        if eligible(build, probe) {
            Some(KeyTable::Int(IntTable::build(keys)))
        } else if eligible_text(build, probe) {
            let trim = matches!(build[0], DataType::Char(_));
            Some(KeyTable::Str(StrTable::build(keys, trim)))
        } else {
            None
        }
    }

    /// Whether a table would be built for these key types.
    pub fn applies(build: &[DataType], probe: &[DataType]) -> bool {
        eligible(build, probe) || eligible_text(build, probe)
    }

    /// The smallest key and the direct array of build rows by `key - min`
    /// ([`END`]: none), when the keys are integers, dense and unique.
    pub fn dense_unique(&self) -> Option<(i64, &[u32])> {
        match self {
            KeyTable::Int(t) => t.dense_unique(),
            KeyTable::Str(_) => None,
        }
    }

    /// Appends the matching (probe row, build row) pairs of the probe key
    /// column `keys`.
    pub fn probe(&self, keys: &Vector, probe_idx: &mut Vec<u32>, build_idx: &mut Vec<u32>) {
        match self {
            KeyTable::Int(t) => t.probe(keys, probe_idx, build_idx),
            KeyTable::Str(t) => t.probe(keys, probe_idx, build_idx),
        }
    }
}

/// Build rows by text key: chains as in [`IntTable`], headed per distinct
/// key number of a [`StrSet`].
#[derive(Debug)]
pub struct StrTable {
    /// The distinct build keys.
    set: StrSet,
    /// The first build row of each key number.
    heads: Vec<u32>,
    /// The next build row with the same key, per build row.
    next: Vec<u32>,
}

impl StrTable {
    /// The table of `keys` (a string vector), one per build row; `trim`
    /// for `char(n)` keys.
    pub fn build(keys: &Vector, trim: bool) -> StrTable {
        let n = keys.len();
        let mut t = StrTable {
            set: StrSet::new(trim),
            heads: Vec::new(),
            next: vec![END; n],
        };
        // Back to front, so every chain ends up in ascending row order.
        for row in (0..n).rev() {
            let slow;
            let key = match &keys.data {
                Data::Str(_) => keys.str_at(row),
                _ => {
                    slow = keys.get(row);
                    slow.as_str()
                }
            };
            let Some(k) = key else { continue };
            let (id, new) = t.set.insert(k);
            if new {
                t.heads.push(END);
            }
            t.next[row] = t.heads[id as usize];
            t.heads[id as usize] = row as u32;
        }
        t
    }

    /// Appends the matching (probe row, build row) pairs of every row of the
    /// probe key column `keys`.
    pub fn probe(&self, keys: &Vector, probe_idx: &mut Vec<u32>, build_idx: &mut Vec<u32>) {
        for row in 0..keys.len() {
            let slow;
            let key = match &keys.data {
                Data::Str(_) => keys.str_at(row),
                _ => {
                    slow = keys.get(row);
                    slow.as_str()
                }
            };
            let Some(id) = key.and_then(|k| self.set.find(k)) else {
                continue;
            };
            let mut r = self.heads[id as usize];
            while r != END {
                probe_idx.push(row as u32);
                build_idx.push(r);
                r = self.next[r as usize];
            }
        }
    }
}

/// Row `i` of an integer column as `i64` (None when NULL).
#[inline]
fn int_at(v: &Vector, i: usize) -> Option<i64> {
    if v.is_null(i) {
        return None;
    }
    match &v.data {
        Data::I16(x) => Some(x[i] as i64),
        Data::I32(x) => Some(x[i] as i64),
        Data::I64(x) => Some(x[i]),
        _ => v.get(i).as_i64(),
    }
}

impl IntTable {
    /// The table of `keys`, one per build row.
    pub fn build(keys: &Vector) -> IntTable {
        let n = keys.len();
        let vals: Vec<Option<i64>> = (0..n).map(|i| int_at(keys, i)).collect();
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for &k in vals.iter().flatten() {
            lo = lo.min(k);
            hi = hi.max(k);
        }
        let span = (hi as i128) - (lo as i128) + 1;
        let dense = lo <= hi && span <= (2 * n as i128).max(1024);
        let mut t = IntTable {
            direct: dense.then(|| (lo, vec![END; span as usize])),
            map: HashMap::new(),
            next: vec![END; n],
            unique: true,
        };
        // Back to front, so every chain ends up in ascending row order.
        for row in (0..n).rev() {
            let Some(k) = vals[row] else { continue };
            let head = match &mut t.direct {
                Some((lo, heads)) => &mut heads[(k - *lo) as usize],
                None => t.map.entry(k).or_insert(END),
            };
            t.unique &= *head == END;
            t.next[row] = *head;
            *head = row as u32;
        }
        t
    }

    /// The smallest key and the direct array of build rows by `key - min`,
    /// when the keys are dense and no key occurs twice.
    pub fn dense_unique(&self) -> Option<(i64, &[u32])> {
        match (&self.direct, self.unique) {
            (Some((lo, heads)), true) => Some((*lo, heads)),
            _ => None,
        }
    }

    /// The first build row with key `k`, or [`END`].
    #[inline]
    fn head(&self, k: i64) -> u32 {
        match &self.direct {
            Some((lo, heads)) => {
                let at = k.wrapping_sub(*lo);
                if at >= 0 && (at as usize) < heads.len() {
                    heads[at as usize]
                } else {
                    END
                }
            }
            None => self.map.get(&k).copied().unwrap_or(END),
        }
    }

    /// Appends the matching (probe row, build row) pairs of every row of the
    /// probe key column `keys`.
    pub fn probe(&self, keys: &Vector, probe_idx: &mut Vec<u32>, build_idx: &mut Vec<u32>) {
        if let (Some((lo, heads)), true, Data::I32(x), None) =
            (&self.direct, self.unique, &keys.data, &keys.nulls)
        {
            return probe_unique_direct(*lo, heads, x, probe_idx, build_idx);
        }
        let mut emit = |row: usize, k: i64| {
            let mut r = self.head(k);
            while r != END {
                probe_idx.push(row as u32);
                build_idx.push(r);
                r = self.next[r as usize];
            }
        };
        match (&keys.data, &keys.nulls) {
            (Data::I32(x), None) => {
                for (row, &k) in x.iter().enumerate() {
                    emit(row, k as i64);
                }
            }
            _ => {
                for row in 0..keys.len() {
                    if let Some(k) = int_at(keys, row) {
                        emit(row, k);
                    }
                }
            }
        }
    }
}

/// [`IntTable::probe`] of a NULL-free `int4` column against unique keys in
/// a direct array (a fact table probing its dimension's serial ids): each
/// row has zero or one match, so the pairs are written branch-free into
/// slots sized for every row, and the count advances when there is a match.
fn probe_unique_direct(
    lo: i64,
    heads: &[u32],
    keys: &[i32],
    probe_idx: &mut Vec<u32>,
    build_idx: &mut Vec<u32>,
) {
    let (p0, b0) = (probe_idx.len(), build_idx.len());
    probe_idx.resize(p0 + keys.len(), 0);
    build_idx.resize(b0 + keys.len(), 0);
    let (ps, bs) = (&mut probe_idx[p0..], &mut build_idx[b0..]);
    let mut n = 0usize;
    for (row, &k) in keys.iter().enumerate() {
        let at = i64::from(k).wrapping_sub(lo) as u64;
        let r = if at < heads.len() as u64 {
            heads[at as usize]
        } else {
            END
        };
        ps[n] = row as u32;
        bs[n] = r;
        n += (r != END) as usize;
    }
    probe_idx.truncate(p0 + n);
    build_idx.truncate(b0 + n);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Value;

    fn col(vals: &[Option<i64>]) -> Vector {
        let v: Vec<Value> = vals
            .iter()
            .map(|x| x.map_or(Value::Null, |k| Value::Int4(k as i32)))
            .collect();
        Vector::from_values(DataType::Int4, &v)
    }

    fn pairs(t: &IntTable, probe: &[Option<i64>]) -> Vec<(u32, u32)> {
        let (mut p, mut b) = (Vec::new(), Vec::new());
        t.probe(&col(probe), &mut p, &mut b);
        p.into_iter().zip(b).collect()
    }

    #[test]
    fn dense_and_sparse_tables_find_every_match_in_row_order() {
        let build = [Some(3), None, Some(5), Some(3), Some(-2)];
        let probe = [Some(3), Some(4), None, Some(-2), Some(5), Some(1_000_000)];
        let want = vec![(0, 0), (0, 3), (3, 4), (4, 2)];
        let dense = IntTable::build(&col(&build));
        assert!(dense.direct.is_some());
        assert_eq!(pairs(&dense, &probe), want);
        let mut sparse_build = build.to_vec();
        sparse_build.push(Some(2_000_000_000));
        let sparse = IntTable::build(&col(&sparse_build));
        assert!(sparse.direct.is_none());
        assert_eq!(pairs(&sparse, &probe), want);
        let unique = IntTable::build(&col(&[Some(7), Some(5), None, Some(6)]));
        assert!(unique.unique && unique.direct.is_some());
        // Without NULL probe keys the branch-free path runs; with one, the
        // general path: both give the same pairs.
        assert_eq!(
            pairs(
                &unique,
                &[Some(6), Some(4), Some(7), Some(-9), Some(8), Some(5)]
            ),
            vec![(0, 3), (2, 0), (5, 1)]
        );
        assert_eq!(
            pairs(
                &unique,
                &[Some(6), Some(4), Some(7), None, Some(8), Some(5)]
            ),
            vec![(0, 3), (2, 0), (5, 1)]
        );
        assert!(!dense.unique);
        let empty = IntTable::build(&col(&[None, None]));
        assert!(pairs(&empty, &probe).is_empty());
    }

    /// Seeded random build and probe keys (dense and sparse ranges, NULLs,
    /// duplicates): the typed table finds exactly the pairs a nested loop
    /// over the rows finds, in probe-then-build order.
    #[test]
    fn random_keys_match_the_nested_loop() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for round in 0..300 {
            let spread = if round % 3 == 0 { 2_000_000_000 } else { 50 };
            let mut keys = |len: u64| -> Vec<Option<i64>> {
                (0..next(len))
                    .map(|_| (next(10) != 0).then(|| next(spread) as i64 - (spread / 2) as i64))
                    .collect()
            };
            let build = keys(200);
            let probe = keys(200);
            let want: Vec<(u32, u32)> = probe
                .iter()
                .enumerate()
                .flat_map(|(i, p)| {
                    build.iter().enumerate().filter_map(move |(j, b)| {
                        (p.is_some() && p == b).then_some((i as u32, j as u32))
                    })
                })
                .collect();
            let table = IntTable::build(&col(&build));
            assert_eq!(
                pairs(&table, &probe),
                want,
                "build {build:?} probe {probe:?}"
            );
        }
    }

    #[test]
    fn text_table_finds_every_match_in_row_order() {
        let strs = |ty: DataType, v: &[Option<&str>]| {
            let v: Vec<Value> = v
                .iter()
                .map(|s| s.map_or(Value::Null, Value::text))
                .collect();
            Vector::from_values(ty, &v)
        };
        let build = strs(
            DataType::Text,
            &[Some("a"), None, Some("b"), Some("a"), Some("")],
        );
        let probe = strs(
            DataType::Text,
            &[Some("a"), Some("c"), None, Some(""), Some("b"), Some("a ")],
        );
        let t = StrTable::build(&build, false);
        let (mut p, mut b) = (Vec::new(), Vec::new());
        t.probe(&probe, &mut p, &mut b);
        let got: Vec<(u32, u32)> = p.into_iter().zip(b).collect();
        assert_eq!(got, vec![(0, 0), (0, 3), (3, 4), (4, 2)]);
        // char(n): "a " equals "a".
        let t = StrTable::build(&strs(DataType::Char(2), &[Some("a ")]), true);
        let (mut p, mut b) = (Vec::new(), Vec::new());
        t.probe(
            &strs(DataType::Char(2), &[Some("a"), Some("b ")]),
            &mut p,
            &mut b,
        );
        assert_eq!((p, b), (vec![0], vec![0]));
        assert!(KeyTable::applies(
            &[DataType::Varchar(None)],
            &[DataType::Text]
        ));
        assert!(!KeyTable::applies(&[DataType::Char(2)], &[DataType::Text]));
    }
}
