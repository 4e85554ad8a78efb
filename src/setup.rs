//! From a YAML file to a model ready to step: parse, validate, build mesh and system.
//!
//! Everything that can be wrong with an input is found here, before any step runs, and
//! reported as a [`FemError`] with exit code 2 naming the file and the YAML path.

use std::path::{Path, PathBuf};

use fem_assembly::{DofMap, string::StringMatrices};
use fem_elements::StringMaterial;
use fem_mesh::{CellKind, Mesh, generate};
use fem_time::{LinearSystem, Mass, TimeGrid};

use crate::error::FemError;
use crate::input::{
    BoxCellKind, DirichletInput, EnforcementKind, FixedInput, FunctionInput, InitialField, Input,
    MassKind, MeshInput, ModelInput, StringInput,
};
use fem_constraints::{
    DirichletConditions, DirichletSet, Enforcement, Prescribed, Signal, Table, TimeFunction,
};
use std::sync::Arc;

/// A validated input with its mesh and assembled system, ready to step.
pub struct Problem {
    /// The input file.
    pub path: PathBuf,
    /// The parsed input.
    pub input: Input,
    /// The mesh.
    pub mesh: Mesh,
    /// Dof numbering (fixed dofs eliminated).
    pub dofmap: DofMap,
    /// The system `M ẍ + A x = f` on the free dofs.
    pub system: LinearSystem,
    /// Initial displacement on the free dofs.
    pub x0: Vec<f64>,
    /// Initial velocity on the free dofs.
    pub v0: Vec<f64>,
    /// The time grid.
    pub grid: TimeGrid,
    /// Global direction of each displacement component (for output as 3-vectors).
    pub directions: Vec<[f64; 3]>,
    /// Number of string cells.
    pub n_string_cells: usize,
    /// Prescribed motion, on the system's (free) dof numbering.
    pub dirichlet: DirichletConditions,
}

impl std::fmt::Debug for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Problem")
            .field("path", &self.path)
            .field("n_nodes", &self.mesh.n_nodes())
            .field("n_free", &self.dofmap.n_free())
            .field("grid", &self.grid)
            .finish()
    }
}

/// Reads and parses an input file.
pub fn load(path: &Path) -> Result<Input, FemError> {
    let text = std::fs::read_to_string(path).map_err(|source| FemError::ReadInput {
        path: path.to_path_buf(),
        source,
    })?;
    serde_saphyr::from_str::<Input>(&text).map_err(|e| FemError::Yaml {
        path: path.to_path_buf(),
        message: e.to_string().trim_start_matches("error: ").to_string(),
    })
}

/// A validated input of either kind.
#[derive(Debug)]
pub enum Prepared {
    /// A finite-element model on a mesh.
    FiniteElement(Box<Problem>),
    /// A string in its modal basis, with contact.
    Modal(Box<crate::modal::ModalProblem>),
    /// The colliding strings or the double pendulum.
    Constrained(Box<crate::constrained::ConstrainedProblem>),
    /// An inextensible beam.
    Beam(Box<crate::beam::BeamProblem>),
}

/// Reads, parses and validates an input file of any model kind.
pub fn prepare_any(path: &Path) -> Result<Prepared, FemError> {
    let input = load(path)?;
    match input.model {
        ModelInput::ModalString(_) => Ok(Prepared::Modal(Box::new(crate::modal::prepare(
            path, input,
        )?))),
        ModelInput::String(_) => Ok(Prepared::FiniteElement(Box::new(prepare_input(
            path, input,
        )?))),
        ModelInput::CollidingStrings(_) | ModelInput::DoublePendulum(_) => Ok(
            Prepared::Constrained(Box::new(crate::constrained::prepare(path, input)?)),
        ),
        ModelInput::Beam(_) => Ok(Prepared::Beam(Box::new(crate::beam::prepare(path, input)?))),
    }
}

/// Builds the problem of an input file: parse, validate, mesh, assemble, initial state.
pub fn prepare(path: &Path) -> Result<Problem, FemError> {
    prepare_input(path, load(path)?)
}

