//! Newton on the KKT system of one constrained beam problem, assembled element by element
//! straight into the block-tridiagonal storage of [`crate::block_tridiag`]: the engine of the
//! static Newton solve ([`crate::statics`]), of the energy-conserving scheme
//! ([`crate::energy`]) and of the (97) Newton stepper with [`crate::KktAssembly::Blocks`].
//!
//! # The problem
//! Unknowns: the configuration `x` (column-major `3 × n_s`, fixed entries prescribed) and one
//! multiplier `T_j` (the tension) per constraint point. Equations, on the free dofs and at the
//! active points,
//!
//! ```text
//! R(x, T) = c_m M (x − u) + EI K (c_k x + q) − s f + Σ_j w_j T_j N'_j ⊗ x̂'_j = 0,
//! C_j(x)  = w_j ½ (|x'_j|² − 1) = 0,            x̂ = θ x + (1 − θ) x_ref,
//! ```
//!
//! with `M`, `K` the mass and bending matrices of one component and `f` the load. The scheme
//! (97) has `c_m = 1/Δt²`, `c_k = α`, `θ = 1`; the energy-conserving midpoint scheme
//! `c_m = 2/Δt²`, `c_k = ½`, `θ = ½` (the constraint force along the midpoint tangent, the
//! discrete gradient of the quadratic `C_j`); the static problem `c_m = 0`, `c_k = 1`, `θ = 1`.
//! The bending force is evaluated element by element on `z = c_k x + q` minus the linear field
//! through the element's ends (which `K` annihilates), so it has no round-off floor
//! `ε EI/h³ |x|` (see [`crate::kkt`]).
//!
//! # The Newton matrix
//! ```text
//! [ I₃ ⊗ (j_m M + j_k EI K + j_g K_T)   G(x̂)ᵀ ] [ δx ]     [ R ]
//! [ B(x)                                 0     ] [ δT ] = − [ C ],
//! ```
//! `K_T = Σ_j w_j T_j N'_j N'_jᵀ`, `B_j = w_j x'_jᵀ ⊗ N'_jᵀ`, `G_j = w_j x̂'_jᵀ ⊗ N'_jᵀ`
//! (`G = B` when `θ = 1`: symmetric). The Jacobian coefficients are separate from the
//! residual's so the static solve can add a proximal term `μ M` and start from a
//! least-squares estimate of the tensions.
//!
//! Block `b` holds node `b`'s 6 dofs (local `3σ + c`, `σ` = 0 position, 1 tangent) and the
//! multipliers whose home is `b` (local `6 + slot`, [`BeamModel`]'s point homes). Prescribed
//! dofs, dofs held by the seabed, inactive points and unused slots get a unit diagonal. Before
//! factoring, unknowns are scaled symmetrically: dofs by `1/√H_kk`, multipliers so that their
//! scaled constraint row has unit max norm.
//!
//! # Seabed
//! Frictionless unilateral contact `x_a(node) ≥ level` at the nodes, by a primal–dual active
//! set inside the Newton loop: a node whose reaction `R_a(node)` (the upward force the seabed
//! must supply) turns negative is released; a free node found below the plane is projected
//! onto it and held. A held node's position dof is treated as prescribed, so the block
//! structure never changes and the penetration at the nodes is exactly zero.

use nalgebra::SMatrix;

use crate::block_tridiag::{BS, Lu8};
use crate::error::BeamError;
use crate::model::{BeamModel, DIM, norm};

type M8 = SMatrix<f64, BS, BS>;

/// The residual's coefficients (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResidualForm<'a> {
    /// `c_m`.
    pub mass: f64,
    /// `u` (empty: zero).
    pub anchor: &'a [f64],
    /// `c_k`.
    pub bending: f64,
    /// `q` (empty: zero).
    pub offset: &'a [f64],
    /// `s`, the factor of the load.
    pub load: f64,
    /// `θ` of the constraint-force tangent.
    pub theta: f64,
    /// `x_ref` (empty when `θ = 1`).
    pub reference: &'a [f64],
}

