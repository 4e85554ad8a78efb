//! Unilateral contacts `y = H q − h ≥ 0` and the impact LCP of Moreau's law.
//!
//! A set of `m` contact points is a linear gap: `H` (`m × n`, sparse; a row per contact,
//! e.g. the selection of a dof, or mode shapes evaluated at a point) and the offsets `h`, so
//! that `y = H q − h` is the signed distance of each point to its obstacle (positive: apart).
//! The contact impulses `λ` (one per point, `≥ 0`) act on the dofs as `P = Hᵀ λ`.
//!
//! # Impact law
//! On a time step, contact `i` is *active* when its predicted gap is `≤ 0`. For the active
//! contacts, Newton's impact law at the velocity level reads
//!
//! ```text
//! 0 ≤ ẏ⁺ + e ẏ⁻ ⊥ λ ≥ 0,      e ∈ [0, 1],
//! ```
//!
//! with `ẏ⁻ = H v^i` and `ẏ⁺ = H v^{i+1}`. A velocity-level stepper writes
//! `v^{i+1} = v_free + W⁻¹ Hᵀ λ`, so `ẏ⁺ = H v_free + D λ` with the Delassus matrix
//! `D = H W⁻¹ Hᵀ`, and the active contacts solve the LCP
//! `0 ≤ D_AA λ_A + (H v_free + e H v^i)_A ⊥ λ_A ≥ 0` ([`solve_impact`]).

use nalgebra::DMatrix;
use nalgebra_sparse::CsrMatrix;

use crate::lcp::{LcpError, LcpReport, LcpSolver};

/// Why a contact set was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ContactError {
    /// `h` does not have a value per row of `H`.
    #[error("contact operator H has {rows} rows but {offsets} gap offsets were given")]
    OffsetCount {
        /// Rows of `H`.
        rows: usize,
        /// Offsets given.
        offsets: usize,
    },
    /// The restitution coefficient is not in `[0, 1]`.
    #[error("restitution coefficient e = {0} must be in [0, 1]")]
    Restitution(f64),
    /// A non-finite entry in `H` or `h`.
    #[error("contact operator or offsets contain a non-finite value")]
    NonFinite,
    /// `H` has a number of columns other than the system's dofs.
    #[error("contact operator H has {found} columns; the system has {expected} dofs")]
    Columns {
        /// Columns of `H`.
        found: usize,
        /// Number of dofs.
        expected: usize,
    },
}

/// Unilateral contacts `y = H q − h ≥ 0` with one restitution coefficient.
///
/// # Products with `H`
/// `H` is stored as CSR. When every row stores all `n` columns in order (as
/// [`from_dense`](Self::from_dense) builds the modal operators, whose rows are mode shapes at
/// points), the CSR values *are* the dense row-major matrix, and the products run a dense loop
/// with [`LANES`] independent partial sums per product: bandwidth-bound instead of bound by the
/// latency of one dependent add per entry (about 4× faster on a `100 × 1000` operator). Other
/// operators use the CSR loop with 4 partial sums. The partial sums change the order of the
/// additions, so results differ from a single running sum by round-off only.
#[derive(Clone, Debug)]
pub struct UnilateralContacts {
    operator: CsrMatrix<f64>,
    offsets: Vec<f64>,
    restitution: f64,
    /// Every row stores all columns in order: `operator.values()` is `H` dense, row-major.
    dense: bool,
}

/// Independent partial sums per product in the dense kernels (8 lanes fill four SSE2 or two
/// AVX registers per product and hide the latency of the adds).
pub const LANES: usize = 8;

