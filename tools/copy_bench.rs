//! COPY benchmark: loading pgbench_accounts (aid int, bid int, abalance int,
//! filler char(84)) from a tab-separated file with COPY FROM, and writing the
//! table back out with COPY TO.
//!
//! Run: `cargo run --release --example copy_bench [-- --rows N] [--empty-filler]
//! [--input FILE] [--output FILE] [--only from] [--shared-buffers-mb MB]
//! [--vacuum] [--rounds N] [--fresh]`
//! (default 1,000,000 rows; the target's figure is for `--rows 5000000`). The
//! file holds what `examples/bench.rs` loads for `copy_in`: 84 blanks of
//! filler (what PostgreSQL's char(84) stores for pgbench's ''), about one
//! balance in ten non-zero; `--empty-filler` writes the filler empty, as
//! pgbench's client-side initialisation sends it (char(84) pads it). The
//! table is created in its own transaction before the COPY, as the bench
//! does, so the load is WAL-logged.
//!
//! `--vacuum` runs VACUUM ANALYZE and CHECKPOINT after the load (as the
//! bench does before its `copy_out` rounds); `--rounds N` COPY TO rounds
//! follow (default 2), each to `--output` (default a file in the temporary
//! directory, written over by each round as the bench's are; `--fresh`
//! removes it before each round, untimed).
//!
//! Prints wall-clock time, the process's CPU time (every thread: parsing,
//! page filling, the WAL writer, the kernel's share) and the calling
//! thread's. The machine is shared: CPU times are the fairer figures, and
//! `valgrind --tool=callgrind` instruction counts the repeatable ones.

use std::io::{BufWriter, Write};
use std::time::Instant;

use heapdb::Database;

/// The value after `--name`, if given.
fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn clock(id: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into `ts`, which outlives the call.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// (wall, process CPU, this thread's CPU) at one instant.
fn now() -> (Instant, f64, f64) {
    (
        Instant::now(),
        clock(libc::CLOCK_PROCESS_CPUTIME_ID),
        clock(libc::CLOCK_THREAD_CPUTIME_ID),
    )
}

fn report(what: &str, tag: &str, rows: u64, start: (Instant, f64, f64)) {
    let end = now();
    let wall = end.0.duration_since(start.0).as_secs_f64();
    let (proc_cpu, thread_cpu) = (end.1 - start.1, end.2 - start.2);
    println!(
        "{what}: {tag} in {wall:.3} s ({:.0} ns/row) | process CPU {proc_cpu:.3} s ({:.0} ns/row) | this thread {thread_cpu:.3} s",
        wall * 1e9 / rows as f64,
        proc_cpu * 1e9 / rows as f64,
    );
}

fn main() -> heapdb::Result<()> {
    let rows: u64 = arg("--rows")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let empty_filler = std::env::args().any(|a| a == "--empty-filler");
    let only = arg("--only").unwrap_or_default();
    let dir = tempfile::tempdir()?;
    // `--input FILE`: the data file, generated there only if it is missing
    // (so a profiler can watch the COPY alone).
    let input = arg("--input").map_or_else(|| dir.path().join("accounts.tsv"), Into::into);
    // `--output FILE`: where COPY TO writes (`/dev/null` leaves out the
    // file system).
    let output = arg("--output").map_or_else(|| dir.path().join("out.tsv"), Into::into);
    if !input.exists() {
        let mut w = BufWriter::new(std::fs::File::create(&input)?);
        let filler = if empty_filler { "" } else { &" ".repeat(84) };
        // The bench's balances: SplitMix64, about one in ten non-zero.
        let mut state = 0x5eed_u64;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for aid in 1..=rows {
            let balance = if next() % 10 == 0 {
                (next() % 10_001) as i64 - 5000
            } else {
                0
            };
            writeln!(w, "{aid}\t{}\t{balance}\t{filler}", (aid - 1) / 100_000 + 1)?;
        }
        w.flush()?;
    }
    let size = std::fs::metadata(&input)?.len();
    let settings = heapdb::settings::Settings {
        shared_buffers: arg("--shared-buffers-mb")
            .and_then(|v| v.parse::<i64>().ok())
            .map_or(heapdb::settings::Settings::default().shared_buffers, |mb| {
                mb * 128
            }),
        ..heapdb::settings::Settings::default()
    };
    let db = Database::open_with(dir.path().join("db"), settings)?;
    let mut s = db.session();
    s.execute(
        "CREATE TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler char(84))",
    )?;
    println!("{rows} rows, {:.1} MB file", size as f64 / 1e6);

    let t = now();
    let r = s.execute(&format!("COPY pgbench_accounts FROM '{}'", input.display()))?;
    report("COPY FROM", &r.tag, rows, t);

    if only == "from" {
        return Ok(());
    }
    if std::env::args().any(|a| a == "--vacuum") {
        // As the bench leaves the table before its COPY TO rounds.
        s.execute("VACUUM ANALYZE pgbench_accounts")?;
        s.execute("CHECKPOINT")?;
    }
    // The first COPY TO also sets the hint bits (without --vacuum); the
    // later ones are what the bench's warm runs measure.
    let rounds: usize = arg("--rounds").and_then(|v| v.parse().ok()).unwrap_or(2);
    // `--fresh`: each round writes a new file (the old one removed first,
    // untimed), as a first export to a path does.
    let fresh = std::env::args().any(|a| a == "--fresh");
    for i in 0..rounds {
        if fresh {
            let _ = std::fs::remove_file(&output);
        }
        let t = now();
        let r = s.execute(&format!("COPY pgbench_accounts TO '{}'", output.display()))?;
        report(&format!("COPY TO {}", i + 1), &r.tag, rows, t);
    }
    Ok(())
}
