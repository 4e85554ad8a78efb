//! Rigid bodies as a [`fem_model::Model`]: the stepper, the drawing and the history.
//!
//! Output contract:
//! - frames: every body's drawing (mesh or box) at its current position — the points *are*
//!   the moved body, so no "Warp By Vector" is needed — with point data `displacement` (from
//!   the reference configuration), `velocity` and `body` (the body's index), and cell data
//!   `body`;
//! - `history.csv`: `step,t,kinetic,potential,total` (`T`, the gravity potential `−Σ m g·x`
//!   and their sum `H`), then [`HISTORY_COLUMNS`]: the spatial angular momentum (each free
//!   body's about the origin, each body on a fixed point about its point), the linear
//!   momentum, `orthonormality` = `max |ΛᵀΛ − I|` over the bodies, `external_work` (of the
//!   applied forces and torques since `t0`) and `iterations` (RIG_IMP's largest Newton count
//!   in the step, 0 for the explicit schemes).

use fem_io::Frame;
use fem_model::Model;
use fem_model::number::{shown, shown_list};
use fem_time::{Energy, StateField, StepError, StepReport, Stepper, TimeGrid};

use crate::bodies::Observables;
use crate::drawing::Drawing;
use crate::stepper::RigidStepper;

/// What `fem check` says about one body.
#[derive(Clone, Debug)]
pub(crate) struct BodySummary {
    pub mass: f64,
    pub moments: [f64; 3],
    pub support: String,
    pub drawing: String,
}

/// The model's own `history.csv` columns, after `step,t,kinetic,potential,total`.
pub const HISTORY_COLUMNS: [&str; 9] = [
    "angular_momentum_x",
    "angular_momentum_y",
    "angular_momentum_z",
    "linear_momentum_x",
    "linear_momentum_y",
    "linear_momentum_z",
    "orthonormality",
    "external_work",
    "iterations",
];

/// A set of rigid bodies being run.
#[derive(Debug)]
pub struct RigidModel {
    stepper: RigidStepper,
    grid: TimeGrid,
    drawing: Drawing,
    summaries: Vec<BodySummary>,
    /// The observables of the current step (one pass over the bodies per step).
    observables: Observables,
}

impl RigidModel {
    pub(crate) fn new(
        stepper: RigidStepper,
        grid: TimeGrid,
        drawing: Drawing,
        summaries: Vec<BodySummary>,
    ) -> Self {
        let observables = stepper.observables();
        Self {
            stepper,
            grid,
            drawing,
            summaries,
            observables,
        }
    }

    /// The stepper, with the bodies and their state.
    pub fn rigid_stepper(&self) -> &RigidStepper {
        &self.stepper
    }

    /// The observables of the current step.
    pub fn observables(&self) -> &Observables {
        &self.observables
    }
}

impl Model for RigidModel {
    fn describe(&self) -> Vec<String> {
        let bodies = self.stepper.bodies();
        let mut lines = vec![format!(
            "  model: {} rigid {}, gravity {}",
            bodies.len(),
            if bodies.len() == 1 { "body" } else { "bodies" },
            shown_list(&bodies.gravity())
        )];
        const SHOWN: usize = 10;
        for (i, s) in self.summaries.iter().enumerate().take(SHOWN) {
            lines.push(format!(
                "  body {i}: mass {}, principal moments {} about the centre of mass, {}, drawn as {}",
                shown(s.mass),
                shown_list(&s.moments),
                s.support,
                s.drawing
            ));
        }
        if self.summaries.len() > SHOWN {
            lines.push(format!("  … and {} more", self.summaries.len() - SHOWN));
        }
        let o = &self.observables;
        lines.push(format!(
            "  at t0: kinetic {}, potential {}, total {}",
            shown(o.kinetic),
            shown(o.potential),
            shown(o.total)
        ));
        let scheme = match self.stepper.scheme() {
            crate::Scheme::RigPos => "RIG_POS (NEW1, semi-explicit)".to_string(),
            crate::Scheme::RigNeg => "RIG_NEG (NEW2, semi-explicit)".to_string(),
            crate::Scheme::RigImp(n) => format!(
                "RIG_IMP (NEW3, Newton per body: tolerance {}, at most {} iterations)",
                shown(n.tolerance),
                n.max_iterations
            ),
        };
        lines.push(format!(
            "  time: {scheme}, dt = {}, {} steps from {} to {}",
            shown(self.grid.dt()),
            self.grid.n_steps(),
            shown(self.grid.t0()),
            shown(self.grid.t_end())
        ));
        lines.push(format!(
            "  drawing: {} points, {} cells",
            self.drawing.n_points(),
            self.drawing.n_cells()
        ));
        lines
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
        self.observables = self.stepper.observables();
        Ok(())
    }

    fn energy(&self) -> Option<Energy> {
        Some(self.stepper.energy_of(&self.observables))
    }

    fn history_columns(&self) -> Vec<String> {
        HISTORY_COLUMNS.map(String::from).to_vec()
    }

    fn history_values(&self, report: &StepReport, out: &mut Vec<f64>) {
        let o = &self.observables;
        out.extend(o.angular_momentum);
        out.extend(o.linear_momentum);
        out.push(o.orthonormality_defect);
        out.push(self.stepper.external_work());
        out.push(report.iterations as f64);
    }

    fn restore(&mut self, step_index: u64, fields: &[StateField<'_>]) -> Result<(), StepError> {
        self.stepper.restore(step_index, fields)?;
        self.observables = self.stepper.observables();
        Ok(())
    }

    fn frame(&mut self) -> Frame<'_> {
        self.drawing.update(self.stepper.bodies());
        self.drawing.frame()
    }

    /// The bodies where they are (no warp), obliquely, gravity down the screen, coloured by
    /// `body` when there are several; fixed points drawn.
    fn view(&self) -> fem_io::View {
        let bodies = self.stepper.bodies();
        fem_io::View {
            up: fem_io::up_against(bodies.gravity()),
            color_by: (bodies.len() > 1).then(|| "body".into()),
            scene: fem_io::Scene {
                points: (0..bodies.len())
                    .filter_map(|i| bodies.fixed_point(i))
                    .collect(),
                ..Default::default()
            },
            ..Default::default()
        }
    }
}
