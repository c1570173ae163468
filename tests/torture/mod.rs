//! The crash torture: random mixes of CREATE TABLE [AS], DROP TABLE, TRUNCATE,
//! COPY, INSERT (VALUES and SELECT), UPDATE, DELETE, VACUUM, CHECKPOINT and
//! transaction blocks, with `synchronous_commit` switched on and off, run
//! by a child process that is killed with SIGKILL at a random moment; the
//! data directory is then reopened (recovery) and checked against a model.
//!
//! Shared by `tests/crash_torture.rs` (the normal test run) and
//! `tools/crash_torture.rs` (`--rounds N`, long runs).
//!
//! A round is one fresh data directory and a few *lives*: each life plans
//! a script from the round's seed and the state the last one recovered,
//! the child runs it (printing `ack I TAG` after statement I returns), and
//! the harness kills the child. The checks after each kill:
//!
//! - the database opens;
//! - the tables (which exist, and their rows as multisets) equal the
//!   model after some statement K of the script, where K is at least the
//!   last acknowledged statement that had to be durable (a commit under
//!   `synchronous_commit = on`, a CHECKPOINT, or a commit that dropped or
//!   truncated a table, which is synchronous whatever the setting) and at
//!   most one past the last acknowledged statement;
//! - `count(*)` (which may read the visibility map's counts) agrees with a
//!   full scan, and the database takes new writes and opens again.
//!
//! Tables made by CREATE TABLE have a primary key on `id` (ids are unique
//! in every table), so VACUUM takes its two passes with an index bulk
//! delete between; after each kill `bt_index_check` must find the index
//! sound and every row in it.
//!
//! Half the lives also run VACUUM, ANALYZE and CHECKPOINT in a second
//! session beside the script, at random moments; after a third of the
//! kills a second child is killed while it recovers, before the checks.
//!
//! Each command tag the child reports is checked against the model too
//! (`UPDATE 12`, `COPY 300`, ...), so the model cannot drift from what
//! the database did. A failure names the seed; `HEAPDB_TORTURE_SEED`
//! replays one.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use heapdb::settings::Settings;
use heapdb::{Database, Session};

/// The environment variable that makes a process the child.
pub const CHILD_ENV: &str = "HEAPDB_TORTURE_CHILD";

/// Names tables are drawn from.
const NAMES: [&str; 4] = ["t0", "t1", "t2", "t3"];

/// Rows a table may reach (larger statements are skipped).
const MAX_ROWS: usize = 12_000;

/// splitmix64.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The seed of round `round` of a run starting at `base`.
pub fn round_seed(base: u64, round: u64) -> u64 {
    Rng::new(base.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ round).next()
}

/// A table's rows, sorted (a multiset).
type Rows = Arc<Vec<(i32, i32)>>;

/// The database as the model sees it: table name -> rows.
pub type State = BTreeMap<String, Rows>;

/// One statement of a script and what it means for the model.
#[derive(Debug, Clone)]
struct Stmt {
    sql: String,
    /// The command tag it must answer.
    tag: String,
    /// The committed state after it (equal to the one before unless it
    /// commits a change).
    after: Arc<State>,
    /// Once acknowledged, the state after it must survive a crash.
    durable: bool,
}

/// Plans a script: its statements and the files its COPYs read.
struct Planner<'a> {
    rng: Rng,
    scratch: &'a Path,
    committed: State,
    /// The block's own view while inside BEGIN.
    pending: Option<State>,
    /// The block drops or truncates a table (its commit is synchronous).
    block_drops: bool,
    sync_on: bool,
    next_id: i32,
    out: Vec<Stmt>,
    copies: usize,
    life: u32,
}

fn sorted(mut v: Vec<(i32, i32)>) -> Rows {
    v.sort_unstable();
    Arc::new(v)
}

impl<'a> Planner<'a> {
    fn view(&self) -> &State {
        self.pending.as_ref().unwrap_or(&self.committed)
    }

    fn view_mut(&mut self) -> &mut State {
        self.pending.as_mut().unwrap_or(&mut self.committed)
    }

