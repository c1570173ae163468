//! Expression nodes, literals, function calls and data types.

use super::{Ident, ObjectName, Offset, OrderBy, Query};

/// An expression node: what it is, and where it starts in the text.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// The expression.
    pub kind: ExprKind,
    /// Byte offset of the expression's first token (for an operator
    /// expression, of the operator, as PostgreSQL reports it).
    pub offset: Offset,
}

impl Expr {
    /// An expression at offset 0 (handy in tests and generated trees).
    pub fn new(kind: ExprKind) -> Expr {
        Expr {
            kind,
            offset: Offset(0),
        }
    }
}

/// The kinds of expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A literal constant.
    Literal(Literal),
    /// `type 'string'`, e.g. `DATE '2024-01-01'`, `INTERVAL '1 day'`.
    TypedString {
        /// The type named before the string.
        data_type: DataType,
        /// The string, unescaped.
        value: String,
        /// `INTERVAL '...' DAY TO SECOND`: the first and last field of an
        /// interval qualifier (the same field for `INTERVAL '...' DAY`).
        fields: Option<(IntervalField, IntervalField)>,
        /// `INTERVAL(p) '...'` or `INTERVAL '...' [.. TO] SECOND(p)`: the
        /// fractional-second digits kept.
        precision: Option<u32>,
    },
    /// A column reference: `c`, `t.c` or `s.t.c`.
    Column(ColumnRef),
    /// A prefix operator: `-x`, `+x`, `NOT x`.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        expr: Box<Expr>,
    },
    /// An infix operator: arithmetic, `||`, comparisons, `AND`, `OR`.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// The left operand.
        left: Box<Expr>,
        /// The right operand.
        right: Box<Expr>,
    },
    /// `x IS [NOT] NULL` (also `ISNULL`, `NOTNULL`).
    IsNull {
        /// The tested expression.
        expr: Box<Expr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `x IS [NOT] TRUE | FALSE | UNKNOWN`.
    IsBool {
        /// The tested expression.
        expr: Box<Expr>,
        /// `Some(true)` for TRUE, `Some(false)` for FALSE, `None` for UNKNOWN.
        value: Option<bool>,
        /// `IS NOT ...`.
        negated: bool,
    },
    /// `a IS [NOT] DISTINCT FROM b`.
    IsDistinctFrom {
        /// The left operand.
        left: Box<Expr>,
        /// The right operand.
        right: Box<Expr>,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// `x [NOT] BETWEEN low AND high`.
    Between {
        /// The tested expression.
        expr: Box<Expr>,
        /// The lower bound.
        low: Box<Expr>,
        /// The upper bound.
        high: Box<Expr>,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `x [NOT] IN (a, b, ...)`.
    InList {
        /// The tested expression.
        expr: Box<Expr>,
        /// The list (never empty).
        list: Vec<Expr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `x [NOT] IN (subquery)`.
    InSubquery {
        /// The tested expression.
        expr: Box<Expr>,
        /// The subquery.
        query: Box<Query>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `x [NOT] LIKE | ILIKE pattern [ESCAPE e]`.
    Like {
        /// The tested expression.
        expr: Box<Expr>,
        /// The pattern.
        pattern: Box<Expr>,
        /// The escape character expression, if given.
        escape: Option<Box<Expr>>,
        /// `NOT LIKE`.
        negated: bool,
        /// `ILIKE` (case-insensitive).
        case_insensitive: bool,
    },
    /// `x op ANY | SOME | ALL (subquery)` with a comparison operator.
    Quantified {
        /// The tested expression.
        expr: Box<Expr>,
        /// The comparison operator.
        op: BinaryOp,
        /// `ALL` (else `ANY` / `SOME`).
        all: bool,
        /// The subquery.
        query: Box<Query>,
    },
    /// `EXISTS (subquery)`.
    Exists(Box<Query>),
    /// A scalar subquery `(SELECT ...)`.
    Subquery(Box<Query>),
    /// `CASE [operand] WHEN ... THEN ... [ELSE ...] END`.
    Case {
        /// The operand of a simple CASE (`CASE x WHEN 1 THEN ...`).
        operand: Option<Box<Expr>>,
        /// The `WHEN condition THEN result` pairs (at least one).
        branches: Vec<(Expr, Expr)>,
        /// The `ELSE` result.
        else_result: Option<Box<Expr>>,
    },
    /// `CAST(x AS type)` or `x::type`.
    Cast {
        /// The converted expression.
        expr: Box<Expr>,
        /// The target type.
        data_type: DataType,
    },
    /// A function call, including aggregates.
    Function(Box<FunctionCall>),
    /// A parameterless SQL-standard function: `CURRENT_DATE` etc.
    CurrentValue(CurrentValue),
    /// `DEFAULT`, valid only as a `VALUES` item of an `INSERT` or the value of
    /// an `UPDATE` assignment.
    Default,
    /// `ARRAY[a, b, ...]` (possibly empty).
    Array(Vec<Expr>),
    /// `ARRAY(subquery)`: the subquery's one column as an array.
    ArraySubquery(Box<Query>),
    /// `x[i]` or the slice `x[lower:upper]` (either bound may be omitted).
    Subscript {
        /// The subscripted expression.
        expr: Box<Expr>,
        /// The index, or a slice's lower bound.
        lower: Option<Box<Expr>>,
        /// A slice's upper bound.
        upper: Option<Box<Expr>>,
        /// Whether this is a slice (`[a:b]`).
        slice: bool,
    },
    /// `x [NOT] LIKE | ILIKE ANY | SOME | ALL (array)`.
    LikeAny {
        /// The tested expression.
        expr: Box<Expr>,
        /// The array of patterns.
        array: Box<Expr>,
        /// `ALL` (else `ANY` / `SOME`).
        all: bool,
        /// `NOT LIKE`.
        negated: bool,
        /// `ILIKE`.
        case_insensitive: bool,
    },
    /// `x op ANY | SOME | ALL (array)`, the right side an array expression.
    AnyArray {
        /// The tested expression.
        expr: Box<Expr>,
        /// The comparison operator.
        op: BinaryOp,
        /// `ALL` (else `ANY` / `SOME`).
        all: bool,
        /// The array.
        array: Box<Expr>,
    },
}

/// A literal constant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Literal {
    /// A number as written: `42`, `-7`, `123456789012345678901234567890`,
    /// `1.50`, `1e-3`. Integers have only digits (and maybe a leading `-`).
    Number(String),
    /// A string literal, unescaped.
    String(String),
    /// `TRUE` or `FALSE`.
    Boolean(bool),
    /// `NULL`.
    Null,
}

impl Literal {
    /// Whether a `Number` literal is an integer (no `.`, no exponent).
    pub fn is_integer(&self) -> bool {
        match self {
            Literal::Number(text) => {
                let digits = text.strip_prefix('-').unwrap_or(text);
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
            }
            _ => false,
        }
    }
}

/// A column reference (see [`ExprKind::Column`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ColumnRef {
    /// The schema of the qualifying table (`s.t.c`).
    pub schema: Option<Ident>,
    /// The qualifying table or alias (`t.c`).
    pub table: Option<Ident>,
    /// The column.
    pub column: Ident,
}

/// Prefix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `+x`
    Plus,
    /// `-x`
    Minus,
    /// `NOT x`
    Not,
    /// `~x`: bitwise NOT of an integer.
    BitNot,
    /// `@x`: absolute value.
    Abs,
    /// `|/x`: square root.
    SquareRoot,
    /// `||/x`: cube root.
    CubeRoot,
}

/// Infix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Multiply,
    /// `/`
    Divide,
    /// `%`
    Modulo,
    /// `^`
    Exponent,
    /// `||`
    Concat,
    /// `=`
    Eq,
    /// `<>` or `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `AND`
    And,
    /// `OR`
    Or,
    /// `<<`: bitwise shift left.
    ShiftLeft,
    /// `>>`: bitwise shift right.
    ShiftRight,
    /// `&`: bitwise AND.
    BitAnd,
    /// `|`: bitwise OR.
    BitOr,
    /// `#`: bitwise exclusive OR.
    BitXor,
    /// `->`: JSON member.
    Arrow,
    /// `->>`: JSON member as text.
    LongArrow,
    /// `#>`: JSON member at a path.
    HashArrow,
    /// `#>>`: JSON member at a path, as text.
    HashLongArrow,
    /// `@>`: contains.
    Contains,
    /// `<@`: is contained by.
    ContainedBy,
    /// `?`: JSON key exists.
    Question,
    /// `?|`: any of the keys exists.
    QuestionPipe,
    /// `?&`: all of the keys exist.
    QuestionAmp,
    /// `#-`: JSON without the member at a path.
    HashMinus,
    /// `~`: matches a regular expression (`SIMILAR TO` is this operator
    /// against `similar_to_escape(pattern)`).
    RegexMatch,
    /// `~*`: matches a regular expression, case-insensitively.
    RegexIMatch,
    /// `!~`: does not match a regular expression.
    RegexNotMatch,
    /// `!~*`: does not match a regular expression, case-insensitively.
    RegexNotIMatch,
    /// `~~`: the operator `LIKE` stands for.
    LikeOp,
    /// `~~*`: `ILIKE`.
    ILikeOp,
    /// `!~~`: `NOT LIKE`.
    NotLikeOp,
    /// `!~~*`: `NOT ILIKE`.
    NotILikeOp,
}

