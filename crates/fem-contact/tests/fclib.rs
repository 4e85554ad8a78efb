//! FCLIB's problems (../shared/contact-problems, from Siconos' test data): read, reduced,
//! solved to 1e-8 on Siconos' error measure within the sweeps measured (docs/validation.md);
//! Siconos' error function reproduced on a case it was evaluated on; bad files refused.

use std::path::{Path, PathBuf};

use fem_contact::fclib::{self, FclibError};
use fem_contact::{Law, NsgsSettings, Problem, Strategy, solve};
use nalgebra::{Matrix3, Vector3};

fn problems() -> PathBuf {
    std::env::var_os("FEM_CONTACT_PROBLEMS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/contact-problems")
        })
}

fn read(name: &str) -> fclib::FclibProblem {
    let path = problems().join(name);
    fclib::read(&path, 1 << 30).unwrap_or_else(|e| panic!("{e} (the FCLIB problems are in ../shared/contact-problems beside the repository; FEM_CONTACT_PROBLEMS names another folder)"))
}

/// Each of the four problems Siconos' NSGS solves at 1e-8 is solved by fem's NSGS alone (no
/// polish) from a cold start, within a sweep cap 20 % above the count measured (a regression
/// bound, not a timing).
#[test]
fn four_problems_solved_to_1e_8() {
    for (name, contacts, global, cap) in [
        ("Box_Stacks-i0122-82-5.hdf5", 82, true, 40),
        ("Capsules-i125-1213.hdf5", 286, false, 2800),
        ("LMGC_100_PR_PerioBox-i00361-60-03000.hdf5", 60, false, 1050),
        ("Spheres-i099-356-679.hdf5", 356, true, 290),
    ] {
        let p = read(name);
        assert_eq!(p.problem.len(), contacts, "{name}");
        assert_eq!(p.global, global, "{name}");
        let mut r = vec![Vector3::zeros(); contacts];
        let rep = solve(
            &p.problem,
            &mut r,
            &NsgsSettings {
                max_sweeps: cap,
                polish_after: None,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(rep.converged, "{name}: {rep:?}");
        assert!(p.problem.fc3d_error(&r) <= 1e-8);
        assert!(rep.siconos_error <= rep.error);
        assert!(rep.energy_ratio < 1e-12, "{name}: {rep:?}");
        // Every impulse admissible.
        for (ri, law) in r.iter().zip(p.problem.laws()) {
            assert!(ri[1].hypot(ri[2]) <= law.friction() * ri[0] * (1.0 + 1e-12) + 1e-300);
        }
    }
}

/// The global Newton polish after 100 sweeps finishes two of them far below the tolerance.
#[test]
fn newton_polish_finishes_lmgc_and_spheres() {
    for name in [
        "LMGC_100_PR_PerioBox-i00361-60-03000.hdf5",
        "Spheres-i099-356-679.hdf5",
    ] {
        let p = read(name);
        let mut r = vec![Vector3::zeros(); p.problem.len()];
        let rep = solve(
            &p.problem,
            &mut r,
            &NsgsSettings {
                polish_after: Some(100),
                max_sweeps: 100,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(
            rep.converged && rep.polish_iterations > 0 && rep.sweeps == 100,
            "{name}: {rep:?}"
        );
    }
}

/// spheres-in-a-box (98 spheres, 256 contacts on 588 dofs: `W` singular), which NSGS does not
/// solve in 10⁵ sweeps (nor Siconos' NSGS), is solved to 1e-8 by the global Newton method
/// alone from a cold start (37 iterations measured; the bound is a regression bound).
#[test]
fn global_newton_solves_spheres_in_a_box() {
    let p = read("spheres-in-a-box-98-i10000-256-10.hdf5");
    assert_eq!(p.problem.len(), 256);
    let mut r = vec![Vector3::zeros(); p.problem.len()];
    let rep = solve(
        &p.problem,
        &mut r,
        &NsgsSettings {
            strategy: Strategy::NewtonThenNsgs,
            max_sweeps: 0,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        rep.converged && rep.sweeps == 0 && rep.global_iterations <= 60,
        "{rep:?}"
    );
    assert!(p.problem.fc3d_error(&r) <= 1e-8);
    assert!(rep.siconos_error <= rep.error);
}

/// The files' stored `solution/r` are zero vectors, whose error is that of no impulse: they
/// are placeholders, not solutions (so the solutions are compared with Siconos' in the
/// bench, docs/validation.md).
#[test]
fn stored_solutions_are_placeholders() {
    for name in [
        "Box_Stacks-i0122-82-5.hdf5",
        "Capsules-i125-1213.hdf5",
        "Spheres-i099-356-679.hdf5",
        "spheres-in-a-box-98-i10000-256-10.hdf5",
    ] {
        let p = read(name);
        let s = p.solution.expect("the file has a solution group");
        assert!(s.iter().all(|v| *v == Vector3::zeros()), "{name}");
        assert!(p.problem.fc3d_error(&s) > 0.01, "{name}");
    }
}

/// The reduction of a global problem: W = Hᵀ M⁻¹ H is symmetric positive semidefinite.
#[test]
fn global_reduction_is_symmetric() {
    let p = read("Box_Stacks-i0122-82-5.hdf5");
    let n = 3 * p.problem.len();
    let w = p.problem.dense_w();
    let scale = w.iter().fold(0.0f64, |a, b| a.max(b.abs()));
    for i in 0..n {
        for j in 0..n {
            assert!((w[i * n + j] - w[j * n + i]).abs() <= 1e-14 * scale);
        }
    }
    // Capsules' W (stored by compressed rows) is not exactly symmetric: a reader taking the
    // compressed storage as columns solves its transpose.
    let c = read("Capsules-i125-1213.hdf5");
    assert!(c.compressed_rows && !c.problem.is_symmetric());
    assert!(c.problem.transposed().transposed().dense_w() == c.problem.dense_w());
}

/// Siconos' `fc3d_compute_error` evaluated by Siconos 4.4 on one contact (W = 2I,
/// q = (−1, 0.5, 0.2), μ = 0.3, r = (0.5, −0.1, 0)) returned 0.06448982442674686; fem's (C11)
/// gives the same to round-off.
#[test]
fn error_measure_is_siconos_one() {
    let p = Problem::from_blocks(
        vec![Law::Contact {
            friction: 0.3,
            restitution: 0.0,
        }],
        vec![Vector3::new(-1.0, 0.5, 0.2)],
        vec![(0, 0, Matrix3::identity() * 2.0)],
    )
    .unwrap();
    let e = p.fc3d_error(&[Vector3::new(0.5, -0.1, 0.0)]);
    assert!((e - 0.06448982442674686).abs() < 1e-15, "{e}");
    // Siconos 4.4 divides by max(‖q‖, ‖r‖, ‖u‖): for r = (1000, 0, 0) it returned
    // 0.5002501069103176 (relative to ‖q‖ alone the same residual is 880).
    let r = [Vector3::new(1000.0, 0.0, 0.0)];
    let mut u = [Vector3::zeros()];
    p.velocity(&r, &mut u);
    let s = p.siconos_error_with(&r, &u);
    assert!((s - 0.5002501069103176).abs() < 1e-15, "{s}");
    assert!((p.fc3d_error_with(&r, &u) - 1000.0 / p.norm_q()).abs() < 1e-12);
}

#[test]
fn bad_files_are_refused() {
    let dir = std::env::temp_dir().join(format!("fem_contact_fclib_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.hdf5");
    let e = fclib::read(&missing, 1 << 30).unwrap_err();
    assert!(e.to_string().contains("missing.hdf5"), "{e}");
    let garbage = dir.join("garbage.hdf5");
    std::fs::write(&garbage, b"not an HDF5 file at all").unwrap();
    let e = fclib::read(&garbage, 1 << 30).unwrap_err();
    assert!(
        matches!(e, FclibError::Hdf5 { .. }) && e.to_string().contains("garbage.hdf5"),
        "{e}"
    );
    // Truncated copies of a real file: an error each, never a panic.
    let bytes = std::fs::read(problems().join("Box_Stacks-i0122-82-5.hdf5")).unwrap();
    for cut in [100, 1000, 5000, 20_000, bytes.len() / 2] {
        let t = dir.join(format!("cut{cut}.hdf5"));
        std::fs::write(&t, &bytes[..cut]).unwrap();
        assert!(fclib::read(&t, 1 << 30).is_err(), "cut at {cut}");
    }
    // Over the memory limit: refused before reading.
    let e = fclib::read(&problems().join("Spheres-i099-356-679.hdf5"), 1 << 16).unwrap_err();
    assert!(matches!(e, FclibError::TooLarge { .. }), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
