//! A scan's filter evaluated on one page's values: `count(*) ... WHERE`
//! without column vectors.
//!
//! A filtered `count(*)` (a rows-only scan, [`crate::exec::scan::counts_rows_only`])
//! needs of each row only whether it passes. On an ALL_VISIBLE page whose
//! tuples the fused column loop accepts ([`super::fixed_scan::fused_page_values`]:
//! NULL-free, every attribute present, 4-byte columns), the scan loads the
//! filter's columns into page-sized arrays and a [`PagePred`] counts the
//! rows that pass, while the page is in the cache and the next one is on its
//! way; nothing reaches the batch but the count. Every other page takes the
//! general path (column vectors, then [`Expr::eval`]), so results never
//! depend on which pages took which path.
//!
//! A [`PagePred`] is compiled from the filter when every leaf is a
//! comparison of an `int4` column, or of an `int4` column's remainder by a
//! non-zero `int4` constant, with a non-NULL `int4` constant, combined by
//! AND, OR and NOT ([`PagePred::compile`]); anything else keeps the general
//! path for every page. Exactness: on such pages no value is NULL, so SQL's
//! three-valued logic is two-valued; comparisons cannot fail, and a
//! remainder by a non-zero constant cannot either (`i32::MIN % -1` is 0, as
//! in PostgreSQL), so no row that would raise an error is counted silently.
//!
//! Evaluation is postfix over 0/1 masks, one loop per leaf and per
//! connective, each over the page's `n` values: the shapes the compiler
//! vectorizes.

use super::fixed_scan::MAX_TUPLES;
use crate::exec::expr::{Expr, ExprKind};
use crate::exec::kernels::RemConst;
use crate::types::{BinaryOp, DataType, Value};

/// A comparison operator of a leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn of(op: BinaryOp) -> Option<Cmp> {
        Some(match op {
            BinaryOp::Eq => Cmp::Eq,
            BinaryOp::NotEq => Cmp::Ne,
            BinaryOp::Lt => Cmp::Lt,
            BinaryOp::LtEq => Cmp::Le,
            BinaryOp::Gt => Cmp::Gt,
            BinaryOp::GtEq => Cmp::Ge,
            _ => return None,
        })
    }

    /// The operator with its operands swapped (`c < x` is `x > c`).
    fn flipped(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            same => same,
        }
    }
}

/// One step of the postfix program.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// Push the mask of `col[i] (% rem) cmp c`.
    Leaf {
        col: usize,
        rem: Option<RemConst>,
        cmp: Cmp,
        c: i32,
    },
    /// Pop two masks, push their AND.
    And,
    /// Pop two masks, push their OR.
    Or,
    /// Pop a mask, push its NOT.
    Not,
}

/// A filter compiled for evaluation on page arrays (see the module docs).
#[derive(Debug, Clone)]
pub struct PagePred {
    ops: Vec<Op>,
    /// The deepest the mask stack gets.
    depth: usize,
}

/// One page's mask: 1 for a row that passes, in 32-bit lanes like the
/// values (byte masks from 32-bit compares had to be packed, and ran
/// several times slower).
pub type Mask = [u32; MAX_TUPLES];

impl PagePred {
    /// Compiles `filter`, whose column `k` of the batch is page column
    /// `col_of(k)` (`None`: not among the page's columns). `None` when some
    /// part of it is outside the supported shape.
    pub fn compile(filter: &Expr, col_of: &dyn Fn(usize) -> Option<usize>) -> Option<PagePred> {
        let mut ops = Vec::new();
        emit(filter, col_of, &mut ops)?;
        // Postfix depth: leaves push, binary connectives pop one net.
        let (mut d, mut depth) = (0usize, 0usize);
        for op in &ops {
            match op {
                Op::Leaf { .. } => d += 1,
                Op::And | Op::Or => d -= 1,
                Op::Not => {}
            }
            depth = depth.max(d);
        }
        Some(PagePred { ops, depth })
    }

    /// How many of the first `n` rows of `cols` (page column `k` is
    /// `cols[k]`) pass. `masks` is scratch, reused between pages.
    pub fn count(&self, cols: &[&[i32]], n: usize, masks: &mut Vec<Mask>) -> usize {
        self.mask(cols, n, masks).iter().sum::<u32>() as usize
    }

    /// Which of the first `n` rows of `cols` pass: 1 or 0 each, in the
    /// first of `masks` (scratch, reused between pages).
    pub fn mask<'m>(&self, cols: &[&[i32]], n: usize, masks: &'m mut Vec<Mask>) -> &'m [u32] {
        let n = n.min(MAX_TUPLES);
        if masks.len() < self.depth {
            masks.resize(self.depth, [0; MAX_TUPLES]);
        }
        let ops = &self.ops[..];
        let top = crate::avx2!(|ops: &[Op],
                                cols: &[&[i32]],
                                n: usize,
                                masks: &mut [Mask]|
         -> usize { run(ops, cols, n, masks) });
        debug_assert_eq!(top, 1);
        &masks[0][..n]
    }
}

