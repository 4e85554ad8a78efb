//! # A model of your own, run by `fem`'s steppers and run loop
//!
//! This program is what a downstream code writes to put its own physics through `fem`: it
//! defines a system, picks a stepper, wraps both in a [`Model`] that says what to write, and
//! hands it to [`drive`], which writes a ParaView series and a `history.csv` exactly as
//! `fem run` does. Nothing here lives in the workspace's model crates.
//!
//! ```text
//! cargo run --release --example follower_chain -- [OUT_DIR]      (default out/follower_chain)
//! ```
//!
//! ## The physics: a chain under a follower force
//! `N` beads of mass `m` on a line, `h` apart, each joined to the next by a hardening spring
//! (force `k s + κ s³` for a stretch `s = u_i − u_{i−1}` of the transverse displacements).
//! Bead 0 is the base, shaken by a prescribed `g(t) = a sin(2π f t)` (direct control). The
//! free end is pushed by a *follower* force of magnitude `P` that stays aligned with the last
//! link: its transverse component is `−P (u_N − u_{N−1}) / h`, which depends on the
//! configuration but is not the gradient of any potential (Beck's and Ziegler's classic
//! non-conservative load). Its tangent is therefore **unsymmetric**, so the stepper must
//! factor with LU, not Cholesky — the system says so through
//! [`SecondOrderSystem::tangent_symmetry`], and `fem` picks the factorization.
//!
//! Small matrices are given dense (`DMatrix`): no hand-built CSR.
//!
//! ## The energy
//! The springs have a potential; the follower force has none. The model therefore reports
//! `kinetic` and the springs' `potential`, and books the follower force's work (trapezoidal in
//! time) as `external_work`, so `total − external_work` is what the alpha scheme nearly
//! conserves (to its truncation error, being a nonlinear system). The base motion's reaction
//! work is not booked: with the base shaken, the balance is not expected to close.

use std::path::PathBuf;

use fem::constraints::{DirichletConditions, DirichletSet, Enforcement, Prescribed, TimeFunction};
use fem::drive::{Progress, RunOptions, drive};
use fem::io::{Field, Frame, VtkCells};
use fem::model::Model;
use fem::nalgebra::DMatrix;
use fem::time::{
    AlphaScheme, Energy, EvalError, Mass, Matrix, NodalStepper, SecondOrderSystem, StepError,
    StepReport, StepSettings, Stepper, TangentKind, TimeGrid,
};

/// Beads, springs and the follower force. Dof `i` is bead `i`'s transverse displacement.
struct FollowerChain {
    n_beads: usize,
    mass: Mass,
    spacing: f64,
    stiffness: f64,
    hardening: f64,
    follower: f64,
}

impl FollowerChain {
    /// The follower's transverse force on the last bead.
    fn follower_force(&self, u: &[f64]) -> f64 {
        let n = self.n_beads - 1;
        -self.follower * (u[n] - u[n - 1]) / self.spacing
    }
}

impl SecondOrderSystem for FollowerChain {
    fn n_dofs(&self) -> usize {
        self.n_beads
    }
    fn mass(&self) -> &Mass {
        &self.mass
    }
    fn internal_force(&self, u: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        f.fill(0.0);
        for i in 1..self.n_beads {
            let s = u[i] - u[i - 1];
            let spring = self.stiffness * s + self.hardening * s.powi(3);
            f[i] += spring;
            f[i - 1] -= spring;
        }
        // The follower force is applied, so it enters f_int with a minus sign.
        f[self.n_beads - 1] -= self.follower_force(u);
        Ok(())
    }
    /// The follower force makes the tangent unsymmetric: it is factored by LU.
    fn tangent_kind(&self) -> TangentKind {
        TangentKind::Unsymmetric
    }
    fn tangent(&self, u: &[f64]) -> Result<Matrix, EvalError> {
        let n = self.n_beads;
        let mut k = DMatrix::zeros(n, n);
        for i in 1..n {
            let s = u[i] - u[i - 1];
            let kt = self.stiffness + 3.0 * self.hardening * s * s;
            k[(i, i)] += kt;
            k[(i - 1, i - 1)] += kt;
            k[(i, i - 1)] -= kt;
            k[(i - 1, i)] -= kt;
        }
        // ∂(−F_follower)/∂u: a last row that its transposed column does not mirror.
        let p = self.follower / self.spacing;
        k[(n - 1, n - 1)] += p;
        k[(n - 1, n - 2)] -= p;
        Ok(Matrix::Dense(k))
    }
}