/// [`prepare`] for an input already parsed.
pub fn prepare_input(path: &Path, input: Input) -> Result<Problem, FemError> {
    let invalid = |field: &str, message: String| FemError::Invalid {
        path: path.to_path_buf(),
        field: field.to_string(),
        message,
    };

    // Time and output first: cheap checks before any mesh work.
    let t = &input.time;
    for (field, value) in [
        ("time.dt", t.dt),
        ("time.t_end", t.t_end),
        ("time.t0", t.t0),
        ("time.alpha", t.alpha),
    ] {
        if !value.is_finite() {
            return Err(invalid(
                field,
                format!("expected a finite number, got {value}"),
            ));
        }
    }
    if t.dt <= 0.0 {
        return Err(invalid(
            "time.dt",
            format!("expected a positive time step, got {}", t.dt),
        ));
    }
    if t.t_end <= t.t0 {
        return Err(invalid(
            "time.t_end",
            format!("expected an end time after t0 = {}, got {}", t.t0, t.t_end),
        ));
    }
    if !(0.0..=0.5).contains(&t.alpha) {
        return Err(invalid(
            "time.alpha",
            format!("expected 0 <= alpha <= 0.5, got {}", t.alpha),
        ));
    }
    let grid = TimeGrid::new(t.t0, t.t_end, t.dt).map_err(|e| invalid("time", e.to_string()))?;
    if t.newton.max_iterations == 0 {
        return Err(invalid(
            "time.newton.max_iterations",
            "expected at least 1 iteration, got 0".into(),
        ));
    }
    for (field, value) in [
        (
            "time.newton.relative_tolerance",
            t.newton.relative_tolerance,
        ),
        (
            "time.newton.absolute_tolerance",
            t.newton.absolute_tolerance,
        ),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(invalid(
                field,
                format!("expected a non-negative finite tolerance, got {value}"),
            ));
        }
    }
    if grid.n_steps() > 1_000_000_000 {
        return Err(invalid(
            "time.dt",
            format!("{} steps is more than the 1e9 a run allows", grid.n_steps()),
        ));
    }
    if input.output.every == 0 {
        return Err(invalid(
            "output.every",
            "expected a positive number of steps between frames, got 0".into(),
        ));
    }
    if input.output.history_every == 0 {
        return Err(invalid(
            "output.history_every",
            "expected a positive number of steps between rows, got 0".into(),
        ));
    }

    let ModelInput::String(string) = &input.model else {
        return Err(invalid(
            "model",
            "expected a finite-element model here (model.string)".into(),
        ));
    };
    let Some(mesh_input) = &input.mesh else {
        return Err(invalid(
            "mesh",
            "a string model needs a mesh: 'file', 'line' or 'box'".into(),
        ));
    };
    if input.contact.is_some() {
        return Err(invalid(
            "contact",
            "contact is available for model.modal_string only".into(),
        ));
    }
    if input.initial.exact_start {
        return Err(invalid(
            "initial.exact_start",
            "applies to model.modal_string only".into(),
        ));
    }
    if !input.output.probes.is_empty() {
        return Err(invalid(
            "output.probes",
            "probes are written for model.modal_string only".into(),
        ));
    }
    if input.time.scheme == crate::input::SchemeKind::ModalMoreauJean {
        return Err(invalid(
            "time.scheme",
            "modal_moreau_jean steps model.modal_string only".into(),
        ));
    }
    let mesh = build_mesh(path, mesh_input)?;
    check_string(path, string)?;

    // The string's cells: line2 cells of the region (or of the whole mesh).
    let cells = string_cells(path, &mesh, string)?;
    let n_comp = string.components;

    // Dofs: the string's nodes are unknowns unless fixed; nodes outside the string are not.
    let mut on_string = vec![false; mesh.n_nodes()];
    for c in &cells {
        on_string[c[0]] = true;
        on_string[c[1]] = true;
    }
    let mut fixed: Vec<usize> = (0..mesh.n_nodes())
        .filter(|&n| !on_string[n])
        .flat_map(|n| (0..n_comp).map(move |c| n * n_comp + c))
        .collect();
    for (i, set) in input.fixed.iter().enumerate() {
        fixed.extend(locate_dofs(
            path,
            &mesh,
            set.into(),
            &format!("fixed[{i}]"),
            n_comp,
        )?);
    }
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), n_comp, fixed);
    if dofmap.n_free() == 0 {
        return Err(invalid(
            "fixed",
            "every dof of the string is fixed: nothing would move".into(),
        ));
    }

    let material = StringMaterial {
        density: string.density,
        tension: string.tension,
    };
    let matrices = StringMatrices::assemble(&mesh.points, &cells, &material, &dofmap);
    let force = match &string.load {
        Some(load) => {
            let f = matrices.uniform_load(load);
            Some(
                Box::new(move |_t: f64, out: &mut [f64]| out.copy_from_slice(&f))
                    as fem_time::system::ForceFn,
            )
        }
        None => None,
    };
    // A free end (no fixed dof at all on a 1D string) leaves rigid motion: allowed, the
    // scheme handles a singular stiffness; the mass is always definite.
    let system = LinearSystem {
        mass: match string.mass {
            MassKind::Lumped => Mass::Lumped(matrices.lumped_mass),
            MassKind::Consistent => Mass::Consistent(matrices.mass),
        },
        stiffness: matrices.stiffness,
        damping: None,
        force,
    };

    let dirichlet = dirichlet_conditions(path, &input, &mesh, &dofmap, &grid)?;
    let chord = Chord::of(&mesh, &cells);
    let x0 = initial_field(
        path,
        "initial.displacement",
        &input.initial.displacement,
        &mesh,
        &dofmap,
        chord.as_ref(),
    )?;
    let v0 = initial_field(
        path,
        "initial.velocity",
        &input.initial.velocity,
        &mesh,
        &dofmap,
        chord.as_ref(),
    )?;
    let directions = match &string.directions {
        Some(d) => {
            if d.len() != n_comp {
                return Err(invalid(
                    "model.string.directions",
                    format!(
                        "expected one direction per component ({n_comp}), got {}",
                        d.len()
                    ),
                ));
            }
            d.iter()
                .map(|v| normalize(*v))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    invalid(
                        "model.string.directions",
                        "expected non-zero finite vectors".into(),
                    )
                })?
        }
        None => default_directions(
            chord.as_ref().map_or([1.0, 0.0, 0.0], |c| c.direction),
            n_comp,
        ),
    };

    Ok(Problem {
        path: path.to_path_buf(),
        n_string_cells: cells.len(),
        input,
        mesh,
        dofmap,
        system,
        x0,
        v0,
        grid,
        directions,
        dirichlet,
    })
}

