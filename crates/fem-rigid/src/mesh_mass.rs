//! Mass, centre of mass and inertia of a rigid body from a volume mesh and a density.
//!
//! Every volume block of the mesh (tet4, hex8, tet10, in any mix) is integrated by
//! [`fem_elements::solid::mass_properties()`], whose rules are exact for each element's
//! geometry (the mapped `r_i r_j det J`: affine tet4, trilinear hex8, quadratic tet10 with its
//! cubic `det J`), each block about its own centre; the blocks are then combined about the
//! common centre by the parallel-axis theorem,
//!
//! ```text
//! m = Σ_b m_b,   c = Σ_b m_b c_b / m,   J_c = Σ_b [J_b + m_b (|d_b|² I − d_b ⊗ d_b)],  d_b = c_b − c.
//! ```
//!
//! So the mass properties of a mesh are those of the body it describes exactly (a box in any
//! of the three kinds, to round-off), and of a curved body (a Gmsh cylinder) to the mesh's
//! geometric error: `docs/validation.md`, "Rigid bodies massed from a mesh".
//!
//! The integration is a pure function over the cells; it lives here, beside the rigid bodies
//! that use it, and calls the element crate's kernels rather than repeating them.

use fem_elements::solid::{MassProperties, SolidKind, mass_properties};
use fem_mesh::{CellKind, Mesh};

/// Why a mesh could not be massed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MeshMassError {
    /// The density is not a positive finite number.
    #[error("expected a positive finite density, got {density}")]
    Density {
        /// The density given.
        density: f64,
    },
    /// The mesh has no tet4, hex8 or tet10 cells.
    #[error("the mesh has no volume cells (tet4, hex8 or tet10) to integrate")]
    NoVolume,
    /// A cell is inverted or degenerate.
    #[error(
        "{kind} cell {cell} of the mesh is inverted or flat (its volume element is {det} at \
         quadrature point {point}): its nodes are not in Gmsh's order"
    )]
    Inverted {
        /// The cell's kind as Gmsh names it.
        kind: &'static str,
        /// Its index among the cells of its kind.
        cell: usize,
        /// The quadrature point.
        point: usize,
        /// The Jacobian determinant there.
        det: f64,
    },
}

/// The mass properties of the body described by the volume cells of `mesh` (all its tet4, hex8
/// and tet10 blocks; faces and lines are ignored) with a uniform `density`: mass, volume,
/// centre of mass and the inertia tensor about it, in the mesh's coordinates.
///
/// ```
/// use fem_mesh::generate::{BoxCells, box_mesh};
/// let mesh = box_mesh([1.0, 2.0, 3.0], [2, 3, 4], BoxCells::Hex8).unwrap();
/// let p = fem_rigid::mesh_mass_properties(&mesh, 10.0).unwrap();
/// assert!((p.mass - 60.0).abs() < 1e-12);
/// // J_xx = m (b² + c²)/12 for a box a × b × c.
/// assert!((p.inertia[0][0] - 60.0 * (4.0 + 9.0) / 12.0).abs() < 1e-12);
/// ```
pub fn mesh_mass_properties(mesh: &Mesh, density: f64) -> Result<MassProperties, MeshMassError> {
    if !(density.is_finite() && density > 0.0) {
        return Err(MeshMassError::Density { density });
    }
    let mut parts = Vec::new();
    for block in &mesh.blocks {
        let kind = match block.kind {
            CellKind::Tet4 => SolidKind::Tet4,
            CellKind::Hex8 => SolidKind::Hex8,
            CellKind::Tet10 => SolidKind::Tet10,
            _ => continue,
        };
        if block.n_cells() == 0 {
            continue;
        }
        let p = mass_properties(kind, &mesh.points, &block.connectivity, density).map_err(|e| {
            MeshMassError::Inverted {
                kind: block.kind.name(),
                cell: e.cell,
                point: e.source.point,
                det: e.source.det,
            }
        })?;
        parts.push(p);
    }
    if parts.is_empty() {
        return Err(MeshMassError::NoVolume);
    }
    Ok(combine(&parts))
}

