//! Foreign keys beyond what the sequential SQL corpus
//! (`tests/slt/foreign_keys.slt`) can say: the DETAIL and HINT lines of
//! their errors, two sessions racing a referenced row against a row
//! referencing it (the loser waits for the winner's transaction, as
//! PostgreSQL's row locks make it), `\d`'s constraint lines, and the
//! constraints surviving a SIGKILL.

use std::io::Write;
use std::process::Stdio;
use std::thread;

use heapdb::txn::LockMode;
use heapdb::{Database, Session};

mod common;
use common::run;

fn setup(s: &mut Session) {
    run(s, "create table p (a int primary key, t text unique)");
    run(s, "insert into p values (1, 'one'), (2, 'two')");
    run(s, "create table c (id int, b int references p)");
    run(s, "insert into c values (1, 1)");
}

/// Runs `sql` in a new session on another thread.
fn spawn(db: &Database, sql: &'static str) -> thread::JoinHandle<heapdb::Result<String>> {
    let db = db.clone();
    thread::spawn(move || db.session().execute(sql).map(|r| r.tag))
}

/// Waits until some statement waits for another transaction to end.
fn await_xact_wait(db: &Database) {
    common::wait_until("a statement waiting for a transaction", || {
        db.locks.waiters().iter().any(|w| w.mode == LockMode::Share)
    });
}

#[test]
fn errors_carry_postgres_details_and_hints() {
    let (_d, db) = common::open(512);
    let mut s = db.session();
    setup(&mut s);
    let e = s.execute("insert into c values (2, 5)").unwrap_err();
    assert_eq!(e.code.code(), "23503");
    assert_eq!(
        e.message,
        "insert or update on table \"c\" violates foreign key constraint \"c_b_fkey\""
    );
    assert_eq!(
        e.detail.as_deref(),
        Some("Key (b)=(5) is not present in table \"p\".")
    );
    let e = s.execute("delete from p where a = 1").unwrap_err();
    assert_eq!(
        e.message,
        "update or delete on table \"p\" violates foreign key constraint \"c_b_fkey\" on table \"c\""
    );
    assert_eq!(
        e.detail.as_deref(),
        Some("Key (a)=(1) is still referenced from table \"c\".")
    );
    let e = s.execute("drop table p").unwrap_err();
    assert_eq!(e.code.code(), "2BP01");
    assert_eq!(
        e.detail.as_deref(),
        Some("constraint c_b_fkey on table c depends on table p")
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("Use DROP ... CASCADE to drop the dependent objects too.")
    );
    let e = s.execute("truncate p").unwrap_err();
    assert_eq!(e.code.code(), "0A000");
    assert_eq!(e.detail.as_deref(), Some("Table \"c\" references \"p\"."));
    assert_eq!(
        e.hint.as_deref(),
        Some("Truncate table \"c\" at the same time, or use TRUNCATE ... CASCADE.")
    );
    // Two-column keys name every column, MATCH FULL its own detail.
    run(
        &mut s,
        "create table p2 (x int, y text, primary key (x, y))",
    );
    run(
        &mut s,
        "create table m (y text, x int, foreign key (x, y) references p2 match full)",
    );
    let e = s.execute("insert into m values ('a b', 7)").unwrap_err();
    assert_eq!(
        e.detail.as_deref(),
        Some("Key (x, y)=(7, a b) is not present in table \"p2\".")
    );
    let e = s.execute("insert into m values (null, 7)").unwrap_err();
    assert_eq!(
        e.detail.as_deref(),
        Some("MATCH FULL does not allow mixing of null and nonnull key values.")
    );
    // TRUNCATE ... CASCADE empties the referencing table too.
    let r = s.execute("truncate p cascade").unwrap();
    assert_eq!(r.notices[0].message, "truncate cascades to table \"c\"");
    assert_eq!(common::one_text(&mut s, "select count(*) from c"), "0");
    let r = s.execute("drop table p cascade").unwrap();
    assert_eq!(
        r.notices[0].message,
        "drop cascades to constraint c_b_fkey on table c"
    );
    run(&mut s, "insert into c values (3, 3)");
}

/// A DELETE of a referenced key waits for the transaction inserting a row
/// that references it; once that commits, the DELETE fails; had it rolled
/// back, the DELETE goes ahead.
#[test]
fn delete_of_a_referenced_key_waits_for_an_uncommitted_reference() {
    let (_d, db) = common::open(512);
    let mut a = db.session();
    setup(&mut a);
    run(&mut a, "begin");
    run(&mut a, "insert into c values (2, 2)");
    let deleter = spawn(&db, "delete from p where a = 2");
    await_xact_wait(&db);
    assert!(!deleter.is_finished(), "the DELETE must wait");
    run(&mut a, "commit");
    let e = deleter.join().unwrap().unwrap_err();
    assert_eq!(e.code.code(), "23503");
    assert_eq!(
        e.detail.as_deref(),
        Some("Key (a)=(2) is still referenced from table \"c\".")
    );

    run(&mut a, "insert into p values (3, 'three')");
    run(&mut a, "begin");
    run(&mut a, "insert into c values (3, 3)");
    let deleter = spawn(&db, "delete from p where a = 3");
    await_xact_wait(&db);
    run(&mut a, "rollback");
    assert_eq!(deleter.join().unwrap().unwrap(), "DELETE 1");
}

