//! The cantilever of issue 25 for every element kind and formulation, against beam theory:
//! `L = 1`, square section `h = 0.05`, `E = 10⁷`, `ρ = 10³` (`E/ρ = 10⁴`), `ν = 0.3`, clamped at
//! `x = 0` (every dof of the face).
//!
//! * **Tip deflection** under a tip load `P` (a uniform shear traction on the `x = L` face), by a
//!   linear solve with the tangent at the reference state, as the face's mean deflection
//!   `fᵀu / P`; against Euler–Bernoulli `P L³ / (3 E I)` and Timoshenko (plus `P L / (κ G A)`,
//!   Cowper's `κ = 10(1 + ν)/(12 + 11ν)` for a square).
//! * **First frequency** of `K φ = ω² M φ` (consistent mass; subspace iteration on the Cholesky
//!   factor of `K`), against Euler–Bernoulli `1.8751² / (2π L²) √(EI/ρA) = 0.8077 Hz`; the two
//!   bending frequencies (about `y` and `z`) must agree on the square section.
//!
//! The goals asserted: the enhanced hex8 (`eas`) and the one-point hex8 within 1 % of the beam
//! frequency at 20×2×2; the fully integrated hex8 and the tet4 lock measurably there; the two
//! bending frequencies of every mesh (tet4 included) agree to 1e-10. `cargo test -p fem-assembly
//! --test cantilever -- --ignored --nocapture` prints the whole table of `docs/validation.md`.

use fem_assembly::{DofMap, Factorization, SolidOperator, Symmetry, sparse};
use fem_elements::solid::{Formulation, Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};
use nalgebra::DMatrix;

const L: f64 = 1.0;
const H: f64 = 0.05;
const YOUNG: f64 = 1.0e7;
const RHO: f64 = 1.0e3;
const NU: f64 = 0.3;

fn second_moment() -> f64 {
    H.powi(4) / 12.0
}

/// Euler–Bernoulli first frequency (Hz).
fn beam_frequency() -> f64 {
    let beta = 1.875_104_068_711_961;
    beta * beta / (2.0 * std::f64::consts::PI * L * L)
        * (YOUNG * second_moment() / (RHO * H * H)).sqrt()
}

/// Euler–Bernoulli and Timoshenko tip deflections under a tip load `p`.
fn beam_deflections(p: f64) -> (f64, f64) {
    let eb = p * L.powi(3) / (3.0 * YOUNG * second_moment());
    let kappa = 10.0 * (1.0 + NU) / (12.0 + 11.0 * NU);
    let shear = YOUNG / (2.0 * (1.0 + NU));
    (eb, eb + p * L / (kappa * shear * H * H))
}

/// What one mesh gives.
#[derive(Clone, Copy, Debug)]
struct Cantilever {
    /// Tip deflection in `z` and the cross motion in `y`, under a load in `z`.
    deflection: f64,
    cross: f64,
    /// Tip deflection in `y` under the same load in `y`.
    deflection_y: f64,
    /// The two lowest frequencies (Hz).
    frequencies: [f64; 2],
    /// Free dofs.
    dofs: usize,
}

fn box_cells(kind: SolidKind) -> BoxCells {
    match kind {
        SolidKind::Tet4 => BoxCells::Tet4,
        SolidKind::Tet10 => BoxCells::Tet10,
        SolidKind::Hex8 => BoxCells::Hex8,
        SolidKind::Hex20 => BoxCells::Hex20,
        SolidKind::Hex27 => BoxCells::Hex27,
    }
}

