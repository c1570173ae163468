//! The data directory's lock: one open [`crate::Database`] per directory.
//!
//! Owns the file `lock` in the data directory. Two rules make the lock:
//!
//! - *Between processes*, a POSIX record lock (`fcntl(F_SETLK)`, write lock
//!   over the whole file). It belongs to the process, so it is released
//!   when the process exits or closes the file, and — unlike `flock` — a
//!   child created by `fork` does not inherit it. With `flock`, a child
//!   forked by any thread of the process (to run another program) holds a
//!   copy of the locked descriptor until its `exec`, so closing a database
//!   and reopening it from a new process could fail with "in use" for a
//!   moment (the crash harness saw exactly that on a loaded machine).
//! - *Within the process*, where record locks never conflict, a registry of
//!   the locked files (by device and inode).
//!
//! Invariant: a registered file has exactly one open descriptor in this
//! process, the one in its [`DirLock`] — closing any descriptor of a file
//! drops the process's record locks on it — and [`DirLock`]'s drop closes
//! it *before* unregistering, so a new opener in this process never holds a
//! descriptor that an old one's close would unlock.
//!
//! Locking: the registry's mutex is held only around its set operations.

use std::collections::BTreeSet;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Mutex;

use crate::err;
use crate::error::Result;

/// The lock files held by this process, by (device, inode).
static HELD: Mutex<BTreeSet<(u64, u64)>> = Mutex::new(BTreeSet::new());

/// The held lock of one data directory; released on drop.
#[derive(Debug)]
pub struct DirLock {
    /// The open lock file (`None` only while dropping).
    file: Option<File>,
    /// Its registry key.
    key: (u64, u64),
}

fn in_use(dir: &Path) -> crate::error::Error {
    err!(
        ObjectInUse,
        "data directory \"{}\" is in use by another heapdb process",
        dir.display()
    )
    .with_hint(
        "Close the other heapdb shell or program using it, or choose another directory with --data-dir.",
    )
}

impl DirLock {
    /// Locks data directory `dir` (which exists), creating its `lock` file;
    /// fails with `ObjectInUse` when another process or another open
    /// database of this process holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        let path = dir.join("lock");
        let io = |what: &str, e: std::io::Error| {
            err!(IoError, "could not {what} file \"{}\": {e}", path.display())
        };
        let meta = std::fs::metadata(&path);
        let mut held = HELD.lock().expect("directory lock registry poisoned");
        // Check the registry before opening: a second descriptor of a file
        // this process locks would release the lock when closed.
        if let Ok(m) = &meta {
            if held.contains(&(m.dev(), m.ino())) {
                return Err(in_use(dir));
            }
        }
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io("open", e))?;
        let m = file.metadata().map_err(|e| io("stat", e))?;
        let key = (m.dev(), m.ino());
        if held.contains(&key) {
            // Created or replaced between the two looks: drop our descriptor
            // without having locked anything.
            return Err(in_use(dir));
        }
        // SAFETY: an all-zero `struct flock` is valid; the fields that
        // matter are set below.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = libc::F_WRLCK as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = 0;
        fl.l_len = 0; // the whole file
                      // SAFETY: fcntl on a descriptor we own with a valid `struct flock`.
        let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &fl) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EACCES) | Some(libc::EAGAIN) => in_use(dir),
                _ => io("lock", e),
            });
        }
        held.insert(key);
        Ok(DirLock {
            file: Some(file),
            key,
        })
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Close first (releasing the record lock), then let others in.
        drop(self.file.take());
        HELD.lock()
            .expect("directory lock registry poisoned")
            .remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn one_holder_per_process_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let a = DirLock::acquire(dir.path()).unwrap();
        let e = DirLock::acquire(dir.path()).unwrap_err();
        assert_eq!(e.code, crate::error::SqlState::ObjectInUse);
        assert!(e.message.contains("is in use by another heapdb process"));
        drop(a);
        let b = DirLock::acquire(dir.path()).unwrap();
        drop(b);
        DirLock::acquire(dir.path()).unwrap();
    }

    const PROBE_ENV: &str = "HEAPDB_DIRLOCK_PROBE";

    /// Run by the tests below as a child process: tries to lock the
    /// directory named in the environment; exits 0 on success, 3 on "in use".
    #[test]
    #[ignore = "run as a child process by the tests below"]
    fn lock_probe() {
        let Ok(dir) = std::env::var(PROBE_ENV) else {
            return;
        };
        match DirLock::acquire(Path::new(&dir)) {
            Ok(_) => std::process::exit(0),
            Err(e) if e.code == crate::error::SqlState::ObjectInUse => std::process::exit(3),
            Err(e) => panic!("{e:?}"),
        }
    }

    fn probe(dir: &Path) -> Option<i32> {
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "storage::dirlock::tests::lock_probe",
                "--ignored",
            ])
            .env(PROBE_ENV, dir)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap()
            .code()
    }

    /// Another process is kept out while the lock is held, and gets it as
    /// soon as it is dropped, even while another thread keeps forking
    /// children (a `flock` would stay held by each child between its fork
    /// and its exec).
    #[test]
    fn other_processes_wait_for_drop_only() {
        let dir = tempfile::tempdir().unwrap();
        let l = DirLock::acquire(dir.path()).unwrap();
        assert_eq!(probe(dir.path()), Some(3));
        drop(l);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let st = stop.clone();
        let spawner = std::thread::spawn(move || {
            while !st.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = Command::new("true").status();
            }
        });
        for _ in 0..20 {
            drop(DirLock::acquire(dir.path()).unwrap());
            assert_eq!(probe(dir.path()), Some(0), "the lock outlived its holder");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spawner.join().unwrap();
    }
}
