//! `Display` for the AST: prints SQL that parses back to an equal tree.
//!
//! Keywords are printed in upper case, identifiers are double-quoted only
//! when they would not read back as themselves (upper-case letters, odd
//! characters, keywords), strings are single-quoted with `''` doubling.
//! Expressions get the fewest parentheses that keep their shape, using the
//! parser's precedence table ([`prec`]); casts print as `CAST(x AS t)`.
//! Old-style option syntax (`COPY ... CSV HEADER`, `VACUUM FULL`) prints in
//! the parenthesised form.

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::*;
use crate::keywords::{needs_quotes, Keyword};
use crate::parser::prec;

mod comment;
mod cursor;
mod function;
mod index;
mod keys;
mod operator;
mod prepare;
mod sequence;
mod statements;
mod typedef;
mod view;
mod window;

/// Writes an identifier, quoted when needed.
struct Id<'a>(&'a str);

impl Display for Id<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if needs_quotes(self.0) {
            QuotedId(self.0).fmt(f)
        } else {
            f.write_str(self.0)
        }
    }
}

/// Writes an identifier in double quotes.
struct QuotedId<'a>(&'a str);

impl Display for QuotedId<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        for c in self.0.chars() {
            if c == '"' {
                f.write_char('"')?;
            }
            f.write_char(c)?;
        }
        f.write_char('"')
    }
}

/// Whether `name` is a plain lower-case word (`[a-z_][a-z0-9_$]*`), which
/// reads back as itself wherever any word is accepted.
fn plain_word(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes
        .first()
        .is_some_and(|&b| b.is_ascii_lowercase() || b == b'_')
        && bytes
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'$')
}

/// Writes a string literal.
struct Str<'a>(&'a str);

impl Display for Str<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_char('\'')?;
        for c in self.0.chars() {
            if c == '\'' {
                f.write_char('\'')?;
            }
            f.write_char(c)?;
        }
        f.write_char('\'')
    }
}

/// Writes `items` separated by `", "`.
struct Comma<'a, T>(&'a [T]);

impl<T: Display> Display for Comma<'_, T> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            item.fmt(f)?;
        }
        Ok(())
    }
}

/// Writes identifiers separated by `", "`.
struct Ids<'a>(&'a [Ident]);

impl Display for Ids<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            Id(name).fmt(f)?;
        }
        Ok(())
    }
}

impl Display for ObjectName {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(schema) = &self.schema {
            write!(f, "{}.", Id(schema))?;
        }
        Id(&self.name).fmt(f)
    }
}

// ------------------------------------------------------------ expressions --

/// The precedence of an expression's top operator (see [`prec`]).
fn precedence(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Binary { op, .. } => match op {
            BinaryOp::Or => prec::OR,
            BinaryOp::And => prec::AND,
            BinaryOp::Eq
            | BinaryOp::NotEq
            | BinaryOp::Lt
            | BinaryOp::LtEq
            | BinaryOp::Gt
            | BinaryOp::GtEq => prec::CMP,
            BinaryOp::Concat
            | BinaryOp::ShiftLeft
            | BinaryOp::ShiftRight
            | BinaryOp::BitAnd
            | BinaryOp::BitOr
            | BinaryOp::BitXor
            | BinaryOp::Arrow
            | BinaryOp::LongArrow
            | BinaryOp::HashArrow
            | BinaryOp::HashLongArrow
            | BinaryOp::Contains
            | BinaryOp::ContainedBy
            | BinaryOp::Question
            | BinaryOp::QuestionPipe
            | BinaryOp::QuestionAmp
            | BinaryOp::HashMinus
            | BinaryOp::RegexMatch
            | BinaryOp::RegexIMatch
            | BinaryOp::RegexNotMatch
            | BinaryOp::RegexNotIMatch
            | BinaryOp::LikeOp
            | BinaryOp::ILikeOp
            | BinaryOp::NotLikeOp
            | BinaryOp::NotILikeOp => prec::OTHER,
            BinaryOp::Plus | BinaryOp::Minus => prec::ADD,
            BinaryOp::Multiply | BinaryOp::Divide | BinaryOp::Modulo => prec::MUL,
            BinaryOp::Exponent => prec::EXP,
        },
        ExprKind::Unary {
            op: UnaryOp::Not, ..
        } => prec::NOT,
        ExprKind::Unary {
            op: UnaryOp::Plus | UnaryOp::Minus,
            ..
        } => prec::UNARY,
        ExprKind::Unary { .. } => prec::OTHER,
        ExprKind::IsNull { .. } | ExprKind::IsBool { .. } | ExprKind::IsDistinctFrom { .. } => {
            prec::IS
        }
        ExprKind::Between { .. }
        | ExprKind::InList { .. }
        | ExprKind::InSubquery { .. }
        | ExprKind::Like { .. } => prec::LIKE,
        ExprKind::Quantified { .. } | ExprKind::AnyArray { .. } => prec::CMP,
        ExprKind::LikeAny { .. } => prec::LIKE,
        _ => prec::ATOM,
    }
}

