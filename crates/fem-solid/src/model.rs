//! The solid as a [`fem_model::Model`]: its stepper, frames and history.
//!
//! Output contract:
//! - frames: the reference mesh's points and the solid's cells, with point data
//!   `displacement` and `velocity` (3-vectors; *Warp By Vector* on `displacement` shows the
//!   deformed body) and cell data `cauchy_stress` (6 components in ParaView's order for a
//!   symmetric tensor: XX, YY, ZZ, XY, YZ, XZ), `von_mises`, `J` and `strain_energy_density`
//!   (cell averages over the quadrature points, per unit reference volume for the energy);
//! - `history.csv`: `step,t,kinetic,potential,total` (`½ uᵀ M u`, the strain energy and
//!   their sum), then [`HISTORY_COLUMNS`]: the work of the external forces and of the
//!   reactions of prescribed dofs since `t0`, the energy dissipated by damping, the step and
//!   the solver iterations of the last step; with `one_point` cells, [`HOURGLASS_COLUMN`]: the
//!   part of the strain energy their hourglass control stores. `total + dissipated −
//!   external_work − reaction_work` is what the scheme keeps (to its truncation error for
//!   DEF_EXP, DEF_LIM and the alpha scheme at `α = 1/4`).

use std::sync::Arc;

use fem_assembly::{ExactSum, SolidOperator};
use fem_elements::solid::CellStress;
use fem_io::{Field, Frame, VtkCells};
use fem_model::Model;
use fem_time::{NodalStepper, StepReport, Stepper, TimeGrid};

use crate::system::{SolidMass, evaluation_error};

/// The column of the hourglass energy, after [`HISTORY_COLUMNS`], when some cell is
/// `one_point` (a serial run's: a process's part of a distributed body has a part of it).
pub const HOURGLASS_COLUMN: &str = "hourglass_energy";

/// The model's own `history.csv` columns, after `step,t,kinetic,potential,total`.
pub const HISTORY_COLUMNS: [&str; 5] = [
    "external_work",
    "reaction_work",
    "dissipated",
    "dt",
    "iterations",
];

/// The sum of a value over the processes of a distributed run, each holding its own cells'
/// terms. A collective: every process calls it at the same point of the run (a history row).
pub trait SumOverProcesses: Send + Sync {
    /// The exact sum of every process's `local` terms.
    fn sum(&self, local: &ExactSum) -> f64;
}

/// What a frame shows, and its buffers: the whole body's, or — in a distributed run — one
/// process's part of it, with the global numbers of its nodes and cells.
pub struct SolidOutput {
    points: Vec<[f64; 3]>,
    cells: VtkCells,
    operator: Arc<SolidOperator>,
    /// `global_node` and `global_cell` of a process's part (a distributed run).
    global: Option<(Vec<f64>, Vec<f64>)>,
    /// `vtkGhostType` of a process's points: 1 where another process owns the node.
    ghost_points: Option<Vec<u8>>,
    /// The sum over the processes of a distributed run (`None`: the whole body is here).
    processes: Option<Box<dyn SumOverProcesses>>,
    /// Some cell of the body is `one_point` (on any process): the history has
    /// [`HOURGLASS_COLUMN`].
    has_hourglass: bool,
    displacement: Vec<f64>,
    velocity: Vec<f64>,
    stresses: Vec<CellStress>,
    cauchy: Vec<f64>,
    von_mises: Vec<f64>,
    jacobian: Vec<f64>,
    energy_density: Vec<f64>,
}

impl SolidOutput {
    /// The frames of the solid of `operator` on the mesh `points` and the solid's `cells`.
    pub fn new(points: Vec<[f64; 3]>, cells: VtkCells, operator: Arc<SolidOperator>) -> Self {
        let n_cells = operator.n_cells();
        let n_dofs = 3 * points.len();
        let has_hourglass = operator.has_hourglass_control();
        Self {
            points,
            cells,
            operator,
            global: None,
            ghost_points: None,
            processes: None,
            has_hourglass,
            displacement: vec![0.0; n_dofs],
            velocity: vec![0.0; n_dofs],
            stresses: vec![CellStress::default(); n_cells],
            cauchy: vec![0.0; 6 * n_cells],
            von_mises: vec![0.0; n_cells],
            jacobian: vec![0.0; n_cells],
            energy_density: vec![0.0; n_cells],
        }
    }

