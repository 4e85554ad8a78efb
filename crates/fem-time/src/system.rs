//! The second-order system every nodal stepper consumes, `M ẍ + C ẋ + f_int(x) = f(t)`.
//!
//! [`SecondOrderSystem`] is the one interface: the mass (lumped or sparse), an optional
//! damping, the internal force and its tangent (with a flag saying whether the tangent is
//! symmetric), an energy where the model has one, and the external force. A linear system is
//! its special case, `f_int(x) = K x` with constant matrices ([`SecondOrderSystem::is_linear`]),
//! which lets a stepper factor its matrix once per run; [`LinearSystem`] is a ready-made one.
//!
//! Matrices are given sparse (CSR, both triangles stored) or, for small systems, dense
//! ([`Matrix`]); a dense matrix keeps every entry in its pattern, so the pattern never changes
//! from one evaluation to the next.

use std::borrow::Cow;

use nalgebra::DMatrix;
use nalgebra_sparse::CsrMatrix;

use crate::evaluation::{EvalError, TangentKind};

/// A matrix as a system gives it: sparse, or small and dense.
#[derive(Clone, Debug, PartialEq)]
pub enum Matrix {
    /// Compressed sparse rows, both triangles stored.
    Sparse(CsrMatrix<f64>),
    /// A small dense matrix (every entry is part of the pattern).
    Dense(DMatrix<f64>),
}

impl From<CsrMatrix<f64>> for Matrix {
    fn from(m: CsrMatrix<f64>) -> Self {
        Matrix::Sparse(m)
    }
}

impl From<DMatrix<f64>> for Matrix {
    fn from(m: DMatrix<f64>) -> Self {
        Matrix::Dense(m)
    }
}

impl Matrix {
    /// Number of rows.
    pub fn nrows(&self) -> usize {
        match self {
            Matrix::Sparse(m) => m.nrows(),
            Matrix::Dense(m) => m.nrows(),
        }
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        match self {
            Matrix::Sparse(m) => m.ncols(),
            Matrix::Dense(m) => m.ncols(),
        }
    }

    /// The matrix in CSR form (borrowed when it is sparse; a dense matrix keeps all entries,
    /// zeros included, so its pattern is the same at every call).
    pub fn to_csr(&self) -> Cow<'_, CsrMatrix<f64>> {
        match self {
            Matrix::Sparse(m) => Cow::Borrowed(m),
            Matrix::Dense(d) => Cow::Owned(dense_to_csr(d)),
        }
    }

    /// `y = beta y + alpha A x`.
    pub fn mul_add(&self, beta: f64, y: &mut [f64], alpha: f64, x: &[f64]) {
        match self {
            Matrix::Sparse(m) => fem_assembly::sparse::mul_add(beta, y, alpha, m, x),
            Matrix::Dense(d) => {
                for (i, yi) in y.iter_mut().enumerate() {
                    let sum: f64 = (0..d.ncols()).map(|j| d[(i, j)] * x[j]).sum();
                    *yi = if beta == 0.0 {
                        alpha * sum
                    } else {
                        beta * *yi + alpha * sum
                    };
                }
            }
        }
    }
}

/// A dense matrix as CSR with every entry stored (a fixed pattern).
pub fn dense_to_csr(d: &DMatrix<f64>) -> CsrMatrix<f64> {
    let (n, m) = d.shape();
    let offsets: Vec<usize> = (0..=n).map(|i| i * m).collect();
    let cols: Vec<usize> = (0..n).flat_map(|_| 0..m).collect();
    let values: Vec<f64> = (0..n)
        .flat_map(|i| (0..m).map(move |j| (i, j)))
        .map(|ij| d[ij])
        .collect();
    CsrMatrix::try_from_csr_data(n, m, offsets, cols, values)
        .expect("a full pattern is a valid CSR pattern")
}

/// A mass matrix: lumped (diagonal) or consistent (sparse, symmetric).
#[derive(Clone, Debug)]
pub enum Mass {
    /// Diagonal entries of a lumped mass, all positive (zero entries — a mass redistributed
    /// off a contact surface — only for schemes whose step matrix adds a stiffness, DEF_LIM).
    Lumped(Vec<f64>),
    /// A consistent mass matrix.
    Consistent(CsrMatrix<f64>),
}

