//! The finite-element string: a P1 string under tension on a mesh's line cells
//! (Glowinski–Holmström §3.1), stepped by any nodal stepper, with fixed and prescribed dofs.
//!
//! Output contract: frames hold the mesh with point data `displacement` and `velocity`
//! (3-vectors: each transverse component along its direction, `model.string.directions`);
//! `history.csv` has `step,t,kinetic,potential,total,external_work,dissipated,max_displacement,
//! iterations,reaction_work` — with the alpha scheme `total` is its discrete energy (19) and
//! `total + dissipated − external_work − reaction_work` is constant to round-off (direct and
//! rate control; `reaction_work` is the work of the prescribed dofs' reactions, what driving
//! them puts in).

use std::borrow::Cow;

use fem_assembly::DofMap;
use fem_elements::StringMaterial;
use fem_io::{Field, Frame, VtkCells};
use fem_mesh::{CellKind, Mesh};
use fem_model::build::{
    DofLocation, alpha, build_mesh, dirichlet_conditions, generated_mesh_counts, group_list,
    locate_dofs, newton_settings, theta, time_grid,
};
use fem_model::input::{InitialField, MassKind, OfferedScheme, TimeSetting};
use fem_model::number::strict;
use fem_model::resources::frame_bytes;
use fem_model::{InputError, Model, ModelSection, Sections, Uses};
use fem_time::{
    AlphaScheme, BackwardEuler, LinearSystem, Mass, MoreauJean, NodalStepper, StepReport,
    StepSettings, Stepper, TimeGrid,
};
use serde::Deserialize;

use crate::assembly::StringMatrices;

/// A P1 string under tension on a mesh's two-node line cells (Glowinski–Holmström §3.1): the
/// `model.string` section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StringSection {
    /// Mass per unit length ρ (> 0).
    #[serde(deserialize_with = "strict")]
    pub density: f64,
    /// Tension τ (> 0).
    #[serde(deserialize_with = "strict")]
    pub tension: f64,
    /// Transverse displacement components per node, 1 to 3 (default 1).
    #[serde(default = "one")]
    #[serde(deserialize_with = "strict")]
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
    #[serde(deserialize_with = "strict")]
    pub directions: Option<Vec<[f64; 3]>>,
    /// Uniform load per unit length, one value per component; default none.
    #[serde(default)]
    #[serde(deserialize_with = "strict")]
    pub load: Option<Vec<f64>>,
}

fn one() -> usize {
    1
}

impl ModelSection for StringSection {
    const NAME: &'static str = "string";

    fn uses(&self) -> Uses {
        Uses {
            schemes: &[
                OfferedScheme {
                    name: fem_time::alpha::NAME,
                    settings: &[TimeSetting::Alpha, TimeSetting::Newton],
                },
                OfferedScheme {
                    name: fem_time::backward_euler::NAME,
                    settings: &[TimeSetting::Newton],
                },
                OfferedScheme {
                    name: fem_time::nonsmooth::moreau_jean::NAME,
                    settings: &[TimeSetting::Theta, TimeSetting::Newton],
                },
            ],
            ..Uses::ON_A_MESH
        }
    }

    fn build(&self, input: &Sections<'_>) -> Result<Box<dyn Model>, InputError> {
        Ok(Box::new(StringModel::new(self, input)?))
    }
}

/// A P1 string on a mesh with its stepper.
pub struct StringModel {
    stepper: Box<dyn NodalStepper>,
    grid: TimeGrid,
    describe: Vec<String>,
    points: Vec<[f64; 3]>,
    cells: VtkCells,
    dofmap: DofMap,
    directions: Vec<[f64; 3]>,
    global: Vec<f64>,
    displacement: Vec<f64>,
    velocity: Vec<f64>,
    /// `K`, `M` and the prescribed dofs, for [`Model::linearization`].
    linear: (fem_assembly::CsrMatrix<f64>, Mass, Vec<usize>),
}

