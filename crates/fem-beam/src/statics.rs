//! The static problem (68)–(73): `min ½ EI ∫|x''|² − ∫ f·x − Σ P·x(node)` over Hermite
//! cubics with `|x'| = 1` at the constraint points, the end conditions and (optionally) a
//! seabed, solved either
//!
//! - by Newton on the KKT system ([`solve_static_newton`], no parameter to choose): the
//!   machinery of the dynamic Newton–KKT steps with the block-tridiagonal factorization,
//!   started from a least-squares estimate of the tensions, damped in its first iterations by
//!   a decaying proximal term `μ M` and globalized by continuation in the load; or
//! - by Algorithm 2 (Uzawa), equations (81)–(87) ([`solve_static`]; the matrix `EI K + r K_r`
//!   is factored once), with the augmentation `r` given or chosen by
//!   [`UzawaSettings::automatic`].

use crate::error::BeamError;
use crate::kkt::{KktNewton, NewtonKktReport, NewtonKktSettings};
use crate::kkt_block::{ActiveSet, BlockKkt, JacobianForm, ResidualForm};
use crate::model::{Beam, BeamState, check_state, dot, norm};
use crate::uzawa::{UzawaReport, UzawaSettings, UzawaSolver};
use fem_time::NewtonSettings;

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
    /// Numeric factorizations (Uzawa: 1; Newton: one per iteration, plus the tension estimate).
    pub factorization_count: usize,
    /// The Newton–KKT report (`None` for Uzawa).
    pub kkt_report: Option<NewtonKktReport>,
    /// Nodes resting on the seabed (empty without a seabed).
    pub on_seabed: Vec<bool>,
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
    model: &Beam,
    initial: &BeamState,
    settings: &UzawaSettings,
) -> Result<StaticSolution, BeamError> {
    solve_static_at(model, initial, None, 0.0, settings)
}

/// [`solve_static`] at time `t` with optional initial multipliers (one per constraint point).
pub fn solve_static_at(
    model: &Beam,
    initial: &BeamState,
    multipliers: Option<&[[f64; 3]]>,
    t: f64,
    settings: &UzawaSettings,
) -> Result<StaticSolution, BeamError> {
    settings.check()?;
    model.check_supports(t)?;
    if model.seabed().is_some() {
        return Err(BeamError::Unsupported {
            what: "a seabed needs the Newton-KKT static solve (solve_static_newton)",
        });
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
        kkt_report: None,
        on_seabed: Vec::new(),
    })
}

/// The static solve's Newton settings: 200 iterations (accepted and rejected, over all load
/// increments), otherwise the tolerances of [`NewtonSettings::default`] (the dynamic steps').
pub const STATIC_NEWTON: NewtonSettings = NewtonSettings {
    max_iterations: 200,
    relative_tolerance: 1e-10,
    absolute_tolerance: 1e-14,
};

