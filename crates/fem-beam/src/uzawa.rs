//! Algorithm 2 (Uzawa) with the decoupling `p = x'`, shared by the static problem and every
//! step of the dynamic augmented Lagrangian (97).
//!
//! The problem is `min ½ xᵀ A₀ x − bᵀx` subject to `|x'(s_j)| = 1` at the constraint points.
//! With the augmented Lagrangian (our sign convention, see `docs/theory/inextensible_beam.md`)
//!
//! ```text
//! L_r(x, q; μ) = ½ xᵀA₀x − bᵀx + Σ_j w_j [ μ_j·(x'_j − q_j) + r/2 |x'_j − q_j|² ],
//! ```
//!
//! one iteration, from `(λ, x)`, is
//!
//! 1. **p-step** `p_j = P_j / |P_j|`, `P_j = r x'_j + λ_j` (pointwise projection on `|p| = 1`);
//! 2. **x-step** `(A₀ + r K_r) x = b + Gᵀ(r p − λ)`: three independent linear systems, one per
//!    space component, sharing one SPD matrix factored once ([`SparseCholesky`],
//!    three right-hand sides per solve);
//! 3. **multiplier** `λ ← λ + r (x' − p)`.
//!
//! At convergence `λ_j = T_j p_j` with `T_j` the tension at point `j`.
//!
//! Optionally the fixed-point map `(λ, r x') ↦ (λ_new, r x'_new)` is accelerated by Anderson
//! mixing (type II, memory `m`): the least-squares problem over the last `m` differences is
//! solved in the `L²` inner product of the constraint points.

use std::collections::VecDeque;

use fem_assembly::{CsrMatrix, SparseCholesky};
use nalgebra::{DMatrix, DVector};

use crate::error::BeamError;
use crate::model::{Beam, DIM};

/// Acceleration of the Uzawa fixed-point iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Acceleration {
    /// Plain Uzawa (Algorithm 2).
    None,
    /// Anderson mixing with the given memory (number of kept differences, ≥ 1).
    Anderson {
        /// Kept differences; 5–10 is typical.
        memory: usize,
    },
}

/// Parameters of the Uzawa loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UzawaSettings {
    /// Augmentation parameter `r` (the paper's `1/ε`), > 0. An algorithmic parameter: the
    /// converged answer does not depend on it; the iteration count does.
    pub augmentation: f64,
    /// Iteration limit.
    pub max_iterations: usize,
    /// Bound on the constraint residual `‖x' − p‖_{L²} / √L`.
    pub constraint_tolerance: f64,
    /// Bound on the relative changes of the multiplier and of `x'` in one iteration.
    pub change_tolerance: f64,
    /// Plain or Anderson-accelerated.
    pub acceleration: Acceleration,
}

impl UzawaSettings {
    /// Plain Uzawa with augmentation `r`, tolerances `1e-10` / `1e-9`, 100 000 iterations.
    pub fn plain(r: f64) -> Self {
        Self {
            augmentation: r,
            max_iterations: 100_000,
            constraint_tolerance: 1e-10,
            change_tolerance: 1e-9,
            acceleration: Acceleration::None,
        }
    }

    /// Anderson-accelerated Uzawa (memory 8), otherwise as [`UzawaSettings::plain`].
    pub fn anderson(r: f64) -> Self {
        Self {
            acceleration: Acceleration::Anderson { memory: 8 },
            ..Self::plain(r)
        }
    }

    /// Anderson-accelerated Uzawa with the augmentation chosen from the model, so that
    /// `r K_r` is of the order of the stiffest other term of the x-step matrix:
    /// `r = EI/h² + 10 F`, plus `ρ h²/Δt²` for a dynamic step of size `dt`, with `h` the
    /// shortest element and `F = ρ|g|L + Σ|P|` the total load (N). The converged answer does
    /// not depend on `r` (with the augmentation at the constraint points); the iteration count
    /// does, and a fixed `r` that suits `N = 20` stalls at `N = 1000`
    /// (`docs/theory/inextensible_beam.md`).
    pub fn automatic(model: &Beam, dt: Option<f64>) -> Self {
        let h = model
            .elements()
            .iter()
            .map(|e| e.length)
            .fold(f64::INFINITY, f64::min);
        let p = model.parameters();
        let mut r = p.bending_stiffness / (h * h) + 10.0 * crate::statics::total_load(model);
        if let Some(dt) = dt {
            r += p.density * h * h / (dt * dt);
        }
        Self::anderson(if r > 0.0 && r.is_finite() { r } else { 1.0 })
    }

