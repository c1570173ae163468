//! Running a scenario on every system, interleaved, and collecting cells.
//!
//! A [`Scenario`] is a list of timed [`Step`]s per system. The runner opens
//! one client per system (or one per run, for cold-cache workloads), runs an
//! optional warm-up round, then `runs` rounds; in each round every system
//! runs all its steps, and the order of the systems rotates from round to
//! round, so drift of the machine (other jobs, thermal state, the page
//! cache) hits every system alike.
//!
//! Before every timed statement (after its untimed preparation) the runner
//! calls `sync(2)`, untimed: the dirty page-cache data a system's earlier
//! writes left behind (its own or the previous system's COPY, the insert
//! scripts' logs) is written back then, not by the kernel's flusher during
//! the next system's timed statement, which otherwise pays for it (whoever
//! went first in a round after a write-heavy scenario paid most).
//!
//! A system whose client fails to start or whose step fails gets an
//! `error` cell with the message and is skipped for the rest of the
//! scenario; the others go on.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::evict::{evict_file, files_under, relation_files};
use crate::pg::PgCluster;
use crate::report::{Cell, Row};
use crate::session::Session;
use crate::systems::{Kind, Launcher, System};

/// What a run needs from the harness: the systems and the PostgreSQL cluster.
pub struct Ctx {
    /// All systems in column order, available or not.
    pub systems: Vec<System>,
    /// The throwaway cluster, when PostgreSQL (or heapdb's stand-in) is used.
    pub pg: Option<PgCluster>,
    /// Measured rounds.
    pub runs: usize,
    /// Time after which a workload starts no further round (at least one
    /// measured round always runs), so a slow machine cannot stretch a run
    /// without bound.
    pub budget: Duration,
}

/// The share of the budget a system's timed statements may take in all and
/// still go on past the budget: a system that fast (heapdb, on every
/// workload here) gets all `--runs` of its runs, which cost the run little,
/// while the slow peers stop at the budget.
pub const FAST_SHARE: u32 = 5;

/// Whether a system may start another measured round: always until it has
/// one, then while the workload is within the budget, or after that while
/// the system's timed statements so far (`spent`) took under
/// `budget / FAST_SHARE` in all, and never once the workload has run for
/// twice the budget (its untimed preparation is not in `spent`).
pub fn may_start_round(done: usize, elapsed: Duration, spent: Duration, budget: Duration) -> bool {
    done == 0 || elapsed < budget || (spent < budget / FAST_SHARE && elapsed < budget * 2)
}

/// The note for a workload some of whose systems stopped early: `done`
/// holds each system's name and its count of measured runs.
pub fn budget_note(done: &[(String, usize)], wanted: usize, budget: Duration) -> Option<String> {
    let short: Vec<String> = done
        .iter()
        .filter(|(_, n)| *n < wanted)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    (!short.is_empty()).then(|| {
        format!(
            "{} of {wanted} runs: stopped at the {} s time budget (--budget; a system whose timed runs took under {} s in all goes on to {wanted})",
            short.join(", "),
            budget.as_secs(),
            (budget / FAST_SHARE).as_secs_f64()
        )
    })
}

/// One timed statement of a scenario.
pub struct Step {
    /// The workload (table row) it reports under.
    pub workload: &'static str,
    /// Untimed statements run before it, every round.
    pub prep: Vec<String>,
    /// The timed statement.
    pub timed: String,
    /// Whether its result rows must match across systems.
    pub check_rows: bool,
}

impl Step {
    /// A timed query whose results are compared across systems.
    pub fn query(workload: &'static str, sql: &str) -> Step {
        Step {
            workload,
            prep: Vec::new(),
            timed: sql.to_string(),
            check_rows: true,
        }
    }

    /// A timed command preceded by untimed `prep`.
    pub fn command(workload: &'static str, prep: Vec<String>, sql: String) -> Step {
        Step {
            workload,
            prep,
            timed: sql,
            check_rows: false,
        }
    }
}

/// A group of workloads that share clients and data.
pub struct Scenario<'a> {
    /// The workloads it reports (rows of the table), in order.
    pub workloads: Vec<&'static str>,
    /// Whether one untimed round runs first (cached workloads, and reloads:
    /// see `copy_in_and_vacuum`).
    pub warmup: bool,
    /// Evict this table from every cache before each step of each round (a
    /// new client per step; PostgreSQL is restarted to empty
    /// shared_buffers). The steps of a round thus run back to back, each
    /// cold: variants compared this way (ANALYZE with and without
    /// prefetch) see the machine in the same state, which separate
    /// scenarios minutes apart did not.
    pub evict: Option<&'static str>,
    /// Statements run once each time a client is opened (settings).
    pub setup: &'a dyn Fn(&System) -> Vec<String>,
    /// The steps of a system; empty when the scenario does not apply to it.
    pub steps: &'a dyn Fn(&System) -> Vec<Step>,
}

