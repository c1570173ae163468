//! The `heapdb` command line, parsed by hand with getopt_long's rules and
//! psql's wording.
//!
//! Parsed by hand rather than with clap: psql users expect getopt's exact
//! behaviour and messages (bundled short flags `-qAt`, attached values `-cSQL`
//! and `--file=F`, unambiguous long prefixes `--vers`, options after
//! operands, `--` ending the options) and psql's error lines
//! (`heapdb: invalid option -- 'Z'` then a `Try "heapdb --help"` hint, exit
//! status 1), which a general-purpose parser words differently. The table
//! below is the whole grammar, so the parser is small.
//!
//! `-c` and `-f` may repeat and run in the order given, as in psql; `-f -`
//! reads standard input. `-v NAME=VALUE` sets a variable and `-v NAME`
//! unsets it. `--data-dir` overrides the `HEAPDB_DATA` environment variable,
//! which overrides the default directory the wiring chooses.
//! `--shared-buffers` takes PostgreSQL's memory syntax (`128MB`, `1GB`) or a
//! number of 8 kB pages.

use std::fmt;
use std::path::PathBuf;

/// One `-c` or `-f`, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `-c COMMAND`: one SQL statement string or one meta-command.
    Command(String),
    /// `-f FILE`: a script; `-` is standard input.
    File(String),
}

/// The options of a run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Args {
    /// `-c` and `-f` in order; empty means interactive (or piped stdin).
    pub actions: Vec<Action>,
    /// `-v NAME=VALUE` (`Some`) and `-v NAME` (unset, `None`), in order.
    pub variables: Vec<(String, Option<String>)>,
    /// `-q`: no informational messages (command tags stay).
    pub quiet: bool,
    /// `-a`: echo every input line read from a script.
    pub echo_all: bool,
    /// `-e`: echo each statement before running it.
    pub echo_queries: bool,
    /// `-A`: unaligned output.
    pub no_align: bool,
    /// `--csv`: csv output.
    pub csv: bool,
    /// `-t`: rows only.
    pub tuples_only: bool,
    /// `-x`: expanded output.
    pub expanded: bool,
    /// `-F SEP`: unaligned field separator.
    pub field_sep: Option<String>,
    /// `-R SEP`: unaligned record separator.
    pub record_sep: Option<String>,
    /// `-P VAR[=ARG]`: printing options, as `\pset VAR ARG`.
    pub pset: Vec<(String, Option<String>)>,
    /// `-o FILE`: query results go to FILE.
    pub output: Option<String>,
    /// `-X`: accepted for psql habits; heapdb reads no startup file.
    pub no_rc: bool,
    /// `-1`: run the whole script in one transaction.
    pub single_transaction: bool,
    /// `--data-dir DIR` or `HEAPDB_DATA`.
    pub data_dir: Option<PathBuf>,
    /// `--shared-buffers SIZE`, in 8 kB pages.
    pub shared_buffers: Option<i64>,
    /// `--huge-pages on|off` (the `huge_pages` setting).
    pub huge_pages: Option<bool>,
    /// Operands, which heapdb ignores with a warning as psql does past its
    /// two (the wiring prints [`Args::warnings`]).
    pub extra: Vec<String>,
}

impl Args {
    /// The data directory to open: `--data-dir`, else `HEAPDB_DATA`, else
    /// [`default_data_dir`]. `None` only when the platform has no user
    /// data directory and none was given.
    pub fn data_dir_or_default(&self) -> Option<PathBuf> {
        self.data_dir.clone().or_else(default_data_dir)
    }

    /// Warnings to print before running (`extra command-line argument`).
    pub fn warnings(&self) -> Vec<String> {
        self.extra
            .iter()
            .map(|a| format!("heapdb: warning: extra command-line argument \"{a}\" ignored"))
            .collect()
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Run the shell with these options (boxed: they are large).
    Run(Box<Args>),
    /// `--help` (or `-?`): print [`help_text`], exit 0.
    Help,
    /// `--help=commands`: print the meta-command help, exit 0.
    HelpCommands,
    /// `--version` (or `-V`): print [`version_text`], exit 0.
    Version,
}

/// A bad command line: print [`ArgError`]'s `Display` to stderr, exit 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError {
    /// The first line, e.g. `heapdb: invalid option -- 'Z'`.
    pub message: String,
    /// Whether to add psql's `Try "heapdb --help"` hint line.
    pub hint: bool,
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if self.hint {
            f.write_str("\nheapdb: hint: Try \"heapdb --help\" for more information.")?;
        }
        Ok(())
    }
}

