//! The one-point local problem: given the diagonal block `W` (3×3), the local free velocity
//! `q` (the problem's `q_i` plus the other points' impulses, `q_i + Σ_{j≠i} W_ij r_j`) and
//! the law, find the impulse `r`.
//!
//! For a frictional contact the solver takes, in order (docs/theory/contact.md, §4):
//!
//! 1. the closed forms: *open* (`q_N ≥ 0` ⇒ `r = 0`, exact), *stick* (`r = −W⁻¹q` when it lies
//!    in the cone, exact up to the 3×3 solve), and frictionless (`μ = 0`:
//!    `r_N = max(0, −q_N/W_NN)`);
//! 2. otherwise (slip) a semismooth Newton method on the Alart–Curnier function (C7), with a
//!    backtracking line search on `½‖F‖²`;
//! 3. if Newton stalls, the fallback: projection steps `r ← P_K(r − ρ(u + μ‖u_T‖e_N))` (C8)
//!    with `ρ = 1/‖W‖_F` (a contraction for `W` positive definite), then Newton again.
//!
//! Bilateral points are linear: `r = −W⁻¹q` (3 rows) or `r_N = −q_N/W_NN`, `r_T = 0` (1 row).

use nalgebra::{Matrix3, Vector2, Vector3};

use crate::cone::project_on_cone;
use crate::law::Law;

/// Settings of the local solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalSettings {
    /// Newton stops when `‖F(r)‖ ≤ tolerance · (‖r‖ + ρ_N‖q‖)` (relative, dimensionless).
    pub tolerance: f64,
    /// Newton iterations per round.
    pub max_newton: u32,
    /// Projection steps of the fallback per round.
    pub fallback_steps: u32,
    /// Rounds of (Newton, fallback).
    pub rounds: u32,
}

impl Default for LocalSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-14,
            max_newton: 30,
            fallback_steps: 50,
            rounds: 3,
        }
    }
}

/// How a local solve went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LocalOutcome {
    /// Newton iterations taken (0 for a closed form).
    pub newton_iterations: u32,
    /// Whether the projection fallback ran.
    pub used_fallback: bool,
    /// The final natural-map residual `‖r − P_K(r − u − μ‖u_T‖e_N)‖` of this point (C10).
    pub residual: f64,
    /// Which case the solution is in.
    pub state: PointState,
}

/// The state of a contact point at its solution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PointState {
    /// `r = 0`: the point separates.
    #[default]
    Open,
    /// `r` inside the cone, `u = 0`.
    Stick,
    /// `r` on the cone's surface, sliding.
    Slip,
    /// A bilateral point.
    Bilateral,
}

/// The per-point residual of Siconos' error measure (C10):
/// `r − P_K(r − (u + μ‖u_T‖ e_N))`, with `u = W r + q`.
pub fn natural_residual(r: &Vector3<f64>, u: &Vector3<f64>, mu: f64) -> Vector3<f64> {
    let modified = Vector3::new(u[0] + mu * u[1].hypot(u[2]), u[1], u[2]);
    r - project_on_cone(&(r - modified), mu)
}

/// Solves one point's local problem in place (`r` holds the warm start on entry).
pub fn solve_point(
    law: &Law,
    w: &Matrix3<f64>,
    q: &Vector3<f64>,
    r: &mut Vector3<f64>,
    settings: &LocalSettings,
) -> LocalOutcome {
    match *law {
        Law::Contact { friction, .. } => solve_coulomb(w, q, friction, r, settings),
        Law::FixedPoint => {
            *r = solve3(w, q);
            LocalOutcome {
                state: PointState::Bilateral,
                residual: (w * *r + q).norm(),
                ..Default::default()
            }
        }
        Law::FixedDirection | Law::RigidLink => {
            let rn = if w[(0, 0)] > 0.0 {
                -q[0] / w[(0, 0)]
            } else {
                0.0
            };
            *r = Vector3::new(rn, 0.0, 0.0);
            LocalOutcome {
                state: PointState::Bilateral,
                residual: (w[(0, 0)] * rn + q[0]).abs(),
                ..Default::default()
            }
        }
    }
}

