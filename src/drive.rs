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
//!
//! # Checkpoints and restart
//! `DIR/checkpoint.fem` holds the model's state ([`Model::save`]), the step, the frames' times
//! and the lengths of the history and probes files at that step (format: `fem_io::checkpoint`).
//! It is written as [`RunOptions::checkpoint`] says (a step count, or wall time by default),
//! at the end of a run cut short by `max_steps`, and when [`RunOptions::interrupt`] is raised
//! (SIGINT, SIGTERM). A run with [`RunOptions::resume`] reads it, restores the model, truncates
//! the history and probes to their recorded lengths, drops frames written after it, and
//! continues: its history and frames are bitwise those of a run that was never interrupted.
//!
//! # An older run in the same directory
//! A fresh run replaces it: once the new run's first frame and `.pvd` are written, older frames
//! of the same name with a higher index, an older checkpoint and an older `probes.csv` (for a
//! model without probes) are removed, so the directory only ever holds one run.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fem_io::{
    Checkpoint, CheckpointArray, CheckpointError, Compression, FrameSeries, HistoryWriter,
    OutputError,
};
use fem_model::Model;
use fem_time::{
    Energy, EnergyBalanceTracker, Invariant, StateField, StateKind, StepError, StepReport,
};

/// The checkpoint's file name in the output directory.
pub const CHECKPOINT_FILE: &str = "checkpoint.fem";

/// When checkpoints are written during a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CheckpointCadence {
    /// Never during the run (still at the end of a cut-short run and when interrupted).
    Never,
    /// Every this many steps.
    Steps(u64),
    /// When this much wall time has passed since the last one.
    WallTime(Duration),
}

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
    /// Stop after this many steps from the start of the run (the last one written), if fewer
    /// than the grid's; a resumed run counts from the start too.
    pub max_steps: Option<u64>,
    /// When checkpoints are written.
    pub checkpoint: CheckpointCadence,
    /// Continue from the checkpoint in `out_dir`.
    pub resume: bool,
    /// Fingerprint of the inputs (a checkpoint of other inputs is refused).
    pub fingerprint: u32,
    /// The model's name, recorded in the checkpoint.
    pub model_name: String,
    /// Raised (by a signal handler) to stop the run after the current step, with a checkpoint.
    pub interrupt: Option<Arc<AtomicBool>>,
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
            checkpoint: CheckpointCadence::WallTime(Duration::from_secs(600)),
            resume: false,
            fingerprint: 0,
            model_name: String::new(),
            interrupt: None,
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
    /// The checkpoint to resume from is missing, damaged or of another run.
    #[error("cannot resume: {0}")]
    Checkpoint(#[from] CheckpointError),
    /// The run was interrupted; a checkpoint was written.
    #[error(
        "interrupted at step {step} (t = {t:e}); a checkpoint was written to {checkpoint}: continue with the same command and --resume"
    )]
    Interrupted {
        /// The last step completed.
        step: u64,
        /// Its time.
        t: f64,
        /// The checkpoint.
        checkpoint: PathBuf,
    },
}

impl RunError {
    /// The process exit code: 2 when nothing was run (the output location, or an initial
    /// state that is not finite), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::OutputLocation(_)
            | RunError::Checkpoint(_)
            | RunError::NonFinite { step: 0, .. } => 2,
            _ => 1,
        }
    }
}

/// What a run did to the scheme's energy, sampled at the steps a history row or a frame is
/// written at.
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
    /// The step the run resumed from (`None` for a fresh run).
    pub resumed_from: Option<u64>,
    /// Where the last checkpoint was written, if one was.
    pub checkpoint: Option<PathBuf>,
}

/// Tracks the energy balance over a run (at the steps a row or a frame is written).
struct EnergyTracker {
    invariant: Invariant,
    balance: EnergyBalanceTracker,
}

impl EnergyTracker {
    fn observe(&mut self, e: &Energy) {
        self.balance.observe(e);
    }

