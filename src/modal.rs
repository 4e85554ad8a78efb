//! The modal string with unilateral contact: setup and run (Siconos seed, exact modal
//! Moreau–Jean; theory in docs/theory/moreau_jean.md).
//!
//! Output contract: `DIR/X.pvd` and `DIR/X_000000.vtu`, … hold the string drawn as a polyline
//! through `output.samples` points (point data `displacement`, `velocity`, 3-vectors along y)
//! followed by the contact points as vertices (point data `contact_force`, the impulse over the
//! step divided by Δt, and `obstacle_height`); `DIR/history.csv` has
//! `step,t,energy,energy_plain,n_active,lcp_iterations,lcp_residual,min_gap,contact_force_total`;
//! `DIR/probes.csv` has `t` and the displacement at each `output.probes` position.

use std::path::{Path, PathBuf};

use fem_constraints::{LcpSolver, Lemke, ProjectedGaussSeidel, UnilateralContacts};
use fem_io::{Field, Frame, FrameSeries, HistoryWriter, VtkCells};
use fem_time::TimeGrid;
use fem_time::nonsmooth::{
    ModalCoefficients, ModalDamping, ModalMoreauJean, ModalSystem, StringModes,
};

use crate::error::FemError;
use crate::input::{DampingInput, InitialField, Input, LcpSolverKind, ModelInput, SchemeKind};
use crate::run::{Progress, RunSummary, step_loop, steps_to_run};

/// Columns of the modal string's `history.csv`.
pub const HISTORY_COLUMNS: [&str; 9] = [
    "step",
    "t",
    "energy",
    "energy_plain",
    "n_active",
    "lcp_iterations",
    "lcp_residual",
    "min_gap",
    "contact_force_total",
];

/// A validated modal-string input, ready to step.
#[derive(Debug)]
pub struct ModalProblem {
    /// The input file.
    pub path: PathBuf,
    /// The parsed input.
    pub input: Input,
    /// The string's modes.
    pub modes: StringModes,
    /// The modal system (unit masses, ω, σ).
    pub system: ModalSystem,
    /// Initial modal displacement.
    pub q0: Vec<f64>,
    /// Initial modal velocity as the backward difference the exact scheme needs.
    pub v0: Vec<f64>,
    /// Contact points and obstacle heights.
    pub contact_points: Vec<f64>,
    /// Obstacle height at each contact point.
    pub heights: Vec<f64>,
    /// The time grid.
    pub grid: TimeGrid,
}

