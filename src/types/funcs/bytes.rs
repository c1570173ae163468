//! Functions over `bytea` and the byte/character-code string functions:
//! `float4send` / `float8send`, `encode` / `decode`, `get_byte` /
//! `set_byte` / `get_bit` / `set_bit`, `md5`, the `bytea` forms of
//! `length`, `octet_length`, `substring` and `position`, and `to_hex`,
//! `chr`, `ascii`, `translate`, `overlay` of text and bytea, and bytea
//! `LIKE`.
//!
//! Each takes the argument types [`ByteFunc::resolve`] chose and is strict
//! (the caller returns NULL for a NULL argument before [`ByteFunc::eval`]).
//! Errors are PostgreSQL 15's (`index 8 out of valid range, 0..7`, 2202E;
//! `null character not permitted`, 54000).

use super::bytea_like::bytea_like;
use super::overlay::{overlay_bytes, overlay_text};
use super::string::TrimSide;
use super::{bad_arg_named, no_function, Resolved, ScalarFunc};
use crate::err;
use crate::error::Result;
use crate::types::bytea;
use crate::types::datatype::DataType;
use crate::types::sha2::{digest, Sha2};
use crate::types::value::Value;
use std::sync::Arc;

/// A function of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteFunc {
    /// `float4send(real)`: the IEEE bits, big-endian.
    Float4Send,
    /// `float8send(double precision)`: the IEEE bits, big-endian.
    Float8Send,
    /// `encode(bytea, format)`.
    Encode,
    /// `decode(text, format)`.
    Decode,
    /// `get_byte(bytea, int)`.
    GetByte,
    /// `set_byte(bytea, int, int)`.
    SetByte,
    /// `get_bit(bytea, bigint)`.
    GetBit,
    /// `set_bit(bytea, bigint, int)`.
    SetBit,
    /// `md5(text | bytea)`: hex text.
    Md5,
    /// `length(bytea)` / `octet_length(bytea)`: bytes.
    Length,
    /// `substring(bytea, from [, for])` / `substr`.
    Substring,
    /// `position(bytea in bytea)`.
    Position,
    /// `to_hex(int | bigint)`.
    ToHex,
    /// `chr(int)`: the character with that code point.
    Chr,
    /// `ascii(text)`: the code point of the first character (0 if empty).
    Ascii,
    /// `translate(text, from, to)`.
    Translate,
    /// `sha224`, `sha256`, `sha384`, `sha512` of bytea.
    Sha(Sha2),
    /// `bit_count(bytea)`: bigint.
    BitCount,
    /// `btrim` / `ltrim` / `rtrim(bytea, bytea)`.
    Trim(TrimSide),
    /// `unistr(text)`: Unicode escapes decoded.
    Unistr,
    /// `overlay(s placing t from n [for m])` of text or bytea (see
    /// [`super::overlay`]); the value's type picks the form.
    Overlay,
    /// `bytea [NOT] LIKE bytea [ESCAPE bytea]` (true: NOT); see
    /// [`super::bytea_like`].
    Like(bool),
}

impl ByteFunc {
    /// Looks a name up (the names only this module owns).
    pub fn from_name(name: &str) -> Option<ByteFunc> {
        use ByteFunc::*;
        Some(match name {
            "float4send" => Float4Send,
            "float8send" => Float8Send,
            "encode" => Encode,
            "decode" => Decode,
            "get_byte" => GetByte,
            "set_byte" => SetByte,
            "get_bit" => GetBit,
            "set_bit" => SetBit,
            "md5" => Md5,
            "to_hex" => ToHex,
            "chr" => Chr,
            "ascii" => Ascii,
            "translate" => Translate,
            "sha224" => Sha(Sha2::Sha224),
            "sha256" => Sha(Sha2::Sha256),
            "sha384" => Sha(Sha2::Sha384),
            "sha512" => Sha(Sha2::Sha512),
            "bit_count" => BitCount,
            "unistr" => Unistr,
            "overlay" => Overlay,
            _ => return None,
        })
    }

