//! `fem`: a finite-element framework for 1D and 3D structural dynamics.
//!
//! This crate is the command-line program and a facade over the libraries:
//!
//! | crate | concern |
//! |---|---|
//! | [`mesh`] (`fem-mesh`) | mesh type, Gmsh reader, generators |
//! | [`io`] (`fem-io`) | ParaView `.vtu`/`.pvd`, CSV histories |
//! | [`elements`] (`fem-elements`) | quadrature and element kernels |
//! | [`assembly`] (`fem-assembly`) | dof maps, parallel assembly, lumping, sparse Cholesky and LU |
//! | [`constraints`] (`fem-constraints`) | Dirichlet sets and time functions, LCP solvers, unilateral contact |
//! | [`contact`] (`fem-contact`) | contact law, body interface, NSGS solver, detection, FCLIB reader |
//! | [`time`] (`fem-time`) | the second-order system, the `Stepper` interface and the steppers |
//! | [`model`] (`fem-model`) | the `Model` interface, the shared input sections and their builders |
//! | [`drive`] (`fem-drive`) | the run loop, on one process or many |
//! | [`string`], [`modal`], [`pendulum`], [`beam`], [`rigid`], [`solid`] | the model families |
//! | `mpi` (`fem-mpi`, feature `mpi`) | the explicit solid on MPI |
//!
//! The modules here turn a YAML file into a run: [`input`] is the file's schema and the
//! registry of models, [`drive`] the one run loop (which a downstream program calls with a
//! model of its own: `examples/`).

pub use fem_assembly as assembly;
pub use fem_beam as beam;
pub use fem_constraints as constraints;
pub use fem_contact as contact;
pub use fem_drive as drive;
pub use fem_elements as elements;
pub use fem_io as io;
pub use fem_mesh as mesh;
pub use fem_modal as modal;
pub use fem_model as model;
#[cfg(feature = "mpi")]
pub use fem_mpi as mpi;
pub use fem_pendulum as pendulum;
pub use fem_rigid as rigid;
pub use fem_scene as scene;
pub use fem_solid as solid;
pub use fem_string as string;
pub use fem_time as time;
/// Dense small matrices (`DMatrix` for dense tangents and masses).
pub use nalgebra;
/// Sparse matrices (`CsrMatrix`).
pub use nalgebra_sparse;

pub mod cli;
#[cfg(feature = "mpi")]
pub mod distributed;
pub mod error;
pub mod input;
pub mod modes;
mod yaml;

use std::path::Path;

use error::FemError;
use fem_model::resources::{Budget, Bytes, MAX_INPUT_FILE};
use input::{Input, ModelInput, ModelRegistry};

/// The serialization framework the input sections use (for [`registry!`]).
pub use serde;

// `fem::serde` names the framework in the code [`registry!`] writes, here as downstream.
extern crate self as fem;

