//! The double compound pendulum of Glowinski–Holmström §2, (33)–(45), as a downstream user
//! would write it: a [`ConservationFormSystem`] and two [`ConstraintFunction`]s.
//!
//! Angles `θ_i` from the `x`-axis, gravity `g` along `+x`, link `i` of mass `m_i`, length `l_i`,
//! centre of mass at `a_i` from its hinge, inertia `I_i` about it. With
//! `J_1 = I_1 + m_1 a_1² + m_2 l_1²`, `J_2 = I_2 + m_2 a_2²`, `k = m_2 l_1 a_2`,
//! `Δ = θ_2 − θ_1`:
//!
//! ```text
//! T = ½ J_1 θ̇_1² + ½ J_2 θ̇_2² + k θ̇_1 θ̇_2 cos Δ,    V = −g (m_1 a_1 + m_2 l_1) cos θ_1 − g m_2 a_2 cos θ_2
//! f_1 = J_1 θ̇_1 + k θ̇_2 cos Δ,    g_1 = −k θ̇_1 θ̇_2 sin Δ + g (m_1 a_1 + m_2 l_1) sin θ_1
//! f_2 = J_2 θ̇_2 + k θ̇_1 cos Δ,    g_2 = +k θ̇_1 θ̇_2 sin Δ + g m_2 a_2 sin θ_2
//! ```
//!
//! (34) prints `−` in `g_2`; Lagrange's equations give `+` (`∂T/∂θ_2 = −k θ̇_1 θ̇_2 sin Δ`), as in
//! (38). With Table 3, `V(0, 0) = −110.475`, the paper's free-hanging energy.
//!
//! The tip is `B = (l_1 cos θ_1 + l_2 cos θ_2, l_1 sin θ_1 + l_2 sin θ_2)`. The wall is
//! `c_B = y_B − d ≤ 0` (§2.2); the ellipse (43)–(44) is
//! `c = (x_B − x_0)²/s_x² + (y_B − y_0)²/s_y² − 1 = 0`. With Table 3's `c = 1.155`, `d = 0.5`
//! put as printed in (44) (`s_x = c`, `s_y = d`) neither `O` (which §2.4 puts on the ellipse)
//! nor the initial tip is on it (`c(θ_0) ≈ −0.79`); with `s_x = d = 0.5`, `s_y = c = 1.155`
//! both are (`c(O) = −3.9e−4`, `c(θ_0) = −4e−4`), so that is what [`EllipseConstraint::table3`]
//! uses.

use fem_constraints::{
    AugmentedLagrangian, ConstraintError, ConstraintFunction, ConstraintKind, ConstraintSolver,
    Penalty, TimeFunction,
};

use fem_time::conservation_form::{
    ConservationFormScheme, ConservationFormSystem, ConservationStepReport, EnforcedConstraint,
    MultiplierSettings,
};
use fem_time::{NewtonSettings, NodalStepper, StepError, StepSettings, Stepper};

/// The double compound pendulum (Fig. 1), optionally driven by a torque at `O` (41)–(42).
#[derive(Clone, Debug)]
pub struct DoublePendulum {
    /// Hinge-to-centre-of-mass distances `a_1`, `a_2`.
    pub a: [f64; 2],
    /// Link lengths `l_1`, `l_2`.
    pub l: [f64; 2],
    /// Masses `m_1`, `m_2`.
    pub m: [f64; 2],
    /// Inertias `I_1`, `I_2` about the centres of mass.
    pub inertia: [f64; 2],
    /// Gravity `g` (along `+x`).
    pub gravity: f64,
    /// Torque `τ(t)` at `O` (the generalized force `Q_1`); none when `None`.
    pub torque: Option<TimeFunction>,
}

impl DoublePendulum {
    /// Table 1 (the wall problem).
    pub fn table1() -> Self {
        Self {
            a: [1.63, 0.99],
            l: [3.26, 1.98],
            m: [67.1, 219.0],
            inertia: [0.8134, 0.8290],
            gravity: 9.81,
            torque: None,
        }
    }

