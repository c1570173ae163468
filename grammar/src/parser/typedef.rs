//! Base-type and cast statements: `CREATE TYPE name [(params)]`, `DROP
//! TYPE`, `CREATE CAST`, `DROP CAST`. `TYPE` and the option words are
//! unreserved in PostgreSQL, so they are matched as words; `CREATE TYPE
//! name AS ...` is not this module's.

use nom::branch::alt;
use nom::combinator::{cut, map, opt, value};
use nom::multi::separated_list1;
use nom::sequence::{delimited, pair, preceded, tuple};
use nom::Parser;

use super::function::arg_list;
use super::literal::{data_type, string};
use super::object_name;
use super::tokens::{col_label, kw, kw_of, tok, word, PResult, Tokens};
use crate::ast::{
    CastMethod, CastWhen, CreateCast, DataType, DefArg, DefElem, DefineType, DropCast, DropType,
    FunctionRef, Statement,
};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// Whether the statement `i` starts is `CREATE TYPE name` or `CREATE
/// TYPE name (...)` (not `CREATE TYPE name AS ...`).
pub(crate) fn is_define_type(i: Tokens<'_>) -> bool {
    if i.toks.len() < 3 || word("type")(i.skip(1)).is_err() {
        return false;
    }
    match object_name(i.skip(2)) {
        Ok((rest, _)) => !rest.is_kw(0, Keyword::As),
        Err(_) => false,
    }
}

/// Whether the statement `i` starts is `DROP TYPE`.
pub(crate) fn is_drop_type(i: Tokens<'_>) -> bool {
    i.toks.len() > 1 && word("type")(i.skip(1)).is_ok()
}

