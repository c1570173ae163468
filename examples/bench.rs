//! The side-by-side benchmark: heapdb against PostgreSQL 15, SQLite and DuckDB.
//!
//! ```text
//! cargo run --release --example bench -- [--scale N] [--only NAME,...] [--peers pg,sqlite,duckdb]
//!                                         [--runs N] [--json FILE] [--gen-insert-script FILE]
//! ```
//!
//! Each system is driven the same way, as a client child process fed SQL on
//! stdin with timing on (`session.rs`): heapdb through its psql-compatible
//! shell, PostgreSQL through `psql` against a throwaway cluster the bench
//! starts and always stops (`pg.rs`), sqlite3 through its CLI, DuckDB through
//! a small Python driver (`duckdb_driver.py`). The data sets are generated
//! once as tab-separated files and bulk-loaded into every system
//! (`gen.rs`, `workloads.rs`); each workload runs one warm-up round where
//! it applies and `--runs` measured rounds with the systems interleaved
//! (`runner.rs`); one table of medians, speed-ups and peak RSS is printed
//! with the settings (`report.rs`), and under it what the memory floor
//! (`floor.rs`, measured in the same run) leaves of each read target, and
//! what the disk leaves the cold ANALYZE's prefetch (`device.rs`, measured
//! on heapdb's accounts file after the ANALYZEs). A system that cannot be started shows
//! `n/a` rather than stopping the run.

#[path = "bench/args.rs"]
mod args;
#[path = "bench/device.rs"]
mod device;
#[path = "bench/evict.rs"]
mod evict;
#[path = "bench/floor.rs"]
mod floor;
#[path = "bench/gen.rs"]
mod gen;
#[path = "bench/keyed.rs"]
mod keyed;
#[path = "bench/pg.rs"]
mod pg;
#[path = "bench/report.rs"]
mod report;
#[path = "bench/ring.rs"]
mod ring;
#[path = "bench/runner.rs"]
mod runner;
#[path = "bench/session.rs"]
mod session;
#[path = "bench/stats.rs"]
mod stats;
#[path = "bench/systems.rs"]
mod systems;
#[path = "bench/workloads.rs"]
mod workloads;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

use args::{Args, WORKLOADS};
use pg::PgCluster;
use report::Report;
use runner::Ctx;
use systems::{Kind, Launcher, System};
use workloads::Needs;

/// The work directory, for the Ctrl-C handler to remove (unless `--keep`).
static WORKDIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The DuckDB driver, written into the work directory at start.
const DUCKDB_DRIVER: &str = include_str!("bench/duckdb_driver.py");

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match args::parse(&argv) {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            println!("{}{}", args::USAGE, WORKLOADS.join(", "));
            return;
        }
        Err(e) => {
            eprintln!("bench: {e}\nTry \"--help\" for more information.");
            std::process::exit(2);
        }
    };
    if let Some(path) = &args.gen_insert_script {
        match gen::write_insert_script(path, args.script_rows) {
            Ok(()) => eprintln!(
                "bench: wrote {} INSERT statements to {}",
                args.script_rows,
                path.display()
            ),
            Err(e) => {
                eprintln!("bench: {}: {e}", path.display());
                std::process::exit(1);
            }
        }
        return;
    }
    if let Err(e) = run(&args) {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), String> {
    let started = Instant::now();
    let workdir = args
        .workdir
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("/tmp/heapdb-bench-{}", std::process::id())));
    std::fs::create_dir_all(&workdir).map_err(|e| format!("{}: {e}", workdir.display()))?;
    // PostgreSQL runs as another user: it must read the data files and write COPY TO files.
    set_mode(&workdir, 0o755)?;
    if !args.keep {
        *WORKDIR.lock().expect("WORKDIR lock is never poisoned") = Some(workdir.clone());
    }
    ctrlc::set_handler(|| {
        eprintln!("\nbench: interrupted, stopping PostgreSQL");
        pg::stop_all_live();
        if let Ok(Some(dir)) = WORKDIR.lock().map(|d| d.clone()) {
            let _ = std::fs::remove_dir_all(dir);
        }
        std::process::exit(130);
    })
    .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))?;

    let result = run_in(args, &workdir, started);
    if !args.keep {
        let _ = std::fs::remove_dir_all(&workdir);
    } else {
        eprintln!("bench: kept {}", workdir.display());
    }
    result
}

/// Whether any of the three VACUUM workloads is selected (`--only vacuum`
/// selects them all; `--only vacuum_dirty` one of them, which needs the
/// same load as the others).
fn wants_vacuum(args: &Args) -> bool {
    ["vacuum_fresh", "vacuum_clean", "vacuum_dirty"]
        .iter()
        .any(|w| args.wants(w))
}

