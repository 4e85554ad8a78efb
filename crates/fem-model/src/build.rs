//! Builders every model uses on the shared sections: the mesh, dof sets, Dirichlet
//! conditions, time functions, the time grid and Newton's settings. Each refuses bad input
//! with the YAML path of the offending value.

use std::path::Path;
use std::sync::Arc;

use fem_assembly::DofMap;
use fem_constraints::{
    DirichletConditions, DirichletSet, Enforcement, Prescribed, Signal, Table, TimeFunction,
};
use fem_mesh::{Mesh, MshSize, generate};
use fem_time::{NewtonSettings, TimeGrid};

use crate::error::InputError;
use crate::input::{
    BoxCellKind, BoxInput, CompressionKind, ContactInput, DirichletInput, EnforcementKind,
    FixedInput, FunctionInput, LcpSolverKind, MeshInput, TimeInput,
};
use crate::model::Sections;
use crate::resources::{Bytes, mesh_bytes};

/// The impact law's solver of a `contact` section (the exact modal Moreau–Jean scheme's, for
/// a modal string or a solid in its modes), after checking the section's law: at least one
/// obstacle, `0 ≤ restitution ≤ 1`, a `tolerance` only for `pgs` and positive.
pub fn contact_solver(c: &ContactInput) -> Result<Box<dyn fem_constraints::LcpSolver>, InputError> {
    if !(0.0..=1.0).contains(&c.restitution) {
        return Err(InputError::invalid(
            "contact.restitution",
            format!("expected 0 <= e <= 1, got {}", c.restitution),
        ));
    }
    if c.tolerance.is_some() && c.solver == LcpSolverKind::Lemke {
        return Err(InputError::invalid(
            "contact.tolerance",
            "the tolerance is the pgs solver's; lemke is exact and has none: remove 'contact.tolerance' or choose solver: pgs",
        ));
    }
    let tolerance = c.tolerance_or_default();
    if !(tolerance.is_finite() && tolerance > 0.0) {
        return Err(InputError::invalid(
            "contact.tolerance",
            format!("expected a positive tolerance, got {tolerance}"),
        ));
    }
    if c.obstacles.is_empty() {
        return Err(InputError::invalid(
            "contact.obstacles",
            "expected at least one obstacle",
        ));
    }
    Ok(match c.solver {
        LcpSolverKind::Lemke => Box::new(fem_constraints::Lemke::default()),
        LcpSolverKind::Pgs => Box::new(fem_constraints::ProjectedGaussSeidel {
            tolerance,
            max_iterations: 100_000,
        }),
    })
}

/// The time grid of a `time` section, after checking its numbers: `dt > 0`, `t_end > t0`, all
/// finite, at most 1e9 steps.
pub fn time_grid(time: &TimeInput) -> Result<TimeGrid, InputError> {
    let invalid = |field: &str, message: String| InputError::invalid(field, message);
    for (field, value) in [
        ("time.dt", time.dt),
        ("time.t_end", time.t_end),
        ("time.t0", time.t0),
    ] {
        if !value.is_finite() {
            return Err(invalid(
                field,
                format!("expected a finite number, got {value}"),
            ));
        }
    }
    if time.dt <= 0.0 {
        return Err(invalid(
            "time.dt",
            format!("expected a positive time step, got {}", time.dt),
        ));
    }
    if time.t_end <= time.t0 {
        return Err(invalid(
            "time.t_end",
            format!(
                "expected an end time after t0 = {}, got {}",
                time.t0, time.t_end
            ),
        ));
    }
    let grid =
        TimeGrid::new(time.t0, time.t_end, time.dt).map_err(|e| invalid("time", e.to_string()))?;
    if grid.n_steps() > 1_000_000_000 {
        return Err(invalid(
            "time.dt",
            format!("{} steps is more than the 1e9 a run allows", grid.n_steps()),
        ));
    }
    Ok(grid)
}

/// `time.alpha` (default 1/4) after checking `0 ≤ α ≤ 1/2`.
pub fn alpha(time: &TimeInput) -> Result<f64, InputError> {
    let alpha = time.alpha_or_quarter();
    if !(0.0..=0.5).contains(&alpha) {
        return Err(InputError::invalid(
            "time.alpha",
            format!("expected 0 <= alpha <= 0.5, got {alpha}"),
        ));
    }
    Ok(alpha)
}

