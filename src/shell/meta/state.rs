//! The shell's own state (variables, printing options, `\timing`, the `\o`
//! target) and the meta-commands that change only it.
//!
//! [`ShellState::execute`] runs `\echo`, `\set`, `\unset`, `\pset`, `\x`,
//! `\a`, `\t`, `\f`, `\timing` and `\o` itself and hands everything that
//! needs the engine, a file to run or the query buffer back to the wiring
//! as an [`Outcome`]. Confirmation lines (`Border style is 2.`) go to the
//! given stdout unless `QUIET` is on, with psql's wording; errors come back
//! as psql's message text for [`crate::shell::report::format_shell_error`].
//!
//! Invariant: the steering variables and the typed fields agree — setting
//! `FETCH_COUNT` or `QUIET` through `\set` or `-v` updates `print` and
//! `quiet`, because every variable change goes through [`ShellState::set_var`].

use std::fs::File;
use std::io::{self, BufWriter, Write};

use super::vars::{parse_bool, Variables};
use super::MetaCommand;
use crate::shell::external_sync::{before_output, Gated};
use crate::shell::print::{Expanded, Format, PrintOptions};
use crate::shell::script::io_message;
use crate::shell::timing::TimingMode;

/// Where query results go (`\o`).
#[derive(Debug, Default)]
pub enum Output {
    /// Standard output.
    #[default]
    Stdout,
    /// A file opened by `\o FILE` or `-o FILE`.
    File {
        /// The name as given.
        name: String,
        /// The open file (its writes wait for deferred commits:
        /// [`crate::shell::external_sync`]).
        file: BufWriter<Gated<File>>,
    },
}

impl Output {
    /// Opens `name` for writing (truncating), as `\o FILE` does.
    pub fn open(name: &str) -> io::Result<Output> {
        Ok(Output::File {
            name: name.to_string(),
            file: BufWriter::with_capacity(1 << 16, Gated(File::create(name)?)),
        })
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout => {
                before_output();
                io::stdout().lock().write(buf)
            }
            Output::File { file, .. } => file.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout => {
                before_output();
                io::stdout().lock().write_all(buf)
            }
            Output::File { file, .. } => file.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout => io::stdout().lock().flush(),
            Output::File { file, .. } => file.flush(),
        }
    }
}

/// The `ECHO` variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Echo {
    /// Echo nothing.
    #[default]
    None,
    /// Echo failed statements (`-b`).
    Errors,
    /// Echo each statement before running it (`-e`).
    Queries,
    /// Echo every input line (`-a`).
    All,
}

/// What the wiring must do after [`ShellState::execute`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Done; read the next input.
    Continue,
    /// `\q`: leave.
    Quit,
    /// `\i` / `\ir`: run this script (resolve `relative` against the
    /// current script's directory).
    Include {
        /// The path as written.
        path: String,
        /// `\ir`.
        relative: bool,
    },
    /// A command the engine, the query buffer or the shell's streams must
    /// run (`\d`, `\dt`, `\h`, `\copy`, `\watch`, `\conninfo`, `\g`,
    /// `\gx`, `\r`, `\p`, `\?`, `\!`).
    Wiring(MetaCommand),
}

