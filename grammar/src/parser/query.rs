//! Queries: `WITH`, `SELECT`, `VALUES`, set operations, `ORDER BY`,
//! `LIMIT`/`OFFSET`, and `FROM` items (tables, table functions, subqueries,
//! joins).
//!
//! Set operations and joins are left-deep loops; each operation applied
//! counts one nesting level against `MAX_DEPTH` (restored when the loop
//! ends), so a long chain cannot build a tree too deep to drop or print.

use nom::branch::alt;
use nom::combinator::{cut, map, opt, value};
use nom::multi::separated_list1;
use nom::sequence::{delimited, pair, preceded, terminated, tuple};
use nom::Parser;

use super::expr::{expr, expr_list, function_call};
use super::tokens::{
    col_id, col_label, comma_list1_sized, enter, ident_value, is_bare_alias, is_col_id, kw, kw_of,
    nested, tok, word, PResult, Tokens,
};
use super::{object_name, paren_col_list};
use crate::ast::{
    Cte, Expr, ExprKind, Join, JoinConstraint, JoinKind, Literal, ObjectName, Offset, OrderBy,
    Query, Select, SelectItem, SetExpr, SetOperator, Statement, TableAlias, TableRef,
};
use crate::keywords::{Keyword, KeywordClass};
use crate::lexer::{StringStyle, TokenKind};

