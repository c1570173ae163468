//! The results of a run and how they are printed: one table (medians,
//! heapdb's speed-ups, peak RSS), the settings under it, the ring sweep,
//! and the same as JSON for `--json`.

use std::fmt::Write as _;
use std::time::Duration;

use crate::stats::{fmt_duration, fmt_kib, fmt_ratio, median, speedup};
use crate::systems::Kind;

/// One system's result for one workload.
#[derive(Debug, Clone)]
pub enum Cell {
    /// Timed runs (warm-up excluded) and the process's peak RSS.
    Measured {
        /// One time per measured run.
        samples: Vec<Duration>,
        /// Peak resident set size of the system's process, KiB.
        rss_kib: Option<u64>,
    },
    /// The system ran the workload and failed (the error text).
    Failed(String),
    /// The system could not be started (the reason); printed `n/a`.
    Unavailable(String),
    /// The workload does not apply to this system; printed `—`.
    NotApplicable,
}

impl Cell {
    /// The median time, when measured.
    pub fn median(&self) -> Option<Duration> {
        match self {
            Cell::Measured { samples, .. } => median(samples),
            _ => None,
        }
    }

    fn text(&self) -> String {
        match self {
            Cell::Measured { .. } => self
                .median()
                .map(fmt_duration)
                .unwrap_or_else(|| "-".into()),
            Cell::Failed(_) => "error".into(),
            Cell::Unavailable(_) => "n/a".into(),
            Cell::NotApplicable => "—".into(),
        }
    }

    fn rss_text(&self) -> String {
        match self {
            Cell::Measured {
                rss_kib: Some(k), ..
            } => fmt_kib(*k),
            _ => "".into(),
        }
    }
}

/// One workload's line of the table.
#[derive(Debug, Clone)]
pub struct Row {
    /// Workload name.
    pub workload: String,
    /// One cell per system, in the report's system order.
    pub cells: Vec<(Kind, Cell)>,
    /// Remarks (failed systems' errors, result mismatches).
    pub notes: Vec<String>,
}

impl Row {
    /// The cell of `kind`.
    pub fn cell(&self, kind: Kind) -> Option<&Cell> {
        self.cells.iter().find(|(k, _)| *k == kind).map(|(_, c)| c)
    }
}

/// One ring size of the ring sweep: times of each measured statement.
#[derive(Debug, Clone)]
pub struct RingRow {
    /// Ring size in 8 kB pages.
    pub pages: u32,
    /// (statement label, median time, or the error).
    pub times: Vec<(String, Result<Duration, String>)>,
}

/// Everything a run produced.
#[derive(Debug, Default)]
pub struct Report {
    /// Systems in column order (heapdb first).
    pub systems: Vec<Kind>,
    /// Workload rows in the order run.
    pub rows: Vec<Row>,
    /// Settings printed under the table.
    pub settings: Vec<(String, String)>,
    /// The ring sweep, when it ran.
    pub ring: Vec<RingRow>,
    /// Why the ring sweep did not run, or its setup.
    pub ring_note: Option<String>,
    /// What bounds the read workloads (`floor.rs`) and the cold ANALYZE
    /// (`device.rs`), printed under the notes.
    pub bounds: Vec<String>,
}

