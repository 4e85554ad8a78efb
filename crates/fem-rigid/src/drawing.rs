//! How a set of bodies is drawn: each body's mesh, or a box, moved rigidly with its body.
//!
//! A drawing point is stored by its body and its **body coordinates** `B` (relative to the
//! centre of mass, in the body frame, where `Λ = I`) and by its **reference position**
//! `X = c + B` (`c` the centre of mass in the reference configuration, where the drawing's
//! coordinates live). At time `t` the point is at `x = x_c + Λ B` and moves with velocity
//! `v_c + ω × (Λ B)` ([`RigidBodies::material_point`]); its displacement is `x − X`.

use fem_io::VtkCells;
use fem_mesh::{CellKind, Mesh, generate};

use crate::bodies::RigidBodies;
use crate::mat3::{Mat3, Vec3, add, cross, mat_vec, sub};

/// The points and cells of every body's drawing, and the buffers a frame is written from.
#[derive(Clone, Debug, Default)]
pub struct Drawing {
    /// Per point: its body.
    point_body: Vec<usize>,
    /// Per point: body coordinates `B`.
    body_points: Vec<Vec3>,
    /// Per point: reference position `X`.
    reference: Vec<Vec3>,
    cells: VtkCells,
    /// Per point and per cell: the body index, as written to the frame.
    point_body_field: Vec<f64>,
    cell_body_field: Vec<f64>,
    /// Frame buffers: current positions, displacements and velocities (flat, 3 per point).
    points: Vec<[f64; 3]>,
    displacement: Vec<f64>,
    velocity: Vec<f64>,
}

/// A drawing that could not be built (the caller adds the YAML path).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DrawingError {
    /// A box with an edge that is not a positive finite length.
    #[error("a box needs three positive edge lengths, got {0:?}")]
    BadBox([f64; 3]),
    /// A mesh without surface or volume cells.
    #[error(
        "the mesh has no surface or volume cells to draw (its highest dimension is {0}): give \
         a Gmsh mesh of triangles, quadrangles, tetrahedra or hexahedra"
    )]
    NothingToDraw(usize),
}

impl Drawing {
    /// An empty drawing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of points.
    pub fn n_points(&self) -> usize {
        self.body_points.len()
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.cells.n_cells()
    }

    /// Adds a box for `body`: centred on the centre of mass `centre` (reference
    /// configuration), edges `lengths` along the columns of `axes` (a rotation, in body
    /// coordinates), one hexahedron.
    pub fn push_box(
        &mut self,
        body: usize,
        centre: [f64; 3],
        lengths: [f64; 3],
        axes: &Mat3,
    ) -> Result<(), DrawingError> {
        let mesh = generate::box_mesh(lengths, [1, 1, 1], generate::BoxCells::Hex8)
            .map_err(|_| DrawingError::BadBox(lengths))?;
        let half = lengths.map(|l| 0.5 * l);
        let body_points: Vec<Vec3> = mesh
            .points
            .iter()
            .map(|p| mat_vec(axes, sub(*p, half)))
            .collect();
        let block = mesh
            .block_of_kind(CellKind::Hex8)
            .ok_or(DrawingError::BadBox(lengths))?;
        self.push(
            body,
            centre,
            &body_points,
            &[(CellKind::Hex8, &block.connectivity)],
        );
        Ok(())
    }

    /// Adds the cells of the highest dimension (2 or 3) of `mesh` for `body`, whose centre of
    /// mass is at `centre` in the mesh's coordinates (the reference configuration). Nodes no
    /// drawn cell uses are left out.
    pub fn push_mesh(
        &mut self,
        body: usize,
        centre: [f64; 3],
        mesh: &Mesh,
    ) -> Result<(), DrawingError> {
        let dim = mesh.max_dim();
        if dim < 2 {
            return Err(DrawingError::NothingToDraw(dim));
        }
        // Compact numbering of the nodes the drawn cells use, in node order.
        let mut used = vec![false; mesh.n_nodes()];
        for block in mesh.blocks_of_dim(dim) {
            for &n in &block.connectivity {
                used[n] = true;
            }
        }
        let mut local = vec![usize::MAX; mesh.n_nodes()];
        let mut body_points = Vec::new();
        for (n, p) in mesh.points.iter().enumerate() {
            if used[n] {
                local[n] = body_points.len();
                body_points.push(sub(*p, centre));
            }
        }
        let blocks: Vec<(CellKind, Vec<usize>)> = mesh
            .blocks_of_dim(dim)
            .map(|b| (b.kind, b.connectivity.iter().map(|&n| local[n]).collect()))
            .collect();
        let refs: Vec<(CellKind, &[usize])> =
            blocks.iter().map(|(k, c)| (*k, c.as_slice())).collect();
        self.push(body, centre, &body_points, &refs);
        Ok(())
    }

    fn push(
        &mut self,
        body: usize,
        centre: Vec3,
        body_points: &[Vec3],
        blocks: &[(CellKind, &[usize])],
    ) {
        let base = self.body_points.len();
        for &b in body_points {
            self.point_body.push(body);
            self.point_body_field.push(body as f64);
            self.body_points.push(b);
            self.reference.push(add(centre, b));
        }
        for (kind, connectivity) in blocks {
            let shifted: Vec<usize> = connectivity.iter().map(|&n| base + n).collect();
            self.cells.push_block(*kind, &shifted);
            let n_cells = connectivity.len() / kind.n_nodes();
            self.cell_body_field
                .extend(std::iter::repeat_n(body as f64, n_cells));
        }
    }

