//! The keyed workloads: access by primary key and index builds, heapdb
//! against PostgreSQL (the systems that speak its SQL; SQLite and DuckDB
//! show `—`).
//!
//! Data (scale 1): `a`, 1,000,000 accounts (the `pgbench_accounts` rows of
//! [`gen::account_row`]) with `aid` as its primary key (`a_pkey`; fill
//! factor 100 unless `BENCH_ACCOUNTS_FILLFACTOR` says), and `k3`,
//! 1,000,000 rows of `t(a, b, c, d int4)` with spread values.
//!
//! Workloads:
//! - `point_select_piped`: 20,000 `select abalance from a where aid = K;`
//!   (random keys) piped into a fresh client: the whole process's wall time,
//!   as a user running `psql < script` sees it (connection or shell start
//!   included).
//! - `create_index_3col`: `CREATE INDEX k3_bcd ON k3 (b, c, d)`, dropped
//!   (untimed, then CHECKPOINT) before every run.
//! - `update_by_key_piped`: 20,000 pgbench-style
//!   `update a set abalance = abalance + D where aid = K;` piped into a fresh
//!   client with `synchronous_commit = off` on both systems.
//! - `index_only_count`: `select count(*) from a where aid between LO and
//!   HI` over 10% of the keys, after VACUUM (an index-only scan that reads
//!   no heap page).
//!
//! Honesty checks, each of which fails the system's cell: before measuring,
//! EXPLAIN on each system must show the intended plan (an index scan of
//! `a_pkey` for the lookups and updates, the latter through EXPLAIN of the
//! same WHERE clause's SELECT where EXPLAIN UPDATE is not supported; `Index Only Scan` with `Heap
//! Fetches: 0` for the count; the new index used by a query on `k3` after
//! the build). Every piped lookup run must print exactly one row per
//! statement whose sum and count of non-zero balances are the values the
//! generator gives those keys; every update run must move `sum(abalance)`
//! and a key-weighted sum by exactly what the script adds; the counts must
//! equal `HI - LO + 1`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::gen::{self, Rng};
use crate::report::{Cell, Row};
use crate::runner::{
    budget_note, may_start_round, run_scenario, settle_writeback, Ctx, Scenario, Step,
};
use crate::systems::System;

/// The keyed workloads, in table order.
pub const WORKLOADS: [&str; 4] = [
    "point_select_piped",
    "create_index_3col",
    "update_by_key_piped",
    "index_only_count",
];

/// Rows of `a` and `k3`, and statements per piped script, at `scale`.
pub fn sizes(scale: f64) -> (i64, usize) {
    let rows = ((1_000_000.0 * scale) as i64).max(10_000);
    let statements = ((20_000.0 * scale) as usize).max(2_000);
    (rows, statements)
}

/// The generated inputs of the keyed workloads.
pub struct KeyedFiles {
    /// `a` as tab-separated text.
    pub a: PathBuf,
    /// `k3` as tab-separated text.
    pub k3: PathBuf,
    /// Rows in each.
    pub rows: i64,
    /// The lookup script and its keys.
    pub lookups: (Vec<u8>, Vec<i64>),
    /// The update script, and what it adds to `sum(abalance)` and to
    /// `sum(abalance * (aid % 7 + 1))`.
    pub updates: (Vec<u8>, i64, i64),
}

/// Writes the two tables' files into `dir` and builds the scripts.
pub fn make_files(dir: &Path, scale: f64) -> std::io::Result<KeyedFiles> {
    let (rows, statements) = sizes(scale);
    let f = KeyedFiles {
        a: dir.join("keyed_a.tsv"),
        k3: dir.join("keyed_k3.tsv"),
        rows,
        lookups: lookup_script(rows, statements, 11),
        updates: update_script(rows, statements, 12),
    };
    gen::write_rows(&f.a, rows, 2, gen::account_row)?;
    gen::write_rows(&f.k3, rows, 13, gen::t_row)?;
    Ok(f)
}

/// `statements` point lookups of random keys of `1..=rows`.
pub fn lookup_script(rows: i64, statements: usize, seed: u64) -> (Vec<u8>, Vec<i64>) {
    let mut rng = Rng::new(seed);
    let keys: Vec<i64> = (0..statements)
        .map(|_| rng.below(rows as u64) as i64 + 1)
        .collect();
    let mut s = String::with_capacity(statements * 48);
    for k in &keys {
        s.push_str(&format!("select abalance from a where aid = {k};\n"));
    }
    (s.into_bytes(), keys)
}

