//! CREATE [OR REPLACE] VIEW, DROP VIEW, and the dependencies of views:
//! what DROP TABLE and DROP VIEW find depending on what they drop
//! (PostgreSQL's `pg_depend` walk, `reportDependentObjects`), and the
//! errors of writing into a view.
//!
//! A view is created by binding its query once, as a SELECT would be (which
//! checks every name and fixes the output columns), while recording every
//! table and view the binder opens: those are the view's dependencies. The
//! catalog keeps the query's text (see `catalog::view`). Like every DDL
//! statement here it is transactional: the entry is invisible to others
//! until commit and gone on rollback.
//!
//! Invariant kept: a relation is dropped only together with every view
//! that depends on it, directly or through other views (CASCADE), or not at
//! all (RESTRICT, the default: 2BP01).

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Arc;

use heapdb_grammar::ast;

use super::query::StmtCtx;
use super::{Notice, QueryResult, Session};
use crate::catalog::{CatalogView, TableDef, ViewColumn, ViewDef};
use crate::database::Database;
use crate::err;
use crate::error::Result;
use crate::plan::bind::Binder;
use crate::plan::{Plan, PlanContext, TableRows};
use crate::settings::Settings;
use crate::txn::{Snapshot, Xid};
use crate::types::{DataType, Value};

/// One view, as the shell's `\\dv` lists it and `\\d NAME` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewInfo {
    /// View name.
    pub name: String,
    /// Its columns in order (never NOT NULL, no defaults).
    pub columns: Vec<super::ColumnInfo>,
    /// The storage psql shows per column (`plain`, `main`, `extended`).
    pub storage: Vec<&'static str>,
    /// The defining query's text.
    pub definition: String,
}

/// The storage class PostgreSQL gives a column of type `ty` (`typstorage`).
fn storage(ty: &DataType) -> &'static str {
    match ty {
        DataType::Numeric(_) => "main",
        _ if ty.attlen() == -1 => "extended",
        _ => "plain",
    }
}

/// The view `name` as `snap` sees it.
pub(crate) fn visible_view(db: &Database, snap: &Snapshot, name: &str) -> Option<Arc<ViewDef>> {
    db.catalog.lookup_view(
        &CatalogView {
            snapshot: snap,
            txns: &db.txns,
        },
        name,
    )
}

/// A planning context that notes every relation the binder opens: the
/// dependencies of the view being created.
struct Recorder<'s> {
    inner: StmtCtx<'s>,
    seen: RefCell<Vec<u32>>,
}

impl Recorder<'_> {
    fn note(&self, oid: u32) {
        let mut seen = self.seen.borrow_mut();
        if !seen.contains(&oid) {
            seen.push(oid);
        }
    }
}

impl PlanContext for Recorder<'_> {
    fn table(&self, name: &str) -> Result<Arc<TableDef>> {
        let t = self.inner.table(name)?;
        self.note(t.oid);
        Ok(t)
    }
    fn view(&self, name: &str) -> Option<Arc<ViewDef>> {
        let v = self.inner.view(name)?;
        self.note(v.oid);
        Some(v)
    }
    fn table_pages(&self, table: &TableDef) -> u32 {
        self.inner.table_pages(table)
    }
    fn run_subquery(&mut self, plan: Plan) -> Result<Vec<Vec<Value>>> {
        self.inner.run_subquery(plan)
    }
    fn subplan_context(&mut self, plan: &Plan) -> Result<crate::exec::ExecContext> {
        self.inner.subplan_context(plan)
    }
    fn settings(&self) -> &Settings {
        self.inner.settings()
    }
    fn statement_timestamp(&self) -> i64 {
        self.inner.statement_timestamp()
    }
    fn scalar_function(&mut self, name: &str, args: &[Value]) -> Option<Result<(Value, DataType)>> {
        self.inner.scalar_function(name, args)
    }
    fn inspection_rows(&mut self, name: &str, args: &[Value]) -> Option<Result<TableRows>> {
        self.inner.inspection_rows(name, args)
    }
}

/// A relation being dropped, as PostgreSQL's messages name it.
pub(crate) struct DropTarget {
    /// Object id.
    pub oid: u32,
    /// `table t` or `view v`.
    pub described: String,
}

