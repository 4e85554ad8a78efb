//! Prescribed motion in a stepper, written once: the Dirichlet conditions, the split of the
//! dofs into free and prescribed ones, and the moves every stepper makes with them.
//!
//! A stepper with Dirichlet conditions (direct, rate or full control, Serac seed) does four
//! things, the same in every scheme: it sets the prescribed entries of the initial state from
//! `g(t0)`, `ġ(t0)`; before each solve it fixes the prescribed entries of its unknown (which
//! value each method gives depends on the scheme's unknown: an acceleration, an increment, a
//! velocity — the one line each scheme writes itself); it solves only the free rows, with the
//! prescribed entries' coupling moved to the right-hand side; and it writes the prescribed
//! values back by index after the step. [`DirichletControl`] holds the conditions and the
//! partition and does the shared moves; [`crate::StepMatrix`] takes it to restrict its matrix
//! to the free dofs. A stepper written outside this crate uses the same two.

use fem_constraints::{DirichletConditions, Enforcement, Signal};
use nalgebra_sparse::CsrMatrix;

use crate::StepError;

/// Marker for a prescribed dof in the free index.
const PRESCRIBED: usize = usize::MAX;

/// Dirichlet conditions with the free/prescribed split of a system's dofs.
#[derive(Clone, Debug)]
pub struct DirichletControl {
    conditions: DirichletConditions,
    /// For each dof its index among the free dofs, or `PRESCRIBED`.
    free_index: Vec<usize>,
    /// The free dofs, increasing.
    free: Vec<usize>,
}

impl DirichletControl {
    /// The split of `n_dofs` dofs by `conditions` (which may be empty: every dof free).
    /// Refuses a condition on a dof the system does not have.
    pub fn new(n_dofs: usize, conditions: DirichletConditions) -> Result<Self, StepError> {
        if conditions.dof_bound() > n_dofs {
            return Err(StepError::DirichletOutOfRange {
                dof: conditions.dof_bound() - 1,
                n_dofs,
            });
        }
        let mut free_index = vec![0; n_dofs];
        for &d in conditions.dofs() {
            free_index[d] = PRESCRIBED;
        }
        let mut free = Vec::with_capacity(n_dofs - conditions.len());
        for (dof, index) in free_index.iter_mut().enumerate() {
            if *index != PRESCRIBED {
                *index = free.len();
                free.push(dof);
            }
        }
        Ok(Self {
            conditions,
            free_index,
            free,
        })
    }

    /// Every one of `n_dofs` dofs free.
    pub fn none(n_dofs: usize) -> Self {
        Self {
            conditions: DirichletConditions::none(),
            free_index: (0..n_dofs).collect(),
            free: (0..n_dofs).collect(),
        }
    }

    /// The control of `conditions`, or `None` when there are none (the steppers' fast path).
    pub fn of(n_dofs: usize, conditions: DirichletConditions) -> Result<Option<Self>, StepError> {
        let control = Self::new(n_dofs, conditions)?;
        Ok((!control.is_empty()).then_some(control))
    }

    /// Whether no dof is prescribed.
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// The conditions.
    pub fn conditions(&self) -> &DirichletConditions {
        &self.conditions
    }

    /// The prescribed dofs, in the order of the conditions.
    pub fn dofs(&self) -> &[usize] {
        self.conditions.dofs()
    }

    /// The free dofs, increasing.
    pub fn free(&self) -> &[usize] {
        &self.free
    }

    /// The index of `dof` among the free dofs, `None` for a prescribed dof.
    pub fn free_index(&self, dof: usize) -> Option<usize> {
        Some(self.free_index[dof]).filter(|&i| i != PRESCRIBED)
    }

    /// The index of each dof among the free dofs, `usize::MAX` for a prescribed one (the
    /// renumbering [`fem_assembly::sparse::principal_submatrix`] takes).
    pub fn free_indices(&self) -> &[usize] {
        &self.free_index
    }

    /// Whether `dof` is prescribed.
    pub fn is_prescribed(&self, dof: usize) -> bool {
        self.free_index[dof] == PRESCRIBED
    }

    /// Each prescribed dof with its signal and method.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &dyn Signal, Enforcement)> + '_ {
        self.conditions.iter()
    }

    /// Whether any dof is under full control.
    pub fn has_full(&self) -> bool {
        self.iter().any(|(_, _, m)| m == Enforcement::Full)
    }

    /// The free–free block of a matrix.
    pub fn restrict(&self, a: &CsrMatrix<f64>) -> CsrMatrix<f64> {
        fem_assembly::sparse::principal_submatrix(a, &self.free_index)
    }

    /// Sets the prescribed entries of an initial state to `g(t0)`, `ġ(t0)`.
    pub fn impose_initial(&self, t0: f64, x: &mut [f64], v: &mut [f64]) {
        for (dof, signal, _) in self.iter() {
            x[dof] = signal.value(t0);
            v[dof] = signal.rate(t0);
        }
    }

    /// `out = (full − coupling)` on the free dofs.
    pub fn gather_free(&self, full: &[f64], coupling: &[f64], out: &mut Vec<f64>) {
        out.clear();
        out.extend(self.free.iter().map(|&i| full[i] - coupling[i]));
    }

    /// Writes free-dof values into a full vector.
    pub fn scatter_free(&self, free: &[f64], full: &mut [f64]) {
        for (&i, v) in self.free.iter().zip(free) {
            full[i] = *v;
        }
    }

    /// `max |r_i|` over the free dofs.
    pub fn free_inf_norm(&self, r: &[f64]) -> f64 {
        self.free.iter().fold(0.0f64, |m, &i| m.max(r[i].abs()))
    }
}

/// `max |r_i|` over the free dofs of an optional control (all dofs without one).
pub fn free_inf_norm(control: Option<&DirichletControl>, r: &[f64]) -> f64 {
    match control {
        Some(c) => c.free_inf_norm(r),
        None => r.iter().fold(0.0f64, |m, x| m.max(x.abs())),
    }
}
