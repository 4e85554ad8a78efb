//! Rigid bodies: the input description of one body ([`RigidBody`]) and the state of a set of
//! bodies stored as a struct of arrays ([`RigidBodies`]).
//!
//! Conventions (also in `docs/theory/rigid_body.md`):
//! - The **body frame** is the reference configuration: `Λ = I` there. The inertia `J` is
//!   given in it, about the centre of mass; the spatial inertia at time `t` is `Λ J Λᵀ`.
//! - `Λ(t0) = exp[Ψ0]` from a rotation vector `Ψ0`.
//! - `Ω` is the **body-frame** (referential) angular velocity; the spatial one is `ω = Λ Ω`.
//!   An initial angular velocity may be given either way ([`AngularVelocity`]).
//! - Positions, velocities, forces, torques and gravity are spatial. An applied force acts at
//!   the centre of mass.
//! - A body with a **fixed point** `p` turns about it: its centre is `x = p + Λ X_c` with
//!   `X_c = Λ(t0)ᵀ (x(t0) − p)`, and its rotation is stepped with the inertia about `p`
//!   (parallel axis, [`inertia_about_point`]) and the torque about `p`, which includes the
//!   moment `(Λ X_c) × (m g + F)` of gravity and of the applied force. The schemes are then
//!   exactly the seed's, with `J` and `t` taken about `p`.
//!
//! Internally each body is stored in its **principal frame**: with `J = R D Rᵀ` (`R` a
//! rotation, `D` diagonal; `R = I` when the given `J` is already diagonal), the state kept is
//! `Λ R`, `Rᵀ Ω` and `D`. The schemes are equivariant under this constant change of body frame
//! (`exp[RᵀΨ] = Rᵀ exp[Ψ] R`), so nothing changes but the cost (`J` is three numbers) and the
//! round-off (`J⁻¹` is a division, see [`crate::scheme`]). The accessors return the quantities
//! in the body frame as given.

use fem_constraints::TimeFunction;
use rayon::prelude::*;

use crate::error::RigidError;
use crate::mat3::{
    Mat3, Vec3, add, cross, diag_mul, dot, mat_mul_t, mat_t_vec, mat_vec, norm, scale, sub,
};
use crate::rotation::{exp_map, orthonormality_defect};

/// An initial angular velocity, in the body frame (`Ω`) or in space (`ω = Λ Ω`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AngularVelocity {
    /// The referential (body-frame) angular velocity `Ω`.
    Body([f64; 3]),
    /// The spatial angular velocity `ω`.
    Spatial([f64; 3]),
}

impl Default for AngularVelocity {
    fn default() -> Self {
        Self::Body([0.0; 3])
    }
}

/// One rigid body as given: mass properties, initial state, support and loads.
#[derive(Clone, Debug)]
pub struct RigidBody {
    /// Mass `m > 0`.
    pub mass: f64,
    /// Inertia tensor about the centre of mass in the body frame, row-major; symmetric
    /// positive definite.
    pub inertia: [[f64; 3]; 3],
    /// Position of the centre of mass at `t0`.
    pub position: [f64; 3],
    /// Rotation vector `Ψ0`: `Λ(t0) = exp[Ψ0]`.
    pub rotation: [f64; 3],
    /// Velocity of the centre of mass at `t0`. With a fixed point it follows from the angular
    /// velocity: leave it zero, or give exactly `ω × (x − p)`.
    pub velocity: [f64; 3],
    /// Angular velocity at `t0`.
    pub angular_velocity: AngularVelocity,
    /// A fixed point (spatial) about which the body turns, if any.
    pub fixed_point: Option<[f64; 3]>,
    /// Applied spatial force at the centre of mass, per component, as functions of time.
    pub force: Option<[TimeFunction; 3]>,
    /// Applied spatial torque (about the centre of mass, or about the fixed point), per
    /// component, as functions of time.
    pub torque: Option<[TimeFunction; 3]>,
}

