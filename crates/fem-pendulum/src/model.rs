//! The double pendulum as a [`fem_model::Model`]: its input section and its output.
//!
//! Output contract: frames hold the links O–A–B as a polyline and the constraint (wall or
//! ellipse) as a second polyline, drawn with gravity pointing down (paper coordinates `(x, y)`
//! shown at `(y, −x)`), point and cell data `part` (0 pendulum, 1 constraint); `history.csv`
//! has `step,t,kinetic,potential,total` (`T`, `V + ψ`, their sum at the half step: scheme (40)
//! conserves it to its truncation error) then [`PendulumRecord::COLUMNS`] (paper
//! coordinates; `mechanical_energy` is `T + V`).

use fem_io::{Field, Frame, VtkCells};
use fem_model::build::{newton_settings, time_grid};
use fem_model::input::{OfferedScheme, TimeSetting};
use fem_model::number::{shown, shown_list, strict};
use fem_model::resources::frame_bytes;
use fem_model::{InputError, Model, ModelSection, Sections, Uses};
use fem_time::conservation_form::MultiplierSettings;
use fem_time::{StepError, StepReport, Stepper, TimeGrid};
use serde::Deserialize;

use crate::pendulum::{
    ConstraintMethod, EllipseConstraint, PendulumConstraint, PendulumRecord, PendulumSetup,
    PendulumSimulation, WallConstraint,
};

/// The double pendulum of Glowinski–Holmström §2: the `model.double_pendulum` section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoublePendulumSection {
    /// `table1` (the wall problem) or `table3` (the ellipse problem, with the torque (45)).
    pub parameters: PendulumParameters,
    /// `none`, `{wall: {distance: d}}` or `ellipse` (Table 3's ellipse).
    #[serde(default)]
    pub constraint: PendulumConstraintInput,
    /// `{penalty: {epsilon}}` or `{augmented_lagrangian: {epsilon, tolerance, max_iterations}}`.
    #[serde(default)]
    pub enforcement: Option<ConstraintMethodInput>,
    /// θ(0) (default: the table's).
    #[serde(default, deserialize_with = "strict")]
    pub angles: Option<[f64; 2]>,
    /// θ̇(0) (default 0).
    #[serde(default, deserialize_with = "strict")]
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
        #[serde(deserialize_with = "strict")]
        distance: f64,
    },
    /// Table 3's ellipse (an equality).
    Ellipse,
}

/// How a constraint is enforced.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum ConstraintMethodInput {
    /// Quadratic penalty.
    Penalty {
        /// ε > 0.
        #[serde(deserialize_with = "strict")]
        epsilon: f64,
    },
    /// Augmented Lagrangian (Hestenes–Powell).
    AugmentedLagrangian {
        /// ε > 0.
        #[serde(deserialize_with = "strict")]
        epsilon: f64,
        /// Constraint tolerance of the multiplier iteration (default 1e-8).
        #[serde(default = "default_multiplier_tolerance")]
        #[serde(deserialize_with = "strict")]
        tolerance: f64,
        /// Multiplier updates per step (default 500).
        #[serde(default = "default_multiplier_iterations")]
        #[serde(deserialize_with = "strict")]
        max_iterations: usize,
    },
}

fn default_multiplier_tolerance() -> f64 {
    1e-8
}

fn default_multiplier_iterations() -> usize {
    500
}

impl ModelSection for DoublePendulumSection {
    const NAME: &'static str = "double_pendulum";

    fn uses(&self) -> Uses {
        Uses {
            schemes: &[OfferedScheme {
                name: fem_time::conservation_form::NAME,
                settings: &[TimeSetting::Newton],
            }],
            ..Uses::OWN_GEOMETRY
        }
    }

    fn build(&self, input: &Sections<'_>) -> Result<Box<dyn Model>, InputError> {
        Ok(Box::new(PendulumModel::new(self, input)?))
    }
}

/// The double pendulum with its drawing.
#[derive(Debug)]
pub struct PendulumModel {
    sim: PendulumSimulation,
    setup: PendulumSetup,
    grid: TimeGrid,
    record: PendulumRecord,
    outline: Vec<[f64; 2]>,
    cells: VtkCells,
    part: Vec<f64>,
    point_part: Vec<f64>,
    points: Vec<[f64; 3]>,
}

/// Paper coordinates (x along gravity, y across) shown with gravity pointing down.
fn screen(p: [f64; 2]) -> [f64; 3] {
    [p[1], -p[0], 0.0]
}

