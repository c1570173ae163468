//! The direct path of a single-row `INSERT ... VALUES (constants)`.
//!
//! A piped script of 100,000 one-row INSERTs spends most of its time on
//! per-statement machinery, not on the row: planning a VALUES node, a
//! projection over it and an executor tree for one row. When an INSERT
//! writes exactly one row of plain literals (numbers, strings, booleans,
//! NULL), has no RETURNING list and every column it leaves out has no
//! DEFAULT, the session's INSERT hands it here instead: each literal is bound
//! straight into its column's type, the tuple is formed into a buffer the
//! session keeps, and the heap insert follows. Anything else (expressions,
//! `DEFAULT`, several rows, RETURNING, defaulted columns) takes the general
//! path.
//!
//! The semantics are the general path's, step for step, so that both give
//! the same result and the same error for the same statement:
//! 1. every literal is typed as the binder types it (`integer`, `bigint`,
//!    `numeric`, `boolean`, or `unknown` for strings and NULL), and a typed
//!    literal whose type has no assignment cast to its column fails with
//!    42804 at the literal's position (`plan_values`);
//! 2. `unknown` literals are parsed by the column type's input function and
//!    the type modifier's rule is applied (char(n) padding, varchar(n) and
//!    char(n) length errors, numeric(p, s) overflow); input errors at the
//!    literal's position, the modifier's without one (`Binder::coerce`);
//! 3. typed literals are cast to their column type in assignment context
//!    (overflow errors, without a position: the general path casts at run
//!    time);
//! 4. NOT NULL is checked column by column, as `RowWriter::form` does.
//!
//! Nothing here allocates per statement once the scratch buffers have grown,
//! apart from the values' own text (char and varchar values).
//!
//! # Straight from the text
//!
//! A statement that the grammar's [`scan_single_insert`] reads (no column
//! list, unquoted table name, literals only) does not even get a tree: the
//! session hands its scan to [`InsertScratch::form_scanned_row`], which
//! binds each literal from the statement's bytes into the column's stored
//! form — integers, strings into text/char/varchar and timestamps without a
//! [`Value`] or an allocation, other pairs through the same input and cast
//! functions as above. It decides only the plain success case: any error,
//! a NULL for a NOT NULL column, a defaulted or NOT NULL column left out,
//! or more values than columns makes it give up having written nothing, and
//! the statement is parsed and run through the steps above, which find and
//! word the error. So the three ways (scanned, tree, general) store the
//! same row and report the same error for the same statement
//! (tests/insert_direct.rs runs every case all three ways).

use std::sync::Arc;

use heapdb_grammar::{ast, LiteralKind, ScannedLiteral};

use crate::access::heap::build::TupleBuilder;
use crate::access::heap::tuple::{self, TupleDesc};
use crate::access::heap::HeapRelation;
use crate::catalog::{ColumnDef, TableDef};
use crate::err;
use crate::error::Result;
use crate::exec::scan::tuple_desc;
use crate::plan::bind::{at, number_literal};
use crate::types::cast::{cast_kind, CastContext};
use crate::types::datetime::parse::parse_timestamp_at;
use crate::types::text::apply_length;
use crate::types::{self, DataType, Value};

/// Buffers a session reuses from one direct INSERT to the next, and the
/// tuple descriptor of the last table written (held with its definition,
/// so the pointer comparison that finds it cannot be fooled by a freed and
/// reused allocation).
#[derive(Default)]
pub(crate) struct InsertScratch {
    /// The table whose descriptor `desc` is.
    table: Option<Arc<TableDef>>,
    /// Its tuple descriptor.
    desc: Option<TupleDesc>,
    /// The literals as typed by the binder, in target-list order.
    bound: Vec<(Value, DataType)>,
    /// The complete row, in column order.
    row: Vec<Value>,
    /// The type of each value of `row` before its cast to the column type.
    types: Vec<DataType>,
    /// The row's values encoded back to back.
    encoded: Vec<u8>,
    /// Each column's range in `encoded` (`None` for NULL).
    ranges: Vec<Option<(usize, usize)>>,
    /// The formed tuple.
    pub(crate) tuple: Vec<u8>,
    /// The literals of a scanned statement ([`scan_single_insert`]).
    pub(crate) lits: Vec<ScannedLiteral>,
    /// Its table name folded to lower case.
    pub(crate) name: String,
    /// Where a scanned row's tuple is formed.
    builder: TupleBuilder,
    /// The open heap of `rel_table` (the database's relation cache is a
    /// mutex and a SipHash look-up away).
    pub(crate) rel: Option<(Arc<TableDef>, Arc<HeapRelation>)>,
}

