//! One sparse factorization for any square matrix: Cholesky when it is symmetric positive
//! definite, LU otherwise, chosen by what the caller says of the matrix.
//!
//! The symbolic analysis is kept for as long as the pattern stays the same; when a
//! factorization fails, the error says which method was tried and why, so a user can tell a
//! tangent that is not positive definite from one declared symmetric that is not.

use nalgebra_sparse::CsrMatrix;

use crate::cholesky::{CheckPolicy, SolverError, SparseCholesky};
use crate::lu::SparseLu;

/// What is known of a matrix's symmetry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Symmetry {
    /// Symmetric (both triangles stored), expected positive definite: sparse Cholesky.
    #[default]
    Symmetric,
    /// Not symmetric (or not known to be): sparse LU.
    Unsymmetric,
}

/// The method a [`Factorization`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FactorMethod {
    /// Sparse `L Lᵀ`.
    Cholesky,
    /// Sparse `P A Q = L U`.
    Lu,
}

impl FactorMethod {
    /// The method for a matrix of this symmetry.
    pub fn for_symmetry(symmetry: Symmetry) -> Self {
        match symmetry {
            Symmetry::Symmetric => FactorMethod::Cholesky,
            Symmetry::Unsymmetric => FactorMethod::Lu,
        }
    }

    /// How the method is named in messages.
    pub fn describe(self) -> &'static str {
        match self {
            FactorMethod::Cholesky => {
                "sparse Cholesky (for a matrix declared symmetric positive definite)"
            }
            FactorMethod::Lu => "sparse LU (for an unsymmetric matrix)",
        }
    }
}

/// A failed factorization: the method that was tried, and why it failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}: {source}", method.describe())]
pub struct FactorError {
    /// The method tried.
    pub method: FactorMethod,
    /// What went wrong.
    pub source: SolverError,
}

/// A sparse Cholesky or LU factorization with its symbolic analysis kept.
#[derive(Debug)]
pub enum Factorization {
    /// Symmetric positive definite.
    Cholesky(Box<SparseCholesky>),
    /// Unsymmetric.
    Lu(Box<SparseLu>),
}

impl Factorization {
    /// Analyses and factors `a` by the method its symmetry calls for.
    pub fn new(a: &CsrMatrix<f64>, symmetry: Symmetry) -> Result<Self, FactorError> {
        let method = FactorMethod::for_symmetry(symmetry);
        let wrap = |source| FactorError { method, source };
        Ok(match method {
            FactorMethod::Cholesky => {
                Factorization::Cholesky(Box::new(SparseCholesky::new(a).map_err(wrap)?))
            }
            FactorMethod::Lu => Factorization::Lu(Box::new(SparseLu::new(a).map_err(wrap)?)),
        })
    }

    /// As [`Factorization::new`], eliminating the rows in `order` (`order[k]` the row
    /// eliminated `k`-th, e.g. [`crate::ordering::nested_dissection`]) where the method is
    /// Cholesky; the LU keeps its own (column) ordering.
    pub fn with_order(
        a: &CsrMatrix<f64>,
        symmetry: Symmetry,
        order: &[usize],
    ) -> Result<Self, FactorError> {
        let method = FactorMethod::for_symmetry(symmetry);
        let wrap = |source| FactorError { method, source };
        Ok(match method {
            FactorMethod::Cholesky => Factorization::Cholesky(Box::new(
                SparseCholesky::with_order(a, order).map_err(wrap)?,
            )),
            FactorMethod::Lu => Factorization::Lu(Box::new(SparseLu::new(a).map_err(wrap)?)),
        })
    }

    /// Sets when refactorizations are checked by a test solve.
    pub fn with_check_policy(self, policy: CheckPolicy) -> Self {
        match self {
            Factorization::Cholesky(c) => {
                Factorization::Cholesky(Box::new(c.with_check_policy(policy)))
            }
            Factorization::Lu(l) => Factorization::Lu(Box::new(l.with_check_policy(policy))),
        }
    }

    /// The method in use.
    pub fn method(&self) -> FactorMethod {
        match self {
            Factorization::Cholesky(_) => FactorMethod::Cholesky,
            Factorization::Lu(_) => FactorMethod::Lu,
        }
    }

    /// Factors new values on the analysed pattern.
    pub fn refactor(&mut self, a: &CsrMatrix<f64>) -> Result<(), FactorError> {
        let method = self.method();
        match self {
            Factorization::Cholesky(c) => c.refactor(a),
            Factorization::Lu(l) => l.refactor(a),
        }
        .map_err(|source| FactorError { method, source })
    }

    /// Solves `A x = b` in place.
    pub fn solve_in_place(&self, b: &mut [f64]) {
        match self {
            Factorization::Cholesky(c) => c.solve_in_place(b),
            Factorization::Lu(l) => l.solve_in_place(b),
        }
    }

    /// Solves for `n_rhs` right-hand sides stored column after column in `b`.
    pub fn solve_many_in_place(&self, b: &mut [f64], n_rhs: usize) {
        match self {
            Factorization::Cholesky(c) => c.solve_many_in_place(b, n_rhs),
            Factorization::Lu(l) => l.solve_many_in_place(b, n_rhs),
        }
    }

    /// [`Self::solve_many_in_place`] with the given parallelism inside the solve (Cholesky;
    /// the LU takes faer's global parallelism, [`SparseLu::solve_many_in_place_with`]).
    ///
    /// [`SparseLu::solve_many_in_place_with`]: crate::SparseLu::solve_many_in_place_with
    pub fn solve_many_in_place_with(&self, b: &mut [f64], n_rhs: usize, par: crate::Par) {
        match self {
            Factorization::Cholesky(c) => c.solve_many_in_place_with(b, n_rhs, par),
            Factorization::Lu(l) => l.solve_many_in_place_with(b, n_rhs, par),
        }
    }

    /// Numeric factorizations done so far.
    pub fn factorization_count(&self) -> usize {
        match self {
            Factorization::Cholesky(c) => c.factorization_count(),
            Factorization::Lu(l) => l.factorization_count(),
        }
    }

    /// Values stored for a Cholesky factor `L` (its fill); `None` for the LU.
    pub fn factor_values(&self) -> Option<usize> {
        match self {
            Factorization::Cholesky(c) => Some(c.factor_values()),
            Factorization::Lu(_) => None,
        }
    }

    /// Order of the matrix.
    pub fn n(&self) -> usize {
        match self {
            Factorization::Cholesky(c) => c.n(),
            Factorization::Lu(l) => l.n(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra_sparse::CooMatrix;

    #[test]
    fn a_symmetric_indefinite_matrix_says_cholesky_failed() {
        let mut coo = CooMatrix::new(2, 2);
        coo.push(0, 0, 1.0);
        coo.push(1, 1, -1.0);
        let a = CsrMatrix::from(&coo);
        let e = Factorization::new(&a, Symmetry::Symmetric).unwrap_err();
        assert_eq!(e.method, FactorMethod::Cholesky);
        assert!(e.to_string().contains("sparse Cholesky"), "{e}");
        // The same matrix is regular: LU factors it.
        let lu = Factorization::new(&a, Symmetry::Unsymmetric).unwrap();
        let mut b = [2.0, 3.0];
        lu.solve_in_place(&mut b);
        assert_eq!(b, [2.0, -3.0]);
    }
}
