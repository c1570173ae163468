//! PostgreSQL's limit on the size of a B-tree index row, checked on
//! PostgreSQL's own measure of the row: an index tuple of a leaf may take
//! at most 2704 bytes (`BTMaxItemSize`: a third of a page less the line
//! pointers and special space, less room for a heap TID), measured as
//! `index_form_tuple` would lay the row out: an 8-byte header (16 with a
//! null bitmap), each value aligned as its type's `typalign` says (a
//! varlena of at most 126 bytes takes a 1-byte header and no alignment,
//! a longer one a 4-byte header), the whole rounded up to 8 bytes. A row
//! over the limit fails with 54000 and PostgreSQL's message, DETAIL and
//! HINT, naming the heap tuple the row references.
//!
//! Invariants: the check costs one length comparison for a key that cannot
//! exceed the limit ([`may_exceed`]); only longer keys are decoded and
//! measured. PostgreSQL's measure bounds heapdb's key encoding from above
//! closely enough that every key within PostgreSQL's limit also fits on a
//! heapdb page ([`btpage::MAX_TUPLE_SIZE`]); a key that would not (none of
//! the supported types encodes that much longer) fails the same way.
//! Differences left: PostgreSQL compresses long compressible values inside
//! index tuples (heapdb does not, so a long but compressible text key can
//! pass PostgreSQL's limit and fail heapdb's), and `numeric` values are
//! measured by their heapdb storage length.

use super::btpage::{self as bp};
use super::keys::{self, IndexDesc};
use crate::err;
use crate::error::{Error, Result};
use crate::storage::page::maxalign;
use crate::storage::RelFileNode;
use crate::types::{DataType, Value};

/// PostgreSQL's `BTMaxItemSize` for an 8 KiB page (btree version 4).
pub const BT_MAX_ITEM_SIZE: usize = 2704;

/// Whether a leaf key of `key_len` bytes may be over the limit: PostgreSQL's
/// measure of a row exceeds heapdb's encoding by at most its header and
/// each column's alignment padding and header growth.
#[inline]
pub fn may_exceed(desc: &IndexDesc, key_len: usize) -> bool {
    key_len + 24 + 8 * desc.columns.len() > BT_MAX_ITEM_SIZE || key_len > bp::MAX_TUPLE_SIZE
}

/// The size PostgreSQL's `index_form_tuple` gives a row of `vals` (one per
/// column of `desc`), before compression.
pub fn pg_index_tuple_size(desc: &IndexDesc, vals: &[Value]) -> usize {
    let has_null = vals.iter().any(Value::is_null);
    // IndexInfoFindDataOffset: the header, with the null bitmap when needed.
    let mut size = if has_null { maxalign(8 + 4) } else { 8 };
    for (col, v) in desc.columns.iter().zip(vals) {
        if v.is_null() {
            continue;
        }
        let align = col.ty.attalign();
        match usize::try_from(col.ty.attlen()) {
            Ok(len) => size = size.next_multiple_of(align) + len,
            Err(_) => {
                let data = varlena_payload(&col.ty, v);
                // VARATT_CAN_MAKE_SHORT: the payload and a 1-byte header fit 127.
                if data < 127 {
                    size += data + 1;
                } else {
                    size = size.next_multiple_of(align) + 4 + data;
                }
            }
        }
    }
    maxalign(size)
}

/// The payload bytes of a varlena value as PostgreSQL stores it.
fn varlena_payload(ty: &DataType, v: &Value) -> usize {
    match (ty, v) {
        // The key encoding drops char(n)'s trailing blanks; the row has them.
        (DataType::Char(n), Value::Text(s)) => {
            s.len() + (*n as usize).saturating_sub(s.chars().count())
        }
        _ => v.encoded_len(),
    }
}

/// Fails when the leaf key `key` is over the size limit, with PostgreSQL's
/// error for index `names.0` of table `names.1` (the relation file's
/// number when the names are not known).
#[inline]
pub fn check(
    desc: &IndexDesc,
    key: &[u8],
    names: Option<(&str, &str)>,
    rel: RelFileNode,
) -> Result<()> {
    if !may_exceed(desc, key.len()) {
        return Ok(());
    }
    measure(desc, key, names, rel)
}

