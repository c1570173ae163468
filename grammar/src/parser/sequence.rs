//! Sequence DDL: `CREATE SEQUENCE`, `ALTER SEQUENCE`, `DROP SEQUENCE`, and
//! the option list a column's `GENERATED ... AS IDENTITY (...)` shares.
//! `SEQUENCE` and the option names are unreserved words in PostgreSQL that
//! the rest of the grammar never looks for, so they are matched as words.

use nom::branch::alt;
use nom::combinator::{cut, opt};
use nom::multi::separated_list1;
use nom::sequence::{pair, preceded, tuple};
use nom::Parser;

use super::literal::data_type;
use super::object_name;
use super::tokens::{col_id, col_label, kw, kw_of, many0, tok, word, PResult, Tokens};
use crate::ast::{
    AlterSequence, AlterSequenceAction, CreateSequence, DropSequence, SeqOption, Statement,
};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// Whether the statement `i` starts is `CREATE`/`ALTER`/`DROP SEQUENCE`.
pub(crate) fn is_sequence(i: Tokens<'_>) -> bool {
    1 < i.toks.len() && word("sequence")(i.skip(1)).is_ok()
}

/// `create_sequence ::= 'CREATE' 'SEQUENCE' ['IF' 'NOT' 'EXISTS'] object_name {seq_option}`
pub(crate) fn create_sequence(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = pair(kw(Keyword::Create), word("sequence")).parse(i)?;
    let (i, (if_not_exists, name, options)) = cut(tuple((
        opt(tuple((
            kw(Keyword::If),
            cut(kw(Keyword::Not)),
            cut(kw(Keyword::Exists)),
        ))),
        object_name,
        many0(seq_option),
    )))(i)?;
    Ok((
        i,
        Statement::CreateSequence(Box::new(CreateSequence {
            if_not_exists: if_not_exists.is_some(),
            name,
            options,
        })),
    ))
}

