//! Backslash meta-commands: parsing them and their arguments as psql does
//! (src/bin/psql/psqlscanslash.l, command.c), and running the ones that need
//! no engine against a [`ShellState`].
//!
//! A meta-command line is `\NAME` followed by arguments up to the end of the
//! line, or up to the next backslash, which starts another meta-command
//! (`\pset border 2 \x`). Arguments are separated by whitespace and read
//! psql's way:
//! - `'text'` is a quoted argument: `''` is a quote, and `\n`, `\t`, `\b`,
//!   `\r`, `\f`, `\\`, octal `\NNN` and hex `\xHH` escapes are decoded;
//! - `"text"` keeps its double quotes (patterns and identifiers need them);
//! - `:NAME`, `:'NAME'`, `:"NAME"` substitute variables (see [`vars`]);
//! - quoted and unquoted pieces glue into one argument: `a'b c'd` is `ab cd`.
//!
//! `\copy`, `\h` and `\!` take the rest of the line verbatim. Commands
//! given more arguments than they use warn `\CMD: extra argument "x"
//! ignored` and run.
//! An unknown command is the error `invalid command \foo` and does nothing.

pub mod cond;
mod help;
mod state;
mod system;
pub mod vars;

pub use help::help_text;
pub use state::{Echo, Outcome, Output, ShellState};
pub use system::{shell_escape, ChildEnv};
pub use vars::Variables;

/// A parsed meta-command.
#[derive(Debug, Clone, PartialEq)]
pub enum MetaCommand {
    /// `\q`: leave the shell.
    Quit,
    /// `\? [topic]`: help on meta-commands.
    Help(Option<String>),
    /// `\h [statement]`: SQL syntax help (drawn from the grammar).
    SqlHelp(Option<String>),
    /// `\d[+] [NAME]`: list relations, or describe one.
    Describe {
        /// The relation name or pattern, if given.
        pattern: Option<String>,
        /// `+`: more detail.
        plus: bool,
    },
    /// `\dt[+] [PATTERN]`: list tables.
    ListTables {
        /// Name pattern, if given.
        pattern: Option<String>,
        /// `+`: sizes and more.
        plus: bool,
    },
    /// `\dv [PATTERN]`: list views.
    ListViews {
        /// Name pattern, if given.
        pattern: Option<String>,
    },
    /// `\di [PATTERN]`: list indexes.
    ListIndexes {
        /// Name pattern, if given.
        pattern: Option<String>,
    },
    /// `\i FILE` / `\ir FILE`: run a script.
    Include {
        /// The file, as written.
        path: String,
        /// `\ir`: relative to the directory of the current script.
        relative: bool,
    },
    /// `\o [FILE]`: send results to FILE, or back to stdout.
    Output(Option<String>),
    /// `\echo [-n] TEXT...` (to stdout) or `\qecho` (to the `\o` output).
    Echo {
        /// The arguments joined by spaces.
        text: String,
        /// `-n`: no trailing newline.
        no_newline: bool,
        /// `\qecho`: write to the query output rather than stdout.
        to_query_output: bool,
    },
    /// `\set [NAME [VALUE...]]`; values are concatenated.
    Set(Option<(String, String)>),
    /// `\unset NAME`.
    Unset(String),
    /// `\timing [on|off|verbose]`.
    Timing(Option<String>),
    /// `\x [on|off|auto]`.
    Expanded(Option<String>),
    /// `\a`: toggle aligned / unaligned.
    ToggleAlign,
    /// `\t [on|off]`: tuples only.
    TuplesOnly(Option<String>),
    /// `\f [SEP]`: unaligned field separator.
    FieldSep(Option<String>),
    /// `\pset [NAME [VALUE]]`.
    Pset(Option<String>, Option<String>),
    /// `\copy ...`: the rest of the line, for the engine's COPY.
    Copy(String),
    /// `\watch [SECONDS]`: re-run the query buffer every SECONDS (default 2).
    Watch(f64),
    /// `\conninfo`: data directory, version, shared_buffers.
    ConnInfo,
    /// `\g`: run the query buffer.
    Go,
    /// `\gx`: run the query buffer with expanded output for this query.
    GoExpanded,
    /// `\r`: clear the query buffer.
    ResetBuffer,
    /// `\p`: print the query buffer.
    PrintBuffer,
    /// `\! [COMMAND]`: run the rest of the line in `/bin/sh`, or start
    /// an interactive shell.
    Shell(Option<String>),
    /// `\cd [DIR]`: change the working directory (home without DIR).
    Cd(Option<String>),
    /// `\setenv NAME [VALUE]`: set (or unset) a variable of `\!`'s
    /// environment.
    Setenv(String, Option<String>),
    /// `\getenv VAR NAME`: copy environment variable NAME into VAR.
    Getenv(String, String),
    /// `\c [DBNAME [USER]]` / `\connect`: a new session on the same
    /// database (`-` or the database's own name; heapdb has no users, so
    /// only `-` names the user).
    Connect(Option<String>, Option<String>),
    /// `\gset [PREFIX]`: run the query buffer and store its one row's
    /// columns in variables named PREFIX and the column name.
    Gset(Option<String>),
    /// `\if EXPR`: its arguments joined by spaces.
    If(String),
    /// `\elif EXPR`.
    Elif(String),
    /// `\else`.
    Else,
    /// `\endif`.
    Endif,
}