/// Per-system state during a scenario.
struct Lane {
    /// Index into `ctx.systems`.
    sys: usize,
    /// Its steps.
    steps: Vec<Step>,
    /// The open client, when persistent.
    session: Option<Session>,
    /// Samples per workload (parallel to `steps`).
    samples: Vec<Vec<Duration>>,
    /// Last result rows per step.
    rows: Vec<Vec<String>>,
    /// Highest peak RSS seen.
    rss: Option<u64>,
    /// Measured rounds run.
    done: usize,
    /// The error that stopped this system.
    failed: Option<String>,
}

/// Runs `sc` and returns its rows.
pub fn run_scenario(ctx: &mut Ctx, sc: &Scenario) -> Vec<Row> {
    let mut lanes: Vec<Lane> = Vec::new();
    for (i, sys) in ctx.systems.iter().enumerate() {
        let steps = (sc.steps)(sys);
        if steps.is_empty() || sys.unavailable.is_some() {
            continue;
        }
        lanes.push(Lane {
            sys: i,
            samples: vec![Vec::new(); steps.len()],
            rows: vec![Vec::new(); steps.len()],
            steps,
            session: None,
            rss: None,
            failed: None,
            done: 0,
        });
    }
    if sc.evict.is_none() {
        for lane in &mut lanes {
            match open(&ctx.systems[lane.sys], sc) {
                Ok(s) => lane.session = Some(s),
                Err(e) => lane.failed = Some(e),
            }
        }
    }
    let rounds = ctx.runs + usize::from(sc.warmup);
    // The budget counts measured rounds only (a warm-up round of a reload
    // scenario is as long as a measured one).
    let mut started = Instant::now();
    for round in 0..rounds {
        let measured = round >= usize::from(sc.warmup);
        let elapsed = started.elapsed();
        let go: Vec<bool> = lanes
            .iter()
            .map(|l| {
                l.failed.is_none()
                    && (!measured || {
                        let spent = l.samples.iter().flatten().sum();
                        may_start_round(l.done, elapsed, spent, ctx.budget)
                    })
            })
            .collect();
        if !go.contains(&true) {
            break;
        }
        let n = lanes.len();
        for k in 0..n {
            let i = (k + round) % n;
            if !go[i] {
                continue;
            }
            let lane = &mut lanes[i];
            if let Err(e) = run_round(ctx, sc, lane, measured) {
                lane.failed = Some(e);
            }
            lane.done += usize::from(measured);
        }
        if !measured {
            started = Instant::now();
        }
    }
    let mut rows = Vec::new();
    for &w in &sc.workloads {
        let mut row = Row {
            workload: w.to_string(),
            cells: Vec::new(),
            notes: Vec::new(),
        };
        for (i, sys) in ctx.systems.iter().enumerate() {
            let cell = if let Some(why) = &sys.unavailable {
                Cell::Unavailable(why.clone())
            } else if let Some(lane) = lanes.iter().find(|l| l.sys == i) {
                match lane.steps.iter().position(|s| s.workload == w) {
                    None => Cell::NotApplicable,
                    Some(_) if lane.failed.is_some() => {
                        let e = lane.failed.clone().expect("checked just above");
                        row.notes.push(format!("{} failed: {e}", sys.kind));
                        Cell::Failed(e)
                    }
                    Some(p) => Cell::Measured {
                        samples: lane.samples[p].clone(),
                        rss_kib: lane.rss,
                    },
                }
            } else {
                Cell::NotApplicable
            };
            row.cells.push((sys.kind, cell));
        }
        if let Some(note) = compare_rows(ctx, &lanes, w) {
            row.notes.push(note);
        }
        let done: Vec<(String, usize)> = lanes
            .iter()
            .filter(|l| l.failed.is_none() && l.steps.iter().any(|s| s.workload == w))
            .map(|l| (ctx.systems[l.sys].kind.to_string(), l.done))
            .collect();
        row.notes.extend(budget_note(&done, ctx.runs, ctx.budget));
        rows.push(row);
    }
    for lane in &mut lanes {
        if let Some(s) = lane.session.take() {
            s.close();
        }
    }
    rows
}

fn open(sys: &System, sc: &Scenario) -> Result<Session, String> {
    let mut s = sys.open()?;
    for stmt in (sc.setup)(sys) {
        s.run(&stmt)?;
    }
    Ok(s)
}

