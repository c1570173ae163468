//! Index keys: the column descriptor of a B-tree and the byte encoding of
//! its keys, built so that plain byte comparison (`memcmp`) of two encoded
//! keys orders them as [`crate::types::compare`] orders their values, with
//! each column's ASC/DESC and NULLS FIRST/LAST applied.
//!
//! A key is the concatenation of its columns' encodings, and a leaf key ends
//! with the heap TID (block `u32` and offset `u16`, big-endian), so every
//! leaf key is unique and equal column values are ordered by TID.
//!
//! A column is a marker byte and, when not NULL, the value's bytes:
//! `0x00` NULL sorted first, `0x01` a value, `0x02` NULL sorted last. The
//! value bytes are inverted for a DESC column. Value encodings:
//!
//! - `bool`: one byte; `int2/int4/int8`, `date`, `timestamp`: big-endian
//!   two's complement with the sign bit flipped, at the type's width;
//! - `real` / `double`: IEEE bits, NaN made canonical (above +Infinity),
//!   `-0` made `0`, negatives inverted, positives with the sign bit flipped;
//! - `numeric`: a class byte (`-Inf`, negative, zero, positive, `+Inf`,
//!   `NaN`), then for a non-zero finite value the decimal exponent `i32`
//!   and the significant digits one per byte (`1..=10`) ended by `0`, all
//!   inverted for a negative value;
//! - `text`, `varchar`, `char(n)` (trailing blanks ignored, as `bpchar`
//!   compares): the bytes with `0x00` escaped as `00 FF`, ended by `00 01`
//!   (the `C` collation);
//! - `interval`: PostgreSQL's comparison value (months as 30 days) as a
//!   signed 128-bit integer;
//! - `time`: as `int8`; `timetz`: its UTC moment as `int8`, then its
//!   offset westward as `int4` (`timetz_cmp`'s order).
//!
//! Every column encoding is self-delimiting and none is a prefix of another,
//! so a key made of the first `k` columns (a search key, or a pivot key cut
//! by suffix truncation) sorts before every longer key that starts with it:
//! a truncated pivot's missing columns act as "minus infinity".
//!
//! Decoding ([`decode_key`]) is for inspection: it gives back equal values,
//! but `numeric` loses its display scale, `interval` its month/day split,
//! `char(n)` its padding and floats the sign of zero.

use crate::err;
use crate::error::Result;
use crate::types::compare::interval_key;
use crate::types::text::bpchar_trim;
use crate::types::{DataType, Interval, Numeric, Value};
use std::cmp::Ordering;

/// A heap tuple id: block number and line pointer offset.
pub type Tid = (u32, u16);

/// Bytes of the heap TID at the end of every leaf key.
pub const TID_LEN: usize = 6;

const NULL_FIRST: u8 = 0x00;
const NOT_NULL: u8 = 0x01;
const NULL_LAST: u8 = 0x02;
const USECS_PER_DAY: i128 = 86_400_000_000;

/// One key column of an index.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyColumn {
    /// The column's type.
    pub ty: DataType,
    /// Descending order.
    pub desc: bool,
    /// NULLs before values (PostgreSQL's default for DESC).
    pub nulls_first: bool,
}

impl KeyColumn {
    /// An ascending column, NULLS LAST (the default).
    pub fn asc(ty: DataType) -> KeyColumn {
        KeyColumn {
            ty,
            desc: false,
            nulls_first: false,
        }
    }
    /// A descending column, NULLS FIRST (PostgreSQL's default for DESC).
    pub fn desc(ty: DataType) -> KeyColumn {
        KeyColumn {
            ty,
            desc: true,
            nulls_first: true,
        }
    }
}

/// The key columns of an index, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDesc {
    /// The columns.
    pub columns: Vec<KeyColumn>,
}

impl IndexDesc {
    /// A descriptor of the given columns.
    pub fn new(columns: Vec<KeyColumn>) -> IndexDesc {
        IndexDesc { columns }
    }
}

fn out_of_range(ty: &DataType) -> crate::error::Error {
    err!(
        NumericValueOutOfRange,
        "value out of range for index column of type {ty:?}"
    )
}

fn mismatch(ty: &DataType, v: &Value) -> crate::error::Error {
    err!(
        DatatypeMismatch,
        "index key of type {ty:?} cannot hold value {v:?}"
    )
}