fn run_in(args: &Args, workdir: &Path, started: Instant) -> Result<(), String> {
    let sb_bytes = shared_buffers_bytes(args.scale);
    let sb = stats::pg_size(sb_bytes);
    let needs = Needs {
        t: args.wants("count_star")
            || args.wants("count_star_qual")
            || args.wants("count_star_half"),
        accounts: [
            "sum_group",
            "hash_join",
            "filter_scan",
            "sum_aid",
            "min_max",
            "copy_out",
            "analyze_cold_prefetch",
            "analyze_cold_no_prefetch",
        ]
        .iter()
        .any(|w| args.wants(w)),
        shuffled: workloads::ACCOUNT_READS
            .iter()
            .any(|(_, w, _)| args.wants(w)),
        accounts_file: args.wants("copy_in") || wants_vacuum(args),
        // The workloads are `insert_script_sync_on/off`: ask for them by name
        // (`--only insert_script_sync_off` does not select "insert_script").
        script: args.wants("insert_script_sync_on") || args.wants("insert_script_sync_off"),
    };

    let mut settings: Vec<(String, String)> = Vec::new();
    let (t_rows, acc_rows, script_rows) = workloads::sizes(args.scale);
    settings.push((
        "data".into(),
        format!(
            "scale {}: t {t_rows} rows, pgbench_accounts {acc_rows} rows (in bid order, and shuffled as pgbench_accounts_shuffled), pgbench_branches {} rows, insert script {script_rows} statements",
            args.scale,
            gen::branches_for(acc_rows)
        ),
    ));
    settings.push((
        "runs".into(),
        format!(
            "median of {} measured runs (fewer for a system whose timed runs take over a fifth of the {} s budget, once a workload passes it: see the notes); cached and reload workloads after 1 warm-up run, fresh-process ones without; sync(2) before each timed statement; systems interleaved",
            args.runs, args.budget_secs
        ),
    ));
    if keyed::WORKLOADS.iter().any(|w| args.wants(w)) {
        let (rows, statements) = keyed::sizes(args.scale);
        settings.push((
            "keyed".into(),
            format!(
                "a: {rows} accounts with a primary key; k3: {rows} rows of 4 int4 columns; piped scripts of {statements} statements, timed from client start to exit; heapdb and PostgreSQL only"
            ),
        ));
    }
    settings.push(("machine".into(), machine()));

    // The PostgreSQL cluster serves the pg column and heapdb's stand-in.
    let want_pg = args.peers.contains(&Kind::Pg) || (args.heapdb_as_psql && !args.no_heapdb);
    let mut pg_cluster: Option<PgCluster> = None;
    let mut pg_error: Option<String> = None;
    if want_pg {
        if !pg::available() {
            pg_error = Some(format!("PostgreSQL 15 not found in {}", pg::PG_BIN));
        } else {
            let conf = vec![
                ("shared_buffers".to_string(), sb.clone()),
                ("max_wal_size".to_string(), "8GB".to_string()),
                ("checkpoint_timeout".to_string(), "30min".to_string()),
                ("autovacuum".to_string(), "off".to_string()),
                ("synchronous_commit".to_string(), "on".to_string()),
            ];
            match PgCluster::start(&workdir.join("pg"), args.port, conf) {
                Ok(c) => {
                    let mut dbs = vec!["bench"];
                    if args.heapdb_as_psql {
                        dbs.push("heapdb_standin");
                    }
                    for db in dbs {
                        c.psql_c("postgres", &format!("CREATE DATABASE {db}"))?;
                    }
                    let list: Vec<String> =
                        c.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    settings.push((
                        "pg".into(),
                        format!(
                            "PostgreSQL {}: {}; parallel workers and JIT at their defaults; CHECKPOINT before timed writes; peak RSS is the serving backend's",
                            pg_version(),
                            list.join(", ")
                        ),
                    ));
                    pg_cluster = Some(c);
                }
                Err(e) => pg_error = Some(e),
            }
        }
    }

    let mut systems: Vec<System> = Vec::new();
    if !args.no_heapdb {
        systems.push(heapdb_system(
            args,
            workdir,
            &sb,
            pg_cluster.as_ref(),
            &pg_error,
        ));
        settings.push(("heapdb".into(), heapdb_settings(&systems[0], &sb)));
    }
    for &peer in &args.peers {
        systems.push(peer_system(
            peer,
            args,
            workdir,
            sb_bytes,
            pg_cluster.as_ref(),
            &pg_error,
        ));
    }
    if args.peers.contains(&Kind::Sqlite) {
        settings.push((
            "sqlite".into(),
            format!(
                "sqlite3 {}: cache_size {} (the shared_buffers size); insert_script in WAL mode, synchronous FULL (sync on) / NORMAL (sync off)",
                sqlite_version(),
                sb
            ),
        ));
    }
    if args.peers.contains(&Kind::Duckdb) {
        settings.push((
            "duckdb".into(),
            format!("DuckDB through {} and its duckdb package: memory_limit {sb}, threads at the default (all cores)", args.python),
        ));
    }
    for s in &systems {
        if let Some(why) = &s.unavailable {
            eprintln!("bench: {} is n/a: {why}", s.kind);
        }
    }

    let t0 = Instant::now();
    let files = workloads::make_files(workdir, args.scale, &needs)
        .map_err(|e| format!("generating data files: {e}"))?;
    set_mode(&files.out_dir, 0o777)?;
    eprintln!(
        "bench: generated data files in {:.1} s",
        t0.elapsed().as_secs_f64()
    );

    let mut ctx = Ctx {
        systems,
        pg: pg_cluster,
        runs: args.runs,
        budget: std::time::Duration::from_secs(args.budget_secs),
    };
    workloads::load(&mut ctx, &files, &needs);
    let keyed_files = if keyed::WORKLOADS.iter().any(|w| args.wants(w)) {
        let t0 = Instant::now();
        let f = keyed::make_files(workdir, args.scale)
            .map_err(|e| format!("generating the keyed tables' files: {e}"))?;
        eprintln!(
            "bench: generated the keyed tables' files in {:.1} s",
            t0.elapsed().as_secs_f64()
        );
        keyed::load(&mut ctx, &f);
        Some(f)
    } else {
        None
    };

    let mut report = Report {
        systems: ctx.systems.iter().map(|s| s.kind).collect(),
        settings,
        ..Report::default()
    };
    let add = |rows: Vec<report::Row>, report: &mut Report| {
        for r in rows {
            if args.wants(&r.workload) {
                eprintln!(
                    "bench: {} done ({:.0} s so far)",
                    r.workload,
                    started.elapsed().as_secs_f64()
                );
                report.rows.push(r);
            }
        }
    };
    if args.wants("count_star") || args.wants("count_star_qual") || args.wants("count_star_half") {
        add(
            workloads::count_star(&mut ctx, &|w| args.wants(w)),
            &mut report,
        );
    }
    let reads = workloads::ACCOUNT_READS
        .iter()
        .any(|(o, s, _)| args.wants(o) || args.wants(s));
    if reads {
        add(
            workloads::account_reads(&mut ctx, &|w| args.wants(w)),
            &mut report,
        );
    }
    for sync in [true, false] {
        let name = if sync {
            "insert_script_sync_on"
        } else {
            "insert_script_sync_off"
        };
        if args.wants(name) {
            add(
                vec![workloads::insert_script(&mut ctx, &files, sync)],
                &mut report,
            );
        }
    }
    if let Some(f) = &keyed_files {
        add(keyed::run(&mut ctx, f, &|w| args.wants(w)), &mut report);
    }
    if args.wants("copy_in") || wants_vacuum(args) {
        add(
            workloads::copy_in_and_vacuum(&mut ctx, &files, wants_vacuum(args)),
            &mut report,
        );
    }
    if args.wants("copy_out") {
        add(workloads::copy_out(&mut ctx, &files), &mut report);
    }
    if ["analyze_cold_prefetch", "analyze_cold_no_prefetch"]
        .iter()
        .any(|w| args.wants(w))
    {
        add(
            workloads::analyze_cold(&mut ctx, &|w| args.wants(w)),
            &mut report,
        );
        analyze_bound(&ctx, &mut report);
    }
    if reads {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let floor = floor::bounds(&report, acc_rows.max(0) as u64, cores);
        report.bounds.splice(0..0, floor);
    }
    if args.wants("ring_sweep") {
        ring_sweep(&ctx, args, workdir, &mut report);
    }
    report.settings.push((
        "total".into(),
        format!("{:.0} s for the whole run", started.elapsed().as_secs_f64()),
    ));

    println!("{}", report.table());
    if let Some(path) = &args.json {
        std::fs::write(path, report.json()).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("bench: wrote {}", path.display());
    }
    drop(ctx);
    Ok(())
}