/// `Σ_k row_k x_k` with [`LANES`] partial sums (`row`, `x` of equal length).
fn dot_dense(row: &[f64], x: &[f64]) -> f64 {
    debug_assert_eq!(row.len(), x.len());
    let mut acc = [0.0; LANES];
    let (rc, xc) = (row.chunks_exact(LANES), x.chunks_exact(LANES));
    let tail: f64 = rc
        .remainder()
        .iter()
        .zip(xc.remainder())
        .map(|(h, x)| h * x)
        .sum();
    for (h, x) in rc.zip(xc) {
        for l in 0..LANES {
            acc[l] += h[l] * x[l];
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// `(Σ_k row_k x_k, Σ_k row_k y_k)` in one pass over `row`, [`LANES`] partial sums each.
fn dot2_dense(row: &[f64], x: &[f64], y: &[f64]) -> (f64, f64) {
    debug_assert!(row.len() == x.len() && row.len() == y.len());
    let (mut ax, mut ay) = ([0.0; LANES], [0.0; LANES]);
    let (rc, xc, yc) = (
        row.chunks_exact(LANES),
        x.chunks_exact(LANES),
        y.chunks_exact(LANES),
    );
    let (mut tx, mut ty) = (0.0, 0.0);
    for ((h, x), y) in rc
        .remainder()
        .iter()
        .zip(xc.remainder())
        .zip(yc.remainder())
    {
        tx += h * x;
        ty += h * y;
    }
    for ((h, x), y) in rc.zip(xc).zip(yc) {
        for l in 0..LANES {
            ax[l] += h[l] * x[l];
            ay[l] += h[l] * y[l];
        }
    }
    (ax.iter().sum::<f64>() + tx, ay.iter().sum::<f64>() + ty)
}

/// `Σ vals_k x[cols_k]` over one CSR row, 4 partial sums.
fn dot_sparse(vals: &[f64], cols: &[usize], x: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (vc, cc) = (vals.chunks_exact(4), cols.chunks_exact(4));
    let mut tail = 0.0;
    for (v, &c) in vc.remainder().iter().zip(cc.remainder()) {
        tail += v * x[c];
    }
    for (v, c) in vc.zip(cc) {
        for l in 0..4 {
            acc[l] += v[l] * x[c[l]];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `(Σ vals_k x[cols_k], Σ vals_k y[cols_k])` over one CSR row, 4 partial sums each.
fn dot2_sparse(vals: &[f64], cols: &[usize], x: &[f64], y: &[f64]) -> (f64, f64) {
    let (mut ax, mut ay) = ([0.0; 4], [0.0; 4]);
    let (vc, cc) = (vals.chunks_exact(4), cols.chunks_exact(4));
    let (mut tx, mut ty) = (0.0, 0.0);
    for (v, &c) in vc.remainder().iter().zip(cc.remainder()) {
        tx += v * x[c];
        ty += v * y[c];
    }
    for (v, c) in vc.zip(cc) {
        for l in 0..4 {
            ax[l] += v[l] * x[c[l]];
            ay[l] += v[l] * y[c[l]];
        }
    }
    (
        (ax[0] + ax[1]) + (ax[2] + ax[3]) + tx,
        (ay[0] + ay[1]) + (ay[2] + ay[3]) + ty,
    )
}

impl UnilateralContacts {
    /// Contacts with operator `H` (`m × n`), offsets `h` (`m`) and restitution `e ∈ [0, 1]`.
    pub fn new(
        operator: CsrMatrix<f64>,
        offsets: Vec<f64>,
        restitution: f64,
    ) -> Result<Self, ContactError> {
        if operator.nrows() != offsets.len() {
            return Err(ContactError::OffsetCount {
                rows: operator.nrows(),
                offsets: offsets.len(),
            });
        }
        if !(0.0..=1.0).contains(&restitution) {
            return Err(ContactError::Restitution(restitution));
        }
        if operator
            .values()
            .iter()
            .chain(&offsets)
            .any(|v| !v.is_finite())
        {
            return Err(ContactError::NonFinite);
        }
        let n = operator.ncols();
        let (row_offsets, cols, _) = operator.csr_data();
        let dense = n > 0
            && row_offsets.iter().enumerate().all(|(i, &o)| o == i * n)
            && cols
                .chunks_exact(n.max(1))
                .all(|row| row.iter().copied().eq(0..n));
        Ok(Self {
            operator,
            offsets,
            restitution,
            dense,
        })
    }

    /// Contacts at single dofs: `y_i = q[dofs[i]] − h_i` (an obstacle below dof `dofs[i]` at
    /// height `h_i`), on a system of `n_dofs` unknowns.
    pub fn at_dofs(
        n_dofs: usize,
        dofs: &[usize],
        offsets: Vec<f64>,
        restitution: f64,
    ) -> Result<Self, ContactError> {
        if let Some(&bad) = dofs.iter().find(|&&d| d >= n_dofs) {
            return Err(ContactError::Columns {
                found: bad + 1,
                expected: n_dofs,
            });
        }
        let operator = CsrMatrix::try_from_csr_data(
            dofs.len(),
            n_dofs,
            (0..=dofs.len()).collect(),
            dofs.to_vec(),
            vec![1.0; dofs.len()],
        )
        .expect("one entry per row");
        Self::new(operator, offsets, restitution)
    }

    /// Contacts from a dense operator, row-major `m × n` (for instance mode shapes at points).
    pub fn from_dense(
        n_dofs: usize,
        rows: &[f64],
        offsets: Vec<f64>,
        restitution: f64,
    ) -> Result<Self, ContactError> {
        let m = offsets.len();
        if rows.len() != m * n_dofs {
            return Err(ContactError::OffsetCount {
                rows: rows.len() / n_dofs.max(1),
                offsets: m,
            });
        }
        let operator = CsrMatrix::try_from_csr_data(
            m,
            n_dofs,
            (0..=m).map(|i| i * n_dofs).collect(),
            (0..m).flat_map(|_| 0..n_dofs).collect(),
            rows.to_vec(),
        )
        .expect("dense rows");
        Self::new(operator, offsets, restitution)
    }

    /// Number of contact points `m`.
    pub fn n_contacts(&self) -> usize {
        self.offsets.len()
    }

    /// Number of dofs (columns of `H`).
    pub fn n_dofs(&self) -> usize {
        self.operator.ncols()
    }

    /// The operator `H`.
    pub fn operator(&self) -> &CsrMatrix<f64> {
        &self.operator
    }

    /// The offsets `h`.
    pub fn offsets(&self) -> &[f64] {
        &self.offsets
    }

    /// The restitution coefficient `e`.
    pub fn restitution(&self) -> f64 {
        self.restitution
    }

    /// Whether `H` is stored full (every row has all columns), so that the products use the
    /// dense kernels (see the type's doc).
    pub fn is_dense(&self) -> bool {
        self.dense
    }

    /// `y = H q − h` into `out`.
    pub fn gaps(&self, q: &[f64], out: &mut [f64]) {
        self.rates(q, out);
        out.iter_mut().zip(&self.offsets).for_each(|(y, h)| *y -= h);
    }

    /// `ẏ = H v` into `out`.
    pub fn rates(&self, v: &[f64], out: &mut [f64]) {
        let (offsets, cols, vals) = self.operator.csr_data();
        let n = self.n_dofs();
        assert!(v.len() == n && out.len() == self.n_contacts());
        if self.dense {
            for (row, o) in vals.chunks_exact(n.max(1)).zip(out.iter_mut()) {
                *o = dot_dense(row, v);
            }
        } else {
            for (i, o) in out.iter_mut().enumerate() {
                let r = offsets[i]..offsets[i + 1];
                *o = dot_sparse(&vals[r.clone()], &cols[r], v);
            }
        }
    }

    /// `y = H q − h` into `gaps` and `ẏ = H v` into `rates`, in one pass over `H` (the two
    /// products a step needs; as fast as one [`rates`](Self::rates) when `H` is large).
    pub fn gaps_and_rates(&self, q: &[f64], v: &[f64], gaps: &mut [f64], rates: &mut [f64]) {
        let (offsets, cols, vals) = self.operator.csr_data();
        let (m, n) = (self.n_contacts(), self.n_dofs());
        assert!(q.len() == n && v.len() == n && gaps.len() == m && rates.len() == m);
        for i in 0..m {
            let (hq, hv) = if self.dense {
                dot2_dense(&vals[i * n..(i + 1) * n], q, v)
            } else {
                let r = offsets[i]..offsets[i + 1];
                dot2_sparse(&vals[r.clone()], &cols[r], q, v)
            };
            gaps[i] = hq - self.offsets[i];
            rates[i] = hv;
        }
    }

    /// `p += Hᵀ λ`.
    pub fn add_impulse(&self, lambda: &[f64], p: &mut [f64]) {
        let (offsets, cols, vals) = self.operator.csr_data();
        let n = self.n_dofs();
        assert!(p.len() == n && lambda.len() == self.n_contacts());
        for (i, &l) in lambda.iter().enumerate() {
            if l != 0.0 {
                let r = offsets[i]..offsets[i + 1];
                if self.dense {
                    p.iter_mut().zip(&vals[r]).for_each(|(p, h)| *p += h * l);
                } else {
                    for (&c, h) in cols[r.clone()].iter().zip(&vals[r]) {
                        p[c] += h * l;
                    }
                }
            }
        }
    }

    /// The Delassus matrix `H W⁻¹ Hᵀ` given the columns of `W⁻¹ Hᵀ` (column-major, `n × m`,
    /// as a factored `W` returns them from `m` right-hand sides).
    pub fn delassus(&self, w_inv_ht: &[f64]) -> DMatrix<f64> {
        let (m, n) = (self.n_contacts(), self.n_dofs());
        assert_eq!(w_inv_ht.len(), n * m);
        let mut d = DMatrix::zeros(m, m);
        let mut col = vec![0.0; m];
        for j in 0..m {
            self.rates(&w_inv_ht[j * n..(j + 1) * n], &mut col);
            for i in 0..m {
                d[(i, j)] = col[i];
            }
        }
        // Symmetrise: the two triangles differ by round-off only.
        for j in 0..m {
            for i in 0..j {
                let s = 0.5 * (d[(i, j)] + d[(j, i)]);
                d[(i, j)] = s;
                d[(j, i)] = s;
            }
        }
        d
    }

    /// The columns of `Hᵀ` as dense vectors, column-major `n × m` (right-hand sides for `W`).
    pub fn transpose_dense(&self) -> Vec<f64> {
        let (m, n) = (self.n_contacts(), self.n_dofs());
        let mut out = vec![0.0; n * m];
        let (offsets, cols, vals) = self.operator.csr_data();
        for i in 0..m {
            for k in offsets[i]..offsets[i + 1] {
                out[i * n + cols[k]] += vals[k];
            }
        }
        out
    }
}

/// What one impact solve did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ImpactReport {
    /// Contacts whose predicted gap was `≤ 0`.
    pub n_active: usize,
    /// The LCP solver's report on the active set (zero work when none is active).
    pub lcp: LcpReport,
}

/// Solves the impact LCP of one step.
///
/// The contacts with a predicted gap `≤ 0` are active first; they solve
/// `0 ≤ D_AA λ_A + (ẏ_free + e ẏ⁻)_A ⊥ λ_A ≥ 0`, `λ = 0` elsewhere. The impulses move
/// every contact, so the end-of-step gaps of the others are re-predicted,
/// `y_j = ỹ_j + position_weight · (D λ)_j` (`position_weight` is `Δt` for MMJ, `θΔt` for MJ);
/// any that would penetrate (`y_j < 0`) joins the active set and the LCP is solved again. The
/// active set only grows, so this ends after at most `m` solves.
///
/// The law uses `ẏ⁻` as it is (not `min(ẏ⁻, 0)`): with it the impulse's work
/// `½ λᵀ(ẏ⁺ + ẏ⁻)` is `−½(1 − e) λᵀẏ⁻`, zero for `e = 1`, which is what makes MMJ conserve its
/// discrete energy through elastic impacts (clipping `ẏ⁻` was tried and injects energy).
///
/// `lambda` holds a warm start on entry (used by iterative solvers) and the impulses on exit.
///
/// A step with no predicted contact (the common case) returns at once, without allocating;
/// otherwise the active set, its sub-Delassus matrix and right-hand side are allocated per
/// solve (`O(k²)`, small next to the products with `H` that form the data).
#[allow(clippy::too_many_arguments)]
pub fn solve_impact(
    delassus: &DMatrix<f64>,
    free_rate: &[f64],
    pre_rate: &[f64],
    predicted_gap: &[f64],
    restitution: f64,
    position_weight: f64,
    solver: &mut dyn LcpSolver,
    lambda: &mut [f64],
) -> Result<ImpactReport, LcpError> {
    let n = predicted_gap.len();
    if predicted_gap.iter().all(|&y| y > 0.0) {
        lambda.fill(0.0);
        return Ok(ImpactReport::default());
    }
    let mut is_active: Vec<bool> = predicted_gap.iter().map(|&y| y <= 0.0).collect();
    let warm: Vec<f64> = lambda.to_vec();
    lambda.fill(0.0);
    let mut report = ImpactReport::default();
    loop {
        let active: Vec<usize> = (0..n).filter(|&i| is_active[i]).collect();
        let k = active.len();
        if k == 0 {
            return Ok(report);
        }
        let m = DMatrix::from_fn(k, k, |a, b| delassus[(active[a], active[b])]);
        let q: Vec<f64> = active
            .iter()
            .map(|&i| free_rate[i] + restitution * pre_rate[i])
            .collect();
        let mut z: Vec<f64> = active.iter().map(|&i| warm[i]).collect();
        let lcp = solver.solve(&m, &q, &mut z)?;
        lambda.fill(0.0);
        for (a, &i) in active.iter().enumerate() {
            lambda[i] = z[a];
        }
        report.n_active = k;
        report.lcp.iterations += lcp.iterations;
        report.lcp.residual = lcp.residual;
        let mut grown = false;
        for j in 0..n {
            if !is_active[j] {
                let push: f64 = active.iter().map(|&i| delassus[(j, i)] * lambda[i]).sum();
                if predicted_gap[j] + position_weight * push < 0.0 {
                    is_active[j] = true;
                    grown = true;
                }
            }
        }
        if !grown {
            return Ok(report);
        }
    }
}
