//! The YAML input schema: one typed struct per configurable thing.
//!
//! Unknown keys are refused everywhere (`deny_unknown_fields`), so a misspelt key is an error
//! rather than a silently ignored default. Parsing errors carry the YAML line and column
//! (from `serde-saphyr`); range checks after parsing name the YAML path (`time.dt`). The
//! reference for every key is `docs/input.md`.

use serde::Deserialize;
use std::path::PathBuf;

/// A whole input file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Where the mesh comes from (finite-element models; a modal string needs none).
    #[serde(default)]
    pub mesh: Option<MeshInput>,
    /// The physical model on the mesh.
    pub model: ModelInput,
    /// Homogeneous Dirichlet conditions: dofs held at zero (eliminated).
    #[serde(default)]
    pub fixed: Vec<FixedInput>,
    /// Prescribed motion: dofs driven by functions of time (direct, rate or full control).
    #[serde(default)]
    pub dirichlet: Vec<DirichletInput>,
    /// Unilateral contact with obstacles (modal string).
    #[serde(default)]
    pub contact: Option<ContactInput>,
    /// Initial displacement and velocity.
    #[serde(default)]
    pub initial: InitialInput,
    /// Time interval and scheme.
    pub time: TimeInput,
    /// What is written, and how often.
    #[serde(default)]
    pub output: OutputInput,
}

/// A mesh file or a built-in generator.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum MeshInput {
    /// A Gmsh `.msh` 4.1 file, relative to the input file's folder.
    File(PathBuf),
    /// A straight line of two-node cells.
    Line(LineInput),
    /// A box of hexahedra or tetrahedra.
    Box(BoxInput),
}

/// The line generator: groups `left`, `right` (end points) and `domain`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineInput {
    /// Length (> 0).
    pub length: f64,
    /// Number of cells (≥ 1).
    pub cells: usize,
    /// Direction of the line (normalised); default `[1, 0, 0]`.
    #[serde(default = "x_axis")]
    pub direction: [f64; 3],
}

fn x_axis() -> [f64; 3] {
    [1.0, 0.0, 0.0]
}

/// The box generator: groups `xmin` … `zmax` (faces) and `domain`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxInput {
    /// Edge lengths.
    pub lengths: [f64; 3],
    /// Cells along each edge.
    pub cells: [usize; 3],
    /// `hex8` (default) or `tet4`.
    #[serde(default)]
    pub kind: BoxCellKind,
}

/// Cell kind of the box generator.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BoxCellKind {
    /// Hexahedra.
    #[default]
    Hex8,
    /// Each hexahedron split into six tetrahedra.
    Tet4,
}

/// The model on the mesh.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum ModelInput {
    /// A P1 string under tension on the mesh's two-node line cells.
    String(StringInput),
    /// An ideal or stiff string in its modal basis (exact modal Moreau–Jean).
    ModalString(ModalStringInput),
    /// Two P1 strings on [0, 1], the upper one u kept above the lower one v (u ≥ v) by the
    /// time-discretized penalty (Glowinski–Holmström §3).
    CollidingStrings(CollidingStringsInput),
    /// The double compound pendulum in generalized coordinates (Glowinski–Holmström §2).
    DoublePendulum(DoublePendulumInput),
    /// An inextensible Hermite-cubic beam in 3D (Glowinski–Holmström §4).
    Beam(Box<BeamInput>),
}

/// An inextensible beam (cable, riser, pipeline) in large displacement.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeamInput {
    /// Number of Hermite elements N (≥ 1).
    pub elements: usize,
    /// Length L (m).
    pub length: f64,
    /// Bending stiffness EI (N m²).
    pub bending_stiffness: f64,
    /// Mass per unit length ρ (kg/m).
    pub density: f64,
    /// Gravity (m/s²), default `[0, -9.81, 0]`.
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// Support at s = 0 during the run.
    pub end_a: EndInput,
    /// Support at s = L during the run.
    pub end_b: EndInput,
    /// Point loads `{node, force: [fx, fy, fz]}`.
    #[serde(default)]
    pub point_loads: Vec<PointLoadInput>,
    /// The initial shape: the static equilibrium under the given supports.
    pub initial: BeamInitialInput,
    /// How inextensibility is enforced during the run.
    pub solver: BeamSolverInput,
    /// Hermite samples per element in the ParaView polyline (default 8).
    #[serde(default = "default_samples_per_element")]
    pub samples_per_element: usize,
}

