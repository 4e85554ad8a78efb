//! One run per output folder: `DIR/.fem.lock` holds the process id of the run writing there
//! (process 0's in a distributed run). A run that finds the lock of a live process refuses to
//! start (exit 2); a lock left by a process that no longer runs (a killed run) is taken over.
//! The lock is removed when the run ends, whatever the outcome.

use std::path::{Path, PathBuf};

use fem_io::OutputError;

use crate::RunError;

/// The lock file's name in the output folder.
pub(crate) const LOCK_FILE: &str = ".fem.lock";

/// A held lock, released when dropped.
#[derive(Debug)]
pub(crate) struct FolderLock {
    path: PathBuf,
}

impl FolderLock {
    /// Takes the lock of `dir` (which exists) for this process: created exclusively, so of
    /// two runs started together one gets it.
    pub(crate) fn take(dir: &Path) -> Result<Self, RunError> {
        use std::io::Write as _;
        let path = dir.join(LOCK_FILE);
        let me = std::process::id();
        let location = |e| RunError::OutputLocation(OutputError::io("write", &path, e));
        for _ in 0..3 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut file) => {
                    writeln!(file, "{me}").map_err(location)?;
                    return Ok(Self { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|t| t.trim().parse::<u32>().ok());
                    if let Some(pid) = holder
                        && pid != me
                        && is_alive(pid)
                    {
                        return Err(RunError::InUse {
                            dir: dir.to_path_buf(),
                            pid,
                            lock: path,
                        });
                    }
                    // A lock left by a run that no longer runs (or this process's own).
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => return Err(location(e)),
            }
        }
        Err(location(std::io::Error::other(
            "the lock file keeps reappearing: another run is starting here",
        )))
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether process `pid` runs (on Linux, `/proc/PID` exists; elsewhere a lock is trusted).
fn is_alive(pid: u32) -> bool {
    let proc = Path::new("/proc");
    if proc.is_dir() {
        proc.join(pid.to_string()).exists()
    } else {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_run_keeps_the_folder_and_a_dead_one_does_not() {
        let dir = std::env::temp_dir().join(format!("fem_lock_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A lock of a live process (pid 1 runs on every Linux machine).
        std::fs::write(dir.join(LOCK_FILE), "1\n").unwrap();
        if Path::new("/proc/1").exists() {
            assert!(matches!(
                FolderLock::take(&dir),
                Err(RunError::InUse { pid: 1, .. })
            ));
        }
        // A lock of a process that does not run is taken over, and released on drop.
        std::fs::write(dir.join(LOCK_FILE), format!("{}\n", u32::MAX - 1)).unwrap();
        {
            let _lock = FolderLock::take(&dir).unwrap();
            let held = std::fs::read_to_string(dir.join(LOCK_FILE)).unwrap();
            assert_eq!(held.trim(), std::process::id().to_string());
        }
        assert!(!dir.join(LOCK_FILE).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
