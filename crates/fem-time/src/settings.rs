//! The settings every nodal stepper takes: the step, the start time, the prescribed motion and
//! Newton's method. A struct with defaults and builder methods, not a positional list.

use fem_constraints::DirichletConditions;

use crate::error::check_initial;
use crate::{Clock, DirichletControl, StepError};

/// Newton's method settings: converged when `‖R_free‖∞ ≤ absolute + relative · scale`, with
/// `scale` the size of the forces in the step's equation (each stepper says which).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonSettings {
    /// Iterations allowed per step.
    pub max_iterations: usize,
    /// Tolerance relative to the force scale.
    pub relative_tolerance: f64,
    /// Absolute tolerance.
    pub absolute_tolerance: f64,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        Self {
            max_iterations: 25,
            relative_tolerance: 1e-10,
            absolute_tolerance: 1e-14,
        }
    }
}

/// What a nodal stepper needs besides its system, its scheme parameter and its initial state.
#[derive(Clone, Debug)]
pub struct StepSettings {
    /// The time step (> 0).
    pub dt: f64,
    /// The start time (default 0).
    pub t0: f64,
    /// Prescribed dofs (default none).
    pub dirichlet: DirichletConditions,
    /// Newton's method, for implicit steps of nonlinear systems (default [`NewtonSettings::default`]).
    pub newton: NewtonSettings,
}

impl StepSettings {
    /// Step `dt` from `t = 0`, no prescribed dofs, default Newton settings.
    pub fn new(dt: f64) -> Self {
        Self {
            dt,
            t0: 0.0,
            dirichlet: DirichletConditions::none(),
            newton: NewtonSettings::default(),
        }
    }

    /// Starting at `t0`.
    pub fn starting_at(mut self, t0: f64) -> Self {
        self.t0 = t0;
        self
    }

    /// With prescribed dofs.
    pub fn with_dirichlet(mut self, dirichlet: DirichletConditions) -> Self {
        self.dirichlet = dirichlet;
        self
    }

    /// With these Newton settings.
    pub fn with_newton(mut self, newton: NewtonSettings) -> Self {
        self.newton = newton;
        self
    }
}

/// What every nodal stepper's constructor begins with ([`StepSettings::start`]): the clock,
/// the Dirichlet control (none without prescribed dofs), Newton's settings, and the initial
/// state with the prescribed entries replaced by `g(t0)`, `ġ(t0)`.
#[derive(Debug)]
pub struct StepStart {
    /// `t0` and `Δt`, checked.
    pub clock: Clock,
    /// The prescribed dofs, if any.
    pub control: Option<DirichletControl>,
    /// Newton's method.
    pub newton: NewtonSettings,
    /// `x(t0)`, prescribed entries imposed.
    pub x: Vec<f64>,
    /// `ẋ(t0)`, prescribed entries imposed.
    pub v: Vec<f64>,
}

impl StepSettings {
    /// Checks the step and start time, the initial vectors (length `n`, finite) and the
    /// prescribed dofs, in that order, and imposes `g(t0)`, `ġ(t0)` on the initial state.
    pub fn start(self, n: usize, x0: &[f64], v0: &[f64]) -> Result<StepStart, StepError> {
        let clock = Clock::new(self.t0, self.dt)?;
        check_initial(n, x0, v0)?;
        let control = DirichletControl::of(n, self.dirichlet)?;
        let mut x = x0.to_vec();
        let mut v = v0.to_vec();
        if let Some(c) = &control {
            c.impose_initial(self.t0, &mut x, &mut v);
        }
        Ok(StepStart {
            clock,
            control,
            newton: self.newton,
            x,
            v,
        })
    }
}
