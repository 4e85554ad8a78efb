//! Contact pressure as a surface field of a solid's frames (issue 24 scope item 3;
//! docs/theory/contact.md §9.3): the nodal contact forces recovered as a pressure by the
//! boundary faces (C32). Each node's force magnitude `f_a` is shared among its boundary faces
//! `F` by their consistent weights `w_a^F = ∫_F N_a dA`; a face's pressure is its shares over its
//! area; a node's pressure is the area-weighted mean of its faces' pressures:
//!
//! ```text
//! f_a^F = f_a w_a^F / Σ_G w_a^G   (by area A_F / Σ_G A_G where Σ_G w_a^G = 0)
//! p_F   = Σ_{a ∈ F} f_a^F / A_F,      p_a = Σ_{F ∋ a} A_F p_F / Σ_{F ∋ a} A_F           (C32)
//! Σ_F p_F A_F = Σ_a |f_a|   (every node on a face: its shares sum to 1)
//! ```
//!
//! (`f_a` the magnitude of the node's contact force `r/h` of the step; the pressure when
//! friction is off.) The weights: tri3 `A/3` a corner; quad4 `∫ N_a dA` by 2 × 2 Gauss points
//! (`A` their sum); tri6 `A/3` a mid-side node, 0 a corner (`A` the corners' flat triangle), so
//! a corner's force, zero under a uniform traction, is shared by area. The consistent nodal
//! forces of a uniform pressure on flat faces are recovered exactly at every node.
//!
//! [`tributary_areas`] (C31) are each node's share of the boundary's area, kept for sizes
//! (their sum is the boundary's area); the field no longer divides by them (C30, history).

use fem_mesh::CellKind;
use nalgebra::Vector3;

use crate::solid::SolidGroupError;

/// The tributary area (C31) of every mesh node on the boundary of the cells `connectivity` of
/// `kind` (tet4, hex8, tet10) with reference coordinates `points`; zero off the boundary.
pub fn tributary_areas(
    kind: CellKind,
    connectivity: &[usize],
    points: &[[f64; 3]],
) -> Result<Vec<f64>, SolidGroupError> {
    let mut area = vec![0.0; points.len()];
    let x = |n: usize| Vector3::from(points[n]);
    let triangle = |a: usize, b: usize, c: usize| 0.5 * (x(b) - x(a)).cross(&(x(c) - x(a))).norm();
    for face in crate::solid_faces::boundary_faces(kind, connectivity)? {
        let n = face.nodes();
        if let &[c0, c1, c2, m01, m12, m20] = n {
            // tri6 sub-triangles: each corner with its two mid-sides, and the mid-sides' own.
            for [a, b, c] in [
                [c0, m01, m20],
                [c1, m12, m01],
                [c2, m20, m12],
                [m01, m12, m20],
            ] {
                let share = triangle(a, b, c) / 3.0;
                for n in [a, b, c] {
                    area[n] += share;
                }
            }
        } else if n.len() == 3 {
            let share = triangle(n[0], n[1], n[2]) / 3.0;
            for &k in n {
                area[k] += share;
            }
        } else {
            for (k, w) in quad4_weights(&x, n).into_iter().enumerate() {
                area[n[k]] += w;
            }
        }
    }
    Ok(area)
}

/// The consistent weights `∫ N_a dA` of the bilinear quad `n` (2 × 2 Gauss points).
fn quad4_weights(x: &impl Fn(usize) -> Vector3<f64>, n: &[usize]) -> [f64; 4] {
    let g = 1.0 / 3.0_f64.sqrt();
    let mut w = [0.0; 4];
    for (s, t) in [(-g, -g), (g, -g), (g, g), (-g, g)] {
        let shape = [
            0.25 * (1.0 - s) * (1.0 - t),
            0.25 * (1.0 + s) * (1.0 - t),
            0.25 * (1.0 + s) * (1.0 + t),
            0.25 * (1.0 - s) * (1.0 + t),
        ];
        let ds = 0.25 * ((x(n[1]) - x(n[0])) * (1.0 - t) + (x(n[2]) - x(n[3])) * (1.0 + t));
        let dt = 0.25 * ((x(n[3]) - x(n[0])) * (1.0 - s) + (x(n[2]) - x(n[1])) * (1.0 + s));
        let jacobian = ds.cross(&dt).norm();
        for (k, wk) in w.iter_mut().enumerate() {
            *wk += shape[k] * jacobian;
        }
    }
    w
}

