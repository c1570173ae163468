//! Plan nodes: the tree of physical operators the planner builds and the
//! executor runs.
//!
//! A [`Plan`] node knows its output columns ([`Field`]s) and an estimate of
//! its row count (used by EXPLAIN and to choose a hash join's build side).
//! Column references in a node's expressions are positions in its input's
//! output (for joins: the left input's columns followed by the right's).

use std::sync::Arc;

use super::expr::Expr;
use crate::catalog::TableDef;
use crate::types::agg::AggFunc;
use crate::types::{DataType, Value};

/// One output column of a plan node.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The column name shown in results (`?column?` when it has none).
    pub name: String,
    /// Its type.
    pub ty: DataType,
}

/// A plan node with its output description.
#[derive(Debug, Clone)]
pub struct Plan {
    /// What the node does.
    pub node: Node,
    /// Its output columns.
    pub fields: Vec<Field>,
    /// Estimated number of output rows.
    pub rows: f64,
}

/// What an index scan reads of its index: equality values on the leading
/// key columns, then at most one range on the next column. Values are of
/// the key columns' types; `Value::Null` in `eq` is `IS NULL`.
#[derive(Debug, Clone, Default)]
pub struct IndexBounds {
    /// Per leading key column, the values it may equal (several: `IN`);
    /// the scan visits every combination, in index order.
    pub eq: Vec<Vec<Value>>,
    /// Lower bound on key column `eq.len()` (value, inclusive).
    pub lower: Option<(Value, bool)>,
    /// Upper bound on key column `eq.len()` (value, inclusive).
    pub upper: Option<(Value, bool)>,
}

/// An index scan (see [`Node::IndexScan`]).
#[derive(Debug, Clone)]
pub struct IndexScan {
    /// The table.
    pub table: Arc<TableDef>,
    /// The name the query calls it (for EXPLAIN).
    pub alias: String,
    /// The index (one of `table.indexes`).
    pub index: crate::catalog::IndexDef,
    /// Table column positions produced, in output order.
    pub columns: Vec<usize>,
    /// Append the tuple id as an `int8` column (UPDATE and DELETE), as
    /// [`Node::SeqScan`] does; never index-only.
    pub with_tid: bool,
    /// What to read of the index.
    pub bounds: IndexBounds,
    /// The conditions the bounds stand for, over the output columns (for
    /// EXPLAIN's `Index Cond`; not evaluated).
    pub index_cond: Vec<Expr>,
    /// Rows failing this are dropped, over the output columns.
    pub filter: Option<Expr>,
    /// Walk the index backward.
    pub backward: bool,
    /// Index-only: values come from the index entries; the heap is read
    /// only for pages not all-visible.
    pub index_only: bool,
    /// At most this many rows are wanted (a LIMIT right above, without a
    /// filter): the first batch is no larger.
    pub limit_hint: Option<u64>,
    /// For EXPLAIN only: names of columns past the output columns that
    /// `index_cond` may name (a nested loop's outer columns).
    pub outer_names: Vec<String>,
    /// Bounds known only when the scan starts (an InitPlan's value:
    /// `id = (SELECT max(id) ...)` where the subquery runs with the
    /// statement): each expression, of its key column's type and reading
    /// no column, replaces the placeholder of its slot in `bounds`.
    pub runtime: Vec<RuntimeBound>,
}

/// A bound of an [`IndexScan`] computed when the scan starts.
#[derive(Debug, Clone)]
pub struct RuntimeBound {
    /// Which value of the bounds it gives.
    pub slot: BoundSlot,
    /// Its expression (no column; NULL: the scan returns no row).
    pub expr: Expr,
}

/// A value's place in [`IndexBounds`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BoundSlot {
    /// The one equality value of key column `n` (`eq[n]`).
    Eq(usize),
    /// The lower bound.
    Lower,
    /// The upper bound.
    Upper,
}