/// `−W⁻¹ q` by Cholesky when `W` is symmetric positive definite, else by LU, else (a
/// singular block) the least-squares solution by the SVD. (Blocks assembled from data, such
/// as FCLIB's, need not be exactly symmetric.)
fn solve3(w: &Matrix3<f64>, q: &Vector3<f64>) -> Vector3<f64> {
    if *w == w.transpose()
        && let Some(c) = w.cholesky()
    {
        return -c.solve(q);
    }
    if let Some(x) = w.lu().solve(q)
        && x.iter().all(|v| v.is_finite())
    {
        return -x;
    }
    let svd = w.svd(true, true);
    let tol = 1e-13 * svd.singular_values.max();
    svd.solve(q, tol)
        .map(|x| -x)
        .unwrap_or_else(|_| Vector3::zeros())
}

/// The frictional local problem (`μ ≥ 0`) in place.
pub fn solve_coulomb(
    w: &Matrix3<f64>,
    q: &Vector3<f64>,
    mu: f64,
    r: &mut Vector3<f64>,
    settings: &LocalSettings,
) -> LocalOutcome {
    // Open: r = 0 solves the law exactly when q_N ≥ 0.
    if q[0] >= 0.0 {
        *r = Vector3::zeros();
        return LocalOutcome {
            state: PointState::Open,
            residual: natural_residual(r, q, mu).norm(),
            ..Default::default()
        };
    }
    let wnn = w[(0, 0)];
    if mu == 0.0 {
        let rn = if wnn > 0.0 { -q[0] / wnn } else { 0.0 };
        *r = Vector3::new(rn.max(0.0), 0.0, 0.0);
        let u = w * *r + q;
        return LocalOutcome {
            state: PointState::Slip,
            residual: natural_residual(r, &u, mu).norm(),
            ..Default::default()
        };
    }
    // Stick: u = 0 with r = −W⁻¹ q inside the cone.
    let stick = solve3(w, q);
    if stick[0] >= 0.0 && stick[1].hypot(stick[2]) <= mu * stick[0] {
        *r = stick;
        let u = w * *r + q;
        return LocalOutcome {
            state: PointState::Stick,
            residual: natural_residual(r, &u, mu).norm(),
            ..Default::default()
        };
    }
    // Slip: semismooth Newton on Alart–Curnier from the warm start (or, without one, from the
    // stick candidate projected on the cone).
    if r.iter().any(|v| !v.is_finite()) || (r[0] <= 0.0 && r[1] == 0.0 && r[2] == 0.0) {
        *r = project_on_cone(&stick, mu);
    }
    let (rho_n, rho_t) = rho_of(w);
    let scale_q = rho_n * q.norm();
    let mut outcome = LocalOutcome {
        state: PointState::Slip,
        ..Default::default()
    };
    let fallback_rho = 1.0 / w.norm().max(f64::MIN_POSITIVE);
    for _round in 0..settings.rounds.max(1) {
        let (converged, its) = newton_ac(w, q, mu, rho_n, rho_t, r, scale_q, settings);
        outcome.newton_iterations += its;
        if converged {
            break;
        }
        // Fallback: projection steps on the De Saxcé form (C8).
        outcome.used_fallback = true;
        for _ in 0..settings.fallback_steps {
            let u = w * *r + q;
            let modified = Vector3::new(u[0] + mu * u[1].hypot(u[2]), u[1], u[2]);
            *r = project_on_cone(&(*r - fallback_rho * modified), mu);
        }
    }
    let u = w * *r + q;
    outcome.residual = natural_residual(r, &u, mu).norm();
    outcome.state = if r[0] == 0.0 && r[1] == 0.0 && r[2] == 0.0 {
        PointState::Open
    } else if r[1].hypot(r[2]) < mu * r[0] * (1.0 - 1e-12) {
        PointState::Stick
    } else {
        PointState::Slip
    };
    outcome
}

