//! Why a run stopped, with the exit code it carries.

use std::path::PathBuf;

use fem_io::{CheckpointError, OutputError};
use fem_time::{EvalError, StepError};

use crate::processes::Processes;

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The output could not be created where it was asked for (nothing was run).
    #[error("output: {0}")]
    OutputLocation(OutputError),
    /// Another run is writing into the same output folder.
    #[error(
        "output: {dir} is in use by another run (process {pid}, lock file {lock}): wait for it to end, or write elsewhere with -o"
    )]
    InUse {
        /// The output folder.
        dir: PathBuf,
        /// The other run's process id.
        pid: u32,
        /// The lock file.
        lock: PathBuf,
    },
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
    /// The checkpoint to resume from is missing, damaged or of another run, or the outputs it
    /// lists are not there (nothing was run).
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
        /// The checkpoint (a pattern naming every process's in a distributed run).
        checkpoint: PathBuf,
    },
    /// A failure met by one process (an MPI rank) of a distributed run, as every process
    /// reports it.
    #[error("rank {rank}: {message}")]
    OnProcess {
        /// The lowest process that met it.
        rank: usize,
        /// Its exit code there.
        code: u8,
        /// What it said.
        message: String,
    },
}

impl RunError {
    /// The process exit code: 2 when nothing was run (the output location, a checkpoint that
    /// cannot be resumed), 1 otherwise — also for a value that is not finite at step 0: the
    /// input passed the checks `fem check` makes (which refuse an initial energy that is not
    /// a number, naming the key: `fem_model::build`), so what fails there is the run.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::OutputLocation(_) | RunError::InUse { .. } | RunError::Checkpoint(_) => 2,
            RunError::OnProcess { code, .. } => *code,
            _ => 1,
        }
    }

    /// A failure this process only learnt of from another (a step that failed elsewhere).
    fn is_echo(&self) -> bool {
        matches!(
            self,
            RunError::Step(StepError::Evaluation {
                source: EvalError::Elsewhere,
                ..
            })
        )
    }
}

/// `result` when every process's is `Ok`; else, on every process, the failure of the lowest
/// process that met one (a serial run's own error as it is). Collective.
pub(crate) fn agree<T>(
    processes: &dyn Processes,
    result: Result<T, RunError>,
) -> Result<T, RunError> {
    if !processes.is_distributed() {
        return result;
    }
    let mine = match &result {
        Err(e) if !e.is_echo() => Some(format!("{}\u{0}{e}", e.exit_code())),
        _ => None,
    };
    match processes.first_message(mine) {
        None => result,
        Some((rank, text)) => {
            let (code, message) = text.split_once('\u{0}').unwrap_or(("1", &text));
            Err(RunError::OnProcess {
                rank,
                code: code.parse().unwrap_or(1),
                message: message.to_string(),
            })
        }
    }
}
