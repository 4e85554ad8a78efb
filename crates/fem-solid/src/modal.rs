//! The solid truncated to its lowest modes and stepped by the exact modal Moreau–Jean scheme
//! (MMJ), with the nodes of chosen groups in unilateral contact with planes (issue 27): the
//! `model.solid` section with `time.scheme: modal_moreau_jean`, `model.solid.modes` and the
//! shared `contact` section.
//!
//! The model is the solid linearized about its reference state: `K φ = ω² M φ` on the free
//! dofs (`K` the tangent at zero displacement, `M` the lumped or consistent mass,
//! docs/theory/modes.md), truncated to the `m` lowest `M`-orthonormal modes `Φ`, so that
//! `u = Φ q` and each modal coordinate obeys `q̈_k + 2σ_k q̇_k + ω_k² q_k = (Φᵀ Hᵀ λ)_k`.
//! The losses are `model.solid.damping`'s, the same as under DEF_LIM: the stiffness-proportional
//! damping `C = η K`, whose modal rates are `σ_k = η ω_k² / 2` (damping ratio
//! `ζ_k = σ_k/ω_k = η ω_k / 2`, docs/theory/modes.md (M10)); the scheme is exact for them too.
//! A contact node `a` of a group meeting the plane through `p` with unit normal `n` has the gap
//! `y_a = n · (X_a + u_a − p) = (n Φ)_a q + n · (X_a − p) ≥ 0`: a row of the modal contact
//! operator `H Φ` (docs/theory/moreau_jean.md: the impact law on secant gap rates, exact
//! free flight at every `ωΔt`, the modal energy `½ Σ (q̇² + ω² q²)` kept to round-off with
//! `e = 1`).
//!
//! Output contract: frames are the solid's ([`crate::model`]: `displacement = Φ q` and
//! `velocity = Φ q̇` on the mesh, the stresses of that displacement); `history.csv` has
//! `step,t,kinetic,potential,total` (the energy of the `m` modes, `½ Σ q̇²` and `½ Σ ω² q²`),
//! then, with `damping`, `dissipated` (the energy the damping took out since the start,
//! `Σ_k ∫ 2σ_k q̇_k² dt`) and, with a `contact` section too, `impact_work` (what the contact
//! impulses put in since the start), so that `total + dissipated − impact_work` is the initial
//! energy to round-off; then, with a `contact` section, `n_active,lcp_iterations,lcp_residual,min_gap,
//! contact_force_total` as the modal string has them: the contacts active in the step, the
//! impact LCP's iterations and residual, the smallest gap of a contact node to its plane (a
//! cantilever's tip clearance above its stop), the sum of the contact impulses over `Δt`.

use std::sync::Arc;

use fem_assembly::modes::{MassMatrix, ModeSettings, Modes, ModesError, lowest_modes};
use fem_assembly::{DofMap, SolidOperator};
use fem_constraints::UnilateralContacts;
use fem_io::{Frame, VtkCells};
use fem_mesh::Mesh;
use fem_model::build::{contact_solver, group_list};
use fem_model::input::{ContactInput, LcpSolverKind};
use fem_model::number::shown;
use fem_model::vibration::LinearizationResult;
use fem_model::{Checked, InputError, Model, Sections};
use fem_time::nonsmooth::{ModalSystem, modal};
use fem_time::{Energy, StateField, StepError, StepReport, Stepper, TimeGrid, restored};
use fem_time::{Mass, ModalBasis, ModalDamping, ModalMoreauJean, NodalStepper};

use crate::model::{SolidOutput, linearize};
use crate::section::{SolidSection, SolidSetup};
use crate::system::SolidMass;

/// The scheme's name in input files (`time.scheme: modal_moreau_jean`).
pub const NAME: &str = modal::NAME;

/// The history columns after `step,t,kinetic,potential,total`, with a `contact` section.
pub use fem_time::nonsmooth::modal::CONTACT_COLUMNS;

