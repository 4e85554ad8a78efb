//! The error type of this crate.

use std::path::{Path, PathBuf};

/// A failure while writing output; every variant names the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// An I/O operation (`op`, e.g. "create", "write", "rename") failed on `path`.
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. `"create"`, `"write"`, `"rename to final name"`.
        op: &'static str,
        /// The file (or directory) the operation was applied to.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// vtkio failed to encode or serialize the data set for `path`.
    #[error("cannot {op} {}: {message}", path.display())]
    Vtk {
        /// What was being done, e.g. `"encode VTK data for"`.
        op: &'static str,
        /// The `.vtu` file being written.
        path: PathBuf,
        /// vtkio's error message.
        message: String,
    },
    /// The caller's data is inconsistent (wrong lengths, out-of-range node indices, …);
    /// nothing was written to `path`.
    #[error("{}: {message}", path.display())]
    InvalidData {
        /// The file that was to be written.
        path: PathBuf,
        /// What is wrong with the data.
        message: String,
    },
}

impl OutputError {
    /// The file (or directory) the failure concerns.
    pub fn path(&self) -> &Path {
        match self {
            OutputError::Io { path, .. }
            | OutputError::Vtk { path, .. }
            | OutputError::InvalidData { path, .. } => path,
        }
    }

    /// A file-system failure of `op` on `path`.
    pub fn io(op: &'static str, path: &Path, source: std::io::Error) -> Self {
        OutputError::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn invalid(path: &Path, message: impl Into<String>) -> Self {
        OutputError::InvalidData {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}