/// Writes `e`, parenthesised if its precedence is below `min`.
struct P<'a>(&'a Expr, u8);

impl Display for P<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if precedence(self.0) < self.1 {
            write!(f, "({})", self.0)
        } else {
            self.0.fmt(f)
        }
    }
}

impl Display for BinaryOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BinaryOp::Plus => "+",
            BinaryOp::Minus => "-",
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Modulo => "%",
            BinaryOp::Exponent => "^",
            BinaryOp::Concat => "||",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
            BinaryOp::ShiftLeft => "<<",
            BinaryOp::ShiftRight => ">>",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "#",
            BinaryOp::Arrow => "->",
            BinaryOp::LongArrow => "->>",
            BinaryOp::HashArrow => "#>",
            BinaryOp::HashLongArrow => "#>>",
            BinaryOp::Contains => "@>",
            BinaryOp::ContainedBy => "<@",
            BinaryOp::Question => "?",
            BinaryOp::QuestionPipe => "?|",
            BinaryOp::QuestionAmp => "?&",
            BinaryOp::HashMinus => "#-",
            BinaryOp::RegexMatch => "~",
            BinaryOp::RegexIMatch => "~*",
            BinaryOp::RegexNotMatch => "!~",
            BinaryOp::RegexNotIMatch => "!~*",
            BinaryOp::LikeOp => "~~",
            BinaryOp::ILikeOp => "~~*",
            BinaryOp::NotLikeOp => "!~~",
            BinaryOp::NotILikeOp => "!~~*",
        })
    }
}

fn not(negated: bool) -> &'static str {
    if negated {
        "NOT "
    } else {
        ""
    }
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Number(n) => f.write_str(n),
            Literal::String(s) => Str(s).fmt(f),
            Literal::Boolean(true) => f.write_str("TRUE"),
            Literal::Boolean(false) => f.write_str("FALSE"),
            Literal::Null => f.write_str("NULL"),
        }
    }
}

