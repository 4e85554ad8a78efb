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

use crate::block_tridiag::BS;
use crate::error::BeamError;
use crate::model::{BeamModel, DIM, norm};

/// A row-major 8×8 block.
type Blk = [[f64; BS]; BS];

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
    /// `D_b` (row-major), assembled and scaled, then factorized in place (`P S = L U`).
    diag: Vec<Blk>,
    piv: Vec<[u8; BS]>,
    /// The scaled scalar 2×2 coupling of the Hessian part (the same for the three components)
    /// of node `b` (rows) with node `b − 1` (columns), entry `2σ + τ` (`σ`, `τ` = 0 position,
    /// 1 tangent). `L_b`'s dof part is `hl[b] ⊗ I₃` and `U_b`'s its transpose (the Hessian part
    /// is symmetric).
    hl: Vec<[f64; 4]>,
    /// The constraint points of each element (`element_points[e]..element_points[e + 1]`)
    /// and those homed at each block (`home_points[b]..home_points[b + 1]` into `by_home`).
    element_points: Vec<usize>,
    home_points: Vec<usize>,
    by_home: Vec<usize>,
    /// The rows `B` (in `L_b`) and the columns `Gᵀ` (in `U_b`) of the multipliers homed at
    /// `b` on node `b − 1`'s dofs (local `3σ + c`), one per slot.
    bl: Vec<[[f64; 6]; 2]>,
    gu: Vec<[[f64; 6]; 2]>,
    /// 1 for an unknown of the system, 0 for a blocked dof or an unused multiplier slot.
    open: Vec<[f64; BS]>,
    /// Per block unknown (`8 b + local`): its scale and the right-hand side / solution.
    scale: Vec<f64>,
    rhs: Vec<f64>,
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
        let mut kkt = Self {
            n_blocks,
            n_s,
            diag: vec![[[0.0; BS]; BS]; n_blocks],
            piv: vec![[0; BS]; n_blocks],
            element_points: Vec::new(),
            home_points: Vec::new(),
            by_home: Vec::new(),
            hl: vec![[0.0; 4]; n_blocks],
            bl: vec![[[0.0; 6]; 2]; n_blocks],
            gu: vec![[[0.0; 6]; 2]; n_blocks],
            open: vec![[0.0; BS]; n_blocks],
            scale: vec![1.0; n_blocks * BS],
            rhs: vec![0.0; n_blocks * BS],
            tangents: vec![[0.0; 3]; n_p],
            tangents_hat: vec![[0.0; 3]; n_p],
            res: vec![0.0; DIM * n_s],
            blocked: vec![false; DIM * n_s],
            factorizations: 0,
        };
        let n_el = model.n_elements();
        kkt.element_points = vec![0; n_el + 1];
        kkt.home_points = vec![0; n_blocks + 1];
        for j in 0..n_p {
            kkt.element_points[model.point_element(j) + 1] += 1;
            kkt.home_points[model.point_home(j).0 + 1] += 1;
        }
        for e in 0..n_el {
            kkt.element_points[e + 1] += kkt.element_points[e];
        }
        for b in 0..n_blocks {
            kkt.home_points[b + 1] += kkt.home_points[b];
        }
        // Points come element by element (`point_element` is nondecreasing in `j`).
        debug_assert!((1..n_p).all(|j| model.point_element(j - 1) <= model.point_element(j)));
        let mut fill = kkt.home_points.clone();
        kkt.by_home = vec![0; n_p];
        for j in 0..n_p {
            let b = model.point_home(j).0;
            kkt.by_home[fill[b]] = j;
            fill[b] += 1;
        }
        kkt.set_blocked(model, &ActiveSet::default());
        kkt
    }

    /// Numeric factorizations so far.
    pub(crate) fn factorization_count(&self) -> usize {
        self.factorizations
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
        for (b, o) in self.open.iter_mut().enumerate() {
            for l in 0..2 * DIM {
                o[l] = if self.blocked[(l % DIM) * n_s + 2 * b + l / DIM] {
                    0.0
                } else {
                    1.0
                };
            }
            o[2 * DIM] = 0.0;
            o[2 * DIM + 1] = 0.0;
        }
        for j in 0..model.n_points() {
            if model.point_is_active(j) {
                let (b, q) = model.point_home(j);
                self.open[b][2 * DIM + q] = 1.0;
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
        let ok = pulp::Arch::new().dispatch(Factorize {
            kkt: self,
            model,
            jac,
            tension,
        });
        self.factorizations += 1;
        if !ok {
            return Ok(false);
        }
        pulp::Arch::new().dispatch(Solve(self));
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
            self.rhs[(k / 2) * BS + DIM * (k % 2) + c]
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

    /// Assembles block `b` of the scaled Newton matrix (`D_b`, `hl[b]`, `bl[b]`, `gu[b]`) and
    /// of the right-hand side; `hess` holds `j_m M_e + j_k EI K_e` of element `b − 1` on entry
    /// and of element `b` on return. Needs the scales of block `b − 1`.
    ///
    /// Scaling `D A D`: a dof by `1/√H_kk` (the same for the three components of a node's
    /// position or tangent), a multiplier by the inverse max norm of its scaled constraint row.
    /// Every entry is summed in the order of a global assembly (the elements' `M`, `K` in
    /// element order, then the geometric stiffness point by point).
    #[inline(always)]
    fn assemble_block(
        &mut self,
        model: &BeamModel,
        jac: &JacobianForm,
        tension: &[f64],
        b: usize,
        hess: &mut [[f64; 4]; 4],
    ) {
        let (nb, n_s) = (self.n_blocks, self.n_s);
        let w = model.point_weights();
        let dn = model.point_derivatives();
        // The scalar Hessian couplings of node b: element b − 1's end, element b's start,
        // then the geometric stiffness of their points.
        let (mut hd, mut hl) = ([0.0f64; 4], [0.0f64; 4]);
        if b > 0 {
            for sg in 0..2 {
                for tg in 0..2 {
                    hd[2 * sg + tg] += hess[2 + sg][2 + tg];
                    hl[2 * sg + tg] += hess[2 + sg][tg];
                }
            }
        }
        if b + 1 < nb {
            let el = &model.elements()[b];
            let m = el.mass(model.parameters().density);
            let k = el.bending(model.parameters().bending_stiffness);
            *hess = std::array::from_fn(|a| {
                std::array::from_fn(|c| jac.mass * m[a][c] + jac.bending * k[a][c])
            });
            for sg in 0..2 {
                for tg in 0..2 {
                    hd[2 * sg + tg] += hess[sg][tg];
                }
            }
        }
        if jac.geometric != 0.0 {
            if b > 0 {
                for j in self.element_points[b - 1]..self.element_points[b] {
                    let f = jac.geometric * w[j] * tension[j];
                    if f != 0.0 {
                        let d = &dn[j];
                        for sg in 0..2 {
                            for tg in 0..2 {
                                hd[2 * sg + tg] += f * d[2 + sg] * d[2 + tg];
                                hl[2 * sg + tg] += f * d[2 + sg] * d[tg];
                            }
                        }
                    }
                }
            }
            if b + 1 < nb {
                for j in self.element_points[b]..self.element_points[b + 1] {
                    let f = jac.geometric * w[j] * tension[j];
                    if f != 0.0 {
                        let d = &dn[j];
                        for sg in 0..2 {
                            for tg in 0..2 {
                                hd[2 * sg + tg] += f * d[sg] * d[tg];
                            }
                        }
                    }
                }
            }
        }
        // The dof scales and the scaled dof blocks.
        let ss = [hd[0], hd[3]].map(|d| if d > 0.0 { 1.0 / d.sqrt() } else { 1.0 });
        for l in 0..2 * DIM {
            self.scale[b * BS + l] = ss[l / DIM];
        }
        let o = self.open[b];
        let d = &mut self.diag[b];
        *d = [[0.0; BS]; BS];
        for sg in 0..2 {
            for tg in 0..2 {
                let v = hd[2 * sg + tg] * ss[sg] * ss[tg];
                for c in 0..DIM {
                    let (r, col) = (DIM * sg + c, DIM * tg + c);
                    d[r][col] = v * o[r] * o[col];
                }
            }
        }
        if b > 0 {
            let sp = [self.scale[(b - 1) * BS], self.scale[(b - 1) * BS + DIM]];
            for sg in 0..2 {
                for tg in 0..2 {
                    hl[2 * sg + tg] *= ss[sg] * sp[tg];
                }
            }
        }
        self.hl[b] = hl;
        self.bl[b] = [[0.0; 6]; 2];
        self.gu[b] = [[0.0; 6]; 2];
        for l in 0..2 * DIM {
            let (sg, c) = (l / DIM, l % DIM);
            self.rhs[b * BS + l] = -self.res[c * n_s + 2 * b + sg] * ss[sg] * o[l];
        }
        // Constraint rows B (at x) and columns Gᵀ (at x̂) of the points homed at b, scaled.
        // (A nodal point's zero entries on node b + 1 read that node's previous, finite,
        // scale and add nothing.)
        for &j in &self.by_home[self.home_points[b]..self.home_points[b + 1]] {
            if !model.point_is_active(j) {
                continue;
            }
            let (hb, q) = model.point_home(j);
            let slot = 2 * DIM + q;
            let e = model.point_element(j);
            let (t, th) = (self.tangents[j], self.tangents_hat[j]);
            let mut m = 0.0f64;
            for a in 0..4 {
                let na = e + a / 2;
                let s = self.scale[na * BS + DIM * (a % 2)];
                for c in 0..DIM {
                    let o = self.open[na][DIM * (a % 2) + c];
                    m = m.max((w[j] * dn[j][a] * t[c] * s * o).abs());
                }
            }
            let sm = if m > 0.0 { 1.0 / m } else { 1.0 };
            self.scale[hb * BS + slot] = sm;
            self.rhs[hb * BS + slot] =
                -sm * w[j] * 0.5 * (t[0] * t[0] + t[1] * t[1] + t[2] * t[2] - 1.0);
            for a in 0..4 {
                if dn[j][a] == 0.0 {
                    continue;
                }
                let (na, sa) = (e + a / 2, a % 2);
                let f = w[j] * dn[j][a] * sm * self.scale[na * BS + DIM * sa];
                for c in 0..DIM {
                    let dof = DIM * sa + c;
                    let o = self.open[na][dof];
                    if na == hb {
                        self.diag[hb][slot][dof] = f * t[c] * o;
                        self.diag[hb][dof][slot] = f * th[c] * o;
                    } else {
                        debug_assert_eq!(na + 1, hb, "constraint point outside its home band");
                        self.bl[hb][q][dof] = f * t[c] * o;
                        self.gu[hb][q][dof] = f * th[c] * o;
                    }
                }
            }
        }
        for l in 0..BS {
            if self.open[b][l] == 0.0 {
                self.diag[b][l][l] = 1.0;
                if l >= 2 * DIM {
                    self.scale[b * BS + l] = 1.0;
                    self.rhs[b * BS + l] = 0.0;
                }
            }
        }
    }

    /// Assembles (see [`BlockKkt::assemble_block`]) and factorizes the scaled Newton matrix
    /// block by block, each block while it is hot in cache.
    ///
    /// Block LU: `S_0 = D_0`, `X_{b−1} = S_{b−1}⁻¹ U_b`, `S_b = D_b − L_b X_{b−1}`, with the
    /// compact `L_b` (`hl[b] ⊗ I₃` and the rows `bl[b]`) and `U_b` (`hl[b]ᵀ ⊗ I₃` and the
    /// columns `gu[b]`), and the forward substitution `y_b = S_b⁻¹ (r_b − L_b y_{b−1})` in
    /// `rhs`. `X_{b−1}` is used once and not kept (the back substitution applies
    /// `S_b⁻¹ U_{b+1}` to a vector instead). Blocked rows stay unit rows.
    #[inline(always)]
    fn factorize<S: pulp::Simd>(
        &mut self,
        simd: S,
        model: &BeamModel,
        jac: &JacobianForm,
        tension: &[f64],
    ) -> bool {
        let nb = self.n_blocks;
        let mut xp: Blk = [[0.0; BS]; BS];
        let mut prev = [0.0f64; BS];
        let mut hess = [[0.0f64; 4]; 4];
        self.assemble_block(model, jac, tension, 0, &mut hess);
        for b in 0..nb {
            // Block b + 1 is assembled one step ahead: U_{b+1} enters X_b below.
            if b + 1 < nb {
                self.assemble_block(model, jac, tension, b + 1, &mut hess);
            }
            let mut s = self.diag[b];
            if b > 0 {
                let o = &self.open[b];
                let hl = self.hl[b];
                for sg in 0..2 {
                    for c in 0..DIM {
                        let r = DIM * sg + c;
                        if o[r] == 0.0 {
                            continue;
                        }
                        for tg in 0..2 {
                            axpy(simd, &mut s[r], -hl[2 * sg + tg], &xp[DIM * tg + c]);
                        }
                    }
                }
                for q in 0..2 {
                    let r = 2 * DIM + q;
                    if o[r] == 0.0 {
                        continue;
                    }
                    for l in 0..2 * DIM {
                        let v = self.bl[b][q][l];
                        if v != 0.0 {
                            axpy(simd, &mut s[r], -v, &xp[l]);
                        }
                    }
                }
            }
            if !lu8(simd, &mut s, &mut self.piv[b]) {
                return false;
            }
            // The forward substitution's block `b` beside the elimination: the two
            // recursions are independent, so the processor overlaps their latencies.
            let mut y = [0.0f64; BS];
            y.copy_from_slice(&self.rhs[b * BS..(b + 1) * BS]);
            if b > 0 {
                self.subtract_lower(b, &prev, &mut y);
            }
            lu8_solve(&s, &self.piv[b], &mut y);
            self.rhs[b * BS..(b + 1) * BS].copy_from_slice(&y);
            prev = y;
            if b + 1 < nb {
                xp = self.upper(b + 1);
                lu8_solve_rows(simd, &s, &self.piv[b], &mut xp);
            }
            self.diag[b] = s;
        }
        true
    }

    /// `y −= L_b y_{b−1}` with the compact `L_b` (`hl[b] ⊗ I₃` and the rows `bl[b]`).
    #[inline(always)]
    fn subtract_lower(&self, b: usize, prev: &[f64; BS], y: &mut [f64; BS]) {
        let (o, hl) = (&self.open[b], self.hl[b]);
        for sg in 0..2 {
            for c in 0..DIM {
                let r = DIM * sg + c;
                y[r] -= o[r] * (hl[2 * sg] * prev[c] + hl[2 * sg + 1] * prev[DIM + c]);
            }
        }
        for q in 0..2 {
            let row = &self.bl[b][q];
            let mut acc = 0.0;
            for l in 0..2 * DIM {
                acc += row[l] * prev[l];
            }
            y[2 * DIM + q] -= o[2 * DIM + q] * acc;
        }
    }

    /// `U_b` as a row-major block: rows node `b − 1`'s dofs, columns node `b`'s dofs
    /// (`hl[b]ᵀ ⊗ I₃`) and the multipliers homed at `b` (`gu[b]`).
    #[inline(always)]
    fn upper(&self, b: usize) -> Blk {
        let mut u: Blk = [[0.0; BS]; BS];
        let hl = self.hl[b];
        let (o0, o1) = (&self.open[b - 1], &self.open[b]);
        for tg in 0..2 {
            for c in 0..DIM {
                let r = DIM * tg + c;
                if o0[r] == 0.0 {
                    continue;
                }
                for sg in 0..2 {
                    u[r][DIM * sg + c] = hl[2 * sg + tg] * o1[DIM * sg + c];
                }
                u[r][2 * DIM] = self.gu[b][0][r];
                u[r][2 * DIM + 1] = self.gu[b][1][r];
            }
        }
        u
    }

    /// The back substitution in place in `rhs` (the forward one ran beside the
    /// factorization): `z_b = y_b − S_b⁻¹ (U_{b+1} z_{b+1})`.
    #[inline(always)]
    fn solve(&mut self) {
        let nb = self.n_blocks;
        let mut prev = [0.0f64; BS];
        prev.copy_from_slice(&self.rhs[(nb - 1) * BS..nb * BS]);
        for b in (0..nb.saturating_sub(1)).rev() {
            let (hl, o0, o1) = (self.hl[b + 1], &self.open[b], &self.open[b + 1]);
            let mut uz = [0.0f64; BS];
            for tg in 0..2 {
                for c in 0..DIM {
                    let r = DIM * tg + c;
                    uz[r] = o0[r]
                        * (hl[tg] * o1[c] * prev[c]
                            + hl[2 + tg] * o1[DIM + c] * prev[DIM + c]
                            + self.gu[b + 1][0][r] * prev[2 * DIM]
                            + self.gu[b + 1][1][r] * prev[2 * DIM + 1]);
                }
            }
            lu8_solve(&self.diag[b], &self.piv[b], &mut uz);
            let z = &mut self.rhs[b * BS..(b + 1) * BS];
            for r in 0..BS {
                z[r] -= uz[r];
            }
            prev.copy_from_slice(z);
        }
    }
}

/// [`BlockKkt::factorize`] compiled for the machine's vector width (runtime dispatch).
struct Factorize<'a> {
    kkt: &'a mut BlockKkt,
    model: &'a BeamModel,
    jac: &'a JacobianForm,
    tension: &'a [f64],
}

impl pulp::WithSimd for Factorize<'_> {
    type Output = bool;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) -> bool {
        self.kkt.factorize(simd, self.model, self.jac, self.tension)
    }
}

