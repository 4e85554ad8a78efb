//! The `model.solid` input section: a total-Lagrangian solid on a volume mesh (tet4, hex8,
//! tet10, hex20 or hex27), its element formulation (per volume group if asked), material,
//! mass, loads, prescribed rotations and initial velocity. Fixed and prescribed components come
//! from the shared `fixed` and `dirichlet` sections (any physical group: points, curves,
//! surfaces, volumes). Every key is in `docs/input.md`.

use std::sync::Arc;

use fem_assembly::solid::{SolidMaterial, reference_cell_eigenvalues, reference_nodal_mass};
use fem_assembly::{DofMap, SolidError, SolidOperator, StableStep};
use fem_constraints::{
    DirichletConditions, DirichletSet, Enforcement, Prescribed, SystemDof, TimeFunction,
};
use fem_elements::solid::{
    FaceKind, Formulation, Lumping, Material, MaterialError, MaterialModel, SolidKind,
};
use fem_io::VtkCells;
use fem_mesh::{CellKind, Mesh};
use fem_model::build::{
    DofLocation, alpha, build_mesh, dirichlet_conditions, group_list, locate_dofs, newton_settings,
    time_function,
};
use fem_model::input::{EnforcementKind, FunctionInput, MassKind, OfferedScheme, TimeSetting};
use fem_model::model::check_by_building;
use fem_model::number::shown;
use fem_model::resources::frame_bytes;
use fem_model::{CheckOptions, Checked, InputError, Model, ModelSection, Sections, Uses};
use fem_time::leapfrog::{def_exp, def_lim};
use fem_time::{AlphaScheme, BackwardEuler, NodalStepper, StepError, StepSettings, TimeGrid};
use serde::Deserialize;

use crate::initial::{InitialVelocity, parse_expression};
use crate::model::{SolidModel, SolidOutput};
use crate::rotation::RotationSignal;
use crate::system::{SolidMass, SolidSystem};
use fem_time::DefLim;
use fem_time::leapfrog::spectral::{self, CriticalStep};
use fem_time::{CriticalStepCheck, DefExp};

/// The model's own bytes per mesh node with an implicit scheme (DEF_LIM, alpha, backward
/// Euler), for the memory budget checked before the mesh is built: the cells' geometry
/// (≈ 0.6–1.6 kB a cell, 1–6 cells a node), the tangent's pattern and values (≈ 81 entries a
/// row, 3 rows a node, 16 bytes an entry) and the state vectors. A DEF_LIM factor's fill grows
/// faster than the node count and is not counted here.
const BYTES_PER_NODE: f64 = 8192.0;

/// DEF_EXP's own bytes per mesh node and per cell, besides the mesh's
/// ([`fem_model::resources::mesh_bytes`]): fitted to the peak resident memory of `fem run`
/// on boxes of hex8 (10³ … 60³ cells), tet4 (10³ … 40³) and tet10 (20³, 30³), frame 0 written
/// and three steps taken, so that the estimate is above every measured peak and within 1.5×
/// of it (`tests/solid_memory.rs`; the figures in `docs/performance.md`). An explicit run keeps
/// no tangent: per node the lumped mass, the state and force vectors and the gather plan, per
/// cell its compact geometry and force slots.
const EXPLICIT_BYTES_PER_NODE: f64 = 2300.0;
/// See [`EXPLICIT_BYTES_PER_NODE`].
const EXPLICIT_BYTES_PER_CELL: f64 = 500.0;

/// The model's own bytes per mesh node for the memory estimate of [`build_mesh`]: with
/// DEF_EXP, [`EXPLICIT_BYTES_PER_NODE`] plus [`EXPLICIT_BYTES_PER_CELL`] times the cells per
/// node of a generated box (exact), or of a mesh file's worst case, tet4's 6 (its cell kind is
/// not known before its header is read); with an implicit scheme, [`BYTES_PER_NODE`].
fn model_bytes_per_node(scheme: &str, mesh: &fem_model::input::MeshInput) -> f64 {
    if scheme != def_exp::NAME {
        return BYTES_PER_NODE;
    }
    let cells_per_node = match fem_model::build::generated_mesh_counts(mesh) {
        Some((nodes, cells, _)) if nodes > 0.0 => cells / nodes,
        _ => 6.0,
    };
    EXPLICIT_BYTES_PER_NODE + EXPLICIT_BYTES_PER_CELL * cells_per_node
}

const SECTION: &str = "model.solid";

/// A total-Lagrangian solid: the `model.solid` section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolidSection {
    /// The material.
    pub material: MaterialInput,
    /// A volume physical group (dimension 3) holding the solid's cells; default every volume
    /// cell of the mesh (all of one kind).
    #[serde(default)]
    pub region: Option<String>,
    /// The element formulation of every cell: `full` (default), `eas`, `fbar` or
    /// `one_point`.
    #[serde(default)]
    pub element: Option<ElementInput>,
    /// Element formulations of volume groups, overriding `element` on their cells.
    #[serde(default)]
    pub element_groups: Vec<ElementGroupInput>,
    /// `lumped` (default) or `consistent`.
    #[serde(default)]
    pub mass: MassKind,
    /// How a lumped mass is lumped: `row_sum` (tet4, hex8) or `hrz` (any; the default for
    /// tet10, whose row sums are not positive).
    #[serde(default)]
    pub lumping: Option<LumpingInput>,
    /// Gravity, an acceleration `[gx, gy, gz]` (m/s²).
    #[serde(default)]
    pub gravity: Option<Vec<f64>>,
    /// Dead tractions on boundary groups (dimension 2).
    #[serde(default)]
    pub tractions: Vec<TractionInput>,
    /// Prescribed rotations of groups about an axis.
    #[serde(default)]
    pub rotations: Vec<RotationInput>,
    /// The initial velocity (default zero).
    #[serde(default)]
    pub initial_velocity: Option<InitialVelocityInput>,
    /// DEF_LIM and `modal_moreau_jean`: stiffness-proportional damping `C = η K`, `η ≥ 0` (s),
    /// default 0 (a mode's damping ratio `η ω / 2`).
    #[serde(default, deserialize_with = "fem_model::number::strict")]
    pub damping: Option<f64>,
    /// DEF_EXP: take the step as this fraction of the critical step `2/sqrt(λ_max)` at the
    /// start (Solfec uses 0.5), at most `time.dt`.
    #[serde(default, deserialize_with = "fem_model::number::strict")]
    pub auto_dt: Option<f64>,
    /// `modal_moreau_jean`: the number of lowest modes `m` the solid is truncated to and
    /// stepped in (at most its free dofs).
    #[serde(default, deserialize_with = "fem_model::number::strict")]
    pub modes: Option<usize>,
    /// DEF_EXP: re-check the critical step every this many steps (0: at the start only).
    /// Default: spaced by how fast the bound drifts, at most 100 steps apart
    /// ([`CriticalStepCheck`]).
    #[serde(default, deserialize_with = "fem_model::number::strict")]
    pub recheck_every: Option<u64>,
}

/// The material of a solid.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialInput {
    /// `svk` (Saint Venant–Kirchhoff), `neo_hookean` or `neo_hookean_log`.
    pub model: MaterialKind,
    /// Young's modulus `E > 0` (Pa).
    pub young: f64,
    /// Poisson's ratio, `−1 < ν < 0.5`.
    pub poisson: f64,
    /// Density `ρ > 0` (kg/m³, per unit reference volume).
    pub density: f64,
}

/// The strain energy.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MaterialKind {
    /// Saint Venant–Kirchhoff.
    #[serde(alias = "saint_venant_kirchhoff")]
    Svk,
    /// Compressible Neo-Hookean, decoupled form.
    NeoHookean,
    /// Compressible Neo-Hookean with the `ln J` volumetric term.
    NeoHookeanLog,
}