impl PendulumModel {
    /// Validates the section and builds the pendulum, its constraint and scheme (40).
    pub fn new(m: &DoublePendulumSection, input: &Sections<'_>) -> Result<Self, InputError> {
        let invalid = |field: &str, message: String| InputError::invalid(field, message);
        let grid = time_grid(input.time)?;
        input.check_output(&grid, frame_bytes(3.0, 6.0, 2.0, 2.0), 12.0)?;
        let newton = newton_settings(input.time)?;
        let enforcement = match m.enforcement {
            None => ConstraintMethod::Penalty { epsilon: 1.0 },
            Some(ConstraintMethodInput::Penalty { epsilon }) => {
                ConstraintMethod::Penalty { epsilon }
            }
            Some(ConstraintMethodInput::AugmentedLagrangian {
                epsilon,
                tolerance,
                max_iterations,
            }) => {
                if !(tolerance.is_finite() && tolerance > 0.0) || max_iterations == 0 {
                    return Err(invalid(
                        "model.double_pendulum.enforcement.augmented_lagrangian",
                        "expected a positive tolerance and at least one iteration".into(),
                    ));
                }
                ConstraintMethod::AugmentedLagrangian {
                    epsilon,
                    multipliers: MultiplierSettings {
                        tolerance,
                        max_iterations,
                    },
                }
            }
        };
        let epsilon = match enforcement {
            ConstraintMethod::Penalty { epsilon }
            | ConstraintMethod::AugmentedLagrangian { epsilon, .. } => epsilon,
        };
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(invalid(
                "model.double_pendulum.enforcement",
                format!("expected epsilon > 0, got {epsilon}"),
            ));
        }
        if m.constraint == PendulumConstraintInput::None && m.enforcement.is_some() {
            return Err(invalid(
                "model.double_pendulum.enforcement",
                "the pendulum has no constraint to enforce (constraint: none): remove 'enforcement'"
                    .into(),
            ));
        }
        if m.constraint != PendulumConstraintInput::None && m.enforcement.is_none() {
            return Err(invalid(
                "model.double_pendulum.enforcement",
                "a constraint needs an enforcement: penalty or augmented_lagrangian".into(),
            ));
        }
        let mut setup = match m.parameters {
            PendulumParameters::Table1 => PendulumSetup::wall(epsilon, grid.dt()),
            PendulumParameters::Table3 => PendulumSetup::ellipse(enforcement, grid.dt()),
        };
        setup.enforcement = enforcement;
        setup.newton = newton;
        setup.constraint = match m.constraint {
            PendulumConstraintInput::None => PendulumConstraint::Free,
            PendulumConstraintInput::Wall { distance } => {
                if !distance.is_finite() {
                    return Err(invalid(
                        "model.double_pendulum.constraint.wall.distance",
                        format!("expected a finite distance, got {distance}"),
                    ));
                }
                PendulumConstraint::Wall(WallConstraint {
                    l: setup.pendulum.l,
                    d: distance,
                })
            }
            PendulumConstraintInput::Ellipse => {
                PendulumConstraint::Ellipse(EllipseConstraint::table3())
            }
        };
        if let Some(a) = m.angles {
            setup.theta0 = a;
        }
        if let Some(w) = m.angular_velocities {
            setup.theta_dot0 = w;
        }
        if setup
            .theta0
            .iter()
            .chain(&setup.theta_dot0)
            .any(|v| !v.is_finite())
        {
            return Err(invalid(
                "model.double_pendulum.angles",
                "expected finite angles and angular velocities".into(),
            ));
        }
        if let PendulumConstraint::Wall(w) = setup.constraint {
            let tip = setup.pendulum.tip(&setup.theta0);
            if tip[1] > w.d {
                return Err(invalid(
                    "model.double_pendulum.angles",
                    format!(
                        "the tip starts beyond the wall (y_B = {} > d = {})",
                        tip[1], w.d
                    ),
                ));
            }
        }
        setup
            .pendulum
            .check()
            .map_err(|e| invalid("model.double_pendulum", e.to_string()))?;
        let sim = PendulumSimulation::new(&setup).map_err(|e| invalid("time", e.to_string()))?;
        // The constraint's geometry, fixed in time.
        let outline: Vec<[f64; 2]> = match setup.constraint {
            PendulumConstraint::Free => Vec::new(),
            PendulumConstraint::Wall(w) => {
                let reach = w.l[0] + w.l[1];
                vec![[-0.2 * reach, w.d], [1.2 * reach, w.d]]
            }
            PendulumConstraint::Ellipse(e) => (0..=120)
                .map(|k| {
                    let phi = 2.0 * std::f64::consts::PI * k as f64 / 120.0;
                    [
                        e.centre[0] + e.semi_axes[0] * phi.cos(),
                        e.centre[1] + e.semi_axes[1] * phi.sin(),
                    ]
                })
                .collect(),
        };
        let mut cells = VtkCells::new();
        cells.push_polyline(&[0, 1, 2]);
        if !outline.is_empty() {
            cells.push_polyline(&(3..3 + outline.len()).collect::<Vec<_>>());
        }
        let part: Vec<f64> = std::iter::once(0.0)
            .chain(if outline.is_empty() { None } else { Some(1.0) })
            .collect();
        let point_part: Vec<f64> = (0..3 + outline.len())
            .map(|i| if i < 3 { 0.0 } else { 1.0 })
            .collect();
        let record = sim.initial_record();
        Ok(Self {
            sim,
            setup,
            grid,
            record,
            points: Vec::with_capacity(3 + outline.len()),
            outline,
            cells,
            part,
            point_part,
        })
    }
}

