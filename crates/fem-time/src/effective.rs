//! The matrix of an implicit step, `c_m M + c_c C + c_k K`, on the free dofs, factored — the
//! one component every nodal stepper forms, restricts and factors its matrix with.
//!
//! It branches once on the mass (lumped or consistent), adds the damping and stiffness terms,
//! keeps the rows and columns of the free dofs when Dirichlet conditions constrain some
//! ([`crate::control::Control`]), and factors the result: a diagonal inverse when the matrix
//! is diagonal (lumped mass, no stiffness or damping term: an explicit step), sparse Cholesky
//! when the stiffness is symmetric, sparse LU when it is not. The symbolic analysis is kept and
//! [`StepMatrix::refactor`] refactors new values (a new tangent) on the same pattern.
//!
//! Terms are summed in a fixed order (stiffness, damping, mass), so a matrix is bitwise the
//! same however it is reached.

use fem_assembly::{Factorization, Symmetry, sparse};
use nalgebra_sparse::CsrMatrix;

use crate::control::Control;
use crate::{Mass, StepError};

/// The coefficients of `c_m M + c_c C + c_k K`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Coefficients {
    /// Of the mass.
    pub mass: f64,
    /// Of the damping.
    pub damping: f64,
    /// Of the stiffness (tangent).
    pub stiffness: f64,
}

/// How the step matrix is solved.
#[derive(Debug)]
enum Solve {
    /// A diagonal matrix: its inverse.
    Diagonal(Vec<f64>),
    /// A sparse factorization.
    Factored(Box<Factorization>),
}

/// `c_m M + c_c C + c_k K` on the free dofs, factored.
#[derive(Debug)]
pub(crate) struct StepMatrix {
    coefficients: Coefficients,
    symmetry: Symmetry,
    solve: Solve,
}

impl StepMatrix {
    /// Forms and factors the matrix. `stiffness` may be omitted (a zero stiffness term), as
    /// may `damping`; `control` restricts the matrix to the free dofs. A stiffness given with
    /// a zero coefficient still contributes its pattern (explicit zeros) unless the matrix is
    /// diagonal.
    pub(crate) fn new(
        mass: &Mass,
        damping: Option<&CsrMatrix<f64>>,
        stiffness: Option<&CsrMatrix<f64>>,
        coefficients: Coefficients,
        symmetry: Symmetry,
        control: Option<&Control>,
    ) -> Result<Self, StepError> {
        let damping = damping.filter(|_| coefficients.damping != 0.0);
        let no_stiffness = stiffness.is_none() || coefficients.stiffness == 0.0;
        if let (Mass::Lumped(d), true, None) = (mass, no_stiffness, damping) {
            let c = coefficients.mass;
            let inverse = match control {
                Some(p) => p.free().iter().map(|&i| 1.0 / (c * d[i])).collect(),
                None => d.iter().map(|m| 1.0 / (c * m)).collect(),
            };
            return Ok(Self {
                coefficients,
                symmetry,
                solve: Solve::Diagonal(inverse),
            });
        }
        let matrix = Self::form(mass, damping, stiffness, coefficients, control);
        let factor = Factorization::new(&matrix, symmetry)?;
        Ok(Self {
            coefficients,
            symmetry,
            solve: Solve::Factored(Box::new(factor)),
        })
    }

    /// `c_k K + c_c C + c_m M` (in that order), restricted to the free dofs.
    fn form(
        mass: &Mass,
        damping: Option<&CsrMatrix<f64>>,
        stiffness: Option<&CsrMatrix<f64>>,
        c: Coefficients,
        control: Option<&Control>,
    ) -> CsrMatrix<f64> {
        let mut terms: Vec<(f64, &CsrMatrix<f64>)> = Vec::with_capacity(3);
        if let Some(k) = stiffness {
            terms.push((c.stiffness, k));
        }
        if let Some(d) = damping {
            terms.push((c.damping, d));
        }
        let matrix = match mass {
            Mass::Lumped(d) => sparse::linear_combination(&terms, Some((c.mass, d))),
            Mass::Consistent(m) => {
                terms.push((c.mass, m));
                sparse::linear_combination(&terms, None)
            }
        };
        match control {
            Some(p) => p.restrict(&matrix),
            None => matrix,
        }
    }

    /// Refactors with a new stiffness (same pattern; the same coefficients).
    pub(crate) fn refactor(
        &mut self,
        mass: &Mass,
        damping: Option<&CsrMatrix<f64>>,
        stiffness: &CsrMatrix<f64>,
        control: Option<&Control>,
    ) -> Result<(), StepError> {
        let damping = damping.filter(|_| self.coefficients.damping != 0.0);
        let matrix = Self::form(mass, damping, Some(stiffness), self.coefficients, control);
        match &mut self.solve {
            Solve::Factored(f) => f.refactor(&matrix)?,
            Solve::Diagonal(_) => {
                self.solve = Solve::Factored(Box::new(Factorization::new(&matrix, self.symmetry)?))
            }
        }
        Ok(())
    }

    /// Solves in place (`b` on the free dofs).
    pub(crate) fn solve_in_place(&self, b: &mut [f64]) {
        match &self.solve {
            Solve::Diagonal(inv) => b.iter_mut().zip(inv).for_each(|(bi, di)| *bi *= di),
            Solve::Factored(f) => f.solve_in_place(b),
        }
    }

    /// Solves for `n_rhs` right-hand sides stored column after column in `b`.
    pub(crate) fn solve_many_in_place(&self, b: &mut [f64], n_rhs: usize) {
        match &self.solve {
            Solve::Diagonal(inv) => {
                for col in b.chunks_exact_mut(inv.len().max(1)) {
                    col.iter_mut().zip(inv).for_each(|(bi, di)| *bi *= di);
                }
            }
            Solve::Factored(f) => f.solve_many_in_place(b, n_rhs),
        }
    }

    /// Numeric factorizations so far (0 for a diagonal matrix).
    pub(crate) fn factorizations(&self) -> usize {
        match &self.solve {
            Solve::Diagonal(_) => 0,
            Solve::Factored(f) => f.factorization_count(),
        }
    }

    /// Whether the matrix is diagonal (an explicit step).
    pub(crate) fn is_diagonal(&self) -> bool {
        matches!(self.solve, Solve::Diagonal(_))
    }
}