    fn summary(&self) -> Option<EnergySummary> {
        self.balance.first.map(|_| EnergySummary {
            invariant: self.invariant,
            max_change: self.balance.max_change,
            scale: self.balance.scale,
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

/// Steps the model to the end of its grid (or to step `max_steps`), writing into
/// `options.out_dir`; with `options.resume`, continues from the checkpoint there.
pub fn drive(model: &mut dyn Model, options: &RunOptions) -> Result<RunSummary, RunError> {
    let grid = model.grid();
    let n_steps = options
        .max_steps
        .map_or(grid.n_steps(), |m| m.min(grid.n_steps()));
    let checkpoint_path = options.out_dir.join(CHECKPOINT_FILE);
    let mut energy = EnergyTracker {
        invariant: model.stepper().invariant(),
        balance: EnergyBalanceTracker::default(),
    };
    let mut outputs = if options.resume {
        let outputs = resume(model, options, &checkpoint_path, &mut energy)?;
        let at = model.stepper().step_index();
        if at >= n_steps {
            return Err(RunError::Checkpoint(CheckpointError::Mismatch {
                path: checkpoint_path,
                why: format!(
                    "it is at step {at} and this run ends at step {n_steps}: nothing is left to run"
                ),
            }));
        }
        outputs
    } else {
        Outputs::create(model, options)?
    };
    let first_step = model.stepper().step_index();
    let resumed_from = options.resume.then_some(first_step);
    let mut report = StepReport::default();
    if !options.resume {
        outputs.write(model, &report, true, true, &mut energy)?;
        outputs.mark_cadence(true, true);
        outputs.replace_older_run(model, &checkpoint_path)?;
    }
    let bar = ProgressReport::new(options.progress, n_steps);
    let start = Instant::now();
    let mut last_checkpoint = Instant::now();
    let mut written_checkpoint = None;
    for n in first_step + 1..=n_steps {
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
        // On the cadence of an uninterrupted run, and the last step of a cut-short one (which
        // a checkpoint does not count, so that a resumed run writes what the whole run would).
        let row_due = n % options.history_every == 0 || n == grid.n_steps();
        let frame_due = n % options.every == 0 || n == grid.n_steps();
        let last = n == n_steps;
        if let Err(e) = outputs.write(
            model,
            &report,
            row_due || last,
            frame_due || last,
            &mut energy,
        ) {
            bar.abandon();
            return Err(e);
        }
        outputs.mark_cadence(row_due, frame_due);
        bar.at(n);
        let interrupted = options
            .interrupt
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::SeqCst));
        let due = match options.checkpoint {
            CheckpointCadence::Never => false,
            CheckpointCadence::Steps(k) => n % k == 0,
            CheckpointCadence::WallTime(d) => last_checkpoint.elapsed() >= d,
        };
        let cut_short = n == n_steps && n_steps < grid.n_steps();
        if interrupted || (due && n < n_steps) || cut_short {
            save(model, options, &outputs, &energy, &checkpoint_path)?;
            written_checkpoint = Some(checkpoint_path.clone());
            last_checkpoint = Instant::now();
        }
        if interrupted {
            bar.abandon();
            return Err(RunError::Interrupted {
                step: n,
                t: model.stepper().time(),
                checkpoint: checkpoint_path,
            });
        }
    }
    bar.finish();
    if written_checkpoint.is_none() && n_steps == grid.n_steps() && checkpoint_path.exists() {
        // The run is complete: a checkpoint left from before would resume nothing.
        let _ = std::fs::remove_file(&checkpoint_path);
    }
    Ok(RunSummary {
        steps: n_steps,
        frames: outputs.series.n_frames(),
        pvd: outputs.series.pvd_path().to_path_buf(),
        history: outputs.rows.history.path().to_path_buf(),
        energy: energy.summary(),
        wall_seconds: start.elapsed().as_secs_f64(),
        resumed_from,
        checkpoint: written_checkpoint,
    })
}

/// The files a run writes, and the scratch to write them.
struct Outputs {
    series: FrameSeries,
    rows: Rows,
    probes: Option<HistoryWriter>,
    probe_row: Vec<f64>,
    /// The history's length after its last row on the run's cadence.
    history_on_cadence: u64,
    /// The times of the frames on the run's cadence.
    frames_on_cadence: Vec<f64>,
}

impl Outputs {
    /// Opens the outputs of a fresh run: `DIR/BASE.pvd`, `DIR/history.csv`, `DIR/probes.csv`.
    fn create(model: &dyn Model, options: &RunOptions) -> Result<Self, RunError> {
        let out_dir: &Path = &options.out_dir;
        let series = FrameSeries::create(out_dir, &options.base, options.compression)
            .map_err(RunError::OutputLocation)?;
        let columns = history_columns(model);
        let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
        let history = HistoryWriter::create(out_dir.join("history.csv"), &refs)
            .map_err(RunError::OutputLocation)?;
        let probes = match probe_columns(model) {
            None => None,
            Some(columns) => {
                let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
                Some(
                    HistoryWriter::create(out_dir.join("probes.csv"), &refs)
                        .map_err(RunError::OutputLocation)?,
                )
            }
        };
        Ok(Self {
            series,
            rows: Rows {
                history,
                values: Vec::new(),
                cells: Vec::new(),
            },
            probes,
            probe_row: Vec::new(),
            history_on_cadence: 0,
            frames_on_cadence: Vec::new(),
        })
    }

    /// Records what of the step just written an uninterrupted run would have written too.
    fn mark_cadence(&mut self, row: bool, frame: bool) {
        if row {
            self.history_on_cadence = self.rows.history.len();
        }
        if frame {
            let times = self.series.times();
            if let Some(&t) = times.last() {
                self.frames_on_cadence.push(t);
            }
        }
    }

    /// Removes what an older run into the same directory left: frames of the same name past
    /// this run's first, its checkpoint, and its probes when this model has none.
    fn replace_older_run(&self, model: &dyn Model, checkpoint: &Path) -> Result<(), RunError> {
        self.series.remove_frames_from(self.series.n_frames())?;
        for stale in [
            Some(checkpoint.to_path_buf()),
            self.probes
                .is_none()
                .then(|| self.series.dir().join("probes.csv")),
        ]
        .into_iter()
        .flatten()
        {
            if stale.exists() {
                std::fs::remove_file(&stale).map_err(|e| OutputError::io("remove", &stale, e))?;
            }
        }
        let _ = model;
        Ok(())
    }

    /// Writes what is due at the model's current step: probes every step, a history row and
    /// a frame when asked.
    fn write(
        &mut self,
        model: &mut dyn Model,
        report: &StepReport,
        row: bool,
        frame: bool,
        energy: &mut EnergyTracker,
    ) -> Result<(), RunError> {
        let (t, step) = (model.stepper().time(), model.stepper().step_index());
        // The balance is sampled where a row or a frame is written (a model's energy can cost
        // as much as its step: a solid's strain energy is a pass over every cell).
        if (row || frame)
            && let Some(e) = model.energy()
        {
            energy.observe(&e);
        }
        if let Some(p) = self.probes.as_mut() {
            self.probe_row.clear();
            self.probe_row.push(t);
            model.probe_values(&mut self.probe_row);
            if self.probe_row.iter().any(|v| !v.is_finite()) {
                return Err(RunError::NonFinite {
                    what: "probes".into(),
                    step,
                    t,
                });
            }
            p.write_row(&self.probe_row)?;
        }
        if row {
            self.rows.write(model, report)?;
        }
        if frame {
            let frame = model.frame();
            if let Some(name) = frame.first_non_finite_field() {
                return Err(RunError::NonFinite {
                    what: format!("frame field '{name}'"),
                    step,
                    t,
                });
            }
            self.series.write_frame(t, &frame)?;
        }
        Ok(())
    }
}

fn history_columns(model: &dyn Model) -> Vec<String> {
    let mut columns: Vec<String> = COMMON_COLUMNS.map(String::from).to_vec();
    columns.extend(model.history_columns());
    columns
}

fn probe_columns(model: &dyn Model) -> Option<Vec<String>> {
    let probes = model.probe_columns();
    (!probes.is_empty()).then(|| {
        let mut columns = vec!["t".to_string()];
        columns.extend(probes);
        columns
    })
}

/// Writes the checkpoint of the model's current step.
fn save(
    model: &dyn Model,
    options: &RunOptions,
    outputs: &Outputs,
    energy: &EnergyTracker,
    path: &Path,
) -> Result<(), RunError> {
    let mut c = Checkpoint::new(options.fingerprint, &options.model_name);
    c.integers
        .push(("step".into(), model.stepper().step_index()));
    c.integers
        .push(("history_bytes".into(), outputs.history_on_cadence));
    c.integers.push((
        "probes_bytes".into(),
        outputs.probes.as_ref().map_or(0, HistoryWriter::len),
    ));
    c.arrays.push(CheckpointArray {
        name: "drive:frame_times".into(),
        kind: StateKind::Other.code(),
        values: outputs.frames_on_cadence.clone(),
    });
    c.arrays.push(CheckpointArray {
        name: "drive:energy".into(),
        kind: StateKind::Other.code(),
        values: vec![
            energy.balance.first.map_or(0.0, |_| 1.0),
            energy.balance.first.unwrap_or(0.0),
            energy.balance.max_change,
            energy.balance.scale,
        ],
    });
    for field in model.save() {
        c.arrays.push(CheckpointArray {
            name: field.name.into_owned(),
            kind: field.kind.code(),
            values: field.values.into_owned(),
        });
    }
    c.write(path)?;
    Ok(())
}

/// Reads the checkpoint, restores the model and reopens the outputs where it left them.
fn resume(
    model: &mut dyn Model,
    options: &RunOptions,
    path: &Path,
    energy: &mut EnergyTracker,
) -> Result<Outputs, RunError> {
    let c = Checkpoint::read(path, options.fingerprint)?;
    let mismatch = |why: String| {
        RunError::Checkpoint(CheckpointError::Mismatch {
            path: path.to_path_buf(),
            why,
        })
    };
    if c.model != options.model_name {
        return Err(mismatch(format!(
            "it was written by model.{}, this input is model.{}",
            c.model, options.model_name
        )));
    }
    let integer = |name: &str| {
        c.integer(name)
            .ok_or_else(|| mismatch(format!("it has no '{name}'")))
    };
    let step = integer("step")?;
    if step > model.grid().n_steps() {
        return Err(mismatch(format!(
            "it is at step {step}, past this run's last step {}",
            model.grid().n_steps()
        )));
    }
    let fields: Vec<StateField<'_>> = c
        .arrays
        .iter()
        .filter(|a| !a.name.starts_with("drive:"))
        .map(|a| StateField {
            name: Cow::Owned(a.name.clone()),
            kind: StateKind::from_code(a.kind),
            values: Cow::Borrowed(&a.values),
        })
        .collect();
    model
        .restore(step, &fields)
        .map_err(|e| mismatch(e.to_string()))?;
    let array = |name: &str| {
        c.array(name)
            .map(|a| a.values.clone())
            .ok_or_else(|| mismatch(format!("it has no '{name}'")))
    };
    let e = array("drive:energy")?;
    if e.len() == 4 {
        energy.balance.first = (e[0] != 0.0).then_some(e[1]);
        energy.balance.max_change = e[2];
        energy.balance.scale = e[3];
    }
    let times = array("drive:frame_times")?;
    let out_dir: &Path = &options.out_dir;
    let series = FrameSeries::resume(out_dir, &options.base, options.compression, &times)?;
    let columns = history_columns(model);
    let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
    let history_bytes = integer("history_bytes")?;
    let history = HistoryWriter::resume(out_dir.join("history.csv"), &refs, history_bytes)?;
    let probes = match probe_columns(model) {
        None => None,
        Some(columns) => {
            let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
            Some(HistoryWriter::resume(
                out_dir.join("probes.csv"),
                &refs,
                integer("probes_bytes")?,
            )?)
        }
    };
    Ok(Outputs {
        series,
        rows: Rows {
            history,
            values: Vec::new(),
            cells: Vec::new(),
        },
        probes,
        probe_row: Vec::new(),
        history_on_cadence: history_bytes,
        frames_on_cadence: times,
    })
}

/// A progress bar on a terminal, or a plain line every 10 % (the serial run loop's, and rank
/// 0's of a distributed run).
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
                    // A closed stderr does not stop the run.
                    use std::io::Write as _;
                    let _ = writeln!(
                        std::io::stderr(),
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
