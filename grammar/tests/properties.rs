//! Property tests: random trees print as SQL that parses back to the same
//! tree, and no input (random bytes, or SQL-like token soup) makes the
//! parser or the splitter panic.
//!
//! The generators build only trees the parser can produce: a minus sign
//! written before a non-negative number is folded into the literal, so
//! `Unary(Minus, Number("5"))` is never generated (`Number("-5")` is), and
//! `SetExpr::Nested` only wraps queries with their own ORDER BY, LIMIT,
//! OFFSET or WITH.

use heapdb_grammar::ast::*;
use heapdb_grammar::{is_incomplete, parse, parse_one, split_statements};
use proptest::prelude::*;

// ------------------------------------------------------------- leaves --

fn ident() -> impl Strategy<Value = Ident> {
    prop_oneof![
        6 => "[a-z_][a-z0-9_]{0,6}",
        1 => Just("Foo".to_string()),
        1 => Just("select".to_string()),
        1 => Just("left".to_string()),
        1 => Just("begin".to_string()),
        1 => Just("double".to_string()),
        1 => Just("integer".to_string()),
        1 => Just("a b\"c".to_string()),
        1 => Just("é".to_string()),
    ]
}

fn object_name() -> impl Strategy<Value = ObjectName> {
    (proptest::option::of(ident()), ident()).prop_map(|(schema, name)| ObjectName {
        schema,
        name,
        offset: Offset(0),
    })
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{1,3}",
        "[1-9][0-9]{20,30}",
        "[0-9]{1,3}\\.[0-9]{0,3}",
        "\\.[0-9]{1,3}",
        "[0-9]{1,2}[eE][+-]?[0-9]{1,2}",
        "-[0-9]{1,3}",
    ]
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        number().prop_map(Literal::Number),
        ".{0,8}".prop_map(Literal::String),
        any::<bool>().prop_map(Literal::Boolean),
        Just(Literal::Null),
    ]
}

fn data_type() -> impl Strategy<Value = DataType> {
    prop_oneof![
        Just(DataType::SmallInt),
        Just(DataType::Integer),
        Just(DataType::BigInt),
        Just(DataType::Real),
        Just(DataType::Double),
        (proptest::option::of(1u32..100), -10i32..10).prop_map(|(precision, scale)| {
            DataType::Numeric {
                precision,
                scale: precision.map(|_| scale),
            }
        }),
        Just(DataType::Boolean),
        Just(DataType::Text),
        proptest::option::of(1u32..1000).prop_map(DataType::Varchar),
        proptest::option::of(1u32..1000).prop_map(DataType::Char),
        Just(DataType::Date),
        Just(DataType::Timestamp(None)),
        Just(DataType::Timestamp(Some(3))),
        Just(DataType::TimestampTz(None)),
        Just(DataType::Interval),
        prop_oneof![
            Just("serial".to_string()),
            Just("My Type".to_string()),
            Just("double".to_string()),
            Just("time".to_string()),
        ]
        .prop_map(DataType::Named),
    ]
}

fn column_ref() -> impl Strategy<Value = ColumnRef> {
    (
        proptest::option::of((proptest::option::of(ident()), ident())),
        ident(),
    )
        .prop_map(|(qualifier, column)| {
            let (schema, table) = match qualifier {
                Some((schema, table)) => (schema, Some(table)),
                None => (None, None),
            };
            ColumnRef {
                schema,
                table,
                column,
            }
        })
}

fn e(kind: ExprKind) -> Expr {
    Expr::new(kind)
}

fn binary_op() -> impl Strategy<Value = BinaryOp> {
    use BinaryOp::*;
    proptest::sample::select(vec![
        Plus, Minus, Multiply, Divide, Modulo, Exponent, Concat, Eq, NotEq, Lt, LtEq, Gt, GtEq,
        And, Or,
    ])
}

fn current_value() -> impl Strategy<Value = CurrentValue> {
    use CurrentValue::*;
    proptest::sample::select(vec![
        CurrentDate,
        CurrentTime,
        CurrentTimestamp,
        LocalTime,
        LocalTimestamp,
        CurrentUser,
        SessionUser,
    ])
}

