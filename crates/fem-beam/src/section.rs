//! The inextensible beam as a [`fem_model::Model`] (Glowinski–Holmström §4): its input
//! section, the static start, the dynamic run and its output (theory in
//! docs/theory/inextensible_beam.md).
//!
//! Output contract: frames hold the beam as a polyline through `samples_per_element` points of
//! the Hermite interpolation per element, at their actual positions, with point data
//! `tangent` (x′, a 3-vector), `stretch` (|x′|) and, for the augmented Lagrangian, `tension`
//! (the multiplier's component along the tangent, averaged over the element's two constraint
//! points; the penalty scheme computes none, so the field is left out); `history.csv` has
//! `step,t,kinetic,potential,total,max_stretch_error,iterations,residual,multiplier_change,
//! max_speed`, `total` the scheme's discrete energy `E^{n+1/2}`.

use fem_io::{Field, Frame, VtkCells};
use fem_model::build::time_grid;
use fem_model::input::{OfferedScheme, TimeSetting};
use fem_model::number::{shown, strict};
use fem_model::resources::frame_bytes;
use fem_model::{InputError, Model, ModelSection, Sections, Uses};
use fem_time::{StepReport as FrameworkReport, StepSettings, Stepper, TimeGrid};
use serde::Deserialize;

use crate::{
    AugmentedLagrangianStepper, Beam, BeamOptions, BeamParameters, BeamState, BeamStepReport,
    ConstraintPoints, End, EnergyConservingStepper, NewtonKktSettings, NewtonKktStepper,
    PenaltySettings, PenaltyStepper, PointLoad, Seabed, UzawaSettings, solve_static,
    solve_static_newton,
};

/// An inextensible beam (cable, riser, pipeline) in large displacement (Glowinski–Holmström
/// §4): the `model.beam` section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeamSection {
    /// Number of Hermite elements N (≥ 1).
    #[serde(deserialize_with = "strict")]
    pub elements: usize,
    /// Length L (m).
    #[serde(deserialize_with = "strict")]
    pub length: f64,
    /// Bending stiffness EI (N m²).
    #[serde(deserialize_with = "strict")]
    pub bending_stiffness: f64,
    /// Mass per unit length ρ (kg/m).
    #[serde(deserialize_with = "strict")]
    pub density: f64,
    /// Gravity (m/s²), default `[0, -9.81, 0]`.
    #[serde(default = "default_gravity")]
    #[serde(deserialize_with = "strict")]
    pub gravity: [f64; 3],
    /// Support at s = 0 during the run.
    pub end_a: EndInput,
    /// Support at s = L during the run.
    pub end_b: EndInput,
    /// Point loads `{node, force: [fx, fy, fz]}`.
    #[serde(default)]
    pub point_loads: Vec<PointLoadInput>,
    /// The initial shape: the static equilibrium under the given supports.
    pub initial: BeamInitialInput,
    /// How inextensibility is enforced during the run.
    pub solver: BeamSolverInput,
    /// Hermite samples per element in the ParaView polyline (default 8).
    #[serde(default = "default_samples_per_element")]
    #[serde(deserialize_with = "strict")]
    pub samples_per_element: usize,
    /// Where `|x'| = 1` is imposed: `gauss` (default, the paper's 2 Gauss points per element)
    /// or `nodes_and_midpoints` (fourth order in space; needed for a cable, `EI = 0`).
    #[serde(default)]
    pub constraint_points: ConstraintPointsInput,
    /// A horizontal seabed the beam may rest on and lift off (frictionless).
    #[serde(default)]
    pub seabed: Option<SeabedInput>,
}

/// Where the inextensibility is imposed.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintPointsInput {
    /// Two Gauss points per element.
    #[default]
    Gauss,
    /// Every node and element midpoint.
    NodesAndMidpoints,
}

