//! The input sections that models share: the mesh, fixed and prescribed dofs, contact with
//! obstacles, the initial state, the time scheme and the output. One typed struct per
//! configurable thing; unknown keys are refused everywhere (`deny_unknown_fields`). The
//! reference for every key is `docs/input.md`.
//!
//! A model's own section (`model.string`, `model.beam`…) is defined in its model crate; the
//! whole file's schema, which lists the models, is the `fem` crate's.

use crate::number::strict;
use serde::Deserialize;
use std::path::PathBuf;

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
    #[serde(deserialize_with = "strict")]
    pub length: f64,
    /// Number of cells (≥ 1).
    #[serde(deserialize_with = "strict")]
    pub cells: usize,
    /// Direction of the line (normalised); default `[1, 0, 0]`.
    #[serde(default = "x_axis")]
    #[serde(deserialize_with = "strict")]
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
    #[serde(deserialize_with = "strict")]
    pub lengths: [f64; 3],
    /// Cells along each edge.
    #[serde(deserialize_with = "strict")]
    pub cells: [usize; 3],
    /// `hex8` (default), `tet4`, `tet10`, `hex20` or `hex27`.
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
    /// Each hexahedron split into 24 tetrahedra about its face centres and centre (a split
    /// with the symmetries of the box).
    Tet4,
    /// The tet4 box made second order (straight edges, mid-edge nodes at the midpoints).
    Tet10,
    /// The hexahedra made second order: serendipity hex20.
    Hex20,
    /// The hexahedra made triquadratic: hex27.
    Hex27,
}

/// Unilateral contact with obstacles, stepped by the exact modal Moreau–Jean scheme: a modal
/// string's points `u(x_c) ≥ h_c`, or the nodes of a solid's group on one side of a plane.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactInput {
    /// The obstacles.
    pub obstacles: Vec<ObstacleInput>,
    /// Restitution coefficient e in [0, 1] of the impact law (default 0).
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub restitution: f64,
    /// LCP solver: `lemke` (default) or `pgs`.
    #[serde(default)]
    pub solver: LcpSolverKind,
    /// Tolerance of `pgs` (default 1e-12); refused with `lemke`, which is exact.
    #[serde(default, deserialize_with = "strict")]
    pub tolerance: Option<f64>,
}

impl ContactInput {
    /// The tolerance of `pgs`: `tolerance`, or 1e-12 when not given.
    pub fn tolerance_or_default(&self) -> f64 {
        self.tolerance.unwrap_or(1e-12)
    }
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

/// One obstacle. A modal string's: contact points at one height (listed `positions`, or
/// `uniform` points spread over the string). A solid's: the nodes of a physical `group` kept
/// on the side of a `plane` its normal points to.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObstacleInput {
    /// Positions along the string, in (0, L).
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub positions: Option<Vec<f64>>,
    /// Number of equally spaced points `x_i = i L/(N+1)`, as an alternative to `positions`.
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub uniform: Option<usize>,
    /// Height of the obstacle (the string must stay at or above it).
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub height: Option<f64>,
    /// A solid's physical group (any dimension) whose nodes meet the `plane`.
    #[serde(default)]
    pub group: Option<String>,
    /// The plane a solid's group stays on the positive side of.
    #[serde(default)]
    pub plane: Option<PlaneInput>,
}

/// A plane: a point of it and its normal, pointing to the side bodies stay on
/// (`model.scene.obstacles[].plane`, `contact.obstacles[].plane`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaneInput {
    /// A point of the plane.
    #[serde(deserialize_with = "strict")]
    pub point: Vec<f64>,
    /// The normal, out of the solid side.
    #[serde(deserialize_with = "strict")]
    pub normal: Vec<f64>,
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
    #[serde(deserialize_with = "strict")]
    pub nodes: Option<Vec<usize>>,
    /// Components held (0-based); default all.
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
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
    #[serde(deserialize_with = "strict")]
    pub nodes: Option<Vec<usize>>,
    /// Components prescribed (0-based); default all.
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
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
    #[serde(deserialize_with = "strict")]
    pub epsilon: Option<f64>,
}