    pub(crate) fn check(&self) -> Result<(), BeamError> {
        let bad = |name, value, expected| {
            Err(BeamError::InvalidParameter {
                name,
                value,
                expected,
            })
        };
        if !(self.augmentation > 0.0 && self.augmentation.is_finite()) {
            return bad("augmentation", self.augmentation, "a positive finite r");
        }
        if self.constraint_tolerance.is_nan() || self.constraint_tolerance <= 0.0 {
            return bad("constraint_tolerance", self.constraint_tolerance, "> 0");
        }
        if self.change_tolerance.is_nan() || self.change_tolerance <= 0.0 {
            return bad("change_tolerance", self.change_tolerance, "> 0");
        }
        if let Acceleration::Anderson { memory: 0 } = self.acceleration {
            return bad("anderson memory", 0.0, ">= 1");
        }
        Ok(())
    }
}

/// What one Uzawa solve did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UzawaReport {
    /// Iterations (each one p-step, one three-right-hand-side solve, one multiplier update).
    pub iterations: usize,
    /// `‖x' − p‖_{L²} / √L` at the end.
    pub constraint_residual: f64,
    /// `max_j |x'_j − p_j|` at the end (bounds `max_j ||x'_j| − 1|`).
    pub max_constraint_violation: f64,
    /// `‖λ_new − λ‖ / max(‖λ_new‖, r √L)` of the last iteration (`L²` over the points).
    pub multiplier_change: f64,
    /// `‖x'_new − x'‖_{L²} / √L` of the last iteration.
    pub tangent_change: f64,
}

/// The Uzawa solver of one constrained quadratic problem, its matrix factored once.
#[derive(Debug)]
pub struct UzawaSolver {
    r: f64,
    n_s: usize,
    free_of: Vec<usize>,
    free: Vec<usize>,
    matrix: CsrMatrix<f64>,
    chol: SparseCholesky,
}

impl UzawaSolver {
    /// Factors `A₀ + r K_r` on the free dofs of `model`; `a0` is the per-component matrix on
    /// all scalar dofs (`EI K` for statics, `ρM/Δt² + α EI K` for dynamics).
    pub fn new(model: &Beam, a0: &CsrMatrix<f64>, r: f64) -> Result<Self, BeamError> {
        let n_s = model.n_scalar();
        let ax = model.axial(r);
        let matrix = fem_assembly::sparse::linear_combination(&[(1.0, a0), (1.0, &ax)], None);
        let mut free_of = vec![usize::MAX; n_s];
        let mut free = Vec::new();
        for k in 0..n_s {
            if !model.is_fixed(k) {
                free_of[k] = free.len();
                free.push(k);
            }
        }
        let aff = fem_assembly::sparse::principal_submatrix(&matrix, &free_of);
        let chol = SparseCholesky::new(&aff)?;
        Ok(Self {
            r,
            n_s,
            free_of,
            free,
            matrix,
            chol,
        })
    }

    /// Numeric factorizations done (1: the matrix never changes).
    pub fn factorization_count(&self) -> usize {
        self.chol.factorization_count()
    }

    /// The augmentation parameter `r`.
    pub fn augmentation(&self) -> f64 {
        self.r
    }

    /// Number of free scalar dofs per component.
    pub fn n_free(&self) -> usize {
        self.free.len()
    }

    /// One three-right-hand-side solve with the factored matrix (`rhs`: column-major
    /// `3 × n_free()`), the unit of work of an iteration.
    pub fn solve_free(&self, rhs: &mut [f64]) {
        self.chol.solve_many_in_place(rhs, DIM);
    }