    /// The SQL name, for messages.
    pub fn name(self) -> &'static str {
        use ByteFunc::*;
        match self {
            Float4Send => "float4send",
            Float8Send => "float8send",
            Encode => "encode",
            Decode => "decode",
            GetByte => "get_byte",
            SetByte => "set_byte",
            GetBit => "get_bit",
            SetBit => "set_bit",
            Md5 => "md5",
            Length => "length",
            Substring => "substring",
            Position => "position",
            ToHex => "to_hex",
            Chr => "chr",
            Ascii => "ascii",
            Translate => "translate",
            Sha(Sha2::Sha224) => "sha224",
            Sha(Sha2::Sha256) => "sha256",
            Sha(Sha2::Sha384) => "sha384",
            Sha(Sha2::Sha512) => "sha512",
            BitCount => "bit_count",
            Trim(TrimSide::Both) => "btrim",
            Trim(TrimSide::Leading) => "ltrim",
            Trim(TrimSide::Trailing) => "rtrim",
            Unistr => "unistr",
            Overlay => "overlay",
            Like(false) => "bytealike",
            Like(true) => "byteanlike",
        }
    }

    /// The `bytea` forms of the string functions `length`, `octet_length`,
    /// `substring` and `position`: `Some` when an argument is `bytea`.
    pub fn overload(func: ScalarFunc, args: &[DataType]) -> Option<Result<Resolved>> {
        use DataType::*;
        let int = |t: &DataType| matches!(t, Int2 | Int4 | Int8 | Unknown);
        let by = |t: &DataType| matches!(t, Bytea | Unknown);
        let (f, arg_types, result) = match (func, args) {
            (ScalarFunc::Length | ScalarFunc::OctetLength, [Bytea]) => {
                (ByteFunc::Length, vec![Bytea], Int4)
            }
            (ScalarFunc::Substring, [Bytea, a]) if int(a) => {
                (ByteFunc::Substring, vec![Bytea, Int4], Bytea)
            }
            (ScalarFunc::Substring, [Bytea, a, b]) if int(a) && int(b) => {
                (ByteFunc::Substring, vec![Bytea, Int4, Int4], Bytea)
            }
            (ScalarFunc::Btrim | ScalarFunc::Ltrim | ScalarFunc::Rtrim, [Bytea, c]) if by(c) => {
                let side = match func {
                    ScalarFunc::Btrim => TrimSide::Both,
                    ScalarFunc::Ltrim => TrimSide::Leading,
                    _ => TrimSide::Trailing,
                };
                (ByteFunc::Trim(side), vec![Bytea, Bytea], Bytea)
            }
            (ScalarFunc::Position, [a, b]) if by(a) && by(b) && (*a == Bytea || *b == Bytea) => {
                (ByteFunc::Position, vec![Bytea, Bytea], Int4)
            }
            _ => return None,
        };
        Some(Ok(Resolved {
            func: ScalarFunc::Bytes(f),
            arg_types,
            result,
        }))
    }

    /// Argument and result types; `function chr(text) does not exist`
    /// (42883) otherwise.
    pub fn resolve(self, args: &[DataType]) -> Result<Resolved> {
        use ByteFunc::*;
        use DataType::*;
        let int = |t: &DataType| matches!(t, Int2 | Int4 | Int8 | Unknown);
        let num = |t: &DataType| t.is_numeric() || *t == Unknown;
        let str_ = |t: &DataType| t.is_string() || *t == Unknown;
        let by = |t: &DataType| matches!(t, Bytea | Unknown);
        let (arg_types, result) = match (self, args) {
            (Float4Send, [t]) if num(t) => (vec![Float4], Bytea),
            (Float8Send, [t]) if num(t) => (vec![Float8], Bytea),
            (Encode, [b, f]) if by(b) && str_(f) => (vec![Bytea, Text], Text),
            (Decode, [s, f]) if str_(s) && str_(f) => (vec![Text, Text], Bytea),
            (GetByte, [b, n]) if by(b) && int(n) => (vec![Bytea, Int4], Int4),
            (SetByte, [b, n, v]) if by(b) && int(n) && int(v) => (vec![Bytea, Int4, Int4], Bytea),
            (GetBit, [b, n]) if by(b) && int(n) => (vec![Bytea, Int8], Int4),
            (SetBit, [b, n, v]) if by(b) && int(n) && int(v) => (vec![Bytea, Int8, Int4], Bytea),
            (Md5, [Bytea]) => (vec![Bytea], Text),
            (Md5, [t]) if str_(t) => (vec![Text], Text),
            (ToHex, [Int8]) => (vec![Int8], Text),
            (ToHex, [t]) if int(t) => (vec![Int4], Text),
            (Chr, [t]) if int(t) => (vec![Int4], Text),
            (Ascii, [t]) if str_(t) => (vec![Text], Int4),
            (Translate, [a, b, c]) if str_(a) && str_(b) && str_(c) => {
                (vec![Text, Text, Text], Text)
            }
            (Sha(_), [b]) if by(b) => (vec![Bytea], Bytea),
            (BitCount, [Bytea]) => (vec![Bytea], Int8),
            (Unistr, [t]) if str_(t) => (vec![Text], Text),
            (Trim(_), [b, c]) if by(b) && by(c) => (vec![Bytea, Bytea], Bytea),
            (Like(_), [Bytea, Bytea]) => (vec![Bytea, Bytea], Bool),
            (Like(_), [Bytea, Bytea, Bytea]) => (vec![Bytea, Bytea, Bytea], Bool),
            // The positions are int4 only, as PostgreSQL declares them.
            (Overlay, [s, t, ints @ ..])
                if matches!(ints.len(), 1 | 2)
                    && ints.iter().all(|t| matches!(t, Int2 | Int4 | Unknown)) =>
            {
                let ty = if by(s) && by(t) && (*s == Bytea || *t == Bytea) {
                    Bytea
                } else if str_(s) && str_(t) {
                    Text
                } else {
                    return Err(no_function(self.name(), args));
                };
                let mut types = vec![ty, ty];
                types.extend(ints.iter().map(|_| Int4));
                (types, ty)
            }
            _ => return Err(no_function(self.name(), args)),
        };
        Ok(Resolved {
            func: ScalarFunc::Bytes(self),
            arg_types,
            result,
        })
    }

    /// Evaluates on non-NULL arguments of the resolved types.
    pub fn eval(self, args: &[Value]) -> Result<Value> {
        use ByteFunc::*;
        let bad = || bad_arg_named(self.name());
        let bytes = |i: usize| match args.get(i) {
            Some(Value::Bytea(b)) => Ok(&b[..]),
            _ => Err(bad()),
        };
        let text = |i: usize| args.get(i).and_then(Value::as_str).ok_or_else(bad);
        let int = |i: usize| args.get(i).and_then(Value::as_i64).ok_or_else(bad);
        let out = |v: Vec<u8>| Value::Bytea(Arc::from(v));
        Ok(match self {
            Float4Send => match args.first() {
                Some(Value::Float4(f)) => out(f.to_bits().to_be_bytes().to_vec()),
                _ => return Err(bad()),
            },
            Float8Send => match args.first() {
                Some(Value::Float8(f)) => out(f.to_bits().to_be_bytes().to_vec()),
                _ => return Err(bad()),
            },
            Encode => Value::text(&bytea::encode(bytes(0)?, text(1)?)?),
            Decode => out(bytea::decode(text(0)?, text(1)?)?),
            GetByte => Value::Int4(bytea::get_byte(bytes(0)?, int(1)?)?),
            SetByte => out(bytea::set_byte(bytes(0)?, int(1)?, int(2)?)?),
            GetBit => Value::Int4(bytea::get_bit(bytes(0)?, int(1)?)?),
            SetBit => out(bytea::set_bit(bytes(0)?, int(1)?, int(2)?)?),
            Md5 => match &args[0] {
                Value::Bytea(b) => Value::text(&bytea::md5_hex(b)),
                _ => Value::text(&bytea::md5_hex(text(0)?.as_bytes())),
            },
            Length => Value::Int4(bytes(0)?.len() as i32),
            Substring => {
                let count = if args.len() > 2 { Some(int(2)?) } else { None };
                out(bytea::substring(bytes(0)?, int(1)?, count)?)
            }
            Position => Value::Int4(bytea::position(bytes(0)?, bytes(1)?)),
            ToHex => Value::text(&match &args[0] {
                Value::Int8(v) => format!("{:x}", *v as u64),
                _ => format!("{:x}", int(0)? as i32 as u32),
            }),
            Chr => Value::text(&chr(int(0)?)?),
            Ascii => Value::Int4(text(0)?.chars().next().map_or(0, |c| c as i32)),
            Translate => Value::text(&translate(text(0)?, text(1)?, text(2)?)),
            Sha(kind) => out(digest(kind, bytes(0)?)),
            Unistr => Value::text(&unistr(text(0)?)?),
            Like(negated) => {
                let escape = if args.len() > 2 {
                    Some(bytes(2)?)
                } else {
                    None
                };
                Value::Bool(bytea_like(bytes(0)?, bytes(1)?, escape)? != negated)
            }
            Overlay => {
                let count = if args.len() > 3 { Some(int(3)?) } else { None };
                match &args[0] {
                    Value::Bytea(_) => out(overlay_bytes(bytes(0)?, bytes(1)?, int(2)?, count)?),
                    _ => Value::text(&overlay_text(text(0)?, text(1)?, int(2)?, count)?),
                }
            }
            BitCount => Value::Int8(bytes(0)?.iter().map(|b| b.count_ones() as i64).sum()),
            Trim(side) => {
                let (b, set) = (bytes(0)?, bytes(1)?);
                let keep = |x: &u8| !set.contains(x);
                let start = match side {
                    TrimSide::Trailing => 0,
                    _ => b.iter().position(keep).unwrap_or(b.len()),
                };
                let end = match side {
                    TrimSide::Leading => b.len(),
                    _ => b.iter().rposition(keep).map_or(start, |i| i + 1),
                };
                out(b[start..end.max(start)].to_vec())
            }
        })
    }
}

