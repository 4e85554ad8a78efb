//! An energy-conserving, second-order scheme for the inextensible beam: the constrained
//! midpoint rule, beside the paper's (97).
//!
//! With `v` the velocity of every dof (positions and tangents) and `x̄ = (xⁿ⁺¹ + xⁿ)/2`,
//!
//! ```text
//! (xⁿ⁺¹ − xⁿ)/Δt = (vⁿ⁺¹ + vⁿ)/2,
//! ρM (vⁿ⁺¹ − vⁿ)/Δt + EI K x̄ − F + Σ_j w_j T_j N'_j ⊗ x̄'_j = 0,
//! |xⁿ⁺¹'(s_j)| = 1 at every constraint point,
//! ```
//!
//! the trapezoidal rule in the velocity and the midpoint rule in the forces, with the
//! constraint force along the *midpoint* tangent. For the quadratic constraint
//! `c_j = ½(|x'_j|² − 1)`, `c_j(xⁿ⁺¹) − c_j(xⁿ) = x̄'_j·(xⁿ⁺¹ − xⁿ)'_j` exactly: `x̄'_j` is the
//! discrete gradient of `c_j` (the beam's counterpart of the paper's (30)). Testing the force
//! equation with `xⁿ⁺¹ − xⁿ` gives
//!
//! ```text
//! Eⁿ⁺¹ − Eⁿ = −Σ_j w_j T_j (c_j(xⁿ⁺¹) − c_j(xⁿ)) + (work of the supports) = work of the supports,
//! Eⁿ = ½ vⁿᵀ ρM vⁿ + ½ EI xⁿᵀ K xⁿ − F·xⁿ,
//! ```
//!
//! since the constraint holds at both levels: the energy is conserved to the Newton
//! tolerance with fixed ends, and its change equals the work of moving ends and of the seabed
//! otherwise (tracked in [`BeamStepReport::support_work`] and [`BeamStepReport::seabed_work`]). The constraint holds at every level
//! (not only at the end of the step, as in (97)), and the scheme is second order in `Δt`.
//!
//! Each step solves, for `xⁿ⁺¹` and `Tⁿ⁺½`, with `vⁿ⁺¹ = 2(xⁿ⁺¹ − xⁿ)/Δt − vⁿ` eliminated,
//!
//! ```text
//! (2/Δt²) ρM (x − xⁿ − Δt vⁿ) + ½ EI K (x + xⁿ) − F + G(x̄)ᵀ T = 0,   c(x) = 0,
//! ```
//!
//! by Newton on its KKT system (the block engine `kkt_block`, `θ = ½`): the Newton matrix has
//! `G(x̄)ᵀ` in its columns and `B(x)` in its rows, so it is not symmetric; it stays block
//! tridiagonal. Warm start: the quadratic extrapolation `3xⁿ − 3xⁿ⁻¹ + xⁿ⁻²` (`xⁿ + Δt vⁿ`
//! for the first steps) and the previous tensions.

use fem_time::StepSettings;

use crate::dynamics::{BeamStepReport, beam_start};
use crate::error::BeamError;
use crate::kkt::{KktNewton, NewtonKktReport, NewtonKktSettings};
use crate::kkt_block::{ActiveSet, BlockKkt, JacobianForm, ResidualForm};
use crate::model::{Beam, BeamState, DIM, dot, norm};

/// The energy-conserving constrained midpoint scheme (see the module documentation).
///
/// Step contract as the other steppers: it owns `xⁿ`, `vⁿ` and its clock
/// `t_n = t0 + n Δt`; [`EnergyConservingStepper::step`] computes level `n + 1` with
/// the ends prescribed at `t_{n+1}`.
#[derive(Debug)]
pub struct EnergyConservingStepper {
    model: Beam,
    /// `t_n = t0 + n Δt`.
    clock: fem_time::Clock,
    settings: KktNewton,
    x: Vec<f64>,
    v: Vec<f64>,
    /// `xⁿ⁻¹`, `xⁿ⁻²` of the last two (sub)steps of the current size, for the predictor
    /// (`None` until two steps of that size are done).
    history: Option<(f64, Vec<f64>, Option<Vec<f64>>)>,
    tension: Vec<f64>,
    kkt: BlockKkt,
    contact: ActiveSet,
    report: NewtonKktReport,
    last: BeamStepReport,
    work: f64,
    seabed_work: f64,
    anchor: Vec<f64>,
    offset: Vec<f64>,
}

