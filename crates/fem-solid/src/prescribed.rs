//! Prescribed dofs in the leap-frog steppers: which levels of the scheme each of direct, rate
//! and full control fixes.
//!
//! The leap-frog has positions at `t`, `t + h/2`, `t + h` and velocities at `t`, `t + h`
//! (equations `q(t+h/2)`, `u(t+h)`, `q(t+h)` of the seed). A prescribed dof `g(t)`:
//! - **direct** holds the positions, `q = g` at every level, and takes the velocity the drift
//!   (`q(t+h)`) implies, `u^{t+h} = 2 (g(t+h) − g(t+h/2)) / h`;
//! - **rate** holds the velocity, `u^{t+h} = ġ(t+h)`, and lets the positions drift with it;
//! - **full** holds both, `q = g` and `u = ġ`.

use fem_constraints::{DirichletConditions, Enforcement};
use fem_time::StepError;

/// The prescribed dofs of a leap-frog stepper and their flags.
#[derive(Clone, Debug)]
pub(crate) struct LeapFrogControl {
    conditions: DirichletConditions,
    /// `true` for a prescribed dof, per system dof.
    prescribed: Vec<bool>,
}

impl LeapFrogControl {
    /// The control of `conditions` on a system of `n` dofs.
    pub fn new(n: usize, conditions: DirichletConditions) -> Result<Self, StepError> {
        if conditions.dof_bound() > n {
            return Err(StepError::DirichletOutOfRange {
                dof: conditions.dof_bound() - 1,
                n_dofs: n,
            });
        }
        let mut prescribed = vec![false; n];
        for &d in conditions.dofs() {
            prescribed[d] = true;
        }
        Ok(Self {
            conditions,
            prescribed,
        })
    }

    /// Whether any dof is prescribed.
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// Per-dof flags.
    pub fn flags(&self) -> &[bool] {
        &self.prescribed
    }

    /// The prescribed dofs.
    pub fn dofs(&self) -> &[usize] {
        self.conditions.dofs()
    }

    /// The initial state: `q = g(t0)`, `u = ġ(t0)` on every prescribed dof.
    pub fn initial(&self, t0: f64, q: &mut [f64], u: &mut [f64]) {
        for (d, s, _) in self.conditions.iter() {
            q[d] = s.value(t0);
            u[d] = s.rate(t0);
        }
    }

    /// Positions at a level `t` of the scheme: `q = g(t)` under direct and full control.
    pub fn hold_positions(&self, t: f64, q: &mut [f64]) {
        for (d, s, e) in self.conditions.iter() {
            if e != Enforcement::Rate {
                q[d] = s.value(t);
            }
        }
    }

    /// The end velocity `u^{t+h}` of each prescribed dof, from the half-step position `q_half`
    /// (at `t + h/2`) and the end time `t1 = t + h`.
    pub fn end_velocity(&self, t1: f64, h: f64, q_half: &[f64], u: &mut [f64]) {
        for (d, s, e) in self.conditions.iter() {
            u[d] = match e {
                Enforcement::Direct => 2.0 * (s.value(t1) - q_half[d]) / h,
                Enforcement::Rate | Enforcement::Full => s.rate(t1),
            };
        }
    }
}
