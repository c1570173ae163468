//! `to_date(text, template)`: reading a date by a `to_char` template, as
//! PostgreSQL's `DCH_from_char` and `do_to_timestamp` (`formatting.c`).
//!
//! The template is cut by [`to_char`](super::to_char)'s parser. Outside
//! `FX` mode, spaces before a field are skipped, a template space or
//! separator matches at most one space or separator of the input, and any
//! other template character consumes one input character whatever it is. A
//! numeric field followed by another numeric field reads exactly its width
//! (`YYYYMMDD`); otherwise (or with `FM`) it reads all the digits there are.
//! Two-digit and three-digit years move toward 2020 (`70` is 1970, `69` is
//! 2069). Time fields are read and dropped. Messages are PostgreSQL's
//! (`invalid value "x1" for "MM"`, 22007; `date/time field value out of
//! range: "2016-13-10"`, 22008).

use super::to_char::{parse, Node, DAYS, MONTHS};
use super::{date2j, days_in_month, j2date, make_date};
use crate::err;
use crate::error::{Error, Result};

/// One template item, as `FormatNode`.
enum Item {
    Key {
        key: &'static str,
        fm: bool,
        th: bool,
    },
    Space,
    Separator,
    Char,
}

/// `is_separator_char`: printable ASCII that is neither a letter nor a digit.
fn is_separator(c: u8) -> bool {
    c > 0x20 && c < 0x7f && !c.is_ascii_alphanumeric()
}

/// Whether a keyword reads digits (`is_digit` in `DCH_keywords`).
fn is_digit_key(key: &str) -> bool {
    !matches!(
        key.to_ascii_uppercase().as_str(),
        "MONTH"
            | "MON"
            | "DAY"
            | "DY"
            | "AM"
            | "PM"
            | "A.M."
            | "P.M."
            | "AD"
            | "BC"
            | "A.D."
            | "B.C."
            | "RM"
            | "TZ"
            | "OF"
            | "FX"
    )
}

/// The fields read so far (`TmFromChar`).
#[derive(Default)]
struct Fields {
    year: Option<i64>,
    year_digits: usize,
    bc: bool,
    cc: Option<i64>,
    mm: Option<i64>,
    dd: Option<i64>,
    ddd: Option<i64>,
    ww: Option<i64>,
    w: Option<i64>,
    j: Option<i64>,
    hour: Option<i64>,
    /// `HH` / `HH12` read the hour: it is on the 12-hour clock.
    clock12: bool,
    pm: Option<bool>,
    min: Option<i64>,
    sec: Option<i64>,
    ssss: Option<i64>,
    /// `MS`, `US`, `FFn`: microseconds.
    us: Option<i64>,
    /// `TZH` / `TZM`: the zone's offset, seconds east.
    tz: Option<i64>,
    /// `FFn`: round the result to `n` digits.
    ff: Option<u8>,
    /// The date convention the template's keywords use (true: ISO week).
    iso: Option<bool>,
    /// `ID`: the ISO weekday, numbered as Gregorian days (Sunday 1).
    id: Option<i64>,
}

/// The date convention of a keyword (`FromCharDateMode`): true for ISO
/// week dates, false for Gregorian ones, `None` for neither.
fn key_mode(upper: &str) -> Option<bool> {
    match upper {
        "IYYY" | "IYY" | "IY" | "I" | "IW" | "ID" | "IDDD" => Some(true),
        "YYYY" | "YYY" | "YY" | "Y" | "Y,YYY" | "MM" | "MON" | "MONTH" | "DD" | "DDD" | "WW"
        | "W" | "D" | "RM" => Some(false),
        _ => None,
    }
}

/// `from_char_set_mode`: one template may not mix the conventions.
fn set_mode(f: &mut Fields, upper: &str) -> Result<()> {
    let Some(iso) = key_mode(upper) else {
        return Ok(());
    };
    match f.iso {
        Some(m) if m != iso => Err(err!(
            InvalidDatetimeFormat,
            "invalid combination of date conventions"
        )
        .with_hint("Do not mix Gregorian and ISO week date conventions in a formatting template.")),
        _ => {
            f.iso = Some(iso);
            Ok(())
        }
    }
}

