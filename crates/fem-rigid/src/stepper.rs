//! The stepper: advances every body of a [`RigidBodies`] set by one step of a [`Scheme`].
//!
//! A step from `t` to `t + h` does, for each body (independently, in parallel over chunks of
//! bodies; the result does not depend on the number of threads):
//! 1. evaluate the applied force `F` and torque `t` at `t + h/2` (as the seed's `T^{t+h/2}`);
//! 2. advance the rotation `(Λ, Ω)` by the scheme (see [`crate::scheme`]), with the torque
//!    about the centre of rotation: `t` for a free body, `t + (Λ^{t+h/2} X_c) × (m g + F)` for
//!    a body on a fixed point;
//! 3. advance the centre of mass: a free body as the seed's deformable integrator
//!    `q(t+h/2)`, `u(t+h)`, `q(t+h)` (half drift, kick, half drift) with `A = m`,
//!    `f = m g + F(t + h/2)`:
//!    ```text
//!    x^{t+h/2} = x^t + h/2 v^t,   v^{t+h} = v^t + h (g + F/m),   x^{t+h} = x^{t+h/2} + h/2 v^{t+h};
//!    ```
//!    a body on a fixed point `p` follows its rotation: `x = p + Λ X_c`, `v = Λ (Ω × X_c)`.
//!
//! Within a chunk, each run of four free bodies without applied loads is stepped as one group,
//! a body per SIMD lane (`batch.rs`; AVX2 when the CPU has it, chosen at run time), with
//! bitwise the result of stepping them one by one.
//!
//! The stepper owns time: `t_n = t0 + n h` from the step index `n`.
//!
//! # As a [`fem_time::Stepper`]
//! - `step`: the step above; [`fem_time::StepReport::iterations`] and `residual` are RIG_IMP's
//!   largest Newton iteration count and final relative residual over the bodies (0 for
//!   RIG_POS and RIG_NEG); `constraint_violation` is 0 (a fixed point is kept exactly, by
//!   `x = p + Λ X_c`). A failed step is [`fem_time::StepError::Model`] holding the
//!   [`RigidError`], which names the step, its start time and the body.
//! - `energy`: kinetic plus gravity potential ([`Observables`]), with the work of the applied
//!   loads as `external_work` and nothing dissipated.
//! - `invariant`: [`fem_time::Invariant::Truncation`] for all three schemes. None conserves
//!   `H = T + V` exactly (Koziara & Bićanić; `docs/validation.md`): RIG_IMP's `H` oscillates
//!   without drift, RIG_POS's drifts up and RIG_NEG's down, each by `O(h²)` over a fixed
//!   interval. What RIG_NEG and RIG_IMP do conserve to round-off (or to the Newton tolerance) is
//!   the spatial angular momentum, which the energy balance does not speak of.
//! - `state` (and `restore`, bit for bit): `position` and `velocity` of the centres of mass,
//!   `rotation` (row-major, [`StateKind::Rotations`]) and `angular_velocity` as the stepper
//!   keeps them — of each body's principal frame, `Λ R` and `Rᵀ Ω` (equal to `Λ` and `Ω` when
//!   the inertia was given diagonal; [`RigidBodies::rotation`] and
//!   [`RigidBodies::angular_velocity`] give the body frame as given) — and the accumulated
//!   `external_work`.

use std::borrow::Cow;

use fem_time::{Clock, Energy, Invariant, StateField, StateKind, StepError, restored};
use rayon::prelude::*;

