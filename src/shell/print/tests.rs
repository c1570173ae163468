//! Printer tests against psql 15: every expected string below is what
//! `psql -X` printed for the same data and settings (regenerate with
//! `python3 src/shell/print/psql_cases.py > src/shell/print/tests.rs`).

use super::*;

fn run(opts: PrintOptions, cols: &[(&str, Align)], rows: &[&[Option<&str>]]) -> String {
    let (got, _) = print_with(&opts, cols, rows);
    // An aligned table also prints the same through the temporary file
    // (one row per chunk at 0 bytes, a few rows per chunk at 8).
    if opts.format == Format::Aligned
        && opts.fetch_count == 0
        && !cols.is_empty()
        && !rows.is_empty()
    {
        for bound in [0, 8] {
            let spool_opts = PrintOptions {
                spool_bytes: bound,
                ..opts.clone()
            };
            let (spooled, did) = print_with(&spool_opts, cols, rows);
            assert!(did || bound > 0, "the rows went to the spool");
            assert_eq!(spooled, got, "spooled at {bound} bytes");
        }
    }
    got
}

/// The printed text, and whether the rows went to the spool.
fn print_with(
    opts: &PrintOptions,
    cols: &[(&str, Align)],
    rows: &[&[Option<&str>]],
) -> (String, bool) {
    let cols: Vec<ColumnInfo> = cols.iter().map(|(n, a)| ColumnInfo::new(*n, *a)).collect();
    let mut out = Vec::new();
    let mut p = ResultPrinter::new(&mut out, opts, &cols);
    for r in rows {
        p.push_row(r).expect("write to a Vec");
    }
    let spooled = p.spooled();
    p.finish().expect("write to a Vec");
    (String::from_utf8(out).expect("utf-8 output"), spooled)
}

#[test]
fn basic() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            ..PrintOptions::default()
        },
        &[
            ("a", Align::Right),
            ("bbbbbb", Align::Left),
            ("c", Align::Left),
            ("n", Align::Left),
        ],
        &[
            &[Some("1"), Some("x"), Some("hello world"), None],
            &[Some("22"), Some("yy"), Some("z"), Some("w")],
        ],
    );
    assert_eq!(got, " a  | bbbbbb |      c      | n \n----+--------+-------------+---\n  1 | x      | hello world | \n 22 | yy     | z           | w\n(2 rows)\n\n");
}

#[test]
fn one_row() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            ..PrintOptions::default()
        },
        &[("n", Align::Right)],
        &[&[Some("1")]],
    );
    assert_eq!(got, " n \n---\n 1\n(1 row)\n\n");
}

#[test]
fn no_rows() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            ..PrintOptions::default()
        },
        &[("id", Align::Right), ("name", Align::Left)],
        &[],
    );
    assert_eq!(got, " id | name \n----+------\n(0 rows)\n\n");
}

#[test]
fn multiline() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            ..PrintOptions::default()
        },
        &[
            ("m", Align::Left),
            ("k", Align::Right),
            ("last", Align::Left),
        ],
        &[
            &[Some("a\nbbb"), Some("1"), Some("x\ny\nz")],
            &[Some(""), Some("22"), Some("q")],
        ],
    );
    assert_eq!(got, "  m  | k  | last \n-----+----+------\n a  +|  1 | x   +\n bbb |    | y   +\n     |    | z\n     | 22 | q\n(2 rows)\n\n");
}

#[test]
fn multiline_header() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            ..PrintOptions::default()
        },
        &[("two\nlines", Align::Left), ("n", Align::Right)],
        &[&[Some("v"), Some("5")]],
    );
    assert_eq!(
        got,
        "  two +| n \n lines |   \n-------+---\n v     | 5\n(1 row)\n\n"
    );
}

#[test]
fn wide_unicode() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            ..PrintOptions::default()
        },
        &[("名前", Align::Left), ("n", Align::Right)],
        &[&[Some("日本語"), Some("1")], &[Some("é"), Some("22")]],
    );
    assert_eq!(
        got,
        "  名前  | n  \n--------+----\n 日本語 |  1\n é      | 22\n(2 rows)\n\n"
    );
}

#[test]
fn control_chars() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            ..PrintOptions::default()
        },
        &[("s", Align::Left)],
        &[&[Some("a\tb")], &[Some("c\rd")], &[Some("e\u{1}f")]],
    );
    assert_eq!(
        got,
        "     s     \n-----------\n a       b\n c\\rd\n e\\x01f\n(3 rows)\n\n"
    );
}