/// Julian day of the Monday starting ISO week `week` of ISO year `year`
/// (`isoweek2j`).
fn isoweek2j(year: i64, week: i64) -> i64 {
    let day4 = date2j(year, 1, 4);
    let day0 = day4.rem_euclid(7);
    (week - 1) * 7 + (day4 - day0)
}

fn items(fmt: &str) -> Vec<Item> {
    let mut out = Vec::new();
    for node in parse(fmt) {
        match node {
            Node::Key { key, fm, th } => out.push(Item::Key {
                key,
                fm,
                th: th.is_some(),
            }),
            Node::Text(t) => out.extend(t.bytes().filter(|b| *b & 0xc0 != 0x80).map(|b| {
                if b.is_ascii_whitespace() {
                    Item::Space
                } else if is_separator(b) {
                    Item::Separator
                } else {
                    Item::Char
                }
            })),
        }
    }
    out
}

/// `is_next_separator`: whether the field at `i` ends at a non-digit.
fn next_is_separator(items: &[Item], i: usize) -> bool {
    if let Some(Item::Key { th: true, .. }) = items.get(i) {
        return true;
    }
    match items.get(i + 1) {
        None => true,
        Some(Item::Key { key, .. }) => !is_digit_key(key),
        Some(_) => true,
    }
}

/// The reader over the input text.
struct Reader<'a> {
    s: &'a str,
    pos: usize,
}

impl Reader<'_> {
    fn rest(&self) -> &str {
        &self.s[self.pos..]
    }

    fn skip_spaces(&mut self) -> usize {
        let n = self
            .rest()
            .bytes()
            .take_while(u8::is_ascii_whitespace)
            .count();
        self.pos += n;
        n
    }

    /// `from_char_parse_int_len`.
    fn int(&mut self, key: &str, len: usize, slurp: bool) -> Result<(i64, usize)> {
        self.skip_spaces();
        let rest = self.rest();
        let copy: String = rest.chars().take(len).collect();
        let bad = || {
            err!(
                InvalidDatetimeFormat,
                "invalid value \"{copy}\" for \"{key}\""
            )
            .with_detail("Value must be an integer.")
        };
        let text = if slurp { rest } else { copy.as_str() };
        if !slurp && copy.chars().count() < len {
            return Err(err!(
                InvalidDatetimeFormat,
                "source string too short for \"{key}\" formatting field"
            )
            .with_detail(format!(
                "Field requires {len} characters, but only {} remain.",
                copy.chars().count()
            ))
            .with_hint(
                "If your source string is not fixed-width, try using the \"FM\" modifier.",
            ));
        }
        let b = text.as_bytes();
        let sign = usize::from(matches!(b.first(), Some(b'-' | b'+')));
        let digits = b[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return Err(bad());
        }
        let used = sign + digits;
        if !slurp && used < len {
            return Err(err!(
                InvalidDatetimeFormat,
                "invalid value \"{copy}\" for \"{key}\""
            )
            .with_detail(format!(
                "Field requires {len} characters, but only {used} could be parsed."
            ))
            .with_hint(
                "If your source string is not fixed-width, try using the \"FM\" modifier.",
            ));
        }
        let v: i64 = text[..used]
            .parse()
            .ok()
            .filter(|v| (i32::MIN as i64..=i32::MAX as i64).contains(v))
            .ok_or_else(|| {
                err!(
                    DatetimeFieldOverflow,
                    "value for \"{key}\" in source string is out of range"
                )
                .with_detail(format!(
                    "Value must be in the range {} to {}.",
                    i32::MIN,
                    i32::MAX
                ))
            })?;
        self.pos += used;
        Ok((v, used))
    }

    /// `from_char_seq_search`: one of `names` (case-insensitive, the first
    /// `len` characters of each when `len` is set); its index.
    fn name(&mut self, key: &str, names: &[&str], len: Option<usize>) -> Result<usize> {
        self.skip_spaces();
        let rest = self.rest();
        for (i, n) in names.iter().enumerate() {
            let n = len.map_or(*n, |l| &n[..l]);
            if rest.len() >= n.len()
                && rest.as_bytes()[..n.len()].eq_ignore_ascii_case(n.as_bytes())
            {
                self.pos += n.len();
                return Ok(i);
            }
        }
        let word: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
        Err(err!(
            InvalidDatetimeFormat,
            "invalid value \"{word}\" for \"{key}\""
        )
        .with_detail("The given value did not match any of the allowed values for this field."))
    }
}

