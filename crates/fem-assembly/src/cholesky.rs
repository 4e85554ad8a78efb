//! The sparse Cholesky facade: analyse once, refactor when the values change, solve many.
//!
//! Wraps faer's supernodal/simplicial `L Lᵀ` (with its fill-reducing ordering). The symbolic
//! analysis is computed once from a matrix's pattern and kept; [`SparseCholesky::refactor`]
//! computes a new numeric factor for new values on the same pattern.
//!
//! # Accuracy check
//! The first numeric factorization of a pattern is checked on a test right-hand side: the
//! normwise backward error `‖A x − b‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞)` must stay below
//! [`RESIDUAL_TOLERANCE`], so a numerically broken factor is refused rather than silently used.
//! Refactorizations are not checked by default ([`CheckPolicy::FirstFactorization`]): a
//! Cholesky factorization that meets only positive pivots is backward stable, and the check
//! (two products and a solve) would cost as much again as the numeric factorization of a banded
//! matrix. [`CheckPolicy::EveryFactorization`] restores the check after every refactorization.
//!
//! The matrix is given in CSR form and must be symmetric (both triangles stored); faer reads
//! its lower triangle. A symmetric CSR matrix *is* its own CSC transpose, so the CSR arrays are
//! handed to faer as CSC without copying values.
//!
//! # Storage
//! The factor's values and the factorization's work space are allocated once, with the
//! symbolic analysis; a refactorization writes into them (faer's low-level numeric
//! factorization), so it costs the numeric factorization and nothing else — no allocation, no
//! page faults on fresh memory.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::perm::PermRef;
use faer::sparse::linalg::cholesky::{
    LltRef, SymbolicCholesky, SymmetricOrdering, factorize_symbolic_cholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Side};
use nalgebra_sparse::CsrMatrix;

/// Bound on the relative residual of the check solve after a factorization.
pub const RESIDUAL_TOLERANCE: f64 = 1e-10;

/// When a factorization is checked by a test solve (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CheckPolicy {
    /// Only the first numeric factorization of a pattern (the default).
    #[default]
    FirstFactorization,
    /// Every numeric factorization, refactorizations included.
    EveryFactorization,
}

/// Why a factorization or solve was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SolverError {
    /// The matrix is not symmetric positive definite (a pivot was not positive).
    #[error("matrix is not positive definite (non-positive pivot at elimination step {index})")]
    NotPositiveDefinite {
        /// Elimination step where the pivot failed.
        index: usize,
    },
    /// `refactor` was given a matrix with another sparsity pattern.
    #[error("sparsity pattern differs from the analysed one ({what})")]
    PatternMismatch {
        /// What differs.
        what: String,
    },
    /// The check solve after factorization missed its tolerance.
    #[error("factorization check failed: relative residual {residual:e} > {tolerance:e}")]
    InaccurateFactor {
        /// Measured relative residual.
        residual: f64,
        /// The bound, [`RESIDUAL_TOLERANCE`].
        tolerance: f64,
    },
    /// A matrix that is not square, or another structural problem reported by faer.
    #[error("sparse factorization: {0}")]
    Structure(String),
    /// The check solve gave values that are not finite: the matrix is singular (or nearly).
    #[error("the matrix is singular: a test solve gave non-finite values")]
    NonFiniteSolution,
    /// The sparse LU met a zero pivot: the (unsymmetric) matrix is singular.
    #[error("matrix is singular (no usable pivot at elimination step {index})")]
    Singular {
        /// Elimination step where no pivot was found.
        index: usize,
    },
}

/// A sparse `L Lᵀ` factorization whose symbolic part is kept across refactorizations.
pub struct SparseCholesky {
    n: usize,
    /// The analysed pattern (the CSR arrays read as CSC), checked once when analysed.
    pattern: SymbolicSparseColMat<usize>,
    symbolic: SymbolicCholesky<usize>,
    /// Values of the factor `L`, in the layout of `symbolic`.
    l_values: Vec<f64>,
    /// Work space of the numeric factorization, sized once.
    scratch: MemBuffer,
    n_factorizations: usize,
    last_residual: f64,
    policy: CheckPolicy,
}

