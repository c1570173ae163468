//! Window syntax: the `OVER` clause of a call and a SELECT's `WINDOW` clause.
//!
//! `PARTITION`, `RANGE`, `ROWS`, `GROUPS`, `PRECEDING`, `FOLLOWING`,
//! `UNBOUNDED`, `CURRENT`, `EXCLUDE`, `TIES`, `OTHERS` and `NO` are
//! unreserved in PostgreSQL, so they are matched here as words rather than
//! keywords; `OVER` is matched the same way, after a call's `)` only.

use nom::combinator::cut;
use nom::multi::separated_list1;
use nom::sequence::preceded;
use nom::Parser;

use super::expr::{expr, expr_list};
use super::query::opt_order_by;
use super::tokens::{col_id, is_col_id, kw, tok, word, PResult, Tokens};
use crate::ast::{
    FrameBound, FrameExclude, FrameUnits, NamedWindow, Offset, WindowFrame, WindowSpec,
};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// Whether `i` starts an `OVER` clause (after a call's closing parenthesis).
pub(crate) fn at_over(i: Tokens<'_>) -> bool {
    is_word(i, 0, "over") && (i.kind(1) == TokenKind::LParen || is_col_id(i.kind(1)))
}

/// Whether token `n` ahead is the unquoted word `w`.
fn is_word(i: Tokens<'_>, n: usize, w: &str) -> bool {
    matches!(i.kind(n), TokenKind::Word(_)) && i.text(i.toks[n]).eq_ignore_ascii_case(w)
}

