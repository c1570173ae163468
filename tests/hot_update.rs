//! Heap-only (HOT) updates on indexed tables: every index path returns the
//! sequential scan's rows while seeded random statements update indexed
//! and unindexed columns, delete, insert, roll back, VACUUM, REINDEX and
//! build indexes on columns HOT updates changed, with another session
//! holding an old snapshot; `bt_index_check` passes on every index after
//! each round; uniqueness, `ON CONFLICT` and foreign keys find rows whose
//! live version is heap-only; an update that changes no indexed column
//! adds no index entry; a table loaded with a fill factor below 100 takes
//! updates of every row heap-only.

use heapdb::Session;

mod common;

/// xorshift64*: a seeded generator, enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The query's rows (sorted) with only the sequential scan allowed, and
/// with the index paths `paths` ("indexscan", "bitmapscan",
/// "indexonlyscan") forced.
fn rows_with(s: &mut Session, sql: &str, seq: bool, path: &str) -> Vec<Vec<String>> {
    for p in ["seqscan", "indexscan", "bitmapscan", "indexonlyscan"] {
        let on = if seq { p == "seqscan" } else { p == path };
        common::run(
            s,
            &format!("set enable_{p} = {}", if on { "on" } else { "off" }),
        );
    }
    let mut r = common::texts(s, sql);
    r.sort();
    r
}

fn leaf_items(s: &mut Session, index: &str) -> i64 {
    common::one_text(
        s,
        &format!("select leaf_items from bt_index_check('{index}')"),
    )
    .parse()
    .unwrap()
}

fn check_indexes(s: &mut Session, names: &[String]) {
    for n in names {
        common::run(s, &format!("select * from bt_index_check('{n}')"));
    }
}

fn queries(r: &mut Rng) -> Vec<String> {
    let id = r.below(200);
    let k = r.below(40);
    let v = r.below(100);
    vec![
        format!("select id, k, v from h where id = {id}"),
        format!("select id from h where id between {id} and {}", id + 30),
        format!("select id, v from h where k = {k}"),
        format!("select count(*) from h where k between {k} and {}", k + 5),
        format!("select id, k from h where v = {v}"),
        format!("select count(*) from h where v < {v}"),
    ]
}

