//! Evicting files from the OS page cache, for cold-cache workloads.
//!
//! `posix_fadvise(POSIX_FADV_DONTNEED)` drops a file's clean cached pages;
//! dirty pages are not dropped, so each file is `fdatasync`ed first. This
//! needs no privilege beyond reading the file (unlike `/proc/sys/vm/drop_caches`,
//! which containers usually refuse), and it touches only the files named.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Syncs and evicts one file from the page cache.
pub fn evict_file(path: &Path) -> Result<(), String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    file.sync_data()
        .map_err(|e| format!("fdatasync {}: {e}", path.display()))?;
    // SAFETY: the descriptor is open for the duration of the call; offset 0
    // with length 0 means "to the end of the file".
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(format!(
            "posix_fadvise {}: {}",
            path.display(),
            std::io::Error::from_raw_os_error(rc)
        ));
    }
    Ok(())
}

/// The files of a PostgreSQL relation whose main fork is `main` (from
/// `pg_relation_filepath`, made absolute): its 1 GiB segments `main`,
/// `main.1`, ... and its `_fsm` / `_vm` forks.
pub fn relation_files(main: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (main.parent(), main.file_name()) else {
        return Vec::new();
    };
    let name = name.to_string_lossy().into_owned();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let f = p.file_name().map(|f| f.to_string_lossy().into_owned());
            f.is_some_and(|f| is_fork_or_segment(&f, &name))
        })
        .collect();
    files.sort();
    files
}

fn is_fork_or_segment(file: &str, relfilenode: &str) -> bool {
    match file.strip_prefix(relfilenode) {
        Some("") | Some("_fsm") | Some("_vm") => true,
        Some(rest) => {
            rest.strip_prefix('.')
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                || rest.strip_prefix("_fsm.").is_some()
                || rest.strip_prefix("_vm.").is_some()
        }
        None => false,
    }
}

/// Every regular file under `dir`, recursively (heapdb's data directory:
/// its relation files are evicted wholesale).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_segments_and_forks_only() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "16390",
            "16390.1",
            "16390.12",
            "16390_fsm",
            "16390_vm",
            "163901",
            "16390x",
            "16391",
            "16390.",
        ] {
            std::fs::write(dir.path().join(f), b"x").unwrap();
        }
        let names: Vec<String> = relation_files(&dir.path().join("16390"))
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["16390", "16390.1", "16390.12", "16390_fsm", "16390_vm"]
        );
    }

    #[test]
    fn evicts_a_written_file_and_walks_directories() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("base")).unwrap();
        let f = dir.path().join("base").join("1");
        std::fs::write(&f, vec![7u8; 1 << 16]).unwrap();
        evict_file(&f).unwrap();
        // Eviction never changes contents.
        assert_eq!(std::fs::read(&f).unwrap(), vec![7u8; 1 << 16]);
        assert_eq!(files_under(dir.path()), vec![f]);
        assert!(evict_file(&dir.path().join("missing")).is_err());
    }
}
