//! The dynamic problem (88): the augmented-Lagrangian scheme (97) and the time-discretized
//! penalty scheme (93), both three-level alpha schemes started by (94).
//!
//! # Step contract
//! A stepper owns `x^{n−1}`, `x^n` and its [`Clock`] (`t_n = t0 + n Δt`). It is built from the
//! common [`StepSettings`] (`dt`, `t0`, `newton`; no prescribed dofs: the beam's supports are
//! the model's ends, constraints of its KKT system) and the scheme's `α`.
//! [`AugmentedLagrangianStepper::step`] reads them, computes `x^{n+1}` at `t_{n+1}` (ends
//! prescribed at `t_{n+1}`), shifts the history and returns a [`BeamStepReport`] for the new level.
//!
//! # Start (94)
//! `x^{−1} = x^1 − 2Δt ẋ₀`. Substituted into the scheme at `n = 0` and halved, the first step
//! has the *same* matrix as every other step, with the right-hand side
//! `b⁰ = ½f + M(x⁰ + Δt ẋ₀)/Δt² − ½A((1−2α)x⁰ − 2αΔt ẋ₀)` and constraint forces halved;
//! so the augmented-Lagrangian run factors its matrix exactly once.

use faer::MatMut;
use faer::linalg::solvers::Solve;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use fem_assembly::CsrMatrix;
use fem_time::{Clock, NewtonSettings, StepSettings, StepStart};

use crate::error::BeamError;
use crate::kkt::{KktAssembly, KktNewton, NewtonKktReport, NewtonKktSettings, NewtonKktSolver};
use crate::kkt_block::{ActiveSet, BlockKkt, JacobianForm, ResidualForm};
use crate::model::ConstraintPoints;
use crate::model::check_state;
use crate::model::{
    Beam, BeamState, DIM, bending_force_about_chord, dot, norm, slopes_about_chord,
};
use crate::uzawa::{UzawaReport, UzawaSettings, UzawaSolver};

/// Refuses an `alpha` outside `0 < α ≤ 1/2`; `1/4` (the paper's) makes the linear part
/// unconditionally stable and energy conserving.
fn check_alpha(alpha: f64) -> Result<(), BeamError> {
    if !(alpha > 0.0 && alpha <= 0.5) {
        return Err(BeamError::InvalidParameter {
            name: "alpha",
            value: alpha,
            expected: "0 < alpha <= 1/2",
        });
    }
    Ok(())
}

/// The start every beam stepper begins with: [`StepSettings::start`] on the state's columns
/// (the clock from `settings.t0` and `settings.dt`, the initial vectors checked, `v0 = 0` if
/// `None`), after refusing prescribed dofs: the beam's supports are constraints of its KKT
/// system (the model's [`crate::End`]s, moving ends included), not prescribed dofs, so
/// `settings.dirichlet` must be empty ([`BeamError::PrescribedDofs`]).
pub(crate) fn beam_start(
    model: &Beam,
    x0: &BeamState,
    v0: Option<&BeamState>,
    settings: StepSettings,
) -> Result<(Clock, NewtonSettings, Vec<f64>, Vec<f64>), BeamError> {
    if !settings.dirichlet.is_empty() {
        return Err(BeamError::PrescribedDofs {
            count: settings.dirichlet.len(),
        });
    }
    check_state(model, x0)?;
    let x = x0.to_columns();
    let v = match v0 {
        Some(v) => {
            check_state(model, v)?;
            v.to_columns()
        }
        None => vec![0.0; x.len()],
    };
    let StepStart {
        clock,
        newton,
        x,
        v,
        ..
    } = settings.start(x.len(), &x, &v)?;
    Ok((clock, newton, x, v))
}

/// What one dynamic step did, for the new level `t_{n+1}`: the beam's own observables (its
/// energy with the work of the supports and of the seabed, the stretch, the seabed contact)
/// beside the common [`fem_time::StepReport`] that [`fem_time::Stepper::step`] returns. The
/// level's index and time are the stepper's clock ([`fem_time::Stepper::clock`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BeamStepReport {
    /// Uzawa or Newton iterations.
    pub iterations: usize,
    /// Uzawa: `‖x' − p‖_{L²}/√L`; penalty: the final Newton residual (max norm, N).
    pub residual: f64,
    /// Uzawa: relative change of the multiplier in the last iteration; penalty: 0.
    pub multiplier_change: f64,
    /// `max_j ||x'(s_j)| − 1|` over the constraint points at `t_{n+1}`.
    pub max_stretch_error: f64,
    /// The scheme's discrete energy `E^{n+1/2}` (kinetic with `M_α`, bending and load
    /// potential at the midpoint, penalty energy at the midpoint for the penalty scheme).
    pub energy: f64,
    /// Kinetic part `½ vᵀMv`, `v = (x^{n+1} − x^n)/Δt`.
    pub kinetic_energy: f64,
    /// Largest nodal speed `|v|` (m/s).
    pub max_speed: f64,
    /// Work done on the beam since the start `t0` by its prescribed ends (J): the energy-conserving
    /// scheme's balance is `energy = E₀ + support_work + seabed_work` (0 for the other
    /// schemes, which do not track it).
    pub support_work: f64,
    /// Work done on the beam since the start `t0` by the seabed (J, ≤ 0): nonzero only at steps where
    /// a contact condition becomes active (a landing; a held condition does not move, lifting
    /// off is free): `Σ μ_k (L − g_k(xⁿ))`, `docs/theory/inextensible_beam.md` (S5).
    pub seabed_work: f64,
    /// Nodes lying on the seabed at `t_{n+1}` (height at the level, tangent level; 0 without
    /// a seabed).
    pub nodes_on_seabed: usize,
}

/// The time levels `xⁿ⁻¹`, `xⁿ` and the matrix shared by the three-level schemes.
#[derive(Debug)]
struct Levels {
    model: Beam,
    /// `t_n = t0 + n Δt`.
    clock: Clock,
    /// The scheme's `α`.
    alpha: f64,
    /// `A₀ = M/Δt² + α EI K` (per component, all scalar dofs).
    a0: CsrMatrix<f64>,
    x_prev: Vec<f64>,
    x: Vec<f64>,
    v0: Vec<f64>,
    last: BeamStepReport,
}

