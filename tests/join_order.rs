//! Join order search on joins of many small tables, in the manner of
//! SQLite's select5.test: comma joins of 8 to 64 tables with WHERE
//! equalities (chains, stars, random trees, extra cycle edges, some of them
//! implied by the others) and constant filters, in a shuffled FROM order.
//!
//! A deterministic generator writes the queries; each answer is checked
//! against a naive evaluator in this file (a backtracking nested loop over
//! the tables' rows, in an order of its own), never against heapdb. The
//! plans are checked too: a connected join graph of equalities is planned
//! without a single Nested Loop (no cross product), a disconnected one with
//! exactly one per extra component.
//!
//! The tables have ten rows each and every join is on a key, so every
//! intermediate result of a good plan is at most ten rows (a cross product
//! of them would not be); a planner that joins in FROM order shows here as
//! a hang, not as a timing assertion.

use heapdb::Session;

mod common;

/// The number of tables the database holds (`t1` .. `t64`).
const TABLES: usize = 64;

/// A small deterministic generator (64-bit LCG, high bits out).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

/// Column `a` (0) or `b` (1) of table `t` (1-based), row `g` (1..=10).
fn value(t: usize, col: usize, g: i64) -> i64 {
    if col == 0 {
        g
    } else {
        // A permutation of 1..=10 per table.
        let m = [3, 7, 9][t % 3];
        (g * m + t as i64) % 10 + 1
    }
}

/// One WHERE conjunct.
#[derive(Clone, Debug)]
enum Pred {
    /// `col1 of t1 = col2 of t2`.
    Join(usize, usize, usize, usize),
    /// `col of t = v`.
    Eq(usize, usize, i64),
    /// `col of t < v`.
    Lt(usize, usize, i64),
    /// `col of t in (vs)`.
    In(usize, usize, Vec<i64>),
}

impl Pred {
    fn tables(&self) -> Vec<usize> {
        match self {
            Pred::Join(t1, _, t2, _) => vec![*t1, *t2],
            Pred::Eq(t, ..) | Pred::Lt(t, ..) | Pred::In(t, ..) => vec![*t],
        }
    }
    fn sql(&self) -> String {
        let c = |col: usize, t: usize| format!("{}{t}", ["a", "b"][col]);
        match self {
            Pred::Join(t1, c1, t2, c2) => format!("{}={}", c(*c1, *t1), c(*c2, *t2)),
            Pred::Eq(t, col, v) => format!("{}={v}", c(*col, *t)),
            Pred::Lt(t, col, v) => format!("{}<{v}", c(*col, *t)),
            Pred::In(t, col, vs) => {
                let vs: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
                format!("{} in ({})", c(*col, *t), vs.join(","))
            }
        }
    }
    /// Whether the rows `row[t]` (1-based values of `g`) satisfy it.
    fn holds(&self, row: &[i64]) -> bool {
        let v = |t: usize, col: usize| value(t, col, row[t]);
        match self {
            Pred::Join(t1, c1, t2, c2) => v(*t1, *c1) == v(*t2, *c2),
            Pred::Eq(t, col, x) => v(*t, *col) == *x,
            Pred::Lt(t, col, x) => v(*t, *col) < *x,
            Pred::In(t, col, xs) => xs.contains(&v(*t, *col)),
        }
    }
}

/// A generated query: its tables (FROM order), conjuncts and output.
struct Query {
    from: Vec<usize>,
    preds: Vec<Pred>,
    /// Tables whose `x` column is selected; empty: `count(*)`.
    select: Vec<usize>,
    /// Connected components of the join graph.
    components: usize,
}

impl Query {
    fn sql(&self) -> String {
        let sel = if self.select.is_empty() {
            "count(*)".to_string()
        } else {
            let xs: Vec<String> = self.select.iter().map(|t| format!("x{t}")).collect();
            xs.join(",")
        };
        let from: Vec<String> = self.from.iter().map(|t| format!("t{t}")).collect();
        let preds: Vec<String> = self.preds.iter().map(Pred::sql).collect();
        format!(
            "select {sel} from {} where {}",
            from.join(","),
            preds.join(" and ")
        )
    }
}

