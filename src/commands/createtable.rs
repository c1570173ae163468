//! CREATE TABLE [AS], DROP TABLE, TRUNCATE (PostgreSQL's `DefineRelation`,
//! `createas.c`, `RemoveRelations` and `ExecuteTruncate`), given a
//! [`DdlContext`].
//!
//! DDL is transactional (see [`crate::catalog`]): a new table's files are
//! created at once and removed if the transaction aborts; a dropped or
//! truncated table's old files are removed only when the transaction
//! commits, after its commit record is flushed (`wal` module doc, rule 6:
//! the pending deletes). TRUNCATE gives the table a new relfilenode, as
//! PostgreSQL does, so it can be rolled back and does not disturb older
//! snapshots' scans.
//!
//! The parts that need no transaction run before the caller assigns one:
//! [`skip_existing`] (IF NOT EXISTS), [`define_columns`] (binding the
//! column definitions and DEFAULT expressions through the caller's
//! planning context) and [`query_columns`] (CREATE TABLE AS's columns from
//! its planned query). Nothing here prints: NOTICEs are returned as text.

use std::collections::HashSet;

use heapdb_grammar::ast;

use super::context::DdlContext;
use super::view::DropTarget;
use crate::catalog::{qualified_name, Catalog, CatalogView, ColumnDef, TableDef};
use crate::err;
use crate::error::Result;
use crate::exec::modify::RowWriter;
use crate::exec::{self, ExecContext};
use crate::plan::bind::{at, Binder, Mode};
use crate::plan::scope::Scope;
use crate::plan::{Plan, PlanContext};
use crate::storage::StrategyKind;
use crate::txn::LockMode;
use crate::types::cast::{cast_kind, CastContext};
use crate::types::DataType;

/// The most columns a table may have (PostgreSQL's MaxHeapAttributeNumber).
const MAX_COLUMNS: usize = 1600;

/// A PRIMARY KEY or UNIQUE constraint of CREATE TABLE: its name when
/// written (`CONSTRAINT name`), and its columns.
#[derive(Debug, Clone)]
pub struct KeySpec {
    /// The constraint's (and its index's) name, when written.
    pub name: Option<String>,
    /// The key's columns, in order.
    pub columns: Vec<String>,
}

/// A CREATE TABLE's definition once bound: its columns and the indexes its
/// PRIMARY KEY and UNIQUE constraints ask for.
#[derive(Debug, Clone)]
pub struct TableSpec {
    /// The columns, in order.
    pub columns: Vec<ColumnDef>,
    /// The primary key.
    pub primary_key: Option<KeySpec>,
    /// Each UNIQUE constraint (column constraints first).
    pub uniques: Vec<KeySpec>,
    /// The foreign keys (column constraints first).
    pub foreign_keys: Vec<super::fkey::FkSpec>,
    /// The CHECK constraints (inherited ones, then column constraints,
    /// then table constraints), bound, unnamed ones still without a name.
    pub checks: Vec<super::checkcmds::CheckSpec>,
    /// The tables it inherits from, by oid.
    pub parents: Vec<u32>,
    /// NOTICEs of the definition (merged inherited columns).
    pub notices: Vec<String>,
    /// Its storage parameters (`WITH (...)`), validated.
    pub options: Vec<String>,
}

/// CREATE TABLE [AS] of a name that exists under `view` in the namespace
/// the table goes to (the reader's temporary one when `temp`): PostgreSQL's
/// error, or with IF NOT EXISTS its notice (`Some`: the statement is done).
pub fn skip_existing(
    catalog: &Catalog,
    view: &CatalogView<'_>,
    name: &ast::ObjectName,
    if_not_exists: bool,
    temp: bool,
) -> Result<Option<String>> {
    if catalog.lookup_in(view, &name.name, temp).is_none() {
        return Ok(None);
    }
    if if_not_exists {
        return Ok(Some(format!(
            "relation \"{}\" already exists, skipping",
            name.name
        )));
    }
    Err(at(
        err!(DuplicateTable, "relation \"{}\" already exists", name.name),
        name.offset,
    ))
}