fn default_gravity() -> [f64; 3] {
    [0.0, -9.81, 0.0]
}

fn default_samples_per_element() -> usize {
    8
}

/// A beam support.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum EndInput {
    /// No condition.
    Free,
    /// Position held at a point.
    Pinned([f64; 3]),
    /// Position and unit tangent held.
    Clamped {
        /// Position.
        position: [f64; 3],
        /// Tangent (normalised).
        tangent: [f64; 3],
    },
}

/// A point load at a node.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PointLoadInput {
    /// Node index (0..=N).
    pub node: usize,
    /// Force (N).
    pub force: [f64; 3],
}

/// The beam's initial shape.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum BeamInitialInput {
    /// Static equilibrium under gravity with these supports (solved by Uzawa from an arc).
    Static {
        /// Support at s = 0 for the static problem.
        end_a: EndInput,
        /// Support at s = L for the static problem.
        end_b: EndInput,
        /// Direction in which the starting arc bulges (default `[0, -1, 0]`).
        #[serde(default = "default_sag")]
        sag_direction: [f64; 3],
    },
}

fn default_sag() -> [f64; 3] {
    [0.0, -1.0, 0.0]
}

/// The beam's dynamic scheme.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum BeamSolverInput {
    /// The augmented Lagrangian (97), Uzawa iterations (Anderson-accelerated by default).
    AugmentedLagrangian {
        /// Augmentation r (an algorithmic parameter, default 1e5).
        #[serde(default = "default_augmentation")]
        augmentation: f64,
        /// Anderson acceleration of the Uzawa loop (default true).
        #[serde(default = "default_true")]
        anderson: bool,
    },
    /// The same augmented-Lagrangian step (97) solved by Newton on its KKT system (about four
    /// iterations per step at any N; refactors every iteration).
    NewtonKkt,
    /// The time-discretized penalty (93) with Newton.
    Penalty {
        /// Penalty parameter ε (the paper's 1.5e-4).
        epsilon: f64,
    },
}

fn default_augmentation() -> f64 {
    1e5
}

fn default_true() -> bool {
    true
}

/// Two strings colliding, scheme (63).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollidingStringsInput {
    /// Cells I of each string on [0, 1] (≥ 2); both ends of both strings fixed.
    pub cells: usize,
    /// Densities ρ₁ (u) and ρ₂ (v).
    pub density: [f64; 2],
    /// Tensions τ₁, τ₂.
    pub tension: [f64; 2],
    /// Penalty parameter ε of u ≥ v (> 0).
    pub epsilon: f64,
    /// Initial shape of u (a `sine` or `pluck`; default zero).
    #[serde(default)]
    pub upper: InitialField,
    /// Initial shape of v.
    #[serde(default)]
    pub lower: InitialField,
}

/// The double pendulum: the paper's parameter sets or explicit ones, and its constraint.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoublePendulumInput {
    /// `table1` (the wall problem) or `table3` (the ellipse problem, with the torque (45)).
    pub parameters: PendulumParameters,
    /// `none`, `{wall: {distance: d}}` or `ellipse` (Table 3's ellipse).
    #[serde(default)]
    pub constraint: PendulumConstraintInput,
    /// `{penalty: {epsilon}}` or `{augmented_lagrangian: {epsilon, tolerance, max_iterations}}`.
    #[serde(default)]
    pub enforcement: Option<EnforcementInput>,
    /// θ(0) (default: the table's).
    #[serde(default)]
    pub angles: Option<[f64; 2]>,
    /// θ̇(0) (default 0).
    #[serde(default)]
    pub angular_velocities: Option<[f64; 2]>,
}