/// `from_char_set_int`: a field set twice must agree.
fn set(field: &mut Option<i64>, v: i64, key: &str) -> Result<()> {
    match field {
        Some(old) if *old != v => Err(err!(
            InvalidDatetimeFormat,
            "conflicting values for \"{key}\" field in formatting string"
        )
        .with_detail("This value contradicts a previous setting for the same field type.")),
        _ => {
            *field = Some(v);
            Ok(())
        }
    }
}

/// Reads one keyword field at item `i`.
fn read_key(r: &mut Reader, f: &mut Fields, items: &[Item], i: usize) -> Result<()> {
    let Some(Item::Key { key, fm, .. }) = items.get(i) else {
        return Ok(());
    };
    let (key, fm) = (*key, *fm);
    let upper = key.to_ascii_uppercase();
    let slurp = fm || next_is_separator(items, i);
    set_mode(f, key)?;
    let mut int = |len: usize| r.int(key, len, slurp);
    match upper.as_str() {
        "YYYY" | "IYYY" => {
            let (v, _) = int(4)?;
            set(&mut f.year, v, key)?;
            f.year_digits = 4;
        }
        "YYY" | "YY" | "Y" | "IYY" | "IY" | "I" => {
            let (v, used) = int(upper.len())?;
            set(&mut f.year, if used < 4 { toward_2020(v) } else { v }, key)?;
            f.year_digits = upper.len();
        }
        "Y,YYY" => {
            let (thousands, _) = r.int(key, 1, true)?;
            r.pos += usize::from(r.rest().starts_with(','));
            let (rest, _) = r.int(key, 3, false)?;
            set(&mut f.year, thousands * 1000 + rest, key)?;
            f.year_digits = 4;
        }
        "CC" => set(&mut f.cc, int(2)?.0, key)?,
        "MM" => set(&mut f.mm, int(2)?.0, key)?,
        "DD" => set(&mut f.dd, int(2)?.0, key)?,
        "DDD" | "IDDD" => set(&mut f.ddd, int(3)?.0, key)?,
        "WW" | "IW" => set(&mut f.ww, int(2)?.0, key)?,
        "W" => set(&mut f.w, int(1)?.0, key)?,
        "J" => set(&mut f.j, r.int(key, usize::MAX, true)?.0, key)?,
        "ID" => {
            let d = int(1)?.0 + 1;
            set(&mut f.id, if d > 7 { 1 } else { d }, key)?;
        }
        "D" | "Q" => drop(int(1)?),
        "HH" | "HH12" => {
            set(&mut f.hour, int(2)?.0, key)?;
            f.clock12 = true;
        }
        "HH24" => set(&mut f.hour, int(2)?.0, key)?,
        "MI" => set(&mut f.min, int(2)?.0, key)?,
        "SS" => set(&mut f.sec, int(2)?.0, key)?,
        "MS" | "US" | "FF1" | "FF2" | "FF3" | "FF4" | "FF5" | "FF6" => {
            let width = match upper.as_str() {
                "MS" => 3,
                "US" => 6,
                ff => usize::from(ff.as_bytes()[2] - b'0'),
            };
            if upper.starts_with("FF") {
                f.ff = Some(width as u8);
            }
            let (v, used) = int(width)?;
            // `25` and `250` are both a quarter second (`025` is not).
            let digits = used.clamp(1, 6) as u32;
            set(&mut f.us, v * 10_i64.pow(6 - digits), key)?;
        }
        "SSSS" | "SSSSS" => set(&mut f.ssss, r.int(key, usize::MAX, true)?.0, key)?,
        "TZH" => {
            // A minus taken as the separator before the field still counts.
            let neg = r.rest().starts_with('-')
                || (!r.rest().starts_with(['+', ' ']) && r.s[..r.pos].ends_with('-'));
            if r.rest().starts_with(['+', '-', ' ']) {
                r.pos += 1;
            }
            let (h, _) = r.int(key, 2, slurp)?;
            let east = f.tz.unwrap_or(0).abs() + h.abs() * 3600;
            f.tz = Some(if neg || h < 0 { -east } else { east });
        }
        "TZM" => {
            let (m, _) = int(2)?;
            let old = f.tz.unwrap_or(0);
            let add = m * 60;
            f.tz = Some(if old < 0 { old - add } else { old + add });
        }
        "MONTH" => set(&mut f.mm, r.name(key, &MONTHS, None)? as i64 + 1, key)?,
        "MON" => set(&mut f.mm, r.name(key, &MONTHS, Some(3))? as i64 + 1, key)?,
        "DAY" => drop(r.name(key, &DAYS, None)?),
        "DY" => drop(r.name(key, &DAYS, Some(3))?),
        "AM" | "PM" => {
            f.pm = Some(r.name(key, &["am", "pm"], None)? == 1);
            f.clock12 = true;
        }
        "A.M." | "P.M." => {
            f.pm = Some(r.name(key, &["a.m.", "p.m."], None)? == 1);
            f.clock12 = true;
        }
        "AD" | "BC" => f.bc = r.name(key, &["ad", "bc"], None)? == 1,
        "A.D." | "B.C." => f.bc = r.name(key, &["a.d.", "b.c."], None)? == 1,
        _ => {
            return Err(err!(
                FeatureNotSupported,
                "formatting field \"{key}\" is only supported in to_char"
            ))
        }
    }
    if let Some(Item::Key { th: true, .. }) = items.get(i) {
        let rest = r.rest().as_bytes();
        if rest.len() >= 2 && rest[..2].iter().all(u8::is_ascii_alphabetic) {
            r.pos += 2;
        }
    }
    Ok(())
}