/// `time.theta` (default 1/2) after checking `0 < θ ≤ 1`.
pub fn theta(time: &TimeInput) -> Result<f64, InputError> {
    let theta = time.theta.unwrap_or(0.5);
    if !(theta > 0.0 && theta <= 1.0) {
        return Err(InputError::invalid(
            "time.theta",
            format!("expected 0 < theta <= 1, got {theta}"),
        ));
    }
    Ok(theta)
}

/// Newton's settings of a `time` section (defaults when absent), after checking them.
pub fn newton_settings(time: &TimeInput) -> Result<NewtonSettings, InputError> {
    let newton = time.newton_or_default();
    if newton.max_iterations == 0 {
        return Err(InputError::invalid(
            "time.newton.max_iterations",
            "expected at least 1 iteration, got 0",
        ));
    }
    for (field, value) in [
        ("time.newton.relative_tolerance", newton.relative_tolerance),
        ("time.newton.absolute_tolerance", newton.absolute_tolerance),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(InputError::invalid(
                field,
                format!("expected a non-negative finite tolerance, got {value}"),
            ));
        }
    }
    Ok(NewtonSettings {
        max_iterations: newton.max_iterations,
        relative_tolerance: newton.relative_tolerance,
        absolute_tolerance: newton.absolute_tolerance,
    })
}

/// Deflate level of a `vtkhdf` file's fields unless `output.compression: none`.
pub const VTKHDF_DEFLATE_LEVEL: u32 = 1;

/// How the frames of a run are written, as its `output` section asks.
pub fn series_format(output: &crate::input::OutputInput) -> fem_io::SeriesFormat {
    use crate::input::{FormatKind, PrecisionKind};
    match output.format {
        FormatKind::Pvd => fem_io::SeriesFormat::Pvd(compression(output.compression)),
        FormatKind::Vtkhdf => fem_io::SeriesFormat::VtkHdf(
            match output.precision {
                Some(PrecisionKind::Single) => fem_io::Precision::Single,
                _ => fem_io::Precision::Double,
            },
            // The filters HDF5 readers have: shuffle + deflate at level 1 (LZ4 is not one of
            // them; docs/performance.md: levels above 1 gain little and cost time).
            match output.compression {
                CompressionKind::None => None,
                CompressionKind::Lz4 | CompressionKind::Zlib => Some(VTKHDF_DEFLATE_LEVEL),
            },
        ),
    }
}

/// The `.vtu` compression an input asks for.
pub fn compression(kind: CompressionKind) -> fem_io::Compression {
    match kind {
        CompressionKind::None => fem_io::Compression::None,
        CompressionKind::Lz4 => fem_io::Compression::Lz4,
        CompressionKind::Zlib => fem_io::Compression::Zlib,
    }
}

/// The system dof of `component` of `node` in a model numbered by `dofmap` (its free dofs),
/// `None` when the dof is fixed (eliminated) or not the model's.
pub fn system_dof(
    dofmap: &DofMap,
    node: usize,
    component: usize,
) -> Option<fem_constraints::SystemDof> {
    if component >= dofmap.n_comp() {
        return None;
    }
    dofmap
        .free(node * dofmap.n_comp() + component)
        .map(fem_constraints::SystemDof::new)
}