impl std::error::Error for ArgError {}

fn usage_error(message: String) -> ArgError {
    ArgError {
        message,
        hint: true,
    }
}

fn fatal(message: String) -> ArgError {
    ArgError {
        message: format!("heapdb: error: {message}"),
        hint: false,
    }
}

/// Whether an option takes a value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Takes {
    Nothing,
    Value,
    /// `--help[=options]`: a value only when attached with `=`.
    Optional,
}

/// The option table: long name, short letter, value.
const OPTIONS: &[(&str, Option<char>, Takes)] = &[
    ("command", Some('c'), Takes::Value),
    ("file", Some('f'), Takes::Value),
    ("set", Some('v'), Takes::Value),
    ("variable", None, Takes::Value),
    ("quiet", Some('q'), Takes::Nothing),
    ("echo-all", Some('a'), Takes::Nothing),
    ("echo-queries", Some('e'), Takes::Nothing),
    ("no-align", Some('A'), Takes::Nothing),
    ("csv", None, Takes::Nothing),
    ("tuples-only", Some('t'), Takes::Nothing),
    ("expanded", Some('x'), Takes::Nothing),
    ("field-separator", Some('F'), Takes::Value),
    ("record-separator", Some('R'), Takes::Value),
    ("pset", Some('P'), Takes::Value),
    ("output", Some('o'), Takes::Value),
    ("no-psqlrc", Some('X'), Takes::Nothing),
    ("single-transaction", Some('1'), Takes::Nothing),
    ("data-dir", Some('D'), Takes::Value),
    ("shared-buffers", Some('B'), Takes::Value),
    ("huge-pages", None, Takes::Value),
    ("version", Some('V'), Takes::Nothing),
    ("help", Some('?'), Takes::Optional),
];

/// Parses the arguments after the program name. `env_data_dir` is the value
/// of `HEAPDB_DATA`, if set (passed in so tests need not touch the
/// process environment).
pub fn parse_args<I, S>(args: I, env_data_dir: Option<String>) -> Result<Command, ArgError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let argv: Vec<String> = args.into_iter().map(Into::into).collect();
    let mut a = Args {
        data_dir: env_data_dir.filter(|d| !d.is_empty()).map(PathBuf::from),
        ..Args::default()
    };
    let mut i = 0;
    let mut options_done = false;
    while i < argv.len() {
        let arg = &argv[i];
        i += 1;
        if options_done || arg == "-" || !arg.starts_with('-') {
            a.extra.push(arg.clone());
            continue;
        }
        if arg == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let (full, _, takes) = find_long(name, arg)?;
            let value = match (takes, attached) {
                (Takes::Nothing, Some(_)) => {
                    return Err(usage_error(format!(
                        "heapdb: option '--{full}' doesn't allow an argument"
                    )))
                }
                (Takes::Nothing, None) | (Takes::Optional, None) => None,
                (_, Some(v)) => Some(v),
                (Takes::Value, None) => match argv.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => {
                        return Err(usage_error(format!(
                            "heapdb: option '--{full}' requires an argument"
                        )))
                    }
                },
            };
            if let Some(done) = apply(&mut a, full, value)? {
                return Ok(done);
            }
            continue;
        }
        // A bundle of short options: -qAt, -cSQL, -c SQL.
        let shorts: Vec<char> = arg[1..].chars().collect();
        let mut k = 0;
        while k < shorts.len() {
            let c = shorts[k];
            k += 1;
            let Some(&(full, _, takes)) = OPTIONS.iter().find(|o| o.1 == Some(c)) else {
                return Err(usage_error(format!("heapdb: invalid option -- '{c}'")));
            };
            let value = if takes == Takes::Value {
                if k < shorts.len() {
                    let v: String = shorts[k..].iter().collect();
                    k = shorts.len();
                    Some(v)
                } else if let Some(v) = argv.get(i) {
                    i += 1;
                    Some(v.clone())
                } else {
                    return Err(usage_error(format!(
                        "heapdb: option requires an argument -- '{c}'"
                    )));
                }
            } else {
                None
            };
            if let Some(done) = apply(&mut a, full, value)? {
                return Ok(done);
            }
        }
    }
    Ok(Command::Run(Box::new(a)))
}

