//! The bench's workloads and the data they run on.
//!
//! Data sets (scale 1): `t(a, b, c, d int4)` with 20,000,000 rows;
//! `pgbench_accounts` with 5,000,000 rows and `pgbench_branches` with one
//! row per 100,000 accounts (50), as pgbench scales them; the same accounts
//! again as `pgbench_accounts_shuffled`, loaded in a random order;
//! the 100,000-statement INSERT script into the 23-column `fehistory_1`.
//! Files are generated once into the work directory and loaded into every
//! system by its bulk loader (COPY, `.import`), so all hold the same values.
//!
//! Workloads and what they show:
//! - `count_star`: `count(*)` over a vacuumed, cached table (visibility-map
//!   counts for heapdb; a full scan elsewhere).
//! - `sum_group`, `hash_join`, `filter_scan`, `sum_aid`, `filter_scan_sum`:
//!   heap scan speed with per-tuple work: aggregation, a join, a qualifier
//!   (counted, or summed), a bare `sum(aid)`. Each runs twice: on the
//!   accounts loaded in `bid` order, as pgbench loads them (which flatters a
//!   grouping that meets each group in one run), and on the shuffled copy
//!   (`..._shuffled`), where no system gets help from the order.
//!   `min_max` and `min_max_range` (min/max of whole columns, and under a
//!   range of `aid`) are the reads heapdb's page summaries answer.
//! - `insert_script_sync_on/off`: per-statement overhead of a piped script
//!   of autocommitted single-row INSERTs, in a fresh process.
//! - `copy_in`, `copy_out`: bulk load and unload.
//! - `vacuum_fresh` (after load: hint bits to set), `vacuum_clean` (nothing
//!   to do), `vacuum_dirty` (one dead tuple per page), each after CHECKPOINT.
//! - `analyze_cold_prefetch/no_prefetch`: ANALYZE's block sampling from a
//!   cold OS cache, with and without read-ahead (`maintenance_io_concurrency`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::gen;
use crate::report::{Cell, Row};
use crate::runner::{
    budget_note, may_start_round, run_scenario, settle_writeback, Ctx, Scenario, Step,
};
use crate::session::Dialect;
use crate::systems::{Kind, System};

/// `maintenance_io_concurrency` for the prefetching ANALYZE (PostgreSQL's default).
pub const PREFETCH_DEPTH: u32 = 10;
/// Tuples of `pgbench_accounts` per 8 kB page in PostgreSQL's layout: deleting
/// `aid % 60 = 1` leaves one dead tuple on every page.
pub const ACCOUNTS_PER_PAGE: i64 = 60;

/// The generated input files and their sizes.
pub struct Files {
    /// `t` as tab-separated text.
    pub t: PathBuf,
    /// `pgbench_accounts` as tab-separated text.
    pub accounts: PathBuf,
    /// The same accounts in a shuffled order.
    pub accounts_shuffled: PathBuf,
    /// `pgbench_branches` as tab-separated text.
    pub branches: PathBuf,
    /// The INSERT script.
    pub script: PathBuf,
    /// Statements in the INSERT script.
    pub script_rows: u64,
    /// Directory for files the systems write (COPY TO).
    pub out_dir: PathBuf,
}

/// Row counts at `scale` (at least a few so tiny scales still run).
pub fn sizes(scale: f64) -> (i64, i64, u64) {
    let t = ((20_000_000.0 * scale) as i64).max(1000);
    let acc = ((5_000_000.0 * scale) as i64).max(1000);
    let script = ((100_000.0 * scale) as u64).max(100);
    (t, acc, script)
}

/// DDL shared by every system.
pub const T_DDL: &str =
    "CREATE TABLE t (a int4 not null, b int4 not null, c int4 not null, d int4 not null);";
/// `pgbench_accounts` as pgbench creates it (without the primary key).
pub fn accounts_ddl(name: &str) -> String {
    format!("CREATE TABLE {name} (aid int not null, bid int, abalance int, filler char(84));")
}
/// `pgbench_branches` as pgbench creates it (without the primary key).
pub const BRANCHES_DDL: &str =
    "CREATE TABLE pgbench_branches (bid int not null, bbalance int, filler char(88));";

/// Which tables the selected workloads read.
pub struct Needs {
    /// `t`.
    pub t: bool,
    /// `pgbench_accounts` (and `pgbench_branches`).
    pub accounts: bool,
    /// `pgbench_accounts_shuffled` (and `pgbench_branches`).
    pub shuffled: bool,
    /// The accounts file (COPY IN, ring sweep) even if the table is not loaded.
    pub accounts_file: bool,
    /// The INSERT script.
    pub script: bool,
}