#[cfg(target_arch = "x86_64")]
use crate::batch::Avx4;
use crate::batch::{Group, LANES, Lanes, Plain4, step_group};
use crate::bodies::{CHUNK, Loads, Observables, Pivot, RigidBodies};
use crate::error::RigidError;
use crate::mat3::{Mat3, Vec3, add, axpy, cross, dot, mat_vec, scale, sub};
use crate::scheme::{NewtonFailure, RotationalLoad, Scheme, rotate};

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidStepReport {
    /// The index of the step just taken (1 for the first).
    pub step: u64,
    /// The time reached.
    pub time: f64,
    /// RIG_IMP: the largest number of Newton iterations any body needed (0 for RIG_POS and
    /// RIG_NEG).
    pub newton_iterations: usize,
    /// RIG_IMP: the largest final relative residual `‖exp[h/2 Ω₃] J Ω₃ − a‖ / ‖a‖` of any body
    /// (0 for RIG_POS and RIG_NEG).
    pub newton_residual: f64,
}

/// Loads of one body evaluated at `t + h/2`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LoadValue {
    pub(crate) force: Option<Vec3>,
    pub(crate) torque: Option<Vec3>,
}

/// Steps a set of rigid bodies by RIG_POS, RIG_NEG or RIG_IMP.
///
/// `step()` reads the state at `t_n`, writes the state at `t_{n+1}` and returns a
/// [`RigidStepReport`]; energies and momenta are computed on demand ([`Self::observables`]), not in
/// the step, since for many bodies they cost a pass over the state. After an error the step is
/// partly done and the state should not be used further.
#[derive(Clone, Debug)]
pub struct RigidStepper {
    pub(crate) bodies: RigidBodies,
    pub(crate) scheme: Scheme,
    clock: Clock,
    pub(crate) load_values: Vec<LoadValue>,
    external_work: f64,
    kernel: Kernel,
    /// The bodies between [`Self::begin_contact_step`] and [`Self::end_contact_step`]
    /// (`crate::contact`).
    pub(crate) contact: Vec<crate::contact::RigidContactBody>,
    /// Whether a contact step is begun and not ended.
    pub(crate) in_contact_step: bool,
}

enum Failure {
    Newton(NewtonFailure),
    NonFinite,
}

/// What a chunk of bodies did in a step.
#[derive(Clone, Copy, Debug, Default)]
struct ChunkOutcome {
    /// The largest Newton iteration count.
    iterations: usize,
    /// The largest final relative Newton residual.
    residual: f64,
    /// The work of the applied forces and torques over the step, summed in body order.
    work: f64,
}

impl ChunkOutcome {
    fn join(self, o: Self) -> Self {
        Self {
            iterations: self.iterations.max(o.iterations),
            residual: self.residual.max(o.residual),
            work: self.work + o.work,
        }
    }
}

/// A chunk's outcome, or its first failing body.
type ChunkResult = Result<ChunkOutcome, (usize, Failure)>;

/// One chunk of bodies: the state arrays' slices and the side lists that fall in it.
struct Chunk<'a> {
    start: usize,
    mass: &'a [f64],
    inertia: &'a [Vec3],
    inverse_inertia: &'a [Vec3],
    position: &'a mut [Vec3],
    velocity: &'a mut [Vec3],
    rotation: &'a mut [Mat3],
    omega: &'a mut [Vec3],
    pivots: &'a [Pivot],
    loads: &'a [Loads],
    load_values: &'a [LoadValue],
}

impl RigidStepper {
    /// A stepper for `bodies` by `scheme`, with step `dt > 0`, starting at `t0`.
    pub fn new(bodies: RigidBodies, scheme: Scheme, dt: f64, t0: f64) -> Result<Self, RigidError> {
        let clock = Clock::new(t0, dt).map_err(|_| RigidError::InvalidTime { dt, t0 })?;
        if let Scheme::RigImp(settings) = &scheme {
            settings.validate()?;
        }
        let load_values = vec![LoadValue::default(); bodies.loads.len()];
        Ok(Self {
            bodies,
            scheme,
            clock,
            load_values,
            external_work: 0.0,
            kernel: Kernel::detect(),
            contact: Vec::new(),
            in_contact_step: false,
        })
    }

    /// The same stepper with its free, unloaded bodies stepped by `kernel` (tests: every
    /// kernel gives bitwise the same results).
    #[cfg(test)]
    pub(crate) fn with_kernel(mut self, kernel: Kernel) -> Self {
        self.kernel = kernel;
        self
    }

