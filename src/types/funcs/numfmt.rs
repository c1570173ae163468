//! `to_char(number, format)` and `to_number(text, format)`: PostgreSQL 15's
//! number templates (`formatting.c`'s `NUM_*` code), ported.
//!
//! A format is parsed into nodes: keywords (`9 0 . , D G S MI PL SG PR L
//! RN TH V EEEE FM B`, upper or lower case) and literal characters
//! (double-quoted text is literal, a backslash quotes the next
//! character). Parsing also fills a [`Desc`]: digits before and after the
//! decimal point, where zero-padding starts, which sign style is used;
//! conflicting keywords are PostgreSQL's syntax errors (`cannot use "S"
//! twice`, 42601). The value is first printed plainly (rounded to the
//! format's decimals; `#` when it has more integer digits than the format
//! has room for), then [`Proc`] walks the nodes writing that text out
//! character by character with padding, signs and separators, as
//! PostgreSQL's `NUM_processor` does; `to_number` runs the same walk in
//! reverse over its input. The locale is C: `,` groups, `.` is the
//! decimal point, `L` is a space.

use crate::err;
use crate::error::{Error, Result};
use crate::types::numeric::{mag, Numeric};
use crate::types::value::Value;

/// A keyword of a number template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Comma,
    Dec,
    Zero,
    Nine,
    B,
    C,
    D,
    Eeee,
    Fm,
    G,
    L,
    Mi,
    Pl,
    Pr,
    RnUpper,
    RnLower,
    Sg,
    Sp,
    S,
    ThUpper,
    ThLower,
    V,
}

/// Keywords in PostgreSQL's search order (longest first per first letter).
const KEYWORDS: [(&str, Key); 36] = [
    (",", Key::Comma),
    (".", Key::Dec),
    ("0", Key::Zero),
    ("9", Key::Nine),
    ("B", Key::B),
    ("C", Key::C),
    ("D", Key::D),
    ("EEEE", Key::Eeee),
    ("FM", Key::Fm),
    ("G", Key::G),
    ("L", Key::L),
    ("MI", Key::Mi),
    ("PL", Key::Pl),
    ("PR", Key::Pr),
    ("RN", Key::RnUpper),
    ("SG", Key::Sg),
    ("SP", Key::Sp),
    ("S", Key::S),
    ("TH", Key::ThUpper),
    ("V", Key::V),
    ("b", Key::B),
    ("c", Key::C),
    ("d", Key::D),
    ("eeee", Key::Eeee),
    ("fm", Key::Fm),
    ("g", Key::G),
    ("l", Key::L),
    ("mi", Key::Mi),
    ("pl", Key::Pl),
    ("pr", Key::Pr),
    ("rn", Key::RnLower),
    ("sg", Key::Sg),
    ("sp", Key::Sp),
    ("s", Key::S),
    ("th", Key::ThLower),
    ("v", Key::V),
];

/// One parsed piece of a template.
#[derive(Debug, Clone)]
enum Node {
    Action(Key),
    Char(String),
}

const F_DECIMAL: u32 = 1 << 1;
const F_LDECIMAL: u32 = 1 << 2;
const F_ZERO: u32 = 1 << 3;
const F_BLANK: u32 = 1 << 4;
const F_FILLMODE: u32 = 1 << 5;
const F_LSIGN: u32 = 1 << 6;
const F_BRACKET: u32 = 1 << 7;
const F_MINUS: u32 = 1 << 8;
const F_PLUS: u32 = 1 << 9;
const F_ROMAN: u32 = 1 << 10;
const F_MULTI: u32 = 1 << 11;
const F_PLUS_POST: u32 = 1 << 12;
const F_MINUS_POST: u32 = 1 << 13;
const F_EEEE: u32 = 1 << 14;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LSign {
    None,
    Pre,
    Post,
}

/// What a template asks for (PostgreSQL's `NUMDesc`).
#[derive(Debug, Clone)]
struct Desc {
    pre: usize,
    post: usize,
    lsign: LSign,
    flag: u32,
    pre_lsign_num: usize,
    multi: usize,
    zero_start: usize,
    zero_end: usize,
}