#[test]
fn index_paths_agree_with_the_sequential_scan_under_hot_updates() {
    let (_d, db) = common::open(1024);
    let mut s = db.session();
    let mut old = db.session();
    for seed in 1..=6u64 {
        let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        common::run(&mut s, "drop table if exists h");
        // Tables loaded full and tables loaded with room for updates.
        let fillfactor = [100, 70, 100, 50, 90, 10][seed as usize - 1];
        common::run(
            &mut s,
            &format!(
                "create table h (id int primary key, k int, v int, pad text) \
                 with (fillfactor = {fillfactor})"
            ),
        );
        common::run(&mut s, "create index h_k on h (k)");
        common::run(
            &mut s,
            "insert into h select i, i % 40, i % 100, repeat('x', 20) from generate_series(0, 199) i",
        );
        let mut names = vec!["h_pkey".to_string(), "h_k".to_string()];
        let mut holding = false;
        for round in 0..40 {
            let id = r.below(220);
            let op = r.below(14);
            let sql = match op {
                0..=4 => format!("update h set v = v + {} where id % 17 = {}", 1 + r.below(5), id % 17),
                5 => format!("update h set k = (k + 1) % 40 where id = {id}"),
                6 => format!("update h set pad = repeat('y', {}) where id % 9 = {}", r.below(300), id % 9),
                7 => format!("delete from h where id = {id}"),
                8 => format!("insert into h values ({id}, {}, {}, 'n') on conflict (id) do update set v = excluded.v", r.below(40), r.below(100)),
                9 => "vacuum h".to_string(),
                10 => {
                    common::run(&mut s, "begin");
                    common::run(&mut s, &format!("update h set v = v - 1 where id % 5 = {}", id % 5));
                    "rollback".to_string()
                }
                // DROP INDEX and REINDEX wait for the old snapshot's
                // transaction (its ACCESS SHARE lock): not while it is held.
                11 if holding => "vacuum h".to_string(),
                11 => {
                    if names.iter().any(|n| n == "h_v") {
                        common::run(&mut s, "drop index h_v");
                        names.retain(|n| n != "h_v");
                        "reindex table h".to_string()
                    } else {
                        names.push("h_v".into());
                        "create index h_v on h (v)".to_string()
                    }
                }
                12 => format!("update h set v = v + 1, pad = pad where id = {id}"),
                _ => {
                    if holding {
                        holding = false;
                        common::run(&mut old, "commit");
                    } else {
                        holding = true;
                        common::run(&mut old, "begin isolation level repeatable read");
                        common::run(&mut old, "select count(*) from h");
                    }
                    "select 1".to_string()
                }
            };
            if let Err(e) = s.execute(&sql) {
                panic!("seed {seed} round {round}: {sql}: {e}");
            }
            // A duplicate key is refused whatever version of its row is live.
            let dup = r.below(200);
            let exists =
                common::one_text(&mut s, &format!("select count(*) from h where id = {dup}"));
            let e = s.execute(&format!("insert into h values ({dup}, 0, 0, 'd')"));
            if exists == "1" {
                let e = e.expect_err("duplicate accepted");
                assert_eq!(
                    e.code,
                    heapdb::SqlState::UniqueViolation,
                    "seed {seed}: {e}"
                );
            } else {
                common::run(&mut s, &format!("delete from h where id = {dup}"));
            }
            for sess in [&mut s] {
                for q in queries(&mut r) {
                    let want = rows_with(sess, &q, true, "");
                    for p in ["indexscan", "bitmapscan", "indexonlyscan"] {
                        let got = rows_with(sess, &q, false, p);
                        assert_eq!(got, want, "seed {seed} round {round} {p}: {q}");
                    }
                }
            }
            if holding {
                for q in queries(&mut r) {
                    let want = rows_with(&mut old, &q, true, "");
                    for p in ["indexscan", "bitmapscan"] {
                        let got = rows_with(&mut old, &q, false, p);
                        assert_eq!(
                            got, want,
                            "old snapshot, seed {seed} round {round} {p}: {q}"
                        );
                    }
                }
            }
            check_indexes(&mut s, &names);
        }
        if holding {
            common::run(&mut old, "commit");
        }
        common::run(&mut s, "vacuum h");
        check_indexes(&mut s, &names);
    }
}

#[test]
fn an_update_of_unindexed_columns_adds_no_entry() {
    let (_d, db) = common::open(256);
    let mut s = db.session();
    common::run(&mut s, "create table t (id int primary key, k int, v int)");
    common::run(&mut s, "create index t_k on t (k)");
    common::run(
        &mut s,
        "insert into t select i, i, 0 from generate_series(1, 100) i",
    );
    let (p0, k0) = (leaf_items(&mut s, "t_pkey"), leaf_items(&mut s, "t_k"));
    for _ in 0..20 {
        common::run(&mut s, "update t set v = v + 1 where id = 7");
    }
    assert_eq!(leaf_items(&mut s, "t_pkey"), p0, "HOT updates add no entry");
    assert_eq!(leaf_items(&mut s, "t_k"), k0);
    assert_eq!(
        common::one_text(&mut s, "select v from t where id = 7"),
        "20"
    );
    // The table statistics count them.
    // Changing an indexed column adds an entry to every index.
    common::run(&mut s, "update t set k = 1000 where id = 8");
    assert_eq!(leaf_items(&mut s, "t_pkey"), p0 + 1);
    assert_eq!(leaf_items(&mut s, "t_k"), k0 + 1);
    common::run(&mut s, "set enable_seqscan = off");
    assert_eq!(
        common::one_text(&mut s, "select id from t where k = 1000"),
        "8"
    );
    assert_eq!(
        common::one_text(&mut s, "select count(*) from t where k = 8"),
        "0"
    );
    // Unique checks, upserts and foreign keys reach the heap-only version.
    let e = s.execute("insert into t values (7, 0, 0)").unwrap_err();
    assert_eq!(e.code, heapdb::SqlState::UniqueViolation);
    common::run(
        &mut s,
        "insert into t values (7, 0, 0) on conflict (id) do update set v = t.v + 100",
    );
    assert_eq!(
        common::one_text(&mut s, "select v from t where id = 7"),
        "120"
    );
    common::run(&mut s, "create table c (r int references t (id))");
    common::run(&mut s, "insert into c values (7)");
    let e = s.execute("delete from t where id = 7").unwrap_err();
    assert_eq!(e.code, heapdb::SqlState::ForeignKeyViolation);
    common::run(&mut s, "delete from c");
    common::run(&mut s, "delete from t where id = 7");
    let e = s.execute("insert into c values (7)").unwrap_err();
    assert_eq!(e.code, heapdb::SqlState::ForeignKeyViolation);
    // VACUUM leaves the chains' roots; the indexes stay consistent.
    common::run(&mut s, "vacuum t");
    common::run(&mut s, "select * from bt_index_check('t_pkey')");
    common::run(&mut s, "select * from bt_index_check('t_k')");
    assert_eq!(common::one_text(&mut s, "select count(*) from t"), "99");
    assert_eq!(leaf_items(&mut s, "t_pkey"), 99);
}