/// A bitmap heap scan (see [`Node::BitmapHeapScan`]).
#[derive(Debug, Clone)]
pub struct BitmapHeapScan {
    /// The table.
    pub table: Arc<TableDef>,
    /// The name the query calls it (for EXPLAIN).
    pub alias: String,
    /// Table column positions produced, in output order.
    pub columns: Vec<usize>,
    /// Append the tuple id as an `int8` column, as [`Node::SeqScan`] does.
    pub with_tid: bool,
    /// The tree of index scans whose TIDs make the bitmap.
    pub bitmap: BitmapQual,
    /// The index conditions, tested again on the tuples of lossy pages,
    /// over `recheck_columns` (PostgreSQL's `bitmapqualorig`).
    pub recheck: Option<Expr>,
    /// Table columns `recheck` reads, in its column order.
    pub recheck_columns: Vec<usize>,
    /// `recheck` over the table's columns, as EXPLAIN's `Recheck Cond`.
    pub recheck_shown: Option<Expr>,
    /// Rows failing this are dropped, over the output columns.
    pub filter: Option<Expr>,
}

/// What builds a bitmap of tuple ids: one index's entries within bounds,
/// or the intersection or union of such bitmaps (PostgreSQL's Bitmap Index
/// Scan, BitmapAnd and BitmapOr nodes).
#[derive(Debug, Clone)]
pub enum BitmapQual {
    /// The entries of one index within its bounds.
    Index(Box<BitmapIndexScan>),
    /// Tuple ids in every input.
    And(Vec<BitmapQual>),
    /// Tuple ids in any input.
    Or(Vec<BitmapQual>),
}

/// One index read into a bitmap.
#[derive(Debug, Clone)]
pub struct BitmapIndexScan {
    /// The index (one of the scanned table's indexes).
    pub index: crate::catalog::IndexDef,
    /// What to read of it.
    pub bounds: IndexBounds,
    /// The conditions the bounds stand for, over the table's columns (for
    /// EXPLAIN's `Index Cond`; not evaluated).
    pub index_cond: Vec<Expr>,
    /// Estimated entries read.
    pub rows: f64,
}

impl BitmapQual {
    /// Nodes in the tree (EXPLAIN ANALYZE numbers each one).
    pub fn count(&self) -> usize {
        match self {
            BitmapQual::Index(_) => 1,
            BitmapQual::And(v) | BitmapQual::Or(v) => {
                1 + v.iter().map(|q| q.count()).sum::<usize>()
            }
        }
    }
}

/// One aggregate computed by an [`Node::Aggregate`].
#[derive(Debug, Clone)]
pub struct AggCall {
    /// The aggregate function.
    pub func: AggFunc,
    /// Its argument (none for `count(*)`), over the aggregate's input.
    pub arg: Option<Expr>,
    /// The arguments after the first (`string_agg`'s delimiter, `corr`'s
    /// X), over the aggregate's input; empty for one-argument aggregates.
    pub more_args: Vec<Expr>,
    /// `ORDER BY` inside the call: the rows of each group reach the
    /// aggregate in this order. Empty when none was written.
    pub order: Vec<AggOrder>,
    /// `DISTINCT` was written.
    pub distinct: bool,
    /// `FILTER (WHERE ...)`, over the aggregate's input.
    pub filter: Option<Expr>,
    /// The result type.
    pub ty: DataType,
}

/// One `ORDER BY` key inside an aggregate call.
#[derive(Debug, Clone)]
pub struct AggOrder {
    /// The key, over the aggregate's input.
    pub expr: Expr,
    /// Descending order.
    pub descending: bool,
    /// NULLs sort first (PostgreSQL's default: first when descending).
    pub nulls_first: bool,
}

impl AggCall {
    /// Whether the call needs the general path's per-row work beyond one
    /// argument: more arguments or an ORDER BY.
    pub fn is_plain(&self) -> bool {
        self.more_args.is_empty() && self.order.is_empty()
    }

    /// Every expression of the call: arguments, ORDER BY keys, FILTER.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        self.arg
            .iter()
            .chain(self.more_args.iter())
            .chain(self.order.iter().map(|o| &o.expr))
            .chain(self.filter.iter())
    }

    /// [`AggCall::exprs`], mutably.
    pub fn exprs_mut(&mut self) -> impl Iterator<Item = &mut Expr> {
        self.arg
            .iter_mut()
            .chain(self.more_args.iter_mut())
            .chain(self.order.iter_mut().map(|o| &mut o.expr))
            .chain(self.filter.iter_mut())
    }
}