/// The Alart–Curnier function (C7) of one point at `(r, u)` and the blocks of its
/// generalized Jacobian: `∂F/∂r` and `∂F/∂u` (so that with `u = W r + q` the Jacobian in `r`
/// is `D_r + D_u W`, for one point or for the whole problem, eq. (C9)).
pub fn alart_curnier(
    r: &Vector3<f64>,
    u: &Vector3<f64>,
    mu: f64,
    rho_n: f64,
    rho_t: f64,
    jacobian: Option<(&mut Matrix3<f64>, &mut Matrix3<f64>)>,
) -> Vector3<f64> {
    let dn = r[0] - rho_n * u[0];
    let dt = Vector2::new(r[1] - rho_t * u[1], r[2] - rho_t * u[2]);
    let radius = mu * dn.max(0.0);
    let ndt = dt.norm();
    let slip = ndt > radius;
    let pt = if slip { dt * (radius / ndt) } else { dt };
    let f = Vector3::new(r[0] - dn.max(0.0), r[1] - pt[0], r[2] - pt[1]);
    if let Some((dr, du)) = jacobian {
        let active = dn > 0.0;
        // ∂P/∂d_T (2×2) and ∂P/∂α (2), with α = μ max(0, d_N).
        let (dp_dt, dp_da) = if slip {
            let t = dt / ndt;
            (
                (radius / ndt) * (nalgebra::Matrix2::identity() - t * t.transpose()),
                t,
            )
        } else {
            (nalgebra::Matrix2::identity(), Vector2::zeros())
        };
        let a = if active { mu } else { 0.0 };
        dr.fill(0.0);
        du.fill(0.0);
        // Normal row: F_N = r_N − max(0, r_N − ρ_N u_N).
        if active {
            du[(0, 0)] = rho_n;
        } else {
            dr[(0, 0)] = 1.0;
        }
        // Tangent rows: F_T = r_T − P(d_T, α); ∂d_T = (I, −ρ_T I), ∂α = a (e_N, −ρ_N e_N).
        for k in 0..2 {
            dr[(k + 1, k + 1)] += 1.0;
            for c in 0..2 {
                dr[(k + 1, c + 1)] -= dp_dt[(k, c)];
                du[(k + 1, c + 1)] += dp_dt[(k, c)] * rho_t;
            }
            dr[(k + 1, 0)] -= dp_da[k] * a;
            du[(k + 1, 0)] += dp_da[k] * a * rho_n;
        }
    }
    f
}

/// The Alart–Curnier function of one point with `u = W r + q`, and its Jacobian in `r`.
fn ac_function(
    w: &Matrix3<f64>,
    q: &Vector3<f64>,
    mu: f64,
    rho_n: f64,
    rho_t: f64,
    r: &Vector3<f64>,
    jacobian: Option<&mut Matrix3<f64>>,
) -> Vector3<f64> {
    let u = w * r + q;
    match jacobian {
        None => alart_curnier(r, &u, mu, rho_n, rho_t, None),
        Some(j) => {
            let (mut dr, mut du) = (Matrix3::zeros(), Matrix3::zeros());
            let f = alart_curnier(r, &u, mu, rho_n, rho_t, Some((&mut dr, &mut du)));
            *j = dr + du * w;
            f
        }
    }
}

/// The Alart–Curnier parameters `(ρ_N, ρ_T)` of a diagonal block: `1/W_NN` and the inverse
/// of the mean tangential diagonal entry (a scalar `ρ_T`, so that the disc projection keeps
/// maximal dissipation).
pub fn rho_of(w: &Matrix3<f64>) -> (f64, f64) {
    let wnn = w[(0, 0)];
    let rho_n = if wnn > 0.0 { 1.0 / wnn } else { 1.0 };
    let wtt = 0.5 * (w[(1, 1)] + w[(2, 2)]);
    let rho_t = if wtt > 0.0 { 1.0 / wtt } else { rho_n };
    (rho_n, rho_t)
}

