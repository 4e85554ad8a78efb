//! A total-Lagrangian solid in a scene (issue 24): [`SolidGroup`], fem-solid's system stepped
//! by DEF_EXP or DEF_LIM split around the contact impulses, as a [`BodyGroup`].
//!
//! **Contact formulation: node to surface.** The solid's contact points are the nodes of its
//! contact surface (a physical group of boundary faces, or the whole boundary). Detection sees
//! each node as a ball of radius [`NODE_RADIUS`] times the solid's size at the node's mid-step
//! position, so parry's narrow phase pairs it with planes and with any rigid shape, and the
//! scene moves the detected point back onto the node ([`BodyGroup::contact_point`]). The map
//! `H` of a node is then the identity on its three dofs (eq. C3 of docs/theory/contact.md with
//! `H_i = [0 … I₃ … 0]`), and
//!
//! - **DEF_EXP**, `A = M` lumped: `A⁻¹Hᵀ` is `I₃/m_node` on the node's dofs, so `W` is made of
//!   diagonal 3×3 blocks `F I₃ Fᵀ / m_node` — a contact costs as much as a particle's;
//! - **DEF_LIM**, `A = M + (ηh/2 + h²/4) K`: `A⁻¹Hᵀ` is three solves with the step's
//!   factorization per contact point (one block solve of `3 n_c` columns,
//!   [`fem_time::DefLim::solve_step_matrix`]), dense over the solid's dofs; `W` couples every
//!   pair of contact points of the solid (docs/theory/contact.md §9, with the cost measured).
//!
//! Why node-to-surface rather than Solfec's point contacts from pairs of faces: against planes
//! and rigid shapes the node is exact (a node of the surface cannot pass the obstacle) and needs
//! no face clipping. Two solids' nodes are not paired with each other
//! ([`BodyGroup::point_contacts`]): a solid's faces ([`SolidBody::with_faces`]) meet the other
//! solids' nodes and the rigid shapes instead (node to face, [`crate::pairs`], eqs. C20–C22 of
//! docs/theory/contact.md §10), and a group holds any number of solids, each its own body.

use std::collections::HashMap;

use fem_assembly::Par;
use fem_contact::body::{ContactBody, PointMap};
use fem_contact::detect::{PlacedShape, Placement, Shape};
use fem_io::{Field, Frame};
use fem_mesh::{CellKind, Mesh};
use fem_solid::SolidSystem;
use fem_solid::model::SolidOutput;
use fem_time::{Clock, DefExp, DefLim, Energy, SecondOrderSystem, StateField, StepError, Stepper};
use nalgebra::Vector3;
use rayon::prelude::*;

use crate::group::{BodyGroup, GroupStep};

/// The radius of the ball a contact node is to detection, as a fraction of the solid's size
/// (the diagonal of its bounding box): far below any gap the solver resolves.
pub const NODE_RADIUS: f64 = 1e-9;

/// The scheme stepping a solid of a scene.
#[derive(Debug)]
pub enum SolidStepper {
    /// DEF_EXP (lumped mass, explicit).
    Exp(DefExp<SolidSystem>),
    /// DEF_LIM (linearly implicit).
    Lim(DefLim<SolidSystem>),
}

impl SolidStepper {
    fn begin(&mut self) -> Result<(), StepError> {
        match self {
            Self::Exp(s) => s.begin_contact_step(),
            Self::Lim(s) => s.begin_contact_step(),
        }
    }

    fn end(&mut self, p: &[f64]) -> Result<(), StepError> {
        match self {
            Self::Exp(s) => s.end_contact_step(p).map(|_| ()),
            Self::Lim(s) => s.end_contact_step(p).map(|_| ()),
        }
    }

    fn mid_step_position(&self) -> &[f64] {
        match self {
            Self::Exp(s) => s.mid_step_position(),
            Self::Lim(s) => s.mid_step_position(),
        }
    }

    fn free_velocity(&self) -> &[f64] {
        match self {
            Self::Exp(s) => s.free_velocity(),
            Self::Lim(s) => s.free_velocity(),
        }
    }

    fn velocity(&self) -> &[f64] {
        match self {
            Self::Exp(s) => s.velocity(),
            Self::Lim(s) => s.velocity(),
        }
    }

    fn stepper(&self) -> &dyn Stepper {
        match self {
            Self::Exp(s) => s,
            Self::Lim(s) => s,
        }
    }

    fn stepper_mut(&mut self) -> &mut dyn Stepper {
        match self {
            Self::Exp(s) => s,
            Self::Lim(s) => s,
        }
    }

    fn position(&self) -> &[f64] {
        match self {
            Self::Exp(s) => fem_time::NodalStepper::position(s),
            Self::Lim(s) => fem_time::NodalStepper::position(s),
        }
    }
}

/// Why a solid could not join a scene.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SolidGroupError {
    /// The contact surface has no node.
    #[error("the contact surface has no node")]
    NoContactNode,
    /// The whole boundary was asked of cells whose faces are not known here.
    #[error(
        "the whole boundary of {0} cells is not found here: name the contact surface by a physical group"
    )]
    BoundaryOf(&'static str),
    /// DEF_EXP: a contact point whose map `Hᵀ` reaches both massless dofs (a redistributed
    /// mass) and dofs with mass — a node with both, or a contact face on nodes of both kinds.
    /// Its column of `A⁻¹Hᵀ` would need the massless dofs' response to the impulse on the
    /// massive ones, `−K_cc⁻¹ K_cm M_m⁻¹` (and `W` would not be symmetric): refused rather
    /// than approximated block by block (docs/theory/contact.md §9.1).
    #[error(
        "under def_exp a contact point would join node {massive}, which has mass, and node {massless}, which has none (mass_redistribution): each contact face must be all without mass or all with mass"
    )]
    MixedMass {
        /// A mesh node of the point with mass.
        massive: usize,
        /// A mesh node of the point without (the same node when its dofs differ).
        massless: usize,
    },
}