/// Finds a long option by exact name or unambiguous prefix (getopt_long).
fn find_long(name: &str, arg: &str) -> Result<(&'static str, Option<char>, Takes), ArgError> {
    if let Some(o) = OPTIONS.iter().find(|o| o.0 == name) {
        return Ok(*o);
    }
    let matches: Vec<_> = OPTIONS.iter().filter(|o| o.0.starts_with(name)).collect();
    match matches.as_slice() {
        [one] => Ok(**one),
        [] => Err(usage_error(format!("heapdb: unrecognized option '{arg}'"))),
        many => {
            let list: String = many.iter().map(|o| format!(" '--{}'", o.0)).collect();
            Err(usage_error(format!(
                "heapdb: option '--{name}' is ambiguous; possibilities:{list}"
            )))
        }
    }
}

/// Records one option; returns `Some` when it ends parsing (help, version).
fn apply(a: &mut Args, name: &str, value: Option<String>) -> Result<Option<Command>, ArgError> {
    let v = || {
        value
            .clone()
            .expect("the option table says this option has a value")
    };
    match name {
        "command" => a.actions.push(Action::Command(v())),
        "file" => a.actions.push(Action::File(v())),
        "set" | "variable" => {
            let text = v();
            let (var, val) = match text.split_once('=') {
                Some((n, val)) => (n.to_string(), Some(val.to_string())),
                None => (text, None),
            };
            if var.is_empty() {
                return Err(fatal("invalid variable name: \"\"".to_string()));
            }
            a.variables.push((var, val));
        }
        "quiet" => a.quiet = true,
        "echo-all" => a.echo_all = true,
        "echo-queries" => a.echo_queries = true,
        "no-align" => a.no_align = true,
        "csv" => a.csv = true,
        "tuples-only" => a.tuples_only = true,
        "expanded" => a.expanded = true,
        "field-separator" => a.field_sep = Some(v()),
        "record-separator" => a.record_sep = Some(v()),
        "pset" => {
            let text = v();
            a.pset.push(match text.split_once('=') {
                Some((n, val)) => (n.to_string(), Some(val.to_string())),
                None => (text, None),
            });
        }
        "output" => a.output = Some(v()),
        "no-psqlrc" => a.no_rc = true,
        "single-transaction" => a.single_transaction = true,
        "data-dir" => a.data_dir = Some(PathBuf::from(v())),
        "shared-buffers" => a.shared_buffers = Some(parse_shared_buffers(&v())?),
        "huge-pages" => a.huge_pages = Some(parse_huge_pages(&v())?),
        "version" => return Ok(Some(Command::Version)),
        "help" => {
            return match value.as_deref() {
                None | Some("options") => Ok(Some(Command::Help)),
                Some("commands") => Ok(Some(Command::HelpCommands)),
                Some(other) => Err(usage_error(format!(
                    "heapdb: unrecognized help topic \"{other}\""
                ))),
            }
        }
        other => unreachable!("option {other} is in the table but not handled"),
    }
    Ok(None)
}

/// `--huge-pages`: a boolean, as the setting takes it.
fn parse_huge_pages(value: &str) -> Result<bool, ArgError> {
    let def = crate::session::lookup_setting("huge_pages").expect("huge_pages is a setting");
    match def.parse(value) {
        Ok(crate::session::SettingValue::Bool(b)) => Ok(b),
        Ok(other) => unreachable!("huge_pages parsed as {other:?}"),
        Err(e) => Err(ArgError {
            message: format!("heapdb: error: {}", e.message),
            hint: false,
        }),
    }
}

/// `--shared-buffers`: PostgreSQL's memory syntax or a count of 8 kB pages,
/// checked against the setting's bounds.
fn parse_shared_buffers(value: &str) -> Result<i64, ArgError> {
    let def =
        crate::session::lookup_setting("shared_buffers").expect("shared_buffers is a setting");
    match def.parse(value) {
        Ok(crate::session::SettingValue::Int(pages)) => Ok(pages),
        Ok(other) => unreachable!("shared_buffers parsed as {other:?}"),
        Err(e) => {
            let mut message = format!("heapdb: error: {}", e.message);
            if let Some(h) = e.hint {
                message.push_str(&format!("\nheapdb: hint: {h}"));
            }
            Err(ArgError {
                message,
                hint: false,
            })
        }
    }
}

/// The default data directory: the user's data directory (`dirs::data_dir`,
/// e.g. `~/.local/share` on Linux) joined with `heapdb`.
pub fn default_data_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("heapdb"))
}

