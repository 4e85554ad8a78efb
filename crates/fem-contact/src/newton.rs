//! A global semismooth Newton method on the Alart–Curnier function of the whole problem,
//! used to finish (polish) what NSGS started, or as the first solver
//! ([`crate::nsgs::Strategy::NewtonThenNsgs`]) (docs/theory/contact.md, §4.3–§4.4).
//!
//! `F(r) = 0` stacks each point's Alart–Curnier function (C7) at `u = W r + q`; its
//! generalized Jacobian is `J = D_r + D_u W` (C9), block-sparse with the pattern of `W`. A step
//! solves `(J + λI) Δ = −F` with faer's sparse LU (through `fem_assembly::Factorization`,
//! symbolic analysis kept across iterations), then a line search on `θ = ½‖F‖²`: backtracking
//! on `‖F‖` (the polish), or Goldstein–Price (C15) with the full step taken when it fails
//! (the global method, (C16)). The shift `λ` (a Levenberg–Marquardt-like regularization,
//! `λ = κ‖F‖/‖r‖`, `κ` at `r = 0`) keeps the step defined when `W` is singular — which it is
//! whenever there are more contact rows than degrees of freedom (a hyperstatic packing) —
//! and vanishes as `F → 0`.

use fem_assembly::{CsrMatrix, Factorization, Symmetry};
use nalgebra::{Matrix3, Vector3};

use crate::law::Law;
use crate::local::{alart_curnier, rho_of};
use crate::problem::Problem;

/// The line search on the merit `θ(r) = ½‖F(r)‖²` (docs/theory/contact.md, §4.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LineSearch {
    /// Backtracking from `t = 1` by halves until `‖F‖` decreases by the factor `1 − 10⁻⁴ t`
    /// (Armijo on `‖F‖`), at most 20 trials.
    #[default]
    Backtracking,
    /// Goldstein–Price (C15): `m₂ θ'(0) ≤ (θ(t) − θ(0))/t ≤ m₁ θ'(0)` with `m₁ = 0.01`,
    /// `m₂ = 0.99`, the bracket bisected (doubled while it has no upper end), at most 100
    /// trials.
    GoldsteinPrice,
}

/// What a Newton iteration does when its line search finds no acceptable step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnLineSearchFailure {
    /// Stop the method (the best iterate so far is returned).
    #[default]
    Stop,
    /// Take the full Newton step anyway (a non-monotone iteration: it can leave the
    /// neighbourhood of a kink of `F` where no descent step exists, as the near-grazing
    /// contacts of a hyperstatic packing make). The best iterate is still what is returned.
    FullStep,
}

/// How the Alart–Curnier parameters `ρ` of a point are chosen from its diagonal block `W_ii`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RhoChoice {
    /// `ρ_N = 1/W_NN`, `ρ_T` the inverse of the mean tangential diagonal entry
    /// ([`crate::local::rho_of`]).
    #[default]
    Diagonal,
    /// `ρ_N = ρ_T = 1/‖W_ii‖₂` (the largest singular value).
    SpectralNorm,
}

/// Settings of [`polish`], used as the polish after NSGS or as the global Newton method of
/// [`crate::nsgs::Strategy::NewtonThenNsgs`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonSettings {
    /// Stop when Siconos' error (C11) is at most this.
    pub tolerance: f64,
    /// Iteration cap.
    pub max_iterations: u32,
    /// `κ` in the shift `λ = κ ‖F‖ / max(‖r‖, tiny)`.
    pub shift: f64,
    /// The line search.
    pub line_search: LineSearch,
    /// What to do when the line search fails.
    pub on_failure: OnLineSearchFailure,
    /// The choice of `ρ`.
    pub rho: RhoChoice,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-8,
            max_iterations: 30,
            shift: 1.0,
            line_search: LineSearch::Backtracking,
            on_failure: OnLineSearchFailure::Stop,
            rho: RhoChoice::Diagonal,
        }
    }
}

