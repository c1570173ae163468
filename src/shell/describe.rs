//! `\d`, `\d NAME`, `\dt[+]` and `\h`: the catalog as psql-style tables,
//! with `+` the descriptions set by `COMMENT ON`.
//!
//! Listings come from [`Session::list_tables`](crate::session::Session::list_tables)
//! and print through the ordinary result printer, under a title centred
//! over the aligned table as psql centres it. Patterns follow psql's: an
//! unquoted name folds to lower case, `"Quoted"` keeps its case, `*` and
//! `?` are wildcards.

use super::print::{text, Align, ColumnInfo, Format, ResultPrinter};
use super::run::{Flow, Runner, Source};
use crate::session::{IndexInfo, TableInfo};

mod view;

impl Runner {
    /// `\d [PATTERN]`: list relations, or describe the matching tables.
    pub(crate) fn describe(
        &mut self,
        pattern: Option<&str>,
        plus: bool,
        src: &Source,
        line: u64,
    ) -> Flow {
        let Some(pattern) = pattern else {
            return self.list_tables(None, plus, src, line);
        };
        let all = match self.matching_tables(None, src, line) {
            Ok(t) => t,
            Err(f) => return f,
        };
        let views = self.matching_views(Some(pattern));
        let p = normalize_pattern(pattern);
        let indexes: Vec<(&IndexInfo, &str)> = all
            .iter()
            .flat_map(|t| t.index_details.iter().map(move |i| (i, t.name.as_str())))
            .filter(|(i, _)| glob_match(&p, &i.name))
            .collect();
        let tables: Vec<&TableInfo> = all.iter().filter(|t| glob_match(&p, &t.name)).collect();
        if tables.is_empty() && indexes.is_empty() && views.is_empty() {
            return self.shell_error(
                &format!("Did not find any relation named \"{pattern}\"."),
                src,
                line,
            );
        }
        let mut order: Vec<(&str, Option<&TableInfo>, Option<&IndexInfo>)> = tables
            .iter()
            .map(|t| (t.name.as_str(), Some(*t), None))
            .chain(
                indexes
                    .iter()
                    .map(|(i, _)| (i.name.as_str(), None, Some(*i))),
            )
            .collect();
        order.sort_by(|a, b| a.0.cmp(b.0));
        for (_, t, ix) in order {
            if let Some(ix) = ix {
                self.describe_index(ix, plus);
                continue;
            }
            let Some(t) = t else { continue };
            let mut cols = vec![
                ColumnInfo::new("Column", Align::Left),
                ColumnInfo::new("Type", Align::Left),
                ColumnInfo::new("Collation", Align::Left),
                ColumnInfo::new("Nullable", Align::Left),
                ColumnInfo::new("Default", Align::Left),
            ];
            if plus {
                for c in ["Storage", "Compression", "Stats target", "Description"] {
                    cols.push(ColumnInfo::new(c, Align::Left));
                }
            }
            let rows: Vec<Vec<String>> = t
                .columns
                .iter()
                .map(|c| {
                    let mut row = vec![
                        c.name.clone(),
                        c.type_name.clone(),
                        String::new(),
                        if c.not_null { "not null" } else { "" }.to_string(),
                        c.default.clone().unwrap_or_default(),
                    ];
                    if plus {
                        row.extend([
                            c.storage.to_string(),
                            String::new(),
                            String::new(),
                            c.description.clone().unwrap_or_default(),
                        ]);
                    }
                    row
                })
                .collect();
            let mut footer = String::new();
            if !t.indexes.is_empty() {
                footer.push_str("Indexes:\n");
                for ix in &t.indexes {
                    footer.push_str(&format!("    {ix}\n"));
                }
            }
            for (title, lines) in [
                ("Check constraints:", &t.checks),
                ("Foreign-key constraints:", &t.foreign_keys),
                ("Referenced by:", &t.referenced_by),
            ] {
                if !lines.is_empty() {
                    footer.push_str(title);
                    footer.push('\n');
                    for l in lines {
                        footer.push_str(&format!("    {l}\n"));
                    }
                }
            }
            inheritance_footer(&mut footer, t, plus);
            if plus {
                footer.push_str("Access method: heap\n");
                if !t.options.is_empty() {
                    footer.push_str(&format!("Options: {}\n", t.options.join(", ")));
                }
                packed_footer(&mut footer, t);
            }
            let schema = t.temp_schema.as_deref().unwrap_or("public");
            self.print_titled(
                &format!("Table \"{schema}.{}\"", t.name),
                &cols,
                &rows,
                Some(&footer),
            );
        }
        self.describe_views(&views, plus);
        Flow::Continue
    }

