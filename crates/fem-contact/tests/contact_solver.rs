//! The contact layer end to end on small problems with closed forms or independent
//! solutions: restitution, the velocity-level Newton's cradle, a box resting flat on four
//! points, bilateral rows, frictionless NSGS against Lemke, frictional NSGS against a
//! projection iteration, the cap policy, and bitwise determinism on 1 and 2 threads.

mod common;

use common::{Particle, Rigid};
use fem_contact::body::{AssemblySettings, Constraint, ContactBody, assemble};
use fem_contact::cone::{frame_from_normal, project_on_cone};
use fem_contact::{CapPolicy, Law, NsgsSettings, Problem, SolveError, Strategy, solve};
use nalgebra::{DMatrix, Matrix3, Vector3};

fn contact(
    first: usize,
    second: Option<usize>,
    point: Vector3<f64>,
    normal: Vector3<f64>,
    law: Law,
) -> Constraint {
    Constraint {
        first,
        second,
        point,
        point_second: point,
        frame: frame_from_normal(&normal),
        gap: 0.0,
        law,
    }
}

fn settings() -> NsgsSettings {
    NsgsSettings {
        tolerance: 1e-12,
        ..Default::default()
    }
}

/// A ball hits a plane with e = 0.8: it leaves with −e times its approach velocity
/// (Newton's law, (C2)), exactly but for round-off.
#[test]
fn restitution_reverses_the_normal_velocity() {
    let (v0, g, h) = (3.0, 9.81, 1e-3);
    let mut ball = Particle::new(
        2.0,
        Vector3::zeros(),
        [0.5, 0.0, -v0],
        [0.5, 0.0, -v0 - g * h],
    );
    let law = Law::Contact {
        friction: 0.0,
        restitution: 0.8,
    };
    let c = [contact(0, None, Vector3::zeros(), Vector3::z(), law)];
    let a = assemble(
        &c,
        &[&ball as &dyn ContactBody],
        &AssemblySettings::default(),
    )
    .unwrap();
    let mut r = vec![Vector3::zeros()];
    let rep = solve(&a.problem, &mut r, &settings()).unwrap();
    assert!(rep.converged);
    a.apply(&r, &mut [&mut ball as &mut dyn ContactBody]);
    assert!(
        (ball.velocity[2] - 0.8 * v0).abs() < 1e-14 * v0,
        "{:?}",
        ball.velocity
    );
    assert_eq!(ball.velocity[0], 0.5);
}

/// Three equal balls in a row, the first moving at v onto the two others at rest and
/// touching (e = 1, μ = 0). The velocity-level law with simultaneous impacts gives
/// (−v/3, 2v/3, 2v/3) (docs/theory/contact.md §6): momentum and energy kept, but not the
/// cradle's (0, 0, v).
#[test]
fn newtons_cradle_of_three_at_velocity_level() {
    let v = 2.0;
    let law = Law::Contact {
        friction: 0.0,
        restitution: 1.0,
    };
    let mut balls: Vec<Particle> = (0..3)
        .map(|i| {
            let u = if i == 0 { [v, 0.0, 0.0] } else { [0.0; 3] };
            Particle::new(1.5, Vector3::new(i as f64, 0.0, 0.0), u, u)
        })
        .collect();
    // Normal points from the second side into the first: first = the right ball.
    let c = [
        contact(1, Some(0), Vector3::new(0.5, 0.0, 0.0), Vector3::x(), law),
        contact(2, Some(1), Vector3::new(1.5, 0.0, 0.0), Vector3::x(), law),
    ];
    let refs: Vec<&dyn ContactBody> = balls.iter().map(|b| b as &dyn ContactBody).collect();
    let a = assemble(&c, &refs, &AssemblySettings::default()).unwrap();
    let mut r = vec![Vector3::zeros(); 2];
    let rep = solve(&a.problem, &mut r, &settings()).unwrap();
    assert!(rep.converged, "{rep:?}");
    let mut muts: Vec<&mut dyn ContactBody> = balls
        .iter_mut()
        .map(|b| b as &mut dyn ContactBody)
        .collect();
    a.apply(&r, &mut muts);
    let out: Vec<f64> = balls.iter().map(|b| b.velocity[0]).collect();
    let expected = [-v / 3.0, 2.0 * v / 3.0, 2.0 * v / 3.0];
    for (o, e) in out.iter().zip(expected) {
        assert!((o - e).abs() < 1e-11 * v, "{out:?}");
    }
    let momentum: f64 = out.iter().sum::<f64>() * 1.5;
    assert!((momentum - 1.5 * v).abs() < 1e-11 * v);
    let energy: f64 = out.iter().map(|x| 0.75 * x * x).sum();
    assert!((energy - 0.75 * v * v).abs() < 1e-11 * v * v);
}

