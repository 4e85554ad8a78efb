//! The one interface of every stepper, whatever it steps: a step, the clock, the energy and
//! the state.
//!
//! # Step contract
//! After construction a stepper holds the state at `t0` (step index 0). Each
//! [`Stepper::step`] advances by one `dt` and returns what the step did ([`StepReport`]); the
//! stepper owns the time in its [`Clock`], `t_n = t0 + n dt` computed from the index, never
//! accumulated. After an error the stepper must not be stepped again.
//!
//! # Energy
//! [`Energy`] is the scheme's own energy where it has one (the discrete energy (19) of the
//! alpha scheme, for instance); [`Stepper::invariant`] says what a driver may expect of it.
//!
//! # State
//! [`Stepper::state`] lists everything that defines the stepper's state as named arrays: flat
//! dof vectors, rotation matrices, the previous level of a three-level scheme. It does not
//! assume a flat configuration vector (a rigid body's holds a rotation). Steppers whose state
//! is a dof vector also implement [`NodalStepper`], with the position and the velocity at the
//! current time level.

use std::borrow::Cow;

use crate::{Clock, StepError};

/// What one step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Iterations of the step's solver (Newton, Uzawa, LCP pivots): 1 for one linear solve, 0
    /// for an explicit step.
    pub iterations: usize,
    /// Final residual of that solver (0 when there was none).
    pub residual: f64,
    /// The largest constraint violation after the step (0 without constraints).
    pub constraint_violation: f64,
}

/// A scheme's energy at the current step, and the balance terms accumulated since the start.
///
/// `total + dissipated − external_work − reaction_work` is what [`Invariant`] speaks of.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Energy {
    /// Kinetic part.
    pub kinetic: f64,
    /// Potential part (elastic, gravity, penalty…).
    pub potential: f64,
    /// `kinetic + potential`: the scheme's energy.
    pub total: f64,
    /// Work of the applied forces since the start.
    pub external_work: f64,
    /// Energy taken out by damping since the start.
    pub dissipated: f64,
    /// Work of the reactions of prescribed (Dirichlet) dofs since the start: what driving a
    /// dof puts into the system.
    pub reaction_work: f64,
}

impl Energy {
    /// An energy without balance terms.
    pub fn new(kinetic: f64, potential: f64) -> Self {
        Self {
            kinetic,
            potential,
            total: kinetic + potential,
            external_work: 0.0,
            dissipated: 0.0,
            reaction_work: 0.0,
        }
    }

    /// `total + dissipated − external_work − reaction_work`: constant when the scheme
    /// conserves energy.
    pub fn balance(&self) -> f64 {
        self.total + self.dissipated - self.external_work - self.reaction_work
    }
}

/// What a scheme promises of its energy balance ([`Energy::balance`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invariant {
    /// Constant to round-off.
    RoundOff,
    /// Constant to the tolerance of the step's nonlinear solver.
    SolverTolerance,
    /// Constant to the scheme's truncation error (it changes, boundedly, at the scheme's order).
    Truncation,
    /// The scheme dissipates (numerically or through its constraint forces): no invariant.
    None,
}

impl Invariant {
    /// How the invariant is named in a run summary.
    pub fn describe(self) -> &'static str {
        match self {
            Invariant::RoundOff => "conserved to round-off",
            Invariant::SolverTolerance => "conserved to the solver tolerance",
            Invariant::Truncation => "conserved to the scheme's truncation error",
            Invariant::None => "not conserved by this scheme",
        }
    }
}

/// What kind of values a [`StateField`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateKind {
    /// One value per dof (or per generalized coordinate, or per mode).
    Dofs,
    /// 3×3 rotation matrices, row-major, nine values each.
    Rotations,
    /// Anything else (multipliers, scalars of the scheme).
    Other,
}

/// One named array of a stepper's state.
#[derive(Clone, Debug, PartialEq)]
pub struct StateField<'a> {
    /// Its name (`position`, `velocity`, `previous_increment`, `rotation`…).
    pub name: Cow<'static, str>,
    /// What the values are.
    pub kind: StateKind,
    /// The values.
    pub values: Cow<'a, [f64]>,
}

impl<'a> StateField<'a> {
    /// A dof vector borrowed from the stepper.
    pub fn dofs(name: &'static str, values: &'a [f64]) -> Self {
        Self {
            name: Cow::Borrowed(name),
            kind: StateKind::Dofs,
            values: Cow::Borrowed(values),
        }
    }

    /// Any other array borrowed from the stepper.
    pub fn other(name: &'static str, values: &'a [f64]) -> Self {
        Self {
            name: Cow::Borrowed(name),
            kind: StateKind::Other,
            values: Cow::Borrowed(values),
        }
    }
}

