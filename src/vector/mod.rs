//! Column vectors and batches: the unit of data the executor moves.
//!
//! Operators exchange [`Batch`]es — up to [`BATCH_SIZE`] rows held column by
//! column — never single rows, so the per-row cost of a plan is a few
//! iterations of tight typed loops rather than a virtual call and an enum
//! match per operator per row.
//!
//! A [`Vector`] is one column: its SQL [`DataType`], its values in the
//! physical representation of that type ([`Data`]), and which rows are NULL.
//! Fixed-width types live in plain typed `Vec`s (`int4` and `date` as `i32`,
//! `int8` and `timestamp` as `i64`, ...) so kernels over them compile to
//! simple loops; text-like types (`text`, `varchar(n)`, `char(n)`) are
//! [`StrVec`]s — one byte buffer per vector, no allocation per value; the
//! rest (numeric, interval) are [`Value`]s.
//!
//! Invariants:
//! - every `Data` vector and the null mask (when present) have the same
//!   length, [`Vector::len`];
//! - the slot of a NULL row holds some default value (zero, `Value::Null`),
//!   which kernels may compute on freely but never expose;
//! - `nulls == None` means no row is NULL (the common case costs nothing).

pub mod keyset;
pub mod simd;
pub mod strset;
pub mod strvec;

use crate::types::{DataType, Value};
pub use strvec::StrVec;

/// How many rows an operator puts in one batch at most (scans emit whole
/// pages, so a scan batch can be a little larger).
pub const BATCH_SIZE: usize = 1024;

/// The physical storage of a vector's values.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// `boolean`.
    Bool(Vec<bool>),
    /// `smallint`.
    I16(Vec<i16>),
    /// `integer`, `date` (days since 2000-01-01).
    I32(Vec<i32>),
    /// `bigint`, `timestamp` (microseconds since 2000-01-01).
    I64(Vec<i64>),
    /// `real`.
    F32(Vec<f32>),
    /// `double precision`.
    F64(Vec<f64>),
    /// `text`, `varchar(n)`, `char(n)` (NULL rows hold the empty string).
    Str(StrVec),
    /// Every other type, as values (NULL rows hold `Value::Null`).
    Any(Vec<Value>),
}

/// One column of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Vector {
    /// The SQL type of every value in the column.
    pub ty: DataType,
    /// The values, in the physical form of `ty`.
    pub data: Data,
    /// `Some(mask)` with `mask[i] == true` when row `i` is NULL; `None` when
    /// no row is.
    pub nulls: Option<Vec<bool>>,
}

macro_rules! each_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            Data::Bool($v) => $body,
            Data::I16($v) => $body,
            Data::I32($v) => $body,
            Data::I64($v) => $body,
            Data::F32($v) => $body,
            Data::F64($v) => $body,
            Data::Str($v) => $body,
            Data::Any($v) => $body,
        }
    };
}

/// Maps the slot vector of every form but [`Data::Str`] (`$str` maps that).
macro_rules! map_data {
    ($data:expr, $v:ident => $body:expr, $s:ident => $str:expr) => {
        match $data {
            Data::Str($s) => Data::Str($str),
            Data::Bool($v) => Data::Bool($body),
            Data::I16($v) => Data::I16($body),
            Data::I32($v) => Data::I32($body),
            Data::I64($v) => Data::I64($body),
            Data::F32($v) => Data::F32($body),
            Data::F64($v) => Data::F64($body),
            Data::Any($v) => Data::Any($body),
        }
    };
}

impl Data {
    /// Empty data of the physical form used for `ty`.
    pub fn with_capacity(ty: &DataType, cap: usize) -> Data {
        match ty {
            DataType::Bool => Data::Bool(Vec::with_capacity(cap)),
            DataType::Int2 => Data::I16(Vec::with_capacity(cap)),
            DataType::Int4 | DataType::Date => Data::I32(Vec::with_capacity(cap)),
            DataType::Int8 | DataType::Timestamp(_) | DataType::TimestampTz(_) => {
                Data::I64(Vec::with_capacity(cap))
            }
            DataType::Float4 => Data::F32(Vec::with_capacity(cap)),
            DataType::Float8 => Data::F64(Vec::with_capacity(cap)),
            t if t.is_string() => Data::Str(StrVec::with_capacity(cap, 16 * cap)),
            _ => Data::Any(Vec::with_capacity(cap)),
        }
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        each_data!(self, v => v.len())
    }