impl Display for ColumnRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(schema) = &self.schema {
            write!(f, "{}.", Id(schema))?;
        }
        if let Some(table) = &self.table {
            write!(f, "{}.", Id(table))?;
        }
        Id(&self.column).fmt(f)
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Literal(lit) => lit.fmt(f),
            ExprKind::TypedString {
                data_type,
                value,
                fields,
                precision,
            } => {
                match (fields, precision) {
                    (None, Some(p)) => write!(f, "{data_type}({p}) {}", Str(value))?,
                    _ => write!(f, "{data_type} {}", Str(value))?,
                }
                match fields {
                    Some((a, b)) if a == b => write!(f, " {}", a.name())?,
                    Some((a, b)) => write!(f, " {} TO {}", a.name(), b.name())?,
                    None => {}
                }
                match (fields, precision) {
                    (Some(_), Some(p)) => write!(f, "({p})"),
                    _ => Ok(()),
                }
            }
            ExprKind::Column(c) => c.fmt(f),
            ExprKind::Unary { op, expr } => match op {
                UnaryOp::Not => write!(f, "NOT {}", P(expr, prec::NOT)),
                UnaryOp::BitNot => write!(f, "~ {}", P(expr, prec::OTHER + 1)),
                UnaryOp::Abs => write!(f, "@ {}", P(expr, prec::OTHER + 1)),
                UnaryOp::SquareRoot => write!(f, "|/ {}", P(expr, prec::OTHER + 1)),
                UnaryOp::CubeRoot => write!(f, "||/ {}", P(expr, prec::OTHER + 1)),
                UnaryOp::Plus | UnaryOp::Minus => {
                    let sign = if *op == UnaryOp::Plus { '+' } else { '-' };
                    let operand = P(expr, prec::UNARY).to_string();
                    // `- -5`, not `--5` (a comment).
                    let space = if operand.starts_with(['-', '+']) {
                        " "
                    } else {
                        ""
                    };
                    write!(f, "{sign}{space}{operand}")
                }
            },
            ExprKind::Binary { op, left, right } => {
                let p = precedence(self);
                // Left-associative, except comparisons which do not associate.
                let left_min = if p == prec::CMP { p + 1 } else { p };
                write!(f, "{} {op} {}", P(left, left_min), P(right, p + 1))
            }
            ExprKind::IsNull { .. }
            | ExprKind::IsBool { .. }
            | ExprKind::IsDistinctFrom { .. }
            | ExprKind::Between { .. }
            | ExprKind::InList { .. }
            | ExprKind::InSubquery { .. }
            | ExprKind::Like { .. }
            | ExprKind::Quantified { .. } => predicate(self, f),
            ExprKind::Exists(query) => write!(f, "EXISTS ({query})"),
            ExprKind::Subquery(query) => write!(f, "({query})"),
            ExprKind::Case {
                operand,
                branches,
                else_result,
            } => {
                f.write_str("CASE")?;
                if let Some(operand) = operand {
                    write!(f, " {operand}")?;
                }
                for (condition, result) in branches {
                    write!(f, " WHEN {condition} THEN {result}")?;
                }
                if let Some(e) = else_result {
                    write!(f, " ELSE {e}")?;
                }
                f.write_str(" END")
            }
            ExprKind::Cast { expr, data_type } => write!(f, "CAST({expr} AS {data_type})"),
            ExprKind::Array(items) => write!(f, "ARRAY[{}]", Comma(items)),
            ExprKind::ArraySubquery(query) => write!(f, "ARRAY({query})"),
            ExprKind::Subscript {
                expr,
                lower,
                upper,
                slice,
            } => {
                write!(f, "{}[", P(expr, prec::ATOM))?;
                if let Some(l) = lower {
                    write!(f, "{l}")?;
                }
                if *slice {
                    f.write_char(':')?;
                }
                if let Some(u) = upper {
                    write!(f, "{u}")?;
                }
                f.write_char(']')
            }
            ExprKind::LikeAny {
                expr,
                array,
                all,
                negated,
                case_insensitive,
            } => write!(
                f,
                "{} {}{} {} ({array})",
                P(expr, prec::LIKE + 1),
                if *negated { "NOT " } else { "" },
                if *case_insensitive { "ILIKE" } else { "LIKE" },
                if *all { "ALL" } else { "ANY" }
            ),
            ExprKind::AnyArray {
                expr,
                op,
                all,
                array,
            } => write!(
                f,
                "{} {op} {} ({array})",
                P(expr, prec::CMP + 1),
                if *all { "ALL" } else { "ANY" }
            ),
            ExprKind::Function(call) => call.fmt(f),
            ExprKind::CurrentValue(v) => f.write_str(match v {
                CurrentValue::CurrentDate => "CURRENT_DATE",
                CurrentValue::CurrentTime => "CURRENT_TIME",
                CurrentValue::CurrentTimestamp => "CURRENT_TIMESTAMP",
                CurrentValue::LocalTime => "LOCALTIME",
                CurrentValue::LocalTimestamp => "LOCALTIMESTAMP",
                CurrentValue::CurrentUser => "CURRENT_USER",
                CurrentValue::SessionUser => "SESSION_USER",
            }),
            ExprKind::Default => f.write_str("DEFAULT"),
        }
    }
}

