//! Index entries of the catalog (PostgreSQL's `pg_index` and the index's
//! `pg_class` row): an index belongs to one table and is stored inside that
//! table's definition, so it is versioned with it (CREATE INDEX and DROP
//! INDEX write a new table version, visible by the same snapshot rules) and
//! goes with it on DROP TABLE. Index names share the table namespace.
//!
//! Invariants: `columns` is not empty; every column position is a column of
//! the owning table; `primary` implies `unique`; the relfilenode names a
//! B-tree relation (`access::nbtree`) whose key columns are the key columns
//! followed by the INCLUDE columns.
//!
//! A partial index (`WHERE predicate`) keeps the predicate as its source
//! text, which the catalog file stores, and bound over the table's columns
//! (`Column(i)` is table column `i`), which index maintenance evaluates and
//! the planner proves from a query's conditions. The catalog file is read
//! with a binder the opener supplies ([`PredicateBinder`]): the catalog
//! layer does not bind expressions itself.

use std::sync::Arc;

use super::{Catalog, CatalogView, TableDef};
use crate::access::nbtree::{IndexDesc, KeyColumn};
use crate::error::Result;
use crate::expr::Expr;

/// Binds a partial index's stored predicate text over the columns of its
/// table (given by the database layer, which owns the binder).
pub type PredicateBinder = dyn Fn(&TableDef, &str) -> Result<Expr> + Send + Sync;

/// A partial index's `WHERE` predicate.
#[derive(Debug, Clone)]
pub struct IndexPredicate {
    /// The source text (as the parser prints it back), stored in the
    /// catalog file and bound again on open.
    pub text: String,
    /// Bound over the table's columns; boolean; no subqueries, aggregates
    /// or functions whose result can change.
    pub expr: Expr,
}

impl PartialEq for IndexPredicate {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for IndexPredicate {}

/// The binder of [`Catalog::open`]: refuses every predicate (for callers
/// that never read partial indexes: the catalog's own tests).
pub fn no_binder(_: &TableDef, text: &str) -> Result<Expr> {
    Err(crate::err!(
        FeatureNotSupported,
        "cannot bind index predicate \"{text}\" here"
    ))
}

/// One key column of an index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexColumn {
    /// Position of the table column.
    pub column: usize,
    /// `DESC`.
    pub desc: bool,
    /// `NULLS FIRST`.
    pub nulls_first: bool,
}

/// An index of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    /// The index's object id.
    pub oid: u32,
    /// Name (unique among relations).
    pub name: String,
    /// The file the B-tree lives in (`base/<relfilenode>`); new on TRUNCATE.
    pub relfilenode: u32,
    /// The key columns, in order.
    pub columns: Vec<IndexColumn>,
    /// `INCLUDE` columns (stored, not part of uniqueness).
    pub include: Vec<usize>,
    /// `UNIQUE`.
    pub unique: bool,
    /// `PRIMARY KEY`.
    pub primary: bool,
    /// Made by a `PRIMARY KEY` or `UNIQUE` constraint (psql shows
    /// `CONSTRAINT` only for those).
    pub constraint: bool,
    /// A partial index's predicate: only rows for which it is true have
    /// entries (and are checked for uniqueness).
    pub predicate: Option<Arc<IndexPredicate>>,
    /// Its description (`COMMENT ON`), never empty.
    pub comment: Option<String>,
    /// The description of the constraint that made it (`COMMENT ON CONSTRAINT`), never empty.
    pub constraint_comment: Option<String>,
}

impl IndexDef {
    /// The B-tree descriptor: the key columns, then the INCLUDE columns
    /// (ascending), with the table's column types.
    pub fn desc(&self, table: &TableDef) -> IndexDesc {
        let mut cols: Vec<KeyColumn> = self
            .columns
            .iter()
            .map(|c| KeyColumn {
                ty: table.columns[c.column].ty,
                desc: c.desc,
                nulls_first: c.nulls_first,
            })
            .collect();
        cols.extend(
            self.include
                .iter()
                .map(|&c| KeyColumn::asc(table.columns[c].ty)),
        );
        IndexDesc::new(cols)
    }

    /// The table columns the predicate reads (none for a full index).
    pub fn predicate_columns(&self) -> Vec<usize> {
        fn walk(e: &Expr, out: &mut Vec<usize>) {
            if let crate::expr::ExprKind::Column(i) = &e.kind {
                out.push(*i);
            }
            for c in e.children() {
                walk(c, out);
            }
        }
        let mut out = Vec::new();
        if let Some(p) = &self.predicate {
            walk(&p.expr, &mut out);
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every table column the index stores, key columns first.
    pub fn stored_columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns
            .iter()
            .map(|c| c.column)
            .chain(self.include.iter().copied())
    }
}

impl Catalog {
    /// Whether a relation (table, index, view or sequence) named `name` is visible to
    /// `view`.
    pub fn relation_name_taken(&self, view: &CatalogView, name: &str) -> bool {
        self.read()
            .versions
            .iter()
            .filter(|v| view.sees(v))
            .any(|v| v.def.name == name || v.def.indexes.iter().any(|i| i.name == name))
            || self.lookup_view(view, name).is_some()
            || self.lookup_sequence(view, name).is_some()
    }

    /// Whether a relation named `name` is visible to `view` in one
    /// namespace: the reader's temporary one when `temp` (tables and their
    /// indexes), else the permanent one (tables, indexes and views).
    pub fn relation_name_taken_in(&self, view: &CatalogView, name: &str, temp: bool) -> bool {
        self.read()
            .versions
            .iter()
            .filter(|v| (v.temp_ns != 0) == temp && view.sees(v))
            .any(|v| v.def.name == name || v.def.indexes.iter().any(|i| i.name == name))
            || (!temp
                && (self.lookup_view(view, name).is_some()
                    || self.lookup_sequence(view, name).is_some()))
    }

    /// The table that owns index `name`, and the index's position in it:
    /// an index of the reader's temporary tables first (`pg_temp` comes
    /// first in PostgreSQL's search path).
    pub fn index_owner(&self, view: &CatalogView, name: &str) -> Option<(Arc<TableDef>, usize)> {
        let st = self.read();
        let mut found = None;
        for v in st.versions.iter().filter(|v| view.sees(v)) {
            if let Some(pos) = v.def.indexes.iter().position(|i| i.name == name) {
                if v.temp_ns != 0 {
                    return Some((v.def.clone(), pos));
                }
                found = found.or_else(|| Some((v.def.clone(), pos)));
            }
        }
        found
    }
}