#[test]
fn null_display() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            null_display: "(null)".to_string(),
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("b", Align::Left)],
        &[&[None, None], &[Some("1"), Some("x")]],
    );
    assert_eq!(
        got,
        "   a    |   b    \n--------+--------\n (null) | (null)\n      1 | x\n(2 rows)\n\n"
    );
}

#[test]
fn border0() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            border: 0,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("bb", Align::Left), ("c", Align::Left)],
        &[
            &[Some("1"), Some("x\ny"), Some("z")],
            &[Some("10"), Some("w"), Some("vv")],
        ],
    );
    assert_eq!(
        got,
        "a  bb c  \n-- -- --\n 1 x +z\n   y  \n10 w  vv\n(2 rows)\n\n"
    );
}

#[test]
fn border2() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            border: 2,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("bb", Align::Left), ("c", Align::Left)],
        &[
            &[Some("1"), Some("x\ny"), Some("z")],
            &[Some("10"), Some("w"), Some("vv")],
        ],
    );
    assert_eq!(got, "+----+----+----+\n| a  | bb | c  |\n+----+----+----+\n|  1 | x +| z  |\n|    | y  |    |\n| 10 | w  | vv |\n+----+----+----+\n(2 rows)\n\n");
}

#[test]
fn border2_empty() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            border: 2,
            ..PrintOptions::default()
        },
        &[("a", Align::Right)],
        &[],
    );
    assert_eq!(got, "+---+\n| a |\n+---+\n+---+\n(0 rows)\n\n");
}

#[test]
fn tuples_only() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            tuples_only: true,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("b", Align::Left)],
        &[&[Some("1"), Some("x")], &[Some("2"), Some("y")]],
    );
    assert_eq!(got, " 1 | x\n 2 | y\n\n");
}

#[test]
fn footer_off() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            footer: false,
            ..PrintOptions::default()
        },
        &[("a", Align::Right)],
        &[&[Some("1")]],
    );
    assert_eq!(got, " a \n---\n 1\n\n");
}

#[test]
fn unaligned() {
    let got = run(
        PrintOptions {
            format: Format::Unaligned,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("b", Align::Left)],
        &[&[Some("1"), Some("x")], &[Some("2"), None]],
    );
    assert_eq!(got, "a|b\n1|x\n2|\n(2 rows)\n");
}

#[test]
fn unaligned_no_rows() {
    let got = run(
        PrintOptions {
            format: Format::Unaligned,
            ..PrintOptions::default()
        },
        &[("a", Align::Right)],
        &[],
    );
    assert_eq!(got, "a\n(0 rows)\n");
}

#[test]
fn unaligned_sep() {
    let got = run(
        PrintOptions {
            format: Format::Unaligned,
            field_sep: ";".to_string(),
            tuples_only: true,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("b", Align::Left)],
        &[&[Some("1"), Some("x\ny")], &[Some("2"), Some("z")]],
    );
    assert_eq!(got, "1;x\ny\n2;z\n");
}

#[test]
fn unaligned_tuples_empty() {
    let got = run(
        PrintOptions {
            format: Format::Unaligned,
            tuples_only: true,
            ..PrintOptions::default()
        },
        &[("a", Align::Right)],
        &[],
    );
    assert_eq!(got, "");
}

#[test]
fn unaligned_expanded() {
    let got = run(
        PrintOptions {
            format: Format::Unaligned,
            expanded: Expanded::On,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("b", Align::Left)],
        &[&[Some("1"), Some("x")], &[Some("2"), Some("y")]],
    );
    assert_eq!(got, "a|1\nb|x\n\na|2\nb|y\n");
}

#[test]
fn csv() {
    let got = run(
        PrintOptions {
            format: Format::Csv,
            ..PrintOptions::default()
        },
        &[
            ("a", Align::Right),
            ("b,c", Align::Left),
            ("d", Align::Left),
        ],
        &[
            &[Some("1"), Some("say \"hi\""), Some("p,q")],
            &[Some("2"), Some("line\nbreak"), None],
            &[Some("3"), Some("\\."), Some("plain")],
        ],
    );
    assert_eq!(
        got,
        "a,\"b,c\",d\n1,\"say \"\"hi\"\"\",\"p,q\"\n2,\"line\nbreak\",\n3,\"\\.\",plain\n"
    );
}

