//! `fem modes FILE [-k N] [--shift S] [-o DIR]`: the natural frequencies and mode shapes of a
//! model linearized about its initial state ([`fem_model::Model::linearization`]; the solid and
//! the string offer it), by the eigen-solver of [`fem_assembly::modes`].
//!
//! Writes `DIR/modes.csv` (one row per mode: `mode, omega, frequency, omega_squared,
//! generalized_mass, effective_mass_x, effective_mass_y, effective_mass_z`) and the shapes as
//! a series ParaView animates, the mode number as its time (`DIR/NAME_modes.pvd`, one `.vtu`
//! per mode with the point field `displacement`, each shape scaled to a largest displacement
//! of 1).
//!
//! With the shapes `φ̂` so scaled, the generalized mass is `φ̂ᵀ M φ̂`; the effective mass
//! fraction of mode `j` in direction `d` is `(φⱼᵀ M r_d)² / (r_dᵀ M r_d)` for the M-normalised
//! `φⱼ` and `r_d` the rigid unit displacement of the free dofs along `d` (the fractions of all
//! modes sum to 1 in each direction where the model has free dofs).

use std::path::{Path, PathBuf};

use fem_assembly::modes::{MassMatrix, ModeSettings, Modes, ModesError, lowest_modes};
use fem_assembly::sparse::principal_submatrix;
use fem_io::{Compression, Field, Frame, FrameSeries, HistoryWriter};
use fem_model::InputError;
use fem_model::vibration::Linearization;
use fem_time::Mass;

use crate::error::FemError;
use crate::input::ModelRegistry;

/// The columns of `modes.csv`.
pub const COLUMNS: [&str; 8] = [
    "mode",
    "omega",
    "frequency",
    "omega_squared",
    "generalized_mass",
    "effective_mass_x",
    "effective_mass_y",
    "effective_mass_z",
];

/// What `fem modes` is asked.
#[derive(Clone, Debug)]
pub struct ModesOptions {
    /// How many modes (`-k`).
    pub count: usize,
    /// The shift (`--shift`); `None` for the eigen-solver's default, below the spectrum.
    pub shift: Option<f64>,
    /// Where the output goes.
    pub out_dir: PathBuf,
    /// The base name of the series (the input file's stem).
    pub base: String,
}

/// One row of `modes.csv`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModeRow {
    /// `ω` (rad/s): `√λ`, negative for a negative `λ` (round-off of a rigid mode).
    pub omega: f64,
    /// `f = ω / 2π` (Hz).
    pub frequency: f64,
    /// `λ = ω²`.
    pub omega_squared: f64,
    /// `φ̂ᵀ M φ̂` for the shape scaled to a largest displacement of 1.
    pub generalized_mass: f64,
    /// Effective mass fractions in x, y, z.
    pub effective_mass: [f64; 3],
}

/// What `fem modes` computed and wrote.
#[derive(Debug)]
pub struct ModesSummary {
    /// The rows of `modes.csv`.
    pub rows: Vec<ModeRow>,
    /// `modes.csv`.
    pub csv: PathBuf,
    /// The series of shapes.
    pub pvd: PathBuf,
    /// Free dofs of the eigenproblem.
    pub free_dofs: usize,
    /// The shift used.
    pub shift: f64,
    /// Solves with `K − σM`.
    pub solves: usize,
    /// The largest residual `‖Kφ − λMφ‖∞ / (‖K‖∞ ‖φ‖∞)` of a returned pair (rigid modes
    /// included: measured against `‖K‖∞`, their residual is round-off as any other's).
    pub scaled_residual: f64,
    /// Wall-clock seconds of the eigen-solver (factorization, search, shapes).
    pub solver_seconds: f64,
}

fn refuse(path: &Path, field: &str, message: impl Into<String>) -> FemError {
    FemError::Input {
        path: path.to_path_buf(),
        source: InputError::invalid(field, message),
    }
}

