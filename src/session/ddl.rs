//! CREATE TABLE [AS], DROP TABLE, TRUNCATE.
//!
//! DDL is transactional (see [`crate::catalog`]): a new table's files are
//! created at once and removed if the transaction aborts; a dropped or
//! truncated table's old files are removed only when the transaction
//! commits, after its commit record is flushed (`wal` module doc, rule 6:
//! the pending deletes). TRUNCATE gives the table a new relfilenode, as PostgreSQL does,
//! so it can be rolled back and does not disturb older snapshots' scans.

use std::collections::HashSet;
use std::time::Instant;

use heapdb_grammar::ast;

use super::{Notice, QueryResult, Session};
use crate::catalog::{ColumnDef, TableDef};
use crate::err;
use crate::error::Result;
use crate::exec;
use crate::exec::modify::RowWriter;
use crate::plan::bind::{at, data_type, Binder, Mode};
use crate::plan::scope::Scope;
use crate::storage::StrategyKind;
use crate::txn::LockMode;
use crate::types::cast::{cast_kind, CastContext};
use crate::types::DataType;

/// The most columns a table may have (PostgreSQL's MaxHeapAttributeNumber).
const MAX_COLUMNS: usize = 1600;

impl Session {
    /// A fresh object id none of whose relation files exist yet
    /// ([`crate::commands::context::fresh_relfilenode`]).
    pub(super) fn fresh_relfilenode(&self) -> u32 {
        crate::commands::context::fresh_relfilenode(&self.db.catalog, &self.db.dir)
    }

    /// Creates a table's files and catalog entry in the current transaction.
    fn add_table(&mut self, name: &str, columns: Vec<ColumnDef>) -> Result<TableDef> {
        if columns.len() > MAX_COLUMNS {
            return Err(err!(
                ProgramLimitExceeded,
                "tables can have at most {MAX_COLUMNS} columns"
            ));
        }
        let snap = self.statement_snapshot();
        let xid = self.assign_xid()?;
        let oid = self.fresh_relfilenode();
        let def = TableDef {
            oid,
            name: name.to_string(),
            relfilenode: oid,
            columns,
            stats: None,
            indexes: Vec::new(),
        };
        self.db.create_relation_in(oid, xid)?;
        let txn = self.txn_mut();
        txn.drop_on_abort.push(oid);
        txn.catalog_changed = true;
        self.db
            .catalog
            .create(&self.catalog_view(&snap), xid, def.clone())?;
        Ok(def)
    }

    /// CREATE TABLE of a name that exists: PostgreSQL's error, or with IF
    /// NOT EXISTS its notice and the command tag (`Some`).
    fn exists_already(
        &self,
        snap: &crate::txn::Snapshot,
        name: &ast::ObjectName,
        if_not_exists: bool,
        tag: &str,
    ) -> Result<Option<QueryResult>> {
        if self
            .db
            .catalog
            .lookup(&self.catalog_view(snap), &name.name)
            .is_none()
        {
            return Ok(None);
        }
        if if_not_exists {
            let mut r = QueryResult::empty(tag);
            r.notices.push(Notice::notice(format!(
                "relation \"{}\" already exists, skipping",
                name.name
            )));
            return Ok(Some(r));
        }
        Err(at(
            err!(DuplicateTable, "relation \"{}\" already exists", name.name),
            name.offset,
        ))
    }