#[test]
fn repeated_updates_of_one_row_stay_on_its_page() {
    let (_d, db) = common::open(256);
    let mut s = db.session();
    common::run(&mut s, "create table t (id int primary key, v int)");
    common::run(
        &mut s,
        "insert into t select i, 0 from generate_series(1, 200) i",
    );
    let pages = common::one_text(&mut s, "select count(*) from heap_visibility_map('t')");
    for _ in 0..2000 {
        common::run(&mut s, "update t set v = v + 1 where id = 3");
    }
    assert_eq!(
        common::one_text(&mut s, "select v from t where id = 3"),
        "2000"
    );
    // Opportunistic pruning frees the page's dead versions: the table does
    // not grow by the updates.
    assert_eq!(
        common::one_text(&mut s, "select count(*) from heap_visibility_map('t')"),
        pages
    );
    assert_eq!(leaf_items(&mut s, "t_pkey"), 200);
    common::run(&mut s, "select * from bt_index_check('t_pkey')");
}

#[test]
fn an_index_built_over_changed_hot_chains_is_right_for_every_snapshot() {
    let (_d, db) = common::open(256);
    let mut s = db.session();
    let mut old = db.session();
    common::run(&mut s, "create table t (id int primary key, v int)");
    common::run(
        &mut s,
        "insert into t select i, 0 from generate_series(1, 100) i",
    );
    common::run(&mut old, "begin isolation level repeatable read");
    common::run(&mut old, "select count(*) from t");
    // Heap-only updates of a column no index has yet.
    common::run(&mut s, "update t set v = 5 where id < 50");
    common::run(&mut s, "create index t_v on t (v)");
    common::run(&mut s, "select * from bt_index_check('t_v')");
    common::run(&mut s, "set enable_seqscan = off");
    assert_eq!(
        common::one_text(&mut s, "select count(*) from t where v = 5"),
        "49"
    );
    assert_eq!(
        common::one_text(&mut s, "select count(*) from t where v = 0"),
        "51"
    );
    // The older snapshot never uses the index: the table's definition
    // changed after it was taken.
    let e = old
        .execute("select count(*) from t where v = 0")
        .unwrap_err();
    assert_eq!(e.code, heapdb::SqlState::SerializationFailure, "{e}");
    common::run(&mut old, "rollback");
    // A build whose snapshot predates an update it cannot see refuses.
    common::run(&mut old, "begin isolation level repeatable read");
    common::run(&mut old, "select count(*) from t");
    common::run(&mut s, "update t set id = id where id = 1");
    let e = old.execute("create index t_v2 on t (v, id)").unwrap_err();
    assert_eq!(e.code, heapdb::SqlState::SerializationFailure, "{e}");
    common::run(&mut old, "rollback");
}