impl Session {
    /// Every view this session can see, sorted by name (read as
    /// [`Session::list_tables`] reads the tables).
    pub fn list_views(&self) -> Vec<ViewInfo> {
        let (xid, cid) = match &self.txn {
            Some(t) => (t.xid, t.cid),
            None => (crate::txn::INVALID_XID, 0),
        };
        let snap = self.db.txns.snapshot(xid, cid);
        self.db
            .catalog
            .views(&self.catalog_view(&snap))
            .iter()
            .map(|v| ViewInfo {
                name: v.name.clone(),
                columns: v
                    .columns
                    .iter()
                    .map(|c| super::ColumnInfo {
                        name: c.name.clone(),
                        type_name: c.ty.to_string(),
                        not_null: false,
                        default: None,
                    })
                    .collect(),
                storage: v.columns.iter().map(|c| storage(&c.ty)).collect(),
                definition: v.text.clone(),
            })
            .collect()
    }

    pub(crate) fn create_view(&mut self, c: &ast::CreateView) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let (columns, depends_on) = self.view_columns(c, &snap)?;
        let xid = self.assign_xid()?;
        let cv = self.catalog_view(&snap);
        let name = &c.name.name;
        let existing = self.db.catalog.lookup_view(&cv, name);
        if self.db.catalog.lookup(&cv, name).is_some() {
            return Err(if c.or_replace {
                err!(WrongObjectType, "\"{name}\" is not a view")
            } else {
                err!(DuplicateTable, "relation \"{name}\" already exists")
            });
        }
        let text = c.query.to_string();
        match existing {
            Some(old) if c.or_replace => {
                check_replacement(&old.columns, &columns)?;
                let def = ViewDef::new(old.oid, name.clone(), columns, text, depends_on)?;
                self.db.catalog.replace_view(&cv, xid, old.oid, Some(def))?;
            }
            Some(_) => return Err(err!(DuplicateTable, "relation \"{name}\" already exists")),
            None => {
                let oid = self.db.catalog.next_oid();
                let def = ViewDef::new(oid, name.clone(), columns, text, depends_on)?;
                self.db.catalog.create_view(&cv, xid, def)?;
            }
        }
        self.txn_mut().catalog_changed = true;
        Ok(QueryResult::empty("CREATE VIEW"))
    }

    /// Binds the view's query: its output columns (named by the column
    /// list where given) and the relations it reads.
    fn view_columns(
        &self,
        c: &ast::CreateView,
        snap: &Snapshot,
    ) -> Result<(Vec<ViewColumn>, Vec<u32>)> {
        let mut rec = Recorder {
            inner: self.stmt_ctx(snap),
            seen: RefCell::new(Vec::new()),
        };
        let plan = Binder::new(&mut rec).plan_query(&c.query)?;
        if c.columns.len() > plan.fields.len() {
            return Err(err!(
                SyntaxError,
                "CREATE VIEW specifies more column names than columns"
            ));
        }
        let mut seen = HashSet::new();
        let mut columns = Vec::with_capacity(plan.fields.len());
        for (i, f) in plan.fields.iter().enumerate() {
            let name = c.columns.get(i).cloned().unwrap_or_else(|| f.name.clone());
            if !seen.insert(name.clone()) {
                return Err(err!(
                    DuplicateColumn,
                    "column \"{name}\" specified more than once"
                ));
            }
            let ty = match f.ty {
                DataType::Unknown => DataType::Text,
                ty => ty,
            };
            columns.push(ViewColumn { name, ty });
        }
        Ok((columns, rec.seen.into_inner()))
    }

    pub(crate) fn drop_view(&mut self, d: &ast::DropView) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let xid = self.assign_xid()?;
        let mut r = QueryResult::empty("DROP VIEW");
        let mut targets = Vec::new();
        let mut views = Vec::new();
        for name in &d.names {
            let cv = self.catalog_view(&snap);
            match self.db.catalog.lookup_view(&cv, &name.name) {
                Some(v) => {
                    targets.push(DropTarget {
                        oid: v.oid,
                        described: format!("view {}", v.name),
                    });
                    views.push(v);
                }
                None if self.db.catalog.lookup(&cv, &name.name).is_some() => {
                    return Err(err!(WrongObjectType, "\"{}\" is not a view", name.name)
                        .with_hint("Use DROP TABLE to remove a table."));
                }
                None if d.if_exists => r.notices.push(Notice::notice(format!(
                    "view \"{}\" does not exist, skipping",
                    name.name
                ))),
                None => {
                    return Err(err!(
                        UndefinedTable,
                        "view \"{}\" does not exist",
                        name.name
                    ))
                }
            }
        }
        self.drop_dependent_views(&snap, xid, &targets, d.cascade, &mut r.notices)?;
        for v in views {
            self.db
                .catalog
                .replace_view(&self.catalog_view(&snap), xid, v.oid, None)?;
            self.txn_mut().catalog_changed = true;
        }
        Ok(r)
    }

    /// The views that depend on `targets` (directly or through other
    /// views), which are being dropped: without `cascade` PostgreSQL's
    /// 2BP01 error listing them; with it, they are dropped too, with its
    /// `drop cascades to ...` notice.
    pub(crate) fn drop_dependent_views(
        &mut self,
        snap: &Snapshot,
        xid: Xid,
        targets: &[DropTarget],
        cascade: bool,
        notices: &mut Vec<Notice>,
    ) -> Result<()> {
        let cv = self.catalog_view(snap);
        let mut done: HashSet<u32> = targets.iter().map(|t| t.oid).collect();
        let mut found: Vec<(Arc<ViewDef>, String)> = Vec::new();
        for t in targets {
            self.collect_dependents(&cv, t.oid, &t.described, &mut done, &mut found);
        }
        if found.is_empty() {
            return Ok(());
        }
        if !cascade {
            let message = match targets {
                [one] => format!(
                    "cannot drop {} because other objects depend on it",
                    one.described
                ),
                _ => "cannot drop desired object(s) because other objects depend on them".into(),
            };
            let detail: Vec<String> = found
                .iter()
                .map(|(v, on)| format!("view {} depends on {on}", v.name))
                .collect();
            return Err(err!(DependentObjectsStillExist, "{message}")
                .with_detail(detail.join("\n"))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        notices.push(Notice::notice(match &found[..] {
            [(v, _)] => format!("drop cascades to view {}", v.name),
            _ => format!("drop cascades to {} other objects", found.len()),
        }));
        for (v, _) in &found {
            self.db.catalog.replace_view(&cv, xid, v.oid, None)?;
        }
        self.txn_mut().catalog_changed = true;
        Ok(())
    }

    /// Depth first, in oid order, as PostgreSQL's dependency walk reports
    /// them: each view depending on `oid` with the object it depends on.
    fn collect_dependents(
        &self,
        cv: &CatalogView,
        oid: u32,
        described: &str,
        done: &mut HashSet<u32>,
        found: &mut Vec<(Arc<ViewDef>, String)>,
    ) {
        for v in self.db.catalog.view_dependents(cv, oid) {
            if done.insert(v.oid) {
                let name = format!("view {}", v.name);
                found.push((v.clone(), described.to_string()));
                self.collect_dependents(cv, v.oid, &name, done, found);
            }
        }
    }

    /// DROP TABLE of a view's name: PostgreSQL's 42809.
    pub(crate) fn refuse_drop_table_of_view(
        &self,
        snap: &Snapshot,
        name: &ast::ObjectName,
    ) -> Result<()> {
        if visible_view(&self.db, snap, &name.name).is_some() {
            return Err(err!(WrongObjectType, "\"{}\" is not a table", name.name)
                .with_hint("Use DROP VIEW to remove a view."));
        }
        Ok(())
    }

    /// The error of a single-row INSERT read straight from its text
    /// (`insert_row`) whose target was not found: the view error when the
    /// name is a view's, else `e`.
    pub(crate) fn scanned_view_target(
        &mut self,
        e: crate::error::Error,
        sql: &str,
        scan: heapdb_grammar::ScannedInsert,
    ) -> crate::error::Error {
        if e.code != crate::SqlState::UndefinedTable {
            return e;
        }
        let name = ast::ObjectName {
            schema: None,
            name: scan.table_name(sql).to_ascii_lowercase(),
            offset: ast::Offset(scan.table.0),
        };
        self.refuse_view_target(&name, "insert into")
            .err()
            .unwrap_or(e)
    }

    /// INSERT, UPDATE or DELETE (`verb`: `insert into`, `update`, `delete
    /// from`) naming a view: PostgreSQL's error for a view that is not
    /// automatically updatable, with its reason. Views are not written
    /// through here, so a simple view (which PostgreSQL would write
    /// through to its table) gets 0A000.
    pub(crate) fn refuse_view_target(&mut self, name: &ast::ObjectName, verb: &str) -> Result<()> {
        if !self.db.catalog.any_view_named(&name.name) {
            return Ok(());
        }
        let snap = self.statement_snapshot();
        let Some(v) = visible_view(&self.db, &snap, &name.name) else {
            return Ok(());
        };
        let (action, on) = match verb {
            "insert into" => ("inserting into", "INSERT"),
            "update" => ("updating", "UPDATE"),
            _ => ("deleting from", "DELETE"),
        };
        let message = format!("cannot {verb} view \"{}\"", v.name);
        let Some(reason) = not_updatable_reason(&v.query) else {
            return Err(err!(FeatureNotSupported, "{message}")
                .with_detail("Writing through automatically updatable views is not supported."));
        };
        Err(err!(ObjectNotInPrerequisiteState, "{message}")
                .with_detail(reason)
                .with_hint(format!(
                    "To enable {action} the view, provide an INSTEAD OF {on} trigger or an unconditional ON {on} DO INSTEAD rule."
                )))
    }
}

/// The `CREATE OR REPLACE VIEW` rules (PostgreSQL's `checkViewTupleDesc`):
/// columns may only be added at the end.
fn check_replacement(old: &[ViewColumn], new: &[ViewColumn]) -> Result<()> {
    if new.len() < old.len() {
        return Err(err!(
            InvalidTableDefinition,
            "cannot drop columns from view"
        ));
    }
    for (o, n) in old.iter().zip(new) {
        if o.name != n.name {
            return Err(err!(
                InvalidTableDefinition,
                "cannot change name of view column \"{}\" to \"{}\"",
                o.name,
                n.name
            )
            .with_hint(
                "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.",
            ));
        }
        if o.ty != n.ty {
            return Err(err!(
                InvalidTableDefinition,
                "cannot change data type of view column \"{}\" from {} to {}",
                o.name,
                o.ty,
                n.ty
            ));
        }
    }
    Ok(())
}

/// Why a view's query cannot be written through, as PostgreSQL's
/// `view_query_is_auto_updatable` words it; `None` for a simple view.
fn not_updatable_reason(q: &ast::Query) -> Option<&'static str> {
    let s = match &q.body {
        ast::SetExpr::Select(s) => s,
        ast::SetExpr::SetOp { .. } => {
            return Some(
                "Views containing UNION, INTERSECT, or EXCEPT are not automatically updatable.",
            )
        }
        _ => return Some(
            "Views that do not select from a single table or view are not automatically updatable.",
        ),
    };
    if s.distinct {
        return Some("Views containing DISTINCT are not automatically updatable.");
    }
    if !s.group_by.is_empty() {
        return Some("Views containing GROUP BY are not automatically updatable.");
    }
    if s.having.is_some() {
        return Some("Views containing HAVING are not automatically updatable.");
    }
    if !q.with.is_empty() {
        return Some("Views containing WITH are not automatically updatable.");
    }
    if q.limit.is_some() || q.offset.is_some() {
        return Some("Views containing LIMIT or OFFSET are not automatically updatable.");
    }
    let aggregates = s.projection.iter().any(|item| match item {
        ast::SelectItem::Expr { expr, .. } => crate::plan::bind::contains_aggregate(expr),
        _ => false,
    });
    if aggregates {
        return Some("Views that return aggregate functions are not automatically updatable.");
    }
    if s.from.len() != 1 || !matches!(s.from[0], ast::TableRef::Table { .. }) {
        return Some(
            "Views that do not select from a single table or view are not automatically updatable.",
        );
    }
    let plain = |item: &ast::SelectItem| match item {
        ast::SelectItem::Expr { expr, .. } => matches!(expr.kind, ast::ExprKind::Column(_)),
        _ => true,
    };
    if !s.projection.iter().any(plain) {
        return Some("Views that have no updatable columns are not automatically updatable.");
    }
    None
}