/// The predicates: `IS ...`, `BETWEEN`, `IN`, `LIKE`, `op ANY/ALL`.
fn predicate(e: &Expr, f: &mut Formatter<'_>) -> fmt::Result {
    match &e.kind {
        ExprKind::IsNull { expr, negated } => {
            write!(f, "{} IS {}NULL", P(expr, prec::IS + 1), not(*negated))
        }
        ExprKind::IsBool {
            expr,
            value,
            negated,
        } => {
            let value = match value {
                Some(true) => "TRUE",
                Some(false) => "FALSE",
                None => "UNKNOWN",
            };
            write!(f, "{} IS {}{value}", P(expr, prec::IS + 1), not(*negated))
        }
        ExprKind::IsDistinctFrom {
            left,
            right,
            negated,
        } => write!(
            f,
            "{} IS {}DISTINCT FROM {}",
            P(left, prec::IS + 1),
            not(*negated),
            P(right, prec::IS + 1)
        ),
        ExprKind::Between {
            expr,
            low,
            high,
            negated,
        } => write!(
            f,
            "{} {}BETWEEN {} AND {}",
            P(expr, prec::LIKE + 1),
            not(*negated),
            P(low, prec::OTHER),
            P(high, prec::OTHER)
        ),
        ExprKind::InList {
            expr,
            list,
            negated,
        } => write!(
            f,
            "{} {}IN ({})",
            P(expr, prec::LIKE + 1),
            not(*negated),
            Comma(list)
        ),
        ExprKind::InSubquery {
            expr,
            query,
            negated,
        } => write!(
            f,
            "{} {}IN ({query})",
            P(expr, prec::LIKE + 1),
            not(*negated)
        ),
        ExprKind::Like {
            expr,
            pattern,
            escape,
            negated,
            case_insensitive,
        } => {
            let op = if *case_insensitive { "ILIKE" } else { "LIKE" };
            write!(
                f,
                "{} {}{op} {}",
                P(expr, prec::LIKE + 1),
                not(*negated),
                P(pattern, prec::OTHER)
            )?;
            if let Some(escape) = escape {
                write!(f, " ESCAPE {}", P(escape, prec::OTHER))?;
            }
            Ok(())
        }
        ExprKind::Quantified {
            expr,
            op,
            all,
            query,
        } => write!(
            f,
            "{} {op} {} ({query})",
            P(expr, prec::CMP + 1),
            if *all { "ALL" } else { "ANY" }
        ),
        _ => unreachable!("predicate() is called for predicates only"),
    }
}

impl Display for FunctionCall {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(schema) = &self.name.schema {
            write!(f, "{}.", Id(schema))?;
        }
        write!(f, "{}(", Id(&self.name.name))?;
        if self.star {
            f.write_char('*')?;
        } else {
            if self.distinct {
                f.write_str("DISTINCT ")?;
            }
            if self.variadic {
                let (last, first) = self.args.split_last().ok_or(fmt::Error)?;
                for a in first {
                    write!(f, "{a}, ")?;
                }
                write!(f, "VARIADIC {last}")?;
            } else if self.arg_names.is_empty() {
                Comma(&self.args).fmt(f)?;
            } else {
                for (k, (a, n)) in self.args.iter().zip(&self.arg_names).enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    if let Some(n) = n {
                        write!(f, "{} => ", Id(n))?;
                    }
                    write!(f, "{a}")?;
                }
            }
            if !self.order_by.is_empty() {
                write!(f, " ORDER BY {}", Comma(&self.order_by))?;
            }
        }
        f.write_char(')')?;
        if let Some(filter) = &self.filter {
            write!(f, " FILTER (WHERE {filter})")?;
        }
        if let Some(over) = &self.over {
            write!(f, " OVER {over}")?;
        }
        Ok(())
    }
}