#[test]
fn a_fill_factor_leaves_room_for_every_row_to_be_updated_heap_only() {
    let (_d, db) = common::open(256);
    let mut s = db.session();
    let copy = std::env::temp_dir().join(format!("hot_ff_{}.txt", std::process::id()));
    let text: String = (1001..=1600).map(|i| format!("{i}\t0\n")).collect();
    std::fs::write(&copy, text).unwrap();
    common::run(
        &mut s,
        "create table t (id int primary key, v int) with (fillfactor = 40)",
    );
    // Bulk INSERT ... SELECT, single-row INSERTs and COPY all leave the room.
    common::run(
        &mut s,
        "insert into t select i, 0 from generate_series(1, 900) i",
    );
    for i in 901..=1000 {
        common::run(&mut s, &format!("insert into t values ({i}, 0)"));
    }
    common::run(&mut s, &format!("copy t from '{}'", copy.display()));
    std::fs::remove_file(&copy).unwrap();
    let pages: i64 = common::one_text(&mut s, "select count(*) from heap_visibility_map('t')")
        .parse()
        .unwrap();
    assert!(
        pages >= 14,
        "1,600 rows at 40% take 14 pages or more: {pages}"
    );
    for b in 0..pages - 1 {
        let free: i64 = common::one_text(
            &mut s,
            &format!("select free_space from page_header('t', {b})"),
        )
        .parse()
        .unwrap();
        assert!(
            free >= 8192 * 60 / 100 - 40,
            "page {b} has {free} bytes free"
        );
    }
    let entries = leaf_items(&mut s, "t_pkey");
    common::run(&mut s, "update t set v = v + 1");
    assert_eq!(
        leaf_items(&mut s, "t_pkey"),
        entries,
        "every update heap-only"
    );
    assert_eq!(
        common::one_text(&mut s, "select count(*) from heap_visibility_map('t')"),
        pages.to_string(),
        "no new page"
    );
    common::run(&mut s, "set enable_seqscan = off");
    assert_eq!(
        common::one_text(&mut s, "select sum(v) from t where id between 1 and 1600"),
        "1600"
    );
    common::run(&mut s, "select * from bt_index_check('t_pkey')");
    // RESET: later inserts fill pages whole again.
    common::run(&mut s, "alter table t reset (fillfactor)");
    common::run(
        &mut s,
        "insert into t select i, 0 from generate_series(2001, 3000) i",
    );
    let last: i64 = common::one_text(&mut s, "select count(*) from heap_visibility_map('t')")
        .parse()
        .unwrap();
    let free: i64 = common::one_text(
        &mut s,
        &format!("select free_space from page_header('t', {})", last - 2),
    )
    .parse()
    .unwrap();
    assert!(free < 200, "a page filled whole has {free} bytes free");
}

#[test]
fn an_index_fetch_prunes_a_full_page_of_dead_versions() {
    let (_d, db) = common::open(256);
    let mut s = db.session();
    common::run(
        &mut s,
        "create table t (id int primary key, v int, pad text)",
    );
    common::run(
        &mut s,
        "insert into t select i, 0, repeat('p', 100) from generate_series(1, 200) i",
    );
    // One transaction: its versions cannot be pruned while it runs, so
    // the updates move the rows off the full page 0 and leave it dead
    // versions.
    common::run(&mut s, "begin");
    common::run(&mut s, "update t set v = 1 where id <= 20");
    common::run(&mut s, "commit");
    let free = |s: &mut Session| -> i64 {
        common::one_text(s, "select free_space from page_header('t', 0)")
            .parse()
            .unwrap()
    };
    let before = free(&mut s);
    assert!(before < 819, "page 0 is nearly full: {before}");
    common::run(&mut s, "set enable_seqscan = off");
    assert_eq!(
        common::one_text(&mut s, "select v from t where id = 30"),
        "0"
    );
    let after = free(&mut s);
    assert!(after >= before + 20 * 128, "pruned: {before} -> {after}");
    assert_eq!(
        common::one_text(&mut s, "select sum(v) from t where id <= 20"),
        "20"
    );
    // The next updates of the page's rows are heap-only.
    let entries = leaf_items(&mut s, "t_pkey");
    common::run(&mut s, "update t set v = 2 where id between 21 and 30");
    assert_eq!(leaf_items(&mut s, "t_pkey"), entries);
    common::run(&mut s, "select * from bt_index_check('t_pkey')");
}