/// The number of processes an MPI launcher (MPICH's Hydra, Open MPI, PMIx) started this
/// process among, when it was started by one.
pub fn launched_by_mpirun() -> Option<usize> {
    let size = [
        "PMI_SIZE",
        "OMPI_COMM_WORLD_SIZE",
        "PMIX_SIZE",
        "MPI_LOCALNRANKS",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.trim().parse::<usize>().ok());
    let launched = ["PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    launched.then_some(size.unwrap_or(1))
}

/// Reads and parses an input file: a regular file of at most
/// [`MAX_INPUT_FILE`] bytes of UTF-8 text (a device such as
/// `/dev/zero`, a pipe or a folder is refused before it is opened, a larger file before it is
/// read).
pub fn load(path: &Path) -> Result<Input, FemError> {
    load_with::<ModelInput>(path)
}

/// [`load`] with the models of the registry `M`.
pub fn load_with<M: ModelRegistry>(path: &Path) -> Result<Input<M>, FemError> {
    let text = read_input(path)?;
    parse_with(&text, path)
}

/// The text of an input file, after checking that it is a regular file of at most
/// [`MAX_INPUT_FILE`] bytes.
pub fn read_input(path: &Path) -> Result<String, FemError> {
    let refuse = |message: String| FemError::ReadInput {
        path: path.to_path_buf(),
        source: std::io::Error::other(message),
    };
    let io = |source| FemError::ReadInput {
        path: path.to_path_buf(),
        source,
    };
    let metadata = std::fs::metadata(path).map_err(io)?;
    if !metadata.is_file() {
        return Err(refuse(format!(
            "it is {}, not a file: give the path of a YAML input file",
            mesh::file_kind(&metadata)
        )));
    }
    if metadata.len() > MAX_INPUT_FILE {
        return Err(refuse(format!(
            "it has {} bytes ({}); an input file may have at most {} — a large table belongs in a CSV file (dirichlet value: {{ csv: FILE }})",
            metadata.len(),
            Bytes(metadata.len() as f64),
            Bytes(MAX_INPUT_FILE as f64)
        )));
    }
    use std::io::Read;
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_INPUT_FILE).read_to_end(&mut bytes))
        .map_err(io)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        refuse(format!(
            "line {line}: it is not UTF-8 text (byte {at} is not part of a character): an input file is YAML text"
        ))
    })
}

/// Parses the text of an input file (`path` names it in messages and resolves relative file
/// names later). Errors give the line and column, what was expected and what was found, in the
/// terms of the input file (docs/input.md).
pub fn parse(text: &str, path: &Path) -> Result<Input, FemError> {
    parse_with(text, path)
}

/// [`parse`] with the models of the registry `M`.
pub fn parse_with<M: ModelRegistry>(text: &str, path: &Path) -> Result<Input<M>, FemError> {
    yaml::parse(text, path).map_err(|message| FemError::Yaml {
        path: path.to_path_buf(),
        message,
    })
}

/// The fingerprint of what a run reads: the input file and, when it names one, its mesh file.
/// A checkpoint written by a run of other inputs is refused on `--resume`.
pub fn input_fingerprint<M>(path: &Path, input: &Input<M>) -> Result<u32, FemError> {
    let read = |p: &Path| {
        std::fs::read(p).map_err(|source| FemError::ReadInput {
            path: p.to_path_buf(),
            source,
        })
    };
    let text = read(path)?;
    let mesh = match &input.mesh {
        Some(fem_model::input::MeshInput::File(f)) => {
            read(&path.parent().unwrap_or(Path::new(".")).join(f))?
        }
        _ => Vec::new(),
    };
    Ok(fem_io::fingerprint(&[&text, &mesh]))
}

/// Reads, parses and validates an input file and builds its model (stepper included), within
/// the machine's memory and the free disk of the current folder.
pub fn prepare(path: &Path) -> Result<(Input, Box<dyn model::Model>), FemError> {
    prepare_writing_to(path, None)
}

/// Like [`prepare`], for a run whose output goes to `output`: its disk budget is the free
/// space there ([`Budget::from_machine`]).
pub fn prepare_writing_to(
    path: &Path,
    output: Option<&Path>,
) -> Result<(Input, Box<dyn model::Model>), FemError> {
    prepare_with(path, output)
}

/// [`prepare_writing_to`] with the models of the registry `M`.
#[allow(clippy::type_complexity)]
pub fn prepare_with<M: ModelRegistry>(
    path: &Path,
    output: Option<&Path>,
) -> Result<(Input<M>, Box<dyn model::Model>), FemError> {
    prepare_run_with(path, output, None)
}

/// Like [`prepare_writing_to`], for a run of at most `max_steps` steps (`--max-steps`): the
/// output is estimated, and checked against the disk, for those. The estimate is left in
/// [`Input::estimate`].
pub fn prepare_run(
    path: &Path,
    output: Option<&Path>,
    max_steps: Option<u64>,
) -> Result<(Input, Box<dyn model::Model>), FemError> {
    prepare_run_with(path, output, max_steps)
}

