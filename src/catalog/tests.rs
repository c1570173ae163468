//! Catalog MVCC and persistence.

use super::*;
use crate::storage::control::ControlFile;
use std::sync::Mutex;

fn txns(dir: &Path) -> TxnManager {
    let (c, _) = ControlFile::open_or_create(dir).unwrap();
    TxnManager::open(dir, Arc::new(Mutex::new(c))).unwrap()
}

fn table(cat: &Catalog, name: &str) -> TableDef {
    let oid = cat.next_oid();
    TableDef {
        comment: None,
        oid,
        name: name.into(),
        relfilenode: oid,
        columns: vec![
            ColumnDef {
                comment: None,
                name: "a".into(),
                ty: DataType::Int4,
                not_null: true,
                default: Some("42".into()),
                domain: None,
            },
            ColumnDef {
                comment: None,
                name: "b c".into(),
                ty: DataType::Varchar(Some(10)),
                not_null: false,
                default: None,
                domain: None,
            },
        ],
        stats: None,
        indexes: Vec::new(),
        checks: Vec::new(),
        parents: Vec::new(),
        has_subclass: false,
        options: Vec::new(),
    }
}

#[test]
fn create_is_invisible_to_others_until_commit_and_undone_by_abort() {
    let dir = tempfile::tempdir().unwrap();
    let tm = txns(dir.path());
    let cat = Catalog::open(dir.path(), &tm, true).unwrap();
    let x1 = tm.begin().unwrap();
    let s1 = tm.snapshot(x1, 0);
    let v1 = CatalogView {
        snapshot: &s1,
        txns: &tm,
        temp_ns: 0,
    };
    cat.create(&v1, x1, table(&cat, "t")).unwrap();
    assert!(cat.lookup(&v1, "t").is_some(), "own creation is visible");
    let other = tm.snapshot(INVALID_XID, 0);
    let vo = CatalogView {
        snapshot: &other,
        txns: &tm,
        temp_ns: 0,
    };
    assert!(cat.lookup(&vo, "t").is_none());
    let x2 = tm.begin().unwrap();
    let s2 = tm.snapshot(x2, 0);
    let v2 = CatalogView {
        snapshot: &s2,
        txns: &tm,
        temp_ns: 0,
    };
    let e = cat.create(&v2, x2, table(&cat, "t")).unwrap_err();
    assert_eq!(e.message, "relation \"t\" already exists");
    tm.abort(x2).unwrap();
    cat.persist().unwrap();
    tm.commit(x1).unwrap();
    let after = tm.snapshot(INVALID_XID, 0);
    let va = CatalogView {
        snapshot: &after,
        txns: &tm,
        temp_ns: 0,
    };
    assert_eq!(cat.get(&va, "t").unwrap().columns.len(), 2);
    assert_eq!(
        cat.get(&va, "nosuch").unwrap_err().message,
        "relation \"nosuch\" does not exist"
    );

    let x3 = tm.begin().unwrap();
    let s3 = tm.snapshot(x3, 0);
    let v3 = CatalogView {
        snapshot: &s3,
        txns: &tm,
        temp_ns: 0,
    };
    cat.create(&v3, x3, table(&cat, "gone")).unwrap();
    cat.abort(x3);
    tm.abort(x3).unwrap();
    assert!(cat.lookup(&va, "gone").is_none());
}

