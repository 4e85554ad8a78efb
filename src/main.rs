//! The `fem` command line: run, check and inspect finite-element inputs.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use fem::drive::{CheckpointCadence, Progress, RunOptions, RunSummary, drive};
use fem::error::FemError;
/// `println!` that ignores a closed stdout (`fem check FILE | head -1`): the exit code is the
/// run's, never a panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` that ignores a closed stdout.
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

/// `eprintln!` that ignores a closed stderr.
macro_rules! tell {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

const ABOUT: &str =
    "Finite-element structural dynamics: strings, beams, solids, constrained motion.";

const LONG_ABOUT: &str = "\
Finite-element structural dynamics: strings, beams, solids, constrained motion.

A run is described by a YAML file: the mesh (a Gmsh .msh 4.1 file or a built-in generator), the
model and its material, the fixed dofs, the initial state, the time scheme and the output. Every
key is documented in docs/input.md; inputs/ holds working examples.

Typical use:
  fem check inputs/string_pluck.yaml          validate the input and the mesh, run nothing
  fem run inputs/string_pluck.yaml -o out     run; writes out/string_pluck.pvd, one .vtu per
                                              frame and out/history.csv (energy per step)
  fem mesh meshes/string_line2.msh            what a mesh holds: nodes, cells, physical groups

Open the .pvd in ParaView (File > Open), press Play; apply 'Warp By Vector' on 'displacement'
to see the deformed shape.

Exit codes: 0 success; 1 the run failed (numerical failure, output error: frames already
written stay valid); 2 the input, the mesh or the output location is wrong (nothing was run).

Resources: every count in the input and in a mesh header is checked against an estimate of the
memory and disk it needs before anything is allocated. The limits default to the memory
available now and the free space where the output goes; set FEM_MEMORY_LIMIT and
FEM_DISK_LIMIT (8G, 512M, 2TiB, bytes, or 'unlimited') to change them.";

#[derive(Parser, Debug)]
#[command(name = "fem", version, about = ABOUT, long_about = LONG_ABOUT)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print only errors.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Print more: setup details, solver information (-vv for debug output).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a simulation and write ParaView files and a CSV history.
    #[command(
        long_about = "Run a simulation.\n\nWrites DIR/NAME.pvd (a ParaView collection), DIR/NAME_000000.vtu, ... (one file per \
                      output frame) and DIR/history.csv (step, t, kinetic, potential, total, then the model's own \
                      columns), where NAME is the input file's name without .yaml. The .pvd is rewritten after \
                      every frame, so an interrupted run still opens in ParaView."
    )]
    Run {
        /// The YAML input file.
        file: PathBuf,
        /// Output directory (created if missing) [default: out/NAME].
        #[arg(short, long, value_name = "DIR")]
        output: Option<PathBuf>,
        /// Stop after step N, counted from the start of the run (also when resuming); the last
        /// step is written and a checkpoint is left to continue from.
        #[arg(long, value_name = "N")]
        max_steps: Option<u64>,
        /// Continue the run from the checkpoint in DIR (written every output.checkpoint_every
        /// steps, at the end of a --max-steps run, and when interrupted); the result is bitwise
        /// that of an uninterrupted run.
        #[arg(long)]
        resume: bool,
    },
    /// Validate an input file and its mesh, and report the run it describes, without running.
    Check {
        /// The YAML input file.
        file: PathBuf,
    },
    /// Summarise a Gmsh mesh: nodes, cells by kind, physical groups, bounding box.
    Mesh {
        /// A Gmsh .msh 4.1 file (ASCII or binary).
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let level = match (cli.quiet, cli.verbose) {
        (true, _) => log::LevelFilter::Error,
        (false, 0) => log::LevelFilter::Warn,
        (false, 1) => log::LevelFilter::Info,
        _ => log::LevelFilter::Debug,
    };
    env_logger::Builder::new()
        .filter_level(level)
        .format_timestamp(None)
        .format_target(false)
        .init();
    #[cfg(feature = "mpi")]
    if let Command::Run {
        file,
        output,
        max_steps,
        resume,
    } = &cli.command
        && fem::distributed::launched_by_mpirun()
    {
        let out_dir = output
            .clone()
            .unwrap_or_else(|| PathBuf::from("out").join(base_name(file)));
        if let Some(code) = fem::distributed::run(
            file,
            &out_dir,
            &base_name(file),
            *max_steps,
            *resume,
            progress_mode(&cli),
            Some(interrupt_flag()),
        ) {
            return code;
        }
    }
    let result = match &cli.command {
        Command::Run {
            file,
            output,
            max_steps,
            resume,
        } => cmd_run(file, output.as_ref(), *max_steps, *resume, &cli),
        Command::Check { file } => cmd_check(file),
        Command::Mesh { file } => cmd_mesh(file),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tell!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn base_name(file: &std::path::Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "fem".into())
}

fn report(summary: &RunSummary, cli: &Cli) {
    if cli.quiet {
        return;
    }
    if let Some(step) = summary.resumed_from {
        say!("resumed from the checkpoint at step {step}");
    }
    say!(
        "{} steps in {:.2} s; {} frames in {}; history in {}",
        summary.steps,
        summary.wall_seconds,
        summary.frames,
        summary.pvd.display(),
        summary.history.display(),
    );
    if let Some(c) = &summary.checkpoint {
        say!("checkpoint: {} (continue with --resume)", c.display());
    }
    match &summary.energy {
        Some(e) => say!(
            "energy balance (total + dissipated - external work - reaction work), {}: largest change {:.2e} = {:.2e} of the largest energy in the run ({:.3e}), at the steps with a history row or a frame",
            e.invariant.describe(),
            e.max_change,
            e.relative_change(),
            e.scale
        ),
        None => {
            say!("energy: this model has none (its force is not the gradient of a potential)")
        }
    }
}

fn progress_mode(cli: &Cli) -> Progress {
    if cli.quiet {
        Progress::Quiet
    } else if std::io::stderr().is_terminal() {
        Progress::Bar
    } else {
        Progress::Lines
    }
}

fn cmd_run(
    file: &std::path::Path,
    output: Option<&PathBuf>,
    max_steps: Option<u64>,
    resume: bool,
    cli: &Cli,
) -> Result<(), FemError> {
    let base = base_name(file);
    let out_dir = output
        .cloned()
        .unwrap_or_else(|| PathBuf::from("out").join(&base));
    let (input, mut model) = fem::prepare_writing_to(file, Some(&out_dir))?;
    let fingerprint = fem::input_fingerprint(file, &input)?;
    let grid = model.grid();
    if grid.dt_adjusted() {
        log::warn!(
            "time.dt = {} does not divide t_end - t0; using dt = {:e} ({} steps)",
            grid.requested_dt(),
            grid.dt(),
            grid.n_steps()
        );
    }
    let options = RunOptions {
        out_dir,
        base,
        every: input.output.every,
        history_every: input.output.history_every,
        compression: fem::model::build::compression(input.output.compression),
        progress: progress_mode(cli),
        max_steps,
        checkpoint: match input.output.checkpoint_every {
            Some(n) => CheckpointCadence::Steps(n),
            None => CheckpointCadence::WallTime(std::time::Duration::from_secs(600)),
        },
        resume,
        fingerprint,
        model_name: input.model.name().to_string(),
        interrupt: Some(interrupt_flag()),
    };
    let summary = drive(model.as_mut(), &options)?;
    report(&summary, cli);
    Ok(())
}

/// A flag raised by SIGINT and SIGTERM: the run stops after the current step and writes a
/// checkpoint. A second signal ends the process at once (the output stays valid).
fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let handler_flag = flag.clone();
    let installed = ctrlc::set_handler(move || {
        if handler_flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    if let Err(e) = installed {
        log::warn!("cannot catch interrupts ({e}); an interrupted run will leave no checkpoint");
    }
    flag
}

fn cmd_check(file: &std::path::Path) -> Result<(), FemError> {
    let (input, model) = fem::prepare(file)?;
    say!("{}: ok", file.display());
    for line in model.describe() {
        say!("{line}");
    }
    let grid = model.grid();
    if grid.dt_adjusted() {
        say!(
            "  warning: time.dt = {} does not divide t_end - t0; dt is shortened to land on t_end",
            grid.requested_dt()
        );
    }
    let every = input.output.every;
    say!(
        "  output: {} frames (every {} steps), a history row every {} steps",
        grid.n_steps().div_ceil(every) + 1,
        every,
        input.output.history_every
    );
    Ok(())
}

fn cmd_mesh(file: &std::path::Path) -> Result<(), FemError> {
    let budget =
        fem::model::resources::Budget::from_machine(None).map_err(|source| FemError::Input {
            path: file.to_path_buf(),
            source,
        })?;
    let mut accept = |size: &fem::mesh::MshSize| {
        let (what, bytes) = fem::model::build::msh_memory(size, 0.0);
        budget
            .check_memory("mesh", &what, bytes)
            .map_err(|e| match e {
                fem::model::InputError::Invalid { message, .. } => message,
                other => other.to_string(),
            })
    };
    let mesh = fem::mesh::read_msh_within(file, &mut accept).map_err(|source| FemError::Mesh {
        path: file.to_path_buf(),
        source: Box::new(source),
    })?;
    say_raw!("{}", mesh.summary());
    Ok(())
}
