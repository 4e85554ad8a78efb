//! The assembled solid: determinism across thread counts, tangent against the force, masses,
//! loads, stable step and error reporting.

use fem_assembly::solid::face_traction_vector;
use fem_assembly::{DofMap, SolidError, SolidOperator, sparse};
use fem_elements::solid::{Lumping, Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};
use fem_mesh::{CellKind, Mesh};
use nalgebra::DMatrix;

fn solid_kind(cells: BoxCells) -> SolidKind {
    match cells {
        BoxCells::Hex8 => SolidKind::Hex8,
        BoxCells::Tet4 => SolidKind::Tet4,
        BoxCells::Tet10 => SolidKind::Tet10,
        BoxCells::Hex20 => SolidKind::Hex20,
        BoxCells::Hex27 => SolidKind::Hex27,
    }
}

/// A box with the `xmin` face clamped.
fn clamped_box(cells: BoxCells, n: [usize; 3], model: MaterialModel) -> (Mesh, SolidOperator) {
    let mesh = box_mesh([1.0, 0.6, 0.8], n, cells).unwrap();
    let fixed = mesh
        .group("xmin")
        .unwrap()
        .nodes
        .iter()
        .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
        .collect::<Vec<_>>();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let kind = solid_kind(cells);
    let material = Material::new(model, 200.0, 0.3).unwrap();
    let body = SolidOperator::new(
        kind,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        material,
        7.8,
        kind.default_lumping(),
        &dofmap,
    )
    .unwrap();
    (mesh, body)
}

/// A smooth displacement (zero on `xmin`) of a few percent.
fn displacement(mesh: &Mesh, amplitude: f64) -> Vec<f64> {
    mesh.points
        .iter()
        .flat_map(|p| {
            let s = p[0];
            [
                amplitude * s * (p[1] + 0.3 * p[2]),
                amplitude * s * s * (1.0 - p[2]),
                amplitude * (s * p[1]).sin(),
            ]
        })
        .collect()
}

#[test]
fn results_are_bitwise_equal_on_one_and_two_threads() {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for (cells, n) in [
        (BoxCells::Hex8, [12, 8, 8]),
        (BoxCells::Tet10, [6, 4, 4]),
        (BoxCells::Tet4, [8, 6, 6]),
    ] {
        let (mesh, body) = clamped_box(cells, n, MaterialModel::NeoHookean);
        assert!(body.n_cells() > 512, "more cells than one parallel task");
        let u = displacement(&mesh, 0.05);
        let run = || {
            let mut f = vec![0.0; body.dofmap().n_free()];
            body.internal_force(&u, &mut Vec::new(), &mut f).unwrap();
            let k = body.tangent(&u).unwrap();
            let e = body.strain_energy(&u);
            let dt = body.stable_step(&u).unwrap();
            (f, k.values().to_vec(), e, dt)
        };
        let (f1, k1, e1, dt1) = one.install(run);
        let (f2, k2, e2, dt2) = two.install(run);
        assert_eq!(f1, f2);
        assert_eq!(k1, k2);
        assert_eq!(e1.to_bits(), e2.to_bits());
        assert_eq!(dt1, dt2);
        let build = || {
            clamped_box(cells, n, MaterialModel::NeoHookean)
                .1
                .lumped_mass()
                .to_vec()
        };
        assert_eq!(one.install(build), two.install(build));
    }
}

#[test]
fn tangent_is_the_jacobian_of_the_assembled_force() {
    for cells in [
        BoxCells::Hex8,
        BoxCells::Tet4,
        BoxCells::Tet10,
        BoxCells::Hex20,
        BoxCells::Hex27,
    ] {
        let (mesh, body) = clamped_box(cells, [2, 2, 1], MaterialModel::SaintVenantKirchhoff);
        let u = displacement(&mesh, 0.1);
        let k = body.tangent(&u).unwrap();
        let map = body.dofmap();
        let nf = map.n_free();
        let (mut fp, mut fm, mut slots) = (vec![0.0; nf], vec![0.0; nf], Vec::new());
        let scale = k.values().iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let h = 1e-6;
        for (col, &dof) in map.free_dofs().iter().enumerate() {
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
                    "{cells:?} K[{row}][{col}] {kv} vs {fd}"
                );
            }
        }
        // Energy balance: dU = f · du along the path.
        let du: Vec<f64> = u.iter().map(|v| 1e-6 * v).collect();
        let up: Vec<f64> = u.iter().zip(&du).map(|(a, b)| a + b).collect();
        let umid: Vec<f64> = u.iter().zip(&du).map(|(a, b)| a + 0.5 * b).collect();
        let mut f = vec![0.0; nf];
        body.internal_force(&umid, &mut slots, &mut f).unwrap();
        let mut du_free = vec![0.0; nf];
        map.gather(&du, &mut du_free);
        let work: f64 = f.iter().zip(&du_free).map(|(a, b)| a * b).sum();
        let d_energy = body.strain_energy(&up) - body.strain_energy(&u);
        assert!(
            (work - d_energy).abs() < 1e-9 * d_energy.abs(),
            "{cells:?}: {work} vs {d_energy}"
        );
    }
}