impl Display for DataType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            DataType::SmallInt => f.write_str("smallint"),
            DataType::Integer => f.write_str("integer"),
            DataType::BigInt => f.write_str("bigint"),
            DataType::Real => f.write_str("real"),
            DataType::Double => f.write_str("double precision"),
            DataType::Numeric { precision, scale } => {
                f.write_str("numeric")?;
                match (precision, scale) {
                    (Some(p), Some(s)) => write!(f, "({p},{s})"),
                    (Some(p), None) => write!(f, "({p})"),
                    _ => Ok(()),
                }
            }
            DataType::Boolean => f.write_str("boolean"),
            DataType::Text => f.write_str("text"),
            DataType::Varchar(n) => {
                f.write_str("character varying")?;
                n.map_or(Ok(()), |n| write!(f, "({n})"))
            }
            DataType::Char(n) => {
                f.write_str("character")?;
                n.map_or(Ok(()), |n| write!(f, "({n})"))
            }
            DataType::Date => f.write_str("date"),
            DataType::Timestamp(None) => f.write_str("timestamp without time zone"),
            DataType::Timestamp(Some(p)) => write!(f, "timestamp({p}) without time zone"),
            DataType::TimestampTz(None) => f.write_str("timestamp with time zone"),
            DataType::TimestampTz(Some(p)) => write!(f, "timestamp({p}) with time zone"),
            DataType::Interval => f.write_str("interval"),
            DataType::Time(None) => f.write_str("time without time zone"),
            DataType::Time(Some(p)) => write!(f, "time({p}) without time zone"),
            DataType::TimeTz(None) => f.write_str("time with time zone"),
            DataType::TimeTz(Some(p)) => write!(f, "time({p}) with time zone"),
            // Any keyword is quoted: `double`, for one, would start `double
            // precision` when read back.
            DataType::Named(name)
                if plain_word(name) && Keyword::lookup(name) == Keyword::NoKeyword =>
            {
                f.write_str(name)
            }
            DataType::Named(name) => QuotedId(name).fmt(f),
            DataType::Array(elem) => write!(f, "{elem}[]"),
        }
    }
}

// ---------------------------------------------------------------- queries --

impl Display for OrderBy {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.expr.fmt(f)?;
        if self.descending {
            f.write_str(" DESC")?;
        }
        match self.nulls_first {
            Some(true) => f.write_str(" NULLS FIRST"),
            Some(false) => f.write_str(" NULLS LAST"),
            None => Ok(()),
        }
    }
}

impl Display for Query {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if !self.with.is_empty() {
            let recursive = if self.with[0].recursive {
                "RECURSIVE "
            } else {
                ""
            };
            write!(f, "WITH {recursive}{} ", Comma(&self.with))?;
        }
        self.body.fmt(f)?;
        if !self.order_by.is_empty() {
            write!(f, " ORDER BY {}", Comma(&self.order_by))?;
        }
        match &self.limit {
            Some(limit) if !self.with_ties => write!(f, " LIMIT {limit}")?,
            _ => {}
        }
        if let Some(offset) = &self.offset {
            write!(f, " OFFSET {offset}")?;
        }
        match &self.limit {
            // The count is a primary expression: parenthesised unless it
            // is a scalar subquery, which prints its own parentheses.
            Some(limit) if self.with_ties => match limit.kind {
                ExprKind::Subquery(_) => write!(f, " FETCH FIRST {limit} ROWS WITH TIES")?,
                _ => write!(f, " FETCH FIRST ({limit}) ROWS WITH TIES")?,
            },
            _ => {}
        }
        Ok(())
    }
}

impl Display for Cte {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        Id(&self.name).fmt(f)?;
        if !self.columns.is_empty() {
            write!(f, " ({})", Ids(&self.columns))?;
        }
        match self.materialized {
            Some(true) => write!(f, " AS MATERIALIZED ({})", self.query),
            Some(false) => write!(f, " AS NOT MATERIALIZED ({})", self.query),
            None => write!(f, " AS ({})", self.query),
        }
    }
}

/// The precedence of a set operation (UNION and EXCEPT 1, INTERSECT 2);
/// other bodies bind tightest.
fn set_precedence(body: &SetExpr) -> u8 {
    match body {
        SetExpr::SetOp {
            op: SetOperator::Intersect,
            ..
        } => 2,
        SetExpr::SetOp { .. } => 1,
        _ => 3,
    }
}

/// Writes a set-operation operand, parenthesised if it binds looser than `min`.
struct SetOperand<'a>(&'a SetExpr, u8);

impl Display for SetOperand<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if set_precedence(self.0) < self.1 {
            write!(f, "({})", self.0)
        } else {
            self.0.fmt(f)
        }
    }
}

