//! Nonsmooth block Gauss–Seidel (NSGS) over the points of a [`Problem`]
//! (docs/theory/contact.md, §4, Algorithm 1).
//!
//! A sweep visits the points in a fixed order; point `i` solves its 3×3 local problem with
//! `q_i + Σ_{j≠i} W_ij r_j` (the newest impulses of the others) by [`crate::local`], and its
//! impulse is replaced (or over-relaxed, then projected back on the cone). The solve stops when
//! Siconos' error (C11) is at most the tolerance; it is evaluated every `check_every` sweeps and
//! whenever the relative change of the impulses in a sweep falls below the tolerance. The
//! sweeps are serial and in a fixed order, the error's sums too: the result does not depend
//! on the number of threads (tested).

use nalgebra::Vector3;

use crate::cone::project_on_cone;
use crate::law::Law;
use crate::local::{LocalSettings, solve_point};
use crate::newton::{NewtonSettings, polish};
use crate::problem::Problem;

/// What to do when the sweep cap is reached before the tolerance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CapPolicy {
    /// Return the impulses reached, with `converged: false` in the report (the caller warns,
    /// e.g. in the history); a warning is logged.
    #[default]
    WarnAndContinue,
    /// Return [`SolveError::NotConverged`] naming the sweeps and the error reached.
    Fail,
}

/// The order of the points in a sweep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SweepOrder {
    /// `0, 1, …, n−1` every sweep.
    #[default]
    Forward,
    /// Forward, then backward, alternately (symmetric Gauss–Seidel).
    Symmetric,
}

/// What [`solve`] runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// NSGS sweeps from the warm start, with the polish of [`NsgsSettings::polish_after`].
    #[default]
    Nsgs,
    /// The global Newton method ([`crate::newton::polish`] with [`NsgsSettings::global`],
    /// by default [`NewtonSettings::global`]) first, from the warm start; if it does not reach
    /// the tolerance, NSGS (and its polish) from the best impulses it found. It solves the
    /// hyperstatic packing of FCLIB's spheres-in-a-box, which NSGS alone does not
    /// (docs/performance.md); on problems NSGS solves it costs up to the Newton's cap more.
    NewtonThenNsgs,
}

/// Settings of [`solve`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NsgsSettings {
    /// Tolerance on Siconos' error (C11).
    pub tolerance: f64,
    /// Sweep cap.
    pub max_sweeps: u64,
    /// Over-relaxation `ω ∈ (0, 2)`: `r_i ← P_K(ω r_i^new + (1 − ω) r_i^old)`.
    pub relaxation: f64,
    /// Order of the points.
    pub order: SweepOrder,
    /// Full error evaluated at least every this many sweeps (besides when the impulses stop
    /// changing).
    pub check_every: u64,
    /// The local solver's settings.
    pub local: LocalSettings,
    /// Policy at the cap.
    pub on_cap: CapPolicy,
    /// A global Newton polish ([`crate::newton::polish`]) tried once after this many sweeps
    /// if the tolerance is not reached by then (`None`: never). Default 100 (measured on the
    /// FCLIB problems and on stacks: docs/performance.md).
    pub polish_after: Option<u64>,
    /// Settings of the polish (its tolerance is the solve's).
    pub polish: NewtonSettings,
    /// What runs: NSGS, or the global Newton method first.
    pub strategy: Strategy,
    /// Settings of the global Newton method of [`Strategy::NewtonThenNsgs`] (its tolerance
    /// is the solve's).
    pub global: NewtonSettings,
}

impl Default for NsgsSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-8,
            max_sweeps: 10_000,
            relaxation: 1.0,
            order: SweepOrder::Forward,
            check_every: 10,
            local: LocalSettings::default(),
            on_cap: CapPolicy::WarnAndContinue,
            polish_after: Some(100),
            polish: NewtonSettings::default(),
            strategy: Strategy::Nsgs,
            global: NewtonSettings::global(),
        }
    }
}

/// What a solve did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NsgsReport {
    /// Sweeps done.
    pub sweeps: u64,
    /// Siconos' error relative to `‖q‖` (C11) at the end: the stopping test.
    pub error: f64,
    /// The same residual as Siconos 4.4 scales it (C11'), never above `error`.
    pub siconos_error: f64,
    /// Solfec's energy ratio (C12) at the end.
    pub energy_ratio: f64,
    /// Whether `error ≤ tolerance`.
    pub converged: bool,
    /// Local Newton iterations, all points and sweeps.
    pub newton_iterations: u64,
    /// Local solves that needed the projection fallback.
    pub fallbacks: u64,
    /// Full error evaluations.
    pub error_checks: u64,
    /// Iterations of the global Newton polish (0 if it did not run).
    pub polish_iterations: u32,
    /// Iterations of the global Newton method run first ([`Strategy::NewtonThenNsgs`]; 0
    /// otherwise).
    pub global_iterations: u32,
}