/// Builds the Dirichlet conditions: locate each set's dofs, parse its functions, check them
/// on the run's interval, and merge the sets (refusing a dof prescribed twice differently).
fn dirichlet_conditions(
    path: &Path,
    input: &Input,
    mesh: &Mesh,
    dofmap: &DofMap,
    grid: &TimeGrid,
) -> Result<DirichletConditions, FemError> {
    let invalid = |field: String, message: String| FemError::Invalid {
        path: path.to_path_buf(),
        field,
        message,
    };
    let base = path.parent().unwrap_or(Path::new("."));
    // Sets with identical specifications share one signal, so naming a dof twice the same
    // way is not a conflict.
    let mut signals: Vec<(String, Arc<dyn Signal>)> = Vec::new();
    let mut sets = Vec::new();
    let mut origin = Vec::new();
    for (i, d) in input.dirichlet.iter().enumerate() {
        let field = format!("dirichlet[{i}]");
        let global = locate_dofs(path, mesh, d.into(), &field, dofmap.n_comp())?;
        let mut dofs = Vec::with_capacity(global.len());
        for g in global {
            match dofmap.free(g) {
                Some(f) => dofs.push(f),
                None => {
                    return Err(invalid(
                        field,
                        format!(
                            "node {} component {} is also held by 'fixed' (or is not on the model): a dof is either fixed or prescribed",
                            g / dofmap.n_comp(),
                            g % dofmap.n_comp()
                        ),
                    ));
                }
            }
        }
        let key = format!(
            "{:?}|{:?}|{:?}|{:?}|{:?}",
            d.value, d.rate, d.acceleration, d.method, d.epsilon
        );
        let signal = match signals.iter().find(|(k, _)| *k == key) {
            Some((_, s)) => s.clone(),
            None => {
                let function = |f: &FunctionInput, sub: &str| {
                    time_function(base, f).map_err(|m| invalid(format!("{field}.{sub}"), m))
                };
                let mut prescribed = Prescribed::new(function(&d.value, "value")?);
                if let Some(r) = &d.rate {
                    prescribed = prescribed.with_rate(function(r, "rate")?);
                }
                if let Some(a) = &d.acceleration {
                    prescribed = prescribed.with_acceleration(function(a, "acceleration")?);
                }
                if let Some(eps) = d.epsilon {
                    prescribed = prescribed
                        .with_epsilon(eps)
                        .map_err(|e| invalid(format!("{field}.epsilon"), e.to_string()))?;
                }
                prescribed
                    .check_finite_on(grid.t0(), grid.t_end(), 1001)
                    .map_err(|e| invalid(field.clone(), e.to_string()))?;
                let s: Arc<dyn Signal> = Arc::new(prescribed);
                signals.push((key, s.clone()));
                s
            }
        };
        sets.push(DirichletSet {
            dofs,
            signal,
            enforcement: match d.method {
                EnforcementKind::Direct => Enforcement::Direct,
                EnforcementKind::Rate => Enforcement::Rate,
                EnforcementKind::Full => Enforcement::Full,
            },
        });
        origin.push(i);
    }
    DirichletConditions::new(&sets).map_err(|c| {
        let global = dofmap.free_dofs()[c.dof];
        invalid(
            format!("dirichlet[{}]", origin[c.second]),
            format!(
                "node {} component {} is already prescribed by dirichlet[{}] with a different function or method",
                global / dofmap.n_comp(),
                global % dofmap.n_comp(),
                origin[c.first]
            ),
        )
    })
}