    fn push(&mut self, sql: String, tag: String, changes: bool, drops: bool) {
        let in_block = self.pending.is_some();
        if in_block {
            self.block_drops |= drops;
        }
        let durable = !in_block && ((changes && self.sync_on) || drops);
        self.out.push(Stmt {
            sql,
            tag,
            after: Arc::new(self.committed.clone()),
            durable,
        });
    }

    fn pick_table(&mut self) -> Option<String> {
        let names: Vec<String> = self.view().keys().cloned().collect();
        if names.is_empty() {
            None
        } else {
            Some(names[self.rng.below(names.len() as u64) as usize].clone())
        }
    }

    fn create(&mut self) -> bool {
        let free: Vec<&str> = NAMES
            .iter()
            .copied()
            .filter(|n| !self.view().contains_key(*n))
            .collect();
        if free.is_empty() {
            return false;
        }
        let name = free[self.rng.below(free.len() as u64) as usize].to_string();
        self.view_mut().insert(name.clone(), Arc::new(Vec::new()));
        self.push(
            format!("CREATE TABLE {name} (id int PRIMARY KEY, v int)"),
            "CREATE TABLE".into(),
            true,
            false,
        );
        true
    }

    /// CREATE TABLE AS from a table (its files filled without logging,
    /// written and synced before the commit).
    fn create_as(&mut self, from: String) -> bool {
        let free: Vec<&str> = NAMES
            .iter()
            .copied()
            .filter(|n| !self.view().contains_key(*n))
            .collect();
        if free.is_empty() {
            return false;
        }
        let name = free[self.rng.below(free.len() as u64) as usize].to_string();
        let m = [1, 2, 3][self.rng.below(3) as usize];
        let rows: Vec<(i32, i32)> = self.view()[&from]
            .iter()
            .copied()
            .filter(|(id, _)| id % m == 0)
            .collect();
        let n = rows.len();
        self.view_mut().insert(name.clone(), sorted(rows));
        self.push(
            format!("CREATE TABLE {name} AS SELECT id, v FROM {from} WHERE id % {m} = 0"),
            format!("SELECT {n}"),
            true,
            false,
        );
        true
    }

    fn drop_table(&mut self, name: String) {
        self.view_mut().remove(&name);
        self.push(
            format!("DROP TABLE {name}"),
            "DROP TABLE".into(),
            true,
            true,
        );
    }

    fn truncate(&mut self, name: String) {
        self.view_mut().insert(name.clone(), Arc::new(Vec::new()));
        self.push(
            format!("TRUNCATE {name}"),
            "TRUNCATE TABLE".into(),
            true,
            true,
        );
    }

    fn add_rows(&mut self, name: &str, rows: Vec<(i32, i32)>) {
        let mut all = self.view()[name].to_vec();
        all.extend(rows);
        self.view_mut().insert(name.to_string(), sorted(all));
    }

