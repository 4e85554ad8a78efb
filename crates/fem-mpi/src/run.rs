//! A distributed DEF_EXP run: the set-up on every rank, the step loop, and the outputs —
//! `history.csv` (rank 0), one `.vtu` piece per rank and frame, and rank 0's `.pvtu` per
//! frame and `.pvd` — on the cadence of the serial run loop (`fem::drive`), so that the
//! history and every frame's values are the serial run's, bit for bit.
//!
//! Every rank reads the input and the mesh and resolves the `model.solid` section
//! ([`fem_solid::SolidSetup`]): an input error is found identically by every rank (no communication),
//! reported by rank 0 only, and every rank exits 2. The mesh is then split
//! ([`recursive_bisection`]) and each rank builds the operator of its cells only.
//!
//! Failures during the run are agreed on ([`crate::collective`]): a non-finite force or
//! state, an inverted cell, a frame or file that cannot be written on any rank stops every
//! rank after the same step, with the rank (and the cell) named.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use fem_io::{
    Checkpoint, CheckpointArray, Compression, Field, Frame, HistoryWriter, OutputError, PvdWriter,
    VtkCells, write_pvtu, write_vtu,
};
use fem_model::input::SchemeKind;
use fem_model::{InputError, ModelSection, Sections};
use fem_solid::{DefExp, LeapFrogSystem, SolidSection};
use fem_time::{
    EnergyBalanceTracker, Invariant, NodalStepper, StateField, StateKind, StepError, StepSettings,
    Stepper, TimeGrid,
};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::collective::{agree, any, first_message};
use crate::partition::{centroids, recursive_bisection};
use crate::subdomain::Subdomain;
use crate::system::DistributedSolid;

/// The columns every history starts with (as `fem::drive`'s).
const COMMON_COLUMNS: [&str; 5] = ["step", "t", "kinetic", "potential", "total"];

/// How a distributed run writes.
#[derive(Clone, Debug)]
pub struct DistributedOptions {
    /// Output directory (created by rank 0).
    pub out_dir: PathBuf,
    /// Base name of the `.pvd`, `.pvtu` and `.vtu` files.
    pub base: String,
    /// A frame every this many steps (and the last).
    pub every: u64,
    /// A history row every this many steps (and the last).
    pub history_every: u64,
    /// Compression of the pieces.
    pub compression: Compression,
    /// Stop after this step (counted from the start of the run).
    pub max_steps: Option<u64>,
    /// A checkpoint (one file per rank) every this many steps, and at the end of a cut-short
    /// run.
    pub checkpoint_every: Option<u64>,
    /// Continue from the checkpoints in `out_dir`.
    pub resume: bool,
    /// Fingerprint of the inputs (a checkpoint of other inputs is refused).
    pub fingerprint: u32,
    /// Raised (by SIGINT or SIGTERM, on any rank) to stop after the current step: every rank
    /// writes its checkpoint at the same step and the run ends with
    /// [`DistributedError::Interrupted`].
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// Why a distributed run stopped.
#[derive(Debug, thiserror::Error)]
pub enum DistributedError {
    /// The input is wrong (every rank found it; exit 2).
    #[error(transparent)]
    Input(#[from] InputError),
    /// The run failed on some rank (exit 1); the message names the rank.
    #[error("{0}")]
    Run(String),
    /// A rank was interrupted; every rank wrote its checkpoint after the same step (exit 1).
    #[error(
        "interrupted at step {step} (t = {t:e}); a checkpoint per process was written to {checkpoints}: continue with the same command, the same number of processes and --resume"
    )]
    Interrupted {
        /// The last step taken.
        step: u64,
        /// Its time.
        t: f64,
        /// The checkpoint files, as a pattern (`DIR/checkpoint_*_of_P.fem`).
        checkpoints: String,
    },
}

impl DistributedError {
    /// The process exit code: 2 for the input, 1 for a failed run.
    pub fn exit_code(&self) -> u8 {
        match self {
            DistributedError::Input(_) => 2,
            DistributedError::Run(_) | DistributedError::Interrupted { .. } => 1,
        }
    }
}

