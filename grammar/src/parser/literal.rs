//! Literals and data types: string-literal values (including `E'...'`
//! unescaping) and type names with their modifiers.

use super::tokens::{PResult as CResult, Tokens};
use super::{LResult as PResult, Parser};
use crate::ast::DataType;
use crate::error::ParseError;
use crate::error::ParseErrorKind;
use crate::keywords::Keyword;
use crate::lexer::{StringStyle, Token, TokenKind};

/// `string ::= "'" ... "'" | "E'" ... "'" | "$tag$" ... "$tag$"`, as its value.
pub(crate) fn string(i: Tokens<'_>) -> CResult<'_, String> {
    let t = i.first();
    if !matches!(t.kind, TokenKind::String(..)) {
        return i.fail();
    }
    match string_value(i, t) {
        Ok(v) => Ok((i.skip(1), v)),
        Err(e) => i.fatal(e),
    }
}

/// The unescaped value of a string-literal token.
pub(crate) fn string_value(i: Tokens<'_>, t: Token) -> Result<String, ParseError> {
    let ctx = i.ctx;
    let text = ctx.text(t);
    match t.kind {
        TokenKind::String(StringStyle::Standard, escapes) => {
            let inner = &text[1..text.len() - 1];
            Ok(if escapes {
                inner.replace("''", "'")
            } else {
                inner.to_string()
            })
        }
        TokenKind::String(StringStyle::Escape, escapes) => {
            let inner = &text[2..text.len() - 1];
            if escapes {
                unescape_e_string(inner).map_err(|message| {
                    let kind = if message.starts_with("invalid byte sequence") {
                        ParseErrorKind::CharacterNotInRepertoire
                    } else {
                        ParseErrorKind::Syntax
                    };
                    ctx.error_msg(t, message).with_kind(kind)
                })
            } else {
                Ok(inner.to_string())
            }
        }
        TokenKind::String(StringStyle::Dollar(tag), _) => {
            Ok(text[tag..text.len() - tag].to_string())
        }
        _ => Err(ctx.error_at(t)),
    }
}

impl Parser<'_> {
    /// The unescaped value of a string-literal token.
    pub(crate) fn string_value(&self, t: Token) -> PResult<String> {
        let text = self.text(t);
        match t.kind {
            TokenKind::String(StringStyle::Standard, escapes) => {
                let inner = &text[1..text.len() - 1];
                Ok(if escapes {
                    inner.replace("''", "'")
                } else {
                    inner.to_string()
                })
            }
            TokenKind::String(StringStyle::Escape, escapes) => {
                let inner = &text[2..text.len() - 1];
                if escapes {
                    unescape_e_string(inner).map_err(|message| {
                        let kind = if message.starts_with("invalid byte sequence") {
                            ParseErrorKind::CharacterNotInRepertoire
                        } else {
                            ParseErrorKind::Syntax
                        };
                        self.error_msg(t, message).with_kind(kind)
                    })
                } else {
                    Ok(inner.to_string())
                }
            }
            TokenKind::String(StringStyle::Dollar(tag), _) => {
                Ok(text[tag..text.len() - tag].to_string())
            }
            _ => Err(self.error_at(t)),
        }
    }

    /// Parses a string literal token's value.
    pub(crate) fn parse_string(&mut self) -> PResult<String> {
        let t = self.peek();
        if !matches!(t.kind, TokenKind::String(..)) {
            return Err(self.error());
        }
        self.bump();
        self.string_value(t)
    }

    /// Parses a data type, with type modifiers where the type takes them.
    pub(crate) fn parse_data_type(&mut self) -> PResult<DataType> {
        let t = self.peek();
        let kw = match t.kind {
            TokenKind::Word(kw) => kw,
            TokenKind::QuotedIdent(_) => Keyword::NoKeyword,
            _ => return Err(self.error()),
        };
        self.bump();
        Ok(match kw {
            Keyword::Smallint => DataType::SmallInt,
            Keyword::Int | Keyword::Integer => DataType::Integer,
            Keyword::Bigint => DataType::BigInt,
            Keyword::Real => DataType::Real,
            Keyword::Float => {
                let precision = self.parse_opt_typmod()?;
                // The modifier's token, for the error position: `(`, n, `)`.
                let modifier = self.tokens[self.pos.saturating_sub(2)];
                let invalid = |p: &Self, message: &str| {
                    Err(p
                        .error_msg(modifier, message.to_string())
                        .with_kind(ParseErrorKind::InvalidParameterValue))
                };
                match precision {
                    None => DataType::Double,
                    Some(0) => {
                        return invalid(self, "precision for type float must be at least 1 bit")
                    }
                    Some(p) if p <= 24 => DataType::Real,
                    Some(p) if p <= 53 => DataType::Double,
                    Some(_) => {
                        return invalid(self, "precision for type float must be less than 54 bits")
                    }
                }
            }
            Keyword::Double => {
                self.expect_kw(Keyword::Precision)?;
                DataType::Double
            }
            Keyword::Numeric | Keyword::Decimal | Keyword::Dec => self.parse_numeric_typmods()?,
            Keyword::Boolean => DataType::Boolean,
            Keyword::Varchar => DataType::Varchar(self.parse_opt_typmod()?),
            Keyword::Char | Keyword::Character => {
                if self.eat_kw(Keyword::Varying) {
                    DataType::Varchar(self.parse_opt_typmod()?)
                } else {
                    DataType::Char(self.parse_opt_typmod()?)
                }
            }
            Keyword::Timestamp => {
                if self.parse_time_zone_suffix()? {
                    DataType::TimestampTz
                } else {
                    DataType::Timestamp
                }
            }
            Keyword::Time => {
                if self.parse_time_zone_suffix()? {
                    DataType::Named("timetz".to_string())
                } else {
                    DataType::Named("time".to_string())
                }
            }
            Keyword::Interval => DataType::Interval,
            _ if kw == Keyword::NoKeyword || kw.is_func_name() => {
                let name = self.ident_value(t);
                match name.as_str() {
                    "int2" => DataType::SmallInt,
                    "int4" => DataType::Integer,
                    "int8" => DataType::BigInt,
                    "float4" => DataType::Real,
                    "float8" => DataType::Double,
                    "bool" => DataType::Boolean,
                    "text" => DataType::Text,
                    "bpchar" => DataType::Char(self.parse_opt_typmod()?),
                    "date" => DataType::Date,
                    "timestamptz" => DataType::TimestampTz,
                    _ => DataType::Named(name),
                }
            }
            _ => return Err(self.error_at(t)),
        })
    }

    /// Parses `[WITH | WITHOUT TIME ZONE]`; true for `WITH TIME ZONE`.
    fn parse_time_zone_suffix(&mut self) -> PResult<bool> {
        let with =
            if self.at_kw(Keyword::With) && self.nth_kind(1) == TokenKind::Word(Keyword::Time) {
                true
            } else if self.at_kw(Keyword::Without) {
                false
            } else {
                return Ok(false);
            };
        self.bump();
        self.expect_kw(Keyword::Time)?;
        self.expect_kw(Keyword::Zone)?;
        Ok(with)
    }

    /// Parses an optional `(n)` type modifier.
    fn parse_opt_typmod(&mut self) -> PResult<Option<u32>> {
        if !self.at(TokenKind::LParen) {
            return Ok(None);
        }
        self.bump();
        let n = self.parse_typmod_value()?;
        self.expect(TokenKind::RParen)?;
        Ok(Some(n))
    }

    /// Parses `[(precision [, scale])]` after `numeric`.
    fn parse_numeric_typmods(&mut self) -> PResult<DataType> {
        if !self.eat(TokenKind::LParen) {
            return Ok(DataType::Numeric {
                precision: None,
                scale: None,
            });
        }
        let precision = self.parse_typmod_value()?;
        let scale = if self.eat(TokenKind::Comma) {
            Some(self.parse_typmod_value()?)
        } else {
            None
        };
        self.expect(TokenKind::RParen)?;
        Ok(DataType::Numeric {
            precision: Some(precision),
            scale,
        })
    }

    /// Parses one unsigned integer type modifier (PostgreSQL's `Iconst`:
    /// digits that fit in a 32-bit signed integer).
    fn parse_typmod_value(&mut self) -> PResult<u32> {
        let t = self.peek();
        if t.kind == TokenKind::Number {
            if let Ok(n) = self.text(t).parse::<i32>() {
                self.bump();
                return Ok(n as u32);
            }
        }
        Err(self.error())
    }
}