/// A seabed: the plane `x[axis] = level`, the beam staying at or above it.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SeabedInput {
    /// The vertical component, 0, 1 or 2 (default: the one gravity points along).
    #[serde(default)]
    pub axis: Option<usize>,
    /// The height of the plane (m).
    pub level: f64,
}

fn default_gravity() -> [f64; 3] {
    [0.0, -9.81, 0.0]
}

fn default_samples_per_element() -> usize {
    8
}

/// A beam support.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum EndInput {
    /// No condition.
    Free,
    /// Position held at a point.
    Pinned(#[serde(deserialize_with = "strict")] [f64; 3]),
    /// Position and unit tangent held.
    Clamped {
        /// Position.
        #[serde(deserialize_with = "strict")]
        position: [f64; 3],
        /// Tangent (normalised).
        #[serde(deserialize_with = "strict")]
        tangent: [f64; 3],
    },
}

/// A point load at a node.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PointLoadInput {
    /// Node index (0..=N).
    #[serde(deserialize_with = "strict")]
    pub node: usize,
    /// Force (N).
    #[serde(deserialize_with = "strict")]
    pub force: [f64; 3],
}

/// The beam's initial shape.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum BeamInitialInput {
    /// Static equilibrium under gravity with these supports (solved by Newton on the KKT
    /// system, or Uzawa, from a starting shape).
    Static {
        /// Support at s = 0 for the static problem.
        end_a: EndInput,
        /// Support at s = L for the static problem.
        end_b: EndInput,
        /// Direction in which the starting arc bulges (default `[0, -1, 0]`).
        #[serde(default = "default_sag")]
        #[serde(deserialize_with = "strict")]
        sag_direction: [f64; 3],
        /// The static solver: `newton` (default: on the KKT system, no parameter, iterations
        /// independent of N) or `uzawa` (the paper's Algorithm 2, the augmentation chosen from
        /// the model).
        #[serde(default)]
        solver: StaticSolverInput,
        /// The starting shape: `arc` (default), or, over a seabed, `catenary_over_seabed` (the
        /// closed-form inextensible catenary with a grounded part) or `taut_over_seabed`.
        #[serde(default)]
        start: StartInput,
    },
}

/// The static solver.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StaticSolverInput {
    /// Uzawa (Algorithm 2) with Anderson acceleration and the augmentation of
    /// [`UzawaSettings::automatic`].
    Uzawa,
    /// Newton on the KKT system with load continuation (the default: no parameter, converges
    /// at any N where Uzawa with a fixed r stalls, e.g. N ≥ 820 on the paper's cable).
    #[default]
    Newton,
}

/// The static solve's starting shape.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StartInput {
    /// A circular arc between the supports, bulging along `sag_direction`.
    #[default]
    Arc,
    /// The closed-form inextensible catenary with a grounded part (needs a seabed).
    CatenaryOverSeabed,
    /// A taut line along the seabed then up to the far support (needs a seabed).
    TautOverSeabed,
}

fn default_sag() -> [f64; 3] {
    [0.0, -1.0, 0.0]
}

/// The beam's dynamic scheme.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum BeamSolverInput {
    /// The augmented Lagrangian (97), Uzawa iterations (Anderson-accelerated by default).
    AugmentedLagrangian {
        /// Augmentation r (an algorithmic parameter, default 1e5).
        #[serde(default = "default_augmentation")]
        #[serde(deserialize_with = "strict")]
        augmentation: f64,
        /// Anderson acceleration of the Uzawa loop (default true).
        #[serde(default = "default_true")]
        anderson: bool,
    },
    /// The same augmented-Lagrangian step (97) solved by Newton on its KKT system (about four
    /// iterations per step at any N; refactors every iteration).
    NewtonKkt,
    /// The time-discretized penalty (93) with Newton.
    Penalty {
        /// Penalty parameter ε (the paper's 1.5e-4).
        #[serde(deserialize_with = "strict")]
        epsilon: f64,
    },
    /// The energy-conserving constrained midpoint rule: second order in time, energy and
    /// `|x'| = 1` held to the Newton tolerance (no `alpha`).
    EnergyConserving,
}