/// A failed solve.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SolveError {
    /// The cap was reached with the policy [`CapPolicy::Fail`].
    #[error(
        "the contact solver did not converge: {sweeps} sweeps, error {error:.3e} above the tolerance {tolerance:.1e} (energy ratio {energy_ratio:.3e})"
    )]
    NotConverged {
        /// Sweeps done.
        sweeps: u64,
        /// Error reached.
        error: f64,
        /// Tolerance asked.
        tolerance: f64,
        /// Solfec's energy ratio reached.
        energy_ratio: f64,
    },
    /// An impulse became non-finite (a problem that is not positive semidefinite, or values
    /// beyond the range of floating point).
    #[error("the contact solver produced a non-finite impulse at point {point} in sweep {sweep}")]
    NotFinite {
        /// Point.
        point: usize,
        /// Sweep.
        sweep: u64,
    },
    /// Settings out of range.
    #[error("contact solver settings: {0}")]
    Settings(String),
    /// Warm start of the wrong length.
    #[error("the warm start has {given} impulses for {points} points")]
    WarmStart {
        /// Given.
        given: usize,
        /// Expected.
        points: usize,
    },
}

fn check_settings(s: &NsgsSettings) -> Result<(), SolveError> {
    if !(s.tolerance > 0.0 && s.tolerance.is_finite()) {
        return Err(SolveError::Settings(format!(
            "tolerance: expected a positive number, got {}",
            s.tolerance
        )));
    }
    if !(s.relaxation > 0.0 && s.relaxation < 2.0) {
        return Err(SolveError::Settings(format!(
            "relaxation: expected a number in (0, 2), got {}",
            s.relaxation
        )));
    }
    if s.check_every == 0 {
        return Err(SolveError::Settings(
            "check_every: expected at least 1".into(),
        ));
    }
    Ok(())
}

/// Solves `problem` by NSGS from the warm start in `r` (one 3-vector per point; zeros for a
/// cold start); `r` holds the impulses reached on return.
pub fn solve(
    problem: &Problem,
    r: &mut [Vector3<f64>],
    settings: &NsgsSettings,
) -> Result<NsgsReport, SolveError> {
    check_settings(settings)?;
    let n = problem.len();
    if r.len() != n {
        return Err(SolveError::WarmStart {
            given: r.len(),
            points: n,
        });
    }
    for ri in r.iter_mut() {
        if !ri.iter().all(|v| v.is_finite()) {
            *ri = Vector3::zeros();
        }
    }
    let mut report = NsgsReport::default();
    let mut u = vec![Vector3::zeros(); n];
    if n == 0 {
        report.converged = true;
        report.energy_ratio = 0.0;
        return Ok(report);
    }
    let omega = settings.relaxation;
    let mut since_check = 0;
    let mut polished = false;
    let mut solved_by_newton = false;
    if settings.strategy == Strategy::NewtonThenNsgs {
        let newton = polish(
            problem,
            r,
            &NewtonSettings {
                tolerance: settings.tolerance,
                ..settings.global
            },
        );
        report.global_iterations = newton.iterations;
        solved_by_newton = newton.converged;
    }
    loop {
        // (no sweep when the global Newton method has solved the problem)
        if solved_by_newton {
            break;
        }
        if !polished && settings.polish_after.is_some_and(|k| report.sweeps >= k) {
            polished = true;
            let newton = polish(
                problem,
                r,
                &NewtonSettings {
                    tolerance: settings.tolerance,
                    ..settings.polish
                },
            );
            report.polish_iterations = newton.iterations;
            if newton.converged {
                break;
            }
        }
        if report.sweeps >= settings.max_sweeps {
            break;
        }
        let backward = settings.order == SweepOrder::Symmetric && report.sweeps % 2 == 1;
        let mut change = 0.0;
        let mut size = 0.0;
        for k in 0..n {
            let i = if backward { n - 1 - k } else { k };
            let law = &problem.laws()[i];
            let qi = problem.local_q(i, r);
            let old = r[i];
            let mut ri = old;
            let outcome = solve_point(law, problem.diagonal(i), &qi, &mut ri, &settings.local);
            report.newton_iterations += outcome.newton_iterations as u64;
            report.fallbacks += outcome.used_fallback as u64;
            if omega != 1.0 {
                ri = omega * ri + (1.0 - omega) * old;
                if let Law::Contact { friction, .. } = law {
                    ri = project_on_cone(&ri, *friction);
                }
            }
            if !ri.iter().all(|v| v.is_finite()) {
                return Err(SolveError::NotFinite {
                    point: i,
                    sweep: report.sweeps,
                });
            }
            change += (ri - old).norm_squared();
            size += ri.norm_squared();
            r[i] = ri;
        }
        report.sweeps += 1;
        since_check += 1;
        let light = if size > 0.0 {
            (change / size).sqrt()
        } else {
            change.sqrt()
        };
        if light <= settings.tolerance || since_check >= settings.check_every {
            since_check = 0;
            report.error_checks += 1;
            problem.velocity(r, &mut u);
            report.error = problem.fc3d_error_with(r, &u);
            if report.error <= settings.tolerance {
                report.converged = true;
                break;
            }
        }
    }
    problem.velocity(r, &mut u);
    report.error = problem.fc3d_error_with(r, &u);
    report.siconos_error = problem.siconos_error_with(r, &u);
    report.energy_ratio = problem.energy_ratio_with(r, &u);
    report.converged = report.error <= settings.tolerance;
    if !report.converged {
        match settings.on_cap {
            CapPolicy::WarnAndContinue => log::warn!(
                "contact solver: {} sweeps, error {:.3e} above the tolerance {:.1e}; continuing",
                report.sweeps,
                report.error,
                settings.tolerance
            ),
            CapPolicy::Fail => {
                return Err(SolveError::NotConverged {
                    sweeps: report.sweeps,
                    error: report.error,
                    tolerance: settings.tolerance,
                    energy_ratio: report.energy_ratio,
                });
            }
        }
    }
    Ok(report)
}