fn cantilever(kind: SolidKind, formulation: Formulation, n: [usize; 3]) -> Cantilever {
    let mesh = box_mesh([L, H, H], n, box_cells(kind)).unwrap();
    let fixed: Vec<usize> = mesh
        .group("xmin")
        .unwrap()
        .nodes
        .iter()
        .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
        .collect();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let n_cells = mesh.blocks[0].n_cells();
    let material = Material::new(MaterialModel::SaintVenantKirchhoff, YOUNG, NU).unwrap();
    let body = SolidOperator::with_formulations(
        kind,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        &vec![formulation; n_cells],
        material,
        RHO,
        kind.default_lumping(),
        &dofmap,
    )
    .unwrap();
    let nf = dofmap.n_free();
    let k = body.tangent(&vec![0.0; 3 * mesh.n_nodes()]).unwrap();
    let m = body.consistent_mass().unwrap();
    let chol = Factorization::new(&k, Symmetry::Symmetric).unwrap();
    // Tip load: a unit total force in z on the xmax face.
    let group = mesh.group("xmax").unwrap();
    let faces: Vec<usize> = group
        .cells
        .iter()
        .flat_map(|&(b, c)| mesh.blocks[b].cell(c).to_vec())
        .collect();
    let face_kind = kind.face_kind();
    let (fz, area) = fem_assembly::solid::face_traction_vector(
        face_kind,
        &mesh.points,
        &faces,
        [0.0, 0.0, 1.0 / (H * H)],
        &dofmap,
    );
    assert!((area - H * H).abs() < 1e-14);
    let (fy, _) = fem_assembly::solid::face_traction_vector(
        face_kind,
        &mesh.points,
        &faces,
        [0.0, 1.0 / (H * H), 0.0],
        &dofmap,
    );
    // K⁻¹ f with one step of iterative refinement (the solve's round-off grows with K's
    // condition number; the refinement brings it to that of the residual).
    let solve = |f: &[f64]| {
        let mut u = f.to_vec();
        chol.solve_in_place(&mut u);
        let ku = sparse::mul(&k, &u);
        let mut r: Vec<f64> = f.iter().zip(&ku).map(|(a, b)| a - b).collect();
        chol.solve_in_place(&mut r);
        u.iter_mut().zip(&r).for_each(|(a, b)| *a += b);
        u
    };
    let u = solve(&fz);
    let deflection: f64 = fz.iter().zip(&u).map(|(a, b)| a * b).sum();
    let cross: f64 = fy.iter().zip(&u).map(|(a, b)| a * b).sum();
    let v = solve(&fy);
    let deflection_y: f64 = fy.iter().zip(&v).map(|(a, b)| a * b).sum();
    Cantilever {
        deflection,
        deflection_y,
        cross,
        frequencies: lowest_frequencies(&k, &m, &chol, nf),
        dofs: nf,
    }
}

/// The two lowest frequencies of `K φ = ω² M φ` by subspace iteration with 6 vectors.
fn lowest_frequencies(
    k: &nalgebra_sparse::CsrMatrix<f64>,
    m: &nalgebra_sparse::CsrMatrix<f64>,
    chol: &Factorization,
    n: usize,
) -> [f64; 2] {
    const P: usize = 6;
    // Start: smooth, independent fields (deterministic).
    let mut x: Vec<Vec<f64>> = (0..P)
        .map(|j| {
            (0..n)
                .map(|i| ((i as f64 + 1.0) * (0.37 + 0.11 * j as f64)).sin() + 0.1 * j as f64)
                .collect()
        })
        .collect();
    let mut previous = [0.0; 2];
    let mut change = f64::INFINITY;
    for iteration in 0..300 {
        // X ← K⁻¹ M X.
        for v in x.iter_mut() {
            let mut y = sparse::mul(m, v);
            chol.solve_in_place(&mut y);
            *v = y;
        }
        // Rayleigh–Ritz on span X.
        let kx: Vec<Vec<f64>> = x.iter().map(|v| sparse::mul(k, v)).collect();
        let mx: Vec<Vec<f64>> = x.iter().map(|v| sparse::mul(m, v)).collect();
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
        let kr = DMatrix::from_fn(P, P, |i, j| dot(&x[i], &kx[j]));
        let mr = DMatrix::from_fn(P, P, |i, j| dot(&x[i], &mx[j]));
        let mr = 0.5 * (&mr + mr.transpose());
        let kr = 0.5 * (&kr + kr.transpose());
        let chol_m = mr.clone().cholesky().expect("X spans P directions");
        let l_inv = chol_m.l().try_inverse().unwrap();
        let a = &l_inv * kr * l_inv.transpose();
        let eig = a.symmetric_eigen();
        let mut order: Vec<usize> = (0..P).collect();
        order.sort_by(|&i, &j| eig.eigenvalues[i].total_cmp(&eig.eigenvalues[j]));
        // Ritz vectors: X Lᵀ⁻¹ q.
        let coefficients = l_inv.transpose() * &eig.eigenvectors;
        let new_x: Vec<Vec<f64>> = order
            .iter()
            .map(|&c| {
                (0..n)
                    .map(|i| (0..P).map(|j| x[j][i] * coefficients[(j, c)]).sum())
                    .collect()
            })
            .collect();
        x = new_x;
        let lambda = [eig.eigenvalues[order[0]], eig.eigenvalues[order[1]]];
        let f = lambda.map(|l| l.sqrt() / (2.0 * std::f64::consts::PI));
        change = (0..2)
            .map(|i| (f[i] - previous[i]).abs() / f[i])
            .fold(0.0, f64::max);
        // Converged to the round-off of the Rayleigh quotients (their relative error grows
        // with K's condition number: about 1e-12 at these sizes).
        if iteration > 10 && change < 1e-14 {
            return f;
        }
        previous = f;
    }
    assert!(
        change < 1e-9,
        "subspace iteration did not converge: {previous:?} ({change:e})"
    );
    previous
}

