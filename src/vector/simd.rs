//! Running a typed loop with the CPU's wider vector instructions.
//!
//! The crate is built for the baseline x86-64 (SSE2), whose integer
//! vectors have no 32-bit `min`/`max` and no variable blend, so a masked
//! fold over a page's values compiles to a branch per row; on shuffled
//! data that branch is mispredicted about as often as a row is kept.
//! [`avx2!`](crate::avx2) compiles the same body a second time with AVX2
//! enabled and runs that copy when the CPU has it (checked at run time,
//! the answer cached by `std`); the body must be plain safe Rust, so both
//! copies compute exactly the same values.
//!
//! Invariant: the AVX2 copy is entered only after
//! `is_x86_feature_detected!("avx2")` said yes on this CPU.

/// Whether the running CPU has AVX2 (false off x86-64).
#[inline]
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `avx2!(|args| body)`: evaluates `body` (whose free variables are
/// `args`, passed by value) compiled with AVX2 enabled when the CPU has it,
/// else compiled for the baseline. The body is safe code; only the entry
/// to its AVX2 copy is `unsafe`, justified by the run-time check.
#[macro_export]
macro_rules! avx2 {
    (|$($arg:ident : $ty:ty),* $(,)?| -> $ret:ty $body:block) => {{
        #[inline(always)]
        fn body($($arg: $ty),*) -> $ret $body
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn wide($($arg: $ty),*) -> $ret {
            body($($arg),*)
        }
        #[cfg(target_arch = "x86_64")]
        if $crate::vector::simd::has_avx2() {
            // SAFETY: the CPU was just found to have AVX2.
            unsafe { wide($($arg),*) }
        } else {
            body($($arg),*)
        }
        #[cfg(not(target_arch = "x86_64"))]
        body($($arg),*)
    }};
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_copies_compute_the_same() {
        let all: Vec<i32> = (0..300).map(|i| (i * 7919 % 1001) - 500).collect();
        let v = &all[..];
        let got = crate::avx2!(|v: &[i32]| -> i32 { v.iter().copied().fold(i32::MAX, i32::min) });
        assert_eq!(got, *v.iter().min().unwrap());
    }
}
