//! A global semismooth Newton method on the Alart–Curnier function of the whole problem,
//! used to finish (polish) what NSGS started (docs/theory/contact.md, §4.3).
//!
//! `F(r) = 0` stacks each point's Alart–Curnier function (C7) at `u = W r + q`; its
//! generalized Jacobian is `J = D_r + D_u W` (C9), block-sparse with the pattern of `W`. A step
//! solves `(J + λI) Δ = −F` with faer's sparse LU (through `fem_assembly::Factorization`,
//! symbolic analysis kept across iterations) and a backtracking line search on `‖F‖`. The
//! shift `λ` (a Levenberg–Marquardt-like regularization, `λ = κ‖F‖/‖r‖`) keeps the step
//! defined when `W` is singular — which it is whenever there are more contact rows than
//! degrees of freedom (a hyperstatic packing) — and vanishes as `F → 0`.

use fem_assembly::{CsrMatrix, Factorization, Symmetry};
use nalgebra::{Matrix3, Vector3};

use crate::law::Law;
use crate::local::{alart_curnier, rho_of};
use crate::problem::Problem;

/// Settings of [`polish`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonSettings {
    /// Stop when Siconos' error (C11) is at most this.
    pub tolerance: f64,
    /// Iteration cap.
    pub max_iterations: u32,
    /// `κ` in the shift `λ = κ ‖F‖ / max(‖r‖, tiny)`.
    pub shift: f64,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-8,
            max_iterations: 30,
            shift: 1.0,
        }
    }
}

/// What [`polish`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NewtonReport {
    /// Iterations (linear solves).
    pub iterations: u32,
    /// Siconos' error at the end.
    pub error: f64,
    /// Whether `error ≤ tolerance`.
    pub converged: bool,
}

/// F, D_r, D_u of point `i`.
fn point_parts(
    law: &Law,
    r: &Vector3<f64>,
    u: &Vector3<f64>,
    rho: (f64, f64),
) -> (Vector3<f64>, Matrix3<f64>, Matrix3<f64>) {
    let mut dr = Matrix3::zeros();
    let mut du = Matrix3::zeros();
    let f = match *law {
        Law::Contact { friction, .. } => {
            alart_curnier(r, u, friction, rho.0, rho.1, Some((&mut dr, &mut du)))
        }
        Law::FixedPoint => {
            // F = ρ_N u.
            du = Matrix3::identity() * rho.0;
            u * rho.0
        }
        Law::FixedDirection | Law::RigidLink => {
            du[(0, 0)] = rho.0;
            dr[(1, 1)] = 1.0;
            dr[(2, 2)] = 1.0;
            Vector3::new(rho.0 * u[0], r[1], r[2])
        }
    };
    (f, dr, du)
}

fn residual(
    problem: &Problem,
    rho: &[(f64, f64)],
    r: &[Vector3<f64>],
    u: &mut [Vector3<f64>],
) -> f64 {
    problem.velocity(r, u);
    (0..problem.len())
        .map(|i| {
            point_parts(&problem.laws()[i], &r[i], &u[i], rho[i])
                .0
                .norm_squared()
        })
        .sum::<f64>()
        .sqrt()
}

