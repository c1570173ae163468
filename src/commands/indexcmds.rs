//! CREATE INDEX, DROP INDEX, the indexes of PRIMARY KEY and UNIQUE
//! constraints, and what DROP TABLE and TRUNCATE do to indexes.
//!
//! An index is a B-tree relation (`access::nbtree`) and an entry in its
//! table's catalog definition ([`crate::catalog::IndexDef`]). Its file is
//! created as a table's is: a create record logged under the transaction
//! (so recovery removes it if the transaction has no outcome), removed at
//! abort, and the old file removed after commit on DROP and TRUNCATE. Every
//! page change of the index is logged (`wal::btree`). The build reads the
//! rows the statement's snapshot sees, under a SHARE lock that keeps writers
//! out, sorts their keys and writes the tree bottom-up.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::context::DdlContext;
use super::createtable::KeySpec;
use crate::access::nbtree::{BTree, BtLog};
use crate::catalog::{IndexColumn, IndexDef, IndexPredicate, TableDef};
use crate::err;
use crate::error::Result;
use crate::exec::index_maint::key_text;
use crate::plan::bind::at;
use crate::storage::RelFileNode;
use crate::txn::LockMode;
use crate::types::Value;

/// PostgreSQL's NAMEDATALEN - 1.
const MAX_NAME: usize = 63;

/// What an index is to be: columns and flags, before it has storage.
pub struct IndexSpec {
    pub name: String,
    pub columns: Vec<IndexColumn>,
    pub include: Vec<usize>,
    pub unique: bool,
    pub primary: bool,
    pub constraint: bool,
    /// A partial index's predicate.
    pub predicate: Option<Arc<IndexPredicate>>,
}

impl IndexSpec {
    /// The index of a PRIMARY KEY or UNIQUE constraint on columns `cols`
    /// (ascending, NULLs last, no INCLUDE columns).
    pub fn constraint(name: String, cols: &[usize], primary: bool) -> IndexSpec {
        IndexSpec {
            name,
            columns: cols
                .iter()
                .map(|&column| IndexColumn {
                    column,
                    desc: false,
                    nulls_first: false,
                })
                .collect(),
            include: Vec::new(),
            unique: true,
            primary,
            constraint: true,
            predicate: None,
        }
    }
}

/// PostgreSQL's `makeObjectName`: `name1_name2_label`, the two names
/// shortened (the longer first) to fit in 63 bytes.
pub(crate) fn make_object_name(name1: &str, name2: &str, label: &str) -> String {
    let overhead = label.len() + 1 + usize::from(!name2.is_empty());
    let avail = MAX_NAME.saturating_sub(overhead);
    let (mut n1, mut n2) = (name1.len(), name2.len());
    while n1 + n2 > avail {
        if n1 > n2 {
            n1 -= 1;
        } else {
            n2 -= 1;
        }
    }
    let cut = |s: &str, mut n: usize| {
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        s[..n].to_string()
    };
    let mut out = cut(name1, n1);
    if !name2.is_empty() {
        out.push('_');
        out.push_str(&cut(name2, n2));
    }
    out.push('_');
    out.push_str(label);
    out
}

