use super::*;
use crate::model::{BeamOptions, BeamParameters, BeamState, ConstraintPoints, End, Seabed};

/// A 3D arc of `n` elements: Gauss points, pinned at A and free at B; or nodes and
/// midpoints, pinned at A and clamped at B (its nodal point inactive) over a seabed.
fn problem(n: usize, nodal: bool) -> (Beam, Vec<f64>, Vec<f64>, ActiveSet) {
    let mut p = BeamParameters::paper_95();
    p.n_elements = n;
    let options = BeamOptions {
        constraint_points: if nodal {
            ConstraintPoints::NodesAndMidpoints
        } else {
            ConstraintPoints::Gauss
        },
        seabed: nodal.then_some(Seabed {
            axis: 1,
            level: -100.0,
        }),
    };
    let model = Beam::with_options(p, options).unwrap();
    let x0 = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 3.0], [0.0, -1.0, 0.5]);
    let end_b = if nodal {
        End::clamped(x0.positions[n], [1.0, 0.0, 0.0])
    } else {
        End::Free
    };
    let model = model.with_ends(End::pinned([0.0; 3]), end_b).unwrap();
    let x = x0.to_columns();
    let tension: Vec<f64> = (0..model.n_points())
        .map(|j| 50.0 + 30.0 * (0.37 * j as f64).sin())
        .collect();
    // Some nodes held by the seabed, in both halves: on it (both vertical dofs blocked), or
    // by one control point (the shifted basis, its vertical `g` blocked).
    use crate::seabed::{LEFT, RIGHT};
    let last = model.n_nodes() - 1;
    let active = (0..model.n_nodes())
        .map(|i| match (nodal, i % 7) {
            (true, 3) if i < last => RIGHT | LEFT,
            (true, 5) if i < last => RIGHT,
            (true, 1) if i < last => LEFT,
            _ => 0,
        })
        .collect();
    (model, x, tension, ActiveSet { active })
}

/// `(δx, δT)` of one Newton step of the energy-conserving form and the scaled residual
/// of the linear solve ([`residual`]); `None` if `factor_solve` reports a singular pivot
/// block. `twisted_from` sets the twisted path's threshold.
fn step(
    model: &Beam,
    x: &[f64],
    tension: &[f64],
    contact: &ActiveSet,
    jac: &JacobianForm,
    twisted_from: usize,
) -> Option<(Vec<f64>, f64)> {
    let mut kkt = BlockKkt::new(model);
    kkt.twisted_min_blocks = twisted_from;
    kkt.set_blocked(model, contact);
    let form = midpoint_residual(x);
    kkt.residual(model, &form, x, tension);
    if !kkt.factor_solve(model, jac, tension).unwrap() {
        return None;
    }
    let mut out: Vec<f64> = (0..DIM)
        .flat_map(|c| (0..model.n_scalar()).map(move |k| (c, k)))
        .map(|(c, k)| kkt.dx(c, k))
        .collect();
    out.extend((0..model.n_points()).map(|j| kkt.dt(model, j)));
    let sol = kkt.rhs.clone();
    Some((out, residual(&mut kkt, model, jac, tension, &sol)))
}

/// Max relative difference (per block of unknowns: positions/tangents, multipliers).
fn rel_diff(a: &[f64], b: &[f64], n_dofs: usize) -> f64 {
    let part = |r: std::ops::Range<usize>| {
        let m = b[r.clone()].iter().fold(1e-300f64, |m, v| m.max(v.abs()));
        r.map(|i| (a[i] - b[i]).abs() / m).fold(0.0, f64::max)
    };
    part(0..n_dofs).max(part(n_dofs..a.len()))
}

/// The twisted solve against the serial one: the same to round-off (1e-12 relative) on
/// small problems; on large ones, whose condition grows like `N⁴` (the differences grow so,
/// 2e-11 at N = 1000 and 4e-10 at N = 1500 with Gauss points), both have the same tiny
/// scaled residual.
#[test]
fn twisted_matches_serial() {
    for nodal in [false, true] {
        for n in [3, 4, 7, 40, 100, 1500] {
            let (model, x, tension, contact) = problem(n, nodal);
            let (serial, rs) = step(
                &model,
                &x,
                &tension,
                &contact,
                &MIDPOINT_JACOBIAN,
                usize::MAX,
            )
            .unwrap();
            let (twisted, rt) =
                step(&model, &x, &tension, &contact, &MIDPOINT_JACOBIAN, 0).unwrap();
            let d = rel_diff(&twisted, &serial, DIM * model.n_scalar());
            if n <= 100 {
                assert!(d < 1e-12, "nodal {nodal}, N = {n}: {d:e}");
            } else {
                assert!(d < 1e-8, "nodal {nodal}, N = {n}: {d:e}");
            }
            assert!(
                rs < 1e-12 && rt < 1e-12 && rt < 4.0 * rs.max(1e-15),
                "{rs:e} {rt:e}"
            );
            // The default threshold's choice.
            let default = step(
                &model,
                &x,
                &tension,
                &contact,
                &MIDPOINT_JACOBIAN,
                TWISTED_MIN_BLOCKS,
            );
            let want = if model.n_nodes() >= TWISTED_MIN_BLOCKS {
                &twisted
            } else {
                &serial
            };
            assert_eq!(&default.unwrap().0, want);
            // Blocked dofs stay put: both vertical dofs of a node on the seabed, the control
            // point `p + c σ` of a node held by one.
            let n_s = model.n_scalar();
            for i in 0..model.n_nodes() {
                let ([hp, hs], c) = crate::seabed::blocking(&model, &contact, i);
                let (dp, ds) = (twisted[n_s + 2 * i], twisted[n_s + 2 * i + 1]);
                if hp && hs {
                    assert_eq!((dp, ds), (0.0, 0.0));
                } else if hp {
                    assert!((dp + c * ds).abs() <= 1e-15 * ds.abs(), "{dp:e} {ds:e}");
                }
            }
            assert_eq!(twisted[0], 0.0);
        }
    }
}