#[test]
fn csv_tuples() {
    let got = run(
        PrintOptions {
            format: Format::Csv,
            tuples_only: true,
            ..PrintOptions::default()
        },
        &[("a", Align::Right)],
        &[&[Some("1")], &[Some("2")]],
    );
    assert_eq!(got, "1\n2\n");
}

#[test]
fn csv_expanded() {
    let got = run(
        PrintOptions {
            format: Format::Csv,
            expanded: Expanded::On,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("b", Align::Left)],
        &[&[Some("1"), Some("x")], &[Some("2"), Some("y,z")]],
    );
    assert_eq!(got, "a,1\nb,x\na,2\nb,\"y,z\"\n");
}

#[test]
fn csv_semicolon() {
    let got = run(
        PrintOptions {
            format: Format::Csv,
            csv_field_sep: ';',
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("b", Align::Left)],
        &[&[Some("1"), Some("x;y")], &[Some("2"), Some("x,y")]],
    );
    assert_eq!(got, "a;b\n1;\"x;y\"\n2;x,y\n");
}

#[test]
fn expanded() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            expanded: Expanded::On,
            ..PrintOptions::default()
        },
        &[
            ("a", Align::Right),
            ("longname", Align::Left),
            ("m", Align::Left),
        ],
        &[
            &[Some("1"), Some("x"), Some("l1\nline2")],
            &[Some("22"), Some("yyyyyyyyyyyyyyyyyyyy"), Some("")],
        ],
    );
    assert_eq!(got, "-[ RECORD 1 ]------------------\na        | 1\nlongname | x\nm        | l1                  +\n         | line2\n-[ RECORD 2 ]------------------\na        | 22\nlongname | yyyyyyyyyyyyyyyyyyyy\nm        | \n\n");
}

#[test]
fn expanded_narrow() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            expanded: Expanded::On,
            ..PrintOptions::default()
        },
        &[("a", Align::Right)],
        &[&[Some("1")]],
    );
    assert_eq!(got, "-[ RECORD 1 ]\na | 1\n\n");
}

#[test]
fn expanded_empty() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            expanded: Expanded::On,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("b", Align::Left)],
        &[],
    );
    assert_eq!(got, "(0 rows)\n\n");
}

#[test]
fn expanded_border0() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            border: 0,
            expanded: Expanded::On,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("bb", Align::Left)],
        &[&[Some("1"), Some("x\ny")], &[Some("2"), Some("z")]],
    );
    assert_eq!(
        got,
        "* Record 1\na  1\nbb x+\n   y\n* Record 2\na  2\nbb z\n\n"
    );
}

#[test]
fn expanded_border2() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            border: 2,
            expanded: Expanded::On,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("bb", Align::Left)],
        &[&[Some("1"), Some("x\ny")], &[Some("2"), Some("z")]],
    );
    assert_eq!(got, "+-[ RECORD 1 ]-+\n| a  | 1 |\n| bb | x+|\n|    | y |\n+-[ RECORD 2 ]-+\n| a  | 2 |\n| bb | z |\n+----+---+\n\n");
}

#[test]
fn expanded_tuples() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            tuples_only: true,
            expanded: Expanded::On,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("bb", Align::Left)],
        &[&[Some("1"), Some("x")], &[Some("2"), Some("z")]],
    );
    assert_eq!(got, "a  | 1\nbb | x\n---+--\na  | 2\nbb | z\n\n");
}

#[test]
fn expanded_multiline_header() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            expanded: Expanded::On,
            ..PrintOptions::default()
        },
        &[("h\nx", Align::Left), ("b", Align::Right)],
        &[&[Some("v"), Some("1")]],
    );
    assert_eq!(got, "-[ RECORD 1 ]\nh+| v\nx |\nb | 1\n\n");
}

#[test]
fn fetch_count() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            fetch_count: 2,
            ..PrintOptions::default()
        },
        &[("n", Align::Right), ("s", Align::Left)],
        &[
            &[Some("1"), Some("a")],
            &[Some("22"), Some("bbbbbb")],
            &[Some("333"), Some("c")],
            &[Some("4"), Some("dd")],
            &[Some("5"), Some("e")],
        ],
    );
    assert_eq!(got, " n  |   s    \n----+--------\n  1 | a\n 22 | bbbbbb\n 333 | c\n   4 | dd\n 5 | e\n(5 rows)\n\n");
}