/// Where the interactive history is kept: `heapdb_history` in the user's
/// data directory, beside (not inside) the default data directory, so that
/// it is shared by all data directories as psql's `~/.psql_history` is.
pub fn history_file() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("heapdb_history"))
}

/// `heapdb --version`.
pub fn version_text() -> String {
    format!("heapdb {}", env!("CARGO_PKG_VERSION"))
}

/// `heapdb --help`, modelled on psql's.
pub fn help_text() -> &'static str {
    "heapdb is an in-process SQL database with a psql-style shell.

Usage:
  heapdb [OPTION]...

General options:
  -c, --command=COMMAND    run only single command (SQL or internal) and exit
  -f, --file=FILENAME      execute commands from file, then exit
  -v, --set=, --variable=NAME=VALUE
                           set heapdb variable NAME to VALUE
                           (e.g., -v ON_ERROR_STOP=1)
  -V, --version            output version information, then exit
  -X, --no-psqlrc          accepted for psql compatibility (no startup file)
  -1 (\"one\"), --single-transaction
                           execute as a single transaction (if non-interactive)
  -?, --help[=options]     show this help, then exit
      --help=commands      list backslash commands, then exit

Input and output options:
  -a, --echo-all           echo all input from script
  -e, --echo-queries       echo commands sent to the database
  -o, --output=FILENAME    send query results to file
  -q, --quiet              run quietly (no messages, only query output)

Output format options:
  -A, --no-align           unaligned table output mode
      --csv                CSV (Comma-Separated Values) table output mode
  -F, --field-separator=STRING
                           field separator for unaligned output (default: \"|\")
  -P, --pset=VAR[=ARG]     set printing option VAR to ARG (see \\pset command)
  -R, --record-separator=STRING
                           record separator for unaligned output (default: newline)
  -t, --tuples-only        print rows only
  -x, --expanded           turn on expanded table output

Database options:
  -D, --data-dir=DIR       data directory (default: $HEAPDB_DATA, else the
                           user's data directory + \"/heapdb\")
  -B, --shared-buffers=SIZE
                           buffer pool size, e.g. 128MB, 1GB, or a number of
                           8kB pages (default: 128MB)
  --huge-pages=on|off      transparent huge pages for the buffer pool
                           (default: on)

For more information, type \"\\?\" (for internal commands) or \"\\help\" (for SQL
commands) from within heapdb.
"
}

#[cfg(test)]
mod tests {
    //! Error lines follow psql 15's (getopt_long's) wording, e.g. psql
    //! printed `psql: invalid option -- 'Z'`, `psql: option requires an
    //! argument -- 'c'`, `psql: option '--file' requires an argument`,
    //! `psql: unrecognized option '--foo'`, `psql: option '--csv' doesn't
    //! allow an argument` and `psql: error: invalid variable name: ""`.
    use super::*;

    fn run(args: &[&str]) -> Args {
        match parse_args(args.iter().copied(), None) {
            Ok(Command::Run(a)) => *a,
            other => panic!("expected a run, got {other:?}"),
        }
    }

    fn error(args: &[&str]) -> String {
        parse_args(args.iter().copied(), None)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn commands_and_files_keep_their_order() {
        let a = run(&[
            "-c",
            "select 1",
            "-f",
            "a.sql",
            "--command=select 2",
            "-f-",
            "--file",
            "b.sql",
        ]);
        assert_eq!(
            a.actions,
            vec![
                Action::Command("select 1".into()),
                Action::File("a.sql".into()),
                Action::Command("select 2".into()),
                Action::File("-".into()),
                Action::File("b.sql".into()),
            ]
        );
    }

    #[test]
    fn bundled_flags_and_attached_values() {
        let a = run(&[
            "-qAt",
            "-F;",
            "-o",
            "out.txt",
            "-cselect 1",
            "--csv",
            "-x",
            "-e",
            "-a",
            "-X",
        ]);
        assert!(a.quiet && a.no_align && a.tuples_only && a.csv && a.expanded);
        assert!(a.echo_queries && a.echo_all && a.no_rc);
        assert_eq!(a.field_sep.as_deref(), Some(";"));
        assert_eq!(a.output.as_deref(), Some("out.txt"));
        assert_eq!(a.actions, vec![Action::Command("select 1".into())]);
    }

    #[test]
    fn variables_set_and_unset() {
        let a = run(&[
            "-v",
            "ON_ERROR_STOP=1",
            "--set=X=",
            "-vY",
            "--variable",
            "Z=a=b",
        ]);
        assert_eq!(
            a.variables,
            vec![
                ("ON_ERROR_STOP".into(), Some("1".into())),
                ("X".into(), Some("".into())),
                ("Y".into(), None),
                ("Z".into(), Some("a=b".into())),
            ]
        );
        assert_eq!(
            error(&["-v", "=3"]),
            "heapdb: error: invalid variable name: \"\""
        );
    }

    #[test]
    fn data_dir_from_flag_or_environment() {
        let env = Some("/env/dir".to_string());
        match parse_args(["-q"], env.clone()) {
            Ok(Command::Run(a)) => assert_eq!(a.data_dir, Some(PathBuf::from("/env/dir"))),
            other => panic!("{other:?}"),
        }
        match parse_args(["--data-dir", "/flag"], env) {
            Ok(Command::Run(a)) => assert_eq!(a.data_dir, Some(PathBuf::from("/flag"))),
            other => panic!("{other:?}"),
        }
        assert_eq!(run(&[]).data_dir, None);
    }

    #[test]
    fn default_directories_come_from_the_user_data_dir() {
        if let Some(base) = dirs::data_dir() {
            assert_eq!(default_data_dir(), Some(base.join("heapdb")));
            assert_eq!(history_file(), Some(base.join("heapdb_history")));
            assert_eq!(run(&[]).data_dir_or_default(), Some(base.join("heapdb")));
        }
        assert_eq!(
            run(&["-D", "/x"]).data_dir_or_default(),
            Some(PathBuf::from("/x"))
        );
    }

    #[test]
    fn shared_buffers_units_and_pages() {
        assert_eq!(
            run(&["--shared-buffers", "128MB"]).shared_buffers,
            Some(16384)
        );
        assert_eq!(run(&["--shared-buffers=1GB"]).shared_buffers, Some(131072));
        assert_eq!(run(&["-B", "1000"]).shared_buffers, Some(1000));
        assert_eq!(run(&["--huge-pages", "off"]).huge_pages, Some(false));
        assert_eq!(run(&["--huge-pages=on"]).huge_pages, Some(true));
        let e = error(&["--huge-pages", "maybe"]);
        assert!(
            e.starts_with("heapdb: error: parameter \"huge_pages\" requires a Boolean value"),
            "{e}"
        );
        let e = error(&["--shared-buffers", "lots"]);
        assert!(
            e.starts_with("heapdb: error: invalid value for parameter \"shared_buffers\""),
            "{e}"
        );
    }

    #[test]
    fn help_and_version() {
        assert_eq!(parse_args(["--help"], None), Ok(Command::Help));
        assert_eq!(parse_args(["-?"], None), Ok(Command::Help));
        assert_eq!(
            parse_args(["--help=commands"], None),
            Ok(Command::HelpCommands)
        );
        assert_eq!(parse_args(["-V"], None), Ok(Command::Version));
        assert_eq!(parse_args(["--vers"], None), Ok(Command::Version));
        assert!(help_text().contains("--shared-buffers"));
        assert!(version_text().starts_with("heapdb "));
    }

    #[test]
    fn bad_flags_read_as_psql_reports_them() {
        let hint = "\nheapdb: hint: Try \"heapdb --help\" for more information.";
        assert_eq!(
            error(&["-Z"]),
            format!("heapdb: invalid option -- 'Z'{hint}")
        );
        assert_eq!(
            error(&["--foo"]),
            format!("heapdb: unrecognized option '--foo'{hint}")
        );
        assert_eq!(
            error(&["-c"]),
            format!("heapdb: option requires an argument -- 'c'{hint}")
        );
        assert_eq!(
            error(&["--file"]),
            format!("heapdb: option '--file' requires an argument{hint}")
        );
        assert_eq!(
            error(&["--csv=3"]),
            format!("heapdb: option '--csv' doesn't allow an argument{hint}")
        );
        assert_eq!(
            error(&["--e"]),
            format!("heapdb: option '--e' is ambiguous; possibilities: '--echo-all' '--echo-queries' '--expanded'{hint}")
        );
    }

    #[test]
    fn operands_are_kept_as_warnings() {
        let a = run(&["db", "--", "-c"]);
        assert!(a.actions.is_empty());
        assert_eq!(
            a.warnings(),
            vec![
                "heapdb: warning: extra command-line argument \"db\" ignored".to_string(),
                "heapdb: warning: extra command-line argument \"-c\" ignored".to_string(),
            ]
        );
    }
}
