//! Function and domain DDL: `CREATE [OR REPLACE] FUNCTION`, `DROP
//! FUNCTION`, `CREATE DOMAIN`, `DROP DOMAIN`. `FUNCTION`, `DOMAIN`,
//! `RETURNS`, `LANGUAGE` and the option words are unreserved in PostgreSQL,
//! so they are matched as words.

use nom::branch::alt;
use nom::combinator::{cut, map, opt, value};
use nom::multi::separated_list0;
use nom::multi::separated_list1;
use nom::sequence::{delimited, pair, preceded, tuple};
use nom::Parser;

use super::expr::prec;
use super::expr::{expr, expr_bp};
use super::literal::{data_type, string};
use super::object_name;
use super::tokens::{col_id, kw, kw_of, tok, word, PResult, Tokens};
use crate::ast::{
    AlterDomain, AlterDomainAction, CreateDomain, CreateFunction, DomainConstraint, DropDomain,
    DropFunction, Expr, FunctionArg, FunctionOption, FunctionRef, FunctionReturns, Statement,
};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

fn is_word(i: Tokens<'_>, n: usize, w: &'static str) -> bool {
    n < i.toks.len() && word(w)(i.skip(n)).is_ok()
}

/// Whether the statement `i` starts is `CREATE [OR REPLACE] FUNCTION`.
pub(crate) fn is_create_function(i: Tokens<'_>) -> bool {
    is_word(i, 1, "function") || (i.is_kw(1, Keyword::Or) && is_word(i, 3, "function"))
}

/// Whether the statement `i` starts is `DROP FUNCTION`.
pub(crate) fn is_drop_function(i: Tokens<'_>) -> bool {
    is_word(i, 1, "function")
}

/// Whether the statement `i` starts is `CREATE DOMAIN` / `DROP DOMAIN`.
pub(crate) fn is_domain(i: Tokens<'_>) -> bool {
    is_word(i, 1, "domain")
}