fn put_int(out: &mut Vec<u8>, v: i64, width: usize) {
    let flipped = (v as u64) ^ (1u64 << (width * 8 - 1));
    out.extend_from_slice(&flipped.to_be_bytes()[8 - width..]);
}

fn f64_bits(v: f64) -> u64 {
    let v = if v == 0.0 { 0.0 } else { v };
    let b = if v.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        v.to_bits()
    };
    if b >> 63 == 1 {
        !b
    } else {
        b ^ (1 << 63)
    }
}

fn f32_bits(v: f32) -> u32 {
    let v = if v == 0.0 { 0.0 } else { v };
    let b = if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() };
    if b >> 31 == 1 {
        !b
    } else {
        b ^ (1 << 31)
    }
}

fn put_text(out: &mut Vec<u8>, s: &str) {
    put_bytes(out, s.as_bytes());
}

/// Bytes in an order-preserving form: a 0 byte escaped as `0 0xff`, the
/// end marked `0 1` (so a prefix sorts first).
fn put_bytes(out: &mut Vec<u8>, s: &[u8]) {
    for &b in s {
        if b == 0 {
            out.extend_from_slice(&[0, 0xff]);
        } else {
            out.push(b);
        }
    }
    out.extend_from_slice(&[0, 1]);
}

fn put_numeric(out: &mut Vec<u8>, n: &Numeric) {
    use crate::types::numeric::NumKind;
    let class = match n.kind() {
        NumKind::NegInf => 1,
        NumKind::NaN => 6,
        NumKind::PosInf => 5,
        NumKind::Finite if n.is_zero() => 3,
        NumKind::Finite if n.is_negative() => 2,
        NumKind::Finite => 4,
    };
    out.push(class);
    if class != 2 && class != 4 {
        return;
    }
    let digits = crate::types::numeric::mag::to_decimal(&n.mag);
    let exp = digits.len() as i64 - n.scale() as i64;
    let start = out.len();
    put_int(out, exp, 4);
    for d in digits.trim_end_matches('0').bytes() {
        out.push(d - b'0' + 1);
    }
    out.push(0);
    if class == 2 {
        out[start..].iter_mut().for_each(|b| *b = !*b);
    }
}

fn encode_value(out: &mut Vec<u8>, ty: &DataType, v: &Value) -> Result<()> {
    let int = |w: usize, lo: i64, hi: i64, out: &mut Vec<u8>| -> Result<()> {
        let x = v.as_i64().ok_or_else(|| mismatch(ty, v))?;
        if x < lo || x > hi {
            return Err(out_of_range(ty));
        }
        put_int(out, x, w);
        Ok(())
    };
    match (ty, v) {
        (DataType::Bool, Value::Bool(b)) => out.push(*b as u8),
        (DataType::Int2, _) => int(2, i16::MIN as i64, i16::MAX as i64, out)?,
        (DataType::Int4, _) => int(4, i32::MIN as i64, i32::MAX as i64, out)?,
        (DataType::Int8, _) => int(8, i64::MIN, i64::MAX, out)?,
        (DataType::Float4, Value::Float4(f)) => out.extend_from_slice(&f32_bits(*f).to_be_bytes()),
        (DataType::Float8, Value::Float8(f)) => out.extend_from_slice(&f64_bits(*f).to_be_bytes()),
        (DataType::Float8, Value::Float4(f)) => {
            out.extend_from_slice(&f64_bits(*f as f64).to_be_bytes())
        }
        (DataType::Numeric(_), Value::Numeric(n)) => put_numeric(out, &n.normalized()),
        (DataType::Numeric(_), _) if v.as_i64().is_some() => {
            put_numeric(out, &Numeric::from_i64(v.as_i64().unwrap_or(0)))
        }
        (DataType::Char(_), Value::Text(s)) => put_text(out, bpchar_trim(s)),
        (
            DataType::Text | DataType::Name | DataType::Varchar(_) | DataType::Unknown,
            Value::Text(s),
        ) => put_text(out, s),
        (DataType::Date, Value::Date(d)) => put_int(out, *d as i64, 4),
        (DataType::Timestamp(_), Value::Timestamp(t)) => put_int(out, *t, 8),
        (DataType::TimestampTz(_), Value::TimestampTz(t)) => put_int(out, *t, 8),
        (DataType::Interval, Value::Interval(iv)) => {
            let k = (interval_key(iv) as u128) ^ (1u128 << 127);
            out.extend_from_slice(&k.to_be_bytes());
        }
        (DataType::Bytea, Value::Bytea(b)) => put_bytes(out, b),
        (DataType::Time(_), Value::Time(t)) => put_int(out, *t, 8),
        (DataType::TimeTz(_), Value::TimeTz(t, east)) => {
            // The UTC moment, then the offset westward, as `timetz_cmp`.
            put_int(out, t - i64::from(*east) * 1_000_000, 8);
            put_int(out, -i64::from(*east), 4);
        }
        _ => return Err(mismatch(ty, v)),
    }
    Ok(())
}