/// An element formulation (`docs/input.md` says which to pick).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ElementInput {
    /// Displacement-based, the kind's full rule.
    Full,
    /// Hex8 with incompatible modes (enhanced assumed strain).
    Eas,
    /// F-bar (mean dilatation).
    Fbar,
    /// One-point hex8 with hourglass stiffness.
    OnePoint,
}

impl ElementInput {
    fn formulation(self) -> Formulation {
        match self {
            ElementInput::Full => Formulation::Full,
            ElementInput::Eas => Formulation::Eas,
            ElementInput::Fbar => Formulation::FBar,
            ElementInput::OnePoint => Formulation::OnePoint,
        }
    }
}

/// The formulation of the cells of one volume group.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElementGroupInput {
    /// A volume physical group (dimension 3) of the solid's cells.
    pub group: String,
    /// Its cells' formulation.
    pub element: ElementInput,
}

/// Lumping of the mass.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LumpingInput {
    /// Row sums.
    RowSum,
    /// Hinton–Rock–Zienkiewicz diagonal scaling.
    Hrz,
}

/// A dead traction (force per unit reference area) on a boundary group.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TractionInput {
    /// The boundary physical group (dimension 2: tri3, quad4 or tri6 faces).
    pub group: String,
    /// Three functions of `t` (numbers, expressions or tables).
    pub value: Vec<FunctionInput>,
}

/// A rigid rotation of a group's nodes about an axis, prescribed in all three components.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotationInput {
    /// The physical group (any dimension).
    pub group: String,
    /// The axis (normalised).
    pub axis: Vec<f64>,
    /// A point on the axis; default the centroid of the group's nodes.
    #[serde(default)]
    pub centre: Option<Vec<f64>>,
    /// The angle `θ(t)` (radians).
    pub angle: FunctionInput,
    /// `direct` (default), `rate` or `full`.
    #[serde(default)]
    pub method: EnforcementKind,
}

/// An initial velocity field.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum InitialVelocityInput {
    /// The same velocity everywhere.
    Uniform(Vec<f64>),
    /// A rigid motion `v + ω × (X − X₀)`.
    Rotation(RigidVelocityInput),
    /// Three expressions of `x, y, z`.
    Expressions(Vec<String>),
}

/// A rigid initial motion.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RigidVelocityInput {
    /// `ω` (rad/s).
    pub omega: Vec<f64>,
    /// `X₀`; default the centre of mass.
    #[serde(default)]
    pub centre: Option<Vec<f64>>,
    /// Translation velocity `v` (default zero).
    #[serde(default)]
    pub velocity: Option<Vec<f64>>,
}

impl ModelSection for SolidSection {
    const NAME: &'static str = "solid";

    fn uses(&self) -> Uses {
        Uses {
            initial: false,
            // Read with `modal_moreau_jean` only (refused by `setup` for the other schemes).
            contact: true,
            schemes: &[
                OfferedScheme {
                    name: def_exp::NAME,
                    settings: &[],
                },
                OfferedScheme {
                    name: def_lim::NAME,
                    settings: &[],
                },
                OfferedScheme {
                    name: fem_time::alpha::NAME,
                    settings: &[TimeSetting::Alpha, TimeSetting::Newton],
                },
                OfferedScheme {
                    name: fem_time::backward_euler::NAME,
                    settings: &[TimeSetting::Newton],
                },
                OfferedScheme {
                    name: crate::modal::NAME,
                    settings: &[],
                },
            ],
            ..Uses::ON_A_MESH
        }
    }

    fn build(&self, input: &Sections<'_>) -> Result<Box<dyn Model>, InputError> {
        if input.scheme_name() == crate::modal::NAME {
            return Ok(Box::new(crate::modal::ModalSolidModel::new(self, input)?));
        }
        Ok(Box::new(self.model(input)?))
    }

    fn check(&self, input: &Sections<'_>, options: CheckOptions) -> Result<Checked, InputError> {
        if input.scheme_name() == crate::modal::NAME && !options.modes {
            return crate::modal::check(self, input);
        }
        if input.scheme_name() != def_exp::NAME || options.critical_step {
            return check_by_building(self, input);
        }
        self.check_explicit(input)
    }
}

/// DEF_EXP refines the element bound by Lanczos at its start ([`spectral::refine`]) when its
/// step comes from the critical step (`auto_dt`) or is above this fraction of the element
/// bound: a step that far below a bound that is already safe needs no sharper one (the
/// run's first re-check refines it, as the body deforms).
pub const REFINE_ABOVE: f64 = 0.9;

/// Three finite numbers at `field`.
fn vec3(field: &str, v: &[f64]) -> Result<[f64; 3], InputError> {
    match v {
        [x, y, z] if v.iter().all(|c| c.is_finite()) => Ok([*x, *y, *z]),
        [_, _, _] => Err(InputError::invalid(field, "expected finite numbers")),
        _ => Err(InputError::invalid(
            field,
            format!("expected exactly 3 numbers, got {}", v.len()),
        )),
    }
}

/// The solid's cells: its kind, connectivity and mesh cell indices.
struct SolidCells {
    kind: SolidKind,
    mesh_kind: CellKind,
    connectivity: Vec<usize>,
    /// `(block, cell)` of each solid cell in the mesh.
    cells: Vec<(usize, usize)>,
}

fn solid_kind(kind: CellKind) -> Option<SolidKind> {
    match kind {
        CellKind::Tet4 => Some(SolidKind::Tet4),
        CellKind::Hex8 => Some(SolidKind::Hex8),
        CellKind::Tet10 => Some(SolidKind::Tet10),
        CellKind::Hex20 => Some(SolidKind::Hex20),
        CellKind::Hex27 => Some(SolidKind::Hex27),
        _ => None,
    }
}

fn solid_cells(mesh: &Mesh, region: &Option<String>) -> Result<SolidCells, InputError> {
    let cells: Vec<(usize, usize)> = match region {
        Some(name) => {
            let field = format!("{SECTION}.region");
            let group = mesh.group(name).ok_or_else(|| {
                InputError::invalid(
                    &field,
                    format!(
                        "no physical group named '{name}'; the mesh has: {}",
                        group_list(mesh)
                    ),
                )
            })?;
            if group.dim != 3 {
                return Err(InputError::invalid(
                    &field,
                    format!(
                        "the group '{name}' has dimension {}, but the solid's region must be a volume group (dimension 3)",
                        group.dim
                    ),
                ));
            }
            group.cells.clone()
        }
        None => mesh
            .block_indices_of_dim(3)
            .flat_map(|b| (0..mesh.blocks[b].n_cells()).map(move |c| (b, c)))
            .collect(),
    };
    let field = region
        .as_ref()
        .map_or("mesh".to_string(), |_| format!("{SECTION}.region"));
    let Some(&(b0, _)) = cells.first() else {
        return Err(InputError::invalid(
            field,
            "no volume cells (tet4, hex8, tet10, hex20 or hex27) to make a solid of",
        ));
    };
    let mesh_kind = mesh.blocks[b0].kind;
    let kind = solid_kind(mesh_kind).ok_or_else(|| {
        InputError::invalid(
            &field,
            format!(
                "{} cells are not solid elements: expected tet4, hex8, tet10, hex20 or hex27",
                mesh_kind.name()
            ),
        )
    })?;
    if let Some(&(b, _)) = cells
        .iter()
        .find(|(b, _)| mesh.blocks[*b].kind != mesh_kind)
    {
        return Err(InputError::invalid(
            field,
            format!(
                "the solid mixes {} and {} cells: one kind per solid",
                mesh_kind.name(),
                mesh.blocks[b].kind.name()
            ),
        ));
    }
    let connectivity = cells
        .iter()
        .flat_map(|&(b, c)| mesh.blocks[b].cell(c).iter().copied())
        .collect();
    Ok(SolidCells {
        kind,
        mesh_kind,
        connectivity,
        cells,
    })
}

