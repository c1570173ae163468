//! A hash set of distinct strings kept in one arena: the key table of text
//! GROUP BY and of hash joins on a text key.
//!
//! [`StrSet`] numbers the distinct strings it is given, `0, 1, 2, ...` in
//! the order first seen. The strings themselves live back to back in one
//! [`StrVec`] (the arena), and the hash table holds only their numbers, so
//! looking up a key that is already there — the common case, a repeated
//! group key or join key — hashes its bytes and compares them with the
//! arena's copy: no allocation, no `Value`. A new key appends its bytes to
//! the arena (amortized growth, not an allocation per key).
//!
//! `char(n)` keys compare and hash without their trailing spaces (SQL's
//! `bpchar` equality); the arena keeps the first-seen spelling, which is
//! what a GROUP BY prints.
//!
//! Invariants: ids are dense (`0..len`); `hashes[id]` is the hash of key
//! `id` under [`StrSet::hash`], so the table can grow without rehashing the
//! bytes.

use std::hash::BuildHasher;

use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, HashTable};

use super::strvec::StrVec;
use crate::types::text::bpchar_trim;

/// Distinct strings numbered in first-seen order (see the module doc).
#[derive(Clone, Default)]
pub struct StrSet {
    /// Key `id` is `keys.get(id)`.
    keys: StrVec,
    /// The hash of each key.
    hashes: Vec<u64>,
    /// Key ids, by hash.
    table: HashTable<u32>,
    /// The hash function.
    hasher: DefaultHashBuilder,
    /// `char(n)` semantics: trailing spaces are not part of the key.
    trim: bool,
}

/// The part of `s` that is the key (`trim`: without trailing spaces).
#[inline]
fn norm(s: &str, trim: bool) -> &str {
    if trim {
        bpchar_trim(s)
    } else {
        s
    }
}

impl std::fmt::Debug for StrSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StrSet")
            .field("keys", &self.keys)
            .field("trim", &self.trim)
            .finish()
    }
}

impl StrSet {
    /// An empty set; `trim` for `char(n)` keys.
    pub fn new(trim: bool) -> StrSet {
        StrSet {
            trim,
            ..StrSet::default()
        }
    }

    /// The part of `s` that is the key.
    #[inline]
    fn norm<'s>(&self, s: &'s str) -> &'s str {
        norm(s, self.trim)
    }

    /// The hash of key `s`.
    #[inline]
    fn hash(&self, s: &str) -> u64 {
        self.hasher.hash_one(self.norm(s).as_bytes())
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True when no key was inserted.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Key `id` as first inserted.
    #[inline]
    pub fn get(&self, id: u32) -> &str {
        self.keys.get(id as usize)
    }

    /// Approximate bytes the set holds (for the memory limit of a hash
    /// table).
    pub fn mem_bytes(&self) -> usize {
        self.keys.byte_len()
            + self.keys.capacity() * 4
            + self.hashes.capacity() * 8
            + self.table.capacity() * 5
    }

    /// The id of key `s`, if present.
    #[inline]
    pub fn find(&self, s: &str) -> Option<u32> {
        let h = self.hash(s);
        let k = self.norm(s);
        self.table
            .find(h, |&id| self.norm(self.keys.get(id as usize)) == k)
            .copied()
    }

    /// The id of key `s`, inserted when new; the flag says it was new.
    #[inline]
    pub fn insert(&mut self, s: &str) -> (u32, bool) {
        let h = self.hash(s);
        let trim = self.trim;
        let (keys, hashes) = (&mut self.keys, &mut self.hashes);
        let k = norm(s, trim);
        match self.table.entry(
            h,
            |&id| norm(keys.get(id as usize), trim) == k,
            |&id| hashes[id as usize],
        ) {
            Entry::Occupied(o) => (*o.get(), false),
            Entry::Vacant(v) => {
                let id = u32::try_from(hashes.len()).expect("fewer than 2^32 distinct keys");
                keys.push(s);
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

    #[test]
    fn numbers_distinct_keys_in_first_seen_order() {
        let mut s = StrSet::new(false);
        assert_eq!(s.insert("b"), (0, true));
        assert_eq!(s.insert("a"), (1, true));
        assert_eq!(s.insert("b"), (0, false));
        assert_eq!(s.insert(""), (2, true));
        assert_eq!(s.find("a"), Some(1));
        assert_eq!(s.find("a "), None);
        assert_eq!(s.find("c"), None);
        assert_eq!(s.get(2), "");
        for i in 0..10_000 {
            s.insert(&format!("k{i}"));
        }
        assert_eq!(s.len(), 10_003);
        assert_eq!(s.find("k9999"), Some(10_002));
        assert_eq!(s.get(0), "b");
    }

    #[test]
    fn char_keys_ignore_trailing_spaces_and_keep_the_first_spelling() {
        let mut s = StrSet::new(true);
        assert_eq!(s.insert("ab  "), (0, true));
        assert_eq!(s.insert("ab"), (0, false));
        assert_eq!(s.find("ab "), Some(0));
        assert_eq!(s.get(0), "ab  ");
    }
}