impl Levels {
    /// The levels at the start, and the Newton settings of the step settings.
    fn new(
        model: Beam,
        x0: &BeamState,
        v0: Option<&BeamState>,
        alpha: f64,
        settings: StepSettings,
    ) -> Result<(Self, NewtonSettings), BeamError> {
        check_alpha(alpha)?;
        let (clock, newton, x, v0) = beam_start(&model, x0, v0, settings)?;
        let dt = clock.dt();
        let dt2 = dt * dt;
        let a0 = fem_assembly::sparse::linear_combination(
            &[(1.0 / dt2, model.mass()), (alpha, model.bending())],
            None,
        );
        let mut h = Self {
            model,
            clock,
            alpha,
            a0,
            x_prev: x.clone(),
            x,
            v0,
            last: BeamStepReport::default(),
        };
        let e0 = h.model.bending_energy(&h.x)
            + h.model.load_potential(&h.x)
            + h.model.kinetic_energy(&h.v0);
        h.last.energy = e0;
        h.last.kinetic_energy = h.model.kinetic_energy(&h.v0);
        h.last.max_stretch_error = h.stretch_error(&h.x.clone());
        Ok((h, newton))
    }

    /// Right-hand side `b` of `A₀ x^{n+1} + s·(constraint forces) = b`, the predictor, and `s`.
    fn base(&self) -> (Vec<f64>, Vec<f64>, f64) {
        let (dt, alpha) = (self.clock.dt(), self.alpha);
        let n_s = self.model.n_scalar();
        let f = self.model.load();
        let (m, k) = (self.model.mass(), self.model.bending());
        let mut b = vec![0.0; DIM * n_s];
        let mut guess = vec![0.0; DIM * n_s];
        let first = self.clock.step() == 0;
        let half = if first { 0.5 } else { 1.0 };
        let mut u = vec![0.0; n_s];
        let mut w = vec![0.0; n_s];
        for c in 0..DIM {
            let r = c * n_s..(c + 1) * n_s;
            let (x, xp, v) = (
                &self.x[r.clone()],
                &self.x_prev[r.clone()],
                &self.v0[r.clone()],
            );
            if first {
                for i in 0..n_s {
                    u[i] = x[i] + dt * v[i];
                    w[i] = (1.0 - 2.0 * alpha) * x[i] - 2.0 * alpha * dt * v[i];
                }
            } else {
                for i in 0..n_s {
                    u[i] = 2.0 * x[i] - xp[i];
                    w[i] = (1.0 - 2.0 * alpha) * x[i] + alpha * xp[i];
                }
            }
            guess[r.clone()].copy_from_slice(&u);
            let bc = &mut b[r.clone()];
            fem_assembly::sparse::mul_add(0.0, bc, 1.0 / (dt * dt), m, &u);
            fem_assembly::sparse::mul_add(1.0, bc, -half, k, &w);
            for (bi, fi) in bc.iter_mut().zip(&f[r]) {
                *bi += half * fi;
            }
        }
        (b, guess, half)
    }

    /// The pieces of `A₀x − b = M(x − u)/Δt² + K(αx + s·w) − s·f` (`K = EI K_bend`):
    /// the predictor `u`, `s·w` and `s` (see [`Levels::base`]), for a residual without the
    /// cancellation of `A₀x − b` formed from its two large terms.
    fn split(&self) -> (Vec<f64>, Vec<f64>, f64) {
        let (dt, alpha) = (self.clock.dt(), self.alpha);
        let first = self.clock.step() == 0;
        let half = if first { 0.5 } else { 1.0 };
        let mut u = vec![0.0; self.x.len()];
        let mut w = vec![0.0; self.x.len()];
        for i in 0..self.x.len() {
            let (x, xp, v) = (self.x[i], self.x_prev[i], self.v0[i]);
            if first {
                u[i] = x + dt * v;
                w[i] = half * ((1.0 - 2.0 * alpha) * x - 2.0 * alpha * dt * v);
            } else {
                u[i] = 2.0 * x - xp;
                w[i] = (1.0 - 2.0 * alpha) * x + alpha * xp;
            }
        }
        (u, w, half)
    }

    fn stretch_error(&self, x: &[f64]) -> f64 {
        let mut d = vec![[0.0; 3]; self.model.n_points()];
        self.model.tangents_at_points(x, &mut d);
        d.iter().map(|v| (norm(*v) - 1.0).abs()).fold(0.0, f64::max)
    }

    /// Discrete energy at `n + 1/2` without a penalty term, kinetic part, max speed.
    fn energy(&self, x_new: &[f64]) -> (f64, f64, f64) {
        let (dt, alpha) = (self.clock.dt(), self.alpha);
        let v: Vec<f64> = x_new
            .iter()
            .zip(&self.x)
            .map(|(a, b)| (a - b) / dt)
            .collect();
        let mid: Vec<f64> = x_new
            .iter()
            .zip(&self.x)
            .map(|(a, b)| 0.5 * (a + b))
            .collect();
        let kin = self.model.kinetic_energy(&v);
        let e = kin
            + dt * dt * (alpha - 0.25) * self.model.bending_energy(&v)
            + self.model.bending_energy(&mid)
            + self.model.load_potential(&mid);
        let n_s = self.model.n_scalar();
        let max_speed = (0..self.model.n_nodes())
            .map(|i| norm(std::array::from_fn(|c| v[c * n_s + 2 * i])))
            .fold(0.0, f64::max);
        (e, kin, max_speed)
    }

    fn advance(
        &mut self,
        x_new: Vec<f64>,
        mut report: BeamStepReport,
    ) -> Result<BeamStepReport, BeamError> {
        if x_new.iter().any(|v| !v.is_finite()) {
            return Err(BeamError::NonFinite {
                step: self.clock.step() + 1,
            });
        }
        report.max_stretch_error = self.stretch_error(&x_new);
        self.x_prev = std::mem::replace(&mut self.x, x_new);
        self.clock.advance();
        self.last = report;
        Ok(report)
    }
}

macro_rules! history_accessors {
    () => {
        /// The model.
        pub fn model(&self) -> &Beam {
            &self.h.model
        }
        /// The scheme's `α`.
        pub fn alpha(&self) -> f64 {
            self.h.alpha
        }
        /// Node positions and tangents at the current level.
        pub fn state(&self) -> BeamState {
            BeamState::from_columns(&self.h.x)
        }
        /// The current level in the model's column-major layout.
        pub fn columns(&self) -> &[f64] {
            &self.h.x
        }
        /// The report of the last step (step 0: the initial energy `E₀`).
        pub fn last_report(&self) -> BeamStepReport {
            self.h.last
        }
        /// `|x'|` at every constraint point of the current level.
        pub fn stretches(&self) -> Vec<f64> {
            let mut d = vec![[0.0; 3]; self.h.model.n_points()];
            self.h.model.tangents_at_points(&self.h.x, &mut d);
            d.iter().map(|v| norm(*v)).collect()
        }
    };
}

/// The augmented-Lagrangian scheme (97) with the start (94), every step solved by the Uzawa
/// loop of [`crate::uzawa`] with the constant matrix `ρM/Δt² + α EI K + r K_r`, factored once
/// per run, warm-started from the previous step's `p` and multiplier.
///
/// The constraint holds at `x^{n+1}` only; the constraint force therefore does work and the
/// discrete energy is *not* conserved: it decays at first order in `Δt`
/// (`docs/theory/inextensible_beam.md`).
#[derive(Debug)]
pub struct AugmentedLagrangianStepper {
    h: Levels,
    uzawa: UzawaSettings,
    solver: UzawaSolver,
    p: Vec<[f64; 3]>,
    lambda: Vec<[f64; 3]>,
    uzawa_report: UzawaReport,
}

