//! The meta-commands that reach outside the shell: `\! [COMMAND]`,
//! `\cd [DIR]`, `\setenv NAME [VALUE]` and `\getenv VAR NAME`, as
//! PostgreSQL 15's psql runs them (command.c: `do_shell`, `exec_command_cd`,
//! `exec_command_setenv`, `exec_command_getenv`).
//!
//! `\setenv` does not change the process's own environment, as psql's
//! `setenv(3)` does: heapdb runs threads (parallel scans, COPY), and
//! changing the environment while another thread may read it is unsound.
//! The shell keeps the changes in a [`ChildEnv`] instead, which every
//! `\!` child gets and `\getenv` reads first; the children, the only
//! readers psql's change has besides `\getenv`, see the same thing.
//!
//! `\!` hands the rest of its line, verbatim, to `/bin/sh -c` (what
//! `system(3)` does), or with no command starts `$SHELL` (else `/bin/sh`);
//! the child inherits the shell's standard streams, so whatever the caller
//! has buffered for standard output must be flushed first. Like psql, only
//! a shell that could not be run (status 127, or no process at all) is an
//! error; any other exit status is the command's own business.

use std::collections::BTreeMap;
use std::process::Command;

use crate::shell::script::io_message;

/// The environment changes `\setenv` made: a value, or `None` for unset.
#[derive(Debug, Default)]
pub struct ChildEnv(BTreeMap<String, Option<String>>);

impl ChildEnv {
    /// `\setenv NAME [VALUE]`. Errors are psql's message text.
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        if name.contains('=') {
            return Err("\\setenv: environment variable name must not contain \"=\"".into());
        }
        self.0.insert(name.to_string(), value.map(str::to_string));
        Ok(())
    }

    /// The variable's value as a `\!` child sees it.
    pub fn get(&self, name: &str) -> Option<String> {
        match self.0.get(name) {
            Some(v) => v.clone(),
            None => std::env::var(name).ok(),
        }
    }

    fn apply(&self, cmd: &mut Command) {
        for (name, value) in &self.0 {
            match value {
                Some(v) => cmd.env(name, v),
                None => cmd.env_remove(name),
            };
        }
    }
}

/// Runs `command` through `/bin/sh -c`, or an interactive `$SHELL` when
/// there is none, in the environment `env` gives. Errors are psql's
/// message text.
pub fn shell_escape(command: Option<&str>, env: &ChildEnv) -> Result<(), String> {
    let line = match command {
        Some(c) => c.to_string(),
        None => format!("exec {}", env.get("SHELL").unwrap_or("/bin/sh".into())),
    };
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(line);
    env.apply(&mut cmd);
    let status = cmd.status();
    match status {
        Ok(s) if s.code() != Some(127) => Ok(()),
        _ => Err("\\!: failed".to_string()),
    }
}

/// Changes the working directory to `dir`, or to the home directory when
/// there is none. Errors are psql's message text.
pub fn change_dir(dir: Option<&str>) -> Result<(), String> {
    let target = match dir {
        Some(d) => d.to_string(),
        None => dirs::home_dir()
            .ok_or_else(|| "\\cd: could not get home directory".to_string())?
            .to_string_lossy()
            .into_owned(),
    };
    std::env::set_current_dir(&target).map_err(|e| {
        format!(
            "\\cd: could not change directory to \"{target}\": {}",
            io_message(&e)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_runs_is_not_an_error_whatever_its_status() {
        let env = ChildEnv::default();
        assert_eq!(shell_escape(Some("true"), &env), Ok(()));
        assert_eq!(shell_escape(Some("exit 3"), &env), Ok(()));
    }

    #[test]
    fn a_command_the_shell_cannot_find_fails_as_psql_says() {
        assert_eq!(
            shell_escape(
                Some("heapdb-no-such-command-anywhere 2>/dev/null"),
                &ChildEnv::default()
            ),
            Err("\\!: failed".to_string())
        );
    }

    #[test]
    fn setenv_reaches_children_and_getenv_but_not_the_process() {
        let mut env = ChildEnv::default();
        env.set("HEAPDB_TEST_SETENV", Some("v 1")).unwrap();
        assert_eq!(env.get("HEAPDB_TEST_SETENV").as_deref(), Some("v 1"));
        assert!(std::env::var("HEAPDB_TEST_SETENV").is_err());
        // The child sees it: the test fails the command when it does not.
        assert_eq!(
            shell_escape(
                Some("test \"$HEAPDB_TEST_SETENV\" = 'v 1' || exit 127"),
                &env
            ),
            Ok(())
        );
        env.set("HEAPDB_TEST_SETENV", None).unwrap();
        assert_eq!(env.get("HEAPDB_TEST_SETENV"), None);
        assert_eq!(
            shell_escape(Some("test -z \"$HEAPDB_TEST_SETENV\" || exit 127"), &env),
            Ok(())
        );
        // Unsetting hides what the process itself has.
        env.set("PATH", None).unwrap();
        assert_eq!(env.get("PATH"), None);
        assert_eq!(
            env.set("A=B", Some("x")),
            Err("\\setenv: environment variable name must not contain \"=\"".to_string())
        );
    }

    #[test]
    fn cd_to_a_missing_directory_says_why_and_stays() {
        let before = std::env::current_dir().unwrap();
        let err = change_dir(Some("/heapdb/no/such/dir")).unwrap_err();
        assert_eq!(
            err,
            "\\cd: could not change directory to \"/heapdb/no/such/dir\": No such file or directory"
        );
        assert_eq!(std::env::current_dir().unwrap(), before);
    }
}