impl Desc {
    fn is(&self, f: u32) -> bool {
        self.flag & f != 0
    }
}

fn syntax(msg: &str) -> Error {
    err!(SyntaxError, "{msg}")
}

/// Accounts one keyword in the description (PostgreSQL's `NUMDesc_prepare`).
fn prepare(num: &mut Desc, key: Key) -> Result<()> {
    if num.is(F_EEEE) && key != Key::Eeee {
        return Err(syntax("\"EEEE\" must be the last pattern used"));
    }
    match key {
        Key::Nine => {
            if num.is(F_BRACKET) {
                return Err(syntax("\"9\" must be ahead of \"PR\""));
            }
            if num.is(F_MULTI) {
                num.multi += 1;
            } else if num.is(F_DECIMAL) {
                num.post += 1;
            } else {
                num.pre += 1;
            }
        }
        Key::Zero => {
            if num.is(F_BRACKET) {
                return Err(syntax("\"0\" must be ahead of \"PR\""));
            }
            if !num.is(F_ZERO) && !num.is(F_DECIMAL) {
                num.flag |= F_ZERO;
                num.zero_start = num.pre + 1;
            }
            if !num.is(F_DECIMAL) {
                num.pre += 1;
            } else {
                num.post += 1;
            }
            num.zero_end = num.pre + num.post;
        }
        Key::B => {
            if num.pre == 0 && num.post == 0 && !num.is(F_ZERO) {
                num.flag |= F_BLANK;
            }
        }
        Key::D | Key::Dec => {
            if key == Key::D {
                num.flag |= F_LDECIMAL;
            }
            if num.is(F_DECIMAL) {
                return Err(syntax("multiple decimal points"));
            }
            if num.is(F_MULTI) {
                return Err(syntax("cannot use \"V\" and decimal point together"));
            }
            num.flag |= F_DECIMAL;
        }
        Key::Fm => num.flag |= F_FILLMODE,
        Key::S => {
            if num.is(F_LSIGN) {
                return Err(syntax("cannot use \"S\" twice"));
            }
            if num.is(F_PLUS) || num.is(F_MINUS) || num.is(F_BRACKET) {
                return Err(syntax(
                    "cannot use \"S\" and \"PL\"/\"MI\"/\"SG\"/\"PR\" together",
                ));
            }
            if !num.is(F_DECIMAL) {
                num.lsign = LSign::Pre;
                num.pre_lsign_num = num.pre;
                num.flag |= F_LSIGN;
            } else if num.lsign == LSign::None {
                num.lsign = LSign::Post;
                num.flag |= F_LSIGN;
            }
        }
        Key::Mi => {
            if num.is(F_LSIGN) {
                return Err(syntax("cannot use \"S\" and \"MI\" together"));
            }
            num.flag |= F_MINUS;
            if num.is(F_DECIMAL) {
                num.flag |= F_MINUS_POST;
            }
        }
        Key::Pl => {
            if num.is(F_LSIGN) {
                return Err(syntax("cannot use \"S\" and \"PL\" together"));
            }
            num.flag |= F_PLUS;
            if num.is(F_DECIMAL) {
                num.flag |= F_PLUS_POST;
            }
        }
        Key::Sg => {
            if num.is(F_LSIGN) {
                return Err(syntax("cannot use \"S\" and \"SG\" together"));
            }
            num.flag |= F_MINUS | F_PLUS;
        }
        Key::Pr => {
            if num.is(F_LSIGN) || num.is(F_PLUS) || num.is(F_MINUS) {
                return Err(syntax(
                    "cannot use \"PR\" and \"S\"/\"PL\"/\"MI\"/\"SG\" together",
                ));
            }
            num.flag |= F_BRACKET;
        }
        Key::RnUpper | Key::RnLower => num.flag |= F_ROMAN,
        Key::V => {
            if num.is(F_DECIMAL) {
                return Err(syntax("cannot use \"V\" and decimal point together"));
            }
            num.flag |= F_MULTI;
        }
        Key::Eeee => {
            if num.is(F_EEEE) {
                return Err(syntax("cannot use \"EEEE\" twice"));
            }
            if num.flag
                & (F_BLANK
                    | F_FILLMODE
                    | F_LSIGN
                    | F_BRACKET
                    | F_MINUS
                    | F_PLUS
                    | F_ROMAN
                    | F_MULTI)
                != 0
            {
                return Err(
                    syntax("\"EEEE\" is incompatible with other formats").with_detail(
                        "\"EEEE\" may only be used together with digit and decimal point patterns.",
                    ),
                );
            }
            num.flag |= F_EEEE;
        }
        Key::Comma | Key::C | Key::G | Key::L | Key::Sp | Key::ThUpper | Key::ThLower => {}
    }
    Ok(())
}

