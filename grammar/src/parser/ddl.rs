//! Table DDL: `CREATE TABLE` (with columns, or `AS query`), `DROP TABLE`,
//! `TRUNCATE`.

use nom::branch::alt;
use nom::combinator::{cond, cut, map, opt, value};
use nom::multi::separated_list1;
use nom::sequence::{delimited, pair, preceded, tuple};
use nom::Parser;

use super::expr::{expr, expr_bp, prec};
use super::literal::data_type;
use super::query::{only_target_table, query};
use super::tokens::{col_id, kw, kw_of, many0, tok, word, PError, PResult, Tokens};
use super::{object_name, opt_paren_col_list, paren_col_list};
use crate::ast::{
    CheckConstraint, ColumnConstraint, ColumnDef, CreateTable, CreateTableAs, DropTable, Expr,
    FkAction, ForeignKeyRef, Ident, Offset, OnCommit, SetArg, Statement, TableConstraint, Truncate,
};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// One entry of a `CREATE TABLE` list.
enum TableElement {
    Column(ColumnDef),
    Constraint(TableConstraint),
}

/// `create_table ::= 'CREATE' opt_temp 'TABLE' ['IF' 'NOT' 'EXISTS'] object_name
///   '(' [table_element {',' table_element}] ')' ['WITH' '(' rel_option {',' rel_option} ')']
///   [on_commit]`
///
/// `create_table_as ::= 'CREATE' opt_temp 'TABLE' ['IF' 'NOT' 'EXISTS'] object_name
///   ['(' col_id {',' col_id} ')'] [on_commit] 'AS' query`
pub(crate) fn create_table(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Create).parse(i)?;
    let (i, temp) = opt_temp(i)?;
    let (i, (_, if_not_exists, name)) = cut(tuple((
        kw(Keyword::Table),
        opt(preceded(
            kw(Keyword::If),
            cut(pair(kw(Keyword::Not), kw(Keyword::Exists))),
        )),
        object_name,
    )))(i)?;
    let if_not_exists = if_not_exists.is_some();
    // `name (a, b) AS query` or `name AS query` is CREATE TABLE AS; a
    // parenthesised list followed by anything else defines columns.
    if i.is_kw(0, Keyword::As)
        || i.is_kw(0, Keyword::On)
        || (i.first().kind == TokenKind::LParen && paren_list_then_as(i))
    {
        let (i, (columns, on_commit, _, query)) = cut(tuple((
            opt_paren_col_list,
            opt(on_commit),
            kw(Keyword::As),
            query,
        )))(i)?;
        let create = CreateTableAs {
            temp,
            on_commit,
            if_not_exists,
            name,
            columns,
            query: Box::new(query),
        };
        return Ok((i, Statement::CreateTableAs(Box::new(create))));
    }
    let (i, ((elements, inherits, with_options), on_commit)) = cut(pair(
        tuple((
            delimited(
                tok(TokenKind::LParen),
                cond(
                    i.kind(1) != TokenKind::RParen,
                    separated_list1(tok(TokenKind::Comma), cut(table_element)),
                ),
                tok(TokenKind::RParen),
            ),
            opt(preceded(
                word("inherits"),
                cut(delimited(
                    tok(TokenKind::LParen),
                    separated_list1(tok(TokenKind::Comma), object_name),
                    tok(TokenKind::RParen),
                )),
            )),
            opt(preceded(
                kw(Keyword::With),
                cut(delimited(
                    tok(TokenKind::LParen),
                    separated_list1(
                        tok(TokenKind::Comma),
                        // `name` alone is `name = true`, as PostgreSQL's
                        // reloptions take it.
                        cut(map(super::keys::rel_option, |(n, v)| {
                            (n, v.unwrap_or_else(|| SetArg::Word("true".into())))
                        })),
                    ),
                    tok(TokenKind::RParen),
                )),
            )),
        )),
        opt(on_commit),
    ))(i)
    .map_err(|e| either_reading(i, e))?;
    let elements = elements.unwrap_or_default();
    let mut create = CreateTable {
        temp,
        on_commit,
        if_not_exists,
        name,
        columns: Vec::with_capacity(elements.len()),
        constraints: Vec::new(),
        with_options: with_options.unwrap_or_default(),
        inherits: inherits.unwrap_or_default(),
    };
    for element in elements {
        match element {
            TableElement::Column(c) => create.columns.push(c),
            TableElement::Constraint(c) => create.constraints.push(c),
        }
    }
    Ok((i, Statement::CreateTable(Box::new(create))))
}

