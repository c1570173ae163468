//! A sequence in FROM (`SELECT * FROM s`): its one row `(last_value,
//! log_cnt, is_called)`, read when the statement is planned, as a row
//! source like an inspection function's.

use heapdb_grammar::ast;

use super::super::bind::Binder;
use super::super::scope::Scope;
use super::super::{Node, Plan, TableFunc, TableRows};
use super::Item;
use crate::error::Result;

impl Binder<'_> {
    /// The row source of sequence `name` whose row is `rows`.
    pub(super) fn sequence_item(
        &mut self,
        rows: TableRows,
        name: &ast::ObjectName,
        alias: Option<&ast::TableAlias>,
    ) -> Result<Item> {
        let (mut fields, rows) = rows;
        if let Some(a) = alias {
            for (f, c) in fields.iter_mut().zip(&a.columns) {
                f.name = c.clone();
            }
        }
        let qualifier = alias.map_or_else(|| name.name.clone(), |a| a.name.clone());
        let scope = Scope::of(&qualifier, fields.iter().map(|f| (f.name.clone(), f.ty)));
        Ok(Item {
            plan: Plan {
                rows: 1.0,
                fields,
                node: Node::Function {
                    func: TableFunc::Rows(rows),
                    name: name.name.clone(),
                    alias: alias.map(|a| a.name.clone()),
                },
            },
            scope,
        })
    }
}