/// A function call: `name([DISTINCT] args [ORDER BY ...]) [FILTER (WHERE ...)]`
/// or `name(*)`.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionCall {
    /// The function's name.
    pub name: ObjectName,
    /// The arguments (empty for `f()` and `f(*)`).
    pub args: Vec<Expr>,
    /// The names given with `name => value` or `name := value`, one per
    /// argument; empty when no argument is named.
    pub arg_names: Vec<Option<Ident>>,
    /// `f(*)`, as in `count(*)`.
    pub star: bool,
    /// `f(DISTINCT ...)`.
    pub distinct: bool,
    /// An aggregate's `ORDER BY` inside the parentheses.
    pub order_by: Vec<OrderBy>,
    /// An aggregate's `FILTER (WHERE condition)`.
    pub filter: Option<Box<Expr>>,
    /// `f(a, VARIADIC arr)`: the last argument is marked `VARIADIC`.
    pub variadic: bool,
    /// `OVER (...)` or `OVER name`: a window function call.
    pub over: Option<Box<super::WindowSpec>>,
}

/// The SQL-standard functions written without parentheses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CurrentValue {
    /// `CURRENT_DATE`
    CurrentDate,
    /// `CURRENT_TIME`
    CurrentTime,
    /// `CURRENT_TIMESTAMP`
    CurrentTimestamp,
    /// `LOCALTIME`
    LocalTime,
    /// `LOCALTIMESTAMP`
    LocalTimestamp,
    /// `CURRENT_USER` (also `USER`)
    CurrentUser,
    /// `SESSION_USER`
    SessionUser,
}