    /// Table 3 (the ellipse problem) with the torque (45): `−30` for `t ≤ 4`, then 0.
    pub fn table3() -> Self {
        Self {
            a: [0.5, 0.25],
            l: [1.0, 0.5],
            m: [10.0, 5.0],
            inertia: [0.8333, 0.1042],
            gravity: 9.82,
            torque: Some(TimeFunction::expression("-30 * (t <= 4)").expect("a valid expression")),
        }
    }

    /// Range checks: positive lengths, masses, inertias; `0 < a_i`; finite gravity.
    pub fn check(&self) -> Result<(), StepError> {
        for (name, values) in [
            ("a", self.a),
            ("l", self.l),
            ("m", self.m),
            ("inertia", self.inertia),
        ] {
            for v in values {
                if !(v > 0.0 && v.is_finite()) {
                    return Err(StepError::InvalidParameter {
                        name,
                        value: v,
                        expected: "a positive finite number",
                    });
                }
            }
        }
        if !self.gravity.is_finite() {
            return Err(StepError::InvalidParameter {
                name: "gravity",
                value: self.gravity,
                expected: "a finite number",
            });
        }
        Ok(())
    }

    fn constants(&self) -> (f64, f64, f64, f64, f64) {
        let [a1, a2] = self.a;
        let [l1, _] = self.l;
        let [m1, m2] = self.m;
        let [i1, i2] = self.inertia;
        (
            i1 + m1 * a1 * a1 + m2 * l1 * l1,
            i2 + m2 * a2 * a2,
            m2 * l1 * a2,
            self.gravity * (m1 * a1 + m2 * l1),
            self.gravity * m2 * a2,
        )
    }

    /// The tip `B` at `θ`.
    pub fn tip(&self, theta: &[f64]) -> [f64; 2] {
        [
            self.l[0] * theta[0].cos() + self.l[1] * theta[1].cos(),
            self.l[0] * theta[0].sin() + self.l[1] * theta[1].sin(),
        ]
    }
}

impl ConservationFormSystem for DoublePendulum {
    fn n_coordinates(&self) -> usize {
        2
    }
    fn momentum(&self, q: &[f64], w: &[f64], out: &mut [f64]) {
        let (j1, j2, k, _, _) = self.constants();
        let c = (q[1] - q[0]).cos();
        out[0] = j1 * w[0] + k * w[1] * c;
        out[1] = j2 * w[1] + k * w[0] * c;
    }
    fn force(&self, q: &[f64], w: &[f64], out: &mut [f64]) {
        let (_, _, k, g1, g2) = self.constants();
        let s = k * w[0] * w[1] * (q[1] - q[0]).sin();
        out[0] = -s + g1 * q[0].sin();
        out[1] = s + g2 * q[1].sin();
    }
    fn applied_force(&self, t: f64, out: &mut [f64]) {
        out[0] = self.torque.as_ref().map_or(0.0, |f| f.eval(t));
        out[1] = 0.0;
    }
    fn kinetic_energy(&self, q: &[f64], w: &[f64]) -> f64 {
        let (j1, j2, k, _, _) = self.constants();
        0.5 * j1 * w[0] * w[0] + 0.5 * j2 * w[1] * w[1] + k * w[0] * w[1] * (q[1] - q[0]).cos()
    }
    fn potential_energy(&self, q: &[f64]) -> f64 {
        let (_, _, _, g1, g2) = self.constants();
        -g1 * q[0].cos() - g2 * q[1].cos()
    }
}

/// The wall of §2.2: `c_B(θ) = l_1 sin θ_1 + l_2 sin θ_2 − d ≤ 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WallConstraint {
    /// Link lengths.
    pub l: [f64; 2],
    /// Distance of the wall from `O`.
    pub d: f64,
}

impl ConstraintFunction for WallConstraint {
    fn n_constraints(&self) -> usize {
        1
    }
    fn n_dofs(&self) -> usize {
        2
    }
    fn kinds(&self) -> Vec<ConstraintKind> {
        vec![ConstraintKind::Inequality]
    }
    fn evaluate(&self, q: &[f64], g: &mut [f64], gradient: &mut [f64]) {
        g[0] = self.l[0] * q[0].sin() + self.l[1] * q[1].sin() - self.d;
        gradient[0] = self.l[0] * q[0].cos();
        gradient[1] = self.l[1] * q[1].cos();
    }
}

