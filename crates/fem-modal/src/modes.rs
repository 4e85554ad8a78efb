//! The sine modes of an ideal or stiff string, with the maps between modal and physical
//! coordinates.
//!
//! # Ideal and stiff string
//! A string of length `L`, tension `T`, linear density `μ`, pinned at both ends, with
//! inharmonicity `B` (`B = π² E I / (T L²)`; `B = 0` for the ideal string) has modes
//!
//! ```text
//! ν_j = j c / (2L) sqrt(1 + B j²),   ω_j = 2π ν_j,   c = sqrt(T/μ),   j = 1, 2, …
//! φ_j(x) = sqrt(2 / (μ L)) sin(jπx/L),
//! ```
//!
//! normalised to unit modal mass, `∫₀ᴸ μ φ_j² dx = 1`, so `u(x, t) = Σ_j φ_j(x) q_j(t)`,
//! `q_j = ∫ μ φ_j u dx`, the modal masses are 1, `K = diag(ω_j²)` and the kinetic energy is
//! `½ Σ q̇_j²`. The contact operator of a point `x_c` is the row `S_c = (φ_j(x_c))_j`, so
//! `y = S_c q − h` is the displacement at `x_c` above an obstacle at height `h`.

use fem_time::StepError;
use fem_time::nonsmooth::{ModalDamping, ModalSystem};

/// The first `n` sine modes of an ideal (`B = 0`) or stiff string.
#[derive(Clone, Debug, PartialEq)]
pub struct StringModes {
    /// Length `L` (m).
    pub length: f64,
    /// Tension `T` (N).
    pub tension: f64,
    /// Linear density `μ` (kg/m).
    pub density: f64,
    /// Inharmonicity `B` (dimensionless).
    pub inharmonicity: f64,
    /// `ω_j`, `j = 1..=n` (rad/s).
    pub omega: Vec<f64>,
}

impl StringModes {
    /// The first `n_modes` modes.
    pub fn new(
        length: f64,
        tension: f64,
        density: f64,
        inharmonicity: f64,
        n_modes: usize,
    ) -> Result<Self, StepError> {
        for (name, value) in [
            ("length", length),
            ("tension", tension),
            ("density", density),
        ] {
            if !(value > 0.0 && value.is_finite()) {
                return Err(StepError::InvalidParameter {
                    name,
                    value,
                    expected: "a positive finite number",
                });
            }
        }
        if !(inharmonicity >= 0.0 && inharmonicity.is_finite()) {
            return Err(StepError::InvalidParameter {
                name: "inharmonicity",
                value: inharmonicity,
                expected: "B >= 0",
            });
        }
        let c = (tension / density).sqrt();
        let omega = (1..=n_modes)
            .map(|j| {
                let j = j as f64;
                2.0 * std::f64::consts::PI * j * c / (2.0 * length)
                    * (1.0 + inharmonicity * j * j).sqrt()
            })
            .collect();
        Ok(Self {
            length,
            tension,
            density,
            inharmonicity,
            omega,
        })
    }

    /// Number of modes.
    pub fn n_modes(&self) -> usize {
        self.omega.len()
    }

    /// Wave speed `c = sqrt(T/μ)`.
    pub fn wave_speed(&self) -> f64 {
        (self.tension / self.density).sqrt()
    }

    /// `φ_j(x)` for mode index `k = j − 1`.
    pub fn shape(&self, k: usize, x: f64) -> f64 {
        let norm = (2.0 / (self.density * self.length)).sqrt();
        norm * ((k + 1) as f64 * std::f64::consts::PI * x / self.length).sin()
    }

    /// The contact rows `(φ_j(x_c))_j` of the points `x_c`, row-major `n_points × n_modes`
    /// (for [`fem_constraints::UnilateralContacts::from_dense`]).
    pub fn point_rows(&self, points: &[f64]) -> Vec<f64> {
        points
            .iter()
            .flat_map(|&x| (0..self.n_modes()).map(move |k| self.shape(k, x)))
            .collect()
    }

    /// The displacement `u(x) = Σ φ_j(x) q_j`.
    pub fn displacement(&self, q: &[f64], x: f64) -> f64 {
        q.iter()
            .enumerate()
            .map(|(k, q)| self.shape(k, x) * q)
            .sum()
    }

    /// Modal coordinates of a triangular pluck of height `amplitude` at `x0 ∈ (0, L)`:
    /// `q_j = ∫ μ φ_j u₀ = sqrt(μL/2) · 2 a L² sin(jπx₀/L) / (j²π² x₀ (L − x₀))`.
    pub fn triangular_pluck(&self, x0: f64, amplitude: f64) -> Vec<f64> {
        let l = self.length;
        let scale = (self.density * l / 2.0).sqrt();
        (1..=self.n_modes())
            .map(|j| {
                let jp = j as f64 * std::f64::consts::PI;
                scale * 2.0 * amplitude * l * l * (jp * x0 / l).sin() / (jp * jp * x0 * (l - x0))
            })
            .collect()
    }

    /// The modal system (unit masses) with the given losses.
    pub fn modal_system(&self, damping: &ModalDamping) -> Result<ModalSystem, StepError> {
        Ok(ModalSystem {
            mass: vec![1.0; self.n_modes()],
            sigma: damping.rates(&self.omega)?,
            omega: self.omega.clone(),
        })
    }
}