/// Writes the files the selected workloads need into `dir`.
pub fn make_files(dir: &Path, scale: f64, needs: &Needs) -> std::io::Result<Files> {
    let (t_rows, account_rows, script_rows) = sizes(scale);
    let f = Files {
        t: dir.join("t.tsv"),
        accounts: dir.join("accounts.tsv"),
        accounts_shuffled: dir.join("accounts_shuffled.tsv"),
        branches: dir.join("branches.tsv"),
        script: dir.join("insert_script.sql"),
        script_rows,
        out_dir: dir.join("out"),
    };
    std::fs::create_dir_all(&f.out_dir)?;
    if needs.t {
        gen::write_rows(&f.t, t_rows, 1, gen::t_row)?;
    }
    if needs.accounts || needs.accounts_file || needs.shuffled {
        gen::write_rows(&f.accounts, account_rows, 2, gen::account_row)?;
        let branches = gen::branches_for(account_rows);
        gen::write_rows(&f.branches, branches, 3, |out, bid, _| {
            gen::branch_row(out, bid)
        })?;
    }
    if needs.shuffled {
        gen::write_accounts_shuffled(&f.accounts_shuffled, account_rows, 6)?;
    }
    if needs.script {
        gen::write_insert_script(&f.script, script_rows)?;
    }
    Ok(f)
}

/// Loads the tables into every available system, all systems at once (the
/// load is untimed setup, and each loader mostly uses one core); a system
/// that fails is marked unavailable with the error (its cells read `n/a`).
pub fn load(ctx: &mut Ctx, files: &Files, needs: &Needs) {
    std::thread::scope(|scope| {
        for sys in ctx.systems.iter_mut() {
            if sys.unavailable.is_none() {
                scope.spawn(move || load_one(sys, files, needs));
            }
        }
    });
}

fn load_one(sys: &mut System, files: &Files, needs: &Needs) {
    let start = Instant::now();
    let mut stmts: Vec<String> = Vec::new();
    let mut tables: Vec<&str> = Vec::new();
    if sys.kind == Kind::Sqlite {
        // Untimed bulk load: no journal, no syncs (a DBA's import settings).
        stmts.push("PRAGMA journal_mode = OFF;".into());
        stmts.push("PRAGMA synchronous = OFF;".into());
    }
    if needs.t {
        stmts.push("DROP TABLE IF EXISTS t;".into());
        stmts.push(T_DDL.into());
        stmts.push(sys.copy_from("t", &files.t));
        tables.push("t");
    }
    if needs.accounts {
        stmts.push("DROP TABLE IF EXISTS pgbench_accounts;".into());
        stmts.push(accounts_ddl("pgbench_accounts"));
        stmts.push(sys.copy_from("pgbench_accounts", &files.accounts));
        tables.push("pgbench_accounts");
    }
    if needs.shuffled {
        let name = "pgbench_accounts_shuffled";
        stmts.push(format!("DROP TABLE IF EXISTS {name};"));
        stmts.push(accounts_ddl(name));
        stmts.push(sys.copy_from(name, &files.accounts_shuffled));
        tables.push(name);
    }
    if needs.accounts || needs.shuffled {
        stmts.push("DROP TABLE IF EXISTS pgbench_branches;".into());
        stmts.push(BRANCHES_DDL.into());
        stmts.push(sys.copy_from("pgbench_branches", &files.branches));
        tables.push("pgbench_branches");
    }
    if tables.is_empty() {
        return;
    }
    let settle = sys.after_load(&tables);
    let kind = sys.kind;
    let result = sys.open().and_then(|mut s| {
        for stmt in &stmts {
            s.run(stmt).map_err(|e| format!("loading ({stmt}): {e}"))?;
        }
        // VACUUM / ANALYZE after the load only settle hint bits and
        // statistics: a system that lacks one is measured without it.
        for stmt in &settle {
            match s.run(stmt) {
                Ok(_) => {}
                Err(e) if e.contains("not supported") => {
                    eprintln!("bench: {kind}: going on without `{stmt}`: {e}")
                }
                Err(e) => return Err(format!("loading ({stmt}): {e}")),
            }
        }
        s.close();
        Ok(())
    });
    match result {
        Ok(()) => eprintln!(
            "bench: loaded {} into {} in {:.1} s",
            tables.join(", "),
            sys.kind,
            start.elapsed().as_secs_f64()
        ),
        Err(e) => {
            eprintln!("bench: {} unavailable: {e}", sys.kind);
            sys.unavailable = Some(e);
        }
    }
}

