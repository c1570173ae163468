//! The bench's command line, parsed by hand (a dozen flags do not need a crate).

use std::path::PathBuf;

use crate::systems::Kind;

/// Every workload name, in the order the table prints them.
pub const WORKLOADS: &[&str] = &[
    "count_star",
    "count_star_qual",
    "count_star_half",
    "sum_group",
    "hash_join",
    "filter_scan",
    "sum_aid",
    "filter_scan_sum",
    "min_max",
    "min_max_range",
    "sum_group_shuffled",
    "hash_join_shuffled",
    "filter_scan_shuffled",
    "sum_aid_shuffled",
    "filter_scan_sum_shuffled",
    "min_max_shuffled",
    "min_max_range_shuffled",
    "insert_script_sync_on",
    "insert_script_sync_off",
    "point_select_piped",
    "create_index_3col",
    "update_by_key_piped",
    "index_only_count",
    "copy_in",
    "copy_out",
    "vacuum_fresh",
    "vacuum_clean",
    "vacuum_dirty",
    "analyze_cold_prefetch",
    "analyze_cold_no_prefetch",
    "ring_sweep",
];

/// Options of one bench run.
#[derive(Debug, Clone)]
pub struct Args {
    /// Size multiplier (1 = the targets' sizes).
    pub scale: f64,
    /// Selected workload names or prefixes; empty = all.
    pub only: Vec<String>,
    /// Peers to compare with.
    pub peers: Vec<Kind>,
    /// Measured runs per workload (after one warm-up where it applies).
    pub runs: usize,
    /// Per-workload time budget: no new round starts after it (one always runs).
    pub budget_secs: u64,
    /// Where to write the results as JSON.
    pub json: Option<PathBuf>,
    /// `--gen-insert-script FILE`: write the INSERT script and exit.
    pub gen_insert_script: Option<PathBuf>,
    /// Statements in a generated INSERT script.
    pub script_rows: u64,
    /// heapdb's shell binary (default: `heapdb` beside this example's target dir).
    pub heapdb_bin: Option<PathBuf>,
    /// Leave heapdb out.
    pub no_heapdb: bool,
    /// Drive the heapdb column through psql against its own database (tests the driver).
    pub heapdb_as_psql: bool,
    /// Skip `cargo build --release --bin heapdb`.
    pub no_build: bool,
    /// Work directory (data files, data directories); default a fresh one under /tmp.
    pub workdir: Option<PathBuf>,
    /// Keep the work directory at exit.
    pub keep: bool,
    /// Python interpreter for DuckDB.
    pub python: String,
    /// Port of the throwaway PostgreSQL cluster.
    pub port: u16,
}

/// Usage text for `--help`.
pub const USAGE: &str = "\
bench: heapdb side by side with PostgreSQL 15, SQLite and DuckDB

usage: cargo run --release --example bench -- [OPTIONS]

  --scale N              size multiplier, float (default 1: 20M-row t, 5M accounts)
  --only LIST            comma-separated workloads or prefixes (e.g. count_star,vacuum; NAME$: NAME alone)
  --peers LIST           comma-separated peers: pg,sqlite,duckdb (default all; '' for none)
  --runs N               measured runs per workload, median reported (default 5)
  --budget SECS          per workload: start no new run after SECS (default 60; one run always)
  --json FILE            also write the results as JSON
  --gen-insert-script FILE  write the insert_script workload's script and exit
  --rows N               statements in that script (default 100000)
  --heapdb PATH          heapdb shell binary (default: target/release/heapdb)
  --no-heapdb            leave heapdb out
  --heapdb-as-psql       drive the heapdb column through psql (tests the driver)
  --no-build             do not run `cargo build --release --bin heapdb` first
  --workdir DIR          where data files and data directories go (default /tmp/heapdb-bench-PID)
  --keep                 keep the work directory
  --python PATH          Python with the duckdb package (default $BENCH_PYTHON or python3)
  --port N               port of the throwaway PostgreSQL cluster (default 54341)

workloads: ";