fn number(i: Tokens<'_>) -> PResult<'_, String> {
    let t = i.first();
    match t.kind {
        TokenKind::Number => Ok((i.skip(1), i.text(t).to_string())),
        _ => i.fail(),
    }
}

/// `def_arg ::= string | number | word | data_type` (a lone word before
/// `,` or `)` is a name: `alignment = double`).
fn def_arg(i: Tokens<'_>) -> PResult<'_, DefArg> {
    if let Ok((rest, w)) = col_label(i) {
        if matches!(rest.first().kind, TokenKind::Comma | TokenKind::RParen) {
            return Ok((rest, DefArg::Type(DataType::Named(w))));
        }
    }
    alt((
        map(string, DefArg::Str),
        map(number, DefArg::Num),
        map(data_type, DefArg::Type),
    ))(i)
}

/// `def_elem ::= word ['=' def_arg]`
fn def_elem(i: Tokens<'_>) -> PResult<'_, DefElem> {
    map(
        pair(col_label, opt(preceded(tok(TokenKind::Eq), cut(def_arg)))),
        |(name, arg)| DefElem {
            name: name.to_lowercase(),
            arg,
        },
    )(i)
}

/// `define_type ::= 'CREATE' 'TYPE' object_name ['(' def_elem {',' def_elem} ')']`
pub(crate) fn define_type(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Create).parse(i)?;
    let (i, (_, name, params)) = cut(tuple((
        word("type"),
        object_name,
        opt(delimited(
            tok(TokenKind::LParen),
            separated_list1(tok(TokenKind::Comma), def_elem),
            tok(TokenKind::RParen),
        )),
    )))(i)?;
    Ok((
        i,
        Statement::DefineType(Box::new(DefineType { name, params })),
    ))
}

/// `drop_type ::= 'DROP' 'TYPE' ['IF' 'EXISTS'] object_name {',' object_name}
///   ['CASCADE' | 'RESTRICT']`
pub(crate) fn drop_type(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Drop).parse(i)?;
    let (i, (_, if_exists, names, behavior)) = cut(tuple((
        word("type"),
        opt(preceded(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        separated_list1(tok(TokenKind::Comma), cut(object_name)),
        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
    )))(i)?;
    Ok((
        i,
        Statement::DropType(DropType {
            if_exists: if_exists.is_some(),
            names,
            cascade: behavior == Some(Keyword::Cascade),
        }),
    ))
}

/// `'(' data_type 'AS' data_type ')'`
fn cast_types(i: Tokens<'_>) -> PResult<'_, (DataType, DataType)> {
    delimited(
        tok(TokenKind::LParen),
        cut(pair(data_type, preceded(kw(Keyword::As), data_type))),
        cut(tok(TokenKind::RParen)),
    )(i)
}

/// `cast_method ::= 'WITHOUT' 'FUNCTION' | 'WITH' 'INOUT'
///   | 'WITH' 'FUNCTION' object_name [arg_list]`
fn cast_method(i: Tokens<'_>) -> PResult<'_, CastMethod> {
    alt((
        value(
            CastMethod::Binary,
            pair(kw(Keyword::Without), cut(word("function"))),
        ),
        preceded(
            kw(Keyword::With),
            cut(alt((
                value(CastMethod::Inout, word("inout")),
                map(
                    preceded(word("function"), pair(object_name, opt(arg_list))),
                    |(name, args)| CastMethod::Function(FunctionRef { name, args }),
                ),
            ))),
        ),
    ))(i)
}

/// `create_cast ::= 'CREATE' 'CAST' cast_types cast_method
///   ['AS' ('IMPLICIT' | 'ASSIGNMENT')]`
pub(crate) fn create_cast(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = pair(kw(Keyword::Create), kw(Keyword::Cast)).parse(i)?;
    let (i, ((source, target), method, context)) = cut(tuple((
        cast_types,
        cast_method,
        opt(preceded(
            kw(Keyword::As),
            cut(alt((
                value(CastWhen::Implicit, word("implicit")),
                value(CastWhen::Assignment, word("assignment")),
            ))),
        )),
    )))(i)?;
    let c = CreateCast {
        source,
        target,
        method,
        context: context.unwrap_or(CastWhen::Explicit),
    };
    Ok((i, Statement::CreateCast(Box::new(c))))
}

/// `drop_cast ::= 'DROP' 'CAST' ['IF' 'EXISTS'] cast_types ['CASCADE' | 'RESTRICT']`
pub(crate) fn drop_cast(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = pair(kw(Keyword::Drop), kw(Keyword::Cast)).parse(i)?;
    let (i, (if_exists, (source, target), behavior)) = cut(tuple((
        opt(preceded(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        cast_types,
        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
    )))(i)?;
    Ok((
        i,
        Statement::DropCast(DropCast {
            if_exists: if_exists.is_some(),
            source,
            target,
            cascade: behavior == Some(Keyword::Cascade),
        }),
    ))
}

#[cfg(test)]
mod tests {
    use crate::parse_one;

    #[test]
    fn type_and_cast_statements_round_trip() {
        for sql in [
            "CREATE TYPE xfloat4",
            "CREATE TYPE xfloat4 (input = xfloat4in, output = xfloat4out, like = float4)",
            "CREATE TYPE t (internallength = 16, passedbyvalue, storage = plain, category = 'N', default = '0')",
            "DROP TYPE xfloat4",
            "DROP TYPE IF EXISTS a, b CASCADE",
            "CREATE CAST (xfloat4 AS real) WITHOUT FUNCTION",
            "CREATE CAST (integer AS xfloat4) WITH INOUT AS IMPLICIT",
            "CREATE CAST (text AS t) WITH FUNCTION f(text) AS ASSIGNMENT",
            "CREATE CAST (text AS t) WITH FUNCTION f",
            "DROP CAST (integer AS xfloat4)",
            "DROP CAST IF EXISTS (integer AS xfloat4) CASCADE",
        ] {
            let s = parse_one(sql).expect(sql);
            assert_eq!(s.to_string(), sql);
            assert_eq!(parse_one(&s.to_string()).expect("reparses"), s);
        }
    }
}
