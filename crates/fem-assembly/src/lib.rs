//! Degrees of freedom, parallel sparse assembly, mass lumping and the sparse Cholesky facade.
//!
//! | module | what it holds |
//! |---|---|
//! | [`dofmap`] | node-major dof numbering with eliminated (fixed) dofs |
//! | [`plan`] | the sparsity pattern of a cell-to-dof map, built once, and deterministic parallel assembly into it |
//! | [`lumping`] | row-sum mass lumping over any consistent mass |
//! | [`sparse`] | small CSR helpers: matrix–vector products, quadratic forms, linear combinations |
//! | [`cholesky`] | faer's sparse Cholesky: symbolic analysis kept, numeric refactorization, residual check |
//! | [`lu`] | faer's sparse LU for unsymmetric matrices, with the same life cycle |
//! | [`factor`] | [`Factorization`]: Cholesky or LU chosen by the matrix's [`Symmetry`], errors that name the method |
//! | [`modes`] | the lowest eigenpairs of `K φ = ω² M φ` by shift-invert Lanczos on the sparse factorization |
//! | [`ordering`] | a nested-dissection fill-reducing order from a point per row |
//! | [`solid`] | total-Lagrangian solids (tet4, hex8, tet10, hex20, hex27; formulations full, eas, fbar, one_point; any hyperelastic material): force, tangent, masses, energy, stresses, stable step |

pub mod cholesky;
pub mod dofmap;
pub mod exact_sum;
pub mod factor;
pub mod lanczos;
pub mod lu;
pub mod lumping;
pub mod modes;
pub mod ordering;
pub mod plan;
pub mod solid;
pub mod sparse;

pub use cholesky::{CheckPolicy, SolverError, SparseCholesky};
pub use dofmap::DofMap;
pub use exact_sum::ExactSum;
pub use factor::{FactorError, FactorMethod, Factorization, Symmetry};
/// faer's parallelism of a solve (`Par::Seq`, `Par::rayon(n)`): [`Factorization::solve_many_in_place_with`].
pub use faer::Par;
pub use lu::SparseLu;
pub use lumping::lump_row_sum;
pub use modes::{EigenMethod, MassMatrix, ModeSettings, Modes, ModesError, lowest_modes};
pub use nalgebra_sparse::CsrMatrix;
pub use plan::{AssemblyPlan, NodeBlockPlan, VectorPlan};
pub use solid::{SolidError, SolidMaterial, SolidOperator, StableStep};
