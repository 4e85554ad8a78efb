//! Solid parts meshed by Gmsh (`meshes/make_meshes.py`, `parts()`): every file reads through
//! `fem-mesh`, every cell has a positive Jacobian at its nodes and at the force rule's points,
//! the volume, centre of mass and inertia (`SolidOperator::mass_properties`) and the areas of
//! the boundary groups (`face_traction_vector`) are those of the part.
//!
//! - `column_{tet4,hex8,tet10}.msh`: the column 0.2 × 0.2 × 1 (x, y ∈ [−0.1, 0.1], z ∈ [0, 1]);
//!   groups `bottom`, `top`, `sides` (faces), `column` (volume). Straight-sided, so volume and
//!   inertia are exact to round-off on every mesh.
//! - `bracket_{tet4,tet10}.msh`: an L-bracket with two bolt holes of radius 0.04 (volume
//!   `0.0065 − 1.6·10⁻⁴ π`); groups `base_hole`, `upright_hole`, `bottom`, `bracket`. The tet4
//!   mesh cuts the holes by flat facets, the tet10 mesh puts its mid-edge nodes on the
//!   cylinders: its volume and hole areas must be far closer to the exact ones.

use std::path::{Path, PathBuf};

use fem_assembly::solid::face_traction_vector;
use fem_assembly::{DofMap, SolidOperator};
use fem_elements::solid::{FaceKind, MassProperties, Material, MaterialModel, SolidKind};
use fem_mesh::{CellKind, Mesh, read_msh};

fn meshes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../meshes")
}

/// A part read from `meshes/`: its mesh, solid kind and the operator on its volume cells.
struct Part {
    mesh: Mesh,
    kind: SolidKind,
    body: SolidOperator,
}

fn solid_kind(kind: CellKind) -> SolidKind {
    match kind {
        CellKind::Tet4 => SolidKind::Tet4,
        CellKind::Hex8 => SolidKind::Hex8,
        CellKind::Tet10 => SolidKind::Tet10,
        other => panic!("{other:?} is not a solid cell"),
    }
}

fn face_kind(kind: CellKind) -> FaceKind {
    match kind {
        CellKind::Tri3 => FaceKind::Tri3,
        CellKind::Quad4 => FaceKind::Quad4,
        CellKind::Tri6 => FaceKind::Tri6,
        other => panic!("{other:?} is not a face cell"),
    }
}

fn read_part(file: &str, volume_group: &str, expected: CellKind) -> Part {
    let mesh = read_msh(&meshes_dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let volume: Vec<usize> = mesh.block_indices_of_dim(3).collect();
    assert_eq!(volume.len(), 1, "{file}: one block of volume cells");
    let block = &mesh.blocks[volume[0]];
    assert_eq!(block.kind, expected, "{file}");
    let group = mesh.group(volume_group).expect("volume group");
    assert_eq!(group.dim, 3);
    assert_eq!(
        group.cells.len(),
        block.n_cells(),
        "{file}: the group holds every cell"
    );
    let kind = solid_kind(block.kind);
    let dofmap = DofMap::new(mesh.n_nodes(), 3);
    let material = Material::new(MaterialModel::NeoHookean, 1.0, 0.3).expect("valid");
    let body = SolidOperator::new(
        kind,
        &mesh.points,
        &block.connectivity,
        material,
        1.0,
        kind.default_lumping(),
        &dofmap,
    )
    .unwrap_or_else(|e| panic!("{file}: {e}"));
    Part { mesh, kind, body }
}

/// The smallest `det J / (mean det J of the cell)` over the reference nodes of every cell
/// (the quadrature points are checked by `SolidOperator::new`).
fn min_relative_jacobian(part: &Part) -> f64 {
    let kind = part.kind;
    let n = kind.n_nodes();
    let mut grad = [[0.0; 3]; 10];
    let mut worst = f64::INFINITY;
    for cell in part.body.connectivity().chunks_exact(n) {
        let dets: Vec<f64> = kind
            .reference_nodes()
            .iter()
            .map(|&xi| {
                kind.gradients_into(xi, &mut grad[..n]);
                let mut j = [[0.0; 3]; 3];
                for (a, &node) in cell.iter().enumerate() {
                    let x = part.mesh.points[node];
                    for r in 0..3 {
                        for c in 0..3 {
                            j[r][c] += x[r] * grad[a][c];
                        }
                    }
                }
                j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1])
                    - j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0])
                    + j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0])
            })
            .collect();
        let mean = dets.iter().sum::<f64>() / dets.len() as f64;
        worst = dets.iter().fold(worst, |w, d| w.min(d / mean.abs()));
    }
    worst
}

