//! Compiled expressions and their evaluation over batches.
//!
//! The binder turns the parser's expressions into [`Expr`] trees once per
//! statement: names are resolved to column positions of the operator's input
//! batch, every node carries its result [`DataType`], operands are already
//! cast to the types their operator takes, and functions are resolved to a
//! [`Func`](crate::nodes::Func) value. Evaluation then never looks anything up by name.
//!
//! [`Expr::eval`] evaluates a node for a whole [`Batch`] and returns a
//! [`Vector`]. Column references borrow the input column (no copy); the
//! common arithmetic and comparison cases over `int4`, `int8` and `float8`
//! run as typed loops over plain slices ([`super::kernels`]), and those over
//! text (comparisons, LIKE, `||`, length/lower/upper) over the string
//! vector's slices ([`super::strkernels`]); CASE, COALESCE, GREATEST /
//! LEAST, IS DISTINCT FROM and `IN (subquery)` read rows in their physical
//! form and copy result rows slot to slot ([`Vector::push_from`],
//! [`Vector::cmp_at`], [`super::keyset`]), so text costs no `Value` per row
//! there either; everything else falls back to per-row evaluation through
//! [`crate::types`], which is exact but slower (a text value is then one
//! allocation per row: casts from text, functions without a string kernel).
//!
//! CASE and COALESCE are lazy as in PostgreSQL: an arm (an argument) is
//! evaluated only over the rows that reach it, so its errors fire only
//! there.
//!
//! NULL semantics are SQL's three-valued logic: arithmetic and comparison
//! yield NULL when an input is NULL; `AND`/`OR` follow Kleene logic; `IS
//! [NOT] NULL` and `IS [NOT] DISTINCT FROM` never yield NULL.

use std::borrow::Cow;

use super::kernels;
use super::keyset::{eq_at, KeySet};
use super::strkernels;
use super::vector::{Batch, Data, Vector};
use crate::error::Result;
pub use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::func::Func;
use crate::types::funcs::string::LikePattern;
use crate::types::{self, BinaryOp, DataType, Value};

