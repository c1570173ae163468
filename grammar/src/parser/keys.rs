//! The SQL around keys and indexes beyond CREATE/DROP INDEX: `INSERT ...
//! ON CONFLICT` (called from the INSERT rule), `ALTER TABLE ... ADD/DROP
//! CONSTRAINT` and `REINDEX`.

use nom::combinator::{cut, opt};
use nom::multi::separated_list1;
use nom::sequence::{delimited, pair, preceded, tuple};
use nom::Parser;

use super::alter_column::column_action;
use super::ddl::{check_constraint, foreign_key, opt_constraint_name};
use super::dml::assignments;
use super::index::index_elem;
use super::query::opt_where;
use super::tokens::{col_id, col_label, kw, kw_of, tok, word, PResult, Tokens};
use super::utility::set_arg;
use super::{object_name, paren_col_list};
use crate::ast::{
    AlterTable, AlterTableAction, ConflictAction, ConflictTarget, Offset, OnConflict, Reindex,
    SetArg, Statement, TableConstraint,
};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// `on_conflict ::= 'ON' 'CONFLICT' [conflict_target] 'DO' ('NOTHING' |
///   'UPDATE' 'SET' assignment {',' assignment} ['WHERE' expr])`
/// `conflict_target ::= '(' index_elem {',' index_elem} ')' ['WHERE' expr]
///   | 'ON' 'CONSTRAINT' col_id`
/// (optional)
pub(crate) fn opt_on_conflict(i: Tokens<'_>) -> PResult<'_, Option<Box<OnConflict>>> {
    if !(i.is_kw(0, Keyword::On) && i.is_kw(1, Keyword::Conflict)) {
        return Ok((i, None));
    }
    let offset = Offset(i.first().start);
    let i = i.skip(2);
    let (i, target) = if i.first().kind == TokenKind::LParen {
        let (i, (cols, predicate)) = cut(pair(
            delimited(
                tok(TokenKind::LParen),
                separated_list1(tok(TokenKind::Comma), cut(index_elem)),
                tok(TokenKind::RParen),
            ),
            opt_where,
        ))(i)?;
        (i, ConflictTarget::Columns(cols, predicate))
    } else if i.is_kw(0, Keyword::On) {
        let (i, name) = cut(preceded(
            pair(kw(Keyword::On), kw(Keyword::Constraint)),
            col_id,
        ))(i)?;
        (i, ConflictTarget::Constraint(name))
    } else {
        (i, ConflictTarget::Any)
    };
    let (i, (_, what)) = cut(pair(
        kw(Keyword::Do),
        kw_of(&[Keyword::Nothing, Keyword::Update]),
    ))(i)?;
    let (i, action) = if what == Keyword::Nothing {
        (i, ConflictAction::Nothing)
    } else {
        let (i, (_, assignments, where_clause)) =
            cut(tuple((kw(Keyword::Set), assignments, opt_where)))(i)?;
        (
            i,
            ConflictAction::Update {
                assignments,
                where_clause,
            },
        )
    };
    Ok((
        i,
        Some(Box::new(OnConflict {
            target,
            action,
            offset,
        })),
    ))
}

/// `rel_option ::= col_label ['=' set_arg]`: a storage parameter.
pub(crate) fn rel_option(i: Tokens<'_>) -> PResult<'_, (String, Option<SetArg>)> {
    pair(col_label, opt(preceded(tok(TokenKind::Eq), cut(set_arg))))(i)
}

/// `alter_action ::= column_action
///   | 'ADD' ['CONSTRAINT' col_id] ('PRIMARY' 'KEY' | 'UNIQUE')
///   '(' col_id {',' col_id} ')'
///   | 'DROP' 'CONSTRAINT' ['IF' 'EXISTS'] col_id ['CASCADE' | 'RESTRICT']
///   | ('SET' | 'RESET') '(' rel_option {',' rel_option} ')'`
fn alter_action(i: Tokens<'_>) -> PResult<'_, AlterTableAction> {
    let offset = Offset(i.first().start);
    if let (j, Some(action)) = column_action(i)? {
        return Ok((j, action));
    }
    if let Ok((j, _)) = word("validate")(i) {
        let (j, name) = cut(preceded(kw(Keyword::Constraint), col_id))(j)?;
        return Ok((j, AlterTableAction::ValidateConstraint { name }));
    }
    if let Ok((j, _)) = word("rename")(i) {
        let (j, (_, old, _, new)) = cut(tuple((
            kw(Keyword::Constraint),
            col_id,
            kw(Keyword::To),
            col_id,
        )))(j)?;
        return Ok((j, AlterTableAction::RenameConstraint { old, new }));
    }
    if i.is_kw(0, Keyword::Alter) {
        let (j, (_, _, column, set, _, _)) = cut(tuple((
            kw(Keyword::Alter),
            opt(kw(Keyword::Column)),
            col_id,
            nom::branch::alt((
                nom::combinator::value(true, kw(Keyword::Set)),
                nom::combinator::value(false, kw(Keyword::Drop)),
            )),
            kw(Keyword::Not),
            kw(Keyword::Null),
        )))(i)?;
        return Ok((j, AlterTableAction::SetNotNull { column, set }));
    }
    let reset = word("reset")(i).is_ok();
    if reset || (i.is_kw(0, Keyword::Set) && i.kind(1) == TokenKind::LParen) {
        let (j, options) = cut(delimited(
            tok(TokenKind::LParen),
            separated_list1(tok(TokenKind::Comma), cut(rel_option)),
            tok(TokenKind::RParen),
        ))(i.skip(1))?;
        return Ok((j, AlterTableAction::SetOptions { reset, options }));
    }
    let (i, verb) = kw_of(&[Keyword::Add, Keyword::Drop])(i)?;
    if verb == Keyword::Add && (i.is_kw(0, Keyword::Check) || i.is_kw(2, Keyword::Check)) {
        let (i, name) = opt_constraint_name(i)?;
        let (i, c) = cut(check_constraint(name, true))(i)?;
        return Ok((i, AlterTableAction::AddCheck(c)));
    }
    if verb == Keyword::Add && (i.is_kw(0, Keyword::Foreign) || i.is_kw(2, Keyword::Foreign)) {
        let (i, fk) = foreign_key(i)?;
        let (i, not_valid) = opt(pair(kw(Keyword::Not), cut(word("valid"))))(i)?;
        let TableConstraint::ForeignKey {
            name,
            columns,
            refs,
        } = fk
        else {
            return i.fail();
        };
        return Ok((
            i,
            AlterTableAction::AddForeignKey {
                name,
                columns,
                refs,
                not_valid: not_valid.is_some(),
                offset,
            },
        ));
    }
    if verb == Keyword::Add {
        let (i, (name, kind)) = cut(pair(
            opt(preceded(kw(Keyword::Constraint), cut(col_id))),
            kw_of(&[Keyword::Primary, Keyword::Unique]),
        ))(i)?;
        let i = if kind == Keyword::Primary {
            cut(kw(Keyword::Key))(i)?.0
        } else {
            i
        };
        let (i, cols) = cut(paren_col_list)(i)?;
        return Ok((
            i,
            AlterTableAction::AddConstraint {
                name,
                primary: kind == Keyword::Primary,
                columns: cols,
                offset,
            },
        ));
    }
    let (i, (_, if_exists, name, behavior)) = cut(tuple((
        kw(Keyword::Constraint),
        opt(pair(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        col_id,
        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
    )))(i)?;
    Ok((
        i,
        AlterTableAction::DropConstraint {
            if_exists: if_exists.is_some(),
            name,
            cascade: behavior == Some(Keyword::Cascade),
        },
    ))
}

/// `alter_table ::= 'ALTER' 'TABLE' ['IF' 'EXISTS'] ['ONLY'] object_name
///   alter_action {',' alter_action}`
pub(crate) fn alter_table(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = pair(kw(Keyword::Alter), kw(Keyword::Table)).parse(i)?;
    let (i, (if_exists, _, table, actions)) = cut(tuple((
        opt(pair(kw(Keyword::If), cut(kw(Keyword::Exists)))),
        opt(kw(Keyword::Only)),
        object_name,
        separated_list1(tok(TokenKind::Comma), cut(alter_action)),
    )))(i)?;
    Ok((
        i,
        Statement::AlterTable(Box::new(AlterTable {
            if_exists: if_exists.is_some(),
            table,
            actions,
        })),
    ))
}

/// `reindex ::= 'REINDEX' ['(' 'VERBOSE' ')'] ('INDEX' | 'TABLE') object_name`
pub(crate) fn reindex(i: Tokens<'_>) -> PResult<'_, Statement> {
    let (i, _) = kw(Keyword::Reindex).parse(i)?;
    let (i, (_, kind, name)) = cut(tuple((
        opt(delimited(
            tok(TokenKind::LParen),
            kw(Keyword::Verbose),
            tok(TokenKind::RParen),
        )),
        kw_of(&[Keyword::Index, Keyword::Table]),
        object_name,
    )))(i)?;
    Ok((
        i,
        Statement::Reindex(Reindex {
            table: kind == Keyword::Table,
            name,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use crate::ast::Statement;
    use crate::parse;

    fn round_trip(sql: &str) -> Statement {
        let mut v = parse(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        assert_eq!(v.len(), 1, "{sql}");
        let s = v.remove(0);
        let again = parse(&s.to_string()).unwrap_or_else(|e| panic!("{s}: {e:?}"));
        assert_eq!(s, again[0], "{sql} printed as {s}");
        s
    }

    #[test]
    fn key_statements_round_trip() {
        for sql in [
            "insert into t values (1) on conflict do nothing",
            "insert into t as x (a, b) values (1, 2) on conflict (a, b) do update set b = x.b + excluded.b where x.b > 0 returning *",
            "insert into t select * from u on conflict on constraint t_pkey do nothing",
            "insert into t values (1) on conflict do update set a = 1",
            "alter table t add primary key (a, b)",
            "alter table if exists only t add constraint c unique (a), drop constraint if exists d cascade",
            "alter table t drop constraint t_pkey",
            "reindex index i",
            "reindex (verbose) table s.t",
        ] {
            round_trip(sql);
        }
        for bad in [
            "insert into t values (1) on conflict do",
            "insert into t values (1) on conflict () do nothing",
            "insert into t values (1) on conflict do update",
            "alter table t add primary (a)",
            "alter table t add unique ()",
            "alter table t drop constraint",
            "reindex t",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