/// The paper's parameter sets.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PendulumParameters {
    /// Table 1.
    Table1,
    /// Table 3 with the torque (45).
    Table3,
}

/// The pendulum's constraint.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum PendulumConstraintInput {
    /// None.
    #[default]
    None,
    /// The wall y_B ≤ d (an inequality).
    Wall {
        /// Distance d of the wall from the pivot (m).
        distance: f64,
    },
    /// Table 3's ellipse (an equality).
    Ellipse,
}

/// How a constraint is enforced.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum EnforcementInput {
    /// Quadratic penalty.
    Penalty {
        /// ε > 0.
        epsilon: f64,
    },
    /// Augmented Lagrangian (Hestenes–Powell).
    AugmentedLagrangian {
        /// ε > 0.
        epsilon: f64,
        /// Constraint tolerance of the multiplier iteration (default 1e-8).
        #[serde(default = "default_multiplier_tolerance")]
        tolerance: f64,
        /// Multiplier updates per step (default 500).
        #[serde(default = "default_multiplier_iterations")]
        max_iterations: usize,
    },
}

fn default_multiplier_tolerance() -> f64 {
    1e-8
}

fn default_multiplier_iterations() -> usize {
    500
}

/// A string represented by its sine modes, `ν_j = j c/(2L) sqrt(1 + B j²)`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModalStringInput {
    /// Length L (m).
    pub length: f64,
    /// Tension T (N).
    pub tension: f64,
    /// Mass per unit length μ (kg/m).
    pub density: f64,
    /// Inharmonicity B (default 0: an ideal string).
    #[serde(default)]
    pub inharmonicity: f64,
    /// Number of modes (≥ 1).
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
    Constant(f64),
    /// `σ_j = (mass + stiffness ω_j²)/2`.
    Rayleigh {
        /// Mass-proportional coefficient (1/s).
        mass: f64,
        /// Stiffness-proportional coefficient (s).
        stiffness: f64,
    },
    /// One σ per mode.
    Table(Vec<f64>),
}

/// Unilateral contact of the string with obstacles: `u(x_c) ≥ h_c` at contact points.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactInput {
    /// The obstacles.
    pub obstacles: Vec<ObstacleInput>,
    /// Restitution coefficient e in [0, 1] of the impact law (default 0).
    #[serde(default)]
    pub restitution: f64,
    /// LCP solver: `lemke` (default) or `pgs`.
    #[serde(default)]
    pub solver: LcpSolverKind,
    /// Tolerance of `pgs` (default 1e-12).
    #[serde(default = "default_pgs_tolerance")]
    pub tolerance: f64,
}

fn default_pgs_tolerance() -> f64 {
    1e-12
}

/// LCP solver.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LcpSolverKind {
    /// Lemke's complementary pivoting (exact).
    #[default]
    Lemke,
    /// Projected Gauss–Seidel (iterative, with `tolerance`).
    Pgs,
}

/// Contact points at one height: listed positions, or `uniform` points spread over the string.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObstacleInput {
    /// Positions along the string, in (0, L).
    #[serde(default)]
    pub positions: Option<Vec<f64>>,
    /// Number of equally spaced points `x_i = i L/(N+1)`, as an alternative to `positions`.
    #[serde(default)]
    pub uniform: Option<usize>,
    /// Height of the obstacle (the string must stay at or above it).
    pub height: f64,
}

