//! The catalog file's format: line-oriented text, so that a person can read
//! it, closed by an `end` line carrying the CRC-32C (8 hex digits) of every
//! byte before that line: a torn write or a changed byte is detected, and
//! the file is refused with an error naming it, never read as another
//! schema. The file is replaced atomically (temporary file, fsync, rename,
//! directory fsync).
//!
//! ```text
//! heapdb-catalog 2
//! next_oid 16390
//! table <oid> <relfilenode> <xmin> <xmax> <name> [<temporary namespace>]
//! column <name> <type> <not_null 0|1> <default or -> [<domain>]
//! index <oid> <relfilenode> <flags> <name> <n> <col>:<desc 0|1>:<nulls_first 0|1> ... <m> <include col> ... [<predicate>]
//! check <flags> <name> <condition>   (flags: 1 validated, 2 NO INHERIT)
//! stats <reltuples> <relpages>
//! colstats <position> <null_frac> <avg_width> <n_distinct> <n_mcv> <n_hist> then mcv value/freq pairs and bounds [<correlation>]
//! view <oid> <xmin> <xmax> <name> <query text> <n> <dependency oid> ...
//! viewopt <local|cascaded>   (only for a view WITH CHECK OPTION)
//! viewcol <name> <type>
//! function <oid> <xmin> <xmax> <name> <language> <i|s|v> <strict> <result type> <body> <n> <arg name> <arg type> ... [<result domain> <arg domain> ...]
//! domain <oid> <xmin> <xmax> <name> <base type> <not_null 0|1> <default or -> <n> <check name> <check expr> ...
//! fkey <oid> <xmin> <xmax> <name> <table> <ref table> <ref index> <flags> <on delete> <on update> <n> <col> ... <ref col> ...
//! operator <oid> <xmin> <xmax> <name> <left type or -> <right type> <left domain or -> <right domain or -> <function> <result type>
//! basetype <oid> <xmin> <xmax> <name> <storage type or -> <input or -> <output or ->
//! ifunction <oid> <xmin> <xmax> <name> <result type> <prosrc> <n> <arg type> ...
//! cast <oid> <xmin> <xmax> <source> <target> <b|i|f> <e|a|i> [<function>]
//! comment <text>   (the description of the object of the line before)
//! concomment <n> <text>   (of its constraint; see `comment`)
//! end <crc32c>
//! ```
//!
//! Names, defaults and statistics values are written as `=` followed by the
//! text with `%`, whitespace and control bytes escaped as `%XX`, so every
//! field is one whitespace-free word. Index flags: 1 unique, 2 primary key,
//! 4 made by a constraint. A partial index's line ends with its predicate's
//! source text (escaped), bound again over the table's columns when the
//! file is read (a line without it is a full index). Types are written as short tags
//! (`int4`, `varchar:20`, `numeric:10:2`, `bpchar:1`).

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::index::{IndexPredicate, PredicateBinder};
use super::{ColumnDef, ColumnStats, IndexColumn, IndexDef, State, TableDef, TableStats, Version};
use crate::err;
use crate::error::Result;
use crate::types::DataType;

const MAGIC: &str = "heapdb-catalog 2";

/// Escapes `s` into one whitespace-free word, prefixed with `=` so that
/// the empty string has a form and `-` ("none") is never a value.
pub(super) fn esc(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 1);
    out.push(b'=');
    for b in s.bytes() {
        if b == b'%' || b <= b' ' || b == 0x7f {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        } else {
            out.push(b);
        }
    }
    // Only ASCII bytes are rewritten, so multi-byte characters stay whole.
    String::from_utf8(out).expect("escaping keeps UTF-8 valid")
}

pub(super) fn unesc(s: &str) -> Result<String> {
    let s = s.strip_prefix('=').ok_or_else(|| corrupt("bad word"))?;
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| corrupt("bad escape"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| corrupt("bad UTF-8"))
}

pub(super) fn corrupt(what: &str) -> crate::error::Error {
    err!(DataCorrupted, "catalog file is corrupt: {what}")
}

