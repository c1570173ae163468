//! Compiled expressions and their evaluation over batches.
//!
//! The binder turns the parser's expressions into [`Expr`] trees once per
//! statement: names are resolved to column positions of the operator's input
//! batch, every node carries its result [`DataType`], operands are already
//! cast to the types their operator takes, and functions are resolved to a
//! [`Func`] value. Evaluation then never looks anything up by name.
//!
//! [`Expr::eval`] evaluates a node for a whole [`Batch`] and returns a
//! [`Vector`]. Column references borrow the input column (no copy); the
//! common arithmetic and comparison cases over `int4`, `int8` and `float8`
//! run as typed loops over plain slices ([`super::kernels`]), and those over
//! text (comparisons, LIKE, `||`, length/lower/upper) over the string
//! vector's slices ([`super::strkernels`]); everything else
//! falls back to per-row evaluation through [`crate::types`], which is exact
//! but slower.
//!
//! NULL semantics are SQL's three-valued logic: arithmetic and comparison
//! yield NULL when an input is NULL; `AND`/`OR` follow Kleene logic; `IS
//! [NOT] NULL` and `IS [NOT] DISTINCT FROM` never yield NULL.

use std::borrow::Cow;
use std::collections::HashSet;

use super::functions::Func;
use super::kernels;
use super::strkernels;
use super::vector::{Batch, Data, Vector};
use crate::error::Result;
use crate::types::funcs::string::LikePattern;
use crate::types::{self, cast::CastContext, BinaryOp, DataType, Value};

/// A bound, typed expression.
#[derive(Debug, Clone)]
pub struct Expr {
    /// What to compute.
    pub kind: ExprKind,
    /// The type of the result.
    pub ty: DataType,
}

/// The node kinds of a bound expression.
#[derive(Debug, Clone)]
pub enum ExprKind {
    /// The input batch's column at this position.
    Column(usize),
    /// A constant (already of type `ty`).
    Const(Value),
    /// `left op right`, operands cast to the operator's input types.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// Unary minus.
    Neg(Box<Expr>),
    /// `NOT x`.
    Not(Box<Expr>),
    /// `a AND b`.
    And(Box<Expr>, Box<Expr>),
    /// `a OR b`.
    Or(Box<Expr>, Box<Expr>),
    /// `x IS NULL` (or `IS NOT NULL` when the flag is true).
    IsNull(Box<Expr>, bool),
    /// `x IS [NOT] TRUE/FALSE`: (arg, the truth value tested, negated).
    IsBool(Box<Expr>, bool, bool),
    /// `a IS [NOT] DISTINCT FROM b` (negated = `IS NOT DISTINCT FROM`).
    IsDistinct(Box<Expr>, Box<Expr>, bool),
    /// Cast to `ty` in the given context (explicit casts cut strings).
    Cast(Box<Expr>, CastContext),
    /// Searched CASE: `(condition, result)` pairs, then the ELSE result.
    Case(Vec<(Expr, Expr)>, Option<Box<Expr>>),
    /// `x [NOT] IN (list)` with the list's items of `x`'s type.
    InList(Box<Expr>, Vec<Expr>, bool),
    /// `x [NOT] IN (subquery)`, the subquery's rows computed beforehand:
    /// (x, the non-NULL values, whether a NULL was among them, negated).
    InSet(Box<Expr>, HashSet<Value>, bool, bool),
    /// `x [NOT] LIKE/ILIKE pattern`: (x, pattern, case-insensitive, negated).
    Like(Box<Expr>, Box<Expr>, bool, bool),
    /// A scalar function call.
    Func(Func, Vec<Expr>),
    /// `COALESCE(...)`.
    Coalesce(Vec<Expr>),
    /// `GREATEST(...)` (flag true) or `LEAST(...)`: NULLs are ignored.
    Extreme(Vec<Expr>, bool),
}

impl Expr {
    /// A column reference.
    pub fn column(index: usize, ty: DataType) -> Expr {
        Expr {
            kind: ExprKind::Column(index),
            ty,
        }
    }

