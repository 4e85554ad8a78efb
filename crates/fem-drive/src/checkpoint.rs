//! A run's checkpoints: what each process writes, and how a resumed run reads them back and
//! checks, before touching any file, that every process's is of the same run and step.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use fem_io::{Checkpoint, CheckpointArray, CheckpointError, OutputError};
use fem_model::Model;
use fem_time::{StateField, StateKind};

use crate::error::agree;
use crate::outputs::{EnergyTracker, Outputs};
use crate::processes::{Processes, checkpoint_name, is_other_runs_checkpoint};
use crate::{RunError, RunOptions};

/// Array names the run loop keeps beside the model's state.
const FRAME_TIMES: &str = "drive:frame_times";
const ENERGY: &str = "drive:energy";

/// This process's checkpoint file.
pub(crate) fn path(options: &RunOptions, processes: &dyn Processes) -> PathBuf {
    options.out_dir.join(checkpoint_name(processes))
}

/// What a checkpoint gave back: the step, and where the outputs were.
pub(crate) struct Restored {
    pub step: u64,
    pub frame_times: Vec<f64>,
    pub history_bytes: u64,
    pub probes_bytes: u64,
}

/// Writes this process's checkpoint of the model's current step. Collective (failures agreed).
pub(crate) fn save(
    model: &dyn Model,
    options: &RunOptions,
    outputs: &Outputs,
    energy: &EnergyTracker,
    processes: &dyn Processes,
) -> Result<PathBuf, RunError> {
    let path = path(options, processes);
    let mut c = Checkpoint::new(options.fingerprint, &options.model_name);
    c.integers
        .push(("step".into(), model.stepper().step_index()));
    c.integers
        .push(("history_bytes".into(), outputs.history_on_cadence));
    c.integers
        .push(("probes_bytes".into(), outputs.probes_len()));
    c.integers
        .push(("processes".into(), processes.size() as u64));
    c.arrays.push(CheckpointArray {
        name: FRAME_TIMES.into(),
        kind: StateKind::Other.code(),
        values: outputs.frames_on_cadence.clone(),
    });
    c.arrays.push(CheckpointArray {
        name: ENERGY.into(),
        kind: StateKind::Other.code(),
        values: vec![
            energy.balance.first.map_or(0.0, |_| 1.0),
            energy.balance.first.unwrap_or(0.0),
            energy.balance.max_change,
            energy.balance.scale,
            energy.balance.observed as f64,
        ],
    });
    for field in model.save() {
        c.arrays.push(CheckpointArray {
            name: field.name.into_owned(),
            kind: field.kind.code(),
            values: field.values.into_owned(),
        });
    }
    let result = c.write(&path).map_err(RunError::from);
    agree(processes, result)?;
    Ok(path)
}

/// Reads this process's checkpoint and restores the model and the energy balance from it;
/// then the processes agree that every checkpoint was read — each of this input (its
/// fingerprint) and this model — and that all are at the same step (a checkpoint of another
/// interruption of the run is named). Nothing in the output folder is touched before.
/// Collective.
pub(crate) fn restore(
    model: &mut dyn Model,
    options: &RunOptions,
    energy: &mut EnergyTracker,
    processes: &dyn Processes,
) -> Result<Restored, RunError> {
    let path = path(options, processes);
    let result = read_and_restore(model, options, energy, &path);
    let restored = agree(processes, result)?;
    let steps = processes.all_gather(restored.step);
    if let Some(rank) = (0..steps.len()).find(|&r| steps[r] != steps[0]) {
        return Err(RunError::OnProcess {
            rank,
            code: 2,
            message: format!(
                "cannot resume: {}: it is at step {}, rank 0's at step {}; the checkpoints of a run's processes must come from the same interruption (start afresh without --resume)",
                options.out_dir.join(other_name(processes, rank)).display(),
                steps[rank],
                steps[0]
            ),
        });
    }
    Ok(restored)
}

/// Process `rank`'s checkpoint name.
fn other_name(processes: &dyn Processes, rank: usize) -> String {
    if processes.is_distributed() {
        format!("checkpoint_{rank}_of_{}.fem", processes.size())
    } else {
        "checkpoint.fem".into()
    }
}

fn read_and_restore(
    model: &mut dyn Model,
    options: &RunOptions,
    energy: &mut EnergyTracker,
    path: &Path,
) -> Result<Restored, RunError> {
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
    if let Some(a) = c
        .arrays
        .iter()
        .find(|a| a.values.iter().any(|v| v.is_nan()))
    {
        return Err(mismatch(format!(
            "its array '{}' holds a value that is not a number",
            a.name
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
    let frame_times = array(FRAME_TIMES)?;
    if frame_times.iter().any(|t| !t.is_finite()) {
        return Err(mismatch("a frame time in it is not finite".into()));
    }
    let e = array(ENERGY)?;
    if e.len() >= 4 {
        energy.balance.first = (e[0] != 0.0).then_some(e[1]);
        energy.balance.max_change = e[2];
        energy.balance.scale = e[3];
        energy.balance.observed = e.get(4).map_or(0, |&n| n as usize);
    }
    Ok(Restored {
        step,
        frame_times,
        history_bytes: integer("history_bytes")?,
        probes_bytes: c.integer("probes_bytes").unwrap_or(0),
    })
}

/// Removes the checkpoints an older run left that this fresh run makes useless: this
/// process's own, and (process 0) those of a run on other processes. Collective.
pub(crate) fn remove_stale(
    options: &RunOptions,
    processes: &dyn Processes,
) -> Result<(), RunError> {
    let result = (|| -> Result<(), RunError> {
        let own = path(options, processes);
        remove_if_present(&own)?;
        if processes.rank() != 0 {
            return Ok(());
        }
        let dir = &options.out_dir;
        let entries = std::fs::read_dir(dir).map_err(|e| OutputError::io("list", dir, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            if entry.file_type().is_ok_and(|t| t.is_file())
                && name
                    .to_str()
                    .is_some_and(|n| is_other_runs_checkpoint(n, processes))
            {
                remove_if_present(&entry.path())?;
            }
        }
        Ok(())
    })();
    agree(processes, result)
}

fn remove_if_present(path: &Path) -> Result<(), RunError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(OutputError::io("remove", path, e).into()),
    }
}