impl Query {
    /// The same query with explicit joins: `t1 join t2 on (the conjuncts
    /// over them) join t3 on ...` (`cross join` where none applies yet),
    /// the constant filters in WHERE.
    fn explicit_sql(&self) -> String {
        let mut sql = format!("t{}", self.from[0]);
        let mut placed = vec![false; self.preds.len()];
        for (n, t) in self.from.iter().enumerate().skip(1) {
            let joined = &self.from[..=n];
            let mut on = Vec::new();
            for (i, p) in self.preds.iter().enumerate() {
                let ts = p.tables();
                if !placed[i] && ts.len() > 1 && ts.iter().all(|t| joined.contains(t)) {
                    placed[i] = true;
                    on.push(p.sql());
                }
            }
            if on.is_empty() {
                sql = format!("{sql} cross join t{t}");
            } else {
                sql = format!("{sql} join t{t} on {}", on.join(" and "));
            }
        }
        let rest: Vec<String> = self
            .preds
            .iter()
            .enumerate()
            .filter(|(i, _)| !placed[*i])
            .map(|(_, p)| p.sql())
            .collect();
        let sel = if self.select.is_empty() {
            "count(*)".to_string()
        } else {
            let xs: Vec<String> = self.select.iter().map(|t| format!("x{t}")).collect();
            xs.join(",")
        };
        format!("select {sel} from {sql} where {}", rest.join(" and "))
    }
}

#[derive(Clone, Copy)]
enum Shape {
    Chain,
    Star,
    Tree,
}

/// A connected set of join conjuncts over `tabs`: a spanning tree of
/// `shape`, then `cycles` extra edges (all but the third implied by two
/// equalities already there: `p.x = q.y and q.y = r.z` give `p.x = r.z`).
fn join_preds(rng: &mut Rng, tabs: &[usize], shape: Shape, cycles: usize) -> Vec<Pred> {
    let mut preds = Vec::new();
    for k in 1..tabs.len() {
        let p = match shape {
            Shape::Chain => tabs[k - 1],
            Shape::Star if k % 3 != 0 => tabs[0],
            Shape::Star => tabs[k - 1],
            Shape::Tree => tabs[rng.below(k)],
        };
        preds.push(Pred::Join(p, rng.below(2), tabs[k], rng.below(2)));
    }
    for k in 0..cycles {
        let mut implied = None;
        if k != 2 {
            let ends: Vec<((usize, usize), (usize, usize))> = preds
                .iter()
                .flat_map(|p| match p {
                    Pred::Join(a, ca, b, cb) => {
                        vec![((*a, *ca), (*b, *cb)), ((*b, *cb), (*a, *ca))]
                    }
                    _ => vec![],
                })
                .collect();
            let opts: Vec<(usize, usize, usize, usize)> = ends
                .iter()
                .flat_map(|(x, y)| {
                    ends.iter()
                        .filter(move |(y2, z)| y2 == y && z.0 != x.0)
                        .map(move |(_, z)| (x.0, x.1, z.0, z.1))
                })
                .collect();
            if !opts.is_empty() {
                let (a, ca, b, cb) = opts[rng.below(opts.len())];
                implied = Some(Pred::Join(a, ca, b, cb));
            }
        }
        preds.push(implied.unwrap_or_else(|| {
            let a = tabs[rng.below(tabs.len())];
            let mut b = tabs[rng.below(tabs.len())];
            if b == a {
                b = tabs[(tabs.iter().position(|&t| t == a).unwrap_or(0) + 1) % tabs.len()];
            }
            Pred::Join(a, rng.below(2), b, rng.below(2))
        }));
    }
    preds
}

/// A constant filter on one of `tabs`; the first of a query may be an
/// equality, the others keep more rows.
fn filter(rng: &mut Rng, tabs: &[usize], first: bool) -> Pred {
    let t = tabs[rng.below(tabs.len())];
    let col = rng.below(2);
    match if first {
        rng.below(3)
    } else {
        1 + rng.below(2)
    } {
        0 => Pred::Eq(t, col, 1 + rng.below(10) as i64),
        1 => {
            let mut vs: Vec<i64> = (1..=10).collect();
            rng.shuffle(&mut vs);
            vs.truncate(5);
            Pred::In(t, col, vs)
        }
        _ => Pred::Lt(t, col, 6 + rng.below(5) as i64),
    }
}

