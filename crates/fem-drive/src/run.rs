//! The loop: open or resume the outputs, step, write on the cadence, checkpoint, stop on an
//! interrupt, summarize.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Instant;

use fem_io::CheckpointError;
use fem_model::Model;
use fem_time::StepReport;

use crate::checkpoint::{self, Restored};
use crate::error::agree;
use crate::lock::FolderLock;
use crate::outputs::{EnergyTracker, Opening, Outputs};
use crate::processes::{Processes, Serial, checkpoint_pattern};
use crate::{CheckpointCadence, Progress, ProgressReport, RunError, RunOptions, RunSummary};

/// Steps the model to the end of its grid (or to step `max_steps`), writing into
/// `options.out_dir`; with `options.resume`, continues from the checkpoint there. A serial run:
/// [`drive_on`] with [`Serial`].
pub fn drive(model: &mut dyn Model, options: &RunOptions) -> Result<RunSummary, RunError> {
    drive_on(model, options, &Serial)
}

/// [`drive`] on the processes of a run: every process calls it with its part of the model,
/// and the loop agrees with the others wherever one of them may fail or stop.
pub fn drive_on(
    model: &mut dyn Model,
    options: &RunOptions,
    processes: &dyn Processes,
) -> Result<RunSummary, RunError> {
    let lock = take_lock(options, processes)?;
    let result = run(model, options, processes);
    drop(lock);
    result
}

/// Process 0 creates the output folder and takes its lock. Collective.
fn take_lock(
    options: &RunOptions,
    processes: &dyn Processes,
) -> Result<Option<FolderLock>, RunError> {
    let result = if processes.rank() == 0 {
        create_folder(options)
            .and_then(|()| FolderLock::take(&options.out_dir))
            .map(Some)
    } else {
        Ok(None)
    };
    agree(processes, result)
}

fn create_folder(options: &RunOptions) -> Result<(), RunError> {
    let dir = &options.out_dir;
    if options.resume && !dir.is_dir() {
        return Err(RunError::Checkpoint(CheckpointError::Missing {
            path: dir.join("checkpoint.fem"),
        }));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| RunError::OutputLocation(fem_io::OutputError::io("create directory", dir, e)))
}