/// Computes the modes of the model of `file` and writes them to `options.out_dir`.
pub fn modes<M: ModelRegistry>(
    file: &Path,
    options: &ModesOptions,
) -> Result<ModesSummary, FemError> {
    if options.count == 0 {
        return Err(refuse(file, "-k", "expected at least 1 mode"));
    }
    if let Some(s) = options.shift
        && !s.is_finite()
    {
        return Err(refuse(file, "--shift", "expected a finite number"));
    }
    let problem = eigenproblem::<M>(file, Some(&options.out_dir))?;
    let (linear, free) = (&problem.linearization, &problem.free);
    let name = &problem.model;
    if options.count > free.len() {
        return Err(refuse(
            file,
            "-k",
            format!(
                "{} modes asked for, but the model has only {} free dofs (after its fixed and prescribed dofs): ask for at most {}",
                options.count,
                free.len(),
                free.len()
            ),
        ));
    }
    let budget =
        fem_model::resources::Budget::from_machine(Some(&options.out_dir)).map_err(|source| {
            FemError::Input {
                path: file.to_path_buf(),
                source,
            }
        })?;
    let n = free.len() as f64;
    let shapes_bytes = 8.0
        * options.count as f64
        * (linear.dof_node.len() as f64 + 3.0 * linear.points.len() as f64);
    budget
        .check_memory(
            "-k",
            &format!("{} modes of {} free dofs", options.count, free.len()),
            Modes::memory_estimate(free.len(), options.count) + shapes_bytes + 400.0 * n,
        )
        .map_err(|source| FemError::Input {
            path: file.to_path_buf(),
            source,
        })?;
    let (stiffness, mass) = (&problem.stiffness, &problem.mass);
    let mass_ref = match mass {
        Mass::Lumped(m) => MassMatrix::Lumped(m),
        Mass::Consistent(m) => MassMatrix::Consistent(m),
    };
    let mut settings = ModeSettings::lowest(options.count).with_dof_points(
        free.iter()
            .map(|&d| linear.points[linear.dof_node[d]])
            .collect(),
    );
    settings.shift = options.shift;
    fem_model::progress::phase(format!(
        "the {} lowest modes of {} free dofs: factoring K - sigma M and the shift-invert Lanczos search",
        options.count,
        free.len()
    ));
    let started = std::time::Instant::now();
    let modes = lowest_modes(stiffness, mass_ref, &settings).map_err(|e| match e {
        ModesError::TooManyModes { .. } | ModesError::NoModes => refuse(file, "-k", e.to_string()),
        ModesError::MassNotPositive { .. } => refuse(file, &linear.mass_key, e.to_string()),
        ModesError::ShiftAtEigenvalue { .. } => refuse(
            file,
            "--shift",
            if options.shift.is_some() {
                e.to_string()
            } else {
                format!("{e} (the default shift; give one with --shift)")
            },
        ),
        ModesError::NonFinite { .. } => refuse(file, &format!("model.{name}"), e.to_string()),
        other => FemError::Modes {
            path: file.to_path_buf(),
            source: other,
        },
    })?;
    let solver_seconds = started.elapsed().as_secs_f64();
    let mut summary = write(linear, free, &modes, mass_ref, options)?;
    summary.solver_seconds = solver_seconds;
    Ok(summary)
}

/// The eigenproblem of an input's model: `K` and `M` on its free dofs.
#[derive(Debug)]
pub struct Eigenproblem {
    /// The model's name (`solid`, `string`).
    pub model: String,
    /// The model's linearization about its initial state.
    pub linearization: Linearization,
    /// Its free dofs (system dofs not held), increasing.
    pub free: Vec<usize>,
    /// `K` on the free dofs.
    pub stiffness: fem_assembly::CsrMatrix<f64>,
    /// `M` on the free dofs.
    pub mass: Mass,
}

/// Reads and checks `file`, builds its model and restricts its linearization to the free dofs
/// (`output`: where a run's output would go, for the disk budget). A model that offers no
/// linearization is refused (exit 2, naming `model.NAME`).
pub fn eigenproblem<M: ModelRegistry>(
    file: &Path,
    output: Option<&Path>,
) -> Result<Eigenproblem, FemError> {
    let (input, model) = crate::prepare_run_with::<M>(file, output, Some(0))?;
    let name = input.model.name().to_string();
    let linear = model
        .linearization()
        .ok_or_else(|| {
            refuse(
                file,
                &format!("model.{name}"),
                format!(
                    "fem modes computes the modes of a structure with a stiffness and a mass (model.solid, model.string); model.{name} offers none"
                ),
            )
        })?
        .map_err(|e| {
            refuse(
                file,
                "mesh",
                format!("the stiffness at the initial state cannot be evaluated: {e}"),
            )
        })?;
    let free = linear.free_dofs();
    let (stiffness, mass) = restrict(&linear, &free);
    Ok(Eigenproblem {
        model: name,
        linearization: linear,
        free,
        stiffness,
        mass,
    })
}