// -------------------------------------------------------- expressions --

fn leaf_expr() -> BoxedStrategy<Expr> {
    prop_oneof![
        4 => literal().prop_map(|l| e(ExprKind::Literal(l))),
        4 => column_ref().prop_map(|c| e(ExprKind::Column(c))),
        1 => (data_type(), "[a-z 0-9:-]{0,10}")
            .prop_map(|(data_type, value)| e(ExprKind::TypedString {
                data_type,
                value,
                fields: None,
                precision: None,
            })),
        1 => current_value().prop_map(|v| e(ExprKind::CurrentValue(v))),
        1 => Just(e(ExprKind::Default)),
    ]
    .boxed()
}

/// Expressions, with subqueries built from `query` (a shallower strategy).
fn expr_with(query: BoxedStrategy<Query>) -> BoxedStrategy<Expr> {
    leaf_expr()
        .prop_recursive(3, 12, 3, move |inner| {
            let q = query.clone();
            let order = order_by_with(inner.clone());
            prop_oneof![
                (binary_op(), inner.clone(), inner.clone()).prop_map(|(op, l, r)| e(
                    ExprKind::Binary {
                        op,
                        left: Box::new(l),
                        right: Box::new(r)
                    }
                )),
                (
                    prop_oneof![
                        Just(UnaryOp::Plus),
                        Just(UnaryOp::Minus),
                        Just(UnaryOp::Not)
                    ],
                    inner.clone()
                )
                    .prop_map(|(op, x)| {
                        match (&op, &x.kind) {
                            // The parser folds `-5` into the literal.
                            (UnaryOp::Minus, ExprKind::Literal(Literal::Number(n)))
                                if !n.starts_with('-') =>
                            {
                                e(ExprKind::Literal(Literal::Number(format!("-{n}"))))
                            }
                            _ => e(ExprKind::Unary {
                                op,
                                expr: Box::new(x),
                            }),
                        }
                    }),
                (inner.clone(), any::<bool>()).prop_map(|(x, negated)| e(ExprKind::IsNull {
                    expr: Box::new(x),
                    negated
                })),
                (
                    inner.clone(),
                    proptest::option::of(any::<bool>()),
                    any::<bool>()
                )
                    .prop_map(|(x, value, negated)| e(ExprKind::IsBool {
                        expr: Box::new(x),
                        value,
                        negated
                    })),
                (inner.clone(), inner.clone(), any::<bool>()).prop_map(|(l, r, negated)| e(
                    ExprKind::IsDistinctFrom {
                        left: Box::new(l),
                        right: Box::new(r),
                        negated
                    }
                )),
                (inner.clone(), inner.clone(), inner.clone(), any::<bool>()).prop_map(
                    |(x, low, high, negated)| e(ExprKind::Between {
                        expr: Box::new(x),
                        low: Box::new(low),
                        high: Box::new(high),
                        negated
                    })
                ),
                (
                    inner.clone(),
                    proptest::collection::vec(inner.clone(), 1..3),
                    any::<bool>()
                )
                    .prop_map(|(x, mut list, negated)| match list.as_mut_slice() {
                        // `x IN ((SELECT ...))` is a subquery test, as in PostgreSQL.
                        [Expr {
                            kind: ExprKind::Subquery(q),
                            ..
                        }] => e(ExprKind::InSubquery {
                            expr: Box::new(x),
                            query: std::mem::replace(
                                q,
                                Box::new(Query::simple(SetExpr::Values(Vec::new())))
                            ),
                            negated
                        }),
                        _ => e(ExprKind::InList {
                            expr: Box::new(x),
                            list,
                            negated
                        }),
                    }),
                (inner.clone(), q.clone(), any::<bool>()).prop_map(|(x, query, negated)| e(
                    ExprKind::InSubquery {
                        expr: Box::new(x),
                        query: Box::new(query),
                        negated
                    }
                )),
                (
                    inner.clone(),
                    inner.clone(),
                    proptest::option::of(inner.clone()),
                    any::<bool>(),
                    any::<bool>()
                )
                    .prop_map(|(x, pattern, escape, negated, case_insensitive)| e(
                        ExprKind::Like {
                            expr: Box::new(x),
                            pattern: Box::new(pattern),
                            escape: escape.map(Box::new),
                            negated,
                            case_insensitive
                        }
                    )),
                q.clone()
                    .prop_map(|query| e(ExprKind::Exists(Box::new(query)))),
                q.clone()
                    .prop_map(|query| e(ExprKind::Subquery(Box::new(query)))),
                (
                    proptest::option::of(inner.clone()),
                    proptest::collection::vec((inner.clone(), inner.clone()), 1..3),
                    proptest::option::of(inner.clone())
                )
                    .prop_map(|(operand, branches, else_result)| e(
                        ExprKind::Case {
                            operand: operand.map(Box::new),
                            branches,
                            else_result: else_result.map(Box::new)
                        }
                    )),
                (inner.clone(), data_type()).prop_map(|(x, data_type)| e(ExprKind::Cast {
                    expr: Box::new(x),
                    data_type
                })),
                function_with(inner.clone(), order)
                    .prop_map(|call| e(ExprKind::Function(Box::new(call)))),
            ]
        })
        .boxed()
}

