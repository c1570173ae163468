//! The direct path of a single-row `INSERT ... VALUES (constants)`.
//!
//! A piped script of 100,000 one-row INSERTs spends most of its time on
//! per-statement machinery, not on the row: planning a VALUES node, a
//! projection over it and an executor tree for one row. When an INSERT
//! writes exactly one row of plain literals (numbers, strings, booleans,
//! NULL), has no RETURNING list and every column it leaves out has no
//! DEFAULT, [`Session::insert`] hands it here instead: each literal is bound
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
//!    char(n) length errors), errors at the literal's position
//!    (`Binder::coerce`);
//! 3. typed literals are cast to their column type in assignment context
//!    (overflow errors, without a position: the general path casts at run
//!    time);
//! 4. NOT NULL is checked column by column, as `RowWriter::form` does.
//!
//! Nothing here allocates per statement once the scratch buffers have grown,
//! apart from the values' own text (char and varchar values).

use std::sync::Arc;

use heapdb_grammar::ast;

use crate::access::heap::tuple::{self, TupleDesc};
use crate::catalog::TableDef;
use crate::err;
use crate::error::Result;
use crate::exec::scan::tuple_desc;
use crate::plan::bind::{at, number_literal};
use crate::types::cast::{cast_kind, CastContext};
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
        let left_out_default = table.columns.iter().enumerate().any(|(j, c)| {
            c.default.is_some() && !targets[..provided.min(targets.len())].contains(&j)
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
                    types::cast_from(&parsed, &base, &to, CastContext::Assignment)
                        .map_err(|x| at(x, e.offset))?
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

/// PostgreSQL's not-null violation for column `c` of `row`.
fn not_null_error(table: &TableDef, c: usize, row: &[Value]) -> crate::error::Error {
    let shown: Vec<String> = row.iter().map(super::dml::shown_value).collect();
    super::dml::not_null_violation(table, c, &shown)
}
