//! The fast path against the general path: for every record, either the
//! fast path declines (and leaves the batch as it was) or both give the
//! same tuple bytes.

use super::*;
use crate::access::heap::tuple::Attr;
use crate::catalog::{ColumnDef, TableDef};
use crate::copy::CopyOptions;
use heapdb_grammar::ast::CopyOption;

fn table(types: &[DataType]) -> TableDef {
    TableDef {
        comment: None,
        oid: 1,
        name: "t".into(),
        relfilenode: 1,
        columns: types
            .iter()
            .enumerate()
            .map(|(i, ty)| ColumnDef {
                comment: None,
                name: format!("c{i}"),
                ty: *ty,
                not_null: false,
                default: None,
                domain: None,
            })
            .collect(),
        stats: None,
        indexes: Vec::new(),
        checks: Vec::new(),
        parents: Vec::new(),
        has_subclass: false,
        options: Vec::new(),
    }
}

fn desc(t: &TableDef) -> TupleDesc {
    TupleDesc::new(
        t.columns
            .iter()
            .map(|c| Attr {
                len: c.ty.attlen(),
                align: c.ty.attalign() as u8,
            })
            .collect(),
    )
    .unwrap()
}

/// Runs `records` through both paths; returns how many the fast path took.
fn check(types: &[DataType], options: &[CopyOption], records: &[&[u8]]) -> usize {
    let t = table(types);
    let d = desc(&t);
    let opts = CopyOptions::from_ast(options, true).unwrap();
    let targets: Vec<usize> = (0..types.len()).collect();
    let sources: Vec<Source> = (0..types.len()).map(Source::Field).collect();
    let not_null = vec![false; types.len()];
    let parser = Parser {
        table: &t,
        opts: &opts,
        targets: &targets,
        not_null: &not_null,
        sources: &sources,
        desc: &d,
        now: 0,
        domains: &[],
    };
    let mut fast = FastForm::new(&t, &opts, &targets, &d, 0).expect("applies");
    let mut scratch = Scratch::default();
    let mut taken = 0;
    for rec in records {
        // Something before, to check the fast path appends and aligns
        // relative to the tuple's start.
        let mut got = vec![7u8; 3];
        let general = {
            let mut out = vec![7u8; 3];
            parser
                .general(rec, 1, &mut scratch, &mut out)
                .map(|n| (n, out))
        };
        match fast.form(rec, &mut got) {
            Some(n) => {
                taken += 1;
                let (gn, gout) = general.unwrap_or_else(|e| {
                    panic!(
                        "fast path took {:?}, the general path fails: {}",
                        String::from_utf8_lossy(rec),
                        e.message
                    )
                });
                assert_eq!(n, gn, "{:?}", String::from_utf8_lossy(rec));
                assert_eq!(got, gout, "{:?}", String::from_utf8_lossy(rec));
            }
            None => assert_eq!(got, vec![7u8; 3], "declined without a trace"),
        }
    }
    taken
}

#[test]
fn accounts_rows() {
    let types = [
        DataType::Int4,
        DataType::Int4,
        DataType::Int4,
        DataType::Char(84),
    ];
    let filler = " ".repeat(84);
    let rows: Vec<String> = vec![
        format!("1\t1\t0\t{filler}"),
        "1\t1\t0\t".into(),
        "4999999\t50\t-4321\tx".into(),
        format!("2147483647\t-2147483648\t0\t{}", "y".repeat(84)),
    ];
    let recs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
    assert_eq!(check(&types, &[], &recs), recs.len());
    let declined: &[&[u8]] = &[
        b"2147483648\t1\t0\tx",
        b"1\t-2147483649\t0\tx",
        b"+1\t1\t0\tx",
        b" 1\t1\t0\tx",
        b"1 \t1\t0\tx",
        b"\t1\t0\tx",
        b"-\t1\t0\tx",
        b"1\t1\t0",
        b"1\t1\t0\tx\ty",
        b"\\N\t1\t0\tx",
        b"1\t1\t0\t\\N",
        b"1\t1\t0\ta\\tb",
        b"1\t1\t0\t\xc3\xa9",
        b"1\t1\t0\ta\x00b",
        b"1\t1\t0\t\xff",
        b"x\t1\t0\ta",
        b"0000000000000000001\t1\t0\ta",
    ];
    assert_eq!(check(&types, &[], declined), 0);
    let long = format!("1\t1\t0\t{}", "z".repeat(85));
    assert_eq!(check(&types, &[], &[long.as_bytes()]), 0);
}

