//! The statistical aggregates' states: variance and standard deviation
//! (`var_pop`, `var_samp`/`variance`, `stddev_pop`, `stddev_samp`/`stddev`)
//! and the two-argument float8 regressions (`corr`, `covar_pop`,
//! `covar_samp`, `regr_*`), as PostgreSQL's `float.c` and `numeric.c`.
//!
//! Float inputs use the Youngs-Cramer running sums PostgreSQL 12+ keeps
//! (`float8_accum`, `float8_regr_accum`), so results agree bit for bit.
//! Integer and numeric inputs keep exact sums of `x` and `x*x` (`i128` for
//! int2/int4, [`Num`] otherwise) and finish with PostgreSQL's
//! `numeric_stddev_internal`: `(N*Sxx - Sx*Sx) / (N*(N-1))` divided at
//! `select_div_scale`, the square root at the same scale, so the printed
//! scale is PostgreSQL's.

use super::super::float;
use super::super::numeric::Numeric as Num;
use crate::error::Result;

/// Which moment a variance-family aggregate returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// `var_pop`.
    VarPop,
    /// `var_samp`, `variance`.
    VarSamp,
    /// `stddev_pop`.
    StddevPop,
    /// `stddev_samp`, `stddev`.
    StddevSamp,
}

impl Moment {
    fn sample(self) -> bool {
        matches!(self, Moment::VarSamp | Moment::StddevSamp)
    }
    fn root(self) -> bool {
        matches!(self, Moment::StddevPop | Moment::StddevSamp)
    }
}

/// `float8_accum`'s state: count, sum and sum of squared deviations.
#[derive(Debug, Clone, Copy, Default)]
pub struct FloatMoments {
    n: f64,
    sx: f64,
    sxx: f64,
}

impl FloatMoments {
    /// Folds in one value (PostgreSQL's `float8_accum`).
    pub fn add(&mut self, x: f64) -> Result<()> {
        let old_n = self.n;
        let old_sx = self.sx;
        self.n += 1.0;
        self.sx += x;
        if old_n > 0.0 {
            let tmp = x * self.n - self.sx;
            self.sxx += tmp * tmp / (self.n * old_n);
            if self.sx.is_infinite() || self.sxx.is_infinite() {
                if !old_sx.is_infinite() && !x.is_infinite() {
                    return Err(float::overflow());
                }
                self.sxx = f64::NAN;
            }
        } else if x.is_nan() || x.is_infinite() {
            self.sxx = f64::NAN;
        }
        Ok(())
    }

    /// Combines two partial states (PostgreSQL's `float8_combine`).
    pub fn merge(&mut self, o: &FloatMoments) -> Result<()> {
        if o.n == 0.0 {
            return Ok(());
        }
        if self.n == 0.0 {
            *self = *o;
            return Ok(());
        }
        let n = self.n + o.n;
        let sx = float::add_f64(self.sx, o.sx)?;
        let tmp = self.sx / self.n - o.sx / o.n;
        let sxx = self.sxx + o.sxx + self.n * o.n * tmp * tmp / n;
        self.n = n;
        self.sx = sx;
        self.sxx = float::check(sxx, self.sxx.is_infinite() || o.sxx.is_infinite(), true)?;
        Ok(())
    }

    /// The moment, or `None` (NULL) for too few rows.
    pub fn finish(&self, m: Moment) -> Option<f64> {
        let n = self.n;
        if n == 0.0 || (m.sample() && n <= 1.0) {
            return None;
        }
        let var = self.sxx / if m.sample() { n - 1.0 } else { n };
        Some(if m.root() { var.sqrt() } else { var })
    }
}

/// Exact sums for integer and numeric inputs.
#[derive(Debug, Clone)]
pub enum ExactMoments {
    /// int2 / int4 inputs: `x*x` fits easily.
    Small { sx: i128, sxx: i128 },
    /// int8 and numeric inputs.
    Wide { sx: Num, sxx: Num },
}

impl ExactMoments {
    /// Folds in an int2/int4 value.
    #[inline]
    pub fn add_small(&mut self, x: i64) {
        match self {
            ExactMoments::Small { sx, sxx } => {
                *sx += x as i128;
                *sxx += (x as i128) * (x as i128);
            }
            ExactMoments::Wide { .. } => self.add_num(&Num::from_i64(x)),
        }
    }

    /// Folds in an int8 or numeric value.
    pub fn add_num(&mut self, x: &Num) {
        if let ExactMoments::Small { sx, sxx } = self {
            *self = ExactMoments::Wide {
                sx: Num::from_i128(*sx),
                sxx: Num::from_i128(*sxx),
            };
        }
        if let ExactMoments::Wide { sx, sxx } = self {
            sx.add_assign(x);
            sxx.add_assign(&x.mul(x));
        }
    }

    /// Combines two partial states.
    pub fn merge(&mut self, o: &ExactMoments) {
        match (&mut *self, o) {
            (ExactMoments::Small { sx, sxx }, ExactMoments::Small { sx: s2, sxx: q2 }) => {
                *sx += s2;
                *sxx += q2;
            }
            _ => {
                let (s2, q2) = o.wide();
                let (s1, q1) = self.wide();
                *self = ExactMoments::Wide {
                    sx: s1.add(&s2),
                    sxx: q1.add(&q2),
                };
            }
        }
    }

    fn wide(&self) -> (Num, Num) {
        match self {
            ExactMoments::Small { sx, sxx } => (Num::from_i128(*sx), Num::from_i128(*sxx)),
            ExactMoments::Wide { sx, sxx } => (sx.clone(), sxx.clone()),
        }
    }