/// Binds CREATE TABLE's column list and constraints through `ctx` (which
/// resolves the DEFAULT expressions' functions and casts).
pub fn define_columns(c: &ast::CreateTable, ctx: &mut dyn PlanContext) -> Result<TableSpec> {
    let given = option_texts(c.with_options.iter().map(|(n, v)| (n, Some(v))));
    let options = crate::catalog::reloptions::transform(&[], &given, false)?;
    let mut pk_columns: HashSet<String> = HashSet::new();
    // PRIMARY KEY and UNIQUE constraints become indexes (commands::indexcmds).
    let (mut pk, mut uniques, mut table_uniques) = (None, Vec::new(), Vec::new());
    let (mut fkeys, mut table_fkeys) = (Vec::new(), Vec::new());
    let (mut col_checks, mut table_checks) = (Vec::new(), Vec::new());
    for tc in &c.constraints {
        match tc {
            ast::TableConstraint::PrimaryKey(name, cols) => {
                set_primary_key(&mut pk, name, cols, &c.name.name)?;
                pk_columns.extend(cols.iter().cloned());
            }
            ast::TableConstraint::Unique(name, cols) => table_uniques.push(KeySpec {
                name: name.clone(),
                columns: cols.clone(),
            }),
            ast::TableConstraint::Check(k) => table_checks.push(k),
            ast::TableConstraint::ForeignKey {
                name,
                columns,
                refs,
            } => table_fkeys.push(super::fkey::FkSpec {
                name: name.clone(),
                columns: columns.clone(),
                refs: (**refs).clone(),
            }),
        }
    }
    let mut seen = HashSet::new();
    let inh = super::inherit::inherited(c, ctx)?;
    let mut notices = inh.notices.clone();
    let mut columns = inh.columns.clone();
    let inherited_count = columns.len();
    let mut binder = Binder::new(ctx);
    for (local_pos, col) in c.columns.iter().enumerate() {
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
        let (ty, domain) = binder
            .resolve_type(&col.data_type)
            .map_err(|e| at(e, col.offset))?;
        let mut not_null = pk_columns.contains(&col.name);
        let mut default = None;
        for k in &col.constraints {
            match k {
                ast::ColumnConstraint::NotNull => not_null = true,
                ast::ColumnConstraint::PrimaryKey(name) => {
                    not_null = true;
                    let cols = std::slice::from_ref(&col.name);
                    set_primary_key(&mut pk, name, cols, &c.name.name)?;
                }
                ast::ColumnConstraint::Unique(name) => uniques.push(KeySpec {
                    name: name.clone(),
                    columns: vec![col.name.clone()],
                }),
                ast::ColumnConstraint::Null => {}
                ast::ColumnConstraint::Default(e) => {
                    bind_default_expr(&mut binder, &col.name, &ty, e)?;
                    default = Some(e.to_string());
                }
                ast::ColumnConstraint::Check(k) => col_checks.push(k),
                ast::ColumnConstraint::References { name, refs } => {
                    fkeys.push(super::fkey::FkSpec {
                        name: name.clone(),
                        columns: vec![col.name.clone()],
                        refs: (**refs).clone(),
                    })
                }
            }
        }
        let def = ColumnDef {
            comment: None,
            name: col.name.clone(),
            ty,
            not_null,
            default,
            domain: domain.map(|d| d.name.clone()),
        };
        match columns[..inherited_count]
            .iter()
            .position(|c| c.name == col.name)
        {
            Some(i) => super::inherit::merge_local_column(
                &mut columns[i],
                def,
                (local_pos, i),
                &mut notices,
            )?,
            None => columns.push(def),
        }
    }
    for pk in &pk_columns {
        if !columns.iter().any(|c| c.name == *pk) {
            return Err(err!(
                UndefinedColumn,
                "column \"{pk}\" named in key does not exist"
            ));
        }
    }
    uniques.extend(table_uniques);
    fkeys.extend(table_fkeys);
    let mut checks = super::inherit::inherited_checks(&inh, &c.name.name, &columns)?;
    for k in col_checks.into_iter().chain(table_checks) {
        checks.push(super::checkcmds::CheckSpec::bind(
            ctx.settings(),
            &c.name.name,
            &columns,
            k,
            true,
        )?);
    }
    Ok(TableSpec {
        columns,
        primary_key: pk,
        uniques,
        foreign_keys: fkeys,
        checks,
        parents: inh.parents.iter().map(|p| p.oid).collect(),
        notices,
        options,
    })
}

/// Storage parameters as written (`WITH (...)`, `SET (...)`) with their
/// values as the text PostgreSQL stores.
pub fn option_texts<'a>(
    given: impl IntoIterator<Item = (&'a String, Option<&'a ast::SetArg>)>,
) -> Vec<(String, Option<String>)> {
    given
        .into_iter()
        .map(|(name, value)| {
            let text = value.map(|v| match v {
                ast::SetArg::String(s) | ast::SetArg::Number(s) | ast::SetArg::Word(s) => s.clone(),
            });
            (name.clone(), text)
        })
        .collect()
}

