//! The crash harness: a child process runs transactions on a database and
//! reports each acknowledged commit; the harness kills it with SIGKILL at a
//! random moment (or right after it starts a CHECKPOINT or a bulk COPY),
//! reopens the data directory (recovery), and checks the table against a
//! model of the transactions:
//!
//! - `synchronous_commit = on`: the table equals the model after the last
//!   acknowledged commit, or after the one commit that may have finished
//!   before its acknowledgement was printed; nothing rolled back shows;
//! - `synchronous_commit = off`: the table equals the model after *some*
//!   prefix of the commits (a crash may lose the last ones, never half of
//!   one);
//! - no checksum error anywhere (every row is read), and new writes work.
//!
//! The child is this test binary itself, run with `--exact crash_child
//! --ignored` and its instructions in the environment, so the harness
//! needs no other binary. Rounds: `HEAPDB_CRASH_ROUNDS` (default 50 in
//! total over the tests here); seeds: `HEAPDB_CRASH_SEEDS` (comma-separated,
//! replacing each test's default seeds).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use heapdb::settings::Settings;
use heapdb::{Database, Session};

mod common;

const CHILD_ENV: &str = "HEAPDB_CRASH_CHILD";

/// splitmix64: a small deterministic generator shared by child and harness.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One statement of a transaction, with its effect on the model.
#[derive(Debug, Clone)]
enum Op {
    /// INSERT of a few rows.
    Insert(Vec<(i32, i32)>),
    /// `UPDATE t SET v = v + 1 WHERE id % 13 = r`.
    Update(i32),
    /// `DELETE FROM t WHERE id % 17 = r`.
    Delete(i32),
    /// COPY of rows `from..from + n` with value `v` from a CSV file.
    Bulk { from: i32, n: i32, v: i32 },
}

/// What step `k` of the workload does.
#[derive(Debug, Clone)]
enum Step {
    /// A transaction: its statements and whether it commits.
    Txn(Vec<Op>, bool),
    /// A CHECKPOINT statement.
    Checkpoint,
}

/// Plans step `k`; `next_id` is the next unused row id.
fn plan(seed: u64, k: u64, next_id: &mut i32) -> Step {
    let mut r = Rng::new(seed.wrapping_mul(1_000_003).wrapping_add(k));
    if r.below(25) == 0 {
        return Step::Checkpoint;
    }
    let mut ops = Vec::new();
    for _ in 0..1 + r.below(3) {
        let op = match r.below(100) {
            0..=49 => {
                let n = 1 + r.below(5) as i32;
                let rows = (0..n).map(|i| (*next_id + i, k as i32)).collect();
                *next_id += n;
                Op::Insert(rows)
            }
            50..=69 => Op::Update(r.below(13) as i32),
            70..=91 => Op::Delete(r.below(17) as i32),
            _ => {
                let n = 500 + r.below(3000) as i32;
                let op = Op::Bulk {
                    from: *next_id,
                    n,
                    v: k as i32,
                };
                *next_id += n;
                op
            }
        };
        ops.push(op);
    }
    Step::Txn(ops, r.below(5) != 0)
}

fn apply(model: &mut BTreeMap<i32, i32>, op: &Op) {
    match op {
        Op::Insert(rows) => model.extend(rows.iter().copied()),
        Op::Update(r) => model
            .iter_mut()
            .filter(|(id, _)| *id % 13 == *r)
            .for_each(|(_, v)| *v += 1),
        Op::Delete(r) => model.retain(|id, _| id % 17 != *r),
        Op::Bulk { from, n, v } => model.extend((*from..from + n).map(|id| (id, *v))),
    }
}

fn sql(op: &Op, dir: &Path) -> String {
    match op {
        Op::Insert(rows) => {
            let vals: Vec<String> = rows.iter().map(|(a, b)| format!("({a}, {b})")).collect();
            format!("INSERT INTO t VALUES {}", vals.join(", "))
        }
        Op::Update(r) => format!("UPDATE t SET v = v + 1 WHERE id % 13 = {r}"),
        Op::Delete(r) => format!("DELETE FROM t WHERE id % 17 = {r}"),
        Op::Bulk { from, n, v } => {
            let path = dir.join("bulk.csv");
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            for id in *from..from + n {
                writeln!(f, "{id},{v}").unwrap();
            }
            f.flush().unwrap();
            format!("COPY t FROM '{}' WITH (FORMAT csv)", path.display())
        }
    }
}

fn settings() -> Settings {
    let mut s = Settings::default();
    s.set_at_open("max_wal_size", "2MB").unwrap();
    // A small pool: pages are evicted (written under the WAL rule) all the time.
    s.set_at_open("shared_buffers", "1MB").unwrap();
    s
}

