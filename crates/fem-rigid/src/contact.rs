//! Rigid bodies in contact: a step split in two around the contact solve (Solfec's
//! `BODY_Dynamic_Step_Begin` / `BODY_Dynamic_Step_End`), and each body as a
//! [`fem_contact::body::ContactBody`] for the step (docs/theory/contact.md, §3 and §8).
//!
//! [`RigidStepper::begin_contact_step`] does, per body, everything of a step that does not
//! depend on the contact impulse:
//!
//! ```text
//! x^{t+h/2} = x^t + h/2 v^t,            Λ^{t+h/2} = Λ^t exp[h/2 Ω^t]            (mid-step)
//! v_free    = v^t + h (g + F/m),        Ω_free    = Ω₁ of W1(t+h)               (free velocity)
//! a         = exp[−h/2 Ω^t] J Ω^t + h T^{t+h/2}                                  (RIG_NEG, RIG_IMP)
//! ```
//!
//! with the loads at `t + h/2`. Each body is then a [`RigidContactBody`]: dofs
//! `[v (world), Ω (body frame)]`, the map of a world point `p` to its velocity
//! `v + Λ^{t+h/2} (Ω × X)`, `X = (Λ^{t+h/2})ᵀ (p − x^{t+h/2})` (columns `e_k` and
//! `Λ^{t+h/2}(e_k × X)`), and the inverse inertia `A⁻¹ = diag(1/m, 1/m, 1/m, J⁻¹)` — Solfec's
//! constant generalized inverse inertia of a rigid body. The contact layer solves for the
//! impulses and gives each body `p = Hᵀ R` ([`RigidContactBody::apply_impulse`]:
//! `u⁺ = u_free + A⁻¹ p`). [`RigidStepper::end_contact_step`] then finishes the step:
//!
//! ```text
//! v^{t+h} = v_free + p_lin / m,         x^{t+h} = x^{t+h/2} + h/2 v^{t+h}
//! Ω⁺ = Ω_free + J⁻¹ p_ang,  then RIG_POS: R1 with Ω⁺;  RIG_NEG: R1 with Ω⁺ and W2 with a + p_ang;
//!                                 RIG_IMP: W3 and R2 with a + p_ang (crate::scheme::rotate_end)
//! ```
//!
//! A body without impulse ends bitwise as [`RigidStepper::step`] would have left it.
//! The body frame of the dofs is the stored principal frame ([`crate::bodies`]); what the
//! contact layer sees does not depend on it.

use fem_contact::body::{ContactBody, PointMap};
use nalgebra::Vector3;
use rayon::prelude::*;

use crate::error::RigidError;
use crate::mat3::{Mat3, Vec3, add, add_product, axpy, dot, mat_mul_t, mat_t_vec, mat_vec, sub};
use crate::scheme::{MidRotation, RotationalLoad, Scheme, rotate_begin, rotate_end};
use crate::stepper::{RigidStepReport, RigidStepper};

/// One rigid body between [`RigidStepper::begin_contact_step`] and
/// [`RigidStepper::end_contact_step`]: what the contact layer reads of it, and the impulse it
/// gives back (module docs).
#[derive(Clone, Debug, Default)]
pub struct RigidContactBody {
    /// `[v_free, Ω_free]`.
    free: [f64; 6],
    /// `[v^t, Ω^t]`.
    start: [f64; 6],
    /// `u_free + A⁻¹ p` once an impulse is applied (`u_free` before).
    velocity: [f64; 6],
    /// The generalized impulse `p` (`[world linear, body-frame angular]`).
    impulse: [f64; 6],
    /// Whether `p` is not zero.
    has_impulse: bool,
    /// `x^{t+h/2}`.
    centre: Vec3,
    /// `Λ^{t+h/2}` of the principal frame.
    rotation: Mat3,
    inverse_mass: f64,
    inverse_inertia: Vec3,
    mid: MidRotation,
}

impl RigidContactBody {
    /// The centre of mass at mid-step, `x^{t+h/2}`.
    pub fn centre(&self) -> [f64; 3] {
        self.centre
    }

    /// `u_free + A⁻¹ p`: the end velocity the contact layer sees, `[v, Ω]` (`Ω` in the
    /// stored principal frame).
    pub fn velocity(&self) -> &[f64; 6] {
        &self.velocity
    }

    /// The generalized impulse given by [`ContactBody::apply_impulse`].
    pub fn impulse(&self) -> &[f64; 6] {
        &self.impulse
    }
}

