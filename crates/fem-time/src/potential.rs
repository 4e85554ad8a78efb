//! Potentials with a discrete gradient, the nonlinear part `∇V` of Glowinski–Holmström (24),
//! and [`WithPotential`], which adds one to any system.
//!
//! A [`DiscreteGradientPotential`] gives `V`, `∇V`, a discrete gradient `∇̄V(a, b)` with
//! `(∇̄V(a, b), b − a) = V(b) − V(a)` and its derivatives: [`DiagonalPotential`] (25)–(30) and
//! [`LinearConstraintPotential`] (the time-discretized penalty (62)) are two. Added to a
//! linear system by [`WithPotential`], it makes the system `M ẍ + A x + ∇V(x) = f` whose
//! energy the nonlinear alpha scheme (31) conserves exactly.

use fem_assembly::sparse;
use fem_constraints::{ConstraintSolver, MultiplierUpdate};
use nalgebra_sparse::{CooMatrix, CsrMatrix};

use crate::{EvalError, TangentKind};
use crate::{Mass, Matrix, SecondOrderSystem};

/// A potential `V(x)` with a discrete gradient: the nonlinear part of (24).
pub trait DiscreteGradientPotential {
    /// Number of unknowns.
    fn n_dofs(&self) -> usize;
    /// `V(x)`.
    fn energy(&self, x: &[f64]) -> f64;
    /// Writes `∇V(x)` into `out` (overwriting it).
    fn gradient(&self, x: &[f64], out: &mut [f64]);
    /// Writes `∇̄V(a, b)` into `out` (overwriting it): `(∇̄V(a, b), b − a) = V(b) − V(a)` and
    /// `∇̄V(a, a) = ∇V(a)`.
    fn discrete_gradient(&self, a: &[f64], b: &[f64], out: &mut [f64]);
    /// `c_a ∂∇̄V/∂a + c_b ∂∇̄V/∂b` at `(a, b)`, symmetric, with a sparsity pattern that does not
    /// depend on `a`, `b` (explicit zeros kept).
    fn discrete_gradient_jacobian(
        &self,
        a: &[f64],
        b: &[f64],
        c_a: f64,
        c_b: f64,
    ) -> CsrMatrix<f64>;
}

/// A scalar function `Φ(s)` with `φ = Φ'` and `φ'`, for [`DiagonalPotential`].
pub type ScalarPotential = fn(f64) -> [f64; 3];

/// A diagonal potential `V(x) = Σ_i Φ(x_i)` (25)–(26), the same `Φ` on every component; its
/// discrete gradient is (30).
#[derive(Clone, Debug)]
pub struct DiagonalPotential {
    n: usize,
    /// Returns `[Φ(s), φ(s), φ'(s)]`.
    phi: ScalarPotential,
}

impl DiagonalPotential {
    /// `n` components, `phi(s) = [Φ(s), Φ'(s), Φ''(s)]`.
    pub fn new(n: usize, phi: ScalarPotential) -> Self {
        Self { n, phi }
    }

    fn component(&self, a: f64, b: f64) -> fem_constraints::DiscreteGradient {
        let phi = self.phi;
        fem_constraints::constraint::generic_discrete_gradient(
            |s| phi(s)[0],
            |s| phi(s)[1],
            |s| phi(s)[2],
            a,
            b,
        )
    }
}

impl DiscreteGradientPotential for DiagonalPotential {
    fn n_dofs(&self) -> usize {
        self.n
    }
    fn energy(&self, x: &[f64]) -> f64 {
        x.iter().map(|&s| (self.phi)(s)[0]).sum()
    }
    fn gradient(&self, x: &[f64], out: &mut [f64]) {
        for (o, &s) in out.iter_mut().zip(x) {
            *o = (self.phi)(s)[1];
        }
    }
    fn discrete_gradient(&self, a: &[f64], b: &[f64], out: &mut [f64]) {
        for i in 0..self.n {
            out[i] = self.component(a[i], b[i]).value;
        }
    }
    fn discrete_gradient_jacobian(
        &self,
        a: &[f64],
        b: &[f64],
        c_a: f64,
        c_b: f64,
    ) -> CsrMatrix<f64> {
        let mut coo = CooMatrix::new(self.n, self.n);
        for i in 0..self.n {
            let d = self.component(a[i], b[i]);
            coo.push(i, i, c_a * d.d_a + c_b * d.d_b);
        }
        CsrMatrix::from(&coo)
    }
}