/// Under DEF_EXP with massless dofs: refuses a contact point (the mesh nodes `nodes`, their
/// free dofs `node_dofs`: one node, or a face's) whose dofs are massless and with mass
/// (prescribed dofs take no impulse of the map and count for neither).
fn mixed_mass(
    stepper: &SolidStepper,
    nodes: &[usize],
    node_dofs: &[[Option<usize>; 3]],
) -> Result<(), SolidGroupError> {
    let SolidStepper::Exp(s) = stepper else {
        return Ok(());
    };
    if s.massless_dofs().is_empty() {
        return Ok(());
    }
    let (mut massive, mut massless) = (None, None);
    for (&n, dofs) in nodes.iter().zip(node_dofs) {
        for &d in dofs.iter().flatten().filter(|&&d| !s.is_prescribed(d)) {
            if s.massless_index(d).is_some() {
                massless.get_or_insert(n);
            } else {
                massive.get_or_insert(n);
            }
        }
    }
    match (massive, massless) {
        (Some(massive), Some(massless)) => Err(SolidGroupError::MixedMass { massive, massless }),
        _ => Ok(()),
    }
}

/// The nodes on the boundary of the volume cells `connectivity` of `kind` (tet4, hex8, tet10):
/// the nodes of the faces that belong to one cell only (a face is known by its corners; a
/// tet10's boundary tri6 brings its three mid-side nodes). Sorted.
pub fn boundary_nodes(
    kind: CellKind,
    connectivity: &[usize],
) -> Result<Vec<usize>, SolidGroupError> {
    let mut nodes: Vec<usize> = crate::solid_faces::boundary_faces(kind, connectivity)?
        .iter()
        .flat_map(|f| f.nodes().to_vec())
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    Ok(nodes)
}

/// One solid: its stepper, contact nodes and the impulse of the step (a [`ContactBody`]).
#[derive(Debug)]
pub struct SolidBody {
    stepper: SolidStepper,
    /// Reference coordinates of every mesh node.
    points: Vec<[f64; 3]>,
    /// Mesh nodes of the contact surface.
    nodes: Vec<usize>,
    /// Their free dofs (none where fixed or not in the solid).
    node_dofs: Vec<[Option<usize>; 3]>,
    /// Free dof → mesh dof.
    free_dofs: Vec<usize>,
    /// Free dof → its index among DEF_LIM's solved dofs (`None`: prescribed).
    solved_index: Vec<Option<usize>>,
    /// Whether each contact node carries no mass (a redistributed mass): it takes the
    /// position-level law ([`BodyGroup::position_level`]).
    massless: Vec<bool>,
    /// Whether the nodes that carry mass take the mid-step position law
    /// ([`BodyGroup::mid_step_level`], [`SolidBody::with_mid_step_law`]).
    mid_step_law: bool,
    /// Positions of the contact nodes (mid-step inside a step).
    placed: Vec<Vector3<f64>>,
    /// Contact node by the bits of its placed position.
    by_position: HashMap<[u64; 3], usize>,
    ball: Shape,
    material: u32,
    impulse: Vec<f64>,
    /// Nodal contact force `p/h` of the last step, 3 per mesh node.
    contact_force: Vec<f64>,
    output: SolidOutput,
    size: f64,
    /// The contact surface's faces (solid against solid, rigid shape against faces).
    pub(crate) surface: Surface,
    /// The translation of the mesh into the scene (frames of several solids).
    offset: [f64; 3],
    /// The solid's cells for a frame of several solids: kind and mesh connectivity.
    cells: Option<(CellKind, Vec<usize>)>,
    /// The face recovery of the boundary (none: no pressure field; [`crate::pressure`]).
    recovery: Option<crate::pressure::Recovery>,
    /// The frame's `contact_pressure` (C32).
    pressure: Vec<f64>,
    /// Points per block solve of DEF_LIM's `A⁻¹Hᵀ` ([`SolidBody::with_block_points`]).
    block_points: usize,
}

/// A point handed out on a face: the face and its shape functions there.
type FacePoint = (usize, [f64; 6]);

/// A solid's contact faces and where their nodes are (mid-step inside a step).
#[derive(Debug, Default)]
pub(crate) struct Surface {
    /// Faces, by their nodes' indices into `nodes`, and their number of nodes (3, 4, 6).
    pub(crate) faces: Vec<([usize; 6], u8)>,
    /// The faces' mesh nodes.
    nodes: Vec<usize>,
    /// Their free dofs.
    node_dofs: Vec<[Option<usize>; 3]>,
    /// Their index among the solid's contact nodes (`None`: held, not a contact node).
    pub(crate) contact: Vec<Option<usize>>,
    /// Their positions.
    pub(crate) placed: Vec<Vector3<f64>>,
    /// The size of each face (its longest diagonal or edge, reference).
    pub(crate) face_size: Vec<f64>,
    /// The face points handed out this step: face and weights, by the bits of the point.
    points: std::sync::Mutex<HashMap<[u64; 3], FacePoint>>,
}

impl Surface {
    /// The indices into `nodes` of face `f`'s nodes (corners, then a tri6's mid-sides).
    fn face(&self, f: usize) -> &[usize] {
        let (c, n) = &self.faces[f];
        &c[..*n as usize]
    }

    /// The mesh nodes of face `f`.
    fn face_nodes(&self, f: usize) -> Vec<usize> {
        self.face(f).iter().map(|&a| self.nodes[a]).collect()
    }

    /// The node positions of face `f` (corners, then a tri6's mid-sides) and their number.
    pub(crate) fn corners(&self, f: usize) -> ([Vector3<f64>; 6], usize) {
        let (c, n) = self.faces[f];
        let mut x = [Vector3::zeros(); 6];
        for k in 0..n as usize {
            x[k] = self.placed[c[k]];
        }
        (x, n as usize)
    }

    /// The outward normal of each face node: the sum of its faces' area vectors, unit.
    pub(crate) fn node_normals(&self) -> Vec<Vector3<f64>> {
        let mut n = vec![Vector3::zeros(); self.nodes.len()];
        for f in 0..self.faces.len() {
            let (x, k) = self.corners(f);
            // (A tri6: its corner triangle's.)
            let area = if k != 4 {
                (x[1] - x[0]).cross(&(x[2] - x[0]))
            } else {
                (x[2] - x[0]).cross(&(x[3] - x[1]))
            };
            for &a in &self.faces[f].0[..k] {
                n[a] += area;
            }
        }
        n.iter()
            .map(|v| v.try_normalize(0.0).unwrap_or_default())
            .collect()
    }

    /// Records that `point` is on face `f` with the shape functions `weights`.
    pub(crate) fn hand_out(&self, point: &Vector3<f64>, f: usize, weights: [f64; 6]) {
        if let Ok(mut m) = self.points.lock() {
            m.insert(bits(point), (f, weights));
        }
    }

