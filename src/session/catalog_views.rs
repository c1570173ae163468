//! PostgreSQL's system views over heapdb's catalog (`pg_indexes`), built
//! as views over `VALUES` (`sysview`) from the tables the statement's
//! snapshot sees, each time a statement names one.
//!
//! Invariant: the rows are those of the catalog version the statement
//! reads (its snapshot and the session's temporary namespace), so a view
//! never shows an index another transaction has not committed.

use std::sync::Arc;

use super::query::StmtCtx;
use super::sysview::{quote, values_view};
use crate::catalog::{CatalogView, ViewDef};
use crate::commands::indexcmds::index_definition;
use crate::types::DataType;

/// The name of PostgreSQL's view of indexes.
pub(crate) const PG_INDEXES: &str = "pg_indexes";

/// `pg_indexes`: schemaname, tablename, indexname, tablespace (always
/// NULL: heapdb has one tablespace) and indexdef (`pg_get_indexdef`).
pub(crate) fn pg_indexes(ctx: &StmtCtx) -> Arc<ViewDef> {
    let cv = CatalogView {
        snapshot: ctx.snapshot,
        txns: &ctx.db.txns,
        temp_ns: ctx.locker.temp_ns,
    };
    let mut rows = Vec::new();
    for table in ctx.db.catalog.tables(&cv) {
        let schema = if ctx.db.catalog.is_temp(table.oid) {
            format!("pg_temp_{}", ctx.locker.temp_ns)
        } else {
            "public".to_string()
        };
        for ix in &table.indexes {
            rows.push(vec![
                quote(&schema),
                quote(&table.name),
                quote(&ix.name),
                "NULL".to_string(),
                quote(&index_definition(&table, ix, &schema)),
            ]);
        }
    }
    values_view(
        PG_INDEXES,
        &[
            ("schemaname", DataType::Name, "name"),
            ("tablename", DataType::Name, "name"),
            ("indexname", DataType::Name, "name"),
            ("tablespace", DataType::Name, "name"),
            ("indexdef", DataType::Text, "text"),
        ],
        &rows,
    )
}