/// The chain with its stepper, and what it writes.
struct ChainModel {
    stepper: AlphaScheme<FollowerChain>,
    grid: TimeGrid,
    /// The follower force at the last step and its accumulated work.
    last_follower: f64,
    follower_work: f64,
    previous_tip: f64,
    points: Vec<[f64; 3]>,
    cells: VtkCells,
    displacement: Vec<f64>,
    velocity: Vec<f64>,
}

impl ChainModel {
    /// The springs' potential `Σ ½ k s² + ¼ κ s⁴`.
    fn spring_energy(&self) -> f64 {
        let c = self.stepper.system();
        let u = self.stepper.position();
        (1..c.n_beads)
            .map(|i| {
                let s = u[i] - u[i - 1];
                0.5 * c.stiffness * s * s + 0.25 * c.hardening * s.powi(4)
            })
            .sum()
    }
}

impl Model for ChainModel {
    fn describe(&self) -> Vec<String> {
        vec![format!(
            "  model: {} beads on hardening springs, follower force at the tip",
            self.stepper.system().n_beads
        )]
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
        // The follower's work over the step, trapezoidal: ½ (F^n + F^{n+1}) Δu_tip.
        let u = self.stepper.position();
        let tip = u[u.len() - 1];
        let force = self.stepper.system().follower_force(u);
        self.follower_work += 0.5 * (self.last_follower + force) * (tip - self.previous_tip);
        self.last_follower = force;
        self.previous_tip = tip;
        Ok(())
    }
    fn energy(&self) -> Option<Energy> {
        let v = self.stepper.velocity_at_step();
        let kinetic = 0.5 * self.stepper.system().mass().norm_squared(&v);
        let mut e = Energy::new(kinetic, self.spring_energy());
        e.external_work = self.follower_work;
        Some(e)
    }
    fn history_columns(&self) -> Vec<String> {
        vec![
            "external_work".into(),
            "tip".into(),
            "newton_iterations".into(),
        ]
    }
    fn history_values(&self, report: &StepReport, out: &mut Vec<f64>) {
        let u = self.stepper.position();
        out.extend([self.follower_work, u[u.len() - 1], report.iterations as f64]);
    }
    fn frame(&mut self) -> Frame<'_> {
        let u = self.stepper.position().to_vec();
        let v = self.stepper.velocity_at_step().into_owned();
        for i in 0..u.len() {
            self.displacement[3 * i + 1] = u[i];
            self.velocity[3 * i + 1] = v[i];
        }
        Frame::new(&self.points, &self.cells)
            .with_point_field(Field::vector("displacement", &self.displacement))
            .with_point_field(Field::vector("velocity", &self.velocity))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("out/follower_chain"), PathBuf::from);
    let n_beads = 21;
    let spacing = 0.05;
    let chain = FollowerChain {
        n_beads,
        mass: Mass::Lumped(vec![0.1; n_beads]),
        spacing,
        stiffness: 400.0,
        hardening: 4.0e6,
        follower: 2.0,
    };

    // The base (dof 0) follows g(t) = 0.01 sin(2π t), by direct control.
    let shake = Prescribed::new(TimeFunction::expression("0.01*sin(2*pi*t)")?);
    let base = DirichletConditions::new(&[DirichletSet {
        dofs: vec![fem::constraints::SystemDof::new(0)],
        signal: std::sync::Arc::new(shake),
        enforcement: Enforcement::Direct,
    }])
    .map_err(|e| format!("{e:?}"))?;

    // The energy-conserving member of the alpha scheme; Newton with LU on the unsymmetric
    // tangent, once per iteration.
    let grid = TimeGrid::new(0.0, 4.0, 2e-3)?;
    let settings = StepSettings::new(grid.dt()).with_dirichlet(base);
    let zero = vec![0.0; n_beads];
    let stepper = AlphaScheme::energy_conserving(chain, settings, &zero, &zero)?;

    let mut cells = VtkCells::new();
    cells.push_polyline(&(0..n_beads).collect::<Vec<_>>());
    let mut model = ChainModel {
        stepper,
        grid,
        last_follower: 0.0,
        follower_work: 0.0,
        previous_tip: 0.0,
        points: (0..n_beads)
            .map(|i| [i as f64 * spacing, 0.0, 0.0])
            .collect(),
        cells,
        displacement: vec![0.0; 3 * n_beads],
        velocity: vec![0.0; 3 * n_beads],
    };

    let mut options = RunOptions::new(&out_dir, "follower_chain");
    options.every = 20;
    options.progress = Progress::Quiet;
    let summary = drive(&mut model, &options)?;
    println!(
        "{} steps, {} frames in {}; history in {}",
        summary.steps,
        summary.frames,
        summary.pvd.display(),
        summary.history.display()
    );
    let tip = model.stepper.position()[n_beads - 1];
    println!("tip displacement at t = 4: {tip:.6e}");
    Ok(())
}