/// A time function from its input form; the error is the message to show.
fn time_function(base: &Path, f: &FunctionInput) -> Result<TimeFunction, String> {
    match f {
        FunctionInput::Number(v) if v.is_finite() => Ok(TimeFunction::Constant(*v)),
        FunctionInput::Number(v) => Err(format!("expected a finite number, got {v}")),
        FunctionInput::Expression(e) => TimeFunction::expression(e).map_err(|e| e.to_string()),
        FunctionInput::Table(t) => match (&t.table, &t.csv) {
            (Some(rows), None) => {
                let (times, values) = rows.iter().map(|r| (r[0], r[1])).unzip();
                Table::new(times, values)
                    .map(TimeFunction::Table)
                    .map_err(|e| e.to_string())
            }
            (None, Some(csv)) => Table::from_csv(&base.join(csv))
                .map(TimeFunction::Table)
                .map_err(|e| e.to_string()),
            _ => Err("expected exactly one of 'table' (rows [t, value]) or 'csv' (a file)".into()),
        },
    }
}

fn build_mesh(path: &Path, mesh: &MeshInput) -> Result<Mesh, FemError> {
    let wrap = |field: &str, source| FemError::Mesh {
        path: path.to_path_buf(),
        field: field.to_string(),
        source: Box::new(source),
    };
    match mesh {
        MeshInput::File(file) => {
            let resolved = path.parent().unwrap_or(Path::new(".")).join(file);
            fem_mesh::read_msh(&resolved).map_err(|e| wrap("mesh.file", e))
        }
        MeshInput::Line(line) => generate::line(line.length, line.cells, line.direction)
            .map_err(|e| wrap("mesh.line", e)),
        MeshInput::Box(b) => {
            let kind = match b.kind {
                BoxCellKind::Hex8 => generate::BoxCells::Hex8,
                BoxCellKind::Tet4 => generate::BoxCells::Tet4,
            };
            generate::box_mesh(b.lengths, b.cells, kind).map_err(|e| wrap("mesh.box", e))
        }
    }
}

fn check_string(path: &Path, s: &StringInput) -> Result<(), FemError> {
    let invalid = |field: &str, message: String| FemError::Invalid {
        path: path.to_path_buf(),
        field: format!("model.string.{field}"),
        message,
    };
    for (field, value) in [("density", s.density), ("tension", s.tension)] {
        if !(value.is_finite() && value > 0.0) {
            return Err(invalid(
                field,
                format!("expected a positive finite number, got {value}"),
            ));
        }
    }
    if !(1..=3).contains(&s.components) {
        return Err(invalid(
            "components",
            format!(
                "expected 1, 2 or 3 transverse components, got {}",
                s.components
            ),
        ));
    }
    if let Some(load) = &s.load {
        if load.len() != s.components {
            return Err(invalid(
                "load",
                format!(
                    "expected one value per component ({}), got {}",
                    s.components,
                    load.len()
                ),
            ));
        }
        if load.iter().any(|v| !v.is_finite()) {
            return Err(invalid("load", "expected finite numbers".into()));
        }
    }
    Ok(())
}

