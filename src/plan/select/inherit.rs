//! Scans of a table that other tables inherit from (PostgreSQL's
//! `expand_inherited_rtentry`): `FROM p` reads `p` and every table that
//! inherits from it, directly or not, as an Append of their scans; `FROM
//! ONLY p` reads `p` alone.
//!
//! Each child is scanned for the parent's columns, found by name (a child
//! has every column of each parent, with the same type). The tables are
//! listed as PostgreSQL's `find_all_inheritors` lists them: the parent,
//! then breadth first, each table's children in oid order, each table once
//! (a child of two parents that share an ancestor is read once). The scans
//! are named `alias_1`, `alias_2`, ... as EXPLAIN names them in PostgreSQL.

use std::sync::Arc;

use crate::catalog::TableDef;
use crate::err;
use crate::error::Result;
use crate::plan::bind::Binder;
use crate::plan::{Node, Plan};

impl Binder<'_> {
    /// The scan of `table` and its descendants for its `columns`, under
    /// the name `alias`.
    pub(super) fn inherited_scan(
        &mut self,
        table: &Arc<TableDef>,
        alias: &str,
        columns: &[usize],
    ) -> Result<Plan> {
        let tables = self.all_inheritors(table)?;
        let mut inputs = Vec::with_capacity(tables.len());
        for (k, t) in tables.iter().enumerate() {
            let mut cols = Vec::with_capacity(columns.len());
            for &i in columns {
                let name = &table.columns[i].name;
                let j = t.column_index(name).ok_or_else(|| {
                    err!(
                        InternalError,
                        "column \"{name}\" of table \"{}\" is missing from its child \"{}\"",
                        table.name,
                        t.name
                    )
                })?;
                cols.push(j);
            }
            let mut scan = self.scan_plan(t.clone(), &format!("{alias}_{}", k + 1), cols, false);
            for (f, &i) in scan.fields.iter_mut().zip(columns) {
                f.name = table.columns[i].name.clone();
            }
            inputs.push(scan);
        }
        let fields = inputs[0].fields.clone();
        let rows = inputs.iter().map(|p| p.rows).sum();
        Ok(Plan {
            rows,
            fields,
            node: Node::Append { inputs },
        })
    }

    /// `table` and every table inheriting from it, each once, in
    /// PostgreSQL's order.
    fn all_inheritors(&mut self, table: &Arc<TableDef>) -> Result<Vec<Arc<TableDef>>> {
        let mut out = vec![table.clone()];
        let mut i = 0;
        while i < out.len() {
            let t = out[i].clone();
            i += 1;
            if !t.has_subclass {
                continue;
            }
            for c in self.ctx.children(&t)? {
                if !out.iter().any(|o| o.oid == c.oid) {
                    out.push(c);
                }
            }
        }
        Ok(out)
    }
}