fn default_augmentation() -> f64 {
    1e5
}

fn default_true() -> bool {
    true
}

/// The discretization options of the section, after checking them against the solver.
fn beam_options(b: &BeamSection) -> Result<BeamOptions, InputError> {
    let constraint_points = match b.constraint_points {
        ConstraintPointsInput::Gauss => ConstraintPoints::Gauss,
        ConstraintPointsInput::NodesAndMidpoints => ConstraintPoints::NodesAndMidpoints,
    };
    if b.bending_stiffness == 0.0 && constraint_points == ConstraintPoints::Gauss {
        return Err(InputError::invalid(
            "model.beam.bending_stiffness",
            "a cable (bending_stiffness: 0) needs constraint_points: nodes_and_midpoints (with the two Gauss points its nodal tangents are a zero-energy mode)",
        ));
    }
    let seabed = match b.seabed {
        None => None,
        Some(s) => {
            if !s.level.is_finite() {
                return Err(InputError::invalid(
                    "model.beam.seabed.level",
                    format!("expected a finite height, got {}", s.level),
                ));
            }
            let axis = match s.axis {
                Some(axis) if axis < 3 => axis,
                Some(axis) => {
                    return Err(InputError::invalid(
                        "model.beam.seabed.axis",
                        format!("expected 0, 1 or 2 (x, y or z), got {axis}"),
                    ));
                }
                None => {
                    let g = b.gravity;
                    let k = (0..3)
                        .max_by(|&i, &j| g[i].abs().total_cmp(&g[j].abs()))
                        .unwrap_or(1);
                    if g[k] >= 0.0 {
                        return Err(InputError::invalid(
                            "model.beam.seabed.axis",
                            "gravity does not point down any axis: give the seabed's vertical axis",
                        ));
                    }
                    k
                }
            };
            if !matches!(
                b.solver,
                BeamSolverInput::NewtonKkt | BeamSolverInput::EnergyConserving
            ) {
                return Err(InputError::invalid(
                    "model.beam.solver",
                    "a seabed needs the newton_kkt or energy_conserving solver",
                ));
            }
            Some(Seabed {
                axis,
                level: s.level,
            })
        }
    };
    Ok(BeamOptions {
        constraint_points,
        seabed,
    })
}

fn end(e: &EndInput) -> End {
    match e {
        EndInput::Free => End::Free,
        EndInput::Pinned(x) => End::pinned(*x),
        EndInput::Clamped { position, tangent } => End::clamped(*position, *tangent),
    }
}

impl ModelSection for BeamSection {
    const NAME: &'static str = "beam";

    fn uses(&self) -> Uses {
        Uses {
            schemes: &[OfferedScheme {
                name: fem_time::alpha::NAME,
                settings: &[TimeSetting::Alpha, TimeSetting::Newton],
            }],
            ..Uses::OWN_GEOMETRY
        }
    }

    fn build(&self, input: &Sections<'_>) -> Result<Box<dyn fem_model::Model>, InputError> {
        Ok(Box::new(BeamRun::new(self, input)?))
    }
}

/// Memory per element of the beam's run (model, static start, stepper and factorization):
/// measured with `fem run --max-steps 1` at 2e4 elements, 7.0 kB with the augmented Lagrangian
/// and 10.8 kB with Newton on the KKT system, rounded up (docs/validation.md, "Hardening").
fn bytes_per_element(solver: &BeamSolverInput) -> f64 {
    match solver {
        BeamSolverInput::NewtonKkt => 12_000.0,
        _ => 8_000.0,
    }
}

/// One of the dynamic beam schemes.
#[derive(Debug)]
enum Scheme {
    Augmented(Box<AugmentedLagrangianStepper>),
    Kkt(Box<NewtonKktStepper>),
    Penalty(Box<PenaltyStepper>),
    EnergyConserving(Box<EnergyConservingStepper>),
}