/// One ORDER BY key, over the sort's input columns.
#[derive(Debug, Clone)]
pub struct SortKey {
    /// The input column to sort on.
    pub column: usize,
    /// Descending order.
    pub descending: bool,
    /// NULLs sort first (PostgreSQL's default: first when descending).
    pub nulls_first: bool,
}

/// Join kinds the executor runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    /// Rows with a match on both sides.
    Inner,
    /// Every left row, NULL-extended when unmatched.
    Left,
    /// Every right row, NULL-extended when unmatched.
    Right,
    /// Every row of both sides.
    Full,
    /// The left rows with no match on the right (`NOT EXISTS`): the
    /// output is the left's columns only. Hash joins only, built from the
    /// right.
    Anti,
}

/// A user function's compiled body as FROM calls it: its rows for the
/// (evaluated, cast) arguments. Owned by the plan, so it goes with it.
#[derive(Clone)]
pub struct UserSet {
    /// The function's name.
    pub name: String,
    /// The body.
    pub body: crate::types::funcs::user::SetBody,
}

impl std::fmt::Debug for UserSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UserSet({})", self.name)
    }
}

impl PartialEq for UserSet {
    fn eq(&self, o: &UserSet) -> bool {
        std::sync::Arc::ptr_eq(&self.body, &o.body)
    }
}

/// A set-returning function whose arguments are known only when the plan
/// runs ([`TableFunc::Call`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Srf {
    /// `generate_series` over `int4`/`int8` (arguments of the result type).
    SeriesInt,
    /// `generate_series` over `numeric`.
    SeriesNumeric,
    /// `generate_series(timestamp[tz], timestamp[tz], interval)`.
    SeriesTimestamp {
        /// Over `timestamp with time zone`.
        tz: bool,
    },
    /// `unnest(anyarray)`.
    Unnest,
    /// `string_to_table(text, text [, text])`.
    StringToTable,
    /// `regexp_matches(text, text [, text])` (`false`) or
    /// `regexp_split_to_table(text, text [, text])` (`true`).
    Regexp(bool),
    /// A JSON set-returning function of a `json` (`false`) or `jsonb`
    /// (`true`) argument.
    Json(crate::types::json::srf::JsonSrf, bool),
    /// A user function called in FROM.
    User(UserSet),
}

/// A set-returning function in FROM.
#[derive(Debug, Clone)]
pub enum TableFunc {
    /// `generate_series(start, stop[, step])` over integers.
    SeriesInt {
        /// First value.
        start: i64,
        /// Last value (inclusive).
        stop: i64,
        /// Increment (never zero).
        step: i64,
    },
    /// `generate_series(start, stop, step)` over timestamps.
    SeriesTimestamp {
        /// First value.
        start: i64,
        /// Last value (inclusive).
        stop: i64,
        /// Increment.
        step: crate::types::Interval,
        /// `timestamp with time zone` (days and months step in the
        /// session's zone) rather than `timestamp`.
        tz: bool,
    },
    /// The inspection functions (`heap_page_items` and friends): their rows
    /// are computed when the plan starts.
    Rows(Vec<Vec<Value>>),
    /// A function whose arguments read a row of an enclosing query or of a
    /// FROM item to its left ([`crate::nodes::expr::ExprKind::Param`]s):
    /// the executor evaluates the arguments, once they are substituted,
    /// when it builds the node.
    Call {
        /// Which function.
        srf: Srf,
        /// Its arguments, of the types the function takes.
        args: Vec<Expr>,
    },
}