/// The Newton matrix's coefficients `j_m`, `j_k`, `j_g`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JacobianForm {
    pub mass: f64,
    pub bending: f64,
    pub geometric: f64,
}

/// The measures of one Newton update.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct UpdateMeasures {
    /// `‖δx‖_∞ / max(1, ‖x‖_∞)`.
    pub step_change: f64,
    /// `‖δT‖_∞ / max(1, ‖T‖_∞)`.
    pub multiplier_change: f64,
}

/// The seabed's active set: which nodes are held on the plane.
#[derive(Clone, Debug, Default)]
pub(crate) struct ActiveSet {
    pub held: Vec<bool>,
}

/// Block storage, scaling and scratch of the block Newton–KKT engine.
#[derive(Debug)]
pub(crate) struct BlockKkt {
    n_blocks: usize,
    n_s: usize,
    diag: Vec<M8>,
    lower: Vec<M8>,
    upper: Vec<M8>,
    lu: Vec<Lu8>,
    /// Per block unknown (`8 b + local`): its scale and the right-hand side / solution.
    scale: Vec<f64>,
    rhs: Vec<f64>,
    used: Vec<bool>,
    /// `x'_j` at `x` and `x̂'_j`.
    pub tangents: Vec<[f64; 3]>,
    pub tangents_hat: Vec<[f64; 3]>,
    /// The full residual `R` (all dofs, column-major; at prescribed dofs: minus the reaction).
    pub res: Vec<f64>,
    /// Blocked dofs (prescribed or held by the seabed), column-major.
    blocked: Vec<bool>,
    factorizations: usize,
}

impl BlockKkt {
    /// Storage for `model`.
    pub(crate) fn new(model: &BeamModel) -> Self {
        let n_blocks = model.n_nodes();
        let n_p = model.n_points();
        let n_s = model.n_scalar();
        Self {
            n_blocks,
            n_s,
            diag: vec![M8::zeros(); n_blocks],
            lower: vec![M8::zeros(); n_blocks],
            upper: vec![M8::zeros(); n_blocks],
            lu: Vec::with_capacity(n_blocks),
            scale: vec![1.0; n_blocks * BS],
            rhs: vec![0.0; n_blocks * BS],
            used: vec![false; n_blocks * BS],
            tangents: vec![[0.0; 3]; n_p],
            tangents_hat: vec![[0.0; 3]; n_p],
            res: vec![0.0; DIM * n_s],
            blocked: vec![false; DIM * n_s],
            factorizations: 0,
        }
    }

    /// Numeric factorizations so far.
    pub(crate) fn factorization_count(&self) -> usize {
        self.factorizations
    }

    /// Number of unknowns of the (unblocked) KKT system.
    pub(crate) fn n_unknowns(&self, model: &BeamModel) -> usize {
        let n_free = (0..self.n_s).filter(|&k| !model.is_fixed(k)).count();
        DIM * n_free + (0..model.n_points()).filter(|&j| model.point_is_active(j)).count()
    }

    /// Marks the blocked dofs: prescribed by the model, or held on the seabed.
    pub(crate) fn set_blocked(&mut self, model: &BeamModel, contact: &ActiveSet) {
        let n_s = self.n_s;
        for c in 0..DIM {
            for k in 0..n_s {
                self.blocked[c * n_s + k] = model.is_fixed(k);
            }
        }
        if let Some(sb) = model.seabed() {
            for (i, &h) in contact.held.iter().enumerate() {
                if h {
                    self.blocked[sb.axis * n_s + 2 * i] = true;
                }
            }
        }
    }