#[test]
fn fetch_count_exact() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            fetch_count: 2,
            ..PrintOptions::default()
        },
        &[("n", Align::Right)],
        &[&[Some("1")], &[Some("2")], &[Some("3")], &[Some("4")]],
    );
    assert_eq!(got, " n \n---\n 1\n 2\n 3\n 4\n(4 rows)\n\n");
}

#[test]
fn fetch_count_expanded() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            expanded: Expanded::On,
            fetch_count: 2,
            ..PrintOptions::default()
        },
        &[("n", Align::Right), ("s", Align::Left)],
        &[
            &[Some("1"), Some("a")],
            &[Some("22"), Some("bbbbbb")],
            &[Some("333"), Some("c")],
        ],
    );
    assert_eq!(got, "-[ RECORD 1 ]\nn | 1\ns | a\n-[ RECORD 2 ]\nn | 22\ns | bbbbbb\n-[ RECORD 3 ]\nn | 333\ns | c\n\n");
}

#[test]
fn expanded_auto_wide() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            expanded: Expanded::Auto,
            columns: 20,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("b", Align::Left)],
        &[
            &[Some("1"), Some("a fairly long value here")],
            &[Some("2"), Some("x")],
        ],
    );
    assert_eq!(got, "-[ RECORD 1 ]---------------\na | 1\nb | a fairly long value here\n-[ RECORD 2 ]---------------\na | 2\nb | x\n\n");
}

#[test]
fn expanded_auto_narrow() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            expanded: Expanded::Auto,
            columns: 20,
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("b", Align::Left)],
        &[&[Some("1"), Some("x")]],
    );
    assert_eq!(got, " a | b \n---+---\n 1 | x\n(1 row)\n\n");
}

#[test]
fn no_columns() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            ..PrintOptions::default()
        },
        &[],
        &[&[]],
    );
    assert_eq!(got, "--\n(1 row)\n\n");
}

#[test]
fn fetch_count_expanded_auto() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            expanded: Expanded::Auto,
            fetch_count: 2,
            ..PrintOptions::default()
        },
        &[("n", Align::Right), ("s", Align::Left)],
        &[
            &[Some("1"), Some("a")],
            &[Some("22"), Some("b\nc")],
            &[Some("333"), Some("d")],
        ],
    );
    assert_eq!(got, "-[ RECORD 1 ]\nn | 1\ns | a\n-[ RECORD 2 ]\nn | 22\ns | b +\n  | c\n-[ RECORD 3 ]\nn | 333\ns | d\n\n");
}

#[test]
fn expanded_tuples_border2_unicode() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            border: 2,
            tuples_only: true,
            expanded: Expanded::On,
            ..PrintOptions::default()
        },
        &[("名前", Align::Left), ("n", Align::Right)],
        &[&[Some("日本語\nx"), Some("1")], &[None, None]],
    );
    assert_eq!(got, "+------+--------+\n| 名前 | 日本語+|\n|      | x      |\n| n    | 1      |\n+------+--------+\n| 名前 |        |\n| n    |        |\n+------+--------+\n\n");
}

#[test]
fn title_aligned() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            title: Some("My Title".to_string()),
            ..PrintOptions::default()
        },
        &[("a", Align::Right), ("b", Align::Left)],
        &[&[Some("1"), Some("x")]],
    );
    assert_eq!(got, "My Title\n a | b \n---+---\n 1 | x\n(1 row)\n\n");
}

#[test]
fn title_wider_than_table() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            title: Some("A title wider than the table".to_string()),
            ..PrintOptions::default()
        },
        &[("a", Align::Right)],
        &[&[Some("1")]],
    );
    assert_eq!(
        got,
        "A title wider than the table\n a \n---\n 1\n(1 row)\n\n"
    );
}

#[test]
fn title_border2_multiline() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            border: 2,
            title: Some("T".to_string()),
            ..PrintOptions::default()
        },
        &[("a", Align::Left)],
        &[&[Some("x\ny")]],
    );
    assert_eq!(
        got,
        "  T\n+---+\n| a |\n+---+\n| x+|\n| y |\n+---+\n(1 row)\n\n"
    );
}

