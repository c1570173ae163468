//! String vectors: the physical form of `text`, `varchar(n)` and `char(n)`
//! columns in a batch.
//!
//! A [`StrVec`] keeps every value of a column in one byte buffer, back to
//! back, plus the end offset of each value (Arrow's layout, with `u32`
//! offsets): value `i` is `buf[end(i-1)..end(i)]`. Filling it from a heap
//! page copies the bytes of each datum into the buffer — no allocation per
//! value, unlike a `Value::Text(Arc<str>)` per row — and a vector that is
//! cleared keeps both allocations for the next batch.
//!
//! Invariants:
//! - the buffer is a `String`, so it is valid UTF-8 and every value is a
//!   whole number of characters (values are only ever pushed as `&str`;
//!   bytes from a page that are not UTF-8 are replaced, as
//!   [`crate::types::Value::decode`] does);
//! - `ends` is non-decreasing and its last element is the buffer's length;
//! - a NULL row (tracked by the enclosing vector's null mask) holds the
//!   empty string.
//! - the whole buffer stays under 4 GB (the offsets are `u32`).

use std::borrow::Cow;

/// A column of strings in one buffer (see the module doc).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StrVec {
    /// Every value's bytes, back to back.
    buf: String,
    /// `ends[i]` is the offset just past value `i` in `buf`.
    ends: Vec<u32>,
}

/// `n` as a buffer offset. A string vector (a batch, or a hash join's build
/// side) past 4 GB is beyond what the executor keeps in memory anywhere.
#[inline]
fn offset(n: usize) -> u32 {
    u32::try_from(n).expect("a string vector holds less than 4 GB")
}

impl StrVec {
    /// An empty vector with room for `rows` values of `bytes` bytes in all.
    pub fn with_capacity(rows: usize, bytes: usize) -> StrVec {
        StrVec {
            buf: String::with_capacity(bytes),
            ends: Vec::with_capacity(rows),
        }
    }

    /// Number of values.
    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// How many values fit before the offsets regrow.
    pub fn capacity(&self) -> usize {
        self.ends.capacity()
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Total bytes of all values.
    pub fn byte_len(&self) -> usize {
        self.buf.len()
    }

    /// Value `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.buf[start..self.ends[i] as usize]
    }