/// `func_arg ::= [IN] [name] data_type`: a lone type when the type is
/// followed by `,` or `)`, else a name and a type.
fn func_arg(i: Tokens<'_>) -> PResult<'_, FunctionArg> {
    let (i, _) = opt(kw(Keyword::In))(i)?;
    if let Ok((rest, t)) = data_type(i) {
        if matches!(rest.first().kind, TokenKind::Comma | TokenKind::RParen) {
            return Ok((
                rest,
                FunctionArg {
                    name: None,
                    data_type: t,
                },
            ));
        }
    }
    map(pair(col_id, cut(data_type)), |(name, data_type)| {
        FunctionArg {
            name: Some(name),
            data_type,
        }
    })(i)
}

pub(crate) fn arg_list(i: Tokens<'_>) -> PResult<'_, Vec<FunctionArg>> {
    delimited(
        tok(TokenKind::LParen),
        separated_list0(tok(TokenKind::Comma), func_arg),
        cut(tok(TokenKind::RParen)),
    )(i)
}

/// `returns ::= 'RETURNS' ('SETOF' data_type | 'TABLE' arg_list | data_type)`
fn returns(i: Tokens<'_>) -> PResult<'_, FunctionReturns> {
    preceded(
        word("returns"),
        cut(alt((
            map(
                preceded(word("setof"), cut(data_type)),
                FunctionReturns::Setof,
            ),
            map(
                preceded(kw(Keyword::Table), cut(arg_list)),
                FunctionReturns::Table,
            ),
            map(data_type, FunctionReturns::Type),
        ))),
    )(i)
}

fn lower(w: &'static str) -> impl Fn(Tokens<'_>) -> PResult<'_, String> {
    move |i| value(w.to_string(), word(w))(i)
}

fn number(i: Tokens<'_>) -> PResult<'_, String> {
    let t = i.first();
    match t.kind {
        TokenKind::Number => Ok((i.skip(1), i.text(t).to_string())),
        _ => i.fail(),
    }
}

/// `COST n`, `ROWS n`, `[NOT] LEAKPROOF`, `SECURITY DEFINER | INVOKER`.
fn ignored_option(i: Tokens<'_>) -> PResult<'_, FunctionOption> {
    alt((
        map(
            pair(alt((lower("cost"), lower("rows"))), cut(number)),
            |(w, n)| FunctionOption::Ignored(format!("{} {n}", w.to_uppercase())),
        ),
        value(
            FunctionOption::Ignored("NOT LEAKPROOF".into()),
            pair(kw(Keyword::Not), word("leakproof")),
        ),
        value(
            FunctionOption::Ignored("LEAKPROOF".into()),
            word("leakproof"),
        ),
        map(
            preceded(
                word("security"),
                cut(alt((lower("definer"), lower("invoker")))),
            ),
            |w| FunctionOption::Ignored(format!("SECURITY {}", w.to_uppercase())),
        ),
    ))(i)
}

/// One option of `CREATE FUNCTION`.
fn function_option(i: Tokens<'_>) -> PResult<'_, FunctionOption> {
    alt((
        map(
            preceded(word("language"), cut(alt((string, col_id)))),
            FunctionOption::Language,
        ),
        routine_option,
        map(preceded(kw(Keyword::As), cut(string)), FunctionOption::As),
        map(preceded(word("return"), cut(expr)), FunctionOption::Return),
    ))(i)
}

/// An option `CREATE FUNCTION` and `ALTER FUNCTION` share.
pub(super) fn routine_option(i: Tokens<'_>) -> PResult<'_, FunctionOption> {
    alt((
        ignored_option,
        map(
            alt((lower("immutable"), lower("stable"), lower("volatile"))),
            FunctionOption::Volatility,
        ),
        value(FunctionOption::Strict(true), word("strict")),
        value(
            FunctionOption::Strict(false),
            tuple((
                word("called"),
                cut(kw(Keyword::On)),
                cut(kw(Keyword::Null)),
                cut(word("input")),
            )),
        ),
        value(
            FunctionOption::Strict(true),
            tuple((
                word("returns"),
                kw(Keyword::Null),
                cut(kw(Keyword::On)),
                cut(kw(Keyword::Null)),
                cut(word("input")),
            )),
        ),
        map(
            preceded(
                word("parallel"),
                cut(alt((lower("safe"), lower("restricted"), lower("unsafe")))),
            ),
            FunctionOption::Parallel,
        ),
    ))(i)
}

/// `create_function ::= 'CREATE' ['OR' 'REPLACE'] 'FUNCTION' object_name
///   '(' [func_arg {',' func_arg}] ')' [returns] {function_option}`
pub(crate) fn create_function(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Create).parse(i)?;
    let (mut i, (or_replace, _, name, args, returns)) = cut(tuple((
        opt(pair(kw(Keyword::Or), cut(word("replace")))),
        word("function"),
        object_name,
        arg_list,
        opt(returns),
    )))(i)?;
    let mut options = Vec::new();
    while let Ok((rest, o)) = function_option(i) {
        options.push(o);
        i = rest;
    }
    let create = CreateFunction {
        or_replace: or_replace.is_some(),
        name,
        args,
        returns,
        options,
    };
    Ok((i, Statement::CreateFunction(Box::new(create))))
}

/// `drop_function ::= 'DROP' 'FUNCTION' ['IF' 'EXISTS'] object_name [arg_list]
///   {',' object_name [arg_list]} ['CASCADE' | 'RESTRICT']`
pub(crate) fn drop_function(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Drop).parse(i)?;
    let (i, (_, if_exists, funcs, behavior)) = cut(tuple((
        word("function"),
        opt(preceded(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        separated_list1(
            tok(TokenKind::Comma),
            cut(map(pair(object_name, opt(arg_list)), |(name, args)| {
                FunctionRef { name, args }
            })),
        ),
        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
    )))(i)?;
    Ok((
        i,
        Statement::DropFunction(DropFunction {
            if_exists: if_exists.is_some(),
            funcs,
            cascade: behavior == Some(Keyword::Cascade),
        }),
    ))
}

/// `check ::= 'CHECK' '(' expr ')'`
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

/// `domain_constraint ::= 'DEFAULT' expr
///   | ['CONSTRAINT' name] ('NOT' 'NULL' | 'NULL' | check)`
/// (a NOT NULL's name is not kept).
fn domain_constraint(i: Tokens<'_>) -> PResult<'_, DomainConstraint> {
    if let Ok((i, e)) = preceded(kw(Keyword::Default), cut(expr_bp(prec::CMP)))(i) {
        return Ok((i, DomainConstraint::Default(e)));
    }
    let (i, name) = opt(preceded(kw(Keyword::Constraint), cut(col_id)))(i)?;
    let plain = alt((
        value(
            DomainConstraint::NotNull,
            pair(kw(Keyword::Not), cut(kw(Keyword::Null))),
        ),
        value(DomainConstraint::Null, kw(Keyword::Null)),
    ));
    if name.is_some() {
        alt((
            plain,
            map(cut(check), move |e| {
                DomainConstraint::Check(name.clone(), e)
            }),
        ))(i)
    } else {
        alt((plain, map(check, |e| DomainConstraint::Check(None, e))))(i)
    }
}

/// `create_domain ::= 'CREATE' 'DOMAIN' object_name ['AS'] data_type
///   {domain_constraint}`
pub(crate) fn create_domain(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Create).parse(i)?;
    let (mut i, (_, name, _, data_type)) = cut(tuple((
        word("domain"),
        object_name,
        opt(kw(Keyword::As)),
        data_type,
    )))(i)?;
    let mut constraints = Vec::new();
    while let Ok((rest, c)) = domain_constraint(i) {
        constraints.push(c);
        i = rest;
    }
    Ok((
        i,
        Statement::CreateDomain(Box::new(CreateDomain {
            name,
            data_type,
            constraints,
        })),
    ))
}

/// `alter_domain ::= 'ALTER' 'DOMAIN' object_name
///   ( 'SET' 'DEFAULT' expr | 'DROP' 'DEFAULT' | ('SET' | 'DROP') 'NOT' 'NULL'
///   | 'ADD' ['CONSTRAINT' name] check ['NOT' 'VALID']
///   | 'DROP' 'CONSTRAINT' ['IF' 'EXISTS'] name ['CASCADE' | 'RESTRICT']
///   | 'RENAME' 'TO' name | 'RENAME' 'CONSTRAINT' name 'TO' name )`
pub(crate) fn alter_domain(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Alter).parse(i)?;
    let (i, (_, name)) = cut(pair(word("domain"), object_name))(i)?;
    let set = preceded(
        word("set"),
        cut(alt((
            map(
                preceded(kw(Keyword::Default), cut(expr)),
                AlterDomainAction::SetDefault,
            ),
            value(
                AlterDomainAction::SetNotNull,
                pair(kw(Keyword::Not), cut(kw(Keyword::Null))),
            ),
        ))),
    );
    let drop = preceded(
        kw(Keyword::Drop),
        cut(alt((
            value(AlterDomainAction::DropDefault, kw(Keyword::Default)),
            value(
                AlterDomainAction::DropNotNull,
                pair(kw(Keyword::Not), cut(kw(Keyword::Null))),
            ),
            map(
                preceded(
                    kw(Keyword::Constraint),
                    cut(tuple((
                        opt(pair(kw(Keyword::If), cut(kw(Keyword::Exists)))),
                        col_id,
                        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
                    ))),
                ),
                |(if_exists, name, behavior)| AlterDomainAction::DropConstraint {
                    if_exists: if_exists.is_some(),
                    name,
                    cascade: behavior == Some(Keyword::Cascade),
                },
            ),
        ))),
    );
    let add = preceded(
        word("add"),
        cut(map(
            tuple((
                opt(preceded(kw(Keyword::Constraint), cut(col_id))),
                check,
                opt(pair(kw(Keyword::Not), cut(word("valid")))),
            )),
            |(name, expr, nv)| AlterDomainAction::AddCheck {
                name,
                expr,
                not_valid: nv.is_some(),
            },
        )),
    );
    let rename = preceded(
        word("rename"),
        cut(alt((
            map(
                preceded(
                    kw(Keyword::Constraint),
                    cut(pair(col_id, preceded(kw(Keyword::To), col_id))),
                ),
                |(a, b)| AlterDomainAction::RenameConstraint(a, b),
            ),
            map(
                preceded(kw(Keyword::To), cut(col_id)),
                AlterDomainAction::Rename,
            ),
        ))),
    );
    let (i, action) = cut(alt((set, drop, add, rename)))(i)?;
    Ok((
        i,
        Statement::AlterDomain(Box::new(AlterDomain { name, action })),
    ))
}

/// `drop_domain ::= 'DROP' 'DOMAIN' ['IF' 'EXISTS'] object_name {',' object_name}
///   ['CASCADE' | 'RESTRICT']`
pub(crate) fn drop_domain(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Drop).parse(i)?;
    let (i, (_, if_exists, names, behavior)) = cut(tuple((
        word("domain"),
        opt(preceded(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        separated_list1(tok(TokenKind::Comma), cut(object_name)),
        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
    )))(i)?;
    Ok((
        i,
        Statement::DropDomain(DropDomain {
            if_exists: if_exists.is_some(),
            names,
            cascade: behavior == Some(Keyword::Cascade),
        }),
    ))
}

#[cfg(test)]
mod tests {
    use crate::ast::Statement;
    use crate::parse_one;

    #[test]
    fn function_and_domain_statements_round_trip() {
        for sql in [
            "CREATE FUNCTION f(integer, x text) RETURNS integer LANGUAGE sql IMMUTABLE STRICT AS 'SELECT $1'",
            "CREATE OR REPLACE FUNCTION f() RETURNS SETOF integer AS 'select 1' LANGUAGE plpgsql",
            "CREATE FUNCTION f(a double precision) RETURNS TABLE (x integer) CALLED ON NULL INPUT PARALLEL SAFE AS 'x'",
            "CREATE FUNCTION f(a integer) RETURNS integer RETURN a + 1",
            "CREATE FUNCTION f() RETURNS integer LANGUAGE sql COST 100 ROWS 3 NOT LEAKPROOF LEAKPROOF SECURITY DEFINER AS 'x'",
            "DROP FUNCTION f",
            "DROP FUNCTION IF EXISTS f(integer, text), g() CASCADE",
            "CREATE DOMAIN d AS integer DEFAULT 3 NOT NULL CONSTRAINT c CHECK (value > 0) CHECK (value < 9)",
            "DROP DOMAIN IF EXISTS d, e CASCADE",
            "CREATE DOMAIN d AS integer NOT NULL DEFAULT 3 DEFAULT 4",
            "ALTER DOMAIN d SET DEFAULT 3 + 4",
            "ALTER DOMAIN d DROP DEFAULT",
            "ALTER DOMAIN d SET NOT NULL",
            "ALTER DOMAIN d DROP NOT NULL",
            "ALTER DOMAIN d ADD CONSTRAINT c CHECK (value > 0) NOT VALID",
            "ALTER DOMAIN d ADD CHECK (value < 9)",
            "ALTER DOMAIN d DROP CONSTRAINT IF EXISTS c CASCADE",
            "ALTER DOMAIN d DROP CONSTRAINT c",
            "ALTER DOMAIN d RENAME TO e",
            "ALTER DOMAIN d RENAME CONSTRAINT c TO c2",
        ] {
            let s = parse_one(sql).expect(sql);
            assert_eq!(s.to_string(), sql);
            assert_eq!(parse_one(&s.to_string()).expect("reparses"), s);
        }
        let s = parse_one("create function f(int) returns int as $$ select 'a' $$ language sql")
            .unwrap();
        let Statement::CreateFunction(c) = s else {
            panic!("not a function")
        };
        assert_eq!(c.options.len(), 2);
        assert!(parse_one("create table function (function int)").is_ok());
        assert!(parse_one("create function f(").is_err());
    }
}
