//! The `fem` command line: run, check and inspect finite-element inputs.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use fem::error::FemError;
use fem::run::{Progress, run, stability};
use fem::setup::{Prepared, prepare_any};

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
written stay valid); 2 the input is wrong (nothing was run).";

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
                      output frame) and DIR/history.csv (step, t, kinetic, potential, total, external_work, dissipated, \
                      max_displacement), where NAME is the input file's name without .yaml. The .pvd is rewritten after \
                      every frame, so an interrupted run still opens in ParaView."
    )]
    Run {
        /// The YAML input file.
        file: PathBuf,
        /// Output directory (created if missing) [default: out/NAME].
        #[arg(short, long, value_name = "DIR")]
        output: Option<PathBuf>,
        /// Stop after this many steps (a quick look at a long run); the last step is written.
        #[arg(long, value_name = "N")]
        max_steps: Option<u64>,
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
    let result = match &cli.command {
        Command::Run {
            file,
            output,
            max_steps,
        } => cmd_run(file, output.as_ref(), *max_steps, &cli),
        Command::Check { file } => cmd_check(file),
        Command::Mesh { file } => cmd_mesh(file),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn base_name(file: &std::path::Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "fem".into())
}

fn report(summary: &fem::run::RunSummary, cli: &Cli) {
    if !cli.quiet {
        println!(
            "{} steps in {:.2} s; {} frames in {}; history in {}; max relative change of the scheme's energy {:.2e}",
            summary.steps,
            summary.wall_seconds,
            summary.frames,
            summary.pvd.display(),
            summary.history.display(),
            summary.max_energy_drift
        );
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
    cli: &Cli,
) -> Result<(), FemError> {
    let prepared = prepare_any(file)?;
    let base = base_name(file);
    let out_dir = output
        .cloned()
        .unwrap_or_else(|| PathBuf::from("out").join(&base));
    let progress = progress_mode(cli);
    let summary = match prepared {
        Prepared::FiniteElement(p) => {
            if p.grid.dt_adjusted() {
                log::warn!(
                    "time.dt = {} does not divide t_end - t0; using dt = {:e} ({} steps)",
                    p.grid.requested_dt(),
                    p.grid.dt(),
                    p.grid.n_steps()
                );
            }
            run(*p, &out_dir, &base, progress, max_steps)?
        }
        Prepared::Modal(p) => fem::modal::run(*p, &out_dir, &base, progress, max_steps)?,
        Prepared::Beam(p) => fem::beam::run(*p, &out_dir, &base, progress, max_steps)?,
        Prepared::Constrained(p) => {
            fem::constrained::run(*p, &out_dir, &base, progress, max_steps)?
        }
    };
    report(&summary, cli);
    Ok(())
}

fn cmd_check(file: &std::path::Path) -> Result<(), FemError> {
    let problem = match prepare_any(file)? {
        Prepared::FiniteElement(p) => *p,
        Prepared::Modal(p) => {
            println!("{}: ok", file.display());
            for line in fem::modal::describe(&p) {
                println!("{line}");
            }
            return Ok(());
        }
        Prepared::Beam(p) => {
            println!("{}: ok", file.display());
            for line in fem::beam::describe(&p) {
                println!("{line}");
            }
            return Ok(());
        }
        Prepared::Constrained(p) => {
            println!("{}: ok", file.display());
            for line in fem::constrained::describe(&p) {
                println!("{line}");
            }
            return Ok(());
        }
    };
    let t = &problem.input.time;
    let stability = match stability(&problem)? {
        None => "unconditional (alpha >= 1/4)".to_string(),
        Some(b) if problem.grid.dt() <= b => format!("dt <= {b:e} (bound (23)) holds"),
        Some(b) => {
            return Err(FemError::Invalid {
                path: file.to_path_buf(),
                field: "time.dt".into(),
                message: format!(
                    "dt = {:e} exceeds the stability bound (23) of the alpha scheme, dt < {b:e}; reduce dt or use alpha = 0.25",
                    problem.grid.dt()
                ),
            });
        }
    };
    println!("{}: ok", file.display());
    println!(
        "  mesh: {} nodes, {} cells ({} string cells)",
        problem.mesh.n_nodes(),
        problem.mesh.n_cells(),
        problem.n_string_cells
    );
    println!(
        "  dofs: {} free of {} ({} per node)",
        problem.dofmap.n_free(),
        problem.dofmap.n_dofs(),
        problem.dofmap.n_comp()
    );
    let scheme = match t.scheme {
        fem::input::SchemeKind::Alpha => format!("alpha scheme (16), alpha = {}", t.alpha),
        fem::input::SchemeKind::BackwardEuler => {
            "backward-Euler acceleration step (Serac)".to_string()
        }
        fem::input::SchemeKind::ModalMoreauJean => "exact modal Moreau-Jean".to_string(),
        fem::input::SchemeKind::ConservationForm => "conservation form (40)".to_string(),
    };
    println!(
        "  time: {scheme}, dt = {:e}, {} steps from {} to {}",
        problem.grid.dt(),
        problem.grid.n_steps(),
        problem.grid.t0(),
        problem.grid.t_end()
    );
    if problem.grid.dt_adjusted() {
        println!(
            "  warning: time.dt = {} does not divide t_end - t0; dt is shortened to land on t_end",
            t.dt
        );
    }
    println!("  stability: {stability}");
    if !problem.dirichlet.is_empty() {
        println!(
            "  prescribed: {} dofs in {} dirichlet sets",
            problem.dirichlet.len(),
            problem.input.dirichlet.len()
        );
        if problem
            .input
            .dirichlet
            .iter()
            .any(|d| d.method == fem::input::EnforcementKind::Rate)
        {
            println!(
                "  note: rate control holds velocities; positions drift by the integration error of the prescribed rate (docs/theory/dirichlet.md)"
            );
        }
    }
    let every = problem.input.output.every;
    println!(
        "  output: {} frames (every {} steps), a history row every {} steps",
        problem.grid.n_steps().div_ceil(every) + 1,
        every,
        problem.input.output.history_every
    );
    Ok(())
}

fn cmd_mesh(file: &std::path::Path) -> Result<(), FemError> {
    let mesh = fem::mesh::read_msh(file).map_err(|source| FemError::Mesh {
        path: file.to_path_buf(),
        field: "mesh".into(),
        source: Box::new(source),
    })?;
    print!("{}", mesh.summary());
    Ok(())
}
