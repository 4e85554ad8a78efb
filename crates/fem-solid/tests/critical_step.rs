//! The explicit critical step against the true stability limit `2/√λ_max(M⁻¹K)` from a dense
//! eigensolver, on regular and distorted meshes, every element and a deformed state: within
//! 1.5× of the limit and never above it (the goal of issue 25); the element bound alone is 5×
//! too cautious when one cell is squashed to 1/20. DEF_EXP at the estimate stays bounded; at
//! 1.03× the true limit it blows up.

mod common;

use common::{BoxBody, box_body};
use fem_assembly::{DofMap, SolidOperator};
use fem_elements::solid::{Formulation, Material, MaterialModel, SolidKind};
use fem_solid::{SolidMass, SolidSystem};
use fem_time::leapfrog::spectral::{self, CriticalStep};
use fem_time::{CriticalStepCheck, DefExp};
use fem_time::{Mass, SecondOrderSystem, StepSettings, Stepper};
use nalgebra::DMatrix;

/// The body with every cell of `formulation`, clamped on `zmin`.
fn system_of(body: &BoxBody, formulation: Formulation, model: MaterialModel) -> SolidSystem {
    let fixed: Vec<usize> = body
        .zmin
        .iter()
        .flat_map(|&n| (0..3).map(move |c| 3 * n + c))
        .collect();
    let dofmap = DofMap::with_fixed(body.points.len(), 3, fixed);
    let n_cells = body.connectivity.len() / body.kind.n_nodes();
    let operator = SolidOperator::with_formulations(
        body.kind,
        &body.points,
        &body.connectivity,
        &vec![formulation; n_cells],
        Material::new(model, 2.0e5, 0.3).unwrap(),
        1000.0,
        body.kind.default_lumping(),
        &dofmap,
    )
    .unwrap();
    SolidSystem::new(operator, SolidMass::Lumped).unwrap()
}

/// The true `λ_max(M⁻¹ K(x))`.
fn true_lambda(system: &SolidSystem, x: &[f64]) -> f64 {
    let k = system.tangent(x).unwrap().to_csr().into_owned();
    let Mass::Lumped(m) = system.mass() else {
        unreachable!()
    };
    let n = m.len();
    let mut a = DMatrix::zeros(n, n);
    for (i, j, v) in k.triplet_iter() {
        a[(i, j)] = v / (m[i] * m[j]).sqrt();
    }
    let a = 0.5 * (&a + a.transpose());
    a.symmetric_eigenvalues().max()
}

fn estimate(system: &SolidSystem, x: &[f64]) -> CriticalStep {
    let element = system.critical_step(x).unwrap();
    spectral::refine(system, x, element).unwrap()
}

/// `(estimate / true limit, element bound / true limit)` of the step.
fn ratios(system: &SolidSystem, x: &[f64]) -> (f64, f64, CriticalStep) {
    let exact = 2.0 / true_lambda(system, x).sqrt();
    let e = estimate(system, x);
    (e.step.dt / exact, e.element.dt / exact, e)
}

#[test]
fn within_one_and_a_half_of_the_limit_and_never_above_on_a_regular_mesh() {
    for (kind, formulation, n) in [
        (SolidKind::Hex8, Formulation::Full, [3, 3, 4]),
        (SolidKind::Hex8, Formulation::Eas, [3, 3, 4]),
        (SolidKind::Hex8, Formulation::FBar, [3, 3, 4]),
        (SolidKind::Hex8, Formulation::OnePoint, [3, 3, 4]),
        (SolidKind::Tet4, Formulation::Full, [2, 2, 2]),
        (SolidKind::Tet10, Formulation::Full, [1, 1, 2]),
        (SolidKind::Hex20, Formulation::Full, [2, 2, 2]),
        (SolidKind::Hex27, Formulation::Full, [1, 1, 2]),
    ] {
        let body = box_body([0.3, 0.3, 0.4], n, kind, [0.0; 3]);
        let system = system_of(&body, formulation, MaterialModel::NeoHookean);
        let x = vec![0.0; system.n_dofs()];
        let (r, r_element, e) = ratios(&system, &x);
        println!(
            "{kind} {formulation}: estimate/limit {r:.4}, element bound/limit {r_element:.4}, {} products",
            e.iterations
        );
        assert!(
            r <= 1.0 + 1e-9,
            "{kind} {formulation}: above the limit ({r})"
        );
        assert!(r >= 1.0 / 1.5, "{kind} {formulation}: {r}");
        assert!(
            r >= r_element - 1e-12,
            "never looser than the element bound"
        );
    }
}

/// A 6×3×3 hex8 column whose third layer of cells is squashed to 1/20 of the others.
fn squashed_column(kind: SolidKind) -> BoxBody {
    let mut body = box_body([0.3, 0.3, 0.6], [3, 3, 6], kind, [0.0; 3]);
    // Layers at z = 0.1 k; the plane z = 0.3 moves to z = 0.205 (cell height 0.005 = 1/20).
    for p in body.points.iter_mut() {
        let z = p[2];
        p[2] = if z <= 0.2 + 1e-9 {
            z
        } else if z <= 0.3 + 1e-9 {
            0.2 + (z - 0.2) * 0.05
        } else {
            0.205 + (z - 0.3) * (0.6 - 0.205) / 0.3
        };
    }
    body
}