    fn face_point(&self, point: &Vector3<f64>) -> Option<FacePoint> {
        self.points.lock().ok()?.get(&bits(point)).copied()
    }
}

fn bits(p: &Vector3<f64>) -> [u64; 3] {
    [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()]
}

impl SolidBody {
    /// A solid of `system` stepped by `stepper`, with the contact nodes `nodes` (mesh nodes)
    /// of surface material `material`, drawn by `output` on the mesh's `points`. Its contacts
    /// take the mid-step position law (C18; [`Self::with_rule_r`] for rule (R)), its massless
    /// nodes the position-level law (C17).
    pub fn new(
        stepper: SolidStepper,
        points: Vec<[f64; 3]>,
        nodes: Vec<usize>,
        material: u32,
        output: SolidOutput,
    ) -> Result<Self, SolidGroupError> {
        let dofmap = output_dofmap(&stepper);
        let node_dofs: Vec<[Option<usize>; 3]> = nodes
            .iter()
            .map(|&n| std::array::from_fn(|c| dofmap.free(3 * n + c)))
            .collect();
        let nodes: Vec<usize> = nodes
            .into_iter()
            .zip(&node_dofs)
            .filter(|(_, d)| d.iter().any(Option::is_some))
            .map(|(n, _)| n)
            .collect();
        let node_dofs: Vec<[Option<usize>; 3]> = node_dofs
            .into_iter()
            .filter(|d| d.iter().any(Option::is_some))
            .collect();
        if nodes.is_empty() {
            return Err(SolidGroupError::NoContactNode);
        }
        for (n, dofs) in nodes.iter().zip(&node_dofs) {
            mixed_mass(
                &stepper,
                std::slice::from_ref(n),
                std::slice::from_ref(dofs),
            )?;
        }
        let free_dofs = dofmap.free_dofs().to_vec();
        let n_free = free_dofs.len();
        let mut solved_index = vec![None; n_free];
        match &stepper {
            SolidStepper::Exp(s) => {
                let mut k = 0;
                for (d, slot) in solved_index.iter_mut().enumerate() {
                    if !s.is_prescribed(d) {
                        *slot = Some(k);
                        k += 1;
                    }
                }
            }
            SolidStepper::Lim(s) => {
                for (k, &d) in s.free_dofs().iter().enumerate() {
                    solved_index[d] = Some(k);
                }
            }
        }
        let (lo, hi) = points.iter().fold(
            ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]),
            |(lo, hi), p| {
                (
                    std::array::from_fn(|k| lo[k].min(p[k])),
                    std::array::from_fn(|k| hi[k].max(p[k])),
                )
            },
        );
        let size = (0..3)
            .map(|k| (hi[k] - lo[k]).powi(2))
            .sum::<f64>()
            .sqrt()
            .max(f64::MIN_POSITIVE);
        let ball = Shape::sphere(NODE_RADIUS * size).map_err(|_| SolidGroupError::NoContactNode)?;
        let massless = {
            let mass = match &stepper {
                SolidStepper::Exp(s) => s.system().mass(),
                SolidStepper::Lim(s) => s.system().mass(),
            };
            node_dofs
                .iter()
                .map(|dofs| match mass {
                    fem_time::Mass::Lumped(m) => dofs.iter().flatten().all(|&d| m[d] == 0.0),
                    fem_time::Mass::Consistent(_) => false,
                })
                .collect()
        };
        let n_points = points.len();
        let mut body = Self {
            stepper,
            points,
            nodes,
            node_dofs,
            free_dofs,
            solved_index,
            massless,
            mid_step_law: true,
            placed: Vec::new(),
            by_position: HashMap::new(),
            ball,
            material,
            impulse: vec![0.0; n_free],
            contact_force: vec![0.0; 3 * n_points],
            output,
            size,
            surface: Surface::default(),
            offset: [0.0; 3],
            cells: None,
            recovery: None,
            pressure: Vec::new(),
            block_points: BLOCK_POINTS,
        };
        body.place(false);
        Ok(body)
    }

    /// Places the contact nodes at the current (`mid == false`) or mid-step positions.
    fn place(&mut self, mid: bool) {
        let q = if mid {
            self.stepper.mid_step_position()
        } else {
            self.stepper.position()
        };
        self.placed.clear();
        self.by_position.clear();
        for (k, (&n, dofs)) in self.nodes.iter().zip(&self.node_dofs).enumerate() {
            let x = self.points[n];
            let p = Vector3::from_fn(|c, _| x[c] + dofs[c].map_or(0.0, |d| q[d]));
            self.by_position.entry(bits(&p)).or_insert(k);
            self.placed.push(p);
        }
        let s = &mut self.surface;
        for (k, (&n, dofs)) in s.nodes.iter().zip(&s.node_dofs).enumerate() {
            let x = self.points[n];
            s.placed[k] = Vector3::from_fn(|c, _| x[c] + dofs[c].map_or(0.0, |d| q[d]));
        }
        if let Ok(m) = s.points.get_mut() {
            m.clear();
        }
    }

    /// The same solid whose contact surface also has the faces `faces` (outward, of nodes
    /// of the mesh): other solids' nodes and rigid shapes meet them (issue 24 part B).
    /// Refused under DEF_EXP when a face joins massless nodes and nodes with mass
    /// ([`SolidGroupError::MixedMass`]).
    pub fn with_faces(
        mut self,
        faces: &[crate::solid_faces::Face],
    ) -> Result<Self, SolidGroupError> {
        let dofmap = output_dofmap(&self.stepper);
        let mut index: HashMap<usize, usize> = HashMap::new();
        let mut surface = Surface::default();
        for f in faces {
            let mut c = [0; 6];
            for (k, &n) in f.nodes().iter().enumerate() {
                c[k] = *index.entry(n).or_insert_with(|| {
                    surface.nodes.push(n);
                    surface
                        .node_dofs
                        .push(std::array::from_fn(|j| dofmap.free(3 * n + j)));
                    surface.nodes.len() - 1
                });
            }
            let x: Vec<Vector3<f64>> = f
                .nodes()
                .iter()
                .map(|&n| Vector3::from(self.points[n]))
                .collect();
            let mut size: f64 = 0.0;
            for a in 0..x.len() {
                for b in a + 1..x.len() {
                    size = size.max((x[a] - x[b]).norm());
                }
            }
            surface.faces.push((c, f.corners));
            surface.face_size.push(size);
        }
        surface.placed = vec![Vector3::zeros(); surface.nodes.len()];
        let contact: HashMap<usize, usize> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(k, &n)| (n, k))
            .collect();
        surface.contact = surface
            .nodes
            .iter()
            .map(|n| contact.get(n).copied())
            .collect();
        for f in 0..surface.faces.len() {
            let dofs: Vec<[Option<usize>; 3]> = surface
                .face(f)
                .iter()
                .map(|&a| surface.node_dofs[a])
                .collect();
            mixed_mass(&self.stepper, &surface.face_nodes(f), &dofs)?;
        }
        self.surface = surface;
        self.place(false);
        if !faces.is_empty()
            && let Some(r) = &self.recovery
        {
            self.recovery = Some(r.restricted(faces.iter().map(|f| f.nodes()), &self.points));
        }
        Ok(self)
    }

    /// The same solid drawn translated by `offset` (its `points` are already placed) with its
    /// cells `connectivity` of `kind`, for the frame of a scene of several solids.
    pub fn with_drawing(
        mut self,
        offset: [f64; 3],
        kind: CellKind,
        connectivity: Vec<usize>,
    ) -> Self {
        self.offset = offset;
        self.cells = Some((kind, connectivity));
        self
    }

    /// The same solid with the point field `contact_pressure` in its frames: the nodal contact
    /// forces recovered as a pressure (reference configuration; [`crate::pressure`], eq. C32)
    /// by the faces of its contact surface ([`Self::with_faces`], before or after this call),
    /// or by the boundary faces of its cells `connectivity` of `kind` while it has none
    /// (contact by nodes only). A face without contact (a symmetry plane's) takes no share of
    /// a node's force. The tributary areas (C31) are the whole boundary's.
    pub fn with_pressure(
        mut self,
        kind: CellKind,
        connectivity: &[usize],
    ) -> Result<Self, SolidGroupError> {
        let whole = crate::pressure::Recovery::new(kind, connectivity, &self.points)?;
        let s = &self.surface;
        self.recovery = Some(if s.faces.is_empty() {
            whole
        } else {
            let faces: Vec<Vec<usize>> = (0..s.faces.len()).map(|f| s.face_nodes(f)).collect();
            whole.restricted(faces.iter().map(Vec::as_slice), &self.points)
        });
        Ok(self)
    }

    /// Each mesh node's tributary area on the boundary (C31; empty without
    /// [`Self::with_pressure`]).
    pub fn tributary_areas(&self) -> &[f64] {
        self.recovery.as_ref().map_or(&[], |r| r.tributary_areas())
    }

    /// The face recovery of the pressure field (C32; none without [`Self::with_pressure`]).
    pub fn pressure_recovery(&self) -> Option<&crate::pressure::Recovery> {
        self.recovery.as_ref()
    }

    /// The frame's `contact_pressure` from the step's contact force (C32; empty without a
    /// recovery).
    fn update_pressure(&mut self) {
        match &self.recovery {
            Some(r) => {
                crate::pressure::contact_pressure(&self.contact_force, r, &mut self.pressure)
            }
            None => self.pressure.clear(),
        }
    }

    /// The frame's `contact_pressure` under the nodal contact force `force` (3 per mesh node).
    #[cfg(test)]
    pub(crate) fn pressure_under(&mut self, force: &[f64]) -> &[f64] {
        self.contact_force.copy_from_slice(force);
        self.update_pressure();
        &self.pressure
    }

    /// The contact nodes' positions (mid-step inside a step), in the order of
    /// [`Self::contact_nodes`].
    pub fn placed_nodes(&self) -> &[Vector3<f64>] {
        &self.placed
    }

    /// The surface material.
    pub fn material(&self) -> u32 {
        self.material
    }

    /// The number of contact faces.
    pub fn n_faces(&self) -> usize {
        self.surface.faces.len()
    }

    /// The contact node at `point`: the one placed exactly there, else the nearest.
    fn node_at(&self, point: &Vector3<f64>) -> usize {
        self.by_position
            .get(&bits(point))
            .copied()
            .unwrap_or_else(|| {
                let mut best = (0, f64::INFINITY);
                for (k, p) in self.placed.iter().enumerate() {
                    let d = (p - point).norm_squared();
                    if d < best.1 {
                        best = (k, d);
                    }
                }
                best.0
            })
    }

    /// The solid's size: the diagonal of its reference bounding box.
    pub fn size(&self) -> f64 {
        self.size
    }

    /// The mesh nodes of the contact surface.
    pub fn contact_nodes(&self) -> &[usize] {
        &self.nodes
    }

    /// The nodal contact forces of the last step (`p/h`, 3 per mesh node).
    pub fn contact_force(&self) -> &[f64] {
        &self.contact_force
    }

    /// The stepper.
    pub fn stepper(&self) -> &dyn Stepper {
        self.stepper.stepper()
    }

    /// The same body with its contact nodes (those that carry mass) held by the mid-step
    /// position law (docs/theory/contact.md §9.2, eq. C18) instead of rule (R): an arriving
    /// node lands on the surface at the next mid-step instead of being stopped, with
    /// restitution 0, where the step's impact is; a closed contact is held at the mid-step
    /// positions where DEF_EXP and DEF_LIM evaluate their forces. Restitution is ignored.
    /// The law applies to the body's nodes against planes and rigid shapes, and to the
    /// contacts on its faces. A solid's default ([`SolidBody::new`]); this undoes
    /// [`Self::with_rule_r`].
    pub fn with_mid_step_law(mut self) -> Self {
        self.mid_step_law = true;
        self
    }

    /// The same solid whose DEF_LIM contact columns `A⁻¹Hᵀ` are solved `points` points (`3 ×
    /// points` right-hand sides) at a time, within [`BLOCK_BYTES`] (default [`BLOCK_POINTS`];
    /// 1 is a solve per point, as [`ContactBody::inverse_inertia_map`]: the same bits, one
    /// column block at a time).
    pub fn with_block_points(mut self, points: usize) -> Self {
        self.block_points = points.max(1);
        self
    }

    /// The same body with its contact nodes held by the velocity law and rule (R) of
    /// docs/theory/contact.md §8, the rigid bodies' law, instead of the solids' default
    /// mid-step law (C18): an impact at mid-step with the surface pair's restitution. It
    /// loses a second `1/(2n)` of an impacting bar's rebound (docs/validation.md, "The law on
    /// an exact chain"); kept for comparisons.
    pub fn with_rule_r(mut self) -> Self {
        self.mid_step_law = false;
        self
    }

    /// The position on the free dofs.
    pub fn position(&self) -> &[f64] {
        self.stepper.position()
    }

    /// The velocity on the free dofs.
    pub fn velocity(&self) -> &[f64] {
        self.stepper.velocity()
    }

    /// The free dofs' mesh dofs (`3 node + component`).
    pub fn free_dofs(&self) -> &[usize] {
        &self.free_dofs
    }
}

