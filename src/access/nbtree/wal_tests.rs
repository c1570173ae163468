use super::*;
use crate::access::nbtree::btpage::{BTP_INCOMPLETE_SPLIT, BTP_LEAF, BTP_ROOT};
use crate::storage::BLCKSZ;

fn img(level: u32, flags: u16, next: u32, items: &[&[u8]]) -> PageImage {
    PageImage {
        opaque: Opaque {
            prev: 3,
            next,
            level,
            flags,
            cycle: 0,
        },
        items: items.iter().map(|i| i.to_vec()).collect(),
    }
}

fn all_records() -> Vec<BtRecord> {
    vec![
        BtRecord::Meta(MetaData {
            root: 7,
            level: 2,
            fastroot: 7,
            fastlevel: 2,
        }),
        BtRecord::InsertLeaf {
            offset: 2,
            tuple: vec![1, 2, 3],
        },
        BtRecord::InsertInner {
            offset: 1,
            tuple: vec![9, 0, 0, 0],
        },
        BtRecord::SplitLeft(img(0, BTP_LEAF | BTP_INCOMPLETE_SPLIT, 9, &[b"hk", b"a"])),
        BtRecord::SplitRight(img(0, BTP_LEAF, 0, &[b"b", b"c"])),
        BtRecord::NewRoot(img(1, BTP_ROOT, 0, &[&[1, 0, 0, 0], &[2, 0, 0, 0, 5]])),
        BtRecord::BuildPage(img(0, BTP_LEAF, 0, &[])),
        BtRecord::SetFlags {
            set: 0,
            clear: BTP_INCOMPLETE_SPLIT,
        },
        BtRecord::SetPrev { prev: 42 },
        BtRecord::Delete {
            offsets: vec![1, 3],
        },
        BtRecord::DeleteDownlink { offset: 2 },
        BtRecord::MarkDeleted { safexid: 77 },
        BtRecord::SetNext { next: 12 },
        BtRecord::FreeList {
            blocks: vec![4, 9, 2],
        },
        BtRecord::TakeFree { block: 9 },
        BtRecord::CleanupInfo { delpages: 108 },
        BtRecord::MarkDead {
            offsets: vec![2, 5],
        },
    ]
}

#[test]
fn encode_decode_round_trip() {
    for rec in all_records() {
        let b = rec.encode();
        assert_eq!(BtRecord::decode(&b).unwrap(), rec);
        // Every truncation and any trailing byte is an error, not a panic.
        for n in 0..b.len() {
            assert!(BtRecord::decode(&b[..n]).is_err(), "{rec:?} cut at {n}");
        }
        let mut long = b.clone();
        long.push(0);
        assert!(BtRecord::decode(&long).is_err());
    }
    assert!(BtRecord::decode(&[200]).is_err());
}

#[test]
fn records_apply_to_pages_and_redo_gives_the_same_bytes() {
    let mut p = vec![0u8; BLCKSZ];
    let seq = [
        BtRecord::BuildPage(img(0, BTP_LEAF, 0, &[b"b", b"d"])),
        BtRecord::InsertLeaf {
            offset: 1,
            tuple: b"a".to_vec(),
        },
        BtRecord::InsertLeaf {
            offset: 3,
            tuple: b"c".to_vec(),
        },
        BtRecord::SetFlags {
            set: BTP_INCOMPLETE_SPLIT,
            clear: 0,
        },
        BtRecord::SetPrev { prev: 5 },
        BtRecord::Delete { offsets: vec![2] },
        BtRecord::MarkDead { offsets: vec![3] },
    ];
    for r in &seq {
        apply(r, &mut p).unwrap();
    }
    let items = btpage::items(&p).unwrap();
    assert_eq!(items, vec![b"a".to_vec(), b"c".to_vec(), b"d".to_vec()]);
    assert_eq!(btpage::live_item(&p, 3).unwrap(), None);
    assert_eq!(btpage::live_item(&p, 2).unwrap(), Some(&b"c"[..]));
    let o = btpage::opaque(&p);
    assert_eq!(btpage::dead_offsets(&p, &o), vec![3]);
    assert_eq!((o.prev, o.flags), (5, BTP_LEAF | BTP_INCOMPLETE_SPLIT));
    // Redo from the decoded records on a fresh page gives identical bytes.
    let mut q = vec![0u8; BLCKSZ];
    for r in &seq {
        apply(&BtRecord::decode(&r.encode()).unwrap(), &mut q).unwrap();
    }
    assert_eq!(p, q);
    let mut m = vec![0u8; BLCKSZ];
    let meta = MetaData {
        root: 3,
        level: 1,
        fastroot: 3,
        fastlevel: 1,
    };
    apply(&BtRecord::Meta(meta), &mut m).unwrap();
    assert_eq!(btpage::read_meta(&m).unwrap(), meta);
}