/// Newton iterations with backtracking; returns (converged, iterations).
#[allow(clippy::too_many_arguments)]
fn newton_ac(
    w: &Matrix3<f64>,
    q: &Vector3<f64>,
    mu: f64,
    rho_n: f64,
    rho_t: f64,
    r: &mut Vector3<f64>,
    scale_q: f64,
    settings: &LocalSettings,
) -> (bool, u32) {
    let mut j = Matrix3::zeros();
    let mut f = ac_function(w, q, mu, rho_n, rho_t, r, Some(&mut j));
    let mut nf = f.norm();
    for it in 0..settings.max_newton {
        if nf <= settings.tolerance * (r.norm() + scale_q) {
            return (true, it);
        }
        let Some(step) = j.lu().solve(&(-f)) else {
            return (false, it);
        };
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..12 {
            let trial = *r + t * step;
            let ft = ac_function(w, q, mu, rho_n, rho_t, &trial, None);
            let nft = ft.norm();
            if nft < (1.0 - 1e-4 * t) * nf || nft == 0.0 {
                *r = trial;
                accepted = true;
                break;
            }
            t *= 0.5;
        }
        if !accepted {
            // No decrease along the Newton direction: converged to round-off or stalled.
            return (
                nf <= 1e3 * settings.tolerance * (r.norm() + scale_q),
                it + 1,
            );
        }
        f = ac_function(w, q, mu, rho_n, rho_t, r, Some(&mut j));
        nf = f.norm();
    }
    (
        nf <= settings.tolerance * (r.norm() + scale_q),
        settings.max_newton,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> LocalSettings {
        LocalSettings::default()
    }

    #[test]
    fn open_contact_is_exactly_zero() {
        let w = Matrix3::new(2.0, 0.1, 0.0, 0.1, 1.0, 0.2, 0.0, 0.2, 1.5);
        let q = Vector3::new(0.5, -3.0, 1.0);
        let mut r = Vector3::new(1.0, 1.0, 1.0);
        let o = solve_coulomb(&w, &q, 0.3, &mut r, &settings());
        assert_eq!(r, Vector3::zeros());
        assert_eq!(o.state, PointState::Open);
        assert_eq!(o.residual, 0.0);
    }

    /// W = w·I: stick when ‖q_T‖ ≤ μ|q_N|, r = −q/w, u = 0 (closed form).
    #[test]
    fn stick_in_closed_form() {
        let w = Matrix3::identity() * 2.0;
        let q = Vector3::new(-4.0, 0.6, -0.8); // ‖q_T‖ = 1 ≤ 0.5·4
        let mut r = Vector3::zeros();
        let o = solve_coulomb(&w, &q, 0.5, &mut r, &settings());
        assert_eq!(o.state, PointState::Stick);
        assert!((r - Vector3::new(2.0, -0.3, 0.4)).norm() <= 1e-15 * 4.0);
        assert!((w * r + q).norm() <= 1e-15 * 8.0);
    }

    /// W = w·I, slip: r_N = −q_N/w, r_T = −μ r_N q_T/‖q_T‖, u_T = q_T (1 − μ r_N w/‖q_T‖).
    #[test]
    fn slip_in_closed_form() {
        let wv = 2.0;
        let w = Matrix3::identity() * wv;
        let q = Vector3::new(-1.0, 3.0, 4.0);
        let mu = 0.3;
        let mut r = Vector3::zeros();
        let o = solve_coulomb(&w, &q, mu, &mut r, &settings());
        assert_eq!(o.state, PointState::Slip);
        let rn = 0.5;
        let expected = Vector3::new(rn, -mu * rn * 0.6, -mu * rn * 0.8);
        assert!(
            (r - expected).norm() <= 1e-14,
            "{r:?} vs {expected:?}, {o:?}"
        );
        let u = w * r + q;
        assert!(u[0].abs() <= 1e-14);
        // Maximal dissipation: u_T is opposite to r_T.
        let ut = Vector2::new(u[1], u[2]);
        let rt = Vector2::new(r[1], r[2]);
        assert!((ut.normalize() + rt.normalize()).norm() <= 1e-14);
        assert!(o.residual <= 1e-14);
    }

    /// A coupled, anisotropic W: the solution satisfies the law to round-off (residual C10)
    /// and agrees with an independent solve: the projection fixed point run to convergence.
    #[test]
    fn coupled_slip_agrees_with_projection_iteration() {
        let a = Matrix3::new(1.0, 0.3, -0.2, 0.1, 0.8, 0.4, -0.3, 0.2, 1.1);
        let w = a * a.transpose() + Matrix3::identity() * 0.1;
        for (q, mu) in [
            (Vector3::new(-1.0, 2.0, 0.5), 0.4),
            (Vector3::new(-0.3, -0.2, 1.5), 0.8),
            (Vector3::new(-2.0, 0.1, 0.1), 0.05),
        ] {
            let mut r = Vector3::zeros();
            let o = solve_coulomb(&w, &q, mu, &mut r, &settings());
            assert!(o.residual <= 1e-13, "{o:?}");
            let mut p = Vector3::zeros();
            let rho = 1.0 / w.norm();
            for _ in 0..200_000 {
                let u = w * p + q;
                let m = Vector3::new(u[0] + mu * u[1].hypot(u[2]), u[1], u[2]);
                p = project_on_cone(&(p - rho * m), mu);
            }
            assert!((r - p).norm() <= 1e-10 * r.norm(), "{r:?} vs {p:?}");
        }
    }

    #[test]
    fn frictionless_in_closed_form() {
        let w = Matrix3::new(2.0, 0.5, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 1.0);
        let q = Vector3::new(-3.0, 5.0, 1.0);
        let mut r = Vector3::zeros();
        solve_coulomb(&w, &q, 0.0, &mut r, &settings());
        assert_eq!(r, Vector3::new(1.5, 0.0, 0.0));
    }

    #[test]
    fn bilateral_rows() {
        let w = Matrix3::new(2.0, 0.5, 0.1, 0.5, 1.0, 0.2, 0.1, 0.2, 3.0);
        let q = Vector3::new(1.0, -2.0, 0.5);
        let mut r = Vector3::zeros();
        solve_point(&Law::FixedPoint, &w, &q, &mut r, &settings());
        assert!((w * r + q).norm() <= 1e-15 * 10.0);
        // One row: only the normal velocity vanishes, whatever its sign (an equality).
        for law in [Law::FixedDirection, Law::RigidLink] {
            let mut r = Vector3::zeros();
            solve_point(&law, &w, &q, &mut r, &settings());
            assert_eq!(r, Vector3::new(-0.5, 0.0, 0.0));
            assert_eq!((w * r + q)[0], 0.0);
        }
    }
}

#[cfg(test)]
mod jacobian_tests {
    use super::*;

    /// The generalized Jacobian agrees with central differences away from the kinks, in the
    /// open, stick and slip regions.
    #[test]
    fn alart_curnier_jacobian_matches_finite_differences() {
        let a = Matrix3::new(1.0, 0.3, -0.2, 0.1, 0.8, 0.4, -0.3, 0.2, 1.1);
        let w = a * a.transpose() + Matrix3::identity() * 0.1;
        let (rn, rt) = rho_of(&w);
        for (r, q, mu) in [
            (
                Vector3::new(1.0, 0.2, -0.1),
                Vector3::new(-2.0, 0.5, 0.3),
                0.6,
            ),
            (
                Vector3::new(1.0, 0.9, -0.4),
                Vector3::new(-2.0, 3.0, 1.0),
                0.3,
            ),
            (
                Vector3::new(0.5, 0.1, 0.1),
                Vector3::new(3.0, 0.5, 0.3),
                0.3,
            ),
        ] {
            let mut j = Matrix3::zeros();
            ac_function(&w, &q, mu, rn, rt, &r, Some(&mut j));
            let h = 1e-6;
            for c in 0..3 {
                let mut e = Vector3::zeros();
                e[c] = h;
                let fd = (ac_function(&w, &q, mu, rn, rt, &(r + e), None)
                    - ac_function(&w, &q, mu, rn, rt, &(r - e), None))
                    / (2.0 * h);
                assert!(
                    (fd - j.column(c)).norm() < 1e-8,
                    "{fd:?} vs {:?}",
                    j.column(c)
                );
            }
        }
    }

    /// A block that is not exactly symmetric (as FCLIB data are) is solved by LU, not by a
    /// Cholesky factorization that would read one triangle only.
    #[test]
    fn unsymmetric_block_sticks_exactly() {
        let w = Matrix3::new(1.63, -0.293, 0.872, -0.287, 3.55, 0.402, 0.874, 0.392, 2.48);
        let q = Vector3::new(-0.057, 0.0131, -0.0392);
        let mut r = Vector3::zeros();
        let o = solve_coulomb(&w, &q, 0.7, &mut r, &LocalSettings::default());
        assert_eq!(o.state, PointState::Stick);
        assert!((w * r + q).norm() < 1e-16);
    }
}
