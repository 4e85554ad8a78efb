//! Mass redistribution off a contact surface (issue 24; docs/theory/contact.md §9.1).
//!
//! Khenous, Laborde & Renard (2008, "Mass redistribution method for finite element contact
//! problems in elastodynamics", Eur. J. Mech. A/Solids 27) show that the semi-discrete
//! Signorini problem of elastodynamics is well posed and conserves energy when the nodes of
//! the potential contact surface carry no mass: a node with mass that strikes an obstacle
//! must stop at once, and any law that stops it (restitution 0, a position constraint) throws
//! away its kinetic energy `½ m_node v²`, a share of the body's that is first order in the
//! cell size. With no mass on those nodes the contact force is an ordinary force, `Hᵀλ`,
//! the impact costs nothing and the energy of the body is kept to the time scheme's error.
//!
//! [`redistributed_mass`] moves the lumped mass of every dof of the surface's nodes to the
//! same component of the nodes that share a cell with it and are not on the surface, in
//! proportion to their own lumped mass (eq. R1 of docs/theory/contact.md §9.1): the total
//! mass along every axis is kept (so are momentum and a rigid translation's kinetic energy);
//! the centre of mass moves by less than a cell.

use std::collections::HashSet;

use fem_assembly::DofMap;
use fem_solid::SolidSystem;
use fem_time::{Mass, SecondOrderSystem};

/// Why a mass could not be redistributed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RedistributionError {
    /// The solid's mass is consistent: redistribution acts on a lumped mass.
    #[error("the mass is consistent: redistribution needs the lumped mass")]
    NotLumped,
    /// A surface node shares no cell with a node off the surface that could take its mass.
    #[error(
        "node {node} of the contact surface shares no cell with a node off the surface that could take its mass (a mesh one cell thick under the surface?)"
    )]
    NoNeighbour {
        /// The mesh node.
        node: usize,
    },
}

/// The lumped mass `mass` (free dofs of `dofmap`) with no mass on the mesh nodes `surface`:
/// each of their free dofs gives its mass to the same component of the nodes off the surface
/// that share one of the cells `connectivity` (`nodes_per_cell` nodes each), in proportion to
/// their masses (eq. R1). Total mass per component is kept to rounding.
pub fn redistributed_mass(
    mass: &[f64],
    dofmap: &DofMap,
    nodes_per_cell: usize,
    connectivity: &[usize],
    surface: &[usize],
) -> Result<Vec<f64>, RedistributionError> {
    let on_surface: HashSet<usize> = surface.iter().copied().collect();
    // The cells of each surface node.
    let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); surface.len()];
    let index: std::collections::HashMap<usize, usize> =
        surface.iter().enumerate().map(|(k, &n)| (n, k)).collect();
    for cell in connectivity.chunks_exact(nodes_per_cell.max(1)) {
        for &a in cell {
            if let Some(&k) = index.get(&a) {
                neighbours[k].extend(cell.iter().filter(|b| !on_surface.contains(b)));
            }
        }
    }
    let mut out = mass.to_vec();
    for (k, &node) in surface.iter().enumerate() {
        let list = &mut neighbours[k];
        list.sort_unstable();
        list.dedup();
        for c in 0..3 {
            let Some(d) = dofmap.free(3 * node + c) else {
                continue;
            };
            let m = mass[d];
            if m == 0.0 {
                continue;
            }
            let takers: Vec<(usize, f64)> = list
                .iter()
                .filter_map(|&b| dofmap.free(3 * b + c))
                .map(|e| (e, mass[e]))
                .filter(|(_, w)| *w > 0.0)
                .collect();
            let total: f64 = takers.iter().map(|(_, w)| w).sum();
            if takers.is_empty() {
                return Err(RedistributionError::NoNeighbour { node });
            }
            for (e, w) in takers {
                out[e] += m * w / total;
            }
            out[d] = 0.0;
        }
    }
    Ok(out)
}

/// `system` with its lumped mass redistributed off the mesh nodes `surface`
/// ([`redistributed_mass`]); the cells are the operator's (`nodes_per_cell`, `connectivity`
/// of its mesh block). Step it with DEF_LIM: DEF_EXP divides by the mass.
pub fn redistribute(
    system: SolidSystem,
    nodes_per_cell: usize,
    connectivity: &[usize],
    surface: &[usize],
) -> Result<SolidSystem, RedistributionError> {
    let Mass::Lumped(mass) = system.mass() else {
        return Err(RedistributionError::NotLumped);
    };
    let dofmap = system.operator().dofmap().clone();
    let moved = redistributed_mass(mass, &dofmap, nodes_per_cell, connectivity, surface)?;
    system
        .with_lumped_mass(moved)
        .ok_or(RedistributionError::NotLumped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two hex8 cells stacked along z: the bottom face's mass goes to the middle layer, the
    /// total per component is kept, the bottom nodes carry nothing.
    #[test]
    fn the_mass_of_the_surface_moves_to_its_neighbours_and_the_total_is_kept() {
        let mesh = fem_mesh::generate::box_mesh(
            [1.0, 1.0, 2.0],
            [1, 1, 2],
            fem_mesh::generate::BoxCells::Hex8,
        )
        .unwrap();
        let dofmap = DofMap::new(mesh.n_nodes(), 3);
        // A mass that differs per node, so the proportional split is visible.
        let mass: Vec<f64> = (0..3 * mesh.n_nodes())
            .map(|d| 1.0 + (d / 3) as f64)
            .collect();
        let bottom: Vec<usize> = (0..mesh.n_nodes())
            .filter(|&n| mesh.points[n][2] == 0.0)
            .collect();
        assert_eq!(bottom.len(), 4);
        let conn = &mesh.blocks[0].connectivity;
        let moved = redistributed_mass(&mass, &dofmap, 8, conn, &bottom).unwrap();
        for c in 0..3 {
            let before: f64 = mass.iter().skip(c).step_by(3).sum();
            let after: f64 = moved.iter().skip(c).step_by(3).sum();
            assert!((after - before).abs() <= 1e-14 * before, "{before} {after}");
        }
        for &n in &bottom {
            assert_eq!(moved[3 * n], 0.0);
        }
        // The top layer (no cell shared with the bottom) keeps its mass.
        for n in (0..mesh.n_nodes()).filter(|&n| mesh.points[n][2] == 2.0) {
            assert_eq!(moved[3 * n + 2], mass[3 * n + 2]);
        }
        // A mesh one cell thick has no node to take the mass.
        let thin = fem_mesh::generate::box_mesh(
            [1.0, 1.0, 1.0],
            [1, 1, 1],
            fem_mesh::generate::BoxCells::Hex8,
        )
        .unwrap();
        let all: Vec<usize> = (0..thin.n_nodes()).collect();
        let m = vec![1.0; 3 * thin.n_nodes()];
        assert!(matches!(
            redistributed_mass(
                &m,
                &DofMap::new(thin.n_nodes(), 3),
                8,
                &thin.blocks[0].connectivity,
                &all
            ),
            Err(RedistributionError::NoNeighbour { .. })
        ));
    }
}
