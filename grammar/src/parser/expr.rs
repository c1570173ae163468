//! Expressions, by precedence climbing.
//!
//! Binding powers follow PostgreSQL's operator precedence table, lowest
//! first: `OR`, `AND`, `NOT`, `IS`, comparisons (`= <> < <= > >=`,
//! non-associative), `BETWEEN IN LIKE ILIKE` (non-associative), other
//! operators (`||`), `+ -`, `* / %`, `^`, unary `+ -`, `::`. Binary
//! operators are left-associative unless noted. `Display` in `display.rs`
//! uses the same numbers (exported as [`prec`]) to decide parentheses.

use super::{LResult as PResult, Parser};
use crate::ast::{
    BinaryOp, ColumnRef, CurrentValue, Expr, ExprKind, FunctionCall, Literal, ObjectName, Offset,
    OrderBy, UnaryOp,
};
use crate::error::ParseErrorKind;
use crate::keywords::Keyword;
use crate::lexer::{Token, TokenKind};

/// Binding powers (precedences), shared with the printer.
pub mod prec {
    /// `OR`
    pub const OR: u8 = 1;
    /// `AND`
    pub const AND: u8 = 2;
    /// prefix `NOT`
    pub const NOT: u8 = 3;
    /// `IS ...`, `ISNULL`, `NOTNULL`
    pub const IS: u8 = 4;
    /// `= <> < <= > >=`
    pub const CMP: u8 = 5;
    /// `BETWEEN`, `IN`, `LIKE`, `ILIKE`
    pub const LIKE: u8 = 6;
    /// other operators: `||`
    pub const OTHER: u8 = 7;
    /// `+ -`
    pub const ADD: u8 = 8;
    /// `* / %`
    pub const MUL: u8 = 9;
    /// `^`
    pub const EXP: u8 = 10;
    /// prefix `+ -`
    pub const UNARY: u8 = 11;
    /// `::` (and atoms, which never need parentheses)
    pub const ATOM: u8 = 12;
}

/// The binary operator and its precedence for an infix token, if any.
fn binary_op(kind: TokenKind) -> Option<(BinaryOp, u8)> {
    Some(match kind {
        TokenKind::Word(Keyword::Or) => (BinaryOp::Or, prec::OR),
        TokenKind::Word(Keyword::And) => (BinaryOp::And, prec::AND),
        TokenKind::Eq => (BinaryOp::Eq, prec::CMP),
        TokenKind::NotEq => (BinaryOp::NotEq, prec::CMP),
        TokenKind::Lt => (BinaryOp::Lt, prec::CMP),
        TokenKind::LtEq => (BinaryOp::LtEq, prec::CMP),
        TokenKind::Gt => (BinaryOp::Gt, prec::CMP),
        TokenKind::GtEq => (BinaryOp::GtEq, prec::CMP),
        TokenKind::Concat => (BinaryOp::Concat, prec::OTHER),
        TokenKind::Plus => (BinaryOp::Plus, prec::ADD),
        TokenKind::Minus => (BinaryOp::Minus, prec::ADD),
        TokenKind::Star => (BinaryOp::Multiply, prec::MUL),
        TokenKind::Slash => (BinaryOp::Divide, prec::MUL),
        TokenKind::Percent => (BinaryOp::Modulo, prec::MUL),
        TokenKind::Caret => (BinaryOp::Exponent, prec::EXP),
        _ => return None,
    })
}

fn node(kind: ExprKind, offset: usize) -> Expr {
    Expr {
        kind,
        offset: Offset(offset),
    }
}