/// `chr(code)`, as PostgreSQL's with a UTF-8 database.
fn chr(code: i64) -> Result<String> {
    if code < 0 {
        return Err(err!(
            InvalidParameterValue,
            "character number must be positive"
        ));
    }
    if code == 0 {
        return Err(err!(ProgramLimitExceeded, "null character not permitted"));
    }
    if code > 0x10ffff {
        return Err(err!(
            ProgramLimitExceeded,
            "requested character too large for encoding: {code}"
        ));
    }
    char::from_u32(code as u32)
        .map(String::from)
        .ok_or_else(|| {
            err!(
                ProgramLimitExceeded,
                "requested character not valid for encoding: {code}"
            )
        })
}

/// `unistr(s)`, as PostgreSQL's: `\\` is a backslash; `\XXXX`,
/// `\+XXXXXX`, `\uXXXX` and `\UXXXXXXXX` are code points, UTF-16
/// surrogates only as a high-low pair of escapes.
fn unistr(s: &str) -> Result<String> {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut pair_first: Option<u32> = None;
    let bad_pair = || err!(SyntaxError, "invalid Unicode surrogate pair");
    let hex_at = |at: usize, n: usize| -> Option<u32> {
        let digits = b.get(at..at + n)?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            if pair_first.is_some() {
                return Err(bad_pair());
            }
            let c = s[i..].chars().next().ok_or_else(bad_pair)?;
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        if b.get(i + 1) == Some(&b'\\') {
            if pair_first.is_some() {
                return Err(bad_pair());
            }
            out.push('\\');
            i += 2;
            continue;
        }
        let (code, len) = if let Some(v) = hex_at(i + 1, 4) {
            (v, 5)
        } else if let Some(v) = (b.get(i + 1) == Some(&b'u'))
            .then(|| hex_at(i + 2, 4))
            .flatten()
        {
            (v, 6)
        } else if let Some(v) = (b.get(i + 1) == Some(&b'+'))
            .then(|| hex_at(i + 2, 6))
            .flatten()
        {
            (v, 8)
        } else if let Some(v) = (b.get(i + 1) == Some(&b'U'))
            .then(|| hex_at(i + 2, 8))
            .flatten()
        {
            (v, 10)
        } else {
            return Err(err!(SyntaxError, "invalid Unicode escape")
                .with_hint("Unicode escapes must be \\XXXX, \\+XXXXXX, \\uXXXX, or \\UXXXXXXXX."));
        };
        if code == 0 || code > 0x10ffff {
            return Err(err!(
                InvalidParameterValue,
                "invalid Unicode code point: {code:04X}"
            ));
        }
        let is_high = (0xd800..=0xdbff).contains(&code);
        let is_low = (0xdc00..=0xdfff).contains(&code);
        let code = match (pair_first.take(), is_low) {
            (Some(high), true) => 0x10000 + ((high - 0xd800) << 10) + (code - 0xdc00),
            (Some(_), false) | (None, true) => return Err(bad_pair()),
            (None, false) => code,
        };
        if is_high {
            pair_first = Some(code);
        } else {
            out.push(char::from_u32(code).ok_or_else(bad_pair)?);
        }
        i += len;
    }
    if pair_first.is_some() {
        return Err(bad_pair());
    }
    Ok(out)
}