/// Every element of the table, with its meshes.
fn elements() -> Vec<(SolidKind, Formulation, &'static str)> {
    vec![
        (SolidKind::Tet4, Formulation::Full, "tet4"),
        (SolidKind::Tet10, Formulation::Full, "tet10"),
        (SolidKind::Hex8, Formulation::Full, "hex8 full (2×2×2)"),
        (SolidKind::Hex8, Formulation::Eas, "hex8 eas"),
        (SolidKind::Hex8, Formulation::FBar, "hex8 fbar"),
        (SolidKind::Hex8, Formulation::OnePoint, "hex8 one_point"),
        (SolidKind::Hex20, Formulation::Full, "hex20"),
        (SolidKind::Hex27, Formulation::Full, "hex27"),
    ]
}

/// The meshes of the table: linear elements at 10×1×1, 20×2×2, 40×4×4; quadratic ones at
/// 5×1×1, 10×1×1, 20×2×2 (about the same number of nodes).
fn meshes(kind: SolidKind) -> [[usize; 3]; 3] {
    if kind.order() == 2 {
        [[5, 1, 1], [10, 1, 1], [20, 2, 2]]
    } else {
        [[10, 1, 1], [20, 2, 2], [40, 4, 4]]
    }
}

#[test]
fn non_locking_hex8_is_within_one_percent_of_the_beam_at_20x2x2() {
    let f_beam = beam_frequency();
    assert!((f_beam - 0.8077).abs() < 5e-5, "{f_beam}");
    let (eb, _) = beam_deflections(1.0);
    for formulation in [Formulation::Eas, Formulation::OnePoint] {
        let c = cantilever(SolidKind::Hex8, formulation, [20, 2, 2]);
        let error = c.frequencies[0] / f_beam - 1.0;
        assert!(error.abs() < 0.01, "{formulation}: {:+.3} %", 100.0 * error);
        let static_error = c.deflection / eb - 1.0;
        assert!(static_error.abs() < 0.02, "{formulation}: {static_error}");
    }
    // The fully integrated hex8 locks: several percent stiff at the same mesh.
    let full = cantilever(SolidKind::Hex8, Formulation::Full, [20, 2, 2]);
    assert!(full.frequencies[0] / f_beam - 1.0 > 0.05, "{full:?}");
    assert!(full.deflection / eb < 0.9, "{full:?}");
}

#[test]
fn every_mesh_bends_alike_about_both_axes() {
    // The square section: the two bending frequencies agree, and a load in z moves the tip in
    // z only (the tet4 split has the symmetries of the box).
    // (The frequencies come from Rayleigh quotients, whose round-off grows with K's condition
    // number: they agree to the 1e-10 of their own accuracy.)
    for (kind, formulation, name) in elements() {
        for n in [[10, 1, 1], [20, 2, 2]] {
            if kind.order() == 2 && n[1] == 2 {
                continue;
            }
            let c = cantilever(kind, formulation, n);
            let (dz, dy) = (c.deflection, c.deflection_y);
            // Round-off: 2e-12 .. 7e-11 for the linear cells, up to 1.7e-10 for hex27 (more
            // dofs and a larger condition number; measured since the cell geometry is taken
            // relative to each cell's first node).
            let tolerance = if kind.order() == 2 { 5e-10 } else { 1e-10 };
            assert!(
                (dz - dy).abs() < tolerance * dz,
                "{name} {n:?}: {dz} vs {dy}"
            );
            assert!(
                c.cross.abs() < tolerance * dz,
                "{name} {n:?}: cross {}",
                c.cross
            );
            let [f1, f2] = c.frequencies;
            assert!((f2 - f1).abs() < 1e-9 * f1, "{name} {n:?}: {f1} vs {f2}");
        }
    }
}

#[test]
#[ignore = "prints the table of docs/validation.md (about a minute)"]
fn print_the_cantilever_table() {
    let f_beam = beam_frequency();
    let (eb, timoshenko) = beam_deflections(1.0);
    println!(
        "Euler-Bernoulli: f1 = {f_beam:.5} Hz, tip deflection {eb:.6e}; Timoshenko deflection {timoshenko:.6e} ({:+.3} %)",
        100.0 * (timoshenko / eb - 1.0)
    );
    println!(
        "| element | mesh | dofs | tip deflection / EB | / Timoshenko | f1 (Hz) | f1 / EB | δy/δz − 1 |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (kind, formulation, name) in elements() {
        for n in meshes(kind) {
            let c = cantilever(kind, formulation, n);
            println!(
                "| {name} | {}×{}×{} | {} | {:+.2} % | {:+.2} % | {:.5} | {:+.2} % | {:.1e} |",
                n[0],
                n[1],
                n[2],
                c.dofs,
                100.0 * (c.deflection / eb - 1.0),
                100.0 * (c.deflection / timoshenko - 1.0),
                c.frequencies[0],
                100.0 * (c.frequencies[0] / f_beam - 1.0),
                c.deflection_y / c.deflection - 1.0
            );
        }
    }
}