fn order_by_with(expr: BoxedStrategy<Expr>) -> BoxedStrategy<Vec<OrderBy>> {
    proptest::collection::vec(
        (expr, any::<bool>(), proptest::option::of(any::<bool>())).prop_map(
            |(expr, descending, nulls_first)| OrderBy {
                expr,
                descending,
                nulls_first,
            },
        ),
        0..3,
    )
    .boxed()
}

fn function_with(
    expr: BoxedStrategy<Expr>,
    order: BoxedStrategy<Vec<OrderBy>>,
) -> BoxedStrategy<FunctionCall> {
    (
        object_name(),
        proptest::collection::vec(expr.clone(), 0..3),
        any::<bool>(),
        any::<bool>(),
        order,
        proptest::option::of(expr),
    )
        .prop_map(|(name, args, star, distinct, order_by, filter)| {
            let star = star && args.is_empty();
            let has_args = !args.is_empty();
            FunctionCall {
                name,
                args,
                arg_names: Vec::new(),
                star,
                distinct: distinct && has_args,
                order_by: if has_args { order_by } else { Vec::new() },
                filter: filter.map(Box::new),
                variadic: false,
                over: None,
            }
        })
        .boxed()
}

// ------------------------------------------------------------ queries --

fn table_alias() -> impl Strategy<Value = Option<TableAlias>> {
    proptest::option::of(
        (ident(), proptest::collection::vec(ident(), 0..2))
            .prop_map(|(name, columns)| TableAlias { name, columns }),
    )
}

fn table_ref(expr: BoxedStrategy<Expr>, query: BoxedStrategy<Query>) -> BoxedStrategy<TableRef> {
    let order = order_by_with(expr.clone());
    let leaf = prop_oneof![
        3 => (object_name(), table_alias()).prop_map(|(name, alias)| TableRef::Table { name, alias, only: false }),
        1 => (function_with(expr.clone(), order), table_alias())
            .prop_map(|(call, alias)| TableRef::Function { call, alias, offset: Offset(0) }),
        1 => (query, table_alias()).prop_map(|(q, alias)| TableRef::Subquery { query: Box::new(q), alias, lateral: false }),
    ];
    leaf.prop_recursive(2, 6, 2, move |inner| {
        (
            inner.clone(),
            inner,
            0usize..7,
            expr.clone(),
            proptest::collection::vec(ident(), 1..3),
        )
            .prop_map(|(left, right, k, on, using)| {
                let (kind, constraint) = match k {
                    0 => (JoinKind::Inner, JoinConstraint::On(on)),
                    1 => (JoinKind::Left, JoinConstraint::Using(using)),
                    2 => (JoinKind::Right, JoinConstraint::On(on)),
                    3 => (JoinKind::Full, JoinConstraint::On(on)),
                    4 => (JoinKind::Cross, JoinConstraint::None),
                    5 => (JoinKind::Inner, JoinConstraint::Natural),
                    _ => (JoinKind::Left, JoinConstraint::Natural),
                };
                TableRef::Join(Box::new(Join {
                    left,
                    right,
                    kind,
                    constraint,
                }))
            })
    })
    .boxed()
}

