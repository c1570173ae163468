//! Prepared statements: `PREPARE`, `EXECUTE`, `DEALLOCATE`. The words are
//! unreserved in PostgreSQL and nowhere else looked for, so they are
//! matched as words. A prepared statement's text is kept as written, not
//! parsed here: its `$n` parameters are no expression this grammar reads.

use nom::branch::alt;
use nom::combinator::{cut, opt};
use nom::sequence::{preceded, terminated};
use nom::Parser;

use super::expr::expr;
use super::literal::data_type;
use super::tokens::{col_id, comma_list1_sized, kw, tok, word, PResult, Tokens};
use crate::ast::{Execute, Offset, Prepare, Statement};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// `prepare ::= 'PREPARE' col_id ['(' data_type {',' data_type} ')'] 'AS' statement`
pub(crate) fn prepare(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = word("prepare")(i)?;
    let (i, name) = cut(col_id)(i)?;
    let (i, types) = opt(preceded(
        tok(TokenKind::LParen),
        cut(terminated(
            comma_list1_sized(4, data_type),
            tok(TokenKind::RParen),
        )),
    ))(i)?;
    let (mut i, _) = cut(kw(Keyword::As))(i)?;
    let first = i.first();
    if matches!(first.kind, TokenKind::Semicolon | TokenKind::Eof) {
        return i.fail().map_err(|e: nom::Err<_>| match e {
            nom::Err::Error(e) => nom::Err::Failure(e),
            e => e,
        });
    }
    let mut end = first.end;
    while !matches!(i.first().kind, TokenKind::Semicolon | TokenKind::Eof) {
        end = i.first().end;
        i = i.skip(1);
    }
    if i.first().kind == TokenKind::Semicolon {
        // A syntax error at the end of the statement is reported at its
        // semicolon, as PostgreSQL reports it.
        end = i.first().end;
    }
    let text = i.ctx.src[first.start..end].to_string();
    Ok((
        i,
        Statement::Prepare(Box::new(Prepare {
            name,
            types: types.unwrap_or_default(),
            text,
            offset: Offset(first.start),
        })),
    ))
}

/// `execute ::= 'EXECUTE' col_id ['(' expr {',' expr} ')']`
pub(crate) fn execute(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = word("execute")(i)?;
    let (i, name) = cut(col_id)(i)?;
    let (i, args) = opt(preceded(
        tok(TokenKind::LParen),
        cut(terminated(
            comma_list1_sized(4, expr),
            tok(TokenKind::RParen),
        )),
    ))(i)?;
    Ok((
        i,
        Statement::Execute(Box::new(Execute {
            name,
            args: args.unwrap_or_default(),
        })),
    ))
}

/// `deallocate ::= 'DEALLOCATE' ['PREPARE'] (col_id | 'ALL')`
pub(crate) fn deallocate(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = word("deallocate")(i)?;
    let (i, _) = opt(word("prepare"))(i)?;
    cut(alt((
        kw(Keyword::All).map(|_| Statement::Deallocate(None)),
        col_id.map(|c| Statement::Deallocate(Some(c))),
    )))(i)
}

#[cfg(test)]
mod tests {
    use crate::ast::Statement;
    use crate::parse;

    #[test]
    fn prepare_keeps_the_statement_text() {
        let s =
            parse("prepare q (int, text) as select $1, $2 from t where a = $1; execute q(1, 'x')")
                .expect("parses");
        let Statement::Prepare(p) = &s[0] else {
            panic!("not a prepare");
        };
        assert_eq!(p.text, "select $1, $2 from t where a = $1;");
        assert_eq!(p.types.len(), 2);
        assert_eq!(
            s[0].to_string(),
            "PREPARE q (integer, text) AS select $1, $2 from t where a = $1;"
        );
        assert_eq!(s[1].to_string(), "EXECUTE q(1, 'x')");
        assert_eq!(
            parse("deallocate prepare all").expect("parses"),
            vec![Statement::Deallocate(None)]
        );
        assert!(parse("prepare q as").is_err());
    }
}