#[test]
fn drop_and_replace_are_versions() {
    let dir = tempfile::tempdir().unwrap();
    let tm = txns(dir.path());
    let cat = Catalog::open(dir.path(), &tm, true).unwrap();
    let x1 = tm.begin().unwrap();
    let s1 = tm.snapshot(x1, 0);
    let t = cat
        .create(
            &CatalogView {
                snapshot: &s1,
                txns: &tm,
                temp_ns: 0,
            },
            x1,
            table(&cat, "t"),
        )
        .unwrap();
    tm.commit(x1).unwrap();

    let old_reader = tm.snapshot(INVALID_XID, 0);
    let x2 = tm.begin().unwrap();
    let s2 = tm.snapshot(x2, 0);
    let v2 = CatalogView {
        snapshot: &s2,
        txns: &tm,
        temp_ns: 0,
    };
    let mut truncated = (*t).clone();
    truncated.relfilenode = cat.next_oid();
    cat.replace(&v2, x2, t.oid, Some(truncated.clone()))
        .unwrap();
    assert_eq!(
        cat.get(&v2, "t").unwrap().relfilenode,
        truncated.relfilenode
    );
    let vo = CatalogView {
        snapshot: &old_reader,
        txns: &tm,
        temp_ns: 0,
    };
    assert_eq!(cat.get(&vo, "t").unwrap().relfilenode, t.relfilenode);
    // A concurrent change of the same table is a serialization failure.
    let x3 = tm.begin().unwrap();
    let s3 = tm.snapshot(x3, 0);
    let e = cat
        .replace(
            &CatalogView {
                snapshot: &s3,
                txns: &tm,
                temp_ns: 0,
            },
            x3,
            t.oid,
            None,
        )
        .unwrap_err();
    assert_eq!(e.code, crate::error::SqlState::SerializationFailure);
    tm.abort(x3).unwrap();
    cat.persist().unwrap();
    tm.commit(x2).unwrap();

    // Reopen: the committed replacement is what remains.
    drop(cat);
    let cat = Catalog::open(dir.path(), &tm, true).unwrap();
    let now = tm.snapshot(INVALID_XID, 0);
    let vn = CatalogView {
        snapshot: &now,
        txns: &tm,
        temp_ns: 0,
    };
    let t2 = cat.get(&vn, "t").unwrap();
    assert_eq!(t2.relfilenode, truncated.relfilenode);
    assert_eq!(t2.columns[1].name, "b c");
    assert_eq!(t2.columns[0].default.as_deref(), Some("42"));
    assert_eq!(cat.tables(&vn).len(), 1);

    // Drop, committed.
    let x4 = tm.begin().unwrap();
    let s4 = tm.snapshot(x4, 0);
    cat.replace(
        &CatalogView {
            snapshot: &s4,
            txns: &tm,
            temp_ns: 0,
        },
        x4,
        t2.oid,
        None,
    )
    .unwrap();
    cat.persist().unwrap();
    tm.commit(x4).unwrap();
    let later = tm.snapshot(INVALID_XID, 0);
    assert!(cat
        .lookup(
            &CatalogView {
                snapshot: &later,
                txns: &tm,
                temp_ns: 0,
            },
            "t"
        )
        .is_none());
}

#[test]
fn uncommitted_versions_vanish_on_reopen_and_stats_parents_and_options_persist() {
    let dir = tempfile::tempdir().unwrap();
    let tm = txns(dir.path());
    let cat = Catalog::open(dir.path(), &tm, true).unwrap();
    let x1 = tm.begin().unwrap();
    let s1 = tm.snapshot(x1, 0);
    let mut def = table(&cat, "s");
    def.parents = vec![7, 3];
    def.has_subclass = true;
    def.options = vec!["fillfactor= 0x20".into()];
    def.stats = Some(TableStats {
        reltuples: 1000.0,
        relpages: 7,
        columns: vec![
            Some(ColumnStats {
                null_frac: 0.25,
                avg_width: 4.0,
                n_distinct: -0.5,
                mcv: vec![("".into(), 0.5), ("x y".into(), 0.25)],
                histogram: vec!["1".into(), "9".into()],
                correlation: Some(-0.25),
            }),
            None,
        ],
    });
    cat.create(
        &CatalogView {
            snapshot: &s1,
            txns: &tm,
            temp_ns: 0,
        },
        x1,
        def.clone(),
    )
    .unwrap();
    cat.persist().unwrap();
    tm.commit(x1).unwrap();
    let x2 = tm.begin().unwrap();
    let s2 = tm.snapshot(x2, 0);
    cat.create(
        &CatalogView {
            snapshot: &s2,
            txns: &tm,
            temp_ns: 0,
        },
        x2,
        table(&cat, "u"),
    )
    .unwrap();
    cat.persist().unwrap();
    // x2 never commits (a crash): reopening drops its table.
    drop(cat);
    let cat = Catalog::open(dir.path(), &tm, true).unwrap();
    let now = tm.snapshot(INVALID_XID, 0);
    let v = CatalogView {
        snapshot: &now,
        txns: &tm,
        temp_ns: 0,
    };
    assert!(cat.lookup(&v, "u").is_none());
    let s = cat.get(&v, "s").unwrap();
    assert_eq!(s.stats, def.stats);
    assert_eq!((&s.parents, s.has_subclass), (&vec![7, 3], true));
    assert_eq!((&s.options, s.fillfactor()), (&def.options, 32));
    assert!(cat.next_oid() > def.oid);
}

