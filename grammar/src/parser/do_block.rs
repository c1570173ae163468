//! `DO [LANGUAGE lang] 'code' [LANGUAGE lang]`.

use nom::branch::alt;
use nom::combinator::cut;
use nom::sequence::preceded;
use nom::Parser;

use super::literal::string;
use super::tokens::{col_id, kw, word, PResult, Tokens};
use crate::ast::{DoBlock, Statement};
use crate::keywords::Keyword;

fn language(i: Tokens<'_>) -> PResult<'_, String> {
    preceded(word("language"), cut(alt((string, col_id))))(i)
}

/// `do_block ::= 'DO' [language] string [language]`.
pub(crate) fn do_block(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Do).parse(i)?;
    let (i, before) = match language(i) {
        Ok((rest, l)) => (rest, Some(l)),
        Err(_) => (i, None),
    };
    let (i, body) = cut(string)(i)?;
    let (i, after) = match (&before, language(i)) {
        (None, Ok((rest, l))) => (rest, Some(l)),
        _ => (i, None),
    };
    Ok((
        i,
        Statement::Do(DoBlock {
            body,
            language: before.or(after),
        }),
    ))
}