impl std::fmt::Debug for StringModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StringModel")
            .field("n_nodes", &self.dofmap.n_nodes())
            .field("n_free", &self.dofmap.n_free())
            .field("grid", &self.grid)
            .finish()
    }
}

impl StringModel {
    /// Validates the section with the rest of the input, assembles the string and builds its
    /// stepper.
    pub fn new(string: &StringSection, input: &Sections<'_>) -> Result<Self, InputError> {
        let invalid = |field: &str, message: String| InputError::invalid(field, message);
        let time = input.time;
        let grid = time_grid(time)?;
        let mesh_input = input.mesh.ok_or_else(|| {
            invalid(
                "mesh",
                "a string model needs a mesh: 'file', 'line' or 'box'".into(),
            )
        })?;
        check_string(string)?;
        // The output of a generated mesh is checked before the mesh is generated.
        if let Some((nodes, cells, per_cell)) = generated_mesh_counts(mesh_input) {
            input.check_output(&grid, frame_bytes(nodes, 6.0, cells, per_cell), 9.0)?;
        }
        let mesh = build_mesh(input, mesh_input, bytes_per_node(string.components))?;
        let n_cells: usize = mesh.blocks.iter().map(|b| b.n_cells()).sum();
        let nodes_per_cell = mesh
            .blocks
            .iter()
            .map(|b| b.kind.n_nodes())
            .max()
            .unwrap_or(1);
        input.check_output(
            &grid,
            frame_bytes(
                mesh.n_nodes() as f64,
                6.0,
                n_cells as f64,
                nodes_per_cell as f64,
            ),
            9.0,
        )?;

        // The string's cells: line2 cells of the region (or of the whole mesh).
        let cells = string_cells(&mesh, string)?;
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
                &mesh,
                DofLocation::of_fixed(set),
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
        let load = string.load.as_ref().map(|l| matrices.uniform_load(l));
        let StringMatrices {
            mass,
            lumped_mass,
            stiffness,
            ..
        } = matrices;
        let mass = match string.mass {
            MassKind::Lumped => Mass::Lumped(lumped_mass),
            MassKind::Consistent => Mass::Consistent(mass),
        };
        // A free end (no fixed dof at all on a 1D string) leaves rigid motion: allowed, the
        // scheme handles a singular stiffness; the mass is always definite.
        let linear_parts = (stiffness.clone(), mass.clone());
        let mut system = LinearSystem::new(mass, stiffness);
        if let Some(f) = load {
            system = system.with_force(move |_t: f64, out: &mut [f64]| out.copy_from_slice(&f));
        }

        let dirichlet = dirichlet_conditions(input, &mesh, &dofmap, &grid)?;
        let n_prescribed = dirichlet.len();
        let chord = Chord::of(&mesh, &cells);
        let x0 = initial_field(
            "initial.displacement",
            &input.initial.displacement,
            &mesh,
            &dofmap,
            chord.as_ref(),
        )?;
        let v0 = initial_field(
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

        let held = dirichlet.dofs().to_vec();
        let settings = StepSettings::new(grid.dt())
            .starting_at(grid.t0())
            .with_dirichlet(dirichlet)
            .with_newton(newton_settings(time)?);
        let setup = |e: fem_time::StepError| invalid("time", e.to_string());
        let (stepper, scheme, stability): (Box<dyn NodalStepper>, String, String) = match input
            .scheme_name()
        {
            fem_time::alpha::NAME => {
                let alpha = alpha(time)?;
                let s = AlphaScheme::new(system, alpha, settings, &x0, &v0).map_err(setup)?;
                let stability = match s.stability() {
                    None => "unconditional (alpha >= 1/4)".to_string(),
                    Some((b, _)) => format!("dt <= {b:e} (bound (23)) holds"),
                };
                let kind = if s.is_explicit() {
                    "explicit"
                } else {
                    "one Cholesky factorization"
                };
                (
                    Box::new(s),
                    format!("alpha scheme (16), alpha = {alpha}, {kind}"),
                    stability,
                )
            }
            fem_time::backward_euler::NAME => (
                Box::new(BackwardEuler::new(system, settings, &x0, &v0).map_err(setup)?),
                "backward-Euler acceleration step (Serac)".into(),
                "unconditional (first order, dissipative)".into(),
            ),
            fem_time::nonsmooth::moreau_jean::NAME => {
                let theta = theta(time)?;
                (
                    Box::new(MoreauJean::new(system, theta, settings, &x0, &v0).map_err(setup)?),
                    format!("Moreau-Jean, theta = {theta}"),
                    "unconditional for theta >= 1/2".into(),
                )
            }
            _ => return Err(input.unhandled_scheme(StringSection::NAME)),
        };

        let mut describe = vec![
            format!(
                "  mesh: {} nodes, {} cells ({} string cells)",
                mesh.n_nodes(),
                mesh.n_cells(),
                cells.len()
            ),
            format!(
                "  dofs: {} free of {} ({} per node)",
                dofmap.n_free(),
                dofmap.n_dofs(),
                dofmap.n_comp()
            ),
            format!(
                "  time: {scheme}, dt = {}, {} steps from {} to {}",
                fem_model::number::shown(grid.dt()),
                grid.n_steps(),
                fem_model::number::shown(grid.t0()),
                fem_model::number::shown(grid.t_end())
            ),
            format!("  stability: {stability}"),
        ];
        if n_prescribed > 0 {
            describe.push(format!(
                "  prescribed: {n_prescribed} dofs in {} dirichlet sets",
                input.dirichlet.len()
            ));
            if input
                .dirichlet
                .iter()
                .any(|d| d.method == fem_model::input::EnforcementKind::Rate)
            {
                describe.push(
                    "  note: rate control holds velocities; positions drift by the integration error of the prescribed rate (docs/theory/dirichlet.md)".into(),
                );
            }
        }
        let n_nodes = dofmap.n_nodes();
        Ok(Self {
            stepper,
            grid,
            describe,
            cells: VtkCells::from_mesh(&mesh),
            points: mesh.points,
            global: vec![0.0; dofmap.n_dofs()],
            displacement: vec![0.0; 3 * n_nodes],
            velocity: vec![0.0; 3 * n_nodes],
            dofmap,
            directions,
            linear: (linear_parts.0, linear_parts.1, held),
        })
    }

    /// Free-dof values as 3-vectors per node (each component along its direction).
    fn spread_to_points(&mut self, free: &[f64], velocity: bool) {
        self.dofmap.scatter(free, 0.0, &mut self.global);
        let target = if velocity {
            &mut self.velocity
        } else {
            &mut self.displacement
        };
        let n_comp = self.dofmap.n_comp();
        for (node, vec3) in target.chunks_mut(3).enumerate() {
            vec3.fill(0.0);
            for (c, dir) in self.directions.iter().enumerate() {
                let u = self.global[node * n_comp + c];
                for i in 0..3 {
                    vec3[i] += u * dir[i];
                }
            }
        }
    }
}

impl Model for StringModel {
    fn describe(&self) -> Vec<String> {
        self.describe.clone()
    }
    fn grid(&self) -> TimeGrid {
        self.grid
    }
    fn stepper(&self) -> &dyn Stepper {
        self.stepper.as_ref()
    }
    fn stepper_mut(&mut self) -> &mut dyn Stepper {
        self.stepper.as_mut()
    }
    fn history_columns(&self) -> Vec<String> {
        [
            "external_work",
            "dissipated",
            "max_displacement",
            "iterations",
            "reaction_work",
        ]
        .map(String::from)
        .to_vec()
    }
    fn history_values(&self, report: &StepReport, out: &mut Vec<f64>) {
        let e = self.stepper.energy().unwrap_or_default();
        let max_u = self
            .stepper
            .position()
            .iter()
            .fold(0.0f64, |m, u| m.max(u.abs()));
        out.extend([
            e.external_work,
            e.dissipated,
            max_u,
            report.iterations as f64,
            e.reaction_work,
        ]);
    }
    fn frame(&mut self) -> Frame<'_> {
        let x = self.stepper.position().to_vec();
        let v: Cow<'_, [f64]> = self.stepper.velocity_at_step();
        let v = v.into_owned();
        self.spread_to_points(&x, false);
        self.spread_to_points(&v, true);
        Frame::new(&self.points, &self.cells)
            .with_point_field(Field::vector("displacement", &self.displacement))
            .with_point_field(Field::vector("velocity", &self.velocity))
    }
    /// The string is linear: `K` and `M` are its assembled matrices.
    fn linearization(&self) -> Option<fem_model::vibration::LinearizationResult> {
        let (stiffness, mass, held) = &self.linear;
        let n_comp = self.dofmap.n_comp();
        let free = self.dofmap.free_dofs();
        Some(Ok(fem_model::vibration::Linearization {
            stiffness: stiffness.clone(),
            mass: mass.clone(),
            held: held.clone(),
            dof_node: free.iter().map(|g| g / n_comp).collect(),
            dof_direction: free.iter().map(|g| self.directions[g % n_comp]).collect(),
            points: self.points.clone(),
            cells: self.cells.clone(),
            mass_key: "model.string.density".into(),
        }))
    }
    /// Warped by `displacement`, coloured by `velocity`, seen across the plane of motion (the
    /// chord and the one displacement direction; obliquely for two or three); the nodes whose
    /// every component is fixed are drawn as supports.
    fn view(&self) -> fem_io::View {
        let (first, last) = (self.points[0], self.points[self.points.len() - 1]);
        let chord: [f64; 3] = std::array::from_fn(|i| last[i] - first[i]);
        let look_along = match self.directions.as_slice() {
            [d] => Some([
                -(chord[1] * d[2] - chord[2] * d[1]),
                -(chord[2] * d[0] - chord[0] * d[2]),
                -(chord[0] * d[1] - chord[1] * d[0]),
            ]),
            _ => None,
        };
        let n_comp = self.dofmap.n_comp();
        let supports = (0..self.dofmap.n_nodes())
            .filter(|&n| (0..n_comp).all(|c| self.dofmap.free(self.dofmap.dof(n, c)).is_none()))
            .map(|n| self.points[n])
            .collect();
        fem_io::View {
            look_along,
            up: match self.directions.as_slice() {
                [d] => *d,
                _ => [0.0, 0.0, 1.0],
            },
            warp_by: Some("displacement".into()),
            color_by: Some("velocity".into()),
            scene: fem_io::Scene {
                points: supports,
                ..Default::default()
            },
            ..Default::default()
        }
    }
}