fn no_setup(_: &System) -> Vec<String> {
    Vec::new()
}

/// `count_star` on `t`.
///
/// `count_star_qual` counts the same rows through a qualifier every row
/// passes (`b` is 0..999), which no visibility-map shortcut can answer: the
/// scan must read each tuple's line pointer, header and column.
/// `count_star_half` counts the half of them with `b >= 500`: a page's
/// summary neither skips nor takes it whole (its `b` spans 0..999), so
/// every page's `b` values are read (PostgreSQL's performance threads
/// measured this form too).
pub fn count_star(ctx: &mut Ctx, wanted: &dyn Fn(&str) -> bool) -> Vec<Row> {
    let all = [
        ("count_star", "select count(*) from t;"),
        ("count_star_qual", "select count(*) from t where b >= 0;"),
        ("count_star_half", "select count(*) from t where b >= 500;"),
    ];
    let chosen: Vec<(&'static str, &'static str)> =
        all.into_iter().filter(|(w, _)| wanted(w)).collect();
    let steps = |_: &System| chosen.iter().map(|(w, q)| Step::query(w, q)).collect();
    run_scenario(
        ctx,
        &Scenario {
            workloads: chosen.iter().map(|(w, _)| *w).collect(),
            warmup: true,
            evict: None,
            setup: &no_setup,
            steps: &steps,
        },
    )
}

/// The account reads: (workload on the ordered table, its twin on the
/// shuffled copy, query on `pgbench_accounts`).
pub const ACCOUNT_READS: &[(&str, &str, &str)] = &[
    (
        "sum_group",
        "sum_group_shuffled",
        "select bid, sum(abalance) from pgbench_accounts group by bid;",
    ),
    (
        "hash_join",
        "hash_join_shuffled",
        "select b.bid, count(*) from pgbench_accounts a, pgbench_branches b where a.bid = b.bid group by b.bid;",
    ),
    (
        "filter_scan",
        "filter_scan_shuffled",
        "select count(*) from pgbench_accounts where abalance <> 0 or aid % 1000 = 7;",
    ),
    (
        "sum_aid",
        "sum_aid_shuffled",
        "select sum(aid) from pgbench_accounts;",
    ),
    (
        "filter_scan_sum",
        "filter_scan_sum_shuffled",
        "select sum(aid) from pgbench_accounts where abalance <> 0 or aid % 1000 = 7;",
    ),
    (
        "min_max",
        "min_max_shuffled",
        "select min(aid), max(aid), min(abalance), max(abalance) from pgbench_accounts;",
    ),
    (
        "min_max_range",
        "min_max_range_shuffled",
        "select min(abalance), max(abalance), max(bid) from pgbench_accounts where aid between 100000 and 600000;",
    ),
];

/// Whether `workload` is one of the account reads (either order).
pub fn is_account_read(workload: &str) -> bool {
    ACCOUNT_READS
        .iter()
        .any(|(o, s, _)| workload == *o || workload == *s)
}

