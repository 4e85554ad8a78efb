//! The LCP solvers against known solutions, including degenerate problems.

use fem_constraints::{
    ImpactReport, LcpError, LcpMethod, LcpSolver, Lemke, ProjectedGaussSeidel, UnilateralContacts,
    lcp_residual, solve_impact,
};
use nalgebra::DMatrix;

fn solvers() -> Vec<Box<dyn LcpSolver>> {
    vec![
        Box::new(Lemke::default()),
        Box::new(ProjectedGaussSeidel::default()),
    ]
}

fn w_of(m: &DMatrix<f64>, q: &[f64], z: &[f64]) -> Vec<f64> {
    (0..q.len())
        .map(|i| q[i] + (0..q.len()).map(|j| m[(i, j)] * z[j]).sum::<f64>())
        .collect()
}

/// A small deterministic generator (no external crate needed).
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

/// Solution by enumeration of the complementary bases (unique for a P-matrix).
fn brute_force(m: &DMatrix<f64>, q: &[f64]) -> Vec<f64> {
    let n = q.len();
    for mask in 0u32..(1 << n) {
        let set: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
        let k = set.len();
        let mut z = vec![0.0; n];
        if k > 0 {
            let a = DMatrix::from_fn(k, k, |i, j| m[(set[i], set[j])]);
            let b = nalgebra::DVector::from_fn(k, |i, _| -q[set[i]]);
            let Some(x) = a.lu().solve(&b) else { continue };
            for (i, &s) in set.iter().enumerate() {
                z[s] = x[i];
            }
        }
        let w = w_of(m, q, &z);
        if z.iter().all(|&v| v >= -1e-12) && w.iter().all(|&v| v >= -1e-12) {
            return z;
        }
    }
    panic!("no solution by enumeration");
}

#[test]
fn two_by_two_known_solutions() {
    let m = DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 1.0, 2.0]);
    // Both active: M z = -q.
    let cases: [([f64; 2], [f64; 2]); 3] = [
        ([-5.0, -6.0], [4.0 / 3.0, 7.0 / 3.0]),
        ([-1.0, 3.0], [0.5, 0.0]),
        ([1.0, 2.0], [0.0, 0.0]),
    ];
    for mut s in solvers() {
        for (q, expected) in &cases {
            let mut z = [0.0; 2];
            let report = s.solve(&m, q, &mut z).unwrap();
            for i in 0..2 {
                assert!((z[i] - expected[i]).abs() < 1e-11, "{}: {z:?}", s.name());
            }
            assert!(report.residual < 1e-11);
        }
    }
}

#[test]
fn zero_q_and_zero_rows() {
    for mut s in solvers() {
        // q = 0: z = 0 is a solution (and the only one for a P-matrix).
        let m = DMatrix::from_row_slice(2, 2, &[2.0, -1.0, -1.0, 2.0]);
        let mut z = [0.7, 0.3]; // a warm start that must be discarded or driven to zero
        let r = s.solve(&m, &[0.0, 0.0], &mut z).unwrap();
        assert_eq!(z, [0.0, 0.0], "{}", s.name());
        assert_eq!(r.residual, 0.0);
        // A zero row with q_i ≥ 0 is a contact that never binds.
        let m = DMatrix::from_row_slice(3, 3, &[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0]);
        let q = [0.0, -1.0, -4.0];
        let mut z = [0.0; 3];
        let r = s.solve(&m, &q, &mut z).unwrap();
        assert!(r.residual < 1e-12, "{}: {r:?}", s.name());
        assert!((z[1] - 1.0).abs() < 1e-12 && (z[2] - 2.0).abs() < 1e-12);
        assert!(lcp_residual(&m, &q, &z) < 1e-12);
    }
}

#[test]
fn duplicated_contacts() {
    // Three copies of one contact row h = (1, 2) on a unit-mass 2-dof system, plus a distinct
    // one: D = H Hᵀ is singular, z is not unique, but H z (the total impulse) and w are.
    let h = [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [0.0, 1.0]];
    let m = DMatrix::from_fn(4, 4, |i, j| h[i][0] * h[j][0] + h[i][1] * h[j][1]);
    let v_free = [-1.0, -0.5];
    let q: Vec<f64> = h
        .iter()
        .map(|r| r[0] * v_free[0] + r[1] * v_free[1])
        .collect();
    for mut s in solvers() {
        let mut z = [0.0; 4];
        let r = s.solve(&m, &q, &mut z).unwrap();
        assert!(r.residual < 1e-10, "{}: {r:?}", s.name());
        assert!(z.iter().all(|&v| v >= 0.0));
        let w = w_of(&m, &q, &z);
        // The duplicated contacts all close: w = 0 on them.
        for i in 0..3 {
            assert!(w[i].abs() < 1e-10, "{}: w = {w:?}", s.name());
        }
        // The unique answer: v = v_free + Hᵀ z with h·v = 0 and v_2 ≥ 0.
        let p = [
            (0..4).map(|i| h[i][0] * z[i]).sum::<f64>(),
            (0..4).map(|i| h[i][1] * z[i]).sum::<f64>(),
        ];
        let v = [v_free[0] + p[0], v_free[1] + p[1]];
        assert!((v[0] + 2.0 * v[1]).abs() < 1e-10);
        assert!(v[1] >= -1e-10);
        println!("{}: z = {z:?}, v = {v:?}, {r:?}", s.name());
    }
}