/// `over_clause ::= 'OVER' (col_id | '(' window_spec ')')`
pub(crate) fn over_clause(i: Tokens<'_>) -> PResult<'_, WindowSpec> {
    let (i, _) = word("over")(i)?;
    let start = i.first().start;
    if i.kind(0) != TokenKind::LParen {
        let (i, name) = cut(col_id)(i)?;
        let mut spec = WindowSpec::empty();
        spec.name = Some(name);
        spec.offset = Offset(start);
        return Ok((i, spec));
    }
    parenthesised_spec(i)
}

/// `'(' window_spec ')'`
fn parenthesised_spec(i: Tokens<'_>) -> PResult<'_, WindowSpec> {
    // PostgreSQL places a window (also a WINDOW clause entry) at its `(`.
    let start = i.first().start;
    let (i, _) = tok(TokenKind::LParen).parse(i)?;
    let (i, mut spec) = cut(window_spec)(i)?;
    let (i, _) = cut(tok(TokenKind::RParen)).parse(i)?;
    spec.offset = Offset(start);
    Ok((i, spec))
}

/// `window_spec ::= [col_id] ['PARTITION' 'BY' expr {',' expr}]
///   ['ORDER' 'BY' order_item {',' order_item}] [frame]`
fn window_spec(i: Tokens<'_>) -> PResult<'_, WindowSpec> {
    let mut spec = WindowSpec::empty();
    let mut i = i;
    let clause_word = ["partition", "range", "rows", "groups"]
        .iter()
        .any(|w| is_word(i, 0, w));
    if is_col_id(i.kind(0)) && !clause_word && !i.is_kw(0, Keyword::Order) {
        let (rest, name) = col_id(i)?;
        spec.base = Some(name);
        i = rest;
    }
    if is_word(i, 0, "partition") && i.is_kw(1, Keyword::By) {
        let (rest, list) = cut(expr_list)(i.skip(2))?;
        spec.partition_by = list;
        i = rest;
    }
    let (i, order) = opt_order_by(i)?;
    spec.order_by = order;
    let units = if is_word(i, 0, "rows") {
        Some(FrameUnits::Rows)
    } else if is_word(i, 0, "range") {
        Some(FrameUnits::Range)
    } else if is_word(i, 0, "groups") {
        Some(FrameUnits::Groups)
    } else {
        None
    };
    let Some(units) = units else {
        return Ok((i, spec));
    };
    let (i, frame) = cut(|i| frame(i, units))(i.skip(1))?;
    spec.frame = Some(frame);
    Ok((i, spec))
}

/// `frame ::= units (frame_bound | 'BETWEEN' frame_bound 'AND' frame_bound) [exclusion]`
fn frame(i: Tokens<'_>, units: FrameUnits) -> PResult<'_, WindowFrame> {
    let offset = Offset(i.prev().start);
    let (i, start, end) = if i.is_kw(0, Keyword::Between) {
        let (i, start) = frame_bound(i.skip(1))?;
        let (i, _) = kw(Keyword::And).parse(i)?;
        let (i, end) = frame_bound(i)?;
        (i, start, Some(end))
    } else {
        let (i, start) = frame_bound(i)?;
        (i, start, None)
    };
    let (i, exclude) = exclusion(i)?;
    Ok((
        i,
        WindowFrame {
            units,
            start,
            end,
            exclude,
            offset,
        },
    ))
}

/// `frame_bound ::= 'UNBOUNDED' ('PRECEDING' | 'FOLLOWING') | 'CURRENT' 'ROW'
///   | expr ('PRECEDING' | 'FOLLOWING')`
fn frame_bound(i: Tokens<'_>) -> PResult<'_, FrameBound> {
    if is_word(i, 0, "unbounded") {
        if is_word(i, 1, "preceding") {
            return Ok((i.skip(2), FrameBound::UnboundedPreceding));
        }
        if is_word(i, 1, "following") {
            return Ok((i.skip(2), FrameBound::UnboundedFollowing));
        }
    }
    if is_word(i, 0, "current") && i.is_kw(1, Keyword::Row) {
        return Ok((i.skip(2), FrameBound::CurrentRow));
    }
    let (i, e) = expr(i)?;
    if is_word(i, 0, "preceding") {
        return Ok((i.skip(1), FrameBound::Preceding(Box::new(e))));
    }
    if is_word(i, 0, "following") {
        return Ok((i.skip(1), FrameBound::Following(Box::new(e))));
    }
    i.fail()
}

/// `exclusion ::= 'EXCLUDE' ('CURRENT' 'ROW' | 'GROUP' | 'TIES' | 'NO' 'OTHERS')`
fn exclusion(i: Tokens<'_>) -> PResult<'_, FrameExclude> {
    if !is_word(i, 0, "exclude") {
        return Ok((i, FrameExclude::NoOthers));
    }
    let i = i.skip(1);
    if is_word(i, 0, "current") && i.is_kw(1, Keyword::Row) {
        return Ok((i.skip(2), FrameExclude::CurrentRow));
    }
    if i.is_kw(0, Keyword::Group) {
        return Ok((i.skip(1), FrameExclude::Group));
    }
    if is_word(i, 0, "ties") {
        return Ok((i.skip(1), FrameExclude::Ties));
    }
    if is_word(i, 0, "no") && is_word(i, 1, "others") {
        return Ok((i.skip(2), FrameExclude::NoOthers));
    }
    i.fail()
}

/// `window_clause ::= ['WINDOW' col_id 'AS' '(' window_spec ')' {',' ...}]`
pub(crate) fn opt_window_clause(i: Tokens<'_>) -> PResult<'_, Vec<NamedWindow>> {
    if !i.is_kw(0, Keyword::Window) {
        return Ok((i, Vec::new()));
    }
    preceded(
        kw(Keyword::Window),
        cut(separated_list1(tok(TokenKind::Comma), cut(named_window))),
    )(i)
}

/// `col_id 'AS' '(' window_spec ')'`
fn named_window(i: Tokens<'_>) -> PResult<'_, NamedWindow> {
    let (i, name) = col_id(i)?;
    let (i, _) = kw(Keyword::As).parse(i)?;
    let (i, spec) = parenthesised_spec(i)?;
    Ok((i, NamedWindow { name, spec }))
}
