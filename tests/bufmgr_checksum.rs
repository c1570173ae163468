//! Page checksums end to end: a byte flipped in a relation file on disk is
//! caught when the page is read back, with an XX001 error naming the block
//! and the relation, and never returned as data.

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;

use heapdb::storage::{BufferPool, ForkNumber, RelFileNode, BLCKSZ};
use heapdb::SqlState;

const REL: RelFileNode = RelFileNode(16384);

/// Writes `n` pages with a recognisable pattern, flushes and closes the pool.
fn write_relation(dir: &std::path::Path, n: u32) {
    let pool = BufferPool::open(dir, 16).unwrap();
    pool.create_relation(REL, ForkNumber::Main).unwrap();
    for _ in 0..n {
        let (block, buf) = pool.extend(REL, ForkNumber::Main, None).unwrap();
        let mut page = buf.write();
        for (i, b) in page[24..].iter_mut().enumerate() {
            *b = (i as u32 ^ block) as u8;
        }
        page.mark_dirty();
    }
    pool.flush_all().unwrap();
}

fn flip(dir: &std::path::Path, block: u32, offset: usize) {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.join("base/16384"))
        .unwrap();
    let pos = block as u64 * BLCKSZ as u64 + offset as u64;
    let mut b = [0u8];
    f.read_exact_at(&mut b, pos).unwrap();
    f.write_all_at(&[b[0] ^ 0x01], pos).unwrap();
}

#[test]
fn flipped_byte_is_detected_with_block_and_relation() {
    let dir = tempfile::tempdir().unwrap();
    write_relation(dir.path(), 10);
    flip(dir.path(), 7, 4000);

    let pool = BufferPool::open(dir.path(), 16).unwrap();
    for b in [0u32, 6, 8, 9] {
        let buf = pool.read_buffer(REL, ForkNumber::Main, b, None).unwrap();
        assert_eq!(buf.read()[100], (76 ^ b) as u8);
    }
    let e = pool
        .read_buffer(REL, ForkNumber::Main, 7, None)
        .unwrap_err();
    assert_eq!(e.code, SqlState::DataCorrupted);
    assert_eq!(e.code.code(), "XX001");
    assert_eq!(e.message, "invalid page in block 7 of relation base/16384");
    // Still an error on retry (the bad page is never cached as valid).
    let e = pool
        .read_buffer(REL, ForkNumber::Main, 7, None)
        .unwrap_err();
    assert_eq!(e.code, SqlState::DataCorrupted);
    assert!(!pool.is_cached(REL, ForkNumber::Main, 7));
}

#[test]
fn flipped_checksum_or_header_byte_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    write_relation(dir.path(), 3);
    flip(dir.path(), 0, 8); // the checksum itself
    flip(dir.path(), 2, 0); // the LSN
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    for b in [0, 2] {
        let e = pool
            .read_buffer(REL, ForkNumber::Main, b, None)
            .unwrap_err();
        assert_eq!(
            e.message,
            format!("invalid page in block {b} of relation base/16384")
        );
    }
    assert!(pool.read_buffer(REL, ForkNumber::Main, 1, None).is_ok());
}

#[test]
fn page_copied_to_another_block_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    write_relation(dir.path(), 3);
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.path().join("base/16384"))
        .unwrap();
    let mut page = vec![0u8; BLCKSZ];
    f.read_exact_at(&mut page, 0).unwrap();
    f.write_all_at(&page, 2 * BLCKSZ as u64).unwrap();
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    let e = pool
        .read_buffer(REL, ForkNumber::Main, 2, None)
        .unwrap_err();
    assert_eq!(e.message, "invalid page in block 2 of relation base/16384");
}

#[test]
fn visibility_map_fork_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    {
        let pool = BufferPool::open(dir.path(), 16).unwrap();
        pool.create_relation(REL, ForkNumber::VisibilityMap)
            .unwrap();
        let (_, buf) = pool.extend(REL, ForkNumber::VisibilityMap, None).unwrap();
        let mut g = buf.write();
        g[30] = 5;
        g.mark_dirty();
        drop(g);
        drop(buf);
        pool.flush_all().unwrap();
    }
    let f = OpenOptions::new()
        .write(true)
        .open(dir.path().join("base/16384_vm"))
        .unwrap();
    f.write_all_at(&[6], 30).unwrap();
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    let e = pool
        .read_buffer(REL, ForkNumber::VisibilityMap, 0, None)
        .unwrap_err();
    assert_eq!(
        e.message,
        "invalid page in block 0 of relation base/16384_vm"
    );
}
