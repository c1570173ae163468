//! Cursor statements: `DECLARE ... CURSOR`, `FETCH` / `MOVE`, `CLOSE`.
//! `DECLARE`, `MOVE`, `CLOSE`, `CURSOR`, `SCROLL`, `HOLD` and the direction
//! words are unreserved in PostgreSQL and nowhere else looked for, so they
//! are matched as words; `FETCH` is a keyword already.

use nom::branch::alt;
use nom::combinator::{cut, opt};
use nom::sequence::{pair, preceded};
use nom::Parser;

use super::query::query;
use super::tokens::{col_id, kw, kw_of, tok, word, PResult, Tokens};
use crate::ast::{DeclareCursor, Fetch, FetchDirection, Statement};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// `declare ::= 'DECLARE' col_id {cursor_option} 'CURSOR'
///   [('WITH' | 'WITHOUT') 'HOLD'] 'FOR' query`
pub(crate) fn declare(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (mut i, _) = word("declare")(i)?;
    let (rest, name) = cut(col_id)(i)?;
    i = rest;
    let (mut binary, mut insensitive, mut scroll) = (false, false, None);
    // cursor_option ::= 'NO' 'SCROLL' | 'SCROLL' | 'BINARY' | 'ASENSITIVE' | 'INSENSITIVE'
    loop {
        if let Ok((rest, _)) = pair(word("no"), cut(word("scroll")))(i) {
            scroll = Some(false);
            i = rest;
        } else if let Ok((rest, _)) = word("scroll")(i) {
            scroll = Some(true);
            i = rest;
        } else if let Ok((rest, _)) = kw(Keyword::Binary).parse(i) {
            binary = true;
            i = rest;
        } else if let Ok((rest, _)) = word("insensitive")(i) {
            insensitive = true;
            i = rest;
        } else if let Ok((rest, _)) = word("asensitive")(i) {
            i = rest;
        } else {
            break;
        }
    }
    let (i, _) = cut(word("cursor"))(i)?;
    let (i, hold) = opt(pair(
        kw_of(&[Keyword::With, Keyword::Without]),
        cut(word("hold")),
    ))(i)?;
    let (i, q) = preceded(cut(kw(Keyword::For)), cut(query))(i)?;
    let d = DeclareCursor {
        name,
        binary,
        insensitive,
        scroll,
        hold: hold.is_some_and(|(k, _)| k == Keyword::With),
        query: Box::new(q),
    };
    Ok((i, Statement::DeclareCursor(Box::new(d))))
}

/// `fetch ::= ('FETCH' | 'MOVE') [direction] [('FROM' | 'IN')] col_id`
pub(crate) fn fetch(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, lead) = alt((
        kw(Keyword::Fetch).map(|_| false),
        word("move").map(|_| true),
    ))(i)?;
    // A direction word may also be the cursor's name (`FETCH next`): the
    // direction is taken only when a name follows it.
    let (i, (direction, cursor)) = cut(alt((
        pair(direction, preceded(opt(from_in), col_id)),
        preceded(from_in, col_id).map(|c| (FetchDirection::Forward(Some(1)), c)),
        col_id.map(|c| (FetchDirection::Forward(Some(1)), c)),
    )))(i)?;
    Ok((
        i,
        Statement::Fetch(Fetch {
            is_move: lead,
            direction,
            cursor,
        }),
    ))
}

/// `'FROM' | 'IN'`
fn from_in(i: Tokens<'_>) -> PResult<'_, Keyword> {
    kw_of(&[Keyword::From, Keyword::In])(i)
}

/// `direction ::= 'NEXT' | 'PRIOR' | 'FIRST' | 'LAST' | 'ABSOLUTE' count
///   | 'RELATIVE' count | count | 'ALL' | ('FORWARD' | 'BACKWARD') [count | 'ALL']`
fn direction(i: Tokens<'_>) -> PResult<'_, FetchDirection> {
    alt((
        word("next").map(|_| FetchDirection::Forward(Some(1))),
        word("prior").map(|_| FetchDirection::Backward(Some(1))),
        word("first").map(|_| FetchDirection::Absolute(1)),
        word("last").map(|_| FetchDirection::Absolute(-1)),
        preceded(word("absolute"), count).map(FetchDirection::Absolute),
        preceded(word("relative"), count).map(FetchDirection::Relative),
        count.map(|n| FetchDirection::Forward(Some(n))),
        kw(Keyword::All).map(|_| FetchDirection::Forward(None)),
        preceded(word("forward"), opt(count_or_all))
            .map(|n| FetchDirection::Forward(n.unwrap_or(Some(1)))),
        preceded(word("backward"), opt(count_or_all))
            .map(|n| FetchDirection::Backward(n.unwrap_or(Some(1)))),
    ))(i)
}

/// A count or `ALL` (`None`).
fn count_or_all(i: Tokens<'_>) -> PResult<'_, Option<i64>> {
    alt((count.map(Some), kw(Keyword::All).map(|_| None)))(i)
}

/// `count ::= ['+' | '-'] integer` (PostgreSQL's `SignedIconst`).
fn count(i: Tokens<'_>) -> PResult<'_, i64> {
    let (i, sign) = opt(alt((tok(TokenKind::Minus), tok(TokenKind::Plus))))(i)?;
    let t = i.first();
    if t.kind != TokenKind::Number {
        return i.fail();
    }
    match i.text(t).parse::<i32>() {
        Ok(n) if sign.is_some_and(|s| s.kind == TokenKind::Minus) => Ok((i.skip(1), -i64::from(n))),
        Ok(n) => Ok((i.skip(1), i64::from(n))),
        Err(_) => i.fail(),
    }
}

/// `close ::= 'CLOSE' (col_id | 'ALL')`
pub(crate) fn close(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = word("close")(i)?;
    cut(alt((
        kw(Keyword::All).map(|_| Statement::Close(None)),
        col_id.map(|c| Statement::Close(Some(c))),
    )))(i)
}

#[cfg(test)]
mod tests {
    use crate::ast::{FetchDirection, Statement};
    use crate::parse_one;

    #[test]
    fn cursor_statements_round_trip() {
        for sql in [
            "DECLARE c CURSOR FOR SELECT 1",
            "DECLARE c BINARY INSENSITIVE NO SCROLL CURSOR WITH HOLD FOR SELECT a FROM t",
            "FETCH FORWARD 3 FROM c",
            "MOVE BACKWARD ALL FROM c",
            "FETCH ABSOLUTE -1 FROM c",
            "FETCH RELATIVE 0 FROM c",
        ] {
            let s = parse_one(sql).expect(sql);
            assert_eq!(s.to_string(), sql);
            assert_eq!(parse_one(&s.to_string()).expect("reparses"), s);
        }
    }

    #[test]
    fn direction_words_may_name_the_cursor() {
        let Statement::Fetch(f) = parse_one("fetch next").expect("parses") else {
            panic!("not a fetch");
        };
        assert_eq!(
            (f.direction, f.cursor.as_str()),
            (FetchDirection::Forward(Some(1)), "next")
        );
        let Statement::Fetch(f) = parse_one("fetch next c").expect("parses") else {
            panic!("not a fetch");
        };
        assert_eq!(f.cursor, "c");
        let Statement::Fetch(f) = parse_one("fetch -2 in c").expect("parses") else {
            panic!("not a fetch");
        };
        assert_eq!(f.direction, FetchDirection::Forward(Some(-2)));
        assert_eq!(
            parse_one("close all").expect("parses"),
            Statement::Close(None)
        );
    }
}