/// The single row of plain literals an INSERT writes, when the statement
/// qualifies for the direct path by its shape alone (the table's defaults
/// are checked later).
pub(crate) fn literal_row(ins: &ast::Insert) -> Option<&[ast::Expr]> {
    if !ins.returning.is_empty() {
        return None;
    }
    let q = ins.source.as_deref()?;
    if !q.order_by.is_empty() || q.limit.is_some() || q.offset.is_some() || !q.with.is_empty() {
        return None;
    }
    let ast::SetExpr::Values(rows) = &q.body else {
        return None;
    };
    let [row] = rows.as_slice() else {
        return None;
    };
    row.iter()
        .all(|e| matches!(e.kind, ast::ExprKind::Literal(_)))
        .then_some(row.as_slice())
}

impl InsertScratch {
    /// Forms the tuple of `row` (plain literals for the columns `targets`
    /// of `table`, in order) into `self.tuple`. Returns false, having done
    /// nothing, when a column left out has a DEFAULT (the general path
    /// evaluates it). `now` is the statement's timestamp (`'now'`).
    pub(crate) fn form_literal_row(
        &mut self,
        table: &Arc<TableDef>,
        targets: &[usize],
        row: &[ast::Expr],
        now: i64,
    ) -> Result<bool> {
        let provided = row.len();
        if !table.checks.is_empty() {
            // CHECK constraints are evaluated by the general path.
            return Ok(false);
        }
        // A domain column's value is checked by the general path.
        let left_out_default = table.columns.iter().enumerate().any(|(j, c)| {
            c.domain.is_some()
                || c.default.is_some() && !targets[..provided.min(targets.len())].contains(&j)
        });
        if left_out_default || provided > targets.len() {
            // Too many values: the general path reports it.
            return Ok(false);
        }
        // 1. Type the literals; a typed literal must have an assignment
        //    cast to its column.
        self.bound.clear();
        for e in row {
            let ast::ExprKind::Literal(lit) = &e.kind else {
                return Ok(false);
            };
            let (v, ty) = match lit {
                ast::Literal::Number(text) => number_literal(text).map_err(|x| at(x, e.offset))?,
                ast::Literal::String(_) | ast::Literal::Null => (Value::Null, DataType::Unknown),
                ast::Literal::Boolean(b) => (Value::Bool(*b), DataType::Bool),
            };
            self.bound.push((v, ty));
        }
        for (k, (_, ty)) in self.bound.iter().enumerate() {
            let col = &table.columns[targets[k]];
            if *ty != DataType::Unknown
                && cast_kind(ty, &col.ty).map_or(true, |c| c > CastContext::Assignment)
            {
                return Err(at(
                    err!(
                        DatatypeMismatch,
                        "column \"{}\" is of type {} but expression is of type {ty}",
                        col.name,
                        col.ty
                    )
                    .with_hint("You will need to rewrite or cast the expression."),
                    row[k].offset,
                ));
            }
        }
        // 2. Parse the `unknown` literals by their column's input function.
        for (k, e) in row.iter().enumerate() {
            if let ast::ExprKind::Literal(ast::Literal::String(s)) = &e.kind {
                let to = table.columns[targets[k]].ty;
                let base = if to.is_string() {
                    DataType::Text
                } else {
                    to.without_typmod()
                };
                let parsed = types::parse_value_at(s, &base, now).map_err(|x| at(x, e.offset))?;
                let v = if base == to {
                    parsed
                } else {
                    types::cast_from(&parsed, &base, &to, CastContext::Assignment)?
                };
                self.bound[k] = (v, to);
            }
        }
        // 3. Cast the typed literals, in column order (the order the
        //    general path's projection evaluates them in); the columns left
        //    out are NULL.
        self.row.clear();
        self.row.resize(table.columns.len(), Value::Null);
        self.types.clear();
        self.types.resize(table.columns.len(), DataType::Unknown);
        for (k, (v, ty)) in self.bound.drain(..).enumerate() {
            self.row[targets[k]] = v;
            self.types[targets[k]] = ty;
        }
        for (j, col) in table.columns.iter().enumerate() {
            let ty = self.types[j];
            if ty != col.ty && ty != DataType::Unknown {
                self.row[j] =
                    types::cast_from(&self.row[j], &ty, &col.ty, CastContext::Assignment)?;
            }
        }
        // 4. NOT NULL, then the tuple.
        self.encoded.clear();
        self.ranges.clear();
        for (j, v) in self.row.iter().enumerate() {
            if v.is_null() {
                if table.columns[j].not_null {
                    return Err(not_null_error(table, j, &self.row));
                }
                self.ranges.push(None);
            } else {
                let start = self.encoded.len();
                v.encode(&mut self.encoded);
                self.ranges.push(Some((start, self.encoded.len())));
            }
        }
        if !self.table.as_ref().is_some_and(|t| Arc::ptr_eq(t, table)) {
            self.desc = Some(tuple_desc(table)?);
            self.table = Some(table.clone());
        }
        let desc = self.desc.as_ref().expect("set just above");
        self.tuple.clear();
        tuple::form_tuple_append_ranges(desc, &self.encoded, &self.ranges, &mut self.tuple)?;
        Ok(true)
    }
}