impl Expr {
    /// Evaluates the expression for every row of `batch`.
    pub fn eval<'a>(&self, batch: &'a Batch) -> Result<Cow<'a, Vector>> {
        let n = batch.len;
        Ok(match &self.kind {
            ExprKind::Column(i) => Cow::Borrowed(&batch.columns[*i]),
            ExprKind::Const(v) => Cow::Owned(Vector::repeat(self.ty, v, n)),
            ExprKind::Binary(op, l, r) => {
                // The left operand is evaluated once, whichever path takes
                // it: it may be a volatile function.
                let a = l.eval(batch)?;
                if let ExprKind::Const(c) = &r.kind {
                    let same = l.ty == r.ty
                        || matches!((l.ty, r.ty), (DataType::Char(_), DataType::Char(_)));
                    if !c.is_null() && same {
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
            ExprKind::And(l, r) => Cow::Owned(eval_kleene(batch, l, r, true)?),
            ExprKind::Or(l, r) => Cow::Owned(eval_kleene(batch, l, r, false)?),
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
                // Both operands are of one type: rows compared in place
                // (text as bytes), NULL not distinct from NULL.
                let a = l.eval(batch)?;
                let b = r.eval(batch)?;
                let out = (0..n).map(|i| eq_at(&a, i, &b, i) == *negated).collect();
                Cow::Owned(Vector::from_data(DataType::Bool, Data::Bool(out)))
            }
            ExprKind::Cast(x, ctx) => {
                if x.ty == self.ty || relabels(&x.ty, &self.ty) {
                    return x.eval(batch);
                }
                if matches!(x.ty, DataType::Text | DataType::Varchar(_))
                    && self.ty == DataType::Char(0)
                {
                    // To bpchar without a length: the same strings, but
                    // typed so that comparisons ignore trailing blanks.
                    let mut v = x.eval(batch)?.into_owned();
                    v.ty = self.ty;
                    return Ok(Cow::Owned(v));
                }
                let a = x.eval(batch)?;
                let from = x.ty;
                let to = self.ty;
                Cow::Owned(map_rows(&a, to, |v| types::cast_from(v, &from, &to, *ctx))?)
            }
            ExprKind::Case(arms, otherwise) => Cow::Owned(self.eval_case(batch, arms, otherwise)?),
            ExprKind::InList(x, list, negated) => {
                Cow::Owned(self.eval_in_list(batch, x, list, negated)?)
            }
            ExprKind::InSet(x, set, has_null, negated) => {
                Cow::Owned(self.eval_in_set(batch, x, set, has_null, negated)?)
            }
            ExprKind::Like(x, pat, ci, negated) => {
                Cow::Owned(self.eval_like(batch, x, pat, ci, negated)?)
            }
            ExprKind::Func(f, args) => Cow::Owned(self.eval_func(batch, f, args)?),
            ExprKind::Extreme(items, greatest) => {
                Cow::Owned(self.eval_extreme(batch, items, greatest)?)
            }
            ExprKind::Coalesce(items) => Cow::Owned(self.eval_coalesce(batch, items)?),
            ExprKind::SubPlan(sp, args) => Cow::Owned(sp.eval(args, batch, self.ty)?),
            ExprKind::Param(_) => {
                return Err(crate::err!(
                    InternalError,
                    "subquery parameter evaluated outside its subplan"
                ))
            }
        })
    }

    /// `x [NOT] IN (list)`: constant text lists against the string vector's
    /// slices; otherwise row by row, with SQL's NULL rules.
    fn eval_in_list(
        &self,
        batch: &Batch,
        x: &Expr,
        list: &[Expr],
        negated: &bool,
    ) -> Result<Vector> {
        let n = batch.len;
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
            return Ok(v);
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
        Ok(out)
    }

    /// `x [NOT] IN (subquery)` over the subquery's precomputed key set.
    fn eval_in_set(
        &self,
        batch: &Batch,
        x: &Expr,
        set: &KeySet,
        has_null: &bool,
        negated: &bool,
    ) -> Result<Vector> {
        let n = batch.len;
        // Each row is looked up by its own slot (text as the string
        // vector's bytes): no `Value` per row.
        let a = x.eval(batch)?;
        let mut out = Vector::with_capacity(DataType::Bool, n);
        for i in 0..n {
            if a.is_null(i) {
                if set.is_empty() && !has_null {
                    out.push(&Value::Bool(*negated));
                } else {
                    out.push_null();
                }
                continue;
            }
            let found = set.find(&[&a], i).is_some();
            push_tri(&mut out, found, *has_null, *negated);
        }
        Ok(out)
    }

    /// `x [NOT] LIKE/ILIKE pattern`: a constant pattern compiled once for the
    /// batch; otherwise row by row.
    fn eval_like(
        &self,
        batch: &Batch,
        x: &Expr,
        pat: &Expr,
        ci: &bool,
        negated: &bool,
    ) -> Result<Vector> {
        let n = batch.len;
        let a = x.eval(batch)?;
        if let Some(Value::Text(pt)) = pat.as_const() {
            // One compiled pattern for the batch, matched over the
            // string vector's slices.
            let compiled = LikePattern::new(pt, None, *ci)?;
            if let Some(v) = strkernels::like(&a, &compiled, *negated) {
                return Ok(v);
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
        Ok(out)
    }

    /// A scalar function: a string kernel when there is one, else row by row.
    fn eval_func(&self, batch: &Batch, f: &Func, args: &[Expr]) -> Result<Vector> {
        let n = batch.len;
        let cols = args
            .iter()
            .map(|e| e.eval(batch))
            .collect::<Result<Vec<_>>>()?;
        if let [a] = &cols[..] {
            if let Some(v) = strkernels::func(f.0, &[&**a]) {
                return Ok(v);
            }
        }
        let mut out = Vector::with_capacity(self.ty, n);
        let mut row = Vec::with_capacity(cols.len());
        for i in 0..n {
            row.clear();
            row.extend(cols.iter().map(|c| c.get(i)));
            out.push(&f.call(&row)?);
        }
        Ok(out)
    }

    /// GREATEST / LEAST: the first greatest (least) non-NULL value of each row,
    /// copied from its column.
    fn eval_extreme(&self, batch: &Batch, items: &[Expr], greatest: &bool) -> Result<Vector> {
        let n = batch.len;
        let cols = items
            .iter()
            .map(|e| e.eval(batch))
            .collect::<Result<Vec<_>>>()?;
        let mut out = Vector::with_capacity(self.ty, n);
        for i in 0..n {
            // The first of the greatest (least) non-NULL values,
            // compared in place and copied from its column.
            let mut best: Option<&Vector> = None;
            for c in &cols {
                if c.is_null(i) {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some(b) if *greatest => c.cmp_at(i, b, i).is_gt(),
                    Some(b) => c.cmp_at(i, b, i).is_lt(),
                };
                if better {
                    best = Some(c);
                }
            }
            match best {
                Some(c) => out.push_from(c, i),
                None => out.push_null(),
            }
        }
        Ok(out)
    }

    /// CASE is evaluated lazily per row so that an arm's errors (division
    /// by zero in a branch not taken) do not fire, as in PostgreSQL: each
    /// condition runs over the rows no earlier arm took, each result over
    /// the rows its condition took, and the output is assembled by copying
    /// every row from the vector that computed it (no `Value` per row).
    fn eval_case(
        &self,
        batch: &Batch,
        arms: &[(Expr, Expr)],
        otherwise: &Option<Box<Expr>>,
    ) -> Result<Vector> {
        let n = batch.len;
        // Where row `r`'s result is: (index into `parts`, row there);
        // `None` for NULL (no arm took it and there is no ELSE).
        let mut source: Vec<Option<(u32, u32)>> = vec![None; n];
        let mut parts: Vec<Cow<'_, Vector>> = Vec::new();
        let mut remaining: Vec<u32> = (0..n as u32).collect();
        let mut taken: Vec<u32> = Vec::with_capacity(n);
        let mut rest: Vec<u32> = Vec::with_capacity(n);
        for (cond, result) in arms {
            if remaining.is_empty() {
                break;
            }
            let hit = truth_mask(&*eval_rows(cond, batch, &remaining)?);
            taken.clear();
            rest.clear();
            for (&r, &h) in remaining.iter().zip(&hit) {
                if h {
                    taken.push(r);
                } else {
                    rest.push(r);
                }
            }
            if !taken.is_empty() {
                place(result, batch, &taken, &mut parts, &mut source)?;
            }
            std::mem::swap(&mut remaining, &mut rest);
        }
        if let (Some(e), false) = (otherwise, remaining.is_empty()) {
            place(e, batch, &remaining, &mut parts, &mut source)?;
        }
        Ok(assemble(self.ty, &parts, &source))
    }

    /// COALESCE, lazily as PostgreSQL evaluates it: argument `k` runs only
    /// over the rows whose earlier arguments were all NULL (so its errors
    /// fire only there), and each row is copied from the argument that gave
    /// it its value.
    fn eval_coalesce(&self, batch: &Batch, items: &[Expr]) -> Result<Vector> {
        let n = batch.len;
        let mut source: Vec<Option<(u32, u32)>> = vec![None; n];
        let mut parts: Vec<Cow<'_, Vector>> = Vec::new();
        let mut remaining: Vec<u32> = (0..n as u32).collect();
        let mut rest: Vec<u32> = Vec::with_capacity(n);
        for item in items {
            if remaining.is_empty() {
                break;
            }
            // A column or a constant is read over the whole batch (nothing
            // to fail, nothing to gather); anything else over the rows
            // still NULL.
            let whole = item.is_plain() || remaining.len() == n;
            let v = if whole {
                item.eval(batch)?
            } else {
                eval_rows(item, batch, &remaining)?
            };
            let part = parts.len() as u32;
            rest.clear();
            for (j, &r) in remaining.iter().enumerate() {
                let at = if whole { r as usize } else { j };
                if v.is_null(at) {
                    rest.push(r);
                } else {
                    source[r as usize] = Some((part, at as u32));
                }
            }
            if rest.len() < remaining.len() {
                parts.push(v);
            }
            std::mem::swap(&mut remaining, &mut rest);
        }
        Ok(assemble(self.ty, &parts, &source))
    }

    /// Evaluates the expression for the rows where `keep` is true (all rows
    /// without it), as an aggregate's FILTER runs before its argument: rows
    /// left out are NULL and never computed, so they raise no error. An
    /// expression that cannot fail runs over the whole batch as before.
    pub fn eval_where<'a>(
        &self,
        batch: &'a Batch,
        keep: Option<&[bool]>,
    ) -> Result<Cow<'a, Vector>> {
        let Some(keep) = keep else {
            return self.eval(batch);
        };
        if !self.can_fail() || keep.iter().all(|&k| k) {
            return self.eval(batch);
        }
        let rows: Vec<u32> = (0..batch.len as u32)
            .filter(|&r| keep[r as usize])
            .collect();
        let part = eval_rows(self, batch, &rows)?;
        let mut source: Vec<Option<(u32, u32)>> = vec![None; batch.len];
        for (j, &r) in rows.iter().enumerate() {
            source[r as usize] = Some((0, j as u32));
        }
        Ok(Cow::Owned(assemble(self.ty, &[part], &source)))
    }

    /// Whether evaluating the expression can raise an error for some rows
    /// and not others (overflow, division by zero, bad text input, a
    /// function's domain): such a right operand of AND / OR runs only over
    /// the rows the left one leaves undecided. Comparisons, NULL tests,
    /// LIKE with a constant pattern, `||`, widening casts and casts to text
    /// cannot; integer `/` and `%` by a constant other than 0 and -1 cannot.
    pub fn can_fail(&self) -> bool {
        use crate::types::DataType as T;
        let own = match &self.kind {
            ExprKind::Column(_)
            | ExprKind::Const(_)
            | ExprKind::Not(_)
            | ExprKind::And(..)
            | ExprKind::Or(..)
            | ExprKind::IsNull(..)
            | ExprKind::IsBool(..)
            | ExprKind::IsDistinct(..)
            | ExprKind::InList(..)
            | ExprKind::InSet(..)
            | ExprKind::Case(..)
            | ExprKind::Coalesce(_)
            | ExprKind::Extreme(..) => false,
            ExprKind::Like(_, p, _, _) => p.as_const().is_none(),
            ExprKind::Binary(op, _, b) => match op {
                _ if op.is_comparison() || *op == BinaryOp::Concat => false,
                BinaryOp::Div | BinaryOp::Mod => !matches!(
                    b.as_const().and_then(Value::as_i64),
                    Some(c) if c != 0 && c != -1
                ),
                _ => true,
            },
            ExprKind::Cast(x, _) => {
                let int = |t: &T| matches!(t, T::Int2 | T::Int4 | T::Int8);
                let width = |t: &T| match t {
                    T::Int2 => 2,
                    T::Int4 => 4,
                    _ => 8,
                };
                let (from, to) = (&x.ty, &self.ty);
                let safe = from == to
                    || relabels(from, to)
                    || matches!(to, T::Text | T::Varchar(None))
                    || (int(from) && int(to) && width(from) <= width(to))
                    || (int(from) && matches!(to, T::Float8 | T::Numeric(None)))
                    || matches!(
                        (from, to),
                        (T::Float4, T::Float8) | (T::Date, T::Timestamp(_))
                    );
                !safe
            }
            ExprKind::Neg(_) | ExprKind::Func(..) | ExprKind::Param(_) | ExprKind::SubPlan(..) => {
                true
            }
        };
        own || self.children().into_iter().any(Expr::can_fail)
    }

    /// A column reference or a constant, or a cast that only relabels one:
    /// evaluating it over rows that do not need it cannot fail and costs
    /// nothing per row.
    fn is_plain(&self) -> bool {
        match &self.kind {
            ExprKind::Column(_) | ExprKind::Const(_) => true,
            ExprKind::Cast(x, _) => (x.ty == self.ty || relabels(&x.ty, &self.ty)) && x.is_plain(),
            _ => false,
        }
    }

    /// Marks in `used` the input columns the expression reads.
    fn mark_columns(&self, used: &mut [bool]) {
        if let ExprKind::Column(i) = self.kind {
            if let Some(u) = used.get_mut(i) {
                *u = true;
            }
        }
        for c in self.children() {
            c.mark_columns(used);
        }
    }
}