/// What a finished run reports (rank 0 prints it).
#[derive(Clone, Debug)]
pub struct DistributedSummary {
    /// Steps taken (in all, from the start of the run).
    pub steps: u64,
    /// Frames written by this run.
    pub frames: usize,
    /// The `.pvd` file.
    pub pvd: PathBuf,
    /// Wall time of the step loop (s).
    pub wall_seconds: f64,
    /// The energy balance over the history rows this run wrote (`None` without an energy).
    pub energy: Option<EnergyBalance>,
    /// Values this rank sent per step.
    pub values_sent_per_step: usize,
    /// Cells of this rank.
    pub n_cells: usize,
}

/// The energy balance `total + dissipated − external_work − reaction_work` of a distributed
/// run, sampled at its history rows (the energies are global sums, evaluated only there).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergyBalance {
    /// What the scheme promises of it.
    pub invariant: Invariant,
    /// Its largest change from the first row of the run, `max |B_n − B_first|`.
    pub max_change: f64,
    /// The largest of `|kinetic|`, `|potential|`, `|total|`, `|external_work|`,
    /// `|dissipated|` over the rows.
    pub scale: f64,
    /// History rows it was sampled at.
    pub rows: usize,
}

impl EnergyBalance {
    /// `max_change / scale` (0 when the scale is 0).
    pub fn relative_change(&self) -> f64 {
        if self.scale > 0.0 {
            self.max_change / self.scale
        } else {
            0.0
        }
    }
}

/// One rank's share of a distributed DEF_EXP solid, ready to run.
pub struct DistributedSolidRun {
    world: SimpleCommunicator,
    stepper: DefExp<DistributedSolid>,
    grid: TimeGrid,
    describe: Vec<String>,
    points: Vec<[f64; 3]>,
    cells: VtkCells,
    global_node: Vec<f64>,
    global_cell: Vec<f64>,
}

impl std::fmt::Debug for DistributedSolidRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistributedSolidRun")
            .field("rank", &self.world.rank())
            .field("n_cells", &self.global_cell.len())
            .finish_non_exhaustive()
    }
}

impl DistributedSolidRun {
    /// Builds this rank's share of the solid `section` describes with the rest of `input`.
    /// Collective; an input error is the same on every rank.
    pub fn new(
        world: SimpleCommunicator,
        section: &SolidSection,
        input: &Sections<'_>,
    ) -> Result<Self, InputError> {
        fem_model::check_uses(SolidSection::NAME, &section.uses(), input)?;
        if input.time.scheme != SchemeKind::DefExp {
            return Err(InputError::invalid(
                "time.scheme",
                format!(
                    "a run on {} MPI processes needs the explicit scheme 'def_exp' (DEF_EXP); '{}' runs on one process: start it without mpirun",
                    world.size(),
                    input.time.scheme.name()
                ),
            ));
        }
        let setup = section.setup(input)?;
        let n = setup.kind.n_nodes();
        let size = world.size() as usize;
        let parts =
            recursive_bisection(&centroids(&setup.mesh.points, &setup.connectivity, n), size);
        let sub = Subdomain::new(
            &setup.connectivity,
            n,
            setup.mesh.n_nodes(),
            &parts,
            world.rank() as usize,
        );
        let global_node: Vec<f64> = sub.nodes.iter().map(|&v| v as f64).collect();
        let global_cell: Vec<f64> = sub.cells.iter().map(|&c| c as f64).collect();
        let points: Vec<[f64; 3]> = sub.nodes.iter().map(|&v| setup.mesh.points[v]).collect();
        let mut cells = VtkCells::new();
        cells.push_block(setup.mesh_kind, &sub.connectivity);
        let n_subdomain_cells = sub.n_cells();
        let system = DistributedSolid::new(world.duplicate(), &setup, sub)?;

        // Centre of mass of the whole body (for a rotation without a centre), as the serial
        // model computes it.
        let centre = fem_elements::solid::mass_properties(
            setup.kind,
            &setup.mesh.points,
            &setup.connectivity,
            setup.density,
        )
        .map(|p| p.center)
        .map_err(|e| InputError::invalid("mesh", e.to_string()))?;
        let v0 = system.restrict(&setup.initial_velocity(section, centre)?);
        let x0 = vec![0.0; v0.len()];
        let critical = system
            .critical_step(&x0)
            .and_then(|element| fem_solid::spectral::refine(&system, &x0, element))
            .map_err(|m| InputError::invalid("mesh", m))?;
        let (grid, scheme_line) = section.time_grid(input, setup.grid, critical.step.dt)?;
        let dirichlet = system.dirichlet(&setup.dirichlet);
        let settings = StepSettings::new(grid.dt())
            .starting_at(grid.t0())
            .with_dirichlet(dirichlet);
        let check = section.critical_step_check();
        let stepper = DefExp::with_bound_at(system, settings, &x0, &v0, check, critical.clone());
        let stepper = stepper.map_err(|e| match e {
            StepError::Unstable { .. } => InputError::invalid("time.dt", e.to_string()),
            other => InputError::invalid("time", other.to_string()),
        });
        let stepper = agree(&world, stepper)?;
        let describe = vec![
            format!(
                "  mesh: {} nodes, {} {} cells in the solid, on {size} MPI processes (recursive coordinate bisection; this rank: {} cells, {} nodes)",
                setup.mesh.n_nodes(),
                setup.connectivity.len() / n,
                setup.kind,
                n_subdomain_cells,
                points.len(),
            ),
            scheme_line,
            format!(
                "  explicit critical step 2/sqrt(lambda_max) = {:e} at t0 (lambda_max of M^-1 K by Lanczos; the element bound is {:e}, cell {})",
                critical.step.dt, critical.element.dt, critical.element.cell
            ),
        ];
        Ok(Self {
            world,
            stepper,
            grid,
            describe,
            points,
            cells,
            global_node,
            global_cell,
        })
    }

