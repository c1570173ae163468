//! Error positions agree with PostgreSQL 15 on broken statements.
//!
//! `data/error_positions.tsv` holds statements made from valid ones by
//! deleting or swapping tokens, each with the SQLSTATE, byte offset and
//! message PostgreSQL 15's parser gave it (generated once by
//! `scripts/grammar-error-positions.py` from a running server; never edited
//! by hand). heapdb must report the same message at the same offset, except
//! for the statements listed in [`EXCLUDED`], where heapdb's accepted
//! language differs from PostgreSQL's, each with its reason.

use heapdb_grammar::parse_one;

const DATA: &str = include_str!("data/error_positions.tsv");

/// `(statement, why heapdb's answer differs from PostgreSQL's)`.
const EXCLUDED: &[(&str, &str)] = &[
    (
        "select coalesce(a, 0), nullif(a, 1,) greatest(1, 2), least(1, 2), abs(-1)",
        "NULLIF is an ordinary call of any arity in heapdb; PostgreSQL's grammar takes exactly two arguments",
    ),
    (
        "SELECT extract(year FROM d), substring(s FROM 2 FOR 3), position'l' IN s), trim(BOTH 'x' FROM s) FROM t",
        "POSITION is a keyword in PostgreSQL; heapdb reads it as a plain name, so `position 'l'` is a typed literal",
    ),
    (
        "SELECT s.n FROM VALUES( (1), (2)) AS s(n)",
        "heapdb reads `VALUES(...)` in FROM as a table function (any column-name keyword may name one)",
    ),
    (
        "CREATE TABLE IF NOT EXISTS t (id integer PRIMARY KEY, name varchar(20) NOT NULL DEFAULT 'x', price numeric(10,2,) flag char(1))",
        "PostgreSQL's grammar takes any expression list as type modifiers; heapdb at most two integers",
    ),
    (
        "CREATE TABLE IF NOT EXISTS t (id integer PRIMARY KEY, name varchar(20) NOT NULL DEFAULT 'x', price numeric(10,2, flag char(1))",
        "PostgreSQL's grammar takes any expression list as type modifiers; heapdb at most two integers",
    ),
    (
        "select distinct a, t.* s ,.t.* from s.t",
        "PostgreSQL allows an alias after `t.*`; heapdb does not",
    ),
    (
        "SELECT CAST(a AS bigint), (SELECT max(a) FROM t), EXISTS (SELECT 1 FROM u, CURRENT_TIMESTAMP",
        "PostgreSQL's FROM takes SQL-value functions such as CURRENT_TIMESTAMP as table functions; heapdb does not",
    ),
    (
        "create table t (a int default -not 1 null, b text default 'x' || 'y', primary key (a, b), unique (b), check (a > 0))",
        "heapdb restricts DEFAULT to a b_expr at its top level only, so `-not 1` is accepted",
    ),
    (
        "select a is ,true a is not false, a is unknown, a is not unknown",
        "PostgreSQL's LALR parser also reads a trailing IS as a bare column label; heapdb reads the IS operator",
    ),
];

/// The statements whose error heapdb's lexer reports differently by design
/// (PostgreSQL 15's `trailing junk after numeric literal` is not lexed).
fn lexer_differs(message: &str) -> bool {
    message.starts_with("trailing junk")
}

#[test]
fn syntax_error_positions_match_postgres() {
    let mut compared = 0;
    let mut mismatches = Vec::new();
    let mut excluded_seen = Vec::new();
    for line in DATA.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 4, "malformed line: {line}");
        let (sql, offset, message) = (cols[0], cols[2], cols[3]);
        let offset: usize = offset.parse().expect("offset");
        if lexer_differs(message) {
            continue;
        }
        let got = match parse_one(sql) {
            Ok(_) => "parses".to_string(),
            Err(e) => format!("{}\t{}", e.offset, e.message),
        };
        let want = format!("{offset}\t{message}");
        if let Some((_, _)) = EXCLUDED.iter().find(|(s, _)| *s == sql) {
            excluded_seen.push(sql);
            assert_ne!(got, want, "excluded but now agrees: {sql}");
            continue;
        }
        compared += 1;
        if got != want {
            mismatches.push(format!(
                "{sql}\n    heapdb:     {got}\n    PostgreSQL: {want}"
            ));
        }
    }
    assert_eq!(
        excluded_seen.len(),
        EXCLUDED.len(),
        "an exclusion names no statement"
    );
    assert!(compared >= 400, "only {compared} statements compared");
    assert!(
        mismatches.is_empty(),
        "{} of {compared} differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