/// Validates a modal-string input and builds its modes, initial state and contacts.
pub fn prepare(path: &Path, input: Input) -> Result<ModalProblem, FemError> {
    let invalid = |field: &str, message: String| FemError::Invalid {
        path: path.to_path_buf(),
        field: field.to_string(),
        message,
    };
    let ModelInput::ModalString(m) = &input.model else {
        return Err(invalid("model", "expected model.modal_string".into()));
    };
    if input.mesh.is_some() {
        return Err(invalid(
            "mesh",
            "a modal string is defined by its modes and needs no mesh: remove 'mesh'".into(),
        ));
    }
    if !input.fixed.is_empty() || !input.dirichlet.is_empty() {
        return Err(invalid(
            "fixed",
            "a modal string has fixed ends by construction; 'fixed' and 'dirichlet' do not apply"
                .into(),
        ));
    }
    if input.time.scheme != SchemeKind::ModalMoreauJean {
        return Err(invalid(
            "time.scheme",
            "a modal string is stepped by modal_moreau_jean".into(),
        ));
    }
    let t = &input.time;
    if !(t.dt.is_finite() && t.dt > 0.0) {
        return Err(invalid(
            "time.dt",
            format!("expected a positive time step, got {}", t.dt),
        ));
    }
    if !(t.t_end.is_finite() && t.t0.is_finite() && t.t_end > t.t0) {
        return Err(invalid(
            "time.t_end",
            format!("expected an end time after t0 = {}, got {}", t.t0, t.t_end),
        ));
    }
    let grid = TimeGrid::new(t.t0, t.t_end, t.dt).map_err(|e| invalid("time", e.to_string()))?;
    if input.output.every == 0 || input.output.history_every == 0 {
        return Err(invalid(
            "output.every",
            "expected a positive number of steps".into(),
        ));
    }
    if !(2..=1_000_000).contains(&input.output.samples) {
        return Err(invalid(
            "output.samples",
            format!("expected 2 to 1e6 points, got {}", input.output.samples),
        ));
    }
    for (field, v) in [
        ("model.modal_string.length", m.length),
        ("model.modal_string.tension", m.tension),
        ("model.modal_string.density", m.density),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(invalid(
                field,
                format!("expected a positive finite number, got {v}"),
            ));
        }
    }
    if !(m.inharmonicity.is_finite() && m.inharmonicity >= 0.0) {
        return Err(invalid(
            "model.modal_string.inharmonicity",
            format!("expected a non-negative number, got {}", m.inharmonicity),
        ));
    }
    if !(1..=100_000).contains(&m.modes) {
        return Err(invalid(
            "model.modal_string.modes",
            format!("expected 1 to 100000 modes, got {}", m.modes),
        ));
    }
    let length = m.length;
    let inside = |x: f64| x > 0.0 && x < length;
    if let Some(&bad) = input.output.probes.iter().find(|&&x| !inside(x)) {
        return Err(invalid(
            "output.probes",
            format!("expected positions inside (0, {length}), got {bad}"),
        ));
    }
    let modes = StringModes::new(m.length, m.tension, m.density, m.inharmonicity, m.modes)
        .map_err(|e| invalid("model.modal_string", e.to_string()))?;
    let damping = match &m.damping {
        DampingInput::None => ModalDamping::None,
        DampingInput::Constant(s) => ModalDamping::Constant(*s),
        DampingInput::Rayleigh { mass, stiffness } => ModalDamping::Rayleigh {
            mass: *mass,
            stiffness: *stiffness,
        },
        DampingInput::Table(v) => ModalDamping::Table(v.clone()),
    };
    let system = modes
        .modal_system(&damping)
        .map_err(|e| invalid("model.modal_string.damping", e.to_string()))?;

    // Initial state: modal coordinates of the shape, at rest or with a sine velocity.
    let q0 = modal_shape(
        path,
        "initial.displacement",
        &input.initial.displacement,
        &modes,
        length,
    )?;
    let qdot0 = modal_shape(
        path,
        "initial.velocity",
        &input.initial.velocity,
        &modes,
        length,
    )?;
    // Free modes are exact from the backward difference of the exact motion (`exact_start`);
    // by default the initial velocity itself is used, which resolves impacts far better
    // (measured on the flat obstacle: docs/validation.md).
    let v0: Vec<f64> = (0..modes.n_modes())
        .map(|k| {
            if input.initial.exact_start {
                ModalCoefficients::exact_start_velocity(
                    system.omega[k],
                    system.sigma[k],
                    grid.dt(),
                    q0[k],
                    qdot0[k],
                )
            } else {
                qdot0[k]
            }
        })
        .collect();

    let mut contact_points = Vec::new();
    let mut heights = Vec::new();
    if let Some(c) = &input.contact {
        if !(0.0..=1.0).contains(&c.restitution) {
            return Err(invalid(
                "contact.restitution",
                format!("expected 0 <= e <= 1, got {}", c.restitution),
            ));
        }
        if !(c.tolerance.is_finite() && c.tolerance > 0.0) {
            return Err(invalid(
                "contact.tolerance",
                format!("expected a positive tolerance, got {}", c.tolerance),
            ));
        }
        if c.obstacles.is_empty() {
            return Err(invalid(
                "contact.obstacles",
                "expected at least one obstacle".into(),
            ));
        }
        for (i, o) in c.obstacles.iter().enumerate() {
            let field = format!("contact.obstacles[{i}]");
            if !o.height.is_finite() {
                return Err(invalid(
                    &format!("{field}.height"),
                    format!("expected a finite height, got {}", o.height),
                ));
            }
            let points: Vec<f64> = match (&o.positions, o.uniform) {
                (Some(p), None) => {
                    if let Some(&bad) = p.iter().find(|&&x| !inside(x)) {
                        return Err(invalid(
                            &format!("{field}.positions"),
                            format!("expected positions inside (0, {length}), got {bad}"),
                        ));
                    }
                    p.clone()
                }
                (None, Some(n)) if (1..=100_000).contains(&n) => (1..=n)
                    .map(|i| length * i as f64 / (n + 1) as f64)
                    .collect(),
                (None, Some(n)) => {
                    return Err(invalid(
                        &format!("{field}.uniform"),
                        format!("expected 1 to 100000 points, got {n}"),
                    ));
                }
                _ => {
                    return Err(invalid(
                        &field,
                        "expected exactly one of 'positions' or 'uniform'".into(),
                    ));
                }
            };
            for x in points {
                let u = modes.displacement(&q0, x);
                if u < o.height - 1e-12 * o.height.abs().max(1e-3) {
                    return Err(invalid(
                        &field,
                        format!(
                            "the initial shape is below the obstacle at x = {x}: u = {u:e} < height {:e}; start outside the obstacle",
                            o.height
                        ),
                    ));
                }
                contact_points.push(x);
                heights.push(o.height);
            }
        }
    }
    Ok(ModalProblem {
        path: path.to_path_buf(),
        input,
        modes,
        system,
        q0,
        v0,
        contact_points,
        heights,
        grid,
    })
}