    fn copy(&mut self, name: String) {
        let n = if self.rng.below(3) == 0 {
            2000 + self.rng.below(4000) as i32
        } else {
            1 + self.rng.below(400) as i32
        };
        if self.view()[&name].len() + n as usize > MAX_ROWS {
            return self.delete(name);
        }
        let v = self.rng.below(100) as i32;
        let rows: Vec<(i32, i32)> = (0..n).map(|i| (self.next_id + i, v)).collect();
        self.next_id += n;
        let path = self
            .scratch
            .join(format!("copy_{}_{}.csv", self.life, self.copies));
        self.copies += 1;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("csv file"));
        for (id, v) in &rows {
            writeln!(f, "{id},{v}").expect("csv write");
        }
        f.flush().expect("csv flush");
        self.add_rows(&name, rows);
        self.push(
            format!("COPY {name} FROM '{}' WITH (FORMAT csv)", path.display()),
            format!("COPY {n}"),
            true,
            false,
        );
    }

    fn insert_values(&mut self, name: String) {
        let n = 1 + self.rng.below(8) as i32;
        let v = self.rng.below(100) as i32;
        let rows: Vec<(i32, i32)> = (0..n).map(|i| (self.next_id + i, v)).collect();
        self.next_id += n;
        let vals: Vec<String> = rows.iter().map(|(a, b)| format!("({a}, {b})")).collect();
        self.add_rows(&name, rows);
        self.push(
            format!("INSERT INTO {name} VALUES {}", vals.join(", ")),
            format!("INSERT 0 {n}"),
            true,
            false,
        );
    }

    fn insert_select(&mut self, to: String) {
        let Some(from) = self.pick_table() else {
            return;
        };
        let m = [2, 3, 5][self.rng.below(3) as usize];
        let r = self.rng.below(m as u64) as i32;
        // Ids stay unique in every table (CREATE TABLE gives a primary
        // key): the copies are shifted past every id handed out so far.
        let src: Vec<i32> = self.view()[&from]
            .iter()
            .filter(|(id, _)| id % m == r)
            .map(|&(id, _)| id)
            .collect();
        let (lo, hi) = (
            src.iter().copied().min().unwrap_or(0),
            src.iter().copied().max().unwrap_or(0),
        );
        if i64::from(self.next_id) + i64::from(hi) - i64::from(lo) > i64::from(i32::MAX / 2) {
            return self.insert_values(to);
        }
        let d = self.next_id - lo;
        let picked: Vec<(i32, i32)> = self.view()[&from]
            .iter()
            .filter(|(id, _)| id % m == r)
            .map(|&(id, v)| (id + d, v + 1))
            .collect();
        if self.view()[&to].len() + picked.len() > MAX_ROWS {
            return self.delete(to);
        }
        if !picked.is_empty() {
            self.next_id += hi - lo + 1;
        }
        let n = picked.len();
        self.add_rows(&to, picked);
        self.push(
            format!("INSERT INTO {to} SELECT id + {d}, v + 1 FROM {from} WHERE id % {m} = {r}"),
            format!("INSERT 0 {n}"),
            n > 0,
            false,
        );
    }

    fn update(&mut self, name: String) {
        let m = [2, 3, 7][self.rng.below(3) as usize];
        let r = self.rng.below(m as u64) as i32;
        let mut n = 0;
        let rows: Vec<(i32, i32)> = self.view()[&name]
            .iter()
            .map(|&(id, v)| {
                if id % m == r {
                    n += 1;
                    (id, v + 1)
                } else {
                    (id, v)
                }
            })
            .collect();
        self.view_mut().insert(name.clone(), sorted(rows));
        self.push(
            format!("UPDATE {name} SET v = v + 1 WHERE id % {m} = {r}"),
            format!("UPDATE {n}"),
            n > 0,
            false,
        );
    }

    fn delete(&mut self, name: String) {
        let m = [2, 3, 5, 11][self.rng.below(4) as usize];
        let r = self.rng.below(m as u64) as i32;
        let before = self.view()[&name].len();
        let rows: Vec<(i32, i32)> = self.view()[&name]
            .iter()
            .copied()
            .filter(|(id, _)| id % m != r)
            .collect();
        let n = before - rows.len();
        self.view_mut().insert(name.clone(), Arc::new(rows));
        self.push(
            format!("DELETE FROM {name} WHERE id % {m} = {r}"),
            format!("DELETE {n}"),
            n > 0,
            false,
        );
    }

    /// One statement that reads or writes a table (creating one if none).
    fn table_statement(&mut self) {
        let Some(name) = self.pick_table() else {
            self.create();
            return;
        };
        match self.rng.below(100) {
            0..=4 => {
                if !self.create() {
                    self.insert_values(name)
                }
            }
            5..=7 => {
                if !self.create_as(name.clone()) {
                    self.update(name)
                }
            }
            8..=13 => self.drop_table(name),
            14..=23 => self.truncate(name),
            24..=41 => self.copy(name),
            42..=56 => self.insert_values(name),
            57..=67 => self.insert_select(name),
            68..=81 => self.update(name),
            _ => self.delete(name),
        }
    }

    fn block(&mut self) {
        self.pending = Some(self.committed.clone());
        self.block_drops = false;
        self.push("BEGIN".into(), "BEGIN".into(), false, false);
        for _ in 0..1 + self.rng.below(4) {
            self.table_statement();
        }
        let state = self.pending.take().expect("in a block");
        if self.rng.below(5) == 0 {
            self.push("ROLLBACK".into(), "ROLLBACK".into(), false, false);
        } else {
            self.committed = state;
            let drops = self.block_drops;
            self.push("COMMIT".into(), "COMMIT".into(), true, drops);
        }
    }

    fn statement(&mut self) {
        match self.rng.below(100) {
            0..=5 => {
                let sql = match (self.rng.below(3), self.pick_table()) {
                    (0, Some(t)) => format!("VACUUM {t}"),
                    (1, Some(t)) => format!("VACUUM FREEZE {t}"),
                    _ => "VACUUM".to_string(),
                };
                self.push(sql, "VACUUM".into(), false, false);
            }
            6..=9 => self.push("CHECKPOINT".into(), "CHECKPOINT".into(), false, true),
            10..=14 => {
                self.sync_on = self.rng.below(2) == 0;
                let sql = format!(
                    "SET synchronous_commit = {}",
                    if self.sync_on { "on" } else { "off" }
                );
                self.push(sql, "SET".into(), false, false);
            }
            15..=24 => self.block(),
            _ => self.table_statement(),
        }
    }
}

