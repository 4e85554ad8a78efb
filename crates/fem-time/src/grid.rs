//! Time bookkeeping in one small type: start, step, step count and the end snapped onto.
//!
//! A three-level scheme needs a constant step, so the grid does not shorten the last step:
//! it takes `n = ceil((t_end − t0) / dt)` steps (a relative slack of 1e-9 absorbs round-off in
//! the quotient) and, if `n dt` overshoots `t_end`, shrinks `dt` to `(t_end − t0) / n`. Times
//! are computed as `t0 + n dt` from the index, never accumulated, so `time(n_steps())` is
//! `t_end` to round-off.

/// Why a time grid was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GridError {
    /// `dt` not a positive finite number.
    #[error("time step dt = {0} must be a positive finite number")]
    BadStep(f64),
    /// `t_end` not after `t0`, or not finite.
    #[error("end time t_end = {t_end} must be finite and greater than the start time t0 = {t0}")]
    BadInterval {
        /// Start time.
        t0: f64,
        /// End time.
        t_end: f64,
    },
    /// More steps than a run can take.
    #[error("(t_end - t0) / dt = {0:e} steps is more than the 1e12 a run allows")]
    TooManySteps(f64),
}

/// A uniform time grid `t_n = t0 + n dt`, `n = 0..=n_steps`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeGrid {
    t0: f64,
    dt: f64,
    n_steps: u64,
    requested_dt: f64,
}

impl TimeGrid {
    /// The grid from `t0` to `t_end` with a step of at most `dt`.
    pub fn new(t0: f64, t_end: f64, dt: f64) -> Result<Self, GridError> {
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(GridError::BadStep(dt));
        }
        if !(t0.is_finite() && t_end.is_finite() && t_end > t0) {
            return Err(GridError::BadInterval { t0, t_end });
        }
        let quotient = (t_end - t0) / dt;
        if quotient > 1e12 {
            return Err(GridError::TooManySteps(quotient));
        }
        let n_steps = ((quotient * (1.0 - 1e-9)).ceil() as u64).max(1);
        Ok(Self {
            t0,
            dt: (t_end - t0) / n_steps as f64,
            n_steps,
            requested_dt: dt,
        })
    }

    /// Start time.
    pub fn t0(&self) -> f64 {
        self.t0
    }

    /// The step actually used (≤ the requested one).
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// The step that was asked for.
    pub fn requested_dt(&self) -> f64 {
        self.requested_dt
    }

    /// Whether the step had to shrink to land on `t_end` (by more than round-off).
    pub fn dt_adjusted(&self) -> bool {
        (self.dt - self.requested_dt).abs() > 1e-12 * self.requested_dt
    }

    /// Number of steps.
    pub fn n_steps(&self) -> u64 {
        self.n_steps
    }

    /// End time.
    pub fn t_end(&self) -> f64 {
        self.time(self.n_steps)
    }

    /// Time of step `n`.
    pub fn time(&self, n: u64) -> f64 {
        if n == self.n_steps {
            // Exactly the end the user asked for.
            self.t0 + self.dt * self.n_steps as f64
        } else {
            self.t0 + self.dt * n as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snaps_onto_the_end() {
        let g = TimeGrid::new(0.0, 1.0, 0.1).unwrap();
        assert_eq!(g.n_steps(), 10);
        assert!(!g.dt_adjusted());
        assert!((g.t_end() - 1.0).abs() < 1e-15);
        let g = TimeGrid::new(0.0, 1.0, 0.3).unwrap();
        assert_eq!(g.n_steps(), 4);
        assert!(g.dt_adjusted());
        assert!((g.dt() - 0.25).abs() < 1e-15);
    }

    #[test]
    fn refuses_bad_steps() {
        assert_eq!(TimeGrid::new(0.0, 1.0, -1.0), Err(GridError::BadStep(-1.0)));
        assert!(matches!(
            TimeGrid::new(0.0, 1.0, f64::NAN),
            Err(GridError::BadStep(_))
        ));
        assert!(matches!(
            TimeGrid::new(1.0, 1.0, 0.1),
            Err(GridError::BadInterval { .. })
        ));
        assert!(matches!(
            TimeGrid::new(0.0, 1.0, 1e-300),
            Err(GridError::TooManySteps(_))
        ));
    }
}