/// `adjust_partial_year_to_2020`.
fn toward_2020(y: i64) -> i64 {
    match y {
        ..=69 => y + 2000,
        70..=99 => y + 1900,
        100..=519 => y + 2000,
        520..=999 => y + 1000,
        _ => y,
    }
}

/// `DCH_from_char`: walks the template over the input.
fn from_char(text: &str, fmt: &str) -> Result<Fields> {
    let items = items(fmt);
    let mut r = Reader { s: text, pos: 0 };
    let mut f = Fields::default();
    let mut fx = false;
    let mut extra_skip: i64 = 0;
    for (i, item) in items.iter().enumerate() {
        if r.pos >= text.len() {
            break;
        }
        let is_fx = matches!(item, Item::Key { key, .. } if key.eq_ignore_ascii_case("FX"));
        if !fx && !is_fx && (matches!(item, Item::Key { .. }) || i == 0) {
            extra_skip += r.skip_spaces() as i64;
        }
        match item {
            Item::Key { .. } if is_fx => fx = true,
            Item::Key { .. } => {
                read_key(&mut r, &mut f, &items, i)?;
                // Spaces after a field are dropped, and counted.
                extra_skip = r.skip_spaces() as i64;
            }
            Item::Space | Item::Separator => {
                let b = r.rest().as_bytes()[0];
                if !fx {
                    extra_skip -= 1;
                    if b.is_ascii_whitespace() || is_separator(b) {
                        r.pos += 1;
                        extra_skip += 1;
                    }
                } else {
                    r.pos += r.rest().chars().next().map_or(1, char::len_utf8);
                }
            }
            Item::Char => {
                if !fx && extra_skip > 0 {
                    extra_skip -= 1;
                } else {
                    r.pos += r.rest().chars().next().map_or(1, char::len_utf8);
                }
            }
        }
    }
    Ok(f)
}

