//! The modal string with unilateral contact (Siconos seed, exact modal Moreau–Jean; theory in
//! docs/theory/moreau_jean.md), as a [`fem_model::Model`].
//!
//! Output contract: frames hold the string drawn as a polyline through `output.samples` points
//! (default 200; point data `displacement`, `velocity`, 3-vectors along y) followed by the
//! contact points as vertices, placed at their obstacle's height (point data
//! `contact_force`, the impulse over the step divided by Δt); `history.csv` has
//! `step,t,kinetic,potential,total,n_active,lcp_iterations,lcp_residual,min_gap,
//! contact_force_total` (the contact columns only with a `contact` section: without one the
//! string rings freely), `total` the physical energy `½ Σ m (q̇² + ω² q²)`, which the scheme
//! conserves to round-off in free flight and through elastic impacts (`e = 1`) and never
//! increases through an impact with `e < 1`; `probes.csv` has `t` and the displacement at each
//! `output.probes` position, every step.

use fem_constraints::UnilateralContacts;
use fem_io::{Field, Frame, VtkCells};
use fem_model::build::time_grid;
use fem_model::input::{InitialField, OfferedScheme};
use fem_model::number::strict;
use fem_model::resources::frame_bytes;
use fem_model::{InputError, MeshUse, Model, ModelSection, Sections, Uses};
use fem_time::nonsmooth::{ModalDamping, ModalMoreauJean};
use fem_time::{NodalStepper, StepReport, Stepper, TimeGrid};
use serde::Deserialize;

use crate::modes::StringModes;

/// An ideal or stiff string in its modal basis (exact modal Moreau–Jean): the
/// `model.modal_string` section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModalStringSection {
    /// Length L (m).
    #[serde(deserialize_with = "strict")]
    pub length: f64,
    /// Tension T (N).
    #[serde(deserialize_with = "strict")]
    pub tension: f64,
    /// Mass per unit length μ (kg/m).
    #[serde(deserialize_with = "strict")]
    pub density: f64,
    /// Inharmonicity B (default 0: an ideal string).
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub inharmonicity: f64,
    /// Number of modes (≥ 1).
    #[serde(deserialize_with = "strict")]
    pub modes: usize,
    /// Losses (default none).
    #[serde(default)]
    pub damping: DampingInput,
}