fn select_item(expr: BoxedStrategy<Expr>) -> impl Strategy<Value = SelectItem> {
    prop_oneof![
        4 => (expr, proptest::option::of(ident())).prop_map(|(expr, alias)| SelectItem::Expr { expr, alias }),
        1 => Just(SelectItem::Wildcard(Offset(0))),
        1 => object_name().prop_map(SelectItem::QualifiedWildcard),
    ]
}

/// A query whose expressions contain subqueries from `sub` (shallower).
fn query_with(sub: BoxedStrategy<Query>) -> BoxedStrategy<Query> {
    let expr = expr_with(sub.clone());
    let select = (
        any::<bool>(),
        proptest::collection::vec(select_item(expr.clone()), 0..3),
        proptest::collection::vec(table_ref(expr.clone(), sub.clone()), 0..3),
        proptest::option::of(expr.clone()),
        proptest::collection::vec(expr.clone(), 0..2),
        proptest::option::of(expr.clone()),
        proptest::collection::vec(expr.clone(), 0..2),
    )
        .prop_map(
            |(distinct, projection, from, where_clause, group_by, having, on)| {
                SetExpr::Select(Box::new(Select {
                    distinct,
                    distinct_on: if distinct { on } else { Vec::new() },
                    projection,
                    from,
                    where_clause,
                    group_by,
                    having,
                    window: Vec::new(),
                }))
            },
        );
    let values = proptest::collection::vec(proptest::collection::vec(expr.clone(), 1..3), 1..3)
        .prop_map(SetExpr::Values);
    let nested = sub.clone().prop_map(|mut q| {
        // Only a query with clauses of its own keeps its parentheses.
        if q.with.is_empty() && q.order_by.is_empty() && q.limit.is_none() && q.offset.is_none() {
            q.limit = Some(e(ExprKind::Literal(Literal::Number("1".into()))));
        }
        SetExpr::Nested(Box::new(q))
    });
    let body =
        prop_oneof![4 => select, 2 => values, 1 => nested].prop_recursive(2, 4, 2, |inner| {
            (
                proptest::sample::select(vec![
                    SetOperator::Union,
                    SetOperator::Intersect,
                    SetOperator::Except,
                ]),
                any::<bool>(),
                inner.clone(),
                inner,
            )
                .prop_map(|(op, all, left, right)| SetExpr::SetOp {
                    op,
                    all,
                    left: Box::new(left),
                    right: Box::new(right),
                })
        });
    let ctes = proptest::collection::vec(
        (ident(), proptest::collection::vec(ident(), 0..2), sub).prop_map(|(name, columns, q)| {
            Cte {
                name,
                columns,
                query: Box::new(q),
                recursive: false,
                materialized: None,
                offset: Offset(0),
            }
        }),
        0..2,
    );
    (
        ctes,
        body,
        order_by_with(expr.clone()),
        proptest::option::of(expr.clone()),
        proptest::option::of(expr),
        any::<bool>(),
    )
        .prop_map(|(with, body, order_by, limit, offset, ties)| Query {
            with,
            body,
            order_by,
            with_ties: ties && limit.is_some(),
            limit,
            offset,
        })
        .boxed()
}

/// Queries nested up to two levels deep.
fn query() -> BoxedStrategy<Query> {
    let innermost = Just(Query::simple(SetExpr::Values(vec![vec![e(
        ExprKind::Literal(Literal::Number("1".into())),
    )]])))
    .boxed();
    query_with(query_with(innermost))
}

// --------------------------------------------------------- statements --

fn set_arg() -> impl Strategy<Value = SetArg> {
    prop_oneof![
        ".{0,6}".prop_map(SetArg::String),
        number().prop_map(SetArg::Number),
        prop_oneof![ident(), Just("on".to_string()), Just("default".to_string())]
            .prop_map(SetArg::Word),
    ]
}