/// The static deflection of the showcase `inputs/solid_cantilever_gravity.yaml` (1 × 0.1 × 0.1 m,
/// SVK, `E`, ρ = 10³, gravity) on `n` cells: Newton on the tangent to equilibrium, the mean
/// deflection of the tip face's nodes (to compare with Euler–Bernoulli's `q L⁴ / (8 E I)`, geometrically
/// linear: at large deflections the beam deflects less).
fn gravity_cantilever(young: f64, formulation: Formulation, n: [usize; 3]) -> f64 {
    let (l, h, rho, g) = (1.0, 0.1, 1.0e3, 9.81);
    let mesh = box_mesh([l, h, h], n, BoxCells::Hex8).unwrap();
    let fixed: Vec<usize> = mesh
        .group("xmin")
        .unwrap()
        .nodes
        .iter()
        .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
        .collect();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let material = Material::new(MaterialModel::SaintVenantKirchhoff, young, 0.3).unwrap();
    let n_cells = mesh.blocks[0].n_cells();
    let body = SolidOperator::with_formulations(
        SolidKind::Hex8,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        &vec![formulation; n_cells],
        material,
        rho,
        SolidKind::Hex8.default_lumping(),
        &dofmap,
    )
    .unwrap();
    let nf = dofmap.n_free();
    // Gravity as the input applies it: the lumped mass times g.
    let f: Vec<f64> = body
        .lumped_mass()
        .iter()
        .zip(dofmap.free_dofs())
        .map(|(m, &d)| if d % 3 == 2 { -m * g } else { 0.0 })
        .collect();
    let mut x = vec![0.0; nf];
    let mut u = vec![0.0; 3 * mesh.n_nodes()];
    let (mut fint, mut slots) = (vec![0.0; nf], Vec::new());
    let scale = f.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for _ in 0..30 {
        dofmap.scatter(&x, 0.0, &mut u);
        body.internal_force(&u, &mut slots, &mut fint).unwrap();
        let mut r: Vec<f64> = f.iter().zip(&fint).map(|(a, b)| a - b).collect();
        if r.iter().fold(0.0f64, |a, v| a.max(v.abs())) < 1e-10 * scale {
            break;
        }
        let k = body.tangent(&u).unwrap();
        Factorization::new(&k, Symmetry::Symmetric)
            .unwrap()
            .solve_in_place(&mut r);
        x.iter_mut().zip(&r).for_each(|(a, b)| *a += b);
    }
    dofmap.scatter(&x, 0.0, &mut u);
    // The mean deflection of the tip face's nodes.
    let tip = &mesh.group("xmax").unwrap().nodes;
    -tip.iter().map(|&a| u[3 * a + 2]).sum::<f64>() / tip.len() as f64
}

#[test]
fn the_gravity_cantilever_settles_within_two_percent_of_euler_bernoulli() {
    let (q, l, i) = (1.0e3 * 9.81 * 0.01, 1.0_f64, 0.1f64.powi(4) / 12.0);
    let eb = |e: f64| q * l.powi(4) / (8.0 * e * i);
    // The showcase (E = 10⁸: a deflection of 1.5 % of the length, where the linear beam holds).
    assert!((eb(1.0e8) - 0.014715).abs() < 1e-6);
    for formulation in [Formulation::Eas, Formulation::OnePoint] {
        let d = gravity_cantilever(1.0e8, formulation, [20, 2, 2]);
        println!(
            "E = 1e8, {formulation} 20x2x2: tip {d:.6} m, {:+.2} % of Euler-Bernoulli {:.6}",
            100.0 * (d / eb(1.0e8) - 1.0),
            eb(1.0e8)
        );
        assert!((d / eb(1.0e8) - 1.0).abs() < 0.02, "{formulation}: {d}");
    }
    // What the input had: E = 10⁷ (15 % of the length: the geometric stiffening is 1-2 %) on
    // the full hex8 at 10×1×1, 35 % short.
    let d = gravity_cantilever(1.0e7, Formulation::Full, [10, 1, 1]);
    println!(
        "E = 1e7, full 10x1x1: tip {d:.5} m, {:+.2} %",
        100.0 * (d / eb(1.0e7) - 1.0)
    );
    assert!(d / eb(1.0e7) < 0.7);
    let d = gravity_cantilever(1.0e7, Formulation::Eas, [20, 2, 2]);
    println!(
        "E = 1e7, eas 20x2x2: tip {d:.5} m, {:+.2} %",
        100.0 * (d / eb(1.0e7) - 1.0)
    );
}