impl Mass {
    /// A consistent mass from a small dense matrix.
    pub fn dense(m: &DMatrix<f64>) -> Self {
        Mass::Consistent(dense_to_csr(m))
    }

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

/// A second-order system `M ẍ + C ẋ + f_int(x) = f(t)` on `n_dofs()` unknowns.
///
/// `M` is symmetric positive definite and constant, `C` constant. Stepper contract: a stepper
/// calls [`internal_force`](Self::internal_force) and [`tangent`](Self::tangent) at trial
/// states of its own choosing, any number of times per step; the tangent's sparsity pattern
/// must not depend on `x`. Evaluations are fallible: a state the system cannot evaluate (an
/// inverted cell, a force that is not finite) is an [`EvalError`], which the stepper reports
/// with the step it was computing. A system says what tangent it has
/// ([`tangent_kind`](Self::tangent_kind), no default): an explicit-only system says
/// [`TangentKind::NotProvided`] and need not write [`tangent`](Self::tangent). The potential
/// energy is optional: a system whose force is not the gradient of a potential returns `None`,
/// and steppers then report no energy.
pub trait SecondOrderSystem {
    /// Number of unknowns.
    fn n_dofs(&self) -> usize;
    /// The mass `M`.
    fn mass(&self) -> &Mass;
    /// The damping `C`, if any.
    fn damping(&self) -> Option<&Matrix> {
        None
    }
    /// Writes the internal force `f_int(x)` into `f` (overwriting it).
    fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError>;
    /// Whether the tangent is symmetric (Cholesky), unsymmetric (LU) or not provided (the
    /// system is for explicit schemes). Every system says which: there is no default.
    fn tangent_kind(&self) -> TangentKind;
    /// The tangent `K_T = ∂f_int/∂x` at `x`, pattern independent of `x`. The default gives
    /// none ([`EvalError::NoTangent`]), for a system of [`TangentKind::NotProvided`].
    fn tangent(&self, x: &[f64]) -> Result<Matrix, EvalError> {
        let _ = x;
        Err(EvalError::NoTangent)
    }
    /// Refills `out` (of the pattern [`tangent`](Self::tangent) gives) with `K_T(x)`; a
    /// system that can write its tangent in place overrides it (the default evaluates
    /// [`tangent`](Self::tangent) and copies).
    fn tangent_into(&self, x: &[f64], out: &mut CsrMatrix<f64>) -> Result<(), EvalError> {
        let k = self.tangent(x)?;
        let k = k.to_csr();
        if k.nnz() != out.nnz() {
            return Err(EvalError::PatternChanged);
        }
        out.values_mut().copy_from_slice(k.values());
        Ok(())
    }
    /// Whether `f_int(x) = K x` with a constant `K`, so that a stepper may factor once.
    fn is_linear(&self) -> bool {
        false
    }
    /// The potential `V(x)` with `∇V = f_int`, where the model has one.
    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        let _ = x;
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
    /// An exact discrete gradient of the internal force between `a` and `b`, for the
    /// energy-conserving scheme ([`crate::NonlinearAlphaScheme`]): writes `f̄(a, b)` with
    /// `(f̄(a, b), b − a) = V(b) − V(a)` and `f̄(a, a) = f_int(a)`, and returns `true`; returns
    /// `false` (the default) when the system has none, and the scheme then integrates
    /// `f_int` along the segment (the average vector field).
    ///
    /// If [`constant_stiffness`](Self::constant_stiffness) gives `K₀`, the discrete gradient
    /// here is of the remainder `f_int(x) − K₀ x` only.
    fn discrete_gradient(&self, a: &[f64], b: &[f64], out: &mut [f64]) -> bool {
        let _ = (a, b, out);
        false
    }
    /// `c_a ∂f̄/∂a + c_b ∂f̄/∂b` of the discrete gradient, when
    /// [`discrete_gradient`](Self::discrete_gradient) gives one.
    fn discrete_gradient_jacobian(
        &self,
        a: &[f64],
        b: &[f64],
        c_a: f64,
        c_b: f64,
    ) -> Option<Matrix> {
        let _ = (a, b, c_a, c_b);
        None
    }
    /// A constant part `K₀` of the stiffness, `f_int(x) = K₀ x + g(x)`, which the alpha
    /// schemes weight by their `α` (Glowinski–Holmström (24): `A` beside `∇V`); `None` when
    /// the system does not split its force so.
    fn constant_stiffness(&self) -> Option<&CsrMatrix<f64>> {
        None
    }
    /// Where each dof lives (one point per dof, `n_dofs()` of them): the implicit steppers
    /// then order their sparse Cholesky factorizations by nested dissection of these points
    /// ([`fem_assembly::ordering::nested_dissection`]), which on 3D meshes fills far less than
    /// the default minimum-degree ordering. `None` (the default) keeps the default.
    fn dof_points(&self) -> Option<Vec<[f64; 3]>> {
        None
    }
}

/// The external force of a [`LinearSystem`]: `f(t, out)` overwrites `out`.
pub type ForceFn = Box<dyn Fn(f64, &mut [f64]) + Send + Sync>;

/// A ready-made linear system `M ẍ + C ẋ + K x = f(t)` from its matrices and a force (`K`
/// symmetric unless [`LinearSystem::unsymmetric`]).
pub struct LinearSystem {
    /// Mass `M`.
    pub mass: Mass,
    /// Stiffness `K`.
    pub stiffness: CsrMatrix<f64>,
    /// Damping `C`.
    pub damping: Option<Matrix>,
    /// External force `f(t)`; zero when `None`.
    pub force: Option<ForceFn>,
    /// Whether `K` is symmetric ([`TangentKind::Symmetric`] unless
    /// [`unsymmetric`](Self::unsymmetric) says otherwise).
    pub stiffness_kind: TangentKind,
}

impl LinearSystem {
    /// `M ẍ + K x = 0`; `stiffness` sparse or dense.
    pub fn new(mass: Mass, stiffness: impl Into<Matrix>) -> Self {
        Self {
            mass,
            stiffness: stiffness.into().to_csr().into_owned(),
            damping: None,
            force: None,
            stiffness_kind: TangentKind::Symmetric,
        }
    }

