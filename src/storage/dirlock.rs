//! The data directory's lock: one open [`crate::Database`] per directory.
//!
//! Owns the file `lock` in the data directory (which holds the owner's
//! process id, as PostgreSQL's `postmaster.pid`, for people looking). Three
//! rules make the lock:
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
//! - *On the directory itself*, an `flock` on a descriptor of the data
//!   directory, so that deleting (or replacing) the file `lock` does not let
//!   a second opener in: the record lock and the registry name an inode,
//!   and a new `lock` file is a new inode. The directory cannot be deleted
//!   while it holds the database. A forked child may hold a copy of this
//!   descriptor between its `fork` and its `exec` (close-on-exec), so a
//!   conflict here after the record lock was granted is retried for up to
//!   [`FLOCK_WAIT`] before it counts as "in use".
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
use std::time::{Duration, Instant};

use crate::err;
use crate::error::Result;

/// The lock files held by this process, by (device, inode).
static HELD: Mutex<BTreeSet<(u64, u64)>> = Mutex::new(BTreeSet::new());

/// How long a conflicting `flock` on the directory is retried after the
/// record lock on `lock` was granted (see the module doc).
const FLOCK_WAIT: Duration = Duration::from_secs(2);

/// The held lock of one data directory; released on drop.
#[derive(Debug)]
pub struct DirLock {
    /// The open lock file (`None` only while dropping).
    file: Option<File>,
    /// The data directory, `flock`ed (`None` only while dropping).
    dir: Option<File>,
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
        let dir_file = lock_directory(dir)?;
        // The owner's pid, for people looking (errors here are harmless:
        // the locks above are what count).
        let _ = file.set_len(0).and_then(|_| {
            std::io::Write::write_all(&mut &file, format!("{}\n", std::process::id()).as_bytes())
        });
        held.insert(key);
        Ok(DirLock {
            file: Some(file),
            dir: Some(dir_file),
            key,
        })
    }
}

/// Opens `dir` and takes an exclusive `flock` on it, retrying a conflict
/// for up to [`FLOCK_WAIT`] (a forked child between fork and exec).
fn lock_directory(dir: &Path) -> Result<File> {
    let f = File::open(dir).map_err(|e| {
        err!(
            IoError,
            "could not open directory \"{}\": {e}",
            dir.display()
        )
    })?;
    let start = Instant::now();
    loop {
        // SAFETY: flock on a descriptor we own.
        let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(f);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) if start.elapsed() < FLOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Some(libc::EWOULDBLOCK) => return Err(in_use(dir)),
            Some(libc::EINTR) => {}
            _ => {
                return Err(err!(
                    IoError,
                    "could not lock directory \"{}\": {e}",
                    dir.display()
                ))
            }
        }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Close first (releasing the record lock), then let others in.
        drop(self.file.take());
        drop(self.dir.take());
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

    /// Deleting the file `lock` (or replacing it) does not let a second
    /// opener in, in this process or another.
    #[test]
    fn deleting_the_lock_file_does_not_unlock() {
        let dir = tempfile::tempdir().unwrap();
        let a = DirLock::acquire(dir.path()).unwrap();
        let pid = std::fs::read_to_string(dir.path().join("lock")).unwrap();
        assert_eq!(pid.trim(), std::process::id().to_string());
        std::fs::remove_file(dir.path().join("lock")).unwrap();
        let e = DirLock::acquire(dir.path()).unwrap_err();
        assert_eq!(e.code, crate::error::SqlState::ObjectInUse);
        std::fs::remove_file(dir.path().join("lock")).unwrap();
        assert_eq!(probe(dir.path()), Some(3));
        drop(a);
        assert_eq!(probe(dir.path()), Some(0));
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
