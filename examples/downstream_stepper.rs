//! A downstream program that adds a model *and* a time stepper to `fem` without touching it,
//! and makes both selectable from YAML: `model.chain` (a chain of masses on springs), stepped by
//! `time.scheme: stormer_verlet` (its own stepper) or `alpha` (fem's).
//!
//! ```sh
//! cargo run --release --example downstream_stepper -- run examples/chain.yaml -o out/chain
//! cargo run --release --example downstream_stepper -- check examples/chain.yaml
//! ```
//!
//! The walk-through of docs/architecture.md ("Adding a stepper", "Adding a model"), done:
//! 1. The stepper, [`StormerVerlet`], is written against `fem_time`'s public parts only: it
//!    steps any [`SecondOrderSystem`] with a lumped mass, keeps its time in a [`Clock`] and its
//!    prescribed dofs in a [`DirichletControl`], and implements [`Stepper`] and
//!    [`NodalStepper`] — so fem's run loop writes its frames and history, checkpoints it and
//!    resumes it bit for bit.
//! 2. The model, [`ChainSection`] → [`ChainModel`], declares the schemes it offers
//!    ([`OfferedScheme`]: the stepper's name and the `time` settings it reads); `fem` refuses
//!    any other scheme and setting with the key named.
//! 3. The program's registry ([`fem::registry!`]) lists fem's models and the chain, and
//!    [`fem::cli::main`] is the whole command line (`run`, `check`, `mesh`, exit codes,
//!    checkpoints, `--resume`, Ctrl-C).

use std::borrow::Cow;

use fem::io::{Field, Frame, VtkCells};
use fem::mesh::CellKind;
use fem::model::input::{OfferedScheme, TimeSetting};
use fem::model::{InputError, Model, ModelSection, Sections, Uses};
use fem::time::{
    AlphaScheme, Clock, DirichletControl, Energy, EvalError, Invariant, Mass, Matrix, NodalStepper,
    SecondOrderSystem, StateField, StateKind, StepError, StepReport, StepSettings, Stepper,
    TangentKind, TimeGrid, restored,
};
use serde::Deserialize;

/// The name of the stepper in input files.
pub const STORMER_VERLET: &str = "stormer_verlet";

/// Störmer–Verlet in velocity form (kick, drift, kick) on a system with a lumped mass:
///
/// ```text
/// v^{n+½} = v^n + h/2 M⁻¹ (f(t_n) − f_int(x^n))
/// x^{n+1} = x^n + h v^{n+½}
/// v^{n+1} = v^{n+½} + h/2 M⁻¹ (f(t_{n+1}) − f_int(x^{n+1}))
/// ```
///
/// Second order, symplectic, explicit: stable for `h < 2/ω_max`. Prescribed dofs (direct
/// control only) hold `x = g(t)`, `v = ġ(t)` at every level.
#[derive(Debug)]
pub struct StormerVerlet<S> {
    system: S,
    clock: Clock,
    control: DirichletControl,
    inverse_mass: Vec<f64>,
    x: Vec<f64>,
    v: Vec<f64>,
    /// `M⁻¹ (f(t_n) − f_int(x^n))`.
    a: Vec<f64>,
    /// `Σ ½ (f(t_n) + f(t_{n+1})) · (x^{n+1} − x^n)`: the applied forces' work since `t0`.
    external_work: f64,
    force: Vec<f64>,
    scratch: Vec<f64>,
    dx: Vec<f64>,
}

