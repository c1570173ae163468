//! Queries: `WITH`, `SELECT`, `VALUES`, set operations, `ORDER BY`,
//! `LIMIT`/`OFFSET`, and `FROM` items (tables, table functions, subqueries,
//! joins).

use super::{LResult as PResult, Parser};
use crate::ast::{
    Cte, Expr, ExprKind, Join, JoinConstraint, JoinKind, Literal, ObjectName, Offset, Query,
    Select, SelectItem, SetExpr, SetOperator, TableAlias, TableRef,
};
use crate::keywords::Keyword;
use crate::lexer::{StringStyle, TokenKind};

impl Parser<'_> {
    /// Parses a query: `[WITH ...] body [ORDER BY ...] [LIMIT ...] [OFFSET ...]`.
    pub(crate) fn parse_query(&mut self) -> PResult<Query> {
        self.enter()?;
        let result = self.parse_query_inner();
        self.leave();
        result
    }

    fn parse_query_inner(&mut self) -> PResult<Query> {
        let with = if self.eat_kw(Keyword::With) {
            self.parse_ctes()?
        } else {
            Vec::new()
        };
        let body = self.parse_set_expr(0)?;
        let order_by = if self.at_kw(Keyword::Order) {
            self.parse_order_by()?
        } else {
            Vec::new()
        };
        let mut query = Query {
            with,
            body,
            order_by,
            limit: None,
            offset: None,
        };
        let (mut seen_limit, mut seen_offset) = (false, false);
        loop {
            if !seen_limit && self.eat_kw(Keyword::Limit) {
                seen_limit = true;
                if !self.eat_kw(Keyword::All) {
                    query.limit = Some(self.parse_expr()?);
                }
            } else if !seen_offset && self.eat_kw(Keyword::Offset) {
                seen_offset = true;
                query.offset = Some(self.parse_expr()?);
                if self.at_word("row") || self.at_word("rows") {
                    self.bump();
                }
            } else {
                return Ok(query);
            }
        }
    }

    /// Parses `name [(columns)] AS (query), ...` after `WITH`.
    fn parse_ctes(&mut self) -> PResult<Vec<Cte>> {
        let mut ctes = Vec::new();
        loop {
            let name = self.parse_col_id()?;
            let columns = if self.at(TokenKind::LParen) {
                self.parse_paren_col_ids()?
            } else {
                Vec::new()
            };
            self.expect_kw(Keyword::As)?;
            self.expect(TokenKind::LParen)?;
            let query = self.parse_query()?;
            self.expect(TokenKind::RParen)?;
            ctes.push(Cte {
                name,
                columns,
                query: Box::new(query),
            });
            if !self.eat(TokenKind::Comma) {
                return Ok(ctes);
            }
        }
    }

    /// Parses operands joined by set operators binding at least as tightly
    /// as `min_prec` (UNION and EXCEPT: 1, INTERSECT: 2; all left-associative).
    fn parse_set_expr(&mut self, min_prec: u8) -> PResult<SetExpr> {
        let mut left = self.parse_set_operand()?;
        // Each operation nests `left` one level deeper (see `parse_expr_bp`).
        let depth_on_entry = self.ctx.depth.get();
        loop {
            let (op, prec) = match self.peek_keyword() {
                Some(Keyword::Union) => (SetOperator::Union, 1),
                Some(Keyword::Except) => (SetOperator::Except, 1),
                Some(Keyword::Intersect) => (SetOperator::Intersect, 2),
                _ => break,
            };
            if prec < min_prec {
                break;
            }
            self.enter()?;
            self.bump();
            let all = if self.eat_kw(Keyword::All) {
                true
            } else {
                self.eat_kw(Keyword::Distinct);
                false
            };
            self.enter()?;
            let right = self.parse_set_expr(prec + 1);
            self.leave();
            left = SetExpr::SetOp {
                op,
                all,
                left: Box::new(left),
                right: Box::new(right?),
            };
        }
        self.ctx.depth.set(depth_on_entry);
        Ok(left)
    }

    /// Parses one operand of a set operation: a `SELECT`, a `VALUES` list or
    /// a parenthesised query.
    fn parse_set_operand(&mut self) -> PResult<SetExpr> {
        match self.peek_kind() {
            TokenKind::Word(Keyword::Select) => Ok(SetExpr::Select(Box::new(self.parse_select()?))),
            TokenKind::Word(Keyword::Values) => self.parse_values(),
            TokenKind::LParen => {
                self.bump();
                let query = self.parse_query()?;
                self.expect(TokenKind::RParen)?;
                if query.with.is_empty()
                    && query.order_by.is_empty()
                    && query.limit.is_none()
                    && query.offset.is_none()
                {
                    Ok(query.body)
                } else {
                    Ok(SetExpr::Nested(Box::new(query)))
                }
            }
            _ => Err(self.error()),
        }
    }

    /// Parses `VALUES (row), (row), ...`.
    fn parse_values(&mut self) -> PResult<SetExpr> {
        self.expect_kw(Keyword::Values)?;
        let mut rows = Vec::new();
        loop {
            self.expect(TokenKind::LParen)?;
            // Size the row exactly: counting the top-level commas ahead is
            // cheaper than regrowing the vector (this is the hot path of
            // piped INSERT scripts).
            let mut row = Vec::with_capacity(self.count_list_items());
            row.push(self.parse_values_item()?);
            while self.eat(TokenKind::Comma) {
                row.push(self.parse_values_item()?);
            }
            self.expect(TokenKind::RParen)?;
            rows.push(row);
            if !self.eat(TokenKind::Comma) {
                return Ok(SetExpr::Values(rows));
            }
        }
    }

    /// Parses one `VALUES` item. A lone literal (a number, a plain string or
    /// NULL followed by `,` or `)`) is built directly, skipping the
    /// precedence machinery: the same tree, for a third less work on the
    /// typical INSERT script.
    fn parse_values_item(&mut self) -> PResult<Expr> {
        let t = self.peek();
        if matches!(self.nth_kind(1), TokenKind::Comma | TokenKind::RParen) {
            let literal = match t.kind {
                TokenKind::Number => Some(Literal::Number(self.text(t).to_string())),
                TokenKind::String(StringStyle::Standard, false) => {
                    let text = self.text(t);
                    Some(Literal::String(text[1..text.len() - 1].to_string()))
                }
                TokenKind::Word(Keyword::Null) => Some(Literal::Null),
                _ => None,
            };
            if let Some(literal) = literal {
                self.bump();
                return Ok(Expr {
                    kind: ExprKind::Literal(literal),
                    offset: Offset(t.start),
                });
            }
        }
        self.parse_expr()
    }

    /// The number of comma-separated items from the cursor to the closing
    /// parenthesis of the current list (an estimate if the list is malformed).
    fn count_list_items(&self) -> usize {
        let mut depth = 0usize;
        let mut items = 1;
        for t in &self.tokens[self.pos..] {
            match t.kind {
                TokenKind::LParen | TokenKind::LBracket => depth += 1,
                TokenKind::RParen | TokenKind::RBracket => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                TokenKind::Comma if depth == 0 => items += 1,
                TokenKind::Semicolon | TokenKind::Eof => break,
                _ => {}
            }
        }
        items
    }

    /// Parses `SELECT [DISTINCT | ALL] list [FROM ...] [WHERE ...] [GROUP BY ...] [HAVING ...]`.
    fn parse_select(&mut self) -> PResult<Select> {
        self.expect_kw(Keyword::Select)?;
        let distinct = if self.eat_kw(Keyword::Distinct) {
            true
        } else {
            self.eat_kw(Keyword::All);
            false
        };
        let projection = if self.at_select_list_end() {
            Vec::new()
        } else {
            self.parse_select_list()?
        };
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
        let group_by = if self.eat_kw(Keyword::Group) {
            self.expect_kw(Keyword::By)?;
            self.parse_expr_list()?
        } else {
            Vec::new()
        };
        let having = if self.eat_kw(Keyword::Having) {
            Some(self.parse_expr()?)
        } else {
            None
        };
        Ok(Select {
            distinct,
            projection,
            from,
            where_clause,
            group_by,
            having,
        })
    }

    /// Whether the select list is empty (`SELECT FROM t`, `SELECT;`).
    fn at_select_list_end(&self) -> bool {
        match self.peek_kind() {
            TokenKind::Word(kw) => matches!(
                kw,
                Keyword::From
                    | Keyword::Where
                    | Keyword::Group
                    | Keyword::Having
                    | Keyword::Order
                    | Keyword::Limit
                    | Keyword::Offset
                    | Keyword::Union
                    | Keyword::Intersect
                    | Keyword::Except
            ),
            TokenKind::Semicolon | TokenKind::RParen | TokenKind::Eof => true,
            _ => false,
        }
    }

    /// Parses a select list or `RETURNING` list.
    pub(crate) fn parse_select_list(&mut self) -> PResult<Vec<SelectItem>> {
        let mut items = vec![self.parse_select_item()?];
        while self.eat(TokenKind::Comma) {
            items.push(self.parse_select_item()?);
        }
        Ok(items)
    }

    /// Parses `*`, `t.*`, `s.t.*` or `expr [[AS] alias]`.
    fn parse_select_item(&mut self) -> PResult<SelectItem> {
        let t = self.peek();
        if t.kind == TokenKind::Star {
            self.bump();
            return Ok(SelectItem::Wildcard(Offset(t.start)));
        }
        if self.at_col_id() && self.nth_kind(1) == TokenKind::Dot {
            let star_after_one = self.nth_kind(2) == TokenKind::Star;
            let star_after_two = matches!(
                self.nth_kind(2),
                TokenKind::Word(_) | TokenKind::QuotedIdent(_)
            ) && self.nth_kind(3) == TokenKind::Dot
                && self.nth_kind(4) == TokenKind::Star;
            if star_after_one || star_after_two {
                let name = self.parse_object_name()?;
                self.expect(TokenKind::Dot)?;
                self.expect(TokenKind::Star)?;
                return Ok(SelectItem::QualifiedWildcard(name));
            }
        }
        let expr = self.parse_expr()?;
        let alias = self.parse_column_alias()?;
        Ok(SelectItem::Expr { expr, alias })
    }

    /// Parses an optional output-column alias: `AS label` or a bare name.
    fn parse_column_alias(&mut self) -> PResult<Option<String>> {
        if self.eat_kw(Keyword::As) {
            return Ok(Some(self.parse_col_label()?));
        }
        let bare = match self.peek_kind() {
            TokenKind::Word(kw) => kw.is_bare_label(),
            TokenKind::QuotedIdent(_) => true,
            _ => false,
        };
        if bare {
            let t = self.bump();
            return Ok(Some(self.ident_value(t)));
        }
        Ok(None)
    }

    /// Parses a comma-separated `FROM` list.
    pub(crate) fn parse_from_list(&mut self) -> PResult<Vec<TableRef>> {
        let mut items = vec![self.parse_table_ref()?];
        while self.eat(TokenKind::Comma) {
            items.push(self.parse_table_ref()?);
        }
        Ok(items)
    }

    /// Parses a `FROM` item with any joins that follow it.
    fn parse_table_ref(&mut self) -> PResult<TableRef> {
        let mut left = self.parse_table_primary()?;
        // Each join nests `left` one level deeper (see `parse_expr_bp`).
        let depth_on_entry = self.ctx.depth.get();
        loop {
            let natural = self.eat_kw(Keyword::Natural);
            let kind = match self.peek_keyword() {
                Some(Keyword::Join) => JoinKind::Inner,
                Some(Keyword::Inner) => {
                    self.bump();
                    JoinKind::Inner
                }
                Some(kw @ (Keyword::Left | Keyword::Right | Keyword::Full)) => {
                    self.bump();
                    self.eat_kw(Keyword::Outer);
                    match kw {
                        Keyword::Left => JoinKind::Left,
                        Keyword::Right => JoinKind::Right,
                        _ => JoinKind::Full,
                    }
                }
                Some(Keyword::Cross) if !natural => {
                    self.bump();
                    JoinKind::Cross
                }
                _ if natural => return Err(self.error()),
                _ => {
                    self.ctx.depth.set(depth_on_entry);
                    return Ok(left);
                }
            };
            self.enter()?;
            self.expect_kw(Keyword::Join)?;
            let right = self.parse_table_primary()?;
            let constraint = if natural {
                JoinConstraint::Natural
            } else if kind == JoinKind::Cross {
                JoinConstraint::None
            } else if self.eat_kw(Keyword::On) {
                JoinConstraint::On(self.parse_expr()?)
            } else if self.eat_kw(Keyword::Using) {
                JoinConstraint::Using(self.parse_paren_col_ids()?)
            } else {
                return Err(self.error());
            };
            left = TableRef::Join(Box::new(Join {
                left,
                right,
                kind,
                constraint,
            }));
        }
    }

    /// Parses a table, table function, subquery or parenthesised join.
    fn parse_table_primary(&mut self) -> PResult<TableRef> {
        self.enter()?;
        let result = self.parse_table_primary_inner();
        self.leave();
        result
    }

    fn parse_table_primary_inner(&mut self) -> PResult<TableRef> {
        let t = self.peek();
        if t.kind == TokenKind::LParen {
            self.bump();
            if self.at_query_start() {
                let query = self.parse_query()?;
                self.expect(TokenKind::RParen)?;
                let alias = self.parse_table_alias(&[])?;
                return Ok(TableRef::Subquery {
                    query: Box::new(query),
                    alias,
                });
            }
            let inner = self.parse_table_ref()?;
            self.expect(TokenKind::RParen)?;
            return Ok(inner);
        }
        let name = self.parse_object_name()?;
        if self.at(TokenKind::LParen) {
            let call = self.parse_function_call(name)?;
            let alias = self.parse_table_alias(&[])?;
            return Ok(TableRef::Function {
                call,
                alias,
                offset: Offset(t.start),
            });
        }
        let alias = self.parse_table_alias(&[])?;
        Ok(TableRef::Table { name, alias })
    }

    /// Parses an optional `[AS] alias [(columns)]`; a bare alias may not be
    /// one of `excluded`.
    pub(crate) fn parse_table_alias(
        &mut self,
        excluded: &[Keyword],
    ) -> PResult<Option<TableAlias>> {
        let Some(name) = self.parse_alias_name(excluded)? else {
            return Ok(None);
        };
        let columns = if self.at(TokenKind::LParen) {
            self.parse_paren_col_ids()?
        } else {
            Vec::new()
        };
        Ok(Some(TableAlias { name, columns }))
    }

    /// Parses an optional `[AS] alias` (no column list); a bare alias may not
    /// be one of `excluded`.
    pub(crate) fn parse_alias_name(&mut self, excluded: &[Keyword]) -> PResult<Option<String>> {
        if self.eat_kw(Keyword::As) {
            return Ok(Some(self.parse_col_id()?));
        }
        if self.at_bare_alias(excluded) {
            let t = self.bump();
            return Ok(Some(self.ident_value(t)));
        }
        Ok(None)
    }

    /// Parses a table name as the target of a data-changing statement.
    pub(crate) fn parse_target_table(&mut self) -> PResult<ObjectName> {
        self.eat_kw(Keyword::Only);
        self.parse_object_name()
    }
}