/// The formulation of every solid cell: `element` (default `full`), then each of
/// `element_groups` on its group's cells. Refuses a formulation of another kind, a group that
/// is not a volume group of the solid's cells, and a cell two groups claim.
fn formulations(
    mesh: &Mesh,
    cells: &SolidCells,
    element: Option<ElementInput>,
    groups: &[ElementGroupInput],
) -> Result<Vec<Formulation>, InputError> {
    let kind = cells.kind;
    let check = |field: &str, f: Formulation| -> Result<(), InputError> {
        if f.supports(kind) {
            return Ok(());
        }
        let kinds: Vec<&str> = f.kinds().iter().map(|k| k.name()).collect();
        Err(InputError::invalid(
            field,
            format!(
                "the element '{}' applies to {} cells, but the solid's cells are {}: expected one of {}",
                f.name(),
                kinds.join(", "),
                kind.name(),
                Formulation::names_for(kind)
            ),
        ))
    };
    let default = element.map_or(Formulation::Full, ElementInput::formulation);
    check(&format!("{SECTION}.element"), default)?;
    let mut out = vec![default; cells.cells.len()];
    if groups.is_empty() {
        return Ok(out);
    }
    let index: std::collections::HashMap<(usize, usize), usize> = cells
        .cells
        .iter()
        .enumerate()
        .map(|(i, &bc)| (bc, i))
        .collect();
    let mut claimed: Vec<Option<usize>> = vec![None; cells.cells.len()];
    for (g, entry) in groups.iter().enumerate() {
        let field = format!("{SECTION}.element_groups[{g}]");
        check(&format!("{field}.element"), entry.element.formulation())?;
        let group = mesh.group(&entry.group).ok_or_else(|| {
            InputError::invalid(
                format!("{field}.group"),
                format!(
                    "no physical group named '{}'; the mesh has: {}",
                    entry.group,
                    group_list(mesh)
                ),
            )
        })?;
        if group.dim != 3 {
            return Err(InputError::invalid(
                format!("{field}.group"),
                format!(
                    "the group '{}' has dimension {}, but an element group must be a volume group (dimension 3) of the solid's cells",
                    entry.group, group.dim
                ),
            ));
        }
        for bc in &group.cells {
            let Some(&i) = index.get(bc) else {
                return Err(InputError::invalid(
                    format!("{field}.group"),
                    format!(
                        "the group '{}' has cells outside the solid (model.solid.region): an element group must be part of the solid",
                        entry.group
                    ),
                ));
            };
            if let Some(first) = claimed[i] {
                return Err(InputError::invalid(
                    format!("{field}.group"),
                    format!(
                        "the group '{}' shares cells with '{}' (element_groups[{first}]): a cell has one element",
                        entry.group, groups[first].group
                    ),
                ));
            }
            claimed[i] = Some(g);
            out[i] = entry.element.formulation();
        }
    }
    Ok(out)
}

fn material(m: &MaterialInput) -> Result<(Material, f64), InputError> {
    let at = |key: &str| format!("{SECTION}.material.{key}");
    let model = match m.model {
        MaterialKind::Svk => MaterialModel::SaintVenantKirchhoff,
        MaterialKind::NeoHookean => MaterialModel::NeoHookean,
        MaterialKind::NeoHookeanLog => MaterialModel::NeoHookeanLog,
    };
    let material = Material::new(model, m.young, m.poisson).map_err(|e| match e {
        MaterialError::YoungModulus { .. } => InputError::invalid(at("young"), e.to_string()),
        MaterialError::PoissonRatio { .. } => InputError::invalid(at("poisson"), e.to_string()),
        other => InputError::invalid(at("model"), other.to_string()),
    })?;
    if !(m.density.is_finite() && m.density > 0.0) {
        return Err(InputError::invalid(
            at("density"),
            format!("expected a positive finite density, got {}", m.density),
        ));
    }
    Ok((material, m.density))
}

fn enforcement(kind: EnforcementKind) -> Enforcement {
    match kind {
        EnforcementKind::Direct => Enforcement::Direct,
        EnforcementKind::Rate => Enforcement::Rate,
        EnforcementKind::Full => Enforcement::Full,
    }
}

/// What the section asks of the time scheme, checked.
/// Numbers in a `history.csv` row: `step,t,kinetic,potential,total`, the model's own and the
/// hourglass energy (counted always: a bound).
const HISTORY_ROW_VALUES: f64 = 6.0 + crate::model::HISTORY_COLUMNS.len() as f64;

/// Bytes of one frame: the solid's nodes with `displacement` and `velocity`, its cells with
/// their 9 cell values (`cauchy_stress`, `von_mises`, `J`, `strain_energy_density`).
fn solid_frame_bytes(mesh: &Mesh, cells: &SolidCells) -> f64 {
    let n_cells = cells.connectivity.len() / cells.kind.n_nodes();
    frame_bytes_of(mesh.n_nodes(), n_cells, cells.kind.n_nodes())
}

/// [`solid_frame_bytes`] from the counts.
fn frame_bytes_of(n_nodes: usize, n_cells: usize, nodes_per_cell: usize) -> f64 {
    frame_bytes(n_nodes as f64, 6.0, n_cells as f64, nodes_per_cell as f64) + 72.0 * n_cells as f64
}

struct SchemeChoice {
    grid: TimeGrid,
    describe: String,
}

/// A dead traction resolved on the mesh: faces of one kind and the traction's components.
#[derive(Clone, Debug)]
pub struct TractionFaces {
    /// The faces' kind.
    pub kind: FaceKind,
    /// The faces' nodes (Gmsh order), face after face.
    pub faces: Vec<usize>,
    /// The traction's components as functions of time.
    pub value: [TimeFunction; 3],
}

/// Everything the `model.solid` section describes, checked and resolved on the whole mesh,
/// before any operator is built: what a serial model and a distributed one (crate `fem-mpi`,
/// which builds an operator per subdomain) are made from.
#[derive(Debug)]
pub struct SolidSetup {
    /// The whole mesh.
    pub mesh: Mesh,
    /// The solid's element kind.
    pub kind: SolidKind,
    /// The mesh cell kind of the solid's cells.
    pub mesh_kind: CellKind,
    /// The solid's cells (nodes into `mesh.points`, Gmsh order), cell after cell.
    pub connectivity: Vec<usize>,
    /// The element formulation of each cell.
    pub formulations: Vec<Formulation>,
    /// The material.
    pub material: Material,
    /// Mass per unit reference volume.
    pub density: f64,
    /// The lumping of the lumped mass.
    pub lumping: Lumping,
    /// Lumped or consistent mass.
    pub mass: SolidMass,
    /// The dofs of the whole mesh (nodes off the solid and the `fixed` sets fixed).
    pub dofmap: DofMap,
    /// Gravity (an acceleration), if given.
    pub gravity: Option<[f64; 3]>,
    /// Dead tractions, in the order they are added to the system.
    pub tractions: Vec<TractionFaces>,
    /// Prescribed dofs (free dof indices of `dofmap`).
    pub dirichlet: DirichletConditions,
    /// The time grid asked for (before `auto_dt`).
    pub grid: TimeGrid,
}

impl SolidSetup {
    /// An operator error (a bad cell, mass or density) as an input error naming the key or
    /// the cell.
    pub fn operator_error(&self, e: SolidError) -> InputError {
        operator_error(e, self.kind, self.lumping)
    }