impl Parser<'_> {
    /// Parses a full expression (`a_expr`).
    pub(crate) fn parse_expr(&mut self) -> PResult<Expr> {
        self.parse_expr_bp(0)
    }

    /// Parses a comma-separated list of expressions.
    pub(crate) fn parse_expr_list(&mut self) -> PResult<Vec<Expr>> {
        let mut list = vec![self.parse_expr()?];
        while self.eat(TokenKind::Comma) {
            list.push(self.parse_expr()?);
        }
        Ok(list)
    }

    /// Parses an expression whose operators all bind at least as tightly as
    /// `min_bp`.
    pub(crate) fn parse_expr_bp(&mut self, min_bp: u8) -> PResult<Expr> {
        self.enter()?;
        let result = self.parse_expr_bp_inner(min_bp);
        self.leave();
        result
    }

    fn parse_expr_bp_inner(&mut self, min_bp: u8) -> PResult<Expr> {
        let mut lhs = self.parse_prefix()?;
        // Each operator applied here wraps `lhs` one level deeper; count the
        // levels against the depth limit so a long `a + b + c + ...` chain
        // cannot build a tree too deep to drop or print. (An error abandons
        // the parse, so the count needs restoring only on success.)
        let depth_on_entry = self.ctx.depth.get();
        // The precedence of the operator just applied at this level if it is
        // non-associative and ended with an expression (`a = b`, `a LIKE b`,
        // `a BETWEEN b AND c`, `a IS DISTINCT FROM b`): an operator of the
        // same precedence right after it is a syntax error, as in
        // PostgreSQL's grammar. `a IS NULL IS NULL` and `a IN (1) IN (x)`
        // are fine there, and here.
        let mut nonassoc: Option<u8> = None;
        loop {
            let token = self.peek();
            let at = token.start;
            if let Some((op, bp)) = binary_op(token.kind) {
                if bp < min_bp {
                    break;
                }
                if nonassoc == Some(bp) {
                    return Err(self.error());
                }
                nonassoc = (bp == prec::CMP).then_some(bp);
                self.enter()?;
                self.bump();
                let right = self.parse_expr_bp(bp + 1)?;
                lhs = node(
                    ExprKind::Binary {
                        op,
                        left: Box::new(lhs),
                        right: Box::new(right),
                    },
                    at,
                );
                continue;
            }
            match token.kind {
                TokenKind::DoubleColon => {
                    // `::` binds tighter than everything but atoms.
                    self.enter()?;
                    self.bump();
                    let data_type = self.parse_data_type()?;
                    nonassoc = None;
                    lhs = node(
                        ExprKind::Cast {
                            expr: Box::new(lhs),
                            data_type,
                        },
                        at,
                    );
                }
                TokenKind::Word(Keyword::Is | Keyword::Isnull | Keyword::Notnull) => {
                    if prec::IS < min_bp {
                        break;
                    }
                    if nonassoc == Some(prec::IS) {
                        return Err(self.error());
                    }
                    self.enter()?;
                    lhs = self.parse_is(lhs)?;
                    nonassoc =
                        matches!(lhs.kind, ExprKind::IsDistinctFrom { .. }).then_some(prec::IS);
                }
                TokenKind::Word(
                    kw @ (Keyword::Not
                    | Keyword::Between
                    | Keyword::In
                    | Keyword::Like
                    | Keyword::Ilike),
                ) => {
                    if kw == Keyword::Not
                        && !matches!(
                            self.nth_kind(1),
                            TokenKind::Word(
                                Keyword::Between | Keyword::In | Keyword::Like | Keyword::Ilike
                            )
                        )
                    {
                        break;
                    }
                    if prec::LIKE < min_bp {
                        break;
                    }
                    if nonassoc == Some(prec::LIKE) {
                        return Err(self.error());
                    }
                    self.enter()?;
                    lhs = self.parse_like_in_between(lhs)?;
                    nonassoc = (!matches!(
                        lhs.kind,
                        ExprKind::InList { .. } | ExprKind::InSubquery { .. }
                    ))
                    .then_some(prec::LIKE);
                }
                _ => break,
            }
        }
        self.ctx.depth.set(depth_on_entry);
        Ok(lhs)
    }

    /// Parses what follows `x` in `x IS ...`, `x ISNULL`, `x NOTNULL`.
    fn parse_is(&mut self, lhs: Expr) -> PResult<Expr> {
        let t = self.bump();
        let at = t.start;
        let operand = Box::new(lhs);
        match t.kind {
            TokenKind::Word(Keyword::Isnull) => {
                return Ok(node(
                    ExprKind::IsNull {
                        expr: operand,
                        negated: false,
                    },
                    at,
                ))
            }
            TokenKind::Word(Keyword::Notnull) => {
                return Ok(node(
                    ExprKind::IsNull {
                        expr: operand,
                        negated: true,
                    },
                    at,
                ))
            }
            _ => {}
        }
        let negated = self.eat_kw(Keyword::Not);
        let kind = match self.peek_keyword() {
            Some(Keyword::Null) => {
                self.bump();
                ExprKind::IsNull {
                    expr: operand,
                    negated,
                }
            }
            Some(kw @ (Keyword::True | Keyword::False | Keyword::Unknown)) => {
                self.bump();
                let value = match kw {
                    Keyword::True => Some(true),
                    Keyword::False => Some(false),
                    _ => None,
                };
                ExprKind::IsBool {
                    expr: operand,
                    value,
                    negated,
                }
            }
            Some(Keyword::Distinct) => {
                self.bump();
                self.expect_kw(Keyword::From)?;
                let right = self.parse_expr_bp(prec::IS + 1)?;
                ExprKind::IsDistinctFrom {
                    left: operand,
                    right: Box::new(right),
                    negated,
                }
            }
            _ => return Err(self.error()),
        };
        Ok(node(kind, at))
    }

    /// Parses `[NOT] BETWEEN | IN | LIKE | ILIKE ...` after `lhs`.
    fn parse_like_in_between(&mut self, lhs: Expr) -> PResult<Expr> {
        let at = self.peek().start;
        let negated = self.eat_kw(Keyword::Not);
        let t = self.bump();
        let operand = Box::new(lhs);
        let kind = match t.kind {
            TokenKind::Word(Keyword::Between) => {
                let low = self.parse_expr_bp(prec::OTHER)?;
                self.expect_kw(Keyword::And)?;
                let high = self.parse_expr_bp(prec::OTHER)?;
                ExprKind::Between {
                    expr: operand,
                    low: Box::new(low),
                    high: Box::new(high),
                    negated,
                }
            }
            TokenKind::Word(Keyword::In) => {
                self.expect(TokenKind::LParen)?;
                if self.at_query_start() {
                    let query = self.parse_query()?;
                    self.expect(TokenKind::RParen)?;
                    ExprKind::InSubquery {
                        expr: operand,
                        query: Box::new(query),
                        negated,
                    }
                } else {
                    let list = self.parse_expr_list()?;
                    self.expect(TokenKind::RParen)?;
                    ExprKind::InList {
                        expr: operand,
                        list,
                        negated,
                    }
                }
            }
            _ => {
                let case_insensitive = t.kind == TokenKind::Word(Keyword::Ilike);
                let pattern = self.parse_expr_bp(prec::OTHER)?;
                let escape = if self.eat_kw(Keyword::Escape) {
                    Some(Box::new(self.parse_expr_bp(prec::OTHER)?))
                } else {
                    None
                };
                ExprKind::Like {
                    expr: operand,
                    pattern: Box::new(pattern),
                    escape,
                    negated,
                    case_insensitive,
                }
            }
        };
        Ok(node(kind, at))
    }

    /// Parses a prefix operator application or an atom.
    fn parse_prefix(&mut self) -> PResult<Expr> {
        let t = self.peek();
        let at = t.start;
        match t.kind {
            TokenKind::Number => {
                self.bump();
                Ok(node(
                    ExprKind::Literal(Literal::Number(self.text(t).to_string())),
                    at,
                ))
            }
            TokenKind::String(..) => {
                self.bump();
                let value = self.string_value(t)?;
                Ok(node(ExprKind::Literal(Literal::String(value)), at))
            }
            TokenKind::Minus | TokenKind::Plus => {
                self.bump();
                let operand = self.parse_expr_bp(prec::UNARY)?;
                if t.kind == TokenKind::Minus {
                    // Fold a minus written before a non-negative number into
                    // the literal, as PostgreSQL's doNegate does.
                    if let ExprKind::Literal(Literal::Number(text)) = &operand.kind {
                        if !text.starts_with('-') {
                            let mut negated = String::with_capacity(text.len() + 1);
                            negated.push('-');
                            negated.push_str(text);
                            return Ok(node(ExprKind::Literal(Literal::Number(negated)), at));
                        }
                    }
                }
                let op = if t.kind == TokenKind::Minus {
                    UnaryOp::Minus
                } else {
                    UnaryOp::Plus
                };
                Ok(node(
                    ExprKind::Unary {
                        op,
                        expr: Box::new(operand),
                    },
                    at,
                ))
            }
            TokenKind::LParen => {
                self.bump();
                self.enter()?;
                let result = if self.at_query_start() {
                    self.parse_query()
                        .map(|q| node(ExprKind::Subquery(Box::new(q)), at))
                } else {
                    self.parse_expr()
                };
                self.leave();
                let e = result?;
                self.expect(TokenKind::RParen)?;
                Ok(e)
            }
            TokenKind::Word(kw) => self.parse_word_prefix(t, kw),
            TokenKind::QuotedIdent(_) => {
                if matches!(self.nth_kind(1), TokenKind::String(..)) {
                    return self.parse_typed_string();
                }
                self.parse_name_expr()
            }
            _ => Err(self.error()),
        }
    }

    /// Parses an expression that starts with an unquoted word.
    fn parse_word_prefix(&mut self, t: Token, kw: Keyword) -> PResult<Expr> {
        let at = t.start;
        let literal = |p: &mut Self, lit: Literal| {
            p.bump();
            Ok(node(ExprKind::Literal(lit), at))
        };
        let current = |p: &mut Self, value: CurrentValue| {
            p.bump();
            Ok(node(ExprKind::CurrentValue(value), at))
        };
        match kw {
            Keyword::Null => literal(self, Literal::Null),
            Keyword::True => literal(self, Literal::Boolean(true)),
            Keyword::False => literal(self, Literal::Boolean(false)),
            Keyword::Not => {
                self.bump();
                let operand = self.parse_expr_bp(prec::NOT)?;
                Ok(node(
                    ExprKind::Unary {
                        op: UnaryOp::Not,
                        expr: Box::new(operand),
                    },
                    at,
                ))
            }
            Keyword::Default => {
                self.bump();
                Ok(node(ExprKind::Default, at))
            }
            Keyword::CurrentDate => current(self, CurrentValue::CurrentDate),
            Keyword::CurrentTime => current(self, CurrentValue::CurrentTime),
            Keyword::CurrentTimestamp => current(self, CurrentValue::CurrentTimestamp),
            Keyword::Localtime => current(self, CurrentValue::LocalTime),
            Keyword::Localtimestamp => current(self, CurrentValue::LocalTimestamp),
            Keyword::CurrentUser | Keyword::User => current(self, CurrentValue::CurrentUser),
            Keyword::SessionUser => current(self, CurrentValue::SessionUser),
            Keyword::Case => self.parse_case(),
            Keyword::Cast => {
                self.bump();
                self.expect(TokenKind::LParen)?;
                let operand = self.parse_expr()?;
                self.expect_kw(Keyword::As)?;
                let data_type = self.parse_data_type()?;
                self.expect(TokenKind::RParen)?;
                Ok(node(
                    ExprKind::Cast {
                        expr: Box::new(operand),
                        data_type,
                    },
                    at,
                ))
            }
            Keyword::Exists if self.nth_kind(1) == TokenKind::LParen => {
                self.bump();
                self.bump();
                self.enter()?;
                let query = self.parse_query();
                self.leave();
                let query = query?;
                self.expect(TokenKind::RParen)?;
                Ok(node(ExprKind::Exists(Box::new(query)), at))
            }
            _ if is_type_keyword(kw) => {
                // `INTERVAL '1 day'`, `DOUBLE PRECISION '1.5'`, ... or, for
                // the column-name keywords, a column named like a type.
                let save = self.pos;
                match self.parse_data_type() {
                    Ok(_) if matches!(self.peek_kind(), TokenKind::String(..)) => {
                        self.pos = save;
                        return self.parse_typed_string();
                    }
                    // A bad type modifier (`float(0)`) is reported as such.
                    Err(e) if e.kind != ParseErrorKind::Syntax => return Err(e),
                    _ => {}
                }
                self.pos = save;
                if kw.is_col_name() {
                    self.parse_name_expr()
                } else {
                    Err(self.error())
                }
            }
            _ if matches!(self.nth_kind(1), TokenKind::String(..)) && kw.is_func_name() => {
                self.parse_typed_string()
            }
            _ if self.nth_kind(1) == TokenKind::LParen && kw.is_func_name() => {
                self.parse_name_expr()
            }
            _ if kw.is_col_name() => self.parse_name_expr(),
            _ => Err(self.error()),
        }
    }

    /// Parses `type 'string'`.
    fn parse_typed_string(&mut self) -> PResult<Expr> {
        let at = self.peek().start;
        let data_type = self.parse_data_type()?;
        let t = self.peek();
        if !matches!(t.kind, TokenKind::String(..)) {
            return Err(self.error());
        }
        self.bump();
        let value = self.string_value(t)?;
        Ok(node(ExprKind::TypedString { data_type, value }, at))
    }

    /// Parses a column reference (`c`, `t.c`, `s.t.c`) or a function call
    /// (`f(...)`, `s.f(...)`).
    fn parse_name_expr(&mut self) -> PResult<Expr> {
        let first = self.bump();
        let at = first.start;
        let first_name = self.ident_value(first);
        let mut parts = vec![first_name];
        while self.at(TokenKind::Dot) && parts.len() < 3 {
            self.bump();
            parts.push(self.parse_col_label()?);
        }
        if self.at(TokenKind::LParen) && parts.len() <= 2 {
            let name = if parts.len() == 2 {
                let name = parts.pop().expect("two parts");
                ObjectName {
                    schema: parts.pop(),
                    name,
                    offset: Offset(at),
                }
            } else {
                ObjectName {
                    schema: None,
                    name: parts.pop().expect("one part"),
                    offset: Offset(at),
                }
            };
            let call = self.parse_function_call(name)?;
            return Ok(node(ExprKind::Function(Box::new(call)), at));
        }
        let column = parts.pop().expect("at least one part");
        let table = parts.pop();
        let schema = parts.pop();
        Ok(node(
            ExprKind::Column(ColumnRef {
                schema,
                table,
                column,
            }),
            at,
        ))
    }

    /// Parses the parenthesised arguments and any `FILTER` clause of a call
    /// to `name`; the next token is `(`.
    pub(crate) fn parse_function_call(&mut self, name: ObjectName) -> PResult<FunctionCall> {
        self.expect(TokenKind::LParen)?;
        let mut call = FunctionCall {
            name,
            args: Vec::new(),
            star: false,
            distinct: false,
            order_by: Vec::new(),
            filter: None,
        };
        if let Some(args) = self.parse_special_args(&mut call.name)? {
            call.args = args;
        } else if self.eat(TokenKind::Star) {
            call.star = true;
        } else if !self.at(TokenKind::RParen) {
            if self.eat_kw(Keyword::Distinct) {
                call.distinct = true;
            } else {
                self.eat_kw(Keyword::All);
            }
            call.args = self.parse_expr_list()?;
            if self.at_kw(Keyword::Order) {
                call.order_by = self.parse_order_by()?;
            }
        }
        self.expect(TokenKind::RParen)?;
        if self.at_kw(Keyword::Filter) && self.nth_kind(1) == TokenKind::LParen {
            self.bump();
            self.bump();
            self.expect_kw(Keyword::Where)?;
            call.filter = Some(Box::new(self.parse_expr()?));
            self.expect(TokenKind::RParen)?;
        }
        Ok(call)
    }

    /// The SQL-standard keyword forms of a few functions, read as ordinary
    /// calls (PostgreSQL's grammar does the same rewriting):
    /// - `extract(field FROM x)` is `extract('field', x)`;
    /// - `substring(s FROM a [FOR b])` / `substring(s FOR b)` is
    ///   `substring(s, a[, b])` (`a` is 1 when only FOR is given);
    /// - `position(a IN b)` is `position(a, b)`;
    /// - `trim([BOTH | LEADING | TRAILING] [chars] FROM s)` is
    ///   `btrim` / `ltrim` / `rtrim(s[, chars])`.
    ///
    /// Called after the opening parenthesis. Returns `None`, consuming
    /// nothing, when the call is not one of these forms; the comma forms the
    /// rewriting produces parse back to the same tree.
    fn parse_special_args(&mut self, name: &mut ObjectName) -> PResult<Option<Vec<Expr>>> {
        if name.schema.is_some() {
            return Ok(None);
        }
        let from = TokenKind::Word(Keyword::From);
        match name.name.as_str() {
            "extract" if self.nth_kind(1) == from => {
                let at = self.peek().start;
                let field = match self.peek_kind() {
                    TokenKind::Word(_) | TokenKind::QuotedIdent(_) => self.parse_col_label()?,
                    _ => match self.parse_prefix()?.kind {
                        ExprKind::Literal(Literal::String(s)) => s,
                        _ => return Err(self.error()),
                    },
                };
                self.expect_kw(Keyword::From)?;
                let source = self.parse_expr()?;
                Ok(Some(vec![
                    node(ExprKind::Literal(Literal::String(field)), at),
                    source,
                ]))
            }
            "substring" if !self.at(TokenKind::RParen) => {
                let s = self.parse_expr()?;
                let mut args = vec![s];
                if self.eat_kw(Keyword::From) {
                    args.push(self.parse_expr()?);
                    if self.eat_kw(Keyword::For) {
                        args.push(self.parse_expr()?);
                    }
                } else if self.at_kw(Keyword::For) {
                    let at = self.bump().start;
                    let count = self.parse_expr()?;
                    let start = if self.eat_kw(Keyword::From) {
                        self.parse_expr()?
                    } else {
                        node(ExprKind::Literal(Literal::Number("1".into())), at)
                    };
                    args.push(start);
                    args.push(count);
                } else {
                    while self.eat(TokenKind::Comma) {
                        args.push(self.parse_expr()?);
                    }
                }
                Ok(Some(args))
            }
            "position" if !self.at(TokenKind::RParen) => {
                let needle = self.parse_expr_bp(prec::LIKE + 1)?;
                let mut args = vec![needle];
                if self.eat_kw(Keyword::In) {
                    args.push(self.parse_expr_bp(prec::LIKE + 1)?);
                } else {
                    while self.eat(TokenKind::Comma) {
                        args.push(self.parse_expr()?);
                    }
                }
                Ok(Some(args))
            }
            "trim" if !self.at(TokenKind::RParen) => {
                let side = if self.eat_kw(Keyword::Both) {
                    Some("btrim")
                } else if self.eat_kw(Keyword::Leading) {
                    Some("ltrim")
                } else if self.eat_kw(Keyword::Trailing) {
                    Some("rtrim")
                } else {
                    None
                };
                let args = if self.eat_kw(Keyword::From) {
                    vec![self.parse_expr()?]
                } else {
                    let first = self.parse_expr()?;
                    if self.eat_kw(Keyword::From) {
                        vec![self.parse_expr()?, first]
                    } else {
                        let mut args = vec![first];
                        while self.eat(TokenKind::Comma) {
                            args.push(self.parse_expr()?);
                        }
                        if side.is_none() {
                            // `trim(s[, chars])`: an ordinary call.
                            return Ok(Some(args));
                        }
                        args
                    }
                };
                name.name = side.unwrap_or("btrim").to_string();
                Ok(Some(args))
            }
            _ => Ok(None),
        }
    }

    /// Parses `CASE [operand] WHEN ... THEN ... [ELSE ...] END`.
    fn parse_case(&mut self) -> PResult<Expr> {
        let at = self.bump().start;
        let operand = if self.at_kw(Keyword::When) {
            None
        } else {
            Some(Box::new(self.parse_expr()?))
        };
        let mut branches = Vec::new();
        while self.eat_kw(Keyword::When) {
            let condition = self.parse_expr()?;
            self.expect_kw(Keyword::Then)?;
            let result = self.parse_expr()?;
            branches.push((condition, result));
        }
        if branches.is_empty() {
            return Err(self.error());
        }
        let else_result = if self.eat_kw(Keyword::Else) {
            Some(Box::new(self.parse_expr()?))
        } else {
            None
        };
        self.expect_kw(Keyword::End)?;
        Ok(node(
            ExprKind::Case {
                operand,
                branches,
                else_result,
            },
            at,
        ))
    }
}