fn run(
    model: &mut dyn Model,
    options: &RunOptions,
    processes: &dyn Processes,
) -> Result<RunSummary, RunError> {
    let grid = model.grid();
    let n_steps = options
        .max_steps
        .map_or(grid.n_steps(), |m| m.min(grid.n_steps()));
    let mut energy = EnergyTracker::new(model.stepper().invariant());
    let mut outputs = if options.resume {
        resume(model, options, processes, &mut energy, n_steps)?
    } else {
        Outputs::open(model, options, processes, Opening::Fresh)?
    };
    let first_step = model.stepper().step_index();
    let resumed_from = options.resume.then_some(first_step);
    let mut report = StepReport::default();
    if !options.resume {
        outputs.write(model, &report, true, true, &mut energy, processes)?;
        outputs.mark_cadence(true, true);
        replace_older_run(&outputs, options, processes)?;
    }
    let mode = match processes.rank() {
        0 => options.progress,
        _ => Progress::Quiet,
    };
    let bar = ProgressReport::new(mode, n_steps);
    let start = Instant::now();
    let mut last_checkpoint = Instant::now();
    let mut written_checkpoint = None;
    for n in first_step + 1..=n_steps {
        let stepped = model
            .stepper_mut()
            .step()
            .and_then(|r| model.after_step(&r).map(|()| r))
            .map_err(RunError::from);
        report = match agree(processes, stepped) {
            Ok(r) => r,
            Err(e) => {
                bar.abandon();
                return Err(e);
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
            processes,
        ) {
            bar.abandon();
            return Err(e);
        }
        outputs.mark_cadence(row_due, frame_due);
        bar.at(n);
        // A signal reaches the processes at different moments: they agree after every step.
        let raised = options
            .interrupt
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::SeqCst));
        let interrupted = processes.any(raised);
        let due = match options.checkpoint {
            CheckpointCadence::Never => false,
            CheckpointCadence::Steps(k) => n % k == 0,
            CheckpointCadence::WallTime(d) => {
                processes.any(processes.rank() == 0 && last_checkpoint.elapsed() >= d)
            }
        };
        let cut_short = n == n_steps && n_steps < grid.n_steps();
        if interrupted || (due && n < n_steps) || cut_short {
            // The checkpoint lists the frames: they must be in the file first.
            if let Err(e) = outputs.frames.flush(processes) {
                bar.abandon();
                return Err(e);
            }
            let saved = checkpoint::save(model, options, &outputs, &energy, processes);
            written_checkpoint = Some(saved.inspect_err(|_| bar.abandon())?);
            last_checkpoint = Instant::now();
        }
        if interrupted {
            bar.abandon();
            return Err(RunError::Interrupted {
                step: n,
                t: model.stepper().time(),
                checkpoint: checkpoint_shown(options, processes),
            });
        }
    }
    // The last frames, compressed in the background, are in the file before the run reports.
    if let Err(e) = outputs.frames.flush(processes) {
        bar.abandon();
        return Err(e);
    }
    bar.finish();
    if written_checkpoint.is_none() && n_steps == grid.n_steps() {
        // The run is complete: a checkpoint left from before would resume nothing.
        let _ = std::fs::remove_file(checkpoint::path(options, processes));
    }
    Ok(RunSummary {
        steps: n_steps,
        frames: outputs.frames.n_frames(),
        pvd: outputs.frames.path().to_path_buf(),
        history: options.out_dir.join("history.csv"),
        energy: energy.summary(),
        wall_seconds: start.elapsed().as_secs_f64(),
        resumed_from,
        checkpoint: written_checkpoint,
        processes: processes.is_distributed().then(|| processes.size()),
    })
}

/// Reads the checkpoints and reopens the outputs where they left them.
fn resume(
    model: &mut dyn Model,
    options: &RunOptions,
    processes: &dyn Processes,
    energy: &mut EnergyTracker,
    n_steps: u64,
) -> Result<Outputs, RunError> {
    let Restored {
        step,
        frame_times,
        history_bytes,
        probes_bytes,
    } = checkpoint::restore(model, options, energy, processes)?;
    if step >= n_steps {
        return Err(RunError::Checkpoint(CheckpointError::Mismatch {
            path: checkpoint::path(options, processes),
            why: format!(
                "it is at step {step} and this run ends at step {n_steps}: nothing is left to run"
            ),
        }));
    }
    let opening = Opening::Resume {
        times: &frame_times,
        history_bytes,
        probes_bytes,
    };
    Outputs::open(model, options, processes, opening)
}

/// Removes what an older run into the same directory left: frames of the same name past this
/// run's first, checkpoints only an older run could resume, and its probes when this model has
/// none. Collective.
fn replace_older_run(
    outputs: &Outputs,
    options: &RunOptions,
    processes: &dyn Processes,
) -> Result<(), RunError> {
    let result = outputs.frames.remove_stale().map_err(RunError::from);
    agree(processes, result)?;
    for extra in &outputs.extras {
        fem_io::FrameSink::remove_stale(extra)?;
    }
    checkpoint::remove_stale(options, processes)?;
    let result = match (outputs.has_probes, processes.rank()) {
        (false, 0) => {
            let stale = options.out_dir.join("probes.csv");
            match std::fs::remove_file(&stale) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(fem_io::OutputError::io("remove", &stale, e).into())
                }
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    };
    agree(processes, result)
}

/// The checkpoint a message names: the file, or the pattern of every process's files.
fn checkpoint_shown(options: &RunOptions, processes: &dyn Processes) -> PathBuf {
    options.out_dir.join(checkpoint_pattern(processes))
}