    /// The bodies and their current state.
    pub fn bodies(&self) -> &RigidBodies {
        &self.bodies
    }

    /// The scheme.
    pub fn scheme(&self) -> &Scheme {
        &self.scheme
    }

    /// The time step.
    pub fn dt(&self) -> f64 {
        self.clock.dt()
    }

    /// The current time, `t0 + n dt`.
    pub fn time(&self) -> f64 {
        self.clock.time()
    }

    /// The number of steps taken.
    pub fn step_index(&self) -> u64 {
        self.clock.step()
    }

    /// Energies, momenta and the orthonormality defect now (see [`Observables`]).
    pub fn observables(&self) -> Observables {
        self.bodies.observables()
    }

    /// Kinetic energy now.
    pub fn kinetic_energy(&self) -> f64 {
        self.observables().kinetic
    }

    /// Gravity potential energy now.
    pub fn potential_energy(&self) -> f64 {
        self.observables().potential
    }

    /// Kinetic plus gravity potential energy now.
    pub fn total_energy(&self) -> f64 {
        self.observables().total
    }

    /// The work done by the applied forces and torques since `t0`, accumulated step by step
    /// (see [`Self::step`]); gravity is not in it (its work is the potential's change).
    pub fn external_work(&self) -> f64 {
        self.external_work
    }

    /// Advances every body from `t_n` to `t_{n+1}` (module docs), and adds the step's work of
    /// the applied loads to [`Self::external_work`]: `F · (x^{t+h} − x^t)` for a force `F` at
    /// `t + h/2` (for a free body exactly the kinetic energy the kick gives, since
    /// `x^{t+h} − x^t = h (v^t + v^{t+h})/2`) and `h t · (ω^t + ω^{t+h})/2` for a torque `t`
    /// (exact in planar motion, otherwise to the scheme's truncation error).
    pub fn step(&mut self) -> Result<RigidStepReport, RigidError> {
        let t = self.time();
        let h = self.clock.dt();
        let t_half = t + 0.5 * h;
        self.evaluate_loads(t_half);

        let scheme = self.scheme;
        let gravity = self.bodies.gravity;
        let kernel = self.kernel;
        let run = |c: Chunk<'_>| step_chunk(c, kernel, &scheme, h, gravity);
        let step = self.clock.step() + 1;
        // Chunks report in chunk order; the first failure (lowest body) wins, and the work is
        // summed in chunk order (the same on any number of threads).
        let outcome = if self.bodies.len() > CHUNK {
            let results: Vec<ChunkResult> = self.chunks().into_par_iter().map(run).collect();
            results
                .into_iter()
                .try_fold(ChunkOutcome::default(), |acc, r| r.map(|o| acc.join(o)))
        } else {
            run(self.single_chunk())
        };
        let outcome = outcome.map_err(|(body, failure)| match failure {
            Failure::Newton(f) => RigidError::NewtonNotConverged {
                step,
                time: t,
                body,
                iterations: f.iterations,
                residual: f.residual,
                tolerance: match &scheme {
                    Scheme::RigImp(s) => s.tolerance,
                    _ => 0.0,
                },
            },
            Failure::NonFinite => RigidError::NonFiniteState {
                step,
                time: t,
                body,
            },
        })?;
        self.clock.advance();
        self.external_work += outcome.work;
        Ok(RigidStepReport {
            step,
            time: self.time(),
            newton_iterations: outcome.iterations,
            newton_residual: outcome.residual,
        })
    }

    /// Evaluates the applied loads at `t_half` into `load_values`.
    pub(crate) fn evaluate_loads(&mut self, t_half: f64) {
        for (l, v) in self.bodies.loads.iter().zip(self.load_values.iter_mut()) {
            let eval = |f: &[fem_constraints::TimeFunction; 3]| {
                [f[0].eval(t_half), f[1].eval(t_half), f[2].eval(t_half)]
            };
            v.force = l.force.as_ref().map(eval);
            v.torque = l.torque.as_ref().map(eval);
        }
    }