/// Runs the postfix program `ops` over the first `n` rows of `cols`,
/// leaving the result in `masks[0]`; returns the stack's final depth (1).
/// Inlined into [`PagePred::mask`]'s AVX2 copy too.
#[inline(always)]
fn run(ops: &[Op], cols: &[&[i32]], n: usize, masks: &mut [Mask]) -> usize {
    let mut top = 0usize;
    for op in ops {
        match *op {
            Op::Leaf { col, rem, cmp, c } => {
                leaf(&mut masks[top][..n], &cols[col][..n], rem, cmp, c);
                top += 1;
            }
            Op::And | Op::Or => {
                let (lo, hi) = masks.split_at_mut(top - 1);
                let (a, b) = (&mut lo[top - 2][..n], &hi[0][..n]);
                if matches!(op, Op::And) {
                    a.iter_mut().zip(b).for_each(|(x, &y)| *x &= y);
                } else {
                    a.iter_mut().zip(b).for_each(|(x, &y)| *x |= y);
                }
                top -= 1;
            }
            Op::Not => masks[top - 1][..n].iter_mut().for_each(|x| *x ^= 1),
        }
    }
    top
}

/// Appends `e`'s postfix program to `ops`; `None` outside the shape.
fn emit(e: &Expr, col_of: &dyn Fn(usize) -> Option<usize>, ops: &mut Vec<Op>) -> Option<()> {
    match &e.kind {
        ExprKind::And(a, b) | ExprKind::Or(a, b) => {
            emit(a, col_of, ops)?;
            emit(b, col_of, ops)?;
            ops.push(if matches!(e.kind, ExprKind::And(..)) {
                Op::And
            } else {
                Op::Or
            });
            Some(())
        }
        ExprKind::Not(a) => {
            emit(a, col_of, ops)?;
            ops.push(Op::Not);
            Some(())
        }
        ExprKind::Binary(op, l, r) => {
            let cmp = Cmp::of(*op)?;
            let (operand, c, cmp) = match (int4_const(r), int4_const(l)) {
                (Some(c), _) => (l, c, cmp),
                (None, Some(c)) => (r, c, cmp.flipped()),
                (None, None) => return None,
            };
            let (col, rem) = operand_of(operand, col_of)?;
            ops.push(Op::Leaf { col, rem, cmp, c });
            Some(())
        }
        _ => None,
    }
}

/// A non-NULL `int4` constant.
fn int4_const(e: &Expr) -> Option<i32> {
    match &e.kind {
        ExprKind::Const(Value::Int4(c)) if e.ty == DataType::Int4 => Some(*c),
        _ => None,
    }
}

/// A leaf's operand: an `int4` page column, or its remainder by a non-zero
/// `int4` constant.
fn operand_of(
    e: &Expr,
    col_of: &dyn Fn(usize) -> Option<usize>,
) -> Option<(usize, Option<RemConst>)> {
    if e.ty != DataType::Int4 {
        return None;
    }
    match &e.kind {
        ExprKind::Column(k) => Some((col_of(*k)?, None)),
        ExprKind::Binary(BinaryOp::Mod, x, d) => match (&x.kind, int4_const(d)) {
            (ExprKind::Column(k), Some(d)) if x.ty == DataType::Int4 => {
                Some((col_of(*k)?, Some(RemConst::new(d)?)))
            }
            _ => None,
        },
        _ => None,
    }
}

