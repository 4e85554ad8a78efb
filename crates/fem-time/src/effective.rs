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

use fem_assembly::ordering::nested_dissection;
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
    /// One point per free dof, when the system gives them (nested dissection ordering).
    free_points: Option<Vec<[f64; 3]>>,
    solve: Solve,
}

impl StepMatrix {
    /// Forms and factors the matrix. `stiffness` may be omitted (a zero stiffness term), as
    /// may `damping`; `control` restricts the matrix to the free dofs. A stiffness given with
    /// a zero coefficient still contributes its pattern (explicit zeros) unless the matrix is
    /// diagonal. `dof_points` (one per dof, [`crate::SecondOrderSystem::dof_points`]) orders
    /// a Cholesky factorization by nested dissection.
    pub(crate) fn new(
        mass: &Mass,
        damping: Option<&CsrMatrix<f64>>,
        stiffness: Option<&CsrMatrix<f64>>,
        coefficients: Coefficients,
        symmetry: Symmetry,
        control: Option<&Control>,
        dof_points: Option<Vec<[f64; 3]>>,
    ) -> Result<Self, StepError> {
        let free_points = dof_points.map(|points| match control {
            Some(p) => p.free().iter().map(|&i| points[i]).collect(),
            None => points,
        });
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
                free_points,
                solve: Solve::Diagonal(inverse),
            });
        }
        let matrix = Self::form(mass, damping, stiffness, coefficients, control);
        let factor = Self::factor(&matrix, symmetry, free_points.as_deref())?;
        Ok(Self {
            coefficients,
            symmetry,
            free_points,
            solve: Solve::Factored(Box::new(factor)),
        })
    }

    /// The first factorization of `matrix`: in nested-dissection order of `points` when
    /// given and the matrix is symmetric, else in the factorization's own ordering.
    fn factor(
        matrix: &CsrMatrix<f64>,
        symmetry: Symmetry,
        points: Option<&[[f64; 3]]>,
    ) -> Result<Factorization, StepError> {
        Ok(match (points, symmetry) {
            (Some(points), Symmetry::Symmetric) => {
                let order = nested_dissection(points, matrix);
                Factorization::with_order(matrix, symmetry, &order)?
            }
            _ => Factorization::new(matrix, symmetry)?,
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
                let factor = Self::factor(&matrix, self.symmetry, self.free_points.as_deref())?;
                self.solve = Solve::Factored(Box::new(factor));
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

    /// Values stored for the Cholesky factor, if the matrix is Cholesky-factored.
    #[cfg(test)]
    fn factor_values(&self) -> Option<usize> {
        match &self.solve {
            Solve::Diagonal(_) => None,
            Solve::Factored(f) => f.factor_values(),
        }
    }

    /// Whether the matrix is diagonal (an explicit step).
    pub(crate) fn is_diagonal(&self) -> bool {
        matches!(self.solve, Solve::Diagonal(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra_sparse::CooMatrix;

    /// The pattern of a hex8 mesh's stiffness on an `n³` grid of nodes (each node's 3 dofs
    /// coupled to its own and its 26 neighbours'), with values making it diagonally dominant,
    /// and the node of each dof.
    fn grid_stiffness(n: usize) -> (CsrMatrix<f64>, Vec<[f64; 3]>) {
        let n_dofs = 3 * n * n * n;
        let mut coo = CooMatrix::new(n_dofs, n_dofs);
        let mut points = Vec::with_capacity(n_dofs);
        let range = |i: usize| i.saturating_sub(1)..(i + 2).min(n);
        for k in 0..n {
            for j in 0..n {
                for i in 0..n {
                    let node = (k * n + j) * n + i;
                    for c in 0..3 {
                        points.push([i as f64, j as f64, k as f64]);
                        for kk in range(k) {
                            for jj in range(j) {
                                for ii in range(i) {
                                    let other = (kk * n + jj) * n + ii;
                                    for d in 0..3 {
                                        let (row, col) = (3 * node + c, 3 * other + d);
                                        let v = if row == col { 100.0 } else { -1.0 };
                                        coo.push(row, col, v);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        (CsrMatrix::from(&coo), points)
    }

    #[test]
    fn dof_points_order_the_factorization_by_nested_dissection() {
        let n = 14;
        let (k, points) = grid_stiffness(n);
        let mass = Mass::Lumped(vec![1.0; 3 * n * n * n]);
        let c = Coefficients {
            mass: 1.0,
            damping: 0.0,
            stiffness: 0.25,
        };
        let sym = Symmetry::Symmetric;
        let default = StepMatrix::new(&mass, None, Some(&k), c, sym, None, None).unwrap();
        let nested = StepMatrix::new(&mass, None, Some(&k), c, sym, None, Some(points)).unwrap();
        let (fill_default, fill_nested) = (
            default.factor_values().unwrap(),
            nested.factor_values().unwrap(),
        );
        assert!(
            (fill_nested as f64) < 0.9 * fill_default as f64,
            "nested dissection {fill_nested} vs default {fill_default} factor values"
        );
        // The same solution, whatever the order.
        let b: Vec<f64> = (0..3 * n * n * n)
            .map(|i| ((i * 7919) % 113) as f64)
            .collect();
        let (mut x0, mut x1) = (b.clone(), b.clone());
        default.solve_in_place(&mut x0);
        nested.solve_in_place(&mut x1);
        let scale = x0.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (a, b) in x0.iter().zip(&x1) {
            assert!((a - b).abs() <= 1e-12 * scale, "{a} vs {b}");
        }
    }
}
