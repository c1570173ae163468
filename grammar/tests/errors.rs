//! Error cases: PostgreSQL 15's exact message and position (byte offset and
//! the offending token) for each, checked against a live server when the
//! corpus was written; deep nesting is an error, never a stack overflow.

use heapdb_grammar::{line_col, parse, parse_one, ParseErrorKind, MAX_DEPTH};

/// `(input, message, byte offset)`.
const CASES: &[(&str, &str, usize)] = &[
    ("select 1 from", "syntax error at end of input", 13),
    ("select a, from t", "syntax error at or near \"from\"", 10),
    ("SELECT a FROM t WHERE", "syntax error at end of input", 21),
    ("select 1 = 1 = 1", "syntax error at or near \"=\"", 13),
    (
        "select 1 is distinct from 2 is null",
        "syntax error at or near \"is\"",
        28,
    ),
    (
        "select a like b like c",
        "syntax error at or near \"like\"",
        16,
    ),
    (
        "select 1 between 1 and 2 between 1 and 2",
        "syntax error at or near \"between\"",
        25,
    ),
    (
        "select 'abc",
        "unterminated quoted string at or near \"'abc\"",
        7,
    ),
    (
        "select \"abc",
        "unterminated quoted identifier at or near \"\"abc\"",
        7,
    ),
    (
        "select \"\"",
        "zero-length delimited identifier at or near \"\"\"\"",
        7,
    ),
    (
        "select 1 /* x",
        "unterminated /* comment at or near \"/* x\"",
        9,
    ),
    (
        "select $$abc",
        "unterminated dollar-quoted string at or near \"$$abc\"",
        7,
    ),
    ("create table t (a int", "syntax error at end of input", 21),
    ("vacuum (foo) t", "unrecognized VACUUM option \"foo\"", 8),
    (
        "explain (foo) select 1",
        "unrecognized EXPLAIN option \"foo\"",
        9,
    ),
    (
        "copy t from stdin (foo 1)",
        "option \"foo\" not recognized",
        19,
    ),
    (
        "copy t from stdin (format xml)",
        "COPY format \"xml\" not recognized",
        19,
    ),
    (
        "copy t from stdin (header maybe)",
        "header requires a Boolean value or \"match\"",
        19,
    ),
    (
        "vacuum (verbose maybe) t",
        "verbose requires a Boolean value",
        8,
    ),
    (
        "explain (format xml2) select 1",
        "unrecognized value for EXPLAIN option \"format\": \"xml2\"",
        9,
    ),
    (
        "select * from t limit 1 limit 2",
        "syntax error at or near \"limit\"",
        24,
    ),
    (
        "insert into t values (1,'a') (2, 'b')",
        "syntax error at or near \"(\"",
        29,
    ),
    ("select (1 2)", "syntax error at or near \"2\"", 10),
    (
        "select 1::varchar(99999999999)",
        "syntax error at or near \"99999999999\"",
        18,
    ),
    ("selec 1", "syntax error at or near \"selec\"", 0),
    ("select 1; selec 1", "syntax error at or near \"selec\"", 10),
    ("select 1 select 2", "syntax error at or near \"2\"", 16),
    (
        "select a from t where a = ;",
        "syntax error at or near \";\"",
        26,
    ),
    (
        "select case when a then 1",
        "syntax error at end of input",
        25,
    ),
    ("select case end", "syntax error at or near \"end\"", 12),
    ("select count(*", "syntax error at end of input", 14),
    ("select a from t join u", "syntax error at end of input", 22),
    (
        "select a from t natural u",
        "syntax error at or near \"u\"",
        24,
    ),
    ("drop table", "syntax error at end of input", 10),
    ("update t set a", "syntax error at end of input", 14),
    (
        "select E'\\xff'",
        "invalid byte sequence for encoding \"UTF8\": 0xff",
        7,
    ),
    ("select 1 ]", "syntax error at or near \"]\"", 9),
    (
        "select 1 from t where a = 1 and",
        "syntax error at end of input",
        31,
    ),
    (
        "begin isolation level maybe",
        "syntax error at or near \"maybe\"",
        22,
    ),
    ("explain vacuum", "syntax error at or near \"vacuum\"", 8),
    (
        "copy (select 1) from stdin",
        "syntax error at or near \"from\"",
        16,
    ),
    (
        "select float(0) '1'",
        "precision for type float must be at least 1 bit",
        13,
    ),
    ("SELECT U&'wrong: \\061'", "invalid Unicode escape", 17),
    ("SELECT U&'wrong: \\+0061'", "invalid Unicode escape", 17),
    (
        "SELECT U&'wrong: \\db99'",
        "invalid Unicode surrogate pair",
        22,
    ),
    (
        "SELECT U&'wrong: \\db99xy'",
        "invalid Unicode surrogate pair",
        22,
    ),
    (
        "SELECT U&'wrong: \\+00db99\\+000061'",
        "invalid Unicode surrogate pair",
        25,
    ),
    (
        "SELECT U&'wrong: \\+2FFFFF'",
        "invalid Unicode escape value",
        17,
    ),
    (
        "SELECT U&'wrong: +0061' UESCAPE +",
        "UESCAPE must be followed by a simple string literal at or near \"+\"",
        32,
    ),
    (
        "SELECT U&'wrong: +0061' UESCAPE '+'",
        "invalid Unicode escape character at or near \"'+'\"",
        32,
    ),
    (
        "select U&'a' uescape",
        "UESCAPE must be followed by a simple string literal at end of input",
        20,
    ),
    (
        "select 1 as U&\"\"",
        "zero-length delimited identifier at or near \"U&\"\"\"",
        12,
    ),
    ("SELECT E'wrong: \\u061'", "invalid Unicode escape", 16),
    (
        "SELECT E'wrong: \\udb99'",
        "invalid Unicode surrogate pair at or near \"'\"",
        22,
    ),
    (
        "SELECT E'wrong: \\udb99\\u0061'",
        "invalid Unicode surrogate pair at or near \"\\u0061\"",
        22,
    ),
    (
        "SELECT E'wrong: \\U002FFFFF'",
        "invalid Unicode escape value at or near \"\\U002FFFFF\"",
        16,
    ),
    ("select 'a'  'b'", "syntax error at or near \"'b'\"", 12),
    (
        "select 'a'\n/* c */ 'b'",
        "syntax error at or near \"'b'\"",
        19,
    ),
    (
        "create table t (a float(54))",
        "precision for type float must be less than 54 bits",
        24,
    ),
];

