//! Detection: shapes, a broad phase and a narrow phase with contact manifolds, over
//! `parry3d-f64` (Rapier's geometry: GJK/EPA, polyhedral contact manifolds, convex hulls,
//! triangle meshes, a BVH) (docs/theory/contact.md, §2).
//!
//! - **Shapes**: sphere, box, convex hull of points, a convex polyhedron given as a closed
//!   triangle surface (checked convex), a triangle-mesh surface (met by convex shapes only).
//! - **Obstacles**: planes and fixed shapes.
//! - **Broad phase**: a BVH (parry's binned SAH build) over the bodies' bounding boxes, grown
//!   by the prediction distance; candidate pairs are sorted, so the output does not depend on
//!   the traversal order. Planes are tested against every body's box.
//! - **Narrow phase**: parry's contact manifolds: a box resting flat on a plane or on a box
//!   gets its four corners (a polyhedral face–face manifold), not one rocking point.
//!
//! Detection runs at whatever configuration the caller gives; the scene's stepper gives the
//! mid-step one `q(t + h/2)` (Solfec's choice, docs/theory/contact.md §2).

use nalgebra::{Matrix3, Vector3};
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::math::{Mat3, Pose, Rot3, Vector};
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy};
use parry3d_f64::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher};
use parry3d_f64::shape::{Ball, ConvexPolyhedron, Cuboid, HalfSpace, SharedShape, TriMesh};

use crate::body::Constraint;
use crate::cone::frame_from_normal;
use crate::law::SurfaceMaterial;

/// Why a shape was refused (the messages are in a user's terms: the scene's input layer
/// prefixes the key).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ShapeError {
    /// A size that is not a positive finite number.
    #[error("{what}: expected a positive number, got {value}")]
    Size {
        /// Which size.
        what: &'static str,
        /// The value.
        value: f64,
    },
    /// Points whose hull has no volume.
    #[error("the {0} points do not span a volume (fewer than four, or all in one plane)")]
    Flat(usize),
    /// A surface that is not convex where convexity is needed.
    #[error(
        "the surface is not convex: vertex {vertex} lies {distance:e} outside the plane of triangle {triangle} (a body's shape must be convex here; a non-convex surface can be an obstacle, or give its convex hull)"
    )]
    NotConvex {
        /// The vertex.
        vertex: usize,
        /// The triangle.
        triangle: usize,
        /// Its distance outside.
        distance: f64,
    },
    /// A triangle surface that cannot be built.
    #[error("the triangle surface is not valid: {0}")]
    Mesh(String),
    /// A non-finite coordinate.
    #[error("point {0} has a coordinate that is not a finite number")]
    NotFinite(usize),
}

/// A shape in its own (body) frame.
#[derive(Clone)]
pub struct Shape {
    inner: SharedShape,
    convex: bool,
}

impl std::fmt::Debug for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Shape({:?}, convex: {})",
            self.inner.shape_type(),
            self.convex
        )
    }
}

fn v(x: &Vector3<f64>) -> Vector {
    Vector::new(x.x, x.y, x.z)
}

fn nv(x: Vector) -> Vector3<f64> {
    Vector3::new(x.x, x.y, x.z)
}

fn positive(what: &'static str, value: f64) -> Result<f64, ShapeError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ShapeError::Size { what, value })
    }
}

fn finite_points(points: &[Vector3<f64>]) -> Result<Vec<Vector>, ShapeError> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if p.iter().all(|c| c.is_finite()) {
                Ok(v(p))
            } else {
                Err(ShapeError::NotFinite(i))
            }
        })
        .collect()
}

impl Shape {
    /// A sphere of radius `radius` about the origin.
    pub fn sphere(radius: f64) -> Result<Self, ShapeError> {
        Ok(Self {
            inner: SharedShape::new(Ball::new(positive("radius", radius)?)),
            convex: true,
        })
    }

