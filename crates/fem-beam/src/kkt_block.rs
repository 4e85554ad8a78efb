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
//! multipliers whose home is `b` (local `6 + slot`, [`Beam`]'s point homes). Prescribed
//! dofs, dofs held by the seabed, inactive points and unused slots get a unit diagonal. Before
//! factoring, unknowns are scaled symmetrically: dofs by `1/√H_kk`, multipliers so that their
//! scaled constraint row has unit max norm.
//!
//! # Two threads
//! From [`TWISTED_MIN_BLOCKS`] blocks on, the factorization is twisted ("burn at both ends",
//! [`twisted`]): the top half is assembled and eliminated top-down as above while the bottom
//! half is assembled and eliminated bottom-up on a second thread, in a mirrored layout where a
//! point touching both nodes of its element `e` is homed at `e` (the same slot), so that, as
//! top-down, a multiplier's row is eliminated after the node it shares with the block beyond.
//! (Bottom-up in the top-down layout, the last block's constraint rows can be rank deficient:
//! a pinned end with parallel tangents.) The halves meet at node `m = ⌊nb/2⌋`: a dense block
//! of its dofs, its points and element `m`'s two-node points. `m` depends on `nb` only, so
//! the result is the same bits on any number of threads; below the threshold the serial path.
//! The residual is then evaluated in two halves too ([`BlockKkt::residual`]).
//!
//! # Seabed
//! Frictionless unilateral contact of the whole curve with a horizontal plane, by the Bézier
//! control points of the elements ([`crate::seabed`]): conditions on one node's height and
//! tangent each, kept by a primal–dual active set inside the Newton loop. An active condition
//! is a blocked unknown — both vertical dofs of a node with two active conditions, or the
//! vertical `g` of the node's shifted basis `(g, σ)`, `p = g − c σ` with one ([`BlockKkt`]'s
//! `shift`, the same for the three components so the Hessian stays `H ⊗ I₃`) — so the block
//! structure never changes and the curve stays above the plane to round-off.

use crate::block_tridiag::BS;
use crate::error::BeamError;
use crate::model::{Beam, DIM, norm, slopes_about_chord};

mod dense;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod timing;
mod twisted;

use dense::{axpy, lu8, lu8_solve, lu8_solve_rows};

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

pub(crate) use crate::seabed::ActiveSet;

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
    /// The mirrored layout of the twisted factorization's bottom half: a point that touches
    /// both nodes of its element `e` (homed at `e + 1` above) has its mirrored home at `e`
    /// (the same slot); `mhome_points`/`by_mhome` as `home_points`/`by_home`, `open_up` as
    /// `open`, `two[b][q]`: mirrored slot `(b, q)` holds such an active point.
    mhome_points: Vec<usize>,
    by_mhome: Vec<usize>,
    open_up: Vec<[f64; BS]>,
    two: Vec<[bool; 2]>,
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
    /// Per node, the shift `c` of the basis `(g, σ)`, `p = g − c σ`, in which the node's dofs
    /// are unknowns (all three components alike; 0: the plain basis): a node held by one
    /// seabed condition `p + c σ ≥ L` has its vertical `g` blocked ([`crate::seabed`], (S3)).
    shift: Vec<f64>,
    factorizations: usize,
    /// The twisted factorization on two threads from this many blocks on (see
    /// [`TWISTED_MIN_BLOCKS`]); the serial one below.
    twisted_min_blocks: usize,
}

/// The home block of point `j` in the mirrored layout of the twisted factorization's bottom
/// half: its element's first node if it touches both nodes, else its home.
fn mirrored_home(model: &Beam, j: usize) -> usize {
    let (b, e, dn) = (
        model.point_home(j).0,
        model.point_element(j),
        model.point_derivatives()[j],
    );
    if b == e + 1 && (dn[0] != 0.0 || dn[1] != 0.0) {
        e
    } else {
        b
    }
}

/// From this many blocks on, [`BlockKkt::factor_solve`] uses the twisted factorization on two
/// threads ([`twisted`]) and [`BlockKkt::residual`] its two halves; below, the serial path.
/// Measured on a 2-core VM (the ignored test `kkt_block::timing::threshold`: whole Newton
/// iterations, the pool's second thread woken three times in each), twisted / serial wall
/// time, 3 runs: N = 100: 1.01–1.30, 200: 0.80–0.96, 300: 0.70–0.83, 500: 0.63–0.84,
/// 1000: 0.60–0.62, 5000: 0.56–0.59; again on the idle machine (docs/performance.md): 50: 2.76,
/// 100: 0.98, 200: 0.80, 500: 0.64, 5000: 0.57. 500 keeps a margin for slower wake-ups elsewhere.
pub(crate) const TWISTED_MIN_BLOCKS: usize = 500;