/// Evaluates `result` for the rows `rows` of `batch` and records where each
/// row's value is: a plain expression over the whole batch (its row `r` is
/// row `r`), anything else over the gathered rows.
fn place<'b>(
    result: &Expr,
    batch: &'b Batch,
    rows: &[u32],
    parts: &mut Vec<Cow<'b, Vector>>,
    source: &mut [Option<(u32, u32)>],
) -> Result<()> {
    if matches!(result.as_const(), Some(Value::Null)) {
        // NULL (NULLIF's arm): the rows keep no source, and are NULL.
        return Ok(());
    }
    let part = parts.len() as u32;
    if result.is_plain() || rows.len() == batch.len {
        parts.push(result.eval(batch)?);
        for &r in rows {
            source[r as usize] = Some((part, r));
        }
    } else {
        parts.push(eval_rows(result, batch, rows)?);
        for (j, &r) in rows.iter().enumerate() {
            source[r as usize] = Some((part, j as u32));
        }
    }
    Ok(())
}

/// The result vector of CASE / COALESCE: each row copied from where
/// `source` says (NULL where it says nothing).
fn assemble(ty: DataType, parts: &[Cow<'_, Vector>], source: &[Option<(u32, u32)>]) -> Vector {
    let mut out = Vector::with_capacity(ty, source.len());
    for s in source {
        match *s {
            Some((p, j)) => out.push_from(&parts[p as usize], j as usize),
            None => out.push_null(),
        }
    }
    out
}

/// Evaluates `e` over the rows `rows` of `batch` (ascending positions):
/// over the batch itself when that is every row, else over a gather of
/// only the columns `e` reads (the others stay empty).
fn eval_rows<'b>(e: &Expr, batch: &'b Batch, rows: &[u32]) -> Result<Cow<'b, Vector>> {
    if rows.len() == batch.len {
        return e.eval(batch);
    }
    let mut used = vec![false; batch.columns.len()];
    e.mark_columns(&mut used);
    let columns = batch
        .columns
        .iter()
        .zip(&used)
        .map(|(c, &u)| if u { c.take(rows) } else { Vector::new(c.ty) })
        .collect();
    let sub = Batch {
        columns,
        len: rows.len(),
    };
    Ok(Cow::Owned(e.eval(&sub)?.into_owned()))
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