/// Binds column `name`'s DEFAULT expression `e`: it may not read columns,
/// and its type must assign to the column's `ty` (PostgreSQL's 42804 with
/// its hint otherwise); the result is coerced to `ty` (an unknown literal
/// must parse as it). CREATE TABLE and ALTER TABLE bind defaults here.
pub(crate) fn bind_default_expr(
    binder: &mut Binder<'_>,
    name: &str,
    ty: &DataType,
    e: &ast::Expr,
) -> Result<crate::nodes::expr::Expr> {
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
        && b.ty != *ty
        && cast_kind(&b.ty, ty).map_or(true, |k| k > CastContext::Assignment)
    {
        return Err(at(
            err!(
                DatatypeMismatch,
                "column \"{name}\" is of type {ty} but default expression is of type {}",
                b.ty
            )
            .with_hint("You will need to rewrite or cast the expression."),
            e.offset,
        ));
    }
    binder.coerce(b, ty, CastContext::Assignment, e.offset)
}

/// CREATE TABLE AS's columns: the planned query's output, named by the
/// statement's column list where it gives names.
pub fn query_columns(c: &ast::CreateTableAs, plan: &Plan) -> Result<Vec<ColumnDef>> {
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
            comment: None,
            name,
            ty: if f.ty == DataType::Unknown {
                DataType::Text
            } else {
                f.ty
            },
            not_null: false,
            default: None,
            domain: None,
        });
    }
    Ok(columns)
}

