//! The split of a system's dofs into free ones and Dirichlet-constrained ones.

use fem_constraints::DirichletConditions;
use nalgebra_sparse::CsrMatrix;

use crate::StepError;

/// Marker for a constrained dof in [`Partition::free_index`].
const CONSTRAINED: usize = usize::MAX;

/// Free and constrained dofs of a system with Dirichlet conditions.
#[derive(Clone, Debug)]
pub(crate) struct Partition {
    /// For each dof its index among the free dofs, or `CONSTRAINED`.
    free_index: Vec<usize>,
    /// The free dofs, increasing.
    free: Vec<usize>,
}

impl Partition {
    pub(crate) fn new(n_dofs: usize, dirichlet: &DirichletConditions) -> Result<Self, StepError> {
        if dirichlet.dof_bound() > n_dofs {
            return Err(StepError::DirichletOutOfRange {
                dof: dirichlet.dof_bound() - 1,
                n_dofs,
            });
        }
        let mut free_index = vec![0; n_dofs];
        for &d in dirichlet.dofs() {
            free_index[d] = CONSTRAINED;
        }
        let mut free = Vec::with_capacity(n_dofs - dirichlet.len());
        for (dof, index) in free_index.iter_mut().enumerate() {
            if *index != CONSTRAINED {
                *index = free.len();
                free.push(dof);
            }
        }
        Ok(Self { free_index, free })
    }

    /// The free dofs.
    pub(crate) fn free(&self) -> &[usize] {
        &self.free
    }

    /// The free–free block of a matrix.
    pub(crate) fn restrict(&self, a: &CsrMatrix<f64>) -> CsrMatrix<f64> {
        fem_assembly::sparse::principal_submatrix(a, &self.free_index)
    }
}
