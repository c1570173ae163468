//! Index DDL: `CREATE [UNIQUE] INDEX` and `DROP INDEX`.

use nom::combinator::{cut, map, not, opt};
use nom::multi::separated_list1;
use nom::sequence::{delimited, pair, preceded, tuple};
use nom::Parser;

use super::expr::expr;
use super::tokens::{col_id, kw, kw_of, tok, PResult, Tokens};
use super::{object_name, paren_col_list};
use crate::ast::{CreateIndex, DropIndex, IndexElem, Offset, Statement};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// `index_elem ::= col_id [object_name] ['ASC' | 'DESC'] ['NULLS' ('FIRST' |
/// 'LAST')]` (the name: an operator class)
pub(super) fn index_elem(i: Tokens<'_>) -> PResult<'_, IndexElem> {
    let offset = Offset(i.first().start);
    let (i, (column, opclass, dir, nulls)) = tuple((
        col_id,
        opt(preceded(
            not(kw_of(&[Keyword::Asc, Keyword::Desc, Keyword::Nulls])),
            object_name,
        )),
        opt(kw_of(&[Keyword::Asc, Keyword::Desc])),
        opt(preceded(
            kw(Keyword::Nulls),
            cut(kw_of(&[Keyword::First, Keyword::Last])),
        )),
    ))(i)?;
    Ok((
        i,
        IndexElem {
            column,
            opclass,
            asc: dir.map(|k| k == Keyword::Asc),
            nulls_first: nulls.map(|k| k == Keyword::First),
            offset,
        },
    ))
}

/// `create_index ::= 'CREATE' ['UNIQUE'] 'INDEX' [['IF' 'NOT' 'EXISTS'] col_id]
///   'ON' ['ONLY'] object_name ['USING' col_id] '(' index_elem {',' index_elem} ')'
///   ['INCLUDE' '(' col_id {',' col_id} ')'] ['WHERE' expr]`
pub(crate) fn create_index(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Create).parse(i)?;
    let (i, unique) = opt(kw(Keyword::Unique))(i)?;
    let (i, _) = kw(Keyword::Index).parse(i)?;
    let (i, (if_not_exists, name)) = cut(pair(
        map(
            opt(tuple((
                kw(Keyword::If),
                kw(Keyword::Not),
                kw(Keyword::Exists),
            ))),
            |x| x.is_some(),
        ),
        opt(col_id),
    ))(i)?;
    if if_not_exists && name.is_none() {
        return i.fail();
    }
    let (i, (_, _, table, method, columns, include, predicate)) = cut(tuple((
        kw(Keyword::On),
        opt(kw(Keyword::Only)),
        object_name,
        opt(preceded(kw(Keyword::Using), cut(col_id))),
        delimited(
            tok(TokenKind::LParen),
            separated_list1(tok(TokenKind::Comma), cut(index_elem)),
            tok(TokenKind::RParen),
        ),
        opt(preceded(kw(Keyword::Include), cut(paren_col_list))),
        opt(preceded(kw(Keyword::Where), cut(expr))),
    )))(i)?;
    let create = CreateIndex {
        unique: unique.is_some(),
        if_not_exists,
        name,
        table,
        method,
        columns,
        include: include.unwrap_or_default(),
        predicate,
    };
    Ok((i, Statement::CreateIndex(Box::new(create))))
}

/// `drop_index ::= 'DROP' 'INDEX' ['IF' 'EXISTS'] object_name {',' object_name}
///   ['CASCADE' | 'RESTRICT']`
pub(crate) fn drop_index(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = pair(kw(Keyword::Drop), kw(Keyword::Index)).parse(i)?;
    let (i, (if_exists, names, behavior)) = cut(tuple((
        opt(preceded(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        separated_list1(tok(TokenKind::Comma), cut(object_name)),
        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
    )))(i)?;
    Ok((
        i,
        Statement::DropIndex(DropIndex {
            if_exists: if_exists.is_some(),
            names,
            cascade: behavior == Some(Keyword::Cascade),
        }),
    ))
}

#[cfg(test)]
mod tests {
    use crate::ast::Statement;
    use crate::parse;

    fn one(sql: &str) -> Statement {
        let mut v = parse(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        assert_eq!(v.len(), 1, "{sql}");
        v.remove(0)
    }

    fn round_trip(sql: &str) -> Statement {
        let s = one(sql);
        let again = one(&s.to_string());
        assert_eq!(s, again, "{sql} printed as {s}");
        s
    }

    #[test]
    fn index_statements_round_trip() {
        for sql in [
            "create index on t (a)",
            "create index on t (a text_pattern_ops desc nulls first, b pg_catalog.int4_ops, c nulls last)",
            "CREATE UNIQUE INDEX IF NOT EXISTS i ON ONLY t USING btree (a DESC NULLS LAST, b ASC, c NULLS FIRST) INCLUDE (d, e) WHERE a > 1",
            "create index \"Odd\" on s.t (\"Col\")",
            "drop index i",
            "drop index if exists i, s.j cascade",
        ] {
            round_trip(sql);
        }
        assert!(parse("create index if not exists on t (a)").is_err());
        assert!(parse("create index i on t ()").is_err());
        assert!(parse("create index i on t (a").is_err());
    }
}