/// What the child needs to run a life.
struct Life {
    script: Vec<Stmt>,
    /// The state the life starts from.
    start: Arc<State>,
}

fn plan_life(seed: u64, life: u32, start: &State, next_id: &mut i32, scratch: &Path) -> Life {
    let mut rng = Rng::new(seed.wrapping_add(u64::from(life) << 32));
    let sync_on = rng.below(2) == 0;
    let len = 60 + rng.below(140) as usize;
    let mut p = Planner {
        rng,
        scratch,
        committed: start.clone(),
        pending: None,
        block_drops: false,
        sync_on,
        next_id: *next_id,
        out: Vec::new(),
        copies: 0,
        life,
    };
    let sql = format!(
        "SET synchronous_commit = {}",
        if sync_on { "on" } else { "off" }
    );
    p.push(sql, "SET".into(), false, false);
    // Start with a loaded table more often than not: the interesting
    // crashes need pages written before a checkpoint and changed after.
    if p.rng.below(3) != 0 {
        let name = match p.pick_table() {
            Some(t) => t,
            None => {
                p.create();
                p.pick_table().expect("just created")
            }
        };
        p.copy(name);
        p.push("CHECKPOINT".into(), "CHECKPOINT".into(), false, true);
    }
    while p.out.len() < len {
        p.statement();
    }
    *next_id = p.next_id;
    Life {
        script: p.out,
        start: Arc::new(start.clone()),
    }
}

/// Settings of both child and checker: a small pool (pages are evicted,
/// written under the WAL rule, all the time) and frequent checkpoints.
pub fn settings() -> Settings {
    let mut s = Settings::default();
    s.set_at_open("max_wal_size", "2MB").expect("max_wal_size");
    s.set_at_open("shared_buffers", "1MB")
        .expect("shared_buffers");
    s
}

/// The child: runs the script in `HEAPDB_TORTURE_CHILD`
/// (`dir|script|background seed`, 0 for none) until it ends or the
/// process is killed. Returns false when the
/// variable is not set.
pub fn child_main() -> bool {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return false;
    };
    let mut parts = spec.split('|');
    let (dir, script) = (parts.next().expect("dir"), parts.next().expect("script"));
    let background: u64 = parts.next().and_then(|b| b.parse().ok()).unwrap_or(0);
    let script = std::fs::read_to_string(script).expect("script file");
    let out = std::io::stdout();
    let say = |line: String| {
        let mut o = out.lock();
        writeln!(o, "{line}").expect("stdout");
        o.flush().expect("stdout flush");
    };
    let db = match Database::open_with(dir, settings()) {
        Ok(db) => db,
        Err(e) => {
            say(format!("error open: {e}"));
            std::process::exit(3);
        }
    };
    let mut s = db.session();
    if background != 0 {
        maintenance(&db, background);
    }
    say("ready".into());
    for (i, sql) in script.lines().enumerate() {
        say(format!("start {i}"));
        match s.execute(sql) {
            Ok(r) => say(format!("ack {i} {}", r.tag)),
            Err(e) => {
                say(format!("error {i} {sql}: {e}"));
                std::process::exit(3);
            }
        }
    }
    say("done".into());
    // Wait to be killed: the harness decides when the life ends. A
    // harness gone (its end of the pipe closed) ends the child too.
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let mut o = out.lock();
        if writeln!(o, "idle").and_then(|_| o.flush()).is_err() {
            std::process::exit(0);
        }
    }
}