impl RigidBody {
    /// A body of mass `mass` and inertia `inertia` (about its centre, body frame) at rest at
    /// the origin, unrotated, free, without applied loads.
    pub fn new(mass: f64, inertia: [[f64; 3]; 3]) -> Self {
        Self {
            mass,
            inertia,
            position: [0.0; 3],
            rotation: [0.0; 3],
            velocity: [0.0; 3],
            angular_velocity: AngularVelocity::default(),
            fixed_point: None,
            force: None,
            torque: None,
        }
    }
}

/// `diag(j)` as a row-major matrix.
pub fn diagonal(j: [f64; 3]) -> [[f64; 3]; 3] {
    [[j[0], 0.0, 0.0], [0.0, j[1], 0.0], [0.0, 0.0, j[2]]]
}

/// The parallel-axis shift: the inertia about a point at `offset` from the centre of mass,
/// `J_p = J_c + m (|d|² I − d dᵀ)`, for `J_c` about the centre and `d = offset`.
pub fn inertia_about_point(
    inertia_about_centre: [[f64; 3]; 3],
    mass: f64,
    offset: [f64; 3],
) -> [[f64; 3]; 3] {
    shift(inertia_about_centre, mass, offset)
}

/// The inverse shift: the inertia about the centre of mass of a body whose inertia about a
/// point at `offset` from the centre is `J_p`: `J_c = J_p − m (|d|² I − d dᵀ)`.
pub fn inertia_about_centre(
    inertia_about_point: [[f64; 3]; 3],
    mass: f64,
    offset: [f64; 3],
) -> [[f64; 3]; 3] {
    shift(inertia_about_point, -mass, offset)
}

fn shift(j: Mat3, mass: f64, d: Vec3) -> Mat3 {
    let dd = dot(d, d);
    let mut out = j;
    for i in 0..3 {
        for k in 0..3 {
            let delta = if i == k { dd } else { 0.0 };
            out[i][k] += mass * (delta - d[i] * d[k]);
        }
    }
    out
}

/// A body turning about a fixed point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pivot {
    pub body: usize,
    /// The fixed point `p` (spatial).
    pub point: Vec3,
    /// `X_c`, the centre of mass relative to `p`, in the principal frame.
    pub offset: Vec3,
}

/// The principal axes of a body whose given inertia is not diagonal.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub body: usize,
    /// `R`, columns the principal axes in the given body frame; `det R = +1`.
    pub axes: Mat3,
}

/// A body with applied loads.
#[derive(Clone, Debug)]
pub(crate) struct Loads {
    pub body: usize,
    pub force: Option<[TimeFunction; 3]>,
    pub torque: Option<[TimeFunction; 3]>,
}

/// A set of rigid bodies under one gravity, stored as a struct of arrays: one array per
/// quantity, indexed by body, so that a step streams through each array once.
///
/// Per body (always): mass, principal moments `D` of the inertia about the centre of rotation
/// (the centre of mass, or the fixed point) and their reciprocals, position and velocity of
/// the centre of mass, rotation `Λ R` and angular velocity `Rᵀ Ω` (module docs) — 1 + 3 + 3 +
/// 3 + 3 + 9 + 3 = 25 numbers, 200 bytes, of which a step of an unloaded free body reads 24
/// (not the mass) and writes 18. Fixed points, principal axes other than the given ones and
/// applied loads are held in short side lists sorted by body, so bodies without them cost
/// nothing extra.
#[derive(Clone, Debug)]
pub struct RigidBodies {
    pub(crate) gravity: Vec3,
    pub(crate) mass: Vec<f64>,
    pub(crate) inertia: Vec<Vec3>,
    pub(crate) inverse_inertia: Vec<Vec3>,
    pub(crate) position: Vec<Vec3>,
    pub(crate) velocity: Vec<Vec3>,
    pub(crate) rotation: Vec<Mat3>,
    pub(crate) omega: Vec<Vec3>,
    pub(crate) pivots: Vec<Pivot>,
    pub(crate) frames: Vec<Frame>,
    pub(crate) loads: Vec<Loads>,
}

