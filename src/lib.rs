//! `fem`: a finite-element framework for 1D and 3D structural dynamics.
//!
//! This crate is the command-line program and a facade over the libraries:
//!
//! | crate | concern |
//! |---|---|
//! | [`mesh`] (`fem-mesh`) | mesh type, Gmsh reader, generators |
//! | [`io`] (`fem-io`) | ParaView `.vtu`/`.pvd`, CSV histories |
//! | [`elements`] (`fem-elements`) | quadrature and element kernels |
//! | [`assembly`] (`fem-assembly`) | dof maps, parallel assembly, lumping, sparse Cholesky |
//! | [`constraints`] (`fem-constraints`) | Dirichlet sets and time functions, LCP solvers, unilateral contact |
//! | [`time`] (`fem-time`) | second-order systems and time steppers |
//!
//! The modules here turn a YAML file into a run: [`input`] is the schema, [`setup`] validates it
//! and builds the model, [`run`] steps it and writes the output.

pub use fem_assembly as assembly;
pub use fem_beam as beam_model;
pub use fem_constraints as constraints;
pub use fem_elements as elements;
pub use fem_io as io;
pub use fem_mesh as mesh;
pub use fem_time as time;

pub mod beam;
pub mod constrained;
pub mod error;
pub mod input;
pub mod modal;
pub mod run;
pub mod setup;