impl InsertScratch {
    /// Forms the tuple of the scanned row in `self.lits` (values for the
    /// first columns of `table`, in order) from the text `sql` into
    /// `self.tuple`. True when it did; false, having decided nothing, for
    /// anything but the plain success case (see the module doc). `now` is
    /// the statement's timestamp (`'now'`).
    pub(crate) fn form_scanned_row(&mut self, table: &Arc<TableDef>, sql: &str, now: i64) -> bool {
        let cols = &table.columns;
        let n = self.lits.len();
        if n > cols.len()
            || !table.checks.is_empty()
            || cols[n..]
                .iter()
                .any(|c| c.default.is_some() || c.not_null || c.domain.is_some())
        {
            return false;
        }
        if !self.table.as_ref().is_some_and(|t| Arc::ptr_eq(t, table)) {
            let Ok(desc) = tuple_desc(table) else {
                return false;
            };
            self.desc = Some(desc);
            self.table = Some(table.clone());
        }
        let desc = self.desc.as_ref().expect("set just above");
        self.builder.clear();
        for ((lit, col), attr) in self.lits.iter().zip(cols).zip(desc.attrs()) {
            let bound = bind_scanned(lit, sql, col, now, &mut self.encoded);
            let placed = match bound {
                Some(Bound::Null) => {
                    self.builder.push_null();
                    Ok(())
                }
                Some(Bound::I16(v)) => self.builder.push_fixed(*attr, v.to_le_bytes()),
                Some(Bound::I32(v)) => self.builder.push_fixed(*attr, v.to_le_bytes()),
                Some(Bound::I64(v)) => self.builder.push_fixed(*attr, v.to_le_bytes()),
                Some(Bound::Text(range)) => self.builder.push(*attr, sql[range].as_bytes()),
                Some(Bound::Encoded) => self.builder.push(*attr, &self.encoded),
                None => return false,
            };
            if placed.is_err() {
                return false;
            }
        }
        while self.builder.len() < cols.len() {
            self.builder.push_null();
        }
        self.builder.finish(desc, &mut self.tuple).is_ok()
    }
}

/// The stored form of a bound literal.
enum Bound {
    /// NULL.
    Null,
    /// An int2.
    I16(i16),
    /// An int4.
    I32(i32),
    /// An int8 or a timestamp.
    I64(i64),
    /// The bytes of `sql[range]` as they are (a string's text).
    Text(std::ops::Range<usize>),
    /// The bytes written to the `encoded` buffer.
    Encoded,
}