    /// Evaluates `R(x, T)` into `self.res` and the tangents at the points.
    pub(crate) fn residual(
        &mut self,
        model: &BeamModel,
        form: &ResidualForm<'_>,
        x: &[f64],
        tension: &[f64],
    ) {
        let n_s = self.n_s;
        let ei = model.parameters().bending_stiffness;
        let load = model.load();
        linear_residual(model, form, ei, load, x, &mut self.res);
        model.tangents_at_points(x, &mut self.tangents);
        if form.theta == 1.0 {
            self.tangents_hat.copy_from_slice(&self.tangents);
        } else {
            model.tangents_at_points(form.reference, &mut self.tangents_hat);
            let th = form.theta;
            for (h, t) in self.tangents_hat.iter_mut().zip(&self.tangents) {
                for c in 0..DIM {
                    h[c] = th * t[c] + (1.0 - th) * h[c];
                }
            }
        }
        let w = model.point_weights();
        let dn = model.point_derivatives();
        for j in 0..model.n_points() {
            let e = model.point_element(j);
            let f = w[j] * tension[j];
            if f == 0.0 {
                continue;
            }
            for c in 0..DIM {
                let g = f * self.tangents_hat[j][c];
                let base = c * n_s + 2 * e;
                for a in 0..4 {
                    self.res[base + a] += g * dn[j][a];
                }
            }
        }
    }

    /// Assembles the scaled Newton matrix and right-hand side `−(R, C)` from the last
    /// [`BlockKkt::residual`], factorizes and solves. `Ok(false)` if a pivot block is
    /// singular.
    pub(crate) fn factor_solve(
        &mut self,
        model: &BeamModel,
        jac: &JacobianForm,
        tension: &[f64],
    ) -> Result<bool, BeamError> {
        self.assemble(model, jac, tension);
        self.apply_scaling();
        let ok = self.factorize();
        self.factorizations += 1;
        if !ok {
            return Ok(false);
        }
        self.solve();
        for (r, s) in self.rhs.iter_mut().zip(&self.scale) {
            *r *= s;
        }
        Ok(self.rhs.iter().all(|v| v.is_finite()))
    }

    /// The solved update of dof (`c`, `k`) (0 for a blocked dof).
    #[inline]
    pub(crate) fn dx(&self, c: usize, k: usize) -> f64 {
        if self.blocked[c * self.n_s + k] {
            0.0
        } else {
            self.rhs[(k / 2) * BS + 3 * (k % 2) + c]
        }
    }

    /// The solved update of multiplier `j`.
    #[inline]
    pub(crate) fn dt(&self, model: &BeamModel, j: usize) -> f64 {
        if model.point_is_active(j) {
            let (b, q) = model.point_home(j);
            self.rhs[b * BS + 2 * DIM + q]
        } else {
            0.0
        }
    }

    /// Applies `x += δx`, `T += δT` and returns the update's measures.
    pub(crate) fn apply_update(
        &self,
        model: &BeamModel,
        x: &mut [f64],
        tension: &mut [f64],
    ) -> UpdateMeasures {
        self.apply_damped_update(model, x, tension, 1.0)
    }

    /// Applies `x += α δx`, `T += α δT` and returns the (damped) update's measures.
    pub(crate) fn apply_damped_update(
        &self,
        model: &BeamModel,
        x: &mut [f64],
        tension: &mut [f64],
        alpha: f64,
    ) -> UpdateMeasures {
        let n_s = self.n_s;
        let (mut dxm, mut xm, mut dtm, mut tm) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for c in 0..DIM {
            for k in 0..n_s {
                let d = alpha * self.dx(c, k);
                let v = &mut x[c * n_s + k];
                *v += d;
                dxm = dxm.max(d.abs());
                xm = xm.max(v.abs());
            }
        }
        for (j, t) in tension.iter_mut().enumerate() {
            let d = alpha * self.dt(model, j);
            *t += d;
            dtm = dtm.max(d.abs());
            tm = tm.max(t.abs());
        }
        UpdateMeasures {
            step_change: dxm / xm.max(1.0),
            multiplier_change: dtm / tm.max(1.0),
        }
    }