fn out_of_range(text: &str) -> Error {
    err!(
        DatetimeFieldOverflow,
        "date/time field value out of range: \"{text}\""
    )
}

/// `to_date(text, template)`: days since 2000-01-01.
pub fn to_date(text: &str, fmt: &str) -> Result<i32> {
    let f = from_char(text, fmt)?;
    date_of(text, &f)
}

/// `to_timestamp(text, template)`: a timestamptz, the date and time read
/// by the template in the zone `TZH:TZM` give, else the session's
/// (PostgreSQL's `do_to_timestamp`).
pub fn to_timestamp(text: &str, fmt: &str) -> Result<i64> {
    let f = from_char(text, fmt)?;
    let date = date_of(text, &f)?;
    let mut hour = f.hour.unwrap_or(0);
    if f.clock12 {
        if !(1..=12).contains(&hour) {
            return Err(err!(
                InvalidDatetimeFormat,
                "hour \"{hour}\" is invalid for the 12-hour clock"
            )
            .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
        }
        match f.pm {
            Some(true) if hour < 12 => hour += 12,
            Some(false) | None if hour == 12 => hour = 0,
            _ => {}
        }
    }
    let (mut min, mut sec) = (f.min.unwrap_or(0), f.sec.unwrap_or(0));
    if let Some(ssss) = f.ssss {
        hour = ssss / 3600;
        min = ssss / 60 % 60;
        sec = ssss % 60;
    }
    let us = f.us.unwrap_or(0);
    if !(0..24).contains(&hour)
        || !(0..60).contains(&min)
        || !(0..60).contains(&sec)
        || !(0..super::USECS_PER_SEC).contains(&us)
    {
        return Err(out_of_range(text));
    }
    let time = ((hour * 60 + min) * 60 + sec) * super::USECS_PER_SEC + us;
    let local = i64::from(date) * super::USECS_PER_DAY + time;
    let ts = match f.tz {
        Some(east) => local - east * super::USECS_PER_SEC,
        None => super::zone::from_local(local),
    };
    if !(super::MIN_TIMESTAMP..super::END_TIMESTAMP).contains(&ts) {
        return Err(err!(DatetimeFieldOverflow, "timestamp out of range"));
    }
    super::round_timestamp(ts, f.ff)
}

/// The date the fields name (`to_date`'s result).
fn date_of(text: &str, f: &Fields) -> Result<i32> {
    let (mut year, mut mon, mut mday) = (0i64, 1i64, 1i64);
    if let Some(j) = f.j {
        let (y, m, d) = j2date(j);
        (year, mon, mday) = (y, m as i64, d as i64);
    }
    if let Some(y) = f.year {
        year = match f.cc {
            Some(cc) if f.year_digits <= 2 => {
                let cc = if f.bc { -cc } else { cc };
                let yy = y % 100;
                if yy == 0 {
                    cc * 100 + if cc >= 0 { 0 } else { 1 }
                } else if cc >= 0 {
                    yy + (cc - 1) * 100
                } else {
                    (cc + 1) * 100 - yy + 1
                }
            }
            _ => {
                let y = if f.bc { -y } else { y };
                if y < 0 {
                    y + 1
                } else {
                    y
                }
            }
        };
    } else if let Some(cc) = f.cc {
        let cc = if f.bc { -cc } else { cc };
        year = if cc >= 0 {
            (cc - 1) * 100 + 1
        } else {
            cc * 100 + 1
        };
    }
    if f.iso == Some(true) && (f.ww.is_some() || f.ddd.is_some()) {
        let jd = match f.ww {
            Some(ww) => {
                let start = isoweek2j(year, ww);
                match f.id {
                    Some(d) if d > 1 => start + d - 2,
                    Some(_) => start + 6,
                    None => start,
                }
            }
            None => isoweek2j(year, 1) - 1 + f.ddd.unwrap_or(1),
        };
        let (y, m, d) = j2date(jd);
        return make_date(y, m, d)
            .ok_or_else(|| err!(DatetimeFieldOverflow, "date out of range: \"{text}\""));
    }
    let ddd = f.ddd.or(f.ww.map(|ww| (ww - 1) * 7 + 1));
    if let Some(w) = f.w {
        mday = (w - 1) * 7 + 1;
    }
    if let Some(m) = f.mm {
        mon = m;
    }
    if let Some(d) = f.dd {
        mday = d;
    }
    if let Some(ddd) = ddd {
        if f.mm.is_none() && f.dd.is_none() {
            let days = if super::is_leap(year) { 366 } else { 365 };
            if !(1..=days).contains(&ddd) {
                return Err(out_of_range(text));
            }
            let (y, m, d) = j2date(date2j(year, 1, 1) + ddd - 1);
            (year, mon, mday) = (y, m as i64, d as i64);
        }
    }
    if !(1..=12).contains(&mon) || mday < 1 || mday > days_in_month(year, mon as u32) as i64 {
        return Err(out_of_range(text));
    }
    make_date(year, mon as u32, mday as u32)
        .ok_or_else(|| err!(DatetimeFieldOverflow, "date out of range: \"{text}\""))
}

#[cfg(test)]
mod tests {
    //! Expected dates and messages come from PostgreSQL 15 on this machine.
    use super::*;

    fn show(text: &str, fmt: &str) -> String {
        let mut s = String::new();
        super::super::write_date(to_date(text, fmt).unwrap(), &mut s);
        s
    }

    #[test]
    fn dates_read_as_postgres_reads_them() {
        assert_eq!(show("20100309", "YYYYMMDD"), "2010-03-09");
        assert_eq!(show("1 4 1902", "Q MM YYYY"), "1902-04-01");
        assert_eq!(show("3 4 21 01", "W MM CC YY"), "2001-04-15");
        assert_eq!(show("2458872", "J"), "2020-01-23");
        assert_eq!(show("44-02-01 BC", "YYYY-MM-DD BC"), "0044-02-01 BC");
        assert_eq!(show("-44-02-01", "YYYY-MM-DD"), "0044-02-01 BC");
        assert_eq!(show("2011 12  18", "YYYY MM DD"), "2011-12-18");
        assert_eq!(show("2011x 12x 18", "YYYYxMMxDD"), "2011-12-18");
        assert_eq!(show("0000-02-01", "YYYY-MM-DD"), "0001-02-01 BC");
        assert_eq!(show("05 february 10", "DD month YY"), "2010-02-05");
        assert_eq!(show("", "YYYY"), "0001-01-01 BC");
        assert_eq!(show("69", "YY"), "2069-01-01");
        assert_eq!(show("2016 366", "YYYY DDD"), "2016-12-31");
    }

    #[test]
    fn bad_input_fails_as_postgres() {
        let e = to_date("2011 x12 x18", "YYYYxMMxDD").unwrap_err();
        assert_eq!(e.message, "invalid value \"x1\" for \"MM\"");
        assert_eq!(e.code.code(), "22007");
        let e = to_date("2016-02-30", "YYYY-MM-DD").unwrap_err();
        assert_eq!(
            e.message,
            "date/time field value out of range: \"2016-02-30\""
        );
        assert_eq!(e.code.code(), "22008");
        assert!(to_date("2015 366", "YYYY DDD").is_err());
        let e = to_date("1234567890ab 2010", "MONTH YYYY").unwrap_err();
        assert_eq!(e.message, "invalid value \"1234567890ab\" for \"MONTH\"");
    }
}