fn output_dofmap(stepper: &SolidStepper) -> fem_assembly::DofMap {
    let system = match stepper {
        SolidStepper::Exp(s) => s.system(),
        SolidStepper::Lim(s) => s.system(),
    };
    system.operator().dofmap().clone()
}

impl SolidBody {
    /// [`ContactBody::inverse_inertia_maps`] with blocks of `points` points. DEF_LIM: the
    /// columns `A⁻¹H_iᵀ` of `points` points at a time (`3 points` right-hand sides of one
    /// solve with the step's factorization, fewer when they would pass [`BLOCK_BYTES`],
    /// [`block_points`]), and of each column only the rows at the dofs the maps `hs` touch
    /// (`W_ij = H_i A⁻¹H_jᵀ`, eq. C4 of docs/theory/contact.md, reads no other: §9). DEF_EXP
    /// (`A = M` lumped): point by point, in parallel.
    ///
    /// The bits of a column depend on the block it is solved in (faer picks its matrix
    /// product kernels by the number of right-hand sides), not on the thread count; a block
    /// of one point is [`ContactBody::inverse_inertia_map`]'s solve.
    pub fn inverse_inertia_maps_in_blocks(
        &self,
        hs: &[PointMap],
        out: &mut [PointMap],
        points: usize,
    ) {
        let SolidStepper::Lim(s) = &self.stepper else {
            // Point by point over the rayon pool, as the trait's default.
            hs.par_iter()
                .zip(out.par_iter_mut())
                .with_min_len(64)
                .for_each(|(h, g)| self.inverse_inertia_map(h, g));
            return;
        };
        let n = s.free_dofs().len();
        // The rows kept, `(dof, solved index)` by increasing dof (the solved dofs are in the
        // order of the dofs, so this is the order `inverse_inertia_map` gives them in).
        let mut rows: Vec<(usize, usize)> = hs
            .iter()
            .flatten()
            .filter_map(|&(d, _)| self.solved_index[d].map(|i| (d, i)))
            .collect();
        rows.sort_unstable();
        rows.dedup();
        let per_block = block_points(n, hs.len(), points);
        // The blocks are solved in parallel over the rayon pool, each by one thread (faer's
        // `Par::Seq` inside): the partition into blocks depends on `points`, `n` and the
        // number of maps only, so the bits do not depend on the thread count. Memory: one
        // block's right-hand sides (at most BLOCK_BYTES) per block in flight, at most one
        // per thread of the pool.
        hs.par_chunks(per_block)
            .zip(out.par_chunks_mut(per_block))
            .for_each(|(hs, out)| {
                let columns = 3 * hs.len();
                let mut b = vec![0.0; columns * n];
                for (p, h) in hs.iter().enumerate() {
                    for &(d, v) in h {
                        if let Some(i) = self.solved_index[d] {
                            for k in 0..3 {
                                b[(3 * p + k) * n + i] += v[k];
                            }
                        }
                    }
                }
                s.solve_step_matrix_with(&mut b, columns, Par::Seq);
                for (p, g) in out.iter_mut().enumerate() {
                    let column = &b[3 * p * n..3 * (p + 1) * n];
                    g.extend(rows.iter().filter_map(|&(d, i)| {
                        let v = Vector3::new(column[i], column[n + i], column[2 * n + i]);
                        (v != Vector3::zeros()).then_some((d, v))
                    }));
                }
            });
    }
}