impl AugmentedLagrangianStepper {
    /// Starts at `settings.t0` from `x0` (which should satisfy `|x'| = 1`, e.g. a static
    /// solution) with initial velocity `v0` (positions: `ẋ`, tangents: `ẋ'`; zero if `None`)
    /// and optional initial multipliers (for example [`crate::StaticSolution::multipliers`]),
    /// with the scheme's `alpha` (`0 < α ≤ 1/2`; `1/4` conserves the linear part's energy).
    /// `settings.newton` is not used (the Uzawa loop has its own [`UzawaSettings`]); prescribed
    /// dofs in `settings` are refused ([`BeamError::PrescribedDofs`]: the supports are the
    /// model's ends).
    pub fn new(
        model: Beam,
        x0: &BeamState,
        v0: Option<&BeamState>,
        multipliers: Option<&[[f64; 3]]>,
        alpha: f64,
        settings: StepSettings,
        uzawa: UzawaSettings,
    ) -> Result<Self, BeamError> {
        uzawa.check()?;
        let (h, _) = Levels::new(model, x0, v0, alpha, settings)?;
        let solver = UzawaSolver::new(&h.model, &h.a0, uzawa.augmentation)?;
        let n_p = h.model.n_points();
        let mut p = vec![[0.0; 3]; n_p];
        h.model.tangents_at_points(&h.x, &mut p);
        let lambda = match multipliers {
            Some(m) if m.len() == n_p => m.to_vec(),
            Some(m) => {
                return Err(BeamError::BadState {
                    what: "initial multipliers",
                    found: m.len(),
                    expected: n_p,
                });
            }
            None => vec![[0.0; 3]; n_p],
        };
        Ok(Self {
            h,
            uzawa,
            solver,
            p,
            lambda,
            uzawa_report: UzawaReport::default(),
        })
    }

    history_accessors!();

    /// Advances one step (see the module's step contract).
    pub fn step(&mut self) -> Result<BeamStepReport, BeamError> {
        let (b, mut x_new, half) = self.h.base();
        let t_new = self.h.clock.time_at(self.h.clock.step() + 1);
        self.h.model.apply_prescribed(t_new, &mut x_new);
        let mut lambda: Vec<[f64; 3]> = self.lambda.iter().map(|l| l.map(|e| e * half)).collect();
        let mut p = self.p.clone();
        let (report, converged) = self.solver.solve(
            &self.h.model,
            &b,
            &mut x_new,
            &mut p,
            &mut lambda,
            &self.uzawa,
        );
        self.uzawa_report = report;
        if !converged {
            return Err(BeamError::UzawaNotConverged {
                step: self.h.clock.step() + 1,
                iterations: report.iterations,
                constraint_residual: report.constraint_residual,
                change: report.multiplier_change.max(report.tangent_change),
            });
        }
        self.lambda = lambda.iter().map(|l| l.map(|e| e / half)).collect();
        self.p = p;
        let (energy, kinetic_energy, max_speed) = self.h.energy(&x_new);
        self.h.advance(
            x_new,
            BeamStepReport {
                iterations: report.iterations,
                residual: report.constraint_residual,
                multiplier_change: report.multiplier_change,
                energy,
                kinetic_energy,
                max_speed,
                ..BeamStepReport::default()
            },
        )
    }

    /// The multipliers `λ_j = T_j p_j` at the constraint points of the current level (N).
    pub fn multipliers(&self) -> &[[f64; 3]] {
        &self.lambda
    }

    /// The projected unit tangents `p_j` of the current level.
    pub fn projected_tangents(&self) -> &[[f64; 3]] {
        &self.p
    }

    /// Tension `T_j = λ_j · p_j` at each constraint point (N).
    pub fn tensions(&self) -> Vec<f64> {
        self.lambda
            .iter()
            .zip(&self.p)
            .map(|(l, p)| dot(*l, *p))
            .collect()
    }

    /// The full Uzawa report of the last step.
    pub fn uzawa_report(&self) -> UzawaReport {
        self.uzawa_report
    }

    /// Numeric factorizations in this run (1).
    pub fn factorization_count(&self) -> usize {
        self.solver.factorization_count()
    }

    /// The Uzawa solver (for timing its three-right-hand-side solve).
    pub fn solver(&self) -> &UzawaSolver {
        &self.solver
    }
}

/// The same scheme as [`AugmentedLagrangianStepper`] — (97) with the start (94), `|x'| = 1` at
/// the constraint points of `x^{n+1}` — with every step solved by Newton on its KKT system
/// ([`crate::kkt`]) instead of the Uzawa loop: same positions and multipliers at convergence,
/// an iteration count independent of `N`, but one numeric factorization of the (banded,
/// symmetric indefinite) KKT matrix per Newton iteration instead of one per run.
///
/// Warm start: the predictor `2x^n − x^{n−1}` and the previous step's tensions.
#[derive(Debug)]
pub struct NewtonKktStepper {
    h: Levels,
    settings: KktNewton,
    solver: NewtonKktSolver,
    /// The block engine ([`KktAssembly::Blocks`]), with the seabed's active set.
    blocks: Option<(BlockKkt, ActiveSet)>,
    tension: Vec<f64>,
    report: NewtonKktReport,
}