#[test]
fn errors_have_postgres_messages_and_positions() {
    let mut failures = Vec::new();
    for (input, message, offset) in CASES {
        match parse(input) {
            Ok(ast) => failures.push(format!("{input}: parsed as {ast:?}")),
            Err(e) if e.message != *message || e.offset != *offset => failures.push(format!(
                "{input}\n  got:      {} at {}\n  expected: {message} at {offset}",
                e.message, e.offset
            )),
            Err(e) => {
                // The token is the text at the offset (none at the end).
                if *offset == input.len() {
                    assert_eq!(e.token, None, "{input}");
                } else {
                    let token = e.token.clone().expect("a token away from the end");
                    assert!(
                        input[*offset..].starts_with(&token),
                        "{input}: token {token:?}"
                    );
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn error_kinds_map_to_sqlstates() {
    assert_eq!(
        parse("select from from").unwrap_err().kind,
        ParseErrorKind::Syntax
    );
    assert_eq!(
        parse("copy t from stdin (format xml)").unwrap_err().kind,
        ParseErrorKind::InvalidParameterValue
    );
    assert_eq!(
        parse("select E'\\xff'").unwrap_err().kind,
        ParseErrorKind::CharacterNotInRepertoire
    );
    let deep = format!("select {}1{}", "(".repeat(10_000), ")".repeat(10_000));
    let e = parse(&deep).unwrap_err();
    assert_eq!(e.kind, ParseErrorKind::TooDeep);
    assert_eq!(e.message, "stack depth limit exceeded");
}

#[test]
fn positions_convert_to_lines_and_columns() {
    let sql = "select a,\n       b\n  from t\n where";
    let e = parse_one(sql).unwrap_err();
    assert_eq!(e.message, "syntax error at end of input");
    assert_eq!(line_col(sql, e.offset), (4, 7));
    let sql = "select 'é', x\nfrom t t2 t3";
    let e = parse_one(sql).unwrap_err();
    assert_eq!(e.token.as_deref(), Some("t3"));
    assert_eq!(e.line_col(sql), (2, 11));
}

/// Runs `f` on a thread with a 2 MiB stack (the default for spawned
/// threads, and smaller than a main thread's), so an unbounded recursion
/// would crash the test.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no stack overflow");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    on_small_stack(|| {
        let n = 10_000;
        let inputs = [
            format!("select {}1{}", "(".repeat(n), ")".repeat(n)),
            format!("select {}1", "- ".repeat(n)),
            format!("select {}true", "not ".repeat(n)),
            format!("select {}1{}", "abs(".repeat(n), ")".repeat(n)),
            format!("select {}1{}", "(select ".repeat(n), ")".repeat(n)),
            format!("select 1 from {}t{}", "(".repeat(n), ")".repeat(n)),
            format!("{}select 1{}", "(".repeat(n), ")".repeat(n)),
            format!("select {}", vec!["1"; n].join(" + ")),
            format!("select {}", vec!["a"; n].join(" and ")),
            format!("select 1{}", "::int".repeat(n)),
            vec!["select 1"; n].join(" union "),
            format!("select * from t{}", " cross join t".repeat(n)),
            format!("select {}1 end", "case when true then ".repeat(n)),
            format!("select 1 in ({}1{})", "(".repeat(n), ")".repeat(n)),
        ];
        for input in &inputs {
            let e = parse(input).unwrap_err();
            assert_eq!(e.kind, ParseErrorKind::TooDeep, "{}", &input[..40]);
        }
    });
}

#[test]
fn nesting_within_the_limit_parses_prints_and_drops() {
    on_small_stack(|| {
        let n = MAX_DEPTH / 4;
        let inputs = [
            format!("select {}1{}", "(".repeat(n), ")".repeat(n)),
            format!("select {}", vec!["1"; n].join(" - ")),
            format!("select {}1{}", "(select ".repeat(n / 2), ")".repeat(n / 2)),
            vec!["select 1"; n].join(" union "),
        ];
        for input in &inputs {
            let ast = parse_one(input).expect("within the limit");
            let printed = ast.to_string();
            assert_eq!(parse_one(&printed).expect("reparses"), ast);
        }
    });
}

#[test]
fn nonstandard_strings_take_escapes_and_warn_once_per_literal() {
    use heapdb_grammar::{parse_with, ParseOptions};
    let sql = r"select 'a\\b\\', 'c\'d', 'e\nf', 'plain', E'x\\y', U&'\0041'";
    let options = ParseOptions {
        standard_conforming_strings: false,
        escape_string_warning: true,
    };
    // U&'...' is refused at its start.
    let e = parse_with(sql, options).unwrap_err();
    assert_eq!(
        (e.message.as_str(), e.offset, e.kind),
        (
            "unsafe use of string constant with Unicode escapes",
            sql.find("U&").unwrap(),
            ParseErrorKind::FeatureNotSupported
        )
    );
    let sql = &sql[..sql.find(", U&").unwrap()];
    let (stmts, warnings) = parse_with(sql, options).unwrap();
    assert_eq!(
        stmts[0].to_string(),
        "SELECT 'a\\b\\', 'c''d', 'e\nf', 'plain', 'x\\y'"
    );
    let got: Vec<(&str, usize)> = warnings.iter().map(|w| (w.message, w.offset)).collect();
    assert_eq!(
        got,
        [
            (r"nonstandard use of \\ in a string literal", 7),
            (r"nonstandard use of \' in a string literal", 17),
            ("nonstandard use of escape in a string literal", 25),
        ]
    );
    let quiet = ParseOptions {
        escape_string_warning: false,
        ..options
    };
    assert!(parse_with(sql, quiet).unwrap().1.is_empty());
    // Standard strings: backslashes are text, and nothing is said.
    let (stmts, warnings) = parse_with(r"select 'a\'", ParseOptions::default()).unwrap();
    assert_eq!(stmts[0].to_string(), r"SELECT 'a\'");
    assert!(warnings.is_empty());
}