/// A query over `components` connected groups of `sizes` tables each.
fn generate(
    rng: &mut Rng,
    sizes: &[usize],
    shape: Shape,
    cycles: usize,
    filters: usize,
    count: bool,
) -> Query {
    let mut all: Vec<usize> = (1..=TABLES).collect();
    rng.shuffle(&mut all);
    let mut preds = Vec::new();
    let mut used = Vec::new();
    for &n in sizes {
        let tabs: Vec<usize> = all.drain(..n).collect();
        preds.extend(join_preds(rng, &tabs, shape, cycles));
        for k in 0..filters {
            preds.push(filter(rng, &tabs, k == 0));
        }
        used.extend(tabs);
    }
    rng.shuffle(&mut preds);
    let mut from = used.clone();
    rng.shuffle(&mut from);
    let select = if count {
        vec![]
    } else {
        let mut s = used.clone();
        rng.shuffle(&mut s);
        s.truncate(4);
        s
    };
    Query {
        from,
        preds,
        select,
        components: sizes.len(),
    }
}

/// The query's answer by brute force: tables bound one at a time in an
/// order that follows the join graph (breadth first from each component's
/// most filtered table), every conjunct checked as soon as its tables are
/// bound. Rows rendered as heapdb's output is, sorted.
fn naive(q: &Query) -> Vec<String> {
    let mut order: Vec<usize> = Vec::new();
    let mut left: Vec<usize> = q.from.clone();
    left.sort_unstable();
    while !left.is_empty() {
        let filtered = |t: usize| q.preds.iter().filter(|p| p.tables() == vec![t]).count();
        let start = *left
            .iter()
            .max_by_key(|&&t| (filtered(t), std::cmp::Reverse(t)))
            .expect("a table left");
        let mut queue = std::collections::VecDeque::from([start]);
        left.retain(|&t| t != start);
        while let Some(t) = queue.pop_front() {
            order.push(t);
            for p in &q.preds {
                let ts = p.tables();
                if ts.contains(&t) {
                    for u in ts {
                        if let Some(i) = left.iter().position(|&x| x == u) {
                            left.remove(i);
                            queue.push_back(u);
                        }
                    }
                }
            }
        }
    }
    // The conjuncts to check once the table at each depth is bound.
    let depth_of = |t: usize| order.iter().position(|&x| x == t).expect("bound");
    let mut checks: Vec<Vec<&Pred>> = vec![Vec::new(); order.len()];
    for p in &q.preds {
        let d = p.tables().into_iter().map(depth_of).max().expect("a table");
        checks[d].push(p);
    }
    let mut row = vec![0i64; TABLES + 1];
    let mut out = Vec::new();
    let mut count = 0u64;
    fn walk(
        d: usize,
        order: &[usize],
        checks: &[Vec<&Pred>],
        row: &mut [i64],
        found: &mut dyn FnMut(&[i64]),
    ) {
        if d == order.len() {
            found(row);
            return;
        }
        for g in 1..=10 {
            row[order[d]] = g;
            if checks[d].iter().all(|p| p.holds(row)) {
                walk(d + 1, order, checks, row, found);
            }
        }
    }
    walk(0, &order, &checks, &mut row, &mut |r| {
        count += 1;
        if !q.select.is_empty() {
            let xs: Vec<String> = q.select.iter().map(|&t| format!("t{t}-{}", r[t])).collect();
            out.push(xs.join(" "));
        }
    });
    if q.select.is_empty() {
        return vec![count.to_string()];
    }
    out.sort();
    out
}

/// heapdb's answer, rendered as [`naive`] renders it.
fn answer(s: &mut Session, sql: &str) -> Vec<String> {
    let mut rows: Vec<String> = common::texts(s, sql)
        .into_iter()
        .map(|row| row.join(" "))
        .collect();
    rows.sort();
    rows
}

fn load(s: &mut Session) {
    for t in 1..=TABLES {
        common::run(
            s,
            &format!("create table t{t} (a{t} int, b{t} int, x{t} text)"),
        );
        let rows: Vec<String> = (1..=10)
            .map(|g| format!("({}, {}, 't{t}-{g}')", value(t, 0, g), value(t, 1, g)))
            .collect();
        common::run(s, &format!("insert into t{t} values {}", rows.join(",")));
    }
}