/// Starts a thread that runs VACUUM, ANALYZE and CHECKPOINT beside the
/// script, in a session of its own (they change no rows, so the model
/// holds). An error other than a named table missing is reported as the
/// child's: neither a deadlock nor a serialization failure may come of
/// them, nor of the script's DDL beside them.
fn maintenance(db: &Database, seed: u64) {
    let mut s = db.session();
    std::thread::spawn(move || {
        let mut rng = Rng::new(seed);
        loop {
            std::thread::sleep(Duration::from_millis(rng.below(40)));
            let t = NAMES[rng.below(NAMES.len() as u64) as usize];
            let sql = match rng.below(13) {
                0..=1 => "CHECKPOINT".to_string(),
                2 => "VACUUM".to_string(),
                3 => format!("VACUUM FREEZE {t}"),
                10 => "ANALYZE".to_string(),
                11 => format!("ANALYZE {t}"),
                12 => format!("VACUUM ANALYZE {t}"),
                _ => format!("VACUUM {t}"),
            };
            if let Err(e) = s.execute(&sql) {
                if !e.message.contains("does not exist") {
                    let mut o = std::io::stdout().lock();
                    let _ = writeln!(o, "error background {sql}: {e}");
                    let _ = o.flush();
                    std::process::exit(3);
                }
            }
        }
    });
}

/// The tables of a recovered database, checked for internal agreement.
fn read_state(s: &mut Session) -> Result<State, String> {
    let mut st = State::new();
    for name in NAMES {
        let r = match s.execute(&format!("SELECT id, v FROM {name}")) {
            Ok(r) => r,
            Err(e) if e.message.contains("does not exist") => continue,
            Err(e) => return Err(format!("SELECT from {name}: {e}")),
        };
        let mut rows = Vec::with_capacity(r.rows.len());
        for row in &r.rows {
            let f = |i: usize| -> Result<i32, String> {
                row[i]
                    .to_string()
                    .parse()
                    .map_err(|_| format!("{name}: bad value {}", row[i]))
            };
            rows.push((f(0)?, f(1)?));
        }
        let count = s
            .execute(&format!("SELECT count(*) FROM {name}"))
            .map_err(|e| format!("count(*) of {name}: {e}"))?;
        let c = count.rows[0][0].to_string();
        if c != rows.len().to_string() {
            return Err(format!(
                "{name}: count(*) says {c}, a scan returns {} rows",
                rows.len()
            ));
        }
        // A table made by CREATE TABLE has a primary key: its structure
        // is sound and it finds every row (by key and TID).
        match s.execute(&format!("SELECT * FROM bt_index_check('{name}_pkey')")) {
            Ok(r) => {
                let heap = r.rows[0][2].to_string();
                if heap != rows.len().to_string() {
                    return Err(format!(
                        "{name}_pkey finds {heap} rows, a scan returns {}",
                        rows.len()
                    ));
                }
            }
            Err(e) if e.message.contains("does not exist") => {}
            Err(e) => return Err(format!("bt_index_check of {name}_pkey: {e}")),
        }
        st.insert(name.to_string(), sorted(rows));
    }
    Ok(st)
}