/// The tag a type is stored as.
pub fn type_tag(ty: &DataType) -> String {
    match ty {
        DataType::Bool => "bool".into(),
        DataType::Int2 => "int2".into(),
        DataType::Int4 => "int4".into(),
        DataType::Int8 => "int8".into(),
        DataType::Float4 => "float4".into(),
        DataType::Float8 => "float8".into(),
        DataType::Numeric(None) => "numeric".into(),
        DataType::Numeric(Some((p, s))) => format!("numeric:{p}:{s}"),
        DataType::Text => "text".into(),
        DataType::Name => "name".into(),
        DataType::Varchar(None) => "varchar".into(),
        DataType::Varchar(Some(n)) => format!("varchar:{n}"),
        DataType::Char(n) => format!("bpchar:{n}"),
        DataType::Date => "date".into(),
        DataType::Timestamp(None) => "timestamp".into(),
        DataType::Timestamp(Some(p)) => format!("timestamp:{p}"),
        DataType::TimestampTz(None) => "timestamptz".into(),
        DataType::TimestampTz(Some(p)) => format!("timestamptz:{p}"),
        DataType::Interval => "interval".into(),
        DataType::Unknown => "unknown".into(),
        DataType::Bytea => "bytea".into(),
        DataType::Array(elem) => format!("_{}", type_tag(elem)),
        DataType::Time(None) => "time".into(),
        DataType::Time(Some(p)) => format!("time:{p}"),
        DataType::TimeTz(None) => "timetz".into(),
        DataType::TimeTz(Some(p)) => format!("timetz:{p}"),
        DataType::Json => "json".into(),
        DataType::Point => "point".into(),
        DataType::Jsonb => "jsonb".into(),
    }
}

/// The type a tag names.
pub fn parse_type_tag(tag: &str) -> Result<DataType> {
    if let Some(elem) = tag.strip_prefix('_') {
        return Ok(DataType::array_of(parse_type_tag(elem)?));
    }
    let mut parts = tag.split(':');
    let name = parts.next().unwrap_or("");
    let mut num = || -> Result<i64> {
        parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| corrupt("bad type modifier"))
    };
    Ok(match name {
        "bool" => DataType::Bool,
        "int2" => DataType::Int2,
        "int4" => DataType::Int4,
        "int8" => DataType::Int8,
        "float4" => DataType::Float4,
        "float8" => DataType::Float8,
        "numeric" if tag == "numeric" => DataType::Numeric(None),
        "numeric" => DataType::Numeric(Some((num()? as u16, num()? as i16))),
        "text" => DataType::Text,
        "name" => DataType::Name,
        "varchar" if tag == "varchar" => DataType::Varchar(None),
        "varchar" => DataType::Varchar(Some(num()? as u32)),
        "bpchar" => DataType::Char(num()? as u32),
        "date" => DataType::Date,
        "timestamp" if tag == "timestamp" => DataType::Timestamp(None),
        "timestamp" => DataType::Timestamp(Some(num()? as u8)),
        "timestamptz" if tag == "timestamptz" => DataType::TimestampTz(None),
        "timestamptz" => DataType::TimestampTz(Some(num()? as u8)),
        "interval" => DataType::Interval,
        "unknown" => DataType::Unknown,
        "bytea" => DataType::Bytea,
        "json" => DataType::Json,
        "point" => DataType::Point,
        "jsonb" => DataType::Jsonb,
        "time" if tag == "time" => DataType::Time(None),
        "time" => DataType::Time(Some(num()? as u8)),
        "timetz" if tag == "timetz" => DataType::TimeTz(None),
        "timetz" => DataType::TimeTz(Some(num()? as u8)),
        _ => return Err(corrupt("unknown type")),
    })
}

