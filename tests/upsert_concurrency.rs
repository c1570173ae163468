//! `INSERT ... ON CONFLICT` under concurrency: sessions upserting the same
//! keys at once leave one row per key and lose no update (READ COMMITTED
//! tries a row again when its conflicting row changed meanwhile); an upsert
//! that meets a key held by a running inserter waits for it and then
//! updates (the holder committed) or inserts (it rolled back); REPEATABLE
//! READ fails with 40001 on a conflicting row its snapshot does not see.

mod common;

use std::thread;

use common::{one, run};
use heapdb::types::Value;
use heapdb::Database;

fn int(v: Value) -> i64 {
    match v {
        Value::Int8(n) => n,
        Value::Int4(n) => i64::from(n),
        v => panic!("not an integer: {v:?}"),
    }
}

#[test]
fn concurrent_upserts_neither_duplicate_nor_lose_updates() {
    let (_d, db) = common::open(1000);
    run(
        &mut db.session(),
        "create table c (k int primary key, n int, last int)",
    );
    const WORKERS: i64 = 4;
    const ROUNDS: i64 = 150;
    const KEYS: i64 = 20;
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let db: Database = db.clone();
            thread::spawn(move || {
                let mut s = db.session();
                for i in 0..ROUNDS {
                    // Every worker hits the same few keys, in its own order.
                    let k = (i * 7 + w * 3) % KEYS;
                    let r = s
                        .execute(&format!(
                            "insert into c values ({k}, 1, {w}) on conflict (k) \
                             do update set n = c.n + excluded.n, last = excluded.last"
                        ))
                        .unwrap_or_else(|e| panic!("worker {w}, key {k}: {e}"));
                    assert_eq!(r.tag, "INSERT 0 1");
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut s = db.session();
    assert_eq!(int(one(&mut s, "select count(*) from c")), KEYS);
    assert_eq!(
        int(one(&mut s, "select sum(n) from c")),
        WORKERS * ROUNDS,
        "every upsert counted once"
    );
    let r = run(&mut s, "select * from bt_index_check('c_pkey')");
    assert_eq!(r.rows[0][2], Value::Int8(KEYS));
}

#[test]
fn concurrent_do_nothing_inserts_each_key_once() {
    let (_d, db) = common::open(1000);
    run(
        &mut db.session(),
        "create table d (k int primary key, w int)",
    );
    let workers: Vec<_> = (0..4i64)
        .map(|w| {
            let db: Database = db.clone();
            thread::spawn(move || {
                let mut s = db.session();
                let mut inserted = 0;
                for i in 0..300i64 {
                    let k = (i * 11 + w * 17) % 300;
                    let r = s
                        .execute(&format!(
                            "insert into d values ({k}, {w}) on conflict do nothing"
                        ))
                        .unwrap_or_else(|e| panic!("{e}"));
                    if r.tag == "INSERT 0 1" {
                        inserted += 1;
                    } else {
                        assert_eq!(r.tag, "INSERT 0 0");
                    }
                }
                inserted
            })
        })
        .collect();
    let total: i64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    let mut s = db.session();
    assert_eq!(total, 300, "each key went in exactly once");
    assert_eq!(int(one(&mut s, "select count(distinct k) from d")), 300);
    assert_eq!(int(one(&mut s, "select count(*) from d")), 300);
}

/// The upsert starts while another transaction holds the key uncommitted:
/// whether it waits or runs after the holder ends, it must see the holder's
/// outcome.
fn upsert_after_holder(commit: bool) {
    let (_d, db) = common::open(1000);
    let mut a = db.session();
    run(&mut a, "create table h (k int primary key, n int)");
    run(&mut a, "begin");
    run(&mut a, "insert into h values (5, 10)");
    let db2 = db.clone();
    let other = thread::spawn(move || {
        db2.session()
            .execute(
                "insert into h values (5, 1) on conflict (k) do update set n = h.n + excluded.n",
            )
            .map(|r| r.tag)
    });
    run(&mut a, if commit { "commit" } else { "rollback" });
    assert_eq!(other.join().unwrap().unwrap(), "INSERT 0 1");
    assert_eq!(int(one(&mut a, "select count(*) from h")), 1);
    let want = if commit { 11 } else { 1 };
    assert_eq!(int(one(&mut a, "select n from h where k = 5")), want);
}

#[test]
fn an_upsert_updates_the_row_of_a_holder_that_commits() {
    upsert_after_holder(true);
}

#[test]
fn an_upsert_inserts_when_the_holder_rolls_back() {
    upsert_after_holder(false);
}

#[test]
fn repeatable_read_fails_on_a_conflicting_row_it_does_not_see() {
    let (_d, db) = common::open(1000);
    let mut a = db.session();
    let mut b = db.session();
    run(&mut a, "create table r (k int primary key, n int)");
    for action in ["do nothing", "do update set n = 2"] {
        run(&mut a, "truncate r");
        run(&mut a, "begin isolation level repeatable read");
        assert_eq!(int(one(&mut a, "select count(*) from r")), 0);
        run(&mut b, "insert into r values (7, 1)");
        let e = a
            .execute(&format!(
                "insert into r values (7, 3) on conflict (k) {action}"
            ))
            .unwrap_err();
        assert_eq!(e.code.code(), "40001", "{action}: {e}");
        assert_eq!(
            e.message,
            "could not serialize access due to concurrent update"
        );
        run(&mut a, "rollback");
        assert_eq!(int(one(&mut a, "select n from r where k = 7")), 1);
    }
}

#[test]
fn a_failed_upsert_leaves_no_rows() {
    let (_d, db) = common::open(1000);
    let mut s = db.session();
    run(&mut s, "create table f (k int primary key, u int unique)");
    run(&mut s, "insert into f values (1, 1)");
    let e = s
        .execute("insert into f values (2, 2), (3, 3), (1, 9), (4, 2) on conflict (k) do update set u = excluded.u")
        .unwrap_err();
    assert_eq!(e.code.code(), "23505", "{e}");
    assert_eq!(int(one(&mut s, "select count(*) from f")), 1);
    assert_eq!(int(one(&mut s, "select u from f where k = 1")), 1);
    let r = run(&mut s, "select * from bt_index_check('f_u_key')");
    assert_eq!(r.rows[0][2], Value::Int8(1));
}
