//! The session's side of CREATE OPERATOR and DROP OPERATOR: the statement
//! snapshot, the definition made through a planning context
//! (`commands::operatorcmds`), its WARNINGs and the skipped NOTICEs.

use heapdb_grammar::ast;

use super::index_ddl::with_notices;
use super::result::Notice;
use super::{QueryResult, Session};
use crate::commands::operatorcmds::define_operator;
use crate::error::Result;

impl Session {
    pub(crate) fn create_operator(&mut self, c: &ast::CreateOperator) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let (def, warnings) = define_operator(c, &mut self.stmt_ctx(&snap))?;
        self.with_ddl(&snap, |ctx| ctx.create_operator(def))?;
        let mut r = QueryResult::empty("CREATE OPERATOR");
        r.notices.extend(warnings.into_iter().map(Notice::warning));
        Ok(r)
    }

    pub(crate) fn drop_operator(&mut self, d: &ast::DropOperator) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.drop_operator(d))?;
        Ok(with_notices("DROP OPERATOR", notices))
    }
}
