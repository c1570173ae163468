//! View DDL: `CREATE [OR REPLACE] VIEW`, `DROP VIEW`. `VIEW` and `REPLACE`
//! are unreserved words in PostgreSQL that the rest of the grammar never
//! looks for, so they are matched as words, not keywords.

use nom::branch::alt;
use nom::combinator::{cut, opt};
use nom::multi::separated_list1;
use nom::sequence::{pair, preceded, tuple};
use nom::Parser;

use super::query::query;
use super::tokens::{kw, kw_of, tok, word, PResult, Tokens};
use super::{object_name, opt_paren_col_list};
use crate::ast::{CheckOption, CreateView, DropView, Statement};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// Whether the statement `i` starts is `CREATE [OR REPLACE] VIEW`
/// (`CREATE OR ...` is only ever that here).
pub(crate) fn is_create_view(i: Tokens<'_>) -> bool {
    i.is_kw(1, Keyword::Or) || is_word(i, 1, "view")
}

/// Whether the statement `i` starts is `DROP VIEW`.
pub(crate) fn is_drop_view(i: Tokens<'_>) -> bool {
    is_word(i, 1, "view")
}

fn is_word(i: Tokens<'_>, n: usize, w: &'static str) -> bool {
    n < i.toks.len() && word(w)(i.skip(n)).is_ok()
}

/// `create_view ::= 'CREATE' ['OR' 'REPLACE'] 'VIEW' object_name
///   ['(' col_id {',' col_id} ')'] 'AS' query
///   ['WITH' ['CASCADED' | 'LOCAL'] 'CHECK' 'OPTION']`
pub(crate) fn create_view(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Create).parse(i)?;
    let (i, (or_replace, _, name, columns, _, query)) = cut(tuple((
        opt(pair(kw(Keyword::Or), cut(word("replace")))),
        word("view"),
        object_name,
        opt_paren_col_list,
        kw(Keyword::As),
        query,
    )))(i)?;
    let (i, check_option) = opt(check_option)(i)?;
    let create = CreateView {
        or_replace: or_replace.is_some(),
        name,
        columns,
        query: Box::new(query),
        check_option,
    };
    Ok((i, Statement::CreateView(Box::new(create))))
}

/// `check_option ::= 'WITH' ['CASCADED' | 'LOCAL'] 'CHECK' 'OPTION'`
fn check_option(i: Tokens<'_>) -> PResult<'_, CheckOption> {
    let (i, _) = kw(Keyword::With).parse(i)?;
    let (i, (which, _, _)) = cut(tuple((
        opt(alt((
            word("cascaded").map(|_| CheckOption::Cascaded),
            word("local").map(|_| CheckOption::Local),
        ))),
        kw(Keyword::Check),
        word("option"),
    )))(i)?;
    Ok((i, which.unwrap_or(CheckOption::Cascaded)))
}

/// `drop_view ::= 'DROP' 'VIEW' ['IF' 'EXISTS'] object_name {',' object_name} ['CASCADE' | 'RESTRICT']`
pub(crate) fn drop_view(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Drop).parse(i)?;
    let (i, (_, if_exists, names, behavior)) = cut(tuple((
        word("view"),
        opt(preceded(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        separated_list1(tok(TokenKind::Comma), cut(object_name)),
        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
    )))(i)?;
    Ok((
        i,
        Statement::DropView(DropView {
            if_exists: if_exists.is_some(),
            names,
            cascade: behavior == Some(Keyword::Cascade),
        }),
    ))
}

#[cfg(test)]
mod tests {
    use crate::ast::Statement;
    use crate::parse_one;

    #[test]
    fn create_and_drop_view_round_trip() {
        for sql in [
            "CREATE VIEW v AS SELECT a FROM t",
            "CREATE OR REPLACE VIEW s.v (x, y) AS SELECT a, b FROM t WHERE a > 1",
            "CREATE VIEW v AS VALUES (1), (2)",
            "CREATE VIEW v AS SELECT a FROM t WHERE a > 0 WITH CASCADED CHECK OPTION",
            "CREATE OR REPLACE VIEW v AS SELECT a FROM t WITH LOCAL CHECK OPTION",
            "DROP VIEW v",
            "DROP VIEW IF EXISTS v, w CASCADE",
        ] {
            let s = parse_one(sql).expect(sql);
            assert_eq!(s.to_string(), sql);
            assert_eq!(parse_one(&s.to_string()).expect("reparses"), s);
        }
        assert!(matches!(
            parse_one("create view v as select 1").unwrap(),
            Statement::CreateView(_)
        ));
        // `view` stays an ordinary name elsewhere.
        assert!(parse_one("create table view (view int)").is_ok());
        assert!(parse_one("drop table view").is_ok());
    }

    #[test]
    fn errors_stop_where_postgresql_does() {
        for (sql, at) in [
            ("create or replace table t (a int)", "table"),
            ("create view v select 1", "select"),
            ("create view v as", "end of input"),
            ("drop view", "end of input"),
            ("drop view v restrict cascade", "cascade"),
            ("create view v as select 1 with check", "end of input"),
            ("create view v as select 1 with local option", "option"),
        ] {
            let e = parse_one(sql).expect_err(sql).to_string();
            assert!(e.contains(at), "{sql}: {e}");
        }
    }
}