    /// The moment over `n` values (PostgreSQL's
    /// `numeric_stddev_internal`), or `None` (NULL) for too few rows.
    pub fn finish(&self, m: Moment, n: i64) -> Option<Num> {
        if n == 0 || (m.sample() && n <= 1) {
            return None;
        }
        let (sx, sxx) = self.wide();
        if !sx.is_finite() || !sxx.is_finite() {
            return Some(Num::nan());
        }
        let vn = Num::from_i64(n);
        let numerator = vn.mul(&sxx).sub(&sx.mul(&sx));
        if numerator.is_negative() || numerator.is_zero() {
            // Rounding can make it negative; PostgreSQL answers 0.
            return Some(Num::zero());
        }
        let denom = if m.sample() {
            vn.mul(&Num::from_i64(n - 1))
        } else {
            vn.mul(&vn)
        };
        let rscale = numerator.div_scale(&denom);
        let var = numerator.div_round(&denom, rscale);
        Some(if m.root() {
            var.sqrt_scale(rscale)
        } else {
            var
        })
    }
}

/// Which result a two-argument float8 aggregate returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Regr {
    /// `corr(Y, X)`.
    Corr,
    /// `covar_pop(Y, X)`.
    CovarPop,
    /// `covar_samp(Y, X)`.
    CovarSamp,
    /// `regr_sxx(Y, X)`.
    Sxx,
    /// `regr_syy(Y, X)`.
    Syy,
    /// `regr_sxy(Y, X)`.
    Sxy,
    /// `regr_avgx(Y, X)`.
    AvgX,
    /// `regr_avgy(Y, X)`.
    AvgY,
    /// `regr_r2(Y, X)`.
    R2,
    /// `regr_slope(Y, X)`.
    Slope,
    /// `regr_intercept(Y, X)`.
    Intercept,
}

/// `float8_regr_accum`'s state.
#[derive(Debug, Clone, Copy, Default)]
pub struct RegrState {
    n: f64,
    sx: f64,
    sxx: f64,
    sy: f64,
    syy: f64,
    sxy: f64,
}

impl RegrState {
    /// Folds in one (Y, X) pair (PostgreSQL's `float8_regr_accum`).
    pub fn add(&mut self, y: f64, x: f64) -> Result<()> {
        let old = *self;
        self.n += 1.0;
        self.sx += x;
        self.sy += y;
        if old.n > 0.0 {
            let tx = x * self.n - self.sx;
            let ty = y * self.n - self.sy;
            let scale = 1.0 / (self.n * old.n);
            self.sxx += tx * tx * scale;
            self.syy += ty * ty * scale;
            self.sxy += tx * ty * scale;
            if self.sx.is_infinite() || self.sxx.is_infinite() {
                if !old.sx.is_infinite() && !x.is_infinite() {
                    return Err(float::overflow());
                }
                self.sxx = f64::NAN;
            }
            if self.sy.is_infinite() || self.syy.is_infinite() {
                if !old.sy.is_infinite() && !y.is_infinite() {
                    return Err(float::overflow());
                }
                self.syy = f64::NAN;
            }
            if self.sxy.is_infinite() {
                if !old.sx.is_infinite()
                    && !x.is_infinite()
                    && !old.sy.is_infinite()
                    && !y.is_infinite()
                {
                    return Err(float::overflow());
                }
                self.sxy = f64::NAN;
            }
        } else {
            if x.is_nan() || x.is_infinite() {
                self.sxx = f64::NAN;
                self.sxy = f64::NAN;
            }
            if y.is_nan() || y.is_infinite() {
                self.syy = f64::NAN;
                self.sxy = f64::NAN;
            }
        }
        Ok(())
    }

    /// Combines two partial states (PostgreSQL's `float8_regr_combine`).
    pub fn merge(&mut self, o: &RegrState) {
        if o.n == 0.0 {
            return;
        }
        if self.n == 0.0 {
            *self = *o;
            return;
        }
        let n = self.n + o.n;
        let tx = self.sx / self.n - o.sx / o.n;
        let ty = self.sy / self.n - o.sy / o.n;
        let w = self.n * o.n / n;
        self.sxx += o.sxx + w * tx * tx;
        self.syy += o.syy + w * ty * ty;
        self.sxy += o.sxy + w * tx * ty;
        self.sx += o.sx;
        self.sy += o.sy;
        self.n = n;
    }

    /// The result, or `None` (NULL) as PostgreSQL's final functions say.
    pub fn finish(&self, r: Regr) -> Option<f64> {
        let RegrState {
            n,
            sx,
            sxx,
            sy,
            syy,
            sxy,
        } = *self;
        if n < 1.0 || (r == Regr::CovarSamp && n < 2.0) {
            return None;
        }
        Some(match r {
            Regr::Corr => {
                if sxx == 0.0 || syy == 0.0 {
                    return None;
                }
                sxy / (sxx * syy).sqrt()
            }
            Regr::CovarPop => sxy / n,
            Regr::CovarSamp => sxy / (n - 1.0),
            Regr::Sxx => sxx,
            Regr::Syy => syy,
            Regr::Sxy => sxy,
            Regr::AvgX => sx / n,
            Regr::AvgY => sy / n,
            Regr::R2 => {
                if sxx == 0.0 {
                    return None;
                }
                if syy == 0.0 {
                    return Some(1.0);
                }
                (sxy * sxy) / (sxx * syy)
            }
            Regr::Slope => {
                if sxx == 0.0 {
                    return None;
                }
                sxy / sxx
            }
            Regr::Intercept => {
                if sxx == 0.0 {
                    return None;
                }
                (sy - sx * sxy / sxx) / n
            }
        })
    }
}