/// What a set of bodies carries at one instant (summed over the bodies).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observables {
    /// Kinetic energy `Σ ½ m |v|² + ½ Ω·J_c Ω` (for a body on a fixed point `½ Ω·J_p Ω`, the
    /// same number).
    pub kinetic: f64,
    /// Gravity potential `Σ −m g·x` (zero at the origin).
    pub potential: f64,
    /// `kinetic + potential`. Applied forces and torques have no potential and are not in it.
    pub total: f64,
    /// Spatial angular momentum: each free body's about the origin, `x × m v + Λ J_c Ω`; each
    /// body on a fixed point `p` about `p`, `Λ J_p Ω`. (With every fixed point at the origin,
    /// the total angular momentum about the origin.)
    pub angular_momentum: [f64; 3],
    /// Linear momentum `Σ m v`.
    pub linear_momentum: [f64; 3],
    /// `max over bodies of max_ij |(ΛᵀΛ − I)_ij|`.
    pub orthonormality_defect: f64,
}

impl Observables {
    const ZERO: Self = Self {
        kinetic: 0.0,
        potential: 0.0,
        total: 0.0,
        angular_momentum: [0.0; 3],
        linear_momentum: [0.0; 3],
        orthonormality_defect: 0.0,
    };

    fn join(self, o: Self) -> Self {
        Self {
            kinetic: self.kinetic + o.kinetic,
            potential: self.potential + o.potential,
            total: self.total + o.total,
            angular_momentum: add(self.angular_momentum, o.angular_momentum),
            linear_momentum: add(self.linear_momentum, o.linear_momentum),
            orthonormality_defect: self.orthonormality_defect.max(o.orthonormality_defect),
        }
    }
}

/// Bodies per parallel work item (reductions are summed per chunk, then in chunk order, so
/// results do not depend on the number of threads).
pub(crate) const CHUNK: usize = 4096;

const ASYMMETRY_TOLERANCE: f64 = 1e-12;
const CONDITION_LIMIT: f64 = 1e-12;
const FIXED_POINT_VELOCITY_TOLERANCE: f64 = 1e-9;

impl RigidBodies {
    /// An empty set under `gravity` (spatial, e.g. `[0, 0, −9.81]`).
    pub fn new(gravity: [f64; 3]) -> Result<Self, RigidError> {
        Self::with_capacity(gravity, 0)
    }

    /// An empty set with room for `capacity` bodies.
    pub fn with_capacity(gravity: [f64; 3], capacity: usize) -> Result<Self, RigidError> {
        if gravity.iter().any(|g| !g.is_finite()) {
            return Err(RigidError::NonFiniteGravity { gravity });
        }
        Ok(Self {
            gravity,
            mass: Vec::with_capacity(capacity),
            inertia: Vec::with_capacity(capacity),
            inverse_inertia: Vec::with_capacity(capacity),
            position: Vec::with_capacity(capacity),
            velocity: Vec::with_capacity(capacity),
            rotation: Vec::with_capacity(capacity),
            omega: Vec::with_capacity(capacity),
            pivots: Vec::new(),
            frames: Vec::new(),
            loads: Vec::new(),
        })
    }

    /// A set of `bodies` under `gravity`.
    pub fn from_bodies(
        gravity: [f64; 3],
        bodies: impl IntoIterator<Item = RigidBody>,
    ) -> Result<Self, RigidError> {
        let mut set = Self::new(gravity)?;
        for b in bodies {
            set.push(b)?;
        }
        Ok(set)
    }

    /// Validates `body` and adds it; returns its index. Refused (typed error naming the body
    /// and the numbers): non-positive or non-finite mass, non-finite entries, an inertia that
    /// is not symmetric (to `1e-12` relative) or not positive definite (smallest eigenvalue
    /// at most `1e-12` times the largest, about the centre or about the fixed point), a
    /// velocity inconsistent with the fixed point.
    pub fn push(&mut self, body: RigidBody) -> Result<usize, RigidError> {
        let index = self.mass.len();
        let finite =
            |field: &'static str, values: &[f64]| match values.iter().find(|v| !v.is_finite()) {
                Some(&value) => Err(RigidError::NonFiniteInput {
                    body: index,
                    field,
                    value,
                }),
                None => Ok(()),
            };
        if !(body.mass.is_finite() && body.mass > 0.0) {
            return Err(RigidError::InvalidMass {
                body: index,
                mass: body.mass,
            });
        }
        finite("inertia", body.inertia.as_flattened())?;
        finite("position", &body.position)?;
        finite("rotation", &body.rotation)?;
        finite("velocity", &body.velocity)?;
        let (AngularVelocity::Body(w) | AngularVelocity::Spatial(w)) = body.angular_velocity;
        finite("angular_velocity", &w)?;
        if let Some(p) = body.fixed_point {
            finite("fixed_point", &p)?;
        }