/// `K` and `M` on the free dofs.
fn restrict(linear: &Linearization, free: &[usize]) -> (fem_assembly::CsrMatrix<f64>, Mass) {
    let n = linear.dof_node.len();
    let mut index = vec![usize::MAX; n];
    for (i, &d) in free.iter().enumerate() {
        index[d] = i;
    }
    let stiffness = principal_submatrix(&linear.stiffness, &index);
    let mass = match &linear.mass {
        Mass::Lumped(m) => Mass::Lumped(free.iter().map(|&d| m[d]).collect()),
        Mass::Consistent(m) => Mass::Consistent(principal_submatrix(m, &index)),
    };
    (stiffness, mass)
}

/// The rows, `modes.csv` and the series of shapes.
fn write(
    linear: &Linearization,
    free: &[usize],
    modes: &Modes,
    mass: MassMatrix<'_>,
    options: &ModesOptions,
) -> Result<ModesSummary, FemError> {
    let output = |e: fem_io::OutputError| FemError::Run(fem_drive::RunError::Output(e));
    // Rigid unit displacements of the free dofs along x, y, z, and the mass each moves.
    let rigid: [Vec<f64>; 3] = std::array::from_fn(|d| {
        free.iter()
            .map(|&dof| linear.dof_direction[dof][d])
            .collect()
    });
    let total: [f64; 3] = std::array::from_fn(|d| mass.inner(&rigid[d], &rigid[d]));
    let n_points = linear.points.len();
    let mut series = FrameSeries::create(
        &options.out_dir,
        &format!("{}_modes", options.base),
        Compression::default(),
    )
    .map_err(output)?;
    let csv = options.out_dir.join("modes.csv");
    let mut history = HistoryWriter::create(&csv, &COLUMNS).map_err(output)?;
    let mut rows = Vec::with_capacity(modes.len());
    let mut displacement = vec![0.0; 3 * n_points];
    let mut residual = 0.0f64;
    for j in 0..modes.len() {
        let phi = modes.shape(j);
        residual = residual.max(modes.scaled_residual(j));
        // The shape on the points, scaled to a largest displacement of 1 (sign: the largest
        // component positive).
        displacement.fill(0.0);
        for (&dof, &p) in free.iter().zip(phi) {
            let node = linear.dof_node[dof];
            let dir = linear.dof_direction[dof];
            for i in 0..3 {
                displacement[3 * node + i] += p * dir[i];
            }
        }
        let (largest, signed) = displacement.chunks_exact(3).flat_map(|v| v.iter()).fold(
            (0.0f64, 0.0f64),
            |(m, s), &v| {
                if v.abs() > m { (v.abs(), v) } else { (m, s) }
            },
        );
        let scale = if largest > 0.0 {
            signed.signum() / largest
        } else {
            1.0
        };
        displacement.iter_mut().for_each(|v| *v *= scale);
        let omega = modes.omega(j);
        let row = ModeRow {
            omega,
            frequency: omega / (2.0 * std::f64::consts::PI),
            omega_squared: modes.eigenvalues()[j],
            generalized_mass: scale * scale,
            effective_mass: std::array::from_fn(|d| {
                if total[d] > 0.0 {
                    mass.inner(phi, &rigid[d]).powi(2) / total[d]
                } else {
                    0.0
                }
            }),
        };
        let values = [
            (j + 1) as f64,
            row.omega,
            row.frequency,
            row.omega_squared,
            row.generalized_mass,
            row.effective_mass[0],
            row.effective_mass[1],
            row.effective_mass[2],
        ];
        if let Some(bad) = values.iter().position(|v| !v.is_finite()) {
            return Err(FemError::Run(fem_drive::RunError::NonFinite {
                what: format!("{} of mode {}", COLUMNS[bad], j + 1),
                step: 0,
                t: (j + 1) as f64,
            }));
        }
        history.write_row(&values).map_err(output)?;
        let frame = Frame::new(&linear.points, &linear.cells)
            .with_point_field(Field::vector("displacement", &displacement));
        series.write_frame((j + 1) as f64, &frame).map_err(output)?;
        rows.push(row);
    }
    drop(history);
    Ok(ModesSummary {
        rows,
        csv,
        pvd: series.pvd_path().to_path_buf(),
        free_dofs: free.len(),
        shift: modes.shift(),
        solves: modes.solves(),
        scaled_residual: residual,
        solver_seconds: 0.0,
    })
}