    /// psql's `\d[+] INDEX`: the stored columns (key or INCLUDE) and a line
    /// naming the kind, the method and the table; `plus` adds each
    /// column's storage and statistics target (never set here).
    fn describe_index(&mut self, ix: &IndexInfo, plus: bool) {
        let mut cols = vec![
            ColumnInfo::new("Column", Align::Left),
            ColumnInfo::new("Type", Align::Left),
            ColumnInfo::new("Key?", Align::Left),
            ColumnInfo::new("Definition", Align::Left),
        ];
        if plus {
            cols.push(ColumnInfo::new("Storage", Align::Left));
            cols.push(ColumnInfo::new("Stats target", Align::Left));
        }
        let rows: Vec<Vec<String>> = ix
            .columns
            .iter()
            .zip(&ix.storage)
            .map(|((name, ty, key, def), storage)| {
                let mut row = vec![
                    name.clone(),
                    ty.clone(),
                    if *key { "yes" } else { "no" }.to_string(),
                    def.clone(),
                ];
                if plus {
                    row.push(storage.to_string());
                    row.push(String::new());
                }
                row
            })
            .collect();
        let footer = format!("{}\n", ix.footer);
        self.print_titled(
            &format!("Index \"public.{}\"", ix.name),
            &cols,
            &rows,
            Some(&footer),
        );
    }

    /// `\dt[+] [PATTERN]`: the tables with row estimates, pages and sizes.
    pub(crate) fn list_tables(
        &mut self,
        pattern: Option<&str>,
        plus: bool,
        src: &Source,
        line: u64,
    ) -> Flow {
        let tables = match self.matching_tables(pattern, src, line) {
            Ok(t) => t,
            Err(f) => return f,
        };
        if tables.is_empty() {
            let msg = match pattern {
                Some(p) => format!("Did not find any relation named \"{p}\".\n"),
                None => "Did not find any relations.\n".to_string(),
            };
            self.eprint(&msg);
            return Flow::Continue;
        }
        // With a temporary table among them, each row names its schema,
        // as psql's does (`pg_temp_3`).
        let schemas = tables.iter().any(|t| t.temp_schema.is_some());
        let mut cols = vec![
            ColumnInfo::new("Name", Align::Left),
            ColumnInfo::new("Type", Align::Left),
            ColumnInfo::new("Rows (estimated)", Align::Right),
            ColumnInfo::new("Pages", Align::Right),
            ColumnInfo::new("Size", Align::Left),
        ];
        if plus {
            cols.push(ColumnInfo::new("All-visible pages", Align::Right));
            cols.push(ColumnInfo::new("Description", Align::Left));
        }
        if schemas {
            cols.insert(0, ColumnInfo::new("Schema", Align::Left));
        }
        let rows: Vec<Vec<String>> = tables
            .iter()
            .map(|t| {
                let mut r = vec![
                    t.name.clone(),
                    "table".to_string(),
                    t.rows_estimate
                        .map_or_else(String::new, |n| format!("{}", n.round() as i64)),
                    t.pages.to_string(),
                    size_pretty(t.size_bytes),
                ];
                if plus {
                    r.push(t.all_visible_pages.to_string());
                    r.push(t.description.clone().unwrap_or_default());
                }
                if schemas {
                    r.insert(0, t.temp_schema.as_deref().unwrap_or("public").to_string());
                }
                r
            })
            .collect();
        self.print_titled("List of relations", &cols, &rows, None);
        Flow::Continue
    }