impl std::fmt::Debug for SparseCholesky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseCholesky")
            .field("n", &self.n)
            .field("nnz", &self.pattern.row_idx().len())
            .field("factor_values", &self.l_values.len())
            .field("n_factorizations", &self.n_factorizations)
            .field("last_residual", &self.last_residual)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl SparseCholesky {
    /// Analyses the pattern of `a` (faer's approximate-minimum-degree ordering) and factors
    /// its values.
    pub fn new(a: &CsrMatrix<f64>) -> Result<Self, SolverError> {
        Self::analyse_and_factor(a, None)
    }

    /// As [`SparseCholesky::new`], eliminating the rows in the given `order` (`order[k]` is
    /// the row eliminated `k`-th, e.g. [`crate::ordering::nested_dissection`]).
    pub fn with_order(a: &CsrMatrix<f64>, order: &[usize]) -> Result<Self, SolverError> {
        let n = a.nrows();
        let mut inverse = vec![usize::MAX; n];
        for (k, &row) in order.iter().enumerate() {
            if row >= n || inverse[row] != usize::MAX {
                return Err(SolverError::Structure(format!(
                    "the elimination order is not a permutation of the {n} rows"
                )));
            }
            inverse[row] = k;
        }
        if order.len() != n {
            return Err(SolverError::Structure(format!(
                "the elimination order has {} rows, the matrix {n}",
                order.len()
            )));
        }
        Self::analyse_and_factor(a, Some((order, &inverse)))
    }

    fn analyse_and_factor(
        a: &CsrMatrix<f64>,
        order: Option<(&[usize], &[usize])>,
    ) -> Result<Self, SolverError> {
        if a.nrows() != a.ncols() {
            return Err(SolverError::Structure(format!(
                "matrix is {}x{}, not square",
                a.nrows(),
                a.ncols()
            )));
        }
        let n = a.nrows();
        let pattern =
            SymbolicSparseColMatRef::new_checked(n, n, a.row_offsets(), None, a.col_indices());
        let ordering = match order {
            Some((forward, inverse)) => {
                SymmetricOrdering::Custom(PermRef::new_checked(forward, inverse, n))
            }
            None => SymmetricOrdering::Amd,
        };
        let symbolic =
            factorize_symbolic_cholesky(pattern, Side::Lower, ordering, Default::default())
                .map_err(|e| SolverError::Structure(format!("{e:?}")))?;
        let scratch = MemBuffer::try_new(symbolic.factorize_numeric_llt_scratch::<f64>(
            faer::get_global_parallelism(),
            Default::default(),
        ))
        .map_err(|e| SolverError::Structure(format!("{e:?}")))?;
        let mut l_values = Vec::new();
        l_values
            .try_reserve_exact(symbolic.len_val())
            .map_err(|_| SolverError::Structure("out of memory for the factor".to_string()))?;
        l_values.resize(symbolic.len_val(), 0.0);
        let mut chol = Self {
            n,
            pattern: SymbolicSparseColMat::new_checked(
                n,
                n,
                a.row_offsets().to_vec(),
                None,
                a.col_indices().to_vec(),
            ),
            symbolic,
            l_values,
            scratch,
            n_factorizations: 1,
            last_residual: 0.0,
            policy: CheckPolicy::default(),
        };
        chol.factor(a.values())?;
        chol.check(a)?;
        Ok(chol)
    }

    /// Sets when refactorizations are checked (the first factorization always is).
    pub fn with_check_policy(mut self, policy: CheckPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Factors new values on the analysed pattern (symbolic analysis reused).
    pub fn refactor(&mut self, a: &CsrMatrix<f64>) -> Result<(), SolverError> {
        if a.row_offsets() != self.pattern.col_ptr() || a.col_indices() != self.pattern.row_idx() {
            return Err(SolverError::PatternMismatch {
                what: format!(
                    "{} nonzeros against {} analysed",
                    a.nnz(),
                    self.pattern.row_idx().len()
                ),
            });
        }
        self.factor(a.values())?;
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

    /// Values stored for the factor `L` (its fill, supernodes stored as dense blocks).
    pub fn factor_values(&self) -> usize {
        self.l_values.len()
    }

    /// Numeric factorizations done so far (1 after [`SparseCholesky::new`]).
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

    /// Solves for `n_rhs` right-hand sides stored one after another (column-major) in `b`.
    pub fn solve_many_in_place(&self, b: &mut [f64], n_rhs: usize) {
        self.solve_many_in_place_with(b, n_rhs, faer::get_global_parallelism());
    }

    /// [`Self::solve_many_in_place`] with the given parallelism inside the solve
    /// (`Par::Seq`: one thread, for solves that are themselves spread over a thread pool).
    /// The bits of the result depend on `par` and `n_rhs`, not on anything else.
    pub fn solve_many_in_place_with(&self, b: &mut [f64], n_rhs: usize, par: faer::Par) {
        assert_eq!(b.len(), self.n * n_rhs);
        // The solve's work space is a few vectors of length n (freshly allocated, as faer's
        // own high-level solve does): `solve_in_place` takes `&self`, so it can be shared.
        let mut scratch = MemBuffer::new(self.symbolic.solve_in_place_scratch::<f64>(n_rhs, par));
        LltRef::new(&self.symbolic, &self.l_values).solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(b, self.n, n_rhs),
            par,
            MemStack::new(&mut scratch),
        );
    }

    /// Numeric factorization of `values` (on the analysed pattern) into the kept storage.
    fn factor(&mut self, values: &[f64]) -> Result<(), SolverError> {
        self.symbolic
            .factorize_numeric_llt(
                &mut self.l_values,
                SparseColMatRef::new(self.pattern.as_ref(), values),
                Side::Lower,
                Default::default(),
                faer::get_global_parallelism(),
                MemStack::new(&mut self.scratch),
                Default::default(),
            )
            .map(|_| ())
            .map_err(|e| match e {
                faer::linalg::solvers::LltError::NonPositivePivot { index } => {
                    SolverError::NotPositiveDefinite { index }
                }
            })
    }

    /// Solves a deterministic test system and records its relative residual.
    fn check(&mut self, a: &CsrMatrix<f64>) -> Result<(), SolverError> {
        self.last_residual = check_solve(a, |x| self.solve_in_place(x))?;
        Ok(())
    }
}

/// Backward error of a solve on a reproducible right-hand side with all scales and signs:
/// `‖A x − b‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞)`, refused above [`RESIDUAL_TOLERANCE`].
pub(crate) fn check_solve(
    a: &CsrMatrix<f64>,
    solve: impl FnOnce(&mut [f64]),
) -> Result<f64, SolverError> {
    let n = a.nrows();
    let x_true: Vec<f64> = (0..n)
        .map(|i| 1.0 + 0.5 * ((i as f64) * 0.754_877_666).sin())
        .collect();
    let b = crate::sparse::mul(a, &x_true);
    let mut x = b.clone();
    solve(&mut x);
    if x.iter().any(|v| !v.is_finite()) {
        return Err(SolverError::NonFiniteSolution);
    }
    let r = crate::sparse::mul(a, &x);
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, e| m.max(e.abs()));
    let a_norm = a
        .row_iter()
        .map(|row| row.values().iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let diff: Vec<f64> = r.iter().zip(&b).map(|(ri, bi)| ri - bi).collect();
    let residual = inf(&diff) / (a_norm * inf(&x) + inf(&b)).max(f64::MIN_POSITIVE);
    if residual.is_nan() || residual > RESIDUAL_TOLERANCE {
        return Err(SolverError::InaccurateFactor {
            residual,
            tolerance: RESIDUAL_TOLERANCE,
        });
    }
    Ok(residual)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sparse::linear_combination;

    fn laplacian(n: usize, shift: f64) -> CsrMatrix<f64> {
        let mut coo = nalgebra_sparse::CooMatrix::new(n, n);
        for i in 0..n {
            coo.push(i, i, 2.0 + shift);
            if i + 1 < n {
                coo.push(i, i + 1, -1.0);
                coo.push(i + 1, i, -1.0);
            }
        }
        CsrMatrix::from(&coo)
    }

    /// 7-point Laplacian on an m³ grid plus `shift` on the diagonal: wide enough fronts that
    /// faer takes its supernodal path.
    fn laplacian_3d(m: usize, shift: f64) -> CsrMatrix<f64> {
        let id = |i: usize, j: usize, k: usize| (i * m + j) * m + k;
        let mut coo = nalgebra_sparse::CooMatrix::new(m * m * m, m * m * m);
        for i in 0..m {
            for j in 0..m {
                for k in 0..m {
                    let p = id(i, j, k);
                    coo.push(p, p, 6.0 + shift);
                    for (di, dj, dk) in [(1, 0, 0), (0, 1, 0), (0, 0, 1)] {
                        let (a, b, c) = (i + di, j + dj, k + dk);
                        if a < m && b < m && c < m {
                            coo.push(p, id(a, b, c), -1.0);
                            coo.push(id(a, b, c), p, -1.0);
                        }
                    }
                }
            }
        }
        CsrMatrix::from(&coo)
    }

    /// The factor's storage is reused: a refactorization must leave nothing of the previous
    /// values behind, on faer's simplicial and supernodal paths alike.
    #[test]
    fn a_refactorization_equals_a_fresh_factorization_bitwise() {
        use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
        for (first, second, supernodal) in [
            (laplacian(200, 0.5), laplacian(200, 3.0), false),
            (laplacian_3d(14, 0.5), laplacian_3d(14, 3.0), true),
        ] {
            let mut reused = SparseCholesky::new(&first).unwrap();
            let path_is_supernodal =
                matches!(reused.symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_));
            assert_eq!(path_is_supernodal, supernodal);
            reused.refactor(&second).unwrap();
            let fresh = SparseCholesky::new(&second).unwrap();
            let b: Vec<f64> = (0..second.nrows()).map(|i| (i as f64).sin()).collect();
            let (mut x_reused, mut x_fresh) = (b.clone(), b.clone());
            reused.solve_in_place(&mut x_reused);
            fresh.solve_in_place(&mut x_fresh);
            assert_eq!(x_reused, x_fresh);
            assert_ne!(x_reused, b);
        }
    }

    #[test]
    fn a_given_elimination_order_solves_the_same_system() {
        let m = 10;
        let a = laplacian_3d(m, 0.5);
        let points: Vec<[f64; 3]> = (0..m * m * m)
            .map(|p| [(p / (m * m)) as f64, ((p / m) % m) as f64, (p % m) as f64])
            .collect();
        let order = crate::ordering::nested_dissection(&points, &a);
        let mut nd = SparseCholesky::with_order(&a, &order).unwrap();
        let amd = SparseCholesky::new(&a).unwrap();
        nd.refactor(&a).unwrap();
        let b: Vec<f64> = (0..a.nrows()).map(|i| (i as f64).cos()).collect();
        let (mut x_nd, mut x_amd) = (b.clone(), b.clone());
        nd.solve_in_place(&mut x_nd);
        amd.solve_in_place(&mut x_amd);
        for (u, v) in x_nd.iter().zip(&x_amd) {
            assert!((u - v).abs() < 1e-12 * v.abs().max(1.0), "{u} against {v}");
        }
        let mut not_a_permutation = order.clone();
        not_a_permutation[1] = not_a_permutation[0];
        assert!(matches!(
            SparseCholesky::with_order(&a, &not_a_permutation),
            Err(SolverError::Structure(_))
        ));
        assert!(matches!(
            SparseCholesky::with_order(&a, &order[1..]),
            Err(SolverError::Structure(_))
        ));
    }

    #[test]
    fn solves_and_refactors_on_the_same_pattern() {
        let a = laplacian(50, 0.0);
        let mut chol = SparseCholesky::new(&a).unwrap();
        let x_true: Vec<f64> = (0..50).map(|i| i as f64).collect();
        let mut b = crate::sparse::mul(&a, &x_true);
        chol.solve_in_place(&mut b);
        for (x, e) in b.iter().zip(&x_true) {
            assert!((x - e).abs() < 1e-9);
        }
        assert!(chol.last_check_residual() < 1e-14);
        let a2 = laplacian(50, 1.0);
        chol.refactor(&a2).unwrap();
        assert_eq!(chol.factorization_count(), 2);
        let mut two = [
            crate::sparse::mul(&a2, &x_true),
            crate::sparse::mul(&a2, &x_true),
        ]
        .concat();
        chol.solve_many_in_place(&mut two, 2);
        assert!((two[77] - 27.0).abs() < 1e-9);
    }

    #[test]
    fn refuses_indefinite_and_mismatched_matrices() {
        let a = laplacian(10, -3.0);
        assert!(matches!(
            SparseCholesky::new(&a),
            Err(SolverError::NotPositiveDefinite { .. })
        ));
        let mut chol = SparseCholesky::new(&laplacian(10, 0.0)).unwrap();
        let other = linear_combination(&[], Some((1.0, &[1.0; 10])));
        assert!(matches!(
            chol.refactor(&other),
            Err(SolverError::PatternMismatch { .. })
        ));
    }
}