/// `translate(s, from, to)`: each character of `from` becomes the one at
/// the same place in `to`, or is dropped when `to` is shorter.
fn translate(s: &str, from: &str, to: &str) -> String {
    let from: Vec<char> = from.chars().collect();
    let to: Vec<char> = to.chars().collect();
    s.chars()
        .filter_map(|c| match from.iter().position(|f| *f == c) {
            Some(i) => to.get(i).copied(),
            None => Some(c),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! Expected values come from PostgreSQL 15 on this machine.
    use super::*;

    #[test]
    fn character_codes_match_postgres() {
        assert_eq!(chr(65).unwrap(), "A");
        assert_eq!(chr(0).unwrap_err().message, "null character not permitted");
        assert_eq!(
            chr(55296).unwrap_err().message,
            "requested character not valid for encoding: 55296"
        );
        assert_eq!(translate("abc", "ab", "x"), "xc");
        assert_eq!(
            unistr("\\d83d\\de00 \\\\ \\u00e9 d\\+000061").unwrap(),
            "\u{1f600} \\ \u{e9} da"
        );
        let e = unistr("wrong: \\+2FFFFF").unwrap_err();
        assert_eq!(e.message, "invalid Unicode code point: 2FFFFF");
        assert_eq!(
            unistr("\\0000").unwrap_err().message,
            "invalid Unicode code point: 0000"
        );
        assert_eq!(
            unistr("a\\db99").unwrap_err().message,
            "invalid Unicode surrogate pair"
        );
        assert_eq!(unistr("\\xyz").unwrap_err().code.code(), "42601");
        let hex = ByteFunc::ToHex.eval(&[Value::Int4(-1)]).unwrap();
        assert_eq!(hex, Value::text("ffffffff"));
        let bits = ByteFunc::Float4Send.eval(&[Value::Float4(5e-20)]).unwrap();
        assert_eq!(bits, Value::Bytea(Arc::from(&[0x1f, 0x6c, 0x1e, 0x4a][..])));
    }
}