impl Report {
    /// The table as text.
    pub fn table(&self) -> String {
        let peers: Vec<Kind> = self
            .systems
            .iter()
            .copied()
            .filter(|k| *k != Kind::Heapdb)
            .collect();
        let mut header: Vec<String> = vec!["workload".into()];
        header.extend(self.systems.iter().map(|k| k.name().to_string()));
        header.extend(peers.iter().map(|k| format!("vs {k}")));
        header.extend(self.systems.iter().map(|k| format!("rss {k}")));
        let mut lines: Vec<Vec<String>> = vec![header];
        for row in &self.rows {
            let mut line = vec![row.workload.clone()];
            for k in &self.systems {
                line.push(row.cell(*k).map(Cell::text).unwrap_or_default());
            }
            let h = row.cell(Kind::Heapdb).and_then(Cell::median);
            for k in &peers {
                let p = row.cell(*k).and_then(Cell::median);
                line.push(speedup(h, p).map(fmt_ratio).unwrap_or_else(|| "".into()));
            }
            for k in &self.systems {
                line.push(row.cell(*k).map(Cell::rss_text).unwrap_or_default());
            }
            lines.push(line);
        }
        let mut out = render(&lines);
        let notes: Vec<String> = self
            .rows
            .iter()
            .flat_map(|r| r.notes.iter().map(move |n| format!("{}: {n}", r.workload)))
            .collect();
        if !notes.is_empty() {
            out.push_str("\nnotes:\n");
            for n in notes {
                let _ = writeln!(out, "  {n}");
            }
        }
        if !self.bounds.is_empty() {
            out.push_str("\nbounds (measured):\n");
            for b in &self.bounds {
                let _ = writeln!(out, "  {b}");
            }
        }
        out.push_str(
            "\nspeed-up = peer median / heapdb median (above 1x: heapdb is faster); \
                      n/a = system not available, — = workload does not apply\n",
        );
        out.push_str("\nsettings:\n");
        for (k, v) in &self.settings {
            let _ = writeln!(out, "  {k}: {v}");
        }
        if let Some(note) = &self.ring_note {
            let _ = writeln!(out, "\nring_sweep: {note}");
        }
        if !self.ring.is_empty() {
            let mut lines: Vec<Vec<String>> = Vec::new();
            let mut header = vec!["ring".to_string()];
            header.extend(self.ring[0].times.iter().map(|(l, _)| l.clone()));
            lines.push(header);
            for r in &self.ring {
                let mut line = vec![format!("{} kB", r.pages * 8)];
                line.extend(r.times.iter().map(|(_, t)| match t {
                    Ok(d) => fmt_duration(*d),
                    Err(_) => "error".into(),
                }));
                lines.push(line);
            }
            out.push('\n');
            out.push_str(&render(&lines));
        }
        out
    }

    /// The results as JSON (written by hand: a flat shape needs no serde).
    pub fn json(&self) -> String {
        let mut out = String::from("{\n  \"settings\": {");
        for (i, (k, v)) in self.settings.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = write!(out, "{sep}\n    {}: {}", json_str(k), json_str(v));
        }
        out.push_str("\n  },\n  \"results\": [");
        for (i, row) in self.rows.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = write!(
                out,
                "{sep}\n    {{\"workload\": {}, \"systems\": {{",
                json_str(&row.workload)
            );
            for (j, (k, cell)) in row.cells.iter().enumerate() {
                let sep = if j == 0 { "" } else { ", " };
                let _ = write!(out, "{sep}{}: {}", json_str(k.name()), cell_json(cell));
            }
            out.push_str("}, \"notes\": [");
            let notes: Vec<String> = row.notes.iter().map(|n| json_str(n)).collect();
            out.push_str(&notes.join(", "));
            out.push_str("]}");
        }
        out.push_str("\n  ],\n  \"ring_note\": ");
        out.push_str(&self.ring_note.as_deref().map_or("null".into(), json_str));
        out.push_str(",\n  \"ring_sweep\": [");
        for (i, r) in self.ring.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = write!(out, "{sep}\n    {{\"ring_pages\": {}", r.pages);
            for (label, t) in &r.times {
                match t {
                    Ok(d) => {
                        let _ = write!(out, ", {}: {}", json_str(label), ms(*d));
                    }
                    Err(e) => {
                        let _ =
                            write!(out, ", {}: {{\"error\": {}}}", json_str(label), json_str(e));
                    }
                }
            }
            out.push('}');
        }
        out.push_str("\n  ]\n}\n");
        out
    }
}