/// The solid in its lowest modes, stepped by the exact modal Moreau–Jean scheme.
pub struct ModalSolidModel {
    stepper: ModalMoreauJean,
    basis: ModalBasis,
    grid: TimeGrid,
    describe: Vec<String>,
    output: SolidOutput,
    mass: SolidMass,
    /// The smallest gap at `t0` (the history's first row).
    initial_min_gap: f64,
    has_contact: bool,
    planes: Vec<fem_io::Plane>,
    /// `Φ q` and `Φ q̇` on the free dofs (the frame's buffers).
    position: Vec<f64>,
    velocity: Vec<f64>,
    /// The losses' bookkeeping (`Some` when `damping` is given and positive).
    losses: Option<Losses>,
}

/// The energy balance of a damped modal solid, kept step by step ([`Losses::after_step`];
/// docs/theory/modes.md (M11)).
///
/// A step of the scheme is a kick at `t_i` — the contact impulse `P = (HΦ)ᵀλ` changes the
/// modal velocity by `ΔU_k = S_k P_k / (m_k Δt)` (`S_k` the free flow's response to a unit
/// velocity, `m_k` the modal mass) — followed by the exact damped free flow over `Δt`. So the
/// impulses' work is `E(q^i, u^i + ΔU) − E(q^i, u^i)` and the damping's dissipation is
/// `E(q^i, u^i + ΔU) − E(q^{i+1}, u^{i+1})`, with `E = ½ Σ m (u² + ω² q²)`.
struct Losses {
    /// `S_k / (m_k Δt)` per mode.
    kick: Vec<f64>,
    /// The contact rows `HΦ`, row-major (`m` values per contact; empty without contact).
    rows: Vec<f64>,
    has_contact: bool,
    /// `(q^i, u^i)`: the state at the start of the next step.
    q: Vec<f64>,
    u: Vec<f64>,
    /// The modal impulse `P` of the step (scratch).
    impulse: Vec<f64>,
    /// `[dissipated, impact_work]` since the start.
    totals: [f64; 2],
}

/// The history columns of a damped modal solid, before the contact columns.
pub const DAMPING_COLUMNS: [&str; 2] = ["dissipated", "impact_work"];

impl Losses {
    /// The modal energy `½ Σ m (u² + ω² q²)` (as the stepper's).
    fn energy(system: &ModalSystem, q: &[f64], u: &[f64]) -> f64 {
        let mut e = 0.0;
        for k in 0..q.len() {
            let (m, w) = (system.mass[k], system.omega[k]);
            e += 0.5 * m * (u[k] * u[k] + w * w * q[k] * q[k]);
        }
        e
    }

    /// Accounts for the step just taken by `stepper` from the state kept here.
    fn after_step(&mut self, stepper: &ModalMoreauJean) {
        let system = stepper.system();
        let before = Self::energy(system, &self.q, &self.u);
        self.impulse.fill(0.0);
        let m = self.q.len();
        for (c, &l) in stepper.impulses().iter().enumerate() {
            if l != 0.0 {
                self.impulse
                    .iter_mut()
                    .zip(&self.rows[c * m..(c + 1) * m])
                    .for_each(|(p, h)| *p += h * l);
            }
        }
        // u^i + ΔU, in place (u^i is not needed again).
        self.u
            .iter_mut()
            .zip(self.kick.iter().zip(&self.impulse))
            .for_each(|(u, (k, p))| *u += k * p);
        let kicked = Self::energy(system, &self.q, &self.u);
        self.q.copy_from_slice(stepper.position());
        self.u.copy_from_slice(&stepper.velocity_at_step());
        let after = Self::energy(system, &self.q, &self.u);
        self.totals[0] += kicked - after;
        self.totals[1] += kicked - before;
    }