impl NewtonKktStepper {
    /// Starts at `settings.t0` from `x0` with initial velocity `v0` (zero if `None`) and
    /// optional initial multipliers `λ_j` (for example [`crate::StaticSolution::multipliers`];
    /// the tensions `T_j = λ_j · x'_j/|x'_j|` are taken from them), with the scheme's `alpha`
    /// (`0 < α ≤ 1/2`). `settings.newton` is the Newton of every step (iteration cap, the
    /// tolerance on the position update, see [`NewtonKktSettings`]); `kkt` the rest of it.
    /// Prescribed dofs in `settings` are refused ([`BeamError::PrescribedDofs`]: the supports
    /// are the model's ends, constraints of the KKT system).
    pub fn new(
        model: Beam,
        x0: &BeamState,
        v0: Option<&BeamState>,
        multipliers: Option<&[[f64; 3]]>,
        alpha: f64,
        settings: StepSettings,
        kkt: NewtonKktSettings,
    ) -> Result<Self, BeamError> {
        let newton = KktNewton::new(&settings.newton, &kkt)?;
        let (mut h, _) = Levels::new(model, x0, v0, alpha, settings)?;
        let settings = newton;
        let needs_blocks = h.model.seabed().is_some()
            || h.model.constraint_points() != ConstraintPoints::Gauss
            || settings.assembly == KktAssembly::Blocks;
        let blocks = needs_blocks.then(|| {
            let held = crate::seabed::ActiveSet::of(&h.model, &h.x);
            (BlockKkt::new(&h.model), held)
        });
        if let Some((_, contact)) = &blocks {
            h.last.nodes_on_seabed = contact.nodes_on_seabed(&h.model);
        }
        let solver = if needs_blocks {
            NewtonKktSolver::empty()
        } else {
            NewtonKktSolver::new(&h.model, &h.a0)?
        };
        let n_p = h.model.n_points();
        let mut d = vec![[0.0; 3]; n_p];
        h.model.tangents_at_points(&h.x, &mut d);
        let tension = match multipliers {
            Some(m) if m.len() == n_p => m
                .iter()
                .zip(&d)
                .map(|(l, t)| {
                    let n = norm(*t);
                    if n > 0.0 { dot(*l, *t) / n } else { 0.0 }
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
        Ok(Self {
            h,
            settings,
            solver,
            blocks,
            tension,
            report: NewtonKktReport::default(),
        })
    }

    history_accessors!();

    /// Advances one step (see the module's step contract).
    pub fn step(&mut self) -> Result<BeamStepReport, BeamError> {
        if self.blocks.is_some() {
            return self.step_blocks();
        }
        let (_, mut x_new, half) = self.h.base();
        let t_new = self.h.clock.time_at(self.h.clock.step() + 1);
        self.h.model.apply_prescribed(t_new, &mut x_new);
        let mut tension: Vec<f64> = self.tension.iter().map(|t| t * half).collect();
        let (u, w, _) = self.h.split();
        let model = &self.h.model;
        let (n_s, dt2, alpha) = (model.n_scalar(), self.h.clock.dt().powi(2), self.h.alpha);
        let ei = model.parameters().bending_stiffness;
        let f = model.load();
        let kel: Vec<_> = model
            .elements()
            .iter()
            .map(|e| (e.length, e.bending(ei)))
            .collect();
        let residual = |x: &[f64], res: &mut [f64]| {
            // M(x − u)/Δt² − s f, then the bending force K z, z = αx + s·w, element by
            // element on the local values minus the linear field through the element's ends
            // (which K annihilates).
            let diff: Vec<f64> = x.iter().zip(&u).map(|(a, b)| a - b).collect();
            for c in 0..DIM {
                let r = c * n_s..(c + 1) * n_s;
                fem_assembly::sparse::mul_add(
                    0.0,
                    &mut res[r.clone()],
                    1.0 / dt2,
                    model.mass(),
                    &diff[r.clone()],
                );
                for (ri, fi) in res[r.clone()].iter_mut().zip(&f[r]) {
                    *ri -= half * fi;
                }
            }
            for c in 0..DIM {
                let base = c * n_s;
                for (e, (h, k)) in kel.iter().enumerate() {
                    let z: [f64; 4] =
                        std::array::from_fn(|a| alpha * x[base + 2 * e + a] + w[base + 2 * e + a]);
                    let f = bending_force_about_chord(k, slopes_about_chord(&z, *h));
                    for a in 0..4 {
                        res[base + 2 * e + a] += f[a];
                    }
                }
            }
        };
        let (report, converged) =
            self.solver
                .solve_with(model, &residual, &mut x_new, &mut tension, &self.settings)?;
        self.report = report;
        if !converged {
            return Err(BeamError::NewtonDiverged {
                step: self.h.clock.step() + 1,
                iterations: report.iterations,
                residual: report
                    .step_change
                    .max(report.multiplier_change)
                    .max(report.max_constraint_violation),
                tolerance: self.settings.shown_tolerance(),
            });
        }
        self.tension = tension.iter().map(|t| t / half).collect();
        let (energy, kinetic_energy, max_speed) = self.h.energy(&x_new);
        self.h.advance(
            x_new,
            BeamStepReport {
                iterations: report.iterations,
                residual: report.constraint_residual,
                multiplier_change: report.multiplier_change,
                energy,
                kinetic_energy,
                max_speed,
                ..BeamStepReport::default()
            },
        )
    }

    /// One step on the block engine ([`KktAssembly::Blocks`]): the same equations, the
    /// seabed's active set carried from step to step. If Newton does not converge, the step
    /// is retried as two half steps, recursively down to `Δt/16` ([`MAX_HALVINGS`]): the
    /// first half restarts the scheme by its start (94) from `xⁿ` and the velocity
    /// `(xⁿ − xⁿ⁻¹)/Δt` (`v₀` at the first step), the second is a regular step of (97) at the
    /// half step; the next full step continues from `xⁿ` and `xⁿ⁺¹`.
    fn step_blocks(&mut self) -> Result<BeamStepReport, BeamError> {
        let (u, w, half) = self.h.split();
        let dt = self.h.clock.dt();
        let t_new = self.h.clock.time_at(self.h.clock.step() + 1);
        let (mut kkt, mut contact) = self.blocks.take().expect("block engine");
        let x_n = self.h.x.clone();
        let mut tension = self.tension.clone();
        let mut its = 0;
        let first = self.block_solve(
            &mut kkt,
            &mut contact,
            (dt, &u, &w, half, t_new),
            &mut tension,
            &mut its,
        );
        let x_new = match first {
            Ok(Some(x)) => Ok(x),
            Ok(None) => {
                let v = if self.h.clock.step() == 0 {
                    self.h.v0.clone()
                } else {
                    x_n.iter()
                        .zip(&self.h.x_prev)
                        .map(|(a, b)| (a - b) / dt)
                        .collect()
                };
                self.tension.clone_from(&tension);
                self.halves(
                    &mut kkt,
                    &mut contact,
                    (&x_n, &v),
                    t_new - dt,
                    dt,
                    1,
                    &mut tension,
                    &mut its,
                )
            }
            Err(e) => Err(e),
        };
        let on_seabed = contact.nodes_on_seabed(&self.h.model);
        self.blocks = Some((kkt, contact));
        let x_new = x_new?;
        self.tension = tension;
        let (energy, kinetic_energy, max_speed) = self.h.energy(&x_new);
        self.h.advance(
            x_new,
            BeamStepReport {
                iterations: its,
                residual: self.report.constraint_residual,
                multiplier_change: self.report.multiplier_change,
                energy,
                kinetic_energy,
                max_speed,
                nodes_on_seabed: on_seabed,
                ..BeamStepReport::default()
            },
        )
    }

    /// One Newton solve of (97) on the block engine with the step `dt`, the predictor `u`,
    /// the offset `w`, the start's factor `half` (½ at a start (94), else 1), to the time
    /// `t_new`: `Some(x)` if it converged (`tension` then holds its tensions), `None` if not.
    fn block_solve(
        &mut self,
        kkt: &mut BlockKkt,
        contact: &mut ActiveSet,
        (dt, u, w, half, t_new): (f64, &[f64], &[f64], f64, f64),
        tension: &mut Vec<f64>,
        its: &mut usize,
    ) -> Result<Option<Vec<f64>>, BeamError> {
        let mut x_new = u.to_vec();
        self.h.model.apply_prescribed(t_new, &mut x_new);
        let mut t: Vec<f64> = tension.iter().map(|t| t * half).collect();
        let form = ResidualForm {
            mass: 1.0 / (dt * dt),
            anchor: u,
            bending: self.h.alpha,
            offset: w,
            load: half,
            theta: 1.0,
            reference: &[],
        };
        let jac = JacobianForm {
            mass: form.mass,
            bending: form.bending,
            geometric: 1.0,
        };
        let mut trial = contact.clone();
        crate::seabed::project_all(&self.h.model, &trial, &mut x_new);
        let out = crate::kkt_block::newton(
            kkt,
            &self.h.model,
            &form,
            &jac,
            &mut x_new,
            &mut t,
            &mut trial,
            &self.settings,
        )?;
        self.report = out.report;
        *its += out.report.iterations;
        if !out.converged || x_new.iter().any(|v| !v.is_finite()) {
            return Ok(None);
        }
        *contact = trial;
        *tension = t.iter().map(|t| t / half).collect();
        Ok(Some(x_new))
    }

    /// The configuration at `t_a + dt` from `x_a` and the velocity `v_a` at `t_a`, by two
    /// steps of `dt/2` (see [`NewtonKktStepper::step_blocks`]), each halved again if Newton
    /// does not converge, `depth` halvings deep at most [`MAX_HALVINGS`].
    #[allow(clippy::too_many_arguments)]
    fn halves(
        &mut self,
        kkt: &mut BlockKkt,
        contact: &mut ActiveSet,
        (x_a, v_a): (&[f64], &[f64]),
        t_a: f64,
        dt: f64,
        depth: usize,
        tension: &mut Vec<f64>,
        its: &mut usize,
    ) -> Result<Vec<f64>, BeamError> {
        let hs = 0.5 * dt;
        let alpha = self.h.alpha;
        let diverged = |s: &Self, its: usize| BeamError::NewtonDiverged {
            step: s.h.clock.step() + 1,
            iterations: its,
            residual: s
                .report
                .step_change
                .max(s.report.multiplier_change)
                .max(s.report.max_constraint_violation),
            tolerance: s.settings.shown_tolerance(),
        };
        // The first half: the start (94) from (x_a, v_a).
        let u: Vec<f64> = x_a.iter().zip(v_a).map(|(x, v)| x + hs * v).collect();
        let w: Vec<f64> = x_a
            .iter()
            .zip(v_a)
            .map(|(x, v)| 0.5 * ((1.0 - 2.0 * alpha) * x - 2.0 * alpha * hs * v))
            .collect();
        let x_mid =
            match self.block_solve(kkt, contact, (hs, &u, &w, 0.5, t_a + hs), tension, its)? {
                Some(x) => x,
                None if depth < MAX_HALVINGS => {
                    self.halves(kkt, contact, (x_a, v_a), t_a, hs, depth + 1, tension, its)?
                }
                None => return Err(diverged(self, *its)),
            };
        // The second half: a regular step of (97) from (x_a, x_mid).
        let u: Vec<f64> = x_mid.iter().zip(x_a).map(|(m, a)| 2.0 * m - a).collect();
        let w: Vec<f64> = x_mid
            .iter()
            .zip(x_a)
            .map(|(m, a)| (1.0 - 2.0 * alpha) * m + alpha * a)
            .collect();
        match self.block_solve(kkt, contact, (hs, &u, &w, 1.0, t_a + dt), tension, its)? {
            Some(x) => Ok(x),
            None if depth < MAX_HALVINGS => {
                let v_mid: Vec<f64> = x_mid.iter().zip(x_a).map(|(m, a)| (m - a) / hs).collect();
                self.halves(
                    kkt,
                    contact,
                    (&x_mid, &v_mid),
                    t_a + hs,
                    hs,
                    depth + 1,
                    tension,
                    its,
                )
            }
            None => Err(diverged(self, *its)),
        }
    }

    /// Tension `T_j` at each constraint point of the current level (N).
    pub fn tensions(&self) -> &[f64] {
        &self.tension
    }

    /// The multipliers `λ_j = T_j x'_j/|x'_j|` of the current level (N), comparable to
    /// [`AugmentedLagrangianStepper::multipliers`].
    pub fn multipliers(&self) -> Vec<[f64; 3]> {
        let mut d = vec![[0.0; 3]; self.h.model.n_points()];
        self.h.model.tangents_at_points(&self.h.x, &mut d);
        d.iter()
            .zip(&self.tension)
            .map(|(t, &tj)| {
                let n = norm(*t);
                t.map(|e| if n > 0.0 { tj * e / n } else { 0.0 })
            })
            .collect()
    }

    /// The full Newton–KKT report of the last step.
    pub fn kkt_report(&self) -> NewtonKktReport {
        self.report
    }

    /// Numeric factorizations of the KKT matrix in this run (one per Newton iteration).
    pub fn factorization_count(&self) -> usize {
        match &self.blocks {
            Some((kkt, _)) => kkt.factorization_count(),
            None => self.solver.factorization_count(),
        }
    }

    /// The Newton–KKT solver (its size and pattern).
    pub fn solver(&self) -> &NewtonKktSolver {
        &self.solver
    }
}

/// How many times a step of (97) on the block engine may be halved when Newton does not
/// converge (down to `Δt/16`).
pub const MAX_HALVINGS: usize = 4;

/// Parameters of the time-discretized penalty scheme (93) beyond the common step settings
/// (its Newton's iteration cap and tolerance are [`StepSettings::newton`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PenaltySettings {
    /// Penalty parameter `ε` of `H_ε(w) = w²/(2ε)` (the paper's `1.5e-4`), > 0. The penalty
    /// energy is `∫ ρ H_ε(|x'|² − 1) ds` (76), integrated at the constraint points.
    pub epsilon: f64,
    /// Direction of the discrete penalty force.
    pub form: PenaltyForm,
}

/// The discrete penalty force at a constraint point; both satisfy `g·(x^{n+1} − x^{n−1})' =
/// 2ρ [H(w^{n+1/2}) − H(w^{n−1/2})]`, so both conserve the discrete energy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PenaltyForm {
    /// `g = ρ H'(w̄) (x^{n+1} + 2x^n + x^{n−1})'/2`, `w̄ = (w^{n+1/2} + w^{n−1/2})/2`: no
    /// denominator (`H` is quadratic, so `ΔH = H'(w̄) Δw` and `Δw = (x^{n+1}−x^{n−1})'·(x^{n+1}+2x^n+x^{n−1})'/4`).
    Midpoint,
    /// The paper's (93) as printed (with the factor 2 of (30)):
    /// `g = 2ρ ΔH (x^{n+1}+x^{n−1})' / [(x^{n+1}+x^{n−1})'·(x^{n+1}−x^{n−1})']`. Its denominator
    /// vanishes for a rotation without stretch (a 0/0 in exact arithmetic, round-off in
    /// practice); below `1e-8` relative the limit along `(x^{n+1}+x^{n−1})'` is used.
    Paper,
}

impl PenaltySettings {
    /// `ε` with the [`PenaltyForm::Midpoint`] force.
    pub fn new(epsilon: f64) -> Self {
        Self {
            epsilon,
            form: PenaltyForm::Midpoint,
        }
    }
}

/// Refuses Newton settings the penalty scheme cannot use: no iteration, or a tolerance that
/// is negative or not a number.
fn check_newton(newton: &NewtonSettings) -> Result<(), BeamError> {
    if newton.max_iterations == 0 {
        return Err(BeamError::InvalidParameter {
            name: "max_iterations",
            value: 0.0,
            expected: "> 0",
        });
    }
    for (name, value) in [
        ("relative_tolerance", newton.relative_tolerance),
        ("absolute_tolerance", newton.absolute_tolerance),
    ] {
        if value.is_nan() || value < 0.0 {
            return Err(BeamError::InvalidParameter {
                name,
                value,
                expected: ">= 0",
            });
        }
    }
    Ok(())
}

/// The time-discretized penalty scheme (93) with the start (94), solved by Newton's method
/// (its own, with faer's sparse LU on the coupled three-component tangent, which is not
/// symmetric).
///
/// At each constraint point the penalty force `g` (see [`PenaltyForm`]) satisfies
/// `g·(x^{n+1} − x^{n−1})' = 2ρ [H(w^{n+1/2}) − H(w^{n−1/2})]`, `w^{n±1/2} = |x'^{n±1/2}|² − 1`:
/// the paper's (93) with the factor 2 of (30) and (89), so that the discrete energy (with
/// `ρ ∫ H(w^{n+1/2})`) is conserved exactly at `α = 1/4` and fixed ends.
#[derive(Debug)]
pub struct PenaltyStepper {
    h: Levels,
    settings: PenaltySettings,
    newton: NewtonSettings,
    free_of: Vec<usize>,
    free: Vec<usize>,
}

impl PenaltyStepper {
    /// Starts at `settings.t0` from `x0` with initial velocity `v0` (zero if `None`), with the
    /// scheme's `alpha` (`0 < α ≤ 1/2`). `settings.newton` is the Newton of every step: at most
    /// `max_iterations`, converged when the update
    /// `‖Δx‖_∞ ≤ max(absolute_tolerance, relative_tolerance · max(1, ‖x‖_∞))`. Prescribed dofs
    /// in `settings` are refused ([`BeamError::PrescribedDofs`]: the supports are the model's
    /// ends).
    pub fn new(
        model: Beam,
        x0: &BeamState,
        v0: Option<&BeamState>,
        alpha: f64,
        settings: StepSettings,
        penalty: PenaltySettings,
    ) -> Result<Self, BeamError> {
        if !(penalty.epsilon > 0.0 && penalty.epsilon.is_finite()) {
            return Err(BeamError::InvalidParameter {
                name: "epsilon",
                value: penalty.epsilon,
                expected: "a positive finite penalty parameter",
            });
        }
        check_newton(&settings.newton)?;
        let (h, newton) = Levels::new(model, x0, v0, alpha, settings)?;
        let settings = penalty;
        let n_s = h.model.n_scalar();
        let mut free_of = vec![usize::MAX; n_s];
        let mut free = Vec::new();
        for k in 0..n_s {
            if !h.model.is_fixed(k) {
                free_of[k] = free.len();
                free.push(k);
            }
        }
        Ok(Self {
            h,
            settings,
            newton,
            free_of,
            free,
        })
    }