impl DdlContext<'_> {
    /// The index name of a PRIMARY KEY or UNIQUE constraint on `columns`:
    /// its written `name` (42P07 when a relation or an index chosen earlier
    /// in this statement, `taken`, has it), else `t_a_pkey` / `t_a_key` as
    /// [`Self::choose_index_name`] picks; added to `taken`.
    pub(crate) fn constraint_index_name(
        &self,
        table: &TableDef,
        name: Option<&str>,
        columns: &[usize],
        primary: bool,
        taken: &mut Vec<String>,
    ) -> Result<String> {
        let name = match name {
            Some(n) => {
                let view = self.view();
                if taken.iter().any(|t| t == n) || self.catalog.relation_name_taken(&view, n) {
                    return Err(err!(DuplicateTable, "relation \"{n}\" already exists"));
                }
                n.to_string()
            }
            None => {
                let label = if primary { "pkey" } else { "key" };
                self.choose_index_name(table, columns, label, taken)
            }
        };
        taken.push(name.clone());
        Ok(name)
    }

    /// PostgreSQL's `ChooseRelationName`: the first of `t_a_label`,
    /// `t_a_label1`, ... that no relation (nor an index chosen earlier in
    /// this statement, `taken`) has.
    pub fn choose_index_name(
        &self,
        table: &TableDef,
        columns: &[usize],
        label: &str,
        taken: &[String],
    ) -> String {
        let name2 = if label == "pkey" {
            String::new()
        } else {
            columns
                .iter()
                .map(|&c| table.columns[c].name.as_str())
                .collect::<Vec<_>>()
                .join("_")
        };
        let view = self.view();
        for pass in 0.. {
            let l = if pass == 0 {
                label.to_string()
            } else {
                format!("{label}{pass}")
            };
            let name = make_object_name(&table.name, &name2, &l);
            if !taken.contains(&name) && !self.catalog.relation_name_taken(&view, &name) {
                return name;
            }
        }
        unreachable!("the name passes are unbounded")
    }

    /// Creates and fills the index `spec` of `table` (the version locked by
    /// this statement) in the current transaction; returns the table's new
    /// definition, already in the catalog.
    pub fn add_index(&mut self, table: &TableDef, spec: IndexSpec) -> Result<TableDef> {
        // Array and JSON columns have no B-tree key encoding here.
        let cols = spec.columns.iter().map(|c| c.column);
        for k in cols.chain(spec.include.iter().copied()) {
            let ty = table.columns.get(k).map(|c| c.ty);
            use crate::types::DataType as T;
            if let Some(ty @ (T::Array(_) | T::Json | T::Jsonb | T::Point)) = ty {
                return Err(err!(
                    UndefinedObject,
                    "data type {ty} has no default operator class for access method \"btree\""
                )
                .with_hint("You must specify an operator class for the index or define a default operator class for the data type."));
            }
        }
        let xid = self.xid;
        let oid = self.fresh_relfilenode();
        let ix = IndexDef {
            comment: None,
            constraint_comment: None,
            oid,
            name: spec.name,
            relfilenode: oid,
            columns: spec.columns,
            include: spec.include,
            unique: spec.unique,
            primary: spec.primary,
            constraint: spec.constraint,
            predicate: spec.predicate,
        };
        self.log_relation_create(oid)?;
        self.drop_on_abort.push(oid);
        self.build_index(table, &ix)?;
        let mut def = table.clone();
        if ix.primary {
            for c in &ix.columns {
                def.columns[c.column].not_null = true;
            }
        }
        def.indexes.push(ix);
        self.catalog
            .replace(&self.view(), xid, table.oid, Some(def.clone()))?;
        *self.catalog_changed = true;
        Ok(def)
    }

    /// Reads the rows the statement's snapshot sees, checks uniqueness (and
    /// NOT NULL for a primary key) and writes the sorted tree
    /// (`commands::index_build`).
    pub fn build_index(&self, table: &TableDef, ix: &IndexDef) -> Result<()> {
        self.build_index_as_of(table, ix, self.snapshot)
    }

    /// [`DdlContext::build_index`] from the rows `snap` sees (a table
    /// rewrite builds from the rows its own command wrote).
    pub fn build_index_as_of(
        &self,
        table: &TableDef,
        ix: &IndexDef,
        snap: &crate::txn::Snapshot,
    ) -> Result<()> {
        let rel = self.relation(table.relfilenode)?;
        let settings = self.settings;
        let env = crate::commands::index_build::BuildEnv {
            pool: self.pool.clone(),
            log: Some(self.wal.clone() as std::sync::Arc<dyn BtLog>),
            temp_dir: crate::exec::spill::temp_dir(self.data_dir),
            memory: usize::try_from(settings.maintenance_work_mem_kb)
                .unwrap_or(usize::MAX / 1024)
                .saturating_mul(1024),
            max_workers: usize::try_from(settings.max_parallel_maintenance_workers).unwrap_or(0),
            min_parallel_blocks: u32::try_from(settings.min_parallel_table_scan_size)
                .unwrap_or(u32::MAX),
            ring_sizes: self.ring_sizes,
        };
        let key_text = |row: &[Value]| key_text(table, ix, row);
        crate::commands::index_build::build_index(&env, &rel, snap, table, ix, &key_text)?;
        Ok(())
    }

    /// The key columns of an index element list, with PostgreSQL's errors
    /// for an unknown column and an operator class that does not fit.
    fn index_columns(table: &TableDef, elems: &[ast::IndexElem]) -> Result<Vec<IndexColumn>> {
        elems
            .iter()
            .map(|e| {
                let column = table.column_index(&e.column).ok_or_else(|| {
                    at(
                        err!(UndefinedColumn, "column \"{}\" does not exist", e.column),
                        e.offset,
                    )
                })?;
                if let Some(opclass) = &e.opclass {
                    super::opclass::check(opclass, &table.columns[column].ty)?;
                }
                let desc = e.asc == Some(false);
                Ok(IndexColumn {
                    column,
                    desc,
                    nulls_first: e.nulls_first.unwrap_or(desc),
                })
            })
            .collect()
    }

    /// CREATE INDEX; the NOTICEs it raises.
    pub fn create_index(&mut self, c: &ast::CreateIndex) -> Result<Vec<String>> {
        if let Some(m) = &c.method {
            if m != "btree" {
                return Err(err!(
                    UndefinedObject,
                    "access method \"{m}\" does not exist"
                ));
            }
        }
        if let Some(name) = &c.name {
            // An index goes to its table's namespace (a temporary table's
            // to the session's pg_temp).
            let view = self.view();
            let temp = (self.catalog.lookup(&view, &c.table.name))
                .is_some_and(|t| self.catalog.is_temp(t.oid));
            if self.catalog.relation_name_taken_in(&view, name, temp) {
                if c.if_not_exists {
                    return Ok(vec![format!(
                        "relation \"{name}\" already exists, skipping"
                    )]);
                }
                return Err(err!(DuplicateTable, "relation \"{name}\" already exists"));
            }
        }
        let table = self
            .lookup_table(&c.table.name, LockMode::Share)
            .map_err(|e| at(e, c.table.offset))?;
        let columns = Self::index_columns(&table, &c.columns)?;
        let predicate = match &c.predicate {
            Some(p) => Some(Arc::new(crate::plan::indexpred::bind_create(
                self.settings,
                &table,
                p,
            )?)),
            None => None,
        };
        let mut include = Vec::new();
        for name in &c.include {
            let i = table
                .column_index(name)
                .ok_or_else(|| err!(UndefinedColumn, "column \"{name}\" does not exist"))?;
            include.push(i);
        }
        let name = match &c.name {
            Some(n) => n.clone(),
            None => {
                let all: Vec<usize> = columns
                    .iter()
                    .map(|k| k.column)
                    .chain(include.iter().copied())
                    .collect();
                self.choose_index_name(&table, &all, "idx", &[])
            }
        };
        let spec = IndexSpec {
            name,
            columns,
            include,
            unique: c.unique,
            primary: false,
            constraint: false,
            predicate,
        };
        self.add_index(&table, spec)?;
        Ok(Vec::new())
    }

    /// DROP INDEX; the NOTICEs it raises.
    pub fn drop_index(&mut self, d: &ast::DropIndex) -> Result<Vec<String>> {
        let xid = self.xid;
        let mut notices = Vec::new();
        for name in &d.names {
            let view = self.view();
            let Some((owner, _)) = self.catalog.index_owner(&view, &name.name) else {
                if self.catalog.lookup(&view, &name.name).is_some() {
                    return Err(at(
                        err!(WrongObjectType, "\"{}\" is not an index", name.name)
                            .with_hint("Use DROP TABLE to remove a table."),
                        name.offset,
                    ));
                }
                if d.if_exists {
                    notices.push(format!("index \"{}\" does not exist, skipping", name.name));
                    continue;
                }
                // PostgreSQL reports no position for a missing object here.
                return Err(err!(
                    UndefinedObject,
                    "index \"{}\" does not exist",
                    name.name
                ));
            };
            let table = self
                .lookup_table(&self.catalog.qualified(&owner), LockMode::AccessExclusive)
                .map_err(|e| at(e, name.offset))?;
            let Some(pos) = table.indexes.iter().position(|i| i.name == name.name) else {
                return Err(err!(
                    UndefinedObject,
                    "index \"{}\" does not exist",
                    name.name
                ));
            };
            let ix = &table.indexes[pos];
            if ix.constraint && !d.cascade {
                return Err(err!(
                    DependentObjectsStillExist,
                    "cannot drop index {} because constraint {} on table {} requires it",
                    ix.name,
                    ix.name,
                    table.name
                )
                .with_hint(format!(
                    "You can drop constraint {} on table {} instead.",
                    ix.name, table.name
                )));
            }
            let mut def = (*table).clone();
            let gone = def.indexes.remove(pos);
            self.catalog
                .replace(&self.view(), xid, table.oid, Some(def))?;
            *self.catalog_changed = true;
            self.drop_on_commit.push(gone.relfilenode);
        }
        Ok(notices)
    }

    /// TRUNCATE's part for indexes: each gets a new, empty relation in
    /// `def` (the table's new definition); the old files go at commit.
    pub fn truncate_indexes(&mut self, def: &mut TableDef) -> Result<()> {
        for i in 0..def.indexes.len() {
            let fresh = self.fresh_relfilenode();
            self.log_relation_create(fresh)?;
            self.drop_on_abort.push(fresh);
            let log: std::sync::Arc<dyn BtLog> = self.wal.clone();
            BTree::create(
                self.pool.clone(),
                RelFileNode(fresh),
                def.indexes[i].desc(def),
                Some(log),
            )?;
            let old = std::mem::replace(&mut def.indexes[i].relfilenode, fresh);
            self.drop_on_commit.push(old);
        }
        Ok(())
    }

    /// The indexes of CREATE TABLE's PRIMARY KEY and UNIQUE constraints
    /// (`pk`: the primary key's columns; `uniques`: each unique
    /// constraint's), named as PostgreSQL names them, primary key first.
    pub fn add_constraint_indexes(
        &mut self,
        table: TableDef,
        pk: Option<&KeySpec>,
        uniques: &[KeySpec],
    ) -> Result<()> {
        let mut def = table;
        let mut taken: Vec<String> = Vec::new();
        let lists = pk
            .into_iter()
            .map(|k| (true, k))
            .chain(uniques.iter().map(|k| (false, k)));
        for (primary, key) in lists {
            let mut cols = Vec::with_capacity(key.columns.len());
            for n in &key.columns {
                let c = def.column_index(n).ok_or_else(|| {
                    err!(
                        UndefinedColumn,
                        "column \"{n}\" named in key does not exist"
                    )
                })?;
                cols.push(c);
            }
            let name =
                self.constraint_index_name(&def, key.name.as_deref(), &cols, primary, &mut taken)?;
            let spec = IndexSpec::constraint(name, &cols, primary);
            def = self.add_index(&def, spec)?;
        }
        Ok(())
    }
}

