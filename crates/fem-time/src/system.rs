//! The linear second-order system `M ẍ + C ẋ + A x = f(t)` (Glowinski–Holmström (12)).
//!
//! `M` is symmetric positive definite (a lumped diagonal or a sparse matrix), `A` symmetric
//! positive semi-definite, `C` positive semi-definite and optional. All three are constant in
//! time, which is what lets a stepper factor its matrix once per run.

use nalgebra_sparse::CsrMatrix;

/// A mass matrix: lumped (diagonal) or consistent (sparse, symmetric).
#[derive(Clone, Debug)]
pub enum Mass {
    /// Diagonal entries of a lumped mass, all positive.
    Lumped(Vec<f64>),
    /// A consistent mass matrix.
    Consistent(CsrMatrix<f64>),
}

impl Mass {
    /// Number of rows.
    pub fn n(&self) -> usize {
        match self {
            Mass::Lumped(d) => d.len(),
            Mass::Consistent(m) => m.nrows(),
        }
    }

    /// `y = M x`.
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        match self {
            Mass::Lumped(d) => {
                for ((yi, di), xi) in y.iter_mut().zip(d).zip(x) {
                    *yi = di * xi;
                }
            }
            Mass::Consistent(m) => fem_assembly::sparse::mul_add(0.0, y, 1.0, m, x),
        }
    }

    /// `xᵀ M x`.
    pub fn norm_squared(&self, x: &[f64]) -> f64 {
        match self {
            Mass::Lumped(d) => d.iter().zip(x).map(|(di, xi)| di * xi * xi).sum(),
            Mass::Consistent(m) => fem_assembly::sparse::bilinear(m, x, x),
        }
    }
}

/// A linear second-order system `M ẍ + C ẋ + A x = f(t)` on `n_dofs()` unknowns.
pub trait LinearSecondOrderSystem {
    /// Number of unknowns.
    fn n_dofs(&self) -> usize;
    /// The mass `M`.
    fn mass(&self) -> &Mass;
    /// The stiffness `A`.
    fn stiffness(&self) -> &CsrMatrix<f64>;
    /// The damping `C`, if any.
    fn damping(&self) -> Option<&CsrMatrix<f64>> {
        None
    }
    /// Writes the external force `f(t)` into `f` (overwriting it).
    fn external_force(&self, t: f64, f: &mut [f64]) {
        let _ = t;
        f.fill(0.0);
    }
    /// Whether `f(t)` may be non-zero; `false` lets a stepper skip evaluating it.
    fn has_external_force(&self) -> bool {
        true
    }
}

/// The external force of a [`LinearSystem`]: `f(t, out)` overwrites `out`.
pub type ForceFn = Box<dyn Fn(f64, &mut [f64]) + Send + Sync>;

/// A ready-made [`LinearSecondOrderSystem`] from its matrices and an optional force.
pub struct LinearSystem {
    /// Mass `M`.
    pub mass: Mass,
    /// Stiffness `A`.
    pub stiffness: CsrMatrix<f64>,
    /// Damping `C`.
    pub damping: Option<CsrMatrix<f64>>,
    /// External force `f(t)`; zero when `None`.
    pub force: Option<ForceFn>,
}

impl std::fmt::Debug for LinearSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinearSystem")
            .field("n_dofs", &self.stiffness.nrows())
            .field("lumped", &matches!(self.mass, Mass::Lumped(_)))
            .field("damped", &self.damping.is_some())
            .field("forced", &self.force.is_some())
            .finish()
    }
}

impl LinearSecondOrderSystem for LinearSystem {
    fn n_dofs(&self) -> usize {
        self.stiffness.nrows()
    }
    fn mass(&self) -> &Mass {
        &self.mass
    }
    fn stiffness(&self) -> &CsrMatrix<f64> {
        &self.stiffness
    }
    fn damping(&self) -> Option<&CsrMatrix<f64>> {
        self.damping.as_ref()
    }
    fn external_force(&self, t: f64, f: &mut [f64]) {
        match &self.force {
            Some(force) => force(t, f),
            None => f.fill(0.0),
        }
    }
    fn has_external_force(&self) -> bool {
        self.force.is_some()
    }
}

/// A second-order system `M ẍ + C ẋ + f_int(x) = f(t)`, possibly nonlinear in `x`.
///
/// Every [`LinearSecondOrderSystem`] is one, with `f_int(x) = A x` and a constant tangent.
pub trait SecondOrderSystem {
    /// Number of unknowns.
    fn n_dofs(&self) -> usize;
    /// The mass `M` (constant).
    fn mass(&self) -> &Mass;
    /// The damping `C` (constant), if any.
    fn damping(&self) -> Option<&CsrMatrix<f64>> {
        None
    }
    /// Writes the internal force `f_int(x)` into `f`.
    fn internal_force(&self, x: &[f64], f: &mut [f64]);
    /// The tangent stiffness `∂f_int/∂x` at `x`; its sparsity pattern must not depend on `x`.
    fn tangent_stiffness(&self, x: &[f64]) -> CsrMatrix<f64>;
    /// Whether `f_int` is linear, so that a stepper may factor its matrix once per run.
    fn is_linear(&self) -> bool {
        false
    }
    /// The potential energy `V(x)` with `∇V = f_int`.
    fn potential_energy(&self, x: &[f64]) -> f64;
    /// Writes the external force `f(t)` into `f` (overwriting it).
    fn external_force(&self, t: f64, f: &mut [f64]) {
        let _ = t;
        f.fill(0.0);
    }
}

impl<T: LinearSecondOrderSystem> SecondOrderSystem for T {
    fn n_dofs(&self) -> usize {
        LinearSecondOrderSystem::n_dofs(self)
    }
    fn mass(&self) -> &Mass {
        LinearSecondOrderSystem::mass(self)
    }
    fn damping(&self) -> Option<&CsrMatrix<f64>> {
        LinearSecondOrderSystem::damping(self)
    }
    fn internal_force(&self, x: &[f64], f: &mut [f64]) {
        fem_assembly::sparse::mul_add(0.0, f, 1.0, self.stiffness(), x);
    }
    fn tangent_stiffness(&self, _x: &[f64]) -> CsrMatrix<f64> {
        self.stiffness().clone()
    }
    fn is_linear(&self) -> bool {
        true
    }
    fn potential_energy(&self, x: &[f64]) -> f64 {
        0.5 * fem_assembly::sparse::bilinear(self.stiffness(), x, x)
    }
    fn external_force(&self, t: f64, f: &mut [f64]) {
        LinearSecondOrderSystem::external_force(self, t, f)
    }
}
