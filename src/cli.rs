//! The `fem` command line: run, check and inspect finite-element inputs — `fem`'s own binary
//! (`src/main.rs`), and a downstream program's with its own models: [`main`] with its
//! registry ([`crate::registry!`]).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate as fem;
use crate::drive::{CheckpointCadence, Progress, RunOptions, RunSummary, drive};
use crate::error::FemError;
use crate::input::ModelRegistry;
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
  fem plot out                                plots of out/history.csv into out/plots/

Open the run's view: paraview --script=out/string_pluck_view.py, then press Play (it opens the
series with the model's camera, warp, colours and its obstacles and supports).

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

/// `fem run --format`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum FormatArg {
    /// A .pvd collection and one .vtu file per frame.
    Pvd,
    /// One VTKHDF file.
    Vtkhdf,
}

impl FormatArg {
    /// The `output.format` this argument stands for.
    fn kind(self) -> fem::model::input::FormatKind {
        match self {
            FormatArg::Pvd => fem::model::input::FormatKind::Pvd,
            FormatArg::Vtkhdf => fem::model::input::FormatKind::Vtkhdf,
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a simulation and write ParaView files and a CSV history.
    #[command(
        long_about = "Run a simulation.\n\nWrites DIR/NAME.pvd (a ParaView collection), DIR/NAME_000000.vtu, ... (one file per \
                      output frame) and DIR/history.csv (step, t, kinetic, potential, total, then the model's own \
                      columns), where NAME is the input file's name without .yaml. The .pvd is rewritten after \
                      every frame, so an interrupted run still opens in ParaView. With output.format: vtkhdf (or \
                      --format vtkhdf) the frames go to one DIR/NAME.vtkhdf instead. DIR/NAME_view.py opens the run \
                      in ParaView (paraview --script=DIR/NAME_view.py)."
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
        /// Write the frames in this format instead of the input's output.format: 'pvd' (a .pvd
        /// and one .vtu per frame) or 'vtkhdf' (one .vtkhdf file, ParaView 5.12 or later).
        #[arg(long, value_name = "FORMAT")]
        format: Option<FormatArg>,
    },
    /// Validate an input file and its mesh, and report the run it describes, without running.
    Check {
        /// The YAML input file.
        file: PathBuf,
        /// Report the output of a run stopped after step N (as `fem run --max-steps N`).
        #[arg(long, value_name = "N")]
        max_steps: Option<u64>,
        /// Compute an explicit solid's critical step as the run does (Lanczos on the assembled
        /// body), even when its element bound already shows the step stable.
        #[arg(long)]
        critical_step: bool,
        /// Compute a modal solid's modes as the run does (the eigen-solve) and report their
        /// frequencies; without it the modes are not computed (their memory is checked).
        #[arg(long)]
        modes: bool,
    },
    /// Natural frequencies and mode shapes of the model about its initial state (solid, string).
    #[command(
        long_about = "Natural frequencies and mode shapes.\n\nComputes the N lowest eigenpairs of K phi = omega^2 M phi \
                      (K the stiffness at the input's initial state, M its lumped or consistent mass, on the dofs \
                      neither fixed nor prescribed) by shift-invert Lanczos on a sparse factorization of K - shift M. \
                      Rigid modes of a free body come out as zero frequencies. Writes DIR/modes.csv (mode, omega, \
                      frequency, omega_squared, generalized_mass, effective mass fractions in x, y, z) and the shapes \
                      as DIR/NAME_modes.pvd, the mode number as its time (ParaView: Warp By Vector on displacement, \
                      then step through the modes)."
    )]
    Modes {
        /// The YAML input file (model.solid or model.string).
        file: PathBuf,
        /// How many modes: the N lowest (or the N nearest --shift).
        #[arg(short = 'k', value_name = "N", default_value_t = 10)]
        k: usize,
        /// The shift (omega^2, in (rad/s)^2): the modes nearest it [default: just below zero].
        #[arg(long, value_name = "OMEGA2", allow_negative_numbers = true)]
        shift: Option<f64>,
        /// Output directory (created if missing) [default: out/NAME].
        #[arg(short, long, value_name = "DIR")]
        output: Option<PathBuf>,
    },
    /// Plot a run's history: DIR/plots/energy, invariant, iterations, constraint (.png, .svg).
    Plot {
        /// The run's output directory (holding history.csv).
        dir: PathBuf,
    },
    /// Summarise a Gmsh mesh: nodes, cells by kind, physical groups, bounding box.
    Mesh {
        /// A Gmsh .msh 4.1 file (ASCII or binary).
        file: PathBuf,
    },
}

