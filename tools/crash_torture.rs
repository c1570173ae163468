//! Long runs of the crash torture (`tests/torture/mod.rs`): random DDL,
//! loads, DML, VACUUM and CHECKPOINT in a child process killed with
//! SIGKILL, reopened and checked against a model.
//!
//! ```text
//! cargo run --release --example crash_torture -- --rounds 1000 [--seed S] [--lives N] [-v]
//! ```
//!
//! `--seed S` picks the run's base seed (default 23, the test's); a
//! failing round prints its own seed, and `--only SEED` replays it. The
//! child is this binary itself (the environment tells it so).

#[path = "../tests/torture/mod.rs"]
mod torture;

use std::process::Command;
use std::time::Instant;

fn main() {
    if torture::child_main() {
        return;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut rounds, mut base, mut lives, mut verbose, mut only) =
        (30u64, 23u64, 2u32, false, None);
    let mut i = 0;
    while i < args.len() {
        let val = |i: usize| -> u64 {
            args.get(i + 1)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| usage(&format!("{} needs a number", args[i])))
        };
        match args[i].as_str() {
            "--rounds" => rounds = val(i),
            "--seed" => base = val(i),
            "--lives" => lives = val(i) as u32,
            "--only" => only = Some(val(i)),
            "-v" | "--verbose" => {
                verbose = true;
                i += 1;
                continue;
            }
            a => usage(&format!("unknown argument {a}")),
        }
        i += 2;
    }
    let seeds: Vec<u64> = match only {
        Some(s) => vec![s],
        None => (0..rounds).map(|r| torture::round_seed(base, r)).collect(),
    };
    let dir = torture::temp_base();
    let exe = std::env::current_exe().expect("own path");
    let child = || Command::new(&exe);
    let t0 = Instant::now();
    let (mut kills, mut acked, mut failures) = (0u64, 0usize, 0u64);
    for (r, seed) in seeds.iter().enumerate() {
        match torture::round(*seed, lives, dir.path(), &child, verbose) {
            Ok(st) => {
                kills += u64::from(st.lives);
                acked += st.statements_acked;
            }
            Err(e) => {
                failures += 1;
                eprintln!("round {r}: {e}");
            }
        }
        if (r + 1) % 50 == 0 {
            eprintln!(
                "{} rounds, {kills} kills, {acked} statements acknowledged, {failures} failures, {:.0?}",
                r + 1,
                t0.elapsed()
            );
        }
    }
    println!(
        "{} rounds, {kills} kills, {acked} statements acknowledged, {failures} failures, {:.1?}",
        seeds.len(),
        t0.elapsed()
    );
    if failures > 0 {
        std::process::exit(1);
    }
}

fn usage(msg: &str) -> ! {
    eprintln!("crash_torture: {msg}");
    eprintln!("usage: crash_torture [--rounds N] [--seed S] [--lives N] [--only SEED] [-v]");
    std::process::exit(2);
}