/// Modal coordinates of an initial shape (unit modal masses).
fn modal_shape(
    path: &Path,
    field: &str,
    shape: &InitialField,
    modes: &StringModes,
    length: f64,
) -> Result<Vec<f64>, FemError> {
    let invalid = |sub: &str, message: String| FemError::Invalid {
        path: path.to_path_buf(),
        field: format!("{field}{sub}"),
        message,
    };
    let n = modes.n_modes();
    match shape {
        InitialField::Zero => Ok(vec![0.0; n]),
        InitialField::Pluck(p) => {
            if !(p.position > 0.0 && p.position < length) {
                return Err(invalid(
                    ".pluck.position",
                    format!(
                        "expected a position inside (0, {length}), got {}",
                        p.position
                    ),
                ));
            }
            if p.component != 0 || !p.amplitude.is_finite() {
                return Err(invalid(
                    ".pluck",
                    "a modal string has one component (0) and needs a finite amplitude".into(),
                ));
            }
            Ok(modes.triangular_pluck(p.position, p.amplitude))
        }
        InitialField::Sine(s) => {
            if s.mode == 0 || s.mode as usize > n || s.component != 0 || !s.amplitude.is_finite() {
                return Err(invalid(
                    ".sine",
                    format!("expected a mode in 1..={n}, component 0 and a finite amplitude"),
                ));
            }
            // u = a sin(jπx/L) = q_j φ_j with φ_j(x) = shape(j, x).
            let mut q = vec![0.0; n];
            let k = s.mode as usize - 1;
            let x = 0.5 * length / s.mode as f64;
            q[k] = s.amplitude / modes.shape(k, x);
            Ok(q)
        }
    }
}

/// `fem check` lines for a modal string.
pub fn describe(problem: &ModalProblem) -> Vec<String> {
    let m = problem.modes.n_modes();
    let top = problem.system.omega.last().copied().unwrap_or(0.0);
    vec![
        format!(
            "  model: modal string, {m} modes, highest {:.1} Hz, omega_max dt = {:.3e}",
            top / (2.0 * std::f64::consts::PI),
            top * problem.grid.dt()
        ),
        format!("  contact: {} points", problem.contact_points.len()),
        format!(
            "  time: exact modal Moreau-Jean, dt = {:e} (fs = {:.0} Hz), {} steps from {} to {}",
            problem.grid.dt(),
            1.0 / problem.grid.dt(),
            problem.grid.n_steps(),
            problem.grid.t0(),
            problem.grid.t_end()
        ),
        "  stability: unconditional (exact for free modes at any omega dt)".to_string(),
    ]
}