/// Parses a template (PostgreSQL's `parse_format` for numbers).
fn parse(fmt: &str) -> Result<(Vec<Node>, Desc)> {
    let mut num = Desc {
        pre: 0,
        post: 0,
        lsign: LSign::None,
        flag: 0,
        pre_lsign_num: 0,
        multi: 0,
        zero_start: 0,
        zero_end: 0,
    };
    let mut nodes = Vec::new();
    let mut rest = fmt;
    while let Some(c) = rest.chars().next() {
        if let Some((kw, key)) = KEYWORDS.iter().find(|(k, _)| rest.starts_with(k)) {
            prepare(&mut num, *key)?;
            nodes.push(Node::Action(*key));
            rest = &rest[kw.len()..];
        } else if c == '"' {
            rest = &rest[1..];
            let mut chars = rest.char_indices().peekable();
            let mut consumed = rest.len();
            while let Some((i, ch)) = chars.next() {
                if ch == '"' {
                    consumed = i + 1;
                    break;
                }
                let ch = match (ch, chars.peek()) {
                    ('\\', Some(&(_, next))) => {
                        chars.next();
                        next
                    }
                    _ => ch,
                };
                nodes.push(Node::Char(ch.to_string()));
            }
            rest = &rest[consumed..];
        } else {
            let mut skip = 0;
            let mut ch = c;
            if c == '\\' && rest[1..].starts_with('"') {
                skip = 1;
                ch = '"';
            }
            nodes.push(Node::Char(ch.to_string()));
            rest = &rest[skip + ch.len_utf8()..];
        }
    }
    Ok((nodes, num))
}

/// `n` as upper-case Roman numerals, or 15 `#` outside 1..=3999.
fn to_roman(n: i64) -> String {
    if !(1..=3999).contains(&n) {
        return "#".repeat(15);
    }
    const R: [[&str; 9]; 3] = [
        ["C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"],
        ["X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"],
        ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"],
    ];
    let mut out = "M".repeat((n / 1000) as usize);
    for (k, d) in [(n / 100) % 10, (n / 10) % 10, n % 10]
        .into_iter()
        .enumerate()
    {
        if d > 0 {
            out.push_str(R[k][(d - 1) as usize]);
        }
    }
    out
}

/// The `#` text of an overflowed value: `pre` and `post` marks around a point.
fn hashes(pre: usize, post: usize) -> String {
    let mut s = "#".repeat(pre + post + 1);
    s.replace_range(pre..pre + 1, ".");
    s
}

/// `%+.*e` as C prints it, with the leading `+` turned into a space.
fn c_exp(v: f64, digits: usize) -> String {
    let s = format!("{:+.*e}", digits, v);
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i64 = exp.parse().unwrap_or(0);
    let mant = mant.replacen('+', " ", 1);
    format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

/// `%.*f` as PostgreSQL's snprintf prints it (`NaN`, `Infinity`).
fn c_fixed(v: f64, digits: usize) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v < 0.0 { "-Infinity" } else { "Infinity" }.into()
    } else {
        format!("{:.*}", digits, v)
    }
}