/// Unescapes the body of an `E'...'` string: `''`, `\b \f \n \r \t`, octal
/// `\ooo`, hex `\xHH`, `\uXXXX`, `\UXXXXXXXX`, and `\c` for any other `c`.
/// The result must be valid UTF-8 without NUL bytes, as in PostgreSQL.
fn unescape_e_string(body: &str) -> Result<String, String> {
    let bytes = body.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\'' {
            // The lexer only lets `''` through.
            out.push(b'\'');
            i += 2;
            continue;
        }
        if b != b'\\' || i + 1 >= bytes.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let c = bytes[i + 1];
        i += 2;
        match c {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut n = 1;
                while n < 3 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                    v = v * 8 + u32::from(bytes[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push((v & 0xff) as u8);
            }
            b'x' if i < bytes.len() && bytes[i].is_ascii_hexdigit() => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 && i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                    v = v * 16 + (bytes[i] as char).to_digit(16).expect("hex digit");
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            b'u' | b'U' => {
                let len = if c == b'u' { 4 } else { 8 };
                let hex = body
                    .get(i..i + len)
                    .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
                let ch = hex
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .and_then(char::from_u32)
                    .filter(|&ch| ch != '\0')
                    .ok_or_else(|| "invalid Unicode escape value".to_string())?;
                i += len;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            _ => {
                // `\c` is `c`; copy a whole UTF-8 character.
                let start = i - 1;
                let ch = body[start..]
                    .chars()
                    .next()
                    .expect("a character follows the backslash");
                out.extend_from_slice(ch.to_string().as_bytes());
                i = start + ch.len_utf8();
            }
        }
    }
    if let Some(bad) = out.iter().position(|&b| b == 0) {
        let _ = bad;
        return Err("invalid byte sequence for encoding \"UTF8\": 0x00".to_string());
    }
    String::from_utf8(out).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        format!(
            "invalid byte sequence for encoding \"UTF8\": 0x{:02x}",
            bytes[at]
        )
    })
}

#[cfg(test)]
mod tests {
    use super::unescape_e_string;

    #[test]
    fn e_string_escapes() {
        assert_eq!(
            unescape_e_string(r"a\nb\tc\\d\'e''f").unwrap(),
            "a\nb\tc\\d'e'f"
        );
        assert_eq!(
            unescape_e_string(r"\101\x42\u0043\U00000044").unwrap(),
            "ABCD"
        );
        assert_eq!(unescape_e_string(r"\xC3\xA9").unwrap(), "é");
        assert_eq!(unescape_e_string(r"\q\é").unwrap(), "qé");
        assert!(unescape_e_string(r"\xff").is_err());
        assert!(unescape_e_string(r"\000").is_err());
        assert_eq!(
            unescape_e_string(r"\u12").unwrap_err(),
            "invalid Unicode escape value"
        );
    }
}

/// `data_type` (see `sql.ebnf`)
pub(crate) fn data_type(i: Tokens<'_>) -> CResult<'_, DataType> {
    super::legacy(|p| p.parse_data_type())(i)
}