/// A function of time: a number, an expression in `t`, or a table.
#[derive(Clone, Debug, PartialEq)]
pub enum FunctionInput {
    /// A constant.
    Number(f64),
    /// An expression in `t` (`0.01*sin(2*pi*t)`).
    Expression(String),
    /// A piecewise-linear table.
    Table(TableInput),
}

impl<'de> Deserialize<'de> for FunctionInput {
    /// A number, a string (an expression) or a mapping (a table), told apart by what the
    /// file holds; anything else is refused naming the three forms.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{self, Visitor};
        struct FunctionVisitor;
        impl<'de> Visitor<'de> for FunctionVisitor {
            type Value = FunctionInput;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a number, an expression in t (\"0.01*sin(2*pi*t)\") or a table ({ table: [[t, value], ...] } or { csv: FILE })",
                )
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<FunctionInput, E> {
                Ok(FunctionInput::Number(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<FunctionInput, E> {
                Ok(FunctionInput::Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<FunctionInput, E> {
                Ok(FunctionInput::Number(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FunctionInput, E> {
                Ok(FunctionInput::Expression(v.to_string()))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<FunctionInput, A::Error> {
                TableInput::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(FunctionInput::Table)
            }
        }
        deserializer.deserialize_any(FunctionVisitor)
    }
}

/// A piecewise-linear table of (t, value) rows, inline or from a CSV file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TableInput {
    /// Inline rows `[t, value]`.
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
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
    #[serde(deserialize_with = "strict")]
    pub position: f64,
    /// Height of the apex.
    #[serde(deserialize_with = "strict")]
    pub amplitude: f64,
    /// Component plucked (default 0).
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub component: usize,
}

/// A sine mode.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SineInput {
    /// Mode number (≥ 1).
    #[serde(deserialize_with = "strict")]
    pub mode: u32,
    /// Amplitude.
    #[serde(deserialize_with = "strict")]
    pub amplitude: f64,
    /// Component (default 0).
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub component: usize,
}

/// The time interval and the scheme.

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeInput {
    /// The time stepper, by the name the model gives it (default: the model's first scheme).
    #[serde(default)]
    pub scheme: Option<String>,
    /// Parameter of the alpha schemes, in [0, 1/2] (default 1/4; only for the schemes that
    /// have one).
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub alpha: Option<f64>,
    /// Parameter θ of the Moreau–Jean scheme, in (0, 1] (default 1/2).
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub theta: Option<f64>,
    /// Time step (> 0).
    #[serde(deserialize_with = "strict")]
    pub dt: f64,
    /// End time (> t0).
    #[serde(deserialize_with = "strict")]
    pub t_end: f64,
    /// Start time (default 0).
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub t0: f64,
    /// Newton's method (for the implicit schemes on nonlinear systems).
    #[serde(default)]
    pub newton: Option<NewtonInput>,
}

/// Newton settings.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewtonInput {
    /// Iterations per step (≥ 1, default 25).
    #[serde(default = "default_newton_iterations")]
    #[serde(deserialize_with = "strict")]
    pub max_iterations: usize,
    /// Tolerance relative to the step's force scale (default 1e-10).
    #[serde(default = "default_newton_relative")]
    #[serde(deserialize_with = "strict")]
    pub relative_tolerance: f64,
    /// Absolute tolerance (default 1e-14).
    #[serde(default = "default_newton_absolute")]
    #[serde(deserialize_with = "strict")]
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

impl TimeInput {
    /// `alpha`, or 1/4 when not given.
    pub fn alpha_or_quarter(&self) -> f64 {
        self.alpha.unwrap_or(0.25)
    }

    /// The Newton settings, or the defaults when not given.
    pub fn newton_or_default(&self) -> NewtonInput {
        self.newton.unwrap_or_default()
    }
}

/// A time scheme a model offers: its name in `time.scheme` and the settings of the `time`
/// section it reads. A model lists its schemes in [`crate::Uses::schemes`]; the name is the one
/// its stepper gives (`fem_time::alpha::NAME`, …), so adding a stepper that a model offers is an
/// entry in that model's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OfferedScheme {
    /// The name in input files (`alpha`, `def_exp`).
    pub name: &'static str,
    /// The optional settings of the `time` section it reads.
    pub settings: &'static [TimeSetting],
}

/// An optional setting of the `time` section, which some schemes read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeSetting {
    /// `time.alpha`.
    Alpha,
    /// `time.theta`.
    Theta,
    /// `time.newton`.
    Newton,
}

impl TimeSetting {
    /// Every optional setting.
    pub const ALL: [TimeSetting; 3] = [TimeSetting::Alpha, TimeSetting::Theta, TimeSetting::Newton];

    /// Its key, `time.alpha`.
    pub fn key(self) -> &'static str {
        match self {
            TimeSetting::Alpha => "time.alpha",
            TimeSetting::Theta => "time.theta",
            TimeSetting::Newton => "time.newton",
        }
    }

    /// Whether the section gives it.
    pub fn is_given(self, time: &TimeInput) -> bool {
        match self {
            TimeSetting::Alpha => time.alpha.is_some(),
            TimeSetting::Theta => time.theta.is_some(),
            TimeSetting::Newton => time.newton.is_some(),
        }
    }
}

/// What is written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputInput {
    /// Write a ParaView frame every this many steps (≥ 1; the last step is always written).
    #[serde(default = "one_u64")]
    #[serde(deserialize_with = "strict")]
    pub every: u64,
    /// Write a `history.csv` row every this many steps (≥ 1).
    #[serde(default = "one_u64")]
    #[serde(deserialize_with = "strict")]
    pub history_every: u64,
    /// Compression of the `.vtu` files: `lz4` (default), `zlib` or `none`.
    #[serde(default)]
    pub compression: CompressionKind,
    /// Points along a modal string at which its shape is drawn (default 200).
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub samples: Option<usize>,
    /// Positions along the string whose displacement is written every step to `probes.csv`.
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub probes: Vec<f64>,
    /// Write a checkpoint every this many steps (≥ 1); default: every 10 minutes of wall time.
    /// A checkpoint is also written at the end of a run cut short by `--max-steps` and when
    /// the run is interrupted (SIGINT, SIGTERM).
    #[serde(default)]
    pub checkpoint_every: Option<u64>,
    /// How the frames are written: `pvd` (default: a `.pvd` collection and one `.vtu` per
    /// frame, read by every ParaView) or `vtkhdf` (one `.vtkhdf` file holding the mesh once and
    /// every frame as a time step; ParaView 5.12 or later).
    #[serde(default)]
    pub format: FormatKind,
    /// Precision of the fields of a `vtkhdf` file: `double` (default) or `single`.
    #[serde(default)]
    pub precision: Option<PrecisionKind>,
    /// Write PNG and SVG plots of `history.csv` into `plots/` at the end of the run.
    #[serde(default)]
    pub plots: bool,
}

impl Default for OutputInput {
    fn default() -> Self {
        Self {
            every: 1,
            history_every: 1,
            compression: CompressionKind::default(),
            samples: None,
            probes: Vec::new(),
            checkpoint_every: None,
            format: FormatKind::default(),
            precision: None,
            plots: false,
        }
    }
}

/// How the frames are written (`output.format`).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FormatKind {
    /// A `.pvd` collection and one `.vtu` file per frame.
    #[default]
    Pvd,
    /// One VTKHDF file with every frame as a time step.
    Vtkhdf,
}

/// Precision of the fields of a `vtkhdf` file (`output.precision`).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PrecisionKind {
    /// 64-bit floats.
    #[default]
    Double,
    /// 32-bit floats.
    Single,
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
