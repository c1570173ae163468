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

use std::sync::Arc;

use super::{Catalog, CatalogView, TableDef};
use crate::access::nbtree::{IndexDesc, KeyColumn};

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

    /// Every table column the index stores, key columns first.
    pub fn stored_columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns
            .iter()
            .map(|c| c.column)
            .chain(self.include.iter().copied())
    }
}

impl Catalog {
    /// Whether a relation (table, index or view) named `name` is visible to
    /// `view`.
    pub fn relation_name_taken(&self, view: &CatalogView, name: &str) -> bool {
        self.read()
            .versions
            .iter()
            .filter(|v| view.sees(v))
            .any(|v| v.def.name == name || v.def.indexes.iter().any(|i| i.name == name))
            || self.lookup_view(view, name).is_some()
    }

    /// The table that owns index `name`, and the index's position in it.
    pub fn index_owner(&self, view: &CatalogView, name: &str) -> Option<(Arc<TableDef>, usize)> {
        self.read()
            .versions
            .iter()
            .filter(|v| view.sees(v))
            .find_map(|v| {
                let pos = v.def.indexes.iter().position(|i| i.name == name)?;
                Some((v.def.clone(), pos))
            })
    }
}