/// [`check`] of a key long enough to be over the limit.
#[cold]
fn measure(
    desc: &IndexDesc,
    key: &[u8],
    names: Option<(&str, &str)>,
    rel: RelFileNode,
) -> Result<()> {
    let (vals, tid) = keys::decode_key(desc, key)?;
    let pg = pg_index_tuple_size(desc, &vals);
    if pg <= BT_MAX_ITEM_SIZE && key.len() <= bp::MAX_TUPLE_SIZE {
        return Ok(());
    }
    let size = if pg > BT_MAX_ITEM_SIZE {
        pg
    } else {
        maxalign(key.len() + 8)
    };
    Err(too_long(size, tid.unwrap_or((0, 0)), names, rel))
}

fn too_long(size: usize, tid: keys::Tid, names: Option<(&str, &str)>, rel: RelFileNode) -> Error {
    let (index, table) = match names {
        Some((i, t)) => (i.to_string(), t.to_string()),
        None => (rel.to_string(), rel.to_string()),
    };
    err!(
        ProgramLimitExceeded,
        "index row size {size} exceeds btree version 4 maximum {BT_MAX_ITEM_SIZE} for index \"{index}\""
    )
    .with_detail(format!(
        "Index row references tuple ({},{}) in relation \"{table}\".",
        tid.0, tid.1
    ))
    .with_hint(
        "Values larger than 1/3 of a buffer page cannot be indexed.\n\
         Consider a function index of an MD5 hash of the value, or use full text indexing.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::nbtree::KeyColumn;

    /// PostgreSQL 15's sizes: a text of n bytes in a one-column index
    /// makes a row of MAXALIGN(8 + 4 + n) (n > 126) or MAXALIGN(8 + 1 + n).
    #[test]
    fn sizes_follow_index_form_tuple() {
        let d = IndexDesc::new(vec![KeyColumn::asc(DataType::Text)]);
        let t = |n: usize| vec![Value::text(&"x".repeat(n))];
        assert_eq!(pg_index_tuple_size(&d, &t(2692)), 2704);
        assert_eq!(pg_index_tuple_size(&d, &t(2693)), 2712);
        assert_eq!(pg_index_tuple_size(&d, &t(2700)), 2712);
        assert_eq!(pg_index_tuple_size(&d, &t(10)), 24);
        let d2 = IndexDesc::new(vec![
            KeyColumn::asc(DataType::Int4),
            KeyColumn::asc(DataType::Text),
            KeyColumn::asc(DataType::Int8),
        ]);
        let v = vec![
            Value::Int4(1),
            Value::text(&"y".repeat(200)),
            Value::Int8(2),
        ];
        // 8 + 4, aligned 4: 12 + 4 + 200 = 216, aligned 8: 216 + 8 = 224.
        assert_eq!(pg_index_tuple_size(&d2, &v), 224);
        let v = vec![Value::Null, Value::text("ab"), Value::Int8(2)];
        // 16 + 3 = 19, aligned 8: 24 + 8 = 32.
        assert_eq!(pg_index_tuple_size(&d2, &v), 32);
    }

    #[test]
    fn the_check_reports_postgres_text_for_keys_over_the_limit() {
        let d = IndexDesc::new(vec![KeyColumn::asc(DataType::Text)]);
        let key =
            |n: usize| keys::leaf_key(&d, &[Value::text(&"z".repeat(n))], (0, 1)).expect("key");
        let names = Some(("idx", "t"));
        assert!(check(&d, &key(2692), names, RelFileNode(5)).is_ok());
        let e = check(&d, &key(2693), names, RelFileNode(5)).unwrap_err();
        assert_eq!(e.code.code(), "54000");
        assert_eq!(
            e.message,
            "index row size 2712 exceeds btree version 4 maximum 2704 for index \"idx\""
        );
        assert_eq!(
            e.detail.as_deref(),
            Some("Index row references tuple (0,1) in relation \"t\".")
        );
    }
}
