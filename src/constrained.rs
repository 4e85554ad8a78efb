//! Constrained motion (Glowinski–Holmström §2–3): the colliding strings and the double
//! pendulum, set up from YAML and stepped with their output (theory in
//! docs/theory/constrained_motion.md).
//!
//! Output contract.
//! - Colliding strings: frames hold both strings *in their deformed positions* (points
//!   `(x, u)` and `(x, v)`; no warp needed), point data `string` (0 for u, 1 for v) and
//!   `contact_force`; `history.csv` has
//!   `step,t,kinetic,elastic,penalty,total,penetration,iterations`.
//! - Double pendulum: frames hold the links O–A–B as a polyline and the constraint (wall or
//!   ellipse) as a second polyline, drawn with gravity pointing down (paper coordinates
//!   `(x, y)` shown at `(y, −x)`), point and cell data `part` (0 pendulum, 1 constraint); `history.csv`
//!   has `step,t,theta1,theta2,tip_x,tip_y,constraint,constraint_half_step,multiplier,energy,
//!   constraint_energy,newton_iterations,multiplier_iterations` (paper coordinates).

use std::path::{Path, PathBuf};

use fem_io::{Field, Frame, FrameSeries, HistoryWriter, VtkCells};
use fem_time::colliding_strings::{CollidingStrings, CollidingStringsParameters};
use fem_time::conservation_form::MultiplierSettings;
use fem_time::double_pendulum::{
    EllipseConstraint, Enforcement, PendulumConstraint, PendulumRecord, PendulumSetup,
    PendulumSimulation, WallConstraint,
};
use fem_time::{NewtonSettings, TimeGrid};

use crate::error::FemError;
use crate::input::{
    EnforcementInput, InitialField, Input, ModelInput, PendulumConstraintInput, PendulumParameters,
    SchemeKind,
};
use crate::run::{Progress, RunSummary, step_loop, steps_to_run};

/// Columns of the colliding strings' history.
pub const STRINGS_COLUMNS: [&str; 8] = [
    "step",
    "t",
    "kinetic",
    "elastic",
    "penalty",
    "total",
    "penetration",
    "iterations",
];

/// A validated constrained-motion input.
#[derive(Debug)]
pub enum ConstrainedProblem {
    /// The colliding strings.
    Strings {
        /// Input file.
        path: PathBuf,
        /// Parsed input.
        input: Box<Input>,
        /// The model's parameters.
        parameters: Box<CollidingStringsParameters>,
        /// Time grid.
        grid: TimeGrid,
    },
    /// The double pendulum.
    Pendulum {
        /// Input file.
        path: PathBuf,
        /// Parsed input.
        input: Box<Input>,
        /// The model, constraint and enforcement.
        setup: Box<PendulumSetup>,
        /// Time grid.
        grid: TimeGrid,
    },
}

fn invalid(path: &Path, field: &str, message: String) -> FemError {
    FemError::Invalid {
        path: path.to_path_buf(),
        field: field.to_string(),
        message,
    }
}

/// Checks the sections a constrained model does not use, and the time grid.
fn common(
    path: &Path,
    input: &Input,
    scheme: SchemeKind,
    scheme_name: &str,
) -> Result<TimeGrid, FemError> {
    if input.mesh.is_some() {
        return Err(invalid(
            path,
            "mesh",
            "this model builds its own geometry: remove 'mesh'".into(),
        ));
    }
    if !input.fixed.is_empty() || !input.dirichlet.is_empty() || input.contact.is_some() {
        return Err(invalid(
            path,
            "fixed",
            "'fixed', 'dirichlet' and 'contact' do not apply to this model".into(),
        ));
    }
    if !input.output.probes.is_empty() || input.initial != Default::default() {
        return Err(invalid(
            path,
            "initial",
            "this model takes its initial state in 'model' ('output.probes' does not apply)".into(),
        ));
    }
    let t = &input.time;
    if t.scheme != scheme {
        return Err(invalid(
            path,
            "time.scheme",
            format!("this model is stepped by {scheme_name}"),
        ));
    }
    if !(t.dt.is_finite() && t.dt > 0.0) {
        return Err(invalid(
            path,
            "time.dt",
            format!("expected a positive time step, got {}", t.dt),
        ));
    }
    if !(t.t_end.is_finite() && t.t0.is_finite() && t.t_end > t.t0) {
        return Err(invalid(
            path,
            "time.t_end",
            format!("expected an end time after t0 = {}, got {}", t.t0, t.t_end),
        ));
    }
    if input.output.every == 0 || input.output.history_every == 0 {
        return Err(invalid(
            path,
            "output.every",
            "expected a positive number of steps".into(),
        ));
    }
    if t.newton.max_iterations == 0 {
        return Err(invalid(
            path,
            "time.newton.max_iterations",
            "expected at least 1 iteration, got 0".into(),
        ));
    }
    TimeGrid::new(t.t0, t.t_end, t.dt).map_err(|e| invalid(path, "time", e.to_string()))
}