    /// What `fem check` would say of the run.
    pub fn describe(&self) -> &[String] {
        &self.describe
    }

    /// The time grid.
    pub fn grid(&self) -> TimeGrid {
        self.grid
    }

    /// The stepper (this rank's).
    pub fn stepper(&self) -> &DefExp<DistributedSolid> {
        &self.stepper
    }

    /// One step (no output). Collective.
    pub fn step(&mut self) -> Result<(), DistributedError> {
        self.stepper
            .step()
            .map(|_| ())
            .map_err(|e| DistributedError::Run(format!("the run failed: {e}")))
    }

    /// Steps to the end of the grid (or `options.max_steps`), writing the outputs. Collective.
    pub fn run(
        &mut self,
        options: &DistributedOptions,
    ) -> Result<DistributedSummary, DistributedError> {
        self.run_reporting(options, |_| {})
    }

    /// [`run`](Self::run), calling `after_step(n)` after step `n` is written (a progress
    /// report: rank 0 prints, the others pass a no-op). Collective.
    pub fn run_reporting(
        &mut self,
        options: &DistributedOptions,
        mut after_step: impl FnMut(u64),
    ) -> Result<DistributedSummary, DistributedError> {
        let grid = self.grid;
        let n_steps = options
            .max_steps
            .map_or(grid.n_steps(), |m| m.min(grid.n_steps()));
        let mut out = Outputs::open(&self.world, options)?;
        if options.resume {
            let at = self.restore(options, &mut out)?;
            if at >= n_steps {
                return Err(DistributedError::Run(format!(
                    "the checkpoint is at step {at} and this run ends at step {n_steps}: nothing is left to run"
                )));
            }
        } else {
            out.write(self, true, true, options)?;
            out.mark_cadence(true, true);
            let mine = if self.world.rank() == 0 {
                remove_older_frames(options, self.world.size())
                    .err()
                    .map(|e| format!("rank 0: {e}"))
            } else {
                None
            };
            agreed(&self.world, mine)?;
        }
        let first_step = self.stepper.step_index();
        let start = Instant::now();
        let mut written_checkpoint = false;
        for n in first_step + 1..=n_steps {
            self.stepper
                .step()
                .map_err(|e| DistributedError::Run(format!("the run failed: {e}")))?;
            // On the cadence of an uninterrupted run, and the last step of a cut-short one
            // (which a checkpoint does not count: a resumed run writes what the whole run
            // would).
            let row_due = n % options.history_every == 0 || n == grid.n_steps();
            let frame_due = n % options.every == 0 || n == grid.n_steps();
            let last = n == n_steps;
            out.write(self, row_due || last, frame_due || last, options)?;
            out.mark_cadence(row_due, frame_due);
            after_step(n);
            let due = options.checkpoint_every.is_some_and(|k| n % k == 0);
            let cut_short = n == n_steps && n_steps < grid.n_steps();
            // A signal reaches the ranks at different moments: they agree after every step.
            let raised = options
                .interrupt
                .as_ref()
                .is_some_and(|flag| flag.load(Ordering::SeqCst));
            let interrupted = options.interrupt.is_some() && any(&self.world, raised);
            if interrupted || (due && n < n_steps) || cut_short {
                self.save(options, &out)?;
                written_checkpoint = true;
            }
            if interrupted {
                return Err(DistributedError::Interrupted {
                    step: n,
                    t: self.stepper.time(),
                    checkpoints: options
                        .out_dir
                        .join(checkpoint_name("*", self.world.size()))
                        .display()
                        .to_string(),
                });
            }
        }
        let wall_seconds = start.elapsed().as_secs_f64();
        if n_steps == grid.n_steps() && !written_checkpoint {
            // The run is complete: a checkpoint left from before would resume nothing.
            let _ = std::fs::remove_file(self.checkpoint_path(options));
        }
        Ok(DistributedSummary {
            steps: n_steps,
            frames: out.frames,
            pvd: out.pvd_path.clone(),
            wall_seconds,
            energy: out.balance.first.map(|_| EnergyBalance {
                invariant: self.stepper.invariant(),
                max_change: out.balance.max_change,
                scale: out.balance.scale,
                rows: out.balance.observed,
            }),
            values_sent_per_step: self.stepper.system().values_sent_per_step(),
            n_cells: self.global_cell.len(),
        })
    }

