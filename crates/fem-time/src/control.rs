//! Prescribed motion in a stepper, written once: the Dirichlet conditions, the split of the
//! dofs into free and constrained ones, and the moves every stepper makes with them.
//!
//! A stepper with Dirichlet conditions (direct, rate or full control, Serac seed) does four
//! things, the same in every scheme: it sets the prescribed entries of the initial state from
//! `g(t0)`, `ġ(t0)`; before each solve it fixes the constrained entries of its unknown (which
//! entry value each method gives depends on the scheme's unknown: an acceleration, an
//! increment, a velocity — the one line each scheme writes itself); it solves only the free
//! rows, with the constrained entries' coupling moved to the right-hand side; and it writes
//! the prescribed values back by index after the step. [`Control`] holds the conditions and
//! the partition and does the shared moves: restriction of a matrix to the free dofs,
//! gathering and scattering free entries, the initial state.

use fem_constraints::{DirichletConditions, Enforcement, Signal};
use nalgebra_sparse::CsrMatrix;

use crate::StepError;

/// Marker for a constrained dof in [`Control::free_index`].
const CONSTRAINED: usize = usize::MAX;

/// Dirichlet conditions with the free/constrained split of a system's dofs.
#[derive(Clone, Debug)]
pub(crate) struct Control {
    conditions: DirichletConditions,
    /// For each dof its index among the free dofs, or `CONSTRAINED`.
    free_index: Vec<usize>,
    /// The free dofs, increasing.
    free: Vec<usize>,
}

impl Control {
    /// The split for `n_dofs` dofs; `None` when there are no conditions.
    pub(crate) fn new(
        n_dofs: usize,
        conditions: DirichletConditions,
    ) -> Result<Option<Self>, StepError> {
        if conditions.is_empty() {
            return Ok(None);
        }
        if conditions.dof_bound() > n_dofs {
            return Err(StepError::DirichletOutOfRange {
                dof: conditions.dof_bound() - 1,
                n_dofs,
            });
        }
        let mut free_index = vec![0; n_dofs];
        for &d in conditions.dofs() {
            free_index[d] = CONSTRAINED;
        }
        let mut free = Vec::with_capacity(n_dofs - conditions.len());
        for (dof, index) in free_index.iter_mut().enumerate() {
            if *index != CONSTRAINED {
                *index = free.len();
                free.push(dof);
            }
        }
        Ok(Some(Self {
            conditions,
            free_index,
            free,
        }))
    }

    /// The free dofs, increasing.
    pub(crate) fn free(&self) -> &[usize] {
        &self.free
    }

    /// The conditions.
    pub(crate) fn conditions(&self) -> &DirichletConditions {
        &self.conditions
    }

    /// Each prescribed dof with its signal and method.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &dyn Signal, Enforcement)> + '_ {
        self.conditions.iter()
    }

    /// The free–free block of a matrix.
    pub(crate) fn restrict(&self, a: &CsrMatrix<f64>) -> CsrMatrix<f64> {
        fem_assembly::sparse::principal_submatrix(a, &self.free_index)
    }

    /// Sets the prescribed entries of an initial state to `g(t0)`, `ġ(t0)`.
    pub(crate) fn impose_initial(&self, t0: f64, x: &mut [f64], v: &mut [f64]) {
        for (dof, signal, _) in self.iter() {
            x[dof] = signal.value(t0);
            v[dof] = signal.rate(t0);
        }
    }

    /// `out = (full − coupling)` on the free dofs.
    pub(crate) fn gather_free(&self, full: &[f64], coupling: &[f64], out: &mut Vec<f64>) {
        out.clear();
        out.extend(self.free.iter().map(|&i| full[i] - coupling[i]));
    }

    /// Writes free-dof values into a full vector.
    pub(crate) fn scatter_free(&self, free: &[f64], full: &mut [f64]) {
        for (&i, v) in self.free.iter().zip(free) {
            full[i] = *v;
        }
    }

    /// `max |r_i|` over the free dofs.
    pub(crate) fn free_inf_norm(&self, r: &[f64]) -> f64 {
        self.free.iter().fold(0.0f64, |m, &i| m.max(r[i].abs()))
    }
}

/// `max |r_i|` over the free dofs of an optional control (all dofs without one).
pub(crate) fn free_inf_norm(control: Option<&Control>, r: &[f64]) -> f64 {
    match control {
        Some(c) => c.free_inf_norm(r),
        None => r.iter().fold(0.0f64, |m, x| m.max(x.abs())),
    }
}