/// A P1 string (Glowinski–Holmström §3.1).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StringInput {
    /// Mass per unit length ρ (> 0).
    pub density: f64,
    /// Tension τ (> 0).
    pub tension: f64,
    /// Transverse displacement components per node, 1 to 3 (default 1).
    #[serde(default = "one")]
    pub components: usize,
    /// `lumped` (default; trapezoidal rule) or `consistent`.
    #[serde(default)]
    pub mass: MassKind,
    /// Physical group (dimension 1) holding the string's cells; default: every line2 cell.
    #[serde(default)]
    pub region: Option<String>,
    /// Global direction of each displacement component, for output; default: the axes
    /// normal to the string's chord (see docs/input.md).
    #[serde(default)]
    pub directions: Option<Vec<[f64; 3]>>,
    /// Uniform load per unit length, one value per component; default none.
    #[serde(default)]
    pub load: Option<Vec<f64>>,
}

fn one() -> usize {
    1
}

/// Mass matrix kind.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MassKind {
    /// Row-sum (trapezoidal) lumped mass.
    #[default]
    Lumped,
    /// Consistent mass.
    Consistent,
}

/// One homogeneous Dirichlet set: the listed components of the group's (or listed) nodes are 0.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedInput {
    /// A physical group (or generator boundary such as `left`).
    #[serde(default)]
    pub group: Option<String>,
    /// Node indices (0-based), as an alternative to `group`.
    #[serde(default)]
    pub nodes: Option<Vec<usize>>,
    /// Components held (0-based); default all.
    #[serde(default)]
    pub components: Option<Vec<usize>>,
}

/// One Dirichlet set: the listed components of the group's (or listed) nodes follow `value(t)`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirichletInput {
    /// A physical group (or generator boundary such as `left`).
    #[serde(default)]
    pub group: Option<String>,
    /// Node indices (0-based), as an alternative to `group`.
    #[serde(default)]
    pub nodes: Option<Vec<usize>>,
    /// Components prescribed (0-based); default all.
    #[serde(default)]
    pub components: Option<Vec<usize>>,
    /// The prescribed value g(t).
    pub value: FunctionInput,
    /// Its exact rate ġ(t); default: central difference of `value`.
    #[serde(default)]
    pub rate: Option<FunctionInput>,
    /// Its exact second derivative g̈(t); default: central difference.
    #[serde(default)]
    pub acceleration: Option<FunctionInput>,
    /// `direct` (default), `rate` or `full`.
    #[serde(default)]
    pub method: EnforcementKind,
    /// Relative step of the central differences, ε·max(1, |t|) (default 1e-4).
    #[serde(default)]
    pub epsilon: Option<f64>,
}

/// A function of time: a number, an expression in `t`, or a table.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum FunctionInput {
    /// A constant.
    Number(f64),
    /// An expression in `t` (`0.01*sin(2*pi*t)`).
    Expression(String),
    /// A piecewise-linear table.
    Table(TableInput),
}

/// A piecewise-linear table of (t, value) rows, inline or from a CSV file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TableInput {
    /// Inline rows `[t, value]`.
    #[serde(default)]
    pub table: Option<Vec<[f64; 2]>>,
    /// A two-column CSV file, relative to the input file's folder.
    #[serde(default)]
    pub csv: Option<PathBuf>,
}

/// Dirichlet enforcement method.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EnforcementKind {
    /// Hold the position.
    #[default]
    Direct,
    /// Hold the velocity.
    Rate,
    /// Hold position, velocity and acceleration.
    Full,
}

/// Initial conditions.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InitialInput {
    /// Initial displacement; default zero.
    #[serde(default)]
    pub displacement: InitialField,
    /// Initial velocity; default zero.
    #[serde(default)]
    pub velocity: InitialField,
    /// Modal Moreau–Jean only: start from the backward difference `(q(t0) − q(t0 − Δt))/Δt` of
    /// the exact free motion, which makes free modes exact at every step (default false: the
    /// initial velocity itself, which resolves impacts better; see docs/validation.md).
    #[serde(default)]
    pub exact_start: bool,
}

/// A prescribed initial field along the string, as a function of the arc length `s`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum InitialField {
    /// Zero everywhere.
    #[default]
    Zero,
    /// A triangle: 0 at both ends, `amplitude` at arc length `position`.
    Pluck(PluckInput),
    /// `amplitude · sin(mode π s / L)`.
    Sine(SineInput),
}

