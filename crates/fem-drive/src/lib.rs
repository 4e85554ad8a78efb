//! The one run loop of `fem`: step a [`fem_model::Model`] and write its ParaView frames, its
//! history and its probes, with progress, checkpoints, the energy summary and the errors that
//! carry exit codes — on one process ([`drive`]) or on the processes of a distributed run
//! ([`drive_on`] with their [`Processes`]), by the same code.
//!
//! # Output contract (tests rely on it)
//! A run into `DIR` with base name `X` writes `DIR/X.pvd` and its frames (serial: `X_000000.vtu`,
//! …; distributed: each process's piece `X_000000_R.vtu` and process 0's `X_000000.pvtu`), or,
//! with [`RunOptions::format`] `SeriesFormat::VtkHdf` (serial runs), one `DIR/X.vtkhdf` holding
//! every frame as a time step (laid out for [`RunOptions::frame_capacity`] frames):
//! frame 0 is the initial state, then every `every` steps and always the last step;
//! `DIR/history.csv` with `step,t,kinetic,potential,total` then the model's own columns (a row
//! every `history_every` steps and the last step; an energy the model does not have is an empty
//! cell); and `DIR/probes.csv` (`t` then the model's probes, every step) when the model has
//! probes. History and probes are written by process 0; every process evaluates their values
//! (a distributed model's energies are sums over all processes). The `.pvd` is rewritten
//! atomically after every frame (a `.vtkhdf` step is published by one write after its data),
//! and each history row is flushed, so an interrupted or failed run leaves valid files behind.
//! No value that is not finite is written: the run stops before writing it.
//!
//! # Checkpoints and restart
//! Each process writes its checkpoint (`DIR/checkpoint.fem` serially, `checkpoint_R_of_P.fem`
//! for process `R` of `P`): the model's state ([`fem_model::Model::save`]), the step, the
//! frames' times, the lengths of the history and probes files at that step, and the run's
//! identity (format: `fem_io::checkpoint`). It is written as [`RunOptions::checkpoint`] says,
//! at the end of a run cut short by `max_steps`, and when [`RunOptions::interrupt`] is raised on
//! any process (SIGINT, SIGTERM): the processes agree after every step, so all of them
//! checkpoint the same step. A run with [`RunOptions::resume`] reads the checkpoints, checks that
//! every process's is of the same run and the same step before it touches any file, restores
//! the model, truncates the history and probes to their recorded lengths, drops frames written
//! after it, and continues: its history and frames are bitwise those of a run that was never
//! interrupted.
//!
//! # An older run in the same directory
//! A fresh run replaces it: once the new run's first frame and `.pvd` are written, older frames
//! of the same name with a higher index, an older run's frames in the other format (`X.vtkhdf`,
//! or `X.pvd` and its frames), checkpoints that could only resume an older run, and an older
//! `probes.csv` (for a model without probes) are removed, so the directory only ever holds one
//! run. A lock file (`DIR/.fem.lock`, holding the process id of the run's process 0) keeps a
//! second run out of a folder while the first is alive.
//!
//! # Energy
//! The energy balance `total + dissipated − external_work − reaction_work` is observed at the
//! history rows (where the energy is evaluated anyway: a solid's strain energy costs a pass over
//! its cells) and summarized at the end ([`EnergySummary`]).

mod checkpoint;
mod error;
mod gathered;
mod lock;
mod outputs;
pub mod processes;
mod progress;
mod run;

pub use error::RunError;
pub use processes::{Processes, Serial};
pub use progress::ProgressReport;
pub use run::{drive, drive_on};

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use fem_io::{Compression, SeriesFormat};
use fem_time::Invariant;

/// The common first columns of every `history.csv`.
pub const COMMON_COLUMNS: [&str; 5] = ["step", "t", "kinetic", "potential", "total"];

/// When checkpoints are written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CheckpointCadence {
    /// Never during the run (still at the end of a cut-short run and when interrupted).
    Never,
    /// Every this many steps.
    Steps(u64),
    /// When this much wall time has passed since the last one (measured on process 0, whose
    /// decision every process follows).
    WallTime(Duration),
}

/// How the run reports progress (process 0 only).
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
    /// Base name of the `.pvd` and frame files (or of the `.vtkhdf`).
    pub base: String,
    /// A frame every this many steps (and the last step).
    pub every: u64,
    /// A history row every this many steps (and the last step).
    pub history_every: u64,
    /// How the frames are written: `.pvd` + `.vtu` (with their compression) or one `.vtkhdf`.
    pub format: SeriesFormat,
    /// Progress reporting.
    pub progress: Progress,
    /// Stop after this many steps from the start of the run (the last one written), if fewer
    /// than the grid's; a resumed run counts from the start too.
    pub max_steps: Option<u64>,
    /// When checkpoints are written.
    pub checkpoint: CheckpointCadence,
    /// Continue from the checkpoint(s) in `out_dir`.
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
            format: SeriesFormat::Pvd(Compression::Lz4),
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

impl RunOptions {
    /// The frames a run of `model` with these options writes when it is not interrupted:
    /// frame 0, one every `every` steps and the last step, to `max_steps` when that is fewer
    /// than the grid's steps (what a VTKHDF file is laid out for).
    pub fn frame_capacity(&self, model: &dyn fem_model::Model) -> usize {
        let n_steps = model.grid().n_steps();
        let n = self.max_steps.map_or(n_steps, |m| m.min(n_steps));
        (n.div_ceil(self.every.max(1)) + 1).min(usize::MAX as u64) as usize
    }
}

/// What a run did to the scheme's energy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergySummary {
    /// What the scheme promises of `total + dissipated − external_work − reaction_work`.
    pub invariant: Invariant,
    /// Its largest change over the run, `max |B_n − B_0|`.
    pub max_change: f64,
    /// The scale it is measured against: the largest of `|kinetic|`, `|potential|`, `|total|`,
    /// `|external_work|`, `|dissipated|` over the run.
    pub scale: f64,
    /// The history rows it was observed at.
    pub rows: usize,
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
    /// The file ParaView opens: the `.pvd` (or the `.vtkhdf`).
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
    /// The processes of a distributed run (`None` for a serial one).
    pub processes: Option<usize>,
}
