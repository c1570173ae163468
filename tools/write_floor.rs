//! The floor under COPY TO's writes: how long putting already-formatted
//! bytes into a file takes on this machine, the three ways a COPY TO can
//! meet its file: a new file, an old one truncated when opened (what
//! PostgreSQL does), and an old one written over in place and cut to length
//! at the end (what heapdb does, `src/copy/out_file.rs`).
//!
//! Run: `cargo run --release --example write_floor [-- --mb 490] [--dir /tmp]
//! [--rounds 3]` (default 490 MB: the 5M-row accounts export). Prints, per
//! way and write size, the median wall time of the open (the truncation),
//! of the writes, and the process's system CPU time.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::time::Instant;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The process's system CPU time, in seconds.
fn sys_time() -> f64 {
    // SAFETY: getrusage writes only into `ru`, which outlives the call.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_stime.tv_sec as f64 + ru.ru_stime.tv_usec as f64 / 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> std::io::Result<()> {
    let mb: usize = arg("--mb").and_then(|v| v.parse().ok()).unwrap_or(490);
    let rounds: usize = arg("--rounds").and_then(|v| v.parse().ok()).unwrap_or(3);
    let dir = arg("--dir").unwrap_or_else(|| std::env::temp_dir().display().to_string());
    let path = std::path::Path::new(&dir).join(format!("write_floor.{}", std::process::id()));
    let total = mb << 20;
    println!("{mb} MB into {}, median of {rounds}", path.display());
    for bs in [256usize << 10, 1 << 20, 4 << 20] {
        let buf = vec![b' '; bs];
        for way in ["new file", "truncated", "in place"] {
            let (mut open_ms, mut write_ms, mut sys_ms) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..rounds {
                match way {
                    "new file" => {
                        let _ = std::fs::remove_file(&path);
                    }
                    _ => {
                        // The previous round's output is the old file.
                        if !path.exists() {
                            write_all(File::create(&path)?, &buf, total)?;
                        }
                    }
                }
                let (t0, s0) = (Instant::now(), sys_time());
                let f = OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(way != "in place")
                    .open(&path)?;
                let t1 = Instant::now();
                let f = write_all(f, &buf, total)?;
                if way == "in place" {
                    f.set_len(total as u64)?;
                }
                drop(f);
                open_ms.push(t1.duration_since(t0).as_secs_f64() * 1e3);
                write_ms.push(t1.elapsed().as_secs_f64() * 1e3);
                sys_ms.push((sys_time() - s0) * 1e3);
            }
            println!(
                "{:>5} KiB writes, {way:<9}: open {:6.1} ms, writes {:6.1} ms, system CPU {:6.1} ms",
                bs >> 10,
                median(open_ms),
                median(write_ms),
                median(sys_ms)
            );
        }
    }
    std::fs::remove_file(&path)
}

fn write_all(mut f: File, buf: &[u8], total: usize) -> std::io::Result<File> {
    let mut left = total;
    while left > 0 {
        let n = left.min(buf.len());
        f.write_all(&buf[..n])?;
        left -= n;
    }
    Ok(f)
}