    fn columns(&self) -> &'static [&'static str] {
        if self.has_contact {
            &DAMPING_COLUMNS
        } else {
            &DAMPING_COLUMNS[..1]
        }
    }
}

impl std::fmt::Debug for ModalSolidModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModalSolidModel")
            .field("modes", &self.basis.n_modes())
            .field("grid", &self.grid)
            .field("output", &self.output)
            .finish_non_exhaustive()
    }
}

/// The contacts of the `contact` section on the solid's free dofs: per contact node its free
/// dofs with the normal's components (a row of `H`), the heights `h` (`y = HΦ q − h`), and
/// what `fem check` says. Found without the modes ([`Contacts::rows`] puts them on them).
struct Contacts {
    /// `(free dof, n_c)` of every contact node, node after node.
    dofs: Vec<(usize, f64)>,
    /// Where each node's entries start in `dofs` (one more than the nodes).
    starts: Vec<usize>,
    heights: Vec<f64>,
    describe: String,
    planes: Vec<fem_io::Plane>,
}

impl Contacts {
    /// The rows of `H Φ` on the modes `basis` (row-major, one per contact node).
    fn rows(&self, basis: &ModalBasis) -> Vec<f64> {
        let m = basis.n_modes();
        let mut rows = Vec::with_capacity(m * self.heights.len());
        for node in self.starts.windows(2) {
            let dofs = &self.dofs[node[0]..node[1]];
            rows.extend((0..m).map(|k| {
                dofs.iter()
                    .map(|&(f, nc)| nc * basis.shapes[(f, k)])
                    .sum::<f64>()
            }));
        }
        rows
    }
}

/// A vector of 3 finite numbers at `field`.
fn vec3(field: &str, v: &[f64]) -> Result<[f64; 3], InputError> {
    match v {
        [x, y, z] if v.iter().all(|c| c.is_finite()) => Ok([*x, *y, *z]),
        _ => Err(InputError::invalid(
            field,
            format!("expected 3 finite numbers, got {v:?}"),
        )),
    }
}

