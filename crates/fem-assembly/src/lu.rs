//! The sparse LU facade, for matrices that are not symmetric: analyse once, refactor, solve.
//!
//! Wraps faer's sparse `P A Q = L U` (COLAMD column ordering, partial pivoting by rows). The
//! symbolic analysis is kept across refactorizations on the same pattern. The matrix comes in
//! CSR form; its arrays are read as the CSC form of `Aᵀ` without copying, `Aᵀ` is factored and
//! `A x = b` is solved as the transposed system.
//!
//! LU with threshold pivoting is not unconditionally backward stable, so unlike
//! [`crate::SparseCholesky`] every numeric factorization is checked on a test solve by default
//! ([`CheckPolicy::EveryFactorization`]).

use faer::linalg::solvers::SolveCore;
use faer::sparse::linalg::LuError;
use faer::sparse::linalg::solvers::{Lu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut};
use nalgebra_sparse::CsrMatrix;

use crate::cholesky::{CheckPolicy, SolverError, check_solve};

/// A sparse LU factorization whose symbolic part is kept across refactorizations.
#[derive(Debug)]
pub struct SparseLu {
    n: usize,
    row_offsets: Vec<usize>,
    col_indices: Vec<usize>,
    symbolic: SymbolicLu<usize>,
    numeric: Lu<usize, f64>,
    n_factorizations: usize,
    last_residual: f64,
    policy: CheckPolicy,
}

impl SparseLu {
    /// Analyses the pattern of `a` and factors its values.
    pub fn new(a: &CsrMatrix<f64>) -> Result<Self, SolverError> {
        if a.nrows() != a.ncols() {
            return Err(SolverError::Structure(format!(
                "matrix is {}x{}, not square",
                a.nrows(),
                a.ncols()
            )));
        }
        let n = a.nrows();
        let row_offsets = a.row_offsets().to_vec();
        let col_indices = a.col_indices().to_vec();
        let pattern = SymbolicSparseColMatRef::new_checked(n, n, &row_offsets, None, &col_indices);
        let symbolic =
            SymbolicLu::try_new(pattern).map_err(|e| SolverError::Structure(format!("{e:?}")))?;
        let numeric = factor(&symbolic, pattern, a.values())?;
        let mut lu = Self {
            n,
            row_offsets,
            col_indices,
            symbolic,
            numeric,
            n_factorizations: 1,
            last_residual: 0.0,
            policy: CheckPolicy::EveryFactorization,
        };
        lu.check(a)?;
        Ok(lu)
    }

    /// Sets when refactorizations are checked (the first factorization always is).
    pub fn with_check_policy(mut self, policy: CheckPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Factors new values on the analysed pattern (symbolic analysis reused).
    pub fn refactor(&mut self, a: &CsrMatrix<f64>) -> Result<(), SolverError> {
        if a.row_offsets() != self.row_offsets.as_slice()
            || a.col_indices() != self.col_indices.as_slice()
        {
            return Err(SolverError::PatternMismatch {
                what: format!(
                    "{} nonzeros against {} analysed",
                    a.nnz(),
                    self.col_indices.len()
                ),
            });
        }
        let pattern = SymbolicSparseColMatRef::new_checked(
            self.n,
            self.n,
            &self.row_offsets,
            None,
            &self.col_indices,
        );
        self.numeric = factor(&self.symbolic, pattern, a.values())?;
        self.n_factorizations += 1;
        match self.policy {
            CheckPolicy::EveryFactorization => self.check(a),
            CheckPolicy::FirstFactorization => Ok(()),
        }
    }

    /// Order of the matrix.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Numeric factorizations done so far (1 after [`SparseLu::new`]).
    pub fn factorization_count(&self) -> usize {
        self.n_factorizations
    }

    /// Relative residual of the last check solve.
    pub fn last_check_residual(&self) -> f64 {
        self.last_residual
    }

    /// Solves `A x = b` in place (`b` becomes `x`).
    pub fn solve_in_place(&self, b: &mut [f64]) {
        self.solve_many_in_place(b, 1);
    }

    /// [`Self::solve_many_in_place`]; `par` is not used: faer's sparse LU does not expose
    /// its numeric factor to a solve with a chosen parallelism, so the solve takes faer's
    /// global parallelism.
    pub fn solve_many_in_place_with(&self, b: &mut [f64], n_rhs: usize, _par: faer::Par) {
        self.solve_many_in_place(b, n_rhs);
    }

    /// Solves for `n_rhs` right-hand sides stored one after another (column-major) in `b`.
    pub fn solve_many_in_place(&self, b: &mut [f64], n_rhs: usize) {
        assert_eq!(b.len(), self.n * n_rhs);
        // The factor is of Aᵀ (the CSR arrays read as CSC): A x = b is its transposed system.
        self.numeric.solve_transpose_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(b, self.n, n_rhs),
        );
    }

    fn check(&mut self, a: &CsrMatrix<f64>) -> Result<(), SolverError> {
        self.last_residual = check_solve(a, |x| self.solve_in_place(x))?;
        Ok(())
    }
}

fn factor(
    symbolic: &SymbolicLu<usize>,
    pattern: SymbolicSparseColMatRef<'_, usize>,
    values: &[f64],
) -> Result<Lu<usize, f64>, SolverError> {
    let matrix = SparseColMatRef::new(pattern, values);
    Lu::try_new_with_symbolic(symbolic.clone(), matrix).map_err(|e| match e {
        LuError::SymbolicSingular { index } => SolverError::Singular { index },
        other => SolverError::Structure(format!("{other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra_sparse::CooMatrix;

    /// A convection–diffusion matrix: tridiagonal and unsymmetric.
    fn convection(n: usize, peclet: f64) -> CsrMatrix<f64> {
        let mut coo = CooMatrix::new(n, n);
        for i in 0..n {
            coo.push(i, i, 2.0);
            if i + 1 < n {
                coo.push(i, i + 1, -1.0 + peclet);
                coo.push(i + 1, i, -1.0 - peclet);
            }
        }
        CsrMatrix::from(&coo)
    }

    #[test]
    fn solves_an_unsymmetric_system_and_refactors() {
        let a = convection(40, 0.4);
        let mut lu = SparseLu::new(&a).unwrap();
        let x_true: Vec<f64> = (0..40).map(|i| (i as f64 * 0.3).cos()).collect();
        let mut b = crate::sparse::mul(&a, &x_true);
        lu.solve_in_place(&mut b);
        for (x, e) in b.iter().zip(&x_true) {
            assert!((x - e).abs() < 1e-12, "{x} vs {e}");
        }
        let a2 = convection(40, -0.7);
        lu.refactor(&a2).unwrap();
        let mut b2 = crate::sparse::mul(&a2, &x_true);
        lu.solve_in_place(&mut b2);
        for (x, e) in b2.iter().zip(&x_true) {
            assert!((x - e).abs() < 1e-12);
        }
        assert_eq!(lu.factorization_count(), 2);
        assert!(lu.last_check_residual() < 1e-14);
    }

    #[test]
    fn refuses_a_singular_matrix() {
        // Two equal rows.
        let mut coo = CooMatrix::new(3, 3);
        for (r, c, v) in [
            (0, 0, 1.0),
            (0, 1, 2.0),
            (1, 0, 1.0),
            (1, 1, 2.0),
            (2, 2, 1.0),
        ] {
            coo.push(r, c, v);
        }
        assert!(SparseLu::new(&CsrMatrix::from(&coo)).is_err());
    }
}
