//! The shell's view meta-commands, in psql 15's layout: `\dv` lists the
//! views (not the tables), `\d VIEW` describes one as `View "public.v"`,
//! `\d+ VIEW` adds Storage and the `View definition:` footer, and `\dt`
//! lists no views. A view created in an open block is listed; one rolled
//! back is not.

mod common;

fn run(stdin: &str) -> (String, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (out, err, code) = common::output_texts(common::shell(dir.path(), &["-X"], stdin));
    assert_eq!(code, 0, "{out}{err}");
    (out, err)
}

#[test]
fn dv_and_d_show_views_as_psql() {
    let (out, err) = run("create table st (a int, b varchar(10), c numeric);\n\
         create view sv (x) as select a, b, c from st where a > 0;\n\
         \\dv\n\\d sv\n\\d+ sv\n\\dt\n\\dv nosuch\n");
    assert_eq!(err, "Did not find any relation named \"nosuch\".\n");
    let expected = "CREATE TABLE\nCREATE VIEW\n\
\x20      List of relations\n\
\x20Schema | Name | Type | Owner  \n\
--------+------+------+--------\n\
\x20public | sv   | view | heapdb\n\
(1 row)\n\n\
\x20                       View \"public.sv\"\n\
\x20Column |         Type          | Collation | Nullable | Default \n\
--------+-----------------------+-----------+----------+---------\n\
\x20x      | integer               |           |          | \n\
\x20b      | character varying(10) |           |          | \n\
\x20c      | numeric               |           |          | \n\
\n\
\x20                                    View \"public.sv\"\n\
\x20Column |         Type          | Collation | Nullable | Default | Storage  | Description \n\
--------+-----------------------+-----------+----------+---------+----------+-------------\n\
\x20x      | integer               |           |          |         | plain    | \n\
\x20b      | character varying(10) |           |          |         | extended | \n\
\x20c      | numeric               |           |          |         | main     | \n\
View definition:\n\
\x20SELECT a, b, c FROM st WHERE a > 0;\n\
\n";
    assert!(out.starts_with(expected), "{out}");
    let dt = &out[expected.len()..];
    assert!(dt.contains(" st   | table "), "{dt}");
    assert!(!dt.contains("sv"), "\\dt lists no views: {dt}");
}

#[test]
fn views_of_the_open_block_are_listed_and_rolled_back_ones_are_not() {
    let (out, err) =
        run("begin;\ncreate view bv as select 1 as one;\n\\dv\nrollback;\n\\dv\n\\d bv\n");
    assert!(out.contains(" public | bv   | view | heapdb\n"), "{out}");
    assert_eq!(
        err,
        "Did not find any relations.\nDid not find any relation named \"bv\".\n"
    );
}