impl<S: SecondOrderSystem> StormerVerlet<S> {
    /// The stepper from `x(t0) = x0`, `ẋ(t0) = v0`.
    pub fn new(
        system: S,
        settings: StepSettings,
        x0: &[f64],
        v0: &[f64],
    ) -> Result<Self, StepError> {
        let clock = Clock::new(settings.t0, settings.dt)?;
        let n = system.n_dofs();
        let control = DirichletControl::new(n, settings.dirichlet)?;
        let inverse_mass = match system.mass() {
            Mass::Lumped(m) => m.iter().map(|m| 1.0 / m).collect(),
            Mass::Consistent(_) => {
                return Err(StepError::NeedsLumpedMass {
                    scheme: "Störmer-Verlet",
                });
            }
        };
        let (mut x, mut v) = (x0.to_vec(), v0.to_vec());
        control.impose_initial(clock.t0(), &mut x, &mut v);
        let mut stepper = Self {
            system,
            clock,
            control,
            inverse_mass,
            x,
            v,
            a: vec![0.0; n],
            external_work: 0.0,
            force: vec![0.0; n],
            scratch: vec![0.0; n],
            dx: vec![0.0; n],
        };
        stepper
            .acceleration(clock.t0())
            .map_err(|e| clock.failed(e))?;
        Ok(stepper)
    }

    /// `a = M⁻¹ (f(t) − f_int(x))` at the current `x`, and `f(t)` in `force`.
    fn acceleration(&mut self, t: f64) -> Result<(), EvalError> {
        self.system.internal_force(&self.x, &mut self.scratch)?;
        self.system.external_force(t, &mut self.force);
        for i in 0..self.a.len() {
            self.a[i] = self.inverse_mass[i] * (self.force[i] - self.scratch[i]);
        }
        EvalError::check_finite("acceleration", &self.a)
    }
}

impl<S: SecondOrderSystem> Stepper for StormerVerlet<S> {
    fn step(&mut self) -> Result<StepReport, StepError> {
        let clock = self.clock;
        let (h, t1) = (clock.dt(), clock.time_at(clock.step() + 1));
        let mut work = 0.0;
        for i in 0..self.x.len() {
            self.v[i] += 0.5 * h * self.a[i];
            self.dx[i] = h * self.v[i];
        }
        for (dof, signal, _) in self.control.iter() {
            self.dx[dof] = signal.value(t1) - self.x[dof];
        }
        for i in 0..self.x.len() {
            work += 0.5 * self.force[i] * self.dx[i];
            self.x[i] += self.dx[i];
        }
        self.acceleration(t1).map_err(|e| clock.failed(e))?;
        for i in 0..self.x.len() {
            self.v[i] += 0.5 * h * self.a[i];
            work += 0.5 * self.force[i] * self.dx[i];
        }
        for (dof, signal, _) in self.control.iter() {
            self.v[dof] = signal.rate(t1);
        }
        self.external_work += work;
        self.clock.advance();
        Ok(StepReport::default())
    }

    fn clock(&self) -> Clock {
        self.clock
    }

    fn energy(&self) -> Option<Energy> {
        let potential = self.system.potential_energy(&self.x)?;
        let mut e = Energy::new(0.5 * self.system.mass().norm_squared(&self.v), potential);
        e.external_work = self.external_work;
        Some(e)
    }

    /// Symplectic: the energy oscillates within the truncation error, without drift.
    fn invariant(&self) -> Invariant {
        Invariant::Truncation
    }

    fn state(&self) -> Vec<StateField<'_>> {
        vec![
            StateField::dofs("position", &self.x),
            StateField::dofs("velocity", &self.v),
            StateField::owned("external_work", StateKind::Other, vec![self.external_work]),
        ]
    }

    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        let n = self.x.len();
        self.x.copy_from_slice(restored(fields, "position", n)?);
        self.v.copy_from_slice(restored(fields, "velocity", n)?);
        self.external_work = restored(fields, "external_work", 1)?[0];
        self.clock.set_step(step_index);
        let clock = self.clock;
        self.acceleration(clock.time()).map_err(|e| clock.failed(e))
    }
}

impl<S: SecondOrderSystem> NodalStepper for StormerVerlet<S> {
    fn position(&self) -> &[f64] {
        &self.x
    }
    fn velocity_at_step(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.v)
    }
}

/// `n` equal masses in a line, each tied to the next by a hardening spring
/// `N(s) = k s + κ s³` (`s` the stretch), the first one to a wall.
#[derive(Debug, Clone)]
pub struct Chain {
    mass: Mass,
    k: f64,
    kappa: f64,
}