#[test]
fn a_squashed_cell_no_longer_makes_the_step_five_times_too_small() {
    for (kind, formulation) in [
        (SolidKind::Hex8, Formulation::Full),
        (SolidKind::Hex8, Formulation::OnePoint),
        (SolidKind::Tet4, Formulation::Full),
    ] {
        let body = squashed_column(kind);
        let system = system_of(&body, formulation, MaterialModel::SaintVenantKirchhoff);
        let x = vec![0.0; system.n_dofs()];
        let (r, r_element, e) = ratios(&system, &x);
        println!(
            "squashed {kind} {formulation}: estimate/limit {r:.4}, element bound/limit {r_element:.4}, {} products",
            e.iterations
        );
        assert!(r <= 1.0 + 1e-9, "{kind}: above the limit ({r})");
        assert!(r >= 1.0 / 1.5, "{kind}: {r}");
    }
    // The element bound alone is far from the limit there (the 5.2×).
    let body = squashed_column(SolidKind::Hex8);
    let system = system_of(
        &body,
        Formulation::Full,
        MaterialModel::SaintVenantKirchhoff,
    );
    let x = vec![0.0; system.n_dofs()];
    let (_, r_element, _) = ratios(&system, &x);
    assert!(r_element < 1.0 / 3.0, "{r_element}");
}

#[test]
fn a_deformed_body_and_its_recheck() {
    // A stretched and twisted column: the estimate at the deformed state, then a re-check
    // from the undeformed state's mode.
    let body = box_body([0.3, 0.3, 0.6], [3, 3, 6], SolidKind::Hex8, [0.0; 3]);
    let system = system_of(&body, Formulation::Eas, MaterialModel::NeoHookean);
    let x0 = vec![0.0; system.n_dofs()];
    let first = estimate(&system, &x0);
    let x = common::field(&system, |p| {
        let (s, c) = ((2.0 * p[2]).sin(), 0.2 * p[2]);
        [
            c * (p[1] - 0.15) * s,
            -c * (p[0] - 0.15) * s,
            0.3 * p[2] * p[2],
        ]
    });
    let exact = 2.0 / true_lambda(&system, &x).sqrt();
    let fresh = estimate(&system, &x);
    let re = spectral::recheck(&system, &x, &first).unwrap();
    for (what, e) in [("fresh", &fresh), ("re-check", &re)] {
        let r = e.step.dt / exact;
        println!(
            "deformed, {what}: estimate/limit {r:.4}, {} products",
            e.iterations
        );
        assert!((1.0 / 1.5..=1.0 + 1e-9).contains(&r), "{what}: {r}");
    }
}

#[test]
fn def_exp_is_stable_at_the_estimate() {
    // A linear body (SVK, small motion) started with a rough velocity: at the estimate (within
    // a few per cent of the true limit on this squashed mesh) the energy stays bounded over
    // many steps; a step above the estimate is refused before the first step.
    let body = squashed_column(SolidKind::Hex8);
    let system = system_of(
        &body,
        Formulation::Full,
        MaterialModel::SaintVenantKirchhoff,
    );
    let n = system.n_dofs();
    let x0 = vec![0.0; n];
    let e = estimate(&system, &x0);
    let v0: Vec<f64> = (0..n).map(|i| 1e-6 * ((i as f64) * 2.37).sin()).collect();
    let mass = match system.mass() {
        Mass::Lumped(m) => m.clone(),
        Mass::Consistent(_) => unreachable!(),
    };
    let start: f64 = 0.5 * v0.iter().zip(&mass).map(|(v, m)| m * v * v).sum::<f64>();
    let mut s = DefExp::new(
        system.clone(),
        StepSettings::new(e.step.dt),
        &x0,
        &v0,
        CriticalStepCheck::every(0),
    )
    .unwrap();
    for _ in 0..5000 {
        s.step().unwrap();
    }
    let total = s.energy().unwrap().total;
    assert!(total < 1.5 * start, "{total} vs {start}");
    let above = DefExp::new(
        system,
        StepSettings::new(1.001 * e.step.dt),
        &x0,
        &v0,
        CriticalStepCheck::every(0),
    );
    assert!(above.is_err());
}

#[test]
fn the_gmsh_tet10_column_and_its_poor_cell() {
    // meshes/column_tet10.msh: one poor cell makes the element bound 38 times below the
    // median cell's; the assembled body's limit is an order of magnitude above it.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../meshes/column_tet10.msh");
    let mesh = fem_mesh::read_msh(std::path::Path::new(path)).unwrap();
    let group = mesh.group("column").unwrap();
    let connectivity: Vec<usize> = group
        .cells
        .iter()
        .flat_map(|&(b, c)| mesh.blocks[b].cell(c).to_vec())
        .collect();
    let bottom = &mesh.group("bottom").unwrap().nodes;
    let on_solid: std::collections::HashSet<usize> = connectivity.iter().copied().collect();
    let fixed: Vec<usize> = (0..mesh.n_nodes())
        .filter(|n| bottom.contains(n) || !on_solid.contains(n))
        .flat_map(|n| (0..3).map(move |c| 3 * n + c))
        .collect();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let operator = SolidOperator::new(
        SolidKind::Tet10,
        &mesh.points,
        &connectivity,
        Material::new(MaterialModel::NeoHookean, 1e6, 0.3).unwrap(),
        1000.0,
        SolidKind::Tet10.default_lumping(),
        &dofmap,
    )
    .unwrap();
    let system = SolidSystem::new(operator, SolidMass::Lumped).unwrap();
    let x = vec![0.0; system.n_dofs()];
    let (r, r_element, e) = ratios(&system, &x);
    println!(
        "column tet10: estimate/limit {r:.4}, element bound/limit {r_element:.4}, {} products",
        e.iterations
    );
    assert!((1.0 / 1.5..=1.0 + 1e-9).contains(&r), "{r}");
    assert!(r_element < 0.2, "{r_element}");
}