#[test]
fn masses_and_loads_add_up() {
    let volume = 1.0 * 0.6 * 0.8;
    let rho = 7.8;
    for cells in [
        BoxCells::Hex8,
        BoxCells::Tet4,
        BoxCells::Tet10,
        BoxCells::Hex20,
        BoxCells::Hex27,
    ] {
        let mesh = box_mesh([1.0, 0.6, 0.8], [3, 2, 2], cells).unwrap();
        let dofmap = DofMap::new(mesh.n_nodes(), 3);
        let kind = solid_kind(cells);
        let material = Material::new(MaterialModel::NeoHookean, 1.0, 0.3).unwrap();
        let conn = &mesh.blocks[0].connectivity;
        let body = SolidOperator::new(
            kind,
            &mesh.points,
            conn,
            material,
            rho,
            kind.default_lumping(),
            &dofmap,
        )
        .unwrap();
        let m = body.lumped_mass();
        assert!(m.iter().all(|&v| v > 0.0));
        assert!(
            (m.iter().sum::<f64>() - 3.0 * rho * volume).abs() < 1e-12,
            "{kind}"
        );
        let mc = body.consistent_mass().unwrap();
        let ones = vec![1.0; dofmap.n_free()];
        assert!((sparse::bilinear(&mc, &ones, &ones) - 3.0 * rho * volume).abs() < 1e-12);
        // Body force ρ g sums to the weight.
        let f = body.body_force([0.0, 0.0, -9.81 * rho]);
        let fz: f64 = f.iter().skip(2).step_by(3).sum();
        assert!((fz + 9.81 * rho * volume).abs() < 1e-11, "{kind}");
        let props = body.mass_properties();
        assert!(
            (props.mass - rho * volume).abs() < 1e-13 * rho * volume,
            "{kind}"
        );
        // A traction on the xmax face sums to t × area.
        let face_kind = kind.face_kind();
        let group = mesh.group("xmax").unwrap();
        let faces: Vec<usize> = group
            .cells
            .iter()
            .flat_map(|&(b, c)| mesh.blocks[b].cell(c).to_vec())
            .collect();
        assert_eq!(mesh.blocks[1].kind.n_nodes(), face_kind.n_nodes());
        let (t, area) =
            face_traction_vector(face_kind, &mesh.points, &faces, [1.0, 2.0, -3.0], &dofmap);
        assert!((area - 0.48).abs() < 1e-14);
        for i in 0..3 {
            let total: f64 = t.iter().skip(i).step_by(3).sum();
            assert!(
                (total - [1.0, 2.0, -3.0][i] * 0.48).abs() < 1e-13,
                "{kind} {i}"
            );
        }
    }
    // Row-sum lumping of tet10 is refused, naming the cell.
    let mesh = box_mesh([1.0; 3], [1, 1, 1], BoxCells::Tet10).unwrap();
    let material = Material::new(MaterialModel::NeoHookean, 1.0, 0.3).unwrap();
    let err = SolidOperator::new(
        SolidKind::Tet10,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        material,
        1.0,
        Lumping::RowSum,
        &DofMap::new(mesh.n_nodes(), 3),
    )
    .unwrap_err();
    assert!(matches!(err, SolidError::Mass { cell: 0, .. }), "{err}");
    assert!(err.to_string().contains("HRZ"), "{err}");
}

#[test]
fn stable_step_bounds_the_global_eigenvalue() {
    // Small meshes: the dense generalized eigenproblem of the assembled K and lumped M.
    for (cells, n) in [
        (BoxCells::Hex8, [3, 2, 2]),
        (BoxCells::Tet4, [2, 2, 1]),
        (BoxCells::Tet10, [1, 1, 1]),
    ] {
        let (mesh, body) = clamped_box(cells, n, MaterialModel::NeoHookean);
        for amplitude in [0.0, 0.1] {
            let u = displacement(&mesh, amplitude);
            let k = body.tangent(&u).unwrap();
            let m = body.lumped_mass();
            let nf = m.len();
            let a = DMatrix::from_fn(nf, nf, |i, j| {
                k.get_entry(i, j).map_or(0.0, |e| e.into_value()) / (m[i] * m[j]).sqrt()
            });
            let global = a.symmetric_eigenvalues().max();
            let estimate = body.stable_step(&u).unwrap();
            assert!(
                estimate.lambda_max >= global * (1.0 - 1e-12),
                "{cells:?}: {} < {global}",
                estimate.lambda_max
            );
            eprintln!(
                "{cells:?} amplitude {amplitude}: element bound / global = {:.3}",
                estimate.lambda_max / global
            );
            // Irons' bound is not loose on these meshes.
            assert!(
                estimate.lambda_max <= 3.0 * global,
                "{cells:?}: {} vs {global}",
                estimate.lambda_max
            );
            assert!((estimate.dt - 2.0 / estimate.lambda_max.sqrt()).abs() < 1e-15 * estimate.dt);
        }
    }
}