    /// Adds a step's work of the applied loads.
    pub(crate) fn add_external_work(&mut self, work: f64) {
        self.external_work += work;
    }

    /// Moves the clock one step on.
    pub(crate) fn advance_clock(&mut self) {
        self.clock.advance();
    }

    /// The memory-bound floor of a step, for the benches: one pass over the same state arrays,
    /// in the same chunks and threads, reading everything a step of free unloaded bodies reads
    /// (`J`, `J⁻¹`, `x`, `v`, `Λ`, `Ω`: 192 bytes a body) and writing everything it writes
    /// (`x`, `v`, `Λ`, `Ω`: 144 bytes), with one multiply–add per entry. With `c = 0` the
    /// state is unchanged.
    pub fn stream_pass(&mut self, c: f64) {
        let pass = |k: Chunk<'_>| {
            for i in 0..k.mass.len() {
                let (j, ji) = (k.inertia[i], k.inverse_inertia[i]);
                let s = c * (j[0] + j[1] + j[2] + ji[0] + ji[1] + ji[2]);
                k.position[i] = k.position[i].map(|x| x + s);
                k.velocity[i] = k.velocity[i].map(|v| v + s);
                k.rotation[i] = k.rotation[i].map(|row| row.map(|x| x + s));
                k.omega[i] = k.omega[i].map(|w| w + s);
            }
        };
        if self.bodies.len() > CHUNK {
            self.chunks().into_par_iter().for_each(pass);
        } else {
            pass(self.single_chunk());
        }
    }

    /// All bodies as one chunk (at most [`CHUNK`] of them: no allocation, no thread hand-off).
    fn single_chunk(&mut self) -> Chunk<'_> {
        let b = &mut self.bodies;
        Chunk {
            start: 0,
            mass: &b.mass,
            inertia: &b.inertia,
            inverse_inertia: &b.inverse_inertia,
            position: &mut b.position,
            velocity: &mut b.velocity,
            rotation: &mut b.rotation,
            omega: &mut b.omega,
            pivots: &b.pivots,
            loads: &b.loads,
            load_values: &self.load_values,
        }
    }

    /// Splits the state into chunks of [`CHUNK`] bodies.
    fn chunks(&mut self) -> Vec<Chunk<'_>> {
        let b = &mut self.bodies;
        let pivots = &b.pivots;
        let loads = &b.loads;
        let values = &self.load_values;
        let range = |start: usize, end: usize, key: &dyn Fn(usize) -> usize, len: usize| {
            let lo = partition(len, |k| key(k) < start);
            let hi = partition(len, |k| key(k) < end);
            lo..hi
        };
        b.mass
            .chunks(CHUNK)
            .zip(b.inertia.chunks(CHUNK))
            .zip(b.inverse_inertia.chunks(CHUNK))
            .zip(b.position.chunks_mut(CHUNK))
            .zip(b.velocity.chunks_mut(CHUNK))
            .zip(b.rotation.chunks_mut(CHUNK))
            .zip(b.omega.chunks_mut(CHUNK))
            .enumerate()
            .map(
                |(
                    k,
                    ((((((mass, inertia), inverse_inertia), position), velocity), rotation), omega),
                )| {
                    let start = k * CHUNK;
                    let end = start + mass.len();
                    let p = range(start, end, &|i| pivots[i].body, pivots.len());
                    let l = range(start, end, &|i| loads[i].body, loads.len());
                    Chunk {
                        start,
                        mass,
                        inertia,
                        inverse_inertia,
                        position,
                        velocity,
                        rotation,
                        omega,
                        pivots: &pivots[p],
                        loads: &loads[l.clone()],
                        load_values: &values[l],
                    }
                },
            )
            .collect()
    }
}