impl ContactBody for RigidContactBody {
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
        let x = mat_t_vec(
            &self.rotation,
            sub([point.x, point.y, point.z], self.centre),
        );
        for k in 0..3 {
            out.push((k, Vector3::ith(k, 1.0)));
        }
        // e_k × X for k = 0, 1, 2, turned to space by Λ^{t+h/2}.
        let arms = [[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]];
        for (k, arm) in arms.into_iter().enumerate() {
            let c = mat_vec(&self.rotation, arm);
            out.push((3 + k, Vector3::new(c[0], c[1], c[2])));
        }
    }

    fn inverse_inertia_map(&self, h: &PointMap, out: &mut PointMap) {
        out.extend(h.iter().map(|&(d, v)| {
            let a = if d < 3 {
                self.inverse_mass
            } else {
                self.inverse_inertia[d - 3]
            };
            (d, v * a)
        }));
    }

    fn apply_impulse(&mut self, p: &[f64]) {
        self.impulse.copy_from_slice(&p[..6]);
        self.has_impulse = p.iter().any(|&v| v != 0.0);
        for d in 0..6 {
            let a = if d < 3 {
                self.inverse_mass
            } else {
                self.inverse_inertia[d - 3]
            };
            self.velocity[d] = self.free[d] + a * p[d];
        }
    }
}

impl RigidStepper {
    /// The first half of a step with contact (module docs): the mid-step configuration and
    /// the free velocities of every body, with the applied loads at `t + h/2`. The state
    /// (`x^t`, `v^t`, `Λ^t`, `Ω^t`) is not changed; [`Self::contact_bodies`] holds the bodies
    /// for the contact layer until [`Self::end_contact_step`].
    ///
    /// Refused for a set with bodies on a kinematic fixed point (their velocity is not
    /// `[v, Ω]`): in a contact scene a point is held by a constraint instead.
    pub fn begin_contact_step(&mut self) -> Result<(), RigidError> {
        if let Some(p) = self.bodies.pivots.first() {
            return Err(RigidError::FixedPointInContact { body: p.body });
        }
        let t_half = self.time() + 0.5 * self.dt();
        self.evaluate_loads(t_half);
        let h = self.dt();
        let half = 0.5 * h;
        let n = self.bodies.len();
        self.contact.resize(n, RigidContactBody::default());
        let b = &self.bodies;
        let loads = &b.loads;
        let values = &self.load_values;
        self.contact
            .par_iter_mut()
            .with_min_len(1024)
            .enumerate()
            .for_each(|(k, c)| {
                let (force, torque) = match loads.binary_search_by_key(&k, |l| l.body) {
                    Ok(i) => (values[i].force, values[i].torque),
                    Err(_) => (None, None),
                };
                let load = torque.map(|torque| RotationalLoad {
                    torque,
                    offset_force: None,
                });
                let lambda = &b.rotation[k];
                let mid = rotate_begin(
                    h,
                    &b.inertia[k],
                    &b.inverse_inertia[k],
                    lambda,
                    b.omega[k],
                    load.as_ref(),
                );
                let acceleration = match force {
                    Some(f) => axpy(b.gravity, 1.0 / b.mass[k], f),
                    None => b.gravity,
                };
                let (x, v, w) = (b.position[k], b.velocity[k], b.omega[k]);
                let v_free = axpy(v, h, acceleration);
                c.free = [
                    v_free[0], v_free[1], v_free[2], mid.w1[0], mid.w1[1], mid.w1[2],
                ];
                c.start = [v[0], v[1], v[2], w[0], w[1], w[2]];
                c.velocity = c.free;
                c.impulse = [0.0; 6];
                c.has_impulse = false;
                c.centre = axpy(x, half, v);
                c.rotation = add_product(lambda, &mid.d0);
                c.inverse_mass = 1.0 / b.mass[k];
                c.inverse_inertia = b.inverse_inertia[k];
                c.mid = mid;
            });
        self.in_contact_step = true;
        Ok(())
    }

    /// Whether a contact step is begun and not yet ended.
    pub fn in_contact_step(&self) -> bool {
        self.in_contact_step
    }

    /// The bodies as the contact layer sees them, between [`Self::begin_contact_step`] and
    /// [`Self::end_contact_step`] (empty before the first).
    pub fn contact_bodies(&self) -> &[RigidContactBody] {
        &self.contact
    }

    /// The same, to give them their impulses.
    pub fn contact_bodies_mut(&mut self) -> &mut [RigidContactBody] {
        &mut self.contact
    }

