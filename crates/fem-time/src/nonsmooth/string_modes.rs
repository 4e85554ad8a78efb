//! Modal bases: the sine modes of an ideal or stiff string, and the modes of an assembled
//! system (`K φ = ω² M φ`), with the maps between modal and physical coordinates.
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

use fem_assembly::sparse;
use nalgebra::{DMatrix, SymmetricEigen};
use nalgebra_sparse::CsrMatrix;

use super::{ModalSystem, NonsmoothError};
use crate::Mass;

/// How the modal damping rates `σ_j` (1/s, `q ∝ e^{−σ t}`) are given.
#[derive(Clone, Debug, PartialEq)]
pub enum ModalDamping {
    /// No losses.
    None,
    /// The same `σ` for every mode.
    Constant(f64),
    /// Rayleigh damping `C = a M + b K`: `σ_j = (a + b ω_j²)/2`.
    Rayleigh {
        /// Mass-proportional coefficient `a` (1/s).
        mass: f64,
        /// Stiffness-proportional coefficient `b` (s).
        stiffness: f64,
    },
    /// One `σ_j` per mode (measured losses, e.g.).
    Table(Vec<f64>),
}

impl ModalDamping {
    /// The rates `σ_j` for the angular frequencies `omega`.
    pub fn rates(&self, omega: &[f64]) -> Result<Vec<f64>, NonsmoothError> {
        let sigma = match self {
            ModalDamping::None => vec![0.0; omega.len()],
            ModalDamping::Constant(s) => vec![*s; omega.len()],
            ModalDamping::Rayleigh { mass, stiffness } => omega
                .iter()
                .map(|w| 0.5 * (mass + stiffness * w * w))
                .collect(),
            ModalDamping::Table(t) => {
                if t.len() != omega.len() {
                    return Err(NonsmoothError::BadData {
                        what: "damping table",
                        found: t.len(),
                        expected: omega.len(),
                    });
                }
                t.clone()
            }
        };
        if let Some(&bad) = sigma.iter().find(|s| !(**s >= 0.0 && s.is_finite())) {
            return Err(NonsmoothError::InvalidParameter {
                name: "sigma",
                value: bad,
                expected: "finite damping rates >= 0",
            });
        }
        Ok(sigma)
    }
}

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
    ) -> Result<Self, NonsmoothError> {
        for (name, value) in [
            ("length", length),
            ("tension", tension),
            ("density", density),
        ] {
            if !(value > 0.0 && value.is_finite()) {
                return Err(NonsmoothError::InvalidParameter {
                    name,
                    value,
                    expected: "a positive finite number",
                });
            }
        }
        if !(inharmonicity >= 0.0 && inharmonicity.is_finite()) {
            return Err(NonsmoothError::InvalidParameter {
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
    pub fn modal_system(&self, damping: &ModalDamping) -> Result<ModalSystem, NonsmoothError> {
        Ok(ModalSystem {
            mass: vec![1.0; self.n_modes()],
            sigma: damping.rates(&self.omega)?,
            omega: self.omega.clone(),
        })
    }
}

/// `M`-orthonormal modes of an assembled system: `K φ = ω² M φ`, `Φᵀ M Φ = I`.
#[derive(Clone, Debug, PartialEq)]
pub struct ModalBasis {
    /// `ω_k`, ascending (rad/s).
    pub omega: Vec<f64>,
    /// `Φ`, `n_dofs × n_modes`, columns `M`-orthonormal.
    pub shapes: DMatrix<f64>,
}

impl ModalBasis {
    /// The `n_modes` lowest modes of `(K, M)`, by a dense symmetric eigen-solve of
    /// `M^{-1/2} K M^{-1/2}` (lumped) or `L⁻¹ K L⁻ᵀ`, `M = L Lᵀ` (consistent). `O(n³)`: meant for
    /// up to a few thousand dofs.
    pub fn from_system(
        mass: &Mass,
        stiffness: &CsrMatrix<f64>,
        n_modes: usize,
    ) -> Result<Self, NonsmoothError> {
        let n = stiffness.nrows();
        if mass.n() != n || n_modes > n {
            return Err(NonsmoothError::BadData {
                what: "mass (or number of modes)",
                found: mass.n().max(n_modes),
                expected: n,
            });
        }
        let k = DMatrix::from_fn(n, n, |i, j| {
            stiffness.get_entry(i, j).map_or(0.0, |e| e.into_value())
        });
        let (a, back): (DMatrix<f64>, DMatrix<f64>) = match mass {
            Mass::Lumped(d) => {
                if let Some(&bad) = d.iter().find(|&&m| m.is_nan() || m <= 0.0) {
                    return Err(NonsmoothError::InvalidParameter {
                        name: "lumped mass",
                        value: bad,
                        expected: "positive entries",
                    });
                }
                let s: Vec<f64> = d.iter().map(|m| 1.0 / m.sqrt()).collect();
                (
                    DMatrix::from_fn(n, n, |i, j| s[i] * k[(i, j)] * s[j]),
                    DMatrix::from_diagonal(&nalgebra::DVector::from_vec(s)),
                )
            }
            Mass::Consistent(m) => {
                let md = DMatrix::from_fn(n, n, |i, j| {
                    m.get_entry(i, j).map_or(0.0, |e| e.into_value())
                });
                let chol = md.cholesky().ok_or(NonsmoothError::InvalidParameter {
                    name: "consistent mass",
                    value: f64::NAN,
                    expected: "a symmetric positive definite matrix",
                })?;
                let l_inv = chol
                    .l()
                    .solve_lower_triangular(&DMatrix::identity(n, n))
                    .expect("Cholesky factor is invertible");
                let a = &l_inv * &k * l_inv.transpose();
                (a, l_inv.transpose())
            }
        };
        let a = 0.5 * (&a + a.transpose());
        let eig = SymmetricEigen::new(a);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| eig.eigenvalues[i].total_cmp(&eig.eigenvalues[j]));
        order.truncate(n_modes);
        let omega = order
            .iter()
            .map(|&i| eig.eigenvalues[i].max(0.0).sqrt())
            .collect();
        let y = DMatrix::from_fn(n, n_modes, |r, c| eig.eigenvectors[(r, order[c])]);
        let mut shapes = back * y;
        // A fixed sign: the largest entry of each shape is positive.
        for mut col in shapes.column_iter_mut() {
            let imax = col.iamax();
            if col[imax] < 0.0 {
                col.neg_mut();
            }
        }
        Ok(Self { omega, shapes })
    }

    /// Number of modes.
    pub fn n_modes(&self) -> usize {
        self.omega.len()
    }

    /// Physical displacement `u = Φ q`.
    pub fn to_physical(&self, q: &[f64]) -> Vec<f64> {
        (&self.shapes * nalgebra::DVector::from_column_slice(q))
            .as_slice()
            .to_vec()
    }

    /// Modal coordinates `q = Φᵀ M u` (the `M`-orthogonal projection of `u`).
    pub fn to_modal(&self, mass: &Mass, u: &[f64]) -> Vec<f64> {
        let mut mu = vec![0.0; u.len()];
        mass.mul(u, &mut mu);
        (self.shapes.transpose() * nalgebra::DVector::from_vec(mu))
            .as_slice()
            .to_vec()
    }

    /// The modal contact rows `H Φ` of a physical operator `H`, row-major `m × n_modes`.
    pub fn project_rows(&self, physical: &CsrMatrix<f64>) -> Vec<f64> {
        let m = physical.nrows();
        let nm = self.n_modes();
        let mut out = vec![0.0; m * nm];
        let mut col = vec![0.0; m];
        for c in 0..nm {
            let phi: Vec<f64> = self.shapes.column(c).iter().copied().collect();
            sparse::mul_add(0.0, &mut col, 1.0, physical, &phi);
            for r in 0..m {
                out[r * nm + c] = col[r];
            }
        }
        out
    }

    /// The modal system (unit masses) with the given losses.
    pub fn modal_system(&self, damping: &ModalDamping) -> Result<ModalSystem, NonsmoothError> {
        Ok(ModalSystem {
            mass: vec![1.0; self.n_modes()],
            sigma: damping.rates(&self.omega)?,
            omega: self.omega.clone(),
        })
    }
}