impl EnergyConservingStepper {
    /// Starts at `settings.t0` from `x0` (which should satisfy `|x'| = 1`, e.g. a static
    /// solution) with velocity `v0` (positions: `ẋ`, tangents: `ẋ'`; zero if `None`) and
    /// optional initial multipliers `λ_j` (the tensions `T_j = λ_j·x'_j/|x'_j|` start the
    /// first Newton solve). The scheme has no `α`. `settings.newton` is the Newton of every
    /// step (iteration cap, tolerance on the position update, see [`NewtonKktSettings`]), `kkt`
    /// the rest of it. Prescribed dofs in `settings` are refused
    /// ([`BeamError::PrescribedDofs`]: the supports are the model's ends, constraints of the
    /// KKT system).
    pub fn new(
        model: Beam,
        x0: &BeamState,
        v0: Option<&BeamState>,
        multipliers: Option<&[[f64; 3]]>,
        settings: StepSettings,
        kkt: NewtonKktSettings,
    ) -> Result<Self, BeamError> {
        let newton = KktNewton::new(&settings.newton, &kkt)?;
        let (clock, _, x, v) = beam_start(&model, x0, v0, settings)?;
        let settings = newton;
        let n_p = model.n_points();
        let mut d = vec![[0.0; 3]; n_p];
        model.tangents_at_points(&x, &mut d);
        let tension = match multipliers {
            Some(m) if m.len() == n_p => m
                .iter()
                .zip(&d)
                .enumerate()
                .map(|(j, (l, t))| {
                    let n = norm(*t);
                    if n > 0.0 && model.point_is_active(j) {
                        dot(*l, *t) / n
                    } else {
                        0.0
                    }
                })
                .collect(),
            Some(m) => {
                return Err(BeamError::BadState {
                    what: "initial multipliers",
                    found: m.len(),
                    expected: n_p,
                });
            }
            None => vec![0.0; n_p],
        };
        let contact = crate::seabed::ActiveSet::of(&model, &x);
        let kkt = BlockKkt::new(&model);
        let mut s = Self {
            clock,
            settings,
            anchor: vec![0.0; x.len()],
            offset: vec![0.0; x.len()],
            history: None,
            x,
            v,
            tension,
            kkt,
            contact,
            report: NewtonKktReport::default(),
            last: BeamStepReport::default(),
            work: 0.0,
            seabed_work: 0.0,
            model,
        };
        let (e, k, vmax) = s.energy(&s.x, &s.v);
        s.last = BeamStepReport {
            energy: e,
            kinetic_energy: k,
            max_speed: vmax,
            max_stretch_error: s.stretch_error(),
            nodes_on_seabed: s.contact.nodes_on_seabed(&s.model),
            ..BeamStepReport::default()
        };
        Ok(s)
    }

    /// `Eⁿ = ½ vᵀρMv + ½ EI xᵀKx − F·x`, the kinetic part and the largest nodal speed.
    fn energy(&self, x: &[f64], v: &[f64]) -> (f64, f64, f64) {
        let kin = self.model.kinetic_energy(v);
        let e = kin + self.model.bending_energy(x) + self.model.load_potential(x);
        let n_s = self.model.n_scalar();
        let vmax = (0..self.model.n_nodes())
            .map(|i| norm(std::array::from_fn(|c| v[c * n_s + 2 * i])))
            .fold(0.0, f64::max);
        (e, kin, vmax)
    }

    fn stretch_error(&self) -> f64 {
        let mut d = vec![[0.0; 3]; self.model.n_points()];
        self.model.tangents_at_points(&self.x, &mut d);
        crate::kkt_block::max_stretch_error(&self.model, &d)
    }

    /// Advances one step (see the module documentation). If Newton does not converge, the
    /// step is retried as two half steps (recursively, down to `Δt/16`): the scheme is a
    /// one-step scheme, so the substeps are the same scheme with a smaller step and the energy
    /// identity holds across them.
    pub fn step(&mut self) -> Result<BeamStepReport, BeamError> {
        let t0 = self.clock.time();
        let (iterations, report) = self.substep(t0, self.clock.dt(), 0)?;
        self.clock.advance();
        let (energy, kinetic_energy, max_speed) = self.energy(&self.x, &self.v);
        self.last = BeamStepReport {
            iterations,
            residual: report.constraint_residual,
            multiplier_change: report.multiplier_change,
            max_stretch_error: self.stretch_error(),
            energy,
            kinetic_energy,
            max_speed,
            support_work: self.work,
            seabed_work: self.seabed_work,
            nodes_on_seabed: self.contact.nodes_on_seabed(&self.model),
        };
        Ok(self.last)
    }