fn modes() -> impl Strategy<Value = TransactionModes> {
    use IsolationLevel::*;
    (
        proptest::option::of(proptest::sample::select(vec![
            ReadUncommitted,
            ReadCommitted,
            RepeatableRead,
            Serializable,
        ])),
        proptest::option::of(any::<bool>()),
        proptest::option::of(any::<bool>()),
    )
        .prop_map(|(isolation, read_only, deferrable)| TransactionModes {
            isolation,
            read_only,
            deferrable,
        })
}

fn tables() -> impl Strategy<Value = Vec<TableAndColumns>> {
    proptest::collection::vec(
        (object_name(), proptest::collection::vec(ident(), 0..2))
            .prop_map(|(name, columns)| TableAndColumns { name, columns }),
        0..3,
    )
}

fn copy_option() -> impl Strategy<Value = CopyOption> {
    prop_oneof![
        proptest::sample::select(vec![CopyFormat::Text, CopyFormat::Csv, CopyFormat::Binary])
            .prop_map(CopyOption::Format),
        ".{0,2}".prop_map(CopyOption::Delimiter),
        ".{0,2}".prop_map(CopyOption::Null),
        any::<bool>().prop_map(CopyOption::Header),
        ".{0,2}".prop_map(CopyOption::Quote),
        ".{0,2}".prop_map(CopyOption::Escape),
        any::<bool>().prop_map(CopyOption::Freeze),
        "[A-Z0-9]{1,5}".prop_map(CopyOption::Encoding),
        proptest::collection::vec(ident(), 0..2).prop_map(CopyOption::ForceQuote),
        proptest::collection::vec(ident(), 1..2).prop_map(CopyOption::ForceNotNull),
    ]
}

fn returning(expr: BoxedStrategy<Expr>) -> impl Strategy<Value = Vec<SelectItem>> {
    proptest::collection::vec(select_item(expr), 0..2)
}