/// The operators.
#[derive(Debug, Clone)]
pub enum Node {
    /// Sequential scan of a table, producing the columns `columns` (table
    /// column positions) and, when `with_tid`, a trailing `int8` column
    /// holding each row's tuple id (for UPDATE and DELETE).
    SeqScan {
        /// The table.
        table: Arc<TableDef>,
        /// The name the query calls it (for EXPLAIN).
        alias: String,
        /// Table column positions to deform, in output order.
        columns: Vec<usize>,
        /// Append the tuple id as an `int8` column.
        with_tid: bool,
        /// Rows failing this are dropped in the scan, over the output columns.
        filter: Option<Expr>,
    },
    /// A B-tree index scan of a table (PostgreSQL's Index Scan and Index
    /// Only Scan): the entries within `bounds`, in index order or its
    /// reverse, each checked for visibility at the heap (an index-only scan
    /// skips the heap for pages whose visibility-map bit is set). Output
    /// and `filter` as [`Node::SeqScan`]'s.
    IndexScan(Box<IndexScan>),
    /// PostgreSQL's Bitmap Heap Scan over its bitmap nodes: the tuple ids
    /// the index scans of `bitmap` find are collected (exact per page, or
    /// whole pages when `work_mem` would be exceeded) and the heap pages
    /// visited in block order, each tuple checked against the snapshot;
    /// tuples of lossy pages are tested against `recheck`. Output and
    /// `filter` as [`Node::SeqScan`]'s.
    BitmapHeapScan(Box<BitmapHeapScan>),
    /// Constant rows (`VALUES`, `SELECT` without FROM): each expression is
    /// evaluated once over a one-row, no-column batch.
    Values {
        /// The rows.
        rows: Vec<Vec<Expr>>,
    },
    /// A set-returning function.
    Function {
        /// Which one, with its arguments evaluated.
        func: TableFunc,
        /// The name shown by EXPLAIN.
        name: String,
        /// The alias it was given in FROM, if any (`generate_series(1, 3) g`).
        alias: Option<String>,
    },
    /// Keeps the rows where the predicate is true.
    Filter {
        /// The input.
        input: Box<Plan>,
        /// The condition, over the input's columns.
        predicate: Expr,
    },
    /// Computes new columns.
    Project {
        /// The input.
        input: Box<Plan>,
        /// One expression per output column.
        exprs: Vec<Expr>,
    },
    /// Grouping and aggregates. Output: the group keys, then the aggregates.
    Aggregate {
        /// The input.
        input: Box<Plan>,
        /// GROUP BY expressions (empty: one group over everything).
        group: Vec<Expr>,
        /// The aggregates.
        aggs: Vec<AggCall>,
    },
    /// Grouping over an input sorted on the group keys, one group at a
    /// time: PostgreSQL's `GroupAggregate`. Output as `Aggregate`'s, the
    /// groups in the input's order.
    GroupAggregate {
        /// The input, sorted on `group` as `order` says.
        input: Box<Plan>,
        /// GROUP BY keys: input columns (never empty).
        group: Vec<Expr>,
        /// The aggregates.
        aggs: Vec<AggCall>,
        /// How the input is sorted: one key per group key, in order
        /// (`column` is the group key's position).
        order: Vec<SortKey>,
    },
    /// Sorts its input.
    Sort {
        /// The input.
        input: Box<Plan>,
        /// The keys, most significant first.
        keys: Vec<SortKey>,
    },
    /// LIMIT / OFFSET.
    Limit {
        /// The input.
        input: Box<Plan>,
        /// At most this many rows (None: all).
        limit: Option<u64>,
        /// Skip this many first.
        offset: u64,
    },
    /// Keeps the first of each run of rows equal on `columns` (its input
    /// is sorted on them): sorted DISTINCT and DISTINCT ON, PostgreSQL's
    /// `Unique` node.
    Unique {
        /// The input, sorted so that equal rows are adjacent.
        input: Box<Plan>,
        /// The columns compared (NULLs equal to each other).
        columns: Vec<usize>,
    },
    /// `FETCH FIRST n ROWS WITH TIES`: LIMIT / OFFSET that also returns
    /// the rows after the n-th that equal it on `ties` (the ORDER BY
    /// columns; the input is sorted on them).
    LimitTies {
        /// The input.
        input: Box<Plan>,
        /// At most this many rows before ties (None: all).
        limit: Option<u64>,
        /// Skip this many first.
        offset: u64,
        /// The columns a tie is equal on.
        ties: Vec<usize>,
    },
    /// Removes duplicate rows (hashing whole rows).
    Distinct {
        /// The input.
        input: Box<Plan>,
    },
    /// Equi-join through a hash table built from one input.
    HashJoin {
        /// Left input.
        left: Box<Plan>,
        /// Right input.
        right: Box<Plan>,
        /// Join kind.
        kind: JoinKind,
        /// Key expressions over the left input.
        left_keys: Vec<Expr>,
        /// Key expressions over the right input (same types as left_keys).
        right_keys: Vec<Expr>,
        /// Further condition over left ++ right columns.
        residual: Option<Expr>,
        /// Build the hash table from the left input (else the right).
        build_left: bool,
    },
    /// Joins every pair of rows that satisfies the condition.
    NestedLoop {
        /// Left input.
        left: Box<Plan>,
        /// Right input (materialized).
        right: Box<Plan>,
        /// Join kind (Inner or Left).
        kind: JoinKind,
        /// Condition over left ++ right columns (None: cross join).
        condition: Option<Expr>,
    },
    /// A nested loop whose inner side is an index scan on the join key
    /// (PostgreSQL's parameterized Index Scan under a Nested Loop): for
    /// each left row, the index is searched for `left_key`'s value.
    /// Output: the left's columns, then the inner scan's.
    IndexNestLoop {
        /// Outer input.
        left: Box<Plan>,
        /// The inner scan: an [`Node::IndexScan`] whose first bound column
        /// takes the outer value (its `bounds.eq` has one slot left open).
        right: Box<Plan>,
        /// Inner or Left.
        kind: JoinKind,
        /// The outer value, over the left input's columns.
        left_key: Expr,
        /// Further condition over left ++ right columns.
        residual: Option<Expr>,
    },
    /// A nested loop whose right side reads the left's row (a LATERAL
    /// item; a function in FROM with column arguments): per left row,
    /// `params`' values stand for the right's
    /// [`crate::nodes::expr::ExprKind::Param`]s and the right is run anew.
    /// Output: the left's columns, then the right's.
    Lateral {
        /// Outer input.
        left: Box<Plan>,
        /// Inner input, planned with parameters.
        right: Box<Plan>,
        /// Inner or Left (every left row, NULL-extended when the right
        /// gives no row).
        kind: JoinKind,
        /// The parameters' values, over the left's columns.
        params: Vec<Expr>,
    },
    /// Concatenates inputs of the same shape (UNION ALL).
    Append {
        /// The inputs.
        inputs: Vec<Plan>,
    },
    /// Runs its input in parallel (the planner's `parallel` module): the
    /// leader and `workers` threads each run it on the pages they take of
    /// the input's driving scan ([`driving_scan`]).
    ///
    /// With `finalize`, the input is an [`Node::Aggregate`] whose partial
    /// states are combined — PostgreSQL's Finalize Aggregate over Gather
    /// over Partial Aggregate over Parallel Seq Scan, in one node. Without,
    /// it is PostgreSQL's plain Gather: the participants' rows are passed up
    /// as they are (a partial DISTINCT's groups, a scan's rows).
    Gather {
        /// The plan run by every participant.
        input: Box<Plan>,
        /// Worker threads beside the leader.
        workers: usize,
        /// The input is an aggregate whose partial states are combined.
        finalize: bool,
    },
    /// Window functions over its input, sorted on the window's partition
    /// and order keys (see [`super::window`]). Output: the input's
    /// columns, then one per call.
    WindowAgg {
        /// The sorted input.
        input: Box<Plan>,
        /// The window and its calls.
        window: Box<super::window::WindowClause>,
    },
    /// INTERSECT / EXCEPT [ALL] over two inputs.
    SetOp {
        /// Left input.
        left: Box<Plan>,
        /// Right input.
        right: Box<Plan>,
        /// INTERSECT (true) or EXCEPT.
        intersect: bool,
        /// Keep duplicates (ALL).
        all: bool,
    },
    /// A common table expression's result read by the query (PostgreSQL's
    /// CTE Scan): the rows of `input`, the CTE's plan, which EXPLAIN shows
    /// as the `CTE name` section of the query's top node.
    CteScan {
        /// The CTE's plan.
        input: Box<Plan>,
        /// The CTE's name.
        name: String,
        /// The name the query calls it (for EXPLAIN).
        alias: String,
    },
    /// `WITH RECURSIVE`'s evaluation (PostgreSQL's Recursive Union): the
    /// rows of `nonrecursive`, then the rows of `recursive` run again and
    /// again over the working table (the previous run's new rows, read by
    /// its [`Node::WorkTableScan`]) until a run produces none. With
    /// `distinct` (UNION), rows equal to one already returned are dropped
    /// and do not enter the working table.
    RecursiveUnion {
        /// The non-recursive term, run once.
        nonrecursive: Box<Plan>,
        /// The recursive term, run once per iteration.
        recursive: Box<Plan>,
        /// UNION (true) or UNION ALL.
        distinct: bool,
        /// The working table's number, which its scan names.
        worktable: usize,
    },
    /// The working table of the [`Node::RecursiveUnion`] numbered
    /// `worktable` (PostgreSQL's WorkTable Scan).
    WorkTableScan {
        /// The working table's number.
        worktable: usize,
        /// The CTE's name.
        name: String,
        /// The name the query calls it (for EXPLAIN).
        alias: String,
    },
}

