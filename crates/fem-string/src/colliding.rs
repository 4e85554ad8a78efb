//! Two colliding strings (Glowinski–Holmström §3, (46)–(67)) on the nonlinear alpha scheme.
//!
//! Strings `u` and `v` on `[0, 1]`, both ends fixed, `ρ_k ü = τ_k u_xx`, kept apart by
//! `u ≥ v`. P1 elements on `I` cells with lumped (trapezoidal) mass, assembled by
//! [`StringMatrices`]: per interior node `ρ h` on the diagonal and `τ/h [−1 2 −1]`, i.e. `h`
//! times the paper's `ρ I` and `τ A_h` (55). The unknowns are `x = (U, V)`, `2(I − 1)` of them.
//!
//! The constraint `g_i = v_i − u_i ≤ 0` at each interior node is enforced by the penalty
//! `H_ε(w) = (w⁺)²/(2ε)` (47). Its weak form (52) integrated by the trapezoidal rule gives
//! `h H_ε'(v_i − u_i)` per node, so the potential is `V(x) = Σ_i h H_ε(v_i − u_i)`: a
//! [`Penalty`] with parameter `ε/h` per node. The time discretization (62) is the discrete
//! gradient of [`LinearConstraintPotential`], so (63) is [`NonlinearAlphaScheme`] on this
//! system, and the discrete energy, penalty energy included, is conserved.
//!
//! # Signs in (63) as printed
//! The OCR of (63) shows `− τ A_h (…)`; (54) and the energy argument need `+ τ A_h (…)`, which
//! is what is implemented. The penalty quotient of (63),
//! `(1/ε) ((v−u)^{n+1/2}² − (v−u)^{n−1/2}²) / ((v−u)^{n+1} − (v−u)^{n−1})`, lost its `(·)⁺`
//! in print: it is `2 (H^{n+1/2} − H^{n−1/2}) / (w^{n+1} − w^{n−1})` of (62) with
//! `H = (w⁺)²/(2ε)`, as implemented. In (67), `0.02 sin(τ i h)` reads `0.02 sin(π i h)`.
//!
//! # As a model
//! Frames hold both strings *in their deformed positions* (points `(x, u)` and `(x, v)`; no
//! warp needed), point data `string` (0 for u, 1 for v) and `contact_force`; `history.csv` has
//! `step,t,kinetic,potential,total,elastic,penalty,penetration,iterations`, `total` the
//! discrete energy (19) + (32) (penalty included, conserved to the Newton tolerance) and
//! `potential = elastic + penalty`.

use fem_assembly::DofMap;
use fem_constraints::Penalty;
use fem_elements::StringMaterial;
use fem_io::{Field, Frame, VtkCells};
use fem_model::build::{alpha, newton_settings, time_grid};
use fem_model::input::{InitialField, OfferedScheme, TimeSetting};
use fem_model::number::strict;
use fem_model::resources::frame_bytes;
use fem_model::{InputError, Model, ModelSection, Sections, Uses};
use fem_time::{
    Energy, LinearConstraintPotential, LinearSystem, Mass, NewtonSettings, NodalStepper,
    NonlinearAlphaScheme, StepError, StepReport, StepSettings, Stepper, TimeGrid, WithPotential,
};
use nalgebra_sparse::{CooMatrix, CsrMatrix};
use serde::Deserialize;

use crate::assembly::StringMatrices;

/// Two P1 strings on [0, 1], the upper one u kept above the lower one v (u ≥ v) by the
/// time-discretized penalty (Glowinski–Holmström §3): the `model.colliding_strings` section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollidingStringsSection {
    /// Cells I of each string on [0, 1] (≥ 2); both ends of both strings fixed.
    #[serde(deserialize_with = "strict")]
    pub cells: usize,
    /// Densities ρ₁ (u) and ρ₂ (v).
    #[serde(deserialize_with = "strict")]
    pub density: [f64; 2],
    /// Tensions τ₁, τ₂.
    #[serde(deserialize_with = "strict")]
    pub tension: [f64; 2],
    /// Penalty parameter ε of u ≥ v (> 0).
    #[serde(deserialize_with = "strict")]
    pub epsilon: f64,
    /// Initial shape of u (a `sine` or `pluck`; default zero).
    #[serde(default)]
    pub upper: InitialField,
    /// Initial shape of v.
    #[serde(default)]
    pub lower: InitialField,
}

/// The strings' system: both strings (block diagonal) plus the penalty of `u ≥ v`.
pub type CollidingSystem = WithPotential<LinearSystem, LinearConstraintPotential>;

