//! What the session shows and checks of views: the list the shell's `\dv`
//! and `\d NAME` print ([`ViewInfo`]), the view a statement's binder sees
//! by name, and the errors of writing into a view. CREATE and DROP VIEW
//! themselves are [`crate::commands::view`]'s.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::Session;
use crate::catalog::{CatalogView, ViewDef};
use crate::database::Database;
use crate::err;
use crate::error::Result;
use crate::txn::Snapshot;
use crate::types::DataType;

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
                    })
                    .collect(),
                storage: v.columns.iter().map(|c| storage(&c.ty)).collect(),
                definition: v.text.clone(),
            })
            .collect()
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
        let Some(reason) = crate::commands::view::not_updatable_reason(&v.query) else {
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