    /// This rank's checkpoint file.
    fn checkpoint_path(&self, options: &DistributedOptions) -> PathBuf {
        options
            .out_dir
            .join(checkpoint_name(self.world.rank(), self.world.size()))
    }

    /// Writes this rank's checkpoint (state, step, frames written, history length).
    fn save(&self, options: &DistributedOptions, out: &Outputs) -> Result<(), DistributedError> {
        let mut c = Checkpoint::new(options.fingerprint, "solid (distributed)");
        c.integers.push(("step".into(), self.stepper.step_index()));
        c.integers
            .push(("frames".into(), out.times_on_cadence.len() as u64));
        c.integers
            .push(("history_bytes".into(), out.history_on_cadence));
        c.integers.push(("ranks".into(), self.world.size() as u64));
        for field in self.stepper.state() {
            c.arrays.push(CheckpointArray {
                name: field.name.into_owned(),
                kind: field.kind.code(),
                values: field.values.into_owned(),
            });
        }
        c.arrays.push(CheckpointArray {
            name: "drive:frame_times".into(),
            kind: StateKind::Other.code(),
            values: out.times_on_cadence.clone(),
        });
        let path = self.checkpoint_path(options);
        let mine = c
            .write(&path)
            .err()
            .map(|e| format!("rank {}: {e}", self.world.rank()));
        match first_message(&self.world, mine) {
            None => Ok(()),
            Some(m) => Err(DistributedError::Run(m)),
        }
    }

    /// Restores this rank's checkpoint; returns its step.
    fn restore(
        &mut self,
        options: &DistributedOptions,
        out: &mut Outputs,
    ) -> Result<u64, DistributedError> {
        let path = self.checkpoint_path(options);
        let rank = self.world.rank();
        let result = (|| -> Result<(u64, u64, u64, Vec<f64>), String> {
            let c = Checkpoint::read(&path, options.fingerprint).map_err(|e| e.to_string())?;
            let get = |name: &str| {
                c.integer(name)
                    .ok_or_else(|| format!("{}: no '{name}' in it", path.display()))
            };
            let (step, frames, rows) = (get("step")?, get("frames")?, get("history_bytes")?);
            let fields: Vec<StateField<'_>> = c
                .arrays
                .iter()
                .map(|a| StateField {
                    name: a.name.clone().into(),
                    kind: StateKind::from_code(a.kind),
                    values: Cow::Borrowed(&a.values),
                })
                .collect();
            self.stepper
                .restore(step, &fields)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let times = c
                .array("drive:frame_times")
                .map(|a| a.values.clone())
                .unwrap_or_default();
            Ok((step, frames, rows, times))
        })();
        let mine = result
            .as_ref()
            .err()
            .map(|e| format!("rank {rank}: {e} (a run resumes with the same number of processes)"));
        if let Some(m) = first_message(&self.world, mine) {
            return Err(DistributedError::Run(m));
        }
        let Ok((step, frames, rows, times)) = result else {
            return Err(DistributedError::Run("checkpoint".into()));
        };
        out.resume(&self.world, options, frames as usize, rows, times)?;
        Ok(step)
    }