/// The first index in `0..len` for which `below` is false (`below` is monotone).
fn partition(len: usize, below: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// How a chunk's free, unloaded bodies are stepped (the others always go one by one). All
/// kernels give bitwise the same results ([`crate::batch`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kernel {
    /// One body at a time ([`crate::scheme::rotate`]); the unit tests' reference.
    #[cfg_attr(not(test), allow(dead_code))]
    PerBody,
    /// [`LANES`] at a time ([`crate::batch`]) as plain arrays, in whatever instructions the
    /// compiler's baseline target offers (SSE2 on x86-64).
    Plain,
    /// [`LANES`] at a time in AVX registers, on a CPU with AVX2 (x86-64-v3, detected at run
    /// time; `pulp` compiles the step for it).
    #[cfg(target_arch = "x86_64")]
    Avx(pulp::x86::V3),
}

impl Kernel {
    /// The fastest kernel this CPU runs.
    pub(crate) fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V3::try_new() {
            return Self::Avx(simd);
        }
        Self::Plain
    }
}

/// A chunk's step in AVX registers, as an operation `pulp` runs in a function compiled for
/// AVX2.
#[cfg(target_arch = "x86_64")]
struct AvxChunkStep<'a, 's> {
    simd: pulp::x86::V3,
    chunk: Chunk<'a>,
    scheme: &'s Scheme,
    h: f64,
    gravity: Vec3,
}

#[cfg(target_arch = "x86_64")]
impl pulp::WithSimd for AvxChunkStep<'_, '_> {
    type Output = ChunkResult;

    // `inline(always)`, as everything it calls: the whole step is inlined into pulp's AVX2
    // function, so that the intrinsics and the per-body code compile for AVX2.
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> ChunkResult {
        let zero = Avx4::zero(self.simd);
        step_chunk_generic(self.chunk, Some(zero), self.scheme, self.h, self.gravity)
    }
}

/// Steps the bodies of one chunk by `kernel`; returns what it did ([`ChunkOutcome`]), or the
/// first failing body.
fn step_chunk(c: Chunk<'_>, kernel: Kernel, scheme: &Scheme, h: f64, gravity: Vec3) -> ChunkResult {
    if c.mass.len() < LANES {
        // No group: the per-body path, without the dispatch.
        return step_chunk_generic(c, None::<Plain4>, scheme, h, gravity);
    }
    match kernel {
        Kernel::PerBody => step_chunk_generic(c, None::<Plain4>, scheme, h, gravity),
        Kernel::Plain => step_chunk_generic(c, Some(Plain4([0.0; LANES])), scheme, h, gravity),
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx(simd) => pulp::Simd::vectorize(
            simd,
            AvxChunkStep {
                simd,
                chunk: c,
                scheme,
                h,
                gravity,
            },
        ),
    }
}