/// Parameters of the colliding strings (66)–(67).
#[derive(Clone, Debug, PartialEq)]
pub struct CollidingStringsParameters {
    /// Number of cells `I` (`h = 1/I`), at least 2.
    pub n_cells: usize,
    /// Linear densities `ρ_1`, `ρ_2` of `u` and `v`.
    pub density: [f64; 2],
    /// Tensions `τ_1`, `τ_2`.
    pub tension: [f64; 2],
    /// Penalty parameter `ε` of (47).
    pub epsilon: f64,
    /// Time step `Δt`.
    pub dt: f64,
    /// The scheme's `α` (¼ in the paper).
    pub alpha: f64,
    /// Initial displacements of `u` and `v` at the interior nodes `x_i = i h`, `i = 1..I−1`.
    pub u0: Vec<f64>,
    /// See `u0`.
    pub v0: Vec<f64>,
    /// Initial velocities of `u` and `v` at the interior nodes.
    pub u1: Vec<f64>,
    /// See `u1`.
    pub v1: Vec<f64>,
    /// Newton's settings for (63).
    pub newton: NewtonSettings,
}

impl CollidingStringsParameters {
    /// The experiment of §3.3: (66) and (67), with `n_cells` = `I`.
    pub fn paper(n_cells: usize) -> Self {
        let h = 1.0 / n_cells as f64;
        let pi = std::f64::consts::PI;
        let nodes = 1..n_cells;
        Self {
            n_cells,
            density: [1.0, 1.0],
            tension: [1.0, 1.0],
            epsilon: 1e-6,
            dt: 1e-4,
            alpha: 0.25,
            u0: nodes
                .clone()
                .map(|i| 0.02 * (pi * i as f64 * h).sin())
                .collect(),
            v0: nodes
                .clone()
                .map(|i| -0.01 * (2.0 * pi * i as f64 * h).sin())
                .collect(),
            u1: vec![0.0; n_cells - 1],
            v1: vec![0.0; n_cells - 1],
            newton: NewtonSettings {
                max_iterations: 25,
                relative_tolerance: 1e-10,
                absolute_tolerance: 0.0,
            },
        }
    }

    /// Range checks: positive `ρ`, `τ`, `ε`, `Δt`; `α` in `[0, ½]`; vectors of length `I − 1`.
    pub fn check(&self) -> Result<(), StepError> {
        let positive = |name: &'static str, value: f64| {
            if value > 0.0 && value.is_finite() {
                Ok(())
            } else {
                Err(StepError::InvalidParameter {
                    name,
                    value,
                    expected: "a positive finite number",
                })
            }
        };
        if self.n_cells < 2 {
            return Err(StepError::InvalidParameter {
                name: "n_cells",
                value: self.n_cells as f64,
                expected: "at least 2 cells",
            });
        }
        positive("density", self.density[0])?;
        positive("density", self.density[1])?;
        positive("tension", self.tension[0])?;
        positive("tension", self.tension[1])?;
        positive("epsilon", self.epsilon)?;
        positive("dt", self.dt)?;
        for (what, v) in [
            ("u0", &self.u0),
            ("v0", &self.v0),
            ("u1", &self.u1),
            ("v1", &self.v1),
        ] {
            if v.len() != self.n_cells - 1 || v.iter().any(|x| !x.is_finite()) {
                return Err(StepError::BadData {
                    what,
                    found: v.len(),
                    expected: self.n_cells - 1,
                });
            }
        }
        Ok(())
    }
}

/// What one step of the strings produced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollidingStringsStep {
    /// Step index `n` after the step.
    pub step: u64,
    /// `t_n`.
    pub t: f64,
    /// `max_i (v_i^n − u_i^n)⁺`: the penetration at `t_n`.
    pub penetration: f64,
    /// Discrete energy (19) + (32) of `[t_{n−1}, t_n]`, penalty energy included.
    pub energy: Energy,
    /// The penalty energy `V(x^{n−1/2})` in it.
    pub penalty_energy: f64,
    /// Newton's report.
    pub newton: fem_time::NewtonReport,
}

/// The two strings, stepped by (63) with start (64).
#[derive(Debug)]
pub struct CollidingStrings {
    scheme: NonlinearAlphaScheme<CollidingSystem>,
    n_cells: usize,
}