    /// This rank's frame: the subdomain's nodes and cells, the serial run's fields, and the
    /// global node and cell numbers.
    fn frame_fields(&self) -> FrameData {
        let system = self.stepper.system();
        let mut displacement = Vec::new();
        let mut velocity = Vec::new();
        system.full_displacement(self.stepper.position(), &mut displacement);
        system.full_displacement(&self.stepper.velocity(), &mut velocity);
        let operator = system.operator();
        let mut stresses = vec![Default::default(); operator.n_cells()];
        operator.cell_stresses(&displacement, &mut stresses);
        let mut d = FrameData {
            displacement,
            velocity,
            cauchy: Vec::with_capacity(6 * stresses.len()),
            von_mises: Vec::with_capacity(stresses.len()),
            jacobian: Vec::with_capacity(stresses.len()),
            energy_density: Vec::with_capacity(stresses.len()),
        };
        for s in &stresses {
            let s: &fem_elements::solid::CellStress = s;
            d.cauchy.extend_from_slice(&s.cauchy);
            d.von_mises.push(s.von_mises);
            d.jacobian.push(s.jacobian);
            d.energy_density.push(s.energy_density);
        }
        d
    }
}

/// A frame's fields on a subdomain.
struct FrameData {
    displacement: Vec<f64>,
    velocity: Vec<f64>,
    cauchy: Vec<f64>,
    von_mises: Vec<f64>,
    jacobian: Vec<f64>,
    energy_density: Vec<f64>,
}

/// The run's files: rank 0 holds the history and the `.pvd`.
struct Outputs {
    history: Option<HistoryWriter>,
    pvd: Option<PvdWriter>,
    pvd_path: PathBuf,
    next_frame: usize,
    frames: usize,
    /// The history's length (bytes) after its last row on the run's cadence.
    history_on_cadence: u64,
    /// The times of the frames on the run's cadence.
    times_on_cadence: Vec<f64>,
    row: Vec<Option<f64>>,
    /// The time of the last frame written.
    last_time: f64,
    /// The energy balance at the rows written.
    balance: EnergyBalanceTracker,
}

fn agreed(world: &SimpleCommunicator, mine: Option<String>) -> Result<(), DistributedError> {
    match first_message(world, mine) {
        None => Ok(()),
        Some(m) => Err(DistributedError::Run(m)),
    }
}

impl Outputs {
    fn open(
        world: &SimpleCommunicator,
        options: &DistributedOptions,
    ) -> Result<Self, DistributedError> {
        let pvd_path = options.out_dir.join(format!("{}.pvd", options.base));
        let mut out = Self {
            history: None,
            pvd: None,
            pvd_path,
            next_frame: 0,
            frames: 0,
            history_on_cadence: 0,
            times_on_cadence: Vec::new(),
            row: Vec::new(),
            last_time: 0.0,
            balance: EnergyBalanceTracker::default(),
        };
        let mut columns: Vec<String> = COMMON_COLUMNS.map(String::from).to_vec();
        columns.extend(fem_solid::model::HISTORY_COLUMNS.map(String::from));
        let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
        let result = if world.rank() == 0 && !options.resume {
            (|| -> Result<(), OutputError> {
                std::fs::create_dir_all(&options.out_dir)
                    .map_err(|e| OutputError::io("create directory", &options.out_dir, e))?;
                out.history = Some(HistoryWriter::create(
                    options.out_dir.join("history.csv"),
                    &refs,
                )?);
                out.pvd = Some(PvdWriter::create(&out.pvd_path)?);
                Ok(())
            })()
            .err()
            .map(|e| format!("rank 0: {e}"))
        } else {
            None
        };
        agreed(world, result)?;
        Ok(out)
    }