impl Chain {
    fn n(&self) -> usize {
        self.mass.n()
    }

    /// The stretch of spring `i` (spring 0 ties mass 0 to the wall).
    fn stretch(&self, x: &[f64], i: usize) -> f64 {
        if i == 0 { x[0] } else { x[i] - x[i - 1] }
    }
}

impl SecondOrderSystem for Chain {
    fn n_dofs(&self) -> usize {
        self.n()
    }
    fn mass(&self) -> &Mass {
        &self.mass
    }
    fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        f.fill(0.0);
        for i in 0..self.n() {
            let s = self.stretch(x, i);
            let tension = self.k * s + self.kappa * s.powi(3);
            f[i] += tension;
            if i > 0 {
                f[i - 1] -= tension;
            }
        }
        Ok(())
    }
    fn tangent_kind(&self) -> TangentKind {
        TangentKind::Symmetric
    }
    fn tangent(&self, x: &[f64]) -> Result<Matrix, EvalError> {
        let n = self.n();
        let mut k = fem::nalgebra::DMatrix::zeros(n, n);
        for i in 0..n {
            let s = self.stretch(x, i);
            let kt = self.k + 3.0 * self.kappa * s * s;
            k[(i, i)] += kt;
            if i > 0 {
                k[(i - 1, i - 1)] += kt;
                k[(i, i - 1)] -= kt;
                k[(i - 1, i)] -= kt;
            }
        }
        Ok(Matrix::Dense(k))
    }
    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        Some(
            (0..self.n())
                .map(|i| {
                    let s = self.stretch(x, i);
                    0.5 * self.k * s * s + 0.25 * self.kappa * s.powi(4)
                })
                .sum(),
        )
    }
    fn has_external_force(&self) -> bool {
        false
    }
}

/// `model.chain`: the chain, released with its last mass pulled out.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainSection {
    /// Number of masses (≥ 1).
    pub masses: usize,
    /// Mass of each (> 0).
    pub mass: f64,
    /// Spring stiffness `k` (> 0).
    pub stiffness: f64,
    /// Hardening `κ` (≥ 0).
    #[serde(default)]
    pub hardening: f64,
    /// Initial displacement of the last mass (the others linearly in between).
    pub pull: f64,
}

impl ChainSection {
    fn check(&self) -> Result<(), InputError> {
        let positive = |key: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(InputError::invalid(
                    format!("model.chain.{key}"),
                    format!("expected a positive number, got {v}"),
                ))
            }
        };
        positive("mass", self.mass)?;
        positive("stiffness", self.stiffness)?;
        if !(self.hardening >= 0.0 && self.hardening.is_finite()) {
            return Err(InputError::invalid(
                "model.chain.hardening",
                format!("expected a non-negative number, got {}", self.hardening),
            ));
        }
        if !(1..=100_000).contains(&self.masses) {
            return Err(InputError::invalid(
                "model.chain.masses",
                format!("expected 1 to 100000 masses, got {}", self.masses),
            ));
        }
        if !self.pull.is_finite() {
            return Err(InputError::invalid("model.chain.pull", "expected a number"));
        }
        Ok(())
    }
}

impl ModelSection for ChainSection {
    const NAME: &'static str = "chain";

    fn uses(&self) -> Uses {
        Uses {
            schemes: &[
                OfferedScheme {
                    name: STORMER_VERLET,
                    settings: &[],
                },
                OfferedScheme {
                    name: fem::time::alpha::NAME,
                    settings: &[TimeSetting::Alpha, TimeSetting::Newton],
                },
            ],
            ..Uses::OWN_GEOMETRY
        }
    }