    history_accessors!();

    /// Penalty force at one point and its 3×3 Jacobian (central differences).
    fn point_force(
        &self,
        p: [f64; 3],
        p0: [f64; 3],
        pm_of: &dyn Fn([f64; 3]) -> [f64; 3],
    ) -> [f64; 3] {
        let (rho, eps) = (self.h.model.parameters().density, self.settings.epsilon);
        let pm = pm_of(p);
        let a: [f64; 3] = std::array::from_fn(|c| 0.5 * (p[c] + p0[c]));
        let bm: [f64; 3] = std::array::from_fn(|c| 0.5 * (p0[c] + pm[c]));
        let (wp, wm) = (dot(a, a) - 1.0, dot(bm, bm) - 1.0);
        // w+ − w− = d·s/4 with d = p − pm, s = p + 2p0 + pm.
        let s: [f64; 3] = std::array::from_fn(|c| p[c] + 2.0 * p0[c] + pm[c]);
        match self.settings.form {
            PenaltyForm::Midpoint => {
                // g = ρ H'(w̄) s / 2, H'(w̄) = (w+ + w−)/(2ε): g·d = 2ρ ΔH exactly.
                let coef = rho * (wp + wm) / (4.0 * eps);
                s.map(|e| coef * e)
            }
            PenaltyForm::Paper => {
                let d: [f64; 3] = std::array::from_fn(|c| p[c] - pm[c]);
                let sp: [f64; 3] = std::array::from_fn(|c| p[c] + pm[c]);
                let den = dot(d, sp);
                // c = 2ρ ΔH/den = (ρ/ε)(w+ + w−) q, q = (d·s)/(4 den).
                let q = if den.abs() > 1e-8 * norm(d) * norm(sp) && norm(d) > 0.0 {
                    dot(d, s) / (4.0 * den)
                } else {
                    dot(sp, s) / (4.0 * dot(sp, sp)).max(f64::MIN_POSITIVE)
                };
                let coef = rho / eps * (wp + wm) * q;
                sp.map(|e| coef * e)
            }
        }
    }

