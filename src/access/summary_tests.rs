//! Unit tests of page summaries: computed from real heap pages, checked
//! against the values put in, combined, and encoded.

use super::*;
use crate::access::heap::tuple::Attr;
use crate::storage::BLCKSZ;

/// int4, int8, float8, text, int2, date.
fn desc() -> TupleDesc {
    TupleDesc::new(vec![
        Attr::fixed(4, 4),
        Attr::fixed(8, 8),
        Attr::fixed(8, 8),
        Attr::varlena(4),
        Attr::fixed(2, 2),
        Attr::fixed(4, 4),
    ])
    .unwrap()
}

const KINDS: [SummaryKind; 6] = [
    SummaryKind::Int4,
    SummaryKind::Int8,
    SummaryKind::Float8,
    SummaryKind::None,
    SummaryKind::Int2,
    SummaryKind::Date,
];

/// One row: each value or null.
type Row = (
    Option<i32>,
    Option<i64>,
    Option<f64>,
    Option<i16>,
    Option<i32>,
);

/// A page holding `rows` (as NORMAL tuples), plus a dead line pointer.
fn page_of(rows: &[Row]) -> Vec<u8> {
    let mut p = vec![0u8; BLCKSZ];
    page::init(&mut p, 0);
    let d = desc();
    let mut t = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let a = r.0.map(i32::to_le_bytes);
        let b = r.1.map(i64::to_le_bytes);
        let c = r.2.map(f64::to_le_bytes);
        let e = r.3.map(i16::to_le_bytes);
        let f = r.4.map(i32::to_le_bytes);
        let text = b"some text";
        let values: [Option<&[u8]>; 6] = [
            a.as_ref().map(|x| &x[..]),
            b.as_ref().map(|x| &x[..]),
            c.as_ref().map(|x| &x[..]),
            Some(&text[..]),
            e.as_ref().map(|x| &x[..]),
            f.as_ref().map(|x| &x[..]),
        ];
        tuple::form_tuple(&d, &values, &mut t).unwrap();
        page::add_item(&mut p, &t, None).expect("room on the page");
        if i == 0 {
            // A line pointer that is not NORMAL is no live tuple.
            let dead = page::add_item(&mut p, &t, None).unwrap();
            let id = page::ItemId {
                off: 0,
                flags: page::LP_DEAD,
                len: 0,
            };
            page::set_item_id(&mut p, dead, id);
        }
    }
    p
}

/// Deterministic pseudo-random numbers (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn maybe<T>(&mut self, v: T) -> Option<T> {
        (self.next() % 5 != 0).then_some(v)
    }
}

fn random_rows(rng: &mut Rng, n: usize) -> Vec<Row> {
    (0..n)
        .map(|_| {
            let x = rng.next();
            let f = match x % 7 {
                0 => f64::NAN,
                1 => -0.0,
                2 => 0.0,
                _ => (x as i64 as f64) / 1e6,
            };
            (
                rng.maybe(x as i32),
                rng.maybe(x.rotate_left(17) as i64),
                rng.maybe(f),
                rng.maybe((x >> 40) as i16),
                rng.maybe((x % 100_000) as i32 - 50_000),
            )
        })
        .collect()
}

/// What a full scan computes for column `c` over `rows`, as a summary.
fn expected(rows: &[Row], c: usize) -> ColumnSummary {
    let ints: Vec<i64> = rows
        .iter()
        .filter_map(|r| match c {
            0 => r.0.map(i64::from),
            1 => r.1,
            4 => r.3.map(i64::from),
            5 => r.4.map(i64::from),
            _ => None,
        })
        .collect();
    if c == 2 {
        let fs: Vec<f64> = rows.iter().filter_map(|r| r.2).collect();
        let mut s = ColumnSummary::empty(SummaryKind::Float8);
        for f in fs {
            s.add_float(f);
        }
        return s;
    }
    if c == 3 {
        return ColumnSummary::None;
    }
    match ints.len() {
        0 => ColumnSummary::empty(SummaryKind::Int8),
        n => ColumnSummary::Int {
            count: n as u64,
            min: *ints.iter().min().unwrap(),
            max: *ints.iter().max().unwrap(),
            sum: ints.iter().map(|&v| i128::from(v)).sum(),
        },
    }
}