    /// The operator of the cells `cells` (indices into the solid's cells, in order) with
    /// their nodes renumbered into `points` by `connectivity`, on `dofmap`: the whole body
    /// (`points` the mesh's, every cell) or a subdomain of it. Errors name the key or the
    /// cell (numbered in the whole solid).
    pub fn operator(
        &self,
        points: &[[f64; 3]],
        connectivity: &[usize],
        cells: &[usize],
        dofmap: &DofMap,
    ) -> Result<SolidOperator, SolidError> {
        let formulations: Vec<Formulation> = cells.iter().map(|&c| self.formulations[c]).collect();
        SolidOperator::with_formulations(
            self.kind,
            points,
            connectivity,
            &formulations,
            self.material,
            self.density,
            self.lumping,
            dofmap,
        )
    }

    /// The describe line of the solid's elements: `"element: hex8 eas (540 cells)"`, or the
    /// count of each formulation.
    pub fn element_line(&self) -> String {
        let mut counts: Vec<(Formulation, usize)> = Vec::new();
        for &f in &self.formulations {
            match counts.iter_mut().find(|(g, _)| *g == f) {
                Some((_, n)) => *n += 1,
                None => counts.push((f, 1)),
            }
        }
        counts.sort_by_key(|(f, _)| Formulation::ALL.iter().position(|g| g == f));
        let parts: Vec<String> = counts
            .iter()
            .map(|(f, n)| format!("{n} {} {}", self.kind, f.name()))
            .collect();
        format!("  elements: {}", parts.join(", "))
    }

    /// The lumped nodal masses and the centre of mass of the undeformed body, from the cells
    /// alone (no operator assembled): what a check needs to bound the step and the energy.
    pub fn reference_mass(&self) -> Result<(Vec<f64>, [f64; 3]), InputError> {
        let points = &self.mesh.points;
        let masses = reference_nodal_mass(
            self.kind,
            points,
            &self.connectivity,
            self.density,
            self.lumping,
        )
        .map_err(|e| self.operator_error(e))?;
        let centre = fem_elements::solid::mass_properties(
            self.kind,
            points,
            &self.connectivity,
            self.density,
        )
        .map_err(|e| InputError::invalid("mesh", e.to_string()))?
        .center;
        Ok((masses, centre))
    }

    /// The initial velocity on the free dofs of [`dofmap`](Self::dofmap) (`centre_of_mass`:
    /// the body's, used by a rotation without a centre). Refuses a non-finite value.
    pub fn initial_velocity(
        &self,
        section: &SolidSection,
        centre_of_mass: [f64; 3],
    ) -> Result<Vec<f64>, InputError> {
        let velocity = section.initial_velocity(centre_of_mass)?;
        let mut v0 = vec![0.0; self.dofmap.n_free()];
        for (f, &g) in self.dofmap.free_dofs().iter().enumerate() {
            v0[f] = velocity.at(self.mesh.points[g / 3])[g % 3];
        }
        if let Some(bad) = v0.iter().position(|v| !v.is_finite()) {
            let node = self.dofmap.free_dofs()[bad] / 3;
            return Err(InputError::invalid(
                format!("{SECTION}.initial_velocity"),
                format!("not finite at node {node} ({:?})", self.mesh.points[node]),
            ));
        }
        Ok(v0)
    }
}

/// What a solid's stepper is made of ([`SolidSection::prepare`]).
#[derive(Debug)]
pub struct PreparedSolid {
    /// The solid as a system.
    pub system: SolidSystem,
    /// Initial position and velocity on the free dofs.
    pub x0: Vec<f64>,
    /// The initial velocity.
    pub v0: Vec<f64>,
    /// The step's settings (step, start, prescribed dofs).
    pub settings: StepSettings,
    /// The time grid (after `auto_dt`).
    pub grid: TimeGrid,
    /// The critical step at the start.
    pub critical: CriticalStep,
    /// What `fem check` prints.
    pub describe: Vec<String>,
    /// The frames' output.
    pub output: SolidOutput,
    /// The stepper's mass.
    pub mass: SolidMass,
    /// The prescribed free dofs.
    pub held: Vec<usize>,
    /// The whole mesh.
    pub mesh: Mesh,
    /// The solid's cells (mesh nodes, Gmsh order), cell after cell.
    pub connectivity: Vec<usize>,
    /// Their mesh cell kind.
    pub mesh_kind: CellKind,
}

impl SolidSection {
    /// Checks the section with the rest of the input and resolves it on the whole mesh: the
    /// cells, material, dofs, loads and prescribed dofs — everything but the operator.
    pub fn setup(&self, input: &Sections<'_>) -> Result<SolidSetup, InputError> {
        let invalid = |field: &str, message: String| InputError::invalid(field, message);
        let at = |key: &str| format!("{SECTION}.{key}");
        let scheme = input.scheme_name();
        let grid = fem_model::build::time_grid(input.time)?;
        for (given, key, only) in [
            (
                self.damping.is_some(),
                "damping",
                &[def_lim::NAME, crate::modal::NAME][..],
            ),
            (self.auto_dt.is_some(), "auto_dt", &[def_exp::NAME][..]),
            (
                self.recheck_every.is_some(),
                "recheck_every",
                &[def_exp::NAME][..],
            ),
            (self.modes.is_some(), "modes", &[crate::modal::NAME][..]),
        ] {
            if given && !only.contains(&scheme) {
                let schemes = only
                    .iter()
                    .map(|s| format!("'{s}'"))
                    .collect::<Vec<_>>()
                    .join(" and ");
                let of = if only.len() == 1 {
                    "the scheme"
                } else {
                    "the schemes"
                };
                return Err(invalid(
                    &at(key),
                    format!("'{key}' is a setting of {of} {schemes}, not of '{scheme}': remove it",),
                ));
            }
        }
        if input.contact.is_some() && scheme != crate::modal::NAME {
            return Err(invalid(
                "contact",
                format!(
                    "'contact' is read by the scheme '{}' (the solid in its modes against planes), not by '{scheme}': \
                     remove it, or put the solid in a model.scene with its obstacles",
                    crate::modal::NAME
                ),
            ));
        }
        let mesh_input = input.mesh.ok_or_else(|| {
            invalid(
                "mesh",
                "a solid needs a volume mesh: 'file' or 'box'".into(),
            )
        })?;
        let mesh = build_mesh(input, mesh_input, model_bytes_per_node(scheme, mesh_input))?;
        let (material, density) = material(&self.material)?;
        let cells = solid_cells(&mesh, &self.region)?;
        let formulations = formulations(&mesh, &cells, self.element, &self.element_groups)?;
        // The output, before the operator is built (with `auto_dt` checked again once the
        // step is known).
        let frame = solid_frame_bytes(&mesh, &cells);
        input.check_output(&grid, frame, HISTORY_ROW_VALUES)?;
        let lumping = match self.lumping {
            None => cells.kind.default_lumping(),
            Some(LumpingInput::RowSum) => Lumping::RowSum,
            Some(LumpingInput::Hrz) => Lumping::Hrz,
        };
        if self.mass == MassKind::Consistent && scheme == def_exp::NAME {
            return Err(invalid(
                &at("mass"),
                "the scheme def_exp steps explicitly with a lumped mass (it solves no linear system): \
                 use mass: lumped, or the scheme def_lim for a consistent mass"
                    .into(),
            ));
        }
        if self.lumping.is_some() && self.mass == MassKind::Consistent {
            return Err(invalid(
                &at("lumping"),
                "a consistent mass is not lumped: remove 'lumping' or use mass: lumped".into(),
            ));
        }

        // Dofs: nodes outside the solid are not unknowns; then the `fixed` sets.
        let mut on_solid = vec![false; mesh.n_nodes()];
        for &n in &cells.connectivity {
            on_solid[n] = true;
        }
        let mut fixed: Vec<usize> = (0..mesh.n_nodes())
            .filter(|&n| !on_solid[n])
            .flat_map(|n| (0..3).map(move |c| 3 * n + c))
            .collect();
        for (i, set) in input.fixed.iter().enumerate() {
            fixed.extend(locate_dofs(
                &mesh,
                DofLocation::of_fixed(set),
                &format!("fixed[{i}]"),
                3,
            )?);
        }
        let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
        if dofmap.n_free() == 0 {
            return Err(invalid(
                "fixed",
                "every dof of the solid is fixed: nothing would move".into(),
            ));
        }
        let gravity = match &self.gravity {
            Some(g) => Some(vec3(&at("gravity"), g)?),
            None => None,
        };
        let mut tractions = Vec::new();
        for (i, t) in self.tractions.iter().enumerate() {
            let field = format!("{SECTION}.tractions[{i}]");
            tractions.extend(traction_faces(&mesh, t, &field, input, &grid)?);
        }
        let dirichlet = self.prescribed(input, &mesh, &dofmap, &grid)?;
        Ok(SolidSetup {
            mesh,
            kind: cells.kind,
            mesh_kind: cells.mesh_kind,
            connectivity: cells.connectivity,
            formulations,
            material,
            density,
            lumping,
            mass: match self.mass {
                MassKind::Lumped => SolidMass::Lumped,
                MassKind::Consistent => SolidMass::Consistent,
            },
            dofmap,
            gravity,
            tractions,
            dirichlet,
            grid,
        })
    }