/// Solves the static problem at time `t` from `initial` by Newton on the KKT system.
///
/// 1. The prescribed values are written into `initial`; nodes below the seabed are lifted
///    onto it and held.
/// 2. The tensions start from the least-squares fit of the equilibrium at `initial`:
///    `min_T ‖R(x₀, T)‖_{M⁻¹}`, one solve of the KKT matrix with `M` as its Hessian.
/// 3. Newton steps on the static KKT system (one factorization each). The first six carry a
///    proximal term `μ M` (an implicit pseudo-time step of the beam's own mass),
///    `μ = μ₀ 10^{1−k}` at iteration `k`, `μ₀ = 10 (EI/L⁴ + F/L²)/ρ` with `F` the total load;
///    later ones are plain Newton, so the convergence is quadratic. With
///    [`ConstraintPoints::NodesAndMidpoints`](crate::ConstraintPoints) the nodal tangents are
///    rescaled to unit length after every step (the exact projection onto their constraints).
///    Converged by the stopping rule of the dynamic steps (`newton` and `kkt`, see
///    [`NewtonKktSettings`]; [`STATIC_NEWTON`] and its default are the usual ones) with an
///    unchanged seabed active set.
/// 4. A trust region: an update that leaves `| |x′| − 1 |` above 0.2 (and above its value
///    before the update), or a node more than 0.2 element lengths below the seabed, is
///    rejected and retried with a ten times larger proximal term (at most three times in a
///    row). Iterations that change the seabed's active set extend the iteration limit by one
///    each (at most two per node): from [`BeamState::taut_over_seabed`] the touchdown point
///    moves about one node per iteration, so that start needs `O(N)` iterations where
///    [`BeamState::catenary_over_seabed`] needs 3–5.
/// 5. Globalization by continuation in the load: the full load is tried first; if Newton
///    does not converge within 30 iterations the state is restored and the load increment
///    halved (down to `1/1024`); after an increment that converged in at most 8 iterations
///    the next one is doubled. The catenary, the paper's start and the elastica (`k ≤ 5`, from
///    straight) converge at the first try, in 6–18 iterations for `N = 2 … 10⁴`
///    (`docs/theory/inextensible_beam.md`).
///
/// Refused up front: no support, supports at least `L` apart, an end below the seabed
/// ([`Beam::check_supports`]).
pub fn solve_static_newton(
    model: &Beam,
    initial: &BeamState,
    t: f64,
    newton: &NewtonSettings,
    kkt: &NewtonKktSettings,
) -> Result<StaticSolution, BeamError> {
    let settings = KktNewton::new(newton, kkt)?;
    model.check_supports(t)?;
    check_state(model, initial)?;
    let n_p = model.n_points();
    let mut x0 = initial.to_columns();
    model.apply_prescribed(t, &mut x0);
    let mut kkt = BlockKkt::new(model);
    let floor = 1e-10 * model.load().iter().fold(1e-300f64, |m, f| m.max(f.abs()));
    // Nodes starting on (or below) the seabed are held from the start.
    let held0 = crate::seabed::ActiveSet::of(model, &x0);
    crate::seabed::project_all(model, &held0, &mut x0);
    let mut x = x0.clone();
    let mut tension = vec![0.0; n_p];
    let mut contact = held0.clone();
    let (mut done, mut increment) = (0.0f64, 1.0f64);
    let mut total = 0;
    let mut last = NewtonKktReport::default();
    while done < 1.0 {
        let target = (done + increment).min(1.0);
        let saved = (x.clone(), tension.clone(), contact.clone());
        if done == 0.0 {
            x.copy_from_slice(&x0);
            contact.clone_from(&held0);
            least_squares_tensions(
                model,
                &mut kkt,
                target,
                &mut x,
                &mut tension,
                &mut contact,
                floor,
            )?;
            // A cable carries no compression: its start tensions are taken in tension. (At a
            // taut start over a seabed the fit can be compressive, and with the grounded part
            // held level by the seabed Newton then reached a compressed equilibrium —
            // admissible for an inextensible rod, not for a cable: at N = 950 the fairlead
            // tension came out 912 N instead of 2414 N.)
            if model.parameters().bending_stiffness == 0.0 {
                for t in tension.iter_mut() {
                    *t = t.abs();
                }
            }
        }
        let (report, converged) = newton_static(
            model,
            &mut kkt,
            target,
            &mut x,
            &mut tension,
            &mut contact,
            &settings,
            floor,
        )?;
        total += report.iterations;
        last = report;
        if converged {
            done = target;
            if report.iterations <= 8 {
                increment *= 2.0;
            }
        } else {
            (x, tension, contact) = saved;
            increment *= 0.5;
            if increment < 1.0 / 1024.0 || total >= settings.max_iterations {
                return Err(BeamError::StaticNotConverged {
                    iterations: total,
                    constraint: last.max_constraint_violation,
                    step: last.step_change,
                });
            }
        }
    }
    let mut d = vec![[0.0; 3]; n_p];
    model.tangents_at_points(&x, &mut d);
    let p: Vec<[f64; 3]> = d
        .iter()
        .map(|v| {
            let n = norm(*v);
            if n > 0.0 { v.map(|e| e / n) } else { *v }
        })
        .collect();
    let multipliers = p
        .iter()
        .zip(&tension)
        .map(|(pj, tj)| pj.map(|e| e * tj))
        .collect();
    last.iterations = total;
    Ok(StaticSolution {
        state: BeamState::from_columns(&x),
        p,
        multipliers,
        report: UzawaReport {
            iterations: total,
            constraint_residual: last.constraint_residual,
            max_constraint_violation: last.max_constraint_violation,
            multiplier_change: last.multiplier_change,
            tangent_change: last.step_change,
        },
        factorization_count: kkt.factorization_count(),
        kkt_report: Some(last),
        on_seabed: (0..model.n_nodes())
            .map(|i| contact.on_seabed(model, i))
            .collect(),
    })
}

/// The residual form of the static problem with the load scaled by `load`.
fn static_form(load: f64) -> ResidualForm<'static> {
    ResidualForm {
        mass: 0.0,
        anchor: &[],
        bending: 1.0,
        offset: &[],
        load,
        theta: 1.0,
        reference: &[],
    }
}