/// Whether `kw` starts a type that can prefix a string literal.
fn is_type_keyword(kw: Keyword) -> bool {
    matches!(
        kw,
        Keyword::Smallint
            | Keyword::Int
            | Keyword::Integer
            | Keyword::Bigint
            | Keyword::Real
            | Keyword::Float
            | Keyword::Double
            | Keyword::Numeric
            | Keyword::Decimal
            | Keyword::Dec
            | Keyword::Boolean
            | Keyword::Varchar
            | Keyword::Char
            | Keyword::Character
            | Keyword::Timestamp
            | Keyword::Time
            | Keyword::Interval
    )
}

/// `expr` (see the module documentation for its precedence table)
pub(crate) fn expr(i: super::Tokens<'_>) -> super::PResult<'_, Expr> {
    super::legacy(|p| p.parse_expr())(i)
}

/// An expression whose operators all bind at least as tightly as `min_bp`.
pub(crate) fn expr_bp<'a>(min_bp: u8) -> impl Fn(super::Tokens<'a>) -> super::PResult<'a, Expr> {
    super::legacy(move |p| p.parse_expr_bp(min_bp))
}

/// `expr {',' expr}`
pub(crate) fn expr_list(i: super::Tokens<'_>) -> super::PResult<'_, Vec<Expr>> {
    super::legacy(|p| p.parse_expr_list())(i)
}

/// `'(' [call_args] ')' ['FILTER' '(' 'WHERE' expr ')']` after the name of a call.
pub(crate) fn function_call<'a>(
    name: ObjectName,
) -> impl Fn(super::Tokens<'a>) -> super::PResult<'a, FunctionCall> {
    super::legacy(move |p| p.parse_function_call(name.clone()))
}