/// `alter_sequence ::= 'ALTER' 'SEQUENCE' ['IF' 'EXISTS'] object_name
///   (seq_option {seq_option} | 'RENAME' 'TO' col_id)`
pub(crate) fn alter_sequence(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = pair(kw(Keyword::Alter), word("sequence")).parse(i)?;
    let (i, (if_exists, name)) = cut(pair(
        opt(pair(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        object_name,
    ))(i)?;
    let (i, action) = cut(alt((
        preceded(pair(word("rename"), cut(kw(Keyword::To))), cut(col_id))
            .map(AlterSequenceAction::RenameTo),
        pair(seq_option, many0(seq_option)).map(|(first, mut rest)| {
            rest.insert(0, first);
            AlterSequenceAction::Options(rest)
        }),
    )))(i)?;
    Ok((
        i,
        Statement::AlterSequence(Box::new(AlterSequence {
            if_exists: if_exists.is_some(),
            name,
            action,
        })),
    ))
}

/// `drop_sequence ::= 'DROP' 'SEQUENCE' ['IF' 'EXISTS'] object_name {',' object_name}
///   ['CASCADE' | 'RESTRICT']`
pub(crate) fn drop_sequence(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = pair(kw(Keyword::Drop), word("sequence")).parse(i)?;
    let (i, (if_exists, names, behavior)) = cut(tuple((
        opt(preceded(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        separated_list1(tok(TokenKind::Comma), cut(object_name)),
        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
    )))(i)?;
    Ok((
        i,
        Statement::DropSequence(DropSequence {
            if_exists: if_exists.is_some(),
            names,
            cascade: behavior == Some(Keyword::Cascade),
        }),
    ))
}

/// `seq_option ::= 'AS' data_type | 'INCREMENT' ['BY'] number
///   | 'MINVALUE' number | 'NO' 'MINVALUE' | 'MAXVALUE' number | 'NO' 'MAXVALUE'
///   | 'START' ['WITH'] number | 'RESTART' [['WITH'] number] | 'CACHE' number
///   | 'CYCLE' | 'NO' 'CYCLE' | 'OWNED' 'BY' (name {'.' name} | 'NONE')`
pub(crate) fn seq_option(i: Tokens<'_>) -> PResult<'_, SeqOption> {
    alt((
        preceded(kw(Keyword::As), cut(data_type)).map(SeqOption::As),
        preceded(pair(word("increment"), opt(kw(Keyword::By))), cut(number))
            .map(SeqOption::Increment),
        preceded(word("minvalue"), cut(number)).map(|n| SeqOption::MinValue(Some(n))),
        preceded(word("maxvalue"), cut(number)).map(|n| SeqOption::MaxValue(Some(n))),
        preceded(
            pair(kw(Keyword::Start), opt(kw(Keyword::With))),
            cut(number),
        )
        .map(SeqOption::Start),
        preceded(
            word("restart"),
            opt(preceded(opt(kw(Keyword::With)), number)),
        )
        .map(SeqOption::Restart),
        preceded(word("cache"), cut(number)).map(SeqOption::Cache),
        word("cycle").map(|_| SeqOption::Cycle(true)),
        preceded(
            word("no"),
            cut(alt((
                word("minvalue").map(|_| SeqOption::MinValue(None)),
                word("maxvalue").map(|_| SeqOption::MaxValue(None)),
                word("cycle").map(|_| SeqOption::Cycle(false)),
            ))),
        ),
        preceded(pair(word("owned"), cut(kw(Keyword::By))), cut(owner)).map(SeqOption::OwnedBy),
    ))(i)
}

/// `OWNED BY`'s target: `NONE` or a dotted column name.
fn owner(i: Tokens<'_>) -> PResult<'_, Option<Vec<String>>> {
    if word("none")(i).is_ok() && i.kind(1) != TokenKind::Dot {
        return Ok((i.skip(1), None));
    }
    let (i, first) = col_id(i)?;
    let (i, rest) = many0(preceded(tok(TokenKind::Dot), cut(col_label)))(i)?;
    let mut names = vec![first];
    names.extend(rest);
    Ok((i, Some(names)))
}

/// A signed integer (PostgreSQL's `NumericOnly`, integers only).
fn number(i: Tokens<'_>) -> PResult<'_, i64> {
    let (i, sign) = opt(alt((tok(TokenKind::Minus), tok(TokenKind::Plus))))(i)?;
    let t = i.first();
    if t.kind != TokenKind::Number {
        return i.fail();
    }
    let text = i.text(t);
    let negative = sign.is_some_and(|s| s.kind == TokenKind::Minus);
    let parsed = if negative {
        format!("-{text}").parse::<i64>()
    } else {
        text.parse::<i64>()
    };
    match parsed {
        Ok(n) => Ok((i.skip(1), n)),
        Err(_) => i.fail(),
    }
}

#[cfg(test)]
mod tests {
    use crate::parse_one;

    #[test]
    fn sequence_statements_round_trip() {
        for sql in [
            "CREATE SEQUENCE s",
            "CREATE SEQUENCE IF NOT EXISTS public.s AS integer INCREMENT BY -2 MINVALUE -10 NO MAXVALUE START WITH 5 CACHE 1 CYCLE OWNED BY t.a",
            "CREATE SEQUENCE s NO MINVALUE MAXVALUE 10 NO CYCLE OWNED BY NONE",
            "ALTER SEQUENCE s RESTART",
            "ALTER SEQUENCE IF EXISTS s RESTART WITH 7 INCREMENT BY 3",
            "ALTER SEQUENCE s RENAME TO t",
            "DROP SEQUENCE s",
            "DROP SEQUENCE IF EXISTS s, t CASCADE",
        ] {
            let s = parse_one(sql).expect(sql);
            assert_eq!(s.to_string(), sql);
            assert_eq!(parse_one(&s.to_string()).expect("reparses"), s);
        }
    }
}