/// The contact nodes of `contact`'s obstacles (a group's nodes against a plane) on the free
/// dofs of `dofmap`.
fn contacts(contact: &ContactInput, mesh: &Mesh, dofmap: &DofMap) -> Result<Contacts, InputError> {
    let invalid = |field: &str, message: String| InputError::invalid(field, message);
    let (mut dofs_all, mut starts, mut heights) = (Vec::new(), vec![0], Vec::new());
    let (mut groups, mut planes) = (Vec::new(), Vec::new());
    let (lo, hi) = mesh.points.iter().fold(
        ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]),
        |(lo, hi), p| {
            (
                std::array::from_fn(|i| lo[i].min(p[i])),
                std::array::from_fn(|i| hi[i].max(p[i])),
            )
        },
    );
    let size = (0..3).map(|i| hi[i] - lo[i]).fold(0.0f64, f64::max);
    for (i, o) in contact.obstacles.iter().enumerate() {
        let field = format!("contact.obstacles[{i}]");
        if o.positions.is_some() || o.uniform.is_some() || o.height.is_some() {
            return Err(invalid(
                &field,
                "a solid's obstacle is a 'plane' met by the nodes of a 'group' \
                 ('positions', 'uniform' and 'height' are a modal string's)"
                    .into(),
            ));
        }
        let name = o.group.as_ref().ok_or_else(|| {
            invalid(
                &format!("{field}.group"),
                "expected the physical group whose nodes meet the plane".into(),
            )
        })?;
        let group = mesh.group(name).ok_or_else(|| {
            invalid(
                &format!("{field}.group"),
                format!(
                    "no physical group named '{name}'; the mesh has: {}",
                    group_list(mesh)
                ),
            )
        })?;
        let plane = o.plane.as_ref().ok_or_else(|| {
            invalid(
                &format!("{field}.plane"),
                "expected the plane the group's nodes stay on the normal's side of: \
                 plane: { point: [x, y, z], normal: [nx, ny, nz] }"
                    .into(),
            )
        })?;
        let p = vec3(&format!("{field}.plane.point"), &plane.point)?;
        let n = vec3(&format!("{field}.plane.normal"), &plane.normal)?;
        let norm = n.iter().map(|c| c * c).sum::<f64>().sqrt();
        if !(norm > 0.0 && norm.is_finite()) {
            return Err(invalid(
                &format!("{field}.plane.normal"),
                format!("expected a non-zero normal, got {n:?}"),
            ));
        }
        let n = n.map(|c| c / norm);
        let mut count = 0;
        for &a in &group.nodes {
            let x = mesh.points[a];
            let gap: f64 = (0..3).map(|c| n[c] * (x[c] - p[c])).sum();
            let scale: f64 = (0..3)
                .map(|c| (n[c] * x[c]).abs() + (n[c] * p[c]).abs())
                .sum();
            if gap < -1e-12 * scale.max(f64::MIN_POSITIVE) {
                return Err(invalid(
                    &field,
                    format!(
                        "node {a} of group '{name}' at {x:?} starts {} below the plane: \
                         start every node of the group on the side the normal points to",
                        shown(-gap)
                    ),
                ));
            }
            let dofs: Vec<(usize, f64)> = (0..3)
                .filter(|&c| n[c] != 0.0)
                .filter_map(|c| dofmap.free(3 * a + c).map(|f| (f, n[c])))
                .collect();
            if dofs.is_empty() {
                // A held node (or one off the solid): its gap never changes.
                continue;
            }
            dofs_all.extend(dofs);
            starts.push(dofs_all.len());
            heights.push(-gap);
            count += 1;
        }
        groups.push(format!("{count} nodes of '{name}'"));
        planes.push(fem_io::Plane {
            point: p,
            normal: n,
            half_size: 0.75 * size,
        });
    }
    if heights.is_empty() {
        return Err(invalid(
            "contact.obstacles",
            "no node of the groups can move toward its plane (every one is held by 'fixed'): nothing would meet an obstacle".into(),
        ));
    }
    Ok(Contacts {
        dofs: dofs_all,
        starts,
        heights,
        describe: format!(
            "  contact: {} against {}, restitution e = {}, {} solver",
            groups.join(", "),
            if planes.len() == 1 {
                "a plane".to_string()
            } else {
                format!("{} planes", planes.len())
            },
            shown(contact.restitution),
            match contact.solver {
                LcpSolverKind::Lemke => "lemke",
                LcpSolverKind::Pgs => "pgs",
            }
        ),
        planes,
    })
}

/// Maps an eigen-solver error to the input key it is about.
fn modes_error(e: ModesError) -> InputError {
    match e {
        ModesError::MassNotPositive { .. } => {
            InputError::invalid("model.solid.material.density", e.to_string())
        }
        other => InputError::invalid("model.solid.modes", other.to_string()),
    }
}

/// The input of a modal solid validated, before any operator or mode: what a run builds from
/// and what `fem check` describes ([`ModalSolidModel::check`]).
struct Validated {
    setup: SolidSetup,
    n_modes: usize,
    /// `η` of `damping` (0 when not given).
    eta: f64,
    /// The contact nodes, the solver and the restitution of a `contact` section.
    contacts: Option<(Contacts, Box<dyn fem_constraints::LcpSolver>, f64)>,
}