/// Steps the modal string and writes its frames, history and probes.
pub fn run(
    problem: ModalProblem,
    out_dir: &Path,
    base: &str,
    progress: Progress,
    max_steps: Option<u64>,
) -> Result<RunSummary, FemError> {
    let ModalProblem {
        path,
        input,
        modes,
        system,
        q0,
        v0,
        contact_points,
        heights,
        grid,
    } = problem;
    let setup = |message: String| FemError::Invalid {
        path: path.clone(),
        field: "model.modal_string".into(),
        message,
    };
    let n_modes = modes.n_modes();
    let mut stepper = ModalMoreauJean::new(system, grid.dt(), grid.t0(), &q0, &v0)
        .map_err(|e| setup(e.to_string()))?;
    if let Some(c) = &input.contact {
        let contacts = UnilateralContacts::from_dense(
            n_modes,
            &modes.point_rows(&contact_points),
            heights.clone(),
            c.restitution,
        )
        .map_err(|e| setup(e.to_string()))?;
        let solver: Box<dyn LcpSolver> = match c.solver {
            LcpSolverKind::Lemke => Box::new(Lemke::default()),
            LcpSolverKind::Pgs => Box::new(ProjectedGaussSeidel {
                tolerance: c.tolerance,
                max_iterations: 100_000,
            }),
        };
        stepper = stepper
            .with_contacts(contacts, solver)
            .map_err(|e| setup(e.to_string()))?;
    }

    let (mut series, mut history) =
        crate::run::open_outputs(out_dir, base, &input.output, &HISTORY_COLUMNS)?;
    let probe_columns: Vec<String> = std::iter::once("t".to_string())
        .chain(input.output.probes.iter().map(|x| format!("u({x})")))
        .collect();
    let probe_refs: Vec<&str> = probe_columns.iter().map(String::as_str).collect();
    let mut probes = if input.output.probes.is_empty() {
        None
    } else {
        Some(HistoryWriter::create(
            out_dir.join("probes.csv"),
            &probe_refs,
        )?)
    };
    let probe_rows = modes.point_rows(&input.output.probes);

    // The frame geometry: the sampled string, then the contact points.
    let n_samples = input.output.samples;
    let length = input_length(&input);
    let xs: Vec<f64> = (0..n_samples)
        .map(|i| length * i as f64 / (n_samples - 1) as f64)
        .collect();
    let sample_rows = modes.point_rows(&xs);
    let mut points: Vec<[f64; 3]> = xs.iter().map(|&x| [x, 0.0, 0.0]).collect();
    points.extend(
        contact_points
            .iter()
            .zip(&heights)
            .map(|(&x, &h)| [x, h, 0.0]),
    );
    let mut cells = VtkCells::new();
    cells.push_polyline(&(0..n_samples).collect::<Vec<_>>());
    for i in 0..contact_points.len() {
        cells.push_block(fem_mesh::CellKind::Vertex, &[n_samples + i]);
    }
    let n_points = points.len();
    let mut displacement = vec![0.0; 3 * n_points];
    let mut velocity = vec![0.0; 3 * n_points];
    let mut force = vec![0.0; n_points];
    let mut obstacle = vec![f64::NAN; n_points];
    for (i, h) in heights.iter().enumerate() {
        obstacle[n_samples + i] = *h;
    }
    let dot = |row: &[f64], q: &[f64]| row.iter().zip(q).map(|(a, b)| a * b).sum::<f64>();

    let dt = grid.dt();
    let mut write_frame =
        |series: &mut FrameSeries, stepper: &ModalMoreauJean, step: u64| -> Result<(), FemError> {
            for (i, row) in sample_rows.chunks(n_modes).enumerate() {
                displacement[3 * i + 1] = dot(row, stepper.position());
                velocity[3 * i + 1] = dot(row, stepper.velocity());
            }
            for (i, lambda) in stepper.impulses().iter().enumerate() {
                force[n_samples + i] = lambda / dt;
            }
            let frame = Frame::new(&points, &cells)
                .with_point_field(Field::vector("displacement", &displacement))
                .with_point_field(Field::vector("velocity", &velocity))
                .with_point_field(Field::scalar("contact_force", &force))
                .with_point_field(Field::scalar("obstacle_height", &obstacle));
            series.write_frame(grid.time(step), &frame)?;
            Ok(())
        };
    let write_probes = |probes: &mut Option<HistoryWriter>,
                        stepper: &ModalMoreauJean,
                        step: u64|
     -> Result<(), FemError> {
        if let Some(p) = probes {
            let mut row = vec![grid.time(step)];
            row.extend(
                probe_rows
                    .chunks(n_modes.max(1))
                    .map(|r| dot(r, stepper.position())),
            );
            p.write_row(&row)?;
        }
        Ok(())
    };
    let row = |stepper: &ModalMoreauJean, step: u64, r: &fem_time::nonsmooth::StepReport| {
        let e = stepper.energy();
        [
            step as f64,
            grid.time(step),
            e.discrete,
            e.plain,
            r.n_active as f64,
            r.lcp_iterations as f64,
            r.lcp_residual,
            r.min_gap,
            stepper.impulses().iter().sum::<f64>() / dt,
        ]
    };
    let initial = fem_time::nonsmooth::StepReport {
        min_gap: contact_points
            .iter()
            .zip(&heights)
            .map(|(&x, h)| modes.displacement(&q0, x) - h)
            .fold(f64::INFINITY, f64::min),
        ..Default::default()
    };
    history.write_row(&row(&stepper, 0, &initial))?;
    write_frame(&mut series, &stepper, 0)?;
    write_probes(&mut probes, &stepper, 0)?;
    let e0 = stepper.energy().discrete;
    let mut max_drift: f64 = 0.0;
    let n_steps = steps_to_run(&grid, max_steps);
    let wall_seconds = step_loop(n_steps, &input.output, progress, |n, due| {
        let report = stepper
            .step()
            .map_err(|e| FemError::Nonsmooth(Box::new(e)))?;
        max_drift =
            max_drift.max((stepper.energy().discrete - e0).abs() / e0.abs().max(f64::MIN_POSITIVE));
        write_probes(&mut probes, &stepper, n)?;
        if due.row {
            history.write_row(&row(&stepper, n, &report))?;
        }
        if due.frame {
            write_frame(&mut series, &stepper, n)?;
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

fn input_length(input: &Input) -> f64 {
    match &input.model {
        ModelInput::ModalString(m) => m.length,
        _ => 1.0,
    }
}