/// Linear constraints `g(x) = G x − h` enforced by a [`ConstraintSolver`] (penalty or
/// augmented Lagrangian): `V(x) = Σ_k ψ_k(g_k(x))`, `∇̄V(a, b) = Gᵀ {Dψ_k(g_k(a), g_k(b))}`.
///
/// Because `g` is linear, `(∇̄V(a, b), b − a) = Σ_k Dψ_k (g_k(b) − g_k(a)) = V(b) − V(a)`
/// exactly: this is the time-discretized penalty (62) of the colliding strings.
#[derive(Debug)]
pub struct LinearConstraintPotential {
    g: CsrMatrix<f64>,
    offsets: Vec<f64>,
    solver: Box<dyn ConstraintSolver>,
}

impl LinearConstraintPotential {
    /// `G` (`m × n`), `h` (`m`), and the solver for the `m` constraints.
    ///
    /// # Panics
    /// If the sizes disagree (a programming error: the model builds all three).
    pub fn new(g: CsrMatrix<f64>, offsets: Vec<f64>, solver: Box<dyn ConstraintSolver>) -> Self {
        assert_eq!(g.nrows(), offsets.len(), "one offset per constraint row");
        assert_eq!(
            g.nrows(),
            solver.n_constraints(),
            "one solver entry per constraint row"
        );
        Self { g, offsets, solver }
    }

    /// `g(x) = G x − h` into `out`.
    pub fn values(&self, x: &[f64], out: &mut [f64]) {
        for (o, h) in out.iter_mut().zip(&self.offsets) {
            *o = -h;
        }
        sparse::mul_add(1.0, out, 1.0, &self.g, x);
    }

    /// The constraint solver.
    pub fn solver(&self) -> &dyn ConstraintSolver {
        self.solver.as_ref()
    }

    /// Records the multipliers at `x` (see [`ConstraintSolver::update_multipliers`]).
    pub fn update_multipliers(&mut self, x: &[f64]) -> MultiplierUpdate {
        let mut g = vec![0.0; self.g.nrows()];
        self.values(x, &mut g);
        self.solver.update_multipliers(&g)
    }

    /// `Gᵀ w` into `out`.
    fn transpose_mul(&self, w: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (k, row) in self.g.row_iter().enumerate() {
            for (&j, &v) in row.col_indices().iter().zip(row.values()) {
                out[j] += v * w[k];
            }
        }
    }
}

impl DiscreteGradientPotential for LinearConstraintPotential {
    fn n_dofs(&self) -> usize {
        self.g.ncols()
    }
    fn energy(&self, x: &[f64]) -> f64 {
        let mut g = vec![0.0; self.g.nrows()];
        self.values(x, &mut g);
        self.solver.energy(&g)
    }
    fn gradient(&self, x: &[f64], out: &mut [f64]) {
        let mut g = vec![0.0; self.g.nrows()];
        self.values(x, &mut g);
        let w: Vec<f64> = (0..g.len()).map(|k| self.solver.force(k, g[k])).collect();
        self.transpose_mul(&w, out);
    }
    fn discrete_gradient(&self, a: &[f64], b: &[f64], out: &mut [f64]) {
        let m = self.g.nrows();
        let (mut ga, mut gb) = (vec![0.0; m], vec![0.0; m]);
        self.values(a, &mut ga);
        self.values(b, &mut gb);
        let w: Vec<f64> = (0..m)
            .map(|k| self.solver.discrete_gradient(k, ga[k], gb[k]).value)
            .collect();
        self.transpose_mul(&w, out);
    }
    fn discrete_gradient_jacobian(
        &self,
        a: &[f64],
        b: &[f64],
        c_a: f64,
        c_b: f64,
    ) -> CsrMatrix<f64> {
        let (m, n) = (self.g.nrows(), self.g.ncols());
        let (mut ga, mut gb) = (vec![0.0; m], vec![0.0; m]);
        self.values(a, &mut ga);
        self.values(b, &mut gb);
        let mut coo = CooMatrix::new(n, n);
        for (k, row) in self.g.row_iter().enumerate() {
            let d = self.solver.discrete_gradient(k, ga[k], gb[k]);
            let w = c_a * d.d_a + c_b * d.d_b;
            for (&i, &vi) in row.col_indices().iter().zip(row.values()) {
                for (&j, &vj) in row.col_indices().iter().zip(row.values()) {
                    coo.push(i, j, w * vi * vj);
                }
            }
        }
        CsrMatrix::from(&coo)
    }
}

