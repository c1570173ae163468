//! The column forms of `ALTER TABLE`: ADD/DROP [COLUMN], RENAME [COLUMN]
//! and RENAME TO, ALTER [COLUMN] SET/DROP DEFAULT and [SET DATA] TYPE.
//!
//! [`column_action`] is tried before the constraint forms of
//! `alter_action`; it answers `None` (consuming nothing) when the action
//! is not one of these, so each form stays a separate alternative.

use nom::combinator::{cut, opt};
use nom::sequence::{pair, preceded, tuple};

use super::ddl::column_def;
use super::expr::expr;
use super::literal::data_type;
use super::tokens::{col_id, kw, kw_of, word, PResult, Tokens};
use crate::ast::{AlterTableAction, Offset};
use crate::keywords::Keyword;

/// Keywords that start a table constraint after `ADD`.
const CONSTRAINT_STARTS: &[Keyword] = &[
    Keyword::Constraint,
    Keyword::Check,
    Keyword::Primary,
    Keyword::Unique,
    Keyword::Foreign,
];

/// `column_action ::= 'ADD' ['COLUMN'] ['IF' 'NOT' 'EXISTS'] column_def
///   | 'DROP' ['COLUMN'] ['IF' 'EXISTS'] col_id ['CASCADE' | 'RESTRICT']
///   | 'RENAME' ['COLUMN'] col_id 'TO' col_id | 'RENAME' 'TO' col_id
///   | 'ALTER' ['COLUMN'] col_id ('SET' 'DEFAULT' expr | 'DROP' 'DEFAULT'
///     | ['SET' 'DATA'] 'TYPE' data_type ['USING' expr])`
/// (`None` for every other action)
pub(crate) fn column_action(i: Tokens<'_>) -> PResult<'_, Option<AlterTableAction>> {
    match i.keyword() {
        Some(Keyword::Add) => add_column(i),
        Some(Keyword::Drop) => drop_column(i),
        Some(Keyword::Alter) => alter_column(i),
        _ if word("rename")(i).is_ok() => rename(i),
        _ => Ok((i, None)),
    }
}

fn add_column(i: Tokens<'_>) -> PResult<'_, Option<AlterTableAction>> {
    let j = i.skip(1);
    let (j, column_kw) = opt(kw(Keyword::Column))(j)?;
    if column_kw.is_none() && CONSTRAINT_STARTS.iter().any(|k| j.is_kw(0, *k)) {
        return Ok((i, None));
    }
    let (j, if_not_exists) = opt(tuple((
        kw(Keyword::If),
        cut(kw(Keyword::Not)),
        cut(kw(Keyword::Exists)),
    )))(j)?;
    let (j, column) = cut(column_def)(j)?;
    Ok((
        j,
        Some(AlterTableAction::AddColumn {
            if_not_exists: if_not_exists.is_some(),
            column,
        }),
    ))
}

fn drop_column(i: Tokens<'_>) -> PResult<'_, Option<AlterTableAction>> {
    let j = i.skip(1);
    if j.is_kw(0, Keyword::Constraint) {
        return Ok((i, None));
    }
    let (j, _) = opt(kw(Keyword::Column))(j)?;
    let (j, if_exists) = opt(pair(kw(Keyword::If), cut(kw(Keyword::Exists))))(j)?;
    let offset = Offset(j.first().start);
    let (j, (name, behavior)) = cut(pair(
        col_id,
        opt(kw_of(&[Keyword::Cascade, Keyword::Restrict])),
    ))(j)?;
    Ok((
        j,
        Some(AlterTableAction::DropColumn {
            if_exists: if_exists.is_some(),
            name,
            cascade: behavior == Some(Keyword::Cascade),
            offset,
        }),
    ))
}

fn rename(i: Tokens<'_>) -> PResult<'_, Option<AlterTableAction>> {
    let j = i.skip(1);
    if j.is_kw(0, Keyword::Constraint) {
        return Ok((i, None));
    }
    if j.is_kw(0, Keyword::To) {
        let (j, new) = cut(preceded(kw(Keyword::To), col_id))(j)?;
        return Ok((j, Some(AlterTableAction::RenameTable { new })));
    }
    let (j, (_, old, _, new)) = cut(tuple((
        opt(kw(Keyword::Column)),
        col_id,
        kw(Keyword::To),
        col_id,
    )))(j)?;
    Ok((j, Some(AlterTableAction::RenameColumn { old, new })))
}

fn alter_column(i: Tokens<'_>) -> PResult<'_, Option<AlterTableAction>> {
    let j = i.skip(1);
    let (j, _) = opt(kw(Keyword::Column))(j)?;
    let offset = Offset(j.first().start);
    let (j, column) = cut(col_id)(j)?;
    if j.is_kw(0, Keyword::Set) && j.is_kw(1, Keyword::Default) {
        let (j, e) = cut(expr)(j.skip(2))?;
        let action = AlterTableAction::SetDefault {
            column,
            default: Some(e),
        };
        return Ok((j, Some(action)));
    }
    if j.is_kw(0, Keyword::Drop) && j.is_kw(1, Keyword::Default) {
        let action = AlterTableAction::SetDefault {
            column,
            default: None,
        };
        return Ok((j.skip(2), Some(action)));
    }
    let j = if j.is_kw(0, Keyword::Set) && word("data")(j.skip(1)).is_ok() {
        j.skip(2)
    } else {
        j
    };
    if word("type")(j).is_err() {
        return Ok((i, None));
    }
    let (j, (data_type, using)) = cut(pair(
        data_type,
        opt(preceded(kw(Keyword::Using), cut(expr))),
    ))(j.skip(1))?;
    Ok((
        j,
        Some(AlterTableAction::AlterType {
            column,
            data_type,
            using,
            offset,
        }),
    ))
}