    /// A box of half sizes `half` about the origin, along the axes.
    pub fn cuboid(half: [f64; 3]) -> Result<Self, ShapeError> {
        for h in half {
            positive("half size", h)?;
        }
        Ok(Self {
            inner: SharedShape::new(Cuboid::new(Vector::new(half[0], half[1], half[2]))),
            convex: true,
        })
    }

    /// The convex hull of points (for instance a Gmsh mesh's nodes).
    pub fn convex_hull(points: &[Vector3<f64>]) -> Result<Self, ShapeError> {
        let pts = finite_points(points)?;
        check_volume(points)?;
        let hull =
            ConvexPolyhedron::from_convex_hull(&pts).ok_or(ShapeError::Flat(points.len()))?;
        Ok(Self {
            inner: SharedShape::new(hull),
            convex: true,
        })
    }

    /// A convex polyhedron given by its closed triangle surface (outward or inward
    /// orientation), checked convex: every vertex must lie behind the plane of every
    /// triangle within `1e-9` of the surface's size.
    pub fn convex_surface(
        vertices: &[Vector3<f64>],
        triangles: &[[u32; 3]],
    ) -> Result<Self, ShapeError> {
        let pts = finite_points(vertices)?;
        check_convex(vertices, triangles)?;
        let hull =
            ConvexPolyhedron::from_convex_hull(&pts).ok_or(ShapeError::Flat(vertices.len()))?;
        Ok(Self {
            inner: SharedShape::new(hull),
            convex: true,
        })
    }

    /// A triangle-mesh surface (not necessarily convex): it can meet convex shapes, and
    /// serves as a fixed obstacle or a body's surface against convex bodies.
    pub fn triangle_mesh(
        vertices: &[Vector3<f64>],
        triangles: &[[u32; 3]],
    ) -> Result<Self, ShapeError> {
        let pts = finite_points(vertices)?;
        if let Some(t) = triangles
            .iter()
            .find(|t| t.iter().any(|&k| k as usize >= vertices.len()))
        {
            return Err(ShapeError::Mesh(format!(
                "triangle {t:?} names a vertex beyond the {} vertices",
                vertices.len()
            )));
        }
        let mesh = TriMesh::new(pts, triangles.to_vec())
            .map_err(|e| ShapeError::Mesh(format!("{e:?}")))?;
        Ok(Self {
            inner: SharedShape::new(mesh),
            convex: false,
        })
    }

    /// Whether the shape is convex.
    pub fn is_convex(&self) -> bool {
        self.convex
    }

    /// The mass properties of the solid the shape bounds, at `density` (parry's: exact for a
    /// sphere and a box, by tetrahedra from the centroid for a polyhedron; a triangle surface
    /// is taken as a closed surface, either orientation). `None` when the solid has no volume
    /// (an open or degenerate surface).
    pub fn mass_properties(&self, density: f64) -> Option<ShapeMass> {
        let m = if let Some(trimesh) = self.inner.as_trimesh() {
            parry3d_f64::mass_properties::MassProperties::from_trimesh(
                density,
                trimesh.vertices(),
                trimesh.indices(),
            )
        } else {
            self.inner.mass_properties(density)
        };
        let mass = m.mass();
        if !(mass.is_finite() && mass > 0.0) {
            return None;
        }
        let j = m.reconstruct_inertia_matrix();
        let inertia = Matrix3::from_fn(|r, c| j.col(c)[r]);
        let c = m.local_com;
        Some(ShapeMass {
            mass,
            centre: Vector3::new(c.x, c.y, c.z),
            inertia: 0.5 * (inertia + inertia.transpose()),
        })
    }