/// PostgreSQL's `numeric_out_sci`: one digit before the point, `scale`
/// after (rounded half away from zero; a carry gives `10.0`, as there),
/// and `e+XX`.
fn numeric_sci(n: &Numeric, scale: usize) -> String {
    if !n.is_finite() {
        return n.to_string();
    }
    let mut digits: Vec<u8> = if n.is_zero() {
        vec![b'0']
    } else {
        mag::to_decimal(&n.mag).into_bytes()
    };
    let exponent = if n.is_zero() {
        0
    } else {
        digits.len() as i64 - n.scale() as i64 - 1
    };
    let keep = scale + 1;
    let round_up = digits.get(keep).is_some_and(|&d| d >= b'5');
    digits.resize(keep, b'0');
    if round_up {
        let mut i = keep;
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let int_len = digits.len() - scale;
    let mut out = String::new();
    if n.is_negative() {
        out.push('-');
    }
    out.push_str(&String::from_utf8_lossy(&digits[..int_len]));
    if scale > 0 {
        out.push('.');
        out.push_str(&String::from_utf8_lossy(&digits[int_len..]));
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    out.push_str(&format!("e{sign}{:02}", exponent.abs()));
    out
}

/// `n * 10^k`, exactly (`k` small: the `V` multiplier).
fn shift10(n: &Numeric, k: i64) -> Numeric {
    if !n.is_finite() {
        return n.clone();
    }
    let scale = n.scale() as i64 - k;
    if scale >= 0 {
        Numeric::from_parts(
            n.is_negative(),
            n.mag.clone(),
            scale.min(u16::MAX as i64) as u16,
        )
    } else {
        let m = mag::mul_pow10(&n.mag, (-scale) as u32);
        Numeric::from_parts(n.is_negative(), m, 0)
    }
}

/// The plain text of the value for the template, its sign and the blank
/// positions before it (the callers of PostgreSQL's `NUM_processor`).
fn number_text(v: &Value, num: &mut Desc) -> Result<(String, u8, usize)> {
    if num.is(F_ROMAN) {
        let n = match v {
            Value::Float4(f) => (*f as f64).round_ties_even() as i64,
            Value::Float8(f) => f.round_ties_even().clamp(i32::MIN as f64, i32::MAX as f64) as i64,
            Value::Numeric(n) => n
                .to_i64_round()
                .map_or(i32::MAX as i64, |x| x.min(i32::MAX as i64)),
            other => other.as_i64().unwrap_or(0),
        };
        return Ok((to_roman(n), 0, 0));
    }
    if num.is(F_EEEE) {
        let text = match v {
            Value::Int2(_) | Value::Int4(_) | Value::Float4(_) | Value::Float8(_) => {
                let f = match v {
                    Value::Float4(x) => *x as f64,
                    Value::Float8(x) => *x,
                    other => other.as_i64().unwrap_or(0) as f64,
                };
                if f.is_finite() {
                    c_exp(f, num.post)
                } else {
                    special_eeee(num)
                }
            }
            _ => {
                let n = to_numeric(v);
                if !n.is_finite() {
                    special_eeee(num)
                } else {
                    let s = numeric_sci(&n, num.post);
                    if s.starts_with('-') {
                        s
                    } else {
                        format!(" {s}")
                    }
                }
            }
        };
        return Ok((text, 0, 0));
    }
    let text = match v {
        Value::Float4(f) => float_text(*f as f64, num, 6, true),
        Value::Float8(f) => float_text(*f, num, 15, false),
        _ => {
            let mut n = to_numeric(v);
            if num.is(F_MULTI) {
                n = shift10(&n, num.multi as i64);
                num.pre += num.multi;
            }
            n.round_scale(num.post as i32).to_string()
        }
    };
    let (sign, body) = match text.strip_prefix('-') {
        Some(rest) => (b'-', rest.to_string()),
        None => (b'+', text),
    };
    let pre_len = body.find('.').unwrap_or(body.len());
    if pre_len < num.pre {
        Ok((body, sign, num.pre - pre_len))
    } else if pre_len > num.pre {
        Ok((hashes(num.pre, num.post), sign, 0))
    } else {
        Ok((body, sign, 0))
    }
}

/// EEEE of NaN or an infinity: ` #.###e####`-shaped marks.
fn special_eeee(num: &Desc) -> String {
    let mut s: Vec<u8> = vec![b'#'; num.pre + num.post + 6];
    s[0] = b' ';
    s[num.pre + 1] = b'.';
    String::from_utf8_lossy(&s).into_owned()
}

/// A float's text for the template: at most `dig` significant digits.
fn float_text(v: f64, num: &mut Desc, dig: usize, single: bool) -> String {
    let mut val = v;
    if num.is(F_MULTI) {
        val = v * 10f64.powi(num.multi as i32);
        if single {
            val = val as f32 as f64;
        }
        num.pre += num.multi;
    }
    let pre_len = c_fixed(val.abs(), 0).len();
    if pre_len >= dig {
        num.post = 0;
    } else if pre_len + num.post > dig {
        num.post = dig - pre_len;
    }
    c_fixed(val, num.post)
}

fn to_numeric(v: &Value) -> Numeric {
    match v {
        Value::Numeric(n) => (**n).clone(),
        other => Numeric::from_i64(other.as_i64().unwrap_or(0)),
    }
}

/// `to_char(number, format)`.
pub fn to_char(v: &Value, fmt: &str) -> Result<String> {
    if fmt.is_empty() {
        return Ok(String::new());
    }
    let (nodes, mut num) = parse(fmt)?;
    let (number, sign, pre_spaces) = number_text(v, &mut num)?;
    Ok(Proc::new(num, number.into_bytes(), sign, pre_spaces).run_to_char(&nodes))
}

/// The state of one template walk (PostgreSQL's `NUMProc`).
struct Proc {
    num: Desc,
    sign: u8,
    sign_wrote: bool,
    number: Vec<u8>,
    number_p: usize,
    out: Vec<u8>,
    out_pre_spaces: usize,
    num_count: usize,
    num_curr: usize,
    num_in: bool,
    last_relevant: Option<usize>,
}

impl Proc {
    fn new(mut num: Desc, number: Vec<u8>, sign: u8, out_pre_spaces: usize) -> Proc {
        if num.zero_start > 0 {
            num.zero_start -= 1;
        }
        if num.is(F_ROMAN) {
            num.lsign = LSign::None;
            num.pre_lsign_num = 0;
            num.post = 0;
            num.pre = 0;
            num.flag = F_ROMAN | (num.flag & F_FILLMODE);
        }
        let mut p = Proc {
            num,
            sign,
            sign_wrote: false,
            number,
            number_p: 0,
            out: Vec::new(),
            out_pre_spaces,
            num_count: 0,
            num_curr: 0,
            num_in: false,
            last_relevant: None,
        };
        if p.num.is(F_ROMAN) {
            p.out_pre_spaces = 0;
            p.sign = 0;
        }
        if p.num.is(F_PLUS) || p.num.is(F_MINUS) {
            // Only PL without MI still needs a sign written with the digits.
            p.sign_wrote = !p.num.is(F_PLUS) || p.num.is(F_MINUS);
        } else {
            if p.sign != b'-' && p.num.is(F_FILLMODE) {
                p.num.flag &= !F_BRACKET;
            }
            p.sign_wrote = p.sign == b'+' && p.num.is(F_FILLMODE) && !p.num.is(F_LSIGN);
            if p.num.lsign == LSign::Pre && p.num.pre == p.num.pre_lsign_num {
                p.num.lsign = LSign::Post;
            }
        }
        p.num_count = (p.num.post + p.num.pre).saturating_sub(1);
        if p.num.post + p.num.pre == 0 {
            p.num_count = usize::MAX;
        }
        if p.num.is(F_FILLMODE) && p.num.is(F_DECIMAL) {
            p.last_relevant = last_relevant_decnum(&p.number);
            if let Some(lr) = p.last_relevant {
                if p.num.zero_end > p.out_pre_spaces {
                    let last_zero = (p.number.len() - 1).min(p.num.zero_end - p.out_pre_spaces);
                    if lr < last_zero {
                        p.last_relevant = Some(last_zero);
                    }
                }
            }
        }
        if !p.sign_wrote && p.out_pre_spaces == 0 {
            p.num_count = p.num_count.wrapping_add(1);
        }
        p
    }

    fn cur(&self) -> u8 {
        self.number.get(self.number_p).copied().unwrap_or(0)
    }

    fn predec_space(&self) -> bool {
        !self.num.is(F_ZERO)
            && self.number_p == 0
            && self.number.first() == Some(&b'0')
            && self.num.post != 0
    }

    fn last_relevant_is_point(&self) -> bool {
        self.last_relevant
            .is_some_and(|i| self.number.get(i) == Some(&b'.'))
    }

    /// PostgreSQL's `NUM_numpart_to_char`: a digit, zero, blank or point.
    fn numpart(&mut self, key: Key) {
        if self.num.is(F_ROMAN) {
            return;
        }
        self.num_in = false;
        if !self.sign_wrote
            && (self.num_curr >= self.out_pre_spaces
                || (self.num.is(F_ZERO) && self.num.zero_start == self.num_curr))
            && (!self.predec_space() || self.last_relevant_is_point())
        {
            if self.num.is(F_LSIGN) {
                if self.num.lsign == LSign::Pre {
                    self.out.push(if self.sign == b'-' { b'-' } else { b'+' });
                    self.sign_wrote = true;
                }
            } else if self.num.is(F_BRACKET) {
                self.out.push(if self.sign == b'+' { b' ' } else { b'<' });
                self.sign_wrote = true;
            } else if self.sign == b'+' {
                if !self.num.is(F_FILLMODE) {
                    self.out.push(b' ');
                }
                self.sign_wrote = true;
            } else if self.sign == b'-' {
                self.out.push(b'-');
                self.sign_wrote = true;
            }
        }
        if self.num_curr < self.out_pre_spaces
            && (self.num.zero_start > self.num_curr || !self.num.is(F_ZERO))
        {
            if !self.num.is(F_FILLMODE) {
                self.out.push(b' ');
            }
        } else if self.num.is(F_ZERO)
            && self.num_curr < self.out_pre_spaces
            && self.num.zero_start <= self.num_curr
        {
            self.out.push(b'0');
            self.num_in = true;
        } else {
            if self.cur() == b'.' {
                if !self.last_relevant_is_point() || self.num.is(F_FILLMODE) {
                    self.out.push(b'.');
                }
            } else if self.last_relevant.is_some_and(|lr| self.number_p > lr) && key != Key::Zero {
            } else if self.predec_space() {
                if !self.num.is(F_FILLMODE) {
                    self.out.push(b' ');
                } else if self.last_relevant_is_point() {
                    self.out.push(b'0');
                }
            } else {
                if let Some(&c) = self.number.get(self.number_p) {
                    self.out.push(c);
                }
                self.num_in = true;
            }
            if self.cur() != 0 {
                self.number_p += 1;
            }
        }
        let mut end = self
            .num_count
            .wrapping_add(usize::from(self.out_pre_spaces > 0))
            .wrapping_add(usize::from(self.num.is(F_DECIMAL)));
        if self.last_relevant == Some(self.number_p) {
            end = self.num_curr;
        }
        if self.num_curr.wrapping_add(1) == end {
            if self.sign_wrote && self.num.is(F_BRACKET) {
                self.out.push(if self.sign == b'+' { b' ' } else { b'>' });
            } else if self.num.is(F_LSIGN) && self.num.lsign == LSign::Post {
                self.out.push(if self.sign == b'-' { b'-' } else { b'+' });
            }
        }
        self.num_curr += 1;
    }

    fn run_to_char(mut self, nodes: &[Node]) -> String {
        if self.num.is(F_EEEE) {
            return String::from_utf8_lossy(&self.number).into_owned();
        }
        let fill = self.num.is(F_FILLMODE);
        for node in nodes {
            let key = match node {
                Node::Char(c) => {
                    self.out.extend_from_slice(c.as_bytes());
                    continue;
                }
                Node::Action(k) => *k,
            };
            match key {
                Key::Nine | Key::Zero | Key::Dec | Key::D => self.numpart(key),
                Key::Comma | Key::G => {
                    if self.num_in {
                        self.out.push(b',');
                    } else if !fill {
                        self.out.push(b' ');
                    }
                }
                Key::L => self.out.push(b' '),
                Key::RnUpper | Key::RnLower => {
                    let mut r = String::from_utf8_lossy(&self.number[self.number_p..]).into_owned();
                    if key == Key::RnLower {
                        r = r.to_ascii_lowercase();
                    }
                    if fill {
                        self.out.extend_from_slice(r.as_bytes());
                    } else {
                        self.out.extend_from_slice(format!("{r:>15}").as_bytes());
                    }
                }
                Key::ThUpper | Key::ThLower => {
                    if self.num.is(F_ROMAN)
                        || self.number.first() == Some(&b'#')
                        || self.sign == b'-'
                        || self.num.is(F_DECIMAL)
                    {
                        continue;
                    }
                    let th = ordinal_suffix(&self.number);
                    if key == Key::ThUpper {
                        self.out.extend_from_slice(th.as_bytes());
                    } else {
                        self.out
                            .extend_from_slice(th.to_ascii_lowercase().as_bytes());
                    }
                }
                Key::Mi => {
                    if self.sign == b'-' {
                        self.out.push(b'-');
                    } else if !fill {
                        self.out.push(b' ');
                    }
                }
                Key::Pl => {
                    if self.sign == b'+' {
                        self.out.push(b'+');
                    } else if !fill {
                        self.out.push(b' ');
                    }
                }
                Key::Sg => self.out.push(if self.sign == 0 { b' ' } else { self.sign }),
                _ => {}
            }
        }
        String::from_utf8_lossy(&self.out).into_owned()
    }
}

/// The position of the last non-zero digit after the point (or of the
/// point itself when all are zero), PostgreSQL's `get_last_relevant_decnum`.
fn last_relevant_decnum(number: &[u8]) -> Option<usize> {
    let point = number.iter().position(|&c| c == b'.')?;
    let mut result = point;
    for (i, &c) in number.iter().enumerate().skip(point + 1) {
        if c != b'0' {
            result = i;
        }
    }
    Some(result)
}

/// `ST`, `ND`, `RD` or `TH` for the number's last digit.
fn ordinal_suffix(number: &[u8]) -> &'static str {
    let n = number.len();
    let last = number.last().copied().unwrap_or(b'0');
    if n > 1 && number[n - 2] == b'1' {
        return "TH";
    }
    match last {
        b'1' => "ST",
        b'2' => "ND",
        b'3' => "RD",
        _ => "TH",
    }
}

/// `to_number(text, format)`: reads the digits the template places,
/// PostgreSQL's `NUM_processor` in its input direction, then converts
/// with the template's precision and scale.
pub fn to_number(input: &str, fmt: &str) -> Result<Numeric> {
    let (nodes, num) = parse(fmt)?;
    if num.is(F_EEEE) {
        return Err(syntax("\"EEEE\" not supported for input"));
    }
    if num.is(F_ROMAN) {
        return Err(syntax("\"RN\" not supported for input"));
    }
    let mut r = Reader {
        num,
        input: input.as_bytes(),
        pos: 0,
        number: vec![b' '],
        read_pre: 0,
        read_post: 0,
        read_dec: false,
    };
    r.run(&nodes);
    if r.number.last() == Some(&b'.') {
        r.number.pop();
    }
    let text = String::from_utf8_lossy(&r.number).into_owned();
    let scale = r.read_post;
    let precision = r.num.pre + r.num.multi + scale;
    let n = Numeric::parse(&text)?;
    let n = n.apply_typmod(precision as u16, scale as i16)?;
    if r.num.is(F_MULTI) {
        return Ok(shift10(&n, -(r.num.multi as i64)));
    }
    Ok(n)
}

/// The input walk of `to_number`.
struct Reader<'a> {
    num: Desc,
    input: &'a [u8],
    pos: usize,
    number: Vec<u8>,
    read_pre: usize,
    read_post: usize,
    read_dec: bool,
}