/// Builds the Dirichlet conditions: locate each set's dofs, parse its functions, check them
/// on the run's interval, and merge the sets (refusing a dof prescribed twice differently).
///
/// `dofmap` numbers the model's dofs (node-major, `n_comp` per node); the conditions are on
/// its free-dof numbering.
pub fn dirichlet_conditions(
    input: &Sections<'_>,
    mesh: &Mesh,
    dofmap: &DofMap,
    grid: &TimeGrid,
) -> Result<DirichletConditions, InputError> {
    let invalid = |field: String, message: String| InputError::Invalid { field, message };
    let base = input.base_dir();
    // Sets with identical specifications share one signal, so naming a dof twice the same
    // way is not a conflict.
    let mut signals: Vec<(String, Arc<dyn Signal>)> = Vec::new();
    let mut sets = Vec::new();
    let mut origin = Vec::new();
    for (i, d) in input.dirichlet.iter().enumerate() {
        let field = format!("dirichlet[{i}]");
        let global = locate_dofs(mesh, d.into(), &field, dofmap.n_comp())?;
        let mut dofs = Vec::with_capacity(global.len());
        for g in global {
            match system_dof(dofmap, g / dofmap.n_comp(), g % dofmap.n_comp()) {
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

/// A time function from its input form (files relative to `base`); the error is the message
/// to show.
pub fn time_function(base: &Path, f: &FunctionInput) -> Result<TimeFunction, String> {
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

/// What reading a mesh file costs in memory, for [`fem_mesh::read_msh_within`]: before its
/// headers are read (`size.nodes == 0`), the file and what it can hold (at least 8 bytes per
/// node, 4 per element: 9 times its size); after, the file and the mesh its counts announce,
/// with `per_node` bytes of a model per node. Returns what is estimated, for messages
/// (`"1000 nodes and 999 elements"`), and the bytes.
pub fn msh_memory(size: &MshSize, per_node: f64) -> (String, f64) {
    if size.nodes == 0 {
        (
            format!("a mesh file of {}", Bytes(size.file_bytes as f64)),
            size.file_bytes as f64 * 9.0,
        )
    } else {
        (
            format!("{} nodes and {} elements", size.nodes, size.elements),
            size.file_bytes as f64
                + mesh_bytes(
                    size.nodes as f64,
                    size.elements as f64,
                    size.nodes_per_element as f64,
                )
                + per_node * size.nodes as f64,
        )
    }
}

/// The counts of a generated mesh (`line` or `box`), known before it is generated: nodes,
/// cells and nodes per cell, for the output estimate
/// ([`frame_bytes`](crate::resources::frame_bytes)); `None` for a mesh file, whose counts
/// are known once its headers are read.
pub fn generated_mesh_counts(mesh: &MeshInput) -> Option<(f64, f64, f64)> {
    match mesh {
        MeshInput::File(_) => None,
        MeshInput::Line(line) => {
            let n = line.cells as f64;
            Some((n + 1.0, n, 2.0))
        }
        MeshInput::Box(b) => Some(box_counts(b)),
    }
}

/// Nodes, cells and nodes per cell of a generated box (exact).
fn box_counts(b: &BoxInput) -> (f64, f64, f64) {
    let [nx, ny, nz] = b.cells.map(|c| c as f64);
    let grid_nodes = (nx + 1.0) * (ny + 1.0) * (nz + 1.0);
    let hexes = nx * ny * nz;
    let lines =
        nx * (ny + 1.0) * (nz + 1.0) + (nx + 1.0) * ny * (nz + 1.0) + (nx + 1.0) * (ny + 1.0) * nz;
    let faces = nx * ny * (nz + 1.0) + nx * (ny + 1.0) * nz + (nx + 1.0) * ny * nz;
    match b.kind {
        BoxCellKind::Hex8 => (grid_nodes, hexes, 8.0),
        // The tet split adds a node at each face of the grid and at each hexahedron's centre.
        BoxCellKind::Tet4 => (grid_nodes + faces + hexes, 24.0 * hexes, 4.0),
        BoxCellKind::Tet10 => {
            // One mid-edge node per edge of the tet4 box: the grid lines, four from each face
            // centre to its corners, fourteen from each centre to its corners and face centres.
            let edges = lines + 4.0 * faces + 14.0 * hexes;
            (grid_nodes + faces + hexes + edges, 24.0 * hexes, 10.0)
        }
        BoxCellKind::Hex20 => (grid_nodes + lines, hexes, 20.0),
        BoxCellKind::Hex27 => (grid_nodes + lines + faces + hexes, hexes, 27.0),
    }
}

/// Reads or generates the mesh of a `mesh` section, after checking that the mesh and the
/// model on it fit the memory budget: `per_node` is the model's own bytes per mesh node
/// (its matrices, vectors and stepper), added to the mesh's own ([`mesh_bytes`]). Counts are
/// checked before anything is generated; a file's size before it is read and its header
/// counts before the mesh is built.
pub fn build_mesh(
    input: &Sections<'_>,
    mesh: &MeshInput,
    per_node: f64,
) -> Result<Mesh, InputError> {
    let wrap = |field: &str, source| InputError::Mesh {
        field: field.to_string(),
        source: Box::new(source),
    };
    let model_bytes = |nodes: f64, cells: f64, per_cell: f64| {
        mesh_bytes(nodes, cells, per_cell) + per_node * nodes
    };
    match mesh {
        MeshInput::File(file) => {
            let resolved = input.base_dir().join(file);
            let mut accept = |size: &MshSize| {
                let (what, bytes) = msh_memory(size, per_node);
                input
                    .check_memory("mesh.file", &what, bytes)
                    .map_err(|e| match e {
                        InputError::Invalid { message, .. } => message,
                        other => other.to_string(),
                    })
            };
            fem_mesh::read_msh_within(&resolved, &mut accept).map_err(|e| wrap("mesh.file", e))
        }
        MeshInput::Line(line) => {
            let n = line.cells as f64;
            input.check_memory(
                "mesh.line.cells",
                &format!("{} cells", line.cells),
                model_bytes(n + 1.0, n + 2.0, 2.0),
            )?;
            generate::line(line.length, line.cells, line.direction)
                .map_err(|e| wrap("mesh.line", e))
        }
        MeshInput::Box(b) => {
            let [nx, ny, nz] = b.cells.map(|c| c as f64);
            let (nodes, cells, per_cell) = box_counts(b);
            let faces = 4.0 * (nx * ny + ny * nz + nz * nx);
            input.check_memory(
                "mesh.box.cells",
                &format!("{} x {} x {} cells", b.cells[0], b.cells[1], b.cells[2]),
                model_bytes(nodes, cells, per_cell) + mesh_bytes(0.0, faces, 6.0),
            )?;
            let kind = match b.kind {
                BoxCellKind::Hex8 => generate::BoxCells::Hex8,
                BoxCellKind::Tet4 => generate::BoxCells::Tet4,
                BoxCellKind::Tet10 => generate::BoxCells::Tet10,
                BoxCellKind::Hex20 => generate::BoxCells::Hex20,
                BoxCellKind::Hex27 => generate::BoxCells::Hex27,
            };
            generate::box_mesh(b.lengths, b.cells, kind).map_err(|e| wrap("mesh.box", e))
        }
    }
}

/// The physical groups of a mesh, for messages: `'left' (dim 0), 'domain' (dim 1)`.
pub fn group_list(mesh: &Mesh) -> String {
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
pub struct DofLocation<'a> {
    /// A physical group.
    pub group: &'a Option<String>,
    /// Node indices.
    pub nodes: &'a Option<Vec<usize>>,
    /// Components (all when `None`).
    pub components: &'a Option<Vec<usize>>,
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
pub fn locate_dofs(
    mesh: &Mesh,
    set: DofLocation<'_>,
    field: &str,
    n_comp: usize,
) -> Result<Vec<usize>, InputError> {
    let invalid = |sub: &str, message: String| InputError::Invalid {
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
                        "node {bad} does not exist: the mesh has nodes 0 to {}",
                        mesh.n_nodes().saturating_sub(1)
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
                        "component {bad} is out of range: the model has components 0 to {}",
                        n_comp.saturating_sub(1)
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

impl<'a> DofLocation<'a> {
    /// Where a `fixed` entry is.
    pub fn of_fixed(f: &'a FixedInput) -> Self {
        f.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counts the estimates use are those of the generated mesh, for every box kind.
    #[test]
    fn box_counts_are_those_of_the_generated_mesh() {
        for (kind, cells) in [
            (BoxCellKind::Hex8, generate::BoxCells::Hex8),
            (BoxCellKind::Tet4, generate::BoxCells::Tet4),
            (BoxCellKind::Tet10, generate::BoxCells::Tet10),
            (BoxCellKind::Hex20, generate::BoxCells::Hex20),
            (BoxCellKind::Hex27, generate::BoxCells::Hex27),
        ] {
            for n in [[1, 1, 1], [2, 3, 4], [5, 1, 2]] {
                let input = BoxInput {
                    lengths: [1.0, 2.0, 3.0],
                    cells: n,
                    kind,
                };
                let (nodes, n_cells, per_cell) = box_counts(&input);
                let mesh = generate::box_mesh(input.lengths, n, cells).unwrap();
                let volume = &mesh.blocks[0];
                assert_eq!(nodes as usize, mesh.n_nodes(), "{kind:?} {n:?}");
                assert_eq!(n_cells as usize, volume.n_cells(), "{kind:?} {n:?}");
                assert_eq!(per_cell as usize, volume.kind.n_nodes(), "{kind:?} {n:?}");
            }
        }
    }
}