/// A stepper, as a driver sees it.
pub trait Stepper {
    /// Advances one step (see the step contract in the module documentation).
    fn step(&mut self) -> Result<StepReport, StepError>;
    /// The stepper's clock: `t0`, `dt` and the steps taken.
    fn clock(&self) -> Clock;
    /// The current time `t_n`.
    fn time(&self) -> f64 {
        self.clock().time()
    }
    /// Steps taken, `n`.
    fn step_index(&self) -> u64 {
        self.clock().step()
    }
    /// The time step.
    fn dt(&self) -> f64 {
        self.clock().dt()
    }
    /// The scheme's energy at the current step, where the system has one.
    fn energy(&self) -> Option<Energy>;
    /// What the scheme promises of [`Energy::balance`].
    fn invariant(&self) -> Invariant;
    /// The state as named arrays (see the module documentation): everything the next steps
    /// depend on, so that [`Stepper::restore`] can resume bit for bit.
    fn state(&self) -> Vec<StateField<'_>>;
    /// Sets the state to one [`Stepper::state`] returned at step `step_index` by a stepper
    /// built the same way (same system, settings and initial state), so that the following
    /// steps are bitwise those it would have taken. Factorizations are rebuilt, not stored.
    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError>;
}

/// The values of the field `name` in `fields`, which must have `len` of them.
pub fn restored<'a>(
    fields: &'a [StateField<'_>],
    name: &'static str,
    len: usize,
) -> Result<&'a [f64], StepError> {
    match fields.iter().find(|f| f.name == name) {
        Some(f) if f.values.len() == len => Ok(&f.values),
        Some(f) => Err(StepError::BadData {
            what: name,
            found: f.values.len(),
            expected: len,
        }),
        None => Err(StepError::BadData {
            what: name,
            found: 0,
            expected: len,
        }),
    }
}

impl Energy {
    /// The six numbers, for a state field.
    pub fn to_array(&self) -> [f64; 6] {
        [
            self.kinetic,
            self.potential,
            self.total,
            self.external_work,
            self.dissipated,
            self.reaction_work,
        ]
    }

    /// From [`Energy::to_array`].
    pub fn from_slice(v: &[f64]) -> Self {
        Self {
            kinetic: v[0],
            potential: v[1],
            total: v[2],
            external_work: v[3],
            dissipated: v[4],
            reaction_work: v[5],
        }
    }
}

impl StateKind {
    /// A one-byte code, for files.
    pub fn code(self) -> u8 {
        match self {
            StateKind::Dofs => 0,
            StateKind::Rotations => 1,
            StateKind::Other => 2,
        }
    }

    /// From [`StateKind::code`] (unknown codes read as `Other`).
    pub fn from_code(code: u8) -> Self {
        match code {
            0 => StateKind::Dofs,
            1 => StateKind::Rotations,
            _ => StateKind::Other,
        }
    }
}

impl StateField<'static> {
    /// An owned array (a value computed for the state, not borrowed from the stepper).
    pub fn owned(name: &'static str, kind: StateKind, values: Vec<f64>) -> Self {
        Self {
            name: Cow::Borrowed(name),
            kind,
            values: Cow::Owned(values),
        }
    }
}

/// A stepper whose state is a vector of dofs.
pub trait NodalStepper: Stepper {
    /// The position `x_n`.
    fn position(&self) -> &[f64];
    /// The velocity at `t_n` (the current step), accurate to the scheme's order. (Named so
    /// since the alpha scheme's once gave the half-step velocity `(x^n − x^{n−1})/Δt`, which
    /// is now [`crate::AlphaScheme::half_step_velocity`]: CHANGELOG.md.)
    fn velocity_at_step(&self) -> Cow<'_, [f64]>;
}

/// The largest change of the energy balance ([`Energy::balance`]) from its first observed
/// value, and the scale it is measured against (the largest of `|kinetic|`, `|potential|`,
/// `|total|`, `|external_work|`, `|dissipated|`), over the energies observed in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EnergyBalanceTracker {
    /// The first balance observed (`None` before any).
    pub first: Option<f64>,
    /// `max |B_n − B_first|`.
    pub max_change: f64,
    /// The largest energy magnitude observed.
    pub scale: f64,
    /// Energies observed.
    pub observed: usize,
}

impl EnergyBalanceTracker {
    /// Takes one more energy into account.
    pub fn observe(&mut self, e: &Energy) {
        let b = e.balance();
        let first = *self.first.get_or_insert(b);
        self.max_change = self.max_change.max((b - first).abs());
        for v in [
            e.kinetic,
            e.potential,
            e.total,
            e.external_work,
            e.dissipated,
        ] {
            self.scale = self.scale.max(v.abs());
        }
        self.observed += 1;
    }
}