/// A box resting flat on a plane (four corner contacts, μ = 0.5, e = 0) under gravity for
/// one step: the contact impulses take out the step's gravity exactly, the box ends at rest
/// (no rocking: angular velocity zero), and the normal impulses add up to m g h.
#[test]
fn box_resting_on_four_points_stays_at_rest() {
    let (m, g, h) = (3.0, 9.81, 1e-2);
    let half = [0.5, 0.3, 0.2];
    let centre = Vector3::new(0.0, 0.0, 0.2);
    let mut b = Rigid::cuboid(m, half, centre, [0.0; 6], [0.0, 0.0, -g * h, 0.0, 0.0, 0.0]);
    let law = Law::Contact {
        friction: 0.5,
        restitution: 0.0,
    };
    let c: Vec<Constraint> = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
        .iter()
        .map(|&(sx, sy)| {
            contact(
                0,
                None,
                Vector3::new(sx * half[0], sy * half[1], 0.0),
                Vector3::z(),
                law,
            )
        })
        .collect();
    let a = assemble(&c, &[&b as &dyn ContactBody], &AssemblySettings::default()).unwrap();
    let mut r = vec![Vector3::zeros(); 4];
    let rep = solve(&a.problem, &mut r, &settings()).unwrap();
    assert!(rep.converged, "{rep:?}");
    a.apply(&r, &mut [&mut b as &mut dyn ContactBody]);
    for (k, v) in b.velocity.iter().enumerate() {
        assert!(v.abs() < 1e-13, "dof {k}: {v}");
    }
    let total: f64 = r.iter().map(|x| x[0]).sum();
    assert!((total - m * g * h).abs() < 1e-13 * m * g * h);
    // Every impulse in its cone.
    assert!(
        r.iter()
            .all(|x| x[1].hypot(x[2]) <= 0.5 * x[0] * (1.0 + 1e-14))
    );
}

/// Bilateral rows: a particle pinned to a fixed point ends at rest; a particle on a rigid
/// link to a fixed point keeps only the velocity across the link; a fixed direction stops
/// the velocity along it, in both senses (an equality, not a contact).
#[test]
fn bilateral_rows_hold_their_velocities() {
    let free = [1.0, -2.0, 0.5];
    for (law, normal, check) in [
        (Law::FixedPoint, Vector3::z(), [0.0, 0.0, 0.0]),
        (
            Law::RigidLink,
            Vector3::new(1.0, 0.0, 0.0),
            [0.0, -2.0, 0.5],
        ),
        (
            Law::FixedDirection,
            Vector3::new(0.0, 1.0, 0.0),
            [1.0, 0.0, 0.5],
        ),
    ] {
        let mut p = Particle::new(2.0, Vector3::zeros(), free, free);
        let c = [contact(0, None, Vector3::zeros(), normal, law)];
        let a = assemble(&c, &[&p as &dyn ContactBody], &AssemblySettings::default()).unwrap();
        let mut r = vec![Vector3::zeros()];
        assert!(solve(&a.problem, &mut r, &settings()).unwrap().converged);
        a.apply(&r, &mut [&mut p as &mut dyn ContactBody]);
        for k in 0..3 {
            assert!(
                (p.velocity[k] - check[k]).abs() < 1e-15 * 4.0,
                "{law:?}: {:?}",
                p.velocity
            );
        }
    }
}

