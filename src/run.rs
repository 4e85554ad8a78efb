//! The run driver: step a prepared [`Problem`] and write ParaView frames and the history.
//!
//! Output contract (tests rely on it): `fem run X.yaml -o DIR` writes `DIR/X.pvd`,
//! `DIR/X_000000.vtu`, … (frame 0 is the initial state, then every `output.every` steps and
//! always the last step) and `DIR/history.csv` with the columns [`HISTORY_COLUMNS`].
//! The `.pvd` is rewritten atomically after every frame and each history row is flushed, so
//! an interrupted or failed run leaves valid files behind.

use std::path::{Path, PathBuf};
use std::time::Instant;

use fem_io::{Compression, Field, Frame, FrameSeries, HistoryWriter, VtkCells};
use fem_time::alpha::stability_bound;
use fem_time::{AlphaScheme, BackwardEuler, NewtonSettings, Stepper};

use crate::error::FemError;
use crate::input::{CompressionKind, SchemeKind};
use crate::setup::Problem;

/// Columns of `history.csv`: `total` is the scheme's discrete energy (19) of the last
/// interval, `kinetic + potential`; `external_work` and `dissipated` accumulate the balance
/// terms of (17), so `total + dissipated - external_work` is constant.
/// `iterations` counts the Newton iterations of the step (1 for one linear solve, 0 for an
/// explicit step). Balance terms a scheme does not track are written as NaN.
pub const HISTORY_COLUMNS: [&str; 9] = [
    "step",
    "t",
    "kinetic",
    "potential",
    "total",
    "external_work",
    "dissipated",
    "max_displacement",
    "iterations",
];

/// The `.vtu` compression an input asks for.
pub(crate) fn compression(kind: CompressionKind) -> Compression {
    match kind {
        CompressionKind::None => Compression::None,
        CompressionKind::Lz4 => Compression::Lz4,
        CompressionKind::Zlib => Compression::Zlib,
    }
}

/// Which outputs are due after a step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Due {
    /// A `history.csv` row (every `output.history_every` steps and the last step).
    pub row: bool,
    /// A ParaView frame (every `output.every` steps and the last step).
    pub frame: bool,
}

/// The number of steps a run takes: the grid's, or fewer with `--max-steps`.
pub(crate) fn steps_to_run(grid: &fem_time::TimeGrid, max_steps: Option<u64>) -> u64 {
    max_steps.map_or(grid.n_steps(), |m| m.min(grid.n_steps()))
}

/// The stepping loop every driver shares: calls `step(n, due)` for `n = 1..=n_steps`, reports
/// progress, and abandons the progress bar at the first error, which it returns. Returns the
/// loop's wall time in seconds.
pub(crate) fn step_loop(
    n_steps: u64,
    output: &crate::input::OutputInput,
    progress: Progress,
    mut step: impl FnMut(u64, Due) -> Result<(), FemError>,
) -> Result<f64, FemError> {
    let bar = ProgressReport::new(progress, n_steps);
    let start = Instant::now();
    for n in 1..=n_steps {
        let due = Due {
            row: n % output.history_every == 0 || n == n_steps,
            frame: n % output.every == 0 || n == n_steps,
        };
        if let Err(e) = step(n, due) {
            bar.abandon();
            return Err(e);
        }
        bar.at(n);
    }
    bar.finish();
    Ok(start.elapsed().as_secs_f64())
}

/// How the run reports progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Nothing but errors.
    Quiet,
    /// A line every 10 % of the run.
    Lines,
    /// A progress bar with ETA (on a terminal).
    Bar,
}

/// What a finished run reports.
#[derive(Clone, Debug)]
pub struct RunSummary {
    /// Steps taken.
    pub steps: u64,
    /// Frames written.
    pub frames: usize,
    /// The `.pvd` file.
    pub pvd: PathBuf,
    /// The history file.
    pub history: PathBuf,
    /// Largest relative change of `total + dissipated - external_work` over the run.
    pub max_energy_drift: f64,
    /// Wall time of the stepping loop, in seconds.
    pub wall_seconds: f64,
}