    /// A constant.
    pub fn constant(value: Value, ty: DataType) -> Expr {
        Expr {
            kind: ExprKind::Const(value),
            ty,
        }
    }

    /// The constant's value, when this node is one.
    pub fn as_const(&self) -> Option<&Value> {
        match &self.kind {
            ExprKind::Const(v) => Some(v),
            _ => None,
        }
    }

    /// The node's operands, in order.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Column(_) | ExprKind::Const(_) => vec![],
            ExprKind::Binary(_, a, b)
            | ExprKind::And(a, b)
            | ExprKind::Or(a, b)
            | ExprKind::IsDistinct(a, b, _)
            | ExprKind::Like(a, b, _, _) => vec![a, b],
            ExprKind::Neg(a)
            | ExprKind::Not(a)
            | ExprKind::IsNull(a, _)
            | ExprKind::IsBool(a, _, _)
            | ExprKind::Cast(a, _)
            | ExprKind::InSet(a, _, _, _) => vec![a],
            ExprKind::Case(arms, otherwise) => arms
                .iter()
                .flat_map(|(c, r)| [c, r])
                .chain(otherwise.as_deref())
                .collect(),
            ExprKind::InList(a, list, _) => std::iter::once(&**a).chain(list).collect(),
            ExprKind::Func(_, args) | ExprKind::Coalesce(args) | ExprKind::Extreme(args, _) => {
                args.iter().collect()
            }
        }
    }

    /// The node's operands, mutably, in order.
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match &mut self.kind {
            ExprKind::Column(_) | ExprKind::Const(_) => vec![],
            ExprKind::Binary(_, a, b)
            | ExprKind::And(a, b)
            | ExprKind::Or(a, b)
            | ExprKind::IsDistinct(a, b, _)
            | ExprKind::Like(a, b, _, _) => vec![a, b],
            ExprKind::Neg(a)
            | ExprKind::Not(a)
            | ExprKind::IsNull(a, _)
            | ExprKind::IsBool(a, _, _)
            | ExprKind::Cast(a, _)
            | ExprKind::InSet(a, _, _, _) => vec![a],
            ExprKind::Case(arms, otherwise) => arms
                .iter_mut()
                .flat_map(|(c, r)| [c, r])
                .chain(otherwise.as_deref_mut())
                .collect(),
            ExprKind::InList(a, list, _) => {
                std::iter::once(&mut **a).chain(list.iter_mut()).collect()
            }
            ExprKind::Func(_, args) | ExprKind::Coalesce(args) | ExprKind::Extreme(args, _) => {
                args.iter_mut().collect()
            }
        }
    }

    /// Evaluates the expression for every row of `batch`.
    pub fn eval<'a>(&self, batch: &'a Batch) -> Result<Cow<'a, Vector>> {
        let n = batch.len;
        Ok(match &self.kind {
            ExprKind::Column(i) => Cow::Borrowed(&batch.columns[*i]),
            ExprKind::Const(v) => Cow::Owned(Vector::repeat(self.ty, v, n)),
            ExprKind::Binary(op, l, r) => {
                if let ExprKind::Const(c) = &r.kind {
                    if !c.is_null() && l.ty == r.ty {
                        let a = l.eval(batch)?;
                        if let Value::Text(t) = c {
                            if let Some(v) = strkernels::compare_scalar(*op, &a, t) {
                                return Ok(Cow::Owned(v));
                            }
                        }
                        if let Some(v) = super::kernels::binary_scalar(*op, &a, c, self.ty)? {
                            return Ok(Cow::Owned(v));
                        }
                    }
                }
                let a = l.eval(batch)?;
                let b = r.eval(batch)?;
                Cow::Owned(binary(*op, &a, &b, &l.ty, self.ty)?)
            }
            ExprKind::Neg(x) => {
                let a = x.eval(batch)?;
                Cow::Owned(map_rows(&a, self.ty, types::negate)?)
            }
            ExprKind::Not(x) => {
                let a = x.eval(batch)?;
                Cow::Owned(map_rows(&a, self.ty, |v| {
                    Ok(v.as_bool().map_or(Value::Null, |b| Value::Bool(!b)))
                })?)
            }
            ExprKind::And(l, r) => Cow::Owned(kleene(&*l.eval(batch)?, &*r.eval(batch)?, true)),
            ExprKind::Or(l, r) => Cow::Owned(kleene(&*l.eval(batch)?, &*r.eval(batch)?, false)),
            ExprKind::IsNull(x, negated) => {
                let a = x.eval(batch)?;
                let out = (0..n).map(|i| a.is_null(i) != *negated).collect();
                Cow::Owned(Vector::from_data(DataType::Bool, Data::Bool(out)))
            }
            ExprKind::IsBool(x, truth, negated) => {
                let a = x.eval(batch)?;
                let out = (0..n)
                    .map(|i| (a.get(i).as_bool() == Some(*truth)) != *negated)
                    .collect();
                Cow::Owned(Vector::from_data(DataType::Bool, Data::Bool(out)))
            }
            ExprKind::IsDistinct(l, r, negated) => {
                let a = l.eval(batch)?;
                let b = r.eval(batch)?;
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    let (x, y) = (a.get(i), b.get(i));
                    let distinct = match (x.is_null(), y.is_null()) {
                        (true, true) => false,
                        (true, false) | (false, true) => true,
                        (false, false) => {
                            types::compare_typed(&x, &y, &l.ty) != std::cmp::Ordering::Equal
                        }
                    };
                    out.push(distinct != *negated);
                }
                Cow::Owned(Vector::from_data(DataType::Bool, Data::Bool(out)))
            }
            ExprKind::Cast(x, ctx) => {
                if x.ty == self.ty || relabels(&x.ty, &self.ty) {
                    return x.eval(batch);
                }
                let a = x.eval(batch)?;
                let from = x.ty;
                let to = self.ty;
                Cow::Owned(map_rows(&a, to, |v| types::cast_from(v, &from, &to, *ctx))?)
            }
            ExprKind::Case(arms, otherwise) => Cow::Owned(self.eval_case(batch, arms, otherwise)?),
            ExprKind::InList(x, list, negated) => {
                let a = x.eval(batch)?;
                // `name IN ('a', 'b')`: constants against the string
                // vector's slices, no `Value` per row.
                let consts: Option<Vec<Option<&str>>> = list
                    .iter()
                    .map(|e| match e.as_const() {
                        Some(Value::Text(t)) => Some(Some(&**t)),
                        Some(Value::Null) => Some(None),
                        _ => None,
                    })
                    .collect();
                if let Some(v) = consts.and_then(|c| strkernels::in_list(&a, &c, *negated)) {
                    return Ok(Cow::Owned(v));
                }
                let items = list
                    .iter()
                    .map(|e| e.eval(batch))
                    .collect::<Result<Vec<_>>>()?;
                let mut out = Vector::with_capacity(DataType::Bool, n);
                for i in 0..n {
                    let v = a.get(i);
                    if v.is_null() {
                        out.push_null();
                        continue;
                    }
                    let mut saw_null = false;
                    let mut found = false;
                    for item in &items {
                        let w = item.get(i);
                        if w.is_null() {
                            saw_null = true;
                        } else if types::compare_typed(&v, &w, &x.ty) == std::cmp::Ordering::Equal {
                            found = true;
                            break;
                        }
                    }
                    push_tri(&mut out, found, saw_null, *negated);
                }
                Cow::Owned(out)
            }
            ExprKind::InSet(x, set, has_null, negated) => {
                let a = x.eval(batch)?;
                let mut out = Vector::with_capacity(DataType::Bool, n);
                for i in 0..n {
                    let v = a.get(i);
                    if v.is_null() {
                        if set.is_empty() && !has_null {
                            out.push(&Value::Bool(*negated));
                        } else {
                            out.push_null();
                        }
                        continue;
                    }
                    push_tri(&mut out, set.contains(&v), *has_null, *negated);
                }
                Cow::Owned(out)
            }
            ExprKind::Like(x, pat, ci, negated) => {
                let a = x.eval(batch)?;
                if let Some(Value::Text(pt)) = pat.as_const() {
                    // One compiled pattern for the batch, matched over the
                    // string vector's slices.
                    let compiled = LikePattern::new(pt, None, *ci)?;
                    if let Some(v) = strkernels::like(&a, &compiled, *negated) {
                        return Ok(Cow::Owned(v));
                    }
                }
                let p = pat.eval(batch)?;
                let mut out = Vector::with_capacity(DataType::Bool, n);
                for i in 0..n {
                    match (a.get(i), p.get(i)) {
                        (Value::Text(s), Value::Text(pt)) => {
                            let m = super::functions::like(&s, &pt, *ci)?;
                            out.push(&Value::Bool(m != *negated));
                        }
                        _ => out.push_null(),
                    }
                }
                Cow::Owned(out)
            }
            ExprKind::Func(f, args) => {
                let cols = args
                    .iter()
                    .map(|e| e.eval(batch))
                    .collect::<Result<Vec<_>>>()?;
                if let [a] = &cols[..] {
                    if let Some(v) = strkernels::func(f.0, &[&**a]) {
                        return Ok(Cow::Owned(v));
                    }
                }
                let mut out = Vector::with_capacity(self.ty, n);
                let mut row = Vec::with_capacity(cols.len());
                for i in 0..n {
                    row.clear();
                    row.extend(cols.iter().map(|c| c.get(i)));
                    out.push(&f.call(&row)?);
                }
                Cow::Owned(out)
            }
            ExprKind::Extreme(items, greatest) => {
                let cols = items
                    .iter()
                    .map(|e| e.eval(batch))
                    .collect::<Result<Vec<_>>>()?;
                let mut out = Vector::with_capacity(self.ty, n);
                for i in 0..n {
                    let mut best = Value::Null;
                    for c in &cols {
                        let v = c.get(i);
                        if v.is_null() {
                            continue;
                        }
                        let o = types::compare_typed(&v, &best, &self.ty);
                        if best.is_null()
                            || (*greatest && o == std::cmp::Ordering::Greater)
                            || (!*greatest && o == std::cmp::Ordering::Less)
                        {
                            best = v;
                        }
                    }
                    out.push(&best);
                }
                Cow::Owned(out)
            }
            ExprKind::Coalesce(items) => {
                let cols = items
                    .iter()
                    .map(|e| e.eval(batch))
                    .collect::<Result<Vec<_>>>()?;
                let mut out = Vector::with_capacity(self.ty, n);
                for i in 0..n {
                    let v = cols
                        .iter()
                        .map(|c| c.get(i))
                        .find(|v| !v.is_null())
                        .unwrap_or(Value::Null);
                    out.push(&v);
                }
                Cow::Owned(out)
            }
        })
    }

    /// CASE is evaluated lazily per row so that an arm's errors (division
    /// by zero in a branch not taken) do not fire, as in PostgreSQL.
    fn eval_case(
        &self,
        batch: &Batch,
        arms: &[(Expr, Expr)],
        otherwise: &Option<Box<Expr>>,
    ) -> Result<Vector> {
        let n = batch.len;
        let mut out = Vector::with_capacity(self.ty, n);
        let mut remaining: Vec<u32> = (0..n as u32).collect();
        let mut results: Vec<Option<Value>> = vec![None; n];
        for (cond, result) in arms {
            if remaining.is_empty() {
                break;
            }
            let sub = batch.take(&remaining);
            let c = cond.eval(&sub)?;
            let hit: Vec<bool> = (0..sub.len)
                .map(|i| c.get(i).as_bool() == Some(true))
                .collect();
            let taken: Vec<u32> = remaining
                .iter()
                .zip(&hit)
                .filter(|(_, &h)| h)
                .map(|(&r, _)| r)
                .collect();
            if !taken.is_empty() {
                let sub = batch.take(&taken);
                let vals = result.eval(&sub)?;
                for (j, &r) in taken.iter().enumerate() {
                    results[r as usize] = Some(vals.get(j));
                }
            }
            remaining = remaining
                .iter()
                .zip(&hit)
                .filter(|(_, &h)| !h)
                .map(|(&r, _)| r)
                .collect();
        }
        if let (Some(e), false) = (otherwise, remaining.is_empty()) {
            let sub = batch.take(&remaining);
            let vals = e.eval(&sub)?;
            for (j, &r) in remaining.iter().enumerate() {
                results[r as usize] = Some(vals.get(j));
            }
        }
        for r in results {
            out.push(&r.unwrap_or(Value::Null));
        }
        Ok(out)
    }
}

