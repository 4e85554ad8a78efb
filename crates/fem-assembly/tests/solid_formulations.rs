//! The assembled solid with a formulation per cell and with a material given as a trait object:
//! the runs of formulations assemble what the elements give one by one, bitwise the same on one
//! and two threads; the tangent is the Jacobian of the force; a downstream material runs through
//! the same operator.

use std::sync::Arc;

use fem_assembly::{DofMap, SolidOperator};
use fem_elements::solid::element::{Element, gather};
use fem_elements::solid::material::Mat3;
use fem_elements::solid::{Formulation, Hyperelastic, Material, MaterialModel, SolidKind};
use fem_mesh::Mesh;
use fem_mesh::generate::{BoxCells, box_mesh};

/// A 4×2×2 hex8 beam clamped at `xmin`, its cells' formulations cycling through all four.
fn mixed_body(material: impl Into<fem_assembly::SolidMaterial>) -> (Mesh, SolidOperator) {
    let mesh = box_mesh([2.0, 0.5, 0.5], [4, 2, 2], BoxCells::Hex8).unwrap();
    let fixed: Vec<usize> = mesh
        .group("xmin")
        .unwrap()
        .nodes
        .iter()
        .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
        .collect();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let n_cells = mesh.blocks[0].n_cells();
    // Runs of 3, 1, 2, ... cells of each formulation.
    let formulations: Vec<Formulation> = (0..n_cells)
        .map(|c| Formulation::ALL[(c / 3 + c % 2) % 4])
        .collect();
    let body = SolidOperator::with_formulations(
        SolidKind::Hex8,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        &formulations,
        material,
        7.8,
        SolidKind::Hex8.default_lumping(),
        &dofmap,
    )
    .unwrap();
    (mesh, body)
}

fn displacement(mesh: &Mesh, amplitude: f64) -> Vec<f64> {
    mesh.points
        .iter()
        .flat_map(|p| {
            let s = p[0];
            [
                amplitude * s * (p[1] - 0.2),
                amplitude * s * s * 0.5,
                amplitude * (s * p[2]).sin(),
            ]
        })
        .collect()
}

#[test]
fn runs_of_formulations_assemble_the_elements_forces() {
    let m = Material::new(MaterialModel::NeoHookean, 100.0, 0.3).unwrap();
    let (mesh, body) = mixed_body(m);
    let counts = body.formulation_counts();
    assert_eq!(counts.len(), 4, "{counts:?}");
    assert!(body.has_hourglass_control());
    let u = displacement(&mesh, 0.05);
    let nf = body.dofmap().n_free();
    let mut f = vec![0.0; nf];
    body.internal_force(&u, &mut Vec::new(), &mut f).unwrap();
    // By hand: every element's force, scattered in cell order.
    let mut full = vec![0.0; u.len()];
    let mut energy = 0.0;
    let mut hourglass = 0.0;
    let conn = &mesh.blocks[0].connectivity;
    for (c, nodes) in conn.chunks_exact(8).enumerate() {
        let element = Element::new(SolidKind::Hex8, body.formulation(c)).unwrap();
        let x: Vec<[f64; 3]> = nodes.iter().map(|&a| mesh.points[a]).collect();
        let mut geo = vec![0.0; element.geometry_len()];
        element.geometry(&m, &x, &mut geo).unwrap();
        let mut ue = [0.0; 24];
        gather(&u, nodes, &mut ue);
        let mut fe = [0.0; 24];
        assert_eq!(element.force(&m, &geo, &ue, &mut fe), None);
        for (a, &node) in nodes.iter().enumerate() {
            for i in 0..3 {
                full[3 * node + i] += fe[3 * a + i];
            }
        }
        let (e, h) = element.strain_energy(&m, &geo, &ue).unwrap();
        energy += e;
        hourglass += h;
    }
    let mut by_hand = vec![0.0; nf];
    body.dofmap().gather(&full, &mut by_hand);
    let scale = f.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for (a, b) in f.iter().zip(&by_hand) {
        assert!((a - b).abs() < 1e-13 * scale, "{a} vs {b}");
    }
    assert!((body.strain_energy(&u) - energy).abs() < 1e-13 * energy);
    let hg = body.hourglass_energy_sum(&u).value();
    assert!(
        hg > 0.0 && (hg - hourglass).abs() < 1e-13 * hg,
        "{hg} vs {hourglass}"
    );
    // Bitwise the same on one and two threads.
    let run = || {
        let mut f = vec![0.0; nf];
        body.internal_force(&u, &mut Vec::new(), &mut f).unwrap();
        (
            f,
            body.strain_energy(&u),
            body.tangent(&u).unwrap().values().to_vec(),
        )
    };
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    assert_eq!(one.install(run), two.install(run));
}