/// The shell's settings and variables.
#[derive(Debug, Default)]
pub struct ShellState {
    /// `\set` variables.
    pub vars: Variables,
    /// `\pset` options.
    pub print: PrintOptions,
    /// `\timing`.
    pub timing: TimingMode,
    /// `QUIET` (`-q`): no confirmation messages or banner.
    pub quiet: bool,
    /// `ON_ERROR_STOP`: a failing statement stops a script (exit status 3).
    pub on_error_stop: bool,
    /// `ECHO` (`-e`, `-a`).
    pub echo: Echo,
    /// `\o` target for query results.
    pub output: Output,
    /// `COMMIT_ACK=immediate`: never defer commit acknowledgements
    /// ([`crate::shell::external_sync`]).
    pub commit_ack_immediate: bool,
    /// `\setenv`'s changes, for `\!` children and `\getenv`.
    pub child_env: super::system::ChildEnv,
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

impl ShellState {
    /// The state a run starts with, from the command line: `-A`, `--csv`,
    /// `-t`, `-x`, `-F`, `-R`, `-P`, `-v`, `-q`, `-e`, `-a` and `-o`, applied
    /// in psql's order (printing flags, then `-P`, then `-v`). Errors are
    /// the lines psql prints before exiting with status 1, e.g.
    /// `heapdb: error: could not set printing parameter "foo"`.
    pub fn from_args(args: &crate::shell::args::Args) -> Result<ShellState, String> {
        let mut st = ShellState::default();
        if args.no_align {
            st.print.format = Format::Unaligned;
        }
        if args.csv {
            st.print.format = Format::Csv;
        }
        st.print.tuples_only = args.tuples_only;
        if args.expanded {
            st.print.expanded = Expanded::On;
        }
        if let Some(f) = &args.field_sep {
            st.print.field_sep = f.clone();
        }
        if let Some(r) = &args.record_sep {
            st.print.record_sep = r.clone();
        }
        for (name, value) in &args.pset {
            let mut sink = io::sink();
            // psql takes `-P expanded` as a toggle and `-P name=value` as set.
            st.pset(name, value.as_deref(), true, &mut sink).map_err(|e| {
                format!("heapdb: error: {e}\nheapdb: error: could not set printing parameter \"{name}\"")
            })?;
        }
        if args.quiet {
            st.set_var("QUIET", Some("on")).expect("QUIET takes on");
        }
        if args.echo_queries {
            st.set_var("ECHO", Some("queries"))
                .expect("ECHO takes queries");
        }
        if args.echo_all {
            st.set_var("ECHO", Some("all")).expect("ECHO takes all");
        }
        for (name, value) in &args.variables {
            st.set_var(name, value.as_deref())
                .map_err(|e| format!("heapdb: error: {e}"))?;
        }
        if let Some(o) = &args.output {
            st.output =
                Output::open(o).map_err(|e| format!("heapdb: error: {o}: {}", io_message(&e)))?;
        }
        Ok(st)
    }