    /// The merit `½ (‖R‖²/f² + Σ_j c_j²)` of the last residual over the free dofs and the
    /// active points, `c_j = ½(|x'_j|² − 1)`; the Newton direction is a descent direction
    /// of it (for any fixed weight `f`).
    pub(crate) fn merit(&self, model: &BeamModel, f: f64) -> f64 {
        let r2: f64 = self
            .res
            .iter()
            .zip(&self.blocked)
            .filter(|(_, b)| !**b)
            .map(|(r, _)| (r / f) * (r / f))
            .sum();
        let c2: f64 = (0..model.n_points())
            .filter(|&j| model.point_is_active(j))
            .map(|j| {
                let t = self.tangents[j];
                let c = 0.5 * (t[0] * t[0] + t[1] * t[1] + t[2] * t[2] - 1.0);
                c * c
            })
            .sum();
        0.5 * (r2 + c2)
    }

    /// Free-dof max norm of the last residual, and `max_j |w_j ½(|x'_j|² − 1)| / w_j`.
    pub(crate) fn residual_norms(&self, model: &BeamModel) -> (f64, f64) {
        let rmax = self
            .res
            .iter()
            .zip(&self.blocked)
            .filter(|(_, b)| !**b)
            .fold(0.0f64, |m, (r, _)| m.max(r.abs()));
        let cmax = (0..model.n_points())
            .filter(|&j| model.point_is_active(j))
            .map(|j| {
                let t = self.tangents[j];
                (0.5 * (t[0] * t[0] + t[1] * t[1] + t[2] * t[2] - 1.0)).abs()
            })
            .fold(0.0f64, f64::max);
        (rmax, cmax)
    }

    fn assemble(&mut self, model: &BeamModel, jac: &JacobianForm, tension: &[f64]) {
        let n_s = self.n_s;
        let nb = self.n_blocks;
        for m in self.diag.iter_mut() {
            m.fill(0.0);
        }
        for m in self.lower.iter_mut() {
            m.fill(0.0);
        }
        for m in self.upper.iter_mut() {
            m.fill(0.0);
        }
        self.rhs.fill(0.0);
        self.used.fill(false);
        let rho = model.parameters().density;
        let ei = model.parameters().bending_stiffness;
        let w = model.point_weights();
        let dn = model.point_derivatives();
        // Geometric stiffness per element: Σ_j w_j T_j N'_j N'_jᵀ over the element's points.
        let mut kt = vec![[[0.0f64; 4]; 4]; model.n_elements()];
        if jac.geometric != 0.0 {
            for j in 0..model.n_points() {
                let f = jac.geometric * w[j] * tension[j];
                if f == 0.0 {
                    continue;
                }
                let k = &mut kt[model.point_element(j)];
                for a in 0..4 {
                    for b in 0..4 {
                        k[a][b] += f * dn[j][a] * dn[j][b];
                    }
                }
            }
        }
        for (e, el) in model.elements().iter().enumerate() {
            let m = el.mass(rho);
            let kb = el.bending(ei);
            for a in 0..4 {
                let (na, sa) = (e + a / 2, a % 2);
                for b in 0..4 {
                    let (nbk, sb) = (e + b / 2, b % 2);
                    let v = jac.mass * m[a][b] + jac.bending * kb[a][b] + kt[e][a][b];
                    if v == 0.0 {
                        continue;
                    }
                    for c in 0..DIM {
                        if self.blocked[c * n_s + 2 * e + a] || self.blocked[c * n_s + 2 * e + b] {
                            continue;
                        }
                        let (r, col) = (DIM * sa + c, DIM * sb + c);
                        let blk = if na == nbk {
                            &mut self.diag[na]
                        } else if na > nbk {
                            &mut self.lower[na]
                        } else {
                            &mut self.upper[nbk]
                        };
                        blk[(r, col)] += v;
                    }
                }
            }
        }
        // Right-hand side of the dofs and their use.
        for c in 0..DIM {
            for k in 0..n_s {
                if !self.blocked[c * n_s + k] {
                    let l = (k / 2) * BS + DIM * (k % 2) + c;
                    self.rhs[l] = -self.res[c * n_s + k];
                    self.used[l] = true;
                }
            }
        }
        // Constraint rows B (at x) and columns Gᵀ (at x̂).
        for j in 0..model.n_points() {
            if !model.point_is_active(j) {
                continue;
            }
            let (hb, q) = model.point_home(j);
            let slot = 2 * DIM + q;
            let e = model.point_element(j);
            let (t, th) = (self.tangents[j], self.tangents_hat[j]);
            let l = hb * BS + slot;
            self.used[l] = true;
            self.rhs[l] = -w[j] * 0.5 * (t[0] * t[0] + t[1] * t[1] + t[2] * t[2] - 1.0);
            for a in 0..4 {
                if dn[j][a] == 0.0 {
                    continue;
                }
                let (na, sa) = (e + a / 2, a % 2);
                let f = w[j] * dn[j][a];
                for c in 0..DIM {
                    if self.blocked[c * n_s + 2 * e + a] {
                        continue;
                    }
                    let dof = DIM * sa + c;
                    if na == hb {
                        self.diag[hb][(slot, dof)] = f * t[c];
                        self.diag[hb][(dof, slot)] = f * th[c];
                    } else {
                        debug_assert_eq!(na + 1, hb, "constraint point outside its home band");
                        self.lower[hb][(slot, dof)] = f * t[c];
                        self.upper[hb][(dof, slot)] = f * th[c];
                    }
                }
            }
        }
        for b in 0..nb {
            for l in 0..BS {
                if !self.used[b * BS + l] {
                    self.diag[b][(l, l)] = 1.0;
                }
            }
        }
    }