#[test]
fn the_mixed_tangent_is_the_jacobian_of_the_force() {
    let m = Material::new(MaterialModel::NeoHookeanLog, 50.0, 0.35).unwrap();
    let (mesh, body) = mixed_body(m);
    let u = displacement(&mesh, 0.08);
    let k = body.tangent(&u).unwrap();
    let map = body.dofmap();
    let nf = map.n_free();
    let (mut fp, mut fm, mut slots) = (vec![0.0; nf], vec![0.0; nf], Vec::new());
    let scale = k.values().iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let h = 1e-6;
    for (col, &dof) in map.free_dofs().iter().enumerate().step_by(5) {
        let (mut up, mut um) = (u.clone(), u.clone());
        up[dof] += h;
        um[dof] -= h;
        body.internal_force(&up, &mut slots, &mut fp).unwrap();
        body.internal_force(&um, &mut slots, &mut fm).unwrap();
        for row in 0..nf {
            let fd = (fp[row] - fm[row]) / (2.0 * h);
            let kv = k.get_entry(row, col).map_or(0.0, |e| e.into_value());
            assert!(
                (fd - kv).abs() < 1e-6 * scale,
                "K[{row}][{col}] {kv} vs {fd}"
            );
        }
    }
}

/// A downstream material: the shipped Neo-Hookean behind a trait object, evaluated point by point.
#[derive(Debug)]
struct Wrapped(Material);

impl Hyperelastic for Wrapped {
    fn strain_energy(&self, f: &Mat3) -> f64 {
        self.0.energy(f)
    }
    fn pk2_stress_and_tangent(&self, f: &Mat3) -> ([f64; 6], [[f64; 6]; 6]) {
        self.0.pk2_and_tangent(f)
    }
}

#[test]
fn a_material_behind_a_trait_object_gives_the_same_body() {
    let m = Material::new(MaterialModel::NeoHookean, 100.0, 0.3).unwrap();
    let (mesh, builtin) = mixed_body(m);
    let custom: Arc<dyn Hyperelastic> = Arc::new(Wrapped(m));
    let (_, wrapped) = mixed_body(custom);
    assert!(wrapped.material().builtin().is_none());
    let u = displacement(&mesh, 0.05);
    let nf = builtin.dofmap().n_free();
    let (mut a, mut b) = (vec![0.0; nf], vec![0.0; nf]);
    builtin.internal_force(&u, &mut Vec::new(), &mut a).unwrap();
    wrapped.internal_force(&u, &mut Vec::new(), &mut b).unwrap();
    let scale = a.iter().fold(0.0f64, |x, v| x.max(v.abs()));
    for (x, y) in a.iter().zip(&b) {
        // P = F S point by point against the vectorized P = a F + b cof F: round-off apart.
        assert!((x - y).abs() < 1e-12 * scale, "{x} vs {y}");
    }
    let (ea, eb) = (builtin.strain_energy(&u), wrapped.strain_energy(&u));
    assert!((ea - eb).abs() < 1e-12 * ea);
    let (sa, sb) = (
        builtin.stable_step(&u).unwrap(),
        wrapped.stable_step(&u).unwrap(),
    );
    assert!((sa.dt - sb.dt).abs() < 1e-12 * sa.dt && sa.cell == sb.cell);
}

#[test]
fn a_formulation_that_does_not_apply_is_refused() {
    let mesh = box_mesh([1.0; 3], [1, 1, 1], BoxCells::Tet4).unwrap();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, vec![]);
    let n_cells = mesh.blocks[0].n_cells();
    let e = SolidOperator::with_formulations(
        SolidKind::Tet4,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        &vec![Formulation::Eas; n_cells],
        Material::new(MaterialModel::NeoHookean, 1.0, 0.3).unwrap(),
        1.0,
        SolidKind::Tet4.default_lumping(),
        &dofmap,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("'eas'") && e.to_string().contains("tet4"),
        "{e}"
    );
}