fn statement() -> BoxedStrategy<Statement> {
    let q = query();
    let expr = expr_with(q.clone());
    let dml = prop_oneof![
        q.clone().prop_map(|q| Statement::Query(Box::new(q))),
        (
            object_name(),
            proptest::collection::vec(ident(), 0..3),
            proptest::option::of(q.clone()),
            returning(expr.clone())
        )
            .prop_map(
                |(table, columns, source, returning)| Statement::Insert(Box::new(Insert {
                    table,
                    column_offsets: vec![Offset(0); columns.len()],
                    columns,
                    source: source.map(Box::new),
                    returning,
                    alias: None,
                    on_conflict: None,
                }))
            ),
        (
            object_name(),
            proptest::option::of(ident()),
            proptest::collection::vec((ident(), expr.clone()), 1..3),
            proptest::collection::vec(table_ref(expr.clone(), q.clone()), 0..2),
            proptest::option::of(expr.clone()),
            returning(expr.clone())
        )
            .prop_map(|(table, alias, sets, from, where_clause, returning)| {
                Statement::Update(Box::new(Update {
                    table,
                    only: false,
                    alias,
                    assignments: sets
                        .into_iter()
                        .map(|(column, value)| Assignment {
                            column,
                            value,
                            offset: Offset(0),
                            multi: None,
                        })
                        .collect(),
                    from,
                    where_clause,
                    returning,
                }))
            }),
        (
            object_name(),
            proptest::option::of(ident()),
            proptest::collection::vec(table_ref(expr.clone(), q.clone()), 0..2),
            proptest::option::of(expr.clone()),
            returning(expr.clone())
        )
            .prop_map(|(table, alias, using, where_clause, returning)| {
                Statement::Delete(Box::new(Delete {
                    table,
                    only: false,
                    alias,
                    using,
                    where_clause,
                    returning,
                }))
            }),
        (
            any::<bool>(),
            object_name(),
            proptest::collection::vec(ident(), 0..2),
            q.clone()
        )
            .prop_map(|(if_not_exists, name, columns, query)| {
                Statement::CreateTableAs(Box::new(CreateTableAs {
                    temp: if_not_exists,
                    on_commit: if_not_exists.then_some(OnCommit::Drop),
                    if_not_exists,
                    name,
                    columns,
                    query: Box::new(query),
                }))
            }),
    ];
    let column_constraint = prop_oneof![
        Just(ColumnConstraint::Null),
        Just(ColumnConstraint::NotNull),
        expr.clone().prop_map(ColumnConstraint::Default),
        proptest::option::of(ident()).prop_map(ColumnConstraint::PrimaryKey),
        proptest::option::of(ident()).prop_map(ColumnConstraint::Unique),
        expr.clone()
            .prop_map(|e| ColumnConstraint::Check(plain_check(e))),
    ];
    let ddl = prop_oneof![
        (
            any::<bool>(),
            object_name(),
            proptest::collection::vec(
                (
                    ident(),
                    data_type(),
                    proptest::collection::vec(column_constraint, 0..3)
                )
                    .prop_map(|(name, data_type, constraints)| ColumnDef {
                        name,
                        data_type,
                        constraints,
                        offset: Offset(0)
                    }),
                0..3
            ),
            proptest::collection::vec(
                prop_oneof![
                    (
                        proptest::option::of(ident()),
                        proptest::collection::vec(ident(), 1..3)
                    )
                        .prop_map(|(n, c)| TableConstraint::PrimaryKey(n, c)),
                    (
                        proptest::option::of(ident()),
                        proptest::collection::vec(ident(), 1..3)
                    )
                        .prop_map(|(n, c)| TableConstraint::Unique(n, c)),
                    expr.clone()
                        .prop_map(|e| TableConstraint::Check(plain_check(e))),
                ],
                0..2
            ),
            proptest::collection::vec((ident(), set_arg()), 0..2)
        )
            .prop_map(
                |(if_not_exists, name, columns, constraints, with_options)| {
                    Statement::CreateTable(Box::new(CreateTable {
                        temp: !if_not_exists,
                        on_commit: (!if_not_exists).then_some(OnCommit::DeleteRows),
                        if_not_exists,
                        name,
                        columns,
                        constraints,
                        with_options,
                        inherits: Vec::new(),
                    }))
                }
            ),
        (
            any::<bool>(),
            proptest::collection::vec(object_name(), 1..3),
            any::<bool>()
        )
            .prop_map(
                |(if_exists, names, cascade)| Statement::DropTable(DropTable {
                    if_exists,
                    names,
                    cascade
                })
            ),
        proptest::collection::vec(object_name(), 1..3).prop_map(|names| Statement::Truncate(
            Truncate {
                only: vec![false; names.len()],
                names,
                cascade: false
            }
        )),
    ];
    let copy = (
        prop_oneof![
            (object_name(), proptest::collection::vec(ident(), 0..2))
                .prop_map(|(name, columns)| CopySource::Table { name, columns }),
            q.clone().prop_map(|q| CopySource::Query(Box::new(q))),
        ],
        any::<bool>(),
        prop_oneof![
            ".{0,6}".prop_map(CopyTarget::File),
            Just(CopyTarget::Stdin),
            Just(CopyTarget::Stdout)
        ],
        proptest::collection::vec(copy_option(), 0..3),
    )
        .prop_map(|(source, from, target, options)| {
            let direction = if from && matches!(source, CopySource::Table { .. }) {
                CopyDirection::From
            } else {
                CopyDirection::To
            };
            Statement::Copy(Box::new(Copy {
                source,
                direction,
                target,
                options,
            }))
        });
    let explained = prop_oneof![
        q.clone().prop_map(|q| Statement::Query(Box::new(q))),
        (object_name(), q.clone()).prop_map(|(table, q)| Statement::Insert(Box::new(Insert {
            table,
            columns: Vec::new(),
            column_offsets: Vec::new(),
            source: Some(Box::new(q)),
            returning: Vec::new(),
            alias: None,
            on_conflict: None,
        }))),
    ];
    let format = proptest::sample::select(vec![
        ExplainFormat::Text,
        ExplainFormat::Json,
        ExplainFormat::Yaml,
        ExplainFormat::Xml,
    ]);
    let utility = prop_oneof![
        copy,
        (any::<[bool; 5]>(), tables()).prop_map(|(o, tables)| Statement::Vacuum(Vacuum {
            full: o[0],
            freeze: o[1],
            verbose: o[2],
            analyze: o[3],
            disable_page_skipping: o[4],
            tables
        })),
        (any::<bool>(), tables())
            .prop_map(|(verbose, tables)| Statement::Analyze(Analyze { verbose, tables })),
        Just(Statement::Checkpoint),
        (
            any::<[bool; 5]>(),
            proptest::option::of(any::<bool>()),
            format,
            explained
        )
            .prop_map(|(o, summary, format, statement)| {
                Statement::Explain(Box::new(Explain {
                    options: ExplainOptions {
                        analyze: o[0],
                        verbose: o[1],
                        costs: o[2],
                        buffers: o[3],
                        timing: o[4],
                        summary,
                        format,
                    },
                    statement,
                }))
            }),
        modes().prop_map(Statement::Begin),
        modes().prop_map(Statement::SetTransaction),
        any::<bool>().prop_map(|chain| Statement::Commit { chain }),
        any::<bool>().prop_map(|chain| Statement::Rollback { chain }),
        (
            any::<bool>(),
            "[a-z_]{1,8}(\\.[a-z_]{1,8})?",
            prop_oneof![
                Just(SetValue::Default),
                proptest::collection::vec(set_arg(), 1..3).prop_map(SetValue::Values),
            ]
        )
            .prop_map(|(local, name, value)| Statement::Set(Set { local, name, value })),
        "[a-z_]{1,8}".prop_map(|name| Statement::Show(Show { name })),
        "[a-z_]{1,8}".prop_map(|name| Statement::Reset(Reset { name })),
    ];
    prop_oneof![3 => dml, 1 => ddl, 2 => utility].boxed()
}