/// A name as `quote_ident` prints it.
pub(crate) fn quoted(name: &str) -> String {
    if heapdb_grammar::keywords::needs_quotes(name) {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        name.to_string()
    }
}

/// psql's `\d` lines for the indexes of `table`: `"a_pkey" PRIMARY KEY,
/// btree (aid)`, primary key first, then by name.
pub(crate) fn describe_indexes(table: &TableDef) -> Vec<String> {
    let mut ixs: Vec<&IndexDef> = table.indexes.iter().collect();
    ixs.sort_by(|a, b| b.primary.cmp(&a.primary).then(a.name.cmp(&b.name)));
    ixs.iter()
        .map(|ix| {
            let kind = match (ix.primary, ix.unique, ix.constraint) {
                (true, _, _) => "PRIMARY KEY, ",
                (false, true, true) => "UNIQUE CONSTRAINT, ",
                (false, true, false) => "UNIQUE, ",
                _ => "",
            };
            format!(
                "\"{}\" {kind}btree {}",
                ix.name,
                index_columns(table, ix, true)
            )
        })
        .collect()
}

/// `pg_get_indexdef(index)`: `CREATE [UNIQUE] INDEX name ON schema.table
/// USING btree (columns) [INCLUDE (...)] [WHERE (predicate)]`.
pub(crate) fn index_definition(table: &TableDef, ix: &IndexDef, schema: &str) -> String {
    format!(
        "CREATE {}INDEX {} ON {}.{} USING btree {}",
        if ix.unique { "UNIQUE " } else { "" },
        quoted(&ix.name),
        quoted(schema),
        quoted(&table.name),
        index_columns(table, ix, false)
    )
}