impl RunSummary {
    /// The summary of a finished run from its output files.
    pub(crate) fn new(
        steps: u64,
        series: &FrameSeries,
        history: &HistoryWriter,
        max_energy_drift: f64,
        wall_seconds: f64,
    ) -> Self {
        Self {
            steps,
            frames: series.n_frames(),
            pvd: series.pvd_path().to_path_buf(),
            history: history.path().to_path_buf(),
            max_energy_drift,
            wall_seconds,
        }
    }
}

/// Opens a run's outputs: `DIR/BASE.pvd` with its frames, and `DIR/history.csv` with `columns`.
pub(crate) fn open_outputs(
    out_dir: &Path,
    base: &str,
    output: &crate::input::OutputInput,
    columns: &[&str],
) -> Result<(FrameSeries, HistoryWriter), FemError> {
    let series = FrameSeries::create(out_dir, base, compression(output.compression))?;
    let history = HistoryWriter::create(out_dir.join("history.csv"), columns)?;
    Ok((series, history))
}

/// The stability bound of the problem's scheme, for `fem check` (`None` when unconditional).
pub fn stability(problem: &Problem) -> Result<Option<f64>, FemError> {
    if problem.input.time.scheme != SchemeKind::Alpha {
        return Ok(None);
    }
    let bound = stability_bound(&problem.system, problem.input.time.alpha).map_err(|e| {
        FemError::Setup {
            path: problem.path.clone(),
            source: Box::new(e.into()),
        }
    })?;
    Ok(bound.map(|(b, _)| b))
}