/// Appends the encoding of `values` as the first `values.len()` columns of
/// `desc` (a search key when fewer than all columns).
pub fn encode_key(desc: &IndexDesc, values: &[Value], out: &mut Vec<u8>) -> Result<()> {
    if values.len() > desc.columns.len() {
        return Err(err!(
            InvalidParameterValue,
            "index has {} key columns, {} values given",
            desc.columns.len(),
            values.len()
        ));
    }
    for (col, v) in desc.columns.iter().zip(values) {
        if v.is_null() {
            out.push(if col.nulls_first {
                NULL_FIRST
            } else {
                NULL_LAST
            });
            continue;
        }
        out.push(NOT_NULL);
        let start = out.len();
        encode_value(out, &col.ty, v)?;
        if col.desc {
            out[start..].iter_mut().for_each(|b| *b = !*b);
        }
    }
    Ok(())
}

/// The full leaf key of `values` (one per column) and heap tuple `tid`.
pub fn leaf_key(desc: &IndexDesc, values: &[Value], tid: Tid) -> Result<Vec<u8>> {
    if values.len() != desc.columns.len() {
        return Err(err!(
            InvalidParameterValue,
            "index has {} key columns, {} values given",
            desc.columns.len(),
            values.len()
        ));
    }
    let mut out = Vec::with_capacity(16);
    encode_key(desc, values, &mut out)?;
    put_tid(&mut out, tid);
    Ok(out)
}

/// Appends a heap TID in key order.
pub fn put_tid(out: &mut Vec<u8>, tid: Tid) {
    out.extend_from_slice(&tid.0.to_be_bytes());
    out.extend_from_slice(&tid.1.to_be_bytes());
}

/// Appends the encoding of key column `col` for one stored datum given as
/// its tuple bytes (`None`: NULL), without decoding it into a [`Value`],
/// when the column's type stores a little-endian integer (`int2`, `int4`,
/// `int8`, `date`, `timestamp`): the bytes [`encode_key`] gives the
/// decoded value. Returns false, appending nothing, for any other type or
/// a datum of the wrong width. (A bulk build's fast path.)
#[inline]
pub fn encode_raw_int(col: &KeyColumn, raw: Option<&[u8]>, out: &mut Vec<u8>) -> bool {
    let width = match col.ty {
        DataType::Int2 => 2,
        DataType::Int4 | DataType::Date => 4,
        DataType::Int8 | DataType::Timestamp(_) => 8,
        _ => return false,
    };
    let Some(b) = raw else {
        out.push(if col.nulls_first {
            NULL_FIRST
        } else {
            NULL_LAST
        });
        return true;
    };
    // The value's bits with the sign flipped, inverted for DESC, placed in
    // the top `width` bytes of a u64 whose big-endian bytes are appended.
    let invert = if col.desc { u64::MAX } else { 0 };
    let v = match (width, b) {
        (2, &[x0, x1]) => u64::from(u16::from_le_bytes([x0, x1])) << 48,
        (4, &[x0, x1, x2, x3]) => u64::from(u32::from_le_bytes([x0, x1, x2, x3])) << 32,
        (8, b) => match <[u8; 8]>::try_from(b) {
            Ok(a) => u64::from_le_bytes(a),
            Err(_) => return false,
        },
        _ => return false,
    };
    let be = ((v ^ (1 << 63)) ^ invert).to_be_bytes();
    out.reserve(1 + width);
    out.push(NOT_NULL);
    out.extend_from_slice(&be[..width]);
    true
}

