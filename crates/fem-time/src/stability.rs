//! The largest eigenvalue `λ_m` of `M⁻¹ A`, for the stability bound (23).
//!
//! Power iteration on the pencil `(A, M)`: `y ← M⁻¹ A y`, normalised in the `M`-norm, with
//! the Rayleigh quotient `(A y, y) / (M y, y)` as the estimate. The quotient never exceeds
//! `λ_m` and converges from below; its error is a weighted sum of `λ_m − λ_j`, so even when the
//! top eigenvalues cluster (a fine string) the *value* converges quickly. The start vector
//! alternates in sign, which is rich in the highest mode of a discretised wave operator.

use fem_assembly::{SparseCholesky, sparse};
use nalgebra_sparse::CsrMatrix;

use crate::Mass;

/// Estimate of `λ_m` and how it was reached.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LargestEigenvalue {
    /// The Rayleigh quotient at the last iteration (a lower bound on `λ_m`).
    pub value: f64,
    /// Iterations used.
    pub iterations: usize,
    /// Relative change of the quotient over the last iteration.
    pub relative_change: f64,
}

/// Power iteration for the largest eigenvalue of `M⁻¹ A` to a relative change of `tolerance`
/// (at most `max_iterations`). `mass_factor` must be the Cholesky factor of a consistent `M`
/// (unused for a lumped one).
pub fn largest_eigenvalue(
    mass: &Mass,
    mass_factor: Option<&SparseCholesky>,
    a: &CsrMatrix<f64>,
    tolerance: f64,
    max_iterations: usize,
) -> LargestEigenvalue {
    let apply = |y: &[f64], ay: &mut [f64]| -> Result<(), std::convert::Infallible> {
        sparse::mul_add(0.0, ay, 1.0, a, y);
        Ok(())
    };
    match largest_eigenvalue_of(mass, mass_factor, apply, tolerance, max_iterations) {
        Ok(lambda) => lambda,
        Err(never) => match never {},
    }
}

/// [`largest_eigenvalue`] of `M⁻¹ A` with `A` given by its action `apply(y, A y)` (a tangent
/// applied by finite differences of the force, say), which may fail.
pub fn largest_eigenvalue_of<E>(
    mass: &Mass,
    mass_factor: Option<&SparseCholesky>,
    mut apply: impl FnMut(&[f64], &mut [f64]) -> Result<(), E>,
    tolerance: f64,
    max_iterations: usize,
) -> Result<LargestEigenvalue, E> {
    let n = mass.n();
    let mut y: Vec<f64> = (0..n)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 } * (1.0 + 0.1 * (i as f64 * 0.37).sin()))
        .collect();
    let mut ay = vec![0.0; n];
    let mut estimate = 0.0;
    let mut change = f64::INFINITY;
    let mut iterations = 0;
    while iterations < max_iterations {
        iterations += 1;
        let m_norm = mass.norm_squared(&y).sqrt();
        if m_norm.is_nan() || m_norm <= 0.0 {
            break;
        }
        y.iter_mut().for_each(|v| *v /= m_norm);
        apply(&y, &mut ay)?;
        let quotient: f64 = ay.iter().zip(&y).map(|(p, q)| p * q).sum();
        change = (quotient - estimate).abs() / quotient.abs().max(f64::MIN_POSITIVE);
        estimate = quotient;
        // y ← M⁻¹ A y
        match mass {
            Mass::Lumped(d) => {
                for ((yi, ai), di) in y.iter_mut().zip(&ay).zip(d) {
                    *yi = ai / di;
                }
            }
            Mass::Consistent(_) => {
                y.copy_from_slice(&ay);
                mass_factor
                    .expect("a consistent mass needs its factor")
                    .solve_in_place(&mut y);
            }
        }
        if change < tolerance {
            break;
        }
    }
    Ok(LargestEigenvalue {
        value: estimate,
        iterations,
        relative_change: change,
    })
}