/// `statements` pgbench-style updates (delta -5000..=5000 on a random key),
/// with the script's effect on the two checksums of [`table_sums`].
pub fn update_script(rows: i64, statements: usize, seed: u64) -> (Vec<u8>, i64, i64) {
    let mut rng = Rng::new(seed);
    let (mut sum, mut weighted) = (0i64, 0i64);
    let mut s = String::with_capacity(statements * 64);
    for _ in 0..statements {
        let k = rng.below(rows as u64) as i64 + 1;
        let d = rng.below(10_001) as i64 - 5000;
        sum += d;
        weighted += d * (k % 7 + 1);
        s.push_str(&format!(
            "update a set abalance = abalance + {d} where aid = {k};\n"
        ));
    }
    (s.into_bytes(), sum, weighted)
}

/// What the lookups must print: the sum of the balances and how many are
/// non-zero.
pub fn lookup_expect(keys: &[i64]) -> (i64, usize) {
    let b: Vec<i64> = keys.iter().map(|&k| gen::account_balance(k)).collect();
    (b.iter().sum(), b.iter().filter(|&&x| x != 0).count())
}

/// Checks a lookup run's output rows against [`lookup_expect`].
pub fn check_lookups(rows: &[String], keys: &[i64]) -> Result<(), String> {
    if rows.len() != keys.len() {
        return Err(format!(
            "{} result rows for {} lookups",
            rows.len(),
            keys.len()
        ));
    }
    let mut got = (0i64, 0usize);
    for r in rows {
        let v: i64 = r
            .trim()
            .parse()
            .map_err(|_| format!("lookup printed {r:?}"))?;
        got.0 += v;
        got.1 += usize::from(v != 0);
    }
    let want = lookup_expect(keys);
    (got == want).then_some(()).ok_or(format!(
        "lookups gave (sum, non-zero) {got:?}, expected {want:?}"
    ))
}

/// Loads `a` and `k3` into every available system that speaks PostgreSQL's
/// SQL, all at once (untimed); a system that fails is marked unavailable.
pub fn load(ctx: &mut Ctx, files: &KeyedFiles) {
    std::thread::scope(|scope| {
        for sys in ctx.systems.iter_mut() {
            if sys.unavailable.is_none() && sys.kind.speaks_postgres() {
                scope.spawn(move || {
                    let start = Instant::now();
                    match load_one(sys, files) {
                        Ok(()) => eprintln!(
                            "bench: loaded a, k3 into {} in {:.1} s",
                            sys.kind,
                            start.elapsed().as_secs_f64()
                        ),
                        Err(e) => {
                            eprintln!("bench: {} unavailable: {e}", sys.kind);
                            sys.unavailable = Some(e);
                        }
                    }
                });
            }
        }
    });
}

fn load_one(sys: &System, files: &KeyedFiles) -> Result<(), String> {
    // `BENCH_ACCOUNTS_FILLFACTOR=N` loads the accounts with that fill
    // factor on every system (pgbench's `-F`); unset, pages are filled whole.
    let with = std::env::var("BENCH_ACCOUNTS_FILLFACTOR")
        .ok()
        .and_then(|v| v.parse::<u8>().ok())
        .map_or_else(String::new, |n| format!(" WITH (fillfactor = {n})"));
    let stmts = [
        "DROP TABLE IF EXISTS a;".to_string(),
        format!(
            "CREATE TABLE a (aid int primary key, bid int, abalance int, filler char(84)){with};"
        ),
        sys.copy_from("a", &files.a),
        "DROP TABLE IF EXISTS k3;".into(),
        "CREATE TABLE k3 (a int4 not null, b int4 not null, c int4 not null, d int4 not null);"
            .into(),
        sys.copy_from("k3", &files.k3),
        "VACUUM ANALYZE a;".into(),
        "VACUUM ANALYZE k3;".into(),
        "CHECKPOINT;".into(),
    ];
    let mut s = sys.open()?;
    for stmt in &stmts {
        s.run(stmt).map_err(|e| format!("loading ({stmt}): {e}"))?;
    }
    s.close();
    Ok(())
}