/// Runs the global Newton method from `r` (in place). `r` is only ever replaced by iterates
/// of smaller Siconos error: on return it holds the best impulses found.
pub fn polish(
    problem: &Problem,
    r: &mut [Vector3<f64>],
    settings: &NewtonSettings,
) -> NewtonReport {
    let n = problem.len();
    let mut report = NewtonReport::default();
    let mut u = vec![Vector3::zeros(); n];
    problem.velocity(r, &mut u);
    report.error = problem.fc3d_error_with(r, &u);
    if report.error <= settings.tolerance || n == 0 {
        report.converged = true;
        return report;
    }
    let rho: Vec<(f64, f64)> = (0..n).map(|i| rho_of(problem.diagonal(i))).collect();
    // The pattern: the diagonal block and W's off-diagonal blocks of each row, dense 3×3.
    let mut row_offsets = Vec::with_capacity(3 * n + 1);
    let mut col_indices = Vec::new();
    row_offsets.push(0);
    let mut block_cols: Vec<Vec<usize>> = Vec::with_capacity(n);
    for i in 0..n {
        let mut cols: Vec<usize> = problem.row_blocks(i).map(|(j, _)| j).collect();
        cols.push(i);
        cols.sort_unstable();
        for a in 0..3 {
            for &j in &cols {
                col_indices.extend([3 * j, 3 * j + 1, 3 * j + 2]);
            }
            let _ = a;
            row_offsets.push(col_indices.len());
        }
        block_cols.push(cols);
    }
    let mut values = vec![0.0; col_indices.len()];
    let mut factor: Option<Factorization> = None;
    let mut f = vec![Vector3::zeros(); n];
    let mut best = r.to_vec();
    let mut best_error = report.error;
    let mut norm_f = residual(problem, &rho, r, &mut u);
    let mut trial = r.to_vec();
    let mut ut = u.clone();
    for _ in 0..settings.max_iterations {
        report.iterations += 1;
        let norm_r = r.iter().map(|v| v.norm_squared()).sum::<f64>().sqrt();
        let lambda = settings.shift * norm_f / norm_r.max(f64::MIN_POSITIVE);
        // Assemble J + λI.
        for i in 0..n {
            let (fi, dr, du) = point_parts(&problem.laws()[i], &r[i], &u[i], rho[i]);
            f[i] = fi;
            let cols = &block_cols[i];
            let width = 3 * cols.len();
            let base = row_offsets[3 * i];
            for (k, &j) in cols.iter().enumerate() {
                let block = if j == i {
                    dr + du * problem.diagonal(i) + Matrix3::identity() * lambda
                } else {
                    let w = problem
                        .row_blocks(i)
                        .find(|&(c, _)| c == j)
                        .map(|(_, b)| *b)
                        .unwrap_or_else(Matrix3::zeros);
                    du * w
                };
                for a in 0..3 {
                    for c in 0..3 {
                        values[base + a * width + 3 * k + c] = block[(a, c)];
                    }
                }
            }
        }
        let j = match CsrMatrix::try_from_csr_data(
            3 * n,
            3 * n,
            row_offsets.clone(),
            col_indices.clone(),
            values.clone(),
        ) {
            Ok(m) => m,
            Err(_) => break,
        };
        let ok = match factor.as_mut() {
            Some(fa) => fa.refactor(&j).is_ok(),
            None => match Factorization::new(&j, Symmetry::Unsymmetric) {
                Ok(fa) => {
                    factor = Some(fa);
                    true
                }
                Err(_) => false,
            },
        };
        if !ok {
            break;
        }
        let mut step: Vec<f64> = f.iter().flat_map(|v| [-v[0], -v[1], -v[2]]).collect();
        factor.as_ref().expect("factored").solve_in_place(&mut step);
        if step.iter().any(|v| !v.is_finite()) {
            break;
        }
        // Backtracking on ‖F‖.
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..20 {
            for i in 0..n {
                trial[i] = r[i] + t * Vector3::new(step[3 * i], step[3 * i + 1], step[3 * i + 2]);
            }
            let nt = residual(problem, &rho, &trial, &mut ut);
            if nt < (1.0 - 1e-4 * t) * norm_f {
                r.copy_from_slice(&trial);
                u.copy_from_slice(&ut);
                norm_f = nt;
                accepted = true;
                break;
            }
            t *= 0.5;
        }
        if !accepted {
            break;
        }
        report.error = problem.fc3d_error_with(r, &u);
        log::trace!(
            "newton {}: step {t}, shift {lambda:.2e}, |F| {norm_f:.3e}, error {:.3e}",
            report.iterations,
            report.error
        );
        if report.error < best_error {
            best_error = report.error;
            best.copy_from_slice(r);
        }
        if report.error <= settings.tolerance {
            break;
        }
    }
    // Newton's iterates satisfy the cone only up to round-off: project them back, so that
    // every impulse returned is admissible, and measure again.
    for (ri, law) in best.iter_mut().zip(problem.laws()) {
        if let Law::Contact { friction, .. } = law {
            *ri = crate::cone::project_on_cone(ri, *friction);
        }
    }
    problem.velocity(&best, &mut u);
    best_error = problem.fc3d_error_with(&best, &u);
    r.copy_from_slice(&best);
    report.error = best_error;
    report.converged = best_error <= settings.tolerance;
    report
}
