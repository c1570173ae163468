//! The interactive prompt, as psql's default `%/%R%x%# ` for an ordinary
//! user: `heapdb=> ` ready for a statement, `heapdb-> ` while one continues
//! (or `'`, `"`, `*`, `$`, `(` for an open quote, identifier, comment,
//! dollar quote or parenthesis, from [`LineSplitter::prompt_state`]),
//! `heapdb=*> ` inside a transaction block and `heapdb=!> ` in a failed one.
//! The database name is the data directory's last path component.
//!
//! [`LineSplitter::prompt_state`]: crate::shell::input::LineSplitter::prompt_state

use std::path::Path;

/// The session's transaction state, psql's `%x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptTxn {
    /// Not in a transaction block: nothing shown.
    #[default]
    Idle,
    /// Inside BEGIN ... COMMIT: `*`.
    InTransaction,
    /// Inside a failed transaction block: `!`.
    Failed,
}

/// The prompt for database `name`, with psql's `%R` character `state`
/// (`=` when no statement is in progress) and the transaction status.
pub fn prompt(name: &str, state: char, txn: PromptTxn) -> String {
    let x = match txn {
        PromptTxn::Idle => "",
        PromptTxn::InTransaction => "*",
        PromptTxn::Failed => "!",
    };
    format!("{name}{state}{x}> ")
}

/// The name the prompt shows for a data directory: its last component
/// (`heapdb` when it has none, e.g. `/`).
pub fn database_name(data_dir: &Path) -> String {
    data_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "heapdb".to_string())
}

#[cfg(test)]
mod tests {
    //! psql 15 showed `postgres=> `, `postgres-> `, `postgres=*> `,
    //! `postgres=!> ` and `postgres(> ` for the same states.
    use super::*;

    #[test]
    fn prompts_follow_psqls_default() {
        assert_eq!(prompt("heapdb", '=', PromptTxn::Idle), "heapdb=> ");
        assert_eq!(prompt("heapdb", '-', PromptTxn::Idle), "heapdb-> ");
        assert_eq!(
            prompt("heapdb", '=', PromptTxn::InTransaction),
            "heapdb=*> "
        );
        assert_eq!(prompt("heapdb", '=', PromptTxn::Failed), "heapdb=!> ");
        assert_eq!(prompt("db", '(', PromptTxn::InTransaction), "db(*> ");
    }

    #[test]
    fn database_name_is_the_last_component() {
        assert_eq!(
            database_name(Path::new("/home/u/.local/share/heapdb")),
            "heapdb"
        );
        assert_eq!(database_name(Path::new("/tmp/mydata/")), "mydata");
        assert_eq!(database_name(Path::new("/")), "heapdb");
    }
}