/// A parsed meta-command with its warnings (`extra argument ignored`).
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    /// The command.
    pub command: MetaCommand,
    /// Warning messages to print (without a locus prefix) before running it.
    pub warnings: Vec<String>,
}

/// The name of the first command of a meta-command line (`if` for
/// `\if :x`), read without looking at its arguments.
pub fn first_command_name(line: &str) -> &str {
    let rest = line.trim_start().strip_prefix('\\').unwrap_or("");
    let len = rest
        .char_indices()
        .find(|&(i, c)| c.is_whitespace() || (c == '\\' && i > 0))
        .map_or(rest.len(), |(i, _)| i);
    &rest[..len]
}

/// Parses a meta-command line (starting with `\`) into its commands, in
/// order; each is a command or the error message psql prints for it.
pub fn parse_meta_line(line: &str, vars: &Variables) -> Vec<Result<Meta, String>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some((parsed, next)) = parse_next_meta(line, pos, vars) {
        out.push(parsed);
        pos = next;
    }
    out
}

/// The command of a meta-command line that starts at byte `pos`, and where
/// the next one starts; `None` when no command is left. A shell runs each
/// before it reads the next, as psql does, so that `\gset x \echo :x`
/// shows the value just set.
pub fn parse_next_meta(
    line: &str,
    pos: usize,
    vars: &Variables,
) -> Option<(Result<Meta, String>, usize)> {
    let mut lx = ArgLexer { s: line, pos, vars };
    lx.skip_space();
    if lx.s[lx.pos..].starts_with("\\\\") {
        // The separator `\\`: another command may follow it.
        lx.pos += 2;
        lx.skip_space();
    }
    if lx.pos >= lx.s.len()
        || !lx.s[lx.pos..].starts_with('\\')
        || lx.s[lx.pos..].starts_with("\\\\")
    {
        return None;
    }
    lx.pos += 1;
    let name = lx.command_name();
    let parsed = parse_command(&name, &mut lx);
    Some((parsed, lx.pos))
}

/// Reads psql-style arguments from a meta-command line.
struct ArgLexer<'a> {
    /// The whole line.
    s: &'a str,
    /// Current byte offset.
    pos: usize,
    /// Variables for `:NAME` substitution.
    vars: &'a Variables,
}