impl NewtonSettings {
    /// The settings of the global Newton method ([`crate::nsgs::Strategy::NewtonThenNsgs`]): Goldstein–Price
    /// line search, full step when it fails, `ρ = 1/‖W_ii‖₂`, a shift of `10⁻⁸ ‖F‖/‖r‖`, at most
    /// 100 iterations (measured on the FCLIB problems: docs/performance.md).
    pub fn global() -> Self {
        Self {
            tolerance: 1e-8,
            max_iterations: 100,
            shift: 1e-8,
            line_search: LineSearch::GoldsteinPrice,
            on_failure: OnLineSearchFailure::FullStep,
            rho: RhoChoice::SpectralNorm,
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

/// `r + t d` into `trial` (and its velocities into `ut`); `‖F‖` there.
fn try_step(
    problem: &Problem,
    rho: &[(f64, f64)],
    r: &[Vector3<f64>],
    step: &[f64],
    t: f64,
    trial: &mut [Vector3<f64>],
    ut: &mut [Vector3<f64>],
) -> f64 {
    for (i, ti) in trial.iter_mut().enumerate() {
        *ti = r[i] + t * Vector3::new(step[3 * i], step[3 * i + 1], step[3 * i + 2]);
    }
    residual(problem, rho, trial, ut)
}

/// Backtracking on `‖F‖`: the accepted `(t, ‖F(r + t d)‖)`, the trial point left in `trial`.
fn backtracking(
    problem: &Problem,
    rho: &[(f64, f64)],
    r: &[Vector3<f64>],
    step: &[f64],
    norm_f: f64,
    trial: &mut [Vector3<f64>],
    ut: &mut [Vector3<f64>],
) -> Option<(f64, f64)> {
    let mut t = 1.0;
    for _ in 0..20 {
        let nt = try_step(problem, rho, r, step, t, trial, ut);
        if nt < (1.0 - 1e-4 * t) * norm_f {
            return Some((t, nt));
        }
        t *= 0.5;
    }
    None
}

/// Goldstein–Price on `θ = ½‖F‖²` (C15), given `θ'(0)`: the accepted `(t, ‖F(r + t d)‖)`.
#[allow(clippy::too_many_arguments)]
fn goldstein_price(
    problem: &Problem,
    rho: &[(f64, f64)],
    r: &[Vector3<f64>],
    step: &[f64],
    norm_f: f64,
    slope0: f64,
    trial: &mut [Vector3<f64>],
    ut: &mut [Vector3<f64>],
) -> Option<(f64, f64)> {
    const M1: f64 = 0.01;
    const M2: f64 = 0.99;
    // Not a descent direction (or not a number): no step to search.
    if slope0.is_nan() || slope0 >= 0.0 {
        return None;
    }
    let theta0 = 0.5 * norm_f * norm_f;
    let (mut lo, mut hi) = (0.0_f64, f64::INFINITY);
    let mut t = 1.0;
    for _ in 0..100 {
        let nt = try_step(problem, rho, r, step, t, trial, ut);
        if !nt.is_finite() {
            hi = t;
        } else {
            let slope = (0.5 * nt * nt - theta0) / t;
            let long_enough = slope >= M2 * slope0;
            let decrease = slope <= M1 * slope0;
            if long_enough && decrease {
                return Some((t, nt));
            }
            if !long_enough {
                lo = t;
            } else {
                hi = t;
            }
        }
        t = if hi.is_finite() {
            0.5 * (lo + hi)
        } else {
            2.0 * lo
        };
        if t < 1e-14 {
            break;
        }
    }
    None
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
    let rho: Vec<(f64, f64)> = (0..n)
        .map(|i| match settings.rho {
            RhoChoice::Diagonal => rho_of(problem.diagonal(i)),
            RhoChoice::SpectralNorm => {
                let s = problem
                    .diagonal(i)
                    .singular_values()
                    .iter()
                    .fold(0.0_f64, |a, &b| a.max(b));
                let rho = if s > 0.0 && s.is_finite() {
                    1.0 / s
                } else {
                    1.0
                };
                (rho, rho)
            }
        })
        .collect();
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
    // Where the diagonal entries of J sit in `values` (the shift is added there).
    let mut diagonal_positions = Vec::with_capacity(3 * n);
    for (i, cols) in block_cols.iter().enumerate() {
        let width = 3 * cols.len();
        let k = cols
            .iter()
            .position(|&j| j == i)
            .expect("the diagonal block is in the pattern");
        for a in 0..3 {
            diagonal_positions.push(row_offsets[3 * i] + a * width + 3 * k + a);
        }
    }
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
        // (at a cold start, r = 0, the shift is κ itself)
        let mut lambda = if norm_r > 0.0 {
            settings.shift * norm_f / norm_r
        } else {
            settings.shift
        };
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
        // Factor J + λI; if LU meets a zero pivot (W singular and λ vanishing as F → 0),
        // raise the shift (to at least 1e-10, then ×100) and try again, at most 3 times.
        let mut ok = false;
        for attempt in 0..4 {
            if attempt > 0 {
                let raised = (100.0 * lambda).max(1e-10);
                for &pos in &diagonal_positions {
                    values[pos] += raised - lambda;
                }
                lambda = raised;
            }
            let Ok(j) = CsrMatrix::try_from_csr_data(
                3 * n,
                3 * n,
                row_offsets.clone(),
                col_indices.clone(),
                values.clone(),
            ) else {
                break;
            };
            ok = match factor.as_mut() {
                Some(fa) => fa.refactor(&j).is_ok(),
                None => match Factorization::new(&j, Symmetry::Unsymmetric) {
                    Ok(fa) => {
                        factor = Some(fa);
                        true
                    }
                    Err(_) => false,
                },
            };
            if ok {
                break;
            }
        }
        if !ok {
            break;
        }
        let mut step: Vec<f64> = f.iter().flat_map(|v| [-v[0], -v[1], -v[2]]).collect();
        factor.as_ref().expect("factored").solve_in_place(&mut step);
        if step.iter().any(|v| !v.is_finite()) {
            break;
        }
        let accepted = match settings.line_search {
            LineSearch::Backtracking => {
                backtracking(problem, &rho, r, &step, norm_f, &mut trial, &mut ut)
            }
            LineSearch::GoldsteinPrice => {
                // θ'(0) = Fᵀ J d with (J + λI) d = −F: Fᵀ(−F − λ d).
                let slope0 = f
                    .iter()
                    .enumerate()
                    .map(|(i, fi)| {
                        let d = Vector3::new(step[3 * i], step[3 * i + 1], step[3 * i + 2]);
                        fi.dot(&(-fi - lambda * d))
                    })
                    .sum::<f64>();
                goldstein_price(problem, &rho, r, &step, norm_f, slope0, &mut trial, &mut ut)
            }
        };
        let t = match accepted {
            Some((t, nt)) => {
                norm_f = nt;
                t
            }
            None => match settings.on_failure {
                OnLineSearchFailure::Stop => break,
                OnLineSearchFailure::FullStep => {
                    for i in 0..n {
                        trial[i] =
                            r[i] + Vector3::new(step[3 * i], step[3 * i + 1], step[3 * i + 2]);
                    }
                    norm_f = residual(problem, &rho, &trial, &mut ut);
                    if !norm_f.is_finite() {
                        break;
                    }
                    1.0
                }
            },
        };
        r.copy_from_slice(&trial);
        u.copy_from_slice(&ut);
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
    // the impulses returned are admissible, and measure again. With a stiff `W` (‖W‖ ≫ ‖q‖/‖r‖)
    // a projection by round-off can raise the error above the tolerance; then the unprojected
    // iterate is kept (its distance to the cone is part of the error (C11), so it is within the
    // tolerance of the cone).
    let mut projected = best.clone();
    for (ri, law) in projected.iter_mut().zip(problem.laws()) {
        if let Law::Contact { friction, .. } = law {
            *ri = crate::cone::project_on_cone(ri, *friction);
        }
    }
    problem.velocity(&projected, &mut u);
    let projected_error = problem.fc3d_error_with(&projected, &u);
    if projected_error <= settings.tolerance || projected_error <= best_error {
        best = projected;
        best_error = projected_error;
    }
    r.copy_from_slice(&best);
    report.error = best_error;
    report.converged = best_error <= settings.tolerance;
    report
}