        checked_inertia(index, &body.inertia, "about the centre of mass")?;
        let lambda = exp_map(body.rotation);
        let omega = match body.angular_velocity {
            AngularVelocity::Body(w) => w,
            AngularVelocity::Spatial(w) => mat_t_vec(&lambda, w),
        };
        // The inertia about the centre of rotation, in the given body frame.
        let (inertia, velocity, pivot) = match body.fixed_point {
            None => (body.inertia, body.velocity, None),
            Some(p) => {
                let arm = sub(body.position, p);
                let offset = mat_t_vec(&lambda, arm);
                let j_p = shift(body.inertia, body.mass, offset);
                checked_inertia(index, &j_p, "about the fixed point")?;
                let expected = cross(mat_vec(&lambda, omega), arm);
                let scale_v = norm(mat_vec(&lambda, omega)) * norm(arm);
                if body.velocity != [0.0; 3]
                    && norm(sub(body.velocity, expected))
                        > FIXED_POINT_VELOCITY_TOLERANCE * scale_v.max(f64::MIN_POSITIVE)
                {
                    return Err(RigidError::FixedPointVelocityMismatch {
                        body: index,
                        given: body.velocity,
                        expected,
                    });
                }
                (j_p, expected, Some((p, offset)))
            }
        };
        let (moments, axes) = principal_axes(&inertia);
        let to_principal = |v: Vec3| match &axes {
            Some(r) => mat_t_vec(r, v),
            None => v,
        };
        if let Some((point, offset)) = pivot {
            self.pivots.push(Pivot {
                body: index,
                point,
                offset: to_principal(offset),
            });
        }
        let rotation = match &axes {
            Some(r) => {
                self.frames.push(Frame {
                    body: index,
                    axes: *r,
                });
                crate::mat3::mat_mul(&lambda, r)
            }
            None => lambda,
        };
        if body.force.is_some() || body.torque.is_some() {
            self.loads.push(Loads {
                body: index,
                force: body.force,
                torque: body.torque,
            });
        }
        self.mass.push(body.mass);
        self.inertia.push(moments);
        self.inverse_inertia.push(moments.map(|j| 1.0 / j));
        self.position.push(body.position);
        self.velocity.push(velocity);
        self.rotation.push(rotation);
        self.omega.push(to_principal(omega));
        Ok(index)
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.mass.len()
    }

    /// True without bodies.
    pub fn is_empty(&self) -> bool {
        self.mass.is_empty()
    }

    /// Gravity (spatial).
    pub fn gravity(&self) -> [f64; 3] {
        self.gravity
    }

    /// Mass of body `i`.
    pub fn mass(&self, i: usize) -> f64 {
        self.mass[i]
    }

    /// Inertia of body `i` in the body frame about its centre of rotation: the centre of mass,
    /// or the fixed point if it has one.
    pub fn inertia(&self, i: usize) -> [[f64; 3]; 3] {
        let d = self.inertia[i];
        match self.frame(i) {
            None => diagonal(d),
            Some(r) => {
                let rd = [0, 1, 2].map(|k| [r[k][0] * d[0], r[k][1] * d[1], r[k][2] * d[2]]);
                mat_mul_t(&rd, r)
            }
        }
    }

    /// Principal moments of inertia of body `i` about its centre of rotation (in the order of
    /// [`Self::principal_axes`]).
    pub fn principal_moments(&self, i: usize) -> [f64; 3] {
        self.inertia[i]
    }

    /// Principal axes of body `i` as the columns of a rotation `R` in the body frame
    /// (`J = R diag(moments) Rᵀ`); the identity when the given inertia is diagonal.
    pub fn principal_axes(&self, i: usize) -> [[f64; 3]; 3] {
        self.frame(i).copied().unwrap_or(crate::mat3::IDENTITY)
    }

    /// The principal axes `R` of body `i` when they are not the given body axes.
    pub(crate) fn frame_of(&self, i: usize) -> Option<&Mat3> {
        self.frame(i)
    }

    fn frame(&self, i: usize) -> Option<&Mat3> {
        self.frames
            .binary_search_by_key(&i, |f| f.body)
            .ok()
            .map(|k| &self.frames[k].axes)
    }

    /// The fixed point of body `i`, if it has one.
    pub fn fixed_point(&self, i: usize) -> Option<[f64; 3]> {
        self.pivot(i).map(|p| p.point)
    }

    pub(crate) fn pivot(&self, i: usize) -> Option<&Pivot> {
        self.pivots
            .binary_search_by_key(&i, |p| p.body)
            .ok()
            .map(|k| &self.pivots[k])
    }

    /// Centre of mass of every body.
    pub fn positions(&self) -> &[[f64; 3]] {
        &self.position
    }

    /// Velocity of the centre of mass of every body.
    pub fn velocities(&self) -> &[[f64; 3]] {
        &self.velocity
    }

    /// Rotation `Λ` of body `i` (row-major): a body point at `X` (body frame, relative to the
    /// centre of mass in the reference configuration) is at `x + Λ X`.
    pub fn rotation(&self, i: usize) -> [[f64; 3]; 3] {
        match self.frame(i) {
            None => self.rotation[i],
            Some(r) => mat_mul_t(&self.rotation[i], r),
        }
    }

    /// Spatial position and velocity of the material point of body `i` at `body_point` (body
    /// frame, relative to the centre of mass in the reference configuration, where `Λ = I`):
    /// `x + Λ X` and `v + ω × (Λ X)`. This is how a body's mesh is drawn.
    pub fn material_point(&self, i: usize, body_point: [f64; 3]) -> ([f64; 3], [f64; 3]) {
        let arm = mat_vec(&self.rotation(i), body_point);
        let omega = self.spatial_angular_velocity(i);
        (
            add(self.position[i], arm),
            add(self.velocity[i], cross(omega, arm)),
        )
    }

    /// Body-frame angular velocity `Ω` of body `i`.
    pub fn angular_velocity(&self, i: usize) -> [f64; 3] {
        match self.frame(i) {
            None => self.omega[i],
            Some(r) => mat_vec(r, self.omega[i]),
        }
    }

    /// Spatial angular velocity `ω = Λ Ω` of body `i`.
    pub fn spatial_angular_velocity(&self, i: usize) -> [f64; 3] {
        mat_vec(&self.rotation[i], self.omega[i])
    }

    /// Angular momentum of body `i`: about the origin for a free body (`x × m v + Λ J Ω`),
    /// about its fixed point for one that has it (`Λ J_p Ω`).
    pub fn angular_momentum(&self, i: usize) -> [f64; 3] {
        let spin = mat_vec(&self.rotation[i], diag_mul(&self.inertia[i], self.omega[i]));
        if self.pivot(i).is_some() {
            spin
        } else {
            add(
                cross(self.position[i], scale(self.mass[i], self.velocity[i])),
                spin,
            )
        }
    }

    /// Bodies that will not move: at rest, without applied force or torque functions, and
    /// without a net gravity effect (zero gravity, or for a body on a fixed point its centre on
    /// the vertical through the point). An input layer may warn about them.
    pub fn motionless_bodies(&self) -> Vec<usize> {
        let g = norm(self.gravity);
        (0..self.len())
            .filter(|&i| {
                let loaded = self.loads.binary_search_by_key(&i, |l| l.body).is_ok();
                if self.omega[i] != [0.0; 3] || loaded {
                    return false;
                }
                match self.pivot(i) {
                    Some(p) => {
                        let arm = mat_vec(&self.rotation[i], p.offset);
                        norm(cross(arm, self.gravity)) <= 1e-14 * norm(arm) * g
                    }
                    None => self.velocity[i] == [0.0; 3] && g == 0.0,
                }
            })
            .collect()
    }

    /// Energies, momenta and the orthonormality defect (see [`Observables`]), summed in a
    /// fixed order (the same on any number of threads).
    pub fn observables(&self) -> Observables {
        let n = self.len();
        let chunk_sum = |start: usize| {
            let end = (start + CHUNK).min(n);
            let mut pivots = self.pivots[self.pivots.partition_point(|p| p.body < start)..]
                .iter()
                .peekable();
            let mut acc = Observables::ZERO;
            for i in start..end {
                let on_pivot = pivots.next_if(|p| p.body == i).is_some();
                acc = acc.join(self.body_observables(i, on_pivot));
            }
            acc
        };
        let starts: Vec<usize> = (0..n).step_by(CHUNK).collect();
        let parts: Vec<Observables> = if starts.len() > 1 {
            starts.par_iter().map(|&s| chunk_sum(s)).collect()
        } else {
            starts.iter().map(|&s| chunk_sum(s)).collect()
        };
        parts.into_iter().fold(Observables::ZERO, Observables::join)
    }

    fn body_observables(&self, i: usize, on_pivot: bool) -> Observables {
        let m = self.mass[i];
        let (x, v, lambda, w) = (
            self.position[i],
            self.velocity[i],
            &self.rotation[i],
            self.omega[i],
        );
        let jw = diag_mul(&self.inertia[i], w);
        let spin = mat_vec(lambda, jw);
        let rotational = 0.5 * dot(w, jw);
        let (kinetic, angular_momentum) = if on_pivot {
            (rotational, spin)
        } else {
            (
                0.5 * m * dot(v, v) + rotational,
                add(cross(x, scale(m, v)), spin),
            )
        };
        let potential = -m * dot(self.gravity, x);
        Observables {
            kinetic,
            potential,
            total: kinetic + potential,
            angular_momentum,
            linear_momentum: scale(m, v),
            orthonormality_defect: orthonormality_defect(lambda),
        }
    }
}

