//! The inextensible beam (Glowinski–Holmström §4): setup from YAML, the static start, the
//! dynamic run and its output (theory in docs/theory/inextensible_beam.md).
//!
//! Output contract: frames hold the beam as a polyline through `samples_per_element` points of
//! the Hermite interpolation per element, at their actual positions, with point data
//! `tangent` (x′, a 3-vector), `stretch` (|x′|) and `tension` (the multiplier's component along
//! the tangent, averaged over the element's two constraint points; augmented Lagrangian only,
//! NaN for the penalty); `history.csv` has
//! `step,t,energy,kinetic,max_stretch_error,iterations,residual,multiplier_change,max_speed`.

use std::path::{Path, PathBuf};

use fem_beam::{
    AugmentedLagrangianStepper, BeamModel, BeamParameters, BeamState, End, NewtonKktSettings,
    NewtonKktStepper, PenaltySettings, PenaltyStepper, PointLoad, StepReport, TimeSettings,
    UzawaSettings, solve_static,
};
use fem_io::{Field, Frame, FrameSeries, VtkCells};
use fem_time::TimeGrid;

use crate::error::FemError;
use crate::input::{BeamInitialInput, BeamSolverInput, EndInput, Input, ModelInput, SchemeKind};
use crate::run::{Progress, RunSummary, step_loop, steps_to_run};

/// Columns of the beam's `history.csv`.
pub const HISTORY_COLUMNS: [&str; 9] = [
    "step",
    "t",
    "energy",
    "kinetic",
    "max_stretch_error",
    "iterations",
    "residual",
    "multiplier_change",
    "max_speed",
];

/// A validated beam input with its static start solved.
#[derive(Debug)]
pub struct BeamProblem {
    /// Input file.
    pub path: PathBuf,
    /// Parsed input.
    pub input: Box<Input>,
    /// The model with the run's supports.
    pub model: BeamModel,
    /// The initial (static) state.
    pub state: BeamState,
    /// The static multipliers (a warm start for the augmented Lagrangian).
    pub multipliers: Vec<[f64; 3]>,
    /// Uzawa iterations and constraint residual of the static solve.
    pub static_report: String,
    /// Time grid.
    pub grid: TimeGrid,
}

fn end(e: &EndInput) -> End {
    match e {
        EndInput::Free => End::Free,
        EndInput::Pinned(x) => End::pinned(*x),
        EndInput::Clamped { position, tangent } => End::clamped(*position, *tangent),
    }
}

