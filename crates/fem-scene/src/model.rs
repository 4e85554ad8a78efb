//! A scene as a [`fem_model::Model`]: the stepper, the bodies' frames, the contact points'
//! frames and the history.
//!
//! Output contract:
//! - frames `NAME.pvd`: every body drawn by its shape where it is (fem-rigid's drawing: point
//!   data `displacement`, `velocity`, `body`);
//! - frames `NAME_contacts.pvd` at the same steps: one vertex a contact point of the last
//!   step, at its mid-step position, with point data `normal` (unit, from the second party
//!   into the first), `normal_force` (`r_N / h`), `tangential_force` (world vector),
//!   `gap` (at detection, negative when overlapping) and `state` (0 open, 1 stick, 2 slip),
//!   and `body` (the first body);
//! - `history.csv`: `step,t,kinetic,potential,total`, then [`HISTORY_COLUMNS`]: contact
//!   points, those carrying an impulse, the solver's sweeps, its final error (Siconos'
//!   relative measure, C11 of docs/theory/contact.md), Solfec's energy ratio (C12), whether it
//!   converged, the energy dissipated by impacts (normal impulses) and by friction since the
//!   start, the work of the links' impulses and of gravity. The run's energy balance is
//!   `total + dissipated_impact + dissipated_friction − external_work − link_work`.

use fem_io::{Field, Frame, VtkCells};
use fem_mesh::CellKind;
use fem_model::Model;
use fem_model::number::shown;
use fem_time::{Energy, StepReport, Stepper, TimeGrid};

use crate::scene::SceneStepper;

/// The model's own `history.csv` columns, after `step,t,kinetic,potential,total`.
pub const HISTORY_COLUMNS: [&str; 10] = [
    "contacts",
    "active_contacts",
    "sweeps",
    "solver_error",
    "energy_ratio",
    "converged",
    "dissipated_impact",
    "dissipated_friction",
    "link_work",
    "external_work",
];

/// The name of the contact points' series (`NAME_contacts.pvd`).
pub const CONTACTS_SERIES: &str = "contacts";

/// The frame series of a scene's rigid bodies when a solid takes the main frames.
pub const RIGID_SERIES: &str = "rigid";

/// A scene being run.
pub struct SceneModel {
    scene: SceneStepper,
    grid: TimeGrid,
    points: Vec<[f64; 3]>,
    cells: VtkCells,
    normal: Vec<f64>,
    normal_force: Vec<f64>,
    tangential_force: Vec<f64>,
    gap: Vec<f64>,
    state: Vec<f64>,
    body: Vec<f64>,
}

impl std::fmt::Debug for SceneModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneModel")
            .field("scene", &self.scene)
            .finish()
    }
}

impl SceneModel {
    /// A model of `scene` run on `grid`.
    pub fn new(scene: SceneStepper, grid: TimeGrid) -> Self {
        Self {
            scene,
            grid,
            points: Vec::new(),
            cells: VtkCells::new(),
            normal: Vec::new(),
            normal_force: Vec::new(),
            tangential_force: Vec::new(),
            gap: Vec::new(),
            state: Vec::new(),
            body: Vec::new(),
        }
    }

    /// The scene.
    pub fn scene(&self) -> &SceneStepper {
        &self.scene
    }

    /// The group drawn in the main frames: the solids if any, else the first.
    fn main_group(&self) -> usize {
        self.scene
            .groups()
            .iter()
            .position(|g| g.kind() == "solids")
            .unwrap_or(0)
    }

    fn fill_contacts(&mut self) {
        let contacts = self.scene.contacts();
        self.points.clear();
        self.normal.clear();
        self.normal_force.clear();
        self.tangential_force.clear();
        self.gap.clear();
        self.state.clear();
        self.body.clear();
        for c in contacts {
            self.points.push([c.point.x, c.point.y, c.point.z]);
            self.normal.extend(c.normal.iter());
            self.normal_force.push(c.normal_force);
            self.tangential_force.extend(c.tangential_force.iter());
            self.gap.push(c.gap);
            self.state.push(c.state.code());
            self.body.push(c.first as f64);
        }
        let connectivity: Vec<usize> = (0..self.points.len()).collect();
        self.cells = VtkCells::new();
        if !connectivity.is_empty() {
            self.cells.push_block(CellKind::Vertex, &connectivity);
        }
    }
}