fn cell_json(cell: &Cell) -> String {
    match cell {
        Cell::Measured { samples, rss_kib } => {
            let runs: Vec<String> = samples.iter().map(|d| ms(*d)).collect();
            format!(
                "{{\"median_ms\": {}, \"runs_ms\": [{}], \"peak_rss_kib\": {}}}",
                median(samples).map(ms).unwrap_or_else(|| "null".into()),
                runs.join(", "),
                rss_kib
                    .map(|k| k.to_string())
                    .unwrap_or_else(|| "null".into())
            )
        }
        Cell::Failed(e) => format!("{{\"error\": {}}}", json_str(e)),
        Cell::Unavailable(e) => format!("{{\"unavailable\": {}}}", json_str(e)),
        Cell::NotApplicable => "null".into(),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Lays out rows as columns, the first row a header underlined with
/// dashes: the first column left-aligned, the rest right-aligned, two
/// spaces between columns, no borders (drawn with comfy-table).
fn render(lines: &[Vec<String>]) -> String {
    use comfy_table::{CellAlignment, Table, TableComponent};
    let Some((header, body)) = lines.split_first() else {
        return String::new();
    };
    let mut table = Table::new();
    // No borders, a dashed line under the header (a space in a preset
    // leaves that part out), and a blank between columns that the header
    // line crosses.
    table.load_preset("     --            ");
    table.set_style(TableComponent::VerticalLines, ' ');
    table.set_header(header.clone());
    for line in body {
        table.add_row(line.clone());
    }
    for (i, column) in table.column_iter_mut().enumerate() {
        column.set_padding(if i == 0 { (0, 0) } else { (1, 0) });
        if i > 0 {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = String::new();
    for line in table.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn sample_report() -> Report {
        Report {
            systems: vec![Kind::Heapdb, Kind::Pg, Kind::Sqlite],
            rows: vec![
                Row {
                    workload: "count_star".into(),
                    cells: vec![
                        (
                            Kind::Heapdb,
                            Cell::Measured {
                                samples: vec![ms(10), ms(12), ms(11)],
                                rss_kib: Some(2048),
                            },
                        ),
                        (
                            Kind::Pg,
                            Cell::Measured {
                                samples: vec![ms(450), ms(460), ms(440)],
                                rss_kib: Some(6 * 1024 * 1024),
                            },
                        ),
                        (Kind::Sqlite, Cell::Unavailable("not installed".into())),
                    ],
                    notes: vec!["rows differ: heapdb".into()],
                },
                Row {
                    workload: "vacuum_fresh".into(),
                    cells: vec![
                        (Kind::Heapdb, Cell::Failed("ERROR:  x".into())),
                        (
                            Kind::Pg,
                            Cell::Measured {
                                samples: vec![ms(760)],
                                rss_kib: None,
                            },
                        ),
                        (Kind::Sqlite, Cell::NotApplicable),
                    ],
                    notes: vec![],
                },
            ],
            settings: vec![("scale".into(), "0.05".into())],
            ring: vec![],
            ring_note: None,
            bounds: Vec::new(),
        }
    }

    #[test]
    fn table_shows_medians_ratios_and_rss() {
        let t = sample_report().table();
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("workload"));
        assert!(lines[0].contains("vs pg") && lines[0].contains("rss heapdb"));
        assert!(lines[1].chars().all(|c| c == '-'));
        let count = lines[2];
        // heapdb median 11 ms, pg 450 ms: 40.9x.
        assert!(
            count.contains("11.0 ms") && count.contains("450.0 ms"),
            "{count}"
        );
        assert!(count.contains("40.9x") && count.contains("n/a"), "{count}");
        assert!(
            count.contains("2.0 MiB") && count.contains("6.00 GiB"),
            "{count}"
        );
        let vac = lines[3];
        assert!(
            vac.contains("error") && vac.contains("—") && vac.contains("760.0 ms"),
            "{vac}"
        );
        assert!(t.contains("count_star: rows differ: heapdb"));
        assert!(t.contains("  scale: 0.05"));
    }

    #[test]
    fn json_is_well_formed_enough() {
        let j = sample_report().json();
        assert!(j.contains("\"median_ms\": 11.000"));
        assert!(j.contains("\"runs_ms\": [10.000, 12.000, 11.000]"));
        assert!(j.contains("\"sqlite\": {\"unavailable\": \"not installed\"}"));
        assert!(j.contains("\"heapdb\": {\"error\": \"ERROR:  x\"}"));
        assert_eq!(j.matches('{').count(), j.matches('}').count());
        assert_eq!(j.matches('[').count(), j.matches(']').count());
        assert_eq!(json_str("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }

    #[test]
    fn table_layout_is_the_hand_drawn_one() {
        let t = sample_report().table();
        let head: Vec<&str> = t.lines().take(4).collect();
        assert_eq!(
            head,
            [
                "workload       heapdb        pg  sqlite  vs pg  vs sqlite  rss heapdb    rss pg  rss sqlite",
                "-------------------------------------------------------------------------------------------",
                "count_star    11.0 ms  450.0 ms     n/a  40.9x                2.0 MiB  6.00 GiB",
                "vacuum_fresh    error  760.0 ms       \u{2014}",
            ]
        );
    }

    #[test]
    fn columns_line_up() {
        let out = render(&[
            vec!["w".into(), "1".into()],
            vec!["longer".into(), "12345".into()],
        ]);
        assert_eq!(out, "w           1\n-------------\nlonger  12345\n");
    }
}