fn run_round(ctx: &mut Ctx, sc: &Scenario, lane: &mut Lane, measured: bool) -> Result<(), String> {
    for (i, step) in lane.steps.iter().enumerate() {
        if let Some(table) = sc.evict {
            if let Some(s) = lane.session.take() {
                lane.rss = lane.rss.max(s.peak_rss_kib());
                s.close();
            }
            evict(ctx, lane.sys, table)?;
            lane.session = Some(open(&ctx.systems[lane.sys], sc)?);
        }
        let session = lane.session.as_mut().ok_or("no client")?;
        for p in &step.prep {
            session.run(p).map_err(|e| format!("{p}: {e}"))?;
        }
        settle_writeback();
        let out = session.run(&step.timed)?;
        if measured {
            lane.samples[i].push(out.time());
        }
        lane.rows[i] = out.rows;
    }
    if let Some(s) = &lane.session {
        lane.rss = lane.rss.max(s.peak_rss_kib());
    }
    if sc.evict.is_some() {
        if let Some(s) = lane.session.take() {
            s.close();
        }
    }
    Ok(())
}

/// Writes back every dirty page-cache page of the machine (`sync(2)`), so no
/// timed statement competes with the write-back of data written before it.
pub fn settle_writeback() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// Empties every cache of `table` in system `sys` (no client may be open on
/// it): PostgreSQL is stopped, the table's files are evicted from the OS
/// cache and the server restarted; heapdb's whole data directory is evicted
/// (its process, and so its buffer pool, is new each step anyway).
fn evict(ctx: &mut Ctx, sys: usize, table: &str) -> Result<(), String> {
    match &ctx.systems[sys].launcher {
        Launcher::Psql { db, .. } => {
            let pg = ctx.pg.as_mut().ok_or("no PostgreSQL cluster")?;
            let rel = pg.psql_c(db, &format!("select pg_relation_filepath('{table}')"))?;
            let main: PathBuf = pg.data.join(rel.trim());
            let files = relation_files(&main);
            if files.is_empty() {
                return Err(format!("no files for {table} at {}", main.display()));
            }
            pg.stop_server()?;
            for f in &files {
                evict_file(f)?;
            }
            pg.start_server()
        }
        Launcher::Heapdb { data_dir, .. } => {
            for f in files_under(data_dir) {
                evict_file(&f)?;
            }
            Ok(())
        }
        _ => Err("eviction is only implemented for PostgreSQL and heapdb".into()),
    }
}

/// A note naming the systems whose rows for workload `w` differ from the
/// reference system's (PostgreSQL when it ran, else the first that did).
fn compare_rows(ctx: &Ctx, lanes: &[Lane], w: &str) -> Option<String> {
    let results: Vec<(Kind, Vec<String>)> = lanes
        .iter()
        .filter(|l| l.failed.is_none())
        .filter_map(|l| {
            let p = l
                .steps
                .iter()
                .position(|s| s.workload == w && s.check_rows)?;
            let mut rows = l.rows[p].clone();
            rows.sort();
            Some((ctx.systems[l.sys].kind, rows))
        })
        .collect();
    let reference = results
        .iter()
        .find(|(k, _)| *k == Kind::Pg)
        .or(results.first())?;
    let differ: Vec<String> = results
        .iter()
        .filter(|(_, r)| r != &reference.1)
        .map(|(k, r)| format!("{k} {:?}", r.iter().take(3).collect::<Vec<_>>()))
        .collect();
    (!differ.is_empty()).then(|| {
        format!(
            "rows differ from {} {:?}: {}",
            reference.0,
            reference.1.iter().take(3).collect::<Vec<_>>(),
            differ.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_allows_one_measured_round_then_stops() {
        let b = Duration::from_secs(60);
        let slow = Duration::from_secs(50);
        assert!(may_start_round(0, Duration::from_secs(1000), slow, b));
        assert!(may_start_round(3, Duration::from_secs(59), slow, b));
        assert!(!may_start_round(1, Duration::from_secs(61), slow, b));
        // A system whose timed statements took under a fifth of the budget
        // goes on, up to twice the budget.
        assert!(may_start_round(
            1,
            Duration::from_secs(61),
            Duration::from_secs(11),
            b
        ));
        assert!(!may_start_round(
            4,
            Duration::from_secs(61),
            Duration::from_secs(12),
            b
        ));
        assert!(!may_start_round(
            2,
            Duration::from_secs(120),
            Duration::from_secs(1),
            b
        ));
        let all = [("heapdb".to_string(), 5), ("pg".to_string(), 5)];
        assert_eq!(budget_note(&all, 5, b), None);
        let some = [
            ("heapdb".to_string(), 5),
            ("pg".to_string(), 2),
            ("sqlite".to_string(), 3),
        ];
        assert_eq!(
            budget_note(&some, 5, b).unwrap(),
            "pg 2, sqlite 3 of 5 runs: stopped at the 60 s time budget (--budget; a system whose timed runs took under 12 s in all goes on to 5)"
        );
    }
}
