//! Deterministic data generators: the bytes every system loads.
//!
//! Each data set is written once per run as a tab-separated file (PostgreSQL's
//! COPY text format, which is also what `sqlite3 .import` in `.mode tabs` and
//! DuckDB's `COPY ... (DELIMITER '\t')` read), so every system stores exactly
//! the same values. The INSERT script for `insert_script` is generated here
//! too (and by `--gen-insert-script FILE`).
//!
//! Invariant: the output depends only on the row count and the seed; the
//! pseudo-random generator is SplitMix64, so a file made today is the file
//! made tomorrow, on any machine.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// SplitMix64: tiny, fast, and good enough to spread test values.
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (n > 0; the modulo bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Appends the decimal form of `v` to `out` without going through `fmt`
/// (20 million rows of four integers: `write!` would dominate generation).
pub fn push_int(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    let mut n = v.unsigned_abs();
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Rows of `pgbench_accounts` per `pgbench_branches` row, as pgbench makes them.
pub const ACCOUNTS_PER_BRANCH: i64 = 100_000;
/// Width of `pgbench_accounts.filler` (char(84)).
pub const ACCOUNT_FILLER: usize = 84;
/// Width of `pgbench_branches.filler` (char(88)).
pub const BRANCH_FILLER: usize = 88;

/// One row of `t(a, b, c, d int4)`: `a` counts from 1, the rest are spread.
pub fn t_row(out: &mut Vec<u8>, a: i64, rng: &mut Rng) {
    push_int(out, a);
    out.push(b'\t');
    push_int(out, rng.below(1000) as i64);
    out.push(b'\t');
    push_int(out, rng.below(1_000_000) as i64);
    out.push(b'\t');
    push_int(out, rng.below(100_000) as i64);
    out.push(b'\n');
}

/// Rows of `pgbench_branches` for `accounts` accounts, as pgbench makes them
/// (one branch per 100,000 accounts, so every account's `bid` joins).
pub fn branches_for(accounts: i64) -> i64 {
    ((accounts + ACCOUNTS_PER_BRANCH - 1) / ACCOUNTS_PER_BRANCH).max(1)
}

/// One row of `pgbench_accounts`: `bid = (aid - 1) / 100000 + 1` as pgbench
/// does; about one account in ten has a non-zero balance (as after a pgbench
/// run), so `sum(abalance)` and `abalance <> 0` have something to find; the
/// filler is 84 blanks, the value PostgreSQL's char(84) stores for pgbench's ''.
///
/// The balance is drawn from a generator seeded by `aid` alone, so a row is
/// the same bytes whichever order the file lists the accounts in.
pub fn account_row(out: &mut Vec<u8>, aid: i64, _rng: &mut Rng) {
    push_int(out, aid);
    out.push(b'\t');
    push_int(out, (aid - 1) / ACCOUNTS_PER_BRANCH + 1);
    out.push(b'\t');
    push_int(out, account_balance(aid));
    out.push(b'\t');
    out.resize(out.len() + ACCOUNT_FILLER, b' ');
    out.push(b'\n');
}

/// The balance [`account_row`] gives account `aid`: 0 for nine accounts in
/// ten, else -5000..=5000 (a function of `aid` alone, so a checker can
/// recompute any account's balance without the file).
pub fn account_balance(aid: i64) -> i64 {
    let mut rng = Rng::new(0xacc0_u64 ^ (aid as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
    if rng.below(10) == 0 {
        rng.below(10_001) as i64 - 5000
    } else {
        0
    }
}

/// One row of `pgbench_branches`.
pub fn branch_row(out: &mut Vec<u8>, bid: i64) {
    push_int(out, bid);
    out.push(b'\t');
    push_int(out, 0);
    out.push(b'\t');
    out.resize(out.len() + BRANCH_FILLER, b' ');
    out.push(b'\n');
}

/// Writes the `rows` accounts of [`account_row`] in a shuffled order (a
/// Fisher-Yates permutation fixed by `seed`): the same rows as the ordered
/// file, so a table loaded from it holds the same values with no
/// correlation between a row's place in the heap and its `bid` or `aid`.
pub fn write_accounts_shuffled(path: &Path, rows: i64, seed: u64) -> io::Result<()> {
    let mut order: Vec<i64> = (1..=rows).collect();
    let mut rng = Rng::new(seed);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    write_rows(path, rows, seed, |out, i, rng| {
        account_row(out, order[(i - 1) as usize], rng)
    })
}

/// Writes `rows` rows made by `row(buffer, i, rng)` (i from 1) to `path`.
pub fn write_rows(
    path: &Path,
    rows: i64,
    seed: u64,
    mut row: impl FnMut(&mut Vec<u8>, i64, &mut Rng),
) -> io::Result<()> {
    let mut file = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut rng = Rng::new(seed);
    let mut buf = Vec::with_capacity(1 << 16);
    for i in 1..=rows {
        row(&mut buf, i, &mut rng);
        if buf.len() >= 1 << 15 {
            file.write_all(&buf)?;
            buf.clear();
        }
    }
    file.write_all(&buf)?;
    file.flush()
}

/// The 23 columns of `fehistory_1`: ints (most of them NULL a third of the
/// time), one-character codes and two timestamps, in the shape of the example
/// INSERT of the classic piped-script experiment.
pub const FEHISTORY_COLUMNS: [(&str, &str); 23] = [
    ("cust_id", "int"),
    ("branch_id", "int"),
    ("seq_no", "int"),
    ("kind", "char(1)"),
    ("flag_a", "char(1)"),
    ("flag_b", "char(1)"),
    ("status", "char(1)"),
    ("qty", "int"),
    ("ref_no", "int"),
    ("alt_ref", "int"),
    ("side", "char(1)"),
    ("lot", "int"),
    ("acct", "int"),
    ("prev_acct", "int"),
    ("term", "int"),
    ("opened", "timestamp"),
    ("closed", "timestamp"),
    ("ref2", "int"),
    ("term2", "int"),
    ("x1", "int"),
    ("x2", "int"),
    ("x3", "int"),
    ("x4", "int"),
];

/// `CREATE TABLE fehistory_1 (...)`, accepted as is by PostgreSQL, heapdb and sqlite3.
pub fn fehistory_ddl() -> String {
    let cols: Vec<String> = FEHISTORY_COLUMNS
        .iter()
        .map(|(name, ty)| format!("{name} {ty}"))
        .collect();
    format!("CREATE TABLE fehistory_1 ({})", cols.join(", "))
}

const DAY_NAMES: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTH_NAMES: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Formats seconds since 1970-01-01 00:00:00 as PostgreSQL's `DateStyle =
/// Postgres` text with a zone, e.g. `Thu Jan 07 15:15:00 1999 EST`.
pub fn postgres_style_timestamp(epoch_secs: i64) -> String {
    let days = epoch_secs.div_euclid(86_400);
    let secs = epoch_secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} {} EST",
        DAY_NAMES[days.rem_euclid(7) as usize],
        MONTH_NAMES[(m - 1) as usize],
        d,
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        y
    )
}

/// Days since 1970-01-01 to (year, month, day), Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// 1999-01-01 00:00:00 in seconds since the epoch.
const YEAR_1999: i64 = 915_148_800;
/// Codes the char(1) columns take.
const CODES: &[u8] = b"DSBX-s";

/// Appends one `INSERT INTO fehistory_1 values (...);` line.
pub fn fehistory_insert(out: &mut String, rng: &mut Rng) {
    out.push_str("INSERT INTO fehistory_1 values (");
    let opened = YEAR_1999 + rng.below(365 * 86_400) as i64;
    for (i, (_, ty)) in FEHISTORY_COLUMNS.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match *ty {
            "int" => {
                if i >= 3 && rng.below(3) == 0 {
                    out.push_str("NULL");
                } else {
                    let mut digits = Vec::new();
                    push_int(&mut digits, rng.below(5000) as i64);
                    out.push_str(std::str::from_utf8(&digits).expect("digits are ASCII"));
                }
            }
            "char(1)" => {
                out.push('\'');
                out.push(CODES[rng.below(CODES.len() as u64) as usize] as char);
                out.push('\'');
            }
            _ => {
                let at = if i == 15 {
                    opened
                } else {
                    opened + rng.below(2 * 86_400) as i64
                };
                out.push('\'');
                out.push_str(&postgres_style_timestamp(at));
                out.push('\'');
            }
        }
    }
    out.push_str(");\n");
}

/// Writes the INSERT script: `rows` single-row INSERTs, one per line.
pub fn write_insert_script(path: &Path, rows: u64) -> io::Result<()> {
    let mut file = BufWriter::new(File::create(path)?);
    let mut rng = Rng::new(0xFE_0001);
    let mut line = String::with_capacity(256);
    for _ in 0..rows {
        line.clear();
        fehistory_insert(&mut line, &mut rng);
        file.write_all(line.as_bytes())?;
    }
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_format_like_display() {
        for v in [0i64, 7, -7, 10, 99, 100, 123_456_789, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            push_int(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), v.to_string());
        }
    }

    #[test]
    fn the_shuffled_accounts_are_the_ordered_rows_in_another_order() {
        let dir = tempfile::tempdir().unwrap();
        let (ordered, shuffled) = (dir.path().join("o"), dir.path().join("s"));
        write_rows(&ordered, 1000, 2, account_row).unwrap();
        write_accounts_shuffled(&shuffled, 1000, 5).unwrap();
        let lines = |p: &Path| -> Vec<String> {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(String::from)
                .collect()
        };
        let (o, s) = (lines(&ordered), lines(&shuffled));
        assert_ne!(o, s, "the order must differ");
        let first_aids: Vec<&str> = s
            .iter()
            .take(10)
            .map(|l| l.split('\t').next().unwrap())
            .collect();
        assert_ne!(
            first_aids,
            ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]
        );
        let (mut o2, mut s2) = (o.clone(), s.clone());
        o2.sort();
        s2.sort();
        assert_eq!(o2, s2);
        assert_eq!(branches_for(5_000_000), 50);
        assert_eq!(branches_for(20_000_000), 200);
        assert_eq!(branches_for(1000), 1);
    }

    #[test]
    fn rng_is_deterministic_and_spread() {
        let a: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::new(42);
                move |_| r.next_u64()
            })
            .collect();
        let mut r = Rng::new(42);
        let b: Vec<u64> = (0..5).map(|_| r.next_u64()).collect();
        assert_eq!(a, b);
        let mut r = Rng::new(1);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            seen[r.below(10) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
    }

    #[test]
    fn timestamps_match_postgres_text() {
        // 1999-01-07 15:15:00 and 1999-01-08 08:30:38, the piped-script experiment's values.
        assert_eq!(
            postgres_style_timestamp(YEAR_1999 + 6 * 86_400 + 15 * 3600 + 15 * 60),
            "Thu Jan 07 15:15:00 1999 EST"
        );
        assert_eq!(
            postgres_style_timestamp(YEAR_1999 + 7 * 86_400 + 8 * 3600 + 30 * 60 + 38),
            "Fri Jan 08 08:30:38 1999 EST"
        );
        assert_eq!(postgres_style_timestamp(0), "Thu Jan 01 00:00:00 1970 EST");
        // A leap day, and the last second of a year.
        assert_eq!(
            postgres_style_timestamp(951_782_400),
            "Tue Feb 29 00:00:00 2000 EST"
        );
        assert_eq!(
            postgres_style_timestamp(YEAR_1999 - 1),
            "Thu Dec 31 23:59:59 1998 EST"
        );
    }

    #[test]
    fn account_rows_follow_pgbench() {
        let mut rng = Rng::new(7);
        let mut out = Vec::new();
        account_row(&mut out, 100_000, &mut rng);
        account_row(&mut out, 100_001, &mut rng);
        let text = String::from_utf8(out).unwrap();
        let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
        assert_eq!(rows[0][0..2], ["100000", "1"]);
        assert_eq!(rows[1][0..2], ["100001", "2"]);
        for r in &rows {
            assert_eq!(r.len(), 4);
            assert_eq!(r[3], " ".repeat(ACCOUNT_FILLER));
            let bal: i64 = r[2].parse().unwrap();
            assert!((-5000..=5000).contains(&bal));
        }
    }

    #[test]
    fn insert_script_lines_have_23_values_and_a_third_nulls() {
        let mut rng = Rng::new(3);
        let mut nulls = 0usize;
        let mut ints = 0usize;
        for _ in 0..3000 {
            let mut line = String::new();
            fehistory_insert(&mut line, &mut rng);
            assert!(line.starts_with("INSERT INTO fehistory_1 values ("));
            assert!(line.ends_with(");\n"));
            let inner = &line["INSERT INTO fehistory_1 values (".len()..line.len() - 3];
            let values: Vec<&str> = inner.split(',').collect();
            assert_eq!(values.len(), 23, "{line}");
            for (v, (_, ty)) in values.iter().zip(FEHISTORY_COLUMNS) {
                match ty {
                    "int" => {
                        ints += 1;
                        if *v == "NULL" {
                            nulls += 1;
                        } else {
                            v.parse::<i64>().unwrap();
                        }
                    }
                    "char(1)" => assert_eq!(v.len(), 3, "{v}"),
                    _ => assert!(v.ends_with(" EST'") && v.len() == 30, "{v}"),
                }
            }
        }
        // 13 of the 16 int columns may be NULL, each a third of the time.
        let share = nulls as f64 / ints as f64;
        assert!((0.2..0.3).contains(&share), "{share}");
    }

    #[test]
    fn ddl_names_all_columns() {
        let ddl = fehistory_ddl();
        assert!(ddl.starts_with("CREATE TABLE fehistory_1 (cust_id int, "));
        assert_eq!(ddl.matches(", ").count(), 22);
        assert!(ddl.contains("opened timestamp, closed timestamp"));
    }

    #[test]
    fn files_are_reproducible() {
        let dir = tempfile::tempdir().unwrap();
        let (p1, p2) = (dir.path().join("a"), dir.path().join("b"));
        write_rows(&p1, 1000, 9, t_row).unwrap();
        write_rows(&p2, 1000, 9, t_row).unwrap();
        let a = std::fs::read(&p1).unwrap();
        assert_eq!(a, std::fs::read(&p2).unwrap());
        assert_eq!(a.iter().filter(|&&b| b == b'\n').count(), 1000);
        write_insert_script(&p1, 50).unwrap();
        write_insert_script(&p2, 50).unwrap();
        assert_eq!(std::fs::read(&p1).unwrap(), std::fs::read(&p2).unwrap());
    }
}