/// Validates the section with the rest of the input: every refusal of a run's set-up but the
/// eigen-solver's own, and the memory the eigen-solve and the modes will take.
fn validate(section: &SolidSection, input: &Sections<'_>) -> Result<Validated, InputError> {
    let invalid = |field: &str, message: String| InputError::invalid(field, message);
    let setup = section.setup(input)?;
    let n_modes = section.modes.ok_or_else(|| {
        invalid(
            "model.solid.modes",
            format!(
                "the scheme {NAME} steps the solid in its lowest modes: give their number, modes: m"
            ),
        )
    })?;
    let free_of_loads = |key: &str| {
        invalid(
            &format!("model.solid.{key}"),
            format!(
                "the scheme {NAME} steps the free vibration of the solid's modes (with contact): \
                     '{key}' is not read by it; remove it, or step the solid by def_lim"
            ),
        )
    };
    if setup.gravity.is_some() {
        return Err(free_of_loads("gravity"));
    }
    if !section.tractions.is_empty() {
        return Err(free_of_loads("tractions"));
    }
    if !section.rotations.is_empty() {
        return Err(free_of_loads("rotations"));
    }
    if !input.dirichlet.is_empty() {
        return Err(invalid(
            "dirichlet",
            format!(
                "the scheme {NAME} steps the solid's modes about a fixed support: a prescribed \
                     motion is not a modal problem; hold the nodes with 'fixed', or step the solid by def_lim"
            ),
        ));
    }
    let dofmap = setup.dofmap.clone();
    let n_free = dofmap.n_free();
    if !(1..=n_free).contains(&n_modes) {
        return Err(invalid(
            "model.solid.modes",
            format!(
                "expected 1 to {n_free} modes (the solid's free dofs after 'fixed'), got {n_modes}"
            ),
        ));
    }
    let eta = section.damping_eta()?;
    let contacts = match input.contact {
        None => None,
        Some(c) => {
            let solver = contact_solver(c)?;
            let found = contacts(c, &setup.mesh, &dofmap)?;
            // The heights and the restitution checked as the run's contact set checks them.
            UnilateralContacts::from_dense(
                1,
                &vec![0.0; found.heights.len()],
                found.heights.clone(),
                c.restitution,
            )
            .map_err(|e| invalid("contact", e.to_string()))?;
            Some((found, solver, c.restitution))
        }
    };
    // Memory before the eigen-solve: the solver's own (factor, Lanczos basis), the modes
    // `Φ` (n × m), the contact rows `HΦ` and the Delassus matrix of the contact nodes found.
    let n_contacts = contacts
        .as_ref()
        .map_or(0.0, |(c, _, _)| c.heights.len() as f64);
    let (n, m) = (n_free as f64, n_modes as f64);
    input.check_memory(
        "model.solid.modes",
        &format!("{n_modes} modes of {n_free} free dofs"),
        Modes::memory_estimate(n_free, n_modes)
            + 8.0 * m * n
            + 400.0 * n
            + 8.0 * m * n_contacts
            + 8.0 * n_contacts.powi(2),
    )?;
    Ok(Validated {
        setup,
        n_modes,
        eta,
        contacts,
    })
}

