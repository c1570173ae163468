//! `sql.ebnf` stays in step with the parser: every example in it (a
//! comment opening with `e.g.`) parses, and the file has a rule for every
//! statement kind.

use heapdb_grammar::parse_one;

const EBNF: &str = include_str!("../sql.ebnf");

/// The example statements: the text of each comment opening with `e.g.`.
fn examples() -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut rest = EBNF;
    while let Some(start) = rest.find("(* e.g. ") {
        let body = &rest[start + "(* e.g. ".len()..];
        let end = body.find(" *)").expect("every example comment is closed");
        out.push(&body[..end]);
        rest = &body[end..];
    }
    out
}

#[test]
fn every_example_parses_and_round_trips() {
    let examples = examples();
    assert!(examples.len() >= 60, "only {} examples", examples.len());
    for example in examples {
        let statement =
            parse_one(example).unwrap_or_else(|e| panic!("{example}\n  {e} at byte {}", e.offset));
        let printed = statement.to_string();
        assert_eq!(parse_one(&printed).as_ref(), Ok(&statement), "{example}");
    }
}

#[test]
fn every_statement_kind_has_a_rule() {
    for rule in [
        "query",
        "insert",
        "update",
        "delete",
        "create_table",
        "create_table_as",
        "drop_table",
        "truncate",
        "create_view",
        "drop_view",
        "copy",
        "vacuum",
        "analyze",
        "explain",
        "begin",
        "commit",
        "rollback",
        "set_transaction",
        "set",
        "show",
        "reset",
        "comment",
        "expr",
        "data_type",
    ] {
        let definition = format!("\n{rule} ");
        assert!(EBNF.contains(&definition), "sql.ebnf has no rule `{rule}`");
    }
}