/// The triangular pluck.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PluckInput {
    /// Arc length of the apex, strictly inside the string.
    pub position: f64,
    /// Height of the apex.
    pub amplitude: f64,
    /// Component plucked (default 0).
    #[serde(default)]
    pub component: usize,
}

/// A sine mode.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SineInput {
    /// Mode number (≥ 1).
    pub mode: u32,
    /// Amplitude.
    pub amplitude: f64,
    /// Component (default 0).
    #[serde(default)]
    pub component: usize,
}

/// The time interval and the scheme.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeInput {
    /// The time stepper.
    #[serde(default)]
    pub scheme: SchemeKind,
    /// Parameter of the alpha scheme, in [0, 1/2] (default 1/4).
    #[serde(default = "quarter")]
    pub alpha: f64,
    /// Time step (> 0).
    pub dt: f64,
    /// End time (> t0).
    pub t_end: f64,
    /// Start time (default 0).
    #[serde(default)]
    pub t0: f64,
    /// Newton's method (for the implicit schemes on nonlinear systems).
    #[serde(default)]
    pub newton: NewtonInput,
}

/// Newton settings.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewtonInput {
    /// Iterations per step (≥ 1, default 25).
    #[serde(default = "default_newton_iterations")]
    pub max_iterations: usize,
    /// Tolerance relative to the step's force scale (default 1e-10).
    #[serde(default = "default_newton_relative")]
    pub relative_tolerance: f64,
    /// Absolute tolerance (default 1e-14).
    #[serde(default = "default_newton_absolute")]
    pub absolute_tolerance: f64,
}

impl Default for NewtonInput {
    fn default() -> Self {
        Self {
            max_iterations: default_newton_iterations(),
            relative_tolerance: default_newton_relative(),
            absolute_tolerance: default_newton_absolute(),
        }
    }
}

fn default_newton_iterations() -> usize {
    25
}

fn default_newton_relative() -> f64 {
    1e-10
}

fn default_newton_absolute() -> f64 {
    1e-14
}

fn quarter() -> f64 {
    0.25
}

/// Time steppers selectable by name.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SchemeKind {
    /// The three-level alpha scheme (16) of Glowinski–Holmström.
    #[default]
    Alpha,
    /// The backward-Euler acceleration step of the Serac seed (first order, dissipative).
    BackwardEuler,
    /// The exact modal Moreau–Jean scheme (modal string, unilateral contact).
    ModalMoreauJean,
    /// The conservation-form implicit scheme (40) (double pendulum).
    ConservationForm,
}

/// What is written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputInput {
    /// Write a ParaView frame every this many steps (≥ 1; the last step is always written).
    #[serde(default = "one_u64")]
    pub every: u64,
    /// Write a `history.csv` row every this many steps (≥ 1).
    #[serde(default = "one_u64")]
    pub history_every: u64,
    /// Compression of the `.vtu` files: `lz4` (default), `zlib` or `none`.
    #[serde(default)]
    pub compression: CompressionKind,
    /// Points along a modal string at which its shape is drawn (default 200).
    #[serde(default = "default_samples")]
    pub samples: usize,
    /// Positions along the string whose displacement is written every step to `probes.csv`.
    #[serde(default)]
    pub probes: Vec<f64>,
}

fn default_samples() -> usize {
    200
}

impl Default for OutputInput {
    fn default() -> Self {
        Self {
            every: 1,
            history_every: 1,
            compression: CompressionKind::default(),
            samples: default_samples(),
            probes: Vec::new(),
        }
    }
}

fn one_u64() -> u64 {
    1
}

/// `.vtu` compression.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CompressionKind {
    /// No compression.
    None,
    /// LZ4 (fast).
    #[default]
    Lz4,
    /// zlib (smaller, slower).
    Zlib,
}