fn string_cells(path: &Path, mesh: &Mesh, s: &StringInput) -> Result<Vec<[usize; 2]>, FemError> {
    let invalid = |field: &str, message: String| FemError::Invalid {
        path: path.to_path_buf(),
        field: field.to_string(),
        message,
    };
    let mut cells = Vec::new();
    let mut other_kinds = Vec::new();
    let mut take = |block: &fem_mesh::CellBlock, cell: usize| {
        if block.kind == CellKind::Line2 {
            let c = block.cell(cell);
            cells.push([c[0], c[1]]);
        } else if block.kind.dim() == 1 && !other_kinds.contains(&block.kind) {
            other_kinds.push(block.kind);
        }
    };
    match &s.region {
        Some(name) => {
            let group = mesh.group(name).ok_or_else(|| {
                invalid(
                    "model.string.region",
                    format!(
                        "no physical group named '{name}'; the mesh has: {}",
                        group_list(mesh)
                    ),
                )
            })?;
            if group.dim != 1 {
                return Err(invalid(
                    "model.string.region",
                    format!(
                        "group '{name}' has dimension {}, a string needs a group of line cells (dimension 1)",
                        group.dim
                    ),
                ));
            }
            for &(b, c) in &group.cells {
                take(&mesh.blocks[b], c);
            }
        }
        None => {
            for block in &mesh.blocks {
                for c in 0..block.n_cells() {
                    take(block, c);
                }
            }
        }
    }
    if cells.is_empty() {
        let hint = if other_kinds.is_empty() {
            String::new()
        } else {
            format!(
                " (it has {} cells: the P1 string needs first-order lines; re-mesh with Mesh.ElementOrder = 1)",
                other_kinds
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(invalid(
            "model.string",
            format!("the mesh has no line2 cells for the string{hint}"),
        ));
    }
    Ok(cells)
}

fn group_list(mesh: &Mesh) -> String {
    if mesh.groups.is_empty() {
        return "no physical groups".into();
    }
    mesh.groups
        .iter()
        .map(|g| format!("'{}' (dim {})", g.name, g.dim))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a set of dofs is: a group or a node list, and the components.
struct DofLocation<'a> {
    group: &'a Option<String>,
    nodes: &'a Option<Vec<usize>>,
    components: &'a Option<Vec<usize>>,
}

impl<'a> From<&'a FixedInput> for DofLocation<'a> {
    fn from(f: &'a FixedInput) -> Self {
        Self {
            group: &f.group,
            nodes: &f.nodes,
            components: &f.components,
        }
    }
}

impl<'a> From<&'a DirichletInput> for DofLocation<'a> {
    fn from(d: &'a DirichletInput) -> Self {
        Self {
            group: &d.group,
            nodes: &d.nodes,
            components: &d.components,
        }
    }
}

/// Locates the global dofs of a set (`field` is its YAML path, for messages).
fn locate_dofs(
    path: &Path,
    mesh: &Mesh,
    set: DofLocation<'_>,
    field: &str,
    n_comp: usize,
) -> Result<Vec<usize>, FemError> {
    let invalid = |sub: &str, message: String| FemError::Invalid {
        path: path.to_path_buf(),
        field: format!("{field}{sub}"),
        message,
    };
    let nodes: Vec<usize> = match (set.group, set.nodes) {
        (Some(name), None) => mesh
            .group(name)
            .ok_or_else(|| {
                invalid(
                    ".group",
                    format!(
                        "no physical group named '{name}'; the mesh has: {}",
                        group_list(mesh)
                    ),
                )
            })?
            .nodes
            .clone(),
        (None, Some(nodes)) => {
            if let Some(&bad) = nodes.iter().find(|&&n| n >= mesh.n_nodes()) {
                return Err(invalid(
                    ".nodes",
                    format!(
                        "node {bad} does not exist: the mesh has nodes 0..{}",
                        mesh.n_nodes()
                    ),
                ));
            }
            nodes.clone()
        }
        _ => {
            return Err(invalid(
                "",
                "expected exactly one of 'group' or 'nodes'".into(),
            ));
        }
    };
    let components: Vec<usize> = match set.components {
        Some(c) => {
            if let Some(&bad) = c.iter().find(|&&c| c >= n_comp) {
                return Err(invalid(
                    ".components",
                    format!(
                        "component {bad} is out of range: the model has components 0..{n_comp}"
                    ),
                ));
            }
            c.clone()
        }
        None => (0..n_comp).collect(),
    };
    Ok(nodes
        .iter()
        .flat_map(|&n| components.iter().map(move |&c| n * n_comp + c))
        .collect())
}

/// The straight segment between a string's two end nodes: the coordinate `s` along it is
/// what initial shapes are functions of.
struct Chord {
    origin: [f64; 3],
    direction: [f64; 3],
    length: f64,
}