/// `opt_temp ::= [['LOCAL'] ('TEMP' | 'TEMPORARY')]`: whether the table is
/// temporary.
fn opt_temp(i: Tokens<'_>) -> PResult<'_, bool> {
    let temp = |i| alt((word("temp"), word("temporary")))(i);
    if i.is_kw(0, Keyword::Local) {
        let (i, _) = kw(Keyword::Local).parse(i)?;
        return map(cut(temp), |_| true)(i);
    }
    map(opt(temp), |t| t.is_some())(i)
}

/// `on_commit ::= 'ON' 'COMMIT' ('PRESERVE' 'ROWS' | 'DELETE' 'ROWS' | 'DROP')`
fn on_commit(i: Tokens<'_>) -> PResult<'_, OnCommit> {
    preceded(
        pair(kw(Keyword::On), cut(kw(Keyword::Commit))),
        cut(alt((
            value(
                OnCommit::PreserveRows,
                pair(word("preserve"), cut(word("rows"))),
            ),
            value(
                OnCommit::DeleteRows,
                pair(kw(Keyword::Delete), cut(word("rows"))),
            ),
            value(OnCommit::Drop, kw(Keyword::Drop)),
        ))),
    )(i)
}

/// The error of a `CREATE TABLE` whose list is not followed by `AS`:
/// PostgreSQL's parser reads a list of plain names both as column
/// definitions and as the column names of `CREATE TABLE ... AS`, and fails
/// where the longer reading fails; so does this (`t (a, b double ...` fails
/// at `double`, not at the first comma).
fn either_reading(i: Tokens<'_>, e: nom::Err<PError>) -> nom::Err<PError> {
    let nom::Err::Failure(PError::At(defs)) = e else {
        return e;
    };
    match pair(paren_col_list, kw(Keyword::As))(i) {
        Err(nom::Err::Error(PError::At(names)) | nom::Err::Failure(PError::At(names)))
            if names.start > defs.start =>
        {
            nom::Err::Failure(PError::At(names))
        }
        _ => nom::Err::Failure(PError::At(defs)),
    }
}

/// Whether the parenthesised list that `i` starts with is followed by `AS`.
fn paren_list_then_as(i: Tokens<'_>) -> bool {
    let mut depth = 0usize;
    for (n, t) in i.toks.iter().enumerate() {
        match t.kind {
            TokenKind::LParen => depth += 1,
            TokenKind::RParen => {
                depth -= 1;
                if depth == 0 {
                    // An `ON COMMIT` clause may come between list and `AS`.
                    let mut k = n + 1;
                    if i.is_kw(k, Keyword::On) {
                        k += 1;
                        while k < n + 5 && k < i.toks.len() && !i.is_kw(k, Keyword::As) {
                            k += 1;
                        }
                    }
                    return i.is_kw(k, Keyword::As);
                }
            }
            TokenKind::Eof | TokenKind::Semicolon => return false,
            _ => {}
        }
    }
    false
}

/// `table_element ::= col_id data_type {column_constraint}
///   | 'PRIMARY' 'KEY' '(' col_id {',' col_id} ')' | 'UNIQUE' '(' col_id {',' col_id} ')'
///   | 'CHECK' '(' expr ')'`
fn table_element(i: Tokens<'_>) -> PResult<'_, TableElement> {
    // Dispatched on the leading keyword (as nom 8's `dispatch!`); a column
    // name may itself be an unreserved keyword, so anything else is one.
    let named_key = i.is_kw(2, Keyword::Primary) || i.is_kw(2, Keyword::Unique);
    match i.keyword() {
        Some(Keyword::Primary | Keyword::Unique) => {
            map(key_constraint(None), TableElement::Constraint)(i)
        }
        Some(Keyword::Constraint) if named_key => {
            let (i, name) = opt_constraint_name(i)?;
            map(cut(key_constraint(name)), TableElement::Constraint)(i)
        }
        Some(Keyword::Check) => map(check_constraint(None, true), |c| {
            TableElement::Constraint(TableConstraint::Check(c))
        })(i),
        Some(Keyword::Constraint) if i.is_kw(2, Keyword::Check) => {
            let (i, name) = opt_constraint_name(i)?;
            map(cut(check_constraint(name, true)), |c| {
                TableElement::Constraint(TableConstraint::Check(c))
            })(i)
        }
        Some(Keyword::Constraint | Keyword::Foreign) => {
            map(foreign_key, TableElement::Constraint)(i)
        }
        _ => map(column_def, TableElement::Column)(i),
    }
}

/// `'PRIMARY' 'KEY' '(' col_id {',' col_id} ')' | 'UNIQUE' '(' col_id {',' col_id} ')'`,
/// named `name`.
fn key_constraint(name: Option<Ident>) -> impl Fn(Tokens<'_>) -> PResult<'_, TableConstraint> {
    move |i| {
        let name = name.clone();
        if i.is_kw(0, Keyword::Primary) {
            map(
                preceded(
                    kw(Keyword::Primary),
                    cut(preceded(kw(Keyword::Key), paren_col_list)),
                ),
                move |c| TableConstraint::PrimaryKey(name.clone(), c),
            )(i)
        } else {
            map(
                preceded(kw(Keyword::Unique), cut(paren_col_list)),
                move |c| TableConstraint::Unique(name.clone(), c),
            )(i)
        }
    }
}

/// `column_def ::= col_id data_type {column_constraint}`
pub(crate) fn column_def(i: Tokens<'_>) -> PResult<'_, ColumnDef> {
    let offset = Offset(i.first().start);
    let (i, name) = col_id(i)?;
    let (i, (data_type, constraints)) = cut(pair(data_type, many0(column_constraint)))(i)?;
    Ok((
        i,
        ColumnDef {
            name,
            data_type,
            constraints,
            offset,
        },
    ))
}

/// `'CHECK' '(' expr ')'`
fn check(i: Tokens<'_>) -> PResult<'_, Expr> {
    preceded(
        kw(Keyword::Check),
        cut(delimited(
            tok(TokenKind::LParen),
            expr,
            tok(TokenKind::RParen),
        )),
    )(i)
}

/// `check ['NO' 'INHERIT'] ['NOT' 'VALID']` (NOT VALID only where
/// `table_level`), named `name`.
pub(crate) fn check_constraint(
    name: Option<Ident>,
    table_level: bool,
) -> impl Fn(Tokens<'_>) -> PResult<'_, CheckConstraint> {
    move |i| {
        let (mut i, expr) = check(i)?;
        let mut c = CheckConstraint {
            name: name.clone(),
            expr,
            no_inherit: false,
            not_valid: false,
        };
        loop {
            if let Ok((j, _)) = pair(word("no"), word("inherit"))(i) {
                c.no_inherit = true;
                i = j;
            } else if let (true, Ok((j, _))) =
                (table_level, pair(kw(Keyword::Not), word("valid"))(i))
            {
                c.not_valid = true;
                i = j;
            } else {
                return Ok((i, c));
            }
        }
    }
}

/// `column_constraint ::= 'NOT' 'NULL' | 'NULL' | 'DEFAULT' b_expr | 'PRIMARY' 'KEY' | 'UNIQUE'
///   | 'CHECK' '(' expr ')'`
fn column_constraint(i: Tokens<'_>) -> PResult<'_, ColumnConstraint> {
    // Dispatched on the leading keyword (as nom 8's `dispatch!`).
    match i.keyword() {
        Some(Keyword::Not) => value(
            ColumnConstraint::NotNull,
            pair(kw(Keyword::Not), cut(kw(Keyword::Null))),
        )(i),
        Some(Keyword::Null) => value(ColumnConstraint::Null, kw(Keyword::Null))(i),
        // PostgreSQL's b_expr: no AND/OR/NOT/IS/LIKE at the top, so that a
        // following `NOT NULL` is a constraint.
        Some(Keyword::Default) => map(
            preceded(kw(Keyword::Default), cut(expr_bp(prec::CMP))),
            ColumnConstraint::Default,
        )(i),
        Some(Keyword::Primary) => value(
            ColumnConstraint::PrimaryKey(None),
            pair(kw(Keyword::Primary), cut(kw(Keyword::Key))),
        )(i),
        Some(Keyword::Unique) => value(ColumnConstraint::Unique(None), kw(Keyword::Unique))(i),
        Some(Keyword::Constraint)
            if i.is_kw(2, Keyword::Primary) || i.is_kw(2, Keyword::Unique) =>
        {
            let (i, name) = opt_constraint_name(i)?;
            let (i, c) = cut(column_constraint)(i)?;
            Ok((
                i,
                match c {
                    ColumnConstraint::PrimaryKey(_) => ColumnConstraint::PrimaryKey(name),
                    _ => ColumnConstraint::Unique(name),
                },
            ))
        }
        Some(Keyword::Check) => map(check_constraint(None, false), ColumnConstraint::Check)(i),
        Some(Keyword::Constraint) if i.is_kw(2, Keyword::Check) => {
            let (i, name) = opt_constraint_name(i)?;
            map(cut(check_constraint(name, false)), ColumnConstraint::Check)(i)
        }
        Some(Keyword::Constraint) if i.is_kw(2, Keyword::Not) || i.is_kw(2, Keyword::Null) => {
            // A NOT NULL constraint's name is not kept (PostgreSQL 15 has
            // no catalog row for it).
            let (i, _) = opt_constraint_name(i)?;
            column_constraint(i)
        }
        Some(Keyword::Constraint | Keyword::References) => map(
            pair(opt_constraint_name, cut(references)),
            |(name, refs)| ColumnConstraint::References {
                name,
                refs: Box::new(refs),
            },
        )(i),
        _ => i.fail(),
    }
}

/// `['CONSTRAINT' col_id]`
pub(crate) fn opt_constraint_name(i: Tokens<'_>) -> PResult<'_, Option<Ident>> {
    opt(preceded(kw(Keyword::Constraint), cut(col_id)))(i)
}

/// `foreign_key ::= ['CONSTRAINT' col_id] 'FOREIGN' 'KEY' '(' col_id {',' col_id} ')' references`
pub(crate) fn foreign_key(i: Tokens<'_>) -> PResult<'_, TableConstraint> {
    let (i, name) = opt_constraint_name(i)?;
    let (i, (columns, refs)) = cut(preceded(
        pair(kw(Keyword::Foreign), cut(kw(Keyword::Key))),
        cut(pair(paren_col_list, references)),
    ))(i)?;
    Ok((
        i,
        TableConstraint::ForeignKey {
            name,
            columns,
            refs: Box::new(refs),
        },
    ))
}

/// `references ::= 'REFERENCES' object_name ['(' col_id {',' col_id} ')']
///   {'ON' ('DELETE' | 'UPDATE') fk_action | 'MATCH' ('FULL' | 'SIMPLE')
///   | ['NOT'] 'DEFERRABLE' | 'INITIALLY' ('DEFERRED' | 'IMMEDIATE')}`
pub(crate) fn references(i: Tokens<'_>) -> PResult<'_, ForeignKeyRef> {
    let (mut i, (table, columns)) = preceded(
        kw(Keyword::References),
        cut(pair(object_name, opt_paren_col_list)),
    )(i)?;
    let mut r = ForeignKeyRef {
        table,
        columns,
        on_delete: FkAction::NoAction,
        on_update: FkAction::NoAction,
        match_full: false,
        deferrable: false,
        initially_deferred: false,
    };
    loop {
        if i.is_kw(0, Keyword::On) {
            let (j, (verb, action)) = preceded(
                kw(Keyword::On),
                cut(pair(kw_of(&[Keyword::Delete, Keyword::Update]), fk_action)),
            )(i)?;
            match verb {
                Keyword::Delete => r.on_delete = action,
                _ => r.on_update = action,
            }
            i = j;
        } else if let Ok((j, _)) = word("match")(i) {
            let (j, full) = cut(alt((
                value(true, kw(Keyword::Full)),
                value(false, word("simple")),
            )))(j)?;
            r.match_full = full;
            i = j;
        } else if let Ok((j, _)) = word("deferrable")(i) {
            r.deferrable = true;
            i = j;
        } else if let Ok((j, _)) = pair(kw(Keyword::Not), word("deferrable"))(i) {
            r.deferrable = false;
            i = j;
        } else if let Ok((j, _)) = word("initially")(i) {
            let (j, deferred) = cut(alt((
                value(true, word("deferred")),
                value(false, word("immediate")),
            )))(j)?;
            r.initially_deferred = deferred;
            i = j;
        } else {
            return Ok((i, r));
        }
    }
}

/// `fk_action ::= 'NO' 'ACTION' | 'RESTRICT' | 'CASCADE'
///   | 'SET' ('NULL' | 'DEFAULT') ['(' col_id {',' col_id} ')']`
fn fk_action(i: Tokens<'_>) -> PResult<'_, FkAction> {
    alt((
        value(FkAction::NoAction, pair(word("no"), cut(word("action")))),
        value(FkAction::Restrict, kw(Keyword::Restrict)),
        value(FkAction::Cascade, kw(Keyword::Cascade)),
        preceded(
            kw(Keyword::Set),
            cut(alt((
                map(
                    preceded(kw(Keyword::Null), opt_paren_col_list),
                    FkAction::SetNull,
                ),
                map(
                    preceded(kw(Keyword::Default), opt_paren_col_list),
                    FkAction::SetDefault,
                ),
            ))),
        ),
    ))(i)
}

/// `drop_table ::= 'DROP' 'TABLE' ['IF' 'EXISTS'] object_name {',' object_name} ['CASCADE' | 'RESTRICT']`
pub(crate) fn drop_table(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Drop).parse(i)?;
    let (i, (_, if_exists, names, behavior)) = cut(tuple((
        kw(Keyword::Table),
        opt(preceded(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        separated_list1(tok(TokenKind::Comma), cut(object_name)),
        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
    )))(i)?;
    Ok((
        i,
        Statement::DropTable(DropTable {
            if_exists: if_exists.is_some(),
            names,
            cascade: behavior == Some(Keyword::Cascade),
        }),
    ))
}

/// `truncate ::= 'TRUNCATE' ['TABLE'] ['ONLY'] object_name {',' ['ONLY'] object_name}
///   ['CASCADE' | 'RESTRICT']`
pub(crate) fn truncate(i: Tokens<'_>) -> PResult<'_, Statement> {
    map(
        preceded(
            kw(Keyword::Truncate),
            cut(pair(
                preceded(
                    opt(kw(Keyword::Table)),
                    separated_list1(tok(TokenKind::Comma), cut(only_target_table)),
                ),
                opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
            )),
        ),
        |(names, behavior): (Vec<(bool, crate::ast::ObjectName)>, _)| {
            let (only, names) = names.into_iter().unzip();
            Statement::Truncate(Truncate {
                names,
                only,
                cascade: behavior == Some(Keyword::Cascade),
            })
        },
    )(i)
}