    /// The values in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        let mut start = 0usize;
        self.ends.iter().map(move |&e| {
            let s = &self.buf[start..e as usize];
            start = e as usize;
            s
        })
    }

    /// Appends `s`.
    #[inline]
    pub fn push(&mut self, s: &str) {
        self.buf.push_str(s);
        self.ends.push(offset(self.buf.len()));
    }

    /// Appends stored bytes: UTF-8 as is, anything else with replacement
    /// characters (as [`crate::types::Value::decode`] reads them).
    #[inline]
    pub fn push_bytes(&mut self, b: &[u8]) {
        match String::from_utf8_lossy(b) {
            Cow::Borrowed(s) => self.push(s),
            Cow::Owned(s) => self.push(&s),
        }
    }

    /// Appends the empty string (the slot of a NULL row).
    #[inline]
    pub fn push_empty(&mut self) {
        self.ends.push(offset(self.buf.len()));
    }

    /// Appends a value written piecewise by `write` into the buffer (a
    /// function's result built in place, without a `String` of its own).
    #[inline]
    pub fn push_with(&mut self, write: impl FnOnce(&mut String)) {
        write(&mut self.buf);
        self.ends.push(offset(self.buf.len()));
    }

    /// The buffer and the end offsets (for writing the vector out as it is
    /// laid out, e.g. a sort's spilled run).
    pub fn raw_parts(&self) -> (&str, &[u32]) {
        (&self.buf, &self.ends)
    }

    /// A vector from a buffer and end offsets as [`StrVec::raw_parts`] gave
    /// them; `None` unless they keep the invariants (offsets
    /// non-decreasing, on character boundaries, the last one the buffer's
    /// length).
    pub fn from_raw_parts(buf: String, ends: Vec<u32>) -> Option<StrVec> {
        let mut prev = 0u32;
        for &e in &ends {
            if e < prev || !buf.is_char_boundary(e as usize) {
                return None;
            }
            prev = e;
        }
        if prev as usize != buf.len() {
            return None;
        }
        Some(StrVec { buf, ends })
    }

    /// Removes every value, keeping both allocations.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.ends.clear();
    }

    /// Appends every value of `other`.
    pub fn extend(&mut self, other: &StrVec) {
        let base = offset(self.buf.len());
        self.buf.push_str(&other.buf);
        self.ends.extend(other.ends.iter().map(|&e| base + e));
    }

    /// The values at `indices`, in that order.
    pub fn take(&self, indices: &[u32]) -> StrVec {
        // Sized exactly first: one allocation each, not a regrowing buffer.
        let bytes = indices.iter().map(|&i| self.get(i as usize).len()).sum();
        let mut out = StrVec::with_capacity(indices.len(), bytes);
        for &i in indices {
            out.push(self.get(i as usize));
        }
        out
    }

    /// The values where `keep` is true, in order.
    pub fn filter(&self, keep: &[bool]) -> StrVec {
        let (mut rows, mut bytes) = (0, 0);
        for (s, &k) in self.iter().zip(keep) {
            if k {
                rows += 1;
                bytes += s.len();
            }
        }
        let mut out = StrVec::with_capacity(rows, bytes);
        for (s, &k) in self.iter().zip(keep) {
            if k {
                out.push(s);
            }
        }
        out
    }

    /// Values `start..end`.
    pub fn slice(&self, start: usize, end: usize) -> StrVec {
        let from = if start == 0 {
            0
        } else {
            self.ends[start - 1] as usize
        };
        let to = if end == 0 {
            0
        } else {
            self.ends[end - 1] as usize
        };
        StrVec {
            buf: self.buf[from..to].to_string(),
            ends: self.ends[start..end]
                .iter()
                .map(|&e| e - offset(from))
                .collect(),
        }
    }
}

impl<'s> FromIterator<&'s str> for StrVec {
    fn from_iter<I: IntoIterator<Item = &'s str>>(iter: I) -> StrVec {
        let mut v = StrVec::default();
        for s in iter {
            v.push(s);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_get_take_filter_slice_extend() {
        let mut v: StrVec = ["ab", "", "héllo", "z"].into_iter().collect();
        assert_eq!(v.len(), 4);
        assert_eq!(v.get(0), "ab");
        assert_eq!(v.get(1), "");
        assert_eq!(v.get(2), "héllo");
        assert_eq!(v.iter().collect::<Vec<_>>(), ["ab", "", "héllo", "z"]);
        assert_eq!(
            v.take(&[3, 2, 3]).iter().collect::<Vec<_>>(),
            ["z", "héllo", "z"]
        );
        assert_eq!(
            v.filter(&[true, false, true, false])
                .iter()
                .collect::<Vec<_>>(),
            ["ab", "héllo"]
        );
        let s = v.slice(1, 3);
        assert_eq!(s.iter().collect::<Vec<_>>(), ["", "héllo"]);
        assert!(v.slice(2, 2).is_empty());
        let mut w: StrVec = ["q"].into_iter().collect();
        w.extend(&s);
        assert_eq!(w.iter().collect::<Vec<_>>(), ["q", "", "héllo"]);
        v.push_with(|b| b.push_str("built"));
        assert_eq!(v.get(4), "built");
        let (buf, ends) = v.raw_parts();
        let back = StrVec::from_raw_parts(buf.to_owned(), ends.to_vec()).unwrap();
        assert_eq!(back, v);
        assert!(
            StrVec::from_raw_parts("é".into(), vec![1]).is_none(),
            "inside a character"
        );
        assert!(StrVec::from_raw_parts("ab".into(), vec![2, 1]).is_none());
        assert!(StrVec::from_raw_parts("ab".into(), vec![1]).is_none());
        v.push_bytes(b"ok\xff");
        assert_eq!(v.get(5), "ok\u{fffd}");
        let cap = v.buf.capacity();
        v.clear();
        assert!(v.is_empty());
        assert_eq!(v.buf.capacity(), cap, "clear keeps the buffer");
    }
}