/// The tensions minimizing `‖R(x, T)‖_{M⁻¹}` at `x` (after projecting nodes below the seabed
/// onto it): one solve of the KKT matrix with the mass matrix as its Hessian.
fn least_squares_tensions(
    model: &Beam,
    kkt: &mut BlockKkt,
    load: f64,
    x: &mut [f64],
    tension: &mut [f64],
    contact: &mut ActiveSet,
    floor: f64,
) -> Result<(), BeamError> {
    let form = static_form(load);
    tension.fill(0.0);
    kkt.set_blocked(model, contact);
    kkt.residual(model, &form, x, tension);
    if crate::seabed::update(model, kkt, x, contact, floor) > 0 {
        kkt.set_blocked(model, contact);
        kkt.residual(model, &form, x, tension);
    }
    let ls = JacobianForm {
        mass: 1.0,
        bending: 0.0,
        geometric: 0.0,
    };
    if kkt.factor_solve(model, &ls, tension)? {
        for (j, t) in tension.iter_mut().enumerate() {
            *t = kkt.dt(model, j);
        }
    }
    Ok(())
}

/// The largest constraint violation `| |x′| − 1 |` an accepted static Newton update may leave
/// (unless it was already larger), and the deepest a node may go below the seabed, in element
/// lengths.
const STATIC_TRUST: f64 = 0.2;

/// Rejected updates in a row after which the next one is taken whatever it does (its proximal
/// term is then `10³` times the one first rejected).
const MAX_REJECTIONS: usize = 3;