/// The mass properties of the union of disjoint parts, about the common centre.
fn combine(parts: &[MassProperties]) -> MassProperties {
    if let [one] = parts {
        return *one;
    }
    let mass: f64 = parts.iter().map(|p| p.mass).sum();
    let volume: f64 = parts.iter().map(|p| p.volume).sum();
    let center: [f64; 3] =
        std::array::from_fn(|i| parts.iter().map(|p| p.mass * p.center[i]).sum::<f64>() / mass);
    let mut inertia = [[0.0; 3]; 3];
    for p in parts {
        let d: [f64; 3] = std::array::from_fn(|i| p.center[i] - center[i]);
        let dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        for i in 0..3 {
            for j in 0..3 {
                let shift = p.mass * (if i == j { dd } else { 0.0 } - d[i] * d[j]);
                inertia[i][j] += p.inertia[i][j] + shift;
            }
        }
    }
    MassProperties {
        volume,
        mass,
        center,
        inertia,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fem_mesh::generate::{BoxCells, box_mesh};

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    /// A box a × b × c in each kind, moved off the origin: `m = ρabc`, the centre at its
    /// middle, `J = m diag(b² + c², a² + c², a² + b²)/12`, to round-off.
    #[test]
    fn a_box_is_massed_exactly_in_every_kind() {
        let (l, rho) = ([0.3, 0.5, 0.7], 7800.0);
        let m = rho * l[0] * l[1] * l[2];
        let want = [
            m * (l[1] * l[1] + l[2] * l[2]) / 12.0,
            m * (l[0] * l[0] + l[2] * l[2]) / 12.0,
            m * (l[0] * l[0] + l[1] * l[1]) / 12.0,
        ];
        let shift = [2.0, -1.0, 5.0];
        for cells in [BoxCells::Tet4, BoxCells::Hex8, BoxCells::Tet10] {
            let mut mesh = box_mesh(l, [3, 4, 5], cells).unwrap();
            for p in &mut mesh.points {
                for c in 0..3 {
                    p[c] += shift[c];
                }
            }
            let p = mesh_mass_properties(&mesh, rho).unwrap();
            // (1e-12: the box's tet split has 24 tets a hexahedron, 1440 here, and a sum of n
            // terms rounds to n·ε ≈ 1.6e-13 at worst.)
            assert!(close(p.mass, m, 1e-12), "{cells:?}: {}", p.mass);
            for c in 0..3 {
                assert!(
                    close(p.center[c], shift[c] + 0.5 * l[c], 1e-12),
                    "{cells:?}"
                );
                assert!(
                    close(p.inertia[c][c], want[c], 1e-12),
                    "{cells:?}: {:?}",
                    p.inertia
                );
                for d in 0..3 {
                    if d != c {
                        assert!(
                            p.inertia[c][d].abs() < 1e-12 * want[0],
                            "{cells:?}: {:?}",
                            p.inertia
                        );
                    }
                }
            }
        }
    }

    /// Two boxes side by side in two blocks (a hex8 one and a tet4 one) are the box they
    /// make together: the blocks are combined about the common centre.
    #[test]
    fn blocks_of_different_kinds_combine_about_the_common_centre() {
        let l = [0.4, 0.2, 0.3];
        let whole = box_mesh([2.0 * l[0], l[1], l[2]], [2, 2, 2], BoxCells::Hex8).unwrap();
        let left = box_mesh(l, [1, 2, 2], BoxCells::Hex8).unwrap();
        let right = box_mesh(l, [1, 2, 2], BoxCells::Tet4).unwrap();
        let mut mesh = Mesh::default();
        for (part, dx) in [(&left, 0.0), (&right, l[0])] {
            let base = mesh.points.len();
            mesh.points
                .extend(part.points.iter().map(|p| [p[0] + dx, p[1], p[2]]));
            let block = &part.blocks[0];
            let mut b = block.clone();
            for n in &mut b.connectivity {
                *n += base;
            }
            mesh.blocks.push(b);
        }
        let (a, b) = (
            mesh_mass_properties(&mesh, 3.0).unwrap(),
            mesh_mass_properties(&whole, 3.0).unwrap(),
        );
        assert!(close(a.mass, b.mass, 1e-13));
        for i in 0..3 {
            assert!(close(a.center[i], b.center[i], 1e-13));
            for j in 0..3 {
                assert!(
                    (a.inertia[i][j] - b.inertia[i][j]).abs() < 1e-13 * b.inertia[0][0],
                    "{:?} {:?}",
                    a.inertia,
                    b.inertia
                );
            }
        }
    }

    #[test]
    fn bad_meshes_and_densities_are_refused() {
        let mesh = box_mesh([1.0; 3], [1, 1, 1], BoxCells::Tet4).unwrap();
        assert!(matches!(
            mesh_mass_properties(&mesh, 0.0),
            Err(MeshMassError::Density { .. })
        ));
        assert!(matches!(
            mesh_mass_properties(&mesh, f64::NAN),
            Err(MeshMassError::Density { .. })
        ));
        let mut faces_only = mesh.clone();
        faces_only.blocks.retain(|b| b.kind.dim() < 3);
        assert_eq!(
            mesh_mass_properties(&faces_only, 1.0),
            Err(MeshMassError::NoVolume)
        );
        let mut inverted = mesh.clone();
        let c = &mut inverted.blocks[0].connectivity;
        c.swap(4, 5);
        assert!(matches!(
            mesh_mass_properties(&inverted, 1.0),
            Err(MeshMassError::Inverted { cell: 1, .. })
        ));
    }
}