fn write_index(text: &mut String, ix: &IndexDef) {
    let flags = ix.unique as u8 | (ix.primary as u8) << 1 | (ix.constraint as u8) << 2;
    text.push_str(&format!(
        "index {} {} {flags} {} {}",
        ix.oid,
        ix.relfilenode,
        esc(&ix.name),
        ix.columns.len()
    ));
    for c in &ix.columns {
        text.push_str(&format!(
            " {}:{}:{}",
            c.column, c.desc as u8, c.nulls_first as u8
        ));
    }
    text.push_str(&format!(" {}", ix.include.len()));
    for c in &ix.include {
        text.push_str(&format!(" {c}"));
    }
    if let Some(p) = &ix.predicate {
        text.push_str(&format!(" {}", esc(&p.text)));
    }
    text.push('\n');
    super::comment::write(text, &ix.comment);
    super::comment::write_constraint(text, 0, &ix.constraint_comment);
}

/// Reads an `index` line's fields (after the word `index`) of `table`
/// (its columns read), binding a predicate with `bind`.
fn parse_index(f: &[&str], table: &TableDef, bind: &PredicateBinder) -> Result<IndexDef> {
    let ncolumns = table.columns.len();
    let bad = || corrupt("bad index line");
    let num = |i: usize| -> Result<usize> { f.get(i).and_then(|s| s.parse().ok()).ok_or_else(bad) };
    let col = |c: usize| if c < ncolumns { Ok(c) } else { Err(bad()) };
    let flags = num(2)?;
    let name = unesc(f.get(3).ok_or_else(bad)?)?;
    let n = num(4)?;
    let mut columns = Vec::with_capacity(n);
    for i in 0..n {
        let parts: Vec<&str> = f.get(5 + i).ok_or_else(bad)?.split(':').collect();
        let [c, d, nf] = parts[..] else {
            return Err(bad());
        };
        columns.push(IndexColumn {
            column: col(c.parse().map_err(|_| bad())?)?,
            desc: d == "1",
            nulls_first: nf == "1",
        });
    }
    let m = num(5 + n)?;
    let include = (0..m)
        .map(|i| col(num(6 + n + i)?))
        .collect::<Result<Vec<_>>>()?;
    if columns.is_empty() || !(6 + n + m..=7 + n + m).contains(&f.len()) {
        return Err(bad());
    }
    let predicate = match f.get(6 + n + m) {
        Some(w) => {
            let text = unesc(w)?;
            let expr = bind(table, &text)
                .map_err(|e| corrupt(&format!("bad index predicate \"{text}\": {}", e.message)))?;
            Some(Arc::new(IndexPredicate { text, expr }))
        }
        None => None,
    };
    Ok(IndexDef {
        comment: None,
        constraint_comment: None,
        oid: num(0)? as u32,
        relfilenode: num(1)? as u32,
        name,
        columns,
        include,
        unique: flags & 1 != 0,
        primary: flags & 2 != 0,
        constraint: flags & 4 != 0,
        predicate,
    })
}