/// The face recovery (C32) of a solid's boundary: its faces with their consistent weights and
/// areas, and each node's sums of them.
#[derive(Clone, Debug, Default)]
pub struct Recovery {
    /// The faces' nodes, face `F` at `nodes[start[F]..start[F + 1]]`.
    nodes: Vec<usize>,
    start: Vec<usize>,
    /// `w_a^F` for each entry of `nodes`.
    weights: Vec<f64>,
    /// `A_F`.
    face_areas: Vec<f64>,
    /// `Σ_F w_a^F` and `Σ_F A_F` of each mesh node (zero off the faces).
    weight_sum: Vec<f64>,
    area_sum: Vec<f64>,
    /// The tributary areas (C31).
    tributary: Vec<f64>,
}

impl Recovery {
    /// The recovery on the boundary of the cells `connectivity` of `kind` (tet4, hex8, tet10)
    /// with reference coordinates `points`.
    pub fn new(
        kind: CellKind,
        connectivity: &[usize],
        points: &[[f64; 3]],
    ) -> Result<Self, SolidGroupError> {
        let faces = crate::solid_faces::boundary_faces(kind, connectivity)?;
        let mut r = Self::build(faces.iter().map(|f| f.nodes()), points);
        r.tributary = tributary_areas(kind, connectivity, points)?;
        Ok(r)
    }

    /// The recovery on the faces `faces` (each 3 nodes: tri3; 4: quad4, counter-clockwise; 6:
    /// tri6, corners then the mid-sides of (0, 1), (1, 2), (2, 0)) of the nodes `points`;
    /// `None` when a face has another number of nodes or a node not in `points`. No tributary
    /// areas.
    pub fn from_faces<'a>(
        faces: impl IntoIterator<Item = &'a [usize]>,
        points: &[[f64; 3]],
    ) -> Option<Self> {
        let faces: Vec<&[usize]> = faces.into_iter().collect();
        let valid =
            |f: &&[usize]| matches!(f.len(), 3 | 4 | 6) && f.iter().all(|&k| k < points.len());
        faces.iter().all(valid).then(|| Self::build(faces, points))
    }

    /// The same recovery on the faces `faces` alone (a solid's contact surface, C32: a face
    /// that takes no contact, e.g. a symmetry plane's, dilutes no node's pressure), keeping
    /// the tributary areas of the whole boundary (C31). The faces' nodes must be nodes of
    /// `points`, as [`Self::from_faces`] checks (crate callers take them from the mesh).
    pub(crate) fn restricted<'a>(
        &self,
        faces: impl IntoIterator<Item = &'a [usize]>,
        points: &[[f64; 3]],
    ) -> Self {
        let mut r = Self::build(faces, points);
        r.tributary = self.tributary.clone();
        r
    }

    /// [`Self::from_faces`] of valid faces.
    fn build<'a>(faces: impl IntoIterator<Item = &'a [usize]>, points: &[[f64; 3]]) -> Self {
        let n = points.len();
        let x = |k: usize| Vector3::from(points[k]);
        let mut r = Self {
            start: vec![0],
            weight_sum: vec![0.0; n],
            area_sum: vec![0.0; n],
            ..Self::default()
        };
        for f in faces {
            let triangle = || 0.5 * (x(f[1]) - x(f[0])).cross(&(x(f[2]) - x(f[0]))).norm();
            let (area, weights): (f64, Vec<f64>) = match f.len() {
                3 => {
                    let a = triangle();
                    (a, vec![a / 3.0; 3])
                }
                4 => {
                    let w = quad4_weights(&x, f);
                    (w.iter().sum(), w.to_vec())
                }
                _ => {
                    let a = triangle();
                    (a, vec![0.0, 0.0, 0.0, a / 3.0, a / 3.0, a / 3.0])
                }
            };
            for (&k, &w) in f.iter().zip(&weights) {
                r.weight_sum[k] += w;
                r.area_sum[k] += area;
            }
            r.nodes.extend_from_slice(f);
            r.weights.extend(weights);
            r.start.push(r.nodes.len());
            r.face_areas.push(area);
        }
        r
    }

    /// The faces' areas `A_F`, in the faces' order.
    pub fn face_areas(&self) -> &[f64] {
        &self.face_areas
    }

    /// The tributary areas (C31) of the mesh nodes (empty for [`Self::from_faces`]).
    pub fn tributary_areas(&self) -> &[f64] {
        &self.tributary
    }

    /// The face pressures `p_F` (C32) of the nodal force magnitudes `magnitude` (one per mesh
    /// node; zero on a face of zero area).
    pub fn face_pressures(&self, magnitude: &[f64], out: &mut Vec<f64>) {
        out.clear();
        out.extend(self.face_areas.iter().enumerate().map(|(face, &area)| {
            let range = self.start[face]..self.start[face + 1];
            let total: f64 = self.nodes[range.clone()]
                .iter()
                .zip(&self.weights[range])
                .map(|(&k, &w)| {
                    let f = magnitude[k];
                    if f == 0.0 {
                        0.0
                    } else if self.weight_sum[k] > 0.0 {
                        f * w / self.weight_sum[k]
                    } else if self.area_sum[k] > 0.0 {
                        f * area / self.area_sum[k]
                    } else {
                        0.0
                    }
                })
                .sum();
            if area > 0.0 { total / area } else { 0.0 }
        }));
    }

    /// The nodal pressures `p_a` (C32) from the face pressures `face` ([`Self::face_pressures`]):
    /// one per mesh node, zero off the faces.
    pub fn nodal_pressures(&self, face: &[f64], out: &mut Vec<f64>) {
        out.clear();
        out.resize(self.area_sum.len(), 0.0);
        for (f, (&p, &area)) in face.iter().zip(&self.face_areas).enumerate() {
            for &k in &self.nodes[self.start[f]..self.start[f + 1]] {
                out[k] += p * area;
            }
        }
        for (p, &a) in out.iter_mut().zip(&self.area_sum) {
            *p = if a > 0.0 { *p / a } else { 0.0 };
        }
    }
}

