//! Parser throughput on the piped-INSERT workload.
//!
//! Parses 100,000 single-row INSERT statements of 23 columns (ints, NULLs,
//! one-character strings and timestamp strings, about 170 bytes each, the
//! shape of the classic `fehistory` load script) and prints statements per
//! second and heap allocations per statement, counted by a global allocator
//! wrapper. Two runs: each statement parsed on its own (as the shell does
//! after splitting a script), and the whole script parsed at once.
//!
//! Times are CPU time of the benchmark thread where Linux reports it (the
//! machines are shared), else wall-clock time.
//!
//! A third run parses every example statement of `sql.ebnf` (queries with
//! joins, subqueries and expressions, DDL, utility statements) over and
//! over, for the rest of the grammar.
//!
//! Run: `cargo run --release -p heapdb-grammar --example parse_bench [count]`

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The system allocator, counting allocations.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers to the system allocator; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A deterministic pseudo-random sequence (xorshift), so runs compare.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One INSERT like the `fehistory` script's.
fn statement(rng: &mut Rng) -> String {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let mut s = String::from("INSERT INTO \"fehistory_1\" values (");
    for col in 0..23 {
        if col > 0 {
            s.push(',');
        }
        match col {
            3 | 4 | 5 | 6 | 10 => {
                let c = (b'A' + rng.below(26) as u8) as char;
                s.push_str(&format!("'{c}'"));
            }
            15 | 16 => s.push_str(&format!(
                "'{} Jan {:02} {:02}:{:02}:{:02} 1999 EST'",
                DAYS[rng.below(7) as usize],
                1 + rng.below(28),
                rng.below(24),
                rng.below(60),
                rng.below(60)
            )),
            9 | 13 | 19 | 20 | 22 => s.push_str("NULL"),
            _ => {
                // Mixed magnitudes, 1 to 4 digits, as in the original script.
                let digits = 1 + rng.below(4) as u32;
                s.push_str(&rng.below(10u64.pow(digits)).to_string());
            }
        }
    }
    s.push_str(");");
    s
}

/// Nanoseconds this thread has spent on a CPU (Linux `/proc/thread-self/schedstat`),
/// so a busy shared machine does not distort the figures; `None` elsewhere.
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// Seconds between two CPU-time readings, or the wall time when unavailable.
fn seconds(cpu_start: Option<u64>, wall: std::time::Duration) -> f64 {
    match (cpu_start, cpu_ns()) {
        (Some(a), Some(b)) if b > a => (b - a) as f64 / 1e9,
        _ => wall.as_secs_f64(),
    }
}

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let statements: Vec<String> = (0..count).map(|_| statement(&mut rng)).collect();
    let bytes: usize = statements.iter().map(String::len).sum();
    println!(
        "{count} INSERT statements of 23 columns, {:.0} bytes each on average",
        bytes as f64 / count as f64
    );

    // Warm up (page in the code, size the allocator's pools).
    for s in statements.iter().take(1000) {
        heapdb_grammar::parse(s).expect("benchmark statements parse");
    }

    // Each statement on its own, best of three runs (the machine is shared).
    let mut best = f64::MAX;
    let mut allocs = 0;
    for _ in 0..3 {
        let allocs_before = ALLOCATIONS.load(Ordering::Relaxed);
        let cpu = cpu_ns();
        let start = Instant::now();
        let mut parsed = 0usize;
        for s in &statements {
            let ast = heapdb_grammar::parse(s).expect("benchmark statements parse");
            parsed += ast.len();
        }
        best = best.min(seconds(cpu, start.elapsed()));
        allocs = ALLOCATIONS.load(Ordering::Relaxed) - allocs_before;
        assert_eq!(parsed, count);
    }
    println!(
        "one at a time: {:>10.0} statements/s ({:.2} MB/s), {:.1} allocations per statement",
        count as f64 / best,
        bytes as f64 / best / 1e6,
        allocs as f64 / count as f64
    );

    // The AST alone: what one statement's tree costs in allocations, to
    // separate the parser's own overhead from the result it returns.
    let ast_allocs = {
        let ast = heapdb_grammar::parse(&statements[0]).expect("parses");
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let copy = ast.clone();
        let n = ALLOCATIONS.load(Ordering::Relaxed) - before;
        drop(copy);
        n
    };
    println!(
        "               of which the AST itself: {ast_allocs} allocations (its clone's count)"
    );

    // The whole script at once.
    let script: String = statements.join("\n");
    let allocs_before = ALLOCATIONS.load(Ordering::Relaxed);
    let cpu = cpu_ns();
    let start = Instant::now();
    let ast = heapdb_grammar::parse(&script).expect("the script parses");
    let elapsed = seconds(cpu, start.elapsed());
    let allocs = ALLOCATIONS.load(Ordering::Relaxed) - allocs_before;
    assert_eq!(ast.len(), count);
    println!(
        "whole script:  {:>10.0} statements/s ({:.2} MB/s), {:.1} allocations per statement",
        count as f64 / elapsed,
        script.len() as f64 / elapsed / 1e6,
        allocs as f64 / count as f64
    );

    // The rest of the grammar: the examples of sql.ebnf, each parsed on its
    // own, best of three runs.
    let examples: Vec<&str> = heapdb_grammar::EBNF
        .split("(* e.g. ")
        .skip(1)
        .filter_map(|rest| rest.split(" *)").next())
        .collect();
    let rounds = (count / examples.len()).max(1);
    let mut best = f64::MAX;
    for _ in 0..3 {
        let cpu = cpu_ns();
        let start = Instant::now();
        let mut parsed = 0usize;
        for _ in 0..rounds {
            for e in &examples {
                parsed += heapdb_grammar::parse(e).expect("examples parse").len();
            }
        }
        best = best.min(seconds(cpu, start.elapsed()));
        assert_eq!(parsed, rounds * examples.len());
    }
    println!(
        "sql.ebnf examples: {:>6.0} statements/s ({} statements, {} rounds)",
        (rounds * examples.len()) as f64 / best,
        examples.len(),
        rounds
    );

    // Splitting the script, as the shell does before parsing each piece.
    let cpu = cpu_ns();
    let start = Instant::now();
    let pieces = heapdb_grammar::split_statements(&script).len();
    let elapsed = seconds(cpu, start.elapsed());
    assert_eq!(pieces, count);
    println!(
        "splitter:      {:>10.0} statements/s ({:.2} MB/s)",
        count as f64 / elapsed,
        script.len() as f64 / elapsed / 1e6
    );
}
