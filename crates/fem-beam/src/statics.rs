//! The static problem (68)–(73) by Algorithm 2 (Uzawa), equations (81)–(87).
//!
//! `min ½ EI ∫|x''|² − ∫ f·x − Σ P·x(node)` over Hermite cubics with `|x'| = 1` at the
//! constraint points and the end conditions. The matrix `EI K + r K_r` is factored once.

use crate::error::BeamError;
use crate::model::{BeamModel, BeamState, dot, norm};
use crate::uzawa::{UzawaReport, UzawaSettings, UzawaSolver};

/// A converged (or last) Uzawa iterate of the static problem.
#[derive(Clone, Debug)]
pub struct StaticSolution {
    /// Node positions and tangents.
    pub state: BeamState,
    /// The projected tangents `p_j` at the constraint points (`|p_j| = 1`).
    pub p: Vec<[f64; 3]>,
    /// The multipliers `λ_j = T_j p_j` at the constraint points (N).
    pub multipliers: Vec<[f64; 3]>,
    /// What the Uzawa loop did.
    pub report: UzawaReport,
    /// Numeric factorizations (1).
    pub factorization_count: usize,
}

impl StaticSolution {
    /// Tension `T_j = λ_j · p_j` at each constraint point (N).
    pub fn tensions(&self) -> Vec<f64> {
        self.multipliers
            .iter()
            .zip(&self.p)
            .map(|(l, p)| dot(*l, *p))
            .collect()
    }
}

/// Solves the static problem at time `t` (for moving ends) from `initial`, with multipliers
/// starting at zero. Fails with [`BeamError::UzawaNotConverged`] when the tolerances are not met.
pub fn solve_static(
    model: &BeamModel,
    initial: &BeamState,
    settings: &UzawaSettings,
) -> Result<StaticSolution, BeamError> {
    solve_static_at(model, initial, None, 0.0, settings)
}

/// [`solve_static`] at time `t` with optional initial multipliers (one per constraint point).
pub fn solve_static_at(
    model: &BeamModel,
    initial: &BeamState,
    multipliers: Option<&[[f64; 3]]>,
    t: f64,
    settings: &UzawaSettings,
) -> Result<StaticSolution, BeamError> {
    settings.check()?;
    if !model.has_support() {
        return Err(BeamError::NoSupport);
    }
    check_state(model, initial)?;
    let n_p = model.n_points();
    let mut lambda = match multipliers {
        Some(m) if m.len() == n_p => m.to_vec(),
        Some(m) => {
            return Err(BeamError::BadState {
                what: "initial multipliers",
                found: m.len(),
                expected: n_p,
            });
        }
        None => vec![[0.0; 3]; n_p],
    };
    let solver = UzawaSolver::new(model, model.bending(), settings.augmentation)?;
    let mut x = initial.to_columns();
    model.apply_prescribed(t, &mut x);
    let mut p = vec![[0.0; 3]; n_p];
    model.tangents_at_points(&x, &mut p);
    let (report, converged) =
        solver.solve(model, model.load(), &mut x, &mut p, &mut lambda, settings);
    if !converged {
        return Err(BeamError::UzawaNotConverged {
            step: 0,
            iterations: report.iterations,
            constraint_residual: report.constraint_residual,
            change: report.multiplier_change.max(report.tangent_change),
        });
    }
    Ok(StaticSolution {
        state: BeamState::from_columns(&x),
        p,
        multipliers: lambda,
        report,
        factorization_count: solver.factorization_count(),
    })
}

pub(crate) fn check_state(model: &BeamModel, s: &BeamState) -> Result<(), BeamError> {
    let n = model.n_nodes();
    for (what, len) in [
        ("state positions", s.positions.len()),
        ("state tangents", s.tangents.len()),
    ] {
        if len != n {
            return Err(BeamError::BadState {
                what,
                found: len,
                expected: n,
            });
        }
    }
    if s.positions
        .iter()
        .chain(&s.tangents)
        .any(|v| !norm(*v).is_finite())
    {
        return Err(BeamError::NonFinite { step: 0 });
    }
    Ok(())
}