    /// Solves `min ½xᵀA₀x − bᵀx` s.t. `|x'_j| = 1`.
    ///
    /// `x` (column-major, all dofs) holds the prescribed values in its fixed entries and the
    /// initial guess elsewhere; its `x'` at the points and `lambda` start the iteration.
    /// On return `x`, `p` and `lambda` hold the last iterate (also when not converged: the
    /// report tells, and the caller decides).
    #[allow(clippy::too_many_arguments)]
    pub fn solve(
        &self,
        model: &Beam,
        b: &[f64],
        x: &mut [f64],
        p: &mut [[f64; 3]],
        lambda: &mut [[f64; 3]],
        settings: &UzawaSettings,
    ) -> (UzawaReport, bool) {
        let (n_s, n_f, r) = (self.n_s, self.free.len(), self.r);
        let n_p = model.n_points();
        let w = model.point_weights();
        let l = model.length();
        // rhs0 = b − A x_fixed, restricted to the free rows.
        let mut rhs0 = vec![0.0; DIM * n_f];
        let mut xfix = vec![0.0; n_s];
        let mut ax = vec![0.0; n_s];
        for c in 0..DIM {
            for k in 0..n_s {
                xfix[k] = if self.free_of[k] == usize::MAX {
                    x[c * n_s + k]
                } else {
                    0.0
                };
            }
            fem_assembly::sparse::mul_add(0.0, &mut ax, 1.0, &self.matrix, &xfix);
            for (i, &k) in self.free.iter().enumerate() {
                rhs0[c * n_f + i] = b[c * n_s + k] - ax[k];
            }
        }
        let mut anderson = match settings.acceleration {
            Acceleration::Anderson { memory } => Some(Anderson::new(memory, w)),
            Acceleration::None => None,
        };
        // The iterate s = (λ, r x') at the points.
        let mut lam_in: Vec<[f64; 3]> = lambda.to_vec();
        let mut rdx_in = vec![[0.0; 3]; n_p];
        model.tangents_at_points(x, &mut rdx_in);
        for v in rdx_in.iter_mut() {
            *v = v.map(|e| e * r);
        }
        let mut g = vec![[0.0; 3]; n_p];
        let mut full = vec![0.0; DIM * n_s];
        let mut rhs = vec![0.0; DIM * n_f];
        let mut dx_new = vec![[0.0; 3]; n_p];
        let mut report = UzawaReport::default();
        for it in 1..=settings.max_iterations {
            // p-step.
            for j in 0..n_p {
                let pp: [f64; 3] = std::array::from_fn(|c| rdx_in[j][c] + lam_in[j][c]);
                let n = crate::model::norm(pp);
                if n > 0.0 && n.is_finite() {
                    p[j] = pp.map(|e| e / n);
                }
                g[j] = std::array::from_fn(|c| r * p[j][c] - lam_in[j][c]);
            }
            // x-step.
            full.fill(0.0);
            model.add_point_forces(&g, &mut full);
            for c in 0..DIM {
                for (i, &k) in self.free.iter().enumerate() {
                    rhs[c * n_f + i] = rhs0[c * n_f + i] + full[c * n_s + k];
                }
            }
            self.chol.solve_many_in_place(&mut rhs, DIM);
            for c in 0..DIM {
                for (i, &k) in self.free.iter().enumerate() {
                    x[c * n_s + k] = rhs[c * n_f + i];
                }
            }
            model.tangents_at_points(x, &mut dx_new);
            // Multiplier update and measures.
            let (mut cres, mut cmax, mut dl, mut ln, mut dt) = (0.0, 0.0f64, 0.0, 0.0, 0.0);
            for j in 0..n_p {
                let mut e2 = 0.0;
                let mut d2 = 0.0;
                for c in 0..DIM {
                    let e = dx_new[j][c] - p[j][c];
                    e2 += e * e;
                    let lnew = lam_in[j][c] + r * e;
                    dl += w[j] * (r * e) * (r * e);
                    ln += w[j] * lnew * lnew;
                    lambda[j][c] = lnew;
                    let d = dx_new[j][c] - rdx_in[j][c] / r;
                    d2 += d * d;
                }
                cres += w[j] * e2;
                cmax = cmax.max(e2.sqrt());
                dt += w[j] * d2;
            }
            report = UzawaReport {
                iterations: it,
                constraint_residual: (cres / l).sqrt(),
                max_constraint_violation: cmax,
                multiplier_change: (dl / ln.max(r * r * l)).sqrt(),
                tangent_change: (dt / l).sqrt(),
            };
            let ok = report.constraint_residual <= settings.constraint_tolerance
                && report.multiplier_change <= settings.change_tolerance
                && report.tangent_change <= settings.change_tolerance;
            if ok {
                return (report, true);
            }
            if !report.constraint_residual.is_finite() {
                return (report, false);
            }
            // Next iterate: plain or Anderson-mixed.
            let rdx_new: Vec<[f64; 3]> = dx_new.iter().map(|v| v.map(|e| e * r)).collect();
            match anderson.as_mut() {
                None => {
                    lam_in.copy_from_slice(lambda);
                    rdx_in = rdx_new;
                }
                Some(acc) => acc.mix(&mut lam_in, &mut rdx_in, lambda, &rdx_new),
            }
        }
        (report, false)
    }
}

