//! Unit tests of the log writer and reader: framing on disk, the end of the
//! log, records spanning segment files, group commit with threads.

use std::sync::Arc;

use super::record::{WalRecord, ANY_PREV};
use super::recovery::{find_end, find_end_clean};
use super::segment::{list_segments, SegmentReader, SEG_SIZE};
use super::writer::Wal;

fn commit(drops: Vec<u32>) -> WalRecord {
    WalRecord::Commit { drops }
}

fn read_all(dir: &std::path::Path, start: u64) -> Vec<(u64, u32, WalRecord)> {
    let mut rd = SegmentReader::new(dir, start, ANY_PREV);
    let mut out = Vec::new();
    while let Some(r) = rd.next_record().unwrap() {
        out.push((r.end, r.xid, r.rec));
    }
    out
}

#[test]
fn records_written_and_flushed_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(dir.path(), 0, 0, 0, false).unwrap();
    let mut ends = Vec::new();
    for x in 3..103u32 {
        ends.push(wal.insert(x, &commit(vec![x; (x % 5) as usize])));
    }
    assert_eq!(wal.flushed_lsn(), 0);
    wal.flush(ends[10]).unwrap();
    // A flush writes everything inserted so far, not just up to its target.
    assert_eq!(wal.flushed_lsn(), *ends.last().unwrap());
    let got = read_all(dir.path(), 0);
    assert_eq!(got.len(), 100);
    for (i, (end, xid, rec)) in got.into_iter().enumerate() {
        let x = 3 + i as u32;
        assert_eq!(
            (end, xid, rec),
            (ends[i], x, commit(vec![x; (x % 5) as usize]))
        );
    }
    let e = find_end(dir.path(), 0).unwrap();
    assert_eq!((e.end, e.records), (*ends.last().unwrap(), 100));
    let s = wal.stats();
    assert_eq!((s.records, s.flushes), (100, 1));
}

#[test]
fn unflushed_and_damaged_records_end_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(dir.path(), 0, 0, 0, false).unwrap();
    let a = wal.insert(3, &commit(vec![]));
    let b = wal.insert(4, &commit(vec![1]));
    let c = wal.insert(5, &commit(vec![2]));
    wal.flush(c).unwrap();
    // Never flushed: lost in a "crash".
    wal.insert(6, &commit(vec![]));
    drop(wal);
    assert_eq!(find_end(dir.path(), 0).unwrap().end, c);
    // Flip a payload byte of the second record: a valid record follows,
    // so the log is damaged in the middle, and reading it fails.
    let seg = dir.path().join(super::segment::seg_name(0));
    let good = std::fs::read(&seg).unwrap();
    let mut bytes = good.clone();
    bytes[(b - 2) as usize] ^= 1;
    std::fs::write(&seg, &bytes).unwrap();
    let e = find_end(dir.path(), 0).unwrap_err();
    assert_eq!(e.code, crate::SqlState::DataCorrupted);
    assert!(
        e.message
            .starts_with(&format!("invalid WAL record at {}", super::lsn_text(a))),
        "{}",
        e.message
    );
    // The same flip in the last record is a torn tail: the log ends after
    // the second.
    let mut bytes = good;
    bytes[(c - 2) as usize] ^= 1;
    std::fs::write(&seg, &bytes).unwrap();
    let e = find_end(dir.path(), 0).unwrap();
    assert_eq!((e.end, e.prev, e.records), (b, a, 2));
    // Writing continues there, and the damaged tail is gone.
    let wal = Wal::open(dir.path(), e.end, e.prev, 0, false).unwrap();
    let d = wal.insert(7, &commit(vec![]));
    wal.flush_all().unwrap();
    let got = read_all(dir.path(), 0);
    assert_eq!(got.iter().map(|g| g.1).collect::<Vec<_>>(), vec![3, 4, 7]);
    assert_eq!(got[2].0, d);
}

#[test]
fn a_clean_end_is_trusted_only_where_the_log_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(dir.path(), 0, 0, 0, false).unwrap();
    let a = wal.insert(3, &commit(vec![]));
    let b = wal.insert(4, &commit(vec![1]));
    wal.flush(b).unwrap();
    drop(wal);
    let full = find_end(dir.path(), 0).unwrap();
    // The control file names the last record's end: the same answer.
    assert_eq!(find_end_clean(dir.path(), 0, b).unwrap(), full);
    assert_eq!(find_end_clean(dir.path(), a, b).unwrap().records, 1);
    // It names an earlier end, yet a valid record follows it: the full
    // read decides (and finds the later record).
    assert_eq!(find_end_clean(dir.path(), 0, a).unwrap(), full);
    // It names an end the records do not reach: the full read decides.
    assert_eq!(find_end_clean(dir.path(), 0, b + 8).unwrap(), full);
    // Damage before the named end is reported as the full read reports it.
    let seg = dir.path().join(super::segment::seg_name(0));
    let wal = Wal::open(dir.path(), b, a, 0, false).unwrap();
    let c = wal.insert(5, &commit(vec![]));
    wal.flush(c).unwrap();
    drop(wal);
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes[(b - 2) as usize] ^= 1;
    std::fs::write(&seg, &bytes).unwrap();
    let e = find_end_clean(dir.path(), 0, c).unwrap_err();
    assert_eq!(e.code, crate::SqlState::DataCorrupted);
}

#[test]
fn records_span_segment_files_and_old_segments_go() {
    let dir = tempfile::tempdir().unwrap();
    let start = 2 * SEG_SIZE - 30;
    let wal = Wal::open(dir.path(), start, 0, 0, false).unwrap();
    let mut last = 0;
    for x in 3..20u32 {
        last = wal.insert(x, &commit(vec![x; 4]));
    }
    wal.flush(last).unwrap();
    assert_eq!(list_segments(dir.path()).unwrap(), vec![1, 2]);
    let got = read_all(dir.path(), start);
    assert_eq!(got.len(), 17);
    assert_eq!(got.last().unwrap().0, last);
    // Segment 1 ends before a redo point in segment 2: it is recycled.
    assert_eq!(wal.remove_old_segments(2 * SEG_SIZE + 5).unwrap(), 1);
    assert_eq!(list_segments(dir.path()).unwrap(), vec![2]);
}

#[test]
fn group_commit_shares_flushes_between_threads() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(dir.path(), 0, 0, 0, true).unwrap();
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || {
                for i in 0..100u32 {
                    let lsn = wal.insert(1000 * t + i + 3, &commit(vec![]));
                    wal.flush(lsn).unwrap();
                    assert!(wal.flushed_lsn() >= lsn);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = wal.stats();
    assert_eq!(s.records, 800);
    assert_eq!(s.flush_lsn, s.insert_lsn);
    assert!(s.flushes <= 800, "{} flushes", s.flushes);
    assert_eq!(read_all(dir.path(), 0).len(), 800);
}

#[test]
fn background_flusher_flushes_async_commits() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(dir.path(), 0, 0, 0, false).unwrap();
    let h = wal.start_background_flusher();
    let lsn = wal.insert(3, &commit(vec![]));
    let t0 = std::time::Instant::now();
    while wal.flushed_lsn() < lsn {
        assert!(t0.elapsed().as_secs() < 10, "background flush never came");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    wal.stop_background();
    h.thread().unpark();
    h.join().unwrap();
}
