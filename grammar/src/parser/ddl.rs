//! Table DDL: `CREATE TABLE` (with columns, or `AS query`), `DROP TABLE`,
//! `TRUNCATE`.

use super::{PResult, Parser};
use crate::ast::{
    ColumnConstraint, ColumnDef, CreateTable, CreateTableAs, DropTable, Offset, SetArg, Statement,
    TableConstraint, Truncate,
};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

use super::expr::prec;

impl Parser<'_> {
    /// Parses `CREATE TABLE ...` in both forms.
    pub(crate) fn parse_create(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Create)?;
        self.expect_kw(Keyword::Table)?;
        let if_not_exists = if self.at_kw(Keyword::If) {
            self.bump();
            self.expect_kw(Keyword::Not)?;
            self.expect_kw(Keyword::Exists)?;
            true
        } else {
            false
        };
        let name = self.parse_object_name()?;
        // `name (a, b) AS query` or `name AS query` is CREATE TABLE AS; a
        // parenthesised list followed by anything else defines columns.
        if self.at_kw(Keyword::As) || (self.at(TokenKind::LParen) && self.paren_list_then_as()) {
            let columns = if self.at(TokenKind::LParen) {
                self.parse_paren_col_ids()?
            } else {
                Vec::new()
            };
            self.expect_kw(Keyword::As)?;
            let query = self.parse_query()?;
            return Ok(Statement::CreateTableAs(Box::new(CreateTableAs {
                if_not_exists,
                name,
                columns,
                query: Box::new(query),
            })));
        }
        self.expect(TokenKind::LParen)?;
        let mut create = CreateTable {
            if_not_exists,
            name,
            columns: Vec::new(),
            constraints: Vec::new(),
            with_options: Vec::new(),
        };
        if !self.at(TokenKind::RParen) {
            loop {
                self.parse_table_element(&mut create)?;
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
        }
        self.expect(TokenKind::RParen)?;
        if self.eat_kw(Keyword::With) {
            self.expect(TokenKind::LParen)?;
            loop {
                let option = self.parse_col_label()?;
                self.expect(TokenKind::Eq)?;
                let value = self.parse_set_arg()?;
                create.with_options.push((option, value));
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::RParen)?;
        }
        Ok(Statement::CreateTable(Box::new(create)))
    }

    /// Whether the parenthesised list at the cursor is followed by `AS`.
    fn paren_list_then_as(&self) -> bool {
        let mut depth = 0usize;
        for (i, t) in self.tokens[self.pos..].iter().enumerate() {
            match t.kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        return self.nth_is_kw(i + 1, Keyword::As);
                    }
                }
                TokenKind::Eof | TokenKind::Semicolon => return false,
                _ => {}
            }
        }
        false
    }

    /// Parses one column definition or table constraint.
    fn parse_table_element(&mut self, create: &mut CreateTable) -> PResult<()> {
        match self.peek_keyword() {
            Some(Keyword::Primary) => {
                self.bump();
                self.expect_kw(Keyword::Key)?;
                let columns = self.parse_paren_col_ids()?;
                create
                    .constraints
                    .push(TableConstraint::PrimaryKey(columns));
            }
            Some(Keyword::Unique) => {
                self.bump();
                let columns = self.parse_paren_col_ids()?;
                create.constraints.push(TableConstraint::Unique(columns));
            }
            Some(Keyword::Check) => {
                let check = self.parse_check()?;
                create.constraints.push(TableConstraint::Check(check));
            }
            _ => {
                let offset = Offset(self.peek().start);
                let name = self.parse_col_id()?;
                let data_type = self.parse_data_type()?;
                let mut constraints = Vec::new();
                while let Some(c) = self.parse_column_constraint()? {
                    constraints.push(c);
                }
                create.columns.push(ColumnDef {
                    name,
                    data_type,
                    constraints,
                    offset,
                });
            }
        }
        Ok(())
    }

    /// Parses `CHECK (expr)`.
    fn parse_check(&mut self) -> PResult<crate::ast::Expr> {
        self.expect_kw(Keyword::Check)?;
        self.expect(TokenKind::LParen)?;
        let e = self.parse_expr()?;
        self.expect(TokenKind::RParen)?;
        Ok(e)
    }

    /// Parses one column constraint, if one is next.
    fn parse_column_constraint(&mut self) -> PResult<Option<ColumnConstraint>> {
        Ok(Some(match self.peek_keyword() {
            Some(Keyword::Not) => {
                self.bump();
                self.expect_kw(Keyword::Null)?;
                ColumnConstraint::NotNull
            }
            Some(Keyword::Null) => {
                self.bump();
                ColumnConstraint::Null
            }
            Some(Keyword::Default) => {
                self.bump();
                // PostgreSQL's b_expr: no AND/OR/NOT/IS/LIKE at the top, so
                // that a following `NOT NULL` is a constraint.
                ColumnConstraint::Default(self.parse_expr_bp(prec::CMP)?)
            }
            Some(Keyword::Primary) => {
                self.bump();
                self.expect_kw(Keyword::Key)?;
                ColumnConstraint::PrimaryKey
            }
            Some(Keyword::Unique) => {
                self.bump();
                ColumnConstraint::Unique
            }
            Some(Keyword::Check) => ColumnConstraint::Check(self.parse_check()?),
            _ => return Ok(None),
        }))
    }

    /// Parses `DROP TABLE [IF EXISTS] name, ... [CASCADE | RESTRICT]`.
    pub(crate) fn parse_drop(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Drop)?;
        self.expect_kw(Keyword::Table)?;
        let if_exists = if self.at_kw(Keyword::If) {
            self.bump();
            self.expect_kw(Keyword::Exists)?;
            true
        } else {
            false
        };
        let mut names = vec![self.parse_object_name()?];
        while self.eat(TokenKind::Comma) {
            names.push(self.parse_object_name()?);
        }
        let cascade = if self.eat_kw(Keyword::Cascade) {
            true
        } else {
            self.eat_kw(Keyword::Restrict);
            false
        };
        Ok(Statement::DropTable(DropTable {
            if_exists,
            names,
            cascade,
        }))
    }

    /// Parses `TRUNCATE [TABLE] name, ...`.
    pub(crate) fn parse_truncate(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Truncate)?;
        self.eat_kw(Keyword::Table);
        let mut names = vec![self.parse_target_table()?];
        while self.eat(TokenKind::Comma) {
            names.push(self.parse_target_table()?);
        }
        Ok(Statement::Truncate(Truncate { names }))
    }

    /// Parses one `SET` value or storage-parameter value: a string, a
    /// (possibly negative) number, or a word.
    pub(crate) fn parse_set_arg(&mut self) -> PResult<SetArg> {
        let t = self.peek();
        match t.kind {
            TokenKind::String(..) => Ok(SetArg::String(self.parse_string()?)),
            TokenKind::Number => {
                self.bump();
                Ok(SetArg::Number(self.text(t).to_string()))
            }
            TokenKind::Minus | TokenKind::Plus if self.nth_kind(1) == TokenKind::Number => {
                self.bump();
                let n = self.bump();
                let sign = if t.kind == TokenKind::Minus { "-" } else { "" };
                Ok(SetArg::Number(format!("{sign}{}", self.text(n))))
            }
            TokenKind::Word(_) | TokenKind::QuotedIdent(_) => {
                self.bump();
                Ok(SetArg::Word(self.ident_value(t)))
            }
            _ => Err(self.error()),
        }
    }
}