    /// The shape's surface as triangles in its own frame (a sphere by `2n` meridians and `n`
    /// parallels, `n = subdivisions`), for drawing.
    pub fn triangles(&self, subdivisions: u32) -> (Vec<Vector3<f64>>, Vec<[u32; 3]>) {
        let (points, triangles) = if let Some(ball) = self.inner.as_ball() {
            let n = subdivisions.max(2);
            ball.to_trimesh(2 * n, n)
        } else if let Some(cuboid) = self.inner.as_cuboid() {
            cuboid.to_trimesh()
        } else if let Some(hull) = self.inner.as_convex_polyhedron() {
            hull.to_trimesh()
        } else if let Some(trimesh) = self.inner.as_trimesh() {
            (trimesh.vertices().to_vec(), trimesh.indices().to_vec())
        } else {
            (Vec::new(), Vec::new())
        };
        (points.into_iter().map(nv).collect(), triangles)
    }

    /// The radius of a sphere about the frame's origin holding the shape: the smaller of the
    /// distance to the farthest corner of its box and the reach of parry's bounding sphere
    /// (`|centre| + radius`), so that a ball's is its radius, not `√3` times it.
    pub fn bounding_radius(&self) -> f64 {
        let aabb = self.inner.compute_local_aabb();
        let far = |a: f64, b: f64| a.abs().max(b.abs());
        let corner = Vector3::new(
            far(aabb.mins.x, aabb.maxs.x),
            far(aabb.mins.y, aabb.maxs.y),
            far(aabb.mins.z, aabb.maxs.z),
        )
        .norm();
        let sphere = self.inner.compute_local_bounding_sphere();
        let reach = sphere.center().length() + sphere.radius();
        // The sphere where it is tighter by more than rounding (a ball); the corner otherwise
        // (a box's two values agree but for the last bits).
        if reach < corner * (1.0 - 1e-9) {
            reach
        } else {
            corner
        }
    }
}

/// The mass properties of a shape's solid ([`Shape::mass_properties`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeMass {
    /// Mass.
    pub mass: f64,
    /// Centre of mass (shape frame).
    pub centre: Vector3<f64>,
    /// Inertia about the centre of mass, shape axes (symmetric).
    pub inertia: Matrix3<f64>,
}

/// The points span a volume: the farthest point from the plane of three well-spread points
/// lies farther than `1e-10` of the points' extent.
fn check_volume(points: &[Vector3<f64>]) -> Result<(), ShapeError> {
    let flat = Err(ShapeError::Flat(points.len()));
    if points.len() < 4 {
        return flat;
    }
    let p0 = points[0];
    let far = |f: &dyn Fn(&Vector3<f64>) -> f64| {
        points
            .iter()
            .map(|p| (f(p), *p))
            .fold((-1.0, p0), |a, b| if b.0 > a.0 { b } else { a })
    };
    let (d1, p1) = far(&|p| (p - p0).norm());
    if d1 == 0.0 {
        return flat;
    }
    let e = (p1 - p0) / d1;
    let (d2, p2) = far(&|p| (p - p0 - e * e.dot(&(p - p0))).norm());
    if d2 <= 1e-10 * d1 {
        return flat;
    }
    let n = e.cross(&(p2 - p0)).normalize();
    let (d3, _) = far(&|p| n.dot(&(p - p0)).abs());
    if d3 <= 1e-10 * d1 {
        return flat;
    }
    Ok(())
}