impl BlockKkt {
    /// Storage for `model`.
    pub(crate) fn new(model: &Beam) -> Self {
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
            mhome_points: Vec::new(),
            by_mhome: Vec::new(),
            open_up: vec![[0.0; BS]; n_blocks],
            two: vec![[false; 2]; n_blocks],
            scale: vec![1.0; n_blocks * BS],
            rhs: vec![0.0; n_blocks * BS],
            tangents: vec![[0.0; 3]; n_p],
            tangents_hat: vec![[0.0; 3]; n_p],
            res: vec![0.0; DIM * n_s],
            blocked: vec![false; DIM * n_s],
            shift: vec![0.0; n_blocks],
            factorizations: 0,
            twisted_min_blocks: TWISTED_MIN_BLOCKS,
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
        // The mirrored homes; the twisted path only if they are one point per slot and a
        // point touches its mirrored home and the node after it only.
        let dn = model.point_derivatives();
        kkt.mhome_points = vec![0; n_blocks + 1];
        let mut taken = vec![[false; 2]; n_blocks];
        let mut mirror_ok = true;
        for j in 0..n_p {
            let b = mirrored_home(model, j);
            let (e, q) = (model.point_element(j), model.point_home(j).1);
            mirror_ok &= !taken[b][q];
            taken[b][q] = true;
            mirror_ok &= (0..4).all(|a| dn[j][a] == 0.0 || e + a / 2 == b || e + a / 2 == b + 1);
            kkt.mhome_points[b + 1] += 1;
        }
        if !mirror_ok {
            kkt.twisted_min_blocks = usize::MAX;
        }
        for b in 0..n_blocks {
            kkt.mhome_points[b + 1] += kkt.mhome_points[b];
        }
        let mut fill = kkt.mhome_points.clone();
        kkt.by_mhome = vec![0; n_p];
        for j in 0..n_p {
            let b = mirrored_home(model, j);
            kkt.by_mhome[fill[b]] = j;
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
    pub(crate) fn set_blocked(&mut self, model: &Beam, contact: &ActiveSet) {
        let n_s = self.n_s;
        for c in 0..DIM {
            for k in 0..n_s {
                self.blocked[c * n_s + k] = model.is_fixed(k);
            }
        }
        self.shift.fill(0.0);
        if let Some(sb) = model.seabed() {
            for i in 0..self.n_blocks {
                let (held, c) = crate::seabed::blocking(model, contact, i);
                for (sg, &h) in held.iter().enumerate() {
                    self.blocked[sb.axis * n_s + 2 * i + sg] |= h;
                }
                self.shift[i] = c;
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
        for (u, o) in self.open_up.iter_mut().zip(&self.open) {
            *u = *o;
        }
        self.two.fill([false; 2]);
        for j in 0..model.n_points() {
            if model.point_is_active(j) {
                let (b, q) = model.point_home(j);
                self.open[b][2 * DIM + q] = 1.0;
                let mb = mirrored_home(model, j);
                self.open_up[mb][2 * DIM + q] = 1.0;
                self.two[mb][q] = mb != b;
            }
        }
    }

    /// Evaluates `R(x, T)` into `self.res` and the tangents at the points (on two threads
    /// with the twisted factorization, see [`BlockKkt::residual_halves`]).
    pub(crate) fn residual(
        &mut self,
        model: &Beam,
        form: &ResidualForm<'_>,
        x: &[f64],
        tension: &[f64],
    ) {
        if self.n_blocks >= self.twisted_min_blocks.max(4) {
            self.residual_halves(model, form, x, tension);
            return;
        }
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

    /// [`BlockKkt::residual`] in two halves on two threads (`rayon::join`): elements
    /// `0..E` and their points, and the rest (`E = ⌊n_el/2⌋`), each into its own rows; the top
    /// half's contributions to node `E` are added after (so the sums at node `E` are in
    /// another order than the serial loop's; the same on any number of threads).
    fn residual_halves(
        &mut self,
        model: &Beam,
        form: &ResidualForm<'_>,
        x: &[f64],
        tension: &[f64],
    ) {
        let n_s = self.n_s;
        let split = model.n_elements() / 2;
        let jp = self.element_points[split];
        let k = 2 * split;
        let (t0, t1) = self.tangents.split_at_mut(jp);
        let (h0, h1) = self.tangents_hat.split_at_mut(jp);
        let (c0, rest) = self.res.split_at_mut(n_s);
        let (c1, c2) = rest.split_at_mut(n_s);
        let (a0, b0) = c0.split_at_mut(k);
        let (a1, b1) = c1.split_at_mut(k);
        let (a2, b2) = c2.split_at_mut(k);
        let mut spill = [[0.0f64; 2]; DIM];
        let mut none = [[0.0f64; 2]; DIM];
        rayon::join(
            || {
                half_residual(
                    model,
                    form,
                    x,
                    tension,
                    (0..split, 0..jp),
                    0,
                    [a0, a1, a2],
                    (t0, h0),
                    &mut spill,
                )
            },
            || {
                half_residual(
                    model,
                    form,
                    x,
                    tension,
                    (split..model.n_elements(), jp..model.n_points()),
                    k,
                    [b0, b1, b2],
                    (t1, h1),
                    &mut none,
                )
            },
        );
        for (c, sp) in spill.iter().enumerate() {
            self.res[c * n_s + k] += sp[0];
            self.res[c * n_s + k + 1] += sp[1];
        }
    }

    /// Assembles the scaled Newton matrix and right-hand side `−(R, C)` from the last
    /// [`BlockKkt::residual`], factorizes and solves. `Ok(false)` if a pivot block is
    /// singular.
    pub(crate) fn factor_solve(
        &mut self,
        model: &Beam,
        jac: &JacobianForm,
        tension: &[f64],
    ) -> Result<bool, BeamError> {
        if self.n_blocks >= self.twisted_min_blocks.max(4) {
            self.factorizations += 1;
            return Ok(self.twisted_factor_solve(model, jac, tension));
        }
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

    /// The solved update of dof (`c`, `k`) (0 for a blocked dof; a node's position in the
    /// shifted basis of [`BlockKkt::shift`]: `δp = δg − c δσ`).
    #[inline]
    pub(crate) fn dx(&self, c: usize, k: usize) -> f64 {
        let raw = |k: usize| {
            if self.blocked[c * self.n_s + k] {
                0.0
            } else {
                self.rhs[(k / 2) * BS + DIM * (k % 2) + c]
            }
        };
        let shift = self.shift[k / 2];
        if shift != 0.0 && k.is_multiple_of(2) {
            raw(k) - shift * raw(k + 1)
        } else {
            raw(k)
        }
    }

    /// The solved update of multiplier `j`.
    #[inline]
    pub(crate) fn dt(&self, model: &Beam, j: usize) -> f64 {
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
        model: &Beam,
        x: &mut [f64],
        tension: &mut [f64],
    ) -> UpdateMeasures {
        self.apply_damped_update(model, x, tension, 1.0)
    }

    /// Applies `x += α δx`, `T += α δT` and returns the (damped) update's measures.
    pub(crate) fn apply_damped_update(
        &self,
        model: &Beam,
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
    pub(crate) fn residual_norms(&self, model: &Beam) -> (f64, f64) {
        // In the unknowns' basis: a shifted node's tangent residual is `R_σ − c R_p`.
        let n_s = self.n_s;
        let mut rmax = 0.0f64;
        for c in 0..DIM {
            for k in 0..n_s {
                let i = c * n_s + k;
                if self.blocked[i] {
                    continue;
                }
                let shift = self.shift[k / 2];
                let r = if shift != 0.0 && k % 2 == 1 {
                    self.res[i] - shift * self.res[i - 1]
                } else {
                    self.res[i]
                };
                rmax = rmax.max(r.abs());
            }
        }
        let cmax = (0..model.n_points())
            .filter(|&j| model.point_is_active(j))
            .map(|j| {
                let t = self.tangents[j];
                (0.5 * (t[0] * t[0] + t[1] * t[1] + t[2] * t[2] - 1.0)).abs()
            })
            .fold(0.0f64, f64::max);
        (rmax, cmax)
    }

    /// The read-only part of the storage and the mutable blocks (all of them).
    fn split(&mut self) -> (Shared<'_>, Run<'_>) {
        (
            Shared {
                n_blocks: self.n_blocks,
                n_s: self.n_s,
                element_points: &self.element_points,
                home_points: &self.home_points,
                by_home: &self.by_home,
                mhome_points: &self.mhome_points,
                by_mhome: &self.by_mhome,
                open: &self.open,
                open_up: &self.open_up,
                two: &self.two,
                shift: &self.shift,
                tangents: &self.tangents,
                tangents_hat: &self.tangents_hat,
                res: &self.res,
            },
            Run {
                first: 0,
                diag: &mut self.diag,
                piv: &mut self.piv,
                hl: &mut self.hl,
                bl: &mut self.bl,
                gu: &mut self.gu,
                scale: &mut self.scale,
                rhs: &mut self.rhs,
            },
        )
    }

    /// The twisted ("burn at both ends") factorization and solve on two threads (see
    /// [`twisted`]); `false` if a pivot block is singular or the solution not finite.
    fn twisted_factor_solve(&mut self, model: &Beam, jac: &JacobianForm, tension: &[f64]) -> bool {
        let (sh, run) = self.split();
        let inp = Inputs {
            model,
            jac,
            tension,
            sh,
        };
        twisted::eliminate(&inp, run)
    }
}

/// The read-only storage of [`BlockKkt`] during a factorization (shared by the two halves of
/// the twisted one).
#[derive(Clone, Copy)]
struct Shared<'a> {
    n_blocks: usize,
    n_s: usize,
    element_points: &'a [usize],
    home_points: &'a [usize],
    by_home: &'a [usize],
    mhome_points: &'a [usize],
    by_mhome: &'a [usize],
    open: &'a [[f64; BS]],
    open_up: &'a [[f64; BS]],
    two: &'a [[bool; 2]],
    shift: &'a [f64],
    tangents: &'a [[f64; 3]],
    tangents_hat: &'a [[f64; 3]],
    res: &'a [f64],
}

/// Everything the assembly reads: the model, the Jacobian's coefficients, the tensions and
/// [`Shared`].
#[derive(Clone, Copy)]
struct Inputs<'a> {
    model: &'a Beam,
    jac: &'a JacobianForm,
    tension: &'a [f64],
    sh: Shared<'a>,
}

/// The mutable storage of the blocks `first..first + diag.len()` (see [`BlockKkt`]'s fields).
struct Run<'a> {
    first: usize,
    diag: &'a mut [Blk],
    piv: &'a mut [[u8; BS]],
    hl: &'a mut [[f64; 4]],
    bl: &'a mut [[[f64; 6]; 2]],
    gu: &'a mut [[[f64; 6]; 2]],
    scale: &'a mut [f64],
    rhs: &'a mut [f64],
}

impl<'a> Run<'a> {
    /// Splits into the blocks `first..first + k` and the rest (disjoint borrows).
    fn split_at(self, k: usize) -> (Run<'a>, Run<'a>) {
        let (d0, d1) = self.diag.split_at_mut(k);
        let (p0, p1) = self.piv.split_at_mut(k);
        let (h0, h1) = self.hl.split_at_mut(k);
        let (b0, b1) = self.bl.split_at_mut(k);
        let (g0, g1) = self.gu.split_at_mut(k);
        let (s0, s1) = self.scale.split_at_mut(k * BS);
        let (r0, r1) = self.rhs.split_at_mut(k * BS);
        (
            Run {
                first: self.first,
                diag: d0,
                piv: p0,
                hl: h0,
                bl: b0,
                gu: g0,
                scale: s0,
                rhs: r0,
            },
            Run {
                first: self.first + k,
                diag: d1,
                piv: p1,
                hl: h1,
                bl: b1,
                gu: g1,
                scale: s1,
                rhs: r1,
            },
        )
    }

    /// Block `b`'s right-hand side / solution.
    #[inline(always)]
    fn rhs(&self, b: usize) -> [f64; BS] {
        let i = (b - self.first) * BS;
        let mut y = [0.0; BS];
        y.copy_from_slice(&self.rhs[i..i + BS]);
        y
    }

    #[inline(always)]
    fn set_rhs(&mut self, b: usize, y: &[f64; BS]) {
        let i = (b - self.first) * BS;
        self.rhs[i..i + BS].copy_from_slice(y);
    }

    /// Unscales the solution (`z ← D z`); whether it is finite.
    fn unscale(&mut self) -> bool {
        for (r, s) in self.rhs.iter_mut().zip(self.scale.iter()) {
            *r *= s;
        }
        self.rhs.iter().all(|v| v.is_finite())
    }
}

/// `j_m M + j_k EI K` of one element (4×4 scalar, local dofs).
type ElementHessian = [[f64; 4]; 4];

/// `H ← Tᵀ H` for the rows' node, `T = [1 −c; 0 1]`: the tangent row less `c` times the
/// position row (a scalar 2×2 coupling, entry `2σ + τ`).
#[inline(always)]
fn shift_rows(h: &mut [f64; 4], c: f64) {
    h[2] -= c * h[0];
    h[3] -= c * h[1];
}

/// `H ← H T` for the columns' node: the tangent column less `c` times the position column.
#[inline(always)]
fn shift_cols(h: &mut [f64; 4], c: f64) {
    h[1] -= c * h[0];
    h[3] -= c * h[2];
}

/// The dof scales `1/√H_kk` of a node's position and tangent from its scalar Hessian
/// diagonal block `hd`.
#[inline(always)]
fn dof_scales(hd: &[f64; 4]) -> [f64; 2] {
    [hd[0], hd[3]].map(|d| if d > 0.0 { 1.0 / d.sqrt() } else { 1.0 })
}

impl Inputs<'_> {
    /// `j_m M_e + j_k EI K_e` of element `e`.
    #[inline(always)]
    fn element_hessian(&self, e: usize) -> ElementHessian {
        let el = &self.model.elements()[e];
        let m = el.mass(self.model.parameters().density);
        let k = el.bending(self.model.parameters().bending_stiffness);
        std::array::from_fn(|a| {
            std::array::from_fn(|c| self.jac.mass * m[a][c] + self.jac.bending * k[a][c])
        })
    }

    /// The unscaled scalar Hessian couplings of node `b`, `(hd, hl)`: with itself and with
    /// node `b − 1` (entry `2σ + τ`), from `before` = element `b − 1`'s and `after` = element
    /// `b`'s [`Inputs::element_hessian`] (ignored at the ends) and the geometric stiffness
    /// `j_g Σ_j w_j T_j N'_j N'_jᵀ` of their points, summed in the order of a global assembly.
    #[inline(always)]
    fn node_hessian(
        &self,
        b: usize,
        before: &ElementHessian,
        after: &ElementHessian,
    ) -> ([f64; 4], [f64; 4]) {
        let nb = self.sh.n_blocks;
        let w = self.model.point_weights();
        let dn = self.model.point_derivatives();
        let ep = self.sh.element_points;
        let (mut hd, mut hl) = ([0.0f64; 4], [0.0f64; 4]);
        if b > 0 {
            for sg in 0..2 {
                for tg in 0..2 {
                    hd[2 * sg + tg] += before[2 + sg][2 + tg];
                    hl[2 * sg + tg] += before[2 + sg][tg];
                }
            }
        }
        if b + 1 < nb {
            for sg in 0..2 {
                for tg in 0..2 {
                    hd[2 * sg + tg] += after[sg][tg];
                }
            }
        }
        if self.jac.geometric != 0.0 {
            if b > 0 {
                for j in ep[b - 1]..ep[b] {
                    let f = self.jac.geometric * w[j] * self.tension[j];
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
                for j in ep[b]..ep[b + 1] {
                    let f = self.jac.geometric * w[j] * self.tension[j];
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
        // The shifted bases (S3): `H' = T_bᵀ H T`, `T = [1 −c; 0 1]` (`p = g − c σ`).
        let cb = self.sh.shift[b];
        if cb != 0.0 {
            shift_rows(&mut hd, cb);
            shift_cols(&mut hd, cb);
            shift_rows(&mut hl, cb);
        }
        if b > 0 && self.sh.shift[b - 1] != 0.0 {
            shift_cols(&mut hl, self.sh.shift[b - 1]);
        }
        (hd, hl)
    }

    /// `N'_j` of point `j` on its element's four local dofs, in the unknowns' bases: the
    /// tangent entry of a shifted node is `N'_σ − c N'_p` (S3).
    #[inline(always)]
    fn point_dn(&self, j: usize) -> [f64; 4] {
        let e = self.model.point_element(j);
        let mut d = self.model.point_derivatives()[j];
        for node in 0..2 {
            let c = self.sh.shift[e + node];
            if c != 0.0 {
                d[2 * node + 1] -= c * d[2 * node];
            }
        }
        d
    }

    /// Assembles block `b` of the top-down sweep: `before` holds element `b − 1`'s Hessian
    /// and `sp` block `b − 1`'s dof scales on entry, element `b`'s and block `b`'s on return.
    #[inline(always)]
    fn assemble_next(
        &self,
        run: &mut Run<'_>,
        b: usize,
        before: &mut ElementHessian,
        sp: &mut [f64; 2],
    ) {
        let after = if b + 1 < self.sh.n_blocks {
            self.element_hessian(b)
        } else {
            [[0.0; 4]; 4]
        };
        let (hd, hl) = self.node_hessian(b, before, &after);
        let ss = dof_scales(&hd);
        self.assemble_block(run, b, &hd, hl, ss, *sp);
        *before = after;
        *sp = ss;
    }

    /// The dof part of block `b` (both layouts): `D_b`'s scaled Hessian entries (the rest
    /// zeroed), the dof scales `ss` and the scaled right-hand side `−R`.
    #[inline(always)]
    fn dof_block(
        &self,
        b: usize,
        hd: &[f64; 4],
        ss: [f64; 2],
        d: &mut Blk,
        scale: &mut [f64],
        rhs: &mut [f64],
    ) {
        let (sh, n_s) = (&self.sh, self.sh.n_s);
        for l in 0..2 * DIM {
            scale[l] = ss[l / DIM];
        }
        let o = &sh.open[b];
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
        let shift = sh.shift[b];
        for l in 0..2 * DIM {
            let (sg, c) = (l / DIM, l % DIM);
            let mut r = sh.res[c * n_s + 2 * b + sg];
            if sg == 1 && shift != 0.0 {
                r -= shift * sh.res[c * n_s + 2 * b];
            }
            rhs[l] = -r * ss[sg] * o[l];
        }
    }

    /// The scaled constraint row `B_j` (at `x`) and column `G_jᵀ` (at `x̂`) of the active point
    /// `j`, unknown `slot` of block `b`: the entries on node `b`'s dofs into `d`, those on the
    /// other node of its element (dof scales `s_other`) into `bl`, `gu`; the row's scale (the
    /// inverse max norm of its scaled entries) and `−C_j` into `scale[slot]`, `rhs[slot]`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn constraint_entries(
        &self,
        j: usize,
        b: usize,
        ss: [f64; 2],
        s_other: [f64; 2],
        slot: usize,
        d: &mut Blk,
        scale: &mut [f64],
        rhs: &mut [f64],
        bl: &mut [f64; 6],
        gu: &mut [f64; 6],
    ) {
        let (model, sh) = (self.model, &self.sh);
        let w = model.point_weights();
        let dn = self.point_dn(j);
        let e = model.point_element(j);
        let (t, th) = (sh.tangents[j], sh.tangents_hat[j]);
        let mut m = 0.0f64;
        for a in 0..4 {
            if dn[a] == 0.0 {
                continue;
            }
            let na = e + a / 2;
            let s = if na == b { ss[a % 2] } else { s_other[a % 2] };
            for c in 0..DIM {
                let o = sh.open[na][DIM * (a % 2) + c];
                m = m.max((w[j] * dn[a] * t[c] * s * o).abs());
            }
        }
        let sm = if m > 0.0 { 1.0 / m } else { 1.0 };
        scale[slot] = sm;
        rhs[slot] = -sm * w[j] * 0.5 * (t[0] * t[0] + t[1] * t[1] + t[2] * t[2] - 1.0);
        for a in 0..4 {
            if dn[a] == 0.0 {
                continue;
            }
            let (na, sa) = (e + a / 2, a % 2);
            let s = if na == b { ss[sa] } else { s_other[sa] };
            let f = w[j] * dn[a] * sm * s;
            for c in 0..DIM {
                let dof = DIM * sa + c;
                let o = sh.open[na][dof];
                if na == b {
                    d[slot][dof] = f * t[c] * o;
                    d[dof][slot] = f * th[c] * o;
                } else {
                    debug_assert_eq!(na.abs_diff(b), 1, "constraint point outside its home band");
                    bl[dof] = f * t[c] * o;
                    gu[dof] = f * th[c] * o;
                }
            }
        }
    }

    /// Assembles block `b` of the mirrored layout (the bottom half of [`twisted`]): node `b`'s
    /// dofs and the points of mirrored home `b` (those touching node `b` and, if any, node
    /// `b + 1`), from node `b`'s `hd`, its dof scales `ss` and block `b + 1`'s `sn`: `D'_b`,
    /// the scales and right-hand side, and the B rows `bl` / Gᵀ columns `gu` of the points on
    /// node `b + 1`'s dofs. The same entries as [`Inputs::assemble_block`].
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn assemble_up(
        &self,
        b: usize,
        hd: &[f64; 4],
        ss: [f64; 2],
        sn: [f64; 2],
        d: &mut Blk,
        scale: &mut [f64],
        rhs: &mut [f64],
        bl: &mut [[f64; 6]; 2],
        gu: &mut [[f64; 6]; 2],
    ) {
        let (model, sh) = (self.model, &self.sh);
        self.dof_block(b, hd, ss, d, scale, rhs);
        for &j in &sh.by_mhome[sh.mhome_points[b]..sh.mhome_points[b + 1]] {
            if !model.point_is_active(j) {
                continue;
            }
            let q = model.point_home(j).1;
            self.constraint_entries(
                j,
                b,
                ss,
                sn,
                2 * DIM + q,
                d,
                scale,
                rhs,
                &mut bl[q],
                &mut gu[q],
            );
        }
        close_unused(&sh.open_up[b], d, scale, rhs);
    }

    /// Assembles block `b` of the scaled Newton matrix (`D_b`, `hl[b]`, `bl[b]`, `gu[b]`) and
    /// of the right-hand side from node `b`'s [`Inputs::node_hessian`] `hd`, `hl`, its dof
    /// scales `ss` and block `b − 1`'s `sp` (unused for `b = 0`).
    ///
    /// Scaling `D A D`: a dof by `1/√H_kk` (the same for the three components of a node's
    /// position or tangent), a multiplier by the inverse max norm of its scaled constraint row.
    /// Every entry is summed in the order of a global assembly (the elements' `M`, `K` in
    /// element order, then the geometric stiffness point by point).
    #[inline(always)]
    fn assemble_block(
        &self,
        run: &mut Run<'_>,
        b: usize,
        hd: &[f64; 4],
        mut hl: [f64; 4],
        ss: [f64; 2],
        sp: [f64; 2],
    ) {
        let (model, sh) = (self.model, &self.sh);
        let i = b - run.first;
        let scale = &mut run.scale[i * BS..(i + 1) * BS];
        let rhs = &mut run.rhs[i * BS..(i + 1) * BS];
        let o = &sh.open[b];
        let d = &mut run.diag[i];
        self.dof_block(b, hd, ss, d, scale, rhs);
        if b > 0 {
            for sg in 0..2 {
                for tg in 0..2 {
                    hl[2 * sg + tg] *= ss[sg] * sp[tg];
                }
            }
        }
        run.hl[i] = hl;
        let (bl, gu) = (&mut run.bl[i], &mut run.gu[i]);
        *bl = [[0.0; 6]; 2];
        *gu = [[0.0; 6]; 2];
        // Constraint rows B (at x) and columns Gᵀ (at x̂) of the points homed at b, scaled.
        // (A nodal point's entries on node b + 1 are zero and skipped.)
        for &j in &sh.by_home[sh.home_points[b]..sh.home_points[b + 1]] {
            if !model.point_is_active(j) {
                continue;
            }
            let (hb, q) = model.point_home(j);
            debug_assert_eq!(hb, b);
            self.constraint_entries(
                j,
                b,
                ss,
                sp,
                2 * DIM + q,
                d,
                scale,
                rhs,
                &mut bl[q],
                &mut gu[q],
            );
        }
        close_unused(o, d, scale, rhs);
    }
}

/// Gives the unknowns of a block that are not open (`open[l] = 0`: prescribed or held dofs,
/// inactive points, unused slots) a unit diagonal, and an unknown multiplier slot a unit scale
/// and a zero right-hand side.
#[inline(always)]
fn close_unused(open: &[f64; BS], d: &mut Blk, scale: &mut [f64], rhs: &mut [f64]) {
    for l in 0..BS {
        if open[l] == 0.0 {
            d[l][l] = 1.0;
            if l >= 2 * DIM {
                scale[l] = 1.0;
                rhs[l] = 0.0;
            }
        }
    }
}

/// Assembles (see [`Inputs::assemble_block`]) and eliminates top-down the blocks `0..=last`
/// of `run` (which starts at block 0), each block while it is hot in cache.
///
/// Block LU: `S_0 = D_0`, `X_{b−1} = S_{b−1}⁻¹ U_b`, `S_b = D_b − L_b X_{b−1}`, with the
/// compact `L_b` (`hl[b] ⊗ I₃` and the rows `bl[b]`) and `U_b` (`hl[b]ᵀ ⊗ I₃` and the
/// columns `gu[b]`), and the forward substitution `y_b = S_b⁻¹ (r_b − L_b y_{b−1})` in `rhs`.
/// `X_{b−1}` is used once and not kept (the back substitution applies `S_b⁻¹ U_{b+1}` to a
/// vector instead). Blocked rows stay unit rows. Returns block `last`'s `S_last` and
/// `r_last − L_last y_{last−1}`, not factorized; `None` if a pivot block is singular.
#[inline(always)]
fn sweep_down<S: pulp::Simd>(
    simd: S,
    inp: &Inputs<'_>,
    run: &mut Run<'_>,
    last: usize,
) -> Option<(Blk, [f64; BS])> {
    debug_assert_eq!(run.first, 0);
    let mut xp: Blk = [[0.0; BS]; BS];
    let mut prev = [0.0f64; BS];
    let mut before = [[0.0f64; 4]; 4];
    let mut sp = [1.0f64; 2];
    inp.assemble_next(run, 0, &mut before, &mut sp);
    for b in 0..=last {
        // Block b + 1 is assembled one step ahead: U_{b+1} enters X_b below.
        if b < last {
            inp.assemble_next(run, b + 1, &mut before, &mut sp);
        }
        let mut s = run.diag[b];
        if b > 0 {
            let o = &inp.sh.open[b];
            let hl = run.hl[b];
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
                    let v = run.bl[b][q][l];
                    if v != 0.0 {
                        axpy(simd, &mut s[r], -v, &xp[l]);
                    }
                }
            }
        }
        if b == last {
            let mut y = run.rhs(b);
            if b > 0 {
                subtract_lower(inp.sh.open, run, b, &prev, &mut y);
            }
            return Some((s, y));
        }
        if !lu8(simd, &mut s, &mut run.piv[b]) {
            return None;
        }
        // The forward substitution's block `b` beside the elimination: the two
        // recursions are independent, so the processor overlaps their latencies.
        let mut y = run.rhs(b);
        if b > 0 {
            subtract_lower(inp.sh.open, run, b, &prev, &mut y);
        }
        lu8_solve(&s, &run.piv[b], &mut y);
        run.set_rhs(b, &y);
        prev = y;
        xp = upper(inp.sh.open, run, b + 1);
        lu8_solve_rows(simd, &s, &run.piv[b], &mut xp);
        run.diag[b] = s;
    }
    None
}

/// `y −= L_b y_{b−1}` with the compact `L_b` (`hl[b] ⊗ I₃` and the rows `bl[b]`).
#[inline(always)]
fn subtract_lower(
    open: &[[f64; BS]],
    run: &Run<'_>,
    b: usize,
    prev: &[f64; BS],
    y: &mut [f64; BS],
) {
    let i = b - run.first;
    let (o, hl) = (&open[b], run.hl[i]);
    for sg in 0..2 {
        for c in 0..DIM {
            let r = DIM * sg + c;
            y[r] -= o[r] * (hl[2 * sg] * prev[c] + hl[2 * sg + 1] * prev[DIM + c]);
        }
    }
    for q in 0..2 {
        let row = &run.bl[i][q];
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
fn upper(open: &[[f64; BS]], run: &Run<'_>, b: usize) -> Blk {
    let i = b - run.first;
    let mut u: Blk = [[0.0; BS]; BS];
    let hl = run.hl[i];
    let (o0, o1) = (&open[b - 1], &open[b]);
    for tg in 0..2 {
        for c in 0..DIM {
            let r = DIM * tg + c;
            if o0[r] == 0.0 {
                continue;
            }
            for sg in 0..2 {
                u[r][DIM * sg + c] = hl[2 * sg + tg] * o1[DIM * sg + c];
            }
            u[r][2 * DIM] = run.gu[i][0][r];
            u[r][2 * DIM + 1] = run.gu[i][1][r];
        }
    }
    u
}

/// The back substitution in place in `rhs` over the blocks `0..=last` of `run` (which starts
/// at block 0; `rhs` holds `y_b` and `z_last`): `z_b = y_b − S_b⁻¹ (U_{b+1} z_{b+1})`.
#[inline(always)]
fn back_down(open: &[[f64; BS]], run: &mut Run<'_>, last: usize) {
    debug_assert_eq!(run.first, 0);
    let mut prev = run.rhs(last);
    for b in (0..last).rev() {
        let (hl, o0, o1) = (run.hl[b + 1], &open[b], &open[b + 1]);
        let gu = &run.gu[b + 1];
        let mut uz = [0.0f64; BS];
        for tg in 0..2 {
            for c in 0..DIM {
                let r = DIM * tg + c;
                uz[r] = o0[r]
                    * (hl[tg] * o1[c] * prev[c]
                        + hl[2 + tg] * o1[DIM + c] * prev[DIM + c]
                        + gu[0][r] * prev[2 * DIM]
                        + gu[1][r] * prev[2 * DIM + 1]);
            }
        }
        lu8_solve(&run.diag[b], &run.piv[b], &mut uz);
        let z = &mut run.rhs[b * BS..(b + 1) * BS];
        for r in 0..BS {
            z[r] -= uz[r];
        }
        prev.copy_from_slice(z);
    }
}

/// The serial path: [`sweep_down`] over all blocks, then the last block's factorization.
#[inline(always)]
fn factorize<S: pulp::Simd>(simd: S, inp: &Inputs<'_>, run: &mut Run<'_>) -> bool {
    let last = inp.sh.n_blocks - 1;
    let Some((mut s, mut y)) = sweep_down(simd, inp, run, last) else {
        return false;
    };
    if !lu8(simd, &mut s, &mut run.piv[last]) {
        return false;
    }
    lu8_solve(&s, &run.piv[last], &mut y);
    run.set_rhs(last, &y);
    run.diag[last] = s;
    true
}

/// [`factorize`] (assembly, factorization and forward substitution of the serial path)
/// compiled for the machine's vector width (runtime dispatch).
struct Factorize<'a> {
    kkt: &'a mut BlockKkt,
    model: &'a Beam,
    jac: &'a JacobianForm,
    tension: &'a [f64],
}

impl pulp::WithSimd for Factorize<'_> {
    type Output = bool;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) -> bool {
        let (sh, mut run) = self.kkt.split();
        let inp = Inputs {
            model: self.model,
            jac: self.jac,
            tension: self.tension,
            sh,
        };
        factorize(simd, &inp, &mut run)
    }
}

/// The serial path's back substitution ([`back_down`] over all blocks), compiled for the
/// machine's vector width (runtime dispatch).
struct Solve<'a>(&'a mut BlockKkt);

impl pulp::WithSimd for Solve<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let (sh, mut run) = self.0.split();
        back_down(sh.open, &mut run, sh.n_blocks - 1);
    }
}

