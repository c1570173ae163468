//! Query nodes: `WITH`, `SELECT`, `VALUES`, set operations, `ORDER BY`, `FROM` items.

use super::{Expr, FunctionCall, Ident, ObjectName, Offset};

/// A query: an optional `WITH`, a body, and the clauses that apply to the
/// body's result (`ORDER BY`, `LIMIT`, `OFFSET`).
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// Common table expressions (`WITH name AS (query), ...`).
    pub with: Vec<Cte>,
    /// The rows: a `SELECT`, a `VALUES` list or a set operation.
    pub body: SetExpr,
    /// `ORDER BY` items, applied to the whole body.
    pub order_by: Vec<OrderBy>,
    /// `LIMIT n`; `None` for no limit or `LIMIT ALL`.
    pub limit: Option<Expr>,
    /// `OFFSET n`.
    pub offset: Option<Expr>,
    /// `FETCH FIRST n ROWS WITH TIES` (the count is in `limit`): rows that
    /// tie with the last one under `ORDER BY` are returned too.
    pub with_ties: bool,
}

impl Query {
    /// A query that is just `body`, with no `WITH`, ordering or limits.
    pub fn simple(body: SetExpr) -> Query {
        Query {
            with: Vec::new(),
            body,
            order_by: Vec::new(),
            limit: None,
            offset: None,
            with_ties: false,
        }
    }
}

/// One `WITH` entry: `name [(columns)] AS [[NOT] MATERIALIZED] (query)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cte {
    /// The name the query is referred to by.
    pub name: Ident,
    /// Column aliases, if given.
    pub columns: Vec<Ident>,
    /// The query.
    pub query: Box<Query>,
    /// The `WITH` clause said `RECURSIVE` (the same for every entry of
    /// one clause): the query may refer to its own name.
    pub recursive: bool,
    /// `AS MATERIALIZED` (`Some(true)`), `AS NOT MATERIALIZED`
    /// (`Some(false)`), or neither.
    pub materialized: Option<bool>,
    /// Where its name starts (errors about the CTE point there).
    pub offset: Offset,
}

/// The body of a query.
#[derive(Clone, Debug, PartialEq)]
pub enum SetExpr {
    /// `SELECT ...`
    Select(Box<Select>),
    /// `VALUES (...), (...)`: rows of expressions.
    Values(Vec<Vec<Expr>>),
    /// `left UNION|INTERSECT|EXCEPT [ALL] right`.
    SetOp {
        /// Which set operation.
        op: SetOperator,
        /// `ALL` keeps duplicates.
        all: bool,
        /// The left operand.
        left: Box<SetExpr>,
        /// The right operand.
        right: Box<SetExpr>,
    },
    /// A parenthesised query with its own `WITH`, `ORDER BY`, `LIMIT` or
    /// `OFFSET` used as an operand. (Parentheses around a query without
    /// those leave no node.)
    Nested(Box<Query>),
}

/// The set operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetOperator {
    /// `UNION`
    Union,
    /// `INTERSECT` (binds tighter than the other two)
    Intersect,
    /// `EXCEPT`
    Except,
}

/// `SELECT [DISTINCT] list [FROM ...] [WHERE ...] [GROUP BY ...] [HAVING ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Select {
    /// `SELECT DISTINCT` (also set for `DISTINCT ON`).
    pub distinct: bool,
    /// `SELECT DISTINCT ON (exprs)`: one row per distinct value of these,
    /// the first in `ORDER BY` order; empty for plain `DISTINCT`.
    pub distinct_on: Vec<Expr>,
    /// The select list (may be empty: `SELECT FROM t` is valid PostgreSQL).
    pub projection: Vec<SelectItem>,
    /// The `FROM` items, comma-separated (each may be a join tree).
    pub from: Vec<TableRef>,
    /// `WHERE` condition.
    pub where_clause: Option<Expr>,
    /// `GROUP BY` expressions.
    pub group_by: Vec<Expr>,
    /// `HAVING` condition.
    pub having: Option<Expr>,
    /// `WINDOW name AS (...), ...`.
    pub window: Vec<super::NamedWindow>,
}

/// One entry of a select list (or of a `RETURNING` list).
#[derive(Clone, Debug, PartialEq)]
pub enum SelectItem {
    /// An expression with an optional `[AS] alias`.
    Expr {
        /// The expression.
        expr: Expr,
        /// The output column name, if given.
        alias: Option<Ident>,
    },
    /// `*`
    Wildcard(Offset),
    /// `t.*` (or `s.t.*`)
    QualifiedWildcard(ObjectName),
}

/// One `ORDER BY` item.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderBy {
    /// The sort key.
    pub expr: Expr,
    /// `DESC` (otherwise ascending).
    pub descending: bool,
    /// `NULLS FIRST` (`Some(true)`) or `NULLS LAST` (`Some(false)`); `None`
    /// for the default (nulls sort as larger than any value).
    pub nulls_first: Option<bool>,
}

/// A `FROM` item.
#[derive(Clone, Debug, PartialEq)]
pub enum TableRef {
    /// A table: `[ONLY] name [*] [[AS] alias [(columns)]]`.
    Table {
        /// The table's name.
        name: ObjectName,
        /// The alias, if given.
        alias: Option<TableAlias>,
        /// Written `ONLY name`: the table's own rows, without those of the
        /// tables that inherit from it.
        only: bool,
    },
    /// A table function: `f(args) [[AS] alias [(columns)]]`, e.g.
    /// `generate_series(1, 10) g(x)`.
    Function {
        /// The call.
        call: FunctionCall,
        /// The alias, if given.
        alias: Option<TableAlias>,
        /// Where the call starts in the text.
        offset: Offset,
    },
    /// `(query) [[AS] alias [(columns)]]`.
    Subquery {
        /// The query.
        query: Box<Query>,
        /// The alias, if given (PostgreSQL 16 made it optional).
        alias: Option<TableAlias>,
        /// Written `LATERAL (query)`: it may read the columns of the FROM
        /// items to its left.
        lateral: bool,
    },
    /// A join of two items.
    Join(Box<Join>),
}

/// `alias [(col, ...)]` after a `FROM` item.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableAlias {
    /// The alias.
    pub name: Ident,
    /// Column aliases, if given.
    pub columns: Vec<Ident>,
}

/// `left [kind] JOIN right [ON ... | USING (...)]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Join {
    /// The left input.
    pub left: TableRef,
    /// The right input.
    pub right: TableRef,
    /// Inner, outer or cross.
    pub kind: JoinKind,
    /// How rows are matched.
    pub constraint: JoinConstraint,
}

/// The kinds of join.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JoinKind {
    /// `[INNER] JOIN`
    Inner,
    /// `LEFT [OUTER] JOIN`
    Left,
    /// `RIGHT [OUTER] JOIN`
    Right,
    /// `FULL [OUTER] JOIN`
    Full,
    /// `CROSS JOIN` (always with [`JoinConstraint::None`])
    Cross,
}

/// How a join matches rows.
#[derive(Clone, Debug, PartialEq)]
pub enum JoinConstraint {
    /// `ON condition`
    On(Expr),
    /// `USING (columns)`
    Using(Vec<Ident>),
    /// `NATURAL` (written before the join kind)
    Natural,
    /// No condition (`CROSS JOIN`).
    None,
}