impl ContactBody for SolidBody {
    fn dof_count(&self) -> usize {
        self.free_dofs.len()
    }

    fn free_velocity(&self) -> &[f64] {
        self.stepper.free_velocity()
    }

    fn start_velocity(&self) -> &[f64] {
        self.stepper.velocity()
    }

    fn point_map(&self, point: &Vector3<f64>, out: &mut PointMap) {
        if !self.by_position.contains_key(&bits(point))
            && let Some((f, w)) = self.surface.face_point(point)
        {
            // A point of a face: H = [… N_a I₃ …] (C21).
            let (c, n) = self.surface.faces[f];
            let start = out.len();
            for (k, &a) in c[..n as usize].iter().enumerate() {
                if w[k] == 0.0 {
                    continue;
                }
                for (j, d) in self.surface.node_dofs[a].iter().enumerate() {
                    if let Some(d) = d {
                        out.push((*d, Vector3::ith(j, w[k])));
                    }
                }
            }
            out[start..].sort_by_key(|(d, _)| *d);
            return;
        }
        let k = self.node_at(point);
        for (c, d) in self.node_dofs[k].iter().enumerate() {
            if let Some(d) = d {
                out.push((*d, Vector3::ith(c, 1.0)));
            }
        }
    }

    fn inverse_inertia_map(&self, h: &PointMap, out: &mut PointMap) {
        match &self.stepper {
            SolidStepper::Exp(s) => {
                // Massive dofs: M⁻¹ Hᵀ. Massless dofs (a redistributed mass, issue 24):
                // (2/h²) K_cc⁻¹ Hᵀ on the massless block (C28), three columns in one solve
                // with the factorization of the step begun. A point reaching both massless
                // dofs and dofs with mass is refused at set-up (SolidGroupError::MixedMass):
                // its map would need the massless dofs' response to a massive impulse. (Two
                // points of the two kinds active in one step: W leaves that response out
                // between them, and the step's end re-solves the equilibrium, C26.)
                let inv = s.inverse_mass();
                let start = out.len();
                out.extend(
                    h.iter()
                        .filter(|(d, _)| {
                            self.solved_index[*d].is_some() && s.massless_index(*d).is_none()
                        })
                        .map(|&(d, v)| (d, v * inv[d])),
                );
                let n = s.massless_dofs().len();
                if n > 0 && h.iter().any(|(d, _)| s.massless_index(*d).is_some()) {
                    let mut b = vec![0.0; 3 * n];
                    for &(d, v) in h {
                        if let Some(i) = s.massless_index(d) {
                            for k in 0..3 {
                                b[k * n + i] += v[k];
                            }
                        }
                    }
                    s.solve_massless(&mut b, 3);
                    for (i, &d) in s.massless_dofs().iter().enumerate() {
                        let g = Vector3::new(b[i], b[n + i], b[2 * n + i]);
                        if g != Vector3::zeros() {
                            out.push((d, g));
                        }
                    }
                    out[start..].sort_by_key(|(d, _)| *d);
                }
            }
            SolidStepper::Lim(s) => {
                // Three columns A⁻¹ (Hᵀ e_k), one block solve.
                let n = s.free_dofs().len();
                let mut b = vec![0.0; 3 * n];
                for &(d, v) in h {
                    if let Some(i) = self.solved_index[d] {
                        for k in 0..3 {
                            b[k * n + i] += v[k];
                        }
                    }
                }
                s.solve_step_matrix(&mut b, 3);
                for (i, &d) in s.free_dofs().iter().enumerate() {
                    let g = Vector3::new(b[i], b[n + i], b[2 * n + i]);
                    if g != Vector3::zeros() {
                        out.push((d, g));
                    }
                }
            }
        }
    }

