//! Data-changing statements: `INSERT`, `UPDATE`, `DELETE`.

use nom::combinator::{cut, map, opt};
use nom::multi::separated_list1;
use nom::sequence::{delimited, pair, preceded, tuple};
use nom::Parser;

use super::expr::{expr, expr_list};
use super::object_name;
use super::query::{
    alias_name, at_query_start, only_target_table, opt_from, opt_where, query, select_list,
};
use super::tokens::{col_id, kw, tok, PResult, Tokens};
use crate::ast::{
    Assignment, Delete, Expr, ExprKind, Ident, Insert, Offset, SelectItem, Statement, Update,
};
use crate::error::{ParseError, ParseErrorKind};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// `insert ::= 'INSERT' 'INTO' object_name ['AS' col_id] ['(' col_id {',' col_id} ')']
///   (query | 'DEFAULT' 'VALUES') [on_conflict] [returning]`
pub(crate) fn insert(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Insert).parse(i)?;
    let (i, table) = cut(preceded(kw(Keyword::Into), object_name))(i)?;
    let (i, alias) = opt(preceded(kw(Keyword::As), cut(col_id)))(i)?;
    // `(` starts a column list unless it opens a parenthesised query.
    let column_list = i.first().kind == TokenKind::LParen
        && !matches!(
            i.kind(1),
            TokenKind::Word(Keyword::Select | Keyword::Values | Keyword::With) | TokenKind::LParen
        );
    let (i, listed) = if column_list {
        cut(delimited(
            tok(TokenKind::LParen),
            separated_list1(tok(TokenKind::Comma), cut(col_at)),
            tok(TokenKind::RParen),
        ))(i)?
    } else {
        (i, Vec::new())
    };
    let (columns, column_offsets) = listed.into_iter().unzip();
    let (i, source) = if i.is_kw(0, Keyword::Default) && i.is_kw(1, Keyword::Values) {
        (i.skip(2), None)
    } else {
        map(cut(query), |q| Some(Box::new(q)))(i)?
    };
    let (i, on_conflict) = super::keys::opt_on_conflict(i)?;
    let (i, returning) = returning(i)?;
    let insert = Insert {
        table,
        columns,
        column_offsets,
        source,
        returning,
        alias,
        on_conflict,
    };
    Ok((i, Statement::Insert(Box::new(insert))))
}

/// `col_id`, with where it starts.
fn col_at(i: Tokens<'_>) -> PResult<'_, (Ident, Offset)> {
    let offset = Offset(i.first().start);
    map(col_id, move |c| (c, offset))(i)
}

/// `assignment ::= col_id '=' expr`
fn assignment(i: Tokens<'_>) -> PResult<'_, Assignment> {
    let offset = Offset(i.first().start);
    let (i, (column, value)) = pair(col_id, cut(preceded(tok(TokenKind::Eq), expr)))(i)?;
    Ok((
        i,
        Assignment {
            column,
            value,
            offset,
            multi: None,
        },
    ))
}

/// `set_list ::= set_item {',' set_item}`, with
/// `set_item ::= assignment | '(' col_id {',' col_id} ')' '=' ('(' query ')' | ['ROW'] '(' expr {',' expr} ')')`
pub(super) fn assignments(i: Tokens<'_>) -> PResult<'_, Vec<Assignment>> {
    map(
        separated_list1(tok(TokenKind::Comma), cut(set_item)),
        |groups: Vec<Vec<Assignment>>| groups.into_iter().flatten().collect(),
    )(i)
}

fn set_item(i: Tokens<'_>) -> PResult<'_, Vec<Assignment>> {
    if i.first().kind != TokenKind::LParen {
        return map(assignment, |a| vec![a])(i);
    }
    let (i, (columns, _)) = cut(pair(
        delimited(
            tok(TokenKind::LParen),
            separated_list1(tok(TokenKind::Comma), col_at),
            tok(TokenKind::RParen),
        ),
        tok(TokenKind::Eq),
    ))(i)?;
    let m = columns.len();
    let at = i.first().start;
    if i.first().kind == TokenKind::LParen && at_query_start(i.skip(1)) {
        let (rest, q) = cut(delimited(
            tok(TokenKind::LParen),
            query,
            tok(TokenKind::RParen),
        ))(i)?;
        let value = Expr {
            kind: ExprKind::Subquery(Box::new(q)),
            offset: Offset(at),
        };
        let items = columns
            .into_iter()
            .enumerate()
            .map(|(k, (column, offset))| Assignment {
                column,
                value: value.clone(),
                offset,
                multi: Some((k, m)),
            })
            .collect();
        return Ok((rest, items));
    }
    let row = i.is_kw(0, Keyword::Row) && i.kind(1) == TokenKind::LParen;
    let list_at = if row { i.skip(1) } else { i };
    let (rest, values) = if list_at.first().kind == TokenKind::LParen {
        cut(delimited(
            tok(TokenKind::LParen),
            expr_list,
            tok(TokenKind::RParen),
        ))(list_at)?
    } else {
        map(cut(expr), |e| vec![e])(i)?
    };
    if values.len() == 1 && !row {
        return i.fatal(
            ParseError::other(
                "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression"
                    .into(),
                values[0].offset.0,
                None,
            )
            .with_kind(ParseErrorKind::FeatureNotSupported),
        );
    }
    if values.len() != m {
        return i.fatal(ParseError::other(
            "number of columns does not match number of values".into(),
            at,
            None,
        ));
    }
    let items = columns
        .into_iter()
        .zip(values)
        .map(|((column, offset), value)| Assignment {
            column,
            value,
            offset,
            multi: None,
        })
        .collect();
    Ok((rest, items))
}

/// `update ::= 'UPDATE' ['ONLY'] object_name [['AS'] col_id] 'SET' col_id '=' expr {',' col_id '=' expr}
///   ['FROM' from_item {',' from_item}] ['WHERE' expr] [returning]`
pub(crate) fn update(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Update).parse(i)?;
    let (i, ((only, table), alias, _, assignments, from, where_clause, returning)) = cut(tuple((
        only_target_table,
        alias_name(&[Keyword::Set]),
        kw(Keyword::Set),
        assignments,
        opt_from(Keyword::From),
        opt_where,
        returning,
    )))(i)?;
    let update = Update {
        table,
        only,
        alias,
        assignments,
        from,
        where_clause,
        returning,
    };
    Ok((i, Statement::Update(Box::new(update))))
}

/// `delete ::= 'DELETE' 'FROM' ['ONLY'] object_name [['AS'] col_id]
///   ['USING' from_item {',' from_item}] ['WHERE' expr] [returning]`
pub(crate) fn delete(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Delete).parse(i)?;
    let (i, (_, (only, table), alias, using, where_clause, returning)) = cut(tuple((
        kw(Keyword::From),
        only_target_table,
        alias_name(&[]),
        opt_from(Keyword::Using),
        opt_where,
        returning,
    )))(i)?;
    let delete = Delete {
        table,
        only,
        alias,
        using,
        where_clause,
        returning,
    };
    Ok((i, Statement::Delete(Box::new(delete))))
}

/// `returning ::= 'RETURNING' select_item {',' select_item}` (optional)
fn returning(i: Tokens<'_>) -> PResult<'_, Vec<SelectItem>> {
    map(
        opt(preceded(kw(Keyword::Returning), cut(select_list))),
        Option::unwrap_or_default,
    )(i)
}