/// Adds the disk's bound on the cold ANALYZE's prefetch / none
/// ([`device::analyze_bound`], on heapdb's accounts heap file) to the
/// report's bounds, or a note saying why it could not be measured.
fn analyze_bound(ctx: &Ctx, report: &mut Report) {
    let Some(sys) = ctx
        .systems
        .iter()
        .find(|s| s.kind == Kind::Heapdb && s.unavailable.is_none())
    else {
        return;
    };
    let Launcher::Heapdb { data_dir, .. } = &sys.launcher else {
        return;
    };
    let line = sys
        .open()
        .and_then(|mut s| {
            let rows = s.query("select pg_relation_filepath('pgbench_accounts');");
            s.close();
            rows
        })
        .and_then(|rows| {
            let rel = rows.first().ok_or("no path")?.trim().to_string();
            // ANALYZE's default sample: 300 x default_statistics_target rows,
            // as many blocks (fewer when the table has fewer).
            device::analyze_bound(&data_dir.join(rel), 30_000)
        })
        .unwrap_or_else(|e| format!("analyze_cold: the disk's bound was not measured: {e}"));
    report.bounds.push(line);
}

/// `shared_buffers` (and the peers' cache sizes): 6 GB at scale 1, so every
/// table stays cached; proportionally less below, at least 128 MB; never
/// more than a third of the machine's memory (6 GB fits that on the 24 GB
/// machines here): `--scale 4` asked each system for 24 GB and ran out of
/// memory. Above scale 1 the tables may then outgrow the caches, which the
/// settings line shows.
fn shared_buffers_bytes(scale: f64) -> u64 {
    const MB: u64 = 1 << 20;
    let mb = ((6144.0 * scale).ceil() as u64).max(128);
    let cap = mem_total_kib().map_or(u64::MAX, |kib| (kib / 1024 / 3).max(128));
    mb.min(cap) * MB
}