    /// Symmetric scaling `D A D`: dofs by `1/√H_kk`, multipliers by the inverse max norm of
    /// their scaled constraint row.
    fn apply_scaling(&mut self) {
        let nb = self.n_blocks;
        for b in 0..nb {
            for l in 0..2 * DIM {
                let d = self.diag[b][(l, l)];
                self.scale[b * BS + l] = if d > 0.0 && self.used[b * BS + l] {
                    1.0 / d.sqrt()
                } else {
                    1.0
                };
            }
        }
        for b in 0..nb {
            for q in 0..2 {
                let l = 2 * DIM + q;
                let mut m = 0.0f64;
                if self.used[b * BS + l] {
                    for col in 0..2 * DIM {
                        m = m.max((self.diag[b][(l, col)] * self.scale[b * BS + col]).abs());
                        if b > 0 {
                            m = m.max(
                                (self.lower[b][(l, col)] * self.scale[(b - 1) * BS + col]).abs(),
                            );
                        }
                    }
                }
                self.scale[b * BS + l] = if m > 0.0 { 1.0 / m } else { 1.0 };
            }
        }
        for b in 0..nb {
            let sb = &self.scale[b * BS..(b + 1) * BS];
            for col in 0..BS {
                for r in 0..BS {
                    self.diag[b][(r, col)] *= sb[r] * sb[col];
                }
            }
            if b > 0 {
                let sp = &self.scale[(b - 1) * BS..b * BS];
                for col in 0..BS {
                    for r in 0..BS {
                        self.lower[b][(r, col)] *= sb[r] * sp[col];
                        self.upper[b][(r, col)] *= sp[r] * sb[col];
                    }
                }
            }
            for l in 0..BS {
                self.rhs[b * BS + l] *= sb[l];
            }
        }
    }

    /// Block LU: `S_0 = D_0`, `X_{b−1} = S_{b−1}⁻¹ U_b` (in `upper`), `S_b = D_b − L_b X_{b−1}`.
    fn factorize(&mut self) -> bool {
        let nb = self.n_blocks;
        self.lu.clear();
        for b in 0..nb {
            let mut s = self.diag[b];
            if b > 0 {
                s -= self.lower[b] * self.upper[b];
            }
            let Some(lu) = Lu8::new(s) else {
                return false;
            };
            if b + 1 < nb {
                lu.solve_matrix(&mut self.upper[b + 1]);
            }
            self.lu.push(lu);
        }
        true
    }