    /// How DEF_EXP re-checks the critical step: every `recheck_every` steps if given, else
    /// the adaptive default.
    pub fn critical_step_check(&self) -> CriticalStepCheck {
        self.recheck_every
            .map_or_else(CriticalStepCheck::default, CriticalStepCheck::every)
    }

    /// The time grid of the run (with `auto_dt`, the step a fraction of the `critical` step)
    /// and the line describing the scheme.
    pub fn time_grid(
        &self,
        input: &Sections<'_>,
        grid: TimeGrid,
        critical: f64,
    ) -> Result<(TimeGrid, String), InputError> {
        let c = self.scheme_choice(input, grid, critical)?;
        Ok((c.grid, c.describe))
    }

    /// Validates the section with the rest of the input and prepares what a stepper is made
    /// of (the system, the initial state, the step's settings, the critical step, the
    /// description and the frames' output): [`model`](Self::model) makes the model's stepper
    /// from it, a scene makes its solid's (issue 24).
    pub fn prepare(&self, input: &Sections<'_>) -> Result<PreparedSolid, InputError> {
        let invalid = |field: &str, message: String| InputError::invalid(field, message);
        let setup = self.setup(input)?;
        let grid = setup.grid;
        let cells = SolidCells {
            kind: setup.kind,
            mesh_kind: setup.mesh_kind,
            connectivity: setup.connectivity.clone(),
            cells: Vec::new(),
        };
        let dofmap = setup.dofmap.clone();
        let mesh = &setup.mesh;
        let n_cells = cells.connectivity.len() / cells.kind.n_nodes().max(1);
        fem_model::progress::phase(format!("the solid's operator: {n_cells} cells"));
        let all: Vec<usize> = (0..setup.formulations.len()).collect();
        let operator = setup
            .operator(&mesh.points, &cells.connectivity, &all, &dofmap)
            .map_err(|e| setup.operator_error(e))?;
        let centre_of_mass = operator.mass_properties().center;
        let mut system =
            SolidSystem::new(operator, setup.mass).map_err(|e| setup.operator_error(e))?;
        if let Some(g) = setup.gravity {
            system = system.with_gravity(g);
        }
        for t in &setup.tractions {
            system.add_traction(t.kind, &t.faces, t.value.clone());
        }
        let dirichlet = setup.dirichlet.clone();
        let n_prescribed = dirichlet.len();

        // Initial state.
        let x0 = vec![0.0; dofmap.n_free()];
        let v0 = setup.initial_velocity(self, centre_of_mass)?;

        let describe_model = self.describe_setup(&setup, n_cells, n_prescribed);
        fem_model::progress::phase(format!(
            "the solid's critical step: the largest eigenvalue of each of its {n_cells} cells"
        ));
        // The element bound from every cell's eigenvalue (ranked for fem check), refined by
        // Lanczos for DEF_EXP.
        let eigenvalues = system
            .cell_eigenvalues(&x0)
            .map_err(|e| setup.operator_error(e))?;
        let element = element_bound(&eigenvalues);
        let critical = match input.scheme_name() {
            def_exp::NAME if self.refines(grid.dt(), element.dt) => {
                spectral::refine(&system, &x0, element)
                    .map_err(|e| invalid("mesh", e.to_string()))?
            }
            _ => CriticalStep {
                step: element,
                element,
                iterations: 0,
                residual: 0.0,
                mode: Vec::new(),
            },
        };
        let choice = self.scheme_choice(input, grid, critical.step.dt)?;
        // The output again, with the step `auto_dt` chose.
        let frame = solid_frame_bytes(mesh, &cells);
        input.check_output(&choice.grid, frame, HISTORY_ROW_VALUES)?;
        let settings = StepSettings::new(choice.grid.dt())
            .starting_at(choice.grid.t0())
            .with_dirichlet(dirichlet);
        let mut describe = describe_model;
        describe.push(choice.describe.clone());
        describe.push(if critical.iterations > 0 {
            format!(
                "  explicit critical step 2/sqrt(lambda_max) = {} at t0 (lambda_max of M^-1 K by Lanczos, {} force pairs; the element bound is {})",
                shown(critical.step.dt),
                critical.iterations,
                shown(critical.element.dt)
            )
        } else {
            format!(
                "  explicit critical step 2/sqrt(lambda_max) = {} at t0 (the element bound, cell {})",
                shown(critical.element.dt),
                critical.element.cell
            )
        });
        describe.push(limiting_cells(&eigenvalues, |c| {
            let n = cells.kind.n_nodes();
            let nodes = &cells.connectivity[n * c..n * (c + 1)];
            std::array::from_fn(|k| {
                nodes.iter().map(|&a| mesh.points[a][k]).sum::<f64>() / n as f64
            })
        }));
        let mut vtk = VtkCells::new();
        vtk.push_block(cells.mesh_kind, &cells.connectivity);
        let output = SolidOutput::new(setup.mesh.points.clone(), vtk, system.shared_operator());
        Ok(PreparedSolid {
            system,
            x0,
            v0,
            settings,
            grid: choice.grid,
            critical,
            describe,
            output,
            mass: setup.mass,
            held: setup.dirichlet.dofs().to_vec(),
            mesh: setup.mesh,
            connectivity: cells.connectivity,
            mesh_kind: cells.mesh_kind,
        })
    }