impl Reader<'_> {
    fn at_end(&self) -> bool {
        self.pos >= self.input.len()
    }

    fn at(&self, i: usize) -> u8 {
        self.input.get(i).copied().unwrap_or(0)
    }

    fn char_len(&self) -> usize {
        match self.at(self.pos) {
            b if b < 0x80 => 1,
            b if b >= 0xF0 => 4,
            b if b >= 0xE0 => 3,
            _ => 2,
        }
    }

    fn eat_non_data(&mut self, n: usize) {
        for _ in 0..n {
            if self.at_end() || b"0123456789.,+-".contains(&self.at(self.pos)) {
                break;
            }
            self.pos += self.char_len();
        }
    }

    fn run(&mut self, nodes: &[Node]) {
        for node in nodes {
            if self.at_end() {
                break;
            }
            let key = match node {
                Node::Char(_) => {
                    self.pos += self.char_len();
                    continue;
                }
                Node::Action(k) => *k,
            };
            let fill = self.num.is(F_FILLMODE);
            match key {
                Key::Nine | Key::Zero | Key::Dec | Key::D => self.numpart(key),
                Key::Comma | Key::G => {
                    // Skipped when the input has it (never in fill mode,
                    // as PostgreSQL's reader never marks digits as in).
                    if fill {
                        continue;
                    }
                    if self.at(self.pos) != b',' {
                        continue;
                    }
                }
                Key::L => {
                    self.eat_non_data(1);
                    continue;
                }
                Key::ThUpper | Key::ThLower => {
                    if self.num.is(F_DECIMAL) {
                        continue;
                    }
                    self.eat_non_data(2);
                    continue;
                }
                Key::Mi | Key::Pl | Key::Sg => {
                    let c = self.at(self.pos);
                    let wanted = match key {
                        Key::Mi => c == b'-',
                        Key::Pl => c == b'+',
                        _ => c == b'-' || c == b'+',
                    };
                    if wanted {
                        self.number[0] = c;
                    } else {
                        self.eat_non_data(1);
                        continue;
                    }
                }
                _ => continue,
            }
            self.pos += 1;
        }
    }

    /// PostgreSQL's `NUM_numpart_from_char`.
    fn numpart(&mut self, key: Key) {
        if self.at(self.pos) == b' ' {
            self.pos += 1;
        }
        if self.at_end() {
            return;
        }
        let num = &self.num;
        if self.number[0] == b' '
            && matches!(key, Key::Zero | Key::Nine)
            && self.read_pre + self.read_post == 0
        {
            let c = self.at(self.pos);
            if num.is(F_LSIGN) && num.lsign == LSign::Pre {
                if c == b'-' || c == b'+' {
                    self.pos += 1;
                    self.number[0] = c;
                }
            } else if c == b'-' || (num.is(F_BRACKET) && c == b'<') {
                self.number[0] = b'-';
                self.pos += 1;
            } else if c == b'+' {
                self.number[0] = b'+';
                self.pos += 1;
            }
        }
        if self.at_end() {
            return;
        }
        let mut isread = false;
        let c = self.at(self.pos);
        if c.is_ascii_digit() {
            if self.read_dec && self.read_post == self.num.post {
                return;
            }
            self.number.push(c);
            if self.read_dec {
                self.read_post += 1;
            } else {
                self.read_pre += 1;
            }
            isread = true;
        } else if self.num.is(F_DECIMAL) && !self.read_dec && c == b'.' {
            self.number.push(b'.');
            self.read_dec = true;
            isread = true;
        }
        if self.at_end() {
            return;
        }
        if self.number[0] == b' ' && self.read_pre + self.read_post > 0 {
            if self.num.is(F_LSIGN)
                && isread
                && self.pos < self.input.len()
                && !self.at(self.pos + 1).is_ascii_digit()
            {
                let next = self.at(self.pos + 1);
                if self.pos + 1 < self.input.len() && (next == b'-' || next == b'+') {
                    self.pos += 1;
                    self.number[0] = next;
                }
            } else if !isread
                && !self.num.is(F_LSIGN)
                && (self.num.is(F_PLUS) || self.num.is(F_MINUS))
                && (c == b'-' || c == b'+')
            {
                self.number[0] = c;
            }
        }
    }
}