impl Display for SetExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SetExpr::Select(select) => select.fmt(f),
            SetExpr::Values(rows) => {
                f.write_str("VALUES ")?;
                for (i, row) in rows.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "({})", Comma(row))?;
                }
                Ok(())
            }
            SetExpr::SetOp {
                op,
                all,
                left,
                right,
            } => {
                let p = set_precedence(self);
                let op = match op {
                    SetOperator::Union => "UNION",
                    SetOperator::Intersect => "INTERSECT",
                    SetOperator::Except => "EXCEPT",
                };
                let all = if *all { " ALL" } else { "" };
                write!(
                    f,
                    "{} {op}{all} {}",
                    SetOperand(left, p),
                    SetOperand(right, p + 1)
                )
            }
            SetExpr::Nested(query) => write!(f, "({query})"),
        }
    }
}

impl Display for Select {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("SELECT")?;
        if self.distinct {
            f.write_str(" DISTINCT")?;
        }
        if !self.distinct_on.is_empty() {
            write!(f, " ON ({})", Comma(&self.distinct_on))?;
        }
        if !self.projection.is_empty() {
            write!(f, " {}", Comma(&self.projection))?;
        }
        if !self.from.is_empty() {
            write!(f, " FROM {}", Comma(&self.from))?;
        }
        if let Some(w) = &self.where_clause {
            write!(f, " WHERE {w}")?;
        }
        if !self.group_by.is_empty() {
            write!(f, " GROUP BY {}", Comma(&self.group_by))?;
        }
        if let Some(h) = &self.having {
            write!(f, " HAVING {h}")?;
        }
        if !self.window.is_empty() {
            write!(f, " WINDOW {}", Comma(&self.window))?;
        }
        Ok(())
    }
}

impl Display for SelectItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SelectItem::Expr { expr, alias } => {
                expr.fmt(f)?;
                if let Some(alias) = alias {
                    write!(f, " AS {}", Id(alias))?;
                }
                Ok(())
            }
            SelectItem::Wildcard(_) => f.write_char('*'),
            SelectItem::QualifiedWildcard(name) => write!(f, "{name}.*"),
        }
    }
}

impl Display for TableAlias {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, " AS {}", Id(&self.name))?;
        if !self.columns.is_empty() {
            write!(f, "({})", Ids(&self.columns))?;
        }
        Ok(())
    }
}

fn opt_alias(f: &mut Formatter<'_>, alias: &Option<TableAlias>) -> fmt::Result {
    alias.as_ref().map_or(Ok(()), |a| a.fmt(f))
}

impl Display for TableRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            TableRef::Table { name, alias, only } => {
                if *only {
                    f.write_str("ONLY ")?;
                }
                name.fmt(f)?;
                opt_alias(f, alias)
            }
            TableRef::Function { call, alias, .. } => {
                call.fmt(f)?;
                opt_alias(f, alias)
            }
            TableRef::Subquery {
                query,
                alias,
                lateral,
            } => {
                if *lateral {
                    f.write_str("LATERAL ")?;
                }
                write!(f, "({query})")?;
                opt_alias(f, alias)
            }
            TableRef::Join(join) => join.fmt(f),
        }
    }
}

impl Display for Join {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.left.fmt(f)?;
        if self.constraint == JoinConstraint::Natural {
            f.write_str(" NATURAL")?;
        }
        f.write_str(match self.kind {
            JoinKind::Inner => " JOIN ",
            JoinKind::Left => " LEFT JOIN ",
            JoinKind::Right => " RIGHT JOIN ",
            JoinKind::Full => " FULL JOIN ",
            JoinKind::Cross => " CROSS JOIN ",
        })?;
        // Joins nest to the left; a join on the right needs parentheses.
        if let TableRef::Join(_) = self.right {
            write!(f, "({})", self.right)?;
        } else {
            self.right.fmt(f)?;
        }
        match &self.constraint {
            JoinConstraint::On(e) => write!(f, " ON {e}"),
            JoinConstraint::Using(cols) => write!(f, " USING ({})", Ids(cols)),
            JoinConstraint::Natural | JoinConstraint::None => Ok(()),
        }
    }
}
