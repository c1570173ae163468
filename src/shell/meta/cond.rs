//! `\if`, `\elif`, `\else`, `\endif`: psql's conditional stack
//! (src/bin/psql/conditional.c and the branching commands of command.c).
//!
//! Each open `\if` is one entry. While any entry is inactive the shell
//! neither runs statements nor meta-commands other than these four (their
//! expressions are not even read), but it still reads, and under `-a`
//! echoes, every line. Each script (`-f`, `\i`, piped input) has its own
//! stack; one left open at its end is an error.
//!
//! Query text typed inside a branch that does not run is dropped when the
//! branch ends: the stack remembers the query buffer's length at each `\if`.

/// The state of one `\if` block (psql's `ifState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IfState {
    /// This branch runs.
    True,
    /// No branch has run yet; this one does not.
    False,
    /// A branch already ran, or the whole block is inside one that does
    /// not run.
    Ignored,
    /// `\else` that runs.
    ElseTrue,
    /// `\else` that does not run.
    ElseFalse,
}

/// One open `\if`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    state: IfState,
    /// The query buffer's length when the `\if` was read.
    buffer_len: usize,
}

/// The stack of open `\if` blocks.
#[derive(Debug, Default)]
pub struct CondStack {
    entries: Vec<Entry>,
}

/// What the shell does after a branching command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branch {
    /// Cut the query buffer back to this length (text of a skipped branch).
    pub truncate_buffer: Option<usize>,
    /// The error to report, if the command was misplaced.
    pub error: Option<String>,
}

impl CondStack {
    /// Whether statements and commands run here (every block is in a
    /// branch that runs).
    pub fn active(&self) -> bool {
        self.entries.last().map_or(true, |e| {
            matches!(e.state, IfState::True | IfState::ElseTrue)
        })
    }

    /// Whether no block is open.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `\if`: `expr` is the expression's value when the current branch
    /// runs (the caller evaluates it only then), `None` otherwise.
    /// `buffer_len` is the query buffer's length now.
    pub fn push_if(&mut self, expr: Option<bool>, buffer_len: usize) {
        let state = match expr {
            _ if !self.active() => IfState::Ignored,
            Some(true) => IfState::True,
            _ => IfState::False,
        };
        self.entries.push(Entry { state, buffer_len });
    }

    /// Whether an `\elif` here would evaluate its expression (no branch of
    /// its block has run yet, and the block itself may run).
    pub fn elif_evaluates(&self) -> bool {
        self.entries
            .last()
            .is_some_and(|e| e.state == IfState::False)
    }

    /// `\elif`, its expression's value when [`CondStack::elif_evaluates`];
    /// `buffer_len` is the query buffer's length now.
    pub fn elif(&mut self, expr: Option<bool>, buffer_len: usize) -> Branch {
        let Some(top) = self.entries.last_mut() else {
            return Branch::error("\\elif: no matching \\if");
        };
        let skipped = top.state != IfState::True;
        if !skipped {
            // What the branch that ran typed stays; later branches' text goes.
            top.buffer_len = buffer_len;
        }
        top.state = match top.state {
            IfState::True | IfState::Ignored => IfState::Ignored,
            IfState::False if expr == Some(true) => IfState::True,
            IfState::False => IfState::False,
            IfState::ElseTrue | IfState::ElseFalse => {
                return Branch::error("\\elif: cannot occur after \\else")
            }
        };
        Branch::ok(skipped.then_some(top.buffer_len))
    }

    /// `\else`; `buffer_len` is the query buffer's length now.
    pub fn else_(&mut self, buffer_len: usize) -> Branch {
        let Some(top) = self.entries.last_mut() else {
            return Branch::error("\\else: no matching \\if");
        };
        let skipped = top.state != IfState::True;
        if !skipped {
            top.buffer_len = buffer_len;
        }
        top.state = match top.state {
            IfState::True | IfState::Ignored => IfState::ElseFalse,
            IfState::False => IfState::ElseTrue,
            IfState::ElseTrue | IfState::ElseFalse => {
                return Branch::error("\\else: cannot occur after \\else")
            }
        };
        Branch::ok(skipped.then_some(top.buffer_len))
    }

    /// `\endif`.
    pub fn endif(&mut self) -> Branch {
        let Some(top) = self.entries.pop() else {
            return Branch::error("\\endif: no matching \\if");
        };
        let ran = matches!(top.state, IfState::True | IfState::ElseTrue);
        Branch::ok((!ran).then_some(top.buffer_len))
    }
}

impl Branch {
    fn ok(truncate_buffer: Option<usize>) -> Branch {
        Branch {
            truncate_buffer,
            error: None,
        }
    }

    fn error(msg: &str) -> Branch {
        Branch {
            truncate_buffer: None,
            error: Some(msg.to_string()),
        }
    }
}

/// psql's `ParseVariableBool`: unique prefixes of `true`, `false`, `yes`,
/// `no`, then `on`, `off` (at least two letters), `1`, `0`, any case;
/// nothing is trimmed.
pub fn parse_psql_bool(value: &str) -> Option<bool> {
    let v = value.to_ascii_lowercase();
    let prefix_of = |word: &str| !v.is_empty() && word.starts_with(v.as_str());
    if prefix_of("true") {
        Some(true)
    } else if prefix_of("false") {
        Some(false)
    } else if prefix_of("yes") {
        Some(true)
    } else if prefix_of("no") {
        Some(false)
    } else if v == "on" {
        Some(true)
    } else if v.len() >= 2 && "off".starts_with(v.as_str()) {
        Some(false)
    } else if v == "1" {
        Some(true)
    } else if v == "0" {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psql_booleans() {
        for t in ["t", "TRUE", "y", "yes", "on", "ON", "1"] {
            assert_eq!(parse_psql_bool(t), Some(true), "{t}");
        }
        for f in ["f", "false", "n", "NO", "of", "off", "0"] {
            assert_eq!(parse_psql_bool(f), Some(false), "{f}");
        }
        for bad in ["", "o", " on", "2", "onn", "truex"] {
            assert_eq!(parse_psql_bool(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn nested_blocks_run_one_branch_each() {
        let mut c = CondStack::default();
        c.push_if(Some(false), 0);
        assert!(!c.active());
        assert!(c.elif_evaluates());
        assert_eq!(c.elif(Some(true), 3).truncate_buffer, Some(0));
        assert!(c.active());
        // Nested inside a running branch: a false \if, then its \else.
        c.push_if(Some(false), 5);
        assert!(!c.active());
        assert_eq!(c.else_(9), Branch::ok(Some(5)));
        assert!(c.active());
        assert_eq!(c.endif(), Branch::ok(None));
        // A later \elif of the outer block never runs.
        assert!(!c.elif_evaluates());
        // The text the running branch typed (to 4) stays.
        assert_eq!(c.elif(None, 4), Branch::ok(None));
        assert!(!c.active());
        // Inside it, a nested \if is ignored whatever it says.
        c.push_if(None, 7);
        assert!(!c.elif_evaluates());
        assert_eq!(c.else_(8).error, None);
        assert!(!c.active());
        assert_eq!(c.endif(), Branch::ok(Some(7)));
        assert_eq!(c.else_(8), Branch::ok(Some(4)));
        assert!(!c.active());
        assert_eq!(
            c.elif(None, 8).error.as_deref(),
            Some("\\elif: cannot occur after \\else")
        );
        assert_eq!(c.endif(), Branch::ok(Some(4)));
        assert!(c.is_empty() && c.active());
        assert_eq!(
            c.endif().error.as_deref(),
            Some("\\endif: no matching \\if")
        );
    }
}