#[test]
fn summaries_equal_what_a_scan_of_the_page_computes() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for n in [0usize, 1, 2, 7, 40, 120] {
        let rows = random_rows(&mut rng, n);
        let p = page_of(&rows);
        let s = summarize(&p, &desc(), &KINDS).unwrap();
        assert_eq!(s.live as usize, n, "the dead line pointer is not counted");
        for c in 0..6 {
            let want = expected(&rows, c);
            let got = s.columns[c];
            assert_eq!(got.count(), want.count(), "column {c}, {n} rows");
            if want.count() > 0 || c == 3 {
                // Floats: compare bits, so NaN and -0 count.
                match (got, want) {
                    (
                        ColumnSummary::Float { min, max, .. },
                        ColumnSummary::Float {
                            min: wmin,
                            max: wmax,
                            ..
                        },
                    ) => {
                        assert_eq!(min.to_bits(), wmin.to_bits(), "column {c}");
                        assert_eq!(max.to_bits(), wmax.to_bits(), "column {c}");
                    }
                    _ => assert_eq!(got, want, "column {c}, {n} rows"),
                }
            }
        }
    }
}

#[test]
fn floats_order_nan_last_and_keep_the_first_of_equal_zeros() {
    let rows: Vec<Row> = [-0.0, 0.0, f64::NAN, 3.5, -2.0]
        .iter()
        .map(|&f| (None, None, Some(f), None, None))
        .collect();
    let s = summarize(&page_of(&rows), &desc(), &KINDS).unwrap();
    let ColumnSummary::Float { count, min, max } = s.columns[2] else {
        panic!("float column: {:?}", s.columns[2]);
    };
    assert_eq!(count, 5);
    assert_eq!(min, -2.0);
    assert!(max.is_nan(), "NaN sorts above everything");
    let zeros: Vec<Row> = [-0.0, 0.0]
        .iter()
        .map(|&f| (None, None, Some(f), None, None))
        .collect();
    let s = summarize(&page_of(&zeros), &desc(), &KINDS).unwrap();
    let ColumnSummary::Float { min, max, .. } = s.columns[2] else {
        panic!("float column");
    };
    assert_eq!(min.to_bits(), (-0.0f64).to_bits(), "the first zero met");
    assert_eq!(max.to_bits(), (-0.0f64).to_bits(), "the first zero met");
}

#[test]
fn merged_page_summaries_equal_the_summary_of_all_rows() {
    let mut rng = Rng(42);
    let pages: Vec<Vec<Row>> = (0..6)
        .map(|i| random_rows(&mut rng, [0, 50, 3, 80, 1, 20][i]))
        .collect();
    let all: Vec<Row> = pages.concat();
    let d = desc();
    let mut merged: Vec<ColumnSummary> = KINDS.iter().map(|&k| ColumnSummary::empty(k)).collect();
    for rows in &pages {
        let s = summarize(&page_of(rows), &d, &KINDS).unwrap();
        for (m, c) in merged.iter_mut().zip(&s.columns) {
            m.merge(c);
        }
    }
    for c in [0, 1, 4, 5] {
        assert_eq!(merged[c], expected(&all, c), "column {c}");
    }
    assert_eq!(merged[2].count(), expected(&all, 2).count());
    assert_eq!(merged[3], ColumnSummary::None);
    // Kinds that differ do not combine.
    let mut x = ColumnSummary::Int {
        count: 1,
        min: 1,
        max: 1,
        sum: 1,
    };
    x.merge(&ColumnSummary::Float {
        count: 1,
        min: 1.0,
        max: 1.0,
    });
    assert_eq!(x, ColumnSummary::None);
}

#[test]
fn int8_sums_do_not_overflow() {
    let rows: Vec<Row> = (0..100)
        .map(|_| (None, Some(i64::MAX), None, None, None))
        .collect();
    let s = summarize(&page_of(&rows), &desc(), &KINDS).unwrap();
    assert_eq!(
        s.columns[1],
        ColumnSummary::Int {
            count: 100,
            min: i64::MAX,
            max: i64::MAX,
            sum: 100 * i128::from(i64::MAX),
        }
    );
}