impl Plan {
    /// Types of the output columns.
    pub fn types(&self) -> Vec<DataType> {
        self.fields.iter().map(|f| f.ty).collect()
    }

    /// The node's inputs.
    pub fn children(&self) -> Vec<&Plan> {
        match &self.node {
            Node::SeqScan { .. }
            | Node::IndexScan(_)
            | Node::BitmapHeapScan(_)
            | Node::Values { .. }
            | Node::Function { .. }
            | Node::WorkTableScan { .. } => vec![],
            Node::Filter { input, .. }
            | Node::Project { input, .. }
            | Node::Aggregate { input, .. }
            | Node::GroupAggregate { input, .. }
            | Node::Sort { input, .. }
            | Node::Limit { input, .. }
            | Node::Distinct { input }
            | Node::Unique { input, .. }
            | Node::LimitTies { input, .. }
            | Node::WindowAgg { input, .. }
            | Node::Gather { input, .. }
            | Node::CteScan { input, .. } => vec![input],
            Node::HashJoin { left, right, .. }
            | Node::NestedLoop { left, right, .. }
            | Node::IndexNestLoop { left, right, .. }
            | Node::Lateral { left, right, .. }
            | Node::SetOp { left, right, .. } => vec![left, right],
            Node::RecursiveUnion {
                nonrecursive,
                recursive,
                ..
            } => vec![nonrecursive, recursive],
            Node::Append { inputs } => inputs.iter().collect(),
        }
    }