    /// Validates the section with the rest of the input and builds the model.
    pub fn model(&self, input: &Sections<'_>) -> Result<SolidModel, InputError> {
        let invalid = |field: &str, message: String| InputError::invalid(field, message);
        let PreparedSolid {
            system,
            x0,
            v0,
            settings,
            grid,
            critical,
            describe,
            output,
            mass,
            held,
            ..
        } = self.prepare(input)?;
        let step_error = |e: StepError| invalid("time", e.to_string());
        let stepper: Box<dyn NodalStepper> = match input.scheme_name() {
            def_exp::NAME => {
                let check = self.critical_step_check();
                let s = DefExp::with_bound_at(
                    system.clone(),
                    settings,
                    &x0,
                    &v0,
                    check,
                    critical.clone(),
                )
                .map_err(|e| match e {
                    StepError::Unstable { .. } => invalid("time.dt", e.to_string()),
                    other => step_error(other),
                })?;
                Box::new(s)
            }
            def_lim::NAME => {
                let eta = self.damping_eta()?;
                Box::new(DefLim::new(system.clone(), eta, settings, &x0, &v0).map_err(step_error)?)
            }
            fem_time::alpha::NAME => {
                let alpha = alpha(input.time)?;
                let settings = settings.with_newton(newton_settings(input.time)?);
                Box::new(
                    AlphaScheme::new(system.clone(), alpha, settings, &x0, &v0)
                        .map_err(step_error)?,
                )
            }
            fem_time::backward_euler::NAME => {
                let settings = settings.with_newton(newton_settings(input.time)?);
                Box::new(
                    BackwardEuler::new(system.clone(), settings, &x0, &v0).map_err(step_error)?,
                )
            }
            _ => return Err(input.unhandled_scheme(SolidSection::NAME)),
        };
        Ok(SolidModel::new(stepper, grid, describe, output).with_linearization(mass, held))
    }

    /// Whether DEF_EXP refines the element bound `element_dt` by Lanczos for the step `dt`
    /// asked for: with `auto_dt`, or when `dt` is above [`REFINE_ABOVE`] of the bound.
    fn refines(&self, dt: f64, element_dt: f64) -> bool {
        self.auto_dt.is_some() || dt > REFINE_ABOVE * element_dt
    }

    /// The stiffness-proportional damping `η ≥ 0` (s) of `damping` (0 when not given): DEF_LIM's
    /// `A = M + (ηh/2 + h²/4) K`, and the modal solid's rates `σ_j = η ω_j²/2` — in both, the
    /// damping `C = η K`, a mode's damping ratio `ζ_j = η ω_j / 2`.
    pub(crate) fn damping_eta(&self) -> Result<f64, InputError> {
        let eta = self.damping.unwrap_or(0.0);
        if !(eta >= 0.0 && eta.is_finite()) {
            return Err(InputError::invalid(
                format!("{SECTION}.damping"),
                format!(
                    "expected a non-negative finite damping eta (s), got {}",
                    shown(eta)
                ),
            ));
        }
        Ok(eta)
    }

    /// The lines of `fem check` on the mesh, the material, the elements and the dofs.
    pub(crate) fn describe_setup(
        &self,
        setup: &SolidSetup,
        n_cells: usize,
        n_prescribed: usize,
    ) -> Vec<String> {
        let material = &setup.material;
        vec![
            format!(
                "  mesh: {} nodes, {} {} cells in the solid",
                setup.mesh.n_nodes(),
                n_cells,
                setup.kind
            ),
            format!(
                "  material: {} E = {}, nu = {}, rho = {}; mass {}{}",
                material.model(),
                shown(material.young()),
                shown(material.poisson()),
                shown(setup.density),
                match self.mass {
                    MassKind::Lumped => "lumped",
                    MassKind::Consistent => "consistent",
                },
                match (self.mass, setup.lumping) {
                    (MassKind::Consistent, _) => "",
                    (_, Lumping::RowSum) => " (row sum)",
                    (_, Lumping::Hrz) => " (HRZ)",
                }
            ),
            setup.element_line(),
            format!(
                "  dofs: {} free of {} ({} prescribed)",
                setup.dofmap.n_free(),
                setup.dofmap.n_dofs(),
                n_prescribed
            ),
        ]
    }

    /// `fem check` of a DEF_EXP solid without its operator: the input validated as
    /// [`model`](Self::model) validates it, every cell's element eigenvalue in one pass over
    /// the mesh ([`reference_cell_eigenvalues`]: no stored geometry), the limiting cells
    /// named from them, the lumped mass for the initial kinetic energy. Only when the step
    /// asked for is above the element bound (the Lanczos estimate decides whether it is
    /// stable), or when a prescribed motion moves the start state away from the reference
    /// one, is the model built as a run builds it.
    fn check_explicit(&self, input: &Sections<'_>) -> Result<Checked, InputError> {
        let setup = self.setup(input)?;
        let grid = setup.grid;
        let n = setup.kind.n_nodes();
        let n_cells = setup.connectivity.len() / n.max(1);
        fem_model::progress::phase(format!(
            "the solid's critical step: the largest eigenvalue of each of its {n_cells} cells"
        ));
        let mesh = &setup.mesh;
        let material = SolidMaterial::from(setup.material);
        let eigenvalues = reference_cell_eigenvalues(
            setup.kind,
            &mesh.points,
            &setup.connectivity,
            &setup.formulations,
            &material,
            setup.density,
        )
        .map_err(|e| setup.operator_error(e))?;
        let element = element_bound(&eigenvalues);
        if self.auto_dt.is_none() && grid.dt() > element.dt {
            // Only the assembled body's critical step can say whether this step is stable.
            return check_by_building(self, input);
        }
        let (masses, centre) = setup.reference_mass()?;
        let dofmap = &setup.dofmap;
        let x0 = vec![0.0; dofmap.n_free()];
        let v0 = setup.initial_velocity(self, centre)?;
        // With `auto_dt`, the shortest step the run can take (its critical step is at least
        // the element bound): the most frames and rows it can write.
        let choice = self.scheme_choice(input, grid, element.dt)?;
        let frame = frame_bytes_of(mesh.n_nodes(), n_cells, n);
        input.check_output(&choice.grid, frame, HISTORY_ROW_VALUES)?;
        let settings = StepSettings::new(choice.grid.dt())
            .starting_at(choice.grid.t0())
            .with_dirichlet(setup.dirichlet.clone());
        let start = settings
            .start(dofmap.n_free(), &x0, &v0)
            .map_err(|e| InputError::invalid("time", e.to_string()))?;
        if start.x != x0 {
            // The start state is not the reference one: its bound needs the operator.
            return check_by_building(self, input);
        }
        let kinetic = 0.5
            * start
                .v
                .iter()
                .zip(dofmap.free_dofs())
                .map(|(v, &g)| masses[g / 3] * v * v)
                .sum::<f64>();
        if !kinetic.is_finite() {
            return Err(InputError::invalid(
                format!("model.{}", Self::NAME),
                format!(
                    "the initial state's kinetic energy is not a finite number ({kinetic}): an \
                     initial value (a velocity, an angular velocity, a displacement) is too large \
                     to compute with"
                ),
            ));
        }
        let mut describe = self.describe_setup(&setup, n_cells, setup.dirichlet.len());
        let refined = self.refines(choice.grid.dt(), element.dt);
        describe.push(match self.auto_dt {
            Some(safety) => format!(
                "  time: DEF_EXP (explicit leap-frog, lumped mass), dt at least {} ({} of the critical step, \
                 at most time.dt; the run's critical step, by Lanczos, is at least the element bound), \
                 at most {} steps from {} to {}",
                shown(choice.grid.dt()),
                shown(safety),
                choice.grid.n_steps(),
                shown(choice.grid.t0()),
                shown(choice.grid.t_end())
            ),
            None => choice.describe,
        });
        describe.push(format!(
            "  explicit critical step 2/sqrt(lambda_max) at t0: at least the element bound {} (cell {}){}",
            shown(element.dt),
            element.cell,
            if refined {
                "; the run refines it by Lanczos on the assembled body (fem check --critical-step computes it)"
            } else {
                ", the step the run checks against"
            }
        ));
        describe.push(limiting_cells(&eigenvalues, |c| {
            let nodes = &setup.connectivity[n * c..n * (c + 1)];
            std::array::from_fn(|k| {
                nodes.iter().map(|&a| mesh.points[a][k]).sum::<f64>() / n as f64
            })
        }));
        Ok(Checked {
            describe,
            grid: choice.grid,
        })
    }

