//! Expressions, by precedence climbing.
//!
//! Binding powers follow PostgreSQL's operator precedence table, lowest
//! first: `OR`, `AND`, `NOT`, `IS`, comparisons (`= <> < <= > >=`,
//! non-associative), `BETWEEN IN LIKE ILIKE` (non-associative), other
//! operators (`||`), `+ -`, `* / %`, `^`, unary `+ -`, `::`. Binary
//! operators are left-associative unless noted. `Display` in `display.rs`
//! uses the same numbers (exported as [`prec`]) to decide parentheses.
//!
//! The climbing loop is [`climb`]: an operand ([`prefix`]), then operators
//! binding at least as tightly as its minimum, each with its right side
//! parsed one level tighter. Every operand, parenthesis and operator
//! applied counts one nesting level against `MAX_DEPTH`. Once an
//! expression's first token has matched, its failures are fatal (`cut`).

use nom::combinator::{cut, map, opt};
use nom::multi::separated_list1;
use nom::sequence::{delimited, pair, preceded, separated_pair, terminated, tuple};
use nom::Parser;

use super::literal::{data_type, string_value};
use super::query::{at_query_start, opt_order_by, query};
use super::tokens::{
    col_label, enter, ident_value, kw, kw_of, many0, nested, tok, PError, PResult, Tokens,
};
use crate::ast::{
    BinaryOp, ColumnRef, CurrentValue, DataType, Expr, ExprKind, FunctionCall, Ident,
    IntervalField, Literal, ObjectName, Offset, UnaryOp,
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
fn binary_op(i: Tokens<'_>, token: Token) -> Option<(BinaryOp, u8)> {
    Some(match token.kind {
        TokenKind::Other => match i.text(token) {
            "<<" => (BinaryOp::ShiftLeft, prec::OTHER),
            ">>" => (BinaryOp::ShiftRight, prec::OTHER),
            "&" => (BinaryOp::BitAnd, prec::OTHER),
            "|" => (BinaryOp::BitOr, prec::OTHER),
            "#" => (BinaryOp::BitXor, prec::OTHER),
            "->" => (BinaryOp::Arrow, prec::OTHER),
            "->>" => (BinaryOp::LongArrow, prec::OTHER),
            "#>" => (BinaryOp::HashArrow, prec::OTHER),
            "#>>" => (BinaryOp::HashLongArrow, prec::OTHER),
            "@>" => (BinaryOp::Contains, prec::OTHER),
            "<@" => (BinaryOp::ContainedBy, prec::OTHER),
            "?" => (BinaryOp::Question, prec::OTHER),
            "?|" => (BinaryOp::QuestionPipe, prec::OTHER),
            "?&" => (BinaryOp::QuestionAmp, prec::OTHER),
            "#-" => (BinaryOp::HashMinus, prec::OTHER),
            "~" => (BinaryOp::RegexMatch, prec::OTHER),
            "~*" => (BinaryOp::RegexIMatch, prec::OTHER),
            "!~" => (BinaryOp::RegexNotMatch, prec::OTHER),
            "!~*" => (BinaryOp::RegexNotIMatch, prec::OTHER),
            "~~" => (BinaryOp::LikeOp, prec::OTHER),
            "~~*" => (BinaryOp::ILikeOp, prec::OTHER),
            "!~~" => (BinaryOp::NotLikeOp, prec::OTHER),
            "!~~*" => (BinaryOp::NotILikeOp, prec::OTHER),
            _ => return None,
        },
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

/// A call of `name(args)` with nothing else, named at byte `at`.
fn plain_call(name: &str, args: Vec<Expr>, at: usize) -> FunctionCall {
    FunctionCall {
        name: ObjectName {
            schema: None,
            name: name.to_string(),
            offset: Offset(at),
        },
        args,
        arg_names: Vec::new(),
        star: false,
        distinct: false,
        order_by: Vec::new(),
        filter: None,
        variadic: false,
        over: None,
    }
}

/// An expression node at byte `offset`.
fn node(kind: ExprKind, offset: usize) -> Expr {
    Expr {
        kind,
        offset: Offset(offset),
    }
}

/// A failure that no enclosing alternative may recover from.
fn fatal(e: nom::Err<PError>) -> nom::Err<PError> {
    match e {
        nom::Err::Error(e) => nom::Err::Failure(e),
        other => other,
    }
}

/// A fatal syntax error at `i`'s next token.
fn stuck<T>(i: Tokens<'_>) -> PResult<'_, T> {
    Err(nom::Err::Failure(PError::At(i.first())))
}

/// `expr` (PostgreSQL's `a_expr`; see the module documentation)
pub(crate) fn expr(i: Tokens<'_>) -> PResult<'_, Expr> {
    climb(i, 0)
}

/// An expression whose operators all bind at least as tightly as `min_bp`
/// (`expr_bp(prec::CMP)` is PostgreSQL's `b_expr`).
pub(crate) fn expr_bp<'a>(min_bp: u8) -> impl Fn(Tokens<'a>) -> PResult<'a, Expr> {
    move |i| climb(i, min_bp)
}

/// `expr {',' expr}`
pub(crate) fn expr_list(i: Tokens<'_>) -> PResult<'_, Vec<Expr>> {
    separated_list1(tok(TokenKind::Comma), cut(expr))(i)
}

/// Precedence climbing: an operand, then every operator binding at least
/// as tightly as `min_bp`.
fn climb(i: Tokens<'_>, min_bp: u8) -> PResult<'_, Expr> {
    // Plain calls rather than wrapping combinators on this path: it is
    // the recursion of nested expressions, so its frames bound how deep
    // input may nest on a small stack.
    enter(i)?;
    let result = prefix(i).and_then(|(i, lhs)| {
        // Each operator applied wraps `lhs` one level deeper; count the
        // levels against the depth limit so a long `a + b + c + ...` chain
        // cannot build a tree too deep to drop or print.
        let depth_on_entry = i.ctx.depth.get();
        let result = infix(i, lhs, min_bp).map_err(fatal);
        i.ctx.depth.set(depth_on_entry);
        result
    });
    i.ctx.depth.set(i.ctx.depth.get() - 1);
    result
}

/// The operators after an operand `lhs`.
///
/// A non-associative operator (`a = b`, `a LIKE b`, `a BETWEEN b AND c`,
/// `a IS DISTINCT FROM b`) followed by one of the same precedence is a
/// syntax error at the second, as in PostgreSQL's grammar; `a IS NULL IS
/// NULL` and `a IN (1) IN (x)` are fine there, and here.
fn infix(mut i: Tokens<'_>, mut lhs: Expr, min_bp: u8) -> PResult<'_, Expr> {
    let mut nonassoc: Option<u8> = None;
    loop {
        let token = i.first();
        let at = token.start;
        if let Some((op, bp)) = binary_op(i, token) {
            if bp < min_bp {
                break;
            }
            if nonassoc == Some(bp) {
                return stuck(i);
            }
            nonassoc = (bp == prec::CMP).then_some(bp);
            enter(i)?;
            if bp == prec::CMP {
                if let (rest, Some(e)) = quantified(i.skip(1), &lhs, op, at)? {
                    lhs = e;
                    i = rest;
                    continue;
                }
            }
            let (rest, right) = climb(i.skip(1), bp + 1)?;
            lhs = node(
                ExprKind::Binary {
                    op,
                    left: Box::new(lhs),
                    right: Box::new(right),
                },
                at,
            );
            i = rest;
            continue;
        }
        match token.kind {
            TokenKind::LBracket => {
                // `expr '[' [expr] [':' [expr]] ']'`: binds as tightly as `::`.
                enter(i)?;
                let (rest, e) = subscript(i, lhs)?;
                nonassoc = None;
                lhs = e;
                i = rest;
            }
            TokenKind::DoubleColon => {
                // `expr '::' data_type`: tighter than everything but atoms.
                enter(i)?;
                let (rest, data_type) = cut(data_type)(i.skip(1))?;
                nonassoc = None;
                lhs = node(
                    ExprKind::Cast {
                        expr: Box::new(lhs),
                        data_type,
                    },
                    at,
                );
                i = rest;
            }
            TokenKind::Word(Keyword::At)
                if matches!(i.kind(1), TokenKind::Word(Keyword::Time))
                    && matches!(i.kind(2), TokenKind::Word(Keyword::Zone)) =>
            {
                // `expr AT TIME ZONE zone` is `timezone(zone, expr)`; it
                // binds as tightly as `^` (PostgreSQL: just tighter).
                if prec::EXP < min_bp {
                    break;
                }
                enter(i)?;
                let (rest, zone) = climb(i.skip(3), prec::EXP + 1)?;
                nonassoc = None;
                let call = plain_call("timezone", vec![zone, lhs], at);
                lhs = node(ExprKind::Function(Box::new(call)), at);
                i = rest;
            }
            TokenKind::Word(Keyword::Is | Keyword::Isnull | Keyword::Notnull) => {
                if prec::IS < min_bp {
                    break;
                }
                if nonassoc == Some(prec::IS) {
                    return stuck(i);
                }
                enter(i)?;
                let (rest, e) = is_test(i, lhs)?;
                lhs = e;
                nonassoc = matches!(lhs.kind, ExprKind::IsDistinctFrom { .. }).then_some(prec::IS);
                i = rest;
            }
            TokenKind::Word(
                kw @ (Keyword::Not
                | Keyword::Between
                | Keyword::In
                | Keyword::Like
                | Keyword::Ilike
                | Keyword::Similar),
            ) => {
                if kw == Keyword::Not
                    && !matches!(
                        i.kind(1),
                        TokenKind::Word(
                            Keyword::Between
                                | Keyword::In
                                | Keyword::Like
                                | Keyword::Ilike
                                | Keyword::Similar
                        )
                    )
                {
                    break;
                }
                // `SIMILAR` without `TO` ends the expression (`substring(s
                // SIMILAR p ESCAPE e)`).
                let similar_at = usize::from(kw == Keyword::Not);
                if i.is_kw(similar_at, Keyword::Similar) && !i.is_kw(similar_at + 1, Keyword::To) {
                    break;
                }
                if prec::LIKE < min_bp {
                    break;
                }
                if nonassoc == Some(prec::LIKE) {
                    return stuck(i);
                }
                enter(i)?;
                let (rest, e) = like_in_between(i, lhs)?;
                lhs = e;
                nonassoc = (!matches!(
                    lhs.kind,
                    ExprKind::InList { .. } | ExprKind::InSubquery { .. }
                ))
                .then_some(prec::LIKE);
                i = rest;
            }
            _ => break,
        }
    }
    Ok((i, lhs))
}

/// `op ('ANY' | 'SOME' | 'ALL') '(' query ')'` after a comparison
/// operator, when `i` starts that way (else `None`: an ordinary operand).
#[inline(never)] // keeps its locals off the recursion path
fn quantified<'a>(i: Tokens<'a>, lhs: &Expr, op: BinaryOp, at: usize) -> PResult<'a, Option<Expr>> {
    let all = match i.first().kind {
        TokenKind::Word(Keyword::All) => true,
        TokenKind::Word(Keyword::Any | Keyword::Some) => false,
        _ => return Ok((i, None)),
    };
    if i.kind(1) != TokenKind::LParen {
        return Ok((i, None));
    }
    if !at_query_start(i.skip(2)) {
        // `op ANY (array)`
        let (i, array) = cut(terminated(expr, tok(TokenKind::RParen)))(i.skip(2))?;
        let kind = ExprKind::AnyArray {
            expr: Box::new(lhs.clone()),
            op,
            all,
            array: Box::new(array),
        };
        return Ok((i, Some(node(kind, at))));
    }
    let (i, query) = cut(terminated(query, tok(TokenKind::RParen)))(i.skip(2))?;
    let kind = ExprKind::Quantified {
        expr: Box::new(lhs.clone()),
        op,
        all,
        query: Box::new(query),
    };
    Ok((i, Some(node(kind, at))))
}

/// `'[' [expr] [':' [expr]] ']'` after an operand: a subscript or a slice.
#[inline(never)] // keeps its locals off the recursion path
fn subscript(i: Tokens<'_>, lhs: Expr) -> PResult<'_, Expr> {
    let at = i.first().start;
    let mut i = i.skip(1);
    let mut lower = None;
    if !matches!(i.first().kind, TokenKind::Colon | TokenKind::RBracket) {
        let (rest, e) = cut(expr)(i)?;
        lower = Some(Box::new(e));
        i = rest;
    }
    let mut upper = None;
    let slice = i.first().kind == TokenKind::Colon;
    if slice {
        i = i.skip(1);
        if i.first().kind != TokenKind::RBracket {
            let (rest, e) = cut(expr)(i)?;
            upper = Some(Box::new(e));
            i = rest;
        }
    } else if lower.is_none() {
        return stuck(i);
    }
    let (i, _) = cut(tok(TokenKind::RBracket))(i)?;
    let kind = ExprKind::Subscript {
        expr: Box::new(lhs),
        lower,
        upper,
        slice,
    };
    Ok((i, node(kind, at)))
}

/// `'ARRAY' '[' [expr {',' expr}] ']' | 'ARRAY' '(' query ')'`.
#[inline(never)] // keeps its locals off the recursion path
fn array_expr(i: Tokens<'_>) -> PResult<'_, Expr> {
    let at = i.first().start;
    let rest = i.skip(1);
    match rest.first().kind {
        TokenKind::LBracket => {
            let inner = rest.skip(1);
            if inner.first().kind == TokenKind::RBracket {
                return Ok((inner.skip(1), node(ExprKind::Array(Vec::new()), at)));
            }
            if inner.first().kind == TokenKind::LBracket {
                // Multidimensional `ARRAY[[...]]` is not supported.
                return stuck(inner);
            }
            let (rest, items) = cut(terminated(expr_list, tok(TokenKind::RBracket)))(inner)?;
            Ok((rest, node(ExprKind::Array(items), at)))
        }
        TokenKind::LParen if at_query_start(rest.skip(1)) => {
            let (rest, q) = cut(terminated(nested(query), tok(TokenKind::RParen)))(rest.skip(1))?;
            Ok((rest, node(ExprKind::ArraySubquery(Box::new(q)), at)))
        }
        _ => rest.fail(),
    }
}

/// What an `IS` tests for.
#[derive(Clone)]
enum IsTest {
    Null,
    Bool(Option<bool>),
    DistinctFrom(Expr),
}

/// `expr 'IS' ['NOT'] ('NULL' | 'TRUE' | 'FALSE' | 'UNKNOWN')
///   | expr 'IS' ['NOT'] 'DISTINCT' 'FROM' expr | expr ('ISNULL' | 'NOTNULL')`
fn is_test(i: Tokens<'_>, lhs: Expr) -> PResult<'_, Expr> {
    let t = i.first();
    let at = t.start;
    let operand = Box::new(lhs);
    let i = i.skip(1);
    let negated = match t.kind {
        TokenKind::Word(Keyword::Isnull) => Some(false),
        TokenKind::Word(Keyword::Notnull) => Some(true),
        _ => None,
    };
    if let Some(negated) = negated {
        let kind = ExprKind::IsNull {
            expr: operand,
            negated,
        };
        return Ok((i, node(kind, at)));
    }
    let (i, not) = opt(kw(Keyword::Not))(i)?;
    // Dispatched on the keyword after `IS [NOT]` (as nom 8's `dispatch!`).
    let rest = i.skip(1);
    let (i, test) = match i.keyword() {
        Some(Keyword::Null) => (rest, IsTest::Null),
        Some(Keyword::True) => (rest, IsTest::Bool(Some(true))),
        Some(Keyword::False) => (rest, IsTest::Bool(Some(false))),
        Some(Keyword::Unknown) => (rest, IsTest::Bool(None)),
        Some(Keyword::Distinct) => map(
            preceded(
                kw(Keyword::Distinct),
                cut(preceded(kw(Keyword::From), expr_bp(prec::IS + 1))),
            ),
            IsTest::DistinctFrom,
        )(i)?,
        _ => return stuck(i),
    };
    let negated = not.is_some();
    let kind = match test {
        IsTest::Null => ExprKind::IsNull {
            expr: operand,
            negated,
        },
        IsTest::Bool(value) => ExprKind::IsBool {
            expr: operand,
            value,
            negated,
        },
        IsTest::DistinctFrom(right) => ExprKind::IsDistinctFrom {
            left: operand,
            right: Box::new(right),
            negated,
        },
    };
    Ok((i, node(kind, at)))
}

/// `expr ['NOT'] 'BETWEEN' expr 'AND' expr
///   | expr ['NOT'] 'IN' '(' (query | expr {',' expr}) ')'
///   | expr ['NOT'] ('LIKE' | 'ILIKE') expr ['ESCAPE' expr]`
fn like_in_between(i: Tokens<'_>, lhs: Expr) -> PResult<'_, Expr> {
    let at = i.first().start;
    let (i, (not, op)) = pair(
        opt(kw(Keyword::Not)),
        kw_of(&[
            Keyword::Between,
            Keyword::In,
            Keyword::Like,
            Keyword::Ilike,
            Keyword::Similar,
        ]),
    )(i)?;
    let negated = not.is_some();
    let operand = Box::new(lhs);
    let (i, kind) = match op {
        Keyword::Similar => {
            // `x [NOT] SIMILAR TO p [ESCAPE e]` is `x [!]~ similar_to_escape(p[, e])`.
            let (i, (pattern, escape)) = preceded(
                cut(kw(Keyword::To)),
                cut(pair(
                    expr_bp(prec::OTHER),
                    opt(preceded(kw(Keyword::Escape), cut(expr_bp(prec::OTHER)))),
                )),
            )(i)?;
            let p_at = pattern.offset.0;
            let mut args = vec![pattern];
            args.extend(escape);
            let kind = ExprKind::Binary {
                op: if negated {
                    BinaryOp::RegexNotMatch
                } else {
                    BinaryOp::RegexMatch
                },
                left: operand,
                right: Box::new(node(
                    ExprKind::Function(Box::new(plain_call("similar_to_escape", args, p_at))),
                    p_at,
                )),
            };
            (i, kind)
        }
        Keyword::Between => {
            let (i, (low, high)) = cut(separated_pair(
                expr_bp(prec::OTHER),
                kw(Keyword::And),
                expr_bp(prec::OTHER),
            ))(i)?;
            let kind = ExprKind::Between {
                expr: operand,
                low: Box::new(low),
                high: Box::new(high),
                negated,
            };
            (i, kind)
        }
        Keyword::In => {
            let (i, _) = cut(tok(TokenKind::LParen))(i)?;
            if at_query_start(i) {
                let (i, query) = cut(terminated(query, tok(TokenKind::RParen)))(i)?;
                let kind = ExprKind::InSubquery {
                    expr: operand,
                    query: Box::new(query),
                    negated,
                };
                (i, kind)
            } else {
                let (i, list) = cut(terminated(expr_list, tok(TokenKind::RParen)))(i)?;
                let kind = ExprKind::InList {
                    expr: operand,
                    list,
                    negated,
                };
                (i, kind)
            }
        }
        _ if matches!(
            i.kind(0),
            TokenKind::Word(Keyword::Any | Keyword::Some | Keyword::All)
        ) && i.kind(1) == TokenKind::LParen =>
        {
            // `x [NOT] LIKE | ILIKE ANY | ALL (array)`
            let all = i.is_kw(0, Keyword::All);
            let (i, array) = cut(terminated(expr, tok(TokenKind::RParen)))(i.skip(2))?;
            let kind = ExprKind::LikeAny {
                expr: operand,
                array: Box::new(array),
                all,
                negated,
                case_insensitive: op == Keyword::Ilike,
            };
            (i, kind)
        }
        _ => {
            let (i, (pattern, escape)) = cut(pair(
                expr_bp(prec::OTHER),
                opt(preceded(kw(Keyword::Escape), cut(expr_bp(prec::OTHER)))),
            ))(i)?;
            let kind = ExprKind::Like {
                expr: operand,
                pattern: Box::new(pattern),
                escape: escape.map(Box::new),
                negated,
                case_insensitive: op == Keyword::Ilike,
            };
            (i, kind)
        }
    };
    Ok((i, node(kind, at)))
}

/// `primary` or a prefix operator applied to an operand:
/// `('+' | '-') expr | 'NOT' expr | literal | '(' expr ')' | '(' query ')' | ...`
fn prefix(i: Tokens<'_>) -> PResult<'_, Expr> {
    let t = i.first();
    let at = t.start;
    match t.kind {
        TokenKind::Number => {
            let number = Literal::Number(i.text(t).to_string());
            Ok((i.skip(1), node(ExprKind::Literal(number), at)))
        }
        TokenKind::String(..) => match string_value(i, t) {
            Ok(value) => Ok((
                i.skip(1),
                node(ExprKind::Literal(Literal::String(value)), at),
            )),
            Err(e) => i.fatal(e),
        },
        TokenKind::Minus | TokenKind::Plus => {
            let (rest, operand) = climb(i.skip(1), prec::UNARY).map_err(fatal)?;
            Ok((rest, signed(t, operand)))
        }
        TokenKind::LParen => {
            let inner = i.skip(1);
            enter(inner)?;
            let result = if at_query_start(inner) {
                query(inner).map(|(rest, q)| (rest, node(ExprKind::Subquery(Box::new(q)), at)))
            } else {
                climb(inner, 0)
            };
            inner.ctx.depth.set(inner.ctx.depth.get() - 1);
            let (rest, e) = result.map_err(fatal)?;
            if rest.first().kind == TokenKind::Comma {
                return overlaps(rest, e, at);
            }
            let (rest, _) = cut(tok(TokenKind::RParen))(rest)?;
            Ok((rest, e))
        }
        TokenKind::Other => {
            // Prefix operators bind as PostgreSQL's `qual_Op a_expr %prec
            // Op`: over everything tighter than the other operators.
            let op = match i.text(t) {
                "~" => UnaryOp::BitNot,
                "@" => UnaryOp::Abs,
                "|/" => UnaryOp::SquareRoot,
                "||/" => UnaryOp::CubeRoot,
                _ => return i.fail(),
            };
            let (rest, operand) = climb(i.skip(1), prec::OTHER + 1).map_err(fatal)?;
            let kind = ExprKind::Unary {
                op,
                expr: Box::new(operand),
            };
            Ok((rest, node(kind, at)))
        }
        TokenKind::Word(kw) => word_prefix(i, t, kw),
        TokenKind::QuotedIdent(_) => {
            if matches!(i.kind(1), TokenKind::String(..)) {
                return typed_string(i);
            }
            name_expr(i)
        }
        _ => i.fail(),
    }
}

/// `CURRENT_TIME`, `CURRENT_TIMESTAMP`, `LOCALTIME`, `LOCALTIMESTAMP`,
/// each with an optional `'(' precision ')'`: the value cast to the type
/// of that precision, as PostgreSQL rounds it.
#[inline(never)] // keeps its locals off the recursion path
fn current_with_precision(rest: Tokens<'_>, kw: Keyword, at: usize) -> PResult<'_, Expr> {
    let (value, typed): (CurrentValue, fn(Option<u32>) -> DataType) = match kw {
        Keyword::CurrentTime => (CurrentValue::CurrentTime, DataType::TimeTz),
        Keyword::CurrentTimestamp => (CurrentValue::CurrentTimestamp, DataType::TimestampTz),
        Keyword::Localtime => (CurrentValue::LocalTime, DataType::Time),
        _ => (CurrentValue::LocalTimestamp, DataType::Timestamp),
    };
    let e = node(ExprKind::CurrentValue(value), at);
    if rest.first().kind != TokenKind::LParen {
        return Ok((rest, e));
    }
    let (rest, p) = cut(delimited(
        tok(TokenKind::LParen),
        tok(TokenKind::Number),
        tok(TokenKind::RParen),
    ))(rest)?;
    let Ok(p) = rest.text(p).parse::<u32>() else {
        return stuck(rest);
    };
    let kind = ExprKind::Cast {
        expr: Box::new(e),
        data_type: typed(Some(p)),
    };
    Ok((rest, node(kind, at)))
}

/// `'(' a ',' b ')' 'OVERLAPS' '(' c ',' d ')'` after `( a`: the call
/// `overlaps(a, b, c, d)`, as PostgreSQL's grammar makes it. A side that
/// is not a pair is PostgreSQL's error.
#[inline(never)] // keeps its locals off the recursion path
fn overlaps(i: Tokens<'_>, first: Expr, at: usize) -> PResult<'_, Expr> {
    let (i, mut left) = cut(delimited(
        tok(TokenKind::Comma),
        expr_list,
        tok(TokenKind::RParen),
    ))(i)?;
    left.insert(0, first);
    let op = i.first();
    let (i, _) = cut(kw(Keyword::Overlaps))(i)?;
    // A row has two or more members: `(c)` is a syntax error at `)`.
    let (i, mut right) = map(cut(preceded(tok(TokenKind::LParen), expr)), |e| vec![e])(i)?;
    if i.first().kind != TokenKind::Comma {
        return stuck(i);
    }
    let (i, more) = cut(delimited(
        tok(TokenKind::Comma),
        expr_list,
        tok(TokenKind::RParen),
    ))(i)?;
    right.extend(more);
    for (side, list) in [("left", &left), ("right", &right)] {
        if list.len() != 2 {
            let e = i.ctx.error_msg(
                op,
                format!("wrong number of parameters on {side} side of OVERLAPS expression"),
            );
            return i.fatal(e);
        }
    }
    left.extend(right);
    let call = FunctionCall {
        name: ObjectName {
            schema: None,
            name: "overlaps".to_string(),
            offset: Offset(at),
        },
        args: left,
        arg_names: Vec::new(),
        variadic: false,
        over: None,
        star: false,
        distinct: false,
        order_by: Vec::new(),
        filter: None,
    };
    Ok((i, node(ExprKind::Function(Box::new(call)), op.start)))
}

/// `sign operand`, folding a minus written before a non-negative number
/// into the literal, as PostgreSQL's doNegate does.
fn signed(sign: Token, operand: Expr) -> Expr {
    let at = sign.start;
    if sign.kind == TokenKind::Minus {
        if let ExprKind::Literal(Literal::Number(text)) = &operand.kind {
            if !text.starts_with('-') {
                let mut negated = String::with_capacity(text.len() + 1);
                negated.push('-');
                negated.push_str(text);
                return node(ExprKind::Literal(Literal::Number(negated)), at);
            }
        }
    }
    let op = if sign.kind == TokenKind::Minus {
        UnaryOp::Minus
    } else {
        UnaryOp::Plus
    };
    node(
        ExprKind::Unary {
            op,
            expr: Box::new(operand),
        },
        at,
    )
}

/// An expression that starts with the unquoted word `t` (keyword `kw`):
/// `'TRUE' | 'FALSE' | 'NULL' | 'NOT' expr | 'DEFAULT' | 'CURRENT_DATE' | ...
///   | 'CASE' ... | 'CAST' '(' expr 'AS' data_type ')' | 'EXISTS' '(' query ')'
///   | type_name string | column_ref | function_call`
#[inline(never)] // keeps its locals off the recursion path
fn word_prefix<'a>(i: Tokens<'a>, t: Token, kw: Keyword) -> PResult<'a, Expr> {
    let at = t.start;
    let rest = i.skip(1);
    let simple = |kind: ExprKind| Ok((rest, node(kind, at)));
    let current = |value: CurrentValue| Ok((rest, node(ExprKind::CurrentValue(value), at)));
    match kw {
        Keyword::Null => simple(ExprKind::Literal(Literal::Null)),
        Keyword::True => simple(ExprKind::Literal(Literal::Boolean(true))),
        Keyword::False => simple(ExprKind::Literal(Literal::Boolean(false))),
        Keyword::Default => simple(ExprKind::Default),
        Keyword::Not => {
            let (rest, operand) = climb(rest, prec::NOT).map_err(fatal)?;
            let kind = ExprKind::Unary {
                op: UnaryOp::Not,
                expr: Box::new(operand),
            };
            Ok((rest, node(kind, at)))
        }
        Keyword::CurrentDate => current(CurrentValue::CurrentDate),
        Keyword::CurrentTime
        | Keyword::CurrentTimestamp
        | Keyword::Localtime
        | Keyword::Localtimestamp => current_with_precision(rest, kw, at),
        Keyword::CurrentUser | Keyword::User => current(CurrentValue::CurrentUser),
        Keyword::SessionUser => current(CurrentValue::SessionUser),
        Keyword::Case => case(i),
        Keyword::Array => array_expr(i),
        Keyword::Cast => map(
            cut(delimited(
                tok(TokenKind::LParen),
                separated_pair(expr, kw_as, data_type),
                tok(TokenKind::RParen),
            )),
            |(operand, data_type)| {
                let kind = ExprKind::Cast {
                    expr: Box::new(operand),
                    data_type,
                };
                node(kind, at)
            },
        )(rest),
        Keyword::Exists if rest.first().kind == TokenKind::LParen => {
            let (rest, query) =
                cut(terminated(nested(query), tok(TokenKind::RParen)))(rest.skip(1))?;
            Ok((rest, node(ExprKind::Exists(Box::new(query)), at)))
        }
        _ if is_type_keyword(kw) => {
            // `INTERVAL '1 day'`, `DOUBLE PRECISION '1.5'`, ... or, for
            // the column-name keywords, a column named like a type.
            match data_type(i) {
                Ok((after, _)) if matches!(after.first().kind, TokenKind::String(..)) => {
                    return typed_string(i);
                }
                // `INTERVAL(p) '...'`
                Ok((after, DataType::Interval))
                    if after.kind(0) == TokenKind::LParen
                        && after.kind(1) == TokenKind::Number
                        && after.kind(2) == TokenKind::RParen
                        && matches!(after.kind(3), TokenKind::String(..)) =>
                {
                    return typed_string(i);
                }
                // A type of several words (`DOUBLE PRECISION`, `TIMESTAMP
                // WITH TIME ZONE`) is a type: without its string, the error
                // is after it, as in PostgreSQL.
                Ok((after, _))
                    if matches!(rest.first().kind, TokenKind::Word(_))
                        && after.index() > rest.index() =>
                {
                    return after.fail();
                }
                // A bad type modifier (`float(0)`) is reported as such.
                Err(nom::Err::Failure(PError::Full(e))) if e.kind != ParseErrorKind::Syntax => {
                    return Err(nom::Err::Failure(PError::Full(e)));
                }
                _ => {}
            }
            if kw.is_col_name() {
                name_expr(i)
            } else {
                i.fail()
            }
        }
        _ if matches!(rest.first().kind, TokenKind::String(..)) && kw.is_func_name() => {
            typed_string(i)
        }
        _ if rest.first().kind == TokenKind::LParen && kw.is_func_name() => name_expr(i),
        _ if kw.is_col_name() => name_expr(i),
        // A function-name keyword that is neither called nor typing a
        // string: PostgreSQL's parser fails at the token after it.
        _ if kw.is_func_name() => rest.fail(),
        _ => i.fail(),
    }
}

/// `AS` inside `CAST(...)`.
fn kw_as(i: Tokens<'_>) -> PResult<'_, Token> {
    kw(Keyword::As).parse(i)
}

/// `type_name string`: a typed literal.
fn typed_string(i: Tokens<'_>) -> PResult<'_, Expr> {
    let (i, data_type) = data_type(i)?;
    // `INTERVAL(p) 'string'`
    let (i, mut precision) = match (data_type == DataType::Interval, i.toks.get(3)) {
        (true, Some(t)) if matches!(t.kind, TokenKind::String(..)) => {
            match (
                i.first().kind,
                i.toks.get(1).map(|t| t.kind),
                i.toks.get(2).map(|t| t.kind),
            ) {
                (TokenKind::LParen, Some(TokenKind::Number), Some(TokenKind::RParen)) => {
                    match i.text(i.toks[1]).parse::<u32>() {
                        Ok(p) => (i.skip(3), Some(p)),
                        Err(_) => (i, None),
                    }
                }
                _ => (i, None),
            }
        }
        _ => (i, None),
    };
    let t = i.first();
    // PostgreSQL locates the constant at its string (errors point there).
    let at = t.start;
    if !matches!(t.kind, TokenKind::String(..)) {
        return stuck(i);
    }
    let value = match string_value(i, t) {
        Ok(value) => value,
        Err(e) => return i.fatal(e),
    };
    let i = i.skip(1);
    let (i, fields) = if data_type == DataType::Interval {
        interval_qualifier(i)
    } else {
        (i, None)
    };
    // `... SECOND(p)`
    let i = match (fields, i.first().kind, i.toks.get(1), i.toks.get(2)) {
        (Some((_, IntervalField::Second)), TokenKind::LParen, Some(n), Some(r))
            if n.kind == TokenKind::Number && r.kind == TokenKind::RParen =>
        {
            match i.text(*n).parse::<u32>() {
                Ok(p) => {
                    precision = Some(p);
                    i.skip(3)
                }
                Err(_) => i,
            }
        }
        _ => i,
    };
    Ok((
        i,
        node(
            ExprKind::TypedString {
                data_type,
                value,
                fields,
                precision,
            },
            at,
        ),
    ))
}

/// `[field ['TO' field]]` after `INTERVAL 'string'`: `YEAR`, `DAY TO
/// SECOND`, ... (PostgreSQL's `opt_interval`; `SECOND(p)` is not read).
fn interval_qualifier(i: Tokens<'_>) -> (Tokens<'_>, Option<(IntervalField, IntervalField)>) {
    let field = |i: Tokens<'_>, k: usize| -> Option<IntervalField> {
        let t = *i.toks.get(k)?;
        match t.kind {
            TokenKind::Word(_) => IntervalField::from_word(&ident_value(i, t)),
            _ => None,
        }
    };
    let Some(from) = field(i, 0) else {
        return (i, None);
    };
    if i.is_kw(1, Keyword::To) {
        if let Some(to) = field(i, 2) {
            let valid = matches!(
                (from, to),
                (IntervalField::Year, IntervalField::Month)
                    | (
                        IntervalField::Day,
                        IntervalField::Hour | IntervalField::Minute | IntervalField::Second
                    )
                    | (
                        IntervalField::Hour,
                        IntervalField::Minute | IntervalField::Second
                    )
                    | (IntervalField::Minute, IntervalField::Second)
            );
            if valid {
                return (i.skip(3), Some((from, to)));
            }
        }
    }
    (i.skip(1), Some((from, from)))
}

/// `column_ref ::= col_id ['.' col_label ['.' col_label]]`, or a call
/// `[col_id '.'] func_name '(' ... ')'`.
fn name_expr(i: Tokens<'_>) -> PResult<'_, Expr> {
    let first = i.first();
    let at = first.start;
    let mut parts = vec![ident_value(i, first)];
    let mut i = i.skip(1);
    while i.first().kind == TokenKind::Dot && parts.len() < 3 {
        let (rest, part) = cut(col_label)(i.skip(1))?;
        parts.push(part);
        i = rest;
    }
    if i.first().kind == TokenKind::LParen && parts.len() <= 2 {
        let name = parts.pop().unwrap_or_default();
        let name = ObjectName {
            schema: parts.pop(),
            name,
            offset: Offset(at),
        };
        let (i, call) = call(i, name)?;
        let (i, call) = over(i, call)?;
        return Ok((i, node(ExprKind::Function(Box::new(call)), at)));
    }
    let column = parts.pop().unwrap_or_default();
    let table = parts.pop();
    let schema = parts.pop();
    let column = ColumnRef {
        schema,
        table,
        column,
    };
    Ok((i, node(ExprKind::Column(column), at)))
}

/// The call of `name`, for a table function in `FROM`.
pub(crate) fn function_call<'a>(
    name: ObjectName,
) -> impl FnMut(Tokens<'a>) -> PResult<'a, FunctionCall> {
    move |i| call(i, name.clone())
}

/// `'(' ['*' | call_args] ')' ['FILTER' '(' 'WHERE' expr ')']` after the name of a call.
/// `call_args ::= ['DISTINCT' | 'ALL'] expr {',' expr} ['ORDER' 'BY' order_item {',' order_item}]`
///
/// The argument list counts one nesting level, as a parenthesis does.
/// A call's arguments, each `value`, `name => value` or `name := value`.
fn call_args(i: Tokens<'_>) -> PResult<'_, (Vec<Expr>, Vec<Option<Ident>>, bool)> {
    let mut args = Vec::new();
    let mut names = Vec::new();
    let mut i = i;
    loop {
        if i.is_kw(0, Keyword::Variadic) {
            // `VARIADIC expr` ends the argument list.
            let (rest, e) = cut(expr)(i.skip(1))?;
            names.push(None);
            args.push(e);
            return Ok((rest, (args, names, true)));
        }
        let t = i.first();
        // `name => value` (one operator token) or `name := value`.
        let arrow = match (i.kind(1), i.kind(2)) {
            (TokenKind::Other, _) if i.text(i.toks[1]) == "=>" => 2,
            (TokenKind::Colon, TokenKind::Eq) if i.toks[1].end == i.toks[2].start => 3,
            _ => 0,
        };
        if arrow > 0 && matches!(t.kind, TokenKind::Word(_) | TokenKind::QuotedIdent(_)) {
            names.push(Some(ident_value(i, t)));
            i = i.skip(arrow);
        } else {
            names.push(None);
        }
        let (rest, e) = cut(expr)(i)?;
        args.push(e);
        i = rest;
        if i.first().kind != TokenKind::Comma {
            return Ok((i, (args, names, false)));
        }
        i = i.skip(1);
    }
}

fn call(i: Tokens<'_>, name: ObjectName) -> PResult<'_, FunctionCall> {
    enter(i)?;
    let result = call_inner(i, name);
    i.ctx.depth.set(i.ctx.depth.get() - 1);
    result
}

fn call_inner(i: Tokens<'_>, name: ObjectName) -> PResult<'_, FunctionCall> {
    let (i, _) = tok(TokenKind::LParen).parse(i)?;
    let mut call = FunctionCall {
        name,
        args: Vec::new(),
        arg_names: Vec::new(),
        star: false,
        distinct: false,
        order_by: Vec::new(),
        filter: None,
        variadic: false,
        over: None,
    };
    let (i, special) = special_args(i, &mut call.name).map_err(fatal)?;
    let i = if let Some(args) = special {
        call.args = args;
        i
    } else if i.first().kind == TokenKind::Star {
        call.star = true;
        i.skip(1)
    } else if i.first().kind != TokenKind::RParen {
        let (i, (quantifier, (args, names, variadic), order_by)) = cut(tuple((
            opt(kw_of(&[Keyword::Distinct, Keyword::All])),
            call_args,
            opt_order_by,
        )))(i)?;
        call.distinct = quantifier == Some(Keyword::Distinct);
        call.args = args;
        call.variadic = variadic;
        if names.iter().any(Option::is_some) {
            call.arg_names = names;
        }
        call.order_by = order_by;
        i
    } else {
        i
    };
    let (i, _) = cut(tok(TokenKind::RParen))(i)?;
    if i.is_kw(0, Keyword::Filter) && i.kind(1) == TokenKind::LParen {
        let (i, filter) = cut(delimited(
            tuple((
                kw(Keyword::Filter),
                tok(TokenKind::LParen),
                kw(Keyword::Where),
            )),
            expr,
            tok(TokenKind::RParen),
        ))(i)?;
        call.filter = Some(Box::new(filter));
        return Ok((i, call));
    }
    Ok((i, call))
}

/// `[over_clause]` after a call in an expression (in FROM, as in
/// PostgreSQL, `OVER` would be an alias).
fn over(i: Tokens<'_>, mut call: FunctionCall) -> PResult<'_, FunctionCall> {
    if !super::window::at_over(i) {
        return Ok((i, call));
    }
    let (i, spec) = super::window::over_clause(i)?;
    call.over = Some(Box::new(spec));
    Ok((i, call))
}

/// `{',' expr}`: the rest of an ordinary argument list.
fn more_args(i: Tokens<'_>) -> PResult<'_, Vec<Expr>> {
    many0(preceded(tok(TokenKind::Comma), cut(expr)))(i)
}

/// The SQL-standard keyword forms of a few functions, read as ordinary
/// calls (PostgreSQL's grammar does the same rewriting):
/// - `'EXTRACT' '(' (col_label | string) 'FROM' expr ')'` is `extract('field', x)`;
/// - `'SUBSTRING' '(' expr ('FROM' expr ['FOR' expr] | 'FOR' expr ['FROM' expr]) ')'`
///   is `substring(s, a[, b])` (`a` is 1 when only FOR is given);
/// - `'OVERLAY' '(' expr 'PLACING' expr 'FROM' expr ['FOR' expr] ')'` is
///   `overlay(s, t, n[, m])`;
/// - `'POSITION' '(' expr 'IN' expr ')'` is `position(a, b)`;
/// - `'TRIM' '(' ['BOTH' | 'LEADING' | 'TRAILING'] [expr] 'FROM' expr ')'` is
///   `btrim` / `ltrim` / `rtrim(s[, chars])`.
///
/// Called after the opening parenthesis. Returns `None`, consuming
/// nothing, when the call is not one of these forms; the comma forms the
/// rewriting produces parse back to the same tree.
fn special_args<'a>(i: Tokens<'a>, name: &mut ObjectName) -> PResult<'a, Option<Vec<Expr>>> {
    if name.schema.is_some() {
        return Ok((i, None));
    }
    let closing = i.first().kind == TokenKind::RParen;
    match name.name.as_str() {
        "extract" if i.is_kw(1, Keyword::From) => {
            let at = i.first().start;
            let (i, field) = match i.first().kind {
                TokenKind::Word(_) | TokenKind::QuotedIdent(_) => col_label(i)?,
                _ => {
                    let (rest, e) = prefix(i)?;
                    match e.kind {
                        ExprKind::Literal(Literal::String(s)) => (rest, s),
                        _ => return stuck(rest),
                    }
                }
            };
            let (i, source) = preceded(kw(Keyword::From), cut(expr))(i)?;
            let field = node(ExprKind::Literal(Literal::String(field)), at);
            Ok((i, Some(vec![field, source])))
        }
        "substring" if !closing => {
            let (i, s) = expr(i)?;
            if i.is_kw(0, Keyword::From) {
                let (i, (start, count)) = preceded(
                    kw(Keyword::From),
                    cut(pair(expr, opt(preceded(kw(Keyword::For), cut(expr))))),
                )(i)?;
                let mut args = vec![s, start];
                args.extend(count);
                Ok((i, Some(args)))
            } else if i.is_kw(0, Keyword::Similar) {
                // `substring(s SIMILAR p ESCAPE e)` is `substring(s, p, e)`.
                let (i, (pattern, escape)) = preceded(
                    kw(Keyword::Similar),
                    cut(separated_pair(expr, kw(Keyword::Escape), expr)),
                )(i)?;
                Ok((i, Some(vec![s, pattern, escape])))
            } else if i.is_kw(0, Keyword::For) {
                let at = i.first().start;
                let (i, (count, start)) = preceded(
                    kw(Keyword::For),
                    cut(pair(expr, opt(preceded(kw(Keyword::From), cut(expr))))),
                )(i)?;
                let one = || node(ExprKind::Literal(Literal::Number("1".into())), at);
                Ok((i, Some(vec![s, start.unwrap_or_else(one), count])))
            } else {
                let (i, more) = more_args(i)?;
                let mut args = vec![s];
                args.extend(more);
                Ok((i, Some(args)))
            }
        }
        "overlay" if !closing => {
            let (i, s) = expr(i)?;
            if !i.is_kw(0, Keyword::Placing) {
                let (i, more) = more_args(i)?;
                let mut args = vec![s];
                args.extend(more);
                return Ok((i, Some(args)));
            }
            let (i, (t, (start, count))) = preceded(
                kw(Keyword::Placing),
                cut(pair(
                    expr,
                    preceded(
                        kw(Keyword::From),
                        pair(expr, opt(preceded(kw(Keyword::For), cut(expr)))),
                    ),
                )),
            )(i)?;
            let mut args = vec![s, t, start];
            args.extend(count);
            Ok((i, Some(args)))
        }
        "position" if !closing => {
            let (i, needle) = climb(i, prec::LIKE + 1)?;
            let (i, rest) = if i.is_kw(0, Keyword::In) {
                map(
                    preceded(kw(Keyword::In), cut(expr_bp(prec::LIKE + 1))),
                    |e| vec![e],
                )(i)?
            } else {
                more_args(i)?
            };
            let mut args = vec![needle];
            args.extend(rest);
            Ok((i, Some(args)))
        }
        "trim" if !closing => {
            let (i, side) = opt(kw_of(&[Keyword::Both, Keyword::Leading, Keyword::Trailing]))(i)?;
            let (i, args) = if i.is_kw(0, Keyword::From) {
                map(preceded(kw(Keyword::From), cut(expr)), |s| vec![s])(i)?
            } else {
                let (i, first) = expr(i)?;
                if i.is_kw(0, Keyword::From) {
                    map(preceded(kw(Keyword::From), cut(expr)), |s| {
                        vec![s, first.clone()]
                    })(i)?
                } else {
                    let (i, more) = more_args(i)?;
                    let mut args = vec![first];
                    args.extend(more);
                    if side.is_none() {
                        // `trim(s[, chars])`: an ordinary call.
                        return Ok((i, Some(args)));
                    }
                    (i, args)
                }
            };
            name.name = match side {
                Some(Keyword::Leading) => "ltrim",
                Some(Keyword::Trailing) => "rtrim",
                _ => "btrim",
            }
            .to_string();
            Ok((i, Some(args)))
        }
        _ => Ok((i, None)),
    }
}

/// `'CASE' [expr] 'WHEN' expr 'THEN' expr {'WHEN' expr 'THEN' expr} ['ELSE' expr] 'END'`
///
/// A `CASE` counts one nesting level, as a parenthesis does.
fn case(i: Tokens<'_>) -> PResult<'_, Expr> {
    nested(case_inner)(i)
}

fn case_inner(i: Tokens<'_>) -> PResult<'_, Expr> {
    let at = i.first().start;
    let i = i.skip(1);
    let (i, operand) = if i.is_kw(0, Keyword::When) {
        (i, None)
    } else {
        map(cut(expr), Some)(i)?
    };
    let (i, branches) = many0(preceded(
        kw(Keyword::When),
        cut(separated_pair(expr, kw(Keyword::Then), expr)),
    ))(i)?;
    if branches.is_empty() {
        return stuck(i);
    }
    let (i, (else_result, _)) = cut(pair(
        opt(preceded(kw(Keyword::Else), cut(expr))),
        kw(Keyword::End),
    ))(i)?;
    let kind = ExprKind::Case {
        operand: operand.map(Box::new),
        branches,
        else_result: else_result.map(Box::new),
    };
    Ok((i, node(kind, at)))
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