    /// Penalty energy `ρ Σ_j w_j H(|x̄'_j|² − 1)` of the midpoint configuration.
    fn penalty_energy(&self, mid: &[f64]) -> f64 {
        let (rho, eps) = (self.h.model.parameters().density, self.settings.epsilon);
        let mut d = vec![[0.0; 3]; self.h.model.n_points()];
        self.h.model.tangents_at_points(mid, &mut d);
        d.iter()
            .zip(self.h.model.point_weights())
            .map(|(v, w)| {
                let wv = dot(*v, *v) - 1.0;
                w * rho * wv * wv / (2.0 * eps)
            })
            .sum()
    }

    /// Advances one step by Newton's method (see the module's step contract).
    pub fn step(&mut self) -> Result<BeamStepReport, BeamError> {
        let (b, mut x, half) = self.h.base();
        let t_new = self.h.clock.time_at(self.h.clock.step() + 1);
        let model = &self.h.model;
        model.apply_prescribed(t_new, &mut x);
        let n_s = model.n_scalar();
        let n_f = self.free.len();
        let n_p = model.n_points();
        let dt = self.h.clock.dt();
        let first = self.h.clock.step() == 0;
        let mut p0 = vec![[0.0; 3]; n_p];
        model.tangents_at_points(&self.h.x, &mut p0);
        let mut pm_known = vec![[0.0; 3]; n_p];
        if first {
            model.tangents_at_points(&self.h.v0, &mut pm_known); // u_j = ẋ₀'
        } else {
            model.tangents_at_points(&self.h.x_prev, &mut pm_known);
        }
        let weights = model.point_weights().to_vec();
        let mut p = vec![[0.0; 3]; n_p];
        let mut forces = vec![[0.0; 3]; n_p];
        let mut jac = vec![[[0.0; 3]; 3]; n_p];
        let mut residual = vec![0.0; DIM * n_s];
        let mut iterations = 0;
        let mut last_res: f64;
        let scale_x = x.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        loop {
            iterations += 1;
            model.tangents_at_points(&x, &mut p);
            for j in 0..n_p {
                let u = pm_known[j];
                let pm_of = |q: [f64; 3]| -> [f64; 3] {
                    if first {
                        std::array::from_fn(|c| q[c] - 2.0 * dt * u[c])
                    } else {
                        u
                    }
                };
                forces[j] = self.point_force(p[j], p0[j], &pm_of).map(|e| e * half);
                for k in 0..3 {
                    let hstep = 1e-7 * norm(p[j]).max(1.0);
                    let (mut up, mut dn) = (p[j], p[j]);
                    up[k] += hstep;
                    dn[k] -= hstep;
                    let fu = self.point_force(up, p0[j], &pm_of);
                    let fd = self.point_force(dn, p0[j], &pm_of);
                    for c in 0..3 {
                        jac[j][c][k] = half * (fu[c] - fd[c]) / (2.0 * hstep);
                    }
                }
            }
            // Residual R = A₀x − b + P(x) on all dofs.
            for c in 0..DIM {
                let r = c * n_s..(c + 1) * n_s;
                let rc = &mut residual[r.clone()];
                fem_assembly::sparse::mul_add(0.0, rc, 1.0, &self.h.a0, &x[r.clone()]);
                for (ri, bi) in rc.iter_mut().zip(&b[r]) {
                    *ri -= bi;
                }
            }
            model.add_point_forces(&forces, &mut residual);
            let mut rhs = vec![0.0; DIM * n_f];
            for c in 0..DIM {
                for (i, &k) in self.free.iter().enumerate() {
                    rhs[c * n_f + i] = -residual[c * n_s + k];
                }
            }
            last_res = rhs.iter().fold(0.0, |m, v| m.max(v.abs()));
            // Tangent on the free dofs: A₀ per component + Σ_j w_j N'_a N'_b J_j.
            let mut coo = nalgebra_sparse::CooMatrix::new(DIM * n_f, DIM * n_f);
            for c in 0..DIM {
                for (i, &k) in self.free.iter().enumerate() {
                    let row = self.h.a0.row(k);
                    for (&col, &v) in row.col_indices().iter().zip(row.values()) {
                        let jf = self.free_of[col];
                        if jf != usize::MAX {
                            coo.push(c * n_f + i, c * n_f + jf, v);
                        }
                    }
                }
            }
            for j in 0..n_p {
                let e = model.point_element(j);
                let dn = model.point_derivatives()[j];
                for a in 0..4 {
                    let ka = self.free_of[2 * e + a];
                    if ka == usize::MAX {
                        continue;
                    }
                    for bb in 0..4 {
                        let kb = self.free_of[2 * e + bb];
                        if kb == usize::MAX {
                            continue;
                        }
                        let f = weights[j] * dn[a] * dn[bb];
                        for c in 0..3 {
                            for d in 0..3 {
                                coo.push(c * n_f + ka, d * n_f + kb, f * jac[j][c][d]);
                            }
                        }
                    }
                }
            }
            let csc = nalgebra_sparse::CscMatrix::from(&coo);
            let n = DIM * n_f;
            let sym = SymbolicSparseColMatRef::new_checked(
                n,
                n,
                csc.col_offsets(),
                None,
                csc.row_indices(),
            );
            let mat = SparseColMatRef::new(sym, csc.values());
            let lu = mat.sp_lu().map_err(|e| {
                BeamError::Solver(fem_assembly::SolverError::Structure(format!("{e:?}")))
            })?;
            lu.solve_in_place(MatMut::from_column_major_slice_mut(&mut rhs, n, 1));
            let mut dmax = 0.0f64;
            for c in 0..DIM {
                for (i, &k) in self.free.iter().enumerate() {
                    x[c * n_s + k] += rhs[c * n_f + i];
                    dmax = dmax.max(rhs[c * n_f + i].abs());
                }
            }
            if !dmax.is_finite() {
                return Err(BeamError::NonFinite {
                    step: self.h.clock.step() + 1,
                });
            }
            let tolerance =
                (self.newton.relative_tolerance * scale_x).max(self.newton.absolute_tolerance);
            if dmax <= tolerance {
                break;
            }
            if iterations >= self.newton.max_iterations {
                return Err(BeamError::NewtonDiverged {
                    step: self.h.clock.step() + 1,
                    iterations,
                    residual: last_res,
                    tolerance,
                });
            }
        }
        let (mut energy, kinetic_energy, max_speed) = self.h.energy(&x);
        let mid: Vec<f64> = x
            .iter()
            .zip(&self.h.x)
            .map(|(a, b)| 0.5 * (a + b))
            .collect();
        energy += self.penalty_energy(&mid);
        self.h.advance(
            x,
            BeamStepReport {
                iterations,
                residual: last_res,
                energy,
                kinetic_energy,
                max_speed,
                ..BeamStepReport::default()
            },
        )
    }
}

/// The framework's [`fem_time::Stepper`] interface of a beam stepper, delegating to its own
/// `step`: the iterations and residual of the step's solver, the stretch error as the
/// constraint violation, the discrete energy `E^{n+1/2}` split into its kinetic part and the
/// rest (bending, load and, for the penalty, penalty energy).
macro_rules! framework_stepper {
    ($stepper:ty, $invariant:expr) => {
        impl fem_time::Stepper for $stepper {
            fn step(&mut self) -> Result<fem_time::StepReport, fem_time::StepError> {
                let (t, step) = (self.h.clock.time(), self.h.clock.step() + 1);
                let r =
                    <$stepper>::step(self).map_err(|e| fem_time::StepError::model(step, t, e))?;
                Ok(fem_time::StepReport {
                    iterations: r.iterations,
                    residual: r.residual,
                    constraint_violation: r.max_stretch_error,
                })
            }
            fn clock(&self) -> fem_time::Clock {
                self.h.clock
            }
            fn energy(&self) -> Option<fem_time::Energy> {
                Some(framework_energy(&self.h.last))
            }
            fn invariant(&self) -> fem_time::Invariant {
                $invariant
            }
            fn state(&self) -> Vec<fem_time::StateField<'_>> {
                let mut fields = vec![
                    fem_time::StateField::dofs("position", &self.h.x),
                    fem_time::StateField::dofs("previous_position", &self.h.x_prev),
                    fem_time::StateField::owned(
                        "last_report",
                        fem_time::StateKind::Other,
                        report_to_vec(&self.h.last),
                    ),
                ];
                fields.extend(self.solver_state());
                fields
            }
            fn restore(
                &mut self,
                step_index: u64,
                fields: &[fem_time::StateField<'_>],
            ) -> Result<(), fem_time::StepError> {
                let n = self.h.x.len();
                self.h
                    .x
                    .copy_from_slice(fem_time::restored(fields, "position", n)?);
                self.h
                    .x_prev
                    .copy_from_slice(fem_time::restored(fields, "previous_position", n)?);
                self.h.last =
                    report_from_slice(fem_time::restored(fields, "last_report", REPORT_LEN)?);
                self.restore_solver_state(fields)?;
                self.h.clock.set_step(step_index);
                Ok(())
            }
        }
    };
}

/// The framework's energy of a beam step: the discrete energy `E^{n+1/2}` split into its
/// kinetic part and the rest, with the work of moving supports and of the seabed as the
/// reactions' work (so the balance `total − reaction_work` is the scheme's).
pub(crate) fn framework_energy(r: &BeamStepReport) -> fem_time::Energy {
    let mut e = fem_time::Energy::new(r.kinetic_energy, r.energy - r.kinetic_energy);
    e.total = r.energy;
    e.reaction_work = r.support_work + r.seabed_work;
    e
}

/// Numbers in a [`BeamStepReport`], for a state field.
pub(crate) const REPORT_LEN: usize = 10;

/// A [`BeamStepReport`] as numbers (a checkpoint's).
pub(crate) fn report_to_vec(r: &BeamStepReport) -> Vec<f64> {
    vec![
        r.iterations as f64,
        r.residual,
        r.multiplier_change,
        r.max_stretch_error,
        r.energy,
        r.kinetic_energy,
        r.max_speed,
        r.support_work,
        r.seabed_work,
        r.nodes_on_seabed as f64,
    ]
}

/// A [`BeamStepReport`] from [`report_to_vec`].
pub(crate) fn report_from_slice(r: &[f64]) -> BeamStepReport {
    BeamStepReport {
        iterations: r[0] as usize,
        residual: r[1],
        multiplier_change: r[2],
        max_stretch_error: r[3],
        energy: r[4],
        kinetic_energy: r[5],
        max_speed: r[6],
        support_work: r[7],
        seabed_work: r[8],
        nodes_on_seabed: r[9] as usize,
    }
}

/// The seabed's active set as numbers (the bits of [`crate::seabed`]'s conditions).
pub(crate) fn held_to_vec(contact: &ActiveSet) -> Vec<f64> {
    contact.to_numbers()
}

/// The active set from [`held_to_vec`].
pub(crate) fn held_from_slice(model: &Beam, contact: &mut ActiveSet, v: &[f64]) {
    *contact = ActiveSet::from_numbers(model, v);
}

/// Flattens `[x, y, z]` triples for a state field.
fn flatten(v: &[[f64; 3]]) -> Vec<f64> {
    v.iter().flatten().copied().collect()
}

/// Restores `[x, y, z]` triples from a state field.
fn unflatten(
    fields: &[fem_time::StateField<'_>],
    name: &'static str,
    out: &mut [[f64; 3]],
) -> Result<(), fem_time::StepError> {
    let v = fem_time::restored(fields, name, 3 * out.len())?;
    for (o, c) in out.iter_mut().zip(v.chunks_exact(3)) {
        *o = [c[0], c[1], c[2]];
    }
    Ok(())
}

impl AugmentedLagrangianStepper {
    /// The Uzawa loop's warm start: the projected tangents and the multipliers.
    fn solver_state(&self) -> Vec<fem_time::StateField<'static>> {
        vec![
            fem_time::StateField::owned(
                "projected_tangents",
                fem_time::StateKind::Other,
                flatten(&self.p),
            ),
            fem_time::StateField::owned(
                "multipliers",
                fem_time::StateKind::Other,
                flatten(&self.lambda),
            ),
        ]
    }
    fn restore_solver_state(
        &mut self,
        fields: &[fem_time::StateField<'_>],
    ) -> Result<(), fem_time::StepError> {
        unflatten(fields, "projected_tangents", &mut self.p)?;
        unflatten(fields, "multipliers", &mut self.lambda)
    }
}

impl NewtonKktStepper {
    /// Newton's warm start (the tensions) and the seabed's active set.
    fn solver_state(&self) -> Vec<fem_time::StateField<'static>> {
        let mut fields = vec![fem_time::StateField::owned(
            "tensions",
            fem_time::StateKind::Other,
            self.tension.clone(),
        )];
        if let Some((_, contact)) = &self.blocks {
            fields.push(fem_time::StateField::owned(
                "on_seabed",
                fem_time::StateKind::Other,
                held_to_vec(contact),
            ));
        }
        fields
    }
    fn restore_solver_state(
        &mut self,
        fields: &[fem_time::StateField<'_>],
    ) -> Result<(), fem_time::StepError> {
        let n = self.tension.len();
        self.tension
            .copy_from_slice(fem_time::restored(fields, "tensions", n)?);
        if let Some((_, contact)) = &mut self.blocks {
            let m = contact.active.len();
            held_from_slice(
                &self.h.model,
                contact,
                fem_time::restored(fields, "on_seabed", m)?,
            );
        }
        Ok(())
    }
}

impl PenaltyStepper {
    /// The penalty scheme keeps no solver state between steps.
    fn solver_state(&self) -> Vec<fem_time::StateField<'static>> {
        Vec::new()
    }
    fn restore_solver_state(
        &mut self,
        _fields: &[fem_time::StateField<'_>],
    ) -> Result<(), fem_time::StepError> {
        Ok(())
    }
}

// The augmented Lagrangian (97) loses energy through its constraint force (first order in Δt).
framework_stepper!(AugmentedLagrangianStepper, fem_time::Invariant::None);
framework_stepper!(NewtonKktStepper, fem_time::Invariant::None);
// The time-discretized penalty (93) holds its energy to the scheme's truncation error.
framework_stepper!(PenaltyStepper, fem_time::Invariant::Truncation);
