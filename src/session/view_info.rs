//! What the session shows and checks of views: the list the shell's `\dv`
//! and `\d NAME` print ([`ViewInfo`]), the view a statement's binder sees
//! by name, and the single-row INSERT into a view. CREATE and DROP VIEW
//! themselves are [`crate::commands::view`]'s.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::Session;
use crate::catalog::{CatalogView, ViewDef};
use crate::database::Database;
use crate::err;
use crate::error::Result;
use crate::txn::Snapshot;

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

/// The view `name` as `snap` sees it.
pub(crate) fn visible_view(db: &Database, snap: &Snapshot, name: &str) -> Option<Arc<ViewDef>> {
    db.catalog.lookup_view(
        &CatalogView {
            snapshot: snap,
            txns: &db.txns,
            // Views are permanent.
            temp_ns: 0,
        },
        name,
    )
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
                        storage: c.ty.storage_name(),
                        description: c.comment.clone(),
                    })
                    .collect(),
                storage: v.columns.iter().map(|c| c.ty.storage_name()).collect(),
                definition: v.text.clone(),
            })
            .collect()
    }

    /// A single-row INSERT read straight from its text (`insert_row`)
    /// whose target was not found as a table (`e`): when the name is a
    /// view's, the INSERT is run through the view; else `e`.
    pub(crate) fn scanned_view_target(
        &mut self,
        e: crate::error::Error,
        sql: &str,
        scan: heapdb_grammar::ScannedInsert,
        sink: &mut dyn FnMut(&[super::Column], &crate::vector::Batch) -> Result<()>,
    ) -> Result<super::QueryResult> {
        if e.code != crate::SqlState::UndefinedTable {
            return Err(e);
        }
        let name = ast::ObjectName {
            schema: None,
            name: scan.table_name(sql).to_ascii_lowercase(),
            offset: ast::Offset(scan.table.0),
        };
        let Some(v) = self.written_view(&name) else {
            return Err(e);
        };
        let stmts = heapdb_grammar::parse(sql).map_err(super::parse_error)?;
        match stmts.as_slice() {
            [ast::Statement::Insert(ins)] => self.insert_into_view(ins, v, sink),
            _ => Err(err!(
                InternalError,
                "a scanned INSERT did not parse as one INSERT"
            )),
        }
    }
}