impl ArgLexer<'_> {
    fn skip_space(&mut self) {
        while let Some(c) = self.s[self.pos..].chars().next() {
            if !c.is_whitespace() {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    /// The command name: everything up to whitespace or a backslash (a lone
    /// `\?` or `\\` stays one character long).
    fn command_name(&mut self) -> String {
        let rest = &self.s[self.pos..];
        let len = rest
            .char_indices()
            .find(|&(i, c)| c.is_whitespace() || (c == '\\' && i > 0))
            .map_or(rest.len(), |(i, _)| i);
        self.pos += len;
        rest[..len].to_string()
    }

    /// The next argument, or `None` at end of line or at a backslash.
    fn next_arg(&mut self) -> Option<String> {
        self.skip_space();
        let b = self.s.as_bytes();
        if self.pos >= b.len() || b[self.pos] == b'\\' {
            return None;
        }
        let mut arg = String::new();
        while self.pos < b.len() {
            let c = b[self.pos];
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | b'\\' => break,
                b'\'' => self.single_quoted(&mut arg),
                b'"' => {
                    let end = self.s[self.pos + 1..]
                        .find('"')
                        .map_or(self.s.len(), |p| self.pos + 1 + p + 1);
                    arg.push_str(&self.s[self.pos..end]);
                    self.pos = end;
                }
                b':' => match self.vars.reference(self.s, self.pos) {
                    Some((end, text)) => {
                        arg.push_str(&text);
                        self.pos = end;
                    }
                    None => {
                        // An undefined `:'NAME'` / `:"NAME"` stays as written.
                        let end = quoted_reference_end(self.s, self.pos).unwrap_or(self.pos + 1);
                        arg.push_str(&self.s[self.pos..end]);
                        self.pos = end;
                    }
                },
                _ => {
                    let ch = self.s[self.pos..].chars().next().expect("in bounds");
                    arg.push(ch);
                    self.pos += ch.len_utf8();
                }
            }
        }
        Some(arg)
    }

    /// Decodes a `'...'` argument piece into `arg`.
    fn single_quoted(&mut self, arg: &mut String) {
        let s = self.s;
        let mut chars = s[self.pos + 1..].char_indices().peekable();
        let base = self.pos + 1;
        self.pos = s.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\'' => {
                    if let Some(&(_, '\'')) = chars.peek() {
                        chars.next();
                        arg.push('\'');
                    } else {
                        self.pos = base + i + 1;
                        return;
                    }
                }
                '\\' => match chars.next() {
                    Some((_, 'n')) => arg.push('\n'),
                    Some((_, 't')) => arg.push('\t'),
                    Some((_, 'b')) => arg.push('\u{8}'),
                    Some((_, 'r')) => arg.push('\r'),
                    Some((_, 'f')) => arg.push('\u{c}'),
                    Some((_, d @ '0'..='7')) => {
                        let mut v = d.to_digit(8).expect("octal digit");
                        for _ in 0..2 {
                            match chars.peek() {
                                Some(&(_, e @ '0'..='7')) => {
                                    v = v * 8 + e.to_digit(8).expect("octal digit");
                                    chars.next();
                                }
                                _ => break,
                            }
                        }
                        arg.push(char::from_u32(v).unwrap_or('?'));
                    }
                    Some((_, 'x')) => {
                        let mut v = 0;
                        let mut n = 0;
                        while n < 2 {
                            match chars.peek().and_then(|&(_, h)| h.to_digit(16)) {
                                Some(d) => {
                                    v = v * 16 + d;
                                    chars.next();
                                    n += 1;
                                }
                                None => break,
                            }
                        }
                        if n == 0 {
                            arg.push('x');
                        } else {
                            arg.push(char::from_u32(v).unwrap_or('?'));
                        }
                    }
                    Some((_, other)) => arg.push(other),
                    None => {}
                },
                c => arg.push(c),
            }
        }
    }

    /// The rest of the line, trimmed, verbatim (`\copy`, `\h`).
    fn rest_of_line(&mut self) -> Option<String> {
        let rest = self.s[self.pos..].trim();
        self.pos = self.s.len();
        (!rest.is_empty()).then(|| rest.to_string())
    }

    /// Remaining arguments as `extra argument ignored` warnings.
    fn extras(&mut self, cmd: &str) -> Vec<String> {
        let mut w = Vec::new();
        while let Some(a) = self.next_arg() {
            w.push(format!("\\{cmd}: extra argument \"{a}\" ignored"));
        }
        w
    }
}

/// End of a syntactic `:'NAME'` or `:"NAME"` at byte `i`, if there is one.
fn quoted_reference_end(s: &str, i: usize) -> Option<usize> {
    let rest = &s[i + 1..];
    let q = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let name_len = rest[1..]
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || !c.is_ascii()))
        .unwrap_or(rest.len() - 1);
    (name_len > 0 && rest[1 + name_len..].starts_with(q)).then_some(i + 1 + 1 + name_len + 1)
}