impl CollidingStrings {
    /// Builds the model and solves the start (64).
    pub fn new(p: &CollidingStringsParameters) -> Result<Self, StepError> {
        p.check()?;
        let n = p.n_cells;
        let m = n - 1;
        let points: Vec<[f64; 3]> = (0..=n).map(|i| [i as f64 / n as f64, 0.0, 0.0]).collect();
        let cells: Vec<[usize; 2]> = (0..n).map(|i| [i, i + 1]).collect();
        let dofmap = DofMap::with_fixed(n + 1, 1, [0, n]);
        let strings: Vec<StringMatrices> = (0..2)
            .map(|k| {
                let material = StringMaterial {
                    density: p.density[k],
                    tension: p.tension[k],
                };
                StringMatrices::assemble(&points, &cells, &material, &dofmap)
            })
            .collect();
        let mut lumped = strings[0].lumped_mass.clone();
        lumped.extend_from_slice(&strings[1].lumped_mass);
        let stiffness = block_diagonal(&strings[0].stiffness, &strings[1].stiffness);
        let system = LinearSystem::new(Mass::Lumped(lumped), stiffness);
        // g_i = v_i − u_i ≤ 0.
        let mut g = CooMatrix::new(m, 2 * m);
        for i in 0..m {
            g.push(i, i, -1.0);
            g.push(i, m + i, 1.0);
        }
        let h = 1.0 / n as f64;
        let penalty =
            Penalty::inequalities(p.epsilon / h, m).map_err(|_| StepError::InvalidParameter {
                name: "epsilon",
                value: p.epsilon,
                expected: "a positive finite penalty parameter",
            })?;
        let potential =
            LinearConstraintPotential::new(CsrMatrix::from(&g), vec![0.0; m], Box::new(penalty));
        let x0: Vec<f64> = p.u0.iter().chain(&p.v0).copied().collect();
        let v0: Vec<f64> = p.u1.iter().chain(&p.v1).copied().collect();
        let settings = StepSettings::new(p.dt).with_newton(p.newton);
        let scheme = NonlinearAlphaScheme::new(
            WithPotential::new(system, potential),
            p.alpha,
            settings,
            &x0,
            &v0,
        )?;
        Ok(Self { scheme, n_cells: n })
    }

    /// Advances one step and records the contact forces.
    pub fn step(&mut self) -> Result<CollidingStringsStep, StepError> {
        self.scheme.step()?;
        self.record_contact_forces();
        Ok(CollidingStringsStep {
            step: self.scheme.step_index(),
            t: self.scheme.time(),
            penetration: self.penetration(),
            energy: self.scheme.energy().unwrap_or_default(),
            penalty_energy: self.energy_parts().1,
            newton: self.scheme.last_newton(),
        })
    }

    /// Records the penalty's equivalent multipliers at the new state (after each step).
    pub fn record_contact_forces(&mut self) {
        let x = self.scheme.position().to_vec();
        self.scheme.system_mut().potential.update_multipliers(&x);
    }

    /// `u` at all `I + 1` nodes (ends included) at `t_n`.
    pub fn u(&self) -> Vec<f64> {
        self.with_ends(0)
    }

    /// `v` at all `I + 1` nodes at `t_n`.
    pub fn v(&self) -> Vec<f64> {
        self.with_ends(1)
    }

    fn with_ends(&self, k: usize) -> Vec<f64> {
        let m = self.n_cells - 1;
        let mut out = vec![0.0; self.n_cells + 1];
        out[1..=m].copy_from_slice(&self.scheme.position()[k * m..(k + 1) * m]);
        out
    }

    /// Node coordinates `x_i = i h`, `i = 0..=I`.
    pub fn nodes(&self) -> Vec<f64> {
        (0..=self.n_cells)
            .map(|i| i as f64 / self.n_cells as f64)
            .collect()
    }

    /// `max_i (v_i − u_i)⁺` at `t_n`.
    pub fn penetration(&self) -> f64 {
        let m = self.n_cells - 1;
        let x = self.scheme.position();
        (0..m).fold(0.0f64, |p, i| p.max(x[m + i] - x[i]))
    }

    /// The contact forces per node `h H_ε'(v_i − u_i)` recorded after the last step (the
    /// penalty's equivalent multipliers).
    pub fn contact_forces(&self) -> &[f64] {
        self.scheme.system().potential.solver().multipliers()
    }