impl ModalSolidModel {
    /// Validates the section with the rest of the input and builds the modes, the contacts
    /// and the stepper.
    pub fn new(section: &SolidSection, input: &Sections<'_>) -> Result<Self, InputError> {
        let invalid = |field: &str, message: String| InputError::invalid(field, message);
        let Validated {
            setup,
            n_modes,
            eta,
            contacts,
        } = validate(section, input)?;
        let dofmap = setup.dofmap.clone();
        let n_free = dofmap.n_free();
        let grid = setup.grid;
        let n_cells = setup.formulations.len();
        fem_model::progress::phase(format!("the solid's operator: {n_cells} cells"));
        let all: Vec<usize> = (0..n_cells).collect();
        let operator = setup
            .operator(&setup.mesh.points, &setup.connectivity, &all, &dofmap)
            .map_err(|e| setup.operator_error(e))?;
        let centre_of_mass = operator.mass_properties().center;
        let v0 = setup.initial_velocity(section, centre_of_mass)?;
        let stiffness = operator
            .tangent(&vec![0.0; dofmap.n_dofs()])
            .map_err(|e| setup.operator_error(e))?;
        let mass = match setup.mass {
            SolidMass::Lumped => Mass::Lumped(operator.lumped_mass().to_vec()),
            SolidMass::Consistent => Mass::Consistent(
                operator
                    .consistent_mass()
                    .map_err(|e| setup.operator_error(e))?,
            ),
        };
        fem_model::progress::phase(format!(
            "the solid's {n_modes} lowest modes: shift-invert Lanczos on K - sigma M ({n_free} free dofs)"
        ));
        let settings = ModeSettings::lowest(n_modes)
            .with_dof_points(dofmap.free_dof_points(&setup.mesh.points));
        let modes = lowest_modes(
            &stiffness,
            match &mass {
                Mass::Lumped(d) => MassMatrix::Lumped(d),
                Mass::Consistent(c) => MassMatrix::Consistent(c),
            },
            &settings,
        )
        .map_err(modes_error)?;
        let basis = ModalBasis::from_modes(&modes);
        let q0 = vec![0.0; n_modes];
        let qdot0 = basis.to_modal(&mass, &v0);
        // C = η K: σ_k = η ω_k² / 2 (ModalDamping::Rayleigh with no mass part).
        let damping = if eta > 0.0 {
            ModalDamping::Rayleigh {
                mass: 0.0,
                stiffness: eta,
            }
        } else {
            ModalDamping::None
        };
        let system = basis
            .modal_system(&damping)
            .map_err(|e| invalid("model.solid.damping", e.to_string()))?;
        let setup_error = |e: fem_time::StepError| invalid("time", e.to_string());
        let mut stepper =
            ModalMoreauJean::from_physical_state(system, grid.dt(), grid.t0(), &q0, &qdot0)
                .map_err(setup_error)?;
        let mut describe = section.describe_setup(&setup, n_cells, 0);
        let (w1, wm) = (basis.omega[0], basis.omega[n_modes - 1]);
        let two_pi = 2.0 * std::f64::consts::PI;
        describe.push(format!(
            "  modes: the {n_modes} lowest of {n_free} free dofs, f from {} to {} Hz, omega_max dt = {}",
            shown(w1 / two_pi),
            shown(wm / two_pi),
            shown(wm * grid.dt())
        ));
        if eta > 0.0 {
            describe.push(format!(
                "  damping: C = eta K, eta = {} s: damping ratio eta omega / 2 from {} (mode 1) to {} (mode {n_modes})",
                shown(eta),
                shown(0.5 * eta * w1),
                shown(0.5 * eta * wm)
            ));
        }
        let mut planes = Vec::new();
        let mut rows = Vec::new();
        let mut initial_min_gap = f64::INFINITY;
        if let Some((found, solver, restitution)) = contacts {
            initial_min_gap = found
                .heights
                .iter()
                .map(|h| -h)
                .fold(f64::INFINITY, f64::min);
            fem_model::progress::phase(format!(
                "the contact rows on the modes: {} nodes over {n_modes} modes",
                found.heights.len()
            ));
            rows = found.rows(&basis);
            let set =
                UnilateralContacts::from_dense(n_modes, &rows, found.heights.clone(), restitution)
                    .map_err(|e| invalid("contact", e.to_string()))?;
            stepper = stepper.with_contacts(set, solver).map_err(setup_error)?;
            describe.push(found.describe);
            planes = found.planes;
        }
        describe.extend(time_lines(&grid));
        let mut vtk = VtkCells::new();
        vtk.push_block(setup.mesh_kind, &setup.connectivity);
        let output = SolidOutput::new(setup.mesh.points.clone(), vtk, Arc::new(operator));
        let losses = (eta > 0.0).then(|| Losses {
            kick: stepper
                .coefficients()
                .iter()
                .zip(&stepper.system().mass)
                .map(|(c, m)| c.flow_s / (m * grid.dt()))
                .collect(),
            rows,
            has_contact: input.contact.is_some(),
            q: q0.clone(),
            u: qdot0.clone(),
            impulse: vec![0.0; n_modes],
            totals: [0.0; 2],
        });
        Ok(Self {
            stepper,
            basis,
            grid,
            describe,
            output,
            mass: setup.mass,
            initial_min_gap,
            has_contact: input.contact.is_some(),
            planes,
            position: vec![0.0; n_free],
            velocity: vec![0.0; n_free],
            losses,
        })
    }