/// [`sweep_down`] (runtime dispatch).
struct Down<'a, 'b> {
    inp: &'a Inputs<'a>,
    run: &'a mut Run<'b>,
    last: usize,
}

impl pulp::WithSimd for Down<'_, '_> {
    type Output = Option<(Blk, [f64; BS])>;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) -> Self::Output {
        sweep_down(simd, self.inp, self.run, self.last)
    }
}

/// [`back_down`] (runtime dispatch).
struct BackDown<'a, 'b>(&'a [[f64; BS]], &'a mut Run<'b>, usize);

impl pulp::WithSimd for BackDown<'_, '_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        back_down(self.0, self.1, self.2)
    }
}

/// `c_m M (x − u) + EI K (c_k x + q) − s f` on all dofs (column-major), element by element;
/// the bending force on `z = c_k x + q` minus the linear field through the element's ends.
pub(crate) fn linear_residual(
    model: &Beam,
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
            let r = element_linear_residual(form, &m, &k, h, x, base);
            for a in 0..4 {
                out[base + a] += r[a];
            }
        }
    }
}

/// Element rows `base … base + 3` (one component) of [`linear_residual`]: the mass term
/// `c_m M_e (x_e − u_e)` and the bending force on `z = c_k x_e + q_e` minus the linear field
/// through the element's ends (mass `m`, bending `k`, length `h`).
#[inline(always)]
fn element_linear_residual(
    form: &ResidualForm<'_>,
    m: &[[f64; 4]; 4],
    k: &[[f64; 4]; 4],
    h: f64,
    x: &[f64],
    base: usize,
) -> [f64; 4] {
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
    let [s1, s3] = slopes_about_chord(&z, h);
    std::array::from_fn(|a| {
        let mass = if form.mass != 0.0 {
            form.mass * (m[a][0] * d[0] + m[a][1] * d[1] + m[a][2] * d[2] + m[a][3] * d[3])
        } else {
            0.0
        };
        mass + k[a][1] * s1 + k[a][3] * s3
    })
}