pub(super) fn write(path: &Path, st: &State) -> Result<()> {
    let mut text = String::new();
    text.push_str(MAGIC);
    text.push('\n');
    text.push_str(&format!("next_oid {}\n", st.next_oid));
    for v in &st.versions {
        let d = &v.def;
        text.push_str(&format!(
            "table {} {} {} {} {}",
            d.oid,
            d.relfilenode,
            v.xmin,
            v.xmax,
            esc(&d.name)
        ));
        if v.temp_ns != 0 {
            text.push_str(&format!(" {}", v.temp_ns));
        }
        text.push('\n');
        super::comment::write(&mut text, &d.comment);
        if !d.options.is_empty() {
            text.push_str("options");
            for o in &d.options {
                text.push(' ');
                text.push_str(&esc(o));
            }
            text.push('\n');
        }
        if !d.parents.is_empty() || d.has_subclass {
            text.push_str(&format!("inherits {}", d.has_subclass as u8));
            for p in &d.parents {
                text.push_str(&format!(" {p}"));
            }
            text.push('\n');
        }
        for c in &d.columns {
            text.push_str(&format!(
                "column {} {} {} {}",
                esc(&c.name),
                type_tag(&c.ty),
                c.not_null as u8,
                c.default.as_deref().map(esc).unwrap_or_else(|| "-".into())
            ));
            if let Some(d) = &c.domain {
                text.push_str(&format!(" {}", esc(d)));
            }
            text.push('\n');
            super::comment::write(&mut text, &c.comment);
        }
        for ix in &d.indexes {
            write_index(&mut text, ix);
        }
        for c in &d.checks {
            super::check::write(&mut text, c);
            super::comment::write(&mut text, &c.comment);
        }
        if let Some(s) = &d.stats {
            text.push_str(&format!("stats {} {}\n", s.reltuples, s.relpages));
            for (i, cs) in s.columns.iter().enumerate() {
                let Some(cs) = cs else { continue };
                text.push_str(&format!(
                    "colstats {i} {} {} {} {} {}",
                    cs.null_frac,
                    cs.avg_width,
                    cs.n_distinct,
                    cs.mcv.len(),
                    cs.histogram.len()
                ));
                for (val, f) in &cs.mcv {
                    text.push_str(&format!(" {} {f}", esc(val)));
                }
                for b in &cs.histogram {
                    text.push_str(&format!(" {}", esc(b)));
                }
                if let Some(c) = cs.correlation {
                    text.push_str(&format!(" {c}"));
                }
                text.push('\n');
            }
        }
    }
    super::view::write(&mut text, &st.views);
    super::function::write(&mut text, &st.functions);
    super::types::write(&mut text, &st.types);
    super::fkey::write(&mut text, &st.fkeys);
    super::operator::write(&mut text, &st.operators);
    super::basetype::write(&mut text, &st.base_types, &st.internal_funcs);
    super::cast::write(&mut text, &st.casts);
    super::sequence::write(&mut text, &st.sequences);
    let crc = crc32c::crc32c(text.as_bytes());
    text.push_str(&format!("end {crc:08x}\n"));
    let tmp = path.with_extension("tmp");
    let io = |what: &str, p: &Path, e: std::io::Error| {
        crate::error::Error::new(
            crate::storage::reserve::code_of(&e),
            format!(
                "could not {what} file \"{}\": {}",
                p.display(),
                crate::storage::reserve::os_text(&e)
            ),
        )
    };
    {
        let mut f = fs::File::create(&tmp).map_err(|e| io("create", &tmp, e))?;
        f.write_all(text.as_bytes())
            .map_err(|e| io("write", &tmp, e))?;
        f.sync_all().map_err(|e| io("fsync", &tmp, e))?;
    }
    fs::rename(&tmp, path).map_err(|e| io("rename", &tmp, e))?;
    if let Some(dir) = path.parent() {
        fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io("fsync", dir, e))?;
    }
    Ok(())
}

/// Reads the catalog file, binding partial index predicates with `bind`;
/// every failure names it.
pub(super) fn read(path: &Path, bind: &PredicateBinder) -> Result<State> {
    let bytes = fs::read(path).map_err(|e| {
        crate::error::Error::new(
            crate::storage::reserve::code_of(&e),
            format!("could not open file \"{}\": {e}", path.display()),
        )
    })?;
    parse(&bytes, bind).map_err(|e| {
        crate::error::Error::new(
            e.code,
            e.message.replacen(
                "catalog file",
                &format!("catalog file \"{}\"", path.display()),
                1,
            ),
        )
    })
}

