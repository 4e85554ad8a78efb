//! Errors of the run driver, each with the exit code the CLI returns.
//!
//! Exit code 2: the input is wrong (YAML, mesh, parameters) and nothing was run.
//! Exit code 1: the run started and failed (numerical failure, output I/O); the frames
//! already written stay valid.

use std::path::PathBuf;

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
    /// A value out of its range, or inconsistent with the rest of the input.
    #[error("{path}: {field}: {message}")]
    Invalid {
        /// Input file.
        path: PathBuf,
        /// YAML path of the offending value (`time.dt`).
        field: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The mesh could not be read or generated, or is invalid.
    #[error("{path}: {field}: {source}")]
    Mesh {
        /// Input file.
        path: PathBuf,
        /// YAML path that named the mesh.
        field: String,
        /// The mesh error (it names the mesh file).
        source: Box<fem_mesh::MeshError>,
    },
    /// The time stepper could not start (a step above the stability bound, say).
    #[error("{path}: time: {source}")]
    Setup {
        /// Input file.
        path: PathBuf,
        /// Why the stepper refused.
        source: Box<fem_time::StepError>,
    },
    /// The run failed after it started.
    #[error("run failed: {0}")]
    Step(#[from] Box<fem_time::StepError>),
    /// A nonsmooth (contact) run failed after it started.
    #[error("run failed: {0}")]
    Nonsmooth(Box<fem_time::nonsmooth::NonsmoothError>),
    /// A constrained (augmented-Lagrangian) run failed after it started.
    #[error("run failed: {0}")]
    Constrained(Box<fem_time::conservation_form::ConstrainedStepError>),
    /// A beam run failed after it started.
    #[error("run failed: {0}")]
    Beam(Box<fem_beam::BeamError>),
    /// Writing output failed.
    #[error("output: {0}")]
    Output(#[from] fem_io::OutputError),
}

impl FemError {
    /// The process exit code for this error: 2 for bad input, 1 for a failed run.
    pub fn exit_code(&self) -> i32 {
        match self {
            FemError::Step(_)
            | FemError::Nonsmooth(_)
            | FemError::Constrained(_)
            | FemError::Output(_) => 1,
            _ => 2,
        }
    }
}
