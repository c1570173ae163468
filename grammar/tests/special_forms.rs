//! The SQL-standard keyword forms of extract, substring, position and trim
//! parse to the same trees as the ordinary calls they stand for.

use heapdb_grammar::parse;

fn same(a: &str, b: &str) {
    let x = parse(a).unwrap_or_else(|e| panic!("{a}: {e}"));
    let y = parse(b).unwrap_or_else(|e| panic!("{b}: {e}"));
    assert_eq!(x, y, "{a}  vs  {b}");
    // And the printed form parses back to the same tree.
    let printed = x[0].to_string();
    assert_eq!(parse(&printed).unwrap(), x, "{printed}");
}

#[test]
fn keyword_forms_are_ordinary_calls() {
    same("select extract(year from d)", "select extract('year', d)");
    same(
        "select extract('epoch' from d)",
        "select extract('epoch', d)",
    );
    same(
        "select substring(s from 2 for 3)",
        "select substring(s, 2, 3)",
    );
    same("select substring(s from 2)", "select substring(s, 2)");
    same("select substring(s for 2)", "select substring(s, 1, 2)");
    same(
        "select position('l' in 'hello')",
        "select position('l', 'hello')",
    );
    same("select position(a || b in c)", "select position(a || b, c)");
    same("select trim(both 'x' from s)", "select btrim(s, 'x')");
    same("select trim(leading 'x' from s)", "select ltrim(s, 'x')");
    same("select trim(trailing from s)", "select rtrim(s)");
    same("select trim('x' from s)", "select btrim(s, 'x')");
    same("select trim(s)", "select trim(s)");
}

#[test]
fn malformed_keyword_forms_are_syntax_errors() {
    for bad in [
        "select extract(year from)",
        "select substring(s from)",
        "select position('a' in)",
        "select trim(both from)",
    ] {
        assert!(parse(bad).is_err(), "{bad}");
    }
}
