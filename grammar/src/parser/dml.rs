//! Data-changing statements: `INSERT`, `UPDATE`, `DELETE`.

use super::{PResult, Parser};
use crate::ast::{Assignment, Delete, Insert, Offset, SelectItem, Statement, Update};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// Parses `INSERT INTO table [(columns)] {query | DEFAULT VALUES} [RETURNING list]`.
    pub(crate) fn parse_insert(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Insert)?;
        self.expect_kw(Keyword::Into)?;
        let table = self.parse_object_name()?;
        // `(` starts a column list unless it opens a parenthesised query.
        let columns = if self.at(TokenKind::LParen)
            && !matches!(
                self.nth_kind(1),
                TokenKind::Word(Keyword::Select | Keyword::Values | Keyword::With)
                    | TokenKind::LParen
            ) {
            self.parse_paren_col_ids()?
        } else {
            Vec::new()
        };
        let source = if self.at_kw(Keyword::Default) && self.nth_is_kw(1, Keyword::Values) {
            self.bump();
            self.bump();
            None
        } else {
            Some(Box::new(self.parse_query()?))
        };
        let returning = self.parse_returning()?;
        Ok(Statement::Insert(Box::new(Insert {
            table,
            columns,
            source,
            returning,
        })))
    }

    /// Parses `UPDATE table [[AS] alias] SET col = expr, ... [FROM ...] [WHERE ...] [RETURNING ...]`.
    pub(crate) fn parse_update(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Update)?;
        let table = self.parse_target_table()?;
        let alias = self.parse_alias_name(&[Keyword::Set])?;
        self.expect_kw(Keyword::Set)?;
        let mut assignments = Vec::new();
        loop {
            let offset = Offset(self.peek().start);
            let column = self.parse_col_id()?;
            self.expect(TokenKind::Eq)?;
            let value = self.parse_expr()?;
            assignments.push(Assignment {
                column,
                value,
                offset,
            });
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        let from = if self.eat_kw(Keyword::From) {
            self.parse_from_list()?
        } else {
            Vec::new()
        };
        let where_clause = if self.eat_kw(Keyword::Where) {
            Some(self.parse_expr()?)
        } else {
            None
        };
        let returning = self.parse_returning()?;
        Ok(Statement::Update(Box::new(Update {
            table,
            alias,
            assignments,
            from,
            where_clause,
            returning,
        })))
    }

    /// Parses `DELETE FROM table [[AS] alias] [USING ...] [WHERE ...] [RETURNING ...]`.
    pub(crate) fn parse_delete(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Delete)?;
        self.expect_kw(Keyword::From)?;
        let table = self.parse_target_table()?;
        let alias = self.parse_alias_name(&[])?;
        let using = if self.eat_kw(Keyword::Using) {
            self.parse_from_list()?
        } else {
            Vec::new()
        };
        let where_clause = if self.eat_kw(Keyword::Where) {
            Some(self.parse_expr()?)
        } else {
            None
        };
        let returning = self.parse_returning()?;
        Ok(Statement::Delete(Box::new(Delete {
            table,
            alias,
            using,
            where_clause,
            returning,
        })))
    }

    /// Parses an optional `RETURNING list`.
    fn parse_returning(&mut self) -> PResult<Vec<SelectItem>> {
        if self.eat_kw(Keyword::Returning) {
            self.parse_select_list()
        } else {
            Ok(Vec::new())
        }
    }
}