/// Steps the problem to its end time (or for at most `max_steps` steps), writing into
/// `out_dir` under the base name `base`.
pub fn run(
    problem: Problem,
    out_dir: &Path,
    base: &str,
    progress: Progress,
    max_steps: Option<u64>,
) -> Result<RunSummary, FemError> {
    let Problem {
        path,
        input,
        mesh,
        dofmap,
        system,
        x0,
        v0,
        grid,
        directions,
        dirichlet,
        ..
    } = problem;
    let setup_error = |source| FemError::Setup {
        path: path.clone(),
        source: Box::new(source),
    };
    let t = &input.time;
    let mut scheme: Box<dyn Stepper> = match t.scheme {
        SchemeKind::Alpha => {
            let s = AlphaScheme::with_dirichlet(
                system,
                t.alpha,
                grid.dt(),
                grid.t0(),
                &x0,
                &v0,
                dirichlet,
            )
            .map_err(setup_error)?;
            log::info!(
                "alpha scheme, alpha = {}: {}",
                t.alpha,
                if s.is_explicit() {
                    "explicit"
                } else {
                    "one Cholesky factorization"
                }
            );
            Box::new(s)
        }
        SchemeKind::BackwardEuler => {
            let newton = NewtonSettings {
                max_iterations: t.newton.max_iterations,
                relative_tolerance: t.newton.relative_tolerance,
                absolute_tolerance: t.newton.absolute_tolerance,
            };
            let s = BackwardEuler::new(system, grid.dt(), grid.t0(), &x0, &v0, dirichlet, newton)
                .map_err(setup_error)?;
            log::info!("backward-Euler acceleration step (Serac seed)");
            Box::new(s)
        }
        SchemeKind::ModalMoreauJean | SchemeKind::ConservationForm => {
            return Err(FemError::Invalid {
                path,
                field: "time.scheme".into(),
                message: "this scheme steps another model (modal_string, double_pendulum)".into(),
            });
        }
    };
    log::info!(
        "{} free dofs, dt = {:e}, {} steps",
        dofmap.n_free(),
        grid.dt(),
        grid.n_steps()
    );

    let (mut series, mut history) =
        crate::run::open_outputs(out_dir, base, &input.output, &HISTORY_COLUMNS)?;
    let cells = VtkCells::from_mesh(&mesh);
    let mut writer = FieldWriter::new(&dofmap, &directions);

    let e0 = scheme.current_energy().total;
    let mut max_drift: f64 = 0.0;
    let write_row =
        |history: &mut HistoryWriter, scheme: &dyn Stepper, iterations: usize, drift: &mut f64| {
            let e = scheme.current_energy();
            let balance = e.total + e.dissipated - e.external_work;
            *drift = drift.max((balance - e0).abs() / e0.abs().max(f64::MIN_POSITIVE));
            let max_u = scheme
                .current_position()
                .iter()
                .fold(0.0f64, |m, u| m.max(u.abs()));
            history.write_row(&[
                scheme.steps_taken() as f64,
                grid.time(scheme.steps_taken()),
                e.kinetic,
                e.potential,
                e.total,
                e.external_work,
                e.dissipated,
                max_u,
                iterations as f64,
            ])
        };
    let write_frame = |series: &mut FrameSeries, writer: &mut FieldWriter, scheme: &dyn Stepper| {
        writer.fill(scheme.current_position(), &scheme.current_velocity());
        let frame = Frame::new(&mesh.points, &cells)
            .with_point_field(Field::vector("displacement", &writer.displacement))
            .with_point_field(Field::vector("velocity", &writer.velocity));
        series.write_frame(grid.time(scheme.steps_taken()), &frame)
    };

    write_row(&mut history, scheme.as_ref(), 0, &mut max_drift)?;
    write_frame(&mut series, &mut writer, scheme.as_ref())?;
    let n_steps = steps_to_run(&grid, max_steps);
    let wall_seconds = step_loop(n_steps, &input.output, progress, |_, due| {
        let info = scheme.advance().map_err(|e| FemError::Step(Box::new(e)))?;
        if due.row {
            write_row(
                &mut history,
                scheme.as_ref(),
                info.iterations,
                &mut max_drift,
            )?;
        }
        if due.frame {
            write_frame(&mut series, &mut writer, scheme.as_ref())?;
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

/// Turns free-dof vectors into 3-vector point fields for ParaView.
struct FieldWriter<'a> {
    dofmap: &'a fem_assembly::DofMap,
    directions: &'a [[f64; 3]],
    global: Vec<f64>,
    displacement: Vec<f64>,
    velocity: Vec<f64>,
}

impl<'a> FieldWriter<'a> {
    fn new(dofmap: &'a fem_assembly::DofMap, directions: &'a [[f64; 3]]) -> Self {
        Self {
            dofmap,
            directions,
            global: vec![0.0; dofmap.n_dofs()],
            displacement: vec![0.0; 3 * dofmap.n_nodes()],
            velocity: vec![0.0; 3 * dofmap.n_nodes()],
        }
    }

    fn fill(&mut self, x: &[f64], v: &[f64]) {
        for (free, out) in [(x, 0), (v, 1)] {
            self.dofmap.scatter(free, 0.0, &mut self.global);
            let target = if out == 0 {
                &mut self.displacement
            } else {
                &mut self.velocity
            };
            let n_comp = self.dofmap.n_comp();
            for (node, vec3) in target.chunks_mut(3).enumerate() {
                vec3.fill(0.0);
                for (c, dir) in self.directions.iter().enumerate() {
                    let u = self.global[node * n_comp + c];
                    for i in 0..3 {
                        vec3[i] += u * dir[i];
                    }
                }
            }
        }
    }
}

/// A progress bar on a terminal, or a plain line every 10 %.
pub(crate) struct ProgressReport {
    mode: Progress,
    bar: Option<indicatif::ProgressBar>,
    n_steps: u64,
    started: Instant,
}

impl ProgressReport {
    pub(crate) fn new(mode: Progress, n_steps: u64) -> Self {
        let bar = (mode == Progress::Bar).then(|| {
            let bar = indicatif::ProgressBar::new(n_steps);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} steps, {elapsed} elapsed, ETA {eta}",
                )
                .expect("a valid template"),
            );
            bar
        });
        Self {
            mode,
            bar,
            n_steps,
            started: Instant::now(),
        }
    }

    pub(crate) fn at(&self, n: u64) {
        match self.mode {
            Progress::Quiet => {}
            Progress::Bar => {
                if let Some(bar) = &self.bar {
                    bar.set_position(n);
                }
            }
            Progress::Lines => {
                let tenth = (self.n_steps / 10).max(1);
                if n.is_multiple_of(tenth) || n == self.n_steps {
                    eprintln!(
                        "step {n}/{} ({:.0} %), {:.1} s elapsed",
                        self.n_steps,
                        100.0 * n as f64 / self.n_steps as f64,
                        self.started.elapsed().as_secs_f64()
                    );
                }
            }
        }
    }

    pub(crate) fn abandon(&self) {
        if let Some(bar) = &self.bar {
            bar.abandon();
        }
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}
