//! EXPLAIN ANALYZE's measured figures, as PostgreSQL 15's text format
//! prints them: a node's `(actual time=... rows=... loops=...)`, `Rows
//! Removed by Filter:`, a hash aggregate's or hash join's memory and
//! batches, and the `Buffers:` line. Figures of a node run by several
//! participants of a parallel plan are per-loop averages, buffers totals.

use super::ExplainFlags;
use crate::exec::NodeStats;

/// The ` (actual time=first..total rows=N loops=L)` of a node, as
/// PostgreSQL prints it: a node run by several participants of a parallel
/// plan shows their count as its loops and per-loop averages of rows and
/// times (its stats hold the sums).
pub(super) fn actual(st: &NodeStats, flags: ExplainFlags) -> String {
    let loops = st.loops.max(1);
    let per = |x: f64| x / loops as f64;
    let rows = per(st.rows as f64);
    if flags.timing {
        format!(
            " (actual time={:.3}..{:.3} rows={rows:.0} loops={loops})",
            per(st.first) * 1000.0,
            per(st.total) * 1000.0,
        )
    } else {
        format!(" (actual rows={rows:.0} loops={loops})")
    }
}

/// `Rows Removed by Filter: N` under a node's `Filter:` line with ANALYZE,
/// per loop as PostgreSQL prints it, and left out when none were (as
/// PostgreSQL's text format does).
pub(super) fn removed_line(
    flags: ExplainFlags,
    stats: Option<&[NodeStats]>,
    id: usize,
) -> Option<String> {
    let st = stats.filter(|_| flags.analyze)?.get(id)?;
    let per = st.removed as f64 / st.loops.max(1) as f64;
    (st.removed > 0).then(|| format!("Rows Removed by Filter: {per:.0}"))
}

/// Bytes as EXPLAIN's kB, rounded up as PostgreSQL rounds a peak.
pub(super) fn kb(bytes: u64) -> u64 {
    bytes.div_ceil(1024)
}

/// A hash aggregate's `Batches: N  Memory Usage: NkB  Disk Usage: NkB`
/// with ANALYZE (the disk part only when it spilled), as PostgreSQL 15
/// prints it.
pub(super) fn hash_agg_line(
    flags: ExplainFlags,
    stats: Option<&[NodeStats]>,
    id: usize,
) -> Option<String> {
    let h = stats.filter(|_| flags.analyze)?.get(id)?.hash?;
    let mut l = format!(
        "Batches: {}  Memory Usage: {}kB",
        h.batches,
        kb(h.peak_bytes)
    );
    if h.batches > 1 || h.disk_bytes > 0 {
        l.push_str(&format!("  Disk Usage: {}kB", kb(h.disk_bytes)));
    }
    Some(l)
}

/// A hash join's `Buckets: N  Batches: N  Memory Usage: NkB` under its
/// Hash node with ANALYZE; when the join had to split its build side into
/// more batches, PostgreSQL's `(originally N)` forms.
pub(super) fn hash_join_line(
    flags: ExplainFlags,
    stats: Option<&[NodeStats]>,
    id: usize,
) -> Option<String> {
    let h = stats.filter(|_| flags.analyze)?.get(id)?.hash?;
    Some(if h.batches != h.batches_original {
        format!(
            "Buckets: {} (originally {})  Batches: {} (originally {})  Memory Usage: {}kB",
            h.buckets,
            1024,
            h.batches,
            h.batches_original,
            kb(h.peak_bytes)
        )
    } else {
        format!(
            "Buckets: {}  Batches: {}  Memory Usage: {}kB",
            h.buckets,
            h.batches,
            kb(h.peak_bytes)
        )
    })
}

/// `Buffers: shared hit=N read=N dirtied=N written=N` (the non-zero ones),
/// at `pad` columns; none when all are zero.
pub(super) fn buffers_line(st: &NodeStats, pad: usize) -> Option<String> {
    let b = st.buffers;
    let parts: Vec<String> = [
        ("hit", b.shared_hit),
        ("read", b.shared_read),
        ("dirtied", b.shared_dirtied),
        ("written", b.shared_written),
    ]
    .into_iter()
    .filter(|&(_, v)| v > 0)
    .map(|(name, v)| format!("{name}={v}"))
    .collect();
    (!parts.is_empty()).then(|| format!("{}Buffers: shared {}", " ".repeat(pad), parts.join(" ")))
}