/// The systems the keyed workloads run on.
fn lanes(ctx: &Ctx) -> Vec<usize> {
    (0..ctx.systems.len())
        .filter(|&i| ctx.systems[i].unavailable.is_none() && ctx.systems[i].kind.speaks_postgres())
        .collect()
}

/// Runs `sql` in a new client of `sys` and returns its output lines.
fn query(sys: &System, sql: &str) -> Result<Vec<String>, String> {
    let mut s = sys.open()?;
    let rows = s.query(sql);
    s.close();
    rows
}

/// Runs EXPLAIN `sql` on `sys` and fails unless every one of `want`
/// appears in the plan's text.
fn check_plan(sys: &System, sql: &str, want: &[&str]) -> Result<(), String> {
    let plan = query(sys, sql)?.join("\n");
    match want.iter().find(|w| !plan.contains(*w)) {
        None => Ok(()),
        Some(w) => Err(format!("plan of {sql:?} lacks {w:?}:\n{plan}")),
    }
}

/// `sum(abalance)` and `sum(abalance * (aid % 7 + 1))` of `a`.
fn table_sums(sys: &System) -> Result<(i64, i64), String> {
    let rows = query(
        sys,
        "select sum(abalance), sum(abalance * (aid % 7 + 1)) from a;",
    )?;
    let line = rows.first().ok_or("no sums")?;
    let mut it = line.split('|').map(|v| v.trim().parse::<i64>());
    match (it.next(), it.next()) {
        (Some(Ok(s)), Some(Ok(w))) => Ok((s, w)),
        _ => Err(format!("sums printed {line:?}")),
    }
}

/// One piped run: a fresh client, `setting` then the script on its stdin,
/// timed from process start to exit. Returns the time, the peak RSS and the
/// output rows.
fn pipe_once(
    sys: &System,
    setting: &str,
    script: &[u8],
) -> Result<(Duration, Option<u64>, Vec<String>), String> {
    settle_writeback();
    let mut s = sys.open()?;
    s.run(setting)?;
    s.send_raw(script)?;
    let out = s.run("")?;
    let peak = s.peak_rss_kib();
    Ok((s.close(), peak, out.rows))
}

/// The two checksums of `a` ([`table_sums`]).
type Sums = (i64, i64);
/// Reads what a piped run's check compares with, untimed, before the run.
type Before<'a> = &'a dyn Fn(&System) -> Result<Sums, String>;
/// Judges a piped run: the system, its output rows, what `Before` read.
type Check<'a> = &'a dyn Fn(&System, &[String], Sums) -> Result<(), String>;

/// Runs a piped-script workload on every lane, rounds interleaved, with
/// `check` judging each run's output (and `before` run untimed first).
fn piped(
    ctx: &Ctx,
    name: &str,
    setting: &str,
    script: &[u8],
    before: Before,
    check: Check,
    plan: &dyn Fn(&System) -> Result<(), String>,
) -> Row {
    let lanes = lanes(ctx);
    let n = lanes.len();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); n];
    let mut rss: Vec<Option<u64>> = vec![None; n];
    let mut failed: Vec<Option<String>> =
        lanes.iter().map(|&i| plan(&ctx.systems[i]).err()).collect();
    let mut done = vec![0usize; n];
    let started = Instant::now();
    for round in 0..ctx.runs {
        let elapsed = started.elapsed();
        let go: Vec<bool> = (0..n)
            .map(|li| {
                let spent = samples[li].iter().sum();
                failed[li].is_none() && may_start_round(done[li], elapsed, spent, ctx.budget)
            })
            .collect();
        if !go.contains(&true) {
            break;
        }
        for k in 0..n {
            let li = (k + round) % n;
            if !go[li] {
                continue;
            }
            let sys = &ctx.systems[lanes[li]];
            let run = before(sys).and_then(|b| {
                let (t, r, rows) = pipe_once(sys, setting, script)?;
                check(sys, &rows, b).map(|_| (t, r))
            });
            match run {
                Ok((t, r)) => {
                    samples[li].push(t);
                    rss[li] = rss[li].max(r);
                }
                Err(e) => failed[li] = Some(e),
            }
            done[li] += 1;
        }
    }
    let mut row = Row {
        workload: name.into(),
        cells: Vec::new(),
        notes: Vec::new(),
    };
    for (i, sys) in ctx.systems.iter().enumerate() {
        let cell = match (lanes.iter().position(|&l| l == i), &sys.unavailable) {
            (_, Some(why)) => Cell::Unavailable(why.clone()),
            (None, None) => Cell::NotApplicable,
            (Some(li), None) => match &failed[li] {
                Some(e) => {
                    row.notes.push(format!("{} failed: {e}", sys.kind));
                    Cell::Failed(e.clone())
                }
                None => Cell::Measured {
                    samples: samples[li].clone(),
                    rss_kib: rss[li],
                },
            },
        };
        row.cells.push((sys.kind, cell));
    }
    let counts: Vec<(String, usize)> = (0..n)
        .filter(|&li| failed[li].is_none())
        .map(|li| (ctx.systems[lanes[li]].kind.to_string(), done[li]))
        .collect();
    row.notes.extend(budget_note(&counts, ctx.runs, ctx.budget));
    row
}