/// An index's `(columns) [INCLUDE (...)] [WHERE predicate]` as
/// `pg_get_indexdef` prints it, `pretty` (psql's `\d`: the predicate
/// without its outer parentheses) or not.
fn index_columns(table: &TableDef, ix: &IndexDef, pretty: bool) -> String {
    let cols: Vec<String> = ix
        .columns
        .iter()
        .map(|c| {
            let mut s = quoted(&table.columns[c.column].name);
            match (c.desc, c.nulls_first) {
                (true, true) => s.push_str(" DESC"),
                (true, false) => s.push_str(" DESC NULLS LAST"),
                (false, true) => s.push_str(" NULLS FIRST"),
                (false, false) => {}
            }
            s
        })
        .collect();
    let mut line = format!("({})", cols.join(", "));
    if !ix.include.is_empty() {
        let inc: Vec<String> = ix
            .include
            .iter()
            .map(|&c| quoted(&table.columns[c].name))
            .collect();
        line.push_str(&format!(" INCLUDE ({})", inc.join(", ")));
    }
    if let Some(p) = &ix.predicate {
        let names: Vec<String> = table.columns.iter().map(|c| quoted(&c.name)).collect();
        let text = crate::plan::indexpred::pretty(&p.expr, &names);
        if pretty {
            line.push_str(&format!(" WHERE {text}"));
        } else {
            line.push_str(&format!(" WHERE ({text})"));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::make_object_name;

    #[test]
    fn object_names_are_shortened_as_postgres_does() {
        assert_eq!(make_object_name("t", "a_b", "key"), "t_a_b_key");
        assert_eq!(make_object_name("t", "", "pkey"), "t_pkey");
        let long = "x".repeat(60);
        let n = make_object_name(&long, "col", "idx");
        assert_eq!(n.len(), 63);
        assert!(n.ends_with("_col_idx"), "{n}");
    }
}