    /// With the point array `global_node` and the cell array `global_cell` (a process's
    /// part of a distributed body: the numbers of its nodes and cells in the whole mesh).
    pub fn with_global_numbers(mut self, nodes: &[usize], cells: &[usize]) -> Self {
        let numbers = |v: &[usize]| v.iter().map(|&i| i as f64).collect();
        self.global = Some((numbers(nodes), numbers(cells)));
        self
    }

    /// Marks the points this process does not own (`owned[i]` false) as VTK ghosts
    /// (`vtkGhostType` 1, a duplicated point): ParaView then counts and colours each node of a
    /// partition wall once.
    pub fn with_ghost_points(mut self, owned: &[bool]) -> Self {
        self.ghost_points = Some(owned.iter().map(|&o| u8::from(!o)).collect());
        self
    }

    /// Sums the history's body-wide values (the hourglass energy) over the processes of a
    /// distributed run with `processes`: this output is one process's part. A collective
    /// (whether any process has `one_point` cells is agreed here).
    pub fn with_sum_over_processes(mut self, processes: Box<dyn SumOverProcesses>) -> Self {
        let mut mine = ExactSum::new();
        mine.add(f64::from(u8::from(self.operator.has_hourglass_control())));
        self.has_hourglass = processes.sum(&mine) > 0.0;
        self.processes = Some(processes);
        self
    }

    /// Whether the history has [`HOURGLASS_COLUMN`]: some cell of the body is `one_point`.
    fn has_hourglass_column(&self) -> bool {
        self.has_hourglass
    }

    /// The energy the hourglass control of the `one_point` cells stores at the free-dof
    /// position `position` (part of the strain energy), of the whole body: in a distributed
    /// run the sum over the processes (a collective).
    fn hourglass_energy(&self, position: &[f64]) -> f64 {
        let dofmap = self.operator.dofmap();
        let mut u = vec![0.0; dofmap.n_dofs()];
        dofmap.scatter(position, 0.0, &mut u);
        let local = self.operator.hourglass_energy_sum(&u);
        match &self.processes {
            Some(p) => p.sum(&local),
            None => local.value(),
        }
    }

    /// The operator the frames' stresses are computed by.
    pub fn operator(&self) -> &SolidOperator {
        &self.operator
    }

    /// The frame of the solid at the free-dof `position` and `velocity` (the model's frame;
    /// a scene's solid adds its contact forces to it, issue 24).
    pub fn frame(&mut self, position: &[f64], velocity: &[f64]) -> Frame<'_> {
        self.update(position, velocity);
        let o = &*self;
        let mut frame = Frame::new(&o.points, &o.cells)
            .with_point_field(Field::vector("displacement", &o.displacement))
            .with_point_field(Field::vector("velocity", &o.velocity));
        if let Some((nodes, _)) = &o.global {
            frame = frame.with_point_field(Field::scalar("global_node", nodes));
        }
        if let Some(ghost) = &o.ghost_points {
            frame = frame.with_ghost_points(ghost);
        }
        frame = frame
            .with_cell_field(Field::new("cauchy_stress", 6, &o.cauchy))
            .with_cell_field(Field::scalar("von_mises", &o.von_mises))
            .with_cell_field(Field::scalar("J", &o.jacobian))
            .with_cell_field(Field::scalar("strain_energy_density", &o.energy_density));
        if let Some((_, cells)) = &o.global {
            frame = frame.with_cell_field(Field::scalar("global_cell", cells));
        }
        frame
    }

    /// Fills the point and cell fields from the free-dof position and velocity.
    fn update(&mut self, position: &[f64], velocity: &[f64]) {
        let dofmap = self.operator.dofmap();
        dofmap.scatter(position, 0.0, &mut self.displacement);
        dofmap.scatter(velocity, 0.0, &mut self.velocity);
        self.operator
            .cell_stresses(&self.displacement, &mut self.stresses);
        // A value that is not finite is left as it is: the run loop refuses such a frame (the
        // run stops with exit 1, naming the field) rather than write a made-up number.
        for (c, s) in self.stresses.iter().enumerate() {
            self.cauchy[6 * c..6 * c + 6].copy_from_slice(&s.cauchy);
            self.von_mises[c] = s.von_mises;
            self.jacobian[c] = s.jacobian;
            self.energy_density[c] = s.energy_density;
        }
    }
}