#[test]
fn title_unaligned() {
    let got = run(
        PrintOptions {
            format: Format::Unaligned,
            title: Some("My T".to_string()),
            ..PrintOptions::default()
        },
        &[("a", Align::Right)],
        &[&[Some("1")]],
    );
    assert_eq!(got, "My T\na\n1\n(1 row)\n");
}

#[test]
fn title_unaligned_expanded() {
    let got = run(
        PrintOptions {
            format: Format::Unaligned,
            expanded: Expanded::On,
            title: Some("My T".to_string()),
            ..PrintOptions::default()
        },
        &[("a", Align::Right)],
        &[&[Some("1")]],
    );
    assert_eq!(got, "My T\n\na|1\n");
}

#[test]
fn title_expanded() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            expanded: Expanded::On,
            title: Some("My T".to_string()),
            ..PrintOptions::default()
        },
        &[("a", Align::Right)],
        &[&[Some("1")]],
    );
    assert_eq!(got, "My T\n-[ RECORD 1 ]\na | 1\n\n");
}

#[test]
fn title_csv() {
    let got = run(
        PrintOptions {
            format: Format::Csv,
            title: Some("My T".to_string()),
            ..PrintOptions::default()
        },
        &[("a", Align::Right)],
        &[&[Some("1")]],
    );
    assert_eq!(got, "a\n1\n");
}

#[test]
fn fetch_count_border2() {
    let got = run(
        PrintOptions {
            format: Format::Aligned,
            border: 2,
            fetch_count: 2,
            ..PrintOptions::default()
        },
        &[("n", Align::Right)],
        &[&[Some("1")], &[Some("22")], &[Some("333")], &[Some("4")]],
    );
    assert_eq!(
        got,
        "+----+\n| n  |\n+----+\n|  1 |\n| 22 |\n| 333 |\n|   4 |\n+---+\n(4 rows)\n\n"
    );
}

/// psql 15's `\d tt` for `create table tt(a int primary key, b text not
/// null default 'x')`: a title and describe footers instead of `(N rows)`.
fn describe(opts: PrintOptions) -> String {
    let cols: Vec<ColumnInfo> = ["Column", "Type", "Collation", "Nullable", "Default"]
        .iter()
        .map(|n| ColumnInfo::new(*n, Align::Left))
        .collect();
    let mut out = Vec::new();
    let mut p = ResultPrinter::new(&mut out, &opts, &cols)
        .with_title("Table \"public.tt\"")
        .with_footers(vec![
            "Indexes:".into(),
            "    \"tt_pkey\" PRIMARY KEY, btree (a)".into(),
        ]);
    p.push_row(&[
        Some("a"),
        Some("integer"),
        Some(""),
        Some("not null"),
        Some(""),
    ])
    .unwrap();
    p.push_row(&[
        Some("b"),
        Some("text"),
        Some(""),
        Some("not null"),
        Some("'x'::text"),
    ])
    .unwrap();
    p.finish().unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn describe_title_and_footers() {
    assert_eq!(
        describe(PrintOptions::default()),
        "                  Table \"public.tt\"\n Column |  Type   | Collation | Nullable |  Default  \n\
         --------+---------+-----------+----------+-----------\n a      | integer |           | not null | \n\
         \x20b      | text    |           | not null | 'x'::text\nIndexes:\n    \"tt_pkey\" PRIMARY KEY, btree (a)\n\n"
    );
    let unaligned = PrintOptions {
        format: Format::Unaligned,
        footer: false,
        ..PrintOptions::default()
    };
    assert_eq!(
        describe(unaligned),
        "Table \"public.tt\"\nColumn|Type|Collation|Nullable|Default\na|integer||not null|\n\
         b|text||not null|'x'::text\nIndexes:\n    \"tt_pkey\" PRIMARY KEY, btree (a)\n"
    );
}

#[test]
fn alignment_by_type_oid() {
    // psql's column_type_alignment: numbers right, the rest left.
    for oid in [21, 23, 20, 700, 701, 1700, 26, 790] {
        assert_eq!(Align::for_type_oid(oid), Align::Right, "{oid}");
    }
    for oid in [16, 25, 1043, 1042, 1082, 1114, 1186, 705] {
        assert_eq!(Align::for_type_oid(oid), Align::Left, "{oid}");
    }
}