/// The ellipse of §2.4: `c(θ) = (x_B − x_0)²/s_x² + (y_B − y_0)²/s_y² − 1 = 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EllipseConstraint {
    /// Link lengths.
    pub l: [f64; 2],
    /// Centre `(x_0, y_0)`.
    pub centre: [f64; 2],
    /// Semi-axes `s_x` (along `x`, the direction of gravity) and `s_y`.
    pub semi_axes: [f64; 2],
}

impl EllipseConstraint {
    /// Table 3: centre `(0.25, 1)`, `s_x = 0.5`, `s_y = 1.155` (see the module documentation).
    pub fn table3() -> Self {
        Self {
            l: [1.0, 0.5],
            centre: [0.25, 1.0],
            semi_axes: [0.5, 1.155],
        }
    }
}

impl ConstraintFunction for EllipseConstraint {
    fn n_constraints(&self) -> usize {
        1
    }
    fn n_dofs(&self) -> usize {
        2
    }
    fn kinds(&self) -> Vec<ConstraintKind> {
        vec![ConstraintKind::Equality]
    }
    fn evaluate(&self, q: &[f64], g: &mut [f64], gradient: &mut [f64]) {
        let [l1, l2] = self.l;
        let (s1, c1, s2, c2) = (q[0].sin(), q[0].cos(), q[1].sin(), q[1].cos());
        let dx = l1 * c1 + l2 * c2 - self.centre[0];
        let dy = l1 * s1 + l2 * s2 - self.centre[1];
        let (ax, ay) = (self.semi_axes[0].powi(2), self.semi_axes[1].powi(2));
        g[0] = dx * dx / ax + dy * dy / ay - 1.0;
        gradient[0] = 2.0 * dx / ax * (-l1 * s1) + 2.0 * dy / ay * (l1 * c1);
        gradient[1] = 2.0 * dx / ax * (-l2 * s2) + 2.0 * dy / ay * (l2 * c2);
    }
}

/// How a pendulum constraint is enforced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstraintMethod {
    /// Quadratic penalty with parameter `ε`.
    Penalty {
        /// `ε > 0`.
        epsilon: f64,
    },
    /// Augmented Lagrangian (Hestenes–Powell) with parameter `ε` and its stopping rule.
    AugmentedLagrangian {
        /// `ε > 0`.
        epsilon: f64,
        /// Multiplier tolerance and iteration limit.
        multipliers: MultiplierSettings,
    },
}

/// Which constraint the pendulum carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PendulumConstraint {
    /// None: the free pendulum.
    Free,
    /// The wall `y_B ≤ d` (inequality).
    Wall(WallConstraint),
    /// The ellipse (equality).
    Ellipse(EllipseConstraint),
}

/// A pendulum run: the model, its constraint and enforcement, the step and the initial state.
#[derive(Clone, Debug)]
pub struct PendulumSetup {
    /// The pendulum.
    pub pendulum: DoublePendulum,
    /// Its constraint.
    pub constraint: PendulumConstraint,
    /// How the constraint is enforced (ignored for [`PendulumConstraint::Free`]).
    pub enforcement: ConstraintMethod,
    /// `Δt`.
    pub dt: f64,
    /// `θ(0)`.
    pub theta0: [f64; 2],
    /// `θ̇(0)`.
    pub theta_dot0: [f64; 2],
    /// Newton's settings.
    pub newton: NewtonSettings,
}

impl PendulumSetup {
    /// Table 1 with the wall at `d = 2.44` by penalty `epsilon`, `Δt` as given (Fig. 2: 1e−4).
    pub fn wall(epsilon: f64, dt: f64) -> Self {
        let pendulum = DoublePendulum::table1();
        Self {
            constraint: PendulumConstraint::Wall(WallConstraint {
                l: pendulum.l,
                d: 2.44,
            }),
            pendulum,
            enforcement: ConstraintMethod::Penalty { epsilon },
            dt,
            theta0: TABLE1_THETA0,
            theta_dot0: [0.0, 0.0],
            newton: default_newton(),
        }
    }