    /// The damping's dissipation and the contact impulses' work since the start (both 0
    /// without `damping`).
    pub fn losses(&self) -> (f64, f64) {
        self.losses
            .as_ref()
            .map_or((0.0, 0.0), |l| (l.totals[0], l.totals[1]))
    }

    /// The modes the solid is stepped in.
    pub fn basis(&self) -> &ModalBasis {
        &self.basis
    }

    /// The stepper.
    pub fn modal_stepper(&self) -> &ModalMoreauJean {
        &self.stepper
    }

    /// The operator (geometry, material, dof map).
    pub fn operator(&self) -> &SolidOperator {
        self.output.operator()
    }

    /// The displacement `Φ q` on the free dofs at the current step.
    pub fn displacement(&self) -> Vec<f64> {
        let mut u = vec![0.0; self.position.len()];
        combine(&self.basis, self.stepper.position(), &mut u);
        u
    }
}

/// The `time` and `stability` lines of `fem check`.
fn time_lines(grid: &TimeGrid) -> [String; 2] {
    [
        format!(
            "  time: exact modal Moreau-Jean on the modes, dt = {}, {} steps from {} to {}",
            shown(grid.dt()),
            grid.n_steps(),
            shown(grid.t0()),
            shown(grid.t_end())
        ),
        "  stability: unconditional (exact for free modes at any omega dt)".into(),
    ]
}

/// `fem check` of a modal solid without its operator and without the eigen-solve: the input
/// validated as [`ModalSolidModel::new`] validates it (the memory of the eigen-solve and the
/// modes included, the contact nodes found against their planes), the initial velocity's
/// kinetic energy checked finite on the lumped mass, and the run described — all but the
/// frequencies, which only the eigen-solve gives (`fem check --modes` computes them, `fem
/// modes` lists them).
pub fn check(section: &SolidSection, input: &Sections<'_>) -> Result<Checked, InputError> {
    let Validated {
        setup,
        n_modes,
        eta,
        contacts,
    } = validate(section, input)?;
    let n_cells = setup.formulations.len();
    fem_model::progress::phase(format!(
        "the solid's mass: {n_cells} cells (no operator, no modes)"
    ));
    let (masses, centre) = setup.reference_mass()?;
    let v0 = setup.initial_velocity(section, centre)?;
    let kinetic = 0.5
        * v0.iter()
            .zip(setup.dofmap.free_dofs())
            .map(|(v, &g)| masses[g / 3] * v * v)
            .sum::<f64>();
    if !kinetic.is_finite() {
        return Err(InputError::invalid(
            "model.solid",
            format!(
                "the initial state's kinetic energy is not a finite number ({kinetic}): an \
                 initial value (a velocity, an angular velocity, a displacement) is too large \
                 to compute with"
            ),
        ));
    }
    let n_free = setup.dofmap.n_free();
    let mut describe = section.describe_setup(&setup, n_cells, 0);
    describe.push(format!(
        "  modes: the {n_modes} lowest of {n_free} free dofs, computed when the run starts \
         (fem check --modes computes them here, fem modes lists them)"
    ));
    if eta > 0.0 {
        describe.push(format!(
            "  damping: C = eta K, eta = {} s: damping ratio eta omega / 2 in each mode",
            shown(eta)
        ));
    }
    if let Some((found, _, _)) = contacts {
        describe.push(found.describe);
    }
    describe.extend(time_lines(&setup.grid));
    Ok(Checked {
        describe,
        grid: setup.grid,
    })
}