    /// The node's inputs, mutably (as [`Plan::children`]).
    pub fn children_mut(&mut self) -> Vec<&mut Plan> {
        match &mut self.node {
            Node::SeqScan { .. }
            | Node::IndexScan(_)
            | Node::BitmapHeapScan(_)
            | Node::Values { .. }
            | Node::Function { .. }
            | Node::WorkTableScan { .. } => vec![],
            Node::Filter { input, .. }
            | Node::Project { input, .. }
            | Node::Aggregate { input, .. }
            | Node::GroupAggregate { input, .. }
            | Node::Sort { input, .. }
            | Node::Limit { input, .. }
            | Node::Distinct { input }
            | Node::Unique { input, .. }
            | Node::LimitTies { input, .. }
            | Node::WindowAgg { input, .. }
            | Node::Gather { input, .. }
            | Node::CteScan { input, .. } => vec![input],
            Node::HashJoin { left, right, .. }
            | Node::NestedLoop { left, right, .. }
            | Node::IndexNestLoop { left, right, .. }
            | Node::Lateral { left, right, .. }
            | Node::SetOp { left, right, .. } => vec![left, right],
            Node::RecursiveUnion {
                nonrecursive,
                recursive,
                ..
            } => vec![nonrecursive, recursive],
            Node::Append { inputs } => inputs.iter_mut().collect(),
        }
    }
}

