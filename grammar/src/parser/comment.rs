//! `COMMENT ON object IS 'text' | NULL` for the objects heapdb has:
//! tables, columns, indexes, views, sequences, functions, procedures,
//! operators, types, domains and constraints of tables and domains, and
//! aggregates (which heapdb has none of: a missing one). Another object
//! kind (an aggregate, a trigger, a role, ...) is not a statement heapdb
//! knows: the syntax error is reported at `COMMENT`, as for any unknown
//! statement. `COMMENT` and the kind words are unreserved in PostgreSQL
//! and matched as words.

use nom::branch::alt;
use nom::combinator::{cut, map, opt, value};
use nom::multi::separated_list1;
use nom::sequence::{pair, preceded, tuple};
use nom::Parser;

use super::function::arg_list;
use super::literal::string;
use super::object_name;
use super::operator::operator_ref;
use super::tokens::{col_id, col_label, kw, tok, word, PResult, Tokens};
use crate::ast::{Comment, CommentObject, CommentRelKind, FunctionRef, RoutineKind, Statement};
use crate::keywords::Keyword;
use crate::lexer::TokenKind;

/// Whether the statement `i` starts is `COMMENT ...`.
pub(crate) fn is_comment(i: Tokens<'_>) -> bool {
    word("comment")(i).is_ok()
}

/// `comment ::= 'COMMENT' 'ON' comment_object 'IS' (string | 'NULL')`
pub(crate) fn comment(i: Tokens<'_>) -> PResult<'_, Statement> {
    let start = i;
    let (i, _) = pair(word("comment"), kw(Keyword::On)).parse(i)?;
    let Ok((i, object)) = comment_object(i) else {
        return start.fail();
    };
    let (i, text) = cut(preceded(
        kw(Keyword::Is),
        alt((value(None, kw(Keyword::Null)), map(string, Some))),
    ))(i)?;
    Ok((i, Statement::Comment(Box::new(Comment { object, text }))))
}

/// `comment_object ::= ('TABLE' | 'INDEX' | 'VIEW' | 'SEQUENCE') object_name
///   | 'COLUMN' col_id {'.' col_label}
///   | ('FUNCTION' | 'PROCEDURE' | 'ROUTINE') object_name [arg_list]
///   | 'OPERATOR' operator_ref
///   | 'AGGREGATE' object_name ('(' '*' ')' | arg_list)
///   | ('TYPE' | 'DOMAIN') object_name
///   | 'CONSTRAINT' col_id 'ON' ['DOMAIN'] object_name`
fn comment_object(i: Tokens<'_>) -> PResult<'_, CommentObject> {
    let relation = |w: &'static str, k: CommentRelKind| {
        preceded(word(w), cut(object_name)).map(move |n| CommentObject::Relation(k, n))
    };
    let routine = |w: &'static str, k: RoutineKind| {
        preceded(word(w), cut(pair(object_name, opt(arg_list))))
            .map(move |(name, args)| CommentObject::Routine(k, FunctionRef { name, args }))
    };
    alt((
        relation("table", CommentRelKind::Table),
        relation("index", CommentRelKind::Index),
        relation("view", CommentRelKind::View),
        relation("sequence", CommentRelKind::Sequence),
        preceded(
            word("column"),
            cut(pair(
                col_id,
                opt(preceded(
                    tok(TokenKind::Dot),
                    separated_list1(tok(TokenKind::Dot), col_label),
                )),
            )),
        )
        .map(|(first, rest)| {
            let mut names = vec![first];
            names.extend(rest.unwrap_or_default());
            CommentObject::Column(names)
        }),
        routine("function", RoutineKind::Function),
        routine("procedure", RoutineKind::Procedure),
        routine("routine", RoutineKind::Routine),
        preceded(word("operator"), cut(operator_ref)).map(CommentObject::Operator),
        preceded(
            word("aggregate"),
            cut(pair(
                object_name,
                alt((
                    value(
                        None,
                        tuple((
                            tok(TokenKind::LParen),
                            tok(TokenKind::Star),
                            tok(TokenKind::RParen),
                        )),
                    ),
                    map(arg_list, Some),
                )),
            )),
        )
        .map(|(name, args)| CommentObject::Aggregate(name, args)),
        preceded(word("type"), cut(object_name)).map(CommentObject::Type),
        preceded(word("domain"), cut(object_name)).map(CommentObject::Domain),
        preceded(
            word("constraint"),
            cut(tuple((
                col_id,
                kw(Keyword::On),
                opt(word("domain")),
                object_name,
            ))),
        )
        .map(|(name, _, domain, target)| match domain {
            Some(_) => CommentObject::DomainConstraint(name, target),
            None => CommentObject::Constraint(name, target),
        }),
    ))(i)
}