    /// Advances the state from `t0` by `dt` (halving on failure, `depth` halvings so far);
    /// returns the Newton iterations spent and the last report.
    fn substep(
        &mut self,
        t0: f64,
        dt: f64,
        depth: u32,
    ) -> Result<(usize, NewtonKktReport), BeamError> {
        let (converged, its) = self.try_substep(t0, dt)?;
        if converged {
            return Ok((its, self.report));
        }
        if depth >= 4 {
            let r = self.report;
            return Err(BeamError::NewtonDiverged {
                step: self.clock.step() + 1,
                iterations: r.iterations,
                residual: r
                    .step_change
                    .max(r.multiplier_change)
                    .max(r.max_constraint_violation),
                tolerance: self.settings.shown_tolerance(),
            });
        }
        let (a, _) = self.substep(t0, 0.5 * dt, depth + 1)?;
        let (b, r) = self.substep(t0 + 0.5 * dt, 0.5 * dt, depth + 1)?;
        Ok((its + a + b, r))
    }

    /// One step of size `dt` from `t0`; the state is updated only if Newton converged.
    fn try_substep(&mut self, t0: f64, dt: f64) -> Result<(bool, usize), BeamError> {
        let t_new = t0 + dt;
        for i in 0..self.x.len() {
            self.anchor[i] = self.x[i] + dt * self.v[i];
            self.offset[i] = 0.5 * self.x[i];
        }
        // Predictor: the quadratic through xⁿ⁻², xⁿ⁻¹, xⁿ (third order in Δt) once two steps
        // of this size are known, else xⁿ + Δt vⁿ. The velocity is not used beyond the
        // start: the trapezoidal velocity of a constrained system carries a bounded sawtooth
        // (−1)ⁿ ε along the constraint normals (its average over two steps is exact).
        let mut x_new: Vec<f64> = match &self.history {
            Some((h, x1, Some(x2))) if *h == dt => (0..self.x.len())
                .map(|i| 3.0 * self.x[i] - 3.0 * x1[i] + x2[i])
                .collect(),
            Some((h, x1, None)) if *h == dt => {
                (0..self.x.len()).map(|i| 2.0 * self.x[i] - x1[i]).collect()
            }
            _ => self.anchor.clone(),
        };
        self.model.apply_prescribed(t_new, &mut x_new);
        let mut contact = self.contact.clone();
        crate::seabed::project_all(&self.model, &contact, &mut x_new);
        let mut tension = self.tension.clone();
        let form = ResidualForm {
            mass: 2.0 / (dt * dt),
            anchor: &self.anchor,
            bending: 0.5,
            offset: &self.offset,
            load: 1.0,
            theta: 0.5,
            reference: &self.x,
        };
        let jac = JacobianForm {
            mass: form.mass,
            bending: 0.5,
            geometric: 0.5,
        };
        let out = crate::kkt_block::newton(
            &mut self.kkt,
            &self.model,
            &form,
            &jac,
            &mut x_new,
            &mut tension,
            &mut contact,
            &self.settings,
        )?;
        self.report = out.report;
        if !out.converged || x_new.iter().any(|v| !v.is_finite()) {
            return Ok((false, out.report.iterations));
        }
        // The work of the supports: the residual at the converged state (the supports' force
        // on a blocked dof) times the dof's displacement.
        self.kkt.residual(&self.model, &form, &x_new, &tension);
        let n_s = self.model.n_scalar();
        for c in 0..DIM {
            for k in 0..n_s {
                let i = c * n_s + k;
                if self.model.is_fixed(k) {
                    self.work += self.kkt.res[i] * (x_new[i] - self.x[i]);
                }
            }
        }
        self.seabed_work += crate::seabed::work(
            &self.model,
            &self.contact,
            &contact,
            &self.kkt.res,
            &self.x,
            &x_new,
        );
        for i in 0..self.x.len() {
            self.v[i] = 2.0 * (x_new[i] - self.x[i]) / dt - self.v[i];
        }
        let old = std::mem::replace(&mut self.x, x_new);
        self.history = match self.history.take() {
            Some((h, x1, _)) if h == dt => Some((dt, old, Some(x1))),
            _ => Some((dt, old, None)),
        };
        self.tension = tension;
        self.contact = contact;
        Ok((true, out.report.iterations))
    }

    /// The model.
    pub fn model(&self) -> &Beam {
        &self.model
    }

    /// Node positions and tangents at the current level.
    pub fn state(&self) -> BeamState {
        BeamState::from_columns(&self.x)
    }

    /// Node velocities (positions `ẋ`, tangents `ẋ'`) at the current level.
    pub fn velocity(&self) -> BeamState {
        BeamState::from_columns(&self.v)
    }