/// [`BlockKkt::solve`] compiled for the machine's vector width (runtime dispatch).
struct Solve<'a>(&'a mut BlockKkt);

impl pulp::WithSimd for Solve<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        self.0.solve()
    }
}

/// `y += a x` on 8-wide rows, in the machine's vector width (each lane rounds `a x`, then
/// the sum: the scalar loop's operations).
#[inline(always)]
fn axpy<S: pulp::Simd>(simd: S, y: &mut [f64; BS], a: f64, x: &[f64; BS]) {
    let (yh, yt) = S::as_mut_simd_f64s(y);
    let (xh, xt) = S::as_simd_f64s(x);
    let av = simd.splat_f64s(a);
    for (yv, xv) in yh.iter_mut().zip(xh) {
        *yv = simd.add_f64s(*yv, simd.mul_f64s(av, *xv));
    }
    for (yv, xv) in yt.iter_mut().zip(xt) {
        *yv += a * xv;
    }
}

/// `y *= a` on an 8-wide row, in the machine's vector width.
#[inline(always)]
fn scale_row<S: pulp::Simd>(simd: S, y: &mut [f64; BS], a: f64) {
    let (yh, yt) = S::as_mut_simd_f64s(y);
    let av = simd.splat_f64s(a);
    for yv in yh.iter_mut() {
        *yv = simd.mul_f64s(*yv, av);
    }
    for yv in yt.iter_mut() {
        *yv *= a;
    }
}