    /// `\di [PATTERN]`: the indexes (matching `pattern`) and their tables.
    pub(crate) fn list_indexes(&mut self, pattern: Option<&str>, src: &Source, line: u64) -> Flow {
        let tables = match self.matching_tables(None, src, line) {
            Ok(t) => t,
            Err(f) => return f,
        };
        let p = pattern.map(normalize_pattern);
        let mut rows: Vec<Vec<String>> = tables
            .iter()
            .flat_map(|t| {
                let schema = t.temp_schema.as_deref().unwrap_or("public");
                t.index_names.iter().map(move |n| {
                    vec![
                        schema.to_string(),
                        n.clone(),
                        "index".to_string(),
                        "heapdb".to_string(),
                        t.name.clone(),
                    ]
                })
            })
            .filter(|r| p.as_ref().map_or(true, |p| glob_match(p, &r[1])))
            .collect();
        rows.sort();
        if rows.is_empty() {
            let msg = match pattern {
                Some(p) => format!("Did not find any relation named \"{p}\".\n"),
                None => "Did not find any relations.\n".to_string(),
            };
            self.eprint(&msg);
            return Flow::Continue;
        }
        // psql's columns; the owner is the one role heapdb has.
        let cols = [
            ColumnInfo::new("Schema", Align::Left),
            ColumnInfo::new("Name", Align::Left),
            ColumnInfo::new("Type", Align::Left),
            ColumnInfo::new("Owner", Align::Left),
            ColumnInfo::new("Table", Align::Left),
        ];
        self.print_titled("List of relations", &cols, &rows, None);
        Flow::Continue
    }

    /// The tables matching `pattern` (all when `None`), or the flow after
    /// reporting the engine's error.
    fn matching_tables(
        &mut self,
        pattern: Option<&str>,
        src: &Source,
        line: u64,
    ) -> Result<Vec<TableInfo>, Flow> {
        match self.session.list_tables() {
            Ok(mut t) => {
                if let Some(p) = pattern {
                    let p = normalize_pattern(p);
                    t.retain(|t| glob_match(&p, &t.name));
                }
                Ok(t)
            }
            Err(e) => {
                let msg = super::report::format_error(&e, None, None);
                Err(self.shell_error(msg.trim_end(), src, line))
            }
        }
    }

    /// Prints `rows` under a title, psql style, then `footer` lines.
    fn print_titled(
        &mut self,
        title: &str,
        cols: &[ColumnInfo],
        rows: &[Vec<String>],
        footer: Option<&str>,
    ) {
        let mut opts = self.state.print.clone();
        // psql counts the rows of a listing, not of a table description.
        opts.footer = footer.is_none();
        let mut table = Vec::new();
        {
            let mut p = ResultPrinter::new(&mut table, &opts, cols);
            for r in rows {
                let cells: Vec<Option<&str>> = r.iter().map(|c| Some(c.as_str())).collect();
                let _ = p.push_row(&cells);
            }
            let _ = p.finish();
        }
        let mut out = String::new();
        if !opts.tuples_only && opts.format != Format::Csv {
            let text = String::from_utf8_lossy(&table);
            let width = text.lines().next().map_or(0, text::width);
            let tw = text::width(title);
            if opts.format == Format::Aligned && tw < width {
                out.push_str(&" ".repeat((width - tw) / 2));
            }
            out.push_str(title);
            out.push('\n');
        }
        if let Some(f) = footer.filter(|_| !opts.tuples_only && opts.format == Format::Aligned) {
            // The footer follows the table, then the blank line ending it.
            while table.last() == Some(&b'\n') {
                table.pop();
            }
            table.push(b'\n');
            table.extend_from_slice(f.as_bytes());
            table.push(b'\n');
        }
        let _ = self.query_output().write_all(out.as_bytes());
        let _ = self.query_output().write_all(&table);
    }
}