/// [`prepare_run`] with the models of the registry `M`.
#[allow(clippy::type_complexity)]
pub fn prepare_run_with<M: ModelRegistry>(
    path: &Path,
    output: Option<&Path>,
    max_steps: Option<u64>,
) -> Result<(Input<M>, Box<dyn model::Model>), FemError> {
    prepare_run_in_format::<M>(path, output, max_steps, None)
}

/// [`prepare_run_with`] writing the frames in `format` when given (`fem run --format`) in
/// place of the input's `output.format`: the output estimate the input is checked against
/// (disk, and memory: the compressing thread's frames of a VTKHDF output) is the one of the
/// format the run will write.
#[allow(clippy::type_complexity)]
pub fn prepare_run_in_format<M: ModelRegistry>(
    path: &Path,
    output: Option<&Path>,
    max_steps: Option<u64>,
    format: Option<model::input::FormatKind>,
) -> Result<(Input<M>, Box<dyn model::Model>), FemError> {
    let budget = Budget::from_machine(output)
        .map_err(|source| FemError::Input {
            path: path.to_path_buf(),
            source,
        })?
        .with_steps(max_steps);
    prepare_run_within::<M>(path, &budget, format)
}

/// [`prepare_run_in_format`] within `budget`: reads the input, replaces its `output.format`
/// by `format` when given, then builds the model within `budget` (the estimate, left in
/// [`Input::estimate`], counts the output the run writes).
#[allow(clippy::type_complexity)]
pub fn prepare_run_within<M: ModelRegistry>(
    path: &Path,
    budget: &Budget,
    format: Option<model::input::FormatKind>,
) -> Result<(Input<M>, Box<dyn model::Model>), FemError> {
    let mut input = load_with::<M>(path)?;
    // The input's format when `--format` replaced it by another.
    let replaced = format
        .filter(|&f| f != input.output.format)
        .map(|_| input.output.format);
    if let Some(format) = format {
        input.output.format = format;
    }
    let chosen = input.output.format;
    let model = input
        .build_within(path, budget)
        .map_err(|source| FemError::Input {
            path: path.to_path_buf(),
            source: match (replaced, source) {
                (Some(old), fem_model::InputError::Invalid { field, message })
                    if field.starts_with("output") =>
                {
                    fem_model::InputError::Invalid {
                        field,
                        message: format!(
                            "{message} (the frames are {} because `fem run --format {}` replaced \
                             the input's output.format: {})",
                            format_shown(chosen),
                            format_word(chosen),
                            format_word(old)
                        ),
                    }
                }
                (_, source) => source,
            },
        })?;
    Ok((input, model))
}

/// `output.format`'s word for `format` (as written in the input and after `--format`).
fn format_word(format: model::input::FormatKind) -> &'static str {
    match format {
        model::input::FormatKind::Pvd => "pvd",
        model::input::FormatKind::Vtkhdf => "vtkhdf",
    }
}

/// What `format` writes, for messages.
fn format_shown(format: model::input::FormatKind) -> &'static str {
    match format {
        model::input::FormatKind::Pvd => "a .pvd collection of .vtu files",
        model::input::FormatKind::Vtkhdf => "one VTKHDF file",
    }
}

/// What `fem check FILE` does: reads, parses and validates the input and describes the run of
/// at most `max_steps` steps (`--max-steps`), within the machine's memory and the free disk of
/// the current folder, without building a model that can describe itself more cheaply
/// ([`model::ModelSection::check`]). The output estimate is left in [`Input::estimate`].
pub fn check_with<M: ModelRegistry>(
    path: &Path,
    max_steps: Option<u64>,
    options: model::CheckOptions,
) -> Result<(Input<M>, model::Checked), FemError> {
    let input = load_with::<M>(path)?;
    let input_error = |source| FemError::Input {
        path: path.to_path_buf(),
        source,
    };
    let budget = Budget::from_machine(None)
        .map_err(input_error)?
        .with_steps(max_steps);
    let checked = input
        .check_within(path, &budget, options)
        .map_err(input_error)?;
    Ok((input, checked))
}
