//! COPY FROM and INSERT ... SELECT into indexed tables insert their index
//! entries in sorted batches. Checked here: the indexes end as row-at-a-time
//! inserts leave them (every row found through each index, the structural
//! checker), a duplicate key inside one statement or against an existing
//! row fails with PostgreSQL's 23505 text for the earliest failing row and
//! changes nothing.

mod common;

use std::io::Write;
use std::path::Path;

use common::{one, run, texts};
use heapdb::Session;

fn write_rows(path: &Path, from: i64, n: i64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for k in from..from + n {
        // k: primary key; v: many duplicates; w: unique, not in k's order.
        writeln!(f, "{k},{},{}", (k * 31) % 101, (k * 7_919) % 1_000_003).unwrap();
    }
}

fn schema(s: &mut Session, t: &str) {
    run(
        s,
        &format!("create table {t} (k int primary key, v int, w int8)"),
    );
    run(s, &format!("create index {t}_v on {t} (v)"));
    run(s, &format!("create unique index {t}_w on {t} (w)"));
}

/// Every index of `t` sound and holding its `rows` rows; with `exact`,
/// no other entries (no failed statement left dead ones).
fn check_all(s: &mut Session, t: &str, rows: i64, exact: bool) {
    for ix in [format!("{t}_pkey"), format!("{t}_v"), format!("{t}_w")] {
        let r = texts(s, &format!("select * from bt_index_check('{ix}')"));
        assert_eq!(r[0][2], rows.to_string(), "{ix}: heap tuples");
        if exact {
            assert_eq!(r[0][0], rows.to_string(), "{ix}: leaf items");
        }
    }
}

#[test]
fn copy_and_insert_select_match_row_at_a_time() {
    let (dir, db) = common::open(2000);
    let mut s = db.session();
    let file = dir.path().join("rows.csv");
    write_rows(&file, 1, 20_000);
    schema(&mut s, "c");
    schema(&mut s, "r");
    schema(&mut s, "i");
    // Rows already there, so batches land between existing keys.
    for t in ["c", "r", "i"] {
        run(
            &mut s,
            &format!("insert into {t} values (-1, 5, -1), (-2, 7, -2)"),
        );
    }
    run(
        &mut s,
        &format!("copy c from '{}' with (format csv)", file.display()),
    );
    run(&mut s, "begin");
    for k in 1..=20_000i64 {
        run(
            &mut s,
            &format!(
                "insert into r values ({k}, {}, {})",
                (k * 31) % 101,
                (k * 7_919) % 1_000_003
            ),
        );
    }
    run(&mut s, "commit");
    run(&mut s, "insert into i select * from c where k > 0");
    for t in ["c", "r", "i"] {
        check_all(&mut s, t, 20_002, true);
    }
    for probe in [
        "v = 17",
        "k between 500 and 900",
        "w < 40000",
        "v in (0, 5, 100)",
    ] {
        let want = texts(
            &mut s,
            &format!("select count(*), sum(w) from r where {probe}"),
        );
        for t in ["c", "i"] {
            let got = texts(
                &mut s,
                &format!("select count(*), sum(w) from {t} where {probe}"),
            );
            assert_eq!(got, want, "{t} where {probe}");
        }
    }
}

#[test]
fn duplicates_fail_at_the_earliest_row_and_change_nothing() {
    let (dir, db) = common::open(2000);
    let mut s = db.session();
    schema(&mut s, "c");
    run(&mut s, "insert into c values (900, 1, 900)");
    let file = dir.path().join("dup.csv");
    // Row 3 repeats row 1's k (5); row 2 has w = 900, which a committed
    // row holds: row 2 is the first to fail, on c_w.
    std::fs::write(&file, "5,1,1\n6,1,900\n5,1,2\n7,1,3\n").unwrap();
    let copy = format!("copy c from '{}' with (format csv)", file.display());
    let e = s.execute(&copy).unwrap_err();
    assert_eq!(e.code.code(), "23505");
    assert_eq!(
        e.message,
        "duplicate key value violates unique constraint \"c_w\""
    );
    assert_eq!(e.detail.as_deref(), Some("Key (w)=(900) already exists."));
    // Only the repeat inside the statement: its second row fails.
    std::fs::write(&file, "5,1,1\n6,1,2\n7,1,3\n6,2,4\n").unwrap();
    let e = s.execute(&copy).unwrap_err();
    assert_eq!(
        e.message,
        "duplicate key value violates unique constraint \"c_pkey\""
    );
    assert_eq!(e.detail.as_deref(), Some("Key (k)=(6) already exists."));
    // INSERT ... SELECT, many rows, the repeat far from its first.
    let e = s
        .execute(
            "insert into c select g, g, g + 10000 from generate_series(1000, 5000) g \
             union all select 4321, 0, 0",
        )
        .unwrap_err();
    assert_eq!(e.detail.as_deref(), Some("Key (k)=(4321) already exists."));
    // NULLs never conflict in a unique index.
    run(
        &mut s,
        "insert into c select g, g, null from generate_series(1001, 4000) g",
    );
    assert_eq!(one(&mut s, "select count(*) from c").as_i64(), Some(3001));
    check_all(&mut s, "c", 3001, false);
}