impl Scheme {
    fn stepper(&self) -> &dyn Stepper {
        match self {
            Scheme::Augmented(s) => s.as_ref(),
            Scheme::Kkt(s) => s.as_ref(),
            Scheme::Penalty(s) => s.as_ref(),
            Scheme::EnergyConserving(s) => s.as_ref(),
        }
    }
    fn stepper_mut(&mut self) -> &mut dyn Stepper {
        match self {
            Scheme::Augmented(s) => s.as_mut(),
            Scheme::Kkt(s) => s.as_mut(),
            Scheme::Penalty(s) => s.as_mut(),
            Scheme::EnergyConserving(s) => s.as_mut(),
        }
    }
    fn state(&self) -> BeamState {
        match self {
            Scheme::Augmented(s) => s.state(),
            Scheme::Kkt(s) => s.state(),
            Scheme::Penalty(s) => s.state(),
            Scheme::EnergyConserving(s) => s.state(),
        }
    }
    fn last_report(&self) -> BeamStepReport {
        match self {
            Scheme::Augmented(s) => s.last_report(),
            Scheme::Kkt(s) => s.last_report(),
            Scheme::Penalty(s) => s.last_report(),
            Scheme::EnergyConserving(s) => s.last_report(),
        }
    }
    fn tensions(&self) -> Option<Vec<f64>> {
        match self {
            Scheme::Augmented(s) => Some(s.tensions()),
            Scheme::Kkt(s) => Some(s.tensions().to_vec()),
            Scheme::Penalty(_) => None,
            Scheme::EnergyConserving(s) => Some(s.tensions().to_vec()),
        }
    }
}

/// A beam run: the model with its supports, the dynamic scheme and the drawing.
#[derive(Debug)]
pub struct BeamRun {
    scheme: Scheme,
    sample_model: Beam,
    grid: TimeGrid,
    describe: Vec<String>,
    samples_per_element: usize,
    length: f64,
    cells: VtkCells,
    points: Vec<[f64; 3]>,
    tangent: Vec<f64>,
    stretch: Vec<f64>,
    tension: Vec<f64>,
}