/// The account reads on the ordered accounts, then on the shuffled copy.
pub fn account_reads(ctx: &mut Ctx, wanted: &dyn Fn(&str) -> bool) -> Vec<Row> {
    let ordered = ACCOUNT_READS.iter().map(|(w, _, q)| (*w, q.to_string()));
    let shuffled = ACCOUNT_READS.iter().map(|(_, w, q)| {
        (
            *w,
            q.replace("pgbench_accounts", "pgbench_accounts_shuffled"),
        )
    });
    let chosen: Vec<(&'static str, String)> =
        ordered.chain(shuffled).filter(|(w, _)| wanted(w)).collect();
    let steps = |_: &System| chosen.iter().map(|(w, q)| Step::query(w, q)).collect();
    run_scenario(
        ctx,
        &Scenario {
            workloads: chosen.iter().map(|(w, _)| *w).collect(),
            warmup: true,
            evict: None,
            setup: &no_setup,
            steps: &steps,
        },
    )
}

/// `copy_in`, then (when wanted) the three VACUUMs on the table just loaded.
/// Each round reloads the table. One untimed round runs first all the same:
/// every system's first load of the run was 1.5-2x its later ones (heapdb
/// 2.17 s against 0.72-0.93 s, PostgreSQL 7.3 s against 3.6-4.6 s, DuckDB
/// 1.55 s against 1.15 s), even with the write-back settled before it:
/// memory the VM touches for the first time is slow, and that is the
/// machine's warm-up, not the system's.
pub fn copy_in_and_vacuum(ctx: &mut Ctx, files: &Files, vacuums: bool) -> Vec<Row> {
    let steps = |sys: &System| {
        let ckpt: Vec<String> = sys.checkpoint().map(String::from).into_iter().collect();
        let mut prep = vec![
            "DROP TABLE IF EXISTS accounts_copy;".to_string(),
            accounts_ddl("accounts_copy"),
        ];
        prep.extend(ckpt.clone());
        let mut steps = vec![Step::command(
            "copy_in",
            prep,
            sys.copy_from("accounts_copy", &files.accounts),
        )];
        if vacuums && sys.kind.speaks_postgres() {
            let vacuum = "VACUUM accounts_copy;".to_string();
            steps.push(Step::command("vacuum_fresh", ckpt.clone(), vacuum.clone()));
            steps.push(Step::command("vacuum_clean", ckpt.clone(), vacuum.clone()));
            let mut dirty = vec![format!(
                "DELETE FROM accounts_copy WHERE aid % {ACCOUNTS_PER_PAGE} = 1;"
            )];
            dirty.extend(ckpt);
            steps.push(Step::command("vacuum_dirty", dirty, vacuum));
        }
        steps
    };
    let mut workloads = vec!["copy_in"];
    if vacuums {
        workloads.extend(["vacuum_fresh", "vacuum_clean", "vacuum_dirty"]);
    }
    run_scenario(
        ctx,
        &Scenario {
            workloads,
            warmup: true,
            evict: None,
            setup: &no_setup,
            steps: &steps,
        },
    )
}

/// `copy_out` of the accounts to a file per system.
pub fn copy_out(ctx: &mut Ctx, files: &Files) -> Vec<Row> {
    let steps = |sys: &System| {
        let path = files.out_dir.join(format!("accounts_out_{}.tsv", sys.kind));
        vec![Step::command(
            "copy_out",
            Vec::new(),
            sys.copy_to("pgbench_accounts", &path),
        )]
    };
    run_scenario(
        ctx,
        &Scenario {
            workloads: vec!["copy_out"],
            warmup: true,
            evict: None,
            setup: &no_setup,
            steps: &steps,
        },
    )
}

/// `analyze_cold_prefetch` and `analyze_cold_no_prefetch` (those `wanted`):
/// ANALYZE of the accounts after evicting them from every cache, PostgreSQL
/// and heapdb only. Both are steps of one scenario, each step cold (see
/// `Scenario::evict`), so every round measures the two back to back.
pub fn analyze_cold(ctx: &mut Ctx, wanted: &dyn Fn(&str) -> bool) -> Vec<Row> {
    let chosen: Vec<(&'static str, u32)> = [
        ("analyze_cold_prefetch", PREFETCH_DEPTH),
        ("analyze_cold_no_prefetch", 0),
    ]
    .into_iter()
    .filter(|(w, _)| wanted(w))
    .collect();
    let steps = |sys: &System| {
        if !sys.kind.speaks_postgres() {
            return Vec::new();
        }
        chosen
            .iter()
            .map(|&(name, depth)| {
                Step::command(
                    name,
                    vec![format!("SET maintenance_io_concurrency = {depth};")],
                    "ANALYZE pgbench_accounts;".into(),
                )
            })
            .collect()
    };
    run_scenario(
        ctx,
        &Scenario {
            workloads: chosen.iter().map(|(w, _)| *w).collect(),
            warmup: false,
            evict: Some("pgbench_accounts"),
            setup: &no_setup,
            steps: &steps,
        },
    )
}

/// `insert_script_sync_on` / `_off`: the INSERT script piped into a fresh
/// client of heapdb, PostgreSQL and sqlite3, timed from process start to
/// exit, `runs` times, systems interleaved. The table is recreated (untimed,
/// by another client) before every run. sqlite3 runs in WAL mode with
/// `synchronous = FULL` (on) or `NORMAL` (off: no sync per commit).
pub fn insert_script(ctx: &mut Ctx, files: &Files, sync: bool) -> Row {
    let name = if sync {
        "insert_script_sync_on"
    } else {
        "insert_script_sync_off"
    };
    let mut row = Row {
        workload: name.into(),
        cells: Vec::new(),
        notes: Vec::new(),
    };
    // A missing or short script would time an empty pipe and fail every
    // system on the row check: say what is wrong with the file instead.
    let script = match read_script(files) {
        Ok(s) => s,
        Err(e) => {
            row.notes.push(e.clone());
            for sys in &ctx.systems {
                row.cells.push((sys.kind, Cell::Failed(e.clone())));
            }
            return row;
        }
    };
    let lanes: Vec<usize> = (0..ctx.systems.len())
        .filter(|&i| ctx.systems[i].unavailable.is_none() && ctx.systems[i].kind != Kind::Duckdb)
        .collect();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); lanes.len()];
    let mut rss: Vec<Option<u64>> = vec![None; lanes.len()];
    let mut failed: Vec<Option<String>> = vec![None; lanes.len()];
    let mut done: Vec<usize> = vec![0; lanes.len()];
    let started = Instant::now();
    for round in 0..ctx.runs {
        let elapsed = started.elapsed();
        let go: Vec<bool> = (0..lanes.len())
            .map(|li| {
                let spent = samples[li].iter().sum();
                failed[li].is_none() && may_start_round(done[li], elapsed, spent, ctx.budget)
            })
            .collect();
        if !go.contains(&true) {
            break;
        }
        for k in 0..lanes.len() {
            let li = (k + round) % lanes.len();
            if !go[li] {
                continue;
            }
            let sys = &ctx.systems[lanes[li]];
            match insert_once(sys, &script, sync, files.script_rows) {
                Ok((t, r)) => {
                    samples[li].push(t);
                    rss[li] = rss[li].max(r);
                }
                Err(e) => failed[li] = Some(e),
            }
            done[li] += 1;
        }
    }
    for sys in &ctx.systems {
        let cell = match (
            lanes.iter().position(|&i| ctx.systems[i].kind == sys.kind),
            &sys.unavailable,
        ) {
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
    let counts: Vec<(String, usize)> = (0..lanes.len())
        .filter(|&li| failed[li].is_none())
        .map(|li| (ctx.systems[lanes[li]].kind.to_string(), done[li]))
        .collect();
    row.notes.extend(budget_note(&counts, ctx.runs, ctx.budget));
    row
}

/// The script's bytes, checked to hold `files.script_rows` statements.
fn read_script(files: &Files) -> Result<Vec<u8>, String> {
    let script = std::fs::read(&files.script)
        .map_err(|e| format!("cannot read the script {}: {e}", files.script.display()))?;
    let lines = script.iter().filter(|&&b| b == b'\n').count() as u64;
    if lines != files.script_rows {
        return Err(format!(
            "the script {} has {lines} statements, expected {}",
            files.script.display(),
            files.script_rows
        ));
    }
    Ok(script)
}

/// One run: recreate the table, pipe the script into a fresh client, check
/// the row count. Returns the client's lifetime and its peak RSS.
fn insert_once(
    sys: &System,
    script: &[u8],
    sync: bool,
    rows: u64,
) -> Result<(Duration, Option<u64>), String> {
    let mut prep = sys.open()?;
    prep.run("DROP TABLE IF EXISTS fehistory_1;")?;
    prep.run(&format!("{};", gen::fehistory_ddl()))?;
    if sys.kind == Kind::Sqlite {
        prep.run("PRAGMA journal_mode = WAL;")?;
    }
    if let Some(c) = sys.checkpoint() {
        prep.run(c)?;
    }
    prep.close();
    settle_writeback();
    let mut s = sys.open()?;
    let setting = match (sys.dialect(), sync) {
        (Dialect::Sqlite, true) => ".timer off\nPRAGMA synchronous = FULL;",
        (Dialect::Sqlite, false) => ".timer off\nPRAGMA synchronous = NORMAL;",
        (Dialect::Psql, true) => "\\timing off\nSET synchronous_commit = on;",
        (Dialect::Psql, false) => "\\timing off\nSET synchronous_commit = off;",
    };
    s.run(setting)?;
    s.send_raw(script)?;
    s.run("")?;
    let peak = s.peak_rss_kib();
    let elapsed = s.close();
    let mut check = sys.open()?;
    let count = check.query("select count(*) from fehistory_1;")?;
    check.close();
    if count.first().map(|c| c.trim()) != Some(rows.to_string().as_str()) {
        return Err(format!("fehistory_1 has {count:?} rows, expected {rows}"));
    }
    Ok((elapsed, peak))
}