/// Expands `$body` for `$k` = 0, 1, …, 7 (literal indices, so that the 8×8 kernels below
/// keep their blocks in registers instead of indexing them at run time).
macro_rules! unroll8 {
    ($k:ident => $body:block) => {
        unroll8!(@ $k $body 0 1 2 3 4 5 6 7)
    };
    (@ $k:ident $body:block $($n:literal)*) => {
        $({
            #[allow(clippy::identity_op, clippy::erasing_op)]
            let $k: usize = $n;
            $body
        })*
    };
}

/// Exchanges rows `k` and `p ≥ k` of `a` with literal row indices.
#[inline(always)]
fn swap_rows(a: &mut Blk, k: usize, p: usize) {
    for i in k + 1..BS {
        if i == p {
            a.swap(k, i);
        }
    }
}

/// LU with partial pivoting of a row-major 8×8 block in place, `P S = L U` (unit `L` below the
/// diagonal, rows exchanged as they are pivoted); `false` if a pivot column is zero or not
/// finite.
///
/// The multipliers are kept apart while eliminating so that every row update runs over the
/// whole 8-wide row (the entries left of the diagonal it touches are overwritten by `L` at the
/// end); each entry of `U` sees the same operations in the same order as in the textbook
/// loop over `j > k`.
#[inline(always)]
fn lu8<S: pulp::Simd>(simd: S, a: &mut Blk, piv: &mut [u8; BS]) -> bool {
    let mut lower: Blk = [[0.0; BS]; BS];
    let mut ok = true;
    unroll8!(k => {
        let mut p = k;
        let mut m = a[k][k].abs();
        for i in k + 1..BS {
            let v = a[i][k].abs();
            if v > m {
                m = v;
                p = i;
            }
        }
        ok &= m != 0.0 && m.is_finite();
        piv[k] = p as u8;
        swap_rows(a, k, p);
        swap_rows(&mut lower, k, p);
        let inv = 1.0 / a[k][k];
        let rk = a[k];
        for i in k + 1..BS {
            let l = a[i][k] * inv;
            lower[i][k] = l;
            axpy(simd, &mut a[i], -l, &rk);
        }
    });
    for i in 1..BS {
        a[i][..i].copy_from_slice(&lower[i][..i]);
    }
    ok
}