#[test]
fn inverted_cells_are_named() {
    // A mirrored cell in the mesh is refused on construction.
    let mut mesh = box_mesh([1.0; 3], [2, 1, 1], BoxCells::Hex8).unwrap();
    mesh.blocks[0].connectivity[8..16].rotate_left(4); // cell 1: swap its bottom and top faces
    let conn = &mesh.blocks[0].connectivity;
    let material = Material::new(MaterialModel::NeoHookean, 1.0, 0.3).unwrap();
    let dofmap = DofMap::new(mesh.n_nodes(), 3);
    let err = SolidOperator::new(
        SolidKind::Hex8,
        &mesh.points,
        conn,
        material,
        1.0,
        Lumping::RowSum,
        &dofmap,
    )
    .unwrap_err();
    assert!(
        matches!(err, SolidError::InvertedCell { cell: 1, .. }),
        "{err}"
    );
    // A displacement that squashes cell 1 through itself is reported after the force is computed.
    let mesh = box_mesh([1.0; 3], [2, 1, 1], BoxCells::Hex8).unwrap();
    let body = SolidOperator::new(
        SolidKind::Hex8,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        material,
        1.0,
        Lumping::RowSum,
        &dofmap,
    )
    .unwrap();
    let u: Vec<f64> = mesh
        .points
        .iter()
        .flat_map(|p| [0.0, 0.0, if p[0] > 0.75 { -2.5 * p[2] } else { 0.0 }])
        .collect();
    let mut f = vec![0.0; dofmap.n_free()];
    let err = body
        .internal_force(&u, &mut Vec::new(), &mut f)
        .unwrap_err();
    assert_eq!(
        err,
        SolidError::Inverted {
            kind: SolidKind::Hex8,
            cell: 1
        }
    );
    assert!(body.stable_step(&u).is_err() && body.tangent(&u).is_err());
    // The mesh kind check the lead relies on: box faces of a tet10 box are tri6.
    assert_eq!(
        box_mesh([1.0; 3], [1, 1, 1], BoxCells::Tet10)
            .unwrap()
            .blocks[1]
            .kind,
        CellKind::Tri6
    );
}

#[test]
fn assembled_patch_test_of_every_kind() {
    // Through the operator (for hex8 this is the sum-factorized kernel): an affine motion of
    // a distorted 3×3×3 patch leaves every interior node in equilibrium.
    let a = [[0.12, -0.05, 0.03], [0.04, -0.08, 0.06], [-0.02, 0.05, 0.1]];
    for cells in [
        BoxCells::Hex8,
        BoxCells::Tet4,
        BoxCells::Tet10,
        BoxCells::Hex20,
        BoxCells::Hex27,
    ] {
        let mut mesh = box_mesh([1.0; 3], [3, 3, 3], cells).unwrap();
        let kind = solid_kind(cells);
        let interior = |p: &[f64; 3]| p.iter().all(|&c| c > 1e-9 && c < 1.0 - 1e-9);
        for (i, p) in mesh.points.iter_mut().enumerate().take(64) {
            if interior(p) {
                let s = i as f64;
                p[0] += 0.05 * (1.3 * s).sin();
                p[1] += 0.05 * (2.1 * s).cos();
                p[2] += 0.04 * (0.7 * s).sin();
            }
        }
        if kind == SolidKind::Tet10 {
            // Straight edges: mid-edge nodes back to the midpoints of the moved corners.
            let conn = mesh.blocks[0].connectivity.clone();
            for cell in conn.chunks_exact(10) {
                for (e, (p, q)) in fem_elements::solid::shape::TET10_EDGES
                    .into_iter()
                    .enumerate()
                {
                    let (x, y) = (mesh.points[cell[p]], mesh.points[cell[q]]);
                    mesh.points[cell[4 + e]] = std::array::from_fn(|i| 0.5 * (x[i] + y[i]));
                }
            }
        }
        let dofmap = DofMap::new(mesh.n_nodes(), 3);
        let material = Material::new(MaterialModel::NeoHookean, 1.0e3, 0.3).unwrap();
        let body = SolidOperator::new(
            kind,
            &mesh.points,
            &mesh.blocks[0].connectivity,
            material,
            1.0,
            kind.default_lumping(),
            &dofmap,
        )
        .unwrap();
        let u: Vec<f64> = mesh
            .points
            .iter()
            .flat_map(|p| (0..3).map(move |i| (0..3).map(|j| a[i][j] * p[j]).sum::<f64>()))
            .collect();
        let mut f = vec![0.0; dofmap.n_free()];
        body.internal_force(&u, &mut Vec::new(), &mut f).unwrap();
        let scale = f.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 1.0);
        let mut n_interior = 0;
        for (node, p) in mesh.points.iter().enumerate() {
            if interior(p) {
                n_interior += 1;
                for i in 0..3 {
                    assert!(
                        f[3 * node + i].abs() < 1e-12 * scale,
                        "{kind} node {node}: {:e}",
                        f[3 * node + i]
                    );
                }
            }
        }
        assert!(n_interior >= 8);
    }
}
