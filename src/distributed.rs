//! `fem run` under `mpirun` (feature `mpi`): the explicit DEF_EXP solid on every process of
//! `MPI_COMM_WORLD` by domain decomposition (crate `fem-mpi`). Without a launcher, `fem run`
//! is the serial run loop, as in a build without the feature.
//!
//! Every rank reads the input; an input error is printed once (by rank 0) and every rank
//! exits 2. A failed run stops every rank with exit 1, the message naming the rank. SIGINT or
//! SIGTERM (a scheduler's warning before the wall-time limit, delivered to every rank or to
//! one) stops every rank after the same step with a checkpoint each, exit 1, as the serial
//! run does.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use fem_model::resources::Budget;
use fem_mpi::mpi::traits::Communicator;
use fem_mpi::{DistributedOptions, DistributedSolidRun};

use crate::drive::{Progress, ProgressReport};
use crate::input::ModelInput;

/// Whether this process was started by an MPI launcher (MPICH's Hydra, Open MPI, PMIx).
pub fn launched_by_mpirun() -> bool {
    ["PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// Runs `file` on the processes of `MPI_COMM_WORLD`, writing into `out_dir`. Returns `None`
/// when the input is not for a distributed run and there is one process (the caller runs it
/// serially). `interrupt`, raised on any rank (a signal), stops every rank after the same
/// step with a checkpoint each.
pub fn run(
    file: &Path,
    out_dir: &Path,
    base: &str,
    max_steps: Option<u64>,
    resume: bool,
    progress: Progress,
    interrupt: Option<Arc<AtomicBool>>,
) -> Option<ExitCode> {
    let Some(universe) = fem_mpi::mpi::initialize() else {
        let _ = writeln!(std::io::stderr(), "error: MPI is already initialized");
        return Some(ExitCode::from(1));
    };
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let fail = |message: String, code: u8| {
        if rank == 0 {
            let _ = writeln!(std::io::stderr(), "error: {message}");
        }
        Some(ExitCode::from(code))
    };
    let input = match crate::load(file) {
        Ok(i) => i,
        Err(e) => return fail(e.to_string(), e.exit_code()),
    };
    let section = match &input.model {
        ModelInput::Solid(s) => s.as_ref(),
        _ if size == 1 => return None,
        other => {
            return fail(
                format!(
                    "{}: model.{}: only the solid (model.solid, time.scheme: def_exp) runs on more than one MPI process; start this input without mpirun",
                    file.display(),
                    other.name()
                ),
                2,
            );
        }
    };
    let budget = match Budget::from_machine(Some(out_dir)) {
        Ok(b) => b,
        Err(e) => return fail(format!("{}: {e}", file.display()), 2),
    };
    let fingerprint = match crate::input_fingerprint(file, &input) {
        Ok(f) => f,
        Err(e) => return fail(e.to_string(), e.exit_code()),
    };
    let sections = input.sections(file, budget);
    let mut run = match DistributedSolidRun::new(world.duplicate(), section, &sections) {
        Ok(r) => r,
        Err(e) => return fail(format!("{}: {e}", file.display()), 2),
    };
    let options = DistributedOptions {
        out_dir: out_dir.to_path_buf(),
        base: base.to_string(),
        every: input.output.every,
        history_every: input.output.history_every,
        compression: fem_model::build::compression(input.output.compression),
        max_steps,
        checkpoint_every: input.output.checkpoint_every,
        resume,
        fingerprint,
        interrupt,
    };
    let n_steps = max_steps.map_or(run.grid().n_steps(), |m| m.min(run.grid().n_steps()));
    let mode = if rank == 0 { progress } else { Progress::Quiet };
    let bar = ProgressReport::new(mode, n_steps);
    let result = run.run_reporting(&options, |n| bar.at(n));
    match &result {
        Ok(_) => bar.finish(),
        Err(_) => bar.abandon(),
    }
    match result {
        Ok(summary) => {
            if rank == 0 && progress != Progress::Quiet {
                let _ = writeln!(
                    std::io::stdout(),
                    "{} steps on {size} MPI processes in {:.3} s ({:.1} steps/s); {} frames: {}",
                    summary.steps,
                    summary.wall_seconds,
                    summary.steps as f64 / summary.wall_seconds.max(1e-12),
                    summary.frames,
                    summary.pvd.display()
                );
                if let Some(e) = &summary.energy {
                    let _ = writeln!(
                        std::io::stdout(),
                        "energy balance (total + dissipated - external work - reaction work), {}: largest change {:.2e} = {:.2e} of the largest energy in the run ({:.3e}), over the {} history rows of this run",
                        e.invariant.describe(),
                        e.max_change,
                        e.relative_change(),
                        e.scale,
                        e.rows
                    );
                }
            }
            Some(ExitCode::SUCCESS)
        }
        Err(e) => fail(e.to_string(), e.exit_code()),
    }
}