/// A pseudo-random generator (no dependency, fixed sequence).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// A random problem `W = H M⁻¹ Hᵀ` of `nc` points over `nd ≥ 3 nc` dofs (positive definite).
fn random_problem(nc: usize, nd: usize, mu: f64, seed: u64) -> Problem {
    let mut rng = Lcg(seed);
    let h = DMatrix::from_fn(3 * nc, nd, |_, _| rng.next());
    let minv = DMatrix::from_diagonal(&nalgebra::DVector::from_fn(nd, |_, _| {
        1.0 + 0.5 * rng.next()
    }));
    let w = &h * minv * h.transpose();
    let q: Vec<Vector3<f64>> = (0..nc)
        .map(|_| Vector3::new(rng.next() * 2.0 - 0.5, rng.next(), rng.next()))
        .collect();
    let mut triplets = Vec::new();
    for i in 0..nc {
        for j in 0..nc {
            triplets.push((i, j, Matrix3::from_fn(|a, b| w[(3 * i + a, 3 * j + b)])));
        }
    }
    let laws = vec![
        Law::Contact {
            friction: mu,
            restitution: 0.0
        };
        nc
    ];
    Problem::from_blocks(laws, q, triplets).unwrap()
}

/// Frictionless NSGS against Lemke's method (fem-constraints) on the normal LCP
/// `0 ≤ W_NN r_N + q_N ⊥ r_N ≥ 0`.
#[test]
fn frictionless_nsgs_agrees_with_lemke() {
    for seed in 1..6 {
        let p = random_problem(8, 30, 0.0, seed);
        let mut r = vec![Vector3::zeros(); 8];
        let rep = solve(&p, &mut r, &settings()).unwrap();
        assert!(rep.converged, "{rep:?}");
        let w = p.dense_w();
        let n = 24;
        let m = DMatrix::from_fn(8, 8, |i, j| w[(3 * i) * n + 3 * j]);
        let qn: Vec<f64> = p.q().iter().map(|v| v[0]).collect();
        let mut z = vec![0.0; 8];
        use fem_constraints::LcpSolver;
        fem_constraints::Lemke::default()
            .solve(&m, &qn, &mut z)
            .unwrap();
        for i in 0..8 {
            assert!(
                (r[i][0] - z[i]).abs() < 1e-9 * (1.0 + z[i].abs()),
                "seed {seed} point {i}: {} vs {}",
                r[i][0],
                z[i]
            );
            assert_eq!((r[i][1], r[i][2]), (0.0, 0.0));
        }
    }
}

/// Frictional NSGS against an independent method: the projected fixed point
/// `r ← P_K(r − ρ(W r + q + μ‖u_T‖ e_N))` on the whole problem, run to convergence.
#[test]
fn frictional_nsgs_agrees_with_a_projection_iteration() {
    for seed in 1..4 {
        let nc = 6;
        let p = random_problem(nc, 40, 0.3, seed);
        let mut r = vec![Vector3::zeros(); nc];
        let rep = solve(&p, &mut r, &settings()).unwrap();
        assert!(rep.converged, "{rep:?}");
        let w = p.dense_w();
        let n = 3 * nc;
        let norm: f64 = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        let rho = 1.0 / norm;
        let mut x = vec![Vector3::zeros(); nc];
        let mut u = vec![Vector3::zeros(); nc];
        for _ in 0..400_000 {
            p.velocity(&x, &mut u);
            for i in 0..nc {
                let m = Vector3::new(u[i][0] + 0.3 * u[i][1].hypot(u[i][2]), u[i][1], u[i][2]);
                x[i] = project_on_cone(&(x[i] - rho * m), 0.3);
            }
        }
        assert!(p.fc3d_error(&x) < 1e-10, "{}", p.fc3d_error(&x));
        let _ = n;
        let scale: f64 = x.iter().map(|v| v.norm()).fold(0.0, f64::max);
        for i in 0..nc {
            assert!(
                (r[i] - x[i]).norm() < 1e-8 * scale,
                "seed {seed} point {i}: {:?} vs {:?}",
                r[i],
                x[i]
            );
        }
    }
}

