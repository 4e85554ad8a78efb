//! Degrees of freedom, parallel sparse assembly, mass lumping and the sparse Cholesky facade.
//!
//! | module | what it holds |
//! |---|---|
//! | [`dofmap`] | node-major dof numbering with eliminated (fixed) dofs |
//! | [`plan`] | the sparsity pattern of a cell-to-dof map, built once, and deterministic parallel assembly into it |
//! | [`lumping`] | row-sum mass lumping over any consistent mass |
//! | [`sparse`] | small CSR helpers: matrix–vector products, quadratic forms, linear combinations |
//! | [`cholesky`] | faer's sparse Cholesky: symbolic analysis kept, numeric refactorization, residual check |
//! | [`string`] | the P1 string assembled on a mesh's line cells |
//! | [`solid`] | total-Lagrangian tet4/hex8/tet10 solids: force, tangent, masses, energy, stresses, stable step |

pub mod cholesky;
pub mod dofmap;
pub mod lumping;
pub mod plan;
pub mod solid;
pub mod sparse;
pub mod string;

pub use cholesky::{SolverError, SparseCholesky};
pub use dofmap::DofMap;
pub use lumping::lump_row_sum;
pub use nalgebra_sparse::CsrMatrix;
pub use plan::{AssemblyPlan, NodeBlockPlan, VectorPlan};
pub use solid::{SolidError, SolidOperator, StableStep};
