//! Data-changing statements: `INSERT`, `UPDATE`, `DELETE`.

use nom::combinator::{cut, map, opt};
use nom::multi::separated_list1;
use nom::sequence::{pair, preceded, tuple};
use nom::Parser;

use super::expr::expr;
use super::query::{alias_name, only_target_table, opt_from, opt_where, query, select_list};
use super::tokens::{col_id, kw, tok, PResult, Tokens};
use super::{object_name, paren_col_list};
use crate::ast::{Assignment, Delete, Insert, Offset, SelectItem, Statement, Update};
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
    let (i, columns) = if column_list {
        cut(paren_col_list)(i)?
    } else {
        (i, Vec::new())
    };
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
        source,
        returning,
        alias,
        on_conflict,
    };
    Ok((i, Statement::Insert(Box::new(insert))))
}

/// `assignment ::= col_id '=' expr`
pub(super) fn assignment(i: Tokens<'_>) -> PResult<'_, Assignment> {
    let offset = Offset(i.first().start);
    let (i, (column, value)) = pair(col_id, cut(preceded(tok(TokenKind::Eq), expr)))(i)?;
    Ok((
        i,
        Assignment {
            column,
            value,
            offset,
        },
    ))
}

/// `update ::= 'UPDATE' ['ONLY'] object_name [['AS'] col_id] 'SET' col_id '=' expr {',' col_id '=' expr}
///   ['FROM' from_item {',' from_item}] ['WHERE' expr] [returning]`
pub(crate) fn update(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Update).parse(i)?;
    let (i, ((only, table), alias, _, assignments, from, where_clause, returning)) = cut(tuple((
        only_target_table,
        alias_name(&[Keyword::Set]),
        kw(Keyword::Set),
        separated_list1(tok(TokenKind::Comma), cut(assignment)),
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