/// The sequential scan whose pages the participants of a parallel `input`
/// split between them, if it has one (see the planner's `parallel` module).
pub fn driving_scan(input: &Plan) -> Option<&Plan> {
    match &input.node {
        Node::SeqScan {
            with_tid: false, ..
        } => Some(input),
        Node::Filter { input, .. } | Node::Project { input, .. } => driving_scan(input),
        Node::HashJoin {
            left,
            right,
            kind: JoinKind::Inner,
            build_left,
            ..
        } => driving_scan(if *build_left { right } else { left }),
        _ => None,
    }
}

/// The driving scan of a [`Node::Gather`]'s input: through the aggregate
/// every participant runs, if it is one.
pub fn gather_scan(input: &Plan) -> Option<&Plan> {
    match &input.node {
        Node::Aggregate { input, .. } => driving_scan(input),
        _ => driving_scan(input),
    }
}

impl Node {
    /// The expressions the node holds itself (not its inputs'), mutably
    /// (as [`Node::exprs`]).
    pub fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Node::SeqScan { filter, .. } => filter.iter_mut().collect(),
            Node::IndexScan(s) => s
                .filter
                .iter_mut()
                .chain(s.runtime.iter_mut().map(|r| &mut r.expr))
                .collect(),
            Node::BitmapHeapScan(s) => s.filter.iter_mut().collect(),
            Node::IndexNestLoop {
                left_key, residual, ..
            } => std::iter::once(left_key)
                .chain(residual.iter_mut())
                .collect(),
            Node::Values { rows } => rows.iter_mut().flatten().collect(),
            Node::Filter { predicate, .. } => vec![predicate],
            Node::Project { exprs, .. } => exprs.iter_mut().collect(),
            Node::Aggregate { group, aggs, .. } => group
                .iter_mut()
                .chain(aggs.iter_mut().flat_map(|a| a.exprs_mut()))
                .collect(),
            Node::HashJoin {
                left_keys,
                right_keys,
                residual,
                ..
            } => left_keys
                .iter_mut()
                .chain(right_keys.iter_mut())
                .chain(residual.iter_mut())
                .collect(),
            Node::NestedLoop { condition, .. } => condition.iter_mut().collect(),
            Node::Lateral { params, .. } => params.iter_mut().collect(),
            Node::Function {
                func: TableFunc::Call { args, .. },
                ..
            } => args.iter_mut().collect(),
            _ => Vec::new(),
        }
    }

    /// The expressions the node holds itself (not its inputs').
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            Node::SeqScan { filter, .. } => filter.iter().collect(),
            Node::IndexScan(s) => s
                .filter
                .iter()
                .chain(s.runtime.iter().map(|r| &r.expr))
                .collect(),
            Node::BitmapHeapScan(s) => s.filter.iter().collect(),
            Node::IndexNestLoop {
                left_key, residual, ..
            } => std::iter::once(left_key).chain(residual.iter()).collect(),
            Node::Values { rows } => rows.iter().flatten().collect(),
            Node::Filter { predicate, .. } => vec![predicate],
            Node::Project { exprs, .. } => exprs.iter().collect(),
            Node::Aggregate { group, aggs, .. } => group
                .iter()
                .chain(aggs.iter().flat_map(|a| a.exprs()))
                .collect(),
            Node::HashJoin {
                left_keys,
                right_keys,
                residual,
                ..
            } => left_keys
                .iter()
                .chain(right_keys.iter())
                .chain(residual.iter())
                .collect(),
            Node::NestedLoop { condition, .. } => condition.iter().collect(),
            Node::Lateral { params, .. } => params.iter().collect(),
            Node::Function {
                func: TableFunc::Call { args, .. },
                ..
            } => args.iter().collect(),
            _ => Vec::new(),
        }
    }
}