impl Model for SceneModel {
    fn describe(&self) -> Vec<String> {
        let count =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut lines = vec![format!(
            "  model: a scene of {}, {}",
            count(self.scene.n_bodies(), "body", "bodies"),
            count(self.scene.obstacles().len(), "obstacle", "obstacles")
        )];
        for g in self.scene.groups() {
            lines.extend(g.describe());
        }
        let s = self.scene.settings().solver;
        lines.push(format!(
            "  contact solver: {}NSGS to {} (Siconos' relative error), at most {} sweeps ({} at the cap), Newton polish after {}",
            match s.strategy {
                fem_contact::Strategy::Nsgs => "",
                fem_contact::Strategy::NewtonThenNsgs => "global Newton, then ",
            },
            shown(s.tolerance),
            s.max_sweeps,
            match s.on_cap {
                fem_contact::CapPolicy::WarnAndContinue => "warn",
                fem_contact::CapPolicy::Fail => "fail",
            },
            s.polish_after
                .map_or("never".to_string(), |p| format!("{p} sweeps"))
        ));
        // A solid group already said how it steps (its scheme, dt and steps): one time line.
        if lines.iter().any(|l| l.starts_with("  time:")) {
            return lines;
        }
        lines.push(format!(
            "  time: dt = {}, {} steps from {} to {}",
            shown(self.grid.dt()),
            self.grid.n_steps(),
            shown(self.grid.t0()),
            shown(self.grid.t_end())
        ));
        lines
    }

    fn grid(&self) -> TimeGrid {
        self.grid
    }

    fn stepper(&self) -> &dyn Stepper {
        &self.scene
    }

    fn stepper_mut(&mut self) -> &mut dyn Stepper {
        &mut self.scene
    }

    fn energy(&self) -> Option<Energy> {
        Some(self.scene.scene_energy())
    }

    fn history_columns(&self) -> Vec<String> {
        HISTORY_COLUMNS.map(String::from).to_vec()
    }

    fn history_values(&self, _report: &StepReport, out: &mut Vec<f64>) {
        let s = self.scene.last_solve();
        let e = self.scene.scene_energy();
        out.push(s.contacts as f64);
        out.push(s.active as f64);
        out.push(s.report.sweeps as f64);
        out.push(s.report.error);
        out.push(s.report.energy_ratio);
        out.push(if s.report.converged || s.contacts + s.links == 0 {
            1.0
        } else {
            0.0
        });
        out.push(self.scene.dissipated_impact());
        out.push(self.scene.dissipated_friction());
        out.push(self.scene.link_work());
        out.push(e.external_work);
    }

    /// The solid's frame when the scene has one (its rigid bodies then go to the series
    /// [`RIGID_SERIES`]), else the rigid bodies'.
    fn frame(&mut self) -> Frame<'_> {
        let main = self.main_group();
        self.scene.groups_mut()[main].frame()
    }

    fn extra_series(&self) -> Vec<&'static str> {
        if self.scene.groups().len() > 1 {
            vec![CONTACTS_SERIES, RIGID_SERIES]
        } else {
            vec![CONTACTS_SERIES]
        }
    }

    fn extra_frame(&mut self, k: usize) -> Option<Frame<'_>> {
        if k == 1 && self.scene.groups().len() > 1 {
            let main = self.main_group();
            let other = usize::from(main == 0);
            return Some(self.scene.groups_mut()[other].frame());
        }
        if k != 0 {
            return None;
        }
        self.fill_contacts();
        Some(
            Frame::new(&self.points, &self.cells)
                .with_point_field(Field::vector("normal", &self.normal))
                .with_point_field(Field::scalar("normal_force", &self.normal_force))
                .with_point_field(Field::vector("tangential_force", &self.tangential_force))
                .with_point_field(Field::scalar("gap", &self.gap))
                .with_point_field(Field::scalar("state", &self.state))
                .with_point_field(Field::scalar("body", &self.body)),
        )
    }

    fn view(&self) -> fem_io::View {
        let gravity = self
            .scene
            .groups()
            .first()
            .and_then(|g| g.as_any().downcast_ref::<crate::rigid::RigidGroup>())
            .map_or([0.0, 0.0, -1.0], |g| g.stepper().bodies().gravity());
        let extent = self
            .scene
            .groups()
            .first()
            .and_then(|g| g.as_any().downcast_ref::<crate::rigid::RigidGroup>())
            .map_or(1.0, |g| {
                let p = g.stepper().bodies().positions();
                let far = p
                    .iter()
                    .map(|x| x.iter().map(|c| c.abs()).fold(0.0, f64::max))
                    .fold(0.0, f64::max);
                (2.0 * far).max(1.0)
            });
        let planes = self
            .scene
            .obstacles()
            .iter()
            .filter_map(|o| match o {
                fem_contact::detect::Obstacle::Plane { point, normal } => Some(fem_io::Plane {
                    point: [point.x, point.y, point.z],
                    normal: [normal.x, normal.y, normal.z],
                    half_size: extent,
                }),
                _ => None,
            })
            .collect();
        fem_io::View {
            up: fem_io::up_against(gravity),
            color_by: (self.scene.n_bodies() > 1).then(|| "body".into()),
            scene: fem_io::Scene {
                planes,
                ..Default::default()
            },
            ..Default::default()
        }
    }
}