/// `query ::= ['WITH' cte {',' cte}] set_expr ['ORDER BY' ...] {limit_clause | offset_clause}`
pub(crate) fn query(i: super::Tokens<'_>) -> super::PResult<'_, Query> {
    super::legacy(|p| p.parse_query())(i)
}

/// A query as a statement (it starts with SELECT, VALUES, WITH or `(`).
pub(crate) fn query_statement(i: super::Tokens<'_>) -> super::PResult<'_, crate::ast::Statement> {
    match i.first().kind {
        TokenKind::Word(Keyword::Select | Keyword::Values | Keyword::With) | TokenKind::LParen => {
            nom::combinator::map(query, |q| crate::ast::Statement::Query(Box::new(q)))(i)
        }
        _ => i.fail(),
    }
}

/// `select_item {',' select_item}`
pub(crate) fn select_list(i: super::Tokens<'_>) -> super::PResult<'_, Vec<SelectItem>> {
    super::legacy(|p| p.parse_select_list())(i)
}

/// `from_item {',' from_item}`
pub(crate) fn from_list(i: super::Tokens<'_>) -> super::PResult<'_, Vec<TableRef>> {
    super::legacy(|p| p.parse_from_list())(i)
}

/// `[['AS'] col_id]`; a bare alias may not be one of `excluded`.
pub(crate) fn alias_name<'a>(
    excluded: &'static [Keyword],
) -> impl Fn(super::Tokens<'a>) -> super::PResult<'a, Option<String>> {
    super::legacy(move |p| p.parse_alias_name(excluded))
}

/// `target_table ::= ['ONLY'] object_name`
pub(crate) fn target_table(i: super::Tokens<'_>) -> super::PResult<'_, ObjectName> {
    nom::sequence::preceded(
        nom::combinator::opt(super::tokens::kw(Keyword::Only)),
        super::object_name,
    )(i)
}
