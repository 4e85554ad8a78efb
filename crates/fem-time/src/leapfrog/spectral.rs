//! The explicit critical step from the assembled body's largest eigenvalue, not only its
//! elements': Lanczos on `A = M^{-1/2} K M^{-1/2}`, started from a deterministic field and
//! bounded by the element bound.
//!
//! The element bound `λ_e = max_e λ_max(K_e, M_e)` (Irons' inequality, [`StableStep`]) is safe but
//! can be loose: with one cell squashed to 1/20 of its neighbours it is 27 times the true
//! `λ_max(M⁻¹K)` (5.2 times in the step). Here:
//!
//! ```text
//! K v ≈ (f_int(x + ε v) − f_int(x − ε v)) / 2ε            (exact to O(ε²); ε v ~ 10⁻⁶ of a cell)  (S1)
//! Lanczos on A = D K D, D = M^{-1/2}: T_k, its largest eigenvalue θ and the residual
//!     r = β_k |s_k| of its Ritz pair (‖A y − θ y‖ = r)                                        (S2)
//! λ = min(θ + r, λ_e),   Δt_crit = 2 / √λ                                                        (S3)
//! ```
//!
//! The Ritz value is a lower bound of `λ_max`, and `[θ − r, θ + r]` holds an eigenvalue
//! (Krylov–Weinstein); the largest Ritz value converges to `λ_max` first, so `θ + r` bounds it
//! from above once the pair has converged, which the iteration waits for (`r ≤ 10⁻³ θ`, at most
//! [`MAX_ITERATIONS`] steps: typically 15–40). `λ_e` caps the estimate (it is a rigorous upper
//! bound), so the step is never looser than the element bound's and, on a regular mesh, within
//! a few per cent of the true limit (tested against dense eigensolvers on regular and
//! distorted meshes: `docs/validation.md`).
//!
//! The start vector is a pseudo-random function of each dof's reference position and component
//! (a hash), so a distributed body starts from the same field as the serial one, and every dot
//! product is a [`LeapFrogSystem::sum_over_dofs`]: the estimate is bitwise the serial one on any
//! number of processes. Without positions (a system that gives none), the dof index is hashed.
//!
//! **Re-checks** (as the body deforms): a few power iterations of the previous Ritz vector
//! give `ρ + ‖A y − ρ y‖`, cheap when the limiting mode has not changed; a residual above 2 % of
//! `ρ` (the mode moved elsewhere) runs the Lanczos iteration again.

use fem_assembly::StableStep;

use super::LeapFrogSystem;
use crate::{EvalError, Mass};

/// Lanczos steps at most.
pub const MAX_ITERATIONS: usize = 60;
/// The relative residual of the largest Ritz pair at which the iteration stops.
const TOLERANCE: f64 = 1e-3;
/// The relative residual above which a re-check starts over with Lanczos.
const RECHECK_TOLERANCE: f64 = 0.02;
/// The relative residual above which a Lanczos estimate is not used (the element bound is).
const UNCONVERGED: f64 = 0.05;
/// Power iterations of a re-check.
const RECHECK_ITERATIONS: usize = 3;
/// The strain of the finite-difference perturbation (S1).
pub const PERTURBATION: f64 = 1e-6;

/// The refined critical step and what it rests on.
#[derive(Clone, Debug, PartialEq)]
pub struct CriticalStep {
    /// `2/√λ` with the estimate `λ` of (S3); `cell` is the element bound's.
    pub step: StableStep,
    /// The element bound.
    pub element: StableStep,
    /// Matrix-vector products (Lanczos or power iterations) it took.
    pub iterations: usize,
    /// The residual `r/θ` of the Ritz pair (relative).
    pub residual: f64,
    /// The Ritz vector (scaled by `M^{1/2}`, unit norm), to start the next re-check from.
    pub mode: Vec<f64>,
}

/// What the iteration needs of the system: `D = M^{-1/2}`, the step `ε` of (S1), the start.
struct Operator<'a, S: ?Sized> {
    system: &'a S,
    x: &'a [f64],
    d: Vec<f64>,
    eps: f64,
    plus: Vec<f64>,
    minus: Vec<f64>,
    fp: Vec<f64>,
    fm: Vec<f64>,
}