/// Anderson mixing (type II) of the map `s ↦ G(s)`, `s = (λ, r x')` at the points.
struct Anderson {
    memory: usize,
    weights: Vec<f64>,
    prev_f: Option<Vec<f64>>,
    prev_g: Option<Vec<f64>>,
    df: VecDeque<Vec<f64>>,
    dg: VecDeque<Vec<f64>>,
    /// `gram[i][j] = ⟨df_i, df_j⟩`, kept up to date as differences come and go.
    gram: VecDeque<VecDeque<f64>>,
}

impl Anderson {
    fn new(memory: usize, point_weights: &[f64]) -> Self {
        // Each point has 6 entries (λ and r x', three components each).
        let weights = point_weights
            .iter()
            .flat_map(|&w| std::iter::repeat_n(w, 6))
            .collect();
        Self {
            memory,
            weights,
            prev_f: None,
            prev_g: None,
            df: VecDeque::new(),
            dg: VecDeque::new(),
            gram: VecDeque::new(),
        }
    }

    fn dot(&self, a: &[f64], b: &[f64]) -> f64 {
        self.weights
            .iter()
            .zip(a.iter().zip(b))
            .map(|(w, (x, y))| w * x * y)
            .sum()
    }

    /// Replaces `(lam_in, rdx_in)` (the last input `s`) by the mixed next input, given the
    /// map's output `(lam_out, rdx_out)`.
    fn mix(
        &mut self,
        lam_in: &mut [[f64; 3]],
        rdx_in: &mut [[f64; 3]],
        lam_out: &[[f64; 3]],
        rdx_out: &[[f64; 3]],
    ) {
        let pack = |a: &[[f64; 3]], b: &[[f64; 3]]| -> Vec<f64> {
            a.iter()
                .zip(b)
                .flat_map(|(x, y)| [x[0], x[1], x[2], y[0], y[1], y[2]])
                .collect()
        };
        let s = pack(lam_in, rdx_in);
        let g = pack(lam_out, rdx_out);
        let f: Vec<f64> = g.iter().zip(&s).map(|(a, b)| a - b).collect();
        if let (Some(pf), Some(pg)) = (self.prev_f.take(), self.prev_g.take()) {
            if self.df.len() == self.memory {
                self.df.pop_front();
                self.dg.pop_front();
                self.gram.pop_front();
                for row in self.gram.iter_mut() {
                    row.pop_front();
                }
            }
            let new: Vec<f64> = f.iter().zip(&pf).map(|(a, b)| a - b).collect();
            let dots: Vec<f64> = self.df.iter().map(|d| self.dot(d, &new)).collect();
            for (row, &v) in self.gram.iter_mut().zip(&dots) {
                row.push_back(v);
            }
            let mut last: VecDeque<f64> = dots.into();
            last.push_back(self.dot(&new, &new));
            self.gram.push_back(last);
            self.df.push_back(new);
            self.dg
                .push_back(g.iter().zip(&pg).map(|(a, b)| a - b).collect());
        }
        let m = self.df.len();
        let mut next = g.clone();
        if m > 0 {
            let mut h = DMatrix::<f64>::zeros(m, m);
            let mut rhs = DVector::<f64>::zeros(m);
            for i in 0..m {
                for j in 0..m {
                    h[(i, j)] = self.gram[i][j];
                }
                rhs[i] = self.dot(&self.df[i], &f);
            }
            let reg = 1e-12 * (0..m).map(|i| h[(i, i)]).fold(0.0, f64::max);
            for i in 0..m {
                h[(i, i)] += reg;
            }
            if let Some(gamma) = h.cholesky().map(|c| c.solve(&rhs))
                && gamma.iter().all(|v| v.is_finite())
            {
                for i in 0..m {
                    let gi = gamma[i];
                    for (n, d) in next.iter_mut().zip(&self.dg[i]) {
                        *n -= gi * d;
                    }
                }
            }
        }
        self.prev_f = Some(f);
        self.prev_g = Some(g);
        for (j, chunk) in next.chunks_exact(6).enumerate() {
            lam_in[j] = [chunk[0], chunk[1], chunk[2]];
            rdx_in[j] = [chunk[3], chunk[4], chunk[5]];
        }
    }
}