/// `out = Φ q` (column by column: `Φ` is stored by columns).
fn combine(basis: &ModalBasis, q: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for (k, &qk) in q.iter().enumerate() {
        if qk != 0.0 {
            out.iter_mut()
                .zip(basis.shapes.column(k).iter())
                .for_each(|(o, p)| *o += p * qk);
        }
    }
}

impl Model for ModalSolidModel {
    fn describe(&self) -> Vec<String> {
        self.describe.clone()
    }
    fn grid(&self) -> TimeGrid {
        self.grid
    }
    fn stepper(&self) -> &dyn Stepper {
        &self.stepper
    }
    fn stepper_mut(&mut self) -> &mut dyn Stepper {
        &mut self.stepper
    }
    fn after_step(&mut self, _report: &StepReport) -> Result<(), StepError> {
        if let Some(l) = &mut self.losses {
            l.after_step(&self.stepper);
        }
        Ok(())
    }
    /// The stepper's energy with the damping's dissipation since the start.
    fn energy(&self) -> Option<Energy> {
        let mut e = self.stepper.energy()?;
        e.dissipated = self.losses().0;
        Some(e)
    }
    fn history_columns(&self) -> Vec<String> {
        let mut columns: Vec<String> = self
            .losses
            .as_ref()
            .map_or(&[][..], |l| l.columns())
            .iter()
            .map(|c| c.to_string())
            .collect();
        if self.has_contact {
            columns.extend(CONTACT_COLUMNS.map(String::from));
        }
        columns
    }
    fn history_values(&self, _report: &StepReport, out: &mut Vec<f64>) {
        if let Some(l) = &self.losses {
            out.extend(&l.totals[..l.columns().len()]);
        }
        if !self.has_contact {
            return;
        }
        out.extend(
            self.stepper
                .contact_history(self.initial_min_gap, self.grid.dt()),
        );
    }
    /// The stepper's state, with the losses' bookkeeping when damped (the state the next
    /// step starts from and the totals).
    fn save(&self) -> Vec<StateField<'_>> {
        let mut fields = self.stepper.state();
        if let Some(l) = &self.losses {
            fields.push(StateField::other("losses_start_position", &l.q));
            fields.push(StateField::other("losses_start_velocity", &l.u));
            fields.push(StateField::other("losses_totals", &l.totals));
        }
        fields
    }
    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        self.stepper.restore(step_index, fields)?;
        if let Some(l) = &mut self.losses {
            let m = l.q.len();
            l.q.copy_from_slice(restored(fields, "losses_start_position", m)?);
            l.u.copy_from_slice(restored(fields, "losses_start_velocity", m)?);
            l.totals
                .copy_from_slice(restored(fields, "losses_totals", 2)?);
        }
        Ok(())
    }
    fn frame(&mut self) -> Frame<'_> {
        combine(&self.basis, self.stepper.position(), &mut self.position);
        combine(
            &self.basis,
            &self.stepper.velocity_at_step(),
            &mut self.velocity,
        );
        self.output.frame(&self.position, &self.velocity)
    }
    /// `K` the tangent at the reference state, `M` the model's mass: the eigenproblem whose
    /// lowest modes the model is stepped in (`fem modes` on the same input lists them).
    fn linearization(&self) -> Option<LinearizationResult> {
        let zero = vec![0.0; self.output.operator().dofmap().n_dofs()];
        Some(linearize(&self.output, &self.mass, &[], &zero))
    }
    /// The solid's view (warped by `displacement`, coloured by `von_mises`) with the planes.
    fn view(&self) -> fem_io::View {
        fem_io::View {
            warp_by: Some("displacement".into()),
            color_by: Some("von_mises".into()),
            scene: fem_io::Scene {
                planes: self.planes.clone(),
                ..Default::default()
            },
            ..Default::default()
        }
    }
}