/// Checks one query's answer and its plan's cross products; returns
/// whether the answer has rows (a count above zero).
fn check(s: &mut Session, q: &Query) -> bool {
    let sql = q.sql();
    let want = naive(q);
    let rows = !want.is_empty() && want != ["0"];
    let got = answer(s, &sql);
    assert_eq!(got, want, "{sql}");
    let plan = common::lines(s, &format!("explain (costs off) {sql}"));
    let loops = plan.iter().filter(|l| l.contains("Nested Loop")).count();
    assert_eq!(
        loops,
        q.components - 1,
        "{sql}: one cross product per extra component\n{}",
        plan.join("\n")
    );
    rows
}

/// The generated workload: `(sizes of the components, shape, extra cycle
/// edges per component, filters per component, count(*) only)`.
fn workload() -> Vec<(Vec<usize>, Shape, usize, usize, bool)> {
    vec![
        (vec![8], Shape::Chain, 0, 1, false),
        (vec![11], Shape::Tree, 2, 1, false),
        (vec![20], Shape::Chain, 0, 1, false),
        (vec![20], Shape::Star, 1, 2, false),
        (vec![24], Shape::Tree, 2, 1, false),
        (vec![32], Shape::Tree, 3, 2, false),
        (vec![40], Shape::Chain, 0, 0, true),
        (vec![48], Shape::Star, 2, 1, false),
        (vec![64], Shape::Tree, 4, 2, false),
        (vec![64], Shape::Chain, 2, 0, true),
        (vec![10, 10], Shape::Chain, 0, 1, false),
        (vec![12, 9, 5], Shape::Tree, 1, 1, false),
        (vec![30, 30], Shape::Tree, 1, 1, true),
    ]
}

#[test]
fn many_table_joins_match_a_naive_evaluation_analyzed_or_not() {
    let (_d, db) = common::open(1024);
    let mut s = db.session();
    load(&mut s);
    let mut rng = Rng(0x5e1ec75);
    let queries: Vec<Query> = workload()
        .into_iter()
        .map(|(sizes, shape, cycles, filters, count)| {
            generate(&mut rng, &sizes, shape, cycles, filters, count)
        })
        .collect();
    // Without statistics (default estimates), then with them.
    let answered = queries.iter().filter(|q| check(&mut s, q)).count();
    assert!(
        answered * 3 >= queries.len() * 2,
        "the workload should mostly have rows: {answered} of {}",
        queries.len()
    );
    common::run(&mut s, "analyze");
    for q in &queries {
        check(&mut s, q);
    }
}

#[test]
fn every_search_setting_gives_the_same_answers() {
    let (_d, db) = common::open(1024);
    let mut s = db.session();
    load(&mut s);
    common::run(&mut s, "analyze");
    let mut rng = Rng(0xa11);
    let queries: Vec<Query> = [
        (vec![3], Shape::Chain, 0, 1),
        (vec![6], Shape::Star, 1, 1),
        (vec![9], Shape::Tree, 2, 1),
        (vec![13], Shape::Tree, 2, 2),
        (vec![7, 4], Shape::Chain, 1, 1),
    ]
    .into_iter()
    .map(|(sizes, shape, cycles, filters)| {
        generate(&mut rng, &sizes, shape, cycles, filters, false)
    })
    .collect();
    let settings = [
        "reset all",
        // Greedy for everything.
        "set geqo_threshold = 2",
        // Exhaustive search up to the planner's own cap.
        "set geqo = off; set geqo_threshold = 100",
        "set join_collapse_limit = 1",
        "set from_collapse_limit = 1",
    ];
    for set in settings {
        common::run(&mut s, "reset all");
        common::run(&mut s, set);
        let answered = queries.iter().filter(|q| check(&mut s, q)).count();
        assert!(answered >= 3, "{set}: {answered} answers with rows");
        // Written as explicit joins: flattened into one search while
        // join_collapse_limit allows (then never a cross product), in
        // the written order otherwise.
        for q in &queries {
            let sql = q.explicit_sql();
            assert_eq!(answer(&mut s, &sql), naive(q), "{set}: {sql}");
            let plan = common::lines(&mut s, &format!("explain (costs off) {sql}"));
            let loops = plan.iter().filter(|l| l.contains("Nested Loop")).count();
            let flat = q.from.len() <= 8 && !set.contains("join_collapse_limit");
            if flat {
                assert_eq!(loops, q.components - 1, "{set}: {sql}\n{}", plan.join("\n"));
            }
        }
    }
}