fn view<'a>(snapshot: &'a Snapshot, txns: &'a TxnManager) -> CatalogView<'a> {
    CatalogView {
        snapshot,
        txns,
        temp_ns: 0,
    }
}

#[test]
fn a_name_committed_after_the_snapshot_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let tm = txns(dir.path());
    let cat = Catalog::open(dir.path(), &tm, true).unwrap();
    // The second creator's snapshot is older than the first's commit: it
    // does not see the table, yet the name is taken.
    let x2 = tm.begin().unwrap();
    let s2 = tm.snapshot(x2, 0);
    let x1 = tm.begin().unwrap();
    let s1 = tm.snapshot(x1, 0);
    cat.create(&view(&s1, &tm), x1, table(&cat, "t")).unwrap();
    tm.commit(x1).unwrap();
    assert!(cat.lookup(&view(&s2, &tm), "t").is_none());
    let e = cat
        .create(&view(&s2, &tm), x2, table(&cat, "t"))
        .unwrap_err();
    assert_eq!(e.message, "relation \"t\" already exists");
    // A name whose creator aborted is free.
    let x3 = tm.begin().unwrap();
    let s3 = tm.snapshot(x3, 0);
    cat.create(&view(&s3, &tm), x3, table(&cat, "u")).unwrap();
    tm.abort(x3).unwrap();
    cat.create(&view(&s2, &tm), x2, table(&cat, "u")).unwrap();
}

#[test]
fn statistics_set_in_place_leave_nothing_to_conflict_with() {
    let dir = tempfile::tempdir().unwrap();
    let tm = txns(dir.path());
    let cat = Catalog::open(dir.path(), &tm, true).unwrap();
    let x1 = tm.begin().unwrap();
    let s1 = tm.snapshot(x1, 0);
    let t = cat.create(&view(&s1, &tm), x1, table(&cat, "t")).unwrap();
    cat.persist().unwrap();
    tm.commit(x1).unwrap();
    // A dropper whose snapshot is older than the statistics.
    let x2 = tm.begin().unwrap();
    let s2 = tm.snapshot(x2, 0);
    let now = tm.snapshot(INVALID_XID, 0);
    let stats = TableStats {
        reltuples: 7.0,
        relpages: 1,
        columns: vec![None, None],
    };
    assert!(cat
        .set_stats_in_place(&view(&now, &tm), t.oid, stats.clone())
        .unwrap());
    assert!(!cat
        .set_stats_in_place(&view(&now, &tm), t.oid, stats.clone())
        .unwrap());
    // Every snapshot sees them, the older one too; the file has them.
    let seen = cat.lookup(&view(&s2, &tm), "t").unwrap();
    assert_eq!(seen.stats.as_ref(), Some(&stats));
    assert_eq!(
        Catalog::open(dir.path(), &tm, false)
            .unwrap()
            .lookup(&view(&now, &tm), "t")
            .unwrap()
            .stats,
        Some(stats)
    );
    cat.replace(&view(&s2, &tm), x2, t.oid, None).unwrap();
}

/// Descriptions of a table, its columns, a CHECK constraint and a view
/// survive the file, each on its own object; a description line without
/// its object is refused.
#[test]
fn descriptions_round_trip_through_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let tm = txns(dir.path());
    let cat = Catalog::open(dir.path(), &tm, true).unwrap();
    let mut def = table(&cat, "t");
    def.comment = Some("the table's\ntext 100%".into());
    def.columns[1].comment = Some("column \"b c\"".into());
    let mut st = State {
        next_oid: 20000,
        ..State::default()
    };
    st.versions.push(Version {
        xmin: 3,
        xmax: 0,
        def: Arc::new(def.clone()),
        temp_ns: 0,
    });
    let path = dir.path().join("catalog.test");
    persist::write(&path, &st).unwrap();
    let back = persist::read(&path, &index::no_binder).unwrap();
    assert_eq!(*back.versions[0].def, def);
    assert_eq!(back.versions[0].def.columns[0].comment, None);
    let text = "heapdb-catalog 2\nnext_oid 1\ncomment =x\n";
    let crc = crc32c::crc32c(text.as_bytes());
    std::fs::write(&path, format!("{text}end {crc:08x}\n")).unwrap();
    let e = persist::read(&path, &index::no_binder).unwrap_err();
    assert!(
        e.message.contains("comment without its object"),
        "{}",
        e.message
    );
}
