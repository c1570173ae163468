//! Forming a tuple attribute by attribute, for a loader that produces each
//! value in its stored form as it goes (the single-row INSERT bound from
//! its text).
//!
//! [`super::tuple::form_tuple`] takes every value first (slices into some
//! buffer) and lays them out in two passes. [`TupleBuilder`] instead
//! appends each attribute at its place in the data area as it comes: the
//! data area starts at `hoff`, which is a multiple of 8 with or without a
//! null bitmap, so an attribute's alignment relative to the data area is
//! its alignment in the tuple, and the header (whose size depends on
//! whether some attribute was null) is written last, in front of it. The
//! result is byte for byte what `form_tuple` makes of the same values (a
//! test checks it), pad bytes zero included.

use super::tuple::{
    align_to, header_len, set_infomask, set_infomask2, Attr, TupleDesc, HEADER_SIZE, HEAP_HASNULL,
    HEAP_HASVARWIDTH, HEAP_XMAX_INVALID, T_HOFF,
};
use crate::err;
use crate::error::{Error, Result};

/// A tuple being formed; reuse it from one tuple to the next (its buffers
/// keep their capacity).
#[derive(Debug, Default)]
pub struct TupleBuilder {
    /// The data area (attributes from `hoff` on).
    data: Vec<u8>,
    /// The null bitmap (bit set: not null), one bit per attribute so far.
    bitmap: Vec<u8>,
    /// Attributes pushed so far.
    natts: usize,
    /// Some attribute is null.
    has_null: bool,
    /// Some non-null attribute is a varlena.
    has_var: bool,
}

impl TupleBuilder {
    /// Starts a new tuple.
    pub fn clear(&mut self) {
        self.data.clear();
        self.bitmap.clear();
        self.natts = 0;
        self.has_null = false;
        self.has_var = false;
    }

    /// Attributes pushed so far.
    pub fn len(&self) -> usize {
        self.natts
    }

    /// Whether no attribute was pushed yet.
    pub fn is_empty(&self) -> bool {
        self.natts == 0
    }

    fn next_bit(&mut self, present: bool) {
        if self.natts % 8 == 0 {
            self.bitmap.push(0);
        }
        if present {
            *self.bitmap.last_mut().expect("pushed above") |= 1 << (self.natts % 8);
        }
        self.natts += 1;
    }

    /// The next attribute is NULL.
    pub fn push_null(&mut self) {
        self.has_null = true;
        self.next_bit(false);
    }

    /// The next attribute, of storage `a`, is `v` (fixed-width: exactly its
    /// length in little-endian bytes; varlena: the payload without header).
    pub fn push(&mut self, a: Attr, v: &[u8]) -> Result<()> {
        if a.len >= 0 {
            if v.len() != a.len as usize {
                return Err(Error::internal(format!(
                    "value of attribute {} has {} bytes, expected {}",
                    self.natts + 1,
                    v.len(),
                    a.len
                )));
            }
            self.pad_to(a.align);
        } else {
            if v.len() > (1 << 29) {
                return Err(err!(
                    ProgramLimitExceeded,
                    "invalid memory alloc request size {}",
                    v.len()
                ));
            }
            self.has_var = true;
            if v.len() < 127 {
                // The short header, unaligned.
                self.data.push((((v.len() + 1) << 1) | 1) as u8);
            } else {
                self.pad_to(a.align);
                self.data
                    .extend_from_slice(&(((v.len() + 4) << 2) as u32).to_le_bytes());
            }
        }
        self.data.extend_from_slice(v);
        self.next_bit(true);
        Ok(())
    }

    /// The next attribute, of fixed storage `a` (`N` bytes), is `v`: as
    /// [`TupleBuilder::push`] without a slice to check.
    #[inline]
    pub fn push_fixed<const N: usize>(&mut self, a: Attr, v: [u8; N]) -> Result<()> {
        if a.len != N as i16 {
            return self.push(a, &v);
        }
        self.pad_to(a.align);
        self.data.extend_from_slice(&v);
        self.next_bit(true);
        Ok(())
    }

