//! The assembled solid with a formulation per cell and with a material given as a trait object:
//! the runs of formulations assemble what the elements give one by one, bitwise the same on one
//! and two threads; the tangent is the Jacobian of the force; a downstream material runs through
//! the same operator.

use std::sync::Arc;

use fem_assembly::{DofMap, ExactSum, SolidOperator};
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

/// The check's pass over the cells without an operator gives the operator's cell eigenvalues
/// at `u = 0` bitwise, on cells of one shape (its cache of shapes) and of many (a perturbed
/// box), for the four hex8 formulations and for tet10; and its nodal masses are the
/// operator's lumped mass.
#[test]
fn reference_cell_eigenvalues_are_the_operators_without_building_it() {
    use fem_assembly::solid::{SolidMaterial, reference_cell_eigenvalues, reference_nodal_mass};
    let material = Material::new(MaterialModel::NeoHookean, 2.0e5, 0.3).unwrap();
    for (kind, cells, perturbed) in [
        (SolidKind::Hex8, BoxCells::Hex8, false),
        (SolidKind::Hex8, BoxCells::Hex8, true),
        (SolidKind::Tet10, BoxCells::Tet10, true),
    ] {
        let mut mesh = box_mesh([2.0, 0.5, 0.5], [6, 3, 2], cells).unwrap();
        if perturbed {
            for (i, p) in mesh.points.iter_mut().enumerate() {
                let s = (i as f64 * 0.7).sin();
                p[0] += 0.004 * s;
                p[1] += 0.002 * (i as f64 * 1.3).cos();
                p[2] -= 0.003 * s * s;
            }
        }
        let block = &mesh.blocks[0];
        let n_cells = block.n_cells();
        let formulations: Vec<Formulation> = match kind {
            SolidKind::Hex8 => (0..n_cells)
                .map(|c| Formulation::ALL[(c / 3 + c % 2) % 4])
                .collect(),
            _ => Vec::new(),
        };
        let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, Vec::new());
        let lumping = kind.default_lumping();
        let body = SolidOperator::with_formulations(
            kind,
            &mesh.points,
            &block.connectivity,
            &formulations,
            material,
            7.8,
            lumping,
            &dofmap,
        )
        .unwrap();
        let expected = body
            .cell_eigenvalues(&vec![0.0; 3 * mesh.n_nodes()])
            .unwrap();
        let got = reference_cell_eigenvalues(
            kind,
            &mesh.points,
            &block.connectivity,
            &formulations,
            &SolidMaterial::from(material),
            7.8,
        )
        .unwrap();
        assert_eq!(got.len(), n_cells);
        for (c, (a, b)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "{kind} perturbed {perturbed}: cell {c}"
            );
        }
        let distinct = {
            let mut v: Vec<u64> = got.iter().map(|l| l.to_bits()).collect();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        // The unperturbed box repeats a few shapes (one per formulation and rounding of its
        // coordinates); the perturbed one has as many as cells.
        if perturbed {
            assert_eq!(distinct, n_cells, "{kind}");
        }
        let masses =
            reference_nodal_mass(kind, &mesh.points, &block.connectivity, 7.8, lumping).unwrap();
        for (f, &g) in dofmap.free_dofs().iter().enumerate() {
            let m = body.lumped_mass()[f];
            assert!(
                (masses[g / 3] - m).abs() <= 1e-14 * m,
                "{kind}: node {} mass {} against {m}",
                g / 3,
                masses[g / 3]
            );
        }
    }
}

/// The pass refuses what the operator refuses, naming the same cell: an inverted cell.
#[test]
fn reference_cell_eigenvalues_name_an_inverted_cell() {
    use fem_assembly::SolidError;
    use fem_assembly::solid::{SolidMaterial, reference_cell_eigenvalues};
    let material = Material::new(MaterialModel::NeoHookean, 2.0e5, 0.3).unwrap();
    let mesh = box_mesh([2.0, 0.5, 0.5], [4, 1, 1], BoxCells::Hex8).unwrap();
    let mut connectivity = mesh.blocks[0].connectivity.clone();
    // Cell 2 turned inside out (two faces swapped).
    let c = &mut connectivity[16..24];
    let (bottom, top) = c.split_at_mut(4);
    bottom.swap_with_slice(top);
    let got = reference_cell_eigenvalues(
        SolidKind::Hex8,
        &mesh.points,
        &connectivity,
        &[],
        &SolidMaterial::from(material),
        7.8,
    );
    assert!(
        matches!(got, Err(SolidError::InvertedCell { cell: 2, .. })),
        "{got:?}"
    );
}