    /// Where body `i` is at mid-step: its centre `x^{t+h/2}` and rotation `Λ^{t+h/2}` in the
    /// body frame as given (a point at body coordinates `B` is at `x + Λ B`). Between
    /// [`Self::begin_contact_step`] and [`Self::end_contact_step`].
    pub fn mid_step_placement(&self, i: usize) -> ([f64; 3], [[f64; 3]; 3]) {
        let c = &self.contact[i];
        let rotation = match self.bodies.frame_of(i) {
            None => c.rotation,
            Some(r) => mat_mul_t(&c.rotation, r),
        };
        (c.centre, rotation)
    }

    /// The second half of a step with contact (module docs): every body ends its step with
    /// the impulse it was given (none: bitwise [`Self::step`]'s end), and the clock advances.
    /// The work of the applied loads is added to [`Self::external_work`] as in [`Self::step`].
    pub fn end_contact_step(&mut self) -> Result<RigidStepReport, RigidError> {
        if !self.in_contact_step {
            return Err(RigidError::ContactStepNotBegun);
        }
        self.in_contact_step = false;
        let h = self.dt();
        let half = 0.5 * h;
        let t = self.time();
        let step = self.step_index() + 1;
        let scheme = self.scheme;
        let b = &mut self.bodies;
        let loads = &b.loads;
        let values = &self.load_values;
        let contact = &self.contact;
        let (inertia, inverse_inertia) = (&b.inertia, &b.inverse_inertia);
        let outcomes: Vec<EndOutcome> = b
            .position
            .par_iter_mut()
            .with_min_len(1024)
            .zip(b.velocity.par_iter_mut())
            .zip(b.rotation.par_iter_mut())
            .zip(b.omega.par_iter_mut())
            .enumerate()
            .map(|(k, (((x, v), lambda), omega))| {
                let c = &contact[k];
                let (force, torque) = match loads.binary_search_by_key(&k, |l| l.body) {
                    Ok(i) => (values[i].force, values[i].torque),
                    Err(_) => (None, None),
                };
                let omega_before = torque.map(|_| mat_vec(lambda, *omega));
                let x_before = *x;
                let p_angular = c
                    .has_impulse
                    .then(|| [c.impulse[3], c.impulse[4], c.impulse[5]]);
                let (iterations, residual) = rotate_end(
                    &scheme,
                    h,
                    &inertia[k],
                    &inverse_inertia[k],
                    &c.mid,
                    p_angular,
                    lambda,
                    omega,
                )
                .map_err(|f| (k, Some((f.iterations, f.residual))))?;
                let v_new = [c.velocity[0], c.velocity[1], c.velocity[2]];
                let x_new = axpy(c.centre, half, v_new);
                *x = x_new;
                *v = v_new;
                let w = *omega;
                let check = ((x_new[0] + x_new[1]) + (x_new[2] + v_new[0]))
                    + ((v_new[1] + v_new[2]) + (w[0] + (w[1] + w[2])));
                if !check.is_finite() {
                    return Err((k, None));
                }
                let mut work = 0.0;
                if let Some(f) = force {
                    work += dot(f, sub(x_new, x_before));
                }
                if let (Some(tq), Some(w0)) = (torque, omega_before) {
                    let w1 = mat_vec(lambda, *omega);
                    work += half * dot(tq, add(w0, w1));
                }
                Ok((iterations, residual, work))
            })
            .collect();
        let mut report = RigidStepReport {
            step,
            time: t + h,
            newton_iterations: 0,
            newton_residual: 0.0,
        };
        let mut work = 0.0;
        for o in outcomes {
            match o {
                Ok((iterations, residual, w)) => {
                    report.newton_iterations = report.newton_iterations.max(iterations);
                    report.newton_residual = report.newton_residual.max(residual);
                    work += w;
                }
                Err((body, Some((iterations, residual)))) => {
                    return Err(RigidError::NewtonNotConverged {
                        step,
                        time: t,
                        body,
                        iterations,
                        residual,
                        tolerance: match &scheme {
                            Scheme::RigImp(s) => s.tolerance,
                            _ => 0.0,
                        },
                    });
                }
                Err((body, None)) => {
                    return Err(RigidError::NonFiniteState {
                        step,
                        time: t,
                        body,
                    });
                }
            }
        }
        self.add_external_work(work);
        self.advance_clock();
        report.time = self.time();
        Ok(report)
    }
}

/// A body's end of step: `Ok((iterations, residual, ·))`, or the body and its Newton failure.
type EndOutcome = Result<(usize, f64, f64), (usize, Option<(usize, f64)>)>;