/// Every vertex behind every triangle's plane (the triangles' orientation is taken from
/// the first one that is not degenerate, against the centroid).
fn check_convex(vertices: &[Vector3<f64>], triangles: &[[u32; 3]]) -> Result<(), ShapeError> {
    check_volume(vertices)?;
    if triangles.len() < 4 {
        return Err(ShapeError::Flat(vertices.len()));
    }
    for t in triangles {
        if t.iter().any(|&k| k as usize >= vertices.len()) {
            return Err(ShapeError::Mesh(format!(
                "triangle {t:?} names a vertex beyond the {} vertices",
                vertices.len()
            )));
        }
    }
    let centroid = vertices.iter().sum::<Vector3<f64>>() / vertices.len() as f64;
    let size = vertices
        .iter()
        .map(|p| (p - centroid).norm())
        .fold(0.0, f64::max);
    for (ti, t) in triangles.iter().enumerate() {
        let [a, b, c] = t.map(|k| vertices[k as usize]);
        let n = (b - a).cross(&(c - a));
        let len = n.norm();
        if len <= 1e-14 * size * size {
            continue;
        }
        let mut n = n / len;
        if n.dot(&(a - centroid)) < 0.0 {
            n = -n;
        }
        for (vi, p) in vertices.iter().enumerate() {
            let d = n.dot(&(p - a));
            if d > 1e-9 * size {
                return Err(ShapeError::NotConvex {
                    vertex: vi,
                    triangle: ti,
                    distance: d,
                });
            }
        }
    }
    Ok(())
}

/// A placement: `x_world = translation + rotation · x_body`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    /// Translation.
    pub translation: Vector3<f64>,
    /// Rotation (orthonormal, determinant 1).
    pub rotation: Matrix3<f64>,
}

impl Placement {
    /// A translation only.
    pub fn at(translation: Vector3<f64>) -> Self {
        Self {
            translation,
            rotation: Matrix3::identity(),
        }
    }

    fn pose(&self) -> Pose {
        let r = &self.rotation;
        let m = Mat3::from_cols(
            Vector::new(r[(0, 0)], r[(1, 0)], r[(2, 0)]),
            Vector::new(r[(0, 1)], r[(1, 1)], r[(2, 1)]),
            Vector::new(r[(0, 2)], r[(1, 2)], r[(2, 2)]),
        );
        Pose::from_parts(v(&self.translation), Rot3::from_mat3(&m).normalize())
    }
}

/// A fixed obstacle.
#[derive(Clone, Debug)]
pub enum Obstacle {
    /// The plane through `point` with unit `normal` pointing out of the solid side.
    Plane {
        /// A point of the plane.
        point: Vector3<f64>,
        /// The outward normal.
        normal: Vector3<f64>,
    },
    /// A fixed shape.
    Fixed {
        /// The shape.
        shape: Shape,
        /// Where it is.
        placement: Placement,
    },
}

/// A body's shape where detection sees it.
#[derive(Clone, Debug)]
pub struct PlacedShape {
    /// The shape.
    pub shape: Shape,
    /// Where it is.
    pub placement: Placement,
    /// Its surface material (an index into the caller's table).
    pub material: u32,
}

/// The second party of a detected contact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Other {
    /// Another body.
    Body(usize),
    /// An obstacle.
    Obstacle(usize),
}

/// A detected contact point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Detected {
    /// The first body.
    pub first: usize,
    /// The other party.
    pub second: Other,
    /// The contact point (world): the midpoint of the two surfaces' closest points.
    pub point: Vector3<f64>,
    /// The unit normal (world), from the second party into the first.
    pub normal: Vector3<f64>,
    /// The gap: positive apart, negative overlapping.
    pub gap: f64,
    /// Which features touch: the sub-shapes of the two parties (a triangle of a mesh; 0 for a
    /// single shape) and parry's packed feature ids (vertex, edge or face) on each. With
    /// `first` and `second` it names the contact from one step to the next, for a warm start
    /// by identity.
    pub features: [u32; 4],
}

/// Why detection failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DetectError {
    /// Two shapes the narrow phase cannot pair (a triangle mesh against a triangle mesh).
    #[error(
        "bodies {first} and {second:?}: two non-convex triangle surfaces cannot be paired; make one of them convex"
    )]
    Unsupported {
        /// The first body.
        first: usize,
        /// The other party.
        second: Other,
    },
    /// A plane with a zero normal.
    #[error("obstacle {0}: the plane's normal is not a direction")]
    PlaneNormal(usize),
}

/// Settings of [`detect`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DetectSettings {
    /// Points closer than this (gap ≤ prediction) are reported.
    pub prediction: f64,
}