/// Fails the cell of each system for which `check` fails, with a note.
fn verify(ctx: &Ctx, row: &mut Row, check: &dyn Fn(&System) -> Result<(), String>) {
    for (kind, cell) in row.cells.iter_mut() {
        if !matches!(cell, Cell::Measured { .. }) {
            continue;
        }
        let Some(sys) = ctx.systems.iter().find(|s| s.kind == *kind) else {
            continue;
        };
        if let Err(e) = check(sys) {
            row.notes.push(format!("{kind} failed: {e}"));
            *cell = Cell::Failed(e);
        }
    }
}

/// The selected keyed workloads, in order (lookups before the updates change
/// the balances; the count after them and a VACUUM).
pub fn run(ctx: &mut Ctx, files: &KeyedFiles, wanted: &dyn Fn(&str) -> bool) -> Vec<Row> {
    let mut rows = Vec::new();
    let by_key = "Index Scan using a_pkey on a";
    if wanted("point_select_piped") {
        let (script, keys) = &files.lookups;
        let k = keys[0];
        let plan = |sys: &System| {
            check_plan(
                sys,
                &format!("explain select abalance from a where aid = {k};"),
                &[by_key],
            )
        };
        let check = |_: &System, out: &[String], _: (i64, i64)| check_lookups(out, keys);
        let no_sums = |_: &System| Ok((0, 0));
        rows.push(piped(
            ctx,
            "point_select_piped",
            "\\timing off",
            script,
            &no_sums,
            &check,
            &plan,
        ));
    }
    if wanted("create_index_3col") {
        rows.extend(create_index(ctx));
    }
    if wanted("update_by_key_piped") {
        let (script, sum, weighted) = &files.updates;
        // heapdb's EXPLAIN takes SELECTs only; its UPDATE finds the rows
        // through the plan of the same WHERE clause.
        let plan = |sys: &System| match check_plan(
            sys,
            "explain update a set abalance = abalance + 1 where aid = 1;",
            &[by_key],
        ) {
            Err(e) if e.contains("supported for SELECT statements only") => check_plan(
                sys,
                "explain select abalance from a where aid = 1;",
                &[by_key],
            ),
            other => other,
        };
        let check = |sys: &System, out: &[String], before: (i64, i64)| {
            if let Some(line) = out.first() {
                return Err(format!("the updates printed {line:?}"));
            }
            let after = table_sums(sys)?;
            let moved = (after.0 - before.0, after.1 - before.1);
            (moved == (*sum, *weighted)).then_some(()).ok_or(format!(
                "the updates moved the sums by {moved:?}, expected {:?}",
                (sum, weighted)
            ))
        };
        rows.push(piped(
            ctx,
            "update_by_key_piped",
            "\\timing off\nSET synchronous_commit = off;",
            script,
            &table_sums,
            &check,
            &plan,
        ));
    }
    if wanted("index_only_count") {
        rows.push(index_only_count(ctx, files.rows));
    }
    rows
}