/// The cap policy: warn-and-continue returns what was reached; fail names the sweeps and
/// the residual.
#[test]
fn cap_policy() {
    let p = random_problem(10, 32, 0.4, 7);
    let mut r = vec![Vector3::zeros(); 10];
    let mut s = NsgsSettings {
        max_sweeps: 2,
        tolerance: 1e-14,
        ..Default::default()
    };
    let rep = solve(&p, &mut r, &s).unwrap();
    assert!(!rep.converged && rep.sweeps == 2 && rep.error > 1e-14);
    s.on_cap = CapPolicy::Fail;
    let mut r = vec![Vector3::zeros(); 10];
    match solve(&p, &mut r, &s) {
        Err(SolveError::NotConverged { sweeps, error, .. }) => {
            assert_eq!(sweeps, 2);
            assert_eq!(error, rep.error);
            let msg = SolveError::NotConverged {
                sweeps,
                error,
                tolerance: 1e-14,
                energy_ratio: 0.0,
            }
            .to_string();
            assert!(msg.contains("2 sweeps") && msg.contains("error"), "{msg}");
        }
        other => panic!("expected NotConverged, got {other:?}"),
    }
}

/// Warm start: solving again from the solution takes one sweep.
#[test]
fn warm_start_from_the_solution_takes_one_sweep() {
    let p = random_problem(12, 40, 0.5, 3);
    let mut r = vec![Vector3::zeros(); 12];
    let cold = solve(
        &p,
        &mut r,
        &NsgsSettings {
            check_every: 1,
            ..settings()
        },
    )
    .unwrap();
    let warm = solve(
        &p,
        &mut r,
        &NsgsSettings {
            check_every: 1,
            ..settings()
        },
    )
    .unwrap();
    assert!(cold.sweeps > 3 && warm.sweeps == 1, "{cold:?} {warm:?}");
}

/// Assembly and NSGS give the same bits on 1 and 2 threads (many bodies, many contacts).
#[test]
fn bitwise_equal_on_one_and_two_threads() {
    let run = || {
        let mut rng = Lcg(99);
        let bodies: Vec<Rigid> = (0..400)
            .map(|i| {
                let c = Vector3::new((i % 20) as f64, (i / 20) as f64, 0.3);
                let u = [
                    rng.next(),
                    rng.next(),
                    rng.next() - 2.0,
                    rng.next(),
                    rng.next(),
                    rng.next(),
                ];
                Rigid::cuboid(1.0 + 0.1 * rng.next(), [0.4, 0.4, 0.3], c, u, u)
            })
            .collect();
        let mut cs = Vec::new();
        for i in 0..400 {
            let c = bodies[i].centre;
            cs.push(contact(
                i,
                None,
                c - Vector3::new(0.2, 0.1, 0.3),
                Vector3::z(),
                Law::Contact {
                    friction: 0.4,
                    restitution: 0.2,
                },
            ));
            if i % 20 != 19 {
                cs.push(contact(
                    i + 1,
                    Some(i),
                    c + Vector3::new(0.5, 0.0, 0.0),
                    Vector3::x(),
                    Law::Contact {
                        friction: 0.3,
                        restitution: 0.0,
                    },
                ));
            }
        }
        let refs: Vec<&dyn ContactBody> = bodies.iter().map(|b| b as &dyn ContactBody).collect();
        let a = assemble(&cs, &refs, &AssemblySettings::default()).unwrap();
        let mut r = vec![Vector3::zeros(); cs.len()];
        let rep = solve(
            &a.problem,
            &mut r,
            &NsgsSettings {
                max_sweeps: 200,
                ..Default::default()
            },
        )
        .unwrap();
        let p = a.body_impulses(&r);
        (r, rep.error, p)
    };
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(run);
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap()
        .install(run);
    assert!(one.0.iter().zip(&two.0).all(|(a, b)| {
        a.iter()
            .zip(b.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits())
    }));
    assert_eq!(one.1.to_bits(), two.1.to_bits());
    assert_eq!(one.2, two.2);
}