/// Newton on the static KKT system at the load factor `load` (at most 30 iterations that do
/// not change the seabed's active set), with updates rejected outside a trust region.
#[allow(clippy::too_many_arguments)]
fn newton_static(
    model: &Beam,
    kkt: &mut BlockKkt,
    load: f64,
    x: &mut [f64],
    tension: &mut [f64],
    contact: &mut ActiveSet,
    settings: &KktNewton,
    floor: f64,
) -> Result<(NewtonKktReport, bool), BeamError> {
    let form = static_form(load);
    let (n_p, l) = (model.n_points(), model.length());
    let p = model.parameters();
    let mu0 = 10.0 * (p.bending_stiffness / l.powi(4) + total_load(model) / (l * l)) / p.density;
    let mut mu = mu0;
    let w = model.point_weights();
    let mut d = vec![[0.0; 3]; n_p];
    let (mut dx_prev, mut dt_prev) = (f64::INFINITY, f64::INFINITY);
    let mut report = NewtonKktReport::default();
    // At most 30 iterations that do not change the seabed's active set (a touchdown point
    // moving node by node does not count against the limit).
    let mut quiet = 0;
    // The state before the current update, restored when the update is rejected.
    let mut saved = (x.to_vec(), tension.to_vec(), contact.clone());
    let mut retry = false;
    let mut rejections = 0;
    // Iterations that hold or release seabed nodes extend the iteration limit (by at most two
    // per node): from a taut start the touchdown point moves about one node per iteration.
    let mut contact_changes = 0;
    let mut it = 0;
    loop {
        it += 1;
        let limit = settings.max_iterations + contact_changes.min(2 * model.n_nodes());
        if it > limit {
            break;
        }
        if retry {
            x.copy_from_slice(&saved.0);
            tension.copy_from_slice(&saved.1);
            contact.clone_from(&saved.2);
        } else {
            saved.0.copy_from_slice(x);
            saved.1.copy_from_slice(tension);
            saved.2.clone_from(contact);
        }
        kkt.set_blocked(model, contact);
        kkt.residual(model, &form, x, tension);
        let changes = crate::seabed::update(model, kkt, x, contact, floor);
        if changes > 0 {
            if !retry {
                contact_changes += 1;
            }
            kkt.set_blocked(model, contact);
            kkt.residual(model, &form, x, tension);
        } else if !retry {
            quiet += 1;
            if quiet > 30 {
                return Ok((report, false));
            }
        }
        let (stat, _) = kkt.residual_norms(model);
        report.iterations = it;
        // The proximal term μ M: μ₀, divided by 10 after every accepted iteration (not below
        // μ₀ while the seabed's active set changes), 0 below 1e-5 μ₀; multiplied by 10 (from
        // at least 1e-4 μ₀) when an update is rejected.
        if retry {
            mu = 10.0 * mu.max(1e-5 * mu0);
        } else if it > 1 && changes == 0 {
            mu *= 0.1;
        } else if mu > mu0 {
            mu = (0.1 * mu).max(mu0);
        }
        if mu < 1e-5 * mu0 {
            mu = 0.0;
        }
        retry = false;
        let jac = JacobianForm {
            mass: mu,
            bending: 1.0,
            geometric: 1.0,
        };
        // The constraint violation before the update (the seabed's projection of nodes that
        // went below it can leave a large one, which the update then reduces).
        model.tangents_at_points(x, &mut d);
        let cmax_before = (0..n_p)
            .filter(|&j| model.point_is_active(j))
            .fold(0.0f64, |m, j| m.max((norm(d[j]) - 1.0).abs()));
        if !kkt.factor_solve(model, &jac, tension)? {
            // A singular matrix: retried with a larger proximal term.
            if rejections < MAX_REJECTIONS {
                rejections += 1;
                retry = true;
                continue;
            }
            return Ok((report, false));
        }
        let m = kkt.apply_update(model, x, tension);
        model.normalize_nodal_tangents(x);
        crate::seabed::project_all(model, contact, x);
        model.tangents_at_points(x, &mut d);
        let (mut cmax, mut c2) = (0.0f64, 0.0);
        for j in 0..n_p {
            if model.point_is_active(j) {
                let e = norm(d[j]) - 1.0;
                cmax = cmax.max(e.abs());
                c2 += w[j] * e * e;
            }
        }
        report = NewtonKktReport {
            iterations: it,
            step_change: m.step_change,
            multiplier_change: m.multiplier_change,
            max_constraint_violation: cmax,
            constraint_residual: (c2 / l).sqrt(),
            stationarity_residual: stat,
        };
        // A trust region on the constraint: Newton satisfies the linearized constraint
        // exactly, so what is left after the update is its curvature term, `O(|δx′|²)`. An
        // update that leaves `| |x′| − 1 |` above `STATIC_TRUST`, and above what it was before,
        // turned elements by a large angle; one that takes a node below the seabed by more
        // than `STATIC_TRUST` element lengths would be folded by the projection back onto it.
        // Their linearization (an indefinite geometric stiffness where the start's tensions
        // are compressive, a far-off active set) was not to be trusted: the update is rejected
        // and retried from the same state with a ten times larger proximal term (a shorter
        // pseudo-time step), at most `MAX_REJECTIONS` times in a row.
        let finite = m.step_change.is_finite() && m.multiplier_change.is_finite();
        let too_far = (cmax > STATIC_TRUST && cmax > cmax_before)
            || penetration_depth(model, x) > STATIC_TRUST * l / model.n_elements() as f64;
        if !finite {
            return Ok((report, false));
        }
        if too_far && rejections < MAX_REJECTIONS {
            rejections += 1;
            retry = true;
            continue;
        }
        rejections = 0;
        let stalled = |now: f64, prev: f64| it >= 2 && now > 0.1 * prev;
        // The error an update leaves, estimated from the contraction (see kkt_block::newton).
        let left = |now: f64, prev: f64| {
            if it >= 2 && now < 0.1 * prev {
                now * now / prev
            } else {
                now
            }
        };
        let step_tolerance = settings.step_tolerance(x);
        let x_ok = left(m.step_change, dx_prev) <= step_tolerance
            || (m.step_change <= 1e4 * step_tolerance && stalled(m.step_change, dx_prev));
        let t_ok = left(m.multiplier_change, dt_prev) <= settings.multiplier_tolerance
            || stalled(m.multiplier_change, dt_prev);
        let contact_ok = changes == 0 && !crate::seabed::penetrates(model, contact, x);
        if cmax <= settings.constraint_tolerance && x_ok && t_ok && contact_ok {
            return Ok((report, true));
        }
        dx_prev = m.step_change;
        dt_prev = m.multiplier_change;
    }
    Ok((report, false))
}

/// How far the deepest node is below the seabed (0 without one, or with none below).
fn penetration_depth(model: &Beam, x: &[f64]) -> f64 {
    model.seabed().map_or(0.0, |sb| {
        let n_s = model.n_scalar();
        (0..model.n_nodes()).fold(0.0f64, |m, i| m.max(sb.level - x[sb.axis * n_s + 2 * i]))
    })
}

/// The total external load `ρ|g|L + Σ|P|` (N).
pub(crate) fn total_load(model: &Beam) -> f64 {
    let p = model.parameters();
    p.density * norm(p.gravity) * model.length()
        + p.point_loads.iter().map(|l| norm(l.force)).sum::<f64>()
}