/// The stored form of literal `lit` of `sql` for column `col`; `None` when
/// the literal needs the step-by-step path: an error of any kind, NULL into
/// NOT NULL, a cast the assignment does not allow. The values are the ones
/// those steps give: the common pairs are read directly, the others through
/// the same functions (their bytes in `encoded`, cleared first).
fn bind_scanned(
    lit: &ScannedLiteral,
    sql: &str,
    col: &ColumnDef,
    now: i64,
    encoded: &mut Vec<u8>,
) -> Option<Bound> {
    encoded.clear();
    if col.domain.is_some() {
        // Checked against its domain by the general path.
        return None;
    }
    match lit.kind {
        LiteralKind::Null => (!col.not_null).then_some(Bound::Null),
        LiteralKind::Number => {
            let text = lit.text(sql);
            // Digits that fit: the binder's int4 (or int8) literal, cast by
            // assignment to the integer column when it fits there.
            if let Some(i) = unsigned_digits(text) {
                match col.ty {
                    DataType::Int4 if i <= i32::MAX as u64 => return Some(Bound::I32(i as i32)),
                    DataType::Int8 if i <= i64::MAX as u64 => return Some(Bound::I64(i as i64)),
                    DataType::Int2 if i <= i16::MAX as u64 => return Some(Bound::I16(i as i16)),
                    _ => {}
                }
            }
            let (v, ty) = number_literal(text).ok()?;
            assign(v, ty, col, encoded)
        }
        LiteralKind::Boolean(b) => assign(Value::Bool(b), DataType::Bool, col, encoded),
        LiteralKind::String { doubled } => {
            let plain = !doubled;
            let s = lit.string_value(sql);
            let text = || Bound::Text(lit.text.0..lit.text.1);
            match col.ty {
                // The input function of text is the identity.
                DataType::Text | DataType::Varchar(None) if plain => Some(text()),
                DataType::Text | DataType::Varchar(None) => {
                    encoded.extend_from_slice(s.as_bytes());
                    Some(Bound::Encoded)
                }
                DataType::Varchar(Some(n)) | DataType::Char(n) => {
                    let padded = matches!(col.ty, DataType::Char(_));
                    match apply_length(&s, n, padded, false).ok()? {
                        Some(t) => encoded.extend_from_slice(t.as_bytes()),
                        None if plain => return Some(text()),
                        None => encoded.extend_from_slice(s.as_bytes()),
                    }
                    Some(Bound::Encoded)
                }
                DataType::Timestamp(None) => parse_timestamp_at(&s, now).ok().map(Bound::I64),
                to => {
                    let base = to.without_typmod();
                    let parsed = types::parse_value_at(&s, &base, now).ok()?;
                    let v = if base == to {
                        parsed
                    } else {
                        types::cast_from(&parsed, &base, &to, CastContext::Assignment).ok()?
                    };
                    v.encode(encoded);
                    Some(Bound::Encoded)
                }
            }
        }
    }
}

/// A typed literal `v` of type `ty` stored into `col` (its bytes into
/// `encoded`): an assignment cast when the types differ, refused (`None`)
/// where the binder refuses it.
fn assign(v: Value, ty: DataType, col: &ColumnDef, encoded: &mut Vec<u8>) -> Option<Bound> {
    let v = if ty == col.ty {
        v
    } else {
        if cast_kind(&ty, &col.ty).map_or(true, |c| c > CastContext::Assignment) {
            return None;
        }
        types::cast_from(&v, &ty, &col.ty, CastContext::Assignment).ok()?
    };
    if v.is_null() {
        // Not a literal's cast; the step-by-step path decides.
        return None;
    }
    v.encode(encoded);
    Some(Bound::Encoded)
}

/// The value of `text` when it is all ASCII digits (at most 19 of them, so
/// it fits a u64 unchecked).
fn unsigned_digits(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u64;
    }
    Some(v)
}

/// PostgreSQL's not-null violation for column `c` of `row`.
fn not_null_error(table: &TableDef, c: usize, row: &[Value]) -> crate::error::Error {
    let shown: Vec<String> = row.iter().map(crate::exec::modify::shown_value).collect();
    crate::exec::modify::not_null_violation(table, c, &shown)
}