/// A point above a plane at gap `g` with detection at mid-step (`γ = 2/h`, (C2b)): no impulse
/// while the approach cannot close the gap by the end of the step; otherwise exactly the
/// impulse that closes it.
#[test]
fn positive_gap_admits_exactly_the_approach_that_closes_it() {
    let (h, g, m) = (1e-3, 1e-3, 2.0);
    let settings_gap = AssemblySettings { gap_rate: 2.0 / h };
    let law = Law::Contact {
        friction: 0.0,
        restitution: 0.5,
    };
    for v in [-0.5, -5.0] {
        let mut p = Particle::new(m, Vector3::zeros(), [0.0, 0.0, v], [0.0, 0.0, v]);
        let mut c = contact(0, None, Vector3::zeros(), Vector3::z(), law);
        c.gap = g;
        let a = assemble(&[c], &[&p as &dyn ContactBody], &settings_gap).unwrap();
        let mut r = vec![Vector3::zeros()];
        let rep = solve(&a.problem, &mut r, &settings()).unwrap();
        assert!(rep.converged, "v = {v}: {rep:?} {:?}", a.problem.q());
        a.apply(&r, &mut [&mut p as &mut dyn ContactBody]);
        let end_gap = g + 0.5 * h * p.velocity[2];
        if v * h / 2.0 + g > 0.0 {
            assert_eq!(r[0], Vector3::zeros(), "v = {v}");
            assert_eq!(p.velocity[2], v);
        } else {
            // No restitution before the impact: the gap closes to zero, no bounce.
            assert!(end_gap.abs() < 1e-15, "v = {v}: end gap {end_gap}");
        }
    }
}

/// A rigid link between two particles keeps their distance at velocity level: the relative
/// velocity along the link vanishes, the rest is untouched, momentum is kept.
#[test]
fn rigid_link_between_two_bodies() {
    let (ma, mb) = (1.0, 3.0);
    let mut a_ = Particle::new(ma, Vector3::zeros(), [1.0, 0.5, 0.0], [1.0, 0.5, 0.0]);
    let mut b_ = Particle::new(
        mb,
        Vector3::new(2.0, 0.0, 0.0),
        [-1.0, 0.0, 0.25],
        [-1.0, 0.0, 0.25],
    );
    let link = Constraint {
        first: 1,
        second: Some(0),
        point: Vector3::new(2.0, 0.0, 0.0),
        point_second: Vector3::zeros(),
        frame: frame_from_normal(&Vector3::x()),
        gap: 0.0,
        law: Law::RigidLink,
    };
    let asm = assemble(
        &[link],
        &[&a_ as &dyn ContactBody, &b_ as &dyn ContactBody],
        &AssemblySettings::default(),
    )
    .unwrap();
    let mut r = vec![Vector3::zeros()];
    assert!(solve(&asm.problem, &mut r, &settings()).unwrap().converged);
    asm.apply(
        &r,
        &mut [
            &mut a_ as &mut dyn ContactBody,
            &mut b_ as &mut dyn ContactBody,
        ],
    );
    assert!((b_.velocity[0] - a_.velocity[0]).abs() < 1e-15);
    assert_eq!((a_.velocity[1], b_.velocity[2]), (0.5, 0.25));
    let px = ma * a_.velocity[0] + mb * b_.velocity[0];
    assert!((px - (ma * 1.0 - mb * 1.0)).abs() < 1e-15);
    // The common velocity is the centre of mass's: (1 − 3)/4.
    assert!((a_.velocity[0] + 0.5).abs() < 1e-15);
}