/// heapdb's own `\d+` line: the table's packed columns and what the
/// packed column cache holds of each (`b (1024 pages, 760 kB)`, or
/// `none` for a column it holds nothing of). No line for a table without
/// packed columns.
fn packed_footer(footer: &mut String, t: &TableInfo) {
    if t.packed.is_empty() {
        return;
    }
    let cols: Vec<String> = t
        .packed
        .iter()
        .map(|p| match p.pages {
            0 => format!("{} (none)", p.name),
            n => format!("{} ({n} pages, {})", p.name, size_pretty(p.bytes)),
        })
        .collect();
    footer.push_str(&format!("Packed columns: {}\n", cols.join(", ")));
}

/// `size` in bytes as `pg_size_pretty` shows it (`8192 bytes`, `16 kB`).
pub fn size_pretty(size: u64) -> String {
    const LIMIT: u64 = 10 * 1024;
    const LIMIT2: u64 = LIMIT * 2 - 1;
    if size < LIMIT {
        return format!("{size} bytes");
    }
    // One extra bit is kept for rounding half up, as PostgreSQL does.
    let mut v = size >> 9;
    for unit in ["kB", "MB", "GB"] {
        if v < LIMIT2 {
            return format!("{} {unit}", v.div_ceil(2));
        }
        v >>= 10;
    }
    format!("{} TB", v.div_ceil(2))
}

/// A `\d` pattern as the name it matches: unquoted parts fold to lower case.
fn normalize_pattern(p: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in p.chars() {
        if c == '"' {
            quoted = !quoted;
        } else if quoted {
            out.push(c);
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Whether `name` matches `pat` with `*` (any run) and `?` (one character).
fn glob_match(pat: &str, name: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The `\h` text: the list of commands, or the synopsis of `topic`,
/// drawn from the grammar (see [`super::sqlhelp`]).
pub fn sql_help(topic: Option<&str>) -> String {
    super::sqlhelp::SqlHelp::new().help(topic)
}

/// psql's `Inherits:` and `Number of child tables:` (`\d`) or `Child
/// tables:` (`\d+`) footers, names after the first aligned under it.
fn inheritance_footer(footer: &mut String, t: &TableInfo, plus: bool) {
    let list = |footer: &mut String, title: &str, names: &[String]| {
        let pad = " ".repeat(title.len() + 1);
        for (i, n) in names.iter().enumerate() {
            footer.push_str(if i == 0 { title } else { &pad });
            if i == 0 {
                footer.push(' ');
            }
            footer.push_str(n);
            footer.push_str(if i + 1 < names.len() { ",\n" } else { "\n" });
        }
    };
    list(footer, "Inherits:", &t.parents);
    if t.children.is_empty() {
        return;
    }
    if plus {
        list(footer, "Child tables:", &t.children);
    } else {
        footer.push_str(&format!(
            "Number of child tables: {} (Use \\d+ to list them.)\n",
            t.children.len()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_pg_size_pretty() {
        assert_eq!(size_pretty(0), "0 bytes");
        assert_eq!(size_pretty(8192), "8192 bytes");
        assert_eq!(size_pretty(16384), "16 kB");
        assert_eq!(size_pretty(10239), "10239 bytes");
        assert_eq!(size_pretty(10240), "10 kB");
        assert_eq!(size_pretty(10485759), "10 MB");
        assert_eq!(size_pretty(10 << 30), "10 GB");
        assert_eq!(size_pretty(20 << 40), "20 TB");
        assert_eq!(size_pretty(20 * 1024 * 1024), "20 MB");
    }

    #[test]
    fn patterns_fold_case_and_glob() {
        assert!(glob_match(&normalize_pattern("T1"), "t1"));
        assert!(!glob_match(&normalize_pattern("\"T1\""), "t1"));
        assert!(glob_match("t*", "tab"));
        assert!(glob_match("t?b", "tab"));
        assert!(!glob_match("t?", "tab"));
    }

    #[test]
    fn sql_help_lists_and_explains() {
        assert!(sql_help(None).contains("  CREATE TABLE "));
        assert!(sql_help(Some("select")).starts_with("Command:     SELECT\n"));
        assert!(sql_help(Some("nosuch")).starts_with("No help available for \"nosuch\"."));
    }
}