/// Solves `S x = b` with the factorization of [`lu8`], in place.
#[inline(always)]
fn lu8_solve(a: &Blk, piv: &[u8; BS], x: &mut [f64; BS]) {
    unroll8!(k => {
        let p = piv[k] as usize;
        for i in k + 1..BS {
            if i == p {
                x.swap(k, i);
            }
        }
    });
    unroll8!(k => {
        let xk = x[k];
        for i in k + 1..BS {
            x[i] -= a[i][k] * xk;
        }
    });
    unroll8!(kk => {
        let k = BS - 1 - kk;
        x[k] /= a[k][k];
        let xk = x[k];
        for i in 0..k {
            x[i] -= a[i][k] * xk;
        }
    });
}

/// Solves `S X = B` for a row-major `B` in place (8-wide row operations).
#[inline(always)]
fn lu8_solve_rows<S: pulp::Simd>(simd: S, a: &Blk, piv: &[u8; BS], bm: &mut Blk) {
    unroll8!(k => {
        swap_rows(bm, k, piv[k] as usize);
    });
    unroll8!(k => {
        let rk = bm[k];
        for i in k + 1..BS {
            axpy(simd, &mut bm[i], -a[i][k], &rk);
        }
    });
    unroll8!(kk => {
        let k = BS - 1 - kk;
        let inv = 1.0 / a[k][k];
        scale_row(simd, &mut bm[k], inv);
        let rk = bm[k];
        for i in 0..k {
            axpy(simd, &mut bm[i], -a[i][k], &rk);
        }
    });
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
/// stopping rule of [`crate::kkt`] — the constraint below its tolerance, each update below its
/// tolerance or stalled, and (with a seabed) an unchanged active set — except that an update
/// is measured by the error it leaves, estimated from the contraction `q = δ_k/δ_{k−1}` as
/// `q δ_k` when Newton contracts (`q < 0.1`): the quadratic convergence then makes the
/// confirming iteration unnecessary (2 iterations per step instead of 3 at `Δt = 0.01`).
#[allow(clippy::too_many_arguments)]
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
        // The error left after an update, estimated from the contraction `q = now/prev`:
        // `q · now` (quadratic convergence makes it far below `now`).
        let left = |now: f64, prev: f64| {
            if it >= 2 && now < 0.1 * prev {
                now * now / prev
            } else {
                now
            }
        };
        let x_ok = left(m.step_change, dx_prev) <= settings.step_tolerance
            || (m.step_change <= 1e4 * settings.step_tolerance && stalled(m.step_change, dx_prev));
        let t_ok = left(m.multiplier_change, dt_prev) <= settings.multiplier_tolerance
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

#[cfg(test)]
mod timing {
    use super::*;
    use crate::model::{BeamOptions, BeamParameters, BeamState, ConstraintPoints, End};

    /// The CPU time of the calling thread (ns; Linux `schedstat`, 0 elsewhere).
    fn thread_cpu_ns() -> u64 {
        std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    /// Phase timings of one Newton iteration of the energy-conserving form at N = 1e4
    /// (minimum over repetitions), for the Gauss points and for nodes and midpoints, for
    /// profiling by hand: `cargo test --release -p fem-beam kkt_block::timing -- --ignored
    /// --nocapture` (`KKT_TIMING_REPS` sets the repetitions, 15 by default).
    #[test]
    #[ignore = "timing by hand"]
    fn phases() {
        let n = 10_000;
        let reps: usize = std::env::var("KKT_TIMING_REPS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(15);
        {
            // The set-up of `benches/cable_vs_moordyn.rs`: the model and the static start.
            let (mut t_model, mut t_static) = (f64::INFINITY, f64::INFINITY);
            let mut its = 0;
            let cpu0 = thread_cpu_ns();
            for _ in 0..reps.min(10) {
                let t = std::time::Instant::now();
                let mut p = BeamParameters::paper_95();
                p.n_elements = n;
                let options = BeamOptions {
                    constraint_points: ConstraintPoints::NodesAndMidpoints,
                    seabed: None,
                };
                let m = BeamModel::with_options(p, options).unwrap();
                t_model = t_model.min(t.elapsed().as_secs_f64());
                let t = std::time::Instant::now();
                let guess =
                    BeamState::try_arc(&m, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]).unwrap();
                let settings = crate::NewtonKktSettings::statics();
                let sol = crate::solve_static_newton(&m, &guess, 0.0, &settings).unwrap();
                t_static = t_static.min(t.elapsed().as_secs_f64());
                its = sol.factorization_count;
            }
            let cpu = (thread_cpu_ns() - cpu0) as f64 * 1e-9 / reps.min(10) as f64;
            eprintln!(
                "set-up at N = {n}: min wall: model {t_model:.4} s, static start {t_static:.4} s \
                 ({its} factorizations); mean CPU of both {cpu:.4} s"
            );
        }
        if std::env::var("KKT_TIMING_SETUP_ONLY").is_ok() {
            return;
        }
        for points in [ConstraintPoints::Gauss, ConstraintPoints::NodesAndMidpoints] {
            let mut p = BeamParameters::paper_95();
            p.n_elements = n;
            let options = BeamOptions {
                constraint_points: points,
                seabed: None,
            };
            let model = BeamModel::with_options(p, options).unwrap();
            let model = model.with_ends(End::pinned([0.0; 3]), End::Free).unwrap();
            let x0 = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
            let x = x0.to_columns();
            let tension = vec![100.0; model.n_points()];
            let mut kkt = BlockKkt::new(&model);
            let form = ResidualForm {
                mass: 2e4,
                anchor: &x,
                bending: 0.5,
                offset: &x,
                load: 1.0,
                theta: 0.5,
                reference: &x,
            };
            let jac = JacobianForm {
                mass: 2e4,
                bending: 0.5,
                geometric: 0.5,
            };
            // (minimum wall time, mean CPU time of the thread) per element.
            let time = |f: &mut dyn FnMut()| {
                let mut best = f64::INFINITY;
                let cpu0 = thread_cpu_ns();
                for _ in 0..reps {
                    let t = std::time::Instant::now();
                    f();
                    best = best.min(t.elapsed().as_secs_f64());
                }
                let cpu = (thread_cpu_ns() - cpu0) as f64 / reps as f64;
                (best * 1e9 / n as f64, cpu / n as f64)
            };
            let t_res = time(&mut || kkt.residual(&model, &form, &x, &tension));
            let t_fac = time(&mut || {
                assert!(pulp::Arch::new().dispatch(Factorize {
                    kkt: &mut kkt,
                    model: &model,
                    jac: &jac,
                    tension: &tension,
                }));
            });
            let t_sol = time(&mut || pulp::Arch::new().dispatch(Solve(&mut kkt)));
            // A whole iteration as `newton` does it: residual, norms, assembly, factorization,
            // solve, update, nodal normalization, constraint at the trial point.
            let (mut xi, mut ti) = (x.clone(), tension.clone());
            let mut trial = vec![[0.0; 3]; model.n_points()];
            let t_it = time(&mut || {
                xi.copy_from_slice(&x);
                ti.copy_from_slice(&tension);
                kkt.residual(&model, &form, &xi, &ti);
                std::hint::black_box(kkt.residual_norms(&model));
                assert!(kkt.factor_solve(&model, &jac, &ti).unwrap());
                std::hint::black_box(kkt.apply_update(&model, &mut xi, &mut ti));
                model.normalize_nodal_tangents(&mut xi);
                model.tangents_at_points(&xi, &mut trial);
            });
            eprintln!(
                "{points:?}: ns per element (min wall / mean CPU): residual {:.0} / {:.0}, \
                 assembly + factorization + forward substitution {:.0} / {:.0}, back \
                 substitution {:.0} / {:.0}; whole iteration {:.0} / {:.0}",
                t_res.0, t_res.1, t_fac.0, t_fac.1, t_sol.0, t_sol.1, t_it.0, t_it.1
            );
        }
    }
}