/// Assembly refuses constraints naming missing bodies or joining a body to itself.
#[test]
fn assembly_refuses_bad_constraints() {
    let p = Particle::new(1.0, Vector3::zeros(), [0.0; 3], [0.0; 3]);
    let law = Law::Contact {
        friction: 0.1,
        restitution: 0.0,
    };
    let bad = contact(0, Some(3), Vector3::zeros(), Vector3::z(), law);
    assert!(matches!(
        assemble(
            &[bad],
            &[&p as &dyn ContactBody],
            &AssemblySettings::default()
        ),
        Err(fem_contact::body::AssemblyError::Body { body: 3, .. })
    ));
    let selfc = contact(0, Some(0), Vector3::zeros(), Vector3::z(), law);
    assert!(matches!(
        assemble(
            &[selfc],
            &[&p as &dyn ContactBody],
            &AssemblySettings::default()
        ),
        Err(fem_contact::body::AssemblyError::SelfContact(0))
    ));
}

/// Two coincident contact points under one particle of mass `m` (W = [[I/m, I/m], [I/m, I/m]]
/// in the local frames: singular, rank 3 of 6): the global Newton method
/// (`Strategy::NewtonThenNsgs`) solves it alone, and the total impulse is the closed form —
/// stick, `R = −m v` when `‖v_T‖ ≤ μ |v_N|`; slip, `R_N = −m v_N`, `R_T = −μ R_N v_T/‖v_T‖`
/// otherwise — with `u_N = 0`, each point's impulse in its cone.
#[test]
fn global_newton_on_a_singular_w_has_the_closed_form() {
    let (m, mu) = (2.0, 0.5);
    for (v, stick) in [
        (Vector3::new(-1.0, 0.2, 0.0), true),
        (Vector3::new(-1.0, 2.0, 0.0), false),
        (Vector3::new(-0.5, 0.3, -0.4), false),
    ] {
        let w = Matrix3::identity() / m;
        let law = Law::Contact {
            friction: mu,
            restitution: 0.0,
        };
        let p = Problem::from_blocks(
            vec![law, law],
            vec![v, v],
            vec![(0, 0, w), (0, 1, w), (1, 0, w), (1, 1, w)],
        )
        .unwrap();
        let mut r = vec![Vector3::zeros(); 2];
        let rep = solve(
            &p,
            &mut r,
            &NsgsSettings {
                tolerance: 1e-10,
                strategy: Strategy::NewtonThenNsgs,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(
            rep.converged && rep.sweeps == 0 && rep.global_iterations > 0,
            "{v:?}: {rep:?}"
        );
        let total = r[0] + r[1];
        let expected = if stick {
            -m * v
        } else {
            let rn = -m * v[0];
            let t = Vector3::new(0.0, v[1], v[2]).normalize();
            Vector3::new(rn, 0.0, 0.0) - mu * rn * t
        };
        assert!(
            (total - expected).norm() < 1e-10,
            "{v:?}: {total:?} vs {expected:?}"
        );
        for ri in &r {
            assert!(
                ri[1].hypot(ri[2]) <= mu * ri[0] * (1.0 + 1e-10) + 1e-14,
                "{ri:?}"
            );
        }
        let u = v + total / m;
        assert!(u[0].abs() < 1e-10, "{u:?}");
    }
}

/// On random positive definite problems the global Newton method reaches the tolerance by
/// itself and agrees with NSGS.
#[test]
fn global_newton_agrees_with_nsgs() {
    for seed in 1..5 {
        let nc = 8;
        let p = random_problem(nc, 40, 0.3, seed);
        let mut by_nsgs = vec![Vector3::zeros(); nc];
        assert!(solve(&p, &mut by_nsgs, &settings()).unwrap().converged);
        let mut r = vec![Vector3::zeros(); nc];
        let rep = solve(
            &p,
            &mut r,
            &NsgsSettings {
                strategy: Strategy::NewtonThenNsgs,
                ..settings()
            },
        )
        .unwrap();
        assert!(rep.converged && rep.sweeps == 0, "seed {seed}: {rep:?}");
        let scale: f64 = by_nsgs.iter().map(|v| v.norm()).fold(0.0, f64::max);
        for i in 0..nc {
            assert!(
                (r[i] - by_nsgs[i]).norm() < 1e-8 * scale,
                "seed {seed} point {i}: {:?} vs {:?}",
                r[i],
                by_nsgs[i]
            );
        }
    }
}