/// One half of [`BlockKkt::residual_halves`]: the elements and points of `range`, the
/// residual into the rows `first..` of each component (`cols`), a contribution to the two
/// rows after them (the next node's) into `spill`, and the tangents of the points.
#[allow(clippy::too_many_arguments)]
fn half_residual(
    model: &Beam,
    form: &ResidualForm<'_>,
    x: &[f64],
    tension: &[f64],
    range: (std::ops::Range<usize>, std::ops::Range<usize>),
    first: usize,
    mut cols: [&mut [f64]; DIM],
    (tangents, tangents_hat): (&mut [[f64; 3]], &mut [[f64; 3]]),
    spill: &mut [[f64; 2]; DIM],
) {
    let (elements, points) = range;
    let n_s = model.n_scalar();
    let rho = model.parameters().density;
    let ei = model.parameters().bending_stiffness;
    let load = model.load();
    let end = first + cols[0].len();
    for (c, col) in cols.iter_mut().enumerate() {
        for (o, f) in col.iter_mut().zip(&load[c * n_s + first..]) {
            *o = -form.load * f;
        }
    }
    let mut add = |cols: &mut [&mut [f64]; DIM], c: usize, k: usize, v: f64| {
        if k < end {
            cols[c][k - first] += v;
        } else {
            spill[c][k - end] += v;
        }
    };
    for e in elements {
        let el = &model.elements()[e];
        let h = el.length;
        let m = el.mass(rho);
        let kb = el.bending(ei);
        for c in 0..DIM {
            let base = c * n_s + 2 * e;
            let r = element_linear_residual(form, &m, &kb, h, x, base);
            for a in 0..4 {
                add(&mut cols, c, 2 * e + a, r[a]);
            }
        }
    }
    let dn = model.point_derivatives();
    let w = model.point_weights();
    let j0 = points.start;
    let tangent = |xs: &[f64], j: usize| -> [f64; 3] {
        let e = model.point_element(j);
        std::array::from_fn(|c| {
            let base = c * n_s + 2 * e;
            (0..4).map(|a| dn[j][a] * xs[base + a]).sum()
        })
    };
    for j in points.clone() {
        tangents[j - j0] = tangent(x, j);
    }
    if form.theta == 1.0 {
        tangents_hat.copy_from_slice(tangents);
    } else {
        let th = form.theta;
        for j in points.clone() {
            let (t, r) = (tangents[j - j0], tangent(form.reference, j));
            tangents_hat[j - j0] = std::array::from_fn(|c| th * t[c] + (1.0 - th) * r[c]);
        }
    }
    for j in points {
        let e = model.point_element(j);
        let f = w[j] * tension[j];
        if f == 0.0 {
            continue;
        }
        for c in 0..DIM {
            let g = f * tangents_hat[j - j0][c];
            for a in 0..4 {
                add(&mut cols, c, 2 * e + a, g * dn[j][a]);
            }
        }
    }
}