/// `mask[i] = (v[i] (% rem) cmp c)`, one monomorphic loop per operator.
#[inline(always)]
fn leaf(mask: &mut [u32], v: &[i32], rem: Option<RemConst>, cmp: Cmp, c: i32) {
    #[inline(always)]
    fn fill(mask: &mut [u32], v: &[i32], f: impl Fn(i32) -> bool) {
        mask.iter_mut()
            .zip(v)
            .for_each(|(m, &x)| *m = u32::from(f(x)));
    }
    macro_rules! by_cmp {
        ($val:expr) => {
            match cmp {
                Cmp::Eq => fill(mask, v, |x| $val(x) == c),
                Cmp::Ne => fill(mask, v, |x| $val(x) != c),
                Cmp::Lt => fill(mask, v, |x| $val(x) < c),
                Cmp::Le => fill(mask, v, |x| $val(x) <= c),
                Cmp::Gt => fill(mask, v, |x| $val(x) > c),
                Cmp::Ge => fill(mask, v, |x| $val(x) >= c),
            }
        };
    }
    match rem {
        None => by_cmp!(|x: i32| x),
        Some(r) => by_cmp!(|x: i32| r.rem(x)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::expr::truth_mask;
    use crate::exec::vector::{Batch, Vector};

    fn col(k: usize) -> Expr {
        Expr {
            kind: ExprKind::Column(k),
            ty: DataType::Int4,
        }
    }

    fn int(c: i32) -> Expr {
        Expr {
            kind: ExprKind::Const(Value::Int4(c)),
            ty: DataType::Int4,
        }
    }

    fn bin(op: BinaryOp, l: Expr, r: Expr) -> Expr {
        let ty = if Cmp::of(op).is_some() {
            DataType::Bool
        } else {
            DataType::Int4
        };
        Expr {
            kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
            ty,
        }
    }

    fn and(a: Expr, b: Expr) -> Expr {
        Expr {
            kind: ExprKind::And(Box::new(a), Box::new(b)),
            ty: DataType::Bool,
        }
    }

    fn or(a: Expr, b: Expr) -> Expr {
        Expr {
            kind: ExprKind::Or(Box::new(a), Box::new(b)),
            ty: DataType::Bool,
        }
    }

    fn not(a: Expr) -> Expr {
        Expr {
            kind: ExprKind::Not(Box::new(a)),
            ty: DataType::Bool,
        }
    }

    /// Pseudo-random values with the edges mixed in.
    fn values(n: usize, seed: u32) -> Vec<i32> {
        let mut s = seed;
        let mut v: Vec<i32> = (0..n)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                match i % 5 {
                    0 => (s % 2001) as i32 - 1000,
                    1 => s as i32,
                    _ => (s % 10) as i32,
                }
            })
            .collect();
        v[..6].copy_from_slice(&[i32::MIN, i32::MAX, 0, -1, 1, i32::MIN + 1]);
        v
    }

    /// The page count of `e` equals the general evaluator's over the same
    /// rows: columns 0 and 1 of the batch are page columns 1 and 0.
    fn agrees(e: &Expr) {
        let n = MAX_TUPLES;
        let (a, b) = (values(n, 7), values(n, 99));
        let batch = Batch {
            columns: vec![
                Vector::from_data(DataType::Int4, crate::exec::vector::Data::I32(a.clone())),
                Vector::from_data(DataType::Int4, crate::exec::vector::Data::I32(b.clone())),
            ],
            len: n,
        };
        let want = truth_mask(&e.eval(&batch).expect("evaluates"));
        let p = PagePred::compile(e, &|k| [Some(1), Some(0)].get(k).copied().flatten())
            .expect("compiles");
        let mut masks = Vec::new();
        for len in [n, 1, 100, 0] {
            let got = p.count(&[&b, &a], len, &mut masks);
            let expect = want[..len].iter().filter(|&&x| x).count();
            assert_eq!(got, expect, "{e:?} over {len} rows");
        }
    }

    #[test]
    fn page_counts_match_the_general_evaluator() {
        use BinaryOp::*;
        agrees(&or(
            bin(NotEq, col(0), int(0)),
            bin(Eq, bin(Mod, col(1), int(1000)), int(7)),
        ));
        agrees(&bin(GtEq, col(1), int(0)));
        agrees(&bin(Lt, int(3), col(0)));
        agrees(&and(
            not(bin(LtEq, col(0), int(-5))),
            or(
                bin(Gt, col(1), int(4)),
                bin(Eq, bin(Mod, col(0), int(-3)), int(-2)),
            ),
        ));
        agrees(&bin(Eq, bin(Mod, col(0), int(-1)), int(0)));
        agrees(&bin(Eq, bin(Mod, col(1), int(i32::MIN)), int(-1)));
        agrees(&bin(NotEq, bin(Mod, col(1), int(8)), int(3)));
        agrees(&not(not(bin(Gt, col(0), int(i32::MAX)))));
    }

    #[test]
    fn other_shapes_do_not_compile() {
        use BinaryOp::*;
        let page = |k: usize| (k == 0).then_some(0);
        let ok = |e: &Expr| PagePred::compile(e, &page).is_some();
        assert!(ok(&bin(Eq, col(0), int(1))));
        // A column the page does not hold, a column against a column, a
        // remainder by zero (the general path raises the error), other
        // arithmetic (it can overflow), and a NULL or int8 constant.
        assert!(!ok(&bin(Eq, col(1), int(1))));
        assert!(!ok(&bin(Eq, col(0), col(0))));
        assert!(!ok(&bin(Eq, bin(Mod, col(0), int(0)), int(1))));
        assert!(!ok(&bin(Eq, bin(Add, col(0), int(1)), int(1))));
        let null = Expr {
            kind: ExprKind::Const(Value::Null),
            ty: DataType::Int4,
        };
        assert!(!ok(&bin(Eq, col(0), null)));
        let big = Expr {
            kind: ExprKind::Const(Value::Int8(1)),
            ty: DataType::Int8,
        };
        assert!(!ok(&bin(Eq, col(0), big)));
        assert!(!ok(&or(bin(Eq, col(0), int(1)), bin(Eq, col(1), int(1)))));
    }
}