impl<'a, S: LeapFrogSystem + ?Sized> Operator<'a, S> {
    /// `None` for a consistent mass (the estimate is for DEF_EXP's lumped one).
    fn new(system: &'a S, x: &'a [f64]) -> Option<Self> {
        let n = x.len();
        let d: Vec<f64> = match system.mass() {
            // A massless dof (DEF_EXP's equilibrium block, super::massless) is held: D = 0
            // there, so A is D_m K_mm D_m padded with zeros and the estimate is
            // λ_max(M_m⁻¹ K_mm). It bounds the condensed system the massive dofs step,
            // K_mm − K_mc K_cc⁻¹ K_cm ≤ K_mm (K_cc positive definite), and is itself at most the
            // element bound of the body before its mass was redistributed (a principal block of
            // the pencil, on masses that only grew), which still caps it.
            Mass::Lumped(m) => m
                .iter()
                .map(|&m| if m > 0.0 { 1.0 / m.sqrt() } else { 0.0 })
                .collect(),
            Mass::Consistent(_) => return None,
        };
        // ε: a strain of PERTURBATION over a cell, for y of unit norm (entries ~ n^{-1/2}): the
        // cell size from the body's RMS radius and node count, v = D y ~ (m̄ n)^{-1/2}.
        let count = system.sum_over_dofs(&mut (0..n).map(|i| (i, 1.0)));
        let mass = match system.mass() {
            Mass::Lumped(m) => {
                system.sum_over_dofs(&mut m.iter().enumerate().map(|(i, &v)| (i, v)))
            }
            Mass::Consistent(_) => return None,
        };
        let cell =
            match system.dof_points() {
                Some(points) => {
                    let mean: [f64; 3] = std::array::from_fn(|k| {
                        system.sum_over_dofs(&mut points.iter().enumerate().map(|(i, p)| (i, p[k])))
                            / count
                    });
                    let r2 =
                        system.sum_over_dofs(&mut points.iter().enumerate().map(|(i, p)| {
                            (i, (0..3).map(|k| (p[k] - mean[k]).powi(2)).sum::<f64>())
                        })) / count;
                    r2.sqrt() / (count / 3.0).cbrt()
                }
                None => 1.0,
            };
        let eps = PERTURBATION * cell.max(f64::MIN_POSITIVE) * (mass * count).sqrt() / count;
        Some(Self {
            system,
            x,
            d,
            eps,
            plus: vec![0.0; n],
            minus: vec![0.0; n],
            fp: vec![0.0; n],
            fm: vec![0.0; n],
        })
    }

    fn dot(&self, a: &[f64], b: &[f64]) -> f64 {
        self.system
            .sum_over_dofs(&mut a.iter().zip(b).enumerate().map(|(i, (p, q))| (i, p * q)))
    }

    /// `out = D K D y` by (S1). Fails if a force is not finite.
    fn apply(&mut self, y: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        for i in 0..y.len() {
            let v = self.eps * self.d[i] * y[i];
            self.plus[i] = self.x[i] + v;
            self.minus[i] = self.x[i] - v;
        }
        let evaluated = (self.system.internal_force(&self.plus, &mut self.fp))
            .and_then(|()| self.system.internal_force(&self.minus, &mut self.fm))
            .and_then(|()| EvalError::check_finite("internal force", &self.fp))
            .and_then(|()| EvalError::check_finite("internal force", &self.fm));
        if !self.system.all_agree(evaluated.is_ok()) {
            return Err(evaluated.err().unwrap_or(EvalError::Elsewhere));
        }
        for i in 0..y.len() {
            out[i] = self.d[i] * (self.fp[i] - self.fm[i]) / (2.0 * self.eps);
        }
        Ok(())
    }

