//! Tab completion for the interactive prompt: meta-commands, SQL keywords,
//! table names, and column names once a table is named — plus the
//! rustyline [`ShellHelper`] that offers them.
//!
//! The catalog is reached through [`CatalogNames`], which the wiring
//! implements over the engine; this module only decides what kind of name
//! fits where, a small subset of psql's `tab-complete.c`:
//! - a word starting with `\` at the start of a line: meta-command names;
//! - after `FROM`, `JOIN`, `INTO`, `UPDATE`, `TABLE`, `TRUNCATE`, `VACUUM`,
//!   `ANALYZE`, `\d` or `\dt`: table names;
//! - `tbl.` followed by a prefix: the columns of `tbl`;
//! - elsewhere: the columns of every table the statement names so far, and
//!   keywords.
//!
//! Keywords keep the case the user started typing (upper case when the
//! word is empty), as psql's default `COMP_KEYWORD_CASE=preserve-upper`.
//! Matching is case-insensitive, since unquoted names fold to lower case.
//!
//! The statement may span several lines; rustyline sees only the current
//! one, so the wiring hands the rest of the statement in progress to
//! [`ShellHelper::set_statement`] before each prompt.

use std::sync::Mutex;

use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

/// Names from the catalog, for completion.
pub trait CatalogNames {
    /// All table names.
    fn table_names(&self) -> Vec<String>;
    /// The column names of `table` (empty when there is no such table).
    fn column_names(&self, table: &str) -> Vec<String>;
}

/// Meta-commands offered after a backslash.
const META_COMMANDS: &[&str] = &[
    "\\!",
    "\\?",
    "\\a",
    "\\cd",
    "\\conninfo",
    "\\copy",
    "\\d",
    "\\d+",
    "\\dt",
    "\\dt+",
    "\\dv",
    "\\dv+",
    "\\echo",
    "\\f",
    "\\g",
    "\\getenv",
    "\\gx",
    "\\h",
    "\\i",
    "\\ir",
    "\\o",
    "\\p",
    "\\pset",
    "\\q",
    "\\qecho",
    "\\r",
    "\\set",
    "\\setenv",
    "\\t",
    "\\timing",
    "\\unset",
    "\\watch",
    "\\x",
];

/// SQL keywords offered outside name positions.
const KEYWORDS: &[&str] = &[
    "ABORT",
    "ALL",
    "ALTER",
    "ANALYZE",
    "AND",
    "AS",
    "ASC",
    "BEGIN",
    "BETWEEN",
    "BIGINT",
    "BOOLEAN",
    "BY",
    "CASE",
    "CAST",
    "CHECKPOINT",
    "COMMIT",
    "COPY",
    "COUNT",
    "CREATE",
    "CROSS",
    "DEFAULT",
    "DELETE",
    "DESC",
    "DISTINCT",
    "DOUBLE",
    "DROP",
    "ELSE",
    "END",
    "EXISTS",
    "EXPLAIN",
    "FALSE",
    "FROM",
    "FULL",
    "GROUP",
    "HAVING",
    "IN",
    "INNER",
    "INSERT",
    "INTEGER",
    "INTO",
    "IS",
    "JOIN",
    "LEFT",
    "LIKE",
    "LIMIT",
    "NOT",
    "NULL",
    "NUMERIC",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "PRIMARY",
    "RESET",
    "RIGHT",
    "ROLLBACK",
    "SELECT",
    "SET",
    "SHOW",
    "SMALLINT",
    "TABLE",
    "TEXT",
    "THEN",
    "TIMESTAMP",
    "TRUE",
    "TRUNCATE",
    "UNION",
    "UPDATE",
    "USING",
    "VACUUM",
    "VALUES",
    "VARCHAR",
    "VERBOSE",
    "WHEN",
    "WHERE",
    "WITH",
];

/// Keywords after which a table name comes.
const TABLE_CONTEXT: &[&str] = &[
    "FROM", "JOIN", "INTO", "UPDATE", "TABLE", "TRUNCATE", "VACUUM", "ANALYZE",
];

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.' || c == '\\' || c == '+' || c == '?' || c == '$'
}

/// The byte offset where the word ending at `pos` starts.
fn word_start(line: &str, pos: usize) -> usize {
    line[..pos]
        .char_indices()
        .rev()
        .find(|&(_, c)| !is_word_char(c))
        .map_or(0, |(i, c)| i + c.len_utf8())
}

/// Words of `text`, upper-cased, as plain identifiers and keywords.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\\' || c == '+'))
        .filter(|w| !w.is_empty())
}