impl Model for PendulumModel {
    fn describe(&self) -> Vec<String> {
        vec![
            format!(
                "  model: double pendulum, constraint {}, enforcement {}",
                match self.setup.constraint {
                    PendulumConstraint::Free => "none".to_string(),
                    PendulumConstraint::Wall(w) => format!("wall y_B <= {}", shown(w.d)),
                    PendulumConstraint::Ellipse(e) => format!(
                        "ellipse (centre {}, semi-axes {})",
                        shown_list(&e.centre),
                        shown_list(&e.semi_axes)
                    ),
                },
                match self.setup.enforcement {
                    ConstraintMethod::Penalty { epsilon } =>
                        format!("penalty, epsilon = {}", shown(epsilon)),
                    ConstraintMethod::AugmentedLagrangian {
                        epsilon,
                        multipliers,
                    } => format!(
                        "augmented Lagrangian, epsilon = {}, tolerance {}, at most {} updates a step",
                        shown(epsilon),
                        shown(multipliers.tolerance),
                        multipliers.max_iterations
                    ),
                }
            ),
            format!(
                "  time: conservation-form scheme (40), dt = {}, {} steps to {}",
                shown(self.grid.dt()),
                self.grid.n_steps(),
                shown(self.grid.t_end())
            ),
        ]
    }
    fn grid(&self) -> TimeGrid {
        self.grid
    }
    fn stepper(&self) -> &dyn Stepper {
        self.sim.scheme()
    }
    fn stepper_mut(&mut self) -> &mut dyn Stepper {
        self.sim.scheme_mut()
    }
    fn after_step(&mut self, _report: &StepReport) -> Result<(), StepError> {
        self.record = self.sim.last_record();
        Ok(())
    }
    fn history_columns(&self) -> Vec<String> {
        PendulumRecord::COLUMNS.map(String::from).to_vec()
    }
    fn history_values(&self, _report: &StepReport, out: &mut Vec<f64>) {
        out.extend(self.record.values());
    }
    fn frame(&mut self) -> Frame<'_> {
        let r = &self.record;
        let l = self.setup.pendulum.l;
        let hinge = [l[0] * r.theta[0].cos(), l[0] * r.theta[0].sin()];
        self.points.clear();
        self.points
            .extend([screen([0.0, 0.0]), screen(hinge), screen(r.tip)]);
        self.points.extend(self.outline.iter().map(|&p| screen(p)));
        Frame::new(&self.points, &self.cells)
            .with_point_field(Field::scalar("part", &self.point_part))
            .with_cell_field(Field::scalar("part", &self.part))
    }

    /// In its plane, gravity down the screen, coloured by `part`; the pivot drawn.
    fn view(&self) -> fem_io::View {
        fem_io::View {
            look_along: Some([0.0, 0.0, -1.0]),
            up: [0.0, 1.0, 0.0],
            color_by: Some("part".into()),
            scene: fem_io::Scene {
                points: vec![screen([0.0, 0.0])],
                ..Default::default()
            },
            ..Default::default()
        }
    }
}