    /// Solves in place in `rhs` with the last factorization.
    fn solve(&mut self) {
        let nb = self.n_blocks;
        let mut prev = [0.0f64; BS];
        for b in 0..nb {
            let mut y = [0.0f64; BS];
            y.copy_from_slice(&self.rhs[b * BS..(b + 1) * BS]);
            if b > 0 {
                let l = &self.lower[b];
                for (col, p) in prev.iter().enumerate() {
                    if *p != 0.0 {
                        for (r, yr) in y.iter_mut().enumerate() {
                            *yr -= l[(r, col)] * p;
                        }
                    }
                }
            }
            self.lu[b].solve_column(&mut y);
            self.rhs[b * BS..(b + 1) * BS].copy_from_slice(&y);
            prev = y;
        }
        for b in (0..nb.saturating_sub(1)).rev() {
            let x = &self.upper[b + 1];
            let mut z = [0.0f64; BS];
            z.copy_from_slice(&self.rhs[b * BS..(b + 1) * BS]);
            for (col, p) in prev.iter().enumerate() {
                for (r, zr) in z.iter_mut().enumerate() {
                    *zr -= x[(r, col)] * p;
                }
            }
            self.rhs[b * BS..(b + 1) * BS].copy_from_slice(&z);
            prev = z;
        }
    }
}

/// `c_m M (x − u) + EI K (c_k x + q) − s f` on all dofs (column-major), element by element;
/// the bending force on `z = c_k x + q` minus the linear field through the element's ends.
pub(crate) fn linear_residual(
    model: &BeamModel,
    form: &ResidualForm<'_>,
    ei: f64,
    load: &[f64],
    x: &[f64],
    out: &mut [f64],
) {
    let n_s = model.n_scalar();
    let rho = model.parameters().density;
    for (o, f) in out.iter_mut().zip(load) {
        *o = -form.load * f;
    }
    for (e, el) in model.elements().iter().enumerate() {
        let h = el.length;
        let m = el.mass(rho);
        let k = el.bending(ei);
        for c in 0..DIM {
            let base = c * n_s + 2 * e;
            let xe = &x[base..base + 4];
            let d: [f64; 4] = std::array::from_fn(|a| {
                let u = if form.anchor.is_empty() {
                    0.0
                } else {
                    form.anchor[base + a]
                };
                xe[a] - u
            });
            let z: [f64; 4] = std::array::from_fn(|a| {
                let q = if form.offset.is_empty() {
                    0.0
                } else {
                    form.offset[base + a]
                };
                form.bending * xe[a] + q
            });
            let g = (z[2] - z[0]) / h;
            let (s1, s3) = (z[1] - g, z[3] - g);
            for a in 0..4 {
                let mass = if form.mass != 0.0 {
                    form.mass * (m[a][0] * d[0] + m[a][1] * d[1] + m[a][2] * d[2] + m[a][3] * d[3])
                } else {
                    0.0
                };
                out[base + a] += mass + k[a][1] * s1 + k[a][3] * s3;
            }
        }
    }
}

/// `max_j ||x'_j| − 1|` over the active points of the tangents `t`.
pub(crate) fn max_stretch_error(model: &BeamModel, t: &[[f64; 3]]) -> f64 {
    t.iter()
        .enumerate()
        .filter(|(j, _)| model.point_is_active(*j))
        .map(|(_, v)| (norm(*v) - 1.0).abs())
        .fold(0.0, f64::max)
}

/// What the Newton loop of [`newton`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct NewtonOutcome {
    pub report: crate::kkt::NewtonKktReport,
    pub converged: bool,
    /// Changes of the seabed's active set over the solve.
    pub contact_changes: usize,
}

