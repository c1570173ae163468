//! The arithmetic of the table: medians, speed-up ratios, and how times and
//! memory sizes are printed.
//!
//! Speed-up is always `peer / heapdb` (above 1 means heapdb is faster), so a
//! row reads "heapdb is 12.3x PostgreSQL".

use std::time::Duration;

/// Median of the samples (mean of the middle two for an even count); `None`
/// when there are none.
pub fn median(samples: &[Duration]) -> Option<Duration> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort();
    let mid = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2
    })
}

/// heapdb's speed-up over a peer: `peer / heapdb`. `None` when either time is
/// missing or heapdb's is zero (a reported 0.000 ms).
pub fn speedup(heapdb: Option<Duration>, peer: Option<Duration>) -> Option<f64> {
    let (h, p) = (heapdb?, peer?);
    if h.is_zero() {
        return None;
    }
    Some(p.as_secs_f64() / h.as_secs_f64())
}

/// A speed-up as the table prints it: `12.3x`, `0.52x`, `1234x`.
pub fn fmt_ratio(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}x")
    } else if r >= 10.0 {
        format!("{r:.1}x")
    } else {
        format!("{r:.2}x")
    }
}

/// A duration with units chosen for reading: `0.412 ms`, `12.3 ms`, `1.23 s`.
pub fn fmt_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.3} ms")
    } else if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else if ms < 100_000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{:.0} s", ms / 1000.0)
    }
}

/// A size in KiB as `812 KiB`, `45.2 MiB`, `6.01 GiB`.
pub fn fmt_kib(kib: u64) -> String {
    let k = kib as f64;
    if kib < 1024 {
        format!("{kib} KiB")
    } else if k < 1024.0 * 1024.0 {
        format!("{:.1} MiB", k / 1024.0)
    } else {
        format!("{:.2} GiB", k / (1024.0 * 1024.0))
    }
}

/// A byte count written the way PostgreSQL settings take it: `6GB`, `307MB`, `64kB`.
pub fn pg_size(bytes: u64) -> String {
    const KB: u64 = 1024;
    if bytes % (KB * KB * KB) == 0 {
        format!("{}GB", bytes / (KB * KB * KB))
    } else if bytes % (KB * KB) == 0 {
        format!("{}MB", bytes / (KB * KB))
    } else {
        format!("{}kB", bytes.div_ceil(KB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[ms(5)]), Some(ms(5)));
        assert_eq!(median(&[ms(9), ms(1), ms(5)]), Some(ms(5)));
        assert_eq!(median(&[ms(4), ms(1), ms(9), ms(2)]), Some(ms(3)));
        // An outlier moves the mean, not the median.
        assert_eq!(
            median(&[ms(10), ms(11), ms(12), ms(13), ms(5000)]),
            Some(ms(12))
        );
    }

    #[test]
    fn speedup_is_peer_over_heapdb() {
        assert!((speedup(Some(ms(10)), Some(ms(123))).unwrap() - 12.3).abs() < 1e-9);
        assert_eq!(speedup(Some(ms(200)), Some(ms(100))), Some(0.5));
        assert_eq!(speedup(None, Some(ms(1))), None);
        assert_eq!(speedup(Some(ms(1)), None), None);
        assert_eq!(speedup(Some(Duration::ZERO), Some(ms(1))), None);
    }

    #[test]
    fn ratio_and_duration_text() {
        assert_eq!(fmt_ratio(12.34), "12.3x");
        assert_eq!(fmt_ratio(0.523), "0.52x");
        assert_eq!(fmt_ratio(1234.4), "1234x");
        assert_eq!(fmt_duration(Duration::from_micros(412)), "0.412 ms");
        assert_eq!(fmt_duration(Duration::from_micros(12_345)), "12.3 ms");
        assert_eq!(fmt_duration(ms(1234)), "1.23 s");
        assert_eq!(fmt_duration(ms(154_000)), "154 s");
    }

    #[test]
    fn sizes() {
        assert_eq!(fmt_kib(812), "812 KiB");
        assert_eq!(fmt_kib(46_285), "45.2 MiB");
        assert_eq!(fmt_kib(6 * 1024 * 1024 + 10_000), "6.01 GiB");
        assert_eq!(pg_size(6 << 30), "6GB");
        assert_eq!(pg_size(307 << 20), "307MB");
        assert_eq!(pg_size(64 << 10), "64kB");
    }
}