/// Pushes the three-valued result of `x IN (...)`.
fn push_tri(out: &mut Vector, found: bool, saw_null: bool, negated: bool) {
    if found {
        out.push(&Value::Bool(!negated));
    } else if saw_null {
        out.push_null();
    } else {
        out.push(&Value::Bool(negated));
    }
}

/// Applies `f` to every non-NULL row; NULL rows stay NULL.
fn map_rows(a: &Vector, ty: DataType, f: impl Fn(&Value) -> Result<Value>) -> Result<Vector> {
    let mut out = Vector::with_capacity(ty, a.len());
    for i in 0..a.len() {
        let v = a.get(i);
        if v.is_null() {
            out.push_null();
        } else {
            out.push(&f(&v)?);
        }
    }
    Ok(out)
}

/// `a op b` row by row, through a typed kernel when one exists.
fn binary(
    op: BinaryOp,
    a: &Vector,
    b: &Vector,
    operand_ty: &DataType,
    ty: DataType,
) -> Result<Vector> {
    if let Some(v) = kernels::binary(op, a, b, ty)? {
        return Ok(v);
    }
    let text = match op {
        BinaryOp::Concat => strkernels::concat(a, b),
        _ => strkernels::compare(op, a, b),
    };
    if let Some(v) = text {
        return Ok(v);
    }
    let mut out = Vector::with_capacity(ty, a.len());
    let cmp_ty = op.is_comparison().then_some(operand_ty);
    for i in 0..a.len() {
        out.push(&types::eval_binary_typed(op, &a.get(i), &b.get(i), cmp_ty)?);
    }
    Ok(out)
}