/// Parses the arguments after the program name.
pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args {
        scale: 1.0,
        only: Vec::new(),
        peers: vec![Kind::Pg, Kind::Sqlite, Kind::Duckdb],
        runs: 5,
        budget_secs: 60,
        json: None,
        gen_insert_script: None,
        script_rows: 100_000,
        heapdb_bin: None,
        no_heapdb: false,
        heapdb_as_psql: false,
        no_build: false,
        workdir: None,
        keep: false,
        python: std::env::var("BENCH_PYTHON").unwrap_or_else(|_| "python3".into()),
        port: 54341,
    };
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let (flag, inline) = match flag.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (flag.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or(format!("option {name} needs a value"))
        };
        match flag {
            "--scale" => {
                a.scale = number(&value(flag)?, flag)?;
                if !(a.scale > 0.0 && a.scale.is_finite()) {
                    return Err("--scale must be a positive number".into());
                }
            }
            "--only" => {
                a.only = list(&value(flag)?);
                for name in &a.only {
                    if !WORKLOADS.iter().any(|w| selects(name, w)) {
                        return Err(format!("unknown workload \"{name}\""));
                    }
                }
            }
            "--peers" => {
                a.peers = list(&value(flag)?)
                    .iter()
                    .map(|p| Kind::parse_peer(p).ok_or(format!("unknown peer \"{p}\"")))
                    .collect::<Result<_, _>>()?;
            }
            "--runs" => {
                a.runs = number::<usize>(&value(flag)?, flag)?;
                if a.runs == 0 {
                    return Err("--runs must be at least 1".into());
                }
            }
            "--budget" => a.budget_secs = number(&value(flag)?, flag)?,
            "--json" => a.json = Some(value(flag)?.into()),
            "--gen-insert-script" => a.gen_insert_script = Some(value(flag)?.into()),
            "--rows" => a.script_rows = number(&value(flag)?, flag)?,
            "--heapdb" => a.heapdb_bin = Some(value(flag)?.into()),
            "--no-heapdb" => a.no_heapdb = true,
            "--heapdb-as-psql" => a.heapdb_as_psql = true,
            "--no-build" => a.no_build = true,
            "--workdir" => a.workdir = Some(value(flag)?.into()),
            "--keep" => a.keep = true,
            "--python" => a.python = value(flag)?,
            "--port" => a.port = number(&value(flag)?, flag)?,
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown option \"{other}\"")),
        }
    }
    Ok(a)
}

impl Args {
    /// Whether workload `name` was selected by `--only` (all are by default).
    pub fn wants(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| selects(o, name))
    }
}

/// `--only` entry `pattern` selects `workload` when equal to it or a prefix
/// ending at an underscore (`vacuum` selects `vacuum_fresh`); `NAME$`
/// selects `NAME` alone (`sum_group$` leaves `sum_group_shuffled` out).
pub fn selects(pattern: &str, workload: &str) -> bool {
    if let Some(exact) = pattern.strip_suffix('$') {
        return workload == exact;
    }
    workload == pattern
        || workload
            .strip_prefix(pattern)
            .is_some_and(|rest| rest.starts_with('_'))
}

fn list(s: &str) -> Vec<String> {
    s.split(',')
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

fn number<T: std::str::FromStr>(s: &str, flag: &str) -> Result<T, String> {
    s.parse()
        .map_err(|_| format!("invalid value \"{s}\" for {flag}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[&str]) -> Result<Args, String> {
        parse(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn defaults() {
        let a = p(&[]).unwrap();
        assert_eq!(a.scale, 1.0);
        assert_eq!(a.runs, 5);
        assert_eq!(a.peers, [Kind::Pg, Kind::Sqlite, Kind::Duckdb]);
        assert!(a.wants("count_star") && a.wants("ring_sweep"));
    }

    #[test]
    fn flags_and_selection() {
        let a = p(&[
            "--scale",
            "0.05",
            "--only=vacuum,count_star",
            "--peers",
            "pg",
            "--runs",
            "3",
        ])
        .unwrap();
        assert_eq!(a.scale, 0.05);
        assert_eq!(a.peers, [Kind::Pg]);
        assert_eq!(a.runs, 3);
        assert_eq!(a.budget_secs, 60);
        assert_eq!(p(&["--budget", "600"]).unwrap().budget_secs, 600);
        assert!(a.wants("vacuum_dirty") && a.wants("count_star"));
        assert!(!a.wants("copy_in") && !a.wants("sum_group"));
        let a = p(&["--only", "filter_scan"]).unwrap();
        assert!(a.wants("filter_scan") && a.wants("filter_scan_sum"));
        assert!(p(&["--peers", ""]).unwrap().peers.is_empty());
    }

    #[test]
    fn errors() {
        assert!(p(&["--only", "nope"])
            .unwrap_err()
            .contains("unknown workload"));
        assert!(p(&["--scale", "0"]).is_err());
        assert!(p(&["--scale"]).unwrap_err().contains("needs a value"));
        assert!(p(&["--runs", "x"]).unwrap_err().contains("invalid value"));
        assert!(p(&["--peers", "mysql"])
            .unwrap_err()
            .contains("unknown peer"));
        assert!(p(&["--frobnicate"]).is_err());
        assert_eq!(p(&["--help"]).unwrap_err(), "");
    }

    #[test]
    fn prefix_selection_stops_at_underscores() {
        assert!(selects("insert_script", "insert_script_sync_on"));
        assert!(selects("analyze_cold", "analyze_cold_no_prefetch"));
        assert!(selects("copy", "copy_in"));
        assert!(!selects("cop", "copy_in"));
        assert!(!selects("count_sta", "count_star"));
    }
}