/// `create_index_3col`, then a check that a query on `k3` uses the index.
fn create_index(ctx: &mut Ctx) -> Vec<Row> {
    let steps = |sys: &System| {
        if !sys.kind.speaks_postgres() {
            return Vec::new();
        }
        vec![Step::command(
            "create_index_3col",
            vec!["DROP INDEX IF EXISTS k3_bcd;".into(), "CHECKPOINT;".into()],
            "CREATE INDEX k3_bcd ON k3 (b, c, d);".into(),
        )]
    };
    let no_setup = |_: &System| Vec::new();
    let mut out = run_scenario(
        ctx,
        &Scenario {
            workloads: vec!["create_index_3col"],
            warmup: true,
            evict: None,
            setup: &no_setup,
            steps: &steps,
        },
    );
    // One b value in a thousand and c below a tenth of its range: about a
    // hundred rows at scale 1, which every planner reads through the index.
    let q = "select count(*), sum(d) from k3 where b = 7 and c < 100000;";
    let answers: Vec<(String, Vec<String>)> = ctx
        .systems
        .iter()
        .filter(|s| s.unavailable.is_none() && s.kind.speaks_postgres())
        .map(|s| (s.kind.to_string(), query(s, q).unwrap_or_default()))
        .collect();
    for row in &mut out {
        verify(ctx, row, &|sys| {
            check_plan(sys, &format!("explain {q}"), &["k3_bcd"])?;
            let mine = &answers
                .iter()
                .find(|(k, _)| *k == sys.kind.to_string())
                .ok_or("no answer")?
                .1;
            match answers.iter().find(|(_, a)| a != mine) {
                None if !mine.is_empty() => Ok(()),
                None => Err(format!("no result for {q:?}")),
                Some((k, a)) => Err(format!("{q:?} gave {mine:?}, {k} gave {a:?}")),
            }
        });
    }
    out
}

/// `index_only_count`: VACUUM `a` (untimed), check the plan, then count
/// 10% of the keys through the primary key.
fn index_only_count(ctx: &mut Ctx, rows: i64) -> Row {
    let (lo, hi) = (rows * 4 / 10 + 1, rows / 2);
    let q = format!("select count(*) from a where aid between {lo} and {hi};");
    for &i in &lanes(ctx) {
        if let Err(e) = query(&ctx.systems[i], "VACUUM a;") {
            eprintln!("bench: {}: VACUUM a: {e}", ctx.systems[i].kind);
        }
    }
    let steps = |sys: &System| {
        if !sys.kind.speaks_postgres() {
            return Vec::new();
        }
        vec![Step::query("index_only_count", &q)]
    };
    let no_setup = |_: &System| Vec::new();
    let mut out = run_scenario(
        ctx,
        &Scenario {
            workloads: vec!["index_only_count"],
            warmup: true,
            evict: None,
            setup: &no_setup,
            steps: &steps,
        },
    );
    let want = (hi - lo + 1).to_string();
    for row in &mut out {
        verify(ctx, row, &|sys| {
            check_plan(
                sys,
                &format!("explain (analyze, costs off, timing off) {q}"),
                &["Index Only Scan using a_pkey on a", "Heap Fetches: 0"],
            )?;
            let got = query(sys, &q)?;
            (got.first().map(|s| s.trim()) == Some(want.as_str()))
                .then_some(())
                .ok_or(format!("{q:?} gave {got:?}, expected {want}"))
        });
    }
    out.pop().unwrap_or(Row {
        workload: "index_only_count".into(),
        cells: Vec::new(),
        notes: vec!["no result".into()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_and_their_checks() {
        let (script, keys) = lookup_script(1000, 50, 1);
        let text = String::from_utf8(script).unwrap();
        assert_eq!(text.lines().count(), 50);
        assert!(text.starts_with(&format!("select abalance from a where aid = {};", keys[0])));
        assert!(keys.iter().all(|&k| (1..=1000).contains(&k)));
        let rows: Vec<String> = keys
            .iter()
            .map(|&k| gen::account_balance(k).to_string())
            .collect();
        assert_eq!(check_lookups(&rows, &keys), Ok(()));
        let mut wrong = rows.clone();
        wrong[0] = (gen::account_balance(keys[0]) + 1).to_string();
        assert!(check_lookups(&wrong, &keys).is_err());
        assert!(check_lookups(&rows[1..], &keys).is_err());
        let (script, sum, weighted) = update_script(1000, 20, 2);
        let text = String::from_utf8(script).unwrap();
        let (mut s, mut w) = (0, 0);
        for line in text.lines() {
            let d: i64 = line
                .split(" + ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let k: i64 = line
                .split("aid = ")
                .nth(1)
                .unwrap()
                .trim_end_matches(';')
                .parse()
                .unwrap();
            s += d;
            w += d * (k % 7 + 1);
        }
        assert_eq!((s, w), (sum, weighted));
    }
}
