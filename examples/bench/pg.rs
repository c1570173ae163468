//! A throwaway PostgreSQL 15 cluster owned by the harness.
//!
//! `PgCluster::start` runs `initdb` into a fresh directory, writes the
//! benchmark's settings, and starts the server on a private Unix socket
//! (`listen_addresses = ''`). PostgreSQL refuses to run as root, so as root
//! every server command runs through `runuser -u pg --` (the user is created
//! with `useradd -m pg` when missing).
//!
//! Invariant: a started cluster is always stopped. Dropping the guard stops
//! it (also while unwinding from a panic), and every live cluster's data
//! directory is registered in [`LIVE`] so the Ctrl-C handler can stop it too.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// Data directories of clusters that are running, for the Ctrl-C handler.
pub static LIVE: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());

/// Where PostgreSQL 15's server programs live on Debian-like systems.
pub const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

/// A running cluster.
pub struct PgCluster {
    /// Server programs (`initdb`, `pg_ctl`).
    bin: PathBuf,
    /// The data directory.
    pub data: PathBuf,
    /// The directory holding the Unix socket.
    pub socket_dir: PathBuf,
    /// The port (names the socket file).
    pub port: u16,
    /// Whether server commands run through `runuser -u pg --`.
    as_pg: bool,
    /// The settings written to `postgresql.conf`, for the printed table.
    pub settings: Vec<(String, String)>,
    /// Whether the server is running.
    running: bool,
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Whether PostgreSQL 15 is installed.
pub fn available() -> bool {
    Path::new(PG_BIN).join("postgres").exists() && which("psql")
}

/// Whether `program` is on PATH.
pub fn which(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

impl PgCluster {
    /// Creates and starts a cluster in `dir` with `settings` added to its
    /// configuration. A data directory left there by an earlier run
    /// (`--workdir ... --keep`) is removed first: the cluster is throwaway
    /// and every run loads its tables again.
    pub fn start(
        dir: &Path,
        port: u16,
        settings: Vec<(String, String)>,
    ) -> Result<PgCluster, String> {
        let as_pg = is_root();
        if as_pg && !user_exists("pg") {
            run(Command::new("useradd").args(["-m", "pg"]))?;
        }
        let socket_dir = dir.join("sock");
        let data = dir.join("data");
        if data.exists() {
            std::fs::remove_dir_all(&data).map_err(|e| format!("{}: {e}", data.display()))?;
        }
        std::fs::create_dir_all(&socket_dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if as_pg {
            run(Command::new("chown").args(["-R", "pg:pg"]).arg(dir))?;
        }
        let mut cluster = PgCluster {
            bin: PathBuf::from(PG_BIN),
            data,
            socket_dir,
            port,
            as_pg,
            settings,
            running: false,
        };
        cluster.server_cmd(
            "initdb",
            &[
                "-D",
                path_str(&cluster.data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        )?;
        let mut conf = format!(
            "\n# added by the heapdb bench\nlisten_addresses = ''\nport = {}\nunix_socket_directories = '{}'\n",
            port,
            cluster.socket_dir.display()
        );
        for (k, v) in &cluster.settings {
            conf.push_str(&format!("{k} = '{v}'\n"));
        }
        let conf_path = cluster.data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf_path).map_err(|e| e.to_string())?;
        text.push_str(&conf);
        std::fs::write(&conf_path, text).map_err(|e| e.to_string())?;
        cluster.start_server()?;
        Ok(cluster)
    }

    /// Starts the server (after [`PgCluster::stop_server`]).
    pub fn start_server(&mut self) -> Result<(), String> {
        let log = self.data.join("server.log");
        self.server_cmd(
            "pg_ctl",
            &[
                "-D",
                path_str(&self.data),
                "-l",
                path_str(&log),
                "-w",
                "-t",
                "120",
                "start",
            ],
        )?;
        self.running = true;
        LIVE.lock()
            .expect("LIVE is never poisoned: no code panics while holding it")
            .push((self.bin.join("pg_ctl"), self.data.clone()));
        Ok(())
    }

    /// Stops the server (a fast shutdown: it checkpoints and flushes).
    pub fn stop_server(&mut self) -> Result<(), String> {
        if !self.running {
            return Ok(());
        }
        self.running = false;
        LIVE.lock()
            .expect("LIVE is never poisoned: no code panics while holding it")
            .retain(|(_, d)| d != &self.data);
        self.server_cmd(
            "pg_ctl",
            &["-D", path_str(&self.data), "-m", "fast", "-w", "stop"],
        )
    }

    /// `psql` arguments that connect to `db` in this cluster, quiet, with
    /// unaligned tuples-only output.
    pub fn psql_args(&self, db: &str) -> Vec<String> {
        vec![
            "-X".into(),
            "-q".into(),
            "-A".into(),
            "-t".into(),
            "-h".into(),
            self.socket_dir.display().to_string(),
            "-p".into(),
            self.port.to_string(),
            "-U".into(),
            "postgres".into(),
            "-d".into(),
            db.into(),
        ]
    }

    /// Runs one SQL command through `psql -c` (setup outside any session).
    pub fn psql_c(&self, db: &str, sql: &str) -> Result<String, String> {
        let out = Command::new("psql")
            .args(self.psql_args(db))
            .args(["-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .map_err(|e| format!("psql: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "psql -c {sql:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn server_cmd(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let prog = self.bin.join(program);
        let mut cmd = if self.as_pg {
            let mut c = Command::new("runuser");
            c.args(["-u", "pg", "--"]).arg(prog);
            c
        } else {
            Command::new(prog)
        };
        cmd.args(args);
        run(&mut cmd)
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        if let Err(e) = self.stop_server() {
            eprintln!("bench: stopping PostgreSQL failed: {e}");
        }
    }
}

/// Stops every registered cluster (the Ctrl-C path: no guard will run).
pub fn stop_all_live() {
    let live = match LIVE.lock() {
        Ok(mut l) => std::mem::take(&mut *l),
        Err(_) => return,
    };
    for (pg_ctl, data) in live {
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "pg", "--"]).arg(pg_ctl);
            c
        } else {
            Command::new(pg_ctl)
        };
        let _ = cmd
            .arg("-D")
            .arg(&data)
            .args(["-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn user_exists(name: &str) -> bool {
    Command::new("id")
        .arg(name)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("the bench's own paths are UTF-8")
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