/// The machine's memory (`MemTotal`), when `/proc` says.
fn mem_total_kib() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    })
}

fn heapdb_system(
    args: &Args,
    workdir: &Path,
    sb: &str,
    pg: Option<&PgCluster>,
    pg_error: &Option<String>,
) -> System {
    if args.heapdb_as_psql {
        return match pg {
            Some(c) => System {
                kind: Kind::Heapdb,
                launcher: Launcher::Psql {
                    args: c.psql_args("heapdb_standin"),
                    db: "heapdb_standin".into(),
                },
                unavailable: None,
            },
            None => System {
                kind: Kind::Heapdb,
                launcher: Launcher::Psql {
                    args: Vec::new(),
                    db: String::new(),
                },
                unavailable: Some(pg_error.clone().unwrap_or_else(|| "no PostgreSQL".into())),
            },
        };
    }
    let bin = args.heapdb_bin.clone().unwrap_or_else(default_heapdb_bin);
    let mut unavailable = None;
    if args.heapdb_bin.is_none() && !args.no_build {
        if let Err(e) = build_heapdb(&bin) {
            unavailable = Some(e);
        }
    }
    let mut sys = System {
        kind: Kind::Heapdb,
        launcher: Launcher::Heapdb {
            bin: bin.clone(),
            data_dir: workdir.join("heapdb"),
            shared_buffers: sb.to_string(),
        },
        unavailable,
    };
    if sys.unavailable.is_none() {
        if !bin.exists() {
            sys.unavailable = Some(format!("{} does not exist", bin.display()));
        } else if let Err(e) = sys.open().map(|s| s.close()) {
            sys.unavailable = Some(e);
        }
    }
    sys
}

fn heapdb_settings(sys: &System, sb: &str) -> String {
    match &sys.launcher {
        Launcher::Heapdb { bin, .. } => format!(
            "{} --shared-buffers {sb}; synchronous_commit as the workload says",
            bin.display()
        ),
        _ => "psql against a PostgreSQL database standing in for heapdb (--heapdb-as-psql)".into(),
    }
}

/// `target/release/heapdb` beside this example (`target/release/examples/bench`).
fn default_heapdb_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let release = exe
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    release.join("heapdb")
}

/// `cargo build --release --bin heapdb` into the target directory this example runs from.
fn build_heapdb(bin: &Path) -> Result<(), String> {
    let target = bin
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot find the target directory")?;
    eprintln!("bench: cargo build --release --bin heapdb");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--bin", "heapdb", "--target-dir"])
        .arg(target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "cargo build --release --bin heapdb failed ({status})"
        ))
    }
}

