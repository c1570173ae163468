//! The systems compared: heapdb and its peers, each one way to start a client.
//!
//! A [`System`] knows how to open a [`Session`] (a client child process with
//! timing on) and how to phrase the few statements whose syntax differs
//! between systems (bulk load and unload); everything else is the same SQL.
//! heapdb is one more system: its shell is psql-compatible, so it uses the
//! psql dialect. Until heapdb's shell exists the harness can point the heapdb
//! driver at psql (`--heapdb-as-psql`, a database of its own in the
//! PostgreSQL cluster) to exercise the same code path.
//!
//! A system that cannot be started is kept in the list with the reason, and
//! shows as `n/a` in the table; it never aborts the run.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::session::{Dialect, Session};

/// Which system a column of the table is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// heapdb, through its shell binary.
    Heapdb,
    /// PostgreSQL 15, through psql.
    Pg,
    /// SQLite, through the sqlite3 CLI.
    Sqlite,
    /// DuckDB, through its Python package and `duckdb_driver.py`.
    Duckdb,
}

impl Kind {
    /// Name in the table and in `--peers`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Heapdb => "heapdb",
            Kind::Pg => "pg",
            Kind::Sqlite => "sqlite",
            Kind::Duckdb => "duckdb",
        }
    }

    /// Parses a `--peers` entry.
    pub fn parse_peer(s: &str) -> Option<Kind> {
        match s {
            "pg" | "postgres" | "postgresql" => Some(Kind::Pg),
            "sqlite" | "sqlite3" => Some(Kind::Sqlite),
            "duckdb" => Some(Kind::Duckdb),
            _ => None,
        }
    }

    /// Whether this system understands PostgreSQL's utility statements
    /// (COPY with a server path, VACUUM, CHECKPOINT, SET).
    pub fn speaks_postgres(self) -> bool {
        matches!(self, Kind::Heapdb | Kind::Pg)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a system's client is started.
#[derive(Clone, Debug)]
pub enum Launcher {
    /// `heapdb -X --data-dir DIR --shared-buffers SIZE -q -A -t`.
    Heapdb {
        /// The shell binary.
        bin: PathBuf,
        /// Its data directory.
        data_dir: PathBuf,
        /// `--shared-buffers` value.
        shared_buffers: String,
    },
    /// `psql` with these arguments (PostgreSQL, or heapdb's stand-in).
    Psql {
        /// Connection and output arguments.
        args: Vec<String>,
        /// The database connected to.
        db: String,
    },
    /// `sqlite3 -batch FILE`, then `PRAGMA cache_size`.
    Sqlite {
        /// The database file.
        db: PathBuf,
        /// Page cache size, KiB.
        cache_kib: u64,
    },
    /// `PYTHON duckdb_driver.py FILE MEMORY_LIMIT`.
    Duckdb {
        /// The Python interpreter that can import duckdb.
        python: String,
        /// The driver script.
        driver: PathBuf,
        /// The database file.
        db: PathBuf,
        /// `memory_limit` value.
        memory_limit: String,
    },
}

/// One system: how to reach it, and whether it can be reached.
#[derive(Debug)]
pub struct System {
    /// Which system.
    pub kind: Kind,
    /// How its client starts.
    pub launcher: Launcher,
    /// Why it cannot be used this run (`n/a` in the table), if it cannot.
    pub unavailable: Option<String>,
}

impl System {
    /// The dialect its client speaks.
    pub fn dialect(&self) -> Dialect {
        match self.launcher {
            Launcher::Sqlite { .. } => Dialect::Sqlite,
            _ => Dialect::Psql,
        }
    }

    /// Starts a client with timing on. For psql the backend's pid becomes the
    /// process whose peak RSS is reported (the client's own is irrelevant).
    pub fn open(&self) -> Result<Session, String> {
        let (program, args): (String, Vec<String>) = match &self.launcher {
            Launcher::Heapdb {
                bin,
                data_dir,
                shared_buffers,
            } => (
                bin.display().to_string(),
                vec![
                    "-X".into(),
                    "--data-dir".into(),
                    data_dir.display().to_string(),
                    "--shared-buffers".into(),
                    shared_buffers.clone(),
                    "-q".into(),
                    "-A".into(),
                    "-t".into(),
                ],
            ),
            Launcher::Psql { args, .. } => ("psql".into(), args.clone()),
            Launcher::Sqlite { db, .. } => (
                "sqlite3".into(),
                vec!["-batch".into(), db.display().to_string()],
            ),
            Launcher::Duckdb {
                python,
                driver,
                db,
                memory_limit,
            } => (
                python.clone(),
                vec![
                    driver.display().to_string(),
                    db.display().to_string(),
                    memory_limit.clone(),
                ],
            ),
        };
        let mut session = Session::spawn(&program, &args, &[], self.dialect())?;
        match &self.launcher {
            Launcher::Psql { .. } => {
                let rows = session.query("select pg_backend_pid();")?;
                if let Some(pid) = rows.first().and_then(|r| r.trim().parse().ok()) {
                    session.set_rss_pid(pid);
                }
            }
            Launcher::Sqlite { cache_kib, .. } => {
                session.run(&format!("PRAGMA cache_size = -{cache_kib};"))?;
            }
            _ => {}
        }
        Ok(session)
    }

    /// Statement(s) loading the tab-separated `file` into existing `table`.
    pub fn copy_from(&self, table: &str, file: &Path) -> String {
        let f = file.display();
        match self.kind {
            Kind::Sqlite => format!(".mode tabs\n.import {f} {table}\n.mode list"),
            Kind::Duckdb => format!("COPY {table} FROM '{f}' (DELIMITER '\\t', HEADER false);"),
            Kind::Heapdb | Kind::Pg => format!("COPY {table} FROM '{f}';"),
        }
    }

    /// Statement(s) writing `table` to the tab-separated `file`.
    pub fn copy_to(&self, table: &str, file: &Path) -> String {
        let f = file.display();
        match self.kind {
            Kind::Sqlite => format!(".mode tabs\n.once {f}\nSELECT * FROM {table};\n.mode list"),
            Kind::Duckdb => format!("COPY {table} TO '{f}' (DELIMITER '\\t', HEADER false);"),
            Kind::Heapdb | Kind::Pg => format!("COPY {table} TO '{f}';"),
        }
    }

    /// `CHECKPOINT` where the system has one that matters before timed writes.
    pub fn checkpoint(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Heapdb | Kind::Pg | Kind::Duckdb => Some("CHECKPOINT;"),
            Kind::Sqlite => None,
        }
    }

    /// Statement(s) that make the statistics and hint bits of freshly loaded
    /// tables settle, as a DBA would after a bulk load.
    pub fn after_load(&self, tables: &[&str]) -> Vec<String> {
        match self.kind {
            Kind::Heapdb | Kind::Pg => tables
                .iter()
                .map(|t| format!("VACUUM ANALYZE {t};"))
                .chain(["CHECKPOINT;".to_string()])
                .collect(),
            Kind::Sqlite => vec!["ANALYZE;".into()],
            Kind::Duckdb => vec!["CHECKPOINT;".into()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sys(kind: Kind) -> System {
        let launcher = match kind {
            Kind::Sqlite => Launcher::Sqlite {
                db: "/x/db".into(),
                cache_kib: 1024,
            },
            _ => Launcher::Psql {
                args: vec![],
                db: "bench".into(),
            },
        };
        System {
            kind,
            launcher,
            unavailable: None,
        }
    }

    #[test]
    fn load_statements_per_system() {
        let f = Path::new("/w/acc.tsv");
        assert_eq!(sys(Kind::Pg).copy_from("a", f), "COPY a FROM '/w/acc.tsv';");
        assert_eq!(
            sys(Kind::Sqlite).copy_from("a", f),
            ".mode tabs\n.import /w/acc.tsv a\n.mode list"
        );
        assert_eq!(
            sys(Kind::Duckdb).copy_to("a", f),
            "COPY a TO '/w/acc.tsv' (DELIMITER '\\t', HEADER false);"
        );
        assert!(sys(Kind::Sqlite)
            .copy_to("a", f)
            .contains(".once /w/acc.tsv\nSELECT * FROM a;"));
        assert_eq!(sys(Kind::Sqlite).checkpoint(), None);
        assert_eq!(
            sys(Kind::Heapdb).after_load(&["t"]),
            ["VACUUM ANALYZE t;", "CHECKPOINT;"]
        );
        assert_eq!(sys(Kind::Sqlite).dialect(), Dialect::Sqlite);
        assert_eq!(sys(Kind::Heapdb).dialect(), Dialect::Psql);
    }

    #[test]
    fn peer_names() {
        assert_eq!(Kind::parse_peer("pg"), Some(Kind::Pg));
        assert_eq!(Kind::parse_peer("sqlite3"), Some(Kind::Sqlite));
        assert_eq!(Kind::parse_peer("duckdb"), Some(Kind::Duckdb));
        assert_eq!(Kind::parse_peer("heapdb"), None);
        assert!(Kind::Heapdb.speaks_postgres() && !Kind::Duckdb.speaks_postgres());
    }
}