    /// The elastic `½ (A x^{n−1/2}, x^{n−1/2})` and penalty `V(x^{n−1/2})` parts of the
    /// discrete energy of the last interval.
    pub fn energy_parts(&self) -> (f64, f64) {
        let x = self.scheme.position();
        let d = self.scheme.previous_increment();
        let mid: Vec<f64> = x.iter().zip(d).map(|(x, d)| x - 0.5 * d).collect();
        let system = self.scheme.system();
        let a = &system.system.stiffness;
        (
            0.5 * fem_assembly::sparse::bilinear(a, &mid, &mid),
            fem_time::DiscreteGradientPotential::energy(&system.potential, &mid),
        )
    }

    /// The underlying scheme.
    pub fn scheme(&self) -> &NonlinearAlphaScheme<CollidingSystem> {
        &self.scheme
    }

    /// The underlying scheme, to step it.
    pub fn scheme_mut(&mut self) -> &mut NonlinearAlphaScheme<CollidingSystem> {
        &mut self.scheme
    }
}

/// `diag(a, b)`.
fn block_diagonal(a: &CsrMatrix<f64>, b: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    let (na, nb) = (a.nrows(), b.nrows());
    let mut coo = CooMatrix::new(na + nb, na + nb);
    for (i, j, v) in a.triplet_iter() {
        coo.push(i, j, *v);
    }
    for (i, j, v) in b.triplet_iter() {
        coo.push(na + i, na + j, *v);
    }
    CsrMatrix::from(&coo)
}

impl ModelSection for CollidingStringsSection {
    const NAME: &'static str = "colliding_strings";

    fn uses(&self) -> Uses {
        Uses {
            schemes: &[OfferedScheme {
                name: fem_time::alpha::NAME,
                settings: &[TimeSetting::Alpha, TimeSetting::Newton],
            }],
            ..Uses::OWN_GEOMETRY
        }
    }

    fn build(&self, input: &Sections<'_>) -> Result<Box<dyn Model>, InputError> {
        Ok(Box::new(CollidingStringsModel::new(self, input)?))
    }
}

/// Values of an initial shape at the interior nodes `x_i = i/I` of [0, 1].
fn shape_on_unit_interval(
    field: &str,
    shape: &InitialField,
    cells: usize,
) -> Result<Vec<f64>, InputError> {
    let x = (1..cells).map(|i| i as f64 / cells as f64);
    match shape {
        InitialField::Zero => Ok(vec![0.0; cells - 1]),
        InitialField::Sine(s) if s.mode >= 1 && s.amplitude.is_finite() && s.component == 0 => Ok(
            x.map(|x| s.amplitude * (s.mode as f64 * std::f64::consts::PI * x).sin())
                .collect(),
        ),
        InitialField::Pluck(p)
            if p.position > 0.0
                && p.position < 1.0
                && p.amplitude.is_finite()
                && p.component == 0 =>
        {
            Ok(x.map(|x| {
                p.amplitude
                    * if x <= p.position {
                        x / p.position
                    } else {
                        (1.0 - x) / (1.0 - p.position)
                    }
            })
            .collect())
        }
        _ => Err(InputError::invalid(
            field,
            "expected zero, a sine (mode ≥ 1) or a pluck inside (0, 1), component 0, finite amplitude",
        )),
    }
}

/// The colliding strings with their output.
#[derive(Debug)]
pub struct CollidingStringsModel {
    strings: CollidingStrings,
    grid: TimeGrid,
    describe: Vec<String>,
    cells: VtkCells,
    which: Vec<f64>,
    points: Vec<[f64; 3]>,
    force: Vec<f64>,
}