/// `l AND r` (`and == true`) or `l OR r` over a batch. When `r` can fail
/// it runs only over the rows `l` leaves undecided (not false for AND, not
/// true for OR), as PostgreSQL's short-circuit evaluation runs it: `a <> 0
/// and 10 / a > 1` never divides by zero. Otherwise both run over the whole
/// batch, the fast typed path.
fn eval_kleene(batch: &Batch, l: &Expr, r: &Expr, and: bool) -> Result<Vector> {
    let a = l.eval(batch)?;
    if !r.can_fail() {
        return Ok(kleene(&a, &*r.eval(batch)?, and));
    }
    let decided = |i: usize| !a.is_null(i) && a.get(i).as_bool() == Some(!and);
    let open: Vec<u32> = (0..batch.len as u32)
        .filter(|&i| !decided(i as usize))
        .collect();
    if open.len() == batch.len {
        return Ok(kleene(&a, &*r.eval(batch)?, and));
    }
    let b = if open.is_empty() {
        None
    } else {
        Some(eval_rows(r, batch, &open)?)
    };
    let mut out = Vector::with_capacity(DataType::Bool, batch.len);
    let mut next = 0usize;
    for i in 0..batch.len {
        if next < open.len() && open[next] as usize == i {
            let b = b.as_deref().expect("open rows were evaluated");
            let (x, y) = (a.get(i).as_bool(), b.get(next).as_bool());
            next += 1;
            let v = if and {
                match (x, y) {
                    (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                }
            } else {
                match (x, y) {
                    (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                }
            };
            match v {
                Some(v) => out.push(&Value::Bool(v)),
                None => out.push_null(),
            }
        } else {
            out.push(&Value::Bool(!and));
        }
    }
    Ok(out)
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

/// How many rows of the boolean vector `v` are true (NULL is not): the
/// count a `count(*) ... WHERE` needs, without building the mask.
pub fn count_true(v: &Vector) -> usize {
    match (&v.data, &v.nulls) {
        // `bool` is one byte 0 or 1: byte sums of at most 255 of them
        // cannot overflow, and vectorize (16 per instruction).
        (Data::Bool(b), None) => b
            .chunks(255)
            .map(|c| usize::from(c.iter().fold(0u8, |n, &x| n + u8::from(x))))
            .sum(),
        (Data::Bool(b), Some(nulls)) => b.iter().zip(nulls).filter(|(&x, &n)| x && !n).count(),
        _ => (0..v.len())
            .filter(|&i| v.get(i).as_bool() == Some(true))
            .count(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_true_counts_what_truth_mask_keeps() {
        let t = Value::Bool(true);
        let f = Value::Bool(false);
        for vals in [
            vec![t.clone(), f.clone(), t.clone()],
            vec![t.clone(), Value::Null, f.clone(), t.clone(), Value::Null],
            vec![],
            (0..1000).map(|i| Value::Bool(i % 3 != 0)).collect(),
        ] {
            let v = Vector::from_values(DataType::Bool, &vals);
            let kept = truth_mask(&v).iter().filter(|&&k| k).count();
            assert_eq!(count_true(&v), kept, "{vals:?}");
            assert_eq!(kept, vals.iter().filter(|x| **x == t).count());
        }
    }
}