/// Steps the bodies of one chunk: with `lanes` (zeros of the lanes' kind), each run of
/// [`LANES`] free bodies without applied loads as one group ([`crate::batch`]), every other
/// body (and a group the batch hands back) one by one.
#[inline(always)]
fn step_chunk_generic<L: Lanes>(
    c: Chunk<'_>,
    lanes: Option<L>,
    scheme: &Scheme,
    h: f64,
    gravity: Vec3,
) -> ChunkResult {
    let half = 0.5 * h;
    let n = c.mass.len();
    let mut pivots = c.pivots.iter().peekable();
    let mut loads = c.loads.iter().zip(c.load_values).peekable();
    let mut outcome = ChunkOutcome::default();
    let mut k = 0;
    while k < n {
        let body = c.start + k;
        let group_lanes = lanes.filter(|_| {
            k + LANES <= n
                && pivots.peek().is_none_or(|p| p.body >= body + LANES)
                && loads.peek().is_none_or(|(l, _)| l.body >= body + LANES)
        });
        if let Some(zero) = group_lanes {
            let group = Group {
                inertia: &c.inertia[k..k + LANES],
                inverse_inertia: &c.inverse_inertia[k..k + LANES],
                position: &mut c.position[k..k + LANES],
                velocity: &mut c.velocity[k..k + LANES],
                rotation: &mut c.rotation[k..k + LANES],
                omega: &mut c.omega[k..k + LANES],
            };
            if let Some((iterations, residual)) = step_group(zero, group, scheme, h, gravity) {
                outcome.iterations = outcome.iterations.max(iterations);
                outcome.residual = outcome.residual.max(residual);
                k += LANES;
                continue;
            }
            // Handed back (a body fails): the per-body path below finds and reports it.
        }
        let pivot = pivots.next_if(|p| p.body == body);
        let load = loads.next_if(|(l, _)| l.body == body).map(|(_, v)| v);
        let force = load.and_then(|v| v.force);
        let torque = load.and_then(|v| v.torque);
        let rotational = match pivot {
            Some(p) => {
                let mut f = scale(c.mass[k], gravity);
                if let Some(force) = force {
                    f = add(f, force);
                }
                Some(RotationalLoad {
                    torque: torque.unwrap_or([0.0; 3]),
                    offset_force: Some((p.offset, f)),
                })
            }
            None => torque.map(|torque| RotationalLoad {
                torque,
                offset_force: None,
            }),
        };
        // The spatial angular velocity before the step, for the work of a torque.
        let omega_before = torque.map(|_| mat_vec(&c.rotation[k], c.omega[k]));
        let x_before = c.position[k];
        let (iterations, residual) = rotate(
            scheme,
            h,
            &c.inertia[k],
            &c.inverse_inertia[k],
            &mut c.rotation[k],
            &mut c.omega[k],
            rotational.as_ref(),
        )
        .map_err(|f| (body, Failure::Newton(f)))?;
        outcome.iterations = outcome.iterations.max(iterations);
        outcome.residual = outcome.residual.max(residual);

        let lambda = &c.rotation[k];
        let (x, v) = match pivot {
            Some(p) => (
                add(p.point, mat_vec(lambda, p.offset)),
                mat_vec(lambda, cross(c.omega[k], p.offset)),
            ),
            None => {
                let acceleration = match force {
                    Some(f) => axpy(gravity, 1.0 / c.mass[k], f),
                    None => gravity,
                };
                let x_half = axpy(c.position[k], half, c.velocity[k]);
                let v = axpy(c.velocity[k], h, acceleration);
                (axpy(x_half, half, v), v)
            }
        };
        c.position[k] = x;
        c.velocity[k] = v;
        // Λ^{t+h} is finite when Ω^t and the new Ω are (Ω_end of R1/R2 is the new Ω, or Ω₁
        // from which RIG_NEG's new Ω is computed), so checking x, v and Ω covers the state.
        // A sum of a few short independent chains, not one long one.
        let w = c.omega[k];
        let check = ((x[0] + x[1]) + (x[2] + v[0])) + ((v[1] + v[2]) + (w[0] + (w[1] + w[2])));
        if !check.is_finite() {
            return Err((body, Failure::NonFinite));
        }
        if let Some(f) = force {
            outcome.work += dot(f, sub(x, x_before));
        }
        if let (Some(t), Some(w0)) = (torque, omega_before) {
            let w1 = mat_vec(&c.rotation[k], c.omega[k]);
            outcome.work += half * dot(t, add(w0, w1));
        }
        k += 1;
    }
    Ok(outcome)
}

impl fem_time::Stepper for RigidStepper {
    fn step(&mut self) -> Result<fem_time::StepReport, StepError> {
        let report = RigidStepper::step(self).map_err(step_error)?;
        Ok(fem_time::StepReport {
            iterations: report.newton_iterations,
            residual: report.newton_residual,
            constraint_violation: 0.0,
        })
    }

    fn clock(&self) -> Clock {
        self.clock
    }

    fn energy(&self) -> Option<Energy> {
        Some(self.energy_of(&self.observables()))
    }