/// Detects the contacts of placed body shapes with each other and with obstacles. Output
/// order: by first body, then other party, then manifold and point (deterministic).
pub fn detect(
    bodies: &[PlacedShape],
    obstacles: &[Obstacle],
    settings: &DetectSettings,
) -> Result<Vec<Detected>, DetectError> {
    let prediction = settings.prediction.max(0.0);
    let poses: Vec<Pose> = bodies.iter().map(|b| b.placement.pose()).collect();
    let aabbs: Vec<Aabb> = bodies
        .iter()
        .zip(&poses)
        .map(|(b, p)| b.shape.inner.compute_aabb(p).loosened(prediction / 2.0))
        .collect();
    // Broad phase: bodies against bodies through the BVH.
    let mut pairs: Vec<(usize, Other)> = Vec::new();
    if !aabbs.is_empty() {
        let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &aabbs);
        for (i, a) in aabbs.iter().enumerate() {
            for j in bvh.intersect_aabb(a) {
                let j = j as usize;
                if j > i {
                    pairs.push((i, Other::Body(j)));
                }
            }
        }
    }
    // Obstacles: planes against every body; fixed shapes through their boxes.
    let mut obstacle_shapes: Vec<(SharedShape, Pose)> = Vec::with_capacity(obstacles.len());
    for (k, o) in obstacles.iter().enumerate() {
        match o {
            Obstacle::Plane { point, normal } => {
                let n = normal
                    .try_normalize(0.0)
                    .ok_or(DetectError::PlaneNormal(k))?;
                if !n.iter().all(|c| c.is_finite()) {
                    return Err(DetectError::PlaneNormal(k));
                }
                // HalfSpace's normal is +z of its pose... parry's HalfSpace takes its
                // normal directly, at a pose translated to the plane's point.
                obstacle_shapes.push((
                    SharedShape::new(HalfSpace::new(v(&n))),
                    Pose::from_translation(v(point)),
                ));
                for i in 0..bodies.len() {
                    pairs.push((i, Other::Obstacle(k)));
                }
            }
            Obstacle::Fixed { shape, placement } => {
                let pose = placement.pose();
                let aabb = shape.inner.compute_aabb(&pose).loosened(prediction / 2.0);
                for (i, a) in aabbs.iter().enumerate() {
                    if a.intersects(&aabb) {
                        pairs.push((i, Other::Obstacle(k)));
                    }
                }
                obstacle_shapes.push((shape.inner.clone(), pose));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    // Narrow phase.
    use rayon::prelude::*;
    let found: Result<Vec<Vec<Detected>>, DetectError> = pairs
        .par_iter()
        .map(|&(i, other)| {
            let (g2, pose2, convex2) = match other {
                Other::Body(j) => (&bodies[j].shape.inner, poses[j], bodies[j].shape.convex),
                Other::Obstacle(k) => (
                    &obstacle_shapes[k].0,
                    obstacle_shapes[k].1,
                    !matches!(&obstacles[k], Obstacle::Fixed { shape, .. } if !shape.convex),
                ),
            };
            if !bodies[i].shape.convex && !convex2 {
                return Err(DetectError::Unsupported {
                    first: i,
                    second: other,
                });
            }
            // A ball against a plane: the plane's normal is known ([`BallOnPlane`], C24).
            let ball_on_plane = match (other, bodies[i].shape.inner.as_ball()) {
                (Other::Obstacle(k), Some(ball)) => match &obstacles[k] {
                    Obstacle::Plane { point, normal } => Some(BallOnPlane {
                        centre: bodies[i].placement.translation,
                        radius: ball.radius,
                        point: *point,
                        normal: normal.normalize(),
                    }),
                    Obstacle::Fixed { .. } => None,
                },
                _ => None,
            };
            let pose1 = poses[i];
            let pos12 = pose1.inv_mul(&pose2);
            let mut manifolds: Vec<ContactManifold<(), ()>> = Vec::new();
            let mut workspace = None;
            DefaultQueryDispatcher
                .contact_manifolds(
                    &pos12,
                    bodies[i].shape.inner.as_ref(),
                    g2.as_ref(),
                    prediction,
                    &mut manifolds,
                    &mut workspace,
                )
                .map_err(|_| DetectError::Unsupported {
                    first: i,
                    second: other,
                })?;
            let mut out: Vec<Detected> = Vec::new();
            // Points closer than this to one already taken in the same pair are the same point
            // (two coincident faces give each corner twice): keep the first.
            let extent = aabbs[i].extents().length();
            let same = 1e-9 * extent.max(f64::MIN_POSITIVE);
            for m in &manifolds {
                let sub1 = m.subshape_pos1().copied().unwrap_or(Pose::IDENTITY);
                let sub2 = m.subshape_pos2().copied().unwrap_or(Pose::IDENTITY);
                let n1 = (pose1 * sub1).transform_vector(m.local_n1);
                let normal = -nv(n1).normalize();
                for c in &m.points {
                    if c.dist > prediction {
                        continue;
                    }
                    let p1 = (pose1 * sub1).transform_point(c.local_p1);
                    let p2 = (pose2 * sub2).transform_point(c.local_p2);
                    let mut point = (nv(p1) + nv(p2)) * 0.5;
                    let (mut normal, mut gap) = (normal, c.dist);
                    if let Some(b) = &ball_on_plane
                        && let Some(exact) = b.where_parry_is_off(&normal)
                    {
                        (point, normal, gap) = exact;
                    }
                    if out.iter().any(|d| (d.point - point).norm() <= same) {
                        continue;
                    }
                    out.push(Detected {
                        first: i,
                        second: other,
                        point,
                        normal,
                        gap,
                        features: [m.subshape1, m.subshape2, c.fid1.0, c.fid2.0],
                    });
                }
            }
            Ok(out)
        })
        .collect();
    Ok(found?.into_iter().flatten().collect())
}

/// A ball (a body's sphere, or a solid's node seen as a tiny ball, docs/theory/contact.md §9)
/// against a plane obstacle, whose contact is known in closed form: with `n` the plane's unit
/// normal, `d = n · (c − p)` the centre's signed distance,
///
/// ```text
/// normal = n,   gap = d − r,   point = c − n (d + r)/2                             (C24)
/// ```
///
/// (the midpoint of the centre's projection `c − n d` and the ball's lowest point `c − n r`).
/// Parry's ball–convex manifold gives the same up to rounding, except when the centre lies
/// on the plane (`d = 0`, every node of a solid standing on it): it then takes the direction
/// from the plane's anchor point to the centre, a normal *in* the plane, and moves the point
/// sideways by the radius — the contact then sees no approach along the plane's normal and
/// the node sinks (docs/validation.md, "No node below a plane").
struct BallOnPlane {
    centre: Vector3<f64>,
    radius: f64,
    point: Vector3<f64>,
    normal: Vector3<f64>,
}

impl BallOnPlane {
    /// (C24)'s point, normal and gap where parry's `normal` is not the plane's (beyond
    /// rounding, `1e-12`), `None` where it is: parry's result is then kept bit for bit.
    fn where_parry_is_off(
        &self,
        normal: &Vector3<f64>,
    ) -> Option<(Vector3<f64>, Vector3<f64>, f64)> {
        if (normal - self.normal).norm() <= 1e-12 {
            return None;
        }
        let n = self.normal;
        let d = n.dot(&(self.centre - self.point));
        Some((
            self.centre - n * (0.5 * (d + self.radius)),
            n,
            d - self.radius,
        ))
    }
}

/// Surface-pair materials: a default and overrides by pair of material indices (the pair
/// is unordered).
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialTable {
    /// For pairs not listed.
    pub default: SurfaceMaterial,
    /// `((a, b), material)` with `a ≤ b`.
    pub pairs: Vec<((u32, u32), SurfaceMaterial)>,
    /// The material index of each obstacle.
    pub obstacle_materials: Vec<u32>,
}

impl MaterialTable {
    /// The material of a pair of material indices.
    pub fn pair(&self, a: u32, b: u32) -> SurfaceMaterial {
        let key = (a.min(b), a.max(b));
        self.pairs
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, m)| *m)
            .unwrap_or(self.default)
    }
}