    /// With a stiffness that is not symmetric (factored by LU).
    pub fn unsymmetric(mut self) -> Self {
        self.stiffness_kind = TangentKind::Unsymmetric;
        self
    }

    /// With the damping `C` (sparse or dense).
    pub fn with_damping(mut self, damping: impl Into<Matrix>) -> Self {
        self.damping = Some(damping.into());
        self
    }

    /// With the external force `f(t)`, written into its second argument.
    pub fn with_force(mut self, force: impl Fn(f64, &mut [f64]) + Send + Sync + 'static) -> Self {
        self.force = Some(Box::new(force));
        self
    }
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

impl SecondOrderSystem for LinearSystem {
    fn n_dofs(&self) -> usize {
        self.stiffness.nrows()
    }
    fn mass(&self) -> &Mass {
        &self.mass
    }
    fn damping(&self) -> Option<&Matrix> {
        self.damping.as_ref()
    }
    fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        fem_assembly::sparse::mul_add(0.0, f, 1.0, &self.stiffness, x);
        Ok(())
    }
    fn tangent_kind(&self) -> TangentKind {
        self.stiffness_kind
    }
    fn tangent(&self, _x: &[f64]) -> Result<Matrix, EvalError> {
        Ok(Matrix::Sparse(self.stiffness.clone()))
    }
    fn is_linear(&self) -> bool {
        true
    }
    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        Some(0.5 * fem_assembly::sparse::bilinear(&self.stiffness, x, x))
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
    fn constant_stiffness(&self) -> Option<&CsrMatrix<f64>> {
        Some(&self.stiffness)
    }
}

/// The damping of a system in CSR form, if any (evaluated once: `C` is constant).
pub(crate) fn damping_csr<S: SecondOrderSystem + ?Sized>(system: &S) -> Option<CsrMatrix<f64>> {
    system.damping().map(|c| c.to_csr().into_owned())
}
