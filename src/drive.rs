//! The one run loop: step a [`Model`] and write its ParaView frames, its history and its
//! probes, with progress, the energy summary and the errors that carry exit codes.
//!
//! Output contract (tests rely on it): a run into `DIR` with base name `X` writes `DIR/X.pvd`,
//! `DIR/X_000000.vtu`, … (frame 0 is the initial state, then every `every` steps and always the
//! last step), `DIR/history.csv` with `step,t,kinetic,potential,total` then the model's own
//! columns (a row every `history_every` steps and the last step; an energy the model does not
//! have is an empty cell), and `DIR/probes.csv` (`t` then the model's probes, every step) when
//! the model has probes. The `.pvd` is rewritten atomically after every frame and each
//! history row is flushed, so an interrupted or failed run leaves valid files behind. No value
//! that is not finite is written: the run stops before writing it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use fem_io::{Compression, FrameSeries, HistoryWriter, OutputError};
use fem_model::Model;
use fem_time::{Energy, Invariant, StepError, StepReport};

/// The common first columns of every `history.csv`.
pub const COMMON_COLUMNS: [&str; 5] = ["step", "t", "kinetic", "potential", "total"];

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

/// Where and how often a run writes.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Output directory (created if missing).
    pub out_dir: PathBuf,
    /// Base name of the `.pvd` and `.vtu` files.
    pub base: String,
    /// A frame every this many steps (and the last step).
    pub every: u64,
    /// A history row every this many steps (and the last step).
    pub history_every: u64,
    /// `.vtu` compression.
    pub compression: Compression,
    /// Progress reporting.
    pub progress: Progress,
    /// Stop after this many steps (the last one written), if fewer than the grid's.
    pub max_steps: Option<u64>,
}

impl RunOptions {
    /// A frame and a row every step into `out_dir/base.pvd`, LZ4 compression, quiet.
    pub fn new(out_dir: impl Into<PathBuf>, base: impl Into<String>) -> Self {
        Self {
            out_dir: out_dir.into(),
            base: base.into(),
            every: 1,
            history_every: 1,
            compression: Compression::Lz4,
            progress: Progress::Quiet,
            max_steps: None,
        }
    }
}

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The output could not be created where it was asked for (nothing was run).
    #[error("output: {0}")]
    OutputLocation(OutputError),
    /// A step failed.
    #[error("run failed: {0}")]
    Step(#[from] StepError),
    /// A value about to be written is not finite.
    #[error(
        "run failed: the {what} became non-finite at step {step} (t = {t:e}); nothing non-finite was written"
    )]
    NonFinite {
        /// What was not finite.
        what: String,
        /// The step.
        step: u64,
        /// Its time.
        t: f64,
    },
    /// Writing output failed during the run.
    #[error("output: {0}")]
    Output(#[from] OutputError),
}

impl RunError {
    /// The process exit code: 2 when nothing was run (the output location, or an initial
    /// state that is not finite), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::OutputLocation(_) | RunError::NonFinite { step: 0, .. } => 2,
            _ => 1,
        }
    }
}

/// What a run did to the scheme's energy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergySummary {
    /// What the scheme promises of `total + dissipated − external_work`.
    pub invariant: Invariant,
    /// Its largest change over the run, `max |B_n − B_0|`.
    pub max_change: f64,
    /// The scale it is measured against: the largest of `|kinetic|`, `|potential|`, `|total|`,
    /// `|external_work|`, `|dissipated|` over the run.
    pub scale: f64,
}

impl EnergySummary {
    /// `max_change / scale` (0 when the scale is 0).
    pub fn relative_change(&self) -> f64 {
        if self.scale > 0.0 {
            self.max_change / self.scale
        } else {
            0.0
        }
    }
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
    /// The energy balance, when the model has an energy.
    pub energy: Option<EnergySummary>,
    /// Wall time of the stepping loop, in seconds.
    pub wall_seconds: f64,
}

/// Tracks the energy balance over a run.
struct EnergyTracker {
    invariant: Invariant,
    first: Option<f64>,
    max_change: f64,
    scale: f64,
}

impl EnergyTracker {
    fn observe(&mut self, e: &Energy) {
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
    }

    fn summary(&self) -> Option<EnergySummary> {
        self.first.map(|_| EnergySummary {
            invariant: self.invariant,
            max_change: self.max_change,
            scale: self.scale,
        })
    }
}

/// Writes history rows, refusing non-finite values.
struct Rows {
    history: HistoryWriter,
    values: Vec<f64>,
    cells: Vec<Option<f64>>,
}