    fn build(&self, input: &Sections<'_>) -> Result<Box<dyn Model>, InputError> {
        self.check()?;
        let n = self.masses;
        let system = Chain {
            mass: Mass::Lumped(vec![self.mass; n]),
            k: self.stiffness,
            kappa: self.hardening,
        };
        let grid = fem::model::build::time_grid(input.time)?;
        let x0: Vec<f64> = (1..=n).map(|i| self.pull * i as f64 / n as f64).collect();
        let v0 = vec![0.0; n];
        let settings = StepSettings::new(grid.dt()).starting_at(grid.t0());
        let step_error = |e: StepError| InputError::invalid("time", e.to_string());
        let stepper: Box<dyn NodalStepper> = match input.scheme_name() {
            STORMER_VERLET => {
                // The explicit stability bound, 2/sqrt(λ_max) of M⁻¹K at the start.
                let bound = fem::time::alpha::stability_bound(&system, 0.0, &x0)
                    .map_err(step_error)?
                    .map(|(b, _)| b);
                if let Some(b) = bound
                    && grid.dt() > b
                {
                    return Err(InputError::invalid(
                        "time.dt",
                        format!(
                            "Störmer-Verlet is stable for dt < 2/omega_max = {b:e}; got {:e}",
                            grid.dt()
                        ),
                    ));
                }
                Box::new(StormerVerlet::new(system, settings, &x0, &v0).map_err(step_error)?)
            }
            fem::time::alpha::NAME => {
                let alpha = fem::model::build::alpha(input.time)?;
                let settings =
                    settings.with_newton(fem::model::build::newton_settings(input.time)?);
                Box::new(AlphaScheme::new(system, alpha, settings, &x0, &v0).map_err(step_error)?)
            }
            _ => return Err(input.unhandled_scheme(Self::NAME)),
        };
        Ok(Box::new(ChainModel::new(stepper, grid, n)))
    }
}

/// The chain being run: its stepper and its frames (the masses as points on a line).
pub struct ChainModel {
    stepper: Box<dyn NodalStepper>,
    grid: TimeGrid,
    points: Vec<[f64; 3]>,
    cells: VtkCells,
    displacement: Vec<f64>,
}

impl ChainModel {
    fn new(stepper: Box<dyn NodalStepper>, grid: TimeGrid, n: usize) -> Self {
        let points: Vec<[f64; 3]> = (0..=n).map(|i| [i as f64, 0.0, 0.0]).collect();
        let connectivity: Vec<usize> = (0..n).flat_map(|i| [i, i + 1]).collect();
        let mut cells = VtkCells::new();
        cells.push_block(CellKind::Line2, &connectivity);
        Self {
            stepper,
            grid,
            displacement: vec![0.0; 3 * (n + 1)],
            points,
            cells,
        }
    }
}

impl Model for ChainModel {
    fn describe(&self) -> Vec<String> {
        vec![format!(
            "  chain: {} masses, dt = {:e}, {} steps",
            self.points.len() - 1,
            self.grid.dt(),
            self.grid.n_steps()
        )]
    }
    fn grid(&self) -> TimeGrid {
        self.grid
    }
    fn stepper(&self) -> &dyn Stepper {
        self.stepper.as_ref()
    }
    fn stepper_mut(&mut self) -> &mut dyn Stepper {
        self.stepper.as_mut()
    }
    fn history_columns(&self) -> Vec<String> {
        vec!["tip".into()]
    }
    fn history_values(&self, _report: &StepReport, out: &mut Vec<f64>) {
        out.push(*self.stepper.position().last().unwrap_or(&0.0));
    }
    fn frame(&mut self) -> Frame<'_> {
        for (i, x) in self.stepper.position().iter().enumerate() {
            self.displacement[3 * (i + 1)] = *x;
        }
        Frame::new(&self.points, &self.cells)
            .with_point_field(Field::vector("displacement", &self.displacement))
    }
}

fem::registry! {
    /// fem's models and the chain.
    pub enum Models {
        String => fem::string::StringSection,
        ModalString => fem::modal::ModalStringSection,
        CollidingStrings => fem::string::CollidingStringsSection,
        DoublePendulum => fem::pendulum::DoublePendulumSection,
        Beam => fem::beam::BeamSection,
        RigidBodies => fem::rigid::RigidBodiesSection,
        Solid => fem::solid::SolidSection,
        Chain => ChainSection,
    }
}

#[allow(dead_code)]
fn main() -> std::process::ExitCode {
    fem::cli::main::<Models>()
}