/// Completes the word at `pos` of `line`; `statement` is the text of the
/// statement before this line (empty on its first line). Returns the start
/// of the word and the candidates, sorted.
pub fn complete(
    statement: &str,
    line: &str,
    pos: usize,
    names: &dyn CatalogNames,
) -> (usize, Vec<String>) {
    let start = word_start(line, pos);
    let word = &line[start..pos];
    let first_on_line = line[..start].trim().is_empty();

    if word.starts_with('\\') && first_on_line && statement.is_empty() {
        return (
            start,
            matching(META_COMMANDS.iter().map(|s| s.to_string()), word),
        );
    }

    let before = format!("{statement}\n{}", &line[..start]);
    let prev = words(&before).last().unwrap_or("").to_ascii_uppercase();
    let starts_meta = line.trim_start().starts_with('\\');
    let meta_word = line.split_whitespace().next().unwrap_or("");

    if TABLE_CONTEXT.contains(&prev.as_str())
        || (starts_meta
            && matches!(meta_word, "\\d" | "\\d+" | "\\dt" | "\\dt+")
            && prev.starts_with('\\'))
    {
        return (start, matching(names.table_names().into_iter(), word));
    }
    if starts_meta {
        return (start, Vec::new());
    }

    if let Some((table, col_prefix)) = word.rsplit_once('.') {
        let cols = names.column_names(table).into_iter();
        let found = matching(cols, col_prefix);
        return (
            start,
            found.into_iter().map(|c| format!("{table}.{c}")).collect(),
        );
    }

    // Columns of the tables named so far, then keywords.
    let text = format!("{before}{}", &line[pos..]);
    let tokens: Vec<&str> = words(&text).collect();
    let mut cands = Vec::new();
    for pair in tokens.windows(2) {
        if TABLE_CONTEXT.contains(&pair[0].to_ascii_uppercase().as_str()) {
            cands.extend(names.column_names(pair[1]));
        }
    }
    let lower = word.chars().next().is_some_and(char::is_lowercase);
    cands.extend(KEYWORDS.iter().map(|k| {
        if lower {
            k.to_ascii_lowercase()
        } else {
            k.to_string()
        }
    }));
    (start, matching(cands.into_iter(), word))
}

/// Candidates starting with `prefix` (ignoring case), sorted, without
/// duplicates.
fn matching(cands: impl Iterator<Item = String>, prefix: &str) -> Vec<String> {
    let p = prefix.to_lowercase();
    let mut v: Vec<String> = cands.filter(|c| c.to_lowercase().starts_with(&p)).collect();
    v.sort();
    v.dedup();
    v
}

/// The rustyline helper of the interactive shell: completion only (no
/// hints, highlighting or validation — statements end by the splitter's
/// rules, not rustyline's).
pub struct ShellHelper<N: CatalogNames> {
    /// Where names come from.
    names: N,
    /// The statement in progress before the current line.
    statement: Mutex<String>,
}

impl<N: CatalogNames> ShellHelper<N> {
    /// A helper completing from `names`.
    pub fn new(names: N) -> Self {
        ShellHelper {
            names,
            statement: Mutex::new(String::new()),
        }
    }

    /// Records the statement in progress (the splitter's buffer) so the
    /// next completion sees the tables it names.
    pub fn set_statement(&self, text: &str) {
        let mut s = self.statement.lock().unwrap_or_else(|e| e.into_inner());
        s.clear();
        s.push_str(text);
    }
}

impl<N: CatalogNames> Completer for ShellHelper<N> {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let statement = self
            .statement
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        Ok(complete(&statement, line, pos, &self.names))
    }
}

impl<N: CatalogNames> Hinter for ShellHelper<N> {
    type Hint = String;
}

impl<N: CatalogNames> Highlighter for ShellHelper<N> {}

impl<N: CatalogNames> Validator for ShellHelper<N> {}

impl<N: CatalogNames> Helper for ShellHelper<N> {}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;

    impl CatalogNames for Fixed {
        fn table_names(&self) -> Vec<String> {
            vec![
                "pgbench_accounts".into(),
                "pgbench_branches".into(),
                "fehistory_1".into(),
            ]
        }
        fn column_names(&self, table: &str) -> Vec<String> {
            match table {
                "pgbench_accounts" => vec!["aid".into(), "bid".into(), "abalance".into()],
                "fehistory_1" => vec!["id".into(), "ab".into()],
                _ => vec![],
            }
        }
    }

    fn c(statement: &str, line: &str) -> (usize, Vec<String>) {
        complete(statement, line, line.len(), &Fixed)
    }

    #[test]
    fn meta_commands_after_a_backslash() {
        assert_eq!(c("", "\\ti"), (0, vec!["\\timing".to_string()]));
        assert_eq!(
            c("", "  \\dt").1,
            vec!["\\dt".to_string(), "\\dt+".to_string()]
        );
    }

    #[test]
    fn table_names_after_from_and_describe() {
        assert_eq!(
            c("", "select * from pgb"),
            (
                14,
                vec![
                    "pgbench_accounts".to_string(),
                    "pgbench_branches".to_string()
                ]
            )
        );
        assert_eq!(c("select *", "FROM fe").1, vec!["fehistory_1".to_string()]);
        assert_eq!(
            c("", "\\d pgbench_a").1,
            vec!["pgbench_accounts".to_string()]
        );
        assert_eq!(c("", "insert into f").1, vec!["fehistory_1".to_string()]);
    }

    #[test]
    fn columns_once_a_table_is_named() {
        assert_eq!(
            c("select * from pgbench_accounts", "where a").1,
            vec![
                "abalance".to_string(),
                "abort".to_string(),
                "aid".to_string(),
                "all".to_string(),
                "alter".to_string(),
                "analyze".to_string(),
                "and".to_string(),
                "as".to_string(),
                "asc".to_string()
            ]
        );
        assert_eq!(
            c("", "select pgbench_accounts.a").1,
            vec![
                "pgbench_accounts.abalance".to_string(),
                "pgbench_accounts.aid".to_string()
            ]
        );
    }

    #[test]
    fn keywords_keep_the_typed_case() {
        assert_eq!(c("", "SEL"), (0, vec!["SELECT".to_string()]));
        assert_eq!(c("", "sel"), (0, vec!["select".to_string()]));
        assert!(c("", "").1.contains(&"SELECT".to_string()));
    }
}