impl BeamRun {
    /// Validates the section, builds the model, solves the static start and builds the
    /// dynamic scheme.
    pub fn new(b: &BeamSection, input: &Sections<'_>) -> Result<Self, InputError> {
        let invalid = |field: &str, message: String| InputError::invalid(field, message);
        let t = input.time;
        let alpha = t.alpha_or_quarter();
        if !(0.25..=0.5).contains(&alpha) {
            return Err(invalid(
                "time.alpha",
                format!("expected 1/4 <= alpha <= 1/2 for the beam schemes, got {alpha}"),
            ));
        }
        if b.solver == BeamSolverInput::EnergyConserving && t.alpha.is_some() {
            return Err(invalid(
                "time.alpha",
                "the energy-conserving beam scheme has no alpha: remove 'time.alpha'".into(),
            ));
        }
        if t.newton.is_some() && matches!(b.solver, BeamSolverInput::AugmentedLagrangian { .. }) {
            return Err(invalid(
                "time.newton",
                "the augmented_lagrangian beam solver does not use Newton (its Uzawa loop has its own settings): remove 'time.newton', or choose solver: newton_kkt, energy_conserving or penalty".into(),
            ));
        }
        let newton = fem_model::build::newton_settings(t)?;
        if t.t0 != 0.0 {
            return Err(invalid(
                "time.t0",
                format!("expected t0 = 0 for a beam, got t0 = {}", t.t0),
            ));
        }
        let grid = time_grid(t)?;
        if !(1..=1_000).contains(&b.samples_per_element) {
            return Err(invalid(
                "model.beam.samples_per_element",
                format!("expected 1 to 1000, got {}", b.samples_per_element),
            ));
        }
        if b.elements == 0 {
            return Err(invalid(
                "model.beam.elements",
                "expected at least 1 element, got 0".into(),
            ));
        }
        // Memory and output before anything is allocated: the model, its static start and
        // stepper per element, and the drawing per sample point.
        let elements = b.elements as f64;
        let samples = b.samples_per_element as f64 * elements + 1.0;
        input.check_memory(
            "model.beam.elements",
            &format!(
                "{} elements ({} drawing points)",
                b.elements,
                b.samples_per_element as u128 * b.elements as u128 + 1
            ),
            bytes_per_element(&b.solver) * elements + 96.0 * samples,
        )?;
        input.check_output(&grid, frame_bytes(samples, 5.0, 1.0, samples), 10.0)?;
        if let Some(l) = b
            .point_loads
            .iter()
            .find(|l| l.node > b.elements || l.force.iter().any(|f| !f.is_finite()))
        {
            return Err(invalid(
                "model.beam.point_loads",
                format!(
                    "node {} must be one of the nodes 0 to {} (the last) with a finite force",
                    l.node, b.elements
                ),
            ));
        }
        match b.solver {
            BeamSolverInput::AugmentedLagrangian { augmentation, .. }
                if !(augmentation.is_finite() && augmentation > 0.0) =>
            {
                return Err(invalid(
                    "model.beam.solver.augmented_lagrangian.augmentation",
                    format!("expected r > 0, got {augmentation}"),
                ));
            }
            BeamSolverInput::Penalty { epsilon } if !(epsilon.is_finite() && epsilon > 0.0) => {
                return Err(invalid(
                    "model.beam.solver.penalty.epsilon",
                    format!("expected epsilon > 0, got {epsilon}"),
                ));
            }
            _ => {}
        }
        let BeamInitialInput::Static {
            end_a,
            end_b,
            sag_direction,
            solver: static_solver,
            start,
        } = &b.initial;
        let options = beam_options(b)?;
        let params = BeamParameters {
            n_elements: b.elements,
            length: b.length,
            bending_stiffness: b.bending_stiffness,
            density: b.density,
            gravity: b.gravity,
            end_a: end(end_a),
            end_b: end(end_b),
            point_loads: b
                .point_loads
                .iter()
                .map(|l| PointLoad {
                    node: l.node,
                    force: l.force,
                })
                .collect(),
        };
        let static_model = Beam::with_options(params, options)
            .map_err(|e| invalid("model.beam", e.to_string()))?;
        let anchor = |e: &EndInput, fallback: [f64; 3]| match e {
            EndInput::Pinned(x) => *x,
            EndInput::Clamped { position, .. } => *position,
            EndInput::Free => fallback,
        };
        let start_field = "model.beam.initial.static.start";
        let free = (
            matches!(end_a, EndInput::Free),
            matches!(end_b, EndInput::Free),
        );
        let guess = match free {
            (true, true) => {
                return Err(invalid(
                    "model.beam.initial.static",
                    "both ends are free: the static start needs end_a or end_b pinned or clamped"
                        .into(),
                ));
            }
            (false, false) => {
                let (a, z) = (anchor(end_a, [0.0; 3]), anchor(end_b, [0.0; 3]));
                let span =
                    ((z[0] - a[0]).powi(2) + (z[1] - a[1]).powi(2) + (z[2] - a[2]).powi(2)).sqrt();
                if span >= b.length {
                    return Err(invalid(
                        "model.beam.initial.static",
                        format!(
                            "the supports are {} m apart, not less than the length {} m: an inextensible beam cannot span them",
                            fem_model::number::shown(span),
                            fem_model::number::shown(b.length)
                        ),
                    ));
                }
                match start {
                    StartInput::Arc => BeamState::try_arc(&static_model, a, z, *sag_direction)
                        .map_err(|e| {
                            invalid("model.beam.initial.static.sag_direction", e.to_string())
                        })?,
                    StartInput::CatenaryOverSeabed => {
                        BeamState::catenary_over_seabed(&static_model, a, z)
                            .map_err(|e| invalid(start_field, e.to_string()))?
                    }
                    StartInput::TautOverSeabed => BeamState::taut_over_seabed(&static_model, a, z)
                        .map_err(|e| invalid(start_field, e.to_string()))?,
                }
            }
            (free_a, _) => {
                // A cantilever (or a beam hanging from one support): straight from the
                // supported end, along its clamped tangent, or along sag_direction from a pin.
                if *start != StartInput::Arc {
                    return Err(invalid(
                        start_field,
                        "this start needs both ends of the static start supported (end_a and end_b pinned or clamped)".into(),
                    ));
                }
                let support = if free_a { end_b } else { end_a };
                let (at, direction) = match support {
                    EndInput::Clamped { position, tangent } => (*position, *tangent),
                    EndInput::Pinned(x) => {
                        let d = *sag_direction;
                        let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                        if !(n > 0.0 && n.is_finite()) {
                            return Err(invalid(
                                "model.beam.initial.static.sag_direction",
                                "expected a nonzero direction, along which the beam starts from its pinned end".into(),
                            ));
                        }
                        // Hanging from a pin at b, the beam runs from b against the direction.
                        (*x, if free_a { d.map(|c| -c) } else { d })
                    }
                    EndInput::Free => unreachable!("one end is supported"),
                };
                let d = {
                    let n = (direction[0] * direction[0]
                        + direction[1] * direction[1]
                        + direction[2] * direction[2])
                        .sqrt();
                    direction.map(|c| c / n)
                };
                let l = static_model.length();
                let origin = if free_a {
                    std::array::from_fn(|c| at[c] - l * d[c])
                } else {
                    at
                };
                BeamState::straight(&static_model, origin, d)
            }
        };
        let not_converged = |e: crate::BeamError| {
            invalid(
                "model.beam.initial.static",
                format!("the static start did not converge: {e}"),
            )
        };
        fem_model::progress::phase(format!(
            "the beam's static start: {} on {} elements",
            match static_solver {
                StaticSolverInput::Uzawa => "Uzawa",
                StaticSolverInput::Newton => "Newton on the KKT system",
            },
            b.elements
        ));
        let (sol, static_report) = match static_solver {
            StaticSolverInput::Uzawa => {
                if static_model.seabed().is_some() {
                    return Err(invalid(
                        "model.beam.initial.static.solver",
                        "a seabed needs the newton static solver (Uzawa does not handle contact): solver: newton".into(),
                    ));
                }
                let settings = UzawaSettings::automatic(&static_model, None);
                let sol = solve_static(&static_model, &guess, &settings).map_err(not_converged)?;
                let report = format!(
                    "{} Uzawa iterations (augmentation r = {:.2e}), max ||x'| - 1| = {:.1e}",
                    sol.report.iterations,
                    settings.augmentation,
                    sol.report.max_constraint_violation
                );
                (sol, report)
            }
            StaticSolverInput::Newton => {
                let sol = solve_static_newton(
                    &static_model,
                    &guess,
                    0.0,
                    &crate::STATIC_NEWTON,
                    &NewtonKktSettings::default(),
                )
                .map_err(not_converged)?;
                let report = format!(
                    "Newton on the KKT system, {} iterations, max ||x'| - 1| = {:.1e}",
                    sol.report.iterations, sol.report.max_constraint_violation
                );
                (sol, report)
            }
        };
        if let Some((s1, s2)) = static_model.self_crossing(&sol.state, 8) {
            return Err(invalid(
                "model.beam.initial.static",
                format!(
                    "the static start converged to a shape that passes through itself (at {} m and {} m along the beam): a beam cannot, so it is not a physical equilibrium; start from another shape (initial.static.sag_direction or start) or apply the loads in smaller parts",
                    fem_model::number::shown(s1),
                    fem_model::number::shown(s2)
                ),
            ));
        }
        let model = static_model
            .with_ends(end(&b.end_a), end(&b.end_b))
            .map_err(|e| invalid("model.beam.end_a", e.to_string()))?;
        let time = StepSettings::new(grid.dt())
            .starting_at(grid.t0())
            .with_newton(newton);
        let n_elements = model.n_elements();
        let sample_model = model.clone();
        let setup = |e: crate::BeamError| invalid("model.beam", e.to_string());
        let scheme = match b.solver {
            BeamSolverInput::NewtonKkt => Scheme::Kkt(Box::new(
                NewtonKktStepper::new(
                    model,
                    &sol.state,
                    None,
                    Some(&sol.multipliers),
                    alpha,
                    time,
                    NewtonKktSettings::default(),
                )
                .map_err(setup)?,
            )),
            BeamSolverInput::AugmentedLagrangian {
                augmentation,
                anderson,
            } => {
                let uzawa = if anderson {
                    UzawaSettings::anderson(augmentation)
                } else {
                    UzawaSettings::plain(augmentation)
                };
                Scheme::Augmented(Box::new(
                    AugmentedLagrangianStepper::new(
                        model,
                        &sol.state,
                        None,
                        Some(&sol.multipliers),
                        alpha,
                        time,
                        uzawa,
                    )
                    .map_err(setup)?,
                ))
            }
            BeamSolverInput::Penalty { epsilon } => Scheme::Penalty(Box::new(
                PenaltyStepper::new(
                    model,
                    &sol.state,
                    None,
                    alpha,
                    time,
                    PenaltySettings::new(epsilon),
                )
                .map_err(setup)?,
            )),
            BeamSolverInput::EnergyConserving => Scheme::EnergyConserving(Box::new(
                EnergyConservingStepper::new(
                    model,
                    &sol.state,
                    None,
                    Some(&sol.multipliers),
                    time,
                    NewtonKktSettings::default(),
                )
                .map_err(setup)?,
            )),
        };
        let describe = vec![
            format!(
                "  model: inextensible Hermite beam, N = {} elements, L = {} m, EI = {}, rho = {}",
                b.elements, b.length, b.bending_stiffness, b.density
            ),
            format!("  static start: {static_report}"),
            format!(
                "  time: {}, dt = {}, {} steps to {}",
                match b.solver {
                    BeamSolverInput::EnergyConserving =>
                        "energy-conserving constrained midpoint rule".to_string(),
                    BeamSolverInput::AugmentedLagrangian {
                        augmentation,
                        anderson,
                    } => format!(
                        "augmented Lagrangian (97) by Uzawa (augmentation r = {}{}), alpha = {}",
                        shown(augmentation),
                        if anderson {
                            ", Anderson-accelerated"
                        } else {
                            ""
                        },
                        shown(alpha)
                    ),
                    BeamSolverInput::NewtonKkt => format!(
                        "augmented Lagrangian (97) by Newton on its KKT system, alpha = {}",
                        shown(alpha)
                    ),
                    BeamSolverInput::Penalty { epsilon } => format!(
                        "time-discretized penalty (93), epsilon = {}, alpha = {}",
                        shown(epsilon),
                        shown(alpha)
                    ),
                },
                shown(grid.dt()),
                grid.n_steps(),
                shown(grid.t_end())
            ),
        ];
        let k = b.samples_per_element;
        let n_samples = k * n_elements + 1;
        let mut cells = VtkCells::new();
        cells.push_polyline(&(0..n_samples).collect::<Vec<_>>());
        Ok(Self {
            scheme,
            sample_model,
            grid,
            describe,
            samples_per_element: k,
            length: b.length,
            cells,
            points: Vec::with_capacity(n_samples),
            tangent: Vec::with_capacity(3 * n_samples),
            stretch: Vec::with_capacity(n_samples),
            tension: Vec::with_capacity(n_samples),
        })
    }
}