    /// The time grid (with `auto_dt`, the step a fraction of the critical step) and the
    /// scheme's description.
    fn scheme_choice(
        &self,
        input: &Sections<'_>,
        grid: TimeGrid,
        critical: f64,
    ) -> Result<SchemeChoice, InputError> {
        let time = input.time;
        let mut grid = grid;
        let describe = match input.scheme_name() {
            def_exp::NAME => {
                if let Some(safety) = self.auto_dt {
                    if !(safety > 0.0 && safety <= 1.0) {
                        return Err(InputError::invalid(
                            format!("{SECTION}.auto_dt"),
                            format!(
                                "expected a safety fraction 0 < auto_dt <= 1 of the critical step, got {safety}"
                            ),
                        ));
                    }
                    let dt = (safety * critical).min(time.dt);
                    if !(dt > 0.0 && dt.is_finite()) {
                        return Err(InputError::invalid(
                            format!("{SECTION}.auto_dt"),
                            format!(
                                "the critical step 2/sqrt(lambda_max) is {} s, so auto_dt = {} of it gives \
                                 no usable step ({dt:e} s): the cells are too small or too stiff for \
                                 their density to be stepped explicitly",
                                fem_model::number::shown(critical),
                                fem_model::number::shown(safety),
                            ),
                        ));
                    }
                    grid = TimeGrid::new(time.t0, time.t_end, dt)
                        .map_err(|e| InputError::invalid("time", e.to_string()))?;
                }
                format!(
                    "  time: DEF_EXP (explicit leap-frog, lumped mass), dt = {}{}, {} steps from {} to {}",
                    shown(grid.dt()),
                    self.auto_dt.map_or(String::new(), |s| format!(
                        " ({} of the critical step, at most time.dt)",
                        shown(s)
                    )),
                    grid.n_steps(),
                    shown(grid.t0()),
                    shown(grid.t_end())
                )
            }
            def_lim::NAME => format!(
                "  time: DEF_LIM (linearly implicit leap-frog, one Cholesky solve per step), eta = {}, dt = {}, {} steps from {} to {}",
                shown(self.damping.unwrap_or(0.0)),
                shown(grid.dt()),
                grid.n_steps(),
                shown(grid.t0()),
                shown(grid.t_end())
            ),
            other => format!(
                "  time: {} (Newton on the solid), dt = {}, {} steps from {} to {}",
                other,
                shown(grid.dt()),
                grid.n_steps(),
                shown(grid.t0()),
                shown(grid.t_end())
            ),
        };
        Ok(SchemeChoice { grid, describe })
    }

    /// The shared `dirichlet` sets and the section's rotations, merged.
    fn prescribed(
        &self,
        input: &Sections<'_>,
        mesh: &Mesh,
        dofmap: &DofMap,
        grid: &TimeGrid,
    ) -> Result<DirichletConditions, InputError> {
        let shared = dirichlet_conditions(input, mesh, dofmap, grid)?;
        if self.rotations.is_empty() {
            return Ok(shared);
        }
        let mut sets: Vec<DirichletSet> = shared
            .iter()
            .enumerate()
            .map(|(index, (dof, _, e))| DirichletSet {
                dofs: vec![SystemDof::new(dof)],
                signal: shared.shared_signal(index),
                enforcement: e,
            })
            .collect();
        let n_shared = sets.len();
        let mut origin = Vec::new();
        for (i, r) in self.rotations.iter().enumerate() {
            let field = format!("{SECTION}.rotations[{i}]");
            let group = mesh.group(&r.group).ok_or_else(|| {
                InputError::invalid(
                    format!("{field}.group"),
                    format!(
                        "no physical group named '{}'; the mesh has: {}",
                        r.group,
                        group_list(mesh)
                    ),
                )
            })?;
            let axis = vec3(&format!("{field}.axis"), &r.axis)?;
            let norm = axis.iter().map(|a| a * a).sum::<f64>().sqrt();
            if norm == 0.0 {
                return Err(InputError::invalid(
                    format!("{field}.axis"),
                    "expected a non-zero axis",
                ));
            }
            let axis = axis.map(|a| a / norm);
            let centre = match &r.centre {
                Some(c) => vec3(&format!("{field}.centre"), c)?,
                None => {
                    let n = group.nodes.len() as f64;
                    std::array::from_fn(|i| {
                        group.nodes.iter().map(|&v| mesh.points[v][i]).sum::<f64>() / n
                    })
                }
            };
            let angle = time_function(input.base_dir(), &r.angle)
                .map_err(|m| InputError::invalid(format!("{field}.angle"), m))?;
            let angle = Prescribed::new(angle);
            angle
                .check_finite_on(grid.t0(), grid.t_end(), 1001)
                .map_err(|e| InputError::invalid(format!("{field}.angle"), e.to_string()))?;
            let angle = Arc::new(angle);
            for &node in &group.nodes {
                for c in 0..3 {
                    let dof = fem_model::build::system_dof(dofmap, node, c).ok_or_else(|| {
                        InputError::invalid(
                            format!("{field}.group"),
                            format!(
                                "node {node} component {c} is also held by 'fixed' (or is not on the solid): a dof is either fixed or prescribed"
                            ),
                        )
                    })?;
                    sets.push(DirichletSet {
                        dofs: vec![dof],
                        signal: Arc::new(RotationSignal::new(
                            angle.clone(),
                            axis,
                            centre,
                            mesh.points[node],
                            c,
                        )),
                        enforcement: enforcement(r.method),
                    });
                    origin.push(i);
                }
            }
        }
        DirichletConditions::new(&sets).map_err(|c| {
            let g = dofmap.free_dofs()[c.dof];
            let name = |s: usize| {
                if s < n_shared {
                    "a 'dirichlet' set".to_string()
                } else {
                    format!("{SECTION}.rotations[{}]", origin[s - n_shared])
                }
            };
            InputError::invalid(
                if c.second >= n_shared {
                    format!("{SECTION}.rotations[{}]", origin[c.second - n_shared])
                } else {
                    "dirichlet".to_string()
                },
                format!(
                    "node {} component {} is prescribed twice (also by {})",
                    g / 3,
                    g % 3,
                    name(c.first)
                ),
            )
        })
    }

    fn initial_velocity(&self, centre_of_mass: [f64; 3]) -> Result<InitialVelocity, InputError> {
        let field = format!("{SECTION}.initial_velocity");
        Ok(match &self.initial_velocity {
            None => InitialVelocity::Zero,
            Some(InitialVelocityInput::Uniform(v)) => InitialVelocity::Rigid {
                velocity: vec3(&format!("{field}.uniform"), v)?,
                omega: [0.0; 3],
                centre: [0.0; 3],
            },
            Some(InitialVelocityInput::Rotation(r)) => InitialVelocity::Rigid {
                velocity: match &r.velocity {
                    Some(v) => vec3(&format!("{field}.rotation.velocity"), v)?,
                    None => [0.0; 3],
                },
                omega: vec3(&format!("{field}.rotation.omega"), &r.omega)?,
                centre: match &r.centre {
                    Some(c) => vec3(&format!("{field}.rotation.centre"), c)?,
                    None => centre_of_mass,
                },
            },
            Some(InitialVelocityInput::Expressions(e)) => {
                let key = format!("{field}.expressions");
                if e.len() != 3 {
                    return Err(InputError::invalid(
                        key,
                        format!("expected 3 expressions of x, y, z, got {}", e.len()),
                    ));
                }
                let parsed = e
                    .iter()
                    .map(|s| parse_expression(s))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|m| InputError::invalid(&key, m))?;
                let [a, b, c]: [_; 3] = parsed.try_into().expect("three expressions");
                InitialVelocity::Expressions(Box::new([a, b, c]))
            }
        })
    }
}