/// The residual in two halves: the serial one's tangents and, but for the order of the
/// sums at the middle node, its entries.
#[test]
fn residual_halves_match_the_serial_residual() {
    for nodal in [false, true] {
        for n in [3, 4, 41, 1500] {
            let (model, x, tension, contact) = problem(n, nodal);
            let form = midpoint_residual(&x);
            let run = |from: usize| {
                let mut kkt = BlockKkt::new(&model);
                kkt.twisted_min_blocks = from;
                kkt.set_blocked(&model, &contact);
                kkt.residual(&model, &form, &x, &tension);
                (kkt.res, kkt.tangents, kkt.tangents_hat)
            };
            let (a, b) = (run(usize::MAX), run(0));
            assert_eq!(a.1, b.1);
            assert_eq!(a.2, b.2);
            let m = a.0.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let d =
                a.0.iter()
                    .zip(&b.0)
                    .map(|(u, v)| (u - v).abs())
                    .fold(0.0, f64::max);
            assert!(d <= 1e-15 * m, "nodal {nodal}, N = {n}: {d:e} of {m:e}");
        }
    }
}

#[test]
fn twisted_is_the_same_bits_on_one_and_two_threads() {
    for nodal in [false, true] {
        let (model, x, tension, contact) = problem(1200, nodal);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                step(&model, &x, &tension, &contact, &MIDPOINT_JACOBIAN, 0)
                    .unwrap()
                    .0
            })
        };
        let (one, two) = (run(1), run(2));
        assert!(
            one.iter()
                .zip(&two)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
    }
}

#[test]
fn a_singular_pivot_block_is_reported_on_both_paths() {
    let (model, x, tension, contact) = problem(1200, true);
    // No Hessian: the first block's (and every block's) pivot is singular.
    let zero = JacobianForm {
        mass: 0.0,
        bending: 0.0,
        geometric: 0.0,
    };
    assert!(step(&model, &x, &tension, &contact, &zero, usize::MAX).is_none());
    assert!(step(&model, &x, &tension, &contact, &zero, 0).is_none());
    // A non-finite tension in either half: a failed pivot or a non-finite solution.
    for j in [100, model.n_points() - 100] {
        let mut t = tension.clone();
        t[j] = f64::NAN;
        assert!(step(&model, &x, &t, &contact, &MIDPOINT_JACOBIAN, usize::MAX).is_none());
        assert!(step(&model, &x, &t, &contact, &MIDPOINT_JACOBIAN, 0).is_none());
    }
}

/// The scaled residual `‖A z − r‖_∞ / ‖r‖_∞` of a solution `sol` (the unscaled `rhs`
/// of a solve, top-down layout) of the system assembled in `kkt`'s state.
fn residual(
    kkt: &mut BlockKkt,
    model: &Beam,
    jac: &JacobianForm,
    tension: &[f64],
    sol: &[f64],
) -> f64 {
    let nb = kkt.n_blocks;
    let (sh, mut run) = kkt.split();
    let inp = Inputs {
        model,
        jac,
        tension,
        sh,
    };
    let mut before = [[0.0f64; 4]; 4];
    let mut sp = [1.0f64; 2];
    for b in 0..nb {
        inp.assemble_next(&mut run, b, &mut before, &mut sp);
    }
    let z: Vec<f64> = sol
        .iter()
        .zip(run.scale.iter())
        .map(|(v, s)| v / s)
        .collect();
    let zb = |b: usize| -> [f64; BS] { std::array::from_fn(|l| z[b * BS + l]) };
    let (mut rmax, mut bmax) = (0.0f64, 0.0f64);
    for b in 0..nb {
        let mut az = [0.0f64; BS];
        let zz = zb(b);
        for r in 0..BS {
            az[r] = (0..BS).map(|c| run.diag[b][r][c] * zz[c]).sum();
        }
        if b > 0 {
            let mut neg = [0.0f64; BS];
            subtract_lower(sh.open, &run, b, &zb(b - 1), &mut neg);
            for r in 0..BS {
                az[r] -= neg[r];
            }
        }
        if b + 1 < nb {
            let u = upper(sh.open, &run, b + 1);
            let zn = zb(b + 1);
            for r in 0..BS {
                az[r] += (0..BS).map(|c| u[r][c] * zn[c]).sum::<f64>();
            }
        }
        for r in 0..BS {
            rmax = rmax.max((az[r] - run.rhs[b * BS + r]).abs());
            bmax = bmax.max(run.rhs[b * BS + r].abs());
        }
    }
    rmax / bmax
}