    pub(crate) fn create_table(&mut self, c: &ast::CreateTable) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        if let Some(r) = self.exists_already(&snap, &c.name, c.if_not_exists, "CREATE TABLE")? {
            return Ok(r);
        }
        if !c.with_options.is_empty() {
            return Err(err!(
                FeatureNotSupported,
                "CREATE TABLE ... WITH options are not supported"
            ));
        }
        let mut pk_columns: HashSet<String> = HashSet::new();
        // PRIMARY KEY and UNIQUE constraints become indexes (commands::indexcmds).
        let (mut pk, mut uniques, mut table_uniques) = (None, Vec::new(), Vec::new());
        for tc in &c.constraints {
            match tc {
                ast::TableConstraint::PrimaryKey(cols) => {
                    set_primary_key(&mut pk, cols, &c.name.name)?;
                    pk_columns.extend(cols.iter().cloned());
                }
                ast::TableConstraint::Unique(cols) => table_uniques.push(cols.clone()),
                ast::TableConstraint::Check(_) => {
                    return Err(err!(
                        FeatureNotSupported,
                        "CHECK constraints are not supported"
                    ))
                }
            }
        }
        let mut seen = HashSet::new();
        let mut columns = Vec::with_capacity(c.columns.len());
        let mut ctx = self.stmt_ctx(&snap);
        let mut binder = Binder::new(&mut ctx);
        for col in &c.columns {
            if !seen.insert(col.name.clone()) {
                return Err(at(
                    err!(
                        DuplicateColumn,
                        "column \"{}\" specified more than once",
                        col.name
                    ),
                    col.offset,
                ));
            }
            let ty = data_type(&col.data_type).map_err(|e| at(e, col.offset))?;
            let mut not_null = pk_columns.contains(&col.name);
            let mut default = None;
            for k in &col.constraints {
                match k {
                    ast::ColumnConstraint::NotNull => not_null = true,
                    ast::ColumnConstraint::PrimaryKey => {
                        not_null = true;
                        set_primary_key(&mut pk, std::slice::from_ref(&col.name), &c.name.name)?;
                    }
                    ast::ColumnConstraint::Unique => uniques.push(vec![col.name.clone()]),
                    ast::ColumnConstraint::Null => {}
                    ast::ColumnConstraint::Default(e) => {
                        let b = binder
                            .bind_expr(
                                e,
                                &Scope::default(),
                                &mut Mode::NoAgg("DEFAULT expressions"),
                            )
                            .map_err(|err| {
                                if err.code == crate::error::SqlState::UndefinedColumn {
                                    err!(
                                        FeatureNotSupported,
                                        "cannot use column reference in DEFAULT expression"
                                    )
                                } else {
                                    err
                                }
                            })?;
                        if b.ty != DataType::Unknown
                            && cast_kind(&b.ty, &ty).map_or(true, |k| k > CastContext::Assignment)
                        {
                            return Err(at(
                                err!(
                                    DatatypeMismatch,
                                    "column \"{}\" is of type {ty} but default expression is of type {}",
                                    col.name,
                                    b.ty
                                )
                                .with_hint("You will need to rewrite or cast the expression."),
                                e.offset,
                            ));
                        }
                        // Unknown literals must parse as the column's type.
                        binder.coerce(b, &ty, CastContext::Assignment, e.offset)?;
                        default = Some(e.to_string());
                    }
                    ast::ColumnConstraint::Check(_) => {
                        return Err(err!(
                            FeatureNotSupported,
                            "CHECK constraints are not supported"
                        ))
                    }
                }
            }
            columns.push(ColumnDef {
                name: col.name.clone(),
                ty,
                not_null,
                default,
            });
        }
        drop(binder);
        for pk in &pk_columns {
            if !seen.contains(pk) {
                return Err(err!(
                    UndefinedColumn,
                    "column \"{pk}\" named in key does not exist"
                ));
            }
        }
        let def = self.add_table(&c.name.name, columns)?;
        uniques.extend(table_uniques);
        if pk.is_some() || !uniques.is_empty() {
            self.add_constraint_indexes(def, pk.as_deref(), &uniques)?;
        }
        Ok(QueryResult::empty("CREATE TABLE"))
    }

    pub(crate) fn create_table_as(&mut self, c: &ast::CreateTableAs) -> Result<QueryResult> {
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        if let Some(r) = self.exists_already(&snap, &c.name, c.if_not_exists, "CREATE TABLE AS")? {
            return Ok(r);
        }
        let plan = self.plan_query(&c.query, &snap)?;
        if c.columns.len() > plan.fields.len() {
            return Err(err!(SyntaxError, "too many column names were specified"));
        }
        let mut columns = Vec::with_capacity(plan.fields.len());
        let mut seen = HashSet::new();
        for (i, f) in plan.fields.iter().enumerate() {
            let name = c.columns.get(i).cloned().unwrap_or_else(|| f.name.clone());
            if !seen.insert(name.clone()) {
                return Err(err!(
                    DuplicateColumn,
                    "column \"{name}\" specified more than once"
                ));
            }
            columns.push(ColumnDef {
                name,
                ty: if f.ty == DataType::Unknown {
                    DataType::Text
                } else {
                    f.ty
                },
                not_null: false,
                default: None,
            });
        }
        let table = self.add_table(&c.name.name, columns)?;
        let (xid, cid) = (self.txn_ref().xid, self.txn_ref().cid);
        let ctx = self.stmt_ctx(&snap).exec_context(&plan)?;
        let rel = self.db.relation(table.relfilenode)?;
        let mut writer = RowWriter::new(&table)?;
        let mut ring = Some(self.db.pool.ring(StrategyKind::BulkWrite));
        let mut op = exec::build(&plan, &ctx)?;
        let mut count = 0u64;
        let (mut data, mut lens) = (Vec::new(), Vec::new());
        while let Some(b) = op.next()? {
            ctx.check_cancel()?;
            data.clear();
            lens.clear();
            for i in 0..b.len {
                writer.form(&b, i, 0)?;
                data.extend_from_slice(&writer.tuple);
                lens.push(writer.tuple.len() as u16);
            }
            if !lens.is_empty() {
                rel.multi_insert(&data, &lens, xid, cid, ring.as_mut(), None)?;
            }
            count += b.len as u64;
        }
        let mut r = QueryResult::empty(&format!("SELECT {count}"));
        r.timing.execute = t0.elapsed();
        Ok(r)
    }

    pub(crate) fn drop_table(&mut self, d: &ast::DropTable) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let xid = self.assign_xid()?;
        let mut r = QueryResult::empty("DROP TABLE");
        // Lock every table before changing any: a wait restarts the
        // statement, which must not find half of it done.
        let mut tables = Vec::new();
        for name in &d.names {
            if self
                .db
                .catalog
                .lookup(&self.catalog_view(&snap), &name.name)
                .is_none()
            {
                self.refuse_drop_table_of_view(&snap, name)?;
                if d.if_exists {
                    r.notices.push(Notice::notice(format!(
                        "table \"{}\" does not exist, skipping",
                        name.name
                    )));
                    continue;
                }
                return Err(at(
                    err!(UndefinedTable, "table \"{}\" does not exist", name.name),
                    name.offset,
                ));
            }
            let t = self
                .lookup_table(&snap, &name.name, LockMode::AccessExclusive)
                .map_err(|e| at(e, name.offset))?;
            tables.push(t);
        }
        let targets: Vec<_> = tables
            .iter()
            .map(|t| super::view::DropTarget {
                oid: t.oid,
                described: format!("table {}", t.name),
            })
            .collect();
        self.drop_dependent_views(&snap, xid, &targets, d.cascade, &mut r.notices)?;
        for t in tables {
            self.db
                .catalog
                .replace(&self.catalog_view(&snap), xid, t.oid, None)?;
            let txn = self.txn_mut();
            txn.catalog_changed = true;
            txn.drop_on_commit.push(t.relfilenode);
            txn.drop_on_commit
                .extend(t.indexes.iter().map(|i| i.relfilenode));
        }
        Ok(r)
    }

    pub(crate) fn truncate(&mut self, t: &ast::Truncate) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let xid = self.assign_xid()?;
        // Lock every table first (see drop_table).
        let mut tables = Vec::new();
        for name in &t.names {
            tables.push(
                self.lookup_table(&snap, &name.name, LockMode::AccessExclusive)
                    .map_err(|e| at(e, name.offset))?,
            );
        }
        for table in tables {
            let fresh = self.fresh_relfilenode();
            self.db.create_relation_in(fresh, xid)?;
            self.txn_mut().drop_on_abort.push(fresh);
            let mut def = (*table).clone();
            def.relfilenode = fresh;
            def.stats = None;
            self.truncate_indexes(&snap, &mut def)?;
            self.db
                .catalog
                .replace(&self.catalog_view(&snap), xid, table.oid, Some(def))?;
            let txn = self.txn_mut();
            txn.catalog_changed = true;
            txn.drop_on_commit.push(table.relfilenode);
        }
        Ok(QueryResult::empty("TRUNCATE TABLE"))
    }
}

/// Records a table's primary key, refusing a second one as PostgreSQL does.
fn set_primary_key(pk: &mut Option<Vec<String>>, cols: &[String], table: &str) -> Result<()> {
    if pk.is_some() {
        return Err(err!(
            InvalidTableDefinition,
            "multiple primary keys for table \"{table}\" are not allowed"
        ));
    }
    *pk = Some(cols.to_vec());
    Ok(())
}