/// Modal losses: `σ_j` in `q̈ + 2σ_j q̇ + ω_j² q = …`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum DampingInput {
    /// No losses.
    #[default]
    None,
    /// The same σ (1/s) for every mode.
    Constant(#[serde(deserialize_with = "strict")] f64),
    /// `σ_j = (mass + stiffness ω_j²)/2`.
    Rayleigh {
        /// Mass-proportional coefficient (1/s).
        #[serde(deserialize_with = "strict")]
        mass: f64,
        /// Stiffness-proportional coefficient (s).
        #[serde(deserialize_with = "strict")]
        stiffness: f64,
    },
    /// One σ per mode.
    Table(#[serde(deserialize_with = "strict")] Vec<f64>),
}

/// Unilateral contact of the string with obstacles: `u(x_c) ≥ h_c` at contact points.
impl ModelSection for ModalStringSection {
    const NAME: &'static str = "modal_string";

    fn uses(&self) -> Uses {
        Uses {
            mesh: MeshUse::Refused,
            fixed: false,
            dirichlet: false,
            contact: true,
            initial: true,
            exact_start: true,
            probes: true,
            samples: true,
            schemes: &[OfferedScheme {
                name: fem_time::nonsmooth::modal::NAME,
                settings: &[],
            }],
        }
    }

    fn build(&self, input: &Sections<'_>) -> Result<Box<dyn Model>, InputError> {
        Ok(Box::new(ModalStringModel::new(self, input)?))
    }
}

/// The modal string, its stepper and what it draws.
#[derive(Debug)]
pub struct ModalStringModel {
    modes: StringModes,
    stepper: ModalMoreauJean,
    grid: TimeGrid,
    describe: Vec<String>,
    /// Rows `φ_j(x)` of the probes, row-major.
    probe_rows: Vec<f64>,
    n_probes: usize,
    probe_names: Vec<String>,
    /// Rows of the sample points.
    sample_rows: Vec<f64>,
    n_samples: usize,
    points: Vec<[f64; 3]>,
    cells: VtkCells,
    displacement: Vec<f64>,
    velocity: Vec<f64>,
    force: Vec<f64>,
    /// The smallest gap at `t0` (the history's first row).
    initial_min_gap: f64,
    /// Whether the input has a `contact` section: without one the string rings freely and
    /// the history has no contact columns (a gap to no obstacle is not a number).
    has_contact: bool,
}

impl ModalStringModel {
    /// Validates the section with the rest of the input and builds the modes, the initial
    /// state, the contacts and the stepper.
    pub fn new(m: &ModalStringSection, input: &Sections<'_>) -> Result<Self, InputError> {
        let invalid = |field: &str, message: String| InputError::invalid(field, message);
        let grid = time_grid(input.time)?;
        let n_samples = input.output.samples.unwrap_or(200);
        if !(2..=1_000_000).contains(&n_samples) {
            return Err(invalid(
                "output.samples",
                format!("expected 2 to 1e6 points, got {n_samples}"),
            ));
        }
        for (field, v) in [
            ("model.modal_string.length", m.length),
            ("model.modal_string.tension", m.tension),
            ("model.modal_string.density", m.density),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(invalid(
                    field,
                    format!("expected a positive finite number, got {v}"),
                ));
            }
        }
        if !(m.inharmonicity.is_finite() && m.inharmonicity >= 0.0) {
            return Err(invalid(
                "model.modal_string.inharmonicity",
                format!("expected a non-negative number, got {}", m.inharmonicity),
            ));
        }
        if !(1..=100_000).contains(&m.modes) {
            return Err(invalid(
                "model.modal_string.modes",
                format!("expected 1 to 100000 modes, got {}", m.modes),
            ));
        }
        // Memory and output before anything is allocated: dense rows of every mode at each
        // contact point, sample and probe, the contacts' Delassus matrix and Lemke's tableau.
        let n_contacts: f64 = input.contact.map_or(0.0, |c| {
            c.obstacles
                .iter()
                .map(|o| {
                    o.uniform.unwrap_or(0) as f64 + o.positions.as_ref().map_or(0, Vec::len) as f64
                })
                .sum()
        });
        let n_probes = input.output.probes.len() as f64;
        let (modes_f, samples_f) = (m.modes as f64, n_samples as f64);
        input.check_memory(
            "model.modal_string.modes",
            &format!(
                "{} modes with {}, {} samples and {}",
                m.modes,
                count(n_contacts, "contact point"),
                n_samples,
                count(n_probes, "probe")
            ),
            16.0 * modes_f * (n_contacts + samples_f + n_probes)
                + 32.0 * n_contacts * n_contacts
                + 256.0 * modes_f,
        )?;
        input.check_output(
            &grid,
            frame_bytes(samples_f + n_contacts, 7.0, n_contacts + 1.0, 1.0) + 8.0 * samples_f,
            10.0 + n_probes,
        )?;
        let length = m.length;
        let inside = |x: f64| x > 0.0 && x < length;
        if let Some(&bad) = input.output.probes.iter().find(|&&x| !inside(x)) {
            return Err(invalid(
                "output.probes",
                format!("expected positions inside (0, {length}), got {bad}"),
            ));
        }
        let modes = StringModes::new(m.length, m.tension, m.density, m.inharmonicity, m.modes)
            .map_err(|e| invalid("model.modal_string", e.to_string()))?;
        let damping = match &m.damping {
            DampingInput::None => ModalDamping::None,
            DampingInput::Constant(s) => ModalDamping::Constant(*s),
            DampingInput::Rayleigh { mass, stiffness } => ModalDamping::Rayleigh {
                mass: *mass,
                stiffness: *stiffness,
            },
            DampingInput::Table(v) => ModalDamping::Table(v.clone()),
        };
        let system = modes
            .modal_system(&damping)
            .map_err(|e| invalid("model.modal_string.damping", e.to_string()))?;

        // Initial state: modal coordinates of the shape, at rest or with a sine velocity.
        let q0 = modal_shape(
            "initial.displacement",
            &input.initial.displacement,
            &modes,
            length,
        )?;
        let qdot0 = modal_shape("initial.velocity", &input.initial.velocity, &modes, length)?;
        // The stepper carries the physical state and is exact in free flight from it
        // (docs/theory/moreau_jean.md): the initial velocity is the physical one.
        if input.initial.exact_start {
            return Err(invalid(
                "initial.exact_start",
                "obsolete: the modal stepper now starts exactly from the physical initial velocity (docs/theory/moreau_jean.md); remove it".into(),
            ));
        }
        let v0 = qdot0;

        let mut contact_points = Vec::new();
        let mut heights = Vec::new();
        let mut solver = None;
        if let Some(c) = input.contact {
            solver = Some(fem_model::build::contact_solver(c)?);
            for (i, o) in c.obstacles.iter().enumerate() {
                let field = format!("contact.obstacles[{i}]");
                if o.group.is_some() || o.plane.is_some() {
                    return Err(invalid(
                        &field,
                        "a modal string's obstacle is a 'height' at 'positions' or 'uniform' points ('group' and 'plane' are a solid's)".into(),
                    ));
                }
                let height = o.height.ok_or_else(|| {
                    invalid(
                        &format!("{field}.height"),
                        "expected the obstacle's height (the string stays at or above it)".into(),
                    )
                })?;
                if !height.is_finite() {
                    return Err(invalid(
                        &format!("{field}.height"),
                        format!("expected a finite height, got {height}"),
                    ));
                }
                let points: Vec<f64> = match (&o.positions, o.uniform) {
                    (Some(p), None) => {
                        if let Some(&bad) = p.iter().find(|&&x| !inside(x)) {
                            return Err(invalid(
                                &format!("{field}.positions"),
                                format!("expected positions inside (0, {length}), got {bad}"),
                            ));
                        }
                        p.clone()
                    }
                    (None, Some(n)) if (1..=100_000).contains(&n) => (1..=n)
                        .map(|i| length * i as f64 / (n + 1) as f64)
                        .collect(),
                    (None, Some(n)) => {
                        return Err(invalid(
                            &format!("{field}.uniform"),
                            format!("expected 1 to 100000 points, got {n}"),
                        ));
                    }
                    _ => {
                        return Err(invalid(
                            &field,
                            "expected exactly one of 'positions' or 'uniform'".into(),
                        ));
                    }
                };
                for x in points {
                    let u = modes.displacement(&q0, x);
                    if u < height - 1e-12 * height.abs().max(1e-3) {
                        return Err(invalid(
                            &field,
                            format!(
                                "the initial shape is below the obstacle at x = {x}: u = {u:e} < height {height:e}; start outside the obstacle",
                            ),
                        ));
                    }
                    contact_points.push(x);
                    heights.push(height);
                }
            }
        }
        let setup = |e: fem_time::StepError| invalid("model.modal_string", e.to_string());
        let n_modes = modes.n_modes();
        let mut stepper =
            ModalMoreauJean::from_physical_state(system, grid.dt(), grid.t0(), &q0, &v0)
                .map_err(setup)?;
        if let (Some(c), Some(solver)) = (input.contact, solver) {
            let m = contact_points.len() as f64;
            fem_model::progress::phase(format!(
                "the modal string's contact matrices: {} contact points over {n_modes} modes \
                 (about {:.1e} multiply-adds)",
                contact_points.len(),
                m * m * n_modes as f64
            ));
            let contacts = UnilateralContacts::from_dense(
                n_modes,
                &modes.point_rows(&contact_points),
                heights.clone(),
                c.restitution,
            )
            .map_err(|e| invalid("model.modal_string", e.to_string()))?;
            stepper = stepper.with_contacts(contacts, solver).map_err(setup)?;
        }
        let top = stepper.system().omega.last().copied().unwrap_or(0.0);
        let describe = vec![
            format!(
                "  model: modal string, {n_modes} modes, highest {} Hz, omega_max dt = {}",
                fem_model::number::shown(top / (2.0 * std::f64::consts::PI)),
                fem_model::number::shown(top * grid.dt())
            ),
            format!("  contact: {} points", contact_points.len()),
            format!(
                "  time: exact modal Moreau-Jean, dt = {} (fs = {} Hz), {} steps from {} to {}",
                fem_model::number::shown(grid.dt()),
                fem_model::number::shown(1.0 / grid.dt()),
                grid.n_steps(),
                fem_model::number::shown(grid.t0()),
                fem_model::number::shown(grid.t_end())
            ),
            "  stability: unconditional (exact for free modes at any omega dt)".to_string(),
        ];
        // The frame geometry: the sampled string, then the contact points at their heights.
        let xs: Vec<f64> = (0..n_samples)
            .map(|i| length * i as f64 / (n_samples - 1) as f64)
            .collect();
        let sample_rows = modes.point_rows(&xs);
        let mut points: Vec<[f64; 3]> = xs.iter().map(|&x| [x, 0.0, 0.0]).collect();
        points.extend(
            contact_points
                .iter()
                .zip(&heights)
                .map(|(&x, &h)| [x, h, 0.0]),
        );
        let mut cells = VtkCells::new();
        cells.push_polyline(&(0..n_samples).collect::<Vec<_>>());
        for i in 0..contact_points.len() {
            cells.push_block(fem_mesh::CellKind::Vertex, &[n_samples + i]);
        }
        let n_points = points.len();
        let initial_min_gap = contact_points
            .iter()
            .zip(&heights)
            .map(|(&x, h)| modes.displacement(&q0, x) - h)
            .fold(f64::INFINITY, f64::min);
        let probes = &input.output.probes;
        Ok(Self {
            probe_rows: modes.point_rows(probes),
            n_probes: probes.len(),
            probe_names: probes.iter().map(|x| format!("u({x})")).collect(),
            sample_rows,
            n_samples,
            points,
            cells,
            displacement: vec![0.0; 3 * n_points],
            velocity: vec![0.0; 3 * n_points],
            force: vec![0.0; n_points],
            initial_min_gap,
            has_contact: !contact_points.is_empty(),
            modes,
            stepper,
            grid,
            describe,
        })
    }

    /// The string's modes.
    pub fn modes(&self) -> &StringModes {
        &self.modes
    }

    /// The stepper.
    pub fn modal_stepper(&self) -> &ModalMoreauJean {
        &self.stepper
    }
}