/// Checks symmetry (to `1e-12` relative) and positive definiteness (smallest eigenvalue above
/// `1e-12` times the largest).
fn checked_inertia(body: usize, j: &Mat3, about: &'static str) -> Result<(), RigidError> {
    let largest = j.as_flattened().iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    let mut asym: f64 = 0.0;
    for i in 0..3 {
        for k in i + 1..3 {
            asym = asym.max((j[i][k] - j[k][i]).abs());
        }
    }
    if largest > 0.0 && asym > ASYMMETRY_TOLERANCE * largest {
        return Err(RigidError::InertiaNotSymmetric {
            body,
            asymmetry: asym / largest,
        });
    }
    let m = nalgebra::Matrix3::from_fn(|r, c| 0.5 * (j[r][c] + j[c][r]));
    let mut ev: Vec<f64> = m.symmetric_eigenvalues().iter().copied().collect();
    ev.sort_by(f64::total_cmp);
    let eigenvalues = [ev[0], ev[1], ev[2]];
    let well_conditioned =
        eigenvalues[2] > 0.0 && eigenvalues[0] > CONDITION_LIMIT * eigenvalues[2];
    if !well_conditioned {
        return Err(RigidError::InertiaNotPositiveDefinite {
            body,
            about,
            eigenvalues,
        });
    }
    Ok(())
}

