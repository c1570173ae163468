//! `CREATE OPERATOR op (definition)` and `DROP OPERATOR [IF EXISTS] op
//! (left, right), ...`. `OPERATOR` is a reserved word only inside
//! expressions in PostgreSQL, so it is matched as a word here.

use nom::combinator::{cut, opt};
use nom::multi::separated_list1;
use nom::sequence::{preceded, tuple};
use nom::Parser;

use super::literal::{data_type, string};
use super::tokens::{col_label, kw, kw_of, tok, word, PResult, Tokens};
use crate::ast::{CreateOperator, DropOperator, OperDefArg, OperatorRef, Statement};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// Whether the statement `i` starts is `CREATE OPERATOR` / `DROP OPERATOR`.
pub(crate) fn is_operator(i: Tokens<'_>) -> bool {
    1 < i.toks.len() && word("operator")(i.skip(1)).is_ok()
}

/// One operator symbol token: `=`, `<`, `===`, `@#@`, ...
fn op_symbol(i: Tokens<'_>) -> PResult<'_, String> {
    use TokenKind as K;
    let t = i.first();
    match t.kind {
        K::Eq
        | K::NotEq
        | K::Lt
        | K::LtEq
        | K::Gt
        | K::GtEq
        | K::Plus
        | K::Minus
        | K::Star
        | K::Slash
        | K::Percent
        | K::Caret
        | K::Concat
        | K::Other => Ok((i.skip(1), i.text(t).to_string())),
        _ => i.fail(),
    }
}

/// `any_operator ::= op | 'OPERATOR' '(' op ')'`
fn any_operator(i: Tokens<'_>) -> PResult<'_, String> {
    if let Ok((rest, _)) = word("operator")(i) {
        let (rest, (_, op, _)) = cut(tuple((
            tok(TokenKind::LParen),
            op_symbol,
            tok(TokenKind::RParen),
        )))(rest)?;
        return Ok((rest, op));
    }
    op_symbol(i)
}

/// `def_arg ::= type_name | any_operator | string | number`
fn def_arg(i: Tokens<'_>) -> PResult<'_, OperDefArg> {
    if word("operator")(i).is_ok() && i.kind(1) == TokenKind::LParen {
        return any_operator(i).map(|(rest, op)| (rest, OperDefArg::Op(op)));
    }
    if let Ok((rest, t)) = data_type(i) {
        return Ok((rest, OperDefArg::Type(t)));
    }
    if let Ok((rest, s)) = string(i) {
        return Ok((rest, OperDefArg::Text(s)));
    }
    if i.first().kind == TokenKind::Number {
        return Ok((i.skip(1), OperDefArg::Text(i.text(i.first()).to_string())));
    }
    any_operator(i).map(|(rest, op)| (rest, OperDefArg::Op(op)))
}

/// `create_operator ::= 'CREATE' 'OPERATOR' op '(' name ['=' def_arg]
///   {',' name ['=' def_arg]} ')'`
pub(crate) fn create_operator(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Create).parse(i)?;
    let (i, (_, name, _)) = cut(tuple((word("operator"), op_symbol, tok(TokenKind::LParen))))(i)?;
    let elem = tuple((col_label, opt(preceded(tok(TokenKind::Eq), cut(def_arg)))));
    let (i, (options, _)) = cut(tuple((
        separated_list1(tok(TokenKind::Comma), elem),
        tok(TokenKind::RParen),
    )))(i)?;
    Ok((
        i,
        Statement::CreateOperator(Box::new(CreateOperator { name, options })),
    ))
}

/// `operator_ref ::= any_operator '(' (type | 'NONE') ',' type ')'`
pub(crate) fn operator_ref(i: Tokens<'_>) -> PResult<'_, OperatorRef> {
    let (i, name) = any_operator(i)?;
    let left = |i| {
        if let Ok((rest, _)) = word("none")(i) {
            return Ok((rest, None));
        }
        data_type(i).map(|(rest, t)| (rest, Some(t)))
    };
    let (i, (_, left, _, right, _)) = cut(tuple((
        tok(TokenKind::LParen),
        left,
        tok(TokenKind::Comma),
        data_type,
        tok(TokenKind::RParen),
    )))(i)?;
    Ok((i, OperatorRef { name, left, right }))
}

/// `drop_operator ::= 'DROP' 'OPERATOR' ['IF' 'EXISTS'] operator_ref
///   {',' operator_ref} ['CASCADE' | 'RESTRICT']`
pub(crate) fn drop_operator(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Drop).parse(i)?;
    let (i, (_, if_exists, ops, behavior)) = cut(tuple((
        word("operator"),
        opt(preceded(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        separated_list1(tok(TokenKind::Comma), operator_ref),
        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
    )))(i)?;
    Ok((
        i,
        Statement::DropOperator(DropOperator {
            if_exists: if_exists.is_some(),
            ops,
            cascade: behavior == Some(Keyword::Cascade),
        }),
    ))
}

#[cfg(test)]
mod tests {
    use crate::parse_one;

    #[test]
    fn operator_statements_round_trip() {
        for sql in [
            "CREATE OPERATOR = (procedure = inline_eq, leftarg = foodomain, rightarg = foodomain)",
            "CREATE OPERATOR === (function = f, leftarg = int4, rightarg = int4, commutator = ===, hashes)",
            "CREATE OPERATOR !# (rightarg = int4, procedure = f, negator = OPERATOR(<>))",
            "DROP OPERATOR IF EXISTS === (int4, int4), !# (NONE, int4) CASCADE",
        ] {
            let s = parse_one(sql).unwrap();
            let again = parse_one(&s.to_string()).unwrap();
            assert_eq!(s, again, "{sql}");
        }
    }
}