    /// Table 3 with the ellipse by the given enforcement (Table 4: penalty `ε = 1e−6`,
    /// `Δt = 1e−6`; augmented Lagrangian `ε = 1e−6`, `Δt = 5e−4`).
    pub fn ellipse(enforcement: ConstraintMethod, dt: f64) -> Self {
        Self {
            pendulum: DoublePendulum::table3(),
            constraint: PendulumConstraint::Ellipse(EllipseConstraint::table3()),
            enforcement,
            dt,
            theta0: [2.271, 0.6591],
            theta_dot0: [0.0, 0.0],
            newton: default_newton(),
        }
    }
}

fn default_newton() -> NewtonSettings {
    NewtonSettings {
        max_iterations: 30,
        relative_tolerance: 1e-11,
        absolute_tolerance: 1e-13,
    }
}

/// One row of a pendulum history (CSV-ready).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PendulumRecord {
    /// Step index.
    pub step: u64,
    /// `t_n`.
    pub t: f64,
    /// `θ^n`.
    pub theta: [f64; 2],
    /// The tip `B` at `θ^n`.
    pub tip: [f64; 2],
    /// The constraint `c(θ^n)` (0 for the free pendulum).
    pub constraint: f64,
    /// `c(θ^{n−1/2})`.
    pub constraint_half_step: f64,
    /// The multiplier (augmented Lagrangian) or the penalty's equivalent multiplier.
    pub multiplier: f64,
    /// `T + V` at the half step `n − 1/2`.
    pub energy: f64,
    /// The constraint energy `ψ(c(θ^{n−1/2}))`.
    pub constraint_energy: f64,
    /// Work of the torque at `O` since `t = 0`, `Σ Q(t_n) (θ₁^{n+1/2} − θ₁^{n−1/2})`: the
    /// energy less this work is what scheme (40) conserves to its truncation error.
    pub torque_work: f64,
    /// Newton iterations of the step.
    pub newton_iterations: usize,
    /// Multiplier iterations of the step.
    pub multiplier_iterations: usize,
}

impl PendulumRecord {
    /// Names of the record's values in [`PendulumRecord::values`] order (the model's own
    /// history columns; `mechanical_energy` is the record's `energy`).
    pub const COLUMNS: [&'static str; 12] = [
        "theta1",
        "theta2",
        "tip_x",
        "tip_y",
        "constraint",
        "constraint_half_step",
        "multiplier",
        "mechanical_energy",
        "constraint_energy",
        "torque_work",
        "newton_iterations",
        "multiplier_iterations",
    ];

    /// The record's values after `step` and `t`, in [`PendulumRecord::COLUMNS`] order.
    pub fn values(&self) -> [f64; 12] {
        [
            self.theta[0],
            self.theta[1],
            self.tip[0],
            self.tip[1],
            self.constraint,
            self.constraint_half_step,
            self.multiplier,
            self.energy,
            self.constraint_energy,
            self.torque_work,
            self.newton_iterations as f64,
            self.multiplier_iterations as f64,
        ]
    }
}

/// A pendulum being stepped by scheme (40).
#[derive(Debug)]
pub struct PendulumSimulation {
    scheme: ConservationFormScheme<DoublePendulum>,
}

fn constraint_error(e: ConstraintError) -> StepError {
    match e {
        ConstraintError::InvalidParameter {
            name,
            value,
            expected,
        } => StepError::InvalidParameter {
            name,
            value,
            expected,
        },
        ConstraintError::DimensionMismatch {
            what,
            found,
            expected,
        } => StepError::BadData {
            what,
            found,
            expected,
        },
    }
}