    fn resume(
        &mut self,
        world: &SimpleCommunicator,
        options: &DistributedOptions,
        frames: usize,
        rows: u64,
        times: Vec<f64>,
    ) -> Result<(), DistributedError> {
        self.next_frame = frames;
        let mine = if world.rank() == 0 {
            (|| -> Result<(), OutputError> {
                let mut columns: Vec<String> = COMMON_COLUMNS.map(String::from).to_vec();
                columns.extend(fem_solid::model::HISTORY_COLUMNS.map(String::from));
                let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
                self.history = Some(HistoryWriter::resume(
                    options.out_dir.join("history.csv"),
                    &refs,
                    rows,
                )?);
                let entries: Vec<(f64, String)> = times
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| (t, pvtu_name(&options.base, i)))
                    .collect();
                self.pvd = Some(PvdWriter::resume(&self.pvd_path, entries)?);
                Ok(())
            })()
            .err()
            .map(|e| format!("rank 0: {e}"))
        } else {
            None
        };
        self.history_on_cadence = rows;
        self.times_on_cadence = times;
        agreed(world, mine)
    }

    /// Writes a history row and a frame if asked. Collective.
    fn write(
        &mut self,
        run: &DistributedSolidRun,
        row: bool,
        frame: bool,
        options: &DistributedOptions,
    ) -> Result<(), DistributedError> {
        let world = &run.world;
        let rank = world.rank();
        let (step, t) = (run.stepper.step_index(), run.stepper.time());
        if row {
            let energy = run.stepper.energy();
            if let Some(e) = &energy {
                self.balance.observe(e);
            }
            self.row.clear();
            self.row.extend([Some(step as f64), Some(t)]);
            match &energy {
                Some(e) => self
                    .row
                    .extend([Some(e.kinetic), Some(e.potential), Some(e.total)]),
                None => self.row.extend([None; 3]),
            }
            let e = energy.unwrap_or_default();
            self.row.extend(
                [
                    e.external_work,
                    e.reaction_work,
                    e.dissipated,
                    run.stepper.dt(),
                    0.0,
                ]
                .map(Some),
            );
            let mine = if let Some(h) = self.history.as_mut() {
                if let Some(k) = self
                    .row
                    .iter()
                    .position(|c| c.is_some_and(|v| !v.is_finite()))
                {
                    Some(format!(
                        "history column '{}' is not finite at step {step} (t = {t:e})",
                        h.columns()[k]
                    ))
                } else {
                    h.write_row_with_gaps(&self.row)
                        .err()
                        .map(|e| format!("rank 0: {e}"))
                }
            } else {
                None
            };
            agreed(world, mine)?;
        }
        if frame {
            let d = run.frame_fields();
            let f = Frame::new(&run.points, &run.cells)
                .with_point_field(Field::vector("displacement", &d.displacement))
                .with_point_field(Field::vector("velocity", &d.velocity))
                .with_point_field(Field::scalar("global_node", &run.global_node))
                .with_cell_field(Field::new("cauchy_stress", 6, &d.cauchy))
                .with_cell_field(Field::scalar("von_mises", &d.von_mises))
                .with_cell_field(Field::scalar("J", &d.jacobian))
                .with_cell_field(Field::scalar("strain_energy_density", &d.energy_density))
                .with_cell_field(Field::scalar("global_cell", &run.global_cell));
            let index = self.next_frame;
            let mine = if let Some(name) = f.first_non_finite_field() {
                Some(format!(
                    "rank {rank}: frame field '{name}' is not finite at step {step} (t = {t:e})"
                ))
            } else {
                let piece = options.out_dir.join(piece_name(&options.base, index, rank));
                let mut result = write_vtu(&piece, &f, options.compression);
                if result.is_ok() && rank == 0 {
                    let pieces: Vec<String> = (0..world.size())
                        .map(|r| piece_name(&options.base, index, r))
                        .collect();
                    let name = pvtu_name(&options.base, index);
                    result = write_pvtu(&options.out_dir.join(&name), &f, &pieces);
                    if result.is_ok()
                        && let Some(pvd) = self.pvd.as_mut()
                    {
                        result = pvd.add(t, &name);
                    }
                }
                result.err().map(|e| format!("rank {rank}: {e}"))
            };
            agreed(world, mine)?;
            self.next_frame += 1;
            self.frames += 1;
            self.last_time = t;
        }
        Ok(())
    }
}