/// Checks the closing CRC and returns the text before the `end` line.
fn checked_text(bytes: &[u8]) -> Result<&str> {
    let body_end = bytes
        .strip_suffix(b"\n")
        .and_then(|b| b.iter().rposition(|&c| c == b'\n'))
        .map(|i| i + 1)
        .ok_or_else(|| corrupt("truncated"))?;
    let last = std::str::from_utf8(&bytes[body_end..]).map_err(|_| corrupt("truncated"))?;
    let want = last
        .trim_end()
        .strip_prefix("end ")
        .filter(|h| h.len() == 8 && h.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')))
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or_else(|| corrupt("truncated"))?;
    if crc32c::crc32c(&bytes[..body_end]) != want {
        return Err(err!(DataCorrupted, "incorrect checksum in catalog file"));
    }
    std::str::from_utf8(&bytes[..body_end]).map_err(|_| corrupt("bad UTF-8"))
}

/// A `column` line's fields: name, type tag, NOT NULL, default, domain.
fn parse_column(f: &[&str]) -> Result<ColumnDef> {
    if f.len() != 5 && f.len() != 6 {
        return Err(corrupt("short column line"));
    }
    Ok(ColumnDef {
        comment: None,
        name: unesc(f[1])?,
        ty: parse_type_tag(f[2])?,
        not_null: f[3] == "1",
        default: if f[4] == "-" {
            None
        } else {
            Some(unesc(f[4])?)
        },
        domain: f.get(5).map(|d| unesc(d)).transpose()?,
    })
}

/// A `colstats` line: one column's statistics, into `t`'s stats.
fn parse_colstats(f: &[&str], t: &mut TableDef) -> Result<()> {
    let num = |i: usize| -> Result<f64> {
        f.get(i)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| corrupt("bad number"))
    };
    let pos = num(1)? as usize;
    let (n_mcv, n_hist) = (num(5)? as usize, num(6)? as usize);
    let mut cs = ColumnStats {
        null_frac: num(2)?,
        avg_width: num(3)?,
        n_distinct: num(4)?,
        ..ColumnStats::default()
    };
    let mut i = 7;
    for _ in 0..n_mcv {
        let v = unesc(f.get(i).ok_or_else(|| corrupt("short mcv"))?)?;
        cs.mcv.push((v, num(i + 1)?));
        i += 2;
    }
    for _ in 0..n_hist {
        cs.histogram
            .push(unesc(f.get(i).ok_or_else(|| corrupt("short histogram"))?)?);
        i += 1;
    }
    if f.get(i).is_some() {
        cs.correlation = Some(num(i)?);
    }
    let stats = t
        .stats
        .as_mut()
        .ok_or_else(|| corrupt("colstats before stats"))?;
    if pos >= stats.columns.len() {
        return Err(corrupt("colstats position"));
    }
    stats.columns[pos] = Some(cs);
    Ok(())
}

