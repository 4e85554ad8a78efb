//! The explicit (DEF_EXP) solid on MPI by domain decomposition, bitwise equal to the serial
//! run (issue 14).
//!
//! | module | what it holds |
//! |---|---|
//! | [`partition`] | recursive coordinate bisection of the cells (deterministic, no library) |
//! | [`subdomain`] | one rank's cells and nodes (owned, ghost) and the exchange plan whose fixed-order sums are the serial gather's |
//! | `collective` (feature `mpi`) | agreement between ranks on a failure, so that all stop together |
//! | `system` (feature `mpi`) | `DistributedSolid`: a subdomain as a `fem_time::LeapFrogSystem`, so `fem_time::DefExp` runs on it unchanged |
//! | `model` (feature `mpi`) | `distributed_solid_model`: the solid model (`fem_solid::SolidModel`) of this rank's part, which the one run loop (`fem_drive`) runs |
//! | `processes` (feature `mpi`) | `MpiProcesses`: `MPI_COMM_WORLD` as the run loop's `fem_drive::Processes` |
//!
//! Without the feature `mpi` the crate holds the MPI-free parts (tested in the default build);
//! with it, it needs an MPI library (MPICH or Open MPI) and libclang to build `rsmpi`.
//! Design and limits: `docs/architecture.md`, "The distributed solid".

pub mod partition;
pub mod subdomain;

#[cfg(feature = "mpi")]
pub mod collective;
#[cfg(feature = "mpi")]
pub mod model;
#[cfg(feature = "mpi")]
pub mod processes;
#[cfg(feature = "mpi")]
pub mod system;

#[cfg(feature = "mpi")]
pub use model::{DistributedSolidModel, distributed_solid_model};
#[cfg(feature = "mpi")]
pub use mpi;
#[cfg(feature = "mpi")]
pub use processes::MpiProcesses;
#[cfg(feature = "mpi")]
pub use system::DistributedSolid;
