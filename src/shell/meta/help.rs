//! The `\?` text: psql's layout (sections, `  %-22s %s` lines), listing the
//! meta-commands heapdb has.

/// One help line: the command with its arguments, and what it does.
const SECTIONS: &[(&str, &[(&str, &str)])] = &[
    (
        "General",
        &[
            ("\\g", "execute query; \\g is equivalent to a semicolon"),
            ("\\gx", "as \\g, but forces expanded output mode"),
            ("\\q", "quit heapdb"),
            ("\\watch [SEC]", "execute query every SEC seconds"),
        ],
    ),
    (
        "Help",
        &[
            ("\\? [commands]", "show help on backslash commands"),
            ("\\h [NAME]", "help on syntax of SQL commands, * for all commands"),
        ],
    ),
    (
        "Query Buffer",
        &[
            ("\\p", "show the contents of the query buffer"),
            ("\\r", "reset (clear) the query buffer"),
        ],
    ),
    (
        "Input/Output",
        &[
            ("\\copy ...", "perform SQL COPY with data stream to the client host"),
            ("\\echo [-n] [STRING]", "write string to standard output (-n for no newline)"),
            ("\\i FILE", "execute commands from file"),
            ("\\ir FILE", "as \\i, but relative to location of current script"),
            ("\\o [FILE]", "send all query results to file"),
            ("\\qecho [-n] [STRING]", "write string to \\o output stream (-n for no newline)"),
        ],
    ),
    (
        "Informational",
        &[
            ("\\d[+]", "list tables"),
            ("\\d[+]  NAME", "describe table"),
            ("\\dt[+] [PATTERN]", "list tables"),
            ("\\dv[+] [PATTERN]", "list views"),
        ],
    ),
    (
        "Formatting",
        &[
            ("\\a", "toggle between unaligned and aligned output mode"),
            ("\\f [STRING]", "show or set field separator for unaligned query output"),
            ("\\pset [NAME [VALUE]]", "set table output option\n(border|columns|csv_fieldsep|expanded|fieldsep|\nfooter|format|null|recordsep|tuples_only)"),
            ("\\t [on|off]", "show only rows"),
            ("\\x [on|off|auto]", "toggle expanded output"),
        ],
    ),
    (
        "Connection",
        &[("\\conninfo", "display the data directory, version and shared_buffers")],
    ),
    (
        "Operating System",
        &[
            ("\\cd [DIR]", "change the current working directory"),
            ("\\getenv PSQLVAR ENVVAR", "fetch environment variable"),
            ("\\setenv NAME [VALUE]", "set or unset environment variable"),
            ("\\timing [on|off|verbose]", "toggle timing of commands; verbose adds the\nparse/plan/execute split and buffer counters"),
            ("\\! [COMMAND]", "execute command in shell or start interactive shell"),
        ],
    ),
    (
        "Variables",
        &[
            ("\\set [NAME [VALUE]]", "set internal variable, or list all if no parameters"),
            ("\\unset NAME", "unset (delete) internal variable"),
        ],
    ),
];

/// The `\?` (and `heapdb --help=commands`) text.
pub fn help_text() -> String {
    let mut s = String::new();
    for (i, (title, lines)) in SECTIONS.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        s.push_str(title);
        s.push('\n');
        for (cmd, what) in *lines {
            let mut desc = what.split('\n');
            let first = desc.next().unwrap_or("");
            if cmd.len() > 22 {
                s.push_str(&format!("  {cmd}\n  {:22} {first}\n", ""));
            } else {
                s.push_str(&format!("  {cmd:<22} {first}\n"));
            }
            for more in desc {
                s.push_str(&format!("  {:22} {more}\n", ""));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_psql() {
        let h = help_text();
        // psql 15 prints `  \q                     quit psql` and wraps
        // commands longer than 22 columns onto their own line.
        assert!(
            h.starts_with("General\n  \\g                     execute query"),
            "{h}"
        );
        assert!(h.contains("\n  \\q                     quit heapdb\n"));
        assert!(h.contains("\n  \\timing [on|off|verbose]\n                         toggle timing"));
        assert!(h.contains("\n\nVariables\n"));
        assert!(h.ends_with("internal variable\n"));
    }
}
