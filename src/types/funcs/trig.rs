//! The trigonometric functions of double precision, as PostgreSQL 15's
//! `float.c`: radian forms straight from the C library, degree forms
//! (`sind`, `cosd`, ...) reduced to the first quadrant and scaled so that
//! the exact angles (30, 45, 60, 90 degrees) give exact answers
//! (`sind(30) = 0.5`, `tand(45) = 1`). An infinite argument of the
//! periodic functions, or one outside [-1, 1] of the inverse ones, is
//! `input is out of range` (22003); NaN gives NaN.

use super::numfunc::Trig;
use crate::err;
use crate::error::{Error, Result};
use std::hint::black_box;

const RADIANS_PER_DEGREE: f64 = 0.017_453_292_519_943_295;

fn out_of_range() -> Error {
    err!(NumericValueOutOfRange, "input is out of range")
}

// `black_box` keeps each intermediate a real double, as PostgreSQL's
// `volatile` locals do, so the scaled results stay exact.
fn sin_30() -> f64 {
    black_box((30.0 * RADIANS_PER_DEGREE).sin())
}

fn one_minus_cos_60() -> f64 {
    black_box(1.0 - (60.0 * RADIANS_PER_DEGREE).cos())
}

fn sind_0_to_30(x: f64) -> f64 {
    let sin_x = black_box((x * RADIANS_PER_DEGREE).sin());
    (sin_x / sin_30()) / 2.0
}

fn cosd_0_to_60(x: f64) -> f64 {
    let one_minus_cos_x = black_box(1.0 - (x * RADIANS_PER_DEGREE).cos());
    1.0 - (one_minus_cos_x / one_minus_cos_60()) / 2.0
}

fn sind_q1(x: f64) -> f64 {
    if x <= 30.0 {
        sind_0_to_30(x)
    } else {
        cosd_0_to_60(90.0 - x)
    }
}

fn cosd_q1(x: f64) -> f64 {
    if x <= 60.0 {
        cosd_0_to_60(x)
    } else {
        sind_0_to_30(90.0 - x)
    }
}

fn asind_q1(x: f64) -> f64 {
    let asin_0_5 = black_box(0.5f64.asin());
    let acos_0_5 = black_box(0.5f64.acos());
    if x <= 0.5 {
        (black_box(x.asin()) / asin_0_5) * 30.0
    } else {
        90.0 - (black_box(x.acos()) / acos_0_5) * 60.0
    }
}

fn acosd_q1(x: f64) -> f64 {
    let asin_0_5 = black_box(0.5f64.asin());
    let acos_0_5 = black_box(0.5f64.acos());
    if x <= 0.5 {
        90.0 - (black_box(x.asin()) / asin_0_5) * 30.0
    } else {
        (black_box(x.acos()) / acos_0_5) * 60.0
    }
}

/// Reduces a finite angle in degrees to [0, 90]; returns it with the
/// sign the result takes, given how the function behaves under
/// `-x` (`odd`), `360 - x` and `180 - x` (`flips_180`).
fn reduce(x: f64, odd: bool, flips_180: bool) -> (f64, f64) {
    let mut sign = 1.0;
    let mut a = x % 360.0;
    if a < 0.0 {
        a = -a;
        if odd {
            sign = -sign;
        }
    }
    if a > 180.0 {
        a = 360.0 - a;
        if odd {
            sign = -sign;
        }
    }
    if a > 90.0 {
        a = 180.0 - a;
        if flips_180 {
            sign = -sign;
        }
    }
    (a, sign)
}

fn overflow_check(r: f64) -> Result<f64> {
    if r.is_infinite() {
        return Err(crate::types::float::overflow());
    }
    Ok(r)
}

/// One-argument trigonometric functions.
pub(super) fn eval(t: Trig, x: f64) -> Result<f64> {
    if x.is_nan() {
        return Ok(f64::NAN);
    }
    let periodic = matches!(
        t,
        Trig::Sin
            | Trig::Cos
            | Trig::Tan
            | Trig::Cot
            | Trig::Sind
            | Trig::Cosd
            | Trig::Tand
            | Trig::Cotd
    );
    if periodic && x.is_infinite() {
        return Err(out_of_range());
    }
    let inverse = matches!(t, Trig::Asin | Trig::Acos | Trig::Asind | Trig::Acosd);
    if inverse && !(-1.0..=1.0).contains(&x) {
        return Err(out_of_range());
    }
    Ok(match t {
        Trig::Sin => overflow_check(x.sin())?,
        Trig::Cos => overflow_check(x.cos())?,
        Trig::Tan => x.tan(),
        Trig::Cot => 1.0 / x.tan(),
        Trig::Asin => overflow_check(x.asin())?,
        Trig::Acos => overflow_check(x.acos())?,
        Trig::Atan => overflow_check(x.atan())?,
        Trig::Sind => {
            let (a, sign) = reduce(x, true, false);
            overflow_check(sign * sind_q1(a))?
        }
        Trig::Cosd => {
            let (a, sign) = reduce(x.abs(), false, true);
            overflow_check(sign * cosd_q1(a))?
        }
        Trig::Tand | Trig::Cotd => {
            let (a, sign) = reduce(x, true, true);
            let r = if t == Trig::Tand {
                let tan_45 = black_box(sind_q1(45.0) / cosd_q1(45.0));
                sign * (black_box(sind_q1(a) / cosd_q1(a)) / tan_45)
            } else {
                let cot_45 = black_box(cosd_q1(45.0) / sind_q1(45.0));
                sign * (black_box(cosd_q1(a) / sind_q1(a)) / cot_45)
            };
            // Never minus zero.
            if r == 0.0 {
                0.0
            } else {
                r
            }
        }
        Trig::Asind => overflow_check(if x >= 0.0 { asind_q1(x) } else { -asind_q1(-x) })?,
        Trig::Acosd => overflow_check(if x >= 0.0 {
            acosd_q1(x)
        } else {
            90.0 + asind_q1(-x)
        })?,
        Trig::Atand => {
            let atan_1 = black_box(1.0f64.atan());
            overflow_check((black_box(x.atan()) / atan_1) * 45.0)?
        }
        Trig::Atan2 | Trig::Atan2d => eval2(t, x, 1.0),
    })
}

/// `atan2(y, x)` and `atan2d(y, x)`.
pub(super) fn eval2(t: Trig, y: f64, x: f64) -> f64 {
    if y.is_nan() || x.is_nan() {
        return f64::NAN;
    }
    let r = black_box(y.atan2(x));
    if t == Trig::Atan2d {
        (r / black_box(1.0f64.atan())) * 45.0
    } else {
        r
    }
}