/// A data type as written, with any type modifiers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `smallint`, `int2`
    SmallInt,
    /// `integer`, `int`, `int4`
    Integer,
    /// `bigint`, `int8`
    BigInt,
    /// `real`, `float4`, `float(1..24)`
    Real,
    /// `double precision`, `float8`, `float`, `float(25..53)`
    Double,
    /// `numeric[(precision[, scale])]`, `decimal`, `dec`
    Numeric {
        /// The precision, if given.
        precision: Option<u32>,
        /// The scale, if given (only with a precision); negative scales
        /// round to tens, hundreds, ...
        scale: Option<i32>,
    },
    /// `boolean`, `bool`
    Boolean,
    /// `text`
    Text,
    /// `varchar[(n)]`, `character varying[(n)]`
    Varchar(Option<u32>),
    /// `char[(n)]`, `character[(n)]`, `bpchar` (no length means 1 in a
    /// column definition)
    Char(Option<u32>),
    /// `date`
    Date,
    /// `timestamp [(p)] [without time zone]`, with its fractional-second
    /// precision if given
    Timestamp(Option<u32>),
    /// `timestamptz`, `timestamp [(p)] with time zone`
    TimestampTz(Option<u32>),
    /// `interval`
    Interval,
    /// Any other type name, lower-cased (the binder reports `type "x" does
    /// not exist` for the ones it does not know).
    Named(Ident),
    /// `type[]` (any number of `[]` or `[n]` makes one dimension here).
    Array(Box<DataType>),
    /// `time [(p)] [without time zone]`, with its precision if given
    Time(Option<u32>),
    /// `timetz [(p)]`, `time [(p)] with time zone`
    TimeTz(Option<u32>),
}

/// A field of an interval qualifier (`YEAR`, `MONTH`, ... `SECOND`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum IntervalField {
    /// `YEAR`
    Year,
    /// `MONTH`
    Month,
    /// `DAY`
    Day,
    /// `HOUR`
    Hour,
    /// `MINUTE`
    Minute,
    /// `SECOND`
    Second,
}

impl IntervalField {
    /// The field named by a word (lower case), if any.
    pub fn from_word(w: &str) -> Option<IntervalField> {
        Some(match w {
            "year" => IntervalField::Year,
            "month" => IntervalField::Month,
            "day" => IntervalField::Day,
            "hour" => IntervalField::Hour,
            "minute" => IntervalField::Minute,
            "second" => IntervalField::Second,
            _ => return None,
        })
    }

    /// The SQL key word.
    pub fn name(self) -> &'static str {
        match self {
            IntervalField::Year => "YEAR",
            IntervalField::Month => "MONTH",
            IntervalField::Day => "DAY",
            IntervalField::Hour => "HOUR",
            IntervalField::Minute => "MINUTE",
            IntervalField::Second => "SECOND",
        }
    }
}