fn newton(input: &Input) -> NewtonSettings {
    NewtonSettings {
        max_iterations: input.time.newton.max_iterations,
        relative_tolerance: input.time.newton.relative_tolerance,
        absolute_tolerance: input.time.newton.absolute_tolerance,
    }
}

/// Values of an initial shape at the interior nodes `x_i = i/I` of [0, 1].
fn shape_on_unit_interval(
    path: &Path,
    field: &str,
    shape: &InitialField,
    cells: usize,
) -> Result<Vec<f64>, FemError> {
    let x = (1..cells).map(|i| i as f64 / cells as f64);
    match shape {
        InitialField::Zero => Ok(vec![0.0; cells - 1]),
        InitialField::Sine(s) if s.mode >= 1 && s.amplitude.is_finite() && s.component == 0 => {
            Ok(x.map(|x| s.amplitude * (s.mode as f64 * std::f64::consts::PI * x).sin()).collect())
        }
        InitialField::Pluck(p) if p.position > 0.0 && p.position < 1.0 && p.amplitude.is_finite() && p.component == 0 => {
            Ok(x.map(|x| p.amplitude * if x <= p.position { x / p.position } else { (1.0 - x) / (1.0 - p.position) }).collect())
        }
        _ => Err(invalid(path, field, "expected zero, a sine (mode ≥ 1) or a pluck inside (0, 1), component 0, finite amplitude".into())),
    }
}

