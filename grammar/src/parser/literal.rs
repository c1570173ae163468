//! Literals and data types: string-literal values (including `E'...'`
//! unescaping) and type names with their modifiers.

use nom::combinator::{cut, map, opt, value};
use nom::sequence::{pair, preceded, terminated};
use nom::Parser;

use super::tokens::{ident_value, kw, tok, PResult, Tokens};
use crate::ast::DataType;
use crate::error::{ParseError, ParseErrorKind};
use crate::keywords::Keyword;
use crate::lexer::{StringStyle, Token, TokenKind};
use crate::strlit;

/// `string ::= "'" ... "'" | "E'" ... "'" | "$tag$" ... "$tag$"`, as its value.
pub(crate) fn string(i: Tokens<'_>) -> PResult<'_, String> {
    let t = i.first();
    if !matches!(t.kind, TokenKind::String(..)) {
        return i.fail();
    }
    match string_value(i, t) {
        Ok(v) => Ok((i.skip(1), v)),
        Err(e) => i.fatal(e),
    }
}

/// The unescaped value of a string-literal token (continued segments
/// joined).
pub(crate) fn string_value(i: Tokens<'_>, t: Token) -> Result<String, ParseError> {
    let ctx = i.ctx;
    let text = ctx.text(t);
    match t.kind {
        TokenKind::String(StringStyle::Standard, escapes) => Ok(if escapes {
            strlit::dequote(&text[1..])
        } else {
            text[1..text.len() - 1].to_string()
        }),
        TokenKind::String(StringStyle::Escape, escapes) => {
            // `E'...'`, or `'...'` with standard_conforming_strings off.
            let open = if text.starts_with('\'') { 1 } else { 2 };
            let inner = &text[open..text.len() - 1];
            if escapes {
                strlit::unescape_e_string(inner)
                    .map_err(|e| e_string_error(ctx.src, (t.start, t.start + open), e))
            } else {
                Ok(inner.to_string())
            }
        }
        TokenKind::String(StringStyle::Unicode(escape), _) => {
            // The lexer has checked the escapes.
            let body = strlit::dequote(&text[3..]);
            Ok(strlit::udeescape(&body, escape).unwrap_or(body))
        }
        TokenKind::String(StringStyle::Dollar(tag), _) => {
            Ok(text[tag..text.len() - tag].to_string())
        }
        _ => Err(ctx.error_at(t)),
    }
}

/// The error of an `E'...'` token with a rejected escape, positioned as
/// PostgreSQL positions it; `token` and `body` are where the token and
/// its text start.
fn e_string_error(src: &str, (token, body): (usize, usize), e: strlit::EscapeError) -> ParseError {
    let offset = e.at.map_or(token, |at| body + at);
    let near = src.get(offset..offset + e.near).unwrap_or("");
    let message = if e.near > 0 {
        format!("{} at or near \"{near}\"", e.message)
    } else {
        e.message.clone()
    };
    let kind = if e.invalid_escape {
        ParseErrorKind::InvalidEscapeSequence
    } else if e.at.is_none() {
        ParseErrorKind::CharacterNotInRepertoire
    } else {
        ParseErrorKind::Syntax
    };
    let hint = e.invalid_escape.then_some(strlit::E_UNICODE_HINT);
    ParseError::other(message, offset, Some(near))
        .with_kind(kind)
        .with_hint(hint)
}

/// `data_type ::= 'SMALLINT' | 'INT2' | 'INTEGER' | 'INT' | 'INT4' | 'BIGINT' | 'INT8'
///   | 'REAL' | 'FLOAT4' | 'DOUBLE' 'PRECISION' | 'FLOAT8' | 'FLOAT' ['(' integer ')']
///   | ('NUMERIC' | 'DECIMAL' | 'DEC') ['(' integer [',' integer] ')']
///   | 'BOOLEAN' | 'BOOL' | 'TEXT'
///   | ('VARCHAR' | 'CHARACTER' 'VARYING' | 'CHAR' 'VARYING') ['(' integer ')']
///   | ('CHAR' | 'CHARACTER' | 'BPCHAR') ['(' integer ')']
///   | 'DATE' | 'TIMESTAMP' ['(' integer ')'] [('WITH' | 'WITHOUT') 'TIME' 'ZONE'] | 'TIMESTAMPTZ'
///   | 'TIME' ['(' integer ')'] [('WITH' | 'WITHOUT') 'TIME' 'ZONE'] | 'TIMETZ' ['(' integer ')']
///   | 'INTERVAL' | type_name`
pub(crate) fn data_type(i: Tokens<'_>) -> PResult<'_, DataType> {
    let (mut i, mut ty) = base_data_type(i)?;
    // `type '[' [integer] ']' ...` or `type ARRAY ['[' integer ']']`: an
    // array; PostgreSQL ignores the sizes and the number of dimensions.
    let mut array = false;
    loop {
        match (i.kind(0), i.kind(1), i.kind(2)) {
            (TokenKind::LBracket, TokenKind::RBracket, _) => i = i.skip(2),
            (TokenKind::LBracket, TokenKind::Number, TokenKind::RBracket) => i = i.skip(3),
            (TokenKind::Word(Keyword::Array), _, _) if !array => i = i.skip(1),
            _ => break,
        }
        array = true;
    }
    if array {
        ty = DataType::Array(Box::new(ty));
    }
    Ok((i, ty))
}

/// A type name without array brackets.
fn base_data_type(i: Tokens<'_>) -> PResult<'_, DataType> {
    let t = i.first();
    let kw = match t.kind {
        TokenKind::Word(kw) => kw,
        TokenKind::QuotedIdent(_) => Keyword::NoKeyword,
        _ => return i.fail(),
    };
    let rest = i.skip(1);
    match kw {
        Keyword::Smallint => Ok((rest, DataType::SmallInt)),
        Keyword::Int | Keyword::Integer => Ok((rest, DataType::Integer)),
        Keyword::Bigint => Ok((rest, DataType::BigInt)),
        Keyword::Real => Ok((rest, DataType::Real)),
        Keyword::Float => float(rest),
        Keyword::Double => value(DataType::Double, cut(kw_precision))(rest),
        Keyword::Numeric | Keyword::Decimal | Keyword::Dec => numeric_typmods(rest),
        Keyword::Boolean => Ok((rest, DataType::Boolean)),
        Keyword::Varchar => map(opt_typmod, DataType::Varchar)(rest),
        Keyword::Char | Keyword::Character => {
            if rest.is_kw(0, Keyword::Varying) {
                map(preceded(kw_varying, opt_typmod), DataType::Varchar)(rest)
            } else {
                map(opt_typmod, DataType::Char)(rest)
            }
        }
        Keyword::Timestamp => map(pair(opt_typmod, time_zone_suffix), |(p, tz)| {
            if tz {
                DataType::TimestampTz(p)
            } else {
                DataType::Timestamp(p)
            }
        })(rest),
        Keyword::Time => map(pair(opt_typmod, time_zone_suffix), |(p, tz)| {
            if tz {
                DataType::TimeTz(p)
            } else {
                DataType::Time(p)
            }
        })(rest),
        Keyword::Interval => Ok((rest, DataType::Interval)),
        _ if kw == Keyword::NoKeyword || kw.is_func_name() => {
            let name = ident_value(i, t);
            let simple = match name.as_str() {
                "int2" => DataType::SmallInt,
                "int4" => DataType::Integer,
                "int8" => DataType::BigInt,
                "float4" => DataType::Real,
                "float8" => DataType::Double,
                "bool" => DataType::Boolean,
                "text" => DataType::Text,
                "bpchar" => return map(opt_typmod, DataType::Char)(rest),
                "date" => DataType::Date,
                "timestamptz" => return map(opt_typmod, DataType::TimestampTz)(rest),
                "timetz" => return map(opt_typmod, DataType::TimeTz)(rest),
                _ => DataType::Named(name),
            };
            Ok((rest, simple))
        }
        _ => i.fail(),
    }
}

/// `PRECISION` after `DOUBLE`.
fn kw_precision(i: Tokens<'_>) -> PResult<'_, Token> {
    kw(Keyword::Precision).parse(i)
}

/// `VARYING` after `CHAR` or `CHARACTER`.
fn kw_varying(i: Tokens<'_>) -> PResult<'_, Token> {
    kw(Keyword::Varying).parse(i)
}

/// `['(' integer ')']` after `FLOAT`: 1 to 24 bits is `real`, 25 to 53
/// `double precision`; anything else is PostgreSQL's error at the number.
fn float(i: Tokens<'_>) -> PResult<'_, DataType> {
    let modifier = i.kind(1);
    let number = i.toks.get(1).copied();
    let (rest, precision) = opt_typmod(i)?;
    let invalid = |message: &str| {
        let token = number.filter(|_| modifier == TokenKind::Number);
        let e = match token {
            Some(t) => i.ctx.error_msg(t, message.to_string()),
            None => i.ctx.error_at(i.first()),
        };
        i.fatal(e.with_kind(ParseErrorKind::InvalidParameterValue))
    };
    match precision {
        None => Ok((rest, DataType::Double)),
        Some(0) => invalid("precision for type float must be at least 1 bit"),
        Some(p) if p <= 24 => Ok((rest, DataType::Real)),
        Some(p) if p <= 53 => Ok((rest, DataType::Double)),
        Some(_) => invalid("precision for type float must be less than 54 bits"),
    }
}

/// `[('WITH' | 'WITHOUT') 'TIME' 'ZONE']`; true for `WITH TIME ZONE`.
fn time_zone_suffix(i: Tokens<'_>) -> PResult<'_, bool> {
    if i.is_kw(0, Keyword::With) && i.is_kw(1, Keyword::Time) {
        value(
            true,
            preceded(
                pair(kw(Keyword::With), kw(Keyword::Time)),
                cut(kw(Keyword::Zone)),
            ),
        )(i)
    } else if i.is_kw(0, Keyword::Without) {
        value(
            false,
            preceded(
                kw(Keyword::Without),
                cut(pair(kw(Keyword::Time), kw(Keyword::Zone))),
            ),
        )(i)
    } else {
        Ok((i, false))
    }
}

/// `['(' integer ')']`
fn opt_typmod(i: Tokens<'_>) -> PResult<'_, Option<u32>> {
    opt(preceded(
        tok(TokenKind::LParen),
        cut(terminated(typmod_value, tok(TokenKind::RParen))),
    ))(i)
}

/// `['(' integer [',' integer] ')']` after `numeric`.
fn numeric_typmods(i: Tokens<'_>) -> PResult<'_, DataType> {
    map(
        opt(preceded(
            tok(TokenKind::LParen),
            cut(terminated(
                pair(
                    typmod_value,
                    opt(preceded(tok(TokenKind::Comma), cut(signed_typmod))),
                ),
                tok(TokenKind::RParen),
            )),
        )),
        |typmods| DataType::Numeric {
            precision: typmods.map(|(p, _)| p),
            scale: typmods.and_then(|(_, s)| s),
        },
    )(i)
}

/// A type modifier with an optional minus sign (numeric's scale).
fn signed_typmod(i: Tokens<'_>) -> PResult<'_, i32> {
    let (i, minus) = opt(tok(TokenKind::Minus))(i)?;
    let (i, v) = typmod_value(i)?;
    Ok((
        i,
        if minus.is_some() {
            -(v as i32)
        } else {
            v as i32
        },
    ))
}

/// One unsigned integer type modifier (PostgreSQL's `Iconst`: digits that
/// fit in a 32-bit signed integer).
fn typmod_value(i: Tokens<'_>) -> PResult<'_, u32> {
    let t = i.first();
    if t.kind == TokenKind::Number {
        if let Ok(n) = i.text(t).parse::<i32>() {
            return Ok((i.skip(1), n as u32));
        }
    }
    i.fail()
}