/// The child: runs the workload from step `k` until killed.
#[test]
#[ignore = "the crash harness runs this as its child process"]
fn crash_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let dir = Path::new(parts[0]);
    let seed: u64 = parts[1].parse().unwrap();
    let mut k: u64 = parts[2].parse().unwrap();
    let mut next_id: i32 = parts[3].parse().unwrap();
    let async_commit = parts[4] == "off";
    let scratch = Path::new(parts[5]);
    let db = Database::open_with(dir, settings()).unwrap();
    let mut s = db.session();
    if async_commit {
        s.execute("SET synchronous_commit = off").unwrap();
    }
    let out = std::io::stdout();
    let say = |line: String| {
        let mut o = out.lock();
        writeln!(o, "{line}").unwrap();
        o.flush().unwrap();
    };
    say("ready".into());
    loop {
        match plan(seed, k, &mut next_id) {
            Step::Checkpoint => {
                say(format!("checkpoint {k}"));
                s.execute("CHECKPOINT").unwrap();
            }
            Step::Txn(ops, commit) => {
                s.execute("BEGIN").unwrap();
                for op in &ops {
                    let q = sql(op, scratch);
                    if matches!(op, Op::Bulk { .. }) {
                        say(format!("bulk {k}"));
                    }
                    s.execute(&q).unwrap_or_else(|e| panic!("{q}: {e}"));
                }
                s.execute(if commit { "COMMIT" } else { "ROLLBACK" })
                    .unwrap();
                if commit {
                    say(format!("ack {k}"));
                }
            }
        }
        k += 1;
    }
}

fn table(s: &mut Session) -> BTreeMap<i32, i32> {
    let r = s.execute("SELECT id, v FROM t").unwrap();
    let mut m = BTreeMap::new();
    for row in r.rows {
        let id = row[0].to_string().parse().unwrap();
        let v = row[1].to_string().parse().unwrap();
        assert!(m.insert(id, v).is_none(), "row {id} appears twice");
    }
    m
}

/// How a round picks its moment to kill.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    /// After a random delay.
    Random(u64),
    /// Just after the child starts a CHECKPOINT.
    Checkpoint,
    /// Just after the child starts a bulk COPY.
    Bulk,
}