    /// [`SolidBody::inverse_inertia_maps_in_blocks`] of [`SolidBody::with_block_points`]'s
    /// block (default [`BLOCK_POINTS`]).
    fn inverse_inertia_maps(&self, hs: &[PointMap], out: &mut [PointMap]) {
        self.inverse_inertia_maps_in_blocks(hs, out, self.block_points);
    }

    fn apply_impulse(&mut self, p: &[f64]) {
        self.impulse.copy_from_slice(p);
    }
}

/// The most memory one block of DEF_LIM's `A⁻¹Hᵀ` columns may hold (right-hand sides of
/// `n_solved` values each, solved in place): 64 MiB.
pub const BLOCK_BYTES: usize = 64 << 20;

/// The points whose columns one block solve takes ([`ContactBody::inverse_inertia_maps`],
/// DEF_LIM): `wanted`, fewer when their `3 n_solved` values would pass [`BLOCK_BYTES`], at
/// least one, at most `n_points`.
pub fn block_points(n_solved: usize, n_points: usize, wanted: usize) -> usize {
    let by_memory = BLOCK_BYTES / (3 * std::mem::size_of::<f64>() * n_solved.max(1));
    wanted.min(by_memory).min(n_points).max(1)
}

/// Points per block solve, chosen by measurement (docs/performance.md, "DEF_LIM's contact
/// matrix W as a block solve").
pub const BLOCK_POINTS: usize = 32;

/// Solids in a scene, each its own body (module documentation).
#[derive(Debug)]
pub struct SolidGroup {
    bodies: Vec<SolidBody>,
    descriptions: Vec<String>,
    in_step: bool,
    /// The frame of several solids: their points, cells and fields, one after the other.
    merged: Merged,
}

/// The buffers of the frame of several solids.
#[derive(Debug, Default)]
struct Merged {
    points: Vec<[f64; 3]>,
    cells: fem_io::VtkCells,
    point_fields: Vec<(String, usize, Vec<f64>)>,
    cell_fields: Vec<(String, usize, Vec<f64>)>,
}

impl SolidGroup {
    /// A group of solids (their frame: the only one's, or all of them placed,
    /// [`SolidBody::with_drawing`]).
    pub fn new(bodies: Vec<SolidBody>) -> Self {
        Self {
            bodies,
            descriptions: Vec::new(),
            in_step: false,
            merged: Merged::default(),
        }
    }

    /// The same group with these lines for `fem check`.
    pub fn with_descriptions(mut self, lines: Vec<String>) -> Self {
        self.descriptions = lines;
        self
    }

    /// The solids.
    pub fn bodies(&self) -> &[SolidBody] {
        &self.bodies
    }
}