fn parse_command(name: &str, lx: &mut ArgLexer) -> Result<Meta, String> {
    use MetaCommand::*;
    let required =
        |arg: Option<String>| arg.ok_or_else(|| format!("\\{name}: missing required argument"));
    let command = match name {
        "q" | "quit" => Quit,
        "?" => Help(lx.next_arg()),
        "h" | "help" => SqlHelp(lx.rest_of_line()),
        "d" | "d+" => Describe {
            pattern: lx.next_arg(),
            plus: name.ends_with('+'),
        },
        "dv" | "dv+" => ListViews {
            pattern: lx.next_arg(),
        },
        "dt" | "dt+" => ListTables {
            pattern: lx.next_arg(),
            plus: name.ends_with('+'),
        },
        "di" | "di+" => ListIndexes {
            pattern: lx.next_arg(),
        },
        "i" | "include" => Include {
            path: required(lx.next_arg())?,
            relative: false,
        },
        "ir" | "include_relative" => Include {
            path: required(lx.next_arg())?,
            relative: true,
        },
        "o" | "out" => Output(lx.next_arg()),
        "echo" | "qecho" => {
            let mut args = Vec::new();
            let mut no_newline = false;
            let mut first = true;
            while let Some(a) = lx.next_arg() {
                if first && a == "-n" {
                    no_newline = true;
                } else {
                    args.push(a);
                }
                first = false;
            }
            Echo {
                text: args.join(" "),
                no_newline,
                to_query_output: name == "qecho",
            }
        }
        "set" => match lx.next_arg() {
            None => Set(None),
            Some(var) => {
                let mut value = String::new();
                while let Some(a) = lx.next_arg() {
                    value.push_str(&a);
                }
                Set(Some((var, value)))
            }
        },
        "unset" => Unset(required(lx.next_arg())?),
        "timing" => Timing(lx.next_arg()),
        "x" => Expanded(lx.next_arg()),
        "a" => ToggleAlign,
        "t" => TuplesOnly(lx.next_arg()),
        "f" => FieldSep(lx.next_arg()),
        "pset" => {
            let opt = lx.next_arg();
            let value = if opt.is_some() { lx.next_arg() } else { None };
            Pset(opt, value)
        }
        "copy" => Copy(
            lx.rest_of_line()
                .ok_or_else(|| "\\copy: arguments required".to_string())?,
        ),
        "watch" => match lx.next_arg() {
            None => Watch(2.0),
            Some(a) => match a.parse::<f64>() {
                Ok(s) if s.is_finite() && s >= 0.0 => Watch(s),
                _ => return Err(format!("\\watch: incorrect interval value \"{a}\"")),
            },
        },
        "conninfo" => ConnInfo,
        "c" | "connect" => {
            let db = lx.next_arg();
            let user = db.as_ref().and_then(|_| lx.next_arg());
            Connect(db, user)
        }
        "g" => Go,
        "gx" => GoExpanded,
        "gset" => Gset(lx.next_arg()),
        "if" | "elif" => {
            // psql's read_boolean_expression: every argument, spaced.
            let mut args = Vec::new();
            while let Some(a) = lx.next_arg() {
                args.push(a);
            }
            let expr = args.join(" ");
            if name == "if" {
                If(expr)
            } else {
                Elif(expr)
            }
        }
        "else" => Else,
        "endif" => Endif,
        "r" | "reset" => ResetBuffer,
        "p" | "print" => PrintBuffer,
        "!" => Shell(lx.rest_of_line()),
        "cd" => Cd(lx.next_arg()),
        "setenv" => {
            let var = required(lx.next_arg())?;
            Setenv(var, lx.next_arg())
        }
        "getenv" => {
            let var = required(lx.next_arg())?;
            Getenv(var, required(lx.next_arg())?)
        }
        _ => {
            // psql skips the rest of the line after an unknown command.
            lx.pos = lx.s.len();
            return Err(format!("invalid command \\{name}"));
        }
    };
    Ok(Meta {
        command,
        warnings: lx.extras(name),
    })
}

#[cfg(test)]
mod tests;
