//! Write-to-temporary-then-rename helper.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::OutputError;

/// `path` with `.tmp` appended to its file name (`X.pvd` → `X.pvd.tmp`), in the same directory
/// so the final rename never crosses file systems.
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    let mut name: OsString = path.file_name().map(OsString::from).unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Writes `path` atomically: `fill` writes into a buffered `path.tmp`, which is flushed,
/// optionally fsynced, and renamed over `path`. On any failure the temporary file is removed
/// (best effort) and `path` is left untouched.
pub(crate) fn write_atomically(
    path: &Path,
    fsync: bool,
    fill: impl FnOnce(&mut BufWriter<File>, &Path) -> Result<(), OutputError>,
) -> Result<(), OutputError> {
    let tmp = tmp_path(path);
    let result = (|| {
        let file = File::create(&tmp).map_err(|e| OutputError::io("create", &tmp, e))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        fill(&mut w, &tmp)?;
        w.flush().map_err(|e| OutputError::io("write", &tmp, e))?;
        if fsync {
            w.get_ref()
                .sync_all()
                .map_err(|e| OutputError::io("fsync", &tmp, e))?;
        }
        drop(w);
        std::fs::rename(&tmp, path)
            .map_err(|e| OutputError::io("rename temporary file to", path, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