impl Rows {
    fn write(&mut self, model: &dyn Model, report: &StepReport) -> Result<(), RunError> {
        let stepper = model.stepper();
        let (step, t) = (stepper.step_index(), stepper.time());
        let energy = model.energy();
        self.values.clear();
        model.history_values(report, &mut self.values);
        self.cells.clear();
        self.cells.extend([Some(step as f64), Some(t)]);
        match energy {
            Some(e) => self
                .cells
                .extend([Some(e.kinetic), Some(e.potential), Some(e.total)]),
            None => self.cells.extend([None; 3]),
        }
        self.cells.extend(self.values.iter().map(|&v| Some(v)));
        if let Some(k) = self
            .cells
            .iter()
            .position(|c| c.is_some_and(|v| !v.is_finite()))
        {
            return Err(RunError::NonFinite {
                what: format!("history column '{}'", self.history.columns()[k]),
                step,
                t,
            });
        }
        self.history.write_row_with_gaps(&self.cells)?;
        Ok(())
    }
}

/// Steps the model to the end of its grid (or for at most `max_steps` steps), writing into
/// `options.out_dir`.
pub fn drive(model: &mut dyn Model, options: &RunOptions) -> Result<RunSummary, RunError> {
    let grid = model.grid();
    let n_steps = options
        .max_steps
        .map_or(grid.n_steps(), |m| m.min(grid.n_steps()));
    let (mut series, history, mut probes) = open_outputs(model, options)?;
    let mut rows = Rows {
        history,
        values: Vec::new(),
        cells: Vec::new(),
    };
    let mut energy = EnergyTracker {
        invariant: model.stepper().invariant(),
        first: None,
        max_change: 0.0,
        scale: 0.0,
    };
    let mut probe_row = Vec::new();
    let mut report = StepReport::default();
    let mut write = |model: &mut dyn Model,
                     report: &StepReport,
                     row: bool,
                     frame: bool,
                     series: &mut FrameSeries|
     -> Result<(), RunError> {
        if let Some(e) = model.energy() {
            energy.observe(&e);
        }
        if let Some(p) = probes.as_mut() {
            probe_row.clear();
            probe_row.push(model.stepper().time());
            model.probe_values(&mut probe_row);
            if probe_row.iter().any(|v| !v.is_finite()) {
                return Err(RunError::NonFinite {
                    what: "probes".into(),
                    step: model.stepper().step_index(),
                    t: model.stepper().time(),
                });
            }
            p.write_row(&probe_row)?;
        }
        if row {
            rows.write(model, report)?;
        }
        if frame {
            let (t, step) = (model.stepper().time(), model.stepper().step_index());
            let frame = model.frame();
            if let Some(name) = frame.first_non_finite_field() {
                return Err(RunError::NonFinite {
                    what: format!("frame field '{name}'"),
                    step,
                    t,
                });
            }
            series.write_frame(t, &frame)?;
        }
        Ok(())
    };
    write(model, &report, true, true, &mut series)?;
    let bar = ProgressReport::new(options.progress, n_steps);
    let start = Instant::now();
    for n in 1..=n_steps {
        let result = model
            .stepper_mut()
            .step()
            .and_then(|r| model.after_step(&r).map(|()| r));
        report = match result {
            Ok(r) => r,
            Err(e) => {
                bar.abandon();
                return Err(e.into());
            }
        };
        let row = n % options.history_every == 0 || n == n_steps;
        let frame = n % options.every == 0 || n == n_steps;
        if let Err(e) = write(model, &report, row, frame, &mut series) {
            bar.abandon();
            return Err(e);
        }
        bar.at(n);
    }
    bar.finish();
    Ok(RunSummary {
        steps: n_steps,
        frames: series.n_frames(),
        pvd: series.pvd_path().to_path_buf(),
        history: rows.history.path().to_path_buf(),
        energy: energy.summary(),
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}

/// Opens a run's outputs: the frame series, the history and the probes (if any).
#[allow(clippy::type_complexity)]
fn open_outputs(
    model: &dyn Model,
    options: &RunOptions,
) -> Result<(FrameSeries, HistoryWriter, Option<HistoryWriter>), RunError> {
    let out_dir: &Path = &options.out_dir;
    let series = FrameSeries::create(out_dir, &options.base, options.compression)
        .map_err(RunError::OutputLocation)?;
    let mut columns: Vec<String> = COMMON_COLUMNS.map(String::from).to_vec();
    columns.extend(model.history_columns());
    let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
    let history = HistoryWriter::create(out_dir.join("history.csv"), &refs)
        .map_err(RunError::OutputLocation)?;
    let probe_columns = model.probe_columns();
    let probes = if probe_columns.is_empty() {
        None
    } else {
        let mut columns = vec!["t".to_string()];
        columns.extend(probe_columns);
        let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
        Some(
            HistoryWriter::create(out_dir.join("probes.csv"), &refs)
                .map_err(RunError::OutputLocation)?,
        )
    };
    Ok((series, history, probes))
}

/// A progress bar on a terminal, or a plain line every 10 %.
struct ProgressReport {
    mode: Progress,
    bar: Option<indicatif::ProgressBar>,
    n_steps: u64,
    started: Instant,
}

impl ProgressReport {
    fn new(mode: Progress, n_steps: u64) -> Self {
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

    fn at(&self, n: u64) {
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

    fn abandon(&self) {
        if let Some(bar) = &self.bar {
            bar.abandon();
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}
