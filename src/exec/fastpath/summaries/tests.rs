//! The summary plan's decisions and folds against the rows they stand
//! for: pages, windows and spans, integer, float and date intervals.

use super::*;
use crate::catalog::ColumnDef;

fn table(types: &[DataType]) -> TableDef {
    TableDef {
        comment: None,
        oid: 1,
        name: "t".into(),
        relfilenode: 1,
        columns: types
            .iter()
            .enumerate()
            .map(|(i, t)| ColumnDef {
                comment: None,
                name: format!("c{i}"),
                ty: *t,
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

fn col(k: usize, ty: DataType) -> Expr {
    Expr {
        kind: ExprKind::Column(k),
        ty,
    }
}

fn cmp(op: BinaryOp, k: usize, c: i32) -> Expr {
    Expr {
        kind: ExprKind::Binary(
            op,
            Box::new(col(k, DataType::Int4)),
            Box::new(Expr {
                kind: ExprKind::Const(Value::Int4(c)),
                ty: DataType::Int4,
            }),
        ),
        ty: DataType::Bool,
    }
}

fn call(func: AggFunc, arg: Option<usize>) -> AggCall {
    AggCall {
        func,
        arg: arg.map(|k| col(k, DataType::Int4)),
        more_args: Vec::new(),
        order: Vec::new(),
        distinct: false,
        filter: None,
        ty: DataType::Int8,
    }
}

/// A page's values (None: NULL) as a slot, and as rows.
fn slot_of(vals: &[Option<i32>], natts: usize) -> Slot {
    let nn: Vec<i64> = vals.iter().flatten().map(|&v| i64::from(v)).collect();
    let c = ColumnSummary::Int {
        count: nn.len() as u64,
        min: nn.iter().copied().min().unwrap_or(0),
        max: nn.iter().copied().max().unwrap_or(0),
        sum: nn.iter().map(|&v| i128::from(v)).sum(),
    };
    let mut kinds = vec![SummaryKind::None; natts];
    kinds[0] = SummaryKind::Int4;
    let mut cols = vec![ColumnSummary::None; natts];
    cols[0] = c;
    Slot::decode(&Slot::encode(vals.len() as u16, natts, &kinds, &cols)).unwrap()
}

/// Seeded random pages: a page answered from its summary folds to what
/// its rows give; a skipped page has no passing row; a boundary page is
/// never answered.
#[test]
fn decisions_and_folds_match_the_rows() {
    use AggFunc::*;
    let t = table(&[DataType::Int4, DataType::Text]);
    let aggs = [
        call(CountStar, None),
        call(Count, Some(0)),
        call(Sum, Some(0)),
        call(Min, Some(0)),
        call(Max, Some(0)),
    ];
    let mut seed = 0x1234_5678_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..400 {
        let (lo, hi) = ((next() % 200) as i32 - 100, (next() % 200) as i32 - 100);
        let filter = match round % 4 {
            0 => None,
            1 => Some(cmp(BinaryOp::GtEq, 0, lo)),
            2 => Some(Expr {
                kind: ExprKind::And(
                    Box::new(cmp(BinaryOp::GtEq, 0, lo)),
                    Box::new(cmp(BinaryOp::LtEq, 0, hi)),
                ),
                ty: DataType::Bool,
            }),
            _ => Some(cmp(BinaryOp::Eq, 0, lo)),
        };
        let plan = SummaryPlan::compile(&aggs, filter.as_ref(), &[0], &t).unwrap();
        let n = (next() % 20) as usize;
        let base = (next() % 200) as i32 - 100;
        let vals: Vec<Option<i32>> = (0..n)
            .map(|_| (next() % 5 != 0).then(|| base + (next() % 30) as i32))
            .collect();
        let slot = slot_of(&vals, 2);
        let pass = |v: &Option<i32>| match (v, round % 4) {
            (_, 0) => true,
            (None, _) => false,
            (Some(v), 1) => *v >= lo,
            (Some(v), 2) => *v >= lo && *v <= hi,
            (Some(v), _) => *v == lo,
        };
        let passing: Vec<&Option<i32>> = vals.iter().filter(|v| pass(v)).collect();
        match plan.decide(&slot) {
            PageUse::Skip => assert!(passing.is_empty(), "round {round}"),
            PageUse::Answer => {
                assert_eq!(passing.len(), vals.len(), "round {round}");
                let mut part = plan.empty();
                plan.fold(&slot, &mut part);
                let nn: Vec<i64> = vals.iter().flatten().map(|&v| i64::from(v)).collect();
                assert_eq!(part.counts[0], vals.len() as i64);
                assert_eq!(part.counts[1..], [nn.len() as i64; 4]);
                assert_eq!(part.sums[2], nn.iter().map(|&v| i128::from(v)).sum());
                if !nn.is_empty() {
                    assert_eq!(part.extremes[3], *nn.iter().min().unwrap());
                    assert_eq!(part.extremes[4], *nn.iter().max().unwrap());
                }
            }
            PageUse::Scan => assert!(
                round % 4 != 0,
                "an unfiltered page with a summary is answered"
            ),
        }
    }
    // Another column count (the table changed) is never answered.
    let plan = SummaryPlan::compile(&aggs, None, &[0], &t).unwrap();
    assert_eq!(plan.decide(&slot_of(&[Some(1)], 3)), PageUse::Scan);
}

/// Seeded random pages under an aggregation grouped by the summarised
/// column: a page is answered only when every row passes and has one
/// non-NULL key (`key_of`), folded as its rows would be; an unfiltered
/// page is read exactly when its rows hold two keys or a NULL.
#[test]
fn grouped_decisions_match_the_rows() {
    use AggFunc::*;
    let t = table(&[DataType::Int4, DataType::Text]);
    let key = col(0, DataType::Int4);
    let aggs = [
        call(CountStar, None),
        call(Sum, Some(0)),
        call(Max, Some(0)),
    ];
    let mut seed = 0x0bad_cafe_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..400 {
        let lo = (next() % 8) as i32;
        let filter = (round % 2 == 1).then(|| cmp(BinaryOp::GtEq, 0, lo));
        let plan = SummaryPlan::compile_grouped(&key, &aggs, filter.as_ref(), &[0], &t).unwrap();
        assert!(plan.grouped());
        let n = (next() % 6) as usize;
        let base = (next() % 8) as i32;
        let spread = (next() % 3) as i32;
        let vals: Vec<Option<i32>> = (0..n)
            .map(|_| (next() % 9 != 0).then(|| base + (next() % 3) as i32 * spread))
            .collect();
        let slot = slot_of(&vals, 2);
        let pass = |v: &Option<i32>| filter.is_none() || v.is_some_and(|v| v >= lo);
        let keys: std::collections::BTreeSet<Option<i32>> = vals.iter().copied().collect();
        match plan.decide(&slot) {
            PageUse::Skip => assert!(!vals.iter().any(pass), "round {round}"),
            PageUse::Answer => {
                assert!(vals.iter().all(pass), "round {round}");
                assert_eq!(keys.len(), 1, "round {round}: {vals:?}");
                let k = vals[0].expect("a non-NULL key");
                assert_eq!(plan.key_of(&slot), Some(i64::from(k)));
                let mut part = plan.empty();
                plan.fold(&slot, &mut part);
                assert_eq!(part.counts, [n as i64; 3]);
                assert_eq!(part.sums[1], i128::from(k) * n as i128);
                assert_eq!(part.extremes[2], i64::from(k));
            }
            PageUse::Scan => assert!(
                filter.is_some() || keys.len() > 1 || keys.contains(&None),
                "round {round}: {vals:?}"
            ),
        }
    }
}

/// Seeded random windows of pages: when the merge of their summaries
/// is answered, every page is answered and the merge folds as the
/// pages do one by one; when it is skipped, every page is skipped.
#[test]
fn window_decisions_hold_for_each_page() {
    use AggFunc::*;
    let t = table(&[DataType::Int4, DataType::Text]);
    let aggs = [
        call(CountStar, None),
        call(Count, Some(0)),
        call(Sum, Some(0)),
        call(Min, Some(0)),
        call(Max, Some(0)),
    ];
    let mut seed = 0x005e_ed0f_0032_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut answered, mut skipped) = (0, 0);
    for round in 0..600 {
        let lo = (next() % 400) as i32 - 200;
        let filter = match round % 3 {
            0 => None,
            1 => Some(cmp(BinaryOp::GtEq, 0, lo)),
            _ => Some(Expr {
                kind: ExprKind::And(
                    Box::new(cmp(BinaryOp::GtEq, 0, lo)),
                    Box::new(cmp(BinaryOp::Lt, 0, lo + (next() % 300) as i32)),
                ),
                ty: DataType::Bool,
            }),
        };
        let plan = SummaryPlan::compile(&aggs, filter.as_ref(), &[0], &t).unwrap();
        // Ordered-ish pages: each page's values around a rising base,
        // NULLs on some rounds only.
        let nulls = next() % 4 == 0;
        let mut base = (next() % 400) as i32 - 200;
        let slots: Vec<Option<Slot>> = (0..1 + next() % 32)
            .map(|_| {
                base += (next() % 20) as i32;
                let n = 1 + (next() % 12) as usize;
                let vals: Vec<Option<i32>> = (0..n)
                    .map(|_| (!nulls || next() % 6 != 0).then(|| base + (next() % 15) as i32))
                    .collect();
                Some(slot_of(&vals, 2))
            })
            .collect();
        let merged = Slot::merged(&slots).expect("same columns");
        let mut one_by_one = plan.empty();
        for s in slots.iter().flatten() {
            plan.fold(s, &mut one_by_one);
        }
        match plan.decide(&merged) {
            PageUse::Answer => {
                answered += 1;
                for s in slots.iter().flatten() {
                    assert_eq!(plan.decide(s), PageUse::Answer, "round {round}");
                }
                let mut part = plan.empty();
                plan.fold(&merged, &mut part);
                assert_eq!(part.counts, one_by_one.counts, "round {round}");
                assert_eq!(part.sums, one_by_one.sums, "round {round}");
                assert_eq!(part.extremes, one_by_one.extremes, "round {round}");
            }
            PageUse::Skip => {
                skipped += 1;
                for s in slots.iter().flatten() {
                    assert_eq!(plan.decide(s), PageUse::Skip, "round {round}");
                }
            }
            PageUse::Scan => {}
        }
    }
    assert!(answered > 50 && skipped > 20, "{answered} {skipped}");
}

/// A span's merge, made as `HeapRelation::span_summary` makes it (its
/// windows' merges merged in turn), decides as each of its pages: an
/// answer or a skip on the span is that of every page, and the
/// answered span folds as its pages do, with live counts past `u16`.
#[test]
fn span_decisions_hold_for_each_page() {
    use AggFunc::*;
    let t = table(&[DataType::Int4, DataType::Text]);
    let aggs = [
        call(CountStar, None),
        call(Count, Some(0)),
        call(Sum, Some(0)),
        call(Min, Some(0)),
        call(Max, Some(0)),
    ];
    let mut seed = 0x0005_9a40_77e1_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut answered, mut skipped, mut big) = (0, 0, 0);
    for round in 0..90 {
        let lo = (next() % 40_000) as i32 - 1_000;
        let filter = match round % 3 {
            0 => None,
            1 => Some(cmp(BinaryOp::GtEq, 0, lo)),
            _ => Some(cmp(BinaryOp::Lt, 0, lo)),
        };
        let plan = SummaryPlan::compile(&aggs, filter.as_ref(), &[0], &t).unwrap();
        let nulls = next() % 4 == 0;
        let mut base = (next() % 400) as i32 - 200;
        let mut pages: Vec<Slot> = Vec::new();
        let mut span: Option<Slot> = None;
        for _ in 0..16 + next() % 17 {
            let window: Vec<Option<Slot>> = (0..32)
                .map(|_| {
                    base += (next() % 20) as i32;
                    let n = 1 + (next() % 250) as usize;
                    let vals: Vec<Option<i32>> = (0..n)
                        .map(|_| (!nulls || next() % 6 != 0).then(|| base + (next() % 15) as i32))
                        .collect();
                    Some(slot_of(&vals, 2))
                })
                .collect();
            pages.extend(window.iter().flatten().copied());
            let w = Slot::merged(&window).expect("same columns");
            span = match span {
                None => Some(w),
                Some(acc) => Slot::merged(&[Some(acc), Some(w)]),
            };
        }
        let span = span.expect("same columns");
        let live: u32 = pages.iter().map(|p| p.live).sum();
        assert_eq!(span.live, live, "round {round}");
        big += usize::from(live > u32::from(u16::MAX));
        let mut one_by_one = plan.empty();
        for p in &pages {
            plan.fold(p, &mut one_by_one);
        }
        match plan.decide(&span) {
            PageUse::Answer => {
                answered += 1;
                for p in &pages {
                    assert_eq!(plan.decide(p), PageUse::Answer, "round {round}");
                }
                let mut part = plan.empty();
                plan.fold(&span, &mut part);
                assert_eq!(part.counts, one_by_one.counts, "round {round}");
                assert_eq!(part.sums, one_by_one.sums, "round {round}");
                assert_eq!(part.extremes, one_by_one.extremes, "round {round}");
            }
            PageUse::Skip => {
                skipped += 1;
                for p in &pages {
                    assert_eq!(plan.decide(p), PageUse::Skip, "round {round}");
                }
            }
            PageUse::Scan => {}
        }
    }
    assert!(
        answered > 10 && skipped > 5 && big > 5,
        "{answered} {skipped} {big}"
    );
}

/// A float8 column compared with a float8 constant.
fn fcmp(op: BinaryOp, c: f64) -> Expr {
    Expr {
        kind: ExprKind::Binary(
            op,
            Box::new(col(0, DataType::Float8)),
            Box::new(Expr {
                kind: ExprKind::Const(Value::Float8(c)),
                ty: DataType::Float8,
            }),
        ),
        ty: DataType::Bool,
    }
}

/// PostgreSQL's float comparison `v op c` (NaN above everything).
fn pg_float(op: BinaryOp, v: f64, c: f64) -> bool {
    let o = float_cmp(v, c);
    match op {
        BinaryOp::Eq => o == Ordering::Equal,
        BinaryOp::Lt => o == Ordering::Less,
        BinaryOp::LtEq => o != Ordering::Greater,
        BinaryOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    }
}

/// Seeded random float pages (NaN, infinities, -0 and 0 mixed in) and
/// filters of one or two comparisons: a skipped page has no passing
/// row, an answered one only passing rows, and `count(f)` folds the
/// non-null count.
#[test]
fn float_intervals_decide_as_the_rows() {
    let t = table(&[DataType::Float8]);
    let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, 1.5];
    let ops = [
        BinaryOp::Eq,
        BinaryOp::Lt,
        BinaryOp::LtEq,
        BinaryOp::Gt,
        BinaryOp::GtEq,
    ];
    let mut seed = 0x0bad_cafe_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let pick = |next: &mut dyn FnMut() -> u64| {
        let x = next();
        if x % 4 == 0 {
            specials[(x / 4 % specials.len() as u64) as usize]
        } else {
            (x % 9) as f64 - 4.0
        }
    };
    let (mut skipped, mut answered) = (0, 0);
    for round in 0..2000 {
        let n1 = (ops[(next() % 5) as usize], pick(&mut next));
        let n2 = (ops[(next() % 5) as usize], pick(&mut next));
        let two = round % 2 == 0;
        let filter = if two {
            Expr {
                kind: ExprKind::And(Box::new(fcmp(n1.0, n1.1)), Box::new(fcmp(n2.0, n2.1))),
                ty: DataType::Bool,
            }
        } else {
            fcmp(n1.0, n1.1)
        };
        let mut cnt = call(AggFunc::Count, Some(0));
        cnt.arg = Some(col(0, DataType::Float8));
        let aggs = [call(AggFunc::CountStar, None), cnt];
        let plan = SummaryPlan::compile(&aggs, Some(&filter), &[0], &t).unwrap();
        let vals: Vec<Option<f64>> = (0..1 + next() % 6)
            .map(|_| (next() % 6 != 0).then(|| pick(&mut next)))
            .collect();
        let nn: Vec<f64> = vals.iter().flatten().copied().collect();
        let mut c = ColumnSummary::empty(SummaryKind::Float8);
        for &v in &nn {
            c.merge(&ColumnSummary::Float {
                count: 1,
                min: v,
                max: v,
            });
        }
        let slot = Slot::decode(&Slot::encode(
            vals.len() as u16,
            1,
            &[SummaryKind::Float8],
            &[c],
        ))
        .unwrap();
        let pass = |v: &Option<f64>| {
            v.is_some_and(|v| pg_float(n1.0, v, n1.1) && (!two || pg_float(n2.0, v, n2.1)))
        };
        let passing = vals.iter().filter(|v| pass(v)).count();
        match plan.decide(&slot) {
            PageUse::Skip => {
                skipped += 1;
                assert_eq!(passing, 0, "round {round}: {vals:?} {n1:?} {n2:?}");
            }
            PageUse::Answer => {
                answered += 1;
                assert_eq!(passing, vals.len(), "round {round}: {vals:?} {n1:?} {n2:?}");
                let mut part = plan.empty();
                plan.fold(&slot, &mut part);
                assert_eq!(part.counts, vec![vals.len() as i64, nn.len() as i64]);
            }
            PageUse::Scan => {}
        }
    }
    assert!(skipped > 100 && answered > 100, "{skipped} {answered}");
}

/// A date column compiles with date constants only, as an integer
/// interval of days.
#[test]
fn date_comparisons_compile_with_date_constants() {
    let t = table(&[DataType::Date]);
    let date_cmp = |op, v: Value| Expr {
        kind: ExprKind::Binary(
            op,
            Box::new(col(0, DataType::Date)),
            Box::new(Expr {
                ty: v.data_type().unwrap(),
                kind: ExprKind::Const(v),
            }),
        ),
        ty: DataType::Bool,
    };
    let f = date_cmp(BinaryOp::GtEq, Value::Date(10));
    let plan = SummaryPlan::compile(&[], Some(&f), &[0], &t).unwrap();
    let slot = |lo: i64, hi: i64| {
        let c = ColumnSummary::Int {
            count: 2,
            min: lo,
            max: hi,
            sum: 0,
        };
        Slot::decode(&Slot::encode(2, 1, &[SummaryKind::Date], &[c])).unwrap()
    };
    assert_eq!(plan.decide(&slot(10, 20)), PageUse::Answer);
    assert_eq!(plan.decide(&slot(0, 9)), PageUse::Skip);
    assert_eq!(plan.decide(&slot(5, 15)), PageUse::Scan);
    let g = date_cmp(BinaryOp::GtEq, Value::Int4(10));
    assert!(SummaryPlan::compile(&[], Some(&g), &[0], &t).is_none());
}

#[test]
fn what_does_not_compile() {
    let t = table(&[DataType::Int4, DataType::Float8]);
    let mut fsum = call(AggFunc::Sum, Some(1));
    fsum.arg = Some(col(1, DataType::Float8));
    assert!(SummaryPlan::compile(&[fsum], None, &[0, 1], &t).is_none());
    let mut d = call(AggFunc::Sum, Some(0));
    d.distinct = true;
    assert!(SummaryPlan::compile(&[d], None, &[0, 1], &t).is_none());
    let ne = cmp(BinaryOp::NotEq, 0, 3);
    let s = call(AggFunc::Sum, Some(0));
    assert!(SummaryPlan::compile(std::slice::from_ref(&s), Some(&ne), &[0, 1], &t).is_none());
    let or = Expr {
        kind: ExprKind::Or(
            Box::new(cmp(BinaryOp::Eq, 0, 1)),
            Box::new(cmp(BinaryOp::Eq, 0, 2)),
        ),
        ty: DataType::Bool,
    };
    assert!(SummaryPlan::compile(&[s], Some(&or), &[0, 1], &t).is_none());
}