/// The command line of a program whose inputs name the models of the registry `M` (`fem`'s
/// own: [`crate::input::ModelInput`]): parses the arguments, runs the command, returns the exit
/// code.
pub fn main<M: ModelRegistry>() -> ExitCode {
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
    if let Command::Run {
        file,
        output,
        max_steps,
        resume,
        format,
    } = &cli.command
        && let Some(size) = fem::launched_by_mpirun()
    {
        let options = run_options(file, output.as_ref(), *max_steps, *resume, &cli);
        let format = format.map(FormatArg::kind);
        if let Some(code) = run_under_mpirun::<M>(file, options, format, size, &cli) {
            return code;
        }
    }
    let result = match &cli.command {
        Command::Run {
            file,
            output,
            max_steps,
            resume,
            format,
        } => cmd_run::<M>(file, output.as_ref(), *max_steps, *resume, *format, &cli),
        Command::Check {
            file,
            max_steps,
            critical_step,
            modes,
        } => cmd_check::<M>(
            file,
            *max_steps,
            fem::model::CheckOptions {
                critical_step: *critical_step,
                modes: *modes,
            },
            &cli,
        ),
        Command::Mesh { file } => cmd_mesh(file),
        Command::Modes {
            file,
            k,
            shift,
            output,
        } => cmd_modes::<M>(file, *k, *shift, output.as_ref(), &cli),
        Command::Plot { dir } => cmd_plot(dir).map(|files| {
            if !cli.quiet {
                say!(
                    "{} plots in {}",
                    files.len() / 2,
                    dir.join("plots").display()
                );
            }
        }),
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
    let on = summary
        .processes
        .map_or(String::new(), |p| format!(" on {p} MPI processes"));
    say!(
        "{} steps{on} in {:.2} s; {} frames in {}; history in {}",
        summary.steps,
        summary.wall_seconds,
        summary.frames,
        summary.pvd.display(),
        summary.history.display(),
    );
    let stem = summary
        .pvd
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let view = summary.pvd.with_file_name(format!("{stem}_view.py"));
    if view.is_file() {
        say!(
            "view: paraview --script={} (or pvpython {} --png FILE.png)",
            view.display(),
            view.display()
        );
    }
    if let Some(c) = &summary.checkpoint {
        say!("checkpoint: {} (continue with --resume)", c.display());
    }
    match &summary.energy {
        Some(e) => say!(
            "energy balance (total + dissipated - external work - reaction work), {}: largest change {:.2e} = {:.2e} of the largest energy in the run ({:.3e}), over the {} history rows of this run",
            e.invariant.describe(),
            e.max_change,
            e.relative_change(),
            e.scale,
            e.rows
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

/// The run's options from the command line (the input's own settings are filled in later).
fn run_options(
    file: &std::path::Path,
    output: Option<&PathBuf>,
    max_steps: Option<u64>,
    resume: bool,
    cli: &Cli,
) -> RunOptions {
    let base = base_name(file);
    let out_dir = output
        .cloned()
        .unwrap_or_else(|| PathBuf::from("out").join(&base));
    RunOptions {
        progress: progress_mode(cli),
        max_steps,
        resume,
        interrupt: Some(interrupt_flag()),
        ..RunOptions::new(out_dir, base)
    }
}

/// `fem run` under an MPI launcher: the distributed run (a build with the feature `mpi`), or
/// a refusal when this build cannot run on several processes. `None`: run serially.
#[cfg_attr(not(feature = "mpi"), allow(clippy::extra_unused_type_parameters))]
fn run_under_mpirun<M: ModelRegistry>(
    file: &std::path::Path,
    options: RunOptions,
    format: Option<fem::model::input::FormatKind>,
    size: usize,
    cli: &Cli,
) -> Option<ExitCode> {
    #[cfg(feature = "mpi")]
    {
        let _ = size;
        match fem::distributed::run::<M>(file, options, format) {
            fem::distributed::Outcome::Serial => None,
            fem::distributed::Outcome::Distributed { rank, result } => Some(match result {
                Ok(summary) => {
                    if rank == 0 {
                        report(&summary, cli);
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    if rank == 0 {
                        tell!("error: {e}");
                    }
                    ExitCode::from(e.exit_code())
                }
            }),
        }
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (options, format, cli);
        (size > 1).then(|| {
            tell!(
                "error: {}: this fem was built without MPI support (cargo feature `mpi`), so it cannot run on {size} MPI processes: run it without mpirun, or build it with `cargo build --release --features mpi`",
                file.display()
            );
            ExitCode::from(2)
        })
    }
}

fn cmd_run<M: ModelRegistry>(
    file: &std::path::Path,
    output: Option<&PathBuf>,
    max_steps: Option<u64>,
    resume: bool,
    format: Option<FormatArg>,
    cli: &Cli,
) -> Result<(), FemError> {
    let mut options = run_options(file, output, max_steps, resume, cli);
    // `--format` replaces output.format before the input is checked against the machine, so
    // the estimate counts the frames the run writes.
    let (input, mut model) = with_setup_reports(cli, || {
        fem::prepare_run_in_format::<M>(
            file,
            Some(&options.out_dir),
            max_steps,
            format.map(FormatArg::kind),
        )
    })?;
    options.fingerprint = fem::input_fingerprint(file, &input)?;
    let grid = model.grid();
    if grid.dt_adjusted() {
        log::warn!(
            "time.dt = {} does not divide t_end - t0; using dt = {} ({} steps)",
            fem::model::number::shown(grid.requested_dt()),
            fem::model::number::shown(grid.dt()),
            grid.n_steps()
        );
    }
    options.every = input.output.every;
    options.history_every = input.output.history_every;
    options.format = fem::model::build::series_format(&input.output);
    options.checkpoint = match input.output.checkpoint_every {
        Some(n) => CheckpointCadence::Steps(n),
        None => CheckpointCadence::WallTime(std::time::Duration::from_secs(600)),
    };
    options.model_name = input.model.name().to_string();
    let result = drive(model.as_mut(), &options);
    // The view beside the series, once the series exists (also after a failed or
    // interrupted run, whose frames stay valid).
    let series = match &result {
        Ok(summary) => Some(summary.pvd.clone()),
        Err(e) if e.exit_code() == 1 => {
            let ext = match options.format {
                fem::io::SeriesFormat::Pvd(_) => "pvd",
                fem::io::SeriesFormat::VtkHdf(..) => "vtkhdf",
            };
            Some(options.out_dir.join(format!("{}.{ext}", options.base)))
        }
        Err(_) => None,
    };
    if let Some(series) = series.filter(|s| s.is_file()) {
        let written = fem::io::write_view(&options.out_dir, &options.base, &series, &model.view());
        if let Err(e) = written {
            log::warn!("the ParaView view was not written: {e}");
        }
    }
    let summary = result?;
    report(&summary, cli);
    if input.output.plots {
        // After a run, any failure to plot is an output failure (exit 1).
        let files = fem::io::plot::plot_history(&options.out_dir)
            .map_err(|e| FemError::Run(fem::drive::RunError::Output(e)))?;
        if !cli.quiet {
            say!(
                "plots of the history: {} ({} plots, .png and .svg)",
                options.out_dir.join("plots").display(),
                files.len() / 2
            );
        }
    }
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

/// Runs a model's set-up (`f`), telling on standard error what it is doing once it has taken
/// more than 2 s (or `FEM_PROGRESS_AFTER` seconds): [`fem::model::progress`]. Silent with `-q`.
fn with_setup_reports<T>(cli: &Cli, f: impl FnOnce() -> T) -> T {
    use fem::model::progress;
    use std::time::Duration;
    if cli.quiet {
        return f();
    }
    let after = std::env::var("FEM_PROGRESS_AFTER")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map_or(Duration::from_secs(2), Duration::from_secs_f64);
    progress::report_after(after);
    let stop = Arc::new(AtomicBool::new(false));
    let beat = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                progress::heartbeat();
            }
        })
    };
    let out = f();
    progress::done();
    stop.store(true, Ordering::Relaxed);
    let _ = beat.join();
    out
}

fn cmd_check<M: ModelRegistry>(
    file: &std::path::Path,
    max_steps: Option<u64>,
    options: fem::model::CheckOptions,
    cli: &Cli,
) -> Result<(), FemError> {
    let (input, checked) =
        with_setup_reports(cli, || fem::check_with::<M>(file, max_steps, options))?;
    say!("{}: ok", file.display());
    for line in &checked.describe {
        say!("{line}");
    }
    let grid = checked.grid;
    if grid.dt_adjusted() {
        say!(
            "  warning: time.dt = {} does not divide t_end - t0; dt is shortened to land on t_end",
            fem::model::number::shown(grid.requested_dt())
        );
    }
    let every = input.output.every;
    let steps = max_steps.map_or(grid.n_steps(), |m| m.min(grid.n_steps()));
    let format = match input.output.format {
        fem::model::input::FormatKind::Pvd => "a .pvd and one .vtu per frame",
        fem::model::input::FormatKind::Vtkhdf => "one .vtkhdf file",
    };
    say!(
        "  output: {} frames (every {} steps{}), a history row every {} steps, {format}",
        steps.div_ceil(every) + 1,
        every,
        if steps < grid.n_steps() {
            format!(", to step {steps} of {}", grid.n_steps())
        } else {
            String::new()
        },
        input.output.history_every
    );
    if let Some(e) = input.estimate.get() {
        say!(
            "  output size: at most {} ({} frames and {} history rows, uncompressed, the mesh in every frame)",
            fem::model::resources::Bytes(e.bytes),
            e.frames,
            e.rows
        );
    }
    Ok(())
}

/// `fem plot DIR`: an unreadable history is the user's input (exit 2), a plot that cannot be
/// written an output failure (exit 1).
fn cmd_plot(dir: &std::path::Path) -> Result<Vec<PathBuf>, FemError> {
    use fem::io::OutputError;
    fem::io::plot::plot_history(dir).map_err(|e| match e {
        OutputError::Io {
            op: "open" | "read",
            path,
            source,
        } => FemError::ReadInput { path, source },
        OutputError::InvalidData { path, message } => FemError::ReadInput {
            path,
            source: std::io::Error::other(format!("it is not a history: {message}")),
        },
        other => FemError::Run(fem::drive::RunError::Output(other)),
    })
}

fn cmd_modes<M: ModelRegistry>(
    file: &std::path::Path,
    count: usize,
    shift: Option<f64>,
    output: Option<&PathBuf>,
    cli: &Cli,
) -> Result<(), FemError> {
    let base = base_name(file);
    let options = fem::modes::ModesOptions {
        count,
        shift,
        out_dir: output
            .cloned()
            .unwrap_or_else(|| PathBuf::from("out").join(&base)),
        base,
    };
    let summary = with_setup_reports(cli, || fem::modes::modes::<M>(file, &options))?;
    if !cli.quiet {
        say!("mode  omega (rad/s)    f (Hz)           eff. mass x  y        z");
        for (j, r) in summary.rows.iter().enumerate() {
            say!(
                "{:>4}  {:<15.9e}  {:<15.9e}  {:.4}       {:.4}   {:.4}",
                j + 1,
                r.omega,
                r.frequency,
                r.effective_mass[0],
                r.effective_mass[1],
                r.effective_mass[2]
            );
        }
        say!(
            "{} modes of {} free dofs in {:.2} s (shift {:e}, {} solves, largest residual |K phi - omega^2 M phi| / (|K| |phi|) {:.1e}); table in {}, shapes in {}",
            summary.rows.len(),
            summary.free_dofs,
            summary.solver_seconds,
            summary.shift,
            summary.solves,
            summary.scaled_residual,
            summary.csv.display(),
            summary.pvd.display()
        );
    }
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