/// `max_j ||x'_j| − 1|` over the active points of the tangents `t`.
pub(crate) fn max_stretch_error(model: &Beam, t: &[[f64; 3]]) -> f64 {
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

/// Newton on the KKT system (see the module documentation) from `x`, `tension`, with the
/// stopping rule of [`crate::kkt`] — the constraint below its tolerance, each update below its
/// tolerance or stalled, and (with a seabed) an unchanged active set — except that an update
/// is measured by the error it leaves, estimated from the contraction `q = δ_k/δ_{k−1}` as
/// `q δ_k` when Newton contracts (`q < 0.1`): the quadratic convergence then makes the
/// confirming iteration unnecessary (2 iterations per step instead of 3 at `Δt = 0.01`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn newton(
    kkt: &mut BlockKkt,
    model: &Beam,
    form: &ResidualForm<'_>,
    jac: &JacobianForm,
    x: &mut [f64],
    tension: &mut [f64],
    contact: &mut ActiveSet,
    settings: &crate::kkt::KktNewton,
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
        let changes = crate::seabed::update(model, kkt, x, contact, floor);
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
        // The active conditions again exactly (the update keeps them to round-off; the
        // rescaled tangents move them by the constraint's residual).
        crate::seabed::project_all(model, contact, x);
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
        let step_tolerance = settings.step_tolerance(x);
        let x_ok = left(m.step_change, dx_prev) <= step_tolerance
            || (m.step_change <= 1e4 * step_tolerance && stalled(m.step_change, dx_prev));
        let t_ok = left(m.multiplier_change, dt_prev) <= settings.multiplier_tolerance
            || stalled(m.multiplier_change, dt_prev);
        let contact_ok = changes == 0 && !crate::seabed::penetrates(model, contact, x);
        if cmax <= settings.constraint_tolerance && x_ok && t_ok && contact_ok {
            out.converged = true;
            return Ok(out);
        }
        dx_prev = m.step_change;
        dt_prev = m.multiplier_change;
    }
    Ok(out)
}

/// The energy-conserving form's residual coefficients about `x` (`c_m = 2/Δt²` with
/// `Δt = 10⁻²`, `c_k = θ = ½`, `x` as anchor, offset and reference): the tests' and timings'
/// problem.
#[cfg(test)]
fn midpoint_residual(x: &[f64]) -> ResidualForm<'_> {
    ResidualForm {
        mass: 2e4,
        anchor: x,
        bending: 0.5,
        offset: x,
        load: 1.0,
        theta: 0.5,
        reference: x,
    }
}

/// The Jacobian coefficients of [`midpoint_residual`].
#[cfg(test)]
const MIDPOINT_JACOBIAN: JacobianForm = JacobianForm {
    mass: 2e4,
    bending: 0.5,
    geometric: 0.5,
};