    /// True when there are no slots.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Vector {
    /// An empty vector of type `ty`.
    pub fn new(ty: DataType) -> Vector {
        Vector::with_capacity(ty, 0)
    }

    /// An empty vector of type `ty` with room for `cap` rows.
    pub fn with_capacity(ty: DataType, cap: usize) -> Vector {
        Vector {
            data: Data::with_capacity(&ty, cap),
            ty,
            nulls: None,
        }
    }

    /// A vector from typed data without NULLs.
    pub fn from_data(ty: DataType, data: Data) -> Vector {
        Vector {
            ty,
            data,
            nulls: None,
        }
    }

    /// A vector of `n` copies of `value` (NULL allowed).
    pub fn repeat(ty: DataType, value: &Value, n: usize) -> Vector {
        let mut v = Vector::with_capacity(ty, n);
        for _ in 0..n {
            v.push(value);
        }
        v
    }

    /// A vector holding `values`, which must be of type `ty` or NULL.
    pub fn from_values(ty: DataType, values: &[Value]) -> Vector {
        let mut v = Vector::with_capacity(ty, values.len());
        for value in values {
            v.push(value);
        }
        v
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when the vector has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether row `i` is NULL.
    #[inline]
    pub fn is_null(&self, i: usize) -> bool {
        self.nulls.as_ref().is_some_and(|n| n[i])
    }

    /// True when some row is NULL.
    pub fn has_nulls(&self) -> bool {
        self.nulls.as_ref().is_some_and(|n| n.iter().any(|&b| b))
    }

    /// Row `i` of a string vector, `None` when NULL (or when the vector is
    /// not a string vector): the allocation-free way to read text.
    #[inline]
    pub fn str_at(&self, i: usize) -> Option<&str> {
        match &self.data {
            Data::Str(v) if !self.is_null(i) => Some(v.get(i)),
            _ => None,
        }
    }

    /// Row `i` as a [`Value`]: the slow generic path (a text value is a new
    /// allocation), which no per-row loop of a hot operator uses.
    pub fn get(&self, i: usize) -> Value {
        if self.is_null(i) {
            return Value::Null;
        }
        match &self.data {
            Data::Bool(v) => Value::Bool(v[i]),
            Data::I16(v) => Value::Int2(v[i]),
            Data::I32(v) => match self.ty {
                DataType::Date => Value::Date(v[i]),
                _ => Value::Int4(v[i]),
            },
            Data::I64(v) => match self.ty {
                DataType::Timestamp(_) => Value::Timestamp(v[i]),
                DataType::TimestampTz(_) => Value::TimestampTz(v[i]),
                _ => Value::Int8(v[i]),
            },
            Data::F32(v) => Value::Float4(v[i]),
            Data::F64(v) => Value::Float8(v[i]),
            Data::Str(v) => Value::text(v.get(i)),
            Data::Any(v) => v[i].clone(),
        }
    }

    /// Appends a NULL.
    pub fn push_null(&mut self) {
        let len = self.len();
        let nulls = self.nulls.get_or_insert_with(|| {
            // Sized like the slots, so a vector filled row by row does not
            // regrow its mask step by step after its first NULL.
            let cap = each_data!(&self.data, v => v.capacity()).max(len + 1);
            let mut mask = Vec::with_capacity(cap);
            mask.resize(len, false);
            mask
        });
        nulls.push(true);
        match &mut self.data {
            Data::Bool(v) => v.push(false),
            Data::I16(v) => v.push(0),
            Data::I32(v) => v.push(0),
            Data::I64(v) => v.push(0),
            Data::F32(v) => v.push(0.0),
            Data::F64(v) => v.push(0.0),
            Data::Str(v) => v.push_empty(),
            Data::Any(v) => v.push(Value::Null),
        }
    }

    /// Appends `value`. A value of another physical form than the vector's
    /// is a planner bug; it is stored as NULL in release builds rather than
    /// corrupting the vector, and asserts in debug builds.
    pub fn push(&mut self, value: &Value) {
        match (&mut self.data, value) {
            (_, Value::Null) => return self.push_null(),
            (Data::Bool(v), Value::Bool(b)) => v.push(*b),
            (Data::I16(v), Value::Int2(x)) => v.push(*x),
            (Data::I32(v), Value::Int4(x) | Value::Date(x)) => v.push(*x),
            (Data::I64(v), Value::Int8(x) | Value::Timestamp(x) | Value::TimestampTz(x)) => {
                v.push(*x)
            }
            (Data::F32(v), Value::Float4(x)) => v.push(*x),
            (Data::F64(v), Value::Float8(x)) => v.push(*x),
            (Data::Str(v), Value::Text(x)) => v.push(x),
            (Data::Any(v), x) => v.push(x.clone()),
            (_, other) => {
                debug_assert!(false, "value {other:?} pushed into a {:?} vector", self.ty);
                return self.push_null();
            }
        }
        if let Some(n) = &mut self.nulls {
            n.push(false);
        }
    }

    /// Appends row `i` of `other`, a vector of the same type, copying its
    /// slot in physical form: a text row's bytes go into this vector's
    /// buffer, with no `Value` in between (the allocation-free way to
    /// assemble a result row by row, as CASE and COALESCE do).
    #[inline]
    pub fn push_from(&mut self, other: &Vector, i: usize) {
        if other.is_null(i) {
            return self.push_null();
        }
        match (&mut self.data, &other.data) {
            (Data::Str(a), Data::Str(b)) => a.push(b.get(i)),
            (Data::I32(a), Data::I32(b)) => a.push(b[i]),
            (Data::I64(a), Data::I64(b)) => a.push(b[i]),
            (Data::F64(a), Data::F64(b)) => a.push(b[i]),
            (Data::Bool(a), Data::Bool(b)) => a.push(b[i]),
            (Data::I16(a), Data::I16(b)) => a.push(b[i]),
            (Data::F32(a), Data::F32(b)) => a.push(b[i]),
            (Data::Any(a), Data::Any(b)) => a.push(b[i].clone()),
            _ => return self.push(&other.get(i)),
        }
        if let Some(n) = &mut self.nulls {
            n.push(false);
        }
    }

    /// The order of row `i` of this vector and row `j` of `other` (same
    /// SQL type, neither row NULL) as [`crate::types::compare_typed`]
    /// orders their values, read in physical form: text as bytes (the `C`
    /// collation; `char(n)` without trailing spaces), no `Value` built.
    #[inline]
    pub fn cmp_at(&self, i: usize, other: &Vector, j: usize) -> std::cmp::Ordering {
        use crate::types::compare::float_cmp;
        match (&self.data, &other.data) {
            (Data::Str(x), Data::Str(y)) => {
                if matches!(self.ty, DataType::Char(_)) {
                    let t = crate::types::text::bpchar_trim;
                    t(x.get(i)).as_bytes().cmp(t(y.get(j)).as_bytes())
                } else {
                    x.get(i).as_bytes().cmp(y.get(j).as_bytes())
                }
            }
            (Data::I32(x), Data::I32(y)) => x[i].cmp(&y[j]),
            (Data::I64(x), Data::I64(y)) => x[i].cmp(&y[j]),
            (Data::I16(x), Data::I16(y)) => x[i].cmp(&y[j]),
            (Data::F64(x), Data::F64(y)) => float_cmp(x[i], y[j]),
            (Data::F32(x), Data::F32(y)) => float_cmp(x[i] as f64, y[j] as f64),
            (Data::Bool(x), Data::Bool(y)) => x[i].cmp(&y[j]),
            (Data::Any(x), Data::Any(y)) => crate::types::compare_typed(&x[i], &y[j], &self.ty),
            _ => crate::types::compare_typed(&self.get(i), &other.get(j), &self.ty),
        }
    }

    /// The rows at `indices`, in that order (gather). Used by filters, joins
    /// and sorts.
    #[allow(clippy::clone_on_copy)] // one closure serves Copy and Value data
    pub fn take(&self, indices: &[u32]) -> Vector {
        let data = map_data!(&self.data,
            v => indices.iter().map(|&i| v[i as usize].clone()).collect(),
            s => s.take(indices));
        let nulls = self
            .nulls
            .as_ref()
            .map(|n| indices.iter().map(|&i| n[i as usize]).collect());
        Vector {
            ty: self.ty,
            data,
            nulls,
        }
    }

    /// The rows where `keep[i]` is true, in order.
    pub fn filter(&self, keep: &[bool]) -> Vector {
        fn pick<T: Clone>(v: &[T], keep: &[bool]) -> Vec<T> {
            v.iter()
                .zip(keep)
                .filter(|(_, &k)| k)
                .map(|(x, _)| x.clone())
                .collect()
        }
        /// Branch-free compaction of plain data: every element is copied
        /// down, the write position advances only for kept rows.
        fn pick_copy<T: Copy>(v: &[T], keep: &[bool]) -> Vec<T> {
            let mut out = v.to_vec();
            let mut n = 0usize;
            for (i, &k) in keep.iter().enumerate().take(v.len()) {
                out[n] = v[i];
                n += k as usize;
            }
            out.truncate(n);
            out
        }
        // Few rows kept: the branchy loop touches only those (and its
        // branch is well predicted); many: the branch-free one.
        let kept = keep.iter().filter(|&&k| k).count();
        if kept * 4 < keep.len() {
            return Vector {
                ty: self.ty,
                data: map_data!(&self.data, v => pick(v, keep), s => s.filter(keep)),
                nulls: self.nulls.as_ref().map(|n| pick(n, keep)),
            };
        }
        let data = match &self.data {
            Data::Bool(v) => Data::Bool(pick_copy(v, keep)),
            Data::I16(v) => Data::I16(pick_copy(v, keep)),
            Data::I32(v) => Data::I32(pick_copy(v, keep)),
            Data::I64(v) => Data::I64(pick_copy(v, keep)),
            Data::F32(v) => Data::F32(pick_copy(v, keep)),
            Data::F64(v) => Data::F64(pick_copy(v, keep)),
            Data::Str(s) => Data::Str(s.filter(keep)),
            Data::Any(v) => Data::Any(pick(v, keep)),
        };
        Vector {
            ty: self.ty,
            data,
            nulls: self.nulls.as_ref().map(|n| pick_copy(n, keep)),
        }
    }

    /// Appends every row of `other` (same type).
    pub fn extend(&mut self, other: &Vector) {
        let len = self.len();
        match (&mut self.nulls, &other.nulls) {
            (None, None) => {}
            (Some(a), Some(b)) => a.extend_from_slice(b),
            (Some(a), None) => a.resize(len + other.len(), false),
            (None, Some(b)) => {
                let mut a = vec![false; len];
                a.extend_from_slice(b);
                self.nulls = Some(a);
            }
        }
        match (&mut self.data, &other.data) {
            (Data::Bool(a), Data::Bool(b)) => a.extend_from_slice(b),
            (Data::I16(a), Data::I16(b)) => a.extend_from_slice(b),
            (Data::I32(a), Data::I32(b)) => a.extend_from_slice(b),
            (Data::I64(a), Data::I64(b)) => a.extend_from_slice(b),
            (Data::F32(a), Data::F32(b)) => a.extend_from_slice(b),
            (Data::F64(a), Data::F64(b)) => a.extend_from_slice(b),
            (Data::Str(a), Data::Str(b)) => a.extend(b),
            (Data::Any(a), Data::Any(b)) => a.extend_from_slice(b),
            (_, _) => {
                for i in 0..other.len() {
                    self.push(&other.get(i));
                }
            }
        }
    }

    /// Rows `start..end` as a new vector.
    pub fn slice(&self, start: usize, end: usize) -> Vector {
        Vector {
            ty: self.ty,
            data: map_data!(&self.data, v => v[start..end].to_vec(), s => s.slice(start, end)),
            nulls: self.nulls.as_ref().map(|n| n[start..end].to_vec()),
        }
    }

    /// Removes every row, keeping the allocation.
    pub fn clear(&mut self) {
        each_data!(&mut self.data, v => v.clear());
        self.nulls = None;
    }
}

/// Up to [`BATCH_SIZE`]-ish rows, column by column. A batch may have no
/// columns at all (`count(*)` needs none), so it carries its row count.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Batch {
    /// The columns, all of length `len`.
    pub columns: Vec<Vector>,
    /// Number of rows.
    pub len: usize,
}

