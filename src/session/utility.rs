//! SET, SHOW and RESET.
//!
//! Settings are per session; `SET LOCAL` lasts until the end of the
//! transaction block. The ring sizes are also handed to the buffer pool,
//! whose strategies use them (for every session: the pool has one set of
//! ring sizes).

use heapdb_grammar::ast;

use super::{Column, Notice, QueryResult, Session};
use crate::error::Result;
use crate::types::{DataType, Value};

/// The text of a SET value list, as PostgreSQL joins a list.
fn set_text(args: &[ast::SetArg]) -> String {
    args.iter()
        .map(|a| match a {
            ast::SetArg::String(s) | ast::SetArg::Number(s) | ast::SetArg::Word(s) => s.as_str(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Session {
    pub(crate) fn set(&mut self, s: &ast::Set) -> Result<QueryResult> {
        let mut r = QueryResult::empty("SET");
        if s.local && !self.txn_ref().block {
            r.notices.push(Notice::warning(
                "SET LOCAL can only be used in transaction blocks",
            ));
            return Ok(r);
        }
        if let ast::SetValue::Values(args) = &s.value {
            if let Some(r) = self.set_transaction_setting(&s.name, &set_text(args)) {
                return r;
            }
        }
        let defaults = self.db.defaults.clone();
        let apply = |settings: &mut crate::settings::Settings| match &s.value {
            ast::SetValue::Default => settings.reset(&s.name, &defaults),
            ast::SetValue::Values(args) => settings.set(&s.name, &set_text(args)),
        };
        apply(&mut self.settings)?;
        if !s.local {
            // Kept at COMMIT (the statement's transaction for a plain SET
            // outside a block).
            apply(&mut self.txn_mut().commit_settings)?;
        }
        Ok(r)
    }

    pub(crate) fn reset(&mut self, r: &ast::Reset) -> Result<QueryResult> {
        let defaults = self.db.defaults.clone();
        if r.name.eq_ignore_ascii_case("all") {
            self.settings.reset_all(&defaults);
            self.txn_mut().commit_settings.reset_all(&defaults);
        } else {
            self.settings.reset(&r.name, &defaults)?;
            self.txn_mut().commit_settings.reset(&r.name, &defaults)?;
        }
        Ok(QueryResult::empty("RESET"))
    }

    pub(crate) fn show(&mut self, s: &ast::Show) -> Result<QueryResult> {
        let mut r = QueryResult::empty("SHOW");
        r.returns_rows = true;
        let name = s.name.to_ascii_lowercase();
        if name == "all" {
            r.columns = ["name", "setting", "description"]
                .iter()
                .map(|n| Column {
                    name: n.to_string(),
                    ty: DataType::Text,
                })
                .collect();
            r.rows = self
                .settings
                .show_all()
                .into_iter()
                .map(|(n, v, d)| vec![Value::text(n), Value::text(&v), Value::text(d)])
                .collect();
            return Ok(r);
        }
        let (name, value) = if let Some(value) = self.show_transaction_setting(&name) {
            (name, value)
        } else {
            // The column is named as PostgreSQL spells the setting
            // (`TimeZone`), whatever case it was asked in.
            let def = crate::settings::lookup(&name)?;
            (def.name.to_string(), self.settings.show(&name)?)
        };
        r.columns = vec![Column {
            name,
            ty: DataType::Text,
        }];
        r.rows = vec![vec![Value::text(&value)]];
        Ok(r)
    }
}