#[test]
fn every_kind_and_alignment() {
    let types = [
        DataType::Bool,
        DataType::Int2,
        DataType::Int8,
        DataType::Text,
        DataType::Varchar(Some(3)),
        DataType::Float8,
        DataType::Date,
        DataType::Numeric(None),
        DataType::Timestamp(None),
        DataType::Interval,
        DataType::Char(2),
    ];
    let recs: &[&[u8]] = &[
        b"t\t1\t-9\tabc\tab\t1.5\t2024-01-02\t12.50\t2024-01-02 03:04:05\t1 day\ta",
        b"f\t-32768\t123456789012345678\t\tabc\t-0\t1999-12-31\t-1e3\t1999-12-31 23:59:59.5\t-3 hours\tab",
        "true\t32767\t0\tnon-ascii é ü\t\t1e10\t2000-01-01\t0\t2000-01-01 00:00:00\t00:00:01\t".as_bytes(),
        b"t\t32768\t0\ta\ta\t1\t2000-01-01\t0\t2000-01-01\t1 day\ta",
        b"maybe\t1\t0\ta\ta\t1\t2000-01-01\t0\t2000-01-01\t1 day\ta",
        b"t\t1\t0\ta\tabcd\t1\t2000-01-01\t0\t2000-01-01\t1 day\ta",
        b"t\t1\t0\ta\ta\tx\t2000-01-01\t0\t2000-01-01\t1 day\ta",
        b"t\t1\t0\ta\ta\t1\t2000-13-01\t0\t2000-01-01\t1 day\ta",
        b"t\t1\t0\ta\ta\t1\t2000-01-01\t0\t2000-01-01\t1 day\tabc",
        "t\t1\t0\ta\té\t1\t2000-01-01\t0\t2000-01-01\t1 day\ta".as_bytes(),
    ];
    assert_eq!(check(&types, &[], recs), 3);
    // A long text value takes the aligned 4-byte header.
    let long = format!("{}\t{}", "q".repeat(200), "r".repeat(127));
    let taken = check(
        &[DataType::Text, DataType::Text],
        &[],
        &[long.as_bytes(), b"a\tb"],
    );
    assert_eq!(taken, 2);
}

#[test]
fn delimiter_and_null_options() {
    let types = [DataType::Int4, DataType::Text];
    let o = [
        CopyOption::Delimiter("|".into()),
        CopyOption::Null("".into()),
    ];
    let recs: &[&[u8]] = &[b"1|a", b"2|", b"|x", b"3|a\tb", b"4|a|b"];
    assert_eq!(check(&types, &o, recs), 2);
    let o = [CopyOption::Null("7".into())];
    assert_eq!(check(&types, &o, &[b"7\ta", b"8\t7", b"9\tz"]), 1);
}

#[test]
fn declines_what_it_does_not_plan() {
    let t = table(&[DataType::Int4, DataType::Text]);
    let d = desc(&t);
    let csv = CopyOptions::from_ast(
        &[CopyOption::Format(heapdb_grammar::ast::CopyFormat::Csv)],
        true,
    )
    .unwrap();
    assert!(FastForm::new(&t, &csv, &[0, 1], &d, 0).is_none());
    let text = CopyOptions::from_ast(&[], true).unwrap();
    assert!(FastForm::new(&t, &text, &[1, 0], &d, 0).is_none());
    assert!(FastForm::new(&t, &text, &[0], &d, 0).is_none());
    assert!(FastForm::new(&t, &text, &[0, 1], &d, 0).is_some());
}

#[test]
fn field_scan_agrees_with_the_portable_one() {
    let mut rng = 0x1234_5678_u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let alphabet = [b'a', b' ', b'\t', b'\\', 0u8, 0x7f, 0x80, 0xc3, b'|', b'z'];
    for _ in 0..20_000 {
        let len = (next() % 70) as usize;
        let rare = next() % 4 == 0;
        let s: Vec<u8> = (0..len)
            .map(|_| {
                if rare || next() % 16 == 0 {
                    alphabet[(next() % alphabet.len() as u64) as usize]
                } else {
                    b'a' + (next() % 26) as u8
                }
            })
            .collect();
        for delim in [b'\t', b'|'] {
            assert_eq!(
                scan_str(&s, delim),
                scan_str_portable(&s, delim),
                "{s:?} {delim}"
            );
        }
    }
}