impl Batch {
    /// A batch of `columns` (all of the same length).
    pub fn new(columns: Vec<Vector>) -> Batch {
        let len = columns.first().map_or(0, Vector::len);
        debug_assert!(columns.iter().all(|c| c.len() == len));
        Batch { columns, len }
    }

    /// A batch of `len` rows without columns.
    pub fn empty_rows(len: usize) -> Batch {
        Batch {
            columns: Vec::new(),
            len,
        }
    }

    /// Row `i` as values.
    pub fn row(&self, i: usize) -> Vec<Value> {
        self.columns.iter().map(|c| c.get(i)).collect()
    }

    /// The rows at `indices`.
    pub fn take(&self, indices: &[u32]) -> Batch {
        Batch {
            columns: self.columns.iter().map(|c| c.take(indices)).collect(),
            len: indices.len(),
        }
    }

    /// The rows where `keep` is true.
    pub fn filter(&self, keep: &[bool]) -> Batch {
        Batch {
            columns: self.columns.iter().map(|c| c.filter(keep)).collect(),
            len: keep.iter().filter(|&&k| k).count(),
        }
    }

    /// Rows `start..end`.
    pub fn slice(&self, start: usize, end: usize) -> Batch {
        Batch {
            columns: self.columns.iter().map(|c| c.slice(start, end)).collect(),
            len: end - start,
        }
    }