impl Chord {
    /// The chord of an open string (exactly two nodes of degree 1); `None` otherwise.
    fn of(mesh: &Mesh, cells: &[[usize; 2]]) -> Option<Chord> {
        let mut degree = vec![0u32; mesh.n_nodes()];
        for c in cells {
            degree[c[0]] += 1;
            degree[c[1]] += 1;
        }
        let ends: Vec<usize> = (0..mesh.n_nodes()).filter(|&n| degree[n] == 1).collect();
        if ends.len() != 2 {
            return None;
        }
        let (a, b) = (mesh.points[ends[0]], mesh.points[ends[1]]);
        let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let length = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let direction = normalize(d)?;
        Some(Chord {
            origin: a,
            direction,
            length,
        })
    }

    fn coordinate(&self, p: [f64; 3]) -> f64 {
        (0..3)
            .map(|i| (p[i] - self.origin[i]) * self.direction[i])
            .sum()
    }
}

fn normalize(v: [f64; 3]) -> Option<[f64; 3]> {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    (n > 0.0 && n.is_finite()).then(|| [v[0] / n, v[1] / n, v[2] / n])
}

/// The axes normal to the chord, in cyclic order after its dominant axis (x → y, z).
fn default_directions(chord: [f64; 3], n_comp: usize) -> Vec<[f64; 3]> {
    if n_comp == 3 {
        return vec![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    }
    let dominant = (0..3)
        .max_by(|&i, &j| chord[i].abs().total_cmp(&chord[j].abs()))
        .unwrap_or(0);
    let axis = |i: usize| {
        let mut e = [0.0; 3];
        e[i % 3] = 1.0;
        e
    };
    (1..=n_comp).map(|k| axis(dominant + k)).collect()
}

fn initial_field(
    path: &Path,
    field: &str,
    shape: &InitialField,
    mesh: &Mesh,
    dofmap: &DofMap,
    chord: Option<&Chord>,
) -> Result<Vec<f64>, FemError> {
    let invalid = |sub: &str, message: String| FemError::Invalid {
        path: path.to_path_buf(),
        field: format!("{field}{sub}"),
        message,
    };
    let mut global = vec![0.0; dofmap.n_dofs()];
    let n_comp = dofmap.n_comp();
    let need_chord = || {
        chord.ok_or_else(|| {
            invalid(
                "",
                "initial shapes need an open string with exactly two ends".into(),
            )
        })
    };
    match shape {
        InitialField::Zero => {}
        InitialField::Pluck(p) => {
            let chord = need_chord()?;
            if !(p.position > 0.0 && p.position < chord.length) {
                return Err(invalid(
                    ".pluck.position",
                    format!(
                        "expected a position strictly inside the string (0, {}), got {}",
                        chord.length, p.position
                    ),
                ));
            }
            if !p.amplitude.is_finite() {
                return Err(invalid(
                    ".pluck.amplitude",
                    format!("expected a finite number, got {}", p.amplitude),
                ));
            }
            if p.component >= n_comp {
                return Err(invalid(
                    ".pluck.component",
                    format!("expected a component in 0..{n_comp}, got {}", p.component),
                ));
            }
            for (node, point) in mesh.points.iter().enumerate() {
                let s = chord.coordinate(*point).clamp(0.0, chord.length);
                let shape = if s <= p.position {
                    s / p.position
                } else {
                    (chord.length - s) / (chord.length - p.position)
                };
                global[node * n_comp + p.component] = p.amplitude * shape;
            }
        }
        InitialField::Sine(m) => {
            let chord = need_chord()?;
            if m.mode == 0 {
                return Err(invalid(
                    ".sine.mode",
                    "expected a mode number >= 1, got 0".into(),
                ));
            }
            if !m.amplitude.is_finite() {
                return Err(invalid(
                    ".sine.amplitude",
                    format!("expected a finite number, got {}", m.amplitude),
                ));
            }
            if m.component >= n_comp {
                return Err(invalid(
                    ".sine.component",
                    format!("expected a component in 0..{n_comp}, got {}", m.component),
                ));
            }
            for (node, point) in mesh.points.iter().enumerate() {
                let s = chord.coordinate(*point);
                global[node * n_comp + m.component] =
                    m.amplitude * (m.mode as f64 * std::f64::consts::PI * s / chord.length).sin();
            }
        }
    }
    let mut free = vec![0.0; dofmap.n_free()];
    dofmap.gather(&global, &mut free);
    Ok(free)
}