impl CollidingStringsModel {
    /// Validates the section and builds the strings (solving the start (64)).
    pub fn new(m: &CollidingStringsSection, input: &Sections<'_>) -> Result<Self, InputError> {
        let grid = time_grid(input.time)?;
        let alpha = alpha(input.time)?;
        if !(2..=1_000_000).contains(&m.cells) {
            return Err(InputError::invalid(
                "model.colliding_strings.cells",
                format!("expected 2 to 1e6 cells, got {}", m.cells),
            ));
        }
        // Memory and output before anything is allocated: both strings' matrices, vectors and
        // Newton's factorization per cell, and the drawing.
        let cells = m.cells as f64;
        input.check_memory(
            "model.colliding_strings.cells",
            &format!("{} cells", m.cells),
            2_000.0 * cells,
        )?;
        input.check_output(
            &grid,
            frame_bytes(2.0 * (cells + 1.0), 8.0, 2.0, cells + 1.0),
            12.0,
        )?;
        let u0 = shape_on_unit_interval("model.colliding_strings.upper", &m.upper, m.cells)?;
        let v0 = shape_on_unit_interval("model.colliding_strings.lower", &m.lower, m.cells)?;
        if let Some(i) = u0.iter().zip(&v0).position(|(u, v)| u < v) {
            return Err(InputError::invalid(
                "model.colliding_strings.lower",
                format!(
                    "the strings start crossed at x = {}: expected u ≥ v",
                    (i + 1) as f64 / m.cells as f64
                ),
            ));
        }
        let parameters = CollidingStringsParameters {
            n_cells: m.cells,
            density: m.density,
            tension: m.tension,
            epsilon: m.epsilon,
            dt: grid.dt(),
            alpha,
            u1: vec![0.0; m.cells - 1],
            v1: vec![0.0; m.cells - 1],
            u0,
            v0,
            newton: newton_settings(input.time)?,
        };
        parameters
            .check()
            .map_err(|e| InputError::invalid("model.colliding_strings", e.to_string()))?;
        let strings = CollidingStrings::new(&parameters)
            .map_err(|e| InputError::invalid("time", e.to_string()))?;
        let n = m.cells;
        let mut cells = VtkCells::new();
        cells.push_polyline(&(0..=n).collect::<Vec<_>>());
        cells.push_polyline(&(n + 1..=2 * n + 1).collect::<Vec<_>>());
        let which: Vec<f64> = (0..2 * (n + 1))
            .map(|i| if i <= n { 0.0 } else { 1.0 })
            .collect();
        let describe = vec![
            format!(
                "  model: two P1 strings, I = {} cells each, u >= v by the time-discretized penalty, epsilon = {}",
                n,
                fem_model::number::shown(m.epsilon)
            ),
            format!(
                "  time: nonlinear alpha scheme (63), alpha = {alpha}, dt = {}, {} steps to {}",
                fem_model::number::shown(grid.dt()),
                grid.n_steps(),
                fem_model::number::shown(grid.t_end())
            ),
        ];
        Ok(Self {
            strings,
            grid,
            describe,
            cells,
            which,
            points: vec![[0.0; 3]; 2 * (n + 1)],
            force: vec![0.0; 2 * (n + 1)],
        })
    }
}

impl Model for CollidingStringsModel {
    fn describe(&self) -> Vec<String> {
        self.describe.clone()
    }
    fn grid(&self) -> TimeGrid {
        self.grid
    }
    fn stepper(&self) -> &dyn Stepper {
        self.strings.scheme()
    }
    fn stepper_mut(&mut self) -> &mut dyn Stepper {
        self.strings.scheme_mut()
    }
    fn after_step(&mut self, _report: &StepReport) -> Result<(), StepError> {
        self.strings.record_contact_forces();
        Ok(())
    }
    fn history_columns(&self) -> Vec<String> {
        ["elastic", "penalty", "penetration", "iterations"]
            .map(String::from)
            .to_vec()
    }
    fn history_values(&self, report: &StepReport, out: &mut Vec<f64>) {
        let (elastic, penalty) = self.strings.energy_parts();
        out.extend([
            elastic,
            penalty,
            self.strings.penetration(),
            report.iterations as f64,
        ]);
    }
    fn energy(&self) -> Option<Energy> {
        self.strings.scheme().energy()
    }
    fn frame(&mut self) -> Frame<'_> {
        let n = self.strings.nodes().len() - 1;
        let x = self.strings.nodes();
        let (u, v) = (self.strings.u(), self.strings.v());
        for (p, (&x, &y)) in self
            .points
            .iter_mut()
            .zip(x.iter().zip(&u).chain(x.iter().zip(&v)))
        {
            *p = [x, y, 0.0];
        }
        self.force.fill(0.0);
        for (i, f) in self.strings.contact_forces().iter().enumerate() {
            self.force[i + 1] = *f;
            self.force[n + 2 + i] = -*f;
        }
        Frame::new(&self.points, &self.cells)
            .with_point_field(Field::scalar("string", &self.which))
            .with_point_field(Field::scalar("contact_force", &self.force))
    }

    /// The two strings in their plane (drawn at their positions), coloured by `string` and
    /// stretched across when the motion is small.
    fn view(&self) -> fem_io::View {
        fem_io::View {
            look_along: Some([0.0, 0.0, -1.0]),
            up: [0.0, 1.0, 0.0],
            color_by: Some("string".into()),
            exaggerate: Some([0.0, 1.0, 0.0]),
            ..Default::default()
        }
    }
}