impl BodyGroup for SolidGroup {
    fn kind(&self) -> &'static str {
        "solids"
    }

    fn len(&self) -> usize {
        self.bodies.len()
    }

    fn begin_step(&mut self) -> Result<(), StepError> {
        for b in &mut self.bodies {
            b.stepper.begin()?;
            b.place(true);
        }
        self.in_step = true;
        Ok(())
    }

    fn contact_body(&self, i: usize) -> &dyn ContactBody {
        &self.bodies[i]
    }

    fn contact_bodies_mut(&mut self) -> Vec<&mut dyn ContactBody> {
        self.bodies
            .iter_mut()
            .map(|b| b as &mut dyn ContactBody)
            .collect()
    }

    fn placed_shapes(&self, shapes: &mut Vec<PlacedShape>, owners: &mut Vec<usize>) {
        for (i, b) in self.bodies.iter().enumerate() {
            for p in &b.placed {
                shapes.push(PlacedShape {
                    shape: b.ball.clone(),
                    placement: Placement::at(*p),
                    material: b.material,
                });
                owners.push(i);
            }
        }
    }

    fn contact_point(&self, shape: usize, _point: &Vector3<f64>) -> Option<Vector3<f64>> {
        let mut k = shape;
        for b in &self.bodies {
            if k < b.placed.len() {
                return Some(b.placed[k]);
            }
            k -= b.placed.len();
        }
        None
    }

    fn point_contacts(&self) -> bool {
        true
    }

    fn mid_step_body(&self, body: usize) -> bool {
        self.bodies.get(body).is_some_and(|b| b.mid_step_law)
    }

    fn mid_step_level(&self, shape: usize) -> bool {
        let mut k = shape;
        for b in &self.bodies {
            if k < b.massless.len() {
                return b.mid_step_law && !b.massless[k];
            }
            k -= b.massless.len();
        }
        false
    }

    fn position_level(&self, shape: usize) -> bool {
        let mut k = shape;
        for b in &self.bodies {
            if k < b.massless.len() {
                return b.massless[k];
            }
            k -= b.massless.len();
        }
        false
    }

    fn mid_step_point(&self, _i: usize, body_point: &Vector3<f64>) -> Vector3<f64> {
        *body_point
    }

    fn body_coordinates(&self, _i: usize, point: &Vector3<f64>) -> Vector3<f64> {
        *point
    }

    fn speed_bound(&self) -> f64 {
        let mut s: f64 = 0.0;
        for b in &self.bodies {
            for u in [b.stepper.velocity(), b.stepper.free_velocity()] {
                for dofs in &b.node_dofs {
                    let v: f64 = dofs
                        .iter()
                        .map(|d| d.map_or(0.0, |d| u[d] * u[d]))
                        .sum::<f64>()
                        .sqrt();
                    s = s.max(v);
                }
            }
        }
        s
    }

    fn end_step(&mut self) -> Result<GroupStep, StepError> {
        for b in &mut self.bodies {
            let h = b.stepper.stepper().clock().dt();
            b.contact_force.fill(0.0);
            for (&d, &p) in b.free_dofs.iter().zip(&b.impulse) {
                b.contact_force[d] = p / h;
            }
            let impulse = std::mem::take(&mut b.impulse);
            let ended = b.stepper.end(&impulse);
            b.impulse = impulse;
            b.impulse.fill(0.0);
            ended?;
            b.place(false);
        }
        self.in_step = false;
        Ok(GroupStep {
            iterations: 0,
            residual: 0.0,
        })
    }

    fn clock(&self) -> Clock {
        self.bodies[0].stepper.stepper().clock()
    }

    fn energy(&self) -> Energy {
        let mut e = Energy::new(0.0, 0.0);
        for b in &self.bodies {
            let be = b.stepper.stepper().energy().unwrap_or_default();
            e.kinetic += be.kinetic;
            e.potential += be.potential;
            e.external_work += be.external_work + be.reaction_work;
            e.dissipated += be.dissipated;
        }
        e.total = e.kinetic + e.potential;
        e
    }

    fn state(&self) -> Vec<StateField<'_>> {
        if self.bodies.len() == 1 {
            return self.bodies[0].stepper.stepper().state();
        }
        // Several solids: each one's fields under `solidI.`.
        let mut fields = Vec::new();
        for (i, b) in self.bodies.iter().enumerate() {
            for f in b.stepper.stepper().state() {
                fields.push(StateField {
                    name: std::borrow::Cow::Owned(format!("solid{i}.{}", f.name)),
                    kind: f.kind,
                    values: f.values,
                });
            }
        }
        fields
    }

    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        let several = self.bodies.len() > 1;
        for (i, b) in self.bodies.iter_mut().enumerate() {
            if several {
                let prefix = format!("solid{i}.");
                let own: Vec<StateField<'_>> = fields
                    .iter()
                    .filter_map(|f| {
                        f.name.strip_prefix(&prefix).map(|name| StateField {
                            name: std::borrow::Cow::Owned(name.to_string()),
                            kind: f.kind,
                            values: std::borrow::Cow::Borrowed(&f.values[..]),
                        })
                    })
                    .collect();
                b.stepper.stepper_mut().restore(step_index, &own)?;
            } else {
                b.stepper.stepper_mut().restore(step_index, fields)?;
            }
            b.contact_force.fill(0.0);
            b.place(false);
        }
        Ok(())
    }

    fn frame(&mut self) -> Frame<'_> {
        if self.bodies.len() == 1 && self.bodies[0].offset == [0.0; 3] {
            let b = &mut self.bodies[0];
            let position = b.stepper.position().to_vec();
            let velocity = b.stepper.velocity().to_vec();
            b.update_pressure();
            let frame = b
                .output
                .frame(&position, &velocity)
                .with_point_field(Field::vector("contact_force", &b.contact_force));
            return if b.recovery.is_none() {
                frame
            } else {
                frame.with_point_field(Field::scalar("contact_pressure", &b.pressure))
            };
        }
        self.merge_frames();
        let m = &self.merged;
        let mut frame = Frame::new(&m.points, &m.cells);
        for (name, n, values) in &m.point_fields {
            frame = frame.with_point_field(Field::new(name, *n, values));
        }
        for (name, n, values) in &m.cell_fields {
            frame = frame.with_cell_field(Field::new(name, *n, values));
        }
        frame
    }

    fn surface_contacts(
        &self,
        shapes: &[PlacedShape],
        foreign: &[bool],
        prediction: f64,
    ) -> Vec<crate::group::SurfaceContact> {
        crate::pairs::surface_contacts(&self.bodies, shapes, foreign, prediction)
    }

    fn describe(&self) -> Vec<String> {
        let mut lines = self.descriptions.clone();
        for b in &self.bodies {
            let massless = b.massless.iter().filter(|&&m| m).count();
            lines.push(format!(
                "  contact: {} nodes of the solid's surface (node to surface){}",
                b.nodes.len(),
                if massless > 0 {
                    ", their mass moved to their neighbours off the surface (held at position level)"
                } else {
                    ""
                }
            ));
        }
        lines
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl SolidGroup {
    /// Fills the frame of several solids: each solid's frame, its points translated into the
    /// scene, its cells after the previous solids' (a cell field `solid` numbers them).
    fn merge_frames(&mut self) {
        let m = &mut self.merged;
        m.points.clear();
        m.cells = fem_io::VtkCells::new();
        m.point_fields.clear();
        m.cell_fields.clear();
        let mut solid_index: Vec<f64> = Vec::new();
        // The pressure field when every solid has its recovery.
        let pressure = self.bodies.iter().all(|b| b.recovery.is_some());
        for (i, b) in self.bodies.iter_mut().enumerate() {
            let position = b.stepper.position().to_vec();
            let velocity = b.stepper.velocity().to_vec();
            let offset = b.offset;
            let start = m.points.len();
            if let Some((kind, conn)) = &b.cells {
                let shifted: Vec<usize> = conn.iter().map(|&n| n + start).collect();
                m.cells.push_block(*kind, &shifted);
                solid_index.extend(std::iter::repeat_n(i as f64, conn.len() / kind.n_nodes()));
            }
            b.update_pressure();
            let mut frame = b
                .output
                .frame(&position, &velocity)
                .with_point_field(Field::vector("contact_force", &b.contact_force));
            if pressure {
                frame = frame.with_point_field(Field::scalar("contact_pressure", &b.pressure));
            }
            m.points.extend(
                frame
                    .points
                    .iter()
                    .map(|p| std::array::from_fn(|k| p[k] + offset[k])),
            );
            for (into, from) in [
                (&mut m.point_fields, &frame.point_data),
                (&mut m.cell_fields, &frame.cell_data),
            ] {
                for f in from {
                    match into.iter_mut().find(|(name, _, _)| name == f.name) {
                        Some((_, _, values)) => values.extend_from_slice(f.values),
                        None => into.push((f.name.to_string(), f.n_components, f.values.to_vec())),
                    }
                }
            }
        }
        m.cell_fields.push(("solid".to_string(), 1, solid_index));
    }
}

/// The mesh nodes of the named boundary group `group` (dimension 2), if it exists.
pub fn group_nodes(mesh: &Mesh, group: &str) -> Option<Vec<usize>> {
    mesh.groups
        .iter()
        .find(|g| g.name == group && g.dim == 2)
        .map(|g| g.nodes.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The boundary of a box of tet10: every node on a face of the box, and no other (the
    /// mid-side nodes of the boundary faces included; an interior node is none).
    #[test]
    fn the_boundary_of_tet10_cells_holds_the_mid_side_nodes_of_its_faces() {
        for cells in [
            fem_mesh::generate::BoxCells::Tet10,
            fem_mesh::generate::BoxCells::Tet4,
            fem_mesh::generate::BoxCells::Hex8,
        ] {
            let mesh = fem_mesh::generate::box_mesh([1.0, 2.0, 3.0], [2, 2, 3], cells).unwrap();
            let kind = mesh.blocks[0].kind;
            let found = boundary_nodes(kind, &mesh.blocks[0].connectivity).unwrap();
            let on_face = |p: &[f64; 3]| {
                let size = [1.0, 2.0, 3.0];
                (0..3).any(|k| p[k].abs() < 1e-12 || (p[k] - size[k]).abs() < 1e-12)
            };
            let expected: Vec<usize> = (0..mesh.n_nodes())
                .filter(|&k| on_face(&mesh.points[k]))
                .collect();
            assert_eq!(found, expected, "{cells:?}");
            assert!(expected.len() < mesh.n_nodes());
        }
    }

    /// A 2 × 2 × 2 hex8 box under DEF_EXP with no mass on its bottom face's nodes.
    fn massless_bottom() -> (fem_mesh::Mesh, SolidStepper, Vec<usize>) {
        use fem_assembly::{DofMap, SolidOperator};
        use fem_elements::solid::{Lumping, Material, MaterialModel, SolidKind};
        let mesh = fem_mesh::generate::box_mesh(
            [1.0, 1.0, 1.0],
            [2, 2, 2],
            fem_mesh::generate::BoxCells::Hex8,
        )
        .unwrap();
        let conn = &mesh.blocks[0].connectivity;
        let operator = SolidOperator::new(
            SolidKind::Hex8,
            &mesh.points,
            conn,
            Material::new(MaterialModel::SaintVenantKirchhoff, 1e6, 0.3).unwrap(),
            1000.0,
            Lumping::RowSum,
            &DofMap::new(mesh.n_nodes(), 3),
        )
        .unwrap();
        let bottom: Vec<usize> = (0..mesh.n_nodes())
            .filter(|&k| mesh.points[k][2] == 0.0)
            .collect();
        let system = fem_solid::SolidSystem::new(operator, fem_solid::SolidMass::Lumped).unwrap();
        let system = crate::redistribute::redistribute(
            system,
            crate::redistribute::Redistribution::Neighbours,
            8,
            conn,
            &bottom,
        )
        .unwrap();
        let n = system.n_dofs();
        let stepper = SolidStepper::Exp(
            DefExp::new(
                system,
                fem_time::StepSettings::new(1e-5),
                &vec![0.0; n],
                &vec![0.0; n],
                fem_time::CriticalStepCheck::every(0),
            )
            .unwrap(),
        );
        (mesh, stepper, bottom)
    }

    fn output(mesh: &fem_mesh::Mesh, stepper: &SolidStepper) -> SolidOutput {
        let SolidStepper::Exp(s) = stepper else {
            unreachable!("DEF_EXP")
        };
        SolidOutput::new(
            mesh.points.clone(),
            fem_io::VtkCells::new(),
            s.system().shared_operator(),
        )
    }

    #[test]
    fn a_def_exp_contact_point_mixing_massless_dofs_and_dofs_with_mass_is_refused() {
        // The bottom face's nodes (massless) and a top node (with mass) are points of one
        // kind each: taken. A face joining the two kinds is refused, naming a node of each;
        // so is a node with a massless and a massive dof.
        let (mesh, stepper, bottom) = massless_bottom();
        let out = output(&mesh, &stepper);
        let top = mesh.n_nodes() - 1;
        let mut nodes = bottom.clone();
        nodes.push(top);
        let body = SolidBody::new(stepper, mesh.points.clone(), nodes, 0, out).unwrap();
        let conn = &mesh.blocks[0].connectivity;
        let all = crate::solid_faces::boundary_faces(CellKind::Hex8, conn).unwrap();
        let corners = |f: &crate::solid_faces::Face| f.nodes[..f.corners as usize].to_vec();
        let on_bottom: Vec<_> = all
            .iter()
            .filter(|f| corners(f).iter().all(|n| bottom.contains(n)))
            .cloned()
            .collect();
        assert_eq!(on_bottom.len(), 4);
        let body = body.with_faces(&on_bottom).unwrap();
        let e = body.with_faces(&all).unwrap_err();
        let SolidGroupError::MixedMass { massive, massless } = e else {
            panic!("{e}")
        };
        assert!(!bottom.contains(&massive) && bottom.contains(&massless));
        assert!(e.to_string().contains("mass_redistribution"), "{e}");

        // A bottom node whose z dof only is massless.
        let (mesh, mut stepper, bottom) = massless_bottom();
        let SolidStepper::Exp(s) = &mut stepper else {
            unreachable!("DEF_EXP")
        };
        let mut mass = match s.system().mass() {
            fem_time::Mass::Lumped(m) => m.clone(),
            fem_time::Mass::Consistent(_) => unreachable!("lumped"),
        };
        let node = bottom[0];
        mass[3 * node] = 1.0;
        let system = s.system().clone().with_lumped_mass(mass).unwrap();
        let n = system.n_dofs();
        let stepper = SolidStepper::Exp(
            DefExp::new(
                system,
                fem_time::StepSettings::new(1e-5),
                &vec![0.0; n],
                &vec![0.0; n],
                fem_time::CriticalStepCheck::every(0),
            )
            .unwrap(),
        );
        let out = output(&mesh, &stepper);
        let e = SolidBody::new(stepper, mesh.points.clone(), bottom, 0, out).unwrap_err();
        assert_eq!(
            e,
            SolidGroupError::MixedMass {
                massive: node,
                massless: node
            }
        );
    }
}