/// Updates the seabed's active set from the residual in `kkt.res` at `x`: a held node whose
/// reaction is negative is released, a free node below the plane is projected and held.
/// Returns the number of changes (0 without a seabed).
pub(crate) fn update_contact(
    model: &BeamModel,
    kkt: &BlockKkt,
    x: &mut [f64],
    contact: &mut ActiveSet,
    reaction_floor: f64,
) -> usize {
    let Some(sb) = model.seabed() else {
        return 0;
    };
    let n_s = model.n_scalar();
    contact.held.resize(model.n_nodes(), false);
    let mut changes = 0;
    for i in 0..model.n_nodes() {
        let k = sb.axis * n_s + 2 * i;
        if model.is_fixed(2 * i) {
            continue;
        }
        if contact.held[i] {
            if kkt.res[k] < -reaction_floor {
                contact.held[i] = false;
                changes += 1;
            }
        } else if x[k] < sb.level {
            x[k] = sb.level;
            contact.held[i] = true;
            changes += 1;
        }
    }
    changes
}

/// Newton on the KKT system (see the module documentation) from `x`, `tension`, with the
/// stopping rule of [`crate::kkt`]: the constraint below its tolerance and each update below
/// its tolerance or stalled, and (with a seabed) an unchanged active set.
pub(crate) fn newton(
    kkt: &mut BlockKkt,
    model: &BeamModel,
    form: &ResidualForm<'_>,
    jac: &JacobianForm,
    x: &mut [f64],
    tension: &mut [f64],
    contact: &mut ActiveSet,
    settings: &crate::kkt::NewtonKktSettings,
) -> Result<NewtonOutcome, BeamError> {
    let l = model.length();
    let w = model.point_weights();
    let floor = 1e-10 * model.load().iter().fold(1e-300f64, |m, f| m.max(f.abs()));
    let mut out = NewtonOutcome::default();
    let (mut dx_prev, mut dt_prev) = (f64::INFINITY, f64::INFINITY);
    let mut trial = vec![[0.0; 3]; model.n_points()];
    for it in 1..=settings.max_iterations {
        kkt.set_blocked(model, contact);
        kkt.residual(model, form, x, tension);
        let changes = update_contact(model, kkt, x, contact, floor);
        if changes > 0 {
            out.contact_changes += changes;
            kkt.set_blocked(model, contact);
            kkt.residual(model, form, x, tension);
        }
        let (stat, _) = kkt.residual_norms(model);
        if !kkt.factor_solve(model, jac, tension)? {
            return Ok(out);
        }
        let m = kkt.apply_update(model, x, tension);
        model.normalize_nodal_tangents(x);
        model.tangents_at_points(x, &mut trial);
        let (mut cmax, mut c2) = (0.0f64, 0.0);
        for j in 0..model.n_points() {
            if !model.point_is_active(j) {
                continue;
            }
            let e = norm(trial[j]) - 1.0;
            cmax = cmax.max(e.abs());
            c2 += w[j] * e * e;
        }
        out.report = crate::kkt::NewtonKktReport {
            iterations: it,
            step_change: m.step_change,
            multiplier_change: m.multiplier_change,
            max_constraint_violation: cmax,
            constraint_residual: (c2 / l).sqrt(),
            stationarity_residual: stat,
        };
        if !(m.step_change.is_finite() && m.multiplier_change.is_finite()) {
            return Ok(out);
        }
        let stalled = |now: f64, prev: f64| it >= 2 && now > 0.1 * prev;
        let x_ok = m.step_change <= settings.step_tolerance
            || (m.step_change <= 1e4 * settings.step_tolerance && stalled(m.step_change, dx_prev));
        let t_ok = m.multiplier_change <= settings.multiplier_tolerance
            || stalled(m.multiplier_change, dt_prev);
        let contact_ok = changes == 0 && !penetrates(model, x);
        if cmax <= settings.constraint_tolerance && x_ok && t_ok && contact_ok {
            out.converged = true;
            return Ok(out);
        }
        dx_prev = m.step_change;
        dt_prev = m.multiplier_change;
    }
    Ok(out)
}

/// Whether a node is below the seabed.
pub(crate) fn penetrates(model: &BeamModel, x: &[f64]) -> bool {
    model.seabed().is_some_and(|sb| {
        let n_s = model.n_scalar();
        (0..model.n_nodes()).any(|i| x[sb.axis * n_s + 2 * i] < sb.level)
    })
}
