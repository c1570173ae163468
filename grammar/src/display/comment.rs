//! `Display` for `COMMENT ON`.

use std::fmt::{self, Display, Formatter};

use super::{Comma, Id, Str};
use crate::ast::{Comment, CommentObject, CommentRelKind, RoutineKind};

impl Display for Comment {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("COMMENT ON ")?;
        match &self.object {
            CommentObject::Relation(kind, name) => {
                let kind = match kind {
                    CommentRelKind::Table => "TABLE",
                    CommentRelKind::Index => "INDEX",
                    CommentRelKind::View => "VIEW",
                    CommentRelKind::Sequence => "SEQUENCE",
                };
                write!(f, "{kind} {name}")?;
            }
            CommentObject::Column(names) => {
                f.write_str("COLUMN ")?;
                for (i, n) in names.iter().enumerate() {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    Id(n).fmt(f)?;
                }
            }
            CommentObject::Routine(kind, func) => {
                let kind = match kind {
                    RoutineKind::Function => "FUNCTION",
                    RoutineKind::Procedure => "PROCEDURE",
                    RoutineKind::Routine => "ROUTINE",
                };
                write!(f, "{kind} {func}")?;
            }
            CommentObject::Type(name) => write!(f, "TYPE {name}")?,
            CommentObject::Domain(name) => write!(f, "DOMAIN {name}")?,
            CommentObject::Constraint(c, table) => write!(f, "CONSTRAINT {} ON {table}", Id(c))?,
            CommentObject::DomainConstraint(c, domain) => {
                write!(f, "CONSTRAINT {} ON DOMAIN {domain}", Id(c))?
            }
            CommentObject::Operator(op) => write!(f, "OPERATOR {op}")?,
            CommentObject::Aggregate(name, None) => write!(f, "AGGREGATE {name}(*)")?,
            CommentObject::Aggregate(name, Some(args)) => {
                write!(f, "AGGREGATE {name}({})", Comma(args))?
            }
        }
        match &self.text {
            Some(t) => write!(f, " IS {}", Str(t)),
            None => f.write_str(" IS NULL"),
        }
    }
}