#[test]
fn summaries_round_trip_through_their_encoding_and_reject_garbage() {
    let mut rng = Rng(7);
    let rows = random_rows(&mut rng, 30);
    let s = summarize(&page_of(&rows), &desc(), &KINDS).unwrap();
    let mut b = Vec::new();
    s.encode(&KINDS, &mut b);
    assert_eq!(b.len(), PageSummary::encoded_len(6));
    let (back, kinds) = PageSummary::decode(&b).unwrap();
    assert_eq!(kinds, KINDS);
    assert_eq!(back.live, s.live);
    for (x, y) in back.columns.iter().zip(&s.columns) {
        match (x, y) {
            (
                ColumnSummary::Float { count, min, max },
                ColumnSummary::Float {
                    count: c,
                    min: lo,
                    max: hi,
                },
            ) => {
                assert_eq!(
                    (count, min.to_bits(), max.to_bits()),
                    (c, lo.to_bits(), hi.to_bits())
                );
            }
            _ => assert_eq!(x, y),
        }
    }
    let e = PageSummary::decode(&b[..b.len() - 1]).unwrap_err();
    assert_eq!(e.code, crate::error::SqlState::DataCorrupted);
    let mut bad = b.clone();
    bad[4] = 99;
    assert!(PageSummary::decode(&bad).is_err(), "unknown kind");
}

/// Bit-exact comparison of two page summaries (floats by their bits).
fn same(a: &PageSummary, b: &PageSummary) -> bool {
    a.live == b.live
        && a.columns.len() == b.columns.len()
        && a.columns.iter().zip(&b.columns).all(|(x, y)| match (x, y) {
            (
                ColumnSummary::Float { count, min, max },
                ColumnSummary::Float {
                    count: c2,
                    min: m2,
                    max: x2,
                },
            ) => count == c2 && min.to_bits() == m2.to_bits() && max.to_bits() == x2.to_bits(),
            _ => x == y,
        })
}

/// The fast path (summarised columns at fixed offsets, read without
/// deforming from tuples without nulls) gives what deforming every tuple
/// gives, with nulls on some tuples of a page and not others, tuples with
/// fewer columns (added later), floats' NaN and signed zeros, and kinds it
/// does not take (a summarised column after a varlena).
#[test]
fn the_fast_path_equals_deforming_every_tuple() {
    // int4, int8, float8, int2, date, text: every summarised column first.
    let d = TupleDesc::new(vec![
        Attr::fixed(4, 4),
        Attr::fixed(8, 8),
        Attr::fixed(8, 8),
        Attr::fixed(2, 2),
        Attr::fixed(4, 4),
        Attr::varlena(4),
    ])
    .unwrap();
    let kinds = [
        SummaryKind::Int4,
        SummaryKind::Int8,
        SummaryKind::Float8,
        SummaryKind::Int2,
        SummaryKind::Date,
        SummaryKind::None,
    ];
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for (n, nulls) in [(0, false), (1, false), (60, false), (60, true), (110, true)] {
        let rows = random_rows(&mut rng, n);
        let mut p = vec![0u8; BLCKSZ];
        page::init(&mut p, 0);
        let mut t = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let a = r.0.unwrap_or(7).to_le_bytes();
            let b = r.1.unwrap_or(-7).to_le_bytes();
            let c = r.2.unwrap_or(0.5).to_le_bytes();
            let e = r.3.unwrap_or(3).to_le_bytes();
            let f = r.4.unwrap_or(-1).to_le_bytes();
            let mut values: [Option<&[u8]>; 6] =
                [Some(&a), Some(&b), Some(&c), Some(&e), Some(&f), Some(b"t")];
            if nulls {
                values[i % 5] = None;
            }
            // Every seventh tuple was written before its last columns were
            // added: it has three.
            let upto = if i % 7 == 3 { 3 } else { 6 };
            let short = TupleDesc::new(d.attrs()[..upto].to_vec()).unwrap();
            tuple::form_tuple(&short, &values[..upto], &mut t).unwrap();
            page::add_item(&mut p, &t, None).expect("room on the page");
        }
        let fast = summarize(&p, &d, &kinds).unwrap();
        let general = summarize_general(&p, &d, &kinds).unwrap();
        assert!(
            same(&fast, &general),
            "{n} rows, nulls {nulls}: {fast:?} vs {general:?}"
        );
    }
    // Not taken: a summarised column after a varlena (the module's desc).
    let rows = random_rows(&mut rng, 50);
    let p = page_of(&rows);
    assert!(same(
        &summarize(&p, &desc(), &KINDS).unwrap(),
        &summarize_general(&p, &desc(), &KINDS).unwrap()
    ));
}