/// The body's strain energy reads the `one_point` groups as whole lanes: on a distorted mesh of
/// 720 cells whose `one_point` run starts at cell 3 (so that the parallel tasks of 512 cells
/// begin inside a group, at lane 5), the energy and its hourglass part are the exact sums of
/// the per-cell energies bit for bit, on one and two threads; the first-order change of the
/// energy along a direction is the force's work (the force is its gradient).
#[test]
fn the_grouped_energy_is_the_sum_of_the_cells_energies_bit_for_bit() {
    let m = Material::new(MaterialModel::NeoHookean, 100.0, 0.3).unwrap();
    let mut mesh = box_mesh([2.0, 1.0, 1.0], [10, 9, 8], BoxCells::Hex8).unwrap();
    for p in mesh.points.iter_mut() {
        let (x, y, z) = (p[0], p[1], p[2]);
        *p = [
            x + 0.03 * (3.0 * y).sin() * z,
            y + 0.02 * (2.0 * x).cos(),
            z + 0.025 * (x * y * 5.0).sin(),
        ];
    }
    let conn = mesh.blocks[0].connectivity.clone();
    let n_cells = conn.len() / 8;
    assert_eq!(n_cells, 720);
    let formulations: Vec<Formulation> = (0..n_cells)
        .map(|c| {
            if c < 3 {
                Formulation::Full
            } else {
                Formulation::OnePoint
            }
        })
        .collect();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, vec![]);
    let body = SolidOperator::with_formulations(
        SolidKind::Hex8,
        &mesh.points,
        &conn,
        &formulations,
        m,
        7.8,
        SolidKind::Hex8.default_lumping(),
        &dofmap,
    )
    .unwrap();
    let u = displacement(&mesh, 0.08);
    // By hand: each cell's geometry from its nodes relative to its first node (as the body
    // computes it) and its energy cell by cell.
    let (mut total, mut hourglass) = (Vec::new(), Vec::new());
    for (c, nodes) in conn.chunks_exact(8).enumerate() {
        let element = Element::new(SolidKind::Hex8, formulations[c]).unwrap();
        let o = mesh.points[nodes[0]];
        let x: Vec<[f64; 3]> = nodes
            .iter()
            .map(|&a| std::array::from_fn(|i| mesh.points[a][i] - o[i]))
            .collect();
        let mut geo = vec![0.0; element.geometry_len()];
        element.geometry(&m, &x, &mut geo).unwrap();
        let mut ue = [0.0; 24];
        gather(&u, nodes, &mut ue);
        let (e, h) = element.strain_energy(&m, &geo, &ue).unwrap();
        total.push(e);
        hourglass.push(h);
    }
    let run = || {
        (
            body.strain_energy(&u).to_bits(),
            body.hourglass_energy_sum(&u).value().to_bits(),
        )
    };
    let expected = (
        ExactSum::of(total.iter().copied()).to_bits(),
        ExactSum::of(hourglass.iter().copied()).to_bits(),
    );
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        assert_eq!(pool.install(run), expected, "{threads} threads");
    }
    let hg = f64::from_bits(expected.1);
    assert!(hg > 0.0 && hg < f64::from_bits(expected.0));
    // The force is the energy's gradient: (E(u + h d) − E(u − h d)) / 2h = f · d.
    let d: Vec<f64> = (0..u.len()).map(|i| ((i as f64) * 0.37).sin()).collect();
    let h = 1e-6;
    let shifted = |s: f64| -> Vec<f64> { u.iter().zip(&d).map(|(a, b)| a + s * b).collect() };
    let de = (body.strain_energy(&shifted(h)) - body.strain_energy(&shifted(-h))) / (2.0 * h);
    let mut f = vec![0.0; dofmap.n_free()];
    body.internal_force(&u, &mut Vec::new(), &mut f).unwrap();
    let work: f64 = f.iter().zip(&d).map(|(a, b)| a * b).sum();
    assert!((de - work).abs() < 1e-6 * work.abs(), "{de} vs {work}");
}

/// A history row asks for the strain energy and its hourglass part at the same displacement:
/// the pass that sums the strain energy keeps the hourglass part, which the row then takes —
/// the same bits as the separate pass over the `one_point` cells; at another displacement (or
/// before any strain energy) the hourglass part is still that of its own displacement.
#[test]
fn the_hourglass_energy_of_the_strain_energys_pass_is_the_separate_pass_bit_for_bit() {
    let (mesh, body) = mixed_body(Material::new(MaterialModel::NeoHookean, 100.0, 0.3).unwrap());
    assert!(body.has_hourglass_control());
    let (u, v) = (displacement(&mesh, 0.08), displacement(&mesh, -0.05));
    let bits = |s: ExactSum| s.value().to_bits();
    let separate = (
        bits(body.hourglass_energy_pass(&u)),
        bits(body.hourglass_energy_pass(&v)),
    );
    assert_ne!(separate.0, separate.1);
    assert!(f64::from_bits(separate.0) > 0.0);
    // Before any strain energy: the pass of its own.
    assert_eq!(bits(body.hourglass_energy_sum(&v)), separate.1);
    let (total, hourglass) = body.strain_and_hourglass_energy_sums(&u);
    assert_eq!(bits(hourglass.clone()), separate.0);
    assert_eq!(bits(total), body.strain_energy(&u).to_bits());
    // The row after the strain energy at u: the kept part, the same bits.
    assert_eq!(
        bits(body.strain_energy_sum(&u)),
        body.strain_energy(&u).to_bits()
    );
    assert_eq!(bits(body.hourglass_energy_sum(&u)), separate.0);
    // Another displacement is not answered from the kept one.
    assert_eq!(bits(body.hourglass_energy_sum(&v)), separate.1);
    let mut w = u.clone();
    w[3 * mesh.n_nodes() - 1] += 1e-3;
    assert_eq!(
        bits(body.hourglass_energy_sum(&w)),
        bits(body.hourglass_energy_pass(&w))
    );
}