    /// The deterministic start: a hash of each dof's position and component (or its index).
    fn start(&self) -> Vec<f64> {
        let n = self.x.len();
        let points = self.system.dof_points();
        let mut out = vec![0.0; n];
        let mut component = 0u64;
        for i in 0..n {
            let key = match &points {
                Some(p) => {
                    if i > 0 && p[i] == p[i - 1] {
                        component += 1;
                    } else {
                        component = 0;
                    }
                    let b = p[i].map(f64::to_bits);
                    mix(mix(mix(b[0] ^ 0x9e37_79b9_7f4a_7c15) ^ b[1]) ^ b[2]) ^ component
                }
                None => i as u64,
            };
            out[i] = (mix(key) >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        }
        out
    }
}

/// SplitMix64's finalizer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The largest eigenvalue of the symmetric tridiagonal matrix `(alpha, beta)` and the last
/// component of its unit eigenvector (dense: `k ≤ MAX_ITERATIONS`).
fn largest(alpha: &[f64], beta: &[f64]) -> (f64, Vec<f64>) {
    let k = alpha.len();
    let t = nalgebra::DMatrix::from_fn(k, k, |i, j| {
        if i == j {
            alpha[i]
        } else if i + 1 == j {
            beta[i]
        } else if j + 1 == i {
            beta[j]
        } else {
            0.0
        }
    });
    let eig = t.symmetric_eigen();
    let top = (0..k)
        .max_by(|&a, &b| eig.eigenvalues[a].total_cmp(&eig.eigenvalues[b]))
        .expect("k ≥ 1");
    let s = eig.eigenvectors.column(top).iter().copied().collect();
    (eig.eigenvalues[top], s)
}

/// The refined critical step at `x` (S1–S3), given the element bound `element` there.
/// Collective on a distributed system. The element bound itself (no mode, no iterations) when
/// the force cannot be evaluated near `x` (a body whose size or stiffness is out of `f64`'s
/// range for (S1)) or the mass is consistent (the estimate is DEF_EXP's, on a lumped mass).
pub fn refine<S: LeapFrogSystem + ?Sized>(
    system: &S,
    x: &[f64],
    element: StableStep,
) -> Result<CriticalStep, EvalError> {
    let Some(mut op) = Operator::new(system, x) else {
        return Ok(unrefined(element));
    };
    let start = op.start();
    Ok(lanczos(&mut op, start, element).unwrap_or_else(|_| unrefined(element)))
}

fn lanczos<S: LeapFrogSystem + ?Sized>(
    op: &mut Operator<'_, S>,
    start: Vec<f64>,
    element: StableStep,
) -> Result<CriticalStep, EvalError> {
    let n = start.len();
    let norm = op.dot(&start, &start).sqrt();
    let mut q: Vec<f64> = start.iter().map(|v| v / norm).collect();
    let first = q.clone();
    let mut q_prev = vec![0.0; n];
    let mut w = vec![0.0; n];
    let (mut alpha, mut beta): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    let mut theta: f64 = 0.0;
    let mut residual = f64::INFINITY;
    let mut s = Vec::new();
    for j in 0..MAX_ITERATIONS {
        op.apply(&q, &mut w)?;
        if j > 0 {
            let b = beta[j - 1];
            w.iter_mut().zip(&q_prev).for_each(|(wi, p)| *wi -= b * p);
        }
        let a = op.dot(&w, &q);
        w.iter_mut().zip(&q).for_each(|(wi, qi)| *wi -= a * qi);
        alpha.push(a);
        let b = op.dot(&w, &w).sqrt();
        let (t, sv) = largest(&alpha, &beta);
        theta = t;
        residual = b * sv[j].abs();
        s = sv;
        if (j >= 4 && residual <= TOLERANCE * theta) || b == 0.0 {
            break;
        }
        beta.push(b);
        std::mem::swap(&mut q_prev, &mut q);
        q.iter_mut().zip(&w).for_each(|(qi, wi)| *qi = wi / b);
    }
    let iterations = alpha.len();
    // The Ritz vector y = Σ_j s_j q_j: the recurrence again (the vectors are not kept).
    let mut mode = vec![0.0; n];
    let mut q = first;
    let mut q_prev = vec![0.0; n];
    for j in 0..iterations {
        mode.iter_mut().zip(&q).for_each(|(m, qi)| *m += s[j] * qi);
        if j + 1 == iterations {
            break;
        }
        op.apply(&q, &mut w)?;
        if j > 0 {
            let b = beta[j - 1];
            w.iter_mut().zip(&q_prev).for_each(|(wi, p)| *wi -= b * p);
        }
        w.iter_mut()
            .zip(&q)
            .for_each(|(wi, qi)| *wi -= alpha[j] * qi);
        std::mem::swap(&mut q_prev, &mut q);
        q.iter_mut().zip(&w).for_each(|(qi, wi)| *qi = wi / beta[j]);
    }
    let norm = op.dot(&mode, &mode).sqrt();
    mode.iter_mut().for_each(|m| *m /= norm);
    // Not converged (a spectrum too clustered at its top for MAX_ITERATIONS steps): the Ritz
    // value bounds nothing; the element bound stands.
    let cap = if residual <= UNCONVERGED * theta {
        element.lambda_max
    } else {
        theta = element.lambda_max;
        0.0
    };
    Ok(estimate(
        element,
        cap,
        theta,
        residual,
        2 * iterations - 1,
        mode,
    ))
}

/// The element bound itself, as an estimate without a mode.
fn unrefined(element: StableStep) -> CriticalStep {
    CriticalStep {
        step: element,
        element,
        iterations: 0,
        residual: f64::INFINITY,
        mode: Vec::new(),
    }
}

/// (S3) from a Ritz pair, capped by `cap` (the element bound's `λ`).
fn estimate(
    element: StableStep,
    cap: f64,
    theta: f64,
    residual: f64,
    iterations: usize,
    mode: Vec<f64>,
) -> CriticalStep {
    let lambda = (theta + residual).min(cap);
    CriticalStep {
        step: StableStep {
            dt: 2.0 / lambda.sqrt(),
            lambda_max: lambda,
            cell: element.cell,
        },
        element,
        iterations,
        residual: residual / theta,
        mode,
    }
}

/// A re-check at `x` from the previous estimate's mode: three power
/// iterations giving `ρ + ‖A y − ρ y‖` when the mode has not moved (no cap), or the element
/// bound at `x` and Lanczos again when it has. The element bound alone when the force cannot
/// be evaluated near `x` (fails if it cannot be at `x`).
pub fn recheck<S: LeapFrogSystem + ?Sized>(
    system: &S,
    x: &[f64],
    previous: &CriticalStep,
) -> Result<CriticalStep, EvalError> {
    let Some(mut op) = Operator::new(system, x) else {
        return Ok(unrefined(system.critical_step(x)?));
    };
    match power_or_lanczos(&mut op, x, previous) {
        Ok(estimate) => Ok(estimate),
        Err(_) => Ok(unrefined(system.critical_step(x)?)),
    }
}

/// [`recheck`]'s iterations.
fn power_or_lanczos<S: LeapFrogSystem + ?Sized>(
    op: &mut Operator<'_, S>,
    x: &[f64],
    previous: &CriticalStep,
) -> Result<CriticalStep, EvalError> {
    let n = x.len();
    if previous.mode.len() != n {
        // (No mode to start from: Lanczos from the deterministic start.)
        let element = op.system.critical_step(x)?;
        let start = op.start();
        return lanczos(op, start, element);
    }
    let mut y = previous.mode.clone();
    let mut ay = vec![0.0; n];
    let mut rho = 0.0;
    let mut residual = f64::INFINITY;
    for _ in 0..RECHECK_ITERATIONS {
        op.apply(&y, &mut ay)?;
        rho = op.dot(&y, &ay);
        let r2 = op.dot(&ay, &ay) - rho * rho;
        residual = r2.max(0.0).sqrt();
        let norm = op.dot(&ay, &ay).sqrt();
        y.iter_mut().zip(&ay).for_each(|(yi, a)| *yi = a / norm);
    }
    if residual <= RECHECK_TOLERANCE * rho {
        // No cap: the element bound at x would cost a pass over every cell, and the last one
        // may be below the deformed body's λ_max.
        return Ok(estimate(
            previous.element,
            f64::INFINITY,
            rho,
            residual,
            RECHECK_ITERATIONS,
            y,
        ));
    }
    // The limiting mode moved: Lanczos again, from the deterministic start mixed with the
    // power iterate.
    let start: Vec<f64> = op.start().iter().zip(&y).map(|(s, v)| s + v).collect();
    let element = op.system.critical_step(x)?;
    let mut estimate = lanczos(op, start, element)?;
    estimate.iterations += RECHECK_ITERATIONS;
    Ok(estimate)
}