/// One Newton step solves the linearized equations in the unknowns' bases (the shifted basis
/// `(g, σ)` of a node held by one seabed condition, (S3)): with `F = (R, C)`, which is
/// quadratic in `(x, T)` so that the central difference `[F(z + εδ) − F(z − εδ)]/(2ε)` is
/// `J δ` to round-off, `F + J δ` vanishes on every unknown row — a position row `r_p` as
/// `r'_g = r_p`, a tangent row of a shifted node as `r'_σ = r_σ − c r_p` — and the blocked
/// combinations do not move.
#[test]
fn a_newton_step_solves_the_linearized_equations_in_the_shifted_bases() {
    for n in [7, 40] {
        let (model, x, tension, contact) = problem(n, true);
        let mut kkt = BlockKkt::new(&model);
        kkt.set_blocked(&model, &contact);
        let form = midpoint_residual(&x);
        kkt.residual(&model, &form, &x, &tension);
        assert!(
            kkt.factor_solve(&model, &MIDPOINT_JACOBIAN, &tension)
                .unwrap()
        );
        let n_s = model.n_scalar();
        let dx: Vec<f64> = (0..DIM)
            .flat_map(|c| (0..n_s).map(move |k| (c, k)))
            .map(|(c, k)| kkt.dx(c, k))
            .collect();
        let dtn: Vec<f64> = (0..model.n_points()).map(|j| kkt.dt(&model, j)).collect();
        // F(z) = (R, C) at z = (x, T).
        let f = |s: f64| -> (Vec<f64>, Vec<f64>) {
            let xs: Vec<f64> = x.iter().zip(&dx).map(|(a, d)| a + s * d).collect();
            let ts: Vec<f64> = tension.iter().zip(&dtn).map(|(a, d)| a + s * d).collect();
            let mut k = BlockKkt::new(&model);
            k.set_blocked(&model, &contact);
            k.residual(&model, &form, &xs, &ts);
            let w = model.point_weights();
            let c = (0..model.n_points())
                .map(|j| {
                    let t = k.tangents[j];
                    w[j] * 0.5 * (t[0] * t[0] + t[1] * t[1] + t[2] * t[2] - 1.0)
                })
                .collect();
            (k.res, c)
        };
        // Exact for a quadratic at any step: a unit one keeps the round-off small.
        let eps = 1.0;
        let (r0, c0) = f(0.0);
        let (rp, cp) = f(eps);
        let (rm, cm) = f(-eps);
        let lin: Vec<f64> = (0..r0.len())
            .map(|i| r0[i] + (rp[i] - rm[i]) / (2.0 * eps))
            .collect();
        let scale = r0.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let mut shifted = 0;
        for i in 0..model.n_nodes() {
            let ([hp, hs], shift) = crate::seabed::blocking(&model, &contact, i);
            shifted += usize::from(shift != 0.0);
            for c in 0..DIM {
                let (kp, ks) = (c * n_s + 2 * i, c * n_s + 2 * i + 1);
                // Rows of unknowns: not prescribed, not a blocked vertical dof.
                let (row_p, row_s) = (
                    !(model.is_fixed(2 * i) || (c == 1 && hp)),
                    !(model.is_fixed(2 * i + 1) || (c == 1 && hs)),
                );
                if row_p {
                    assert!(
                        lin[kp].abs() < 1e-9 * scale,
                        "N = {n}, node {i}, c {c}: {:e} of {scale:e}",
                        lin[kp]
                    );
                }
                if row_s {
                    let r = lin[ks] - shift * lin[kp];
                    assert!(
                        r.abs() < 1e-9 * scale,
                        "N = {n}, node {i}, c {c}, tangent: {r:e} of {scale:e}"
                    );
                }
            }
            if shift != 0.0 {
                let (dp, ds) = (dx[n_s + 2 * i], dx[n_s + 2 * i + 1]);
                assert!((dp + shift * ds).abs() <= 1e-15 * ds.abs().max(dp.abs()));
            }
        }
        assert!(shifted >= 2, "N = {n}: no shifted node tested");
        for j in 0..model.n_points() {
            if model.point_is_active(j) {
                let lc = c0[j] + (cp[j] - cm[j]) / (2.0 * eps);
                assert!(lc.abs() < 1e-12, "N = {n}, point {j}: {lc:e}");
            }
        }
    }
}
