//! Builders shared by the tests: boxes of solid cells as systems, and run helpers.
#![allow(dead_code)]

use fem_assembly::{DofMap, SolidOperator};
use fem_elements::solid::{Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};
use fem_solid::{SolidMass, SolidSystem};
use fem_time::NodalStepper;

/// A box `lengths` of `cells` (hex8, tet4 or tet10) with its points shifted by `origin`.
pub struct BoxBody {
    pub points: Vec<[f64; 3]>,
    pub connectivity: Vec<usize>,
    pub kind: SolidKind,
    /// Nodes of the group `zmin` (for clamping).
    pub zmin: Vec<usize>,
    pub zmax: Vec<usize>,
}

pub fn box_body(
    lengths: [f64; 3],
    cells: [usize; 3],
    kind: SolidKind,
    origin: [f64; 3],
) -> BoxBody {
    let generator = match kind {
        SolidKind::Hex8 => BoxCells::Hex8,
        SolidKind::Tet4 => BoxCells::Tet4,
        SolidKind::Tet10 => BoxCells::Tet10,
        SolidKind::Hex20 => BoxCells::Hex20,
        SolidKind::Hex27 => BoxCells::Hex27,
    };
    let mesh = box_mesh(lengths, cells, generator).unwrap();
    let points = mesh
        .points
        .iter()
        .map(|p| std::array::from_fn(|i| p[i] + origin[i]))
        .collect();
    BoxBody {
        points,
        connectivity: mesh.blocks[0].connectivity.clone(),
        kind,
        zmin: mesh.group("zmin").unwrap().nodes.clone(),
        zmax: mesh.group("zmax").unwrap().nodes.clone(),
    }
}

/// The system of `body` with `material`, density `rho`, the `fixed` nodes clamped.
pub fn system(
    body: &BoxBody,
    model: MaterialModel,
    young: f64,
    poisson: f64,
    rho: f64,
    fixed_nodes: &[usize],
    mass: SolidMass,
) -> SolidSystem {
    let fixed: Vec<usize> = fixed_nodes
        .iter()
        .flat_map(|&n| (0..3).map(move |c| 3 * n + c))
        .collect();
    let dofmap = DofMap::with_fixed(body.points.len(), 3, fixed);
    let material = Material::new(model, young, poisson).unwrap();
    let operator = SolidOperator::new(
        body.kind,
        &body.points,
        &body.connectivity,
        material,
        rho,
        body.kind.default_lumping(),
        &dofmap,
    )
    .unwrap();
    SolidSystem::new(operator, mass).unwrap()
}

/// Free-dof values of a field `f(X)` (3 components) on the system's free dofs.
pub fn field(system: &SolidSystem, f: impl Fn([f64; 3]) -> [f64; 3]) -> Vec<f64> {
    let op = system.operator();
    op.dofmap()
        .free_dofs()
        .iter()
        .map(|&g| f(op.points()[g / 3])[g % 3])
        .collect()
}

/// Steps until `t_end` (a whole number of steps).
pub fn run_to<S: NodalStepper + ?Sized>(stepper: &mut S, t_end: f64) {
    let n = (t_end / stepper.dt()).round() as u64;
    assert!((n as f64 * stepper.dt() - t_end).abs() < 1e-12 * t_end.max(1.0));
    while stepper.step_index() < n {
        stepper.step().unwrap();
    }
}

/// Max-norm of `a − b`.
pub fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

/// Observed orders `log2(e_i / e_{i+1})`.
pub fn orders(errors: &[f64]) -> Vec<f64> {
    errors.windows(2).map(|w| (w[0] / w[1]).log2()).collect()
}