/// Total area of the faces of a group (the consistent traction of a unit load integrates it).
fn group_area(mesh: &Mesh, name: &str) -> f64 {
    let group = mesh.group(name).unwrap_or_else(|| panic!("group {name}"));
    assert_eq!(group.dim, 2, "{name} is a face group");
    let dofmap = DofMap::new(mesh.n_nodes(), 3);
    let mut area = 0.0;
    for b in mesh.block_indices_of_dim(2) {
        let faces: Vec<usize> = group
            .cells
            .iter()
            .filter(|&&(block, _)| block == b)
            .flat_map(|&(block, c)| mesh.blocks[block].cell(c).iter().copied())
            .collect();
        if faces.is_empty() {
            continue;
        }
        let kind = face_kind(mesh.blocks[b].kind);
        let (force, a) = face_traction_vector(kind, &mesh.points, &faces, [0.0, 0.0, 1.0], &dofmap);
        let total: f64 = force.iter().skip(2).step_by(3).sum();
        assert!(
            (total - a).abs() <= 1e-12 * a,
            "{name}: consistent load sums to the area"
        );
        area += a;
    }
    area
}

fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

fn column_mass_properties() -> MassProperties {
    let (b, l) = (0.2f64, 1.0f64);
    let m = b * b * l;
    let side = m * (b * b + l * l) / 12.0;
    MassProperties {
        volume: m,
        mass: m,
        center: [0.0, 0.0, 0.5],
        inertia: [
            [side, 0.0, 0.0],
            [0.0, side, 0.0],
            [0.0, 0.0, m * 2.0 * b * b / 12.0],
        ],
    }
}

#[test]
fn the_column_reads_in_every_kind_with_its_exact_volume_inertia_and_face_areas() {
    let exact = column_mass_properties();
    for (file, cells, min_cells) in [
        ("column_tet4.msh", CellKind::Tet4, 500),
        ("column_hex8.msh", CellKind::Hex8, 320),
        ("column_tet10.msh", CellKind::Tet10, 200),
    ] {
        let part = read_part(file, "column", cells);
        assert!(
            part.body.n_cells() >= min_cells,
            "{file}: {} cells",
            part.body.n_cells()
        );
        let jmin = min_relative_jacobian(&part);
        assert!(
            jmin > 0.0,
            "{file}: a cell has det J / mean {jmin} at a node"
        );
        let props = part.body.mass_properties();
        assert!(
            relative(props.volume, exact.volume) < 1e-12,
            "{file}: volume {}",
            props.volume
        );
        for i in 0..3 {
            assert!(
                (props.center[i] - exact.center[i]).abs() < 1e-12,
                "{file}: {:?}",
                props.center
            );
            for j in 0..3 {
                assert!(
                    (props.inertia[i][j] - exact.inertia[i][j]).abs() < 1e-12 * exact.inertia[0][0],
                    "{file}: inertia {:?}",
                    props.inertia
                );
            }
        }
        for (group, area) in [("bottom", 0.04), ("top", 0.04), ("sides", 0.8)] {
            let a = group_area(&part.mesh, group);
            assert!(relative(a, area) < 1e-12, "{file}: {group} area {a}");
        }
        println!(
            "{file}: {} cells, {} nodes, volume {:.15}, min det J / mean at nodes {jmin:.3}",
            part.body.n_cells(),
            part.mesh.n_nodes(),
            props.volume
        );
    }
}

#[test]
fn the_bracket_holes_are_round_in_tet10_and_faceted_in_tet4() {
    let volume = 0.0065 - 1.6e-4 * std::f64::consts::PI;
    let hole_area = 2.0 * std::f64::consts::PI * 0.04 * 0.05;
    let mut errors = Vec::new();
    for (file, cells) in [
        ("bracket_tet4.msh", CellKind::Tet4),
        ("bracket_tet10.msh", CellKind::Tet10),
    ] {
        let part = read_part(file, "bracket", cells);
        let jmin = min_relative_jacobian(&part);
        assert!(
            jmin > 0.0,
            "{file}: a cell has det J / mean {jmin} at a node"
        );
        let v = part.body.mass_properties().volume;
        let holes = [
            group_area(&part.mesh, "base_hole"),
            group_area(&part.mesh, "upright_hole"),
        ];
        let bottom = group_area(&part.mesh, "bottom");
        let bottom_exact = 0.4 * 0.2 - std::f64::consts::PI * 0.04 * 0.04;
        println!(
            "{file}: {} cells, volume {v:.6e} (exact {volume:.6e}, rel. error {:.1e}), hole areas \
             {:.4e} {:.4e} (exact {hole_area:.4e}), bottom {bottom:.5e} (exact {bottom_exact:.5e}), \
             min det J / mean at nodes {jmin:.3}",
            part.body.n_cells(),
            relative(v, volume),
            holes[0],
            holes[1],
        );
        errors.push((
            relative(v, volume),
            relative(holes[0], hole_area).max(relative(holes[1], hole_area)),
            relative(bottom, bottom_exact),
        ));
    }
    let (tet4, tet10) = (errors[0], errors[1]);
    // Facets inscribed in the holes: too much volume, too little hole area, by ~1e-3..1e-2.
    assert!(
        tet4.0 < 1e-2 && tet4.1 < 5e-2 && tet4.2 < 1e-2,
        "tet4: {tet4:?}"
    );
    // Quadratic geometry: at least ten times closer, on a coarser mesh.
    assert!(
        tet10.0 < 1e-3 && tet10.1 < 5e-3 && tet10.2 < 1e-3,
        "tet10: {tet10:?}"
    );
    assert!(
        tet10.0 < 0.1 * tet4.0 && tet10.1 < 0.1 * tet4.1,
        "{tet4:?} {tet10:?}"
    );
}
