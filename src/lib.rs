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
//! | [`time`] (`fem-time`) | the second-order system, the `Stepper` interface and the steppers |
//! | [`model`] (`fem-model`) | the `Model` interface, the shared input sections and their builders |
//! | [`string`], [`modal`], [`pendulum`], [`beam`] | the model families |
//!
//! The modules here turn a YAML file into a run: [`input`] is the file's schema and the
//! registry of models, [`drive`] the one run loop (which a downstream program calls with a
//! model of its own: `examples/`).

pub use fem_assembly as assembly;
pub use fem_beam as beam;
pub use fem_constraints as constraints;
pub use fem_elements as elements;
pub use fem_io as io;
pub use fem_mesh as mesh;
pub use fem_modal as modal;
pub use fem_model as model;
pub use fem_pendulum as pendulum;
pub use fem_string as string;
pub use fem_time as time;
/// Dense small matrices (`DMatrix` for dense tangents and masses).
pub use nalgebra;
/// Sparse matrices (`CsrMatrix`).
pub use nalgebra_sparse;

pub mod drive;
pub mod error;
pub mod input;

use std::path::Path;

use error::FemError;
use input::Input;

/// Reads and parses an input file.
pub fn load(path: &Path) -> Result<Input, FemError> {
    let text = std::fs::read_to_string(path).map_err(|source| FemError::ReadInput {
        path: path.to_path_buf(),
        source,
    })?;
    serde_saphyr::from_str::<Input>(&text).map_err(|e| FemError::Yaml {
        path: path.to_path_buf(),
        message: e.to_string().trim_start_matches("error: ").to_string(),
    })
}

/// The fingerprint of what a run reads: the input file and, when it names one, its mesh file.
/// A checkpoint written by a run of other inputs is refused on `--resume`.
pub fn input_fingerprint(path: &Path, input: &Input) -> Result<u32, FemError> {
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

/// Reads, parses and validates an input file and builds its model (stepper included).
pub fn prepare(path: &Path) -> Result<(Input, Box<dyn model::Model>), FemError> {
    let input = load(path)?;
    let model = input.build(path).map_err(|source| FemError::Input {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((input, model))
}