/// An INSERT referencing a key another transaction is deleting waits for
/// it: the key is gone once that commits, present again if it aborts.
#[test]
fn insert_waits_for_an_uncommitted_delete_of_its_key() {
    let (_d, db) = common::open(512);
    let mut a = db.session();
    setup(&mut a);
    run(&mut a, "begin");
    run(&mut a, "delete from p where a = 2");
    let inserter = spawn(&db, "insert into c values (5, 2)");
    await_xact_wait(&db);
    assert!(!inserter.is_finished(), "the INSERT must wait");
    run(&mut a, "commit");
    let e = inserter.join().unwrap().unwrap_err();
    assert_eq!(
        e.detail.as_deref(),
        Some("Key (b)=(2) is not present in table \"p\".")
    );

    run(&mut a, "begin");
    run(&mut a, "update p set t = 'uno' where a = 1");
    let inserter = spawn(&db, "insert into c values (6, 1)");
    await_xact_wait(&db);
    run(&mut a, "rollback");
    assert_eq!(inserter.join().unwrap().unwrap(), "INSERT 0 1");
    // A key inserted by a transaction not yet committed is not there.
    run(&mut a, "begin");
    run(&mut a, "insert into p values (7, 'seven')");
    let mut b = db.session();
    let e = b.execute("insert into c values (7, 7)").unwrap_err();
    assert_eq!(e.code.code(), "23503");
    run(&mut a, "commit");
    run(&mut b, "insert into c values (7, 7)");
}

#[test]
fn describe_lists_foreign_keys_and_referencing_tables_as_psql() {
    let (_d, db) = common::open(512);
    let mut s = db.session();
    run(&mut s, "create table p (a int primary key, t text unique)");
    run(
        &mut s,
        "create table c (id int, b int references p on delete cascade on update set null, \
         t text references p(t) match full deferrable initially deferred)",
    );
    run(&mut s, "create table p2 (x int, y int, primary key (x, y))");
    run(
        &mut s,
        "create table m (x int, y int, foreign key (x, y) references p2 \
         on delete set null (y) not deferrable)",
    );
    run(
        &mut s,
        "alter table m add constraint m_nv foreign key (x, y) references p2 not valid",
    );
    let tables = s.list_tables().unwrap();
    let t = |n: &str| tables.iter().find(|t| t.name == n).unwrap().clone();
    assert_eq!(
        t("c").foreign_keys,
        [
            "\"c_b_fkey\" FOREIGN KEY (b) REFERENCES p(a) ON UPDATE SET NULL ON DELETE CASCADE",
            "\"c_t_fkey\" FOREIGN KEY (t) REFERENCES p(t) MATCH FULL DEFERRABLE INITIALLY DEFERRED"
        ]
    );
    assert_eq!(
        t("p").referenced_by,
        [
            "TABLE \"c\" CONSTRAINT \"c_b_fkey\" FOREIGN KEY (b) REFERENCES p(a) ON UPDATE SET NULL ON DELETE CASCADE",
            "TABLE \"c\" CONSTRAINT \"c_t_fkey\" FOREIGN KEY (t) REFERENCES p(t) MATCH FULL DEFERRABLE INITIALLY DEFERRED"
        ]
    );
    assert_eq!(
        t("m").foreign_keys,
        [
            "\"m_nv\" FOREIGN KEY (x, y) REFERENCES p2(x, y) NOT VALID",
            "\"m_x_y_fkey\" FOREIGN KEY (x, y) REFERENCES p2(x, y) ON DELETE SET NULL (y)"
        ]
    );
    assert!(t("p2").foreign_keys.is_empty());
    assert_eq!(t("p2").referenced_by.len(), 2);
}

/// Kills a shell with SIGKILL after `script` printed `marker`.
fn run_then_kill(dir: &std::path::Path, script: &str, marker: &str) {
    let mut child = common::shell_command(dir, &[])
        .stderr(Stdio::null())
        .spawn()
        .expect("start heapdb");
    let mut stdin = child.stdin.take().expect("stdin piped");
    stdin.write_all(script.as_bytes()).expect("write script");
    let lines = common::Lines::of(&mut child);
    assert!(lines.until(|l| l.contains(marker)), "no {marker}");
    common::kill9(child);
    drop(stdin);
}

/// The constraints are in the catalog after a kill between the parent's
/// and the child's inserts: still enforced both ways, and a parent row
/// whose transaction never committed is not there to reference.
#[test]
fn constraints_survive_a_kill_between_parent_and_child_inserts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "\
SET synchronous_commit = on;
CREATE TABLE p (a int PRIMARY KEY);
CREATE TABLE c (b int REFERENCES p ON DELETE RESTRICT);
INSERT INTO p VALUES (1);
INSERT INTO c VALUES (1);
BEGIN;
INSERT INTO p VALUES (2);
SELECT 'marker' || 'reached';
";
    run_then_kill(dir.path(), script, "markerreached");
    let db = common::open_dir(dir.path());
    let mut s = db.session();
    let e = s.execute("insert into c values (2)").unwrap_err();
    assert_eq!(
        e.detail.as_deref(),
        Some("Key (b)=(2) is not present in table \"p\".")
    );
    let e = s.execute("delete from p").unwrap_err();
    assert_eq!(e.code.code(), "23503");
    run(&mut s, "insert into p values (2)");
    run(&mut s, "insert into c values (2)");
    assert_eq!(common::one_text(&mut s, "select count(*) from c"), "2");
}