fn peer_system(
    kind: Kind,
    args: &Args,
    workdir: &Path,
    sb_bytes: u64,
    pg: Option<&PgCluster>,
    pg_error: &Option<String>,
) -> System {
    let sb = stats::pg_size(sb_bytes);
    match kind {
        Kind::Pg => System {
            kind,
            launcher: Launcher::Psql {
                args: pg.map(|c| c.psql_args("bench")).unwrap_or_default(),
                db: "bench".into(),
            },
            unavailable: if pg.is_some() {
                None
            } else {
                Some(pg_error.clone().unwrap_or_else(|| "no PostgreSQL".into()))
            },
        },
        Kind::Sqlite => System {
            kind,
            launcher: Launcher::Sqlite {
                db: workdir.join("sqlite.db"),
                cache_kib: sb_bytes / 1024,
            },
            unavailable: (!pg::which("sqlite3")).then(|| "sqlite3 is not installed".to_string()),
        },
        Kind::Duckdb | Kind::Heapdb => {
            let driver = workdir.join("duckdb_driver.py");
            let mut unavailable = None;
            let importable = Command::new(&args.python)
                .args(["-c", "import duckdb"])
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false);
            if !importable {
                unavailable = Some(format!("{} cannot import duckdb", args.python));
            } else if let Err(e) = std::fs::write(&driver, DUCKDB_DRIVER) {
                unavailable = Some(format!("{}: {e}", driver.display()));
            }
            System {
                kind: Kind::Duckdb,
                launcher: Launcher::Duckdb {
                    python: args.python.clone(),
                    driver,
                    db: workdir.join("duck.db"),
                    memory_limit: sb,
                },
                unavailable,
            }
        }
    }
}

fn ring_sweep(ctx: &Ctx, args: &Args, workdir: &Path, report: &mut Report) {
    let Some(heapdb) = ctx.systems.iter().find(|s| s.kind == Kind::Heapdb) else {
        report.ring_note = Some("n/a (heapdb left out)".into());
        return;
    };
    if let Some(why) = &heapdb.unavailable {
        report.ring_note = Some(format!("n/a ({why})"));
        return;
    }
    let sb_mb = ring::sweep_shared_buffers_mb(args.scale);
    let rows = ring::sweep_rows(sb_mb);
    let file = workdir.join("ring.tsv");
    if let Err(e) = gen::write_rows(&file, rows, 4, gen::account_row) {
        report.ring_note = Some(format!("cannot write {}: {e}", file.display()));
        return;
    }
    // Three runs per size (about 20 s each at scale 1) keep the default
    // run under ten minutes while a median drops a one-off stall (single
    // runs showed 1.5x outliers); `--only ring_sweep` takes --runs as given.
    let runs = if args.only.iter().all(|o| o == "ring_sweep") && !args.only.is_empty() {
        args.runs
    } else {
        args.runs.min(3)
    };
    report.ring_note = Some(format!(
        "heapdb --shared-buffers {sb_mb}MB, table of {rows} accounts rows (4x shared_buffers), all three rings set alike, median of {runs} run(s); \
         COPY's and VACUUM's rings grow by up to {} MB (at most an eighth of shared_buffers) while their pages wait for a WAL flush, so below that their times show the WAL's flush latency more than the ring size",
        heapdb::storage::ring::WRITE_RING_SLACK >> 20
    ));
    report.ring = ring::sweep(heapdb, sb_mb, &file, runs);
    let first_error = report
        .ring
        .iter()
        .flat_map(|r| r.times.iter())
        .find_map(|(label, t)| t.as_ref().err().map(|e| format!("{label}: {e}")));
    let memory = match ring::scan_memory(heapdb, sb_mb) {
        Ok(m) => format!("; memory: {}", ring::memory_note(&m)),
        Err(e) => format!("; memory: scan failed: {e}"),
    };
    if let Some(note) = report.ring_note.as_mut() {
        if let Some(e) = first_error {
            note.push_str(&format!("; first error: {e}"));
        }
        note.push_str(&memory);
    }
    let _ = std::fs::remove_file(&file);
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("chmod {}: {e}", path.display()))
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kib = mem_total_kib().unwrap_or(0);
    format!("{cores} cores, {} RAM", stats::fmt_kib(mem_kib))
}

fn command_output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn pg_version() -> String {
    let v = command_output(&format!("{}/postgres", pg::PG_BIN), &["--version"]);
    // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
    v.split_whitespace().nth(2).unwrap_or("15").to_string()
}

fn sqlite_version() -> String {
    let v = command_output("sqlite3", &["--version"]);
    v.split(' ').next().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_buffers_scale_with_the_data() {
        assert_eq!(stats::pg_size(shared_buffers_bytes(1.0)), "6GB");
        assert_eq!(stats::pg_size(shared_buffers_bytes(0.5)), "3GB");
        assert_eq!(stats::pg_size(shared_buffers_bytes(0.05)), "308MB");
        assert_eq!(stats::pg_size(shared_buffers_bytes(0.001)), "128MB");
    }
}