impl Outputs {
    /// Records what of the step just written an uninterrupted run would have written too.
    fn mark_cadence(&mut self, row: bool, frame: bool) {
        if row {
            self.history_on_cadence = self.history.as_ref().map_or(0, HistoryWriter::len);
        }
        if frame {
            self.times_on_cadence.push(self.last_time);
        }
    }
}

/// Rank `rank`'s piece of frame `index`: `X_000042_3.vtu`.
pub fn piece_name(base: &str, index: usize, rank: i32) -> String {
    format!("{base}_{index:06}_{rank}.vtu")
}

/// Removes what an older run of the same name left in the output directory, once this run's
/// first frame is written: its later frames (`X_NNNNNN.pvtu` and their pieces), pieces of
/// ranks this run does not have, and the frames of a serial run (`X_NNNNNN.vtu`), which this
/// run's `.pvd` no longer lists; and the checkpoints of a serial run (`checkpoint.fem`) or of
/// a run on another number of ranks (`checkpoint_R_of_Q.fem`, `Q ≠ size`), which could only
/// resume that older run. (This run's own checkpoint names are left to its ranks.) Returns
/// the number of files removed.
fn remove_older_frames(options: &DistributedOptions, size: i32) -> Result<usize, OutputError> {
    let dir = &options.out_dir;
    let prefix = format!("{}_", options.base);
    let index = |d: &str| {
        (d.len() >= 6 && d.bytes().all(|b| b.is_ascii_digit()))
            .then(|| d.parse::<usize>().ok())
            .flatten()
    };
    let mut removed = 0;
    let entries = std::fs::read_dir(dir).map_err(|e| OutputError::io("list", dir, e))?;
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let name = entry.file_name();
        if name
            .to_str()
            .is_some_and(|n| is_other_runs_checkpoint(n, size))
        {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(|e| OutputError::io("remove", &path, e))?;
            removed += 1;
            continue;
        }
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let stale = if let Some(d) = rest.strip_suffix(".pvtu") {
            index(d).is_some_and(|i| i >= 1)
        } else if let Some(d) = rest.strip_suffix(".vtu") {
            match d.split_once('_') {
                // A piece `X_NNNNNN_R.vtu`.
                Some((d, r)) => {
                    let rank = (!r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
                        .then(|| r.parse::<i64>().ok())
                        .flatten();
                    match (index(d), rank) {
                        (Some(i), Some(r)) => i >= 1 || r >= i64::from(size),
                        _ => false,
                    }
                }
                // A serial frame `X_NNNNNN.vtu`.
                None => index(d).is_some(),
            }
        } else {
            false
        };
        if stale {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(|e| OutputError::io("remove", &path, e))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Rank `rank`'s checkpoint file of a run on `size` ranks: `checkpoint_R_of_Q.fem`.
fn checkpoint_name(rank: impl std::fmt::Display, size: i32) -> String {
    format!("checkpoint_{rank}_of_{size}.fem")
}

/// A serial run's checkpoint, or a distributed run's on a number of ranks other than `size`.
fn is_other_runs_checkpoint(name: &str, size: i32) -> bool {
    if name == "checkpoint.fem" {
        return true;
    }
    let Some(ranks) = name
        .strip_prefix("checkpoint_")
        .and_then(|n| n.strip_suffix(".fem"))
    else {
        return false;
    };
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<i64>().ok())
            .flatten()
    };
    match ranks.split_once("_of_") {
        Some((r, q)) => match (number(r), number(q)) {
            (Some(_), Some(q)) => q != i64::from(size),
            _ => false,
        },
        None => false,
    }
}

/// The parallel file of frame `index`: `X_000042.pvtu`.
pub fn pvtu_name(base: &str, index: usize) -> String {
    format!("{base}_{index:06}.pvtu")
}