    /// The current level in the model's column-major layout.
    pub fn columns(&self) -> &[f64] {
        &self.x
    }

    /// The report of the last step (step 0: the initial energy `E₀`).
    pub fn last_report(&self) -> BeamStepReport {
        self.last
    }

    /// The tensions `T_j^{n−1/2}` of the last step (N), one per constraint point.
    pub fn tensions(&self) -> &[f64] {
        &self.tension
    }

    /// The Newton–KKT report of the last step.
    pub fn kkt_report(&self) -> NewtonKktReport {
        self.report
    }

    /// Numeric factorizations of the KKT matrix in this run (one per Newton iteration).
    pub fn factorization_count(&self) -> usize {
        self.kkt.factorization_count()
    }

    /// `|x'|` at every constraint point of the current level.
    pub fn stretches(&self) -> Vec<f64> {
        let mut d = vec![[0.0; 3]; self.model.n_points()];
        self.model.tangents_at_points(&self.x, &mut d);
        d.iter().map(|v| norm(*v)).collect()
    }
}

impl fem_time::Stepper for EnergyConservingStepper {
    fn step(&mut self) -> Result<fem_time::StepReport, fem_time::StepError> {
        let (t, step) = (self.clock.time(), self.clock.step() + 1);
        let r = EnergyConservingStepper::step(self)
            .map_err(|e| fem_time::StepError::model(step, t, e))?;
        Ok(fem_time::StepReport {
            iterations: r.iterations,
            residual: r.residual,
            constraint_violation: r.max_stretch_error,
        })
    }
    fn clock(&self) -> fem_time::Clock {
        self.clock
    }
    fn energy(&self) -> Option<fem_time::Energy> {
        Some(crate::dynamics::framework_energy(&self.last))
    }
    /// The constrained midpoint rule conserves its energy (less the supports' and seabed's
    /// work) to the Newton tolerance.
    fn invariant(&self) -> fem_time::Invariant {
        fem_time::Invariant::SolverTolerance
    }
    fn state(&self) -> Vec<fem_time::StateField<'_>> {
        use fem_time::{StateField, StateKind};
        let mut fields = vec![
            StateField::dofs("position", &self.x),
            StateField::dofs("velocity", &self.v),
            StateField::other("tensions", &self.tension),
            StateField::owned(
                "last_report",
                StateKind::Other,
                crate::dynamics::report_to_vec(&self.last),
            ),
            StateField::owned("work", StateKind::Other, vec![self.work, self.seabed_work]),
            StateField::owned(
                "on_seabed",
                StateKind::Other,
                crate::dynamics::held_to_vec(&self.contact),
            ),
        ];
        if let Some((dt, first, second)) = &self.history {
            fields.push(StateField::owned(
                "predictor",
                StateKind::Other,
                vec![*dt, f64::from(u8::from(second.is_some()))],
            ));
            fields.push(StateField::other("predictor_1", first));
            if let Some(second) = second {
                fields.push(StateField::other("predictor_2", second));
            }
        }
        fields
    }
    fn restore(
        &mut self,
        step_index: u64,
        fields: &[fem_time::StateField<'_>],
    ) -> Result<(), fem_time::StepError> {
        use fem_time::restored;
        let n = self.x.len();
        self.x.copy_from_slice(restored(fields, "position", n)?);
        self.v.copy_from_slice(restored(fields, "velocity", n)?);
        let m = self.tension.len();
        self.tension
            .copy_from_slice(restored(fields, "tensions", m)?);
        self.last = crate::dynamics::report_from_slice(restored(
            fields,
            "last_report",
            crate::dynamics::REPORT_LEN,
        )?);
        let w = restored(fields, "work", 2)?;
        (self.work, self.seabed_work) = (w[0], w[1]);
        let held = self.contact.active.len();
        crate::dynamics::held_from_slice(
            &self.model,
            &mut self.contact,
            restored(fields, "on_seabed", held)?,
        );
        self.history = match fields.iter().find(|f| f.name == "predictor") {
            None => None,
            Some(p) if p.values.len() == 2 => {
                let first = restored(fields, "predictor_1", n)?.to_vec();
                let second = if p.values[1] != 0.0 {
                    Some(restored(fields, "predictor_2", n)?.to_vec())
                } else {
                    None
                };
                Some((p.values[0], first, second))
            }
            Some(_) => {
                return Err(fem_time::StepError::BadData {
                    what: "predictor",
                    found: 0,
                    expected: 2,
                });
            }
        };
        self.clock.set_step(step_index);
        Ok(())
    }
}