    /// Sets (`Some`) or unsets (`None`) a variable and applies it to the
    /// typed settings it steers.
    pub fn set_var(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        match value {
            Some(v) => self.vars.set(name, v)?,
            None => self.vars.unset(name)?,
        }
        match name {
            "QUIET" => self.quiet = self.vars.get_bool(name),
            "ON_ERROR_STOP" => self.on_error_stop = self.vars.get_bool(name),
            "COMMIT_ACK" => {
                self.commit_ack_immediate = self
                    .vars
                    .get(name)
                    .is_some_and(|v| v.trim().eq_ignore_ascii_case("immediate"))
            }
            "FETCH_COUNT" => {
                let n: i64 = self
                    .vars
                    .get(name)
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                self.print.fetch_count = n.max(0) as usize;
            }
            "ECHO" => {
                self.echo = match self.vars.get(name) {
                    Some("errors") => Echo::Errors,
                    Some("queries") => Echo::Queries,
                    Some("all") => Echo::All,
                    _ => Echo::None,
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Runs `cmd` if it needs nothing but this state; confirmation lines go
    /// to `stdout`. Errors are psql's message text.
    pub fn execute(&mut self, cmd: MetaCommand, stdout: &mut dyn Write) -> Result<Outcome, String> {
        let io_err = |e: io::Error| e.to_string();
        let mut say = |quiet: bool, text: String| -> Result<(), String> {
            if !quiet {
                writeln!(stdout, "{text}").map_err(io_err)?;
            }
            Ok(())
        };
        match cmd {
            MetaCommand::Quit => return Ok(Outcome::Quit),
            MetaCommand::Include { path, relative } => {
                return Ok(Outcome::Include { path, relative })
            }
            MetaCommand::Echo {
                text,
                no_newline,
                to_query_output,
            } => {
                let end = if no_newline { "" } else { "\n" };
                if to_query_output {
                    write!(self.output, "{text}{end}").map_err(io_err)?;
                } else {
                    write!(stdout, "{text}{end}").map_err(io_err)?;
                }
            }
            MetaCommand::Set(None) => write!(stdout, "{}", self.vars.listing()).map_err(io_err)?,
            MetaCommand::Set(Some((name, value))) => self.set_var(&name, Some(&value))?,
            MetaCommand::Unset(name) => self.set_var(&name, None)?,
            MetaCommand::Timing(arg) => {
                let result = match arg.as_deref() {
                    None => {
                        self.timing = match self.timing {
                            TimingMode::Off => TimingMode::On,
                            _ => TimingMode::Off,
                        };
                        Ok(())
                    }
                    Some(v) if v.eq_ignore_ascii_case("verbose") => {
                        self.timing = TimingMode::Verbose;
                        Ok(())
                    }
                    Some(v) => match parse_bool(v) {
                        Some(b) => {
                            self.timing = if b { TimingMode::On } else { TimingMode::Off };
                            Ok(())
                        }
                        None => Err(format!(
                            "unrecognized value \"{v}\" for \"\\timing\": Boolean expected"
                        )),
                    },
                };
                // psql reports the state even after a bad value.
                let state = match self.timing {
                    TimingMode::Off => "off",
                    TimingMode::On => "on",
                    TimingMode::Verbose => "verbose",
                };
                let quiet = self.quiet;
                if let Err(e) = result {
                    return Err(format!("{e}\nTiming is {state}."));
                }
                say(quiet, format!("Timing is {state}."))?;
            }
            MetaCommand::Expanded(arg) => {
                let q = self.quiet;
                self.pset("expanded", arg.as_deref(), q, stdout)?
            }
            MetaCommand::ToggleAlign => {
                let next = if self.print.format == Format::Aligned {
                    "unaligned"
                } else {
                    "aligned"
                };
                let q = self.quiet;
                self.pset("format", Some(next), q, stdout)?
            }
            MetaCommand::TuplesOnly(arg) => {
                let q = self.quiet;
                self.pset("tuples_only", arg.as_deref(), q, stdout)?
            }
            MetaCommand::FieldSep(arg) => {
                let q = self.quiet;
                self.pset("fieldsep", arg.as_deref(), q, stdout)?
            }
            MetaCommand::Pset(None, _) => {
                write!(stdout, "{}", self.pset_listing()).map_err(io_err)?
            }
            MetaCommand::Pset(Some(name), value) => {
                let q = self.quiet;
                self.pset(&name, value.as_deref(), q, stdout)?
            }
            MetaCommand::Output(target) => {
                self.output.flush().map_err(io_err)?;
                self.output = match target {
                    None => Output::Stdout,
                    Some(name) => {
                        Output::open(&name).map_err(|e| format!("{name}: {}", io_message(&e)))?
                    }
                };
            }
            MetaCommand::Cd(dir) => super::system::change_dir(dir.as_deref())?,
            MetaCommand::Setenv(name, value) => self.child_env.set(&name, value.as_deref())?,
            MetaCommand::Getenv(var, name) => {
                if let Some(v) = self.child_env.get(&name) {
                    self.set_var(&var, Some(&v))?;
                }
            }
            other => return Ok(Outcome::Wiring(other)),
        }
        Ok(Outcome::Continue)
    }

    /// `\pset NAME [VALUE]`: sets (or toggles, or shows) one option and
    /// prints psql's confirmation line.
    pub fn pset(
        &mut self,
        name: &str,
        value: Option<&str>,
        quiet: bool,
        stdout: &mut dyn Write,
    ) -> Result<(), String> {
        let p = &mut self.print;
        let bool_value = |v: &str, current: bool| -> Result<bool, String> {
            let _ = current;
            parse_bool(v).ok_or_else(|| {
                format!("unrecognized value \"{v}\" for \"{name}\": Boolean expected")
            })
        };
        let mut show = !quiet;
        match name {
            "border" => {
                if let Some(v) = value {
                    p.border = v
                        .trim()
                        .parse::<i64>()
                        .unwrap_or(0)
                        .clamp(0, 65535)
                        .min(255) as u8;
                }
            }
            "columns" => {
                if let Some(v) = value {
                    p.columns = v.trim().parse::<usize>().unwrap_or(0);
                }
            }
            "csv_fieldsep" => {
                if let Some(v) = value {
                    if v.len() != 1 || matches!(v, "\"" | "\n" | "\r") {
                        return Err(
                            "\\pset: csv_fieldsep must be a single one-byte character".into()
                        );
                    }
                    p.csv_field_sep = v.chars().next().expect("one byte");
                }
            }
            "expanded" | "x" => {
                p.expanded = match value {
                    None => {
                        if p.expanded == Expanded::On {
                            Expanded::Off
                        } else {
                            Expanded::On
                        }
                    }
                    Some(v) if v.eq_ignore_ascii_case("auto") => Expanded::Auto,
                    Some(v) => match parse_bool(v) {
                        Some(true) => Expanded::On,
                        Some(false) => Expanded::Off,
                        None => {
                            return Err(format!(
                                "unrecognized value \"{v}\" for \"expanded\"\nAvailable values are: on, off, auto."
                            ))
                        }
                    },
                };
            }
            "fieldsep" => {
                if let Some(v) = value {
                    p.field_sep = v.to_string();
                }
            }
            "footer" => match value {
                // psql 15 confirms a toggle but not an explicit value.
                Some(v) => {
                    p.footer = bool_value(v, p.footer)?;
                    show = false;
                }
                None => p.footer = !p.footer,
            },
            "format" => {
                if let Some(v) = value {
                    const FORMATS: [(&str, Format); 3] = [
                        ("aligned", Format::Aligned),
                        ("csv", Format::Csv),
                        ("unaligned", Format::Unaligned),
                    ];
                    let lower = v.to_ascii_lowercase();
                    let matches: Vec<_> =
                        FORMATS.iter().filter(|f| f.0.starts_with(&lower)).collect();
                    p.format = match matches.as_slice() {
                        [one] if !lower.is_empty() => one.1,
                        [a, b, ..] if !lower.is_empty() => {
                            return Err(format!(
                            "\\pset: ambiguous abbreviation \"{v}\" matches both \"{}\" and \"{}\"",
                            a.0, b.0
                        ))
                        }
                        _ => {
                            return Err("\\pset: allowed formats are aligned, csv, unaligned".into())
                        }
                    };
                }
            }
            "null" => {
                if let Some(v) = value {
                    p.null_display = v.to_string();
                }
            }
            "recordsep" => {
                if let Some(v) = value {
                    p.record_sep = v.to_string();
                }
            }
            "title" => p.title = value.map(str::to_string),
            "tuples_only" | "t" => {
                p.tuples_only = match value {
                    None => !p.tuples_only,
                    Some(v) => bool_value(v, p.tuples_only)?,
                };
            }
            _ => return Err(format!("\\pset: unknown option: {name}")),
        }
        if show {
            let line = self.pset_message(name);
            writeln!(stdout, "{line}").map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// psql's `printPsetInfo` line for one option.
    fn pset_message(&self, name: &str) -> String {
        let p = &self.print;
        match name {
            "border" => format!("Border style is {}.", p.border),
            "columns" if p.columns == 0 => "Target width is unset.".into(),
            "columns" => format!("Target width is {}.", p.columns),
            "csv_fieldsep" => format!("Field separator for CSV is \"{}\".", p.csv_field_sep),
            "expanded" | "x" => match p.expanded {
                Expanded::Auto => "Expanded display is used automatically.".into(),
                e => format!("Expanded display is {}.", on_off(e == Expanded::On)),
            },
            "fieldsep" => format!("Field separator is \"{}\".", p.field_sep),
            "footer" => format!("Default footer is {}.", on_off(p.footer)),
            "format" => format!("Output format is {}.", p.format.name()),
            "null" => format!("Null display is \"{}\".", p.null_display),
            "recordsep" if p.record_sep == "\n" => "Record separator is <newline>.".into(),
            "recordsep" => format!("Record separator is \"{}\".", p.record_sep),
            "title" => match &p.title {
                Some(t) => format!("Title is \"{t}\"."),
                None => "Title is unset.".into(),
            },
            _ => format!("Tuples only is {}.", on_off(p.tuples_only)),
        }
    }

    /// `\pset` without arguments: every option, `%-24s %s`.
    pub fn pset_listing(&self) -> String {
        let p = &self.print;
        let quoted = |s: &str| {
            format!(
                "'{}'",
                s.replace('\\', "\\\\")
                    .replace('\'', "\\'")
                    .replace('\n', "\\n")
            )
        };
        let expanded = match p.expanded {
            Expanded::Off => "off",
            Expanded::On => "on",
            Expanded::Auto => "auto",
        };
        let rows = [
            ("border", p.border.to_string()),
            ("columns", p.columns.to_string()),
            ("csv_fieldsep", quoted(&p.csv_field_sep.to_string())),
            ("expanded", expanded.to_string()),
            ("fieldsep", quoted(&p.field_sep)),
            ("footer", on_off(p.footer).to_string()),
            ("format", p.format.name().to_string()),
            ("null", quoted(&p.null_display)),
            ("recordsep", quoted(&p.record_sep)),
            ("title", p.title.clone().unwrap_or_default()),
            ("tuples_only", on_off(p.tuples_only).to_string()),
        ];
        rows.iter().map(|(k, v)| format!("{k:<24} {v}\n")).collect()
    }
}