fn dot(row: &[f64], q: &[f64]) -> f64 {
    row.iter().zip(q).map(|(a, b)| a * b).sum::<f64>()
}

impl Model for ModalStringModel {
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
    fn history_columns(&self) -> Vec<String> {
        if !self.has_contact {
            return Vec::new();
        }
        fem_time::nonsmooth::modal::CONTACT_COLUMNS
            .map(String::from)
            .to_vec()
    }
    fn history_values(&self, _report: &StepReport, out: &mut Vec<f64>) {
        if !self.has_contact {
            return;
        }
        out.extend(
            self.stepper
                .contact_history(self.initial_min_gap, self.grid.dt()),
        );
    }
    fn frame(&mut self) -> Frame<'_> {
        let n_modes = self.modes.n_modes();
        let (q, v) = (self.stepper.position(), self.stepper.velocity_at_step());
        for (i, row) in self.sample_rows.chunks(n_modes).enumerate() {
            self.displacement[3 * i + 1] = dot(row, q);
            self.velocity[3 * i + 1] = dot(row, &v);
        }
        let dt = self.grid.dt();
        for (i, lambda) in self.stepper.impulses().iter().enumerate() {
            self.force[self.n_samples + i] = lambda / dt;
        }
        Frame::new(&self.points, &self.cells)
            .with_point_field(Field::vector("displacement", &self.displacement))
            .with_point_field(Field::vector("velocity", &self.velocity))
            .with_point_field(Field::scalar("contact_force", &self.force))
    }

    /// Across the plane of the string and its motion, warped by `displacement` at true scale
    /// (the contact points sit at their obstacles' heights) and stretched across when the
    /// motion is small; coloured by `velocity`.
    fn view(&self) -> fem_io::View {
        fem_io::View {
            look_along: Some([0.0, 0.0, -1.0]),
            up: [0.0, 1.0, 0.0],
            warp_by: Some("displacement".into()),
            warp_scale: Some(1.0),
            color_by: Some("velocity".into()),
            exaggerate: Some([0.0, 1.0, 0.0]),
            ..Default::default()
        }
    }
    fn probe_columns(&self) -> Vec<String> {
        self.probe_names.clone()
    }
    fn probe_values(&self, out: &mut Vec<f64>) {
        if self.n_probes == 0 {
            return;
        }
        let n_modes = self.modes.n_modes().max(1);
        out.extend(
            self.probe_rows
                .chunks(n_modes)
                .map(|r| dot(r, self.stepper.position())),
        );
    }
}

