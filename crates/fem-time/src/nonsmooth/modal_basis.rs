//! Modes of an assembled system (`K φ = ω² M φ`), with the maps between modal and physical
//! coordinates, and the modal damping rates a modal system is built with.

use fem_assembly::sparse;
use nalgebra::{DMatrix, SymmetricEigen};
use nalgebra_sparse::CsrMatrix;

use super::ModalSystem;
use crate::{Mass, StepError};

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
    pub fn rates(&self, omega: &[f64]) -> Result<Vec<f64>, StepError> {
        let sigma = match self {
            ModalDamping::None => vec![0.0; omega.len()],
            ModalDamping::Constant(s) => vec![*s; omega.len()],
            ModalDamping::Rayleigh { mass, stiffness } => omega
                .iter()
                .map(|w| 0.5 * (mass + stiffness * w * w))
                .collect(),
            ModalDamping::Table(t) => {
                if t.len() != omega.len() {
                    return Err(StepError::BadData {
                        what: "damping table",
                        found: t.len(),
                        expected: omega.len(),
                    });
                }
                t.clone()
            }
        };
        if let Some(&bad) = sigma.iter().find(|s| !(**s >= 0.0 && s.is_finite())) {
            return Err(StepError::InvalidParameter {
                name: "sigma",
                value: bad,
                expected: "finite damping rates >= 0",
            });
        }
        Ok(sigma)
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
    ) -> Result<Self, StepError> {
        let n = stiffness.nrows();
        if mass.n() != n || n_modes > n {
            return Err(StepError::BadData {
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
                    return Err(StepError::InvalidParameter {
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
                let chol = md.cholesky().ok_or(StepError::InvalidParameter {
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

    /// The `n_modes` lowest modes of `(K, M)` by the sparse shift-invert eigen-solver
    /// ([`fem_assembly::modes::lowest_modes`], docs/theory/modes.md): for assembled models of
    /// any size (one sparse factorization; `dof_points`, a point per dof, orders it by nested
    /// dissection). Rigid modes (`ω²` at round-off, of either sign) get `ω = 0`; each shape's
    /// largest entry is positive, as [`ModalBasis::from_system`] makes it.
    pub fn lowest(
        mass: &Mass,
        stiffness: &CsrMatrix<f64>,
        n_modes: usize,
        dof_points: Option<Vec<[f64; 3]>>,
    ) -> Result<Self, StepError> {
        use fem_assembly::modes::{MassMatrix, ModeSettings, lowest_modes};
        let mass = match mass {
            Mass::Lumped(d) => MassMatrix::Lumped(d),
            Mass::Consistent(m) => MassMatrix::Consistent(m),
        };
        let mut settings = ModeSettings::lowest(n_modes);
        settings.dof_points = dof_points;
        let modes =
            lowest_modes(stiffness, mass, &settings).map_err(|e| StepError::model(0, 0.0, e))?;
        Ok(Self::from_modes(&modes))
    }

    /// The basis of modes the sparse eigen-solver returned
    /// ([`fem_assembly::modes::lowest_modes`]): rigid modes (`ω²` at round-off, of either
    /// sign) get `ω = 0`; each shape's largest entry is made positive, as
    /// [`ModalBasis::from_system`] makes it.
    pub fn from_modes(modes: &fem_assembly::modes::Modes) -> Self {
        let n = modes.order();
        let n_modes = modes.len();
        let mut shapes = DMatrix::from_fn(n, n_modes, |r, c| modes.shape(c)[r]);
        for mut col in shapes.column_iter_mut() {
            let imax = col.iamax();
            if col[imax] < 0.0 {
                col.neg_mut();
            }
        }
        Self {
            omega: modes
                .eigenvalues()
                .iter()
                .map(|l| l.max(0.0).sqrt())
                .collect(),
            shapes,
        }
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
    pub fn modal_system(&self, damping: &ModalDamping) -> Result<ModalSystem, StepError> {
        Ok(ModalSystem {
            mass: vec![1.0; self.n_modes()],
            sigma: damping.rates(&self.omega)?,
            omega: self.omega.clone(),
        })
    }
}