/// The heap TID at the end of a full leaf key.
pub fn tid_of(key: &[u8]) -> Tid {
    let n = key.len().saturating_sub(TID_LEN);
    let t = &key[n..];
    if t.len() < TID_LEN {
        return (0, 0);
    }
    (
        u32::from_be_bytes([t[0], t[1], t[2], t[3]]),
        u16::from_be_bytes([t[4], t[5]]),
    )
}

/// Compares an item's key with a search key: `Equal` when `key` is a prefix
/// of `item` (the item matches every column the search key gives), else the
/// byte order.
#[inline]
pub fn prefix_cmp(item: &[u8], key: &[u8]) -> Ordering {
    if item.len() >= key.len() && &item[..key.len()] == key {
        Ordering::Equal
    } else {
        item.cmp(key)
    }
}

/// Reads bytes of one encoded column starting at `at`, un-inverting DESC
/// columns on the fly.
struct ColReader<'a> {
    b: &'a [u8],
    at: usize,
    inv: bool,
}

impl ColReader<'_> {
    fn byte(&mut self) -> Result<u8> {
        let v = *self
            .b
            .get(self.at)
            .ok_or_else(|| err!(DataCorrupted, "index key is truncated"))?;
        self.at += 1;
        Ok(if self.inv { !v } else { v })
    }
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        for x in a.iter_mut() {
            *x = self.byte()?;
        }
        Ok(a)
    }
}

fn unflip(v: u64, width: usize) -> i64 {
    let x = v ^ (1u64 << (width * 8 - 1));
    let shift = 64 - width * 8;
    ((x << shift) as i64) >> shift
}

fn read_numeric(r: &mut ColReader) -> Result<Numeric> {
    let class = r.byte()?;
    let neg = match class {
        1 => return Ok(Numeric::infinity(true)),
        3 => return Ok(Numeric::zero()),
        5 => return Ok(Numeric::infinity(false)),
        6 => return Ok(Numeric::nan()),
        2 => true,
        4 => false,
        _ => {
            return Err(err!(
                DataCorrupted,
                "bad numeric class {class} in index key"
            ))
        }
    };
    let fix = |b: u8| if neg { !b } else { b };
    let e = r.bytes::<4>()?.map(fix);
    let exp = unflip(u32::from_be_bytes(e) as u64, 4);
    let mut text = String::from(if neg { "-0." } else { "0." });
    loop {
        let d = fix(r.byte()?);
        if d == 0 {
            break;
        }
        text.push((b'0' + d - 1) as char);
    }
    text.push_str(&format!("e{exp}"));
    Numeric::parse(&text)
}

fn read_text(r: &mut ColReader) -> Result<String> {
    String::from_utf8(read_bytes(r)?)
        .map_err(|_| err!(DataCorrupted, "index key text is not UTF-8"))
}

/// Reads what [`put_bytes`] wrote.
fn read_bytes(r: &mut ColReader) -> Result<Vec<u8>> {
    let mut s = Vec::new();
    loop {
        let b = r.byte()?;
        if b != 0 {
            s.push(b);
            continue;
        }
        match r.byte()? {
            0xff => s.push(0),
            1 => break,
            x => return Err(err!(DataCorrupted, "bad text escape {x} in index key")),
        }
    }
    Ok(s)
}