/// The pressure field (C32) of the nodal contact forces `force` (3 per node) recovered by
/// `recovery`'s faces: one value per node, zero off contact and off the boundary.
pub fn contact_pressure(force: &[f64], recovery: &Recovery, out: &mut Vec<f64>) {
    let magnitude: Vec<f64> = force
        .chunks_exact(3)
        .map(|f| Vector3::new(f[0], f[1], f[2]).norm())
        .collect();
    let mut face = Vec::new();
    recovery.face_pressures(&magnitude, &mut face);
    recovery.nodal_pressures(&face, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use fem_mesh::generate::{BoxCells, box_mesh};

    /// The tributary areas of a box's boundary sum to its surface area, and only boundary
    /// nodes carry one; on the flat faces of a tet10 box a corner takes a third of a
    /// mid-side node's share of the same sub-triangles.
    #[test]
    fn tributary_areas_sum_to_the_boundary_area() {
        let size = [1.0, 2.0, 3.0];
        let surface = 2.0 * (size[0] * size[1] + size[1] * size[2] + size[0] * size[2]);
        for cells in [BoxCells::Tet4, BoxCells::Hex8, BoxCells::Tet10] {
            let mesh = box_mesh(size, [2, 3, 4], cells).unwrap();
            let kind = mesh.blocks[0].kind;
            let areas = tributary_areas(kind, &mesh.blocks[0].connectivity, &mesh.points).unwrap();
            let total: f64 = areas.iter().sum();
            assert!((total / surface - 1.0).abs() < 1e-12, "{cells:?}: {total}");
            for (n, p) in mesh.points.iter().enumerate() {
                let on_face = (0..3).any(|k| p[k].abs() < 1e-12 || (p[k] - size[k]).abs() < 1e-12);
                assert_eq!(areas[n] > 0.0, on_face, "{cells:?} node {n}");
            }
        }
    }

    /// A box sheared in its plane z = 0 (parallelogram faces), its boundary faces on z = 0 with
    /// their nodes, and the consistent nodal forces `∫ N_a p dA` of the uniform pressure `p` on
    /// them (closed forms: tri3 `A/3`; parallelogram quad4 `A/4`; tri6 0 a corner, `A/3` a
    /// mid-side node), as 3 components per node along −z.
    fn pressed_floor(cells: BoxCells, p: f64) -> (Vec<[f64; 3]>, Vec<Vec<usize>>, Vec<f64>) {
        let mesh = box_mesh([1.0, 2.0, 0.5], [3, 4, 2], cells).unwrap();
        let points: Vec<[f64; 3]> = mesh
            .points
            .iter()
            .map(|q| [q[0] + 0.3 * q[1], q[1] + 0.1 * q[0], q[2]])
            .collect();
        let block = &mesh.blocks[0];
        let faces: Vec<Vec<usize>> =
            crate::solid_faces::boundary_faces(block.kind, &block.connectivity)
                .unwrap()
                .iter()
                .map(|f| f.nodes().to_vec())
                .filter(|f| f.iter().all(|&k| points[k][2] == 0.0))
                .collect();
        let x = |k: usize| Vector3::from(points[k]);
        let mut force = vec![0.0; 3 * points.len()];
        for f in &faces {
            let area = 0.5 * (x(f[1]) - x(f[0])).cross(&(x(f[2]) - x(f[0]))).norm();
            let shares: Vec<f64> = match f.len() {
                3 => vec![area / 3.0; 3],
                4 => vec![2.0 * area / 4.0; 4],
                _ => vec![0.0, 0.0, 0.0, area / 3.0, area / 3.0, area / 3.0],
            };
            for (&k, s) in f.iter().zip(shares) {
                force[3 * k + 2] -= p * s;
            }
        }
        (points, faces, force)
    }

    /// (C32) recovers a uniform pressure exactly at every node of flat tri3, quad4 and tri6
    /// faces (corners and mid-sides), zero off them, and its face pressures carry the force.
    #[test]
    fn a_uniform_pressure_is_recovered_at_every_node() {
        let p = 2.5e5;
        for cells in [BoxCells::Tet4, BoxCells::Hex8, BoxCells::Tet10] {
            let (points, faces, force) = pressed_floor(cells, p);
            assert!(!faces.is_empty());
            let recovery =
                Recovery::from_faces(faces.iter().map(|f| f.as_slice()), &points).unwrap();
            let mut nodal = Vec::new();
            contact_pressure(&force, &recovery, &mut nodal);
            let mut on_floor = vec![false; points.len()];
            for f in &faces {
                for &k in f {
                    on_floor[k] = true;
                }
            }
            for (k, &value) in nodal.iter().enumerate() {
                let expected = if on_floor[k] { p } else { 0.0 };
                assert!(
                    (value - expected).abs() < 1e-12 * p,
                    "{cells:?} node {k}: {value}"
                );
            }
            let magnitude: Vec<f64> = force.chunks(3).map(|f| f[2].abs()).collect();
            let mut face = Vec::new();
            recovery.face_pressures(&magnitude, &mut face);
            for &value in &face {
                assert!((value / p - 1.0).abs() < 1e-12, "{cells:?}: face {value}");
            }
        }
    }

    /// Σ_F p_F A_F = Σ_a |f_a| (C32) for any forces on the faces' nodes, on a whole box
    /// boundary (nodes shared by faces in two planes), flat or bent. The nodal Σ p_a A_a with
    /// C31's areas is the force too on flat faces (there `A_a` is a fixed fraction of each
    /// face's area: 1/3 tri3, 1/4 rectangle, 1/12 and 1/4 tri6), not on curved tri6 faces.
    #[test]
    fn the_face_pressures_carry_the_force() {
        for (cells, bend) in [BoxCells::Tet4, BoxCells::Hex8, BoxCells::Tet10]
            .into_iter()
            .flat_map(|c| [(c, 0.0), (c, 0.3)])
        {
            let mut mesh = box_mesh([1.0, 2.0, 3.0], [2, 3, 2], cells).unwrap();
            for q in &mut mesh.points {
                q[2] += bend * q[0] * q[0];
            }
            let block = &mesh.blocks[0];
            let recovery = Recovery::new(block.kind, &block.connectivity, &mesh.points).unwrap();
            let areas = recovery.tributary_areas();
            // Force only on boundary nodes, of varied magnitude (a fixed sequence).
            let force: Vec<f64> = (0..3 * mesh.n_nodes())
                .map(|i| {
                    let on = areas[i / 3] > 0.0;
                    if on {
                        ((i * 7919) % 101) as f64 * 0.37 - 12.0
                    } else {
                        0.0
                    }
                })
                .collect();
            let magnitude: Vec<f64> = force
                .chunks(3)
                .map(|f| Vector3::new(f[0], f[1], f[2]).norm())
                .collect();
            let total: f64 = magnitude.iter().sum();
            let mut face = Vec::new();
            recovery.face_pressures(&magnitude, &mut face);
            let carried: f64 = face
                .iter()
                .zip(recovery.face_areas())
                .map(|(p, a)| p * a)
                .sum();
            assert!(
                (carried / total - 1.0).abs() < 1e-12,
                "{cells:?} bend {bend}: {carried} {total}"
            );
            let mut nodal = Vec::new();
            contact_pressure(&force, &recovery, &mut nodal);
            let nodal_sum: f64 = nodal.iter().zip(areas).map(|(p, a)| p * a).sum();
            let nodal_error = (nodal_sum / total - 1.0).abs();
            if bend == 0.0 {
                assert!(nodal_error < 1e-12, "{cells:?}: {nodal_sum}");
            } else if cells == BoxCells::Tet10 {
                assert!(nodal_error > 1e-6, "{cells:?} bent: {nodal_sum}");
            }
        }
    }

    /// A quarter model: a box's floor z = 0 is the contact surface, its sides x = 0 and y = 0
    /// symmetry planes (no contact). A solid (DEF_EXP, all dofs free) on the box of `cells`
    /// with the floor's faces, and the box's mesh, floor faces and all boundary faces.
    fn quarter_box(
        cells: BoxCells,
        pressure_first: bool,
    ) -> (
        fem_mesh::Mesh,
        crate::solid::SolidBody,
        Vec<crate::solid_faces::Face>,
        Vec<crate::solid_faces::Face>,
    ) {
        use fem_assembly::{DofMap, SolidOperator};
        use fem_elements::solid::{Lumping, Material, MaterialModel, SolidKind};
        let mesh = box_mesh([1.0, 2.0, 0.5], [3, 4, 2], cells).unwrap();
        let block = &mesh.blocks[0];
        let kind = match cells {
            BoxCells::Tet4 => SolidKind::Tet4,
            BoxCells::Hex8 => SolidKind::Hex8,
            _ => SolidKind::Tet10,
        };
        let operator = SolidOperator::new(
            kind,
            &mesh.points,
            &block.connectivity,
            Material::new(MaterialModel::SaintVenantKirchhoff, 1e6, 0.3).unwrap(),
            1000.0,
            Lumping::Hrz,
            &DofMap::new(mesh.n_nodes(), 3),
        )
        .unwrap();
        let system = fem_solid::SolidSystem::new(operator, fem_solid::SolidMass::Lumped).unwrap();
        let output = fem_solid::model::SolidOutput::new(
            mesh.points.clone(),
            fem_io::VtkCells::new(),
            system.shared_operator(),
        );
        let n = fem_time::SecondOrderSystem::n_dofs(&system);
        let stepper = crate::solid::SolidStepper::Exp(
            fem_time::DefExp::new(
                system,
                fem_time::StepSettings::new(1e-6),
                &vec![0.0; n],
                &vec![0.0; n],
                fem_time::CriticalStepCheck::every(0),
            )
            .unwrap(),
        );
        let all = crate::solid_faces::boundary_faces(block.kind, &block.connectivity).unwrap();
        let floor: Vec<_> = all
            .iter()
            .filter(|f| f.nodes().iter().all(|&k| mesh.points[k][2] == 0.0))
            .copied()
            .collect();
        let nodes: Vec<usize> = (0..mesh.n_nodes())
            .filter(|&k| mesh.points[k][2] == 0.0)
            .collect();
        let body =
            crate::solid::SolidBody::new(stepper, mesh.points.clone(), nodes, 0, output).unwrap();
        let conn = &block.connectivity;
        let body = if pressure_first {
            body.with_pressure(block.kind, conn)
                .and_then(|b| b.with_faces(&floor))
        } else {
            body.with_faces(&floor)
                .and_then(|b| b.with_pressure(block.kind, conn))
        };
        (mesh, body.unwrap(), floor, all)
    }

    /// (C32 on the contact faces) A uniform pressure on a quarter model's contact face comes
    /// back uniform at every node of it, those of its edges with the symmetry planes too
    /// (recovered by the whole boundary, measured before the change: 0.53–0.67 p along the
    /// edges, 0.44 p at the corners, the side faces' zero mixed in), whichever of
    /// `with_pressure`/`with_faces` comes first; the tributary areas stay the whole
    /// boundary's (C31).
    #[test]
    fn a_uniform_pressure_on_a_quarter_models_contact_face_is_uniform_to_its_edges() {
        let p = 2.5e5;
        for cells in [BoxCells::Tet4, BoxCells::Hex8, BoxCells::Tet10] {
            for pressure_first in [true, false] {
                let (mesh, mut body, floor, _) = quarter_box(cells, pressure_first);
                // The consistent nodal forces of `p` on the floor (rectangles: A/4 a node).
                let x = |k: usize| Vector3::from(mesh.points[k]);
                let mut on_box = vec![0.0; 3 * mesh.n_nodes()];
                let mut on_floor = vec![false; mesh.n_nodes()];
                for f in &floor {
                    let f = f.nodes();
                    let area = match f.len() {
                        4 => (x(f[1]) - x(f[0])).cross(&(x(f[3]) - x(f[0]))).norm(),
                        _ => 0.5 * (x(f[1]) - x(f[0])).cross(&(x(f[2]) - x(f[0]))).norm(),
                    };
                    let shares: Vec<f64> = match f.len() {
                        3 => vec![area / 3.0; 3],
                        4 => vec![area / 4.0; 4],
                        _ => vec![0.0, 0.0, 0.0, area / 3.0, area / 3.0, area / 3.0],
                    };
                    for (&k, s) in f.iter().zip(shares) {
                        on_box[3 * k + 2] += p * s;
                        on_floor[k] = true;
                    }
                }
                let nodal = body.pressure_under(&on_box).to_vec();
                for (k, &value) in nodal.iter().enumerate() {
                    let expected = if on_floor[k] { p } else { 0.0 };
                    assert!(
                        (value - expected).abs() < 1e-12 * p,
                        "{cells:?} node {k} at {:?}: {value}",
                        mesh.points[k]
                    );
                }
                let areas: f64 = body.tributary_areas().iter().sum();
                let boundary = 2.0 * (1.0 * 2.0 + 2.0 * 0.5 + 1.0 * 0.5);
                assert!((areas / boundary - 1.0).abs() < 1e-12, "{cells:?}: {areas}");
            }
        }
    }

    /// With the whole boundary as contact surface the recovery is the boundary's, bit for bit
    /// (the same faces in the same order): the field of a scene whose contact surface is the
    /// whole boundary is unchanged.
    #[test]
    fn the_whole_boundary_as_contact_surface_changes_no_bit() {
        for cells in [BoxCells::Tet4, BoxCells::Hex8, BoxCells::Tet10] {
            let (mesh, body, _, all) = quarter_box(cells, true);
            let body = body.with_faces(&all).unwrap();
            let block = &mesh.blocks[0];
            let whole = Recovery::new(block.kind, &block.connectivity, &mesh.points).unwrap();
            let force: Vec<f64> = (0..3 * mesh.n_nodes())
                .map(|i| ((i * 7919) % 101) as f64 * 0.37 - 12.0)
                .collect();
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            contact_pressure(&force, body.pressure_recovery().unwrap(), &mut ours);
            contact_pressure(&force, &whole, &mut theirs);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&ours), bits(&theirs), "{cells:?}");
            let recovery = body.pressure_recovery().unwrap();
            assert_eq!(bits(recovery.face_areas()), bits(whole.face_areas()));
        }
    }

    #[test]
    fn faces_of_other_sizes_or_unknown_nodes_are_refused() {
        let points = [[0.0; 3]; 4];
        assert!(Recovery::from_faces([&[0, 1][..]], &points).is_none());
        assert!(Recovery::from_faces([&[0, 1, 4][..]], &points).is_none());
        assert!(Recovery::from_faces([&[0, 1, 2][..]], &points).is_some());
    }
}
