//! A stepper's clock: the start `t0`, the step `dt` and the steps taken `n`, with
//! `t_n = t0 + n dt` computed from the index, never accumulated (STYLE.md, item 3).
//!
//! Every stepper holds one [`Clock`] and [`crate::Stepper::clock`] lends it, so the time, the
//! step and the step index are read the same way whatever the scheme. [`crate::TimeGrid`] is
//! the run's grid (where the clock is to stop); the clock is where a stepper is on it.

use crate::StepError;
use crate::evaluation::EvalError;

/// `t_n = t0 + n dt`: where a stepper is in time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    t0: f64,
    dt: f64,
    step: u64,
}

impl Clock {
    /// The clock at step 0 of a run from `t0` with step `dt`; refuses a step that is not
    /// positive and finite and a start that is not finite.
    pub fn new(t0: f64, dt: f64) -> Result<Self, StepError> {
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(StepError::InvalidParameter {
                name: "dt",
                value: dt,
                expected: "a positive finite time step",
            });
        }
        if !t0.is_finite() {
            return Err(StepError::InvalidParameter {
                name: "t0",
                value: t0,
                expected: "a finite start time",
            });
        }
        Ok(Self { t0, dt, step: 0 })
    }

    /// The clock of a run from `t0` with step `dt` at step `step` (unchecked: for a stepper
    /// whose `t0` and `dt` were checked when it was built).
    pub fn at(t0: f64, dt: f64, step: u64) -> Self {
        Self { t0, dt, step }
    }

    /// The start time.
    pub fn t0(&self) -> f64 {
        self.t0
    }

    /// The time step.
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Steps taken, `n`.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The current time `t_n = t0 + n dt`.
    pub fn time(&self) -> f64 {
        self.time_at(self.step)
    }

    /// The time of step `n`, `t0 + n dt`.
    pub fn time_at(&self, n: u64) -> f64 {
        self.t0 + self.dt * n as f64
    }

    /// One step taken: `n ← n + 1`.
    pub fn advance(&mut self) {
        self.step += 1;
    }

    /// Sets the step index (a restart).
    pub fn set_step(&mut self, step: u64) {
        self.step = step;
    }

    /// The error of an evaluation that failed while the step `n + 1` was being computed
    /// (from `t_n`).
    pub fn failed(&self, source: EvalError) -> StepError {
        StepError::Evaluation {
            step: self.step + 1,
            t: self.time(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_comes_from_the_index() {
        let mut c = Clock::new(0.5, 0.1).unwrap();
        for _ in 0..7 {
            c.advance();
        }
        assert_eq!(c.step(), 7);
        assert_eq!(c.time(), 0.5 + 0.1 * 7.0);
        c.set_step(3);
        assert_eq!(c.time(), c.time_at(3));
        assert!(Clock::new(0.0, 0.0).is_err());
        assert!(Clock::new(f64::NAN, 1.0).is_err());
    }
}