fn read_value(r: &mut ColReader, ty: &DataType) -> Result<Value> {
    Ok(match ty {
        DataType::Bool => Value::Bool(r.byte()? != 0),
        DataType::Int2 => Value::Int2(unflip(u16::from_be_bytes(r.bytes()?) as u64, 2) as i16),
        DataType::Int4 => Value::Int4(unflip(u32::from_be_bytes(r.bytes()?) as u64, 4) as i32),
        DataType::Int8 => Value::Int8(unflip(u64::from_be_bytes(r.bytes()?), 8)),
        DataType::Date => Value::Date(unflip(u32::from_be_bytes(r.bytes()?) as u64, 4) as i32),
        DataType::Timestamp(_) => Value::Timestamp(unflip(u64::from_be_bytes(r.bytes()?), 8)),
        DataType::TimestampTz(_) => Value::TimestampTz(unflip(u64::from_be_bytes(r.bytes()?), 8)),
        DataType::Time(_) => Value::Time(unflip(u64::from_be_bytes(r.bytes()?), 8)),
        DataType::TimeTz(_) => {
            let utc = unflip(u64::from_be_bytes(r.bytes()?), 8);
            let east = -(unflip(u32::from_be_bytes(r.bytes()?) as u64, 4) as i32);
            Value::TimeTz(utc + i64::from(east) * 1_000_000, east)
        }
        DataType::Float4 => {
            let b = u32::from_be_bytes(r.bytes()?);
            let b = if b >> 31 == 1 { b ^ (1 << 31) } else { !b };
            Value::Float4(f32::from_bits(b))
        }
        DataType::Float8 => {
            let b = u64::from_be_bytes(r.bytes()?);
            let b = if b >> 63 == 1 { b ^ (1 << 63) } else { !b };
            Value::Float8(f64::from_bits(b))
        }
        DataType::Numeric(_) => Value::numeric(read_numeric(r)?),
        DataType::Text
        | DataType::Name
        | DataType::Varchar(_)
        | DataType::Char(_)
        | DataType::Unknown => Value::text(&read_text(r)?),
        DataType::Bytea => Value::Bytea(read_bytes(r)?.into()),
        DataType::Json | DataType::Jsonb | DataType::Point => {
            return Err(err!(DataCorrupted, "index key of type {ty}"))
        }
        DataType::Interval => {
            let k = (u128::from_be_bytes(r.bytes()?) ^ (1u128 << 127)) as i128;
            Value::Interval(Interval {
                months: 0,
                days: k.div_euclid(USECS_PER_DAY) as i32,
                micros: k.rem_euclid(USECS_PER_DAY) as i64,
            })
        }
        DataType::Array(_) => return Err(err!(FeatureNotSupported, "arrays cannot be index keys")),
    })
}

/// Reads the columns present in `key` (all of them, or the first few of a
/// truncated pivot). Returns each column's value and end offset.
fn read_columns(desc: &IndexDesc, key: &[u8]) -> Result<Vec<(Value, usize)>> {
    let mut out = Vec::with_capacity(desc.columns.len());
    let mut at = 0;
    for col in &desc.columns {
        if at >= key.len() {
            break;
        }
        let marker = key[at];
        at += 1;
        if marker != NOT_NULL {
            if marker != NULL_FIRST && marker != NULL_LAST {
                return Err(err!(
                    DataCorrupted,
                    "bad column marker {marker} in index key"
                ));
            }
            out.push((Value::Null, at));
            continue;
        }
        let mut r = ColReader {
            b: key,
            at,
            inv: col.desc,
        };
        let v = read_value(&mut r, &col.ty)?;
        at = r.at;
        out.push((v, at));
    }
    Ok(out)
}

/// The end offset of each column present in `key`.
pub fn column_ends(desc: &IndexDesc, key: &[u8]) -> Result<Vec<usize>> {
    Ok(read_columns(desc, key)?.into_iter().map(|c| c.1).collect())
}

/// Decodes a key: the values of the columns present, and the heap TID when
/// the key has one (a leaf key, or a pivot that kept it).
pub fn decode_key(desc: &IndexDesc, key: &[u8]) -> Result<(Vec<Value>, Option<Tid>)> {
    let cols = read_columns(desc, key)?;
    let end = cols.last().map_or(0, |c| c.1);
    let tid = match key.len() - end {
        0 => None,
        TID_LEN => Some(tid_of(key)),
        n => return Err(err!(DataCorrupted, "index key has {n} trailing bytes")),
    };
    Ok((cols.into_iter().map(|c| c.0).collect(), tid))
}

/// Suffix truncation: the shortest pivot key that separates `lastleft`
/// from `firstright` (two full leaf keys, `lastleft < firstright`): the
/// columns of `firstright` up to the first one that differs, or all of
/// `firstright` (TID included) when every column is equal. The result `p`
/// satisfies `lastleft < p <= firstright`.
pub fn truncate_pivot(desc: &IndexDesc, lastleft: &[u8], firstright: &[u8]) -> Result<Vec<u8>> {
    for end in column_ends(desc, firstright)? {
        if lastleft.get(..end) != Some(&firstright[..end]) {
            return Ok(firstright[..end].to_vec());
        }
    }
    Ok(firstright.to_vec())
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