    /// Moves every point with its body (module docs) and fills the frame buffers.
    pub fn update(&mut self, bodies: &RigidBodies) {
        let n = self.n_points();
        self.points.resize(n, [0.0; 3]);
        self.displacement.resize(3 * n, 0.0);
        self.velocity.resize(3 * n, 0.0);
        let mut k = 0;
        while k < n {
            // One body's run of points: its rotation and velocities once.
            let body = self.point_body[k];
            let lambda = bodies.rotation(body);
            let omega = bodies.spatial_angular_velocity(body);
            let (xc, vc) = (bodies.positions()[body], bodies.velocities()[body]);
            while k < n && self.point_body[k] == body {
                let arm = mat_vec(&lambda, self.body_points[k]);
                let x = add(xc, arm);
                let v = add(vc, cross(omega, arm));
                let u = sub(x, self.reference[k]);
                self.points[k] = x;
                self.displacement[3 * k..3 * k + 3].copy_from_slice(&u);
                self.velocity[3 * k..3 * k + 3].copy_from_slice(&v);
                k += 1;
            }
        }
    }

    /// The frame of the last [`Self::update`]: points at their current positions, point data
    /// `displacement` (from the reference configuration), `velocity` and `body`, cell data
    /// `body`.
    pub fn frame(&self) -> fem_io::Frame<'_> {
        fem_io::Frame::new(&self.points, &self.cells)
            .with_point_field(fem_io::Field::vector("displacement", &self.displacement))
            .with_point_field(fem_io::Field::vector("velocity", &self.velocity))
            .with_point_field(fem_io::Field::scalar("body", &self.point_body_field))
            .with_cell_field(fem_io::Field::scalar("body", &self.cell_body_field))
    }
}

/// The edges of the homogeneous box with mass `mass` and principal moments `moments` about its
/// centre: `a² = 6 (J₂ + J₃ − J₁)/m` and its cyclic permutations (from
/// `J₁ = m (b² + c²)/12`, …). An edge the moments make zero or negative (a flat body) is drawn
/// at a hundredth of the longest.
pub fn equivalent_box(mass: f64, moments: [f64; 3]) -> [f64; 3] {
    let [j1, j2, j3] = moments;
    let edge = |s: f64| (6.0 * s / mass).max(0.0).sqrt();
    let e = [edge(j2 + j3 - j1), edge(j1 + j3 - j2), edge(j1 + j2 - j3)];
    let longest = e.iter().fold(0.0_f64, |m, &v| m.max(v));
    e.map(|v| v.max(0.01 * longest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::{RigidBody, diagonal};
    use crate::mat3::IDENTITY;

    #[test]
    fn equivalent_box_has_the_moments() {
        let (m, [a, b, c]) = (3.0, [0.4, 1.0, 2.5]);
        let j = [
            m * (b * b + c * c) / 12.0,
            m * (a * a + c * c) / 12.0,
            m * (a * a + b * b) / 12.0,
        ];
        let e = equivalent_box(m, j);
        for (got, want) in e.iter().zip([a, b, c]) {
            assert!((got - want).abs() < 1e-14, "{e:?}");
        }
    }

    #[test]
    fn a_box_moves_rigidly() {
        let mut set = RigidBodies::new([0.0; 3]).unwrap();
        let mut body = RigidBody::new(1.0, diagonal([1.0, 2.0, 3.0]));
        body.position = [1.0, 2.0, 3.0];
        body.rotation = [0.0, 0.0, std::f64::consts::FRAC_PI_2];
        body.velocity = [0.5, 0.0, 0.0];
        body.angular_velocity = crate::AngularVelocity::Spatial([0.0, 0.0, 2.0]);
        set.push(body).unwrap();
        let mut d = Drawing::new();
        d.push_box(0, [0.0; 3], [2.0, 4.0, 6.0], &IDENTITY).unwrap();
        assert_eq!((d.n_points(), d.n_cells()), (8, 1));
        d.update(&set);
        // The corner at B = (1, 2, 3) is turned by 90° about z: Λ B = (−2, 1, 3).
        let k = d
            .body_points
            .iter()
            .position(|b| *b == [1.0, 2.0, 3.0])
            .unwrap();
        let x = d.points[k];
        for (got, want) in x.iter().zip([-1.0, 3.0, 6.0]) {
            assert!((got - want).abs() < 1e-15, "{x:?}");
        }
        // v = v_c + ω × (Λ B) = (0.5, 0, 0) + 2 e₃ × (−2, 1, 3) = (0.5 − 2, −4, 0).
        let v = &d.velocity[3 * k..3 * k + 3];
        for (got, want) in v.iter().zip([-1.5, -4.0, 0.0]) {
            assert!((got - want).abs() < 1e-15, "{v:?}");
        }
        // Displacement from the reference position X = B.
        let u = &d.displacement[3 * k..3 * k + 3];
        for (got, want) in u.iter().zip([-2.0, 1.0, 3.0]) {
            assert!((got - want).abs() < 1e-15, "{u:?}");
        }
        assert!(d.push_box(0, [0.0; 3], [1.0, 0.0, 1.0], &IDENTITY).is_err());
    }
}