/// The element bound from every cell's eigenvalue: the largest (lowest cell among equals).
fn element_bound(eigenvalues: &[f64]) -> StableStep {
    let (cell, &lambda_max) =
        eigenvalues
            .iter()
            .enumerate()
            .fold((0, &f64::NEG_INFINITY), |best, (c, l)| {
                if *l > *best.1 { (c, l) } else { best }
            });
    StableStep {
        dt: 2.0 / lambda_max.sqrt(),
        lambda_max,
        cell,
    }
}

/// The `fem check` line naming the cells that limit the explicit step: the three with the
/// smallest element step `2/sqrt(λ_e)`, where they are, and how many times smaller their step
/// is than the median cell's. When even the smallest is within [`ALIKE`] of the median, no cell
/// stands out and the line says so instead of listing three ratios of 1.00.
fn limiting_cells(eigenvalues: &[f64], centroid: impl Fn(usize) -> [f64; 3]) -> String {
    let mut order: Vec<usize> = (0..eigenvalues.len()).collect();
    order.sort_by(|&a, &b| eigenvalues[b].total_cmp(&eigenvalues[a]).then(a.cmp(&b)));
    let step = |c: usize| 2.0 / eigenvalues[c].sqrt();
    let median = step(order[order.len() / 2]);
    let at = |c: usize| {
        let p = centroid(c);
        format!("cell {c} at ({:.4}, {:.4}, {:.4})", p[0], p[1], p[2])
    };
    let head = format!("  element steps 2/sqrt(lambda_e): median cell {median:.3e}");
    let smallest = order[0];
    if median / step(smallest) < 1.0 + ALIKE {
        return format!(
            "{head}; every cell within {:.0} % of it (smallest: {}, {:.3e}): no cell limits the step",
            100.0 * ALIKE,
            at(smallest),
            step(smallest)
        );
    }
    let worst: Vec<String> = order
        .iter()
        .take(3)
        .map(|&c| {
            format!(
                "{}: {:.3e} ({:.2}x below the median)",
                at(c),
                step(c),
                median / step(c)
            )
        })
        .collect();
    format!("{head}; smallest: {}", worst.join("; "))
}

/// How close to the median cell's step the smallest must be for `fem check` to call the cells
/// alike (5 %).
const ALIKE: f64 = 0.05;

/// A dead traction on a boundary group: refuses a group that is not of dimension 2.
fn traction_faces(
    mesh: &Mesh,
    t: &TractionInput,
    field: &str,
    input: &Sections<'_>,
    grid: &TimeGrid,
) -> Result<Vec<TractionFaces>, InputError> {
    let group = mesh.group(&t.group).ok_or_else(|| {
        InputError::invalid(
            format!("{field}.group"),
            format!(
                "no physical group named '{}'; the mesh has: {}",
                t.group,
                group_list(mesh)
            ),
        )
    })?;
    if group.dim != 2 {
        return Err(InputError::invalid(
            format!("{field}.group"),
            format!(
                "the group '{}' has dimension {}, but a traction acts on a boundary group of dimension 2 (tri3, quad4, tri6, quad8 or quad9 faces)",
                t.group, group.dim
            ),
        ));
    }
    if t.value.len() != 3 {
        return Err(InputError::invalid(
            format!("{field}.value"),
            format!(
                "expected 3 functions of t (one per axis), got {}",
                t.value.len()
            ),
        ));
    }
    let mut value = Vec::with_capacity(3);
    for (i, f) in t.value.iter().enumerate() {
        let key = format!("{field}.value[{i}]");
        let function =
            time_function(input.base_dir(), f).map_err(|m| InputError::invalid(&key, m))?;
        // Like every other function of t, checked over the run before the first step: a value
        // that is NaN, infinite or has a pole in [t0, t_end] is refused here, naming the key
        // (the rate and acceleration of a traction are not used: set to zero for the check).
        Prescribed::new(function.clone())
            .with_rate(TimeFunction::Constant(0.0))
            .with_acceleration(TimeFunction::Constant(0.0))
            .check_finite_on(grid.t0(), grid.t_end(), 1001)
            .map_err(|e| {
                InputError::invalid(
                    &key,
                    format!("the traction must be finite over the run from t0 to t_end: {e}"),
                )
            })?;
        value.push(function);
    }
    let value: [_; 3] = value.try_into().expect("three functions");
    let mut resolved = Vec::new();
    for (kind, face) in [
        (CellKind::Tri3, FaceKind::Tri3),
        (CellKind::Quad4, FaceKind::Quad4),
        (CellKind::Tri6, FaceKind::Tri6),
        (CellKind::Quad8, FaceKind::Quad8),
        (CellKind::Quad9, FaceKind::Quad9),
    ] {
        let faces: Vec<usize> = group
            .cells
            .iter()
            .filter(|(b, _)| mesh.blocks[*b].kind == kind)
            .flat_map(|&(b, c)| mesh.blocks[b].cell(c).iter().copied())
            .collect();
        if !faces.is_empty() {
            resolved.push(TractionFaces {
                kind: face,
                faces,
                value: value.clone(),
            });
        }
    }
    if let Some(&(b, _)) = group.cells.iter().find(|(b, _)| {
        !matches!(
            mesh.blocks[*b].kind,
            CellKind::Tri3 | CellKind::Quad4 | CellKind::Tri6 | CellKind::Quad8 | CellKind::Quad9
        )
    }) {
        return Err(InputError::invalid(
            format!("{field}.group"),
            format!(
                "the group '{}' has {} cells: a traction needs tri3, quad4, tri6, quad8 or quad9 faces",
                t.group,
                mesh.blocks[b].kind.name()
            ),
        ));
    }
    Ok(resolved)
}

/// An operator error as an input error naming the key or the cell.
fn operator_error(e: SolidError, kind: SolidKind, lumping: Lumping) -> InputError {
    match &e {
        SolidError::Mass { .. } => InputError::invalid(
            format!("{SECTION}.lumping"),
            format!(
                "{e}{}",
                if lumping == Lumping::RowSum && kind == SolidKind::Tet10 {
                    " (tet10 needs lumping: hrz, the default)"
                } else {
                    ""
                }
            ),
        ),
        SolidError::Density { .. } => {
            InputError::invalid(format!("{SECTION}.material.density"), e.to_string())
        }
        // Coordinates so large (or a cell so small) that its volume element is not a number:
        // not an inverted cell.
        SolidError::InvertedCell { kind, cell, source } if !source.det.is_finite() => {
            InputError::invalid(
                "mesh",
                format!(
                    "{kind} cell {cell} (counted within the solid) is too large to compute with: \
                     its volume element is {} at quadrature point {}; use coordinates of a \
                     moderate size (metres, millimetres)",
                    source.det, source.point
                ),
            )
        }
        _ => InputError::invalid("mesh", format!("{e} (cells counted within the solid)")),
    }
}

#[cfg(test)]
mod tests {
    use super::limiting_cells;

    #[test]
    fn alike_cells_are_said_to_be_alike_and_a_poor_cell_is_named() {
        let centre = |c: usize| [c as f64, 0.0, 0.0];
        let alike = limiting_cells(&[4.0, 4.1, 3.9, 4.0], centre);
        assert!(alike.contains("no cell limits the step"), "{alike}");
        assert!(!alike.contains("below the median"), "{alike}");
        // Cell 2's eigenvalue is 16x the others': its step is 4x smaller than the median's.
        let poor = limiting_cells(&[4.0, 4.0, 64.0, 4.0, 4.0], centre);
        assert!(
            poor.contains("cell 2 at (2.0000, 0.0000, 0.0000): 2.500e-1 (4.00x below the median)"),
            "{poor}"
        );
    }
}