impl PendulumSimulation {
    /// Checks the setup and builds the scheme.
    pub fn new(setup: &PendulumSetup) -> Result<Self, StepError> {
        setup.pendulum.check()?;
        let function: Option<Box<dyn ConstraintFunction>> = match setup.constraint {
            PendulumConstraint::Free => None,
            PendulumConstraint::Wall(w) => Some(Box::new(w)),
            PendulumConstraint::Ellipse(e) => Some(Box::new(e)),
        };
        let constraint = match function {
            None => None,
            Some(function) => {
                let kinds = function.kinds();
                let (solver, multipliers): (Box<dyn ConstraintSolver>, _) = match setup.enforcement
                {
                    ConstraintMethod::Penalty { epsilon } => (
                        Box::new(Penalty::new(epsilon, kinds).map_err(constraint_error)?),
                        MultiplierSettings::default(),
                    ),
                    ConstraintMethod::AugmentedLagrangian {
                        epsilon,
                        multipliers,
                    } => (
                        Box::new(
                            AugmentedLagrangian::new(epsilon, kinds).map_err(constraint_error)?,
                        ),
                        multipliers,
                    ),
                };
                Some(EnforcedConstraint {
                    function,
                    solver,
                    multipliers,
                })
            }
        };
        let scheme = ConservationFormScheme::new(
            setup.pendulum.clone(),
            constraint,
            StepSettings::new(setup.dt).with_newton(setup.newton),
            &setup.theta0,
            &setup.theta_dot0,
        )?;
        Ok(Self { scheme })
    }

    /// The record of the initial state (energy at `t = 0`, no iterations).
    pub fn initial_record(&self) -> PendulumRecord {
        let q = self.scheme.position();
        let p = self.scheme.system();
        let mut c = [0.0];
        if let Some(constraint) = self.scheme.constraint() {
            let mut grad = [0.0; 2];
            constraint.function.evaluate(q, &mut c, &mut grad);
        }
        PendulumRecord {
            step: 0,
            t: self.scheme.time(),
            theta: [q[0], q[1]],
            tip: p.tip(q),
            constraint: c[0],
            constraint_half_step: c[0],
            energy: p.kinetic_energy(q, &self.scheme.half_step_velocity()) + p.potential_energy(q),
            ..Default::default()
        }
    }

    /// Advances one step and returns its record.
    pub fn step(&mut self) -> Result<PendulumRecord, StepError> {
        self.scheme.step()?;
        Ok(self.last_record())
    }

    /// The record of the last step (of the initial state before the first step).
    pub fn last_record(&self) -> PendulumRecord {
        if self.scheme.step_index() == 0 {
            return self.initial_record();
        }
        let r: &ConservationStepReport = self.scheme.last_report();
        let q = self.scheme.position();
        PendulumRecord {
            step: r.step,
            t: r.t,
            theta: [q[0], q[1]],
            tip: self.scheme.system().tip(q),
            constraint: r.constraint.first().copied().unwrap_or(0.0),
            constraint_half_step: r.constraint_half_step.first().copied().unwrap_or(0.0),
            multiplier: r.multipliers.first().copied().unwrap_or(0.0),
            energy: r.energy,
            constraint_energy: r.constraint_energy,
            torque_work: r.external_work,
            newton_iterations: r.newton_iterations,
            multiplier_iterations: r.multiplier_iterations,
        }
    }

    /// Runs to `t_end` (the last step ends at or after `t_end − Δt/2`), calling `each` with
    /// every record (the initial one first).
    pub fn run(
        &mut self,
        t_end: f64,
        mut each: impl FnMut(&PendulumRecord),
    ) -> Result<(), StepError> {
        each(&self.initial_record());
        let dt = self.scheme.dt();
        while self.scheme.time() < t_end - 0.5 * dt {
            let r = self.step()?;
            each(&r);
        }
        Ok(())
    }

    /// The scheme, to step it.
    pub fn scheme_mut(&mut self) -> &mut ConservationFormScheme<DoublePendulum> {
        &mut self.scheme
    }

    /// The scheme.
    pub fn scheme(&self) -> &ConservationFormScheme<DoublePendulum> {
        &self.scheme
    }
}

/// Table 1's initial angles as printed (−π/6, −π/3 to four digits; the paper's values, not
/// the exact fractions of π).
#[allow(clippy::approx_constant)]
const TABLE1_THETA0: [f64; 2] = [-0.5236, -1.0472];