fn describe(st: &State) -> String {
    st.iter()
        .map(|(n, r)| format!("{n}:{}", r.len()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How a life picks its moment to kill.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    /// Milliseconds after the child is ready.
    Delay(u64),
    /// Just after statement I starts (plus a few hundred microseconds).
    Start(usize, u64),
    /// Milliseconds after the child starts, ready or not: a kill during
    /// recovery.
    Recovering(u64),
}

/// What one round did.
#[derive(Debug, Default, Clone, Copy)]
pub struct RoundStats {
    pub lives: u32,
    pub statements_acked: usize,
    pub ran_to_end: u32,
}

/// Runs one round: a fresh data directory under `base` and `lives` lives,
/// each killed with SIGKILL. `child` makes the command that runs
/// [`child_main`]. The error names the seed and what went wrong.
pub fn round(
    seed: u64,
    lives: u32,
    base: &Path,
    child: &dyn Fn() -> Command,
    verbose: bool,
) -> Result<RoundStats, String> {
    let fail = |life: u32, what: String| format!("torture seed {seed} life {life}: {what}");
    let dir = base.join(format!("db{seed:x}"));
    let scratch = base.join(format!("scratch{seed:x}"));
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let mut state = State::new();
    let mut next_id = 1;
    let mut stats = RoundStats::default();
    let mut rng = Rng::new(seed ^ 0xC0FFEE);
    for life in 0..lives {
        let plan = plan_life(seed, life, &state, &mut next_id, &scratch);
        let script_path = scratch.join(format!("script{life}.sql"));
        let text: String = plan.script.iter().map(|s| format!("{}\n", s.sql)).collect();
        std::fs::write(&script_path, text).map_err(|e| e.to_string())?;
        let kill_at = if rng.below(3) == 0 {
            let i = rng.below(plan.script.len() as u64) as usize;
            KillAt::Start(i, rng.below(2000))
        } else {
            KillAt::Delay(rng.below(250))
        };
        // Half the lives run VACUUM, ANALYZE and CHECKPOINT beside the script.
        let background = if rng.below(2) == 0 { rng.next() | 1 } else { 0 };
        let mut cmd = child();
        cmd.env(
            CHILD_ENV,
            format!("{}|{}|{background}", dir.display(), script_path.display()),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let (acks, done) = run_child(cmd, kill_at).map_err(|e| fail(life, e))?;
        // Now and then a second child only recovers, and is killed while
        // it does: recovery must be as good the second time.
        if rng.below(3) == 0 {
            let empty = scratch.join("empty.sql");
            std::fs::write(&empty, "").map_err(|e| e.to_string())?;
            let mut cmd = child();
            cmd.env(
                CHILD_ENV,
                format!("{}|{}|0", dir.display(), empty.display()),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
            let kill = KillAt::Recovering(rng.below(60));
            run_child(cmd, kill).map_err(|e| fail(life, format!("{kill:?}: {e}")))?;
        }
        stats.lives += 1;
        stats.statements_acked += acks.len();
        stats.ran_to_end += done as u32;
        // Every tag agrees with the model.
        for (i, tag) in &acks {
            let want = &plan.script[*i].tag;
            if tag != want {
                return Err(fail(
                    life,
                    format!(
                        "statement {i} `{}` answered `{tag}`, the model says `{want}`",
                        plan.script[*i].sql
                    ),
                ));
            }
        }
        let last_ack = acks.last().map(|(i, _)| *i);
        let floor = acks
            .iter()
            .rev()
            .find(|(i, _)| plan.script[*i].durable)
            .map(|(i, _)| *i);
        // The states allowed: after statement K for floor <= K <= last+1
        // (K = none: the life's starting state, if nothing was durable).
        let lo = floor.map_or(0, |f| f + 1);
        let hi = last_ack.map_or(0, |a| a + 1).min(plan.script.len() - 1) + 1;
        let mut allowed: Vec<(Option<usize>, &State)> = Vec::new();
        if floor.is_none() {
            allowed.push((None, &plan.start));
        }
        for k in lo.saturating_sub(1)..hi {
            if floor.map_or(true, |f| k >= f) {
                allowed.push((Some(k), &plan.script[k].after));
            }
        }
        let db = Database::open_with(&dir, settings())
            .map_err(|e| fail(life, format!("the database does not open: {e}")))?;
        let mut s = db.session();
        let actual = read_state(&mut s).map_err(|e| fail(life, e))?;
        if verbose {
            eprintln!(
                "seed {seed} life {life}: {kill_at:?}, {} of {} acked (durable up to {floor:?}), \
                 recovered {}",
                acks.len(),
                plan.script.len(),
                describe(&actual)
            );
        }
        if !allowed.iter().any(|(_, st)| **st == actual) {
            let options: Vec<String> = allowed
                .iter()
                .map(|(k, st)| format!("after {k:?}: {}", describe(st)))
                .collect();
            return Err(fail(
                life,
                format!(
                    "{kill_at:?}: the recovered tables ({}) match no allowed state \
                     (last ack {last_ack:?}, durable up to {floor:?}); allowed: {}",
                    describe(&actual),
                    options.join("; ")
                ),
            ));
        }
        // New writes work, and the database opens again after them.
        s.execute("CREATE TABLE probe (x int)")
            .and_then(|_| s.execute("INSERT INTO probe VALUES (1)"))
            .and_then(|_| s.execute("DROP TABLE probe"))
            .map_err(|e| fail(life, format!("writing after recovery: {e}")))?;
        drop(s);
        db.crash();
        let db = Database::open_with(&dir, settings())
            .map_err(|e| fail(life, format!("the database does not open twice: {e}")))?;
        let again = read_state(&mut db.session()).map_err(|e| fail(life, e))?;
        if again != actual {
            return Err(fail(life, "the second recovery changed the tables".into()));
        }
        drop(db);
        state = actual;
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(stats)
}

/// Runs the child until the kill moment; returns the acknowledged
/// statements (index, tag) and whether it finished the script.
fn run_child(mut cmd: Command, kill_at: KillAt) -> Result<(Vec<(usize, String)>, bool), String> {
    let mut child = cmd.spawn().map_err(|e| format!("spawn: {e}"))?;
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut acks = Vec::new();
    let mut ready_at = None;
    let mut done = false;
    let mut error = None;
    let started = Instant::now();
    let handle = |l: &str, acks: &mut Vec<(usize, String)>, error: &mut Option<String>| {
        if let Some(rest) = l.strip_prefix("ack ") {
            let (i, tag) = rest.split_once(' ').unwrap_or((rest, ""));
            acks.push((i.parse::<usize>().unwrap_or(usize::MAX), tag.to_string()));
        } else if l.starts_with("error ") {
            *error = Some(l.to_string());
        }
    };
    loop {
        let line = match rx.recv_timeout(Duration::from_millis(2)) {
            Ok(l) => Some(l),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        if let Some(l) = &line {
            handle(l, &mut acks, &mut error);
            if l.ends_with("ready") {
                ready_at = Some(Instant::now());
            }
            if l == "done" {
                done = true;
            }
        }
        let fire = match (kill_at, &line, ready_at) {
            _ if done || error.is_some() => true,
            (KillAt::Delay(ms), _, Some(t)) => t.elapsed() >= Duration::from_millis(ms),
            (KillAt::Recovering(ms), _, _) => started.elapsed() >= Duration::from_millis(ms),
            (KillAt::Start(i, us), Some(l), _) => {
                let hit = l
                    .strip_prefix("start ")
                    .and_then(|n| n.parse::<usize>().ok())
                    .is_some_and(|n| n >= i);
                if hit {
                    std::thread::sleep(Duration::from_micros(us));
                }
                hit
            }
            _ => false,
        };
        if fire || started.elapsed() > Duration::from_secs(20) {
            break;
        }
    }
    let _ = child.kill();
    let status = child.wait().map_err(|e| format!("wait: {e}"))?;
    reader.join().map_err(|_| "reader thread panicked")?;
    // Acknowledgements printed before the kill may still be in the pipe.
    for l in rx.try_iter() {
        handle(&l, &mut acks, &mut error);
    }
    if let Some(e) = error {
        return Err(format!("the child failed: {e}"));
    }
    if ready_at.is_none() && !matches!(kill_at, KillAt::Recovering(_)) {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        return Err(format!("the child never got ready ({status}): {err}"));
    }
    if acks.iter().any(|(i, _)| *i == usize::MAX) {
        return Err("a malformed acknowledgement".into());
    }
    Ok((acks, done))
}

/// Rounds from `HEAPDB_TORTURE_ROUNDS`, else `default`.
pub fn rounds_from_env(default: u64) -> u64 {
    std::env::var("HEAPDB_TORTURE_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(default)
}

/// Seeds to run: `HEAPDB_TORTURE_SEED` (comma-separated) replaces the
/// `rounds` seeds derived from `base`.
pub fn seeds(base: u64, rounds: u64) -> Vec<u64> {
    if let Ok(s) = std::env::var("HEAPDB_TORTURE_SEED") {
        let v: Vec<u64> = s.split(',').filter_map(|x| x.trim().parse().ok()).collect();
        if !v.is_empty() {
            return v;
        }
    }
    (0..rounds).map(|r| round_seed(base, r)).collect()
}

/// A temporary directory for a run (removed with the value).
pub fn temp_base() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}