/// Validates a colliding-strings or double-pendulum input.
pub fn prepare(path: &Path, input: Input) -> Result<ConstrainedProblem, FemError> {
    match &input.model {
        ModelInput::CollidingStrings(m) => {
            let grid = common(path, &input, SchemeKind::Alpha, "alpha (scheme (63))")?;
            if !(2..=1_000_000).contains(&m.cells) {
                return Err(invalid(
                    path,
                    "model.colliding_strings.cells",
                    format!("expected 2 to 1e6 cells, got {}", m.cells),
                ));
            }
            let u0 =
                shape_on_unit_interval(path, "model.colliding_strings.upper", &m.upper, m.cells)?;
            let v0 =
                shape_on_unit_interval(path, "model.colliding_strings.lower", &m.lower, m.cells)?;
            if let Some(i) = u0.iter().zip(&v0).position(|(u, v)| u < v) {
                return Err(invalid(
                    path,
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
                alpha: input.time.alpha,
                u1: vec![0.0; m.cells - 1],
                v1: vec![0.0; m.cells - 1],
                u0,
                v0,
                newton: newton(&input),
            };
            parameters
                .check()
                .map_err(|e| invalid(path, "model.colliding_strings", e.to_string()))?;
            if !(0.0..=0.5).contains(&input.time.alpha) {
                return Err(invalid(
                    path,
                    "time.alpha",
                    format!("expected 0 <= alpha <= 0.5, got {}", input.time.alpha),
                ));
            }
            Ok(ConstrainedProblem::Strings {
                path: path.to_path_buf(),
                parameters: Box::new(parameters),
                input: Box::new(input),
                grid,
            })
        }
        ModelInput::DoublePendulum(m) => {
            let grid = common(
                path,
                &input,
                SchemeKind::ConservationForm,
                "conservation_form (scheme (40))",
            )?;
            let enforcement = match m.enforcement {
                None => Enforcement::Penalty { epsilon: 1.0 },
                Some(EnforcementInput::Penalty { epsilon }) => Enforcement::Penalty { epsilon },
                Some(EnforcementInput::AugmentedLagrangian {
                    epsilon,
                    tolerance,
                    max_iterations,
                }) => {
                    if !(tolerance.is_finite() && tolerance > 0.0) || max_iterations == 0 {
                        return Err(invalid(
                            path,
                            "model.double_pendulum.enforcement.augmented_lagrangian",
                            "expected a positive tolerance and at least one iteration".into(),
                        ));
                    }
                    Enforcement::AugmentedLagrangian {
                        epsilon,
                        multipliers: MultiplierSettings {
                            tolerance,
                            max_iterations,
                        },
                    }
                }
            };
            let epsilon = match enforcement {
                Enforcement::Penalty { epsilon }
                | Enforcement::AugmentedLagrangian { epsilon, .. } => epsilon,
            };
            if !(epsilon.is_finite() && epsilon > 0.0) {
                return Err(invalid(
                    path,
                    "model.double_pendulum.enforcement",
                    format!("expected epsilon > 0, got {epsilon}"),
                ));
            }
            if m.constraint != PendulumConstraintInput::None && m.enforcement.is_none() {
                return Err(invalid(
                    path,
                    "model.double_pendulum.enforcement",
                    "a constraint needs an enforcement: penalty or augmented_lagrangian".into(),
                ));
            }
            let mut setup = match m.parameters {
                PendulumParameters::Table1 => PendulumSetup::wall(epsilon, grid.dt()),
                PendulumParameters::Table3 => PendulumSetup::ellipse(enforcement, grid.dt()),
            };
            setup.enforcement = enforcement;
            setup.newton = newton(&input);
            setup.constraint = match m.constraint {
                PendulumConstraintInput::None => PendulumConstraint::Free,
                PendulumConstraintInput::Wall { distance } => {
                    if !distance.is_finite() {
                        return Err(invalid(
                            path,
                            "model.double_pendulum.constraint.wall.distance",
                            format!("expected a finite distance, got {distance}"),
                        ));
                    }
                    PendulumConstraint::Wall(WallConstraint {
                        l: setup.pendulum.l,
                        d: distance,
                    })
                }
                PendulumConstraintInput::Ellipse => {
                    PendulumConstraint::Ellipse(EllipseConstraint::table3())
                }
            };
            if let Some(a) = m.angles {
                setup.theta0 = a;
            }
            if let Some(w) = m.angular_velocities {
                setup.theta_dot0 = w;
            }
            if setup
                .theta0
                .iter()
                .chain(&setup.theta_dot0)
                .any(|v| !v.is_finite())
            {
                return Err(invalid(
                    path,
                    "model.double_pendulum.angles",
                    "expected finite angles and angular velocities".into(),
                ));
            }
            if let PendulumConstraint::Wall(w) = setup.constraint {
                let tip = setup.pendulum.tip(&setup.theta0);
                if tip[1] > w.d {
                    return Err(invalid(
                        path,
                        "model.double_pendulum.angles",
                        format!(
                            "the tip starts beyond the wall (y_B = {} > d = {})",
                            tip[1], w.d
                        ),
                    ));
                }
            }
            setup
                .pendulum
                .check()
                .map_err(|e| invalid(path, "model.double_pendulum", e.to_string()))?;
            Ok(ConstrainedProblem::Pendulum {
                path: path.to_path_buf(),
                setup: Box::new(setup),
                input: Box::new(input),
                grid,
            })
        }
        _ => Err(invalid(
            path,
            "model",
            "expected colliding_strings or double_pendulum".into(),
        )),
    }
}

/// `fem check` lines.
pub fn describe(problem: &ConstrainedProblem) -> Vec<String> {
    match problem {
        ConstrainedProblem::Strings {
            parameters: p,
            grid,
            ..
        } => vec![
            format!(
                "  model: two P1 strings, I = {} cells each, u >= v by the time-discretized penalty, epsilon = {:e}",
                p.n_cells, p.epsilon
            ),
            format!(
                "  time: nonlinear alpha scheme (63), alpha = {}, dt = {:e}, {} steps to {}",
                p.alpha,
                grid.dt(),
                grid.n_steps(),
                grid.t_end()
            ),
        ],
        ConstrainedProblem::Pendulum { setup, grid, .. } => vec![
            format!(
                "  model: double pendulum, constraint {:?}, enforcement {:?}",
                setup.constraint, setup.enforcement
            ),
            format!(
                "  time: conservation-form scheme (40), dt = {:e}, {} steps to {}",
                grid.dt(),
                grid.n_steps(),
                grid.t_end()
            ),
        ],
    }
}

/// Steps the problem and writes its output.
pub fn run(
    problem: ConstrainedProblem,
    out_dir: &Path,
    base: &str,
    progress: Progress,
    max_steps: Option<u64>,
) -> Result<RunSummary, FemError> {
    match problem {
        ConstrainedProblem::Strings {
            path,
            input,
            parameters,
            grid,
        } => run_strings(
            &path,
            &input,
            &parameters,
            grid,
            out_dir,
            base,
            progress,
            max_steps,
        ),
        ConstrainedProblem::Pendulum {
            path,
            input,
            setup,
            grid,
        } => run_pendulum(
            &path, &input, &setup, grid, out_dir, base, progress, max_steps,
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn run_strings(
    path: &Path,
    input: &Input,
    parameters: &CollidingStringsParameters,
    grid: TimeGrid,
    out_dir: &Path,
    base: &str,
    progress: Progress,
    max_steps: Option<u64>,
) -> Result<RunSummary, FemError> {
    let mut strings = CollidingStrings::new(parameters).map_err(|e| FemError::Setup {
        path: path.to_path_buf(),
        source: Box::new(e),
    })?;
    let (mut series, mut history) =
        crate::run::open_outputs(out_dir, base, &input.output, &STRINGS_COLUMNS)?;
    let n = parameters.n_cells;
    let mut cells = VtkCells::new();
    cells.push_polyline(&(0..=n).collect::<Vec<_>>());
    cells.push_polyline(&(n + 1..=2 * n + 1).collect::<Vec<_>>());
    let which: Vec<f64> = (0..2 * (n + 1))
        .map(|i| if i <= n { 0.0 } else { 1.0 })
        .collect();
    let write_frame =
        |series: &mut FrameSeries, strings: &CollidingStrings, step: u64| -> Result<(), FemError> {
            let x = strings.nodes();
            let (u, v) = (strings.u(), strings.v());
            let points: Vec<[f64; 3]> = x
                .iter()
                .zip(&u)
                .chain(x.iter().zip(&v))
                .map(|(&x, &y)| [x, y, 0.0])
                .collect();
            let mut force = vec![0.0; 2 * (n + 1)];
            for (i, f) in strings.contact_forces().iter().enumerate() {
                force[i + 1] = *f;
                force[n + 2 + i] = -*f;
            }
            let frame = Frame::new(&points, &cells)
                .with_point_field(Field::scalar("string", &which))
                .with_point_field(Field::scalar("contact_force", &force));
            series.write_frame(grid.time(step), &frame)?;
            Ok(())
        };
    let e0 = strings.scheme().energy();
    history.write_row(&[
        0.0,
        grid.t0(),
        e0.kinetic,
        e0.elastic,
        e0.potential,
        e0.total,
        strings.penetration(),
        0.0,
    ])?;
    write_frame(&mut series, &strings, 0)?;
    let n_steps = steps_to_run(&grid, max_steps);
    let mut max_drift: f64 = 0.0;
    let wall_seconds = step_loop(n_steps, &input.output, progress, |k, due| {
        let report = strings.step().map_err(|e| FemError::Step(Box::new(e)))?;
        let e = report.energy;
        max_drift =
            max_drift.max((e.total - e0.total).abs() / e0.total.abs().max(f64::MIN_POSITIVE));
        if due.row {
            history.write_row(&[
                k as f64,
                grid.time(k),
                e.kinetic,
                e.elastic,
                e.potential,
                e.total,
                report.penetration,
                report.newton.iterations as f64,
            ])?;
        }
        if due.frame {
            write_frame(&mut series, &strings, k)?;
        }
        Ok(())
    })?;
    Ok(RunSummary::new(
        n_steps,
        &series,
        &history,
        max_drift,
        wall_seconds,
    ))
}

/// Paper coordinates (x along gravity, y across) shown with gravity pointing down.
fn screen(p: [f64; 2]) -> [f64; 3] {
    [p[1], -p[0], 0.0]
}

#[allow(clippy::too_many_arguments)]
fn run_pendulum(
    path: &Path,
    input: &Input,
    setup: &PendulumSetup,
    grid: TimeGrid,
    out_dir: &Path,
    base: &str,
    progress: Progress,
    max_steps: Option<u64>,
) -> Result<RunSummary, FemError> {
    let mut sim = PendulumSimulation::new(setup).map_err(|e| FemError::Setup {
        path: path.to_path_buf(),
        source: Box::new(e),
    })?;
    let columns: Vec<&str> = PendulumRecord::CSV_HEADER.split(',').collect();
    let (mut series, mut history) =
        crate::run::open_outputs(out_dir, base, &input.output, &columns)?;
    // The constraint's geometry, fixed in time.
    let outline: Vec<[f64; 2]> = match setup.constraint {
        PendulumConstraint::Free => Vec::new(),
        PendulumConstraint::Wall(w) => {
            let reach = w.l[0] + w.l[1];
            vec![[-0.2 * reach, w.d], [1.2 * reach, w.d]]
        }
        PendulumConstraint::Ellipse(e) => (0..=120)
            .map(|k| {
                let phi = 2.0 * std::f64::consts::PI * k as f64 / 120.0;
                [
                    e.centre[0] + e.semi_axes[0] * phi.cos(),
                    e.centre[1] + e.semi_axes[1] * phi.sin(),
                ]
            })
            .collect(),
    };
    let mut cells = VtkCells::new();
    cells.push_polyline(&[0, 1, 2]);
    if !outline.is_empty() {
        cells.push_polyline(&(3..3 + outline.len()).collect::<Vec<_>>());
    }
    let part: Vec<f64> = std::iter::once(0.0)
        .chain(if outline.is_empty() { None } else { Some(1.0) })
        .collect();
    let point_part: Vec<f64> = (0..3 + outline.len())
        .map(|i| if i < 3 { 0.0 } else { 1.0 })
        .collect();
    let l = setup.pendulum.l;
    let write_frame = |series: &mut FrameSeries, r: &PendulumRecord| -> Result<(), FemError> {
        let hinge = [l[0] * r.theta[0].cos(), l[0] * r.theta[0].sin()];
        let mut points = vec![screen([0.0, 0.0]), screen(hinge), screen(r.tip)];
        points.extend(outline.iter().map(|&p| screen(p)));
        let frame = Frame::new(&points, &cells)
            .with_point_field(Field::scalar("part", &point_part))
            .with_cell_field(Field::scalar("part", &part));
        series.write_frame(r.t, &frame)?;
        Ok(())
    };
    let write_row = |history: &mut HistoryWriter, r: &PendulumRecord| {
        history.write_row(&[
            r.step as f64,
            r.t,
            r.theta[0],
            r.theta[1],
            r.tip[0],
            r.tip[1],
            r.constraint,
            r.constraint_half_step,
            r.multiplier,
            r.energy,
            r.constraint_energy,
            r.newton_iterations as f64,
            r.multiplier_iterations as f64,
        ])
    };
    let first = sim.initial_record();
    write_row(&mut history, &first)?;
    write_frame(&mut series, &first)?;
    let n_steps = steps_to_run(&grid, max_steps);
    let e0 = first.energy;
    let mut max_drift: f64 = 0.0;
    let wall_seconds = step_loop(n_steps, &input.output, progress, |k, due| {
        let mut r = sim.step().map_err(|e| FemError::Constrained(Box::new(e)))?;
        r.t = grid.time(k);
        max_drift = max_drift.max((r.energy - e0).abs() / e0.abs().max(f64::MIN_POSITIVE));
        if due.row {
            write_row(&mut history, &r)?;
        }
        if due.frame {
            write_frame(&mut series, &r)?;
        }
        Ok(())
    })?;
    Ok(RunSummary::new(
        n_steps,
        &series,
        &history,
        max_drift,
        wall_seconds,
    ))
}
