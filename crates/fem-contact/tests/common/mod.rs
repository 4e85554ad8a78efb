//! Test bodies implementing the contact interface: a particle and a rigid body (velocity and
//! angular velocity in world coordinates, inverse inertia in world coordinates).
#![allow(dead_code)]

use fem_contact::body::{ContactBody, PointMap};
use nalgebra::{Matrix3, Vector3};

/// A point mass.
pub struct Particle {
    pub mass: f64,
    pub position: Vector3<f64>,
    pub start: Vec<f64>,
    pub free: Vec<f64>,
    pub velocity: Vec<f64>,
}

impl Particle {
    pub fn new(mass: f64, position: Vector3<f64>, start: [f64; 3], free: [f64; 3]) -> Self {
        Self {
            mass,
            position,
            start: start.to_vec(),
            free: free.to_vec(),
            velocity: free.to_vec(),
        }
    }
}

impl ContactBody for Particle {
    fn dof_count(&self) -> usize {
        3
    }
    fn free_velocity(&self) -> &[f64] {
        &self.free
    }
    fn start_velocity(&self) -> &[f64] {
        &self.start
    }
    fn point_map(&self, _point: &Vector3<f64>, out: &mut PointMap) {
        out.extend((0..3).map(|d| (d, Vector3::ith(d, 1.0))));
    }
    fn inverse_inertia_map(&self, h: &PointMap, out: &mut PointMap) {
        out.extend(h.iter().map(|&(d, v)| (d, v / self.mass)));
    }
    fn apply_impulse(&mut self, p: &[f64]) {
        for d in 0..3 {
            self.velocity[d] = self.free[d] + p[d] / self.mass;
        }
    }
}

/// A rigid body: dofs `[v, ω]` in world coordinates; `v_p = v + ω × (p − x)`.
pub struct Rigid {
    pub mass: f64,
    pub inverse_inertia: Matrix3<f64>,
    pub centre: Vector3<f64>,
    pub start: Vec<f64>,
    pub free: Vec<f64>,
    pub velocity: Vec<f64>,
}

impl Rigid {
    /// A box of half sizes `a` (axis-aligned), uniform density, mass `m`.
    pub fn cuboid(
        mass: f64,
        half: [f64; 3],
        centre: Vector3<f64>,
        start: [f64; 6],
        free: [f64; 6],
    ) -> Self {
        let [a, b, c] = half.map(|x| 2.0 * x);
        let j = Vector3::new(b * b + c * c, a * a + c * c, a * a + b * b) * (mass / 12.0);
        Self {
            mass,
            inverse_inertia: Matrix3::from_diagonal(&j.map(|x| 1.0 / x)),
            centre,
            start: start.to_vec(),
            free: free.to_vec(),
            velocity: free.to_vec(),
        }
    }
}

impl ContactBody for Rigid {
    fn dof_count(&self) -> usize {
        6
    }
    fn free_velocity(&self) -> &[f64] {
        &self.free
    }
    fn start_velocity(&self) -> &[f64] {
        &self.start
    }
    fn point_map(&self, point: &Vector3<f64>, out: &mut PointMap) {
        let d = point - self.centre;
        out.extend((0..3).map(|k| (k, Vector3::ith(k, 1.0))));
        out.extend((0..3).map(|k| (3 + k, Vector3::<f64>::ith(k, 1.0).cross(&d))));
    }
    fn inverse_inertia_map(&self, h: &PointMap, out: &mut PointMap) {
        let mut ang = [Vector3::zeros(); 3];
        for &(d, v) in h {
            if d < 3 {
                out.push((d, v / self.mass));
            } else {
                ang[d - 3] = v;
            }
        }
        if h.iter().any(|&(d, _)| d >= 3) {
            for a in 0..3 {
                let g = (0..3).fold(Vector3::zeros(), |acc, b| {
                    acc + ang[b] * self.inverse_inertia[(a, b)]
                });
                out.push((3 + a, g));
            }
        }
    }
    fn apply_impulse(&mut self, p: &[f64]) {
        for d in 0..3 {
            self.velocity[d] = self.free[d] + p[d] / self.mass;
        }
        let pa = Vector3::new(p[3], p[4], p[5]);
        let w = self.inverse_inertia * pa;
        for d in 0..3 {
            self.velocity[3 + d] = self.free[3 + d] + w[d];
        }
    }
}