#[test]
fn mismatched_pages_are_errors_not_panics() {
    let mut p = vec![0u8; BLCKSZ];
    let ins = BtRecord::InsertLeaf {
        offset: 1,
        tuple: vec![1],
    };
    assert!(apply(&ins, &mut p).is_err());
    assert!(apply(&BtRecord::SetPrev { prev: 1 }, &mut p).is_err());
    apply(&BtRecord::BuildPage(img(0, BTP_LEAF, 0, &[])), &mut p).unwrap();
    let far = BtRecord::InsertLeaf {
        offset: 5,
        tuple: vec![1],
    };
    assert!(apply(&far, &mut p).is_err());
    assert!(apply(&BtRecord::Delete { offsets: vec![1] }, &mut p).is_err());
    let big = BtRecord::InsertLeaf {
        offset: 1,
        tuple: vec![0; 9000],
    };
    assert!(apply(&big, &mut p).is_err());
    assert!(btpage::read_meta(&p).is_err());
}

#[test]
fn page_deletion_records_move_a_downlink_mark_a_page_and_keep_a_free_list() {
    // Parent: -inf -> 4, "k" -> 5, "m" -> 6; page 5 is deleted, its key
    // range goes to page 6.
    let mut p = vec![0u8; BLCKSZ];
    let parent = img(
        1,
        0,
        0,
        &[&[4, 0, 0, 0], &[5, 0, 0, 0, b'k'], &[6, 0, 0, 0, b'm']],
    );
    apply(&BtRecord::BuildPage(parent), &mut p).unwrap();
    let rec = BtRecord::DeleteDownlink { offset: 2 };
    apply(&rec, &mut p).unwrap();
    let items = btpage::items(&p).unwrap();
    assert_eq!(items, vec![vec![4, 0, 0, 0], vec![6, 0, 0, 0, b'k']]);
    // The last downlink has no right neighbour to take over.
    assert!(apply(&BtRecord::DeleteDownlink { offset: 2 }, &mut p).is_err());

    let mut l = vec![0u8; BLCKSZ];
    let half_dead = img(0, BTP_LEAF | btpage::BTP_HALF_DEAD, 6, &[b"hk"]);
    apply(&BtRecord::BuildPage(half_dead), &mut l).unwrap();
    apply(&BtRecord::MarkDeleted { safexid: 1234 }, &mut l).unwrap();
    apply(&BtRecord::SetNext { next: 8 }, &mut l).unwrap();
    let o = btpage::opaque(&l);
    assert_eq!(
        (o.prev, o.next, o.flags),
        (3, 8, BTP_LEAF | btpage::BTP_DELETED)
    );
    assert!(o.is_ignorable() && o.is_deleted());
    assert_eq!(btpage::safexid(&l).unwrap(), 1234);

    let mut m = vec![0u8; BLCKSZ];
    let meta = MetaData {
        root: 3,
        level: 1,
        fastroot: 3,
        fastlevel: 1,
    };
    apply(&BtRecord::Meta(meta), &mut m).unwrap();
    assert!(btpage::free_list(&m).is_empty());
    let list = BtRecord::FreeList {
        blocks: vec![5, 7, 9],
    };
    apply(&list, &mut m).unwrap();
    apply(&BtRecord::TakeFree { block: 7 }, &mut m).unwrap();
    assert_eq!(btpage::free_list(&m), vec![5, 9]);
    assert_eq!(btpage::read_meta(&m).unwrap(), meta);
    // Rewriting the meta data drops the list (run time and redo alike).
    apply(&BtRecord::Meta(meta), &mut m).unwrap();
    assert!(btpage::free_list(&m).is_empty());
    // The list belongs to the meta page only.
    assert!(apply(&BtRecord::TakeFree { block: 1 }, &mut l).is_err());
}

#[test]
fn the_cleanup_count_survives_list_changes_root_splits_and_page_images() {
    let mut m = vec![0u8; BLCKSZ];
    let meta = MetaData {
        root: 3,
        level: 1,
        fastroot: 3,
        fastlevel: 1,
    };
    apply(&BtRecord::Meta(meta), &mut m).unwrap();
    assert_eq!(btpage::cleanup_delpages(&m), 0);
    apply(&BtRecord::CleanupInfo { delpages: 108 }, &mut m).unwrap();
    apply(&BtRecord::FreeList { blocks: vec![5] }, &mut m).unwrap();
    apply(&BtRecord::TakeFree { block: 5 }, &mut m).unwrap();
    assert_eq!(btpage::cleanup_delpages(&m), 108);
    // A root split rewrites the meta data, not the count.
    apply(&BtRecord::Meta(meta), &mut m).unwrap();
    assert_eq!(btpage::cleanup_delpages(&m), 108);
    assert_eq!(btpage::read_meta(&m).unwrap(), meta);
    // The count lies below `lower`: an image without the hole keeps it.
    let (lower, upper) = (page::lower(&m) as usize, page::upper(&m) as usize);
    let mut image = m.clone();
    image[lower..upper].fill(0);
    assert_eq!(btpage::cleanup_delpages(&image), 108);
    apply(&BtRecord::CleanupInfo { delpages: 0 }, &mut m).unwrap();
    assert_eq!(btpage::cleanup_delpages(&m), 0);
    // Only a meta page takes it.
    let mut l = vec![0u8; BLCKSZ];
    assert!(apply(&BtRecord::CleanupInfo { delpages: 1 }, &mut l).is_err());
}