fn parse(bytes: &[u8], bind: &PredicateBinder) -> Result<State> {
    if !bytes.starts_with(MAGIC.as_bytes()) {
        return Err(corrupt("bad header"));
    }
    let text = checked_text(bytes)?;
    let mut lines = text.lines();
    if lines.next() != Some(MAGIC) {
        return Err(corrupt("bad header"));
    }
    let mut st = State::default();
    let mut tables: Vec<(u32, u32, TableDef)> = Vec::new();
    let mut temp_ns: Vec<u32> = Vec::new();
    let mut views: Vec<super::view::Pending> = Vec::new();
    // The first word of the last line that was not a description: the
    // object a `comment` line describes.
    let mut last = "";
    for line in lines {
        let f: Vec<&str> = line.split(' ').collect();
        if let "comment" | "concomment" = f[0] {
            let r = super::comment::Reading {
                tables: &mut tables,
                views: &mut views,
                st: &mut st,
            };
            super::comment::parse(&f, last, r)?;
            continue;
        }
        last = f[0];
        let num = |i: usize| -> Result<f64> {
            f.get(i)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| corrupt("bad number"))
        };
        match f[0] {
            "next_oid" => st.next_oid = num(1)? as u32,
            "table" => {
                let name = unesc(f.get(5).ok_or_else(|| corrupt("short table line"))?)?;
                temp_ns.push(if f.len() > 6 { num(6)? as u32 } else { 0 });
                tables.push((
                    num(3)? as u32,
                    num(4)? as u32,
                    TableDef {
                        comment: None,
                        oid: num(1)? as u32,
                        name,
                        relfilenode: num(2)? as u32,
                        columns: Vec::new(),
                        stats: None,
                        indexes: Vec::new(),
                        checks: Vec::new(),
                        parents: Vec::new(),
                        has_subclass: false,
                        options: Vec::new(),
                    },
                ));
            }
            "options" => {
                let (_, _, t) = tables
                    .last_mut()
                    .ok_or_else(|| corrupt("options before table"))?;
                for o in &f[1..] {
                    t.options.push(unesc(o)?);
                }
                super::reloptions::validate(&t.options)
                    .map_err(|e| corrupt(&format!("bad table options: {}", e.message)))?;
            }
            "inherits" => {
                let (_, _, t) = tables
                    .last_mut()
                    .ok_or_else(|| corrupt("inherits before table"))?;
                t.has_subclass = num(1)? != 0.0;
                for i in 2..f.len() {
                    t.parents.push(num(i)? as u32);
                }
            }
            "column" => {
                let (_, _, t) = tables
                    .last_mut()
                    .ok_or_else(|| corrupt("column before table"))?;
                t.columns.push(parse_column(&f)?);
            }
            "index" => {
                let (_, _, t) = tables
                    .last_mut()
                    .ok_or_else(|| corrupt("index before table"))?;
                let ix = parse_index(&f[1..], t, bind)?;
                t.indexes.push(ix);
            }
            "check" => {
                let (_, _, t) = tables
                    .last_mut()
                    .ok_or_else(|| corrupt("check before table"))?;
                let c = super::check::parse(&f, t, bind)?;
                t.checks.push(c);
            }
            "stats" => {
                let (_, _, t) = tables
                    .last_mut()
                    .ok_or_else(|| corrupt("stats before table"))?;
                t.stats = Some(TableStats {
                    reltuples: num(1)?,
                    relpages: num(2)? as u32,
                    columns: vec![None; t.columns.len()],
                });
            }
            "colstats" => {
                let (_, _, t) = tables
                    .last_mut()
                    .ok_or_else(|| corrupt("colstats before table"))?;
                parse_colstats(&f, t)?;
            }
            "view" => views.push(super::view::parse_view(&f)?),
            "viewcol" => super::view::parse_column(&f, views.last_mut())?,
            "viewopt" => super::view::parse_option(&f, views.last_mut())?,
            "function" => st.functions.push(super::function::parse(&f)?),
            "domain" => st.types.push(super::types::parse(&f)?),
            "fkey" => st.fkeys.push(super::fkey::parse(&f)?),
            "operator" => st.operators.push(super::operator::parse(&f)?),
            "basetype" => st.base_types.push(super::basetype::parse_type(&f)?),
            "ifunction" => st.internal_funcs.push(super::basetype::parse_function(&f)?),
            "cast" => st.casts.push(super::cast::parse(&f)?),
            "sequence" => st.sequences.push(super::sequence::parse(&f)?),
            _ => return Err(corrupt("unknown line")),
        }
    }
    st.versions = tables
        .into_iter()
        .zip(temp_ns)
        .map(|((xmin, xmax, def), temp_ns)| Version {
            xmin,
            xmax,
            def: Arc::new(def),
            temp_ns,
        })
        .collect();
    st.views = super::view::finish(views)?;
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> State {
        State {
            versions: vec![Version {
                xmin: 5,
                xmax: 0,
                def: Arc::new(TableDef {
                    comment: None,
                    oid: 16384,
                    name: "t".into(),
                    relfilenode: 16384,
                    columns: vec![ColumnDef {
                        comment: None,
                        name: "a".into(),
                        ty: DataType::Int4,
                        not_null: false,
                        default: None,
                        domain: None,
                    }],
                    stats: None,
                    indexes: vec![IndexDef {
                        comment: None,
                        constraint_comment: None,
                        oid: 16385,
                        name: "t_pkey".into(),
                        relfilenode: 16385,
                        columns: vec![IndexColumn {
                            column: 0,
                            desc: true,
                            nulls_first: false,
                        }],
                        include: vec![0],
                        unique: true,
                        primary: true,
                        constraint: true,
                        predicate: None,
                    }],
                    checks: Vec::new(),
                    parents: Vec::new(),
                    has_subclass: false,
                    options: Vec::new(),
                }),
                // A temporary table's namespace survives the file (its
                // open after a crash must find it to drop it).
                temp_ns: 3,
            }],
            next_oid: 16385,
            views: Vec::new(),
            functions: Vec::new(),
            fkeys: Vec::new(),
            types: Vec::new(),
            operators: Vec::new(),
            base_types: Vec::new(),
            internal_funcs: Vec::new(),
            casts: Vec::new(),
            sequences: Vec::new(),
        }
    }

    /// Every changed byte and every cut is refused, naming the file.
    #[test]
    fn damage_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog");
        write(&path, &sample()).unwrap();
        let good = fs::read(&path).unwrap();
        let st = read(&path, &super::super::index::no_binder).unwrap();
        assert_eq!(st.versions[0].def.name, "t");
        assert_eq!(st.versions[0].def, sample().versions[0].def);
        assert_eq!(st.versions[0].temp_ns, 3);
        for i in 0..good.len() {
            for bit in [0x01u8, 0x20] {
                let mut b = good.clone();
                b[i] ^= bit;
                fs::write(&path, &b).unwrap();
                let e = read(&path, &super::super::index::no_binder)
                    .expect_err(&format!("flip {bit:#x} at byte {i} accepted"));
                assert_eq!(e.code, crate::SqlState::DataCorrupted);
                assert!(
                    e.message.contains(&path.display().to_string()),
                    "{}",
                    e.message
                );
            }
        }
        for cut in [1, 5, good.len() / 2] {
            fs::write(&path, &good[..good.len() - cut]).unwrap();
            assert!(
                read(&path, &super::super::index::no_binder).is_err(),
                "cut {cut}"
            );
        }
        fs::remove_file(&path).unwrap();
        let e = read(&path, &super::super::index::no_binder).unwrap_err();
        assert!(
            e.message.starts_with("could not open file"),
            "{}",
            e.message
        );
    }

    /// A partial index's predicate text survives the file, is bound by
    /// the opener's binder, and a file whose predicate does not bind is
    /// refused, naming the file.
    #[test]
    fn partial_index_predicates_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog");
        let mut st = sample();
        let mut def = (*st.versions[0].def).clone();
        def.indexes[0].predicate = Some(Arc::new(IndexPredicate {
            text: "a > 10 AND b = 'x y'".into(),
            expr: crate::expr::Expr::constant(crate::types::Value::Bool(true), DataType::Bool),
        }));
        st.versions[0].def = Arc::new(def.clone());
        write(&path, &st).unwrap();
        static SEEN: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
        let bind = |t: &TableDef, text: &str| {
            SEEN.lock()
                .unwrap()
                .push((t.name.clone(), text.to_string()));
            Ok(crate::expr::Expr::constant(
                crate::types::Value::Bool(true),
                DataType::Bool,
            ))
        };
        let back = read(&path, &bind).unwrap();
        assert_eq!(*back.versions[0].def, def);
        assert_eq!(
            *SEEN.lock().unwrap(),
            [("t".to_string(), "a > 10 AND b = 'x y'".to_string())]
        );
        let e = read(&path, &super::super::index::no_binder).unwrap_err();
        assert_eq!(e.code, crate::SqlState::DataCorrupted);
        assert!(e.message.contains("bad index predicate"), "{}", e.message);
        assert!(
            e.message.contains(&path.display().to_string()),
            "{}",
            e.message
        );
    }

    #[test]
    fn escaping_round_trips() {
        for s in [
            "plain",
            "with space",
            "per%cent",
            "-",
            "",
            "tab\tnew\nline",
            "ünïcode ✓",
        ] {
            let e = esc(s);
            assert!(!e.contains(' ') && !e.contains('\n'), "{e}");
            assert_eq!(unesc(&e).unwrap(), s);
        }
    }

    #[test]
    fn type_tags_round_trip() {
        for ty in [
            DataType::Bool,
            DataType::Int2,
            DataType::Int4,
            DataType::Int8,
            DataType::Float4,
            DataType::Float8,
            DataType::Numeric(None),
            DataType::Numeric(Some((10, 2))),
            DataType::Text,
            DataType::Varchar(None),
            DataType::Varchar(Some(20)),
            DataType::Char(1),
            DataType::Date,
            DataType::Timestamp(None),
            DataType::Interval,
        ] {
            assert_eq!(parse_type_tag(&type_tag(&ty)).unwrap(), ty);
        }
        assert!(parse_type_tag("blob").is_err());
    }
}