/// Runs `rounds` kill/recover/verify rounds on one data directory.
fn harness(seed: u64, rounds: u64, async_commit: bool) {
    let dir = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    {
        let db = Database::open_with(dir.path(), settings()).unwrap();
        db.session()
            .execute("CREATE TABLE t (id int, v int)")
            .unwrap();
    }
    let mut model = BTreeMap::new();
    let (mut k, mut next_id) = (0u64, 1i32);
    let mut rng = Rng::new(seed ^ 0xC0FFEE);
    let mut acked_total = 0;
    for round in 0..rounds {
        let kill_at = match rng.below(6) {
            0 => KillAt::Checkpoint,
            1 => KillAt::Bulk,
            _ => KillAt::Random(20 + rng.below(400)),
        };
        let mut child = common::child_test(
            "crash_child",
            CHILD_ENV,
            format!(
                "{}|{seed}|{k}|{next_id}|{}|{}",
                dir.path().display(),
                if async_commit { "off" } else { "on" },
                scratch.path().display()
            ),
        )
        .spawn()
        .unwrap();
        let stdout = child.stdout.take().unwrap();
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
        let started = Instant::now();
        let mut ready_at = None;
        let deadline = Duration::from_millis(1500);
        loop {
            let line = match rx.recv_timeout(Duration::from_millis(5)) {
                Ok(l) => Some(l),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let out = child.wait_with_output().unwrap();
                    panic!(
                        "child exited by itself ({:?}): {}",
                        out.status,
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            };
            if let Some(l) = &line {
                if l.ends_with("ready") {
                    ready_at = Some(Instant::now());
                } else if let Some(a) = l.strip_prefix("ack ") {
                    acks.push(a.parse::<u64>().unwrap());
                }
            }
            let fire = match (kill_at, &line, ready_at) {
                (KillAt::Random(ms), _, Some(t)) => t.elapsed() >= Duration::from_millis(ms),
                (KillAt::Checkpoint, Some(l), _) => l.starts_with("checkpoint "),
                (KillAt::Bulk, Some(l), _) => l.starts_with("bulk "),
                _ => false,
            };
            if fire || started.elapsed() > deadline {
                if !matches!(kill_at, KillAt::Random(_)) {
                    std::thread::sleep(Duration::from_micros(rng.below(3000)));
                }
                child.kill().unwrap();
                break;
            }
        }
        child.wait().unwrap();
        reader.join().unwrap();
        // Acknowledgements printed before the kill may still be in the pipe.
        for l in rx.try_iter() {
            if let Some(a) = l.strip_prefix("ack ") {
                acks.push(a.parse::<u64>().unwrap());
            }
        }
        acked_total += acks.len();
        if std::env::var_os("HEAPDB_CRASH_VERBOSE").is_some() {
            eprintln!(
                "seed {seed} round {round}: {kill_at:?}, {} acks in {:?}",
                acks.len(),
                started.elapsed()
            );
        }
        let last_ack = acks.last().copied();

        // Replay the plan: the states after each commit from step k on.
        let mut states = vec![(None, model.clone())];
        let mut id = next_id;
        let mut m = model.clone();
        let horizon = last_ack.map_or(k, |a| a + 1) + 200;
        for step in k..horizon {
            if let Step::Txn(ops, true) = plan(seed, step, &mut id) {
                for op in &ops {
                    apply(&mut m, op);
                }
                states.push((Some(step), m.clone()));
            }
        }

        let db = Database::open_with(dir.path(), settings()).unwrap();
        let mut s = db.session();
        let actual = table(&mut s);
        if async_commit {
            assert!(
                states.iter().any(|(_, st)| *st == actual),
                "seed {seed} round {round} ({kill_at:?}): the table matches no prefix of \
                 the commits (last ack {last_ack:?}, {} rows); {}",
                actual.len(),
                closest(&states, &actual)
            );
        } else {
            // Every acknowledged commit is there, and at most one more.
            let pos = states
                .iter()
                .position(|(st, _)| *st == last_ack)
                .expect("the last ack is a commit");
            let allowed = &states[pos..(pos + 2).min(states.len())];
            assert!(
                allowed.iter().any(|(_, st)| *st == actual),
                "seed {seed} round {round} ({kill_at:?}): the table is not the state after \
                 the last acknowledged commit {last_ack:?} or the next one ({} rows, expected {})",
                actual.len(),
                allowed[0].1.len()
            );
        }
        // New writes work.
        s.execute("INSERT INTO t VALUES (-1, 0)").unwrap();
        s.execute("DELETE FROM t WHERE id = -1").unwrap();
        model = actual;
        // Continue after the last step the child may have attempted.
        k = horizon;
        next_id = id;
        drop(s);
        if round % 2 == 0 {
            db.crash();
        } else {
            drop(db);
        }
    }
    assert!(acked_total > 0, "no commit was ever acknowledged");
}

/// Describes the state in `states` nearest to `actual` (fewest differing
/// rows) and a few of the differences, for a failure message.
fn closest(states: &[(Option<u64>, BTreeMap<i32, i32>)], actual: &BTreeMap<i32, i32>) -> String {
    let diff = |st: &BTreeMap<i32, i32>| {
        let mut d: Vec<(i32, Option<i32>, Option<i32>)> = st
            .iter()
            .filter(|(id, v)| actual.get(id) != Some(v))
            .map(|(id, v)| (*id, Some(*v), actual.get(id).copied()))
            .collect();
        d.extend(
            actual
                .iter()
                .filter(|(id, _)| !st.contains_key(id))
                .map(|(id, v)| (*id, None, Some(*v))),
        );
        d
    };
    let Some((step, d)) = states
        .iter()
        .map(|(step, st)| (step, diff(st)))
        .min_by_key(|(_, d)| d.len())
    else {
        return "no states".into();
    };
    format!(
        "nearest: the state after step {step:?}, {} rows differ (id, expected, actual): {:?}",
        d.len(),
        &d[..d.len().min(12)]
    )
}

fn rounds(default: u64) -> u64 {
    std::env::var("HEAPDB_CRASH_ROUNDS")
        .ok()
        .and_then(|r| r.parse::<u64>().ok())
        .map_or(default, |r| (r * default / 50).max(1))
}

/// The seeds to run: `HEAPDB_CRASH_SEEDS` (comma-separated) or `default`.
fn seeds(default: &[u64]) -> Vec<u64> {
    std::env::var("HEAPDB_CRASH_SEEDS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<u64>| !v.is_empty())
        .unwrap_or_else(|| default.to_vec())
}

#[test]
fn kill_during_synchronous_commits() {
    for seed in seeds(&[1, 2, 3]) {
        harness(seed, rounds(13), false);
    }
}

#[test]
fn kill_during_asynchronous_commits() {
    for seed in seeds(&[7]) {
        harness(seed, rounds(11), true);
    }
}