/// Whether a cast from `from` to `to` leaves every value as it is: a
/// `text` or `varchar` relabeled `text` or unbounded `varchar` (a `char(n)`
/// source loses its trailing spaces, a bounded target may cut or refuse).
fn relabels(from: &DataType, to: &DataType) -> bool {
    matches!(from, DataType::Text | DataType::Varchar(_))
        && matches!(to, DataType::Text | DataType::Varchar(None))
}

/// Kleene AND (`and == true`) or OR over two boolean vectors.
fn kleene(a: &Vector, b: &Vector, and: bool) -> Vector {
    if let Some(v) = super::kernels::kleene_bool(a, b, and) {
        return v;
    }
    let n = a.len();
    let mut out = Vector::with_capacity(DataType::Bool, n);
    for i in 0..n {
        let x = a.get(i).as_bool();
        let y = b.get(i).as_bool();
        let r = if and {
            match (x, y) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            }
        } else {
            match (x, y) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            }
        };
        match r {
            Some(v) => out.push(&Value::Bool(v)),
            None => out.push_null(),
        }
    }
    out
}

/// The rows where a boolean vector is true (not false, not NULL).
pub fn truth_mask(v: &Vector) -> Vec<bool> {
    match &v.data {
        Data::Bool(b) => match &v.nulls {
            None => b.clone(),
            Some(nulls) => b.iter().zip(nulls).map(|(&x, &n)| x && !n).collect(),
        },
        _ => (0..v.len())
            .map(|i| v.get(i).as_bool() == Some(true))
            .collect(),
    }
}
