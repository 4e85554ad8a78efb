//! The one interface a run driver needs from any stepper, so that steppers are chosen by name
//! at run time.

use crate::{
    AlphaScheme, BackwardEuler, Energy, LinearSecondOrderSystem, SecondOrderSystem, StepError,
};

/// What one step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepInfo {
    /// Iterations of the nonlinear solver (1 for one linear solve, 0 for an explicit step).
    pub iterations: usize,
    /// Final residual of the nonlinear solver (0 when there was none).
    pub residual: f64,
}

/// A time stepper as the run driver sees it.
pub trait Stepper {
    /// Advances one step.
    fn advance(&mut self) -> Result<StepInfo, StepError>;
    /// Current time.
    fn current_time(&self) -> f64;
    /// Steps taken.
    fn steps_taken(&self) -> u64;
    /// Current position.
    fn current_position(&self) -> &[f64];
    /// The scheme's velocity (see each scheme for where in time it sits).
    fn current_velocity(&self) -> Vec<f64>;
    /// Energies; balance terms a scheme does not track are NaN.
    fn current_energy(&self) -> Energy;
}

impl<S: LinearSecondOrderSystem> Stepper for AlphaScheme<S> {
    fn advance(&mut self) -> Result<StepInfo, StepError> {
        self.step()?;
        Ok(StepInfo {
            iterations: usize::from(!self.is_explicit()),
            residual: 0.0,
        })
    }
    fn current_time(&self) -> f64 {
        self.time()
    }
    fn steps_taken(&self) -> u64 {
        self.step_index()
    }
    fn current_position(&self) -> &[f64] {
        self.position()
    }
    fn current_velocity(&self) -> Vec<f64> {
        self.velocity()
    }
    fn current_energy(&self) -> Energy {
        self.energy()
    }
}

impl<S: SecondOrderSystem> Stepper for BackwardEuler<S> {
    fn advance(&mut self) -> Result<StepInfo, StepError> {
        let stats = self.step()?;
        Ok(StepInfo {
            iterations: stats.iterations,
            residual: stats.residual,
        })
    }
    fn current_time(&self) -> f64 {
        self.time()
    }
    fn steps_taken(&self) -> u64 {
        self.step_index()
    }
    fn current_position(&self) -> &[f64] {
        self.position()
    }
    fn current_velocity(&self) -> Vec<f64> {
        self.velocity().to_vec()
    }
    fn current_energy(&self) -> Energy {
        let (kinetic, potential) = self.energy();
        Energy {
            kinetic,
            potential,
            total: kinetic + potential,
            external_work: f64::NAN,
            dissipated: f64::NAN,
        }
    }
}