/// A system plus a potential: `M ẍ + C ẋ + f_int(x) + ∇V(x) = f(t)`.
///
/// When the inner system is linear, its stiffness is the constant part `A` of (24) and the
/// potential's discrete gradient is the exact discrete gradient of the rest (see
/// [`SecondOrderSystem::discrete_gradient`]).
#[derive(Debug)]
pub struct WithPotential<S: SecondOrderSystem, P: DiscreteGradientPotential> {
    /// The inner system.
    pub system: S,
    /// The potential.
    pub potential: P,
}

impl<S: SecondOrderSystem, P: DiscreteGradientPotential> WithPotential<S, P> {
    /// `system` plus `potential` (of the same size).
    ///
    /// # Panics
    /// If the sizes differ (a programming error: both are built by the caller).
    pub fn new(system: S, potential: P) -> Self {
        assert_eq!(
            system.n_dofs(),
            potential.n_dofs(),
            "one potential entry per dof"
        );
        Self { system, potential }
    }
}

impl<S: SecondOrderSystem, P: DiscreteGradientPotential> SecondOrderSystem for WithPotential<S, P> {
    fn n_dofs(&self) -> usize {
        self.system.n_dofs()
    }
    fn mass(&self) -> &Mass {
        self.system.mass()
    }
    fn damping(&self) -> Option<&Matrix> {
        self.system.damping()
    }
    fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        self.system.internal_force(x, f)?;
        let mut g = vec![0.0; x.len()];
        self.potential.gradient(x, &mut g);
        f.iter_mut().zip(&g).for_each(|(f, g)| *f += g);
        Ok(())
    }
    fn tangent_kind(&self) -> TangentKind {
        self.system.tangent_kind()
    }
    fn tangent(&self, x: &[f64]) -> Result<Matrix, EvalError> {
        let k = self.system.tangent(x)?;
        let v = self.potential.discrete_gradient_jacobian(x, x, 1.0, 1.0);
        Ok(Matrix::Sparse(sparse::linear_combination(
            &[(1.0, &k.to_csr()), (1.0, &v)],
            None,
        )))
    }
    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        Some(self.system.potential_energy(x)? + self.potential.energy(x))
    }
    fn external_force(&self, t: f64, f: &mut [f64]) {
        self.system.external_force(t, f);
    }
    fn has_external_force(&self) -> bool {
        self.system.has_external_force()
    }
    fn discrete_gradient(&self, a: &[f64], b: &[f64], out: &mut [f64]) -> bool {
        if !self.system.is_linear() {
            return false;
        }
        self.potential.discrete_gradient(a, b, out);
        true
    }
    fn discrete_gradient_jacobian(
        &self,
        a: &[f64],
        b: &[f64],
        c_a: f64,
        c_b: f64,
    ) -> Option<Matrix> {
        self.system
            .is_linear()
            .then(|| Matrix::Sparse(self.potential.discrete_gradient_jacobian(a, b, c_a, c_b)))
    }
    fn constant_stiffness(&self) -> Option<&CsrMatrix<f64>> {
        if self.system.is_linear() {
            self.system.constant_stiffness()
        } else {
            None
        }
    }
    fn dof_points(&self) -> Option<Vec<[f64; 3]>> {
        self.system.dof_points()
    }
}