    /// Zero bytes up to alignment `align` of the data area (at most 7:
    /// pushed one by one rather than through `memset`).
    #[inline]
    fn pad_to(&mut self, align: u8) {
        let to = align_to(self.data.len(), align);
        while self.data.len() < to {
            self.data.push(0);
        }
    }

    /// Writes the tuple into `out` (cleared first), for `desc`, which must
    /// have as many attributes as were pushed (their storage as given to
    /// [`TupleBuilder::push`]). The header is `form_tuple`'s: zero xmin,
    /// xmax, cid and ctid; `HASNULL`/`HASVARWIDTH` as needed and
    /// `XMAX_INVALID`.
    pub fn finish(&self, desc: &TupleDesc, out: &mut Vec<u8>) -> Result<()> {
        if self.natts != desc.len() {
            return Err(Error::internal(format!(
                "tuple has {} values for {} attributes",
                self.natts,
                desc.len()
            )));
        }
        let hoff = header_len(self.natts, self.has_null);
        out.clear();
        out.resize(hoff, 0);
        if self.has_null {
            out[HEADER_SIZE..HEADER_SIZE + self.bitmap.len()].copy_from_slice(&self.bitmap);
        }
        let mut mask = HEAP_XMAX_INVALID;
        if self.has_null {
            mask |= HEAP_HASNULL;
        }
        if self.has_var {
            mask |= HEAP_HASVARWIDTH;
        }
        set_infomask(out, mask);
        set_infomask2(out, self.natts as u16);
        out[T_HOFF] = hoff as u8;
        out.extend_from_slice(&self.data);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tuple::form_tuple;
    use super::*;

    /// Every row of a few descriptors, with each attribute null or not and
    /// varlenas short or long, forms the same bytes both ways.
    #[test]
    fn builds_what_form_tuple_builds() {
        let attrs = [
            Attr::fixed(1, 1),
            Attr::fixed(2, 2),
            Attr::fixed(4, 4),
            Attr::fixed(8, 8),
            Attr::fixed(16, 8),
            Attr::varlena(4),
            Attr::varlena(1),
        ];
        let short = b"hello".to_vec();
        let long: Vec<u8> = (0..200).map(|i| i as u8).collect();
        let value = |a: &Attr, k: usize| -> Vec<u8> {
            if a.len >= 0 {
                (0..a.len as usize).map(|i| (i + k) as u8 | 1).collect()
            } else if k % 2 == 0 {
                short.clone()
            } else {
                long.clone()
            }
        };
        let mut b = TupleBuilder::default();
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for n in 1..=9usize {
            let desc_attrs: Vec<Attr> = (0..n).map(|i| attrs[(i * 3 + n) % attrs.len()]).collect();
            let desc = TupleDesc::new(desc_attrs.clone()).unwrap();
            for pattern in 0..(1u32 << n).min(64) {
                for k in 0..2 {
                    let vals: Vec<Option<Vec<u8>>> = desc_attrs
                        .iter()
                        .enumerate()
                        .map(|(i, a)| (pattern & (1 << i) == 0).then(|| value(a, k + i)))
                        .collect();
                    let slices: Vec<Option<&[u8]>> = vals.iter().map(|v| v.as_deref()).collect();
                    form_tuple(&desc, &slices, &mut x).unwrap();
                    b.clear();
                    for (a, v) in desc_attrs.iter().zip(&slices) {
                        match v {
                            Some(v) => b.push(*a, v).unwrap(),
                            None => b.push_null(),
                        }
                    }
                    b.finish(&desc, &mut y).unwrap();
                    assert_eq!(x, y, "{n} attributes, nulls {pattern:b}, k {k}");
                }
            }
        }
        // A wrong width or count is an error, not a corrupt tuple.
        b.clear();
        assert!(b.push(Attr::fixed(4, 4), &[1, 2]).is_err());
        let desc = TupleDesc::new(vec![Attr::fixed(4, 4), Attr::fixed(4, 4)]).unwrap();
        b.clear();
        b.push(Attr::fixed(4, 4), &[1, 2, 3, 4]).unwrap();
        assert!(b.finish(&desc, &mut y).is_err());
    }
}