/// Memory of the string model per mesh node beyond the mesh itself (matrices, vectors, the
/// stepper and its factorization), for `components` transverse components: measured with
/// `fem run --max-steps 2` at 2e5 cells, 640 bytes per cell with one component and 4.0 kB
/// with three (mesh included), rounded up (docs/validation.md, "Hardening").
fn bytes_per_node(components: usize) -> f64 {
    let c = components.clamp(1, 3) as f64;
    64.0 + 416.0 * c * c
}

fn check_string(s: &StringSection) -> Result<(), InputError> {
    let invalid = |field: &str, message: String| InputError::Invalid {
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

fn string_cells(mesh: &Mesh, s: &StringSection) -> Result<Vec<[usize; 2]>, InputError> {
    let invalid = |field: &str, message: String| InputError::Invalid {
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
    field: &str,
    shape: &InitialField,
    mesh: &Mesh,
    dofmap: &DofMap,
    chord: Option<&Chord>,
) -> Result<Vec<f64>, InputError> {
    let invalid = |sub: &str, message: String| InputError::Invalid {
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
                    format!(
                        "expected a component from 0 to {}, got {}",
                        n_comp - 1,
                        p.component
                    ),
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
                    format!(
                        "expected a component from 0 to {}, got {}",
                        n_comp - 1,
                        m.component
                    ),
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