/// Modal coordinates of an initial shape (unit modal masses).
fn modal_shape(
    field: &str,
    shape: &InitialField,
    modes: &StringModes,
    length: f64,
) -> Result<Vec<f64>, InputError> {
    let invalid = |sub: &str, message: String| InputError::Invalid {
        field: format!("{field}{sub}"),
        message,
    };
    let n = modes.n_modes();
    match shape {
        InitialField::Zero => Ok(vec![0.0; n]),
        InitialField::Pluck(p) => {
            if !(p.position > 0.0 && p.position < length) {
                return Err(invalid(
                    ".pluck.position",
                    format!(
                        "expected a position inside (0, {length}), got {}",
                        p.position
                    ),
                ));
            }
            if p.component != 0 || !p.amplitude.is_finite() {
                return Err(invalid(
                    ".pluck",
                    "a modal string has one component (0) and needs a finite amplitude".into(),
                ));
            }
            Ok(modes.triangular_pluck(p.position, p.amplitude))
        }
        InitialField::Sine(s) => {
            if s.mode == 0 || s.mode as usize > n || s.component != 0 || !s.amplitude.is_finite() {
                return Err(invalid(
                    ".sine",
                    format!("expected a mode from 1 to {n}, component 0 and a finite amplitude"),
                ));
            }
            // u = a sin(jπx/L) = q_j φ_j with φ_j(x) = shape(j, x).
            let mut q = vec![0.0; n];
            let k = s.mode as usize - 1;
            let x = 0.5 * length / s.mode as f64;
            q[k] = s.amplitude / modes.shape(k, x);
            Ok(q)
        }
    }
}

/// `1 probe`, `3 probes`: a count for messages.
fn count(n: f64, what: &str) -> String {
    if n == 1.0 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