    /// Appends the rows of `other` (same column types).
    pub fn extend(&mut self, other: &Batch) {
        if self.columns.is_empty() && self.len == 0 {
            self.columns = other.columns.clone();
        } else {
            for (a, b) in self.columns.iter_mut().zip(&other.columns) {
                a.extend(b);
            }
        }
        self.len += other.len;
    }
}

/// Approximate bytes a vector holds.
pub fn vector_bytes(c: &Vector) -> usize {
    let n = c.len();
    let nulls = c.nulls.as_ref().map_or(0, |_| n);
    nulls
        + match (&c.data, c.ty.attlen()) {
            (Data::Str(s), _) => s.byte_len() + 4 * n,
            (_, -1) => 48 * n,
            (_, k) => k.max(1) as usize * n,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_get_nulls_and_physical_forms() {
        let mut v = Vector::new(DataType::Int4);
        v.push(&Value::Int4(1));
        v.push(&Value::Null);
        v.push(&Value::Int4(3));
        assert_eq!(v.len(), 3);
        assert!(matches!(v.data, Data::I32(_)));
        assert_eq!(v.get(0), Value::Int4(1));
        assert!(v.get(1).is_null());
        assert!(v.has_nulls());
        let d = Vector::from_values(DataType::Date, &[Value::Date(7)]);
        assert_eq!(d.get(0), Value::Date(7));
        let t = Vector::from_values(DataType::Text, &[Value::text("a"), Value::Null]);
        assert!(matches!(t.data, Data::Str(_)));
        assert_eq!(t.str_at(0), Some("a"));
        assert_eq!(t.str_at(1), None);
        let t2 = t.take(&[1, 0, 0]);
        assert!(t2.is_null(0));
        assert_eq!(t2.get(2), Value::text("a"));
        assert_eq!(t.get(0), Value::text("a"));
        assert!(t.is_null(1));
    }

    #[test]
    fn take_filter_slice_extend_keep_nulls_aligned() {
        let v = Vector::from_values(
            DataType::Int8,
            &[
                Value::Int8(10),
                Value::Null,
                Value::Int8(30),
                Value::Int8(40),
            ],
        );
        let t = v.take(&[3, 1, 0]);
        assert_eq!(t.get(0), Value::Int8(40));
        assert!(t.get(1).is_null());
        let f = v.filter(&[false, true, true, false]);
        assert!(f.get(0).is_null());
        assert_eq!(f.get(1), Value::Int8(30));
        let s = v.slice(2, 4);
        assert_eq!(s.len(), 2);
        assert!(!s.has_nulls());
        let mut a = Vector::from_values(DataType::Int8, &[Value::Int8(1)]);
        a.extend(&v);
        assert_eq!(a.len(), 5);
        assert!(a.is_null(2));
        assert!(!a.is_null(0));
        let b = Batch::new(vec![v.clone(), v]);
        assert_eq!(b.filter(&[true, false, false, true]).len, 2);
        assert_eq!(b.row(2), vec![Value::Int8(30), Value::Int8(30)]);
    }
}