/// Constraint points from detected contacts, with the law of each pair's material and the
/// frame from the normal ([`frame_from_normal`]).
pub fn constraints_of(
    detected: &[Detected],
    bodies: &[PlacedShape],
    materials: &MaterialTable,
) -> Vec<Constraint> {
    detected
        .iter()
        .map(|d| {
            let (second, m2) = match d.second {
                Other::Body(j) => (Some(j), bodies[j].material),
                Other::Obstacle(k) => (
                    None,
                    materials.obstacle_materials.get(k).copied().unwrap_or(0),
                ),
            };
            Constraint {
                first: d.first,
                second,
                point: d.point,
                point_second: d.point,
                frame: frame_from_normal(&d.normal),
                gap: d.gap,
                law: materials.pair(bodies[d.first].material, m2).law(),
            }
        })
        .collect()
}

/// Every pair (query, leaf) of axis-aligned boxes that overlap, each box given by its lower
/// and upper corners, sorted: the broad phase of a caller's own narrow phase (a solid's
/// faces against nodes or shapes, issue 24), over the same BVH as [`detect`].
pub fn box_pairs(
    leaves: &[(Vector3<f64>, Vector3<f64>)],
    queries: &[(Vector3<f64>, Vector3<f64>)],
) -> Vec<(usize, usize)> {
    if leaves.is_empty() || queries.is_empty() {
        return Vec::new();
    }
    let aabb = |(lo, hi): &(Vector3<f64>, Vector3<f64>)| Aabb::new(v(lo), v(hi));
    let boxes: Vec<Aabb> = leaves.iter().map(aabb).collect();
    let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &boxes);
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (q, b) in queries.iter().enumerate() {
        let a = aabb(b);
        pairs.extend(bvh.intersect_aabb(&a).map(|j| (q, j as usize)));
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// The nearest points of a placed convex shape and a triangle, within `prediction`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleContact {
    /// The point on the triangle.
    pub on_triangle: Vector3<f64>,
    /// The point on the shape.
    pub on_shape: Vector3<f64>,
    /// The unit normal out of the triangle towards the shape.
    pub normal: Vector3<f64>,
    /// The distance (`< 0` overlapping).
    pub gap: f64,
}

/// The contact of a placed shape with the triangle `triangle` (world points), if they are
/// closer than `prediction` (parry's `contact` query: GJK, EPA when overlapping). `None` for
/// a shape that is not convex, or a triangle without area.
pub fn shape_against_triangle(
    shape: &PlacedShape,
    triangle: &[Vector3<f64>; 3],
    prediction: f64,
) -> Option<TriangleContact> {
    if !shape.shape.convex {
        return None;
    }
    let [a, b, c] = triangle;
    if (b - a).cross(&(c - a)).norm() == 0.0 {
        return None;
    }
    let tri = parry3d_f64::shape::Triangle::new(v(a), v(b), v(c));
    let pose = shape.placement.pose();
    let found = parry3d_f64::query::contact(
        &Pose::IDENTITY,
        &tri,
        &pose,
        shape.shape.inner.as_ref(),
        prediction.max(0.0),
    )
    .ok()??;
    Some(TriangleContact {
        on_triangle: nv(found.point1),
        on_shape: nv(found.point2),
        normal: nv(found.normal1).normalize(),
        gap: found.dist,
    })
}