#[test]
fn tied_ratios_many_identical_rows() {
    // Twenty identical contacts and q with exact ties everywhere: the lexicographic rule
    // must terminate.
    let n = 20;
    let m = DMatrix::from_element(n, n, 1.0);
    let q = vec![-1.0; n];
    let mut z = vec![0.0; n];
    let r = Lemke::default().solve(&m, &q, &mut z).unwrap();
    assert!(r.residual < 1e-12, "{r:?}");
    assert!((z.iter().sum::<f64>() - 1.0).abs() < 1e-12);
}

#[test]
fn random_p_matrices_against_enumeration() {
    let mut rng = Lcg(7);
    for n in [3, 5, 8] {
        for _ in 0..20 {
            let a = DMatrix::from_fn(n, n, |_, _| rng.next());
            let m = &a * a.transpose() + DMatrix::identity(n, n) * 0.1;
            let q: Vec<f64> = (0..n).map(|_| rng.next()).collect();
            let exact = brute_force(&m, &q);
            for mut s in solvers() {
                let mut z = vec![0.0; n];
                s.solve(&m, &q, &mut z).unwrap();
                for i in 0..n {
                    assert!(
                        (z[i] - exact[i]).abs() < 1e-8 * (1.0 + exact[i].abs()),
                        "{} n = {n}: {z:?} vs {exact:?}",
                        s.name()
                    );
                }
            }
        }
    }
}

#[test]
fn asymmetric_p_matrix_with_lemke() {
    // Murty's triangular P-matrix: M_ii = 1, M_ij = 2 for j > i, q = -1.
    // Its unique solution is z = (0, …, 0, 1).
    let n = 8;
    let m = DMatrix::from_fn(n, n, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Equal => 1.0,
        std::cmp::Ordering::Less => 2.0,
        std::cmp::Ordering::Greater => 0.0,
    });
    let q = vec![-1.0; n];
    let mut z = vec![0.0; n];
    let r = Lemke::default().solve(&m, &q, &mut z).unwrap();
    assert!(r.residual < 1e-12);
    assert_eq!(z, brute_force(&m, &q));
}

#[test]
fn infeasible_problems_are_reported() {
    let m = DMatrix::from_row_slice(1, 1, &[0.0]);
    let mut z = [0.0];
    assert!(matches!(
        Lemke::default().solve(&m, &[-1.0], &mut z),
        Err(LcpError::RayTermination { .. })
    ));
    let mut pgs = ProjectedGaussSeidel {
        tolerance: 1e-10,
        max_iterations: 50,
    };
    assert!(matches!(
        pgs.solve(&m, &[-1.0], &mut z),
        Err(LcpError::NotConverged { .. })
    ));
    assert!(matches!(
        Lemke::default().solve(&m, &[1.0, 2.0], &mut z),
        Err(LcpError::DimensionMismatch { .. })
    ));
}

#[test]
fn pgs_meets_its_stated_tolerance() {
    let mut rng = Lcg(11);
    let n = 40;
    let a = DMatrix::from_fn(n, n, |_, _| rng.next());
    let m = &a * a.transpose() + DMatrix::identity(n, n);
    let q: Vec<f64> = (0..n).map(|_| rng.next()).collect();
    let q_norm = q.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for tol in [1e-4, 1e-8, 1e-12] {
        let mut pgs = ProjectedGaussSeidel {
            tolerance: tol,
            max_iterations: 100_000,
        };
        let mut z = vec![0.0; n];
        let r = pgs.solve(&m, &q, &mut z).unwrap();
        assert!(r.residual <= tol * q_norm);
        println!(
            "pgs tol {tol:e}: {} sweeps, residual {:e}",
            r.iterations, r.residual
        );
    }
    let mut z_exact = vec![0.0; n];
    Lemke::default().solve(&m, &q, &mut z_exact).unwrap();
    let mut z = vec![0.0; n];
    LcpMethod::ProjectedGaussSeidel {
        tolerance: 1e-12,
        max_iterations: 100_000,
    }
    .solver()
    .solve(&m, &q, &mut z)
    .unwrap();
    for i in 0..n {
        assert!((z[i] - z_exact[i]).abs() < 1e-9);
    }
}

#[test]
fn impact_on_active_contacts_only() {
    // Two point masses (unit mass), contacts under each; only the first is predicted closed.
    let contacts = UnilateralContacts::at_dofs(2, &[0, 1], vec![0.0, 0.0], 0.5).unwrap();
    let w_inv_ht = contacts.transpose_dense(); // W = I
    let d = contacts.delassus(&w_inv_ht);
    let mut lambda = [0.0; 2];
    let report = solve_impact(
        &d,
        &[-2.0, -1.0],
        &[-2.0, -1.0],
        &[-0.1, 0.3],
        0.5,
        1.0,
        &mut Lemke::default(),
        &mut lambda,
    )
    .unwrap();
    assert_eq!(report.n_active, 1);
    // ẏ⁺ = -2 + λ = -e ẏ⁻ = 1  →  λ = 3.
    assert_eq!(lambda, [3.0, 0.0]);
    let none = solve_impact(
        &d,
        &[-2.0, -1.0],
        &[-2.0, -1.0],
        &[0.1, 0.3],
        0.5,
        1.0,
        &mut Lemke::default(),
        &mut lambda,
    )
    .unwrap();
    assert_eq!(none, ImpactReport::default());
    assert_eq!(lambda, [0.0, 0.0]);
    assert!(UnilateralContacts::at_dofs(2, &[0], vec![0.0], 1.5).is_err());
    assert!(UnilateralContacts::at_dofs(2, &[2], vec![0.0], 0.5).is_err());
}