/// A query as a statement (it starts with SELECT, VALUES, WITH, TABLE or `(`).
pub(crate) fn query_statement(i: Tokens<'_>) -> PResult<'_, Statement> {
    match i.first().kind {
        TokenKind::Word(Keyword::Select | Keyword::Values | Keyword::With | Keyword::Table)
        | TokenKind::LParen => map(query, |q| Statement::Query(Box::new(q)))(i),
        _ => i.fail(),
    }
}

/// `query ::= ['WITH' ['RECURSIVE'] cte {',' cte}] set_expr ['ORDER BY' order_item {',' order_item}]
///   {limit_clause | offset_clause}` (each clause at most once)
pub(crate) fn query(i: Tokens<'_>) -> PResult<'_, Query> {
    nested(query_inner)(i)
}

fn query_inner(i: Tokens<'_>) -> PResult<'_, Query> {
    let (i, with) = opt(preceded(
        kw(Keyword::With),
        cut(pair(
            opt(word("recursive")),
            separated_list1(tok(TokenKind::Comma), cut(cte)),
        )),
    ))(i)?;
    let with = with.map(|(recursive, mut ctes)| {
        for c in &mut ctes {
            c.recursive = recursive.is_some();
        }
        ctes
    });
    let (i, body) = set_expr(i, 0)?;
    let (mut i, order_by) = opt_order_by(i)?;
    let mut query = Query {
        with: with.unwrap_or_default(),
        body,
        order_by,
        limit: None,
        offset: None,
        with_ties: false,
    };
    let (mut seen_limit, mut seen_offset) = (false, false);
    loop {
        if !seen_limit && i.is_kw(0, Keyword::Limit) {
            seen_limit = true;
            let (rest, limit) = limit_clause(i)?;
            query.limit = limit;
            i = rest;
        } else if !seen_limit && i.is_kw(0, Keyword::Fetch) {
            seen_limit = true;
            let (rest, (limit, with_ties)) = fetch_clause(i)?;
            query.limit = Some(limit);
            query.with_ties = with_ties;
            i = rest;
        } else if !seen_offset && i.is_kw(0, Keyword::Offset) {
            seen_offset = true;
            let (rest, offset) = offset_clause(i)?;
            query.offset = Some(offset);
            i = rest;
        } else {
            return Ok((i, query));
        }
    }
}

/// `limit_clause ::= 'LIMIT' (expr | 'ALL')`
fn limit_clause(i: Tokens<'_>) -> PResult<'_, Option<Expr>> {
    preceded(
        kw(Keyword::Limit),
        cut(alt((value(None, kw(Keyword::All)), map(expr, Some)))),
    )(i)
}

/// `fetch_clause ::= 'FETCH' ('FIRST' | 'NEXT') [expr] ('ROW' | 'ROWS')
///   ('ONLY' | 'WITH' 'TIES')`: the count (1 when left out) and whether
/// ties are kept.
fn fetch_clause(i: Tokens<'_>) -> PResult<'_, (Expr, bool)> {
    let (i, start) = kw(Keyword::Fetch).parse(i)?;
    let (i, _) = cut(alt((
        kw(Keyword::First).map(|_| ()),
        word("next").map(|_| ()),
    )))(i)?;
    let next = i.first();
    let (i, count) = if matches!(next.kind, TokenKind::Word(_))
        && matches!(i.text(next).to_ascii_lowercase().as_str(), "row" | "rows")
    {
        let one = Expr {
            kind: ExprKind::Literal(Literal::Number("1".into())),
            offset: Offset(start.start),
        };
        (i, one)
    } else {
        cut(fetch_count)(i)?
    };
    let (i, _) = cut(alt((word("rows"), word("row"))))(i)?;
    let (i, ties) = cut(alt((
        value(false, kw(Keyword::Only)),
        value(true, pair(kw(Keyword::With), word("ties"))),
    )))(i)?;
    Ok((i, (count, ties)))
}

/// The count of FETCH FIRST: a primary expression, or a signed number
/// (PostgreSQL's `select_fetch_first_value`).
fn fetch_count(i: Tokens<'_>) -> PResult<'_, Expr> {
    super::expr::expr_bp(u8::MAX)(i)
}

/// `offset_clause ::= 'OFFSET' expr ['ROW' | 'ROWS']`
fn offset_clause(i: Tokens<'_>) -> PResult<'_, Expr> {
    preceded(
        kw(Keyword::Offset),
        cut(terminated(expr, opt(alt((word("row"), word("rows")))))),
    )(i)
}

/// `cte ::= col_id ['(' col_id {',' col_id} ')'] 'AS' [['NOT'] 'MATERIALIZED']
///   '(' query ')'`
fn cte(i: Tokens<'_>) -> PResult<'_, Cte> {
    let offset = Offset(i.first().start);
    map(
        tuple((
            col_id,
            cut(super::opt_paren_col_list),
            cut(kw(Keyword::As)),
            opt(alt((
                value(true, word("materialized")),
                value(false, pair(kw(Keyword::Not), cut(word("materialized")))),
            ))),
            cut(delimited(
                tok(TokenKind::LParen),
                query,
                tok(TokenKind::RParen),
            )),
        )),
        move |(name, columns, _, materialized, query)| Cte {
            name,
            columns,
            query: Box::new(query),
            recursive: false,
            materialized,
            offset,
        },
    )(i)
}

/// `set_expr ::= set_term {('UNION' | 'EXCEPT') ['ALL' | 'DISTINCT'] set_term}`
/// `set_term ::= set_operand {'INTERSECT' ['ALL' | 'DISTINCT'] set_operand}`
///
/// By precedence climbing: operands joined by set operators binding at
/// least as tightly as `min_prec` (UNION and EXCEPT: 1, INTERSECT: 2).
fn set_expr(i: Tokens<'_>, min_prec: u8) -> PResult<'_, SetExpr> {
    let (mut i, mut left) = set_operand(i)?;
    let depth_on_entry = i.ctx.depth.get();
    let result = loop {
        let (op, prec) = match i.keyword() {
            Some(Keyword::Union) => (SetOperator::Union, 1),
            Some(Keyword::Except) => (SetOperator::Except, 1),
            Some(Keyword::Intersect) => (SetOperator::Intersect, 2),
            _ => break Ok(i),
        };
        if prec < min_prec {
            break Ok(i);
        }
        if let Err(e) = enter(i) {
            break Err(e);
        }
        let (rest, quantifier) = opt(kw_of(&[Keyword::All, Keyword::Distinct]))(i.skip(1))?;
        if let Err(e) = enter(rest) {
            break Err(e);
        }
        let right = cut(|i| set_expr(i, prec + 1))(rest);
        i.ctx.depth.set(i.ctx.depth.get() - 1);
        let (rest, right) = match right {
            Ok(r) => r,
            Err(e) => break Err(e),
        };
        left = SetExpr::SetOp {
            op,
            all: quantifier == Some(Keyword::All),
            left: Box::new(left),
            right: Box::new(right),
        };
        i = rest;
    };
    i.ctx.depth.set(depth_on_entry);
    Ok((result?, left))
}

/// `set_operand ::= select | values | 'TABLE' target_table | '(' query ')'`
fn set_operand(i: Tokens<'_>) -> PResult<'_, SetExpr> {
    match i.first().kind {
        TokenKind::Word(Keyword::Select) => map(select, |s| SetExpr::Select(Box::new(s)))(i),
        TokenKind::Word(Keyword::Values) => values(i),
        TokenKind::Word(Keyword::Table) => {
            let star = Offset(i.first().start);
            map(
                preceded(kw(Keyword::Table), cut(target_table)),
                move |name| SetExpr::Select(Box::new(table_select(name, star))),
            )(i)
        }
        TokenKind::LParen => map(
            preceded(
                tok(TokenKind::LParen),
                cut(terminated(query, tok(TokenKind::RParen))),
            ),
            |query| {
                if query.with.is_empty()
                    && query.order_by.is_empty()
                    && query.limit.is_none()
                    && query.offset.is_none()
                {
                    query.body
                } else {
                    SetExpr::Nested(Box::new(query))
                }
            },
        )(i),
        _ => i.fail(),
    }
}

/// `TABLE name`: `SELECT * FROM name`.
fn table_select(name: ObjectName, star: Offset) -> Select {
    Select {
        distinct: false,
        distinct_on: Vec::new(),
        projection: vec![SelectItem::Wildcard(star)],
        from: vec![TableRef::Table {
            name,
            alias: None,
            only: false,
        }],
        where_clause: None,
        group_by: Vec::new(),
        having: None,
        window: Vec::new(),
    }
}

/// `values ::= 'VALUES' '(' expr {',' expr} ')' {',' '(' expr {',' expr} ')'}`
fn values(i: Tokens<'_>) -> PResult<'_, SetExpr> {
    map(
        preceded(
            kw(Keyword::Values),
            cut(separated_list1(tok(TokenKind::Comma), cut(values_row))),
        ),
        SetExpr::Values,
    )(i)
}

/// `'(' expr {',' expr} ')'`: one row of a `VALUES` list.
fn values_row(i: Tokens<'_>) -> PResult<'_, Vec<Expr>> {
    let (i, _) = tok(TokenKind::LParen).parse(i)?;
    // Size the row exactly: counting the top-level commas ahead is cheaper
    // than regrowing the vector (this is the hot path of piped INSERT
    // scripts).
    let capacity = count_list_items(i);
    cut(terminated(
        comma_list1_sized(capacity, values_item),
        tok(TokenKind::RParen),
    ))(i)
}

/// One `VALUES` item. A lone literal (a number, a plain string or NULL
/// followed by `,` or `)`) is built directly, skipping the precedence
/// machinery: the same tree, for a third less work on the typical INSERT
/// script.
fn values_item(i: Tokens<'_>) -> PResult<'_, Expr> {
    let t = i.first();
    if matches!(i.kind(1), TokenKind::Comma | TokenKind::RParen) {
        let literal = match t.kind {
            TokenKind::Number => Some(Literal::Number(i.text(t).to_string())),
            TokenKind::String(StringStyle::Standard, false) => {
                let text = i.text(t);
                Some(Literal::String(text[1..text.len() - 1].to_string()))
            }
            TokenKind::Word(Keyword::Null) => Some(Literal::Null),
            _ => None,
        };
        if let Some(literal) = literal {
            let e = Expr {
                kind: ExprKind::Literal(literal),
                offset: Offset(t.start),
            };
            return Ok((i.skip(1), e));
        }
    }
    expr(i)
}

/// The number of comma-separated items from `i` to the closing parenthesis
/// of the current list (an estimate if the list is malformed).
fn count_list_items(i: Tokens<'_>) -> usize {
    let mut depth = 0usize;
    let mut items = 1;
    for t in i.toks {
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

/// `select ::= 'SELECT' ['DISTINCT' | 'ALL'] [select_item {',' select_item}]
///   ['FROM' from_item {',' from_item}] ['WHERE' expr] ['GROUP' 'BY' expr {',' expr}] ['HAVING' expr]`
fn select(i: Tokens<'_>) -> PResult<'_, Select> {
    let (i, _) = kw(Keyword::Select).parse(i)?;
    let (i, quantifier) = opt(kw_of(&[Keyword::Distinct, Keyword::All]))(i)?;
    let (i, distinct_on) = if quantifier == Some(Keyword::Distinct) && i.is_kw(0, Keyword::On) {
        cut(delimited(
            pair(kw(Keyword::On), tok(TokenKind::LParen)),
            expr_list,
            tok(TokenKind::RParen),
        ))(i)?
    } else {
        (i, Vec::new())
    };
    let (i, projection) = if at_select_list_end(i) {
        (i, Vec::new())
    } else {
        cut(select_list)(i)?
    };
    let (i, (from, where_clause, group_by, having)) = tuple((
        opt_from(Keyword::From),
        opt_where,
        opt(preceded(
            kw(Keyword::Group),
            cut(preceded(kw(Keyword::By), expr_list)),
        )),
        opt(preceded(kw(Keyword::Having), cut(expr))),
    ))(i)?;
    let (i, window) = super::window::opt_window_clause(i)?;
    let select = Select {
        distinct: quantifier == Some(Keyword::Distinct),
        distinct_on,
        projection,
        from,
        where_clause,
        group_by: group_by.unwrap_or_default(),
        having,
        window,
    };
    Ok((i, select))
}

/// `['FROM' from_item {',' from_item}]`, or the same after `lead` (`USING`).
pub(crate) fn opt_from<'a>(lead: Keyword) -> impl FnMut(Tokens<'a>) -> PResult<'a, Vec<TableRef>> {
    map(
        opt(preceded(kw(lead), cut(from_list))),
        Option::unwrap_or_default,
    )
}

/// `['WHERE' expr]`
pub(crate) fn opt_where(i: Tokens<'_>) -> PResult<'_, Option<Expr>> {
    opt(preceded(kw(Keyword::Where), cut(expr)))(i)
}

/// Whether the select list is empty (`SELECT FROM t`, `SELECT;`).
fn at_select_list_end(i: Tokens<'_>) -> bool {
    match i.first().kind {
        TokenKind::Word(kw) => matches!(
            kw,
            Keyword::From
                | Keyword::Where
                | Keyword::Group
                | Keyword::Having
                | Keyword::Order
                | Keyword::Limit
                | Keyword::Fetch
                | Keyword::Offset
                | Keyword::Union
                | Keyword::Intersect
                | Keyword::Except
        ),
        TokenKind::Semicolon | TokenKind::RParen | TokenKind::Eof => true,
        _ => false,
    }
}

/// `select_item {',' select_item}` (a select list or `RETURNING` list)
pub(crate) fn select_list(i: Tokens<'_>) -> PResult<'_, Vec<SelectItem>> {
    separated_list1(tok(TokenKind::Comma), cut(select_item))(i)
}

/// `select_item ::= '*' | col_id ['.' col_id] '.' '*' | expr [['AS'] col_label]`
fn select_item(i: Tokens<'_>) -> PResult<'_, SelectItem> {
    let t = i.first();
    if t.kind == TokenKind::Star {
        return Ok((i.skip(1), SelectItem::Wildcard(Offset(t.start))));
    }
    if is_col_id(t.kind) && i.kind(1) == TokenKind::Dot {
        let star_after_one = i.kind(2) == TokenKind::Star;
        let star_after_two = matches!(i.kind(2), TokenKind::Word(_) | TokenKind::QuotedIdent(_))
            && i.kind(3) == TokenKind::Dot
            && i.kind(4) == TokenKind::Star;
        if star_after_one || star_after_two {
            return map(
                terminated(
                    object_name,
                    cut(pair(tok(TokenKind::Dot), tok(TokenKind::Star))),
                ),
                SelectItem::QualifiedWildcard,
            )(i);
        }
    }
    map(pair(expr, column_alias), |(expr, alias)| SelectItem::Expr {
        expr,
        alias,
    })(i)
}

/// `[['AS'] col_label]`: an output-column alias; a bare one may not be an
/// AS-only keyword.
fn column_alias(i: Tokens<'_>) -> PResult<'_, Option<String>> {
    // Dispatched on `AS` rather than trying both forms in turn: this runs
    // after every item of every select list.
    if i.is_kw(0, Keyword::As) {
        map(preceded(kw(Keyword::As), cut(col_label)), Some)(i)
    } else {
        opt(bare_label)(i)
    }
}

/// A label written without `AS`.
fn bare_label(i: Tokens<'_>) -> PResult<'_, String> {
    let t = i.first();
    let bare = match t.kind {
        TokenKind::Word(kw) => kw.is_bare_label(),
        TokenKind::QuotedIdent(_) => true,
        _ => false,
    };
    if bare {
        Ok((i.skip(1), ident_value(i, t)))
    } else {
        i.fail()
    }
}

/// `from_item {',' from_item}`
pub(crate) fn from_list(i: Tokens<'_>) -> PResult<'_, Vec<TableRef>> {
    separated_list1(tok(TokenKind::Comma), cut(table_ref))(i)
}

/// `from_item ::= from_primary {join}`
fn table_ref(i: Tokens<'_>) -> PResult<'_, TableRef> {
    let (mut i, mut left) = table_primary(i)?;
    let depth_on_entry = i.ctx.depth.get();
    let result = loop {
        let (rest, head) = match join_head(i) {
            Ok((rest, Some(head))) => (rest, head),
            Ok((_, None)) => break Ok(i),
            Err(e) => break Err(e),
        };
        if let Err(e) = enter(rest) {
            break Err(e);
        }
        match join_rest(rest, head) {
            Ok((rest, (right, constraint))) => {
                left = TableRef::Join(Box::new(Join {
                    left,
                    right,
                    kind: head.1,
                    constraint,
                }));
                i = rest;
            }
            Err(e) => break Err(e),
        }
    };
    i.ctx.depth.set(depth_on_entry);
    Ok((result?, left))
}

/// `['NATURAL'] join_type` or `'CROSS'`, up to `JOIN`: whether the join is
/// natural, and its kind; `None` when no join follows.
/// `join_type ::= ['INNER'] | 'LEFT' ['OUTER'] | 'RIGHT' ['OUTER'] | 'FULL' ['OUTER']`
fn join_head(i: Tokens<'_>) -> PResult<'_, Option<(bool, JoinKind)>> {
    let (i, natural) = map(opt(kw(Keyword::Natural)), |n| n.is_some())(i)?;
    let kind = match i.keyword() {
        Some(Keyword::Join) => Some((i, JoinKind::Inner)),
        Some(Keyword::Inner) => Some((i.skip(1), JoinKind::Inner)),
        Some(k @ (Keyword::Left | Keyword::Right | Keyword::Full)) => {
            let (rest, _) = opt(kw(Keyword::Outer))(i.skip(1))?;
            let kind = match k {
                Keyword::Left => JoinKind::Left,
                Keyword::Right => JoinKind::Right,
                _ => JoinKind::Full,
            };
            Some((rest, kind))
        }
        Some(Keyword::Cross) if !natural => Some((i.skip(1), JoinKind::Cross)),
        _ => None,
    };
    match kind {
        Some((rest, kind)) => Ok((rest, Some((natural, kind)))),
        None if natural => Err(nom::Err::Failure(super::PError::At(i.first()))),
        None => Ok((i, None)),
    }
}

/// `'JOIN' from_primary [join_condition]` after a join's head.
/// `join_condition ::= 'ON' expr | 'USING' '(' col_id {',' col_id} ')'` (required unless NATURAL or CROSS)
fn join_rest(
    i: Tokens<'_>,
    (natural, kind): (bool, JoinKind),
) -> PResult<'_, (TableRef, JoinConstraint)> {
    let (i, right) = cut(preceded(kw(Keyword::Join), table_primary))(i)?;
    if natural {
        return Ok((i, (right, JoinConstraint::Natural)));
    }
    if kind == JoinKind::Cross {
        return Ok((i, (right, JoinConstraint::None)));
    }
    let (i, constraint) = cut(alt((
        map(preceded(kw(Keyword::On), cut(expr)), JoinConstraint::On),
        map(
            preceded(kw(Keyword::Using), cut(paren_col_list)),
            JoinConstraint::Using,
        ),
    )))(i)?;
    Ok((i, (right, constraint)))
}

/// `from_primary ::= object_name [alias] | object_name '(' [call_args] ')' [alias]
///   | '(' query ')' [alias] | '(' from_item ')'`
fn table_primary(i: Tokens<'_>) -> PResult<'_, TableRef> {
    // Plain calls on the recursive path: its frames bound how deep input
    // may nest on a small stack.
    enter(i)?;
    let result = table_primary_inner(i);
    i.ctx.depth.set(i.ctx.depth.get() - 1);
    result
}

fn table_primary_inner(i: Tokens<'_>) -> PResult<'_, TableRef> {
    if i.keyword() == Some(Keyword::Lateral) {
        return lateral_item(i.skip(1));
    }
    if i.keyword() == Some(Keyword::Only) {
        return only_table(i.skip(1));
    }
    if i.first().kind != TokenKind::LParen {
        return named_table(i);
    }
    let inner = i.skip(1);
    if at_query_start(inner) {
        return subquery(i);
    }
    let (rest, inner) = match table_ref(inner) {
        Err(nom::Err::Error(e)) => return Err(nom::Err::Failure(e)),
        other => other?,
    };
    let (rest, _) = cut(tok(TokenKind::RParen))(rest)?;
    Ok((rest, inner))
}

/// After `ONLY`: `object_name [alias] | '(' object_name ')' [alias]`.
fn only_table(i: Tokens<'_>) -> PResult<'_, TableRef> {
    let (i, name) = cut(alt((
        delimited(tok(TokenKind::LParen), object_name, tok(TokenKind::RParen)),
        object_name,
    )))(i)?;
    let (i, alias) = table_alias(&[])(i)?;
    let only = true;
    Ok((i, TableRef::Table { name, alias, only }))
}

/// After `LATERAL`: `'(' query ')' [alias] | func_name '(' [call_args] ')'
/// [alias]` (a function in FROM is lateral anyway).
fn lateral_item(i: Tokens<'_>) -> PResult<'_, TableRef> {
    if i.first().kind == TokenKind::LParen {
        if !at_query_start(i.skip(1)) {
            return Err(nom::Err::Failure(super::PError::At(i.skip(1).first())));
        }
        let (rest, item) = subquery(i)?;
        let TableRef::Subquery { query, alias, .. } = item else {
            unreachable!("subquery() makes a subquery")
        };
        let item = TableRef::Subquery {
            query,
            alias,
            lateral: true,
        };
        return Ok((rest, item));
    }
    match named_table(i) {
        Ok((rest, f @ TableRef::Function { .. })) => Ok((rest, f)),
        Ok(_) => {
            // Only a function or a subquery may follow LATERAL.
            let (rest, _) = object_name(i)?;
            Err(nom::Err::Failure(super::PError::At(rest.first())))
        }
        Err(nom::Err::Error(e)) => Err(nom::Err::Failure(e)),
        Err(e) => Err(e),
    }
}

/// `'(' query ')' [alias]`
fn subquery(i: Tokens<'_>) -> PResult<'_, TableRef> {
    map(
        pair(
            cut(delimited(
                tok(TokenKind::LParen),
                query,
                tok(TokenKind::RParen),
            )),
            table_alias(&[]),
        ),
        |(query, alias)| TableRef::Subquery {
            query: Box::new(query),
            alias,
            lateral: false,
        },
    )(i)
}

/// `object_name [alias] | object_name '(' [call_args] ')' [alias]`
fn named_table(i: Tokens<'_>) -> PResult<'_, TableRef> {
    let t = i.first();
    let offset = Offset(t.start);
    if let TokenKind::Word(k) = t.kind {
        if k.class() == KeywordClass::TypeFunc {
            // Only a table function may be named by a function-name keyword
            // (`left(...)`); as in PostgreSQL, anything else fails after it.
            let rest = i.skip(1);
            if rest.first().kind != TokenKind::LParen {
                return rest.fail();
            }
            let name = ObjectName {
                schema: None,
                name: ident_value(i, t),
                offset,
            };
            let (i, (call, alias)) = pair(cut(function_call(name)), table_alias(&[]))(rest)?;
            let function = TableRef::Function {
                call,
                alias,
                offset,
            };
            return Ok((i, function));
        }
    }
    let (i, name) = object_name(i)?;
    if i.first().kind == TokenKind::LParen {
        let (i, (call, alias)) = pair(cut(function_call(name)), table_alias(&[]))(i)?;
        let function = TableRef::Function {
            call,
            alias,
            offset,
        };
        return Ok((i, function));
    }
    // `name *` is the table with its children, as the bare name is.
    let i = if i.first().kind == TokenKind::Star {
        i.skip(1)
    } else {
        i
    };
    let (i, alias) = table_alias(&[])(i)?;
    let only = false;
    Ok((i, TableRef::Table { name, alias, only }))
}

/// `alias ::= ['AS'] col_id ['(' col_id {',' col_id} ')']` (optional); a
/// bare alias may not be one of `excluded`.
pub(crate) fn table_alias<'a>(
    excluded: &'static [Keyword],
) -> impl FnMut(Tokens<'a>) -> PResult<'a, Option<TableAlias>> {
    move |i| {
        let (i, name) = alias_name(excluded)(i)?;
        let Some(name) = name else {
            return Ok((i, None));
        };
        let (i, columns) = super::opt_paren_col_list(i)?;
        Ok((i, Some(TableAlias { name, columns })))
    }
}

/// `[['AS'] col_id]`; a bare alias may not be one of `excluded`.
pub(crate) fn alias_name<'a>(
    excluded: &'static [Keyword],
) -> impl Fn(Tokens<'a>) -> PResult<'a, Option<String>> {
    move |i| {
        let t = i.first();
        if t.kind == TokenKind::Word(Keyword::As) {
            return map(cut(col_id), Some)(i.skip(1));
        }
        if is_bare_alias(t.kind, excluded) {
            return Ok((i.skip(1), Some(ident_value(i, t))));
        }
        Ok((i, None))
    }
}

/// `target_table ::= ['ONLY'] object_name`
pub(crate) fn target_table(i: Tokens<'_>) -> PResult<'_, ObjectName> {
    preceded(opt(kw(Keyword::Only)), object_name)(i)
}

/// `target_table`, with whether `ONLY` was written.
pub(crate) fn only_target_table(i: Tokens<'_>) -> PResult<'_, (bool, ObjectName)> {
    pair(map(opt(kw(Keyword::Only)), |o| o.is_some()), object_name)(i)
}

/// `['ORDER' 'BY' order_item {',' order_item}]`
pub(crate) fn opt_order_by(i: Tokens<'_>) -> PResult<'_, Vec<OrderBy>> {
    if i.is_kw(0, Keyword::Order) {
        order_by(i)
    } else {
        Ok((i, Vec::new()))
    }
}

/// `'ORDER' 'BY' order_item {',' order_item}`
pub(crate) fn order_by(i: Tokens<'_>) -> PResult<'_, Vec<OrderBy>> {
    preceded(
        kw(Keyword::Order),
        cut(preceded(
            kw(Keyword::By),
            separated_list1(tok(TokenKind::Comma), cut(order_item)),
        )),
    )(i)
}

/// `order_item ::= expr ['ASC' | 'DESC' | 'USING' ('<' | '>')] ['NULLS' ('FIRST' | 'LAST')]`
/// (`USING <` is ascending, `USING >` descending: the built-in types'
/// B-tree ordering operators).
fn order_item(i: Tokens<'_>) -> PResult<'_, OrderBy> {
    map(
        tuple((
            expr,
            opt(alt((
                kw_of(&[Keyword::Asc, Keyword::Desc]),
                preceded(
                    kw(Keyword::Using),
                    cut(alt((
                        value(Keyword::Asc, tok(TokenKind::Lt)),
                        value(Keyword::Desc, tok(TokenKind::Gt)),
                    ))),
                ),
            ))),
            // As PostgreSQL's lexer, NULLS starts the clause only before
            // FIRST or LAST (`NULLS_LA`).
            opt(preceded(
                kw(Keyword::Nulls),
                kw_of(&[Keyword::First, Keyword::Last]),
            )),
        )),
        |(expr, direction, nulls)| OrderBy {
            expr,
            descending: direction == Some(Keyword::Desc),
            nulls_first: nulls.map(|k| k == Keyword::First),
        },
    )(i)
}

/// Whether `i` (just after an opening parenthesis) starts a query rather
/// than an expression or a join. Decided by looking ahead, never by
/// backtracking: a query starts with SELECT, VALUES or WITH, or with a
/// parenthesised query followed by what only a query can continue with (a
/// set operator, ORDER BY, LIMIT, OFFSET or the closing parenthesis), as in
/// `((SELECT 1) UNION SELECT 2)` versus `((SELECT 1) + 1)`.
pub(crate) fn at_query_start(i: Tokens<'_>) -> bool {
    let mut n = 0;
    while i.kind(n) == TokenKind::LParen {
        n += 1;
    }
    if !matches!(
        i.kind(n),
        TokenKind::Word(Keyword::Select | Keyword::Values | Keyword::With | Keyword::Table)
    ) {
        return false;
    }
    if n == 0 {
        return true;
    }
    // Find the parenthesis closing the group that starts here.
    let mut depth = 0usize;
    let mut k = 0;
    loop {
        match i.kind(k) {
            TokenKind::LParen => depth += 1,
            TokenKind::RParen => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            TokenKind::Eof | TokenKind::Semicolon => return false,
            _ => {}
        }
        k += 1;
    }
    matches!(
        i.kind(k + 1),
        TokenKind::RParen
            | TokenKind::Word(
                Keyword::Union
                    | Keyword::Intersect
                    | Keyword::Except
                    | Keyword::Order
                    | Keyword::Limit
                    | Keyword::Fetch
                    | Keyword::Offset
            )
    )
}
