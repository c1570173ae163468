//! `ALTER FUNCTION | PROCEDURE | ROUTINE name [(types)] action`: options
//! (those `CREATE FUNCTION` takes, less LANGUAGE and the body, plus a
//! setting's `SET` / `RESET`) ending in an optional RESTRICT, or `RENAME
//! TO`, `OWNER TO`, `SET SCHEMA`. `FUNCTION`, `PROCEDURE` and `ROUTINE`
//! are unreserved words in PostgreSQL, matched as words.

use nom::branch::alt;
use nom::combinator::{cut, map, opt, value};
use nom::multi::separated_list1;
use nom::sequence::{pair, preceded, tuple};
use nom::Parser;

use super::function::{arg_list, routine_option};
use super::object_name;
use super::tokens::{col_id, kw, tok, word, PResult, Tokens};
use crate::ast::{
    AlterFunction, AlterFunctionAction, FunctionOption, FunctionRef, RoutineKind, Statement,
};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// Whether the statement `i` starts is `ALTER FUNCTION | PROCEDURE |
/// ROUTINE`.
pub(crate) fn is_alter_function(i: Tokens<'_>) -> bool {
    ["function", "procedure", "routine"]
        .iter()
        .any(|w| i.toks.len() > 1 && word(w)(i.skip(1)).is_ok())
}

/// One word of a setting's value, as written (a string keeps its quotes).
fn setting_word(i: Tokens<'_>) -> PResult<'_, String> {
    let t = i.first();
    match t.kind {
        TokenKind::Word(_)
        | TokenKind::QuotedIdent(_)
        | TokenKind::String(..)
        | TokenKind::Number => Ok((i.skip(1), i.text(t).to_string())),
        TokenKind::Minus if matches!(i.kind(1), TokenKind::Number) => {
            let n = i.skip(1).first();
            Ok((i.skip(2), format!("-{}", i.text(n))))
        }
        _ => i.fail(),
    }
}

/// A setting's name: `name[.name]`.
fn setting_name(i: Tokens<'_>) -> PResult<'_, String> {
    map(
        pair(col_id, opt(preceded(tok(TokenKind::Dot), cut(col_id)))),
        |(a, b)| match b {
            Some(b) => format!("{a}.{b}"),
            None => a,
        },
    )(i)
}

/// `SET name {TO | =} value [, ...]`, `SET name FROM CURRENT`, `RESET
/// name`, `RESET ALL`: kept as written (upper-case words, `=`).
fn setting_option(i: Tokens<'_>) -> PResult<'_, FunctionOption> {
    let set = preceded(
        pair(kw(Keyword::Set), |i| {
            // `SET SCHEMA` is an action of its own.
            if word("schema")(i).is_ok() {
                i.fail()
            } else {
                Ok((i, ()))
            }
        }),
        cut(pair(
            setting_name,
            alt((
                map(pair(kw(Keyword::From), cut(word("current"))), |_| {
                    "FROM CURRENT".to_string()
                }),
                map(
                    preceded(
                        alt((kw(Keyword::To), tok(TokenKind::Eq))),
                        cut(separated_list1(tok(TokenKind::Comma), setting_word)),
                    ),
                    |vals| format!("= {}", vals.join(", ")),
                ),
            )),
        )),
    );
    let reset = preceded(
        word("reset"),
        cut(alt((
            value("ALL".to_string(), kw(Keyword::All)),
            setting_name,
        ))),
    );
    alt((
        map(set, |(n, v)| {
            FunctionOption::Ignored(format!("SET {n} {v}"))
        }),
        map(reset, |n| FunctionOption::Ignored(format!("RESET {n}"))),
    ))(i)
}

/// `alter_function ::= 'ALTER' ('FUNCTION' | 'PROCEDURE' | 'ROUTINE')
///   object_name [arg_list] ( option {option} ['RESTRICT']
///   | 'RENAME' 'TO' name | 'OWNER' 'TO' name | 'SET' 'SCHEMA' name )`
pub(crate) fn alter_function(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Alter).parse(i)?;
    let (i, (kind, name, args)) = cut(tuple((
        alt((
            value(RoutineKind::Function, word("function")),
            value(RoutineKind::Procedure, word("procedure")),
            value(RoutineKind::Routine, word("routine")),
        )),
        object_name,
        opt(arg_list),
    )))(i)?;
    let renamed = map(
        preceded(pair(word("rename"), cut(kw(Keyword::To))), cut(col_id)),
        AlterFunctionAction::RenameTo,
    );
    let owner = map(
        preceded(pair(word("owner"), cut(kw(Keyword::To))), cut(col_id)),
        AlterFunctionAction::OwnerTo,
    );
    let schema = map(
        preceded(pair(kw(Keyword::Set), word("schema")), cut(col_id)),
        AlterFunctionAction::SetSchema,
    );
    let option = |i| alt((routine_option, setting_option))(i);
    let options = map(
        pair(
            pair(option, nom::multi::many0(option)),
            opt(word("restrict")),
        ),
        |((first, mut rest), _)| {
            rest.insert(0, first);
            AlterFunctionAction::Options(rest)
        },
    );
    let (i, action) = cut(alt((renamed, owner, schema, options)))(i)?;
    Ok((
        i,
        Statement::AlterFunction(Box::new(AlterFunction {
            kind,
            func: FunctionRef { name, args },
            action,
        })),
    ))
}

#[cfg(test)]
mod tests {
    use crate::parse_one;

    #[test]
    fn alter_function_round_trips() {
        for sql in [
            "ALTER FUNCTION f(integer) IMMUTABLE",
            "ALTER FUNCTION f STRICT LEAKPROOF COST 10",
            "ALTER FUNCTION f(x integer, y integer) CALLED ON NULL INPUT NOT LEAKPROOF",
            "ALTER PROCEDURE p(text) SECURITY DEFINER PARALLEL SAFE ROWS 5",
            "ALTER ROUTINE f(integer) RENAME TO g",
            "ALTER FUNCTION f() OWNER TO someone",
            "ALTER FUNCTION s.f(integer) SET SCHEMA t",
            "ALTER FUNCTION f(text) SET work_mem = '2MB'",
            "ALTER FUNCTION f(text) SET search_path = a, b RESET ALL",
            "ALTER FUNCTION f(text) SET x.y FROM CURRENT RESET work_mem",
        ] {
            let s = parse_one(sql).expect(sql);
            assert_eq!(s.to_string(), sql);
            assert_eq!(parse_one(&s.to_string()).expect("reparses"), s);
        }
        assert_eq!(
            parse_one("alter function f(int) returns null on null input restrict")
                .unwrap()
                .to_string(),
            "ALTER FUNCTION f(integer) STRICT"
        );
        assert!(parse_one("alter function f(int)").is_err());
        assert!(parse_one("alter function f(int) language sql").is_err());
        assert!(parse_one("alter table function add column x int").is_ok());
    }
}
