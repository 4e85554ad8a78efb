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
//! Two ways to place the surface's mass ([`Redistribution`]), both keeping the total mass
//! along every axis (so momentum and a rigid translation's kinetic energy) of every connected
//! piece of the mesh:
//! - [`Redistribution::Neighbours`] (eq. R1 of docs/theory/contact.md §9.1,
//!   [`redistributed_mass`]): to the same component of the nodes that share a cell with a
//!   surface node and are off the surface, in proportion to their lumped masses; the centre
//!   of mass moves by less than a cell;
//! - [`Redistribution::Proportional`] (eq. C33, [`proportional_mass`]): over every node off
//!   the surface, each mass scaled by `M/(M − m_s)`: the mass density stays uniform off the
//!   surface, so a uniform lumped chain stays uniform and Courant 1 of its rescaled wave speed
//!   still steps it exactly (§9.1, docs/validation.md "The law on an exact chain").

use std::collections::HashSet;

use fem_assembly::DofMap;
use fem_solid::SolidSystem;
use fem_time::{Mass, SecondOrderSystem};

/// Where the mass of the contact surface goes (docs/theory/contact.md §9.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Redistribution {
    /// Over all nodes off the surface of the same connected piece, in proportion to their
    /// masses (C33): `m̃_e = m_e · M/(M − m_s)`.
    #[default]
    Proportional,
    /// To the nodes sharing a cell with the surface node, in proportion to their masses (R1).
    Neighbours,
}

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
    /// Every node with mass of a connected piece of the mesh lies on the contact surface.
    #[error(
        "every node of the solid (the part of its mesh that holds node {node}) is on the contact surface: no node is left to take its mass (name the struck face with contact_group)"
    )]
    AllOnSurface {
        /// A mesh node of the piece.
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

/// The connected pieces of a mesh: `piece[node]` numbers them 0.. (a node in no cell is a
/// piece of its own).
fn pieces(n_nodes: usize, nodes_per_cell: usize, connectivity: &[usize]) -> Vec<usize> {
    fn root(parent: &mut [usize], mut a: usize) -> usize {
        while parent[a] != a {
            parent[a] = parent[parent[a]];
            a = parent[a];
        }
        a
    }
    let mut parent: Vec<usize> = (0..n_nodes).collect();
    for cell in connectivity.chunks_exact(nodes_per_cell.max(1)) {
        let Some((&first, rest)) = cell.split_first() else {
            continue;
        };
        for &b in rest {
            let (ra, rb) = (root(&mut parent, first), root(&mut parent, b));
            if ra != rb {
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    (0..n_nodes).map(|a| root(&mut parent, a)).collect()
}

/// The lumped mass `mass` (free dofs of `dofmap`) with no mass on the mesh nodes `surface`,
/// their mass spread over every other node of the same connected piece of the mesh (cells
/// `connectivity`, `nodes_per_cell` nodes each) in proportion to its mass, component by
/// component (eq. C33 of docs/theory/contact.md §9.1):
///
/// `m̃_e = m_e · M_c/(M_c − m_s,c)` off the surface, `m̃_d = 0` on it,
///
/// `M_c` the piece's total mass along axis `c`, `m_s,c` its surface's. Total mass per piece and
/// axis is kept to rounding; the ratio of any two masses off the surface is unchanged.
pub fn proportional_mass(
    mass: &[f64],
    dofmap: &DofMap,
    nodes_per_cell: usize,
    connectivity: &[usize],
    surface: &[usize],
) -> Result<Vec<f64>, RedistributionError> {
    let n_nodes = dofmap.n_nodes();
    let piece = pieces(n_nodes, nodes_per_cell, connectivity);
    let mut on_surface = vec![false; n_nodes];
    for &a in surface {
        if a < n_nodes {
            on_surface[a] = true;
        }
    }
    // Per piece (indexed by its root node) and axis: total mass and the surface's.
    let mut total = vec![[0.0_f64; 3]; n_nodes];
    let mut moved = vec![[0.0_f64; 3]; n_nodes];
    for a in 0..n_nodes {
        for c in 0..3 {
            if let Some(d) = dofmap.free(3 * a + c) {
                total[piece[a]][c] += mass[d];
                if on_surface[a] {
                    moved[piece[a]][c] += mass[d];
                }
            }
        }
    }
    // A piece whose surface has mass but whose other nodes have none along an axis.
    for &a in surface {
        if a < n_nodes {
            let p = piece[a];
            if (0..3).any(|c| moved[p][c] > 0.0 && total[p][c] - moved[p][c] <= 0.0) {
                return Err(RedistributionError::AllOnSurface { node: a });
            }
        }
    }
    let mut out = mass.to_vec();
    for a in 0..n_nodes {
        let p = piece[a];
        for c in 0..3 {
            let Some(d) = dofmap.free(3 * a + c) else {
                continue;
            };
            if on_surface[a] {
                out[d] = 0.0;
            } else if moved[p][c] > 0.0 {
                out[d] = mass[d] * (total[p][c] / (total[p][c] - moved[p][c]));
            }
        }
    }
    Ok(out)
}

/// `system` with its lumped mass redistributed off the mesh nodes `surface` by `method`
/// ([`proportional_mass`], C33, or [`redistributed_mass`], R1); the cells are the operator's
/// (`nodes_per_cell`, `connectivity` of its mesh block). DEF_LIM steps the result as it is,
/// DEF_EXP holds its massless dofs by their equilibrium (C26–C29).
pub fn redistribute(
    system: SolidSystem,
    method: Redistribution,
    nodes_per_cell: usize,
    connectivity: &[usize],
    surface: &[usize],
) -> Result<SolidSystem, RedistributionError> {
    let Mass::Lumped(mass) = system.mass() else {
        return Err(RedistributionError::NotLumped);
    };
    let dofmap = system.operator().dofmap().clone();
    let moved = match method {
        Redistribution::Proportional => {
            proportional_mass(mass, &dofmap, nodes_per_cell, connectivity, surface)?
        }
        Redistribution::Neighbours => {
            redistributed_mass(mass, &dofmap, nodes_per_cell, connectivity, surface)?
        }
    };
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

    /// Two separate bars (3×1×4 and 1×1×2 hex8 cells, the second shifted off the first) with
    /// a mass differing per node and one roller dof: C33 keeps each bar's mass per axis to
    /// rounding, empties the surface, keeps every ratio of two masses off the surface of a
    /// bar, and leaves a bar without surface nodes as it was.
    #[test]
    fn proportional_keeps_each_piece_s_mass_and_the_ratios_off_the_surface() {
        let a = fem_mesh::generate::box_mesh(
            [3.0, 1.0, 4.0],
            [3, 1, 4],
            fem_mesh::generate::BoxCells::Hex8,
        )
        .unwrap();
        let b = fem_mesh::generate::box_mesh(
            [1.0, 1.0, 2.0],
            [1, 1, 2],
            fem_mesh::generate::BoxCells::Hex8,
        )
        .unwrap();
        let na = a.n_nodes();
        let mut conn = a.blocks[0].connectivity.clone();
        conn.extend(b.blocks[0].connectivity.iter().map(|&k| k + na));
        let n = na + b.n_nodes();
        // Node 1's x is held: a fixed dof takes and gives nothing.
        let dofmap = DofMap::with_fixed(n, 3, vec![3]);
        let mass: Vec<f64> = (0..dofmap.n_free())
            .map(|d| 0.5 + ((d * 7919) % 13) as f64 / 13.0)
            .collect();
        // The bottom of the first bar, and its node 5 (not at the bottom).
        let mut surface: Vec<usize> = (0..na).filter(|&k| a.points[k][2] == 0.0).collect();
        surface.push(5);
        let moved = proportional_mass(&mass, &dofmap, 8, &conn, &surface).unwrap();
        let sum = |m: &[f64], nodes: std::ops::Range<usize>, c: usize| -> f64 {
            nodes
                .filter_map(|k| dofmap.free(3 * k + c))
                .map(|d| m[d])
                .sum()
        };
        for c in 0..3 {
            for range in [0..na, na..n] {
                let (before, after) = (sum(&mass, range.clone(), c), sum(&moved, range, c));
                assert!(
                    (after - before).abs() <= 4.0 * f64::EPSILON * before,
                    "axis {c}: {before} {after}"
                );
            }
        }
        for &k in &surface {
            for c in 0..3 {
                if let Some(d) = dofmap.free(3 * k + c) {
                    assert_eq!(moved[d], 0.0);
                }
            }
        }
        // Ratios off the surface: every pair of the first bar's dofs along z.
        let off: Vec<usize> = (0..na)
            .filter(|k| !surface.contains(k))
            .filter_map(|k| dofmap.free(3 * k + 2))
            .collect();
        assert!(off.len() > 10);
        for &d in &off {
            for &e in &off {
                let (r0, r1) = (mass[d] / mass[e], moved[d] / moved[e]);
                assert!((r1 - r0).abs() <= 4.0 * f64::EPSILON * r0, "{r0} {r1}");
            }
            assert!(moved[d] > mass[d]);
        }
        // The second bar has no surface node: untouched, bit for bit.
        for k in na..n {
            for c in 0..3 {
                let d = dofmap.free(3 * k + c).unwrap();
                assert_eq!(moved[d], mass[d]);
            }
        }
        // A piece all of whose nodes are on the surface has nowhere to put its mass.
        let all_b: Vec<usize> = (na..n).collect();
        assert!(matches!(
            proportional_mass(&mass, &dofmap, 8, &conn, &all_b),
            Err(RedistributionError::AllOnSurface { .. })
        ));
    }
}