/// Validates a beam input, builds the model and solves the static start.
pub fn prepare(path: &Path, input: Input) -> Result<BeamProblem, FemError> {
    let invalid = |field: &str, message: String| FemError::Invalid {
        path: path.to_path_buf(),
        field: field.to_string(),
        message,
    };
    let ModelInput::Beam(b) = &input.model else {
        return Err(invalid("model", "expected model.beam".into()));
    };
    if input.mesh.is_some()
        || !input.fixed.is_empty()
        || !input.dirichlet.is_empty()
        || input.contact.is_some()
    {
        return Err(invalid("mesh", "a beam builds its own mesh and supports (model.beam.end_a/end_b): remove 'mesh', 'fixed', 'dirichlet', 'contact'".into()));
    }
    if input.initial != Default::default() || !input.output.probes.is_empty() {
        return Err(invalid(
            "initial",
            "a beam takes its initial state from model.beam.initial".into(),
        ));
    }
    let t = &input.time;
    if t.scheme != SchemeKind::Alpha {
        return Err(invalid(
            "time.scheme",
            "a beam is stepped by the alpha scheme (97)/(93): scheme: alpha".into(),
        ));
    }
    if !(t.alpha >= 0.25 && t.alpha <= 0.5) {
        return Err(invalid(
            "time.alpha",
            format!(
                "expected 1/4 <= alpha <= 1/2 for the beam schemes, got {}",
                t.alpha
            ),
        ));
    }
    if !(t.dt.is_finite() && t.dt > 0.0) {
        return Err(invalid(
            "time.dt",
            format!("expected a positive time step, got {}", t.dt),
        ));
    }
    if !(t.t_end.is_finite() && t.t0 == 0.0 && t.t_end > 0.0) {
        return Err(invalid(
            "time.t_end",
            format!(
                "expected t0 = 0 and a positive end time, got t0 = {}, t_end = {}",
                t.t0, t.t_end
            ),
        ));
    }
    if input.output.every == 0 || input.output.history_every == 0 {
        return Err(invalid(
            "output.every",
            "expected a positive number of steps".into(),
        ));
    }
    let grid = TimeGrid::new(t.t0, t.t_end, t.dt).map_err(|e| invalid("time", e.to_string()))?;
    if !(1..=1_000).contains(&b.samples_per_element) {
        return Err(invalid(
            "model.beam.samples_per_element",
            format!("expected 1 to 1000, got {}", b.samples_per_element),
        ));
    }
    if let Some(l) = b
        .point_loads
        .iter()
        .find(|l| l.node > b.elements || l.force.iter().any(|f| !f.is_finite()))
    {
        return Err(invalid(
            "model.beam.point_loads",
            format!(
                "node {} must be in 0..={} with a finite force",
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
    } = &b.initial;
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
    let static_model = BeamModel::new(params).map_err(|e| invalid("model.beam", e.to_string()))?;
    let anchor = |e: &EndInput, fallback: [f64; 3]| match e {
        EndInput::Pinned(x) => *x,
        EndInput::Clamped { position, .. } => *position,
        EndInput::Free => fallback,
    };
    let a = anchor(end_a, [0.0; 3]);
    let mut far = a;
    far[0] += b.length;
    let z = anchor(end_b, far);
    if !matches!(end_a, EndInput::Free) && !matches!(end_b, EndInput::Free) {
        let span = ((z[0] - a[0]).powi(2) + (z[1] - a[1]).powi(2) + (z[2] - a[2]).powi(2)).sqrt();
        if span >= b.length {
            return Err(invalid(
                "model.beam.initial.static",
                format!(
                    "the supports are {span} m apart, not less than the length {} m: an inextensible beam cannot span them",
                    b.length
                ),
            ));
        }
    }
    let guess = BeamState::arc(&static_model, a, z, *sag_direction);
    let sol = solve_static(&static_model, &guess, &UzawaSettings::anderson(1e4)).map_err(|e| {
        invalid(
            "model.beam.initial.static",
            format!("the static start did not converge: {e}"),
        )
    })?;
    let static_report = format!(
        "{} Uzawa iterations, max ||x'| - 1| = {:.1e}",
        sol.report.iterations, sol.report.max_constraint_violation
    );
    let model = static_model
        .with_ends(end(&b.end_a), end(&b.end_b))
        .map_err(|e| invalid("model.beam.end_a", e.to_string()))?;
    Ok(BeamProblem {
        path: path.to_path_buf(),
        model,
        state: sol.state,
        multipliers: sol.multipliers,
        static_report,
        input: Box::new(input),
        grid,
    })
}

/// `fem check` lines.
pub fn describe(p: &BeamProblem) -> Vec<String> {
    let ModelInput::Beam(b) = &p.input.model else {
        return Vec::new();
    };
    vec![
        format!(
            "  model: inextensible Hermite beam, N = {} elements, L = {} m, EI = {}, rho = {}",
            b.elements, b.length, b.bending_stiffness, b.density
        ),
        format!("  static start: {}", p.static_report),
        format!(
            "  time: {:?}, alpha = {}, dt = {:e}, {} steps to {}",
            b.solver,
            p.input.time.alpha,
            p.grid.dt(),
            p.grid.n_steps(),
            p.grid.t_end()
        ),
    ]
}

/// One of the two dynamic beam schemes.
enum Scheme {
    Augmented(Box<AugmentedLagrangianStepper>),
    Kkt(Box<NewtonKktStepper>),
    Penalty(Box<PenaltyStepper>),
}

impl Scheme {
    fn step(&mut self) -> Result<StepReport, fem_beam::BeamError> {
        match self {
            Scheme::Augmented(s) => s.step(),
            Scheme::Kkt(s) => s.step(),
            Scheme::Penalty(s) => s.step(),
        }
    }
    fn state(&self) -> BeamState {
        match self {
            Scheme::Augmented(s) => s.state(),
            Scheme::Kkt(s) => s.state(),
            Scheme::Penalty(s) => s.state(),
        }
    }
    fn last_report(&self) -> StepReport {
        match self {
            Scheme::Augmented(s) => s.last_report(),
            Scheme::Kkt(s) => s.last_report(),
            Scheme::Penalty(s) => s.last_report(),
        }
    }
    fn tensions(&self) -> Option<Vec<f64>> {
        match self {
            Scheme::Augmented(s) => Some(s.tensions()),
            Scheme::Kkt(s) => Some(s.tensions().to_vec()),
            Scheme::Penalty(_) => None,
        }
    }
}

/// Steps the beam and writes frames and the history.
pub fn run(
    problem: BeamProblem,
    out_dir: &Path,
    base: &str,
    progress: Progress,
    max_steps: Option<u64>,
) -> Result<RunSummary, FemError> {
    let BeamProblem {
        path,
        input,
        model,
        state,
        multipliers,
        grid,
        ..
    } = problem;
    let ModelInput::Beam(b) = &input.model else {
        unreachable!("prepared as a beam")
    };
    let setup = |e: fem_beam::BeamError| FemError::Invalid {
        path: path.clone(),
        field: "model.beam".into(),
        message: e.to_string(),
    };
    let time = TimeSettings {
        dt: grid.dt(),
        alpha: input.time.alpha,
    };
    let n_elements = model.n_elements();
    let length = b.length;
    let sample_model = model.clone();
    let mut scheme = match b.solver {
        BeamSolverInput::NewtonKkt => Scheme::Kkt(Box::new(
            NewtonKktStepper::new(
                model,
                &state,
                None,
                Some(&multipliers),
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
                    &state,
                    None,
                    Some(&multipliers),
                    time,
                    uzawa,
                )
                .map_err(setup)?,
            ))
        }
        BeamSolverInput::Penalty { epsilon } => Scheme::Penalty(Box::new(
            PenaltyStepper::new(model, &state, None, time, PenaltySettings::new(epsilon))
                .map_err(setup)?,
        )),
    };
    let (mut series, mut history) =
        crate::run::open_outputs(out_dir, base, &input.output, &HISTORY_COLUMNS)?;
    let k = b.samples_per_element;
    let n_samples = k * n_elements + 1;
    let mut cells = VtkCells::new();
    cells.push_polyline(&(0..n_samples).collect::<Vec<_>>());
    let write_frame = |series: &mut FrameSeries, scheme: &Scheme, t: f64| -> Result<(), FemError> {
        let samples = sample_model.sample(&scheme.state(), k);
        let points: Vec<[f64; 3]> = samples.iter().map(|s| s.position).collect();
        let tangent: Vec<f64> = samples.iter().flat_map(|s| s.tangent).collect();
        let stretch: Vec<f64> = samples
            .iter()
            .map(|s| s.tangent.iter().map(|c| c * c).sum::<f64>().sqrt())
            .collect();
        let tension: Vec<f64> = match scheme.tensions() {
            Some(points_t) => samples
                .iter()
                .map(|s| {
                    let e = ((s.s / length * n_elements as f64) as usize).min(n_elements - 1);
                    0.5 * (points_t[2 * e] + points_t[2 * e + 1])
                })
                .collect(),
            None => vec![f64::NAN; samples.len()],
        };
        let frame = Frame::new(&points, &cells)
            .with_point_field(Field::vector("tangent", &tangent))
            .with_point_field(Field::scalar("stretch", &stretch))
            .with_point_field(Field::scalar("tension", &tension));
        series.write_frame(t, &frame)?;
        Ok(())
    };
    let row = |r: &StepReport, step: u64| {
        [
            step as f64,
            grid.time(step),
            r.energy,
            r.kinetic_energy,
            r.max_stretch_error,
            r.iterations as f64,
            r.residual,
            r.multiplier_change,
            r.max_speed,
        ]
    };
    let first = scheme.last_report();
    history.write_row(&row(&first, 0))?;
    write_frame(&mut series, &scheme, grid.t0())?;
    let n_steps = steps_to_run(&grid, max_steps);
    let e0 = first.energy;
    let mut max_change: f64 = 0.0;
    let wall_seconds = step_loop(n_steps, &input.output, progress, |n, due| {
        let r = scheme.step().map_err(|e| FemError::Beam(Box::new(e)))?;
        max_change = max_change.max((r.energy - e0).abs() / e0.abs().max(f64::MIN_POSITIVE));
        if due.row {
            history.write_row(&row(&r, n))?;
        }
        if due.frame {
            write_frame(&mut series, &scheme, grid.time(n))?;
        }
        Ok(())
    })?;
    Ok(RunSummary::new(
        n_steps,
        &series,
        &history,
        max_change,
        wall_seconds,
    ))
}