/// The linearization of the solid drawn by `output` about the displacement `u` (every dof):
/// `K` the tangent there, `M` the `mass`, the free dofs `held` by prescribed motion.
pub(crate) fn linearize(
    output: &SolidOutput,
    mass: &SolidMass,
    held: &[usize],
    u: &[f64],
) -> fem_model::vibration::LinearizationResult {
    let operator = &output.operator;
    let dofmap = operator.dofmap();
    let linearize = || {
        let stiffness = operator.tangent(u)?;
        let mass = match mass {
            SolidMass::Lumped => fem_time::Mass::Lumped(operator.lumped_mass().to_vec()),
            SolidMass::Consistent => fem_time::Mass::Consistent(operator.consistent_mass()?),
        };
        Ok(fem_model::vibration::Linearization {
            stiffness,
            mass,
            held: held.to_vec(),
            dof_node: dofmap.free_dofs().iter().map(|g| g / 3).collect(),
            dof_direction: dofmap
                .free_dofs()
                .iter()
                .map(|g| std::array::from_fn(|i| if i == g % 3 { 1.0 } else { 0.0 }))
                .collect(),
            points: output.points.clone(),
            cells: output.cells.clone(),
            mass_key: "model.solid.material.density".into(),
        })
    };
    linearize().map_err(evaluation_error)
}

impl std::fmt::Debug for SolidOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolidOutput")
            .field("points", &self.points.len())
            .field("cells", &self.operator.n_cells())
            .field("distributed", &self.processes.is_some())
            .field("hourglass", &self.has_hourglass)
            .finish_non_exhaustive()
    }
}

/// A solid being run.
pub struct SolidModel {
    stepper: Box<dyn NodalStepper>,
    grid: TimeGrid,
    describe: Vec<String>,
    output: SolidOutput,
    /// The mass the stepper uses and the prescribed (held) free dofs, for
    /// [`Model::linearization`]; `None`: not offered (a distributed part).
    modal: Option<(SolidMass, Vec<usize>)>,
}

impl std::fmt::Debug for SolidModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolidModel")
            .field("grid", &self.grid)
            .field("output", &self.output)
            .finish()
    }
}

impl SolidModel {
    /// The model of a built stepper.
    pub fn new(
        stepper: Box<dyn NodalStepper>,
        grid: TimeGrid,
        describe: Vec<String>,
        output: SolidOutput,
    ) -> Self {
        Self {
            stepper,
            grid,
            describe,
            output,
            modal: None,
        }
    }

    /// Offers the linearization about the initial state ([`Model::linearization`]): the
    /// stepper's `mass` and the free dofs its Dirichlet conditions hold.
    pub fn with_linearization(mut self, mass: SolidMass, held: Vec<usize>) -> Self {
        self.modal = Some((mass, held));
        self
    }

    /// The stepper (positions and velocities on the free dofs).
    pub fn nodal_stepper(&self) -> &dyn NodalStepper {
        self.stepper.as_ref()
    }

    /// The operator (geometry, material, dof map).
    pub fn operator(&self) -> &SolidOperator {
        &self.output.operator
    }

    /// The displacement of every node (`3 n_nodes`, fixed dofs zero) at the current step.
    pub fn displacement(&self) -> Vec<f64> {
        let dofmap = self.output.operator.dofmap();
        let mut u = vec![0.0; dofmap.n_dofs()];
        dofmap.scatter(self.stepper.position(), 0.0, &mut u);
        u
    }
}

impl Model for SolidModel {
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
        let mut columns = HISTORY_COLUMNS.map(String::from).to_vec();
        if self.output.has_hourglass_column() {
            columns.push(HOURGLASS_COLUMN.into());
        }
        columns
    }

    fn history_values(&self, report: &StepReport, out: &mut Vec<f64>) {
        let e = self.stepper.energy().unwrap_or_default();
        out.extend([
            e.external_work,
            e.reaction_work,
            e.dissipated,
            self.stepper.dt(),
            report.iterations as f64,
        ]);
        if self.output.has_hourglass_column() {
            out.push(self.output.hourglass_energy(self.stepper.position()));
        }
    }

    fn frame(&mut self) -> Frame<'_> {
        let position = self.stepper.position().to_vec();
        let velocity = self.stepper.velocity_at_step().into_owned();
        self.output.frame(&position, &velocity)
    }

    /// `K` is the tangent at the current (initial) displacement, `M` the stepper's mass.
    fn linearization(&self) -> Option<fem_model::vibration::LinearizationResult> {
        let (mass, held) = self.modal.as_ref()?;
        Some(linearize(&self.output, mass, held, &self.displacement()))
    }

    /// Warped by `displacement`, coloured by `von_mises`, seen obliquely with z up.
    fn view(&self) -> fem_io::View {
        fem_io::View {
            warp_by: Some("displacement".into()),
            color_by: Some("von_mises".into()),
            ..Default::default()
        }
    }
}
