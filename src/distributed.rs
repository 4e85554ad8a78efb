//! `fem run` under `mpirun` (feature `mpi`): the explicit DEF_EXP solid on every process of
//! `MPI_COMM_WORLD` by domain decomposition (crate `fem-mpi`), run by the one run loop
//! (`fem_drive::drive_on`) on the MPI processes. Without a launcher, `fem run` is the serial
//! program; on one process, an input that is not the explicit solid runs serially too.
//!
//! Every rank reads the input; an input error is printed once (by rank 0) and every rank
//! exits 2. A failed run stops every rank with the exit code of the failure, the message naming
//! the rank. SIGINT or SIGTERM (a scheduler's warning before the wall-time limit, delivered to
//! every rank or to one) stops every rank after the same step with a checkpoint each, exit 1,
//! as the serial run does.

use std::path::Path;

use fem_drive::{Processes, RunOptions, RunSummary};
use fem_model::input::FormatKind;
use fem_mpi::MpiProcesses;
use fem_mpi::mpi::traits::Communicator;

use crate::error::FemError;
use crate::input::{Input, ModelRegistry};

/// What [`run`] did: the summary and the process's rank, or nothing (the caller runs the input
/// serially).
pub enum Outcome {
    /// The input is not a distributed run, and there is one process: run it serially.
    Serial,
    /// The distributed run's result on this process.
    Distributed {
        /// This process's rank (only rank 0 reports).
        rank: usize,
        /// The run's summary or its failure (the same on every process).
        result: Result<RunSummary, FemError>,
    },
}

/// Runs `file` (its model one of the registry `M`'s) on the processes of `MPI_COMM_WORLD` with
/// `options` (its fingerprint, model name and output settings are filled here); `format`, when
/// given, replaces the input's `output.format` (`fem run --format`). A distributed run writes
/// `.pvd` and a `.vtu` piece per process and frame, or (`vtkhdf`) one `.vtkhdf` file with a
/// part per process, written by rank 0 (`fem_drive`'s gathered series).
pub fn run<M: ModelRegistry>(
    file: &Path,
    mut options: RunOptions,
    format: Option<FormatKind>,
) -> Outcome {
    let Some(universe) = fem_mpi::mpi::initialize() else {
        return Outcome::Distributed {
            rank: 0,
            result: Err(FemError::ReadInput {
                path: file.to_path_buf(),
                source: std::io::Error::other("MPI is already initialized"),
            }),
        };
    };
    let world = universe.world();
    let processes = MpiProcesses::new(world.duplicate());
    let rank = processes.rank();
    let size = processes.size();
    let result = (|| {
        let mut input = crate::load_with::<M>(file)?;
        if let Some(format) = format {
            input.output.format = format;
        }
        let solid = input
            .model
            .section()
            .downcast_ref::<fem_solid::SolidSection>();
        let section = match solid {
            Some(s) if size > 1 || is_explicit(&input) => s,
            _ if size == 1 => return Ok(None),
            _ => {
                return Err(FemError::Input {
                    path: file.to_path_buf(),
                    source: fem_model::InputError::invalid(
                        "model",
                        format!(
                            "model.{}: only the solid (model.solid, time.scheme: def_exp) runs on more than one MPI process; start this input without mpirun",
                            input.model.name()
                        ),
                    ),
                });
            }
        };
        let input_error = |source| FemError::Input {
            path: file.to_path_buf(),
            source,
        };
        let budget = fem_model::resources::Budget::from_machine(Some(&options.out_dir))
            .map_err(input_error)?
            .with_steps(options.max_steps);
        options.fingerprint = crate::input_fingerprint(file, &input)?;
        options.model_name = input.model.name().to_string();
        options.every = input.output.every;
        options.history_every = input.output.history_every;
        options.format = fem_model::build::series_format(&input.output);
        let sections = input.sections(file, budget);
        let mut model = fem_mpi::distributed_solid_model(&world, section, &sections)
            .map_err(input_error)?
            .model;
        let result = fem_drive::drive_on(&mut model, &options, &processes);
        if rank == 0 {
            write_view(&options, &result, &model);
        }
        Ok(Some(result?))
    })();
    match result {
        Ok(None) => Outcome::Serial,
        Ok(Some(summary)) => Outcome::Distributed {
            rank,
            result: Ok(summary),
        },
        Err(e) => Outcome::Distributed {
            rank,
            result: Err(e),
        },
    }
}

/// Rank 0 writes the view beside the series as a serial run does (`NAME_view.py`), once the
/// series exists: after the run, also after one that failed or was interrupted (exit 1), whose
/// frames stay valid. The solid's view needs nothing of the global mesh.
fn write_view(
    options: &RunOptions,
    result: &Result<RunSummary, fem_drive::RunError>,
    model: &dyn fem_model::Model,
) {
    let series = match result {
        Ok(summary) => summary.pvd.clone(),
        Err(e) if e.exit_code() == 1 => {
            let ext = match options.format {
                fem_io::SeriesFormat::Pvd(_) => "pvd",
                fem_io::SeriesFormat::VtkHdf(..) => "vtkhdf",
            };
            options.out_dir.join(format!("{}.{ext}", options.base))
        }
        Err(_) => return,
    };
    if series.is_file()
        && let Err(e) = fem_io::write_view(&options.out_dir, &options.base, &series, &model.view())
    {
        log::warn!("the ParaView view was not written: {e}");
    }
}

/// Whether the input asks for the explicit solid (the one scheme that runs distributed).
fn is_explicit<M>(input: &Input<M>) -> bool {
    input
        .time
        .scheme
        .as_deref()
        .is_none_or(|s| s == fem_time::leapfrog::def_exp::NAME)
}