/// The principal moments of a (checked) symmetric inertia and, unless it is already diagonal,
/// its principal axes `R` (columns, `det R = +1`) with `J = R diag(moments) Rᵀ`.
fn principal_axes(j: &Mat3) -> (Vec3, Option<Mat3>) {
    if j[0][1] == 0.0
        && j[0][2] == 0.0
        && j[1][2] == 0.0
        && j[1][0] == 0.0
        && j[2][0] == 0.0
        && j[2][1] == 0.0
    {
        return ([j[0][0], j[1][1], j[2][2]], None);
    }
    let m = nalgebra::Matrix3::from_fn(|r, c| 0.5 * (j[r][c] + j[c][r]));
    let eigen = m.symmetric_eigen();
    let mut r: Mat3 = [0, 1, 2].map(|row| [0, 1, 2].map(|col| eigen.eigenvectors[(row, col)]));
    let det = crate::mat3::determinant(&r);
    if det < 0.0 {
        for row in r.iter_mut() {
            row[2] = -row[2];
        }
    }
    let moments = [
        eigen.eigenvalues[0],
        eigen.eigenvalues[1],
        eigen.eigenvalues[2],
    ];
    (moments, Some(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube() -> RigidBody {
        RigidBody::new(2.0, diagonal([1.0, 1.0, 1.0]))
    }

    #[test]
    fn refuses_bad_inertia() {
        let mut set = RigidBodies::new([0.0; 3]).unwrap();
        let mut b = cube();
        b.inertia = diagonal([1.0, -1.0, 2.0]);
        let err = set.push(b).unwrap_err();
        assert!(
            matches!(err, RigidError::InertiaNotPositiveDefinite { body: 0, eigenvalues, .. } if eigenvalues[0] == -1.0),
            "{err}"
        );
        let mut b = cube();
        b.inertia[0][1] = 0.5;
        assert!(matches!(
            set.push(b).unwrap_err(),
            RigidError::InertiaNotSymmetric { body: 0, .. }
        ));
        let mut b = cube();
        b.inertia = diagonal([1.0, 1.0, 0.0]);
        assert!(matches!(
            set.push(b).unwrap_err(),
            RigidError::InertiaNotPositiveDefinite { .. }
        ));
        let mut b = cube();
        b.mass = 0.0;
        assert!(matches!(
            set.push(b).unwrap_err(),
            RigidError::InvalidMass { .. }
        ));
        let mut b = cube();
        b.rotation[1] = f64::NAN;
        assert!(matches!(
            set.push(b).unwrap_err(),
            RigidError::NonFiniteInput {
                field: "rotation",
                ..
            }
        ));
        assert!(set.is_empty());
        assert!(RigidBodies::new([0.0, f64::INFINITY, 0.0]).is_err());
    }

    #[test]
    fn fixed_point_shifts_inertia_and_derives_velocity() {
        let mut set = RigidBodies::new([0.0, 0.0, -10.0]).unwrap();
        let mut b = RigidBody::new(1.0, diagonal([4.0, 4.0, 1.0]));
        b.position = [0.0, 0.0, 1.0];
        b.fixed_point = Some([0.0; 3]);
        b.angular_velocity = AngularVelocity::Spatial([1.0, 0.0, 0.0]);
        set.push(b.clone()).unwrap();
        assert_eq!(set.inertia(0), diagonal([5.0, 5.0, 1.0]));
        assert_eq!(set.velocities()[0], [0.0, -1.0, 0.0]);
        b.velocity = [0.0, 1.0, 0.0];
        assert!(matches!(
            set.push(b.clone()).unwrap_err(),
            RigidError::FixedPointVelocityMismatch { body: 1, .. }
        ));
        // J_c = diag(5,5,1) − (l² = 9) diag(1,1,0) is not positive definite.
        let mut b = RigidBody::new(
            1.0,
            inertia_about_centre(diagonal([5.0, 5.0, 1.0]), 1.0, [0.0, 0.0, 3.0]),
        );
        b.position = [0.0, 0.0, 3.0];
        b.fixed_point = Some([0.0; 3]);
        assert!(matches!(
            set.push(b).unwrap_err(),
            RigidError::InertiaNotPositiveDefinite {
                about: "about the centre of mass",
                ..
            }
        ));
    }

    #[test]
    fn motionless_bodies_are_found() {
        let mut set = RigidBodies::new([0.0, 0.0, -10.0]).unwrap();
        let mut hanging = cube();
        hanging.position = [0.0, 0.0, -1.0];
        hanging.fixed_point = Some([0.0; 3]);
        set.push(hanging.clone()).unwrap();
        let mut swinging = hanging;
        swinging.position = [1.0, 0.0, 0.0];
        set.push(swinging).unwrap();
        set.push(cube()).unwrap(); // falls
        assert_eq!(set.motionless_bodies(), vec![0]);
    }
}