// ---------------------------------------------------------- properties --

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn printed_statements_parse_back_to_the_same_tree(stmt in statement()) {
        let printed = stmt.to_string();
        match parse_one(&printed) {
            Ok(again) => {
                let reprinted = again.to_string();
                let at = printed
                    .bytes()
                    .zip(reprinted.bytes())
                    .position(|(a, b)| a != b)
                    .unwrap_or(printed.len().min(reprinted.len()));
                let start = printed.floor_char_boundary(at.saturating_sub(60));
                let re_start = reprinted.floor_char_boundary(at.saturating_sub(60));
                prop_assert!(
                    again == stmt,
                    "trees differ; printed forms from the first difference:\n  {}\n  {}",
                    &printed[start..],
                    &reprinted[re_start..]
                );
            }
            Err(e) => prop_assert!(false, "printed form does not parse: {}\n{}\nat {}", printed, e, e.offset),
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse(&text);
        let _ = split_statements(&text);
        let _ = is_incomplete(&text);
    }

    #[test]
    fn sql_token_soup_never_panics(words in proptest::collection::vec(prop_oneof![
        Just("select"), Just("from"), Just("where"), Just("("), Just(")"), Just(","), Just(";"),
        Just("'x"), Just("'y'"), Just("\""), Just("$$"), Just("/*"), Just("*/"), Just("--"), Just("\n"),
        Just("E'\\"), Just("1"), Just("1.5e"), Just("a"), Just("."), Just("*"), Just("::"), Just("int"),
        Just("not"), Just("in"), Just("between"), Just("and"), Just("is"), Just("null"), Just("case"),
        Just("when"), Just("then"), Just("end"), Just("-"), Just("+"), Just("="), Just("insert"),
        Just("into"), Just("values"), Just("copy"), Just("with"), Just("explain"), Just("vacuum"),
        Just("join"), Just("on"), Just("union"), Just("set"), Just("to"), Just("\\"), Just("count"),
    ], 0..40)) {
        let text = words.join(" ");
        let _ = parse(&text);
        let _ = split_statements(&text);
        let _ = is_incomplete(&text);
    }
}

/// An unnamed `CHECK (e)`.
fn plain_check(expr: Expr) -> heapdb_grammar::ast::CheckConstraint {
    heapdb_grammar::ast::CheckConstraint {
        name: None,
        expr,
        no_inherit: false,
        not_valid: false,
    }
}