    fn invariant(&self) -> Invariant {
        // All three: the energy is conserved only to the truncation error (module docs).
        match self.scheme {
            Scheme::RigPos | Scheme::RigNeg | Scheme::RigImp(_) => Invariant::Truncation,
        }
    }

    fn state(&self) -> Vec<StateField<'_>> {
        let b = &self.bodies;
        vec![
            StateField::dofs("position", b.position.as_flattened()),
            StateField::dofs("velocity", b.velocity.as_flattened()),
            StateField {
                name: Cow::Borrowed("rotation"),
                kind: StateKind::Rotations,
                values: Cow::Borrowed(b.rotation.as_flattened().as_flattened()),
            },
            StateField::other("angular_velocity", b.omega.as_flattened()),
            StateField::owned("external_work", StateKind::Other, vec![self.external_work]),
        ]
    }

    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        let n = self.bodies.len();
        let position = restored(fields, "position", 3 * n)?;
        let velocity = restored(fields, "velocity", 3 * n)?;
        let rotation = restored(fields, "rotation", 9 * n)?;
        let omega = restored(fields, "angular_velocity", 3 * n)?;
        let work = restored(fields, "external_work", 1)?;
        // A rotation must be one (orthonormal, det +1) to the precision the schemes keep.
        for (k, r) in rotation.chunks_exact(9).enumerate() {
            let defect = orthonormality_defect(r);
            if defect.is_nan() || defect > 1e-9 {
                return Err(StepError::InvalidParameter {
                    name: "rotation",
                    value: defect,
                    expected: if k == 0 {
                        "an orthonormal rotation matrix (defect |R^T R - I| below 1e-9) for every body"
                    } else {
                        "an orthonormal rotation matrix for every body (a later body's is not)"
                    },
                });
            }
        }
        let b = &mut self.bodies;
        b.position.as_flattened_mut().copy_from_slice(position);
        b.velocity.as_flattened_mut().copy_from_slice(velocity);
        b.rotation
            .as_flattened_mut()
            .as_flattened_mut()
            .copy_from_slice(rotation);
        b.omega.as_flattened_mut().copy_from_slice(omega);
        self.external_work = work[0];
        self.clock.set_step(step_index);
        Ok(())
    }
}

impl RigidStepper {
    /// The framework's [`Energy`] from observables of the current state: kinetic, gravity
    /// potential, the applied loads' work since `t0`, nothing dissipated.
    pub fn energy_of(&self, o: &Observables) -> Energy {
        Energy {
            external_work: self.external_work,
            ..Energy::new(o.kinetic, o.potential)
        }
    }
}

/// A failed step as the framework's error: the model's own [`RigidError`] (which names the
/// step, its start time and the body) at the step it happened.
fn step_error(e: RigidError) -> StepError {
    let (step, t) = match e {
        RigidError::NewtonNotConverged { step, time, .. }
        | RigidError::NonFiniteState { step, time, .. } => (step, time),
        _ => (0, 0.0),
    };
    StepError::model(step, t, e)
}

/// `max |RᵀR − I|` and `|det R − 1|` of a row-major 3×3 matrix (NaN when it has one).
fn orthonormality_defect(r: &[f64]) -> f64 {
    let mut defect = 0.0f64;
    for i in 0..3 {
        for j in 0..3 {
            let dot: f64 = (0..3).map(|k| r[3 * k + i] * r[3 * k + j]).sum();
            let expected = if i == j { 1.0 } else { 0.0 };
            defect = defect.max((dot - expected).abs());
        }
    }
    let det = r[0] * (r[4] * r[8] - r[5] * r[7]) - r[1] * (r[3] * r[8] - r[5] * r[6])
        + r[2] * (r[3] * r[7] - r[4] * r[6]);
    let det_defect = (det - 1.0).abs();
    if det_defect.is_nan() || defect.is_nan() {
        f64::NAN
    } else {
        defect.max(det_defect)
    }
}