impl DdlContext<'_> {
    /// Creates a table's files and catalog entry in the transaction (in
    /// the session's temporary namespace when `temp`).
    fn add_table(
        &mut self,
        name: &str,
        columns: Vec<ColumnDef>,
        checks: &[super::checkcmds::CheckSpec],
        parents: Vec<u32>,
        options: Vec<String>,
        temp: bool,
    ) -> Result<TableDef> {
        if columns.len() > MAX_COLUMNS {
            return Err(err!(
                ProgramLimitExceeded,
                "tables can have at most {MAX_COLUMNS} columns"
            ));
        }
        let oid = self.fresh_relfilenode();
        let def = TableDef {
            comment: None,
            oid,
            name: name.to_string(),
            relfilenode: oid,
            columns,
            stats: None,
            indexes: Vec::new(),
            checks: Vec::new(),
            parents,
            has_subclass: false,
            options,
        };
        self.mark_parents(&def.parents, temp)?;
        let def = self.add_checks(def, checks, true)?;
        self.create_heap(oid)?;
        *self.catalog_changed = true;
        self.catalog
            .create_in(&self.view(), self.xid, def.clone(), temp)?;
        Ok(def)
    }

    /// CREATE [TEMP] TABLE `name` as `spec` defines it, with the indexes
    /// of its constraints. Returns the new table's oid.
    pub fn create_table(&mut self, name: &str, spec: TableSpec, temp: bool) -> Result<u32> {
        let def = self.add_table(
            name,
            spec.columns,
            &spec.checks,
            spec.parents,
            spec.options,
            temp,
        )?;
        let oid = def.oid;
        if spec.primary_key.is_some() || !spec.uniques.is_empty() {
            self.add_constraint_indexes(def, spec.primary_key.as_ref(), &spec.uniques)?;
        }
        if !spec.foreign_keys.is_empty() {
            // Read back with the constraints' indexes (a key may reference
            // its own table).
            let def = self
                .catalog
                .by_oid(&self.view(), oid)
                .ok_or_else(|| err!(InternalError, "new table {oid} not found"))?;
            let mut taken = Vec::new();
            for fk in &spec.foreign_keys {
                self.add_foreign_key(&def, fk, true, &mut taken)?;
            }
        }
        Ok(oid)
    }

    /// CREATE [TEMP] TABLE AS: a new table `name` of `columns` filled with
    /// the rows of `plan`, run under `exec_ctx` (written through a
    /// bulk-write ring, unlogged until commit). Returns the new table's oid
    /// and the number of rows.
    pub fn create_table_as(
        &mut self,
        name: &str,
        columns: Vec<ColumnDef>,
        plan: &Plan,
        exec_ctx: &ExecContext,
        temp: bool,
    ) -> Result<(u32, u64)> {
        let table = self.add_table(name, columns, &[], Vec::new(), Vec::new(), temp)?;
        let rel = self.relation(table.relfilenode)?;
        let mut writer = RowWriter::new(&table)?;
        let mut ring = Some(
            self.pool
                .ring_with(StrategyKind::BulkWrite, &self.ring_sizes),
        );
        let mut op = exec::build(plan, exec_ctx)?;
        let mut count = 0u64;
        let (mut data, mut lens) = (Vec::new(), Vec::new());
        while let Some(b) = op.next()? {
            exec_ctx.check_cancel()?;
            data.clear();
            lens.clear();
            for i in 0..b.len {
                writer.form(&b, i, 0)?;
                data.extend_from_slice(&writer.tuple);
                lens.push(writer.tuple.len() as u16);
            }
            if !lens.is_empty() {
                rel.multi_insert(&data, &lens, self.xid, self.cid, ring.as_mut(), None)?;
            }
            count += b.len as u64;
        }
        Ok((table.oid, count))
    }

    /// DROP TABLE [IF EXISTS] ... [CASCADE]: every table locked first, the
    /// views depending on them refused or (CASCADE) dropped too. Returns
    /// the NOTICEs.
    pub fn drop_table(&mut self, d: &ast::DropTable) -> Result<Vec<String>> {
        let mut notices = Vec::new();
        // Lock every table before changing any: a wait restarts the
        // statement, which must not find half of it done.
        let mut tables = Vec::new();
        for name in &d.names {
            let qualified = qualified_name(name.schema.as_deref(), &name.name);
            if self.catalog.lookup(&self.view(), &qualified).is_none() {
                self.refuse_drop_table_of_view(name)?;
                if d.if_exists {
                    notices.push(format!("table \"{}\" does not exist, skipping", name.name));
                    continue;
                }
                return Err(at(
                    err!(UndefinedTable, "table \"{}\" does not exist", name.name),
                    name.offset,
                ));
            }
            let t = self
                .lookup_table(&qualified, LockMode::AccessExclusive)
                .map_err(|e| at(e, name.offset))?;
            tables.push(t);
        }
        let children = self.drop_children(&tables, d.cascade, &mut notices)?;
        tables.extend(children);
        let targets: Vec<_> = tables
            .iter()
            .map(|t| DropTarget {
                oid: t.oid,
                described: format!("table {}", t.name),
            })
            .collect();
        self.drop_table_foreign_keys(&tables, d.cascade, &mut notices)?;
        self.drop_dependent_views(&targets, d.cascade, &mut notices)?;
        for t in tables {
            self.drop_owned_sequences(t.oid)?;
            self.catalog.replace(&self.view(), self.xid, t.oid, None)?;
            *self.catalog_changed = true;
            self.drop_on_commit.push(t.relfilenode);
            self.drop_on_commit
                .extend(t.indexes.iter().map(|i| i.relfilenode));
        }
        Ok(notices)
    }

    /// TRUNCATE: each table gets new, empty files (and new empty indexes);
    /// the old ones go at commit. Returns the NOTICEs.
    pub fn truncate(&mut self, t: &ast::Truncate) -> Result<Vec<String>> {
        // Lock every table first (see drop_table).
        let mut tables = Vec::new();
        for name in &t.names {
            tables.push(
                self.lookup_table(
                    &qualified_name(name.schema.as_deref(), &name.name),
                    LockMode::AccessExclusive,
                )
                .map_err(|e| at(e, name.offset))?,
            );
        }
        let tables = self.with_inheritors(tables, &t.only)?;
        let mut notices = Vec::new();
        let tables = self.truncate_foreign_keys(tables, t.cascade, &mut notices)?;
        for table in tables {
            let fresh = self.fresh_relfilenode();
            self.create_heap(fresh)?;
            let mut def = (*table).clone();
            def.relfilenode = fresh;
            def.stats = None;
            self.truncate_indexes(&mut def)?;
            self.catalog
                .replace(&self.view(), self.xid, table.oid, Some(def))?;
            *self.catalog_changed = true;
            self.drop_on_commit.push(table.relfilenode);
        }
        Ok(notices)
    }
}

/// Records a table's primary key, refusing a second one as PostgreSQL does.
fn set_primary_key(
    pk: &mut Option<KeySpec>,
    name: &Option<String>,
    cols: &[String],
    table: &str,
) -> Result<()> {
    if pk.is_some() {
        return Err(err!(
            InvalidTableDefinition,
            "multiple primary keys for table \"{table}\" are not allowed"
        ));
    }
    *pk = Some(KeySpec {
        name: name.clone(),
        columns: cols.to_vec(),
    });
    Ok(())
}
