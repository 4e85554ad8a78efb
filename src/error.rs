//! Everything `fem` can refuse or fail with, each with the exit code the CLI returns.
//!
//! Exit code 2: the input is wrong (YAML, mesh, parameters, output location) and nothing was
//! run. Exit code 1: the run started and failed (numerical failure, output I/O); the frames
//! already written stay valid.

use std::path::PathBuf;

use fem_drive::RunError;

/// Everything `fem` can refuse or fail with.
#[derive(Debug, thiserror::Error)]
pub enum FemError {
    /// The input file could not be read.
    #[error("{path}: cannot read the input file: {source}")]
    ReadInput {
        /// Input file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// YAML syntax, an unknown key, a missing key or a value of the wrong type.
    #[error("{path}: {message}")]
    Yaml {
        /// Input file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A section refused by its model: the YAML path and what was expected.
    #[error("{path}: {source}")]
    Input {
        /// Input file.
        path: PathBuf,
        /// What is wrong, where.
        source: fem_model::InputError,
    },
    /// A mesh named on the command line could not be read (the file is named once: the
    /// reader's messages already name it).
    #[error("{}", mesh_message(path, source))]
    Mesh {
        /// The mesh file.
        path: PathBuf,
        /// Why.
        source: Box<fem_mesh::MeshError>,
    },
    /// The run could not start or failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// `fem modes`: the eigen-solver failed on a valid input (did not converge, or the
    /// factorization failed for a reason other than a singular shift).
    #[error("{path}: modes: {source}")]
    Modes {
        /// Input file.
        path: PathBuf,
        /// Why.
        source: fem_assembly::ModesError,
    },
}

impl FemError {
    /// The process exit code for this error: 2 for bad input, 1 for a failed run.
    pub fn exit_code(&self) -> u8 {
        match self {
            FemError::Run(e) => e.exit_code(),
            FemError::Modes { .. } => 1,
            _ => 2,
        }
    }
}

/// `source`, prefixed with `path` unless it already names it.
fn mesh_message(path: &std::path::Path, source: &fem_mesh::MeshError) -> String {
    let message = source.to_string();
    let name = path.display().to_string();
    if message.contains(&name) {
        message
    } else {
        format!("{name}: {message}")
    }
}