impl Model for BeamRun {
    fn describe(&self) -> Vec<String> {
        self.describe.clone()
    }
    fn grid(&self) -> TimeGrid {
        self.grid
    }
    fn stepper(&self) -> &dyn Stepper {
        self.scheme.stepper()
    }
    fn stepper_mut(&mut self) -> &mut dyn Stepper {
        self.scheme.stepper_mut()
    }
    fn history_columns(&self) -> Vec<String> {
        let mut columns = [
            "max_stretch_error",
            "iterations",
            "residual",
            "multiplier_change",
            "max_speed",
            "support_work",
            "seabed_work",
            "nodes_on_seabed",
        ]
        .map(String::from)
        .to_vec();
        if self.sample_model.seabed().is_some() {
            columns.push("seabed_clearance".into());
        }
        columns
    }
    fn history_values(&self, _report: &FrameworkReport, out: &mut Vec<f64>) {
        let r = self.scheme.last_report();
        out.extend([
            r.max_stretch_error,
            r.iterations as f64,
            r.residual,
            r.multiplier_change,
            r.max_speed,
            r.support_work,
            r.seabed_work,
            r.nodes_on_seabed as f64,
        ]);
        if let Some(c) = self.sample_model.seabed_clearance(&self.scheme.state()) {
            out.push(c);
        }
    }
    fn frame(&mut self) -> Frame<'_> {
        let samples = self
            .sample_model
            .sample(&self.scheme.state(), self.samples_per_element);
        let n_elements = self.sample_model.n_elements();
        self.points.clear();
        self.points.extend(samples.iter().map(|s| s.position));
        self.tangent.clear();
        self.tangent.extend(samples.iter().flat_map(|s| s.tangent));
        self.stretch.clear();
        self.stretch.extend(
            samples
                .iter()
                .map(|s| s.tangent.iter().map(|c| c * c).sum::<f64>().sqrt()),
        );
        let tensions = self
            .scheme
            .tensions()
            .map(|at_points| self.sample_model.element_means(&at_points));
        self.tension.clear();
        if let Some(points_t) = &tensions {
            self.tension.extend(samples.iter().map(|s| {
                let e = ((s.s / self.length * n_elements as f64) as usize).min(n_elements - 1);
                points_t[e]
            }));
        }
        let frame = Frame::new(&self.points, &self.cells)
            .with_point_field(Field::vector("tangent", &self.tangent))
            .with_point_field(Field::scalar("stretch", &self.stretch));
        if tensions.is_some() {
            frame.with_point_field(Field::scalar("tension", &self.tension))
        } else {
            frame
        }
    }

    /// The beam where it is (no warp), across its plane of motion when it stays in one,
    /// gravity down the screen, coloured by `tension` (by `stretch` for a scheme without
    /// multipliers); the seabed and the fixed ends drawn.
    fn view(&self) -> fem_io::View {
        let params = self.sample_model.parameters();
        let mut scene = fem_io::Scene::default();
        for end in [&params.end_a, &params.end_b] {
            if let End::Pinned(crate::Placement::Fixed(x))
            | End::Clamped {
                position: crate::Placement::Fixed(x),
                ..
            } = end
            {
                scene.points.push(*x);
            }
        }
        if let Some(seabed) = self.sample_model.seabed() {
            let n = self.points.len().max(1) as f64;
            let mut centre = [0.0; 3];
            for p in &self.points {
                for i in 0..3 {
                    centre[i] += p[i] / n;
                }
            }
            centre[seabed.axis] = seabed.level;
            let mut normal = [0.0; 3];
            normal[seabed.axis] = 1.0;
            scene.planes.push(fem_io::Plane {
                point: centre,
                normal,
                half_size: 0.6 * self.length,
            });
        }
        fem_io::View {
            look_along: fem_io::look_across(&self.points),
            up: fem_io::up_against(params.gravity),
            color_by: Some(
                if self.tension.is_empty() {
                    "stretch"
                } else {
                    "tension"
                }
                .into(),
            ),
            scene,
            ..Default::default()
        }
    }
}
