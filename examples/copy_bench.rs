//! COPY benchmark: rows per second loading pgbench_accounts (aid int, bid
//! int, abalance int, filler char(84)) from a generated tab-separated file
//! with COPY FROM, and writing the table back out with COPY TO.
//!
//! Run: `cargo run --release --example copy_bench [-- --rows N]` (default
//! 1,000,000 rows; the figure is for `--rows 5000000`, where
//! PostgreSQL 15 takes about 7.7 s to load and 3.9 s to write here). The
//! file is made as pgbench's client-side initialisation sends it: an empty
//! filler, which char(84) pads. Prints wall-clock and this thread's CPU
//! time (the machine is shared; CPU time is the fairer figure).

use std::io::{BufWriter, Write};
use std::time::Instant;

use heapdb::Database;

fn rows_arg(default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--rows")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into `ts`, which outlives the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn main() -> heapdb::Result<()> {
    let rows = rows_arg(1_000_000);
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("accounts.tsv");
    let output = dir.path().join("out.tsv");
    {
        let mut w = BufWriter::new(std::fs::File::create(&input)?);
        for aid in 1..=rows {
            writeln!(w, "{aid}\t{}\t0\t", (aid - 1) / 100_000 + 1)?;
        }
        w.flush()?;
    }
    let size = std::fs::metadata(&input)?.len();
    let db = Database::open(dir.path().join("db"))?;
    let mut s = db.session();
    s.execute(
        "CREATE TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler char(84))",
    )?;

    let (t0, c0) = (Instant::now(), cpu_secs());
    let r = s.execute(&format!("COPY pgbench_accounts FROM '{}'", input.display()))?;
    let (took, cpu) = (t0.elapsed().as_secs_f64(), cpu_secs() - c0);
    println!(
        "COPY FROM: {} ({:.1} MB file) in {took:.3} s: {:.2} M rows/s | CPU {cpu:.3} s: {:.2} M rows/s",
        r.tag,
        size as f64 / 1e6,
        rows as f64 / took / 1e6,
        rows as f64 / cpu.max(1e-9) / 1e6
    );

    let (t0, c0) = (Instant::now(), cpu_secs());
    let r = s.execute(&format!("COPY pgbench_accounts TO '{}'", output.display()))?;
    let (took, cpu) = (t0.elapsed().as_secs_f64(), cpu_secs() - c0);
    println!(
        "COPY TO:   {} in {took:.3} s: {:.2} M rows/s | CPU {cpu:.3} s: {:.2} M rows/s",
        r.tag,
        rows as f64 / took / 1e6,
        rows as f64 / cpu.max(1e-9) / 1e6
    );
    Ok(())
}
