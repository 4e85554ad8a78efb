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
#[derive(Clone, Debug)]
pub struct UnilateralContacts {
    operator: CsrMatrix<f64>,
    offsets: Vec<f64>,
    restitution: f64,
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
        Ok(Self {
            operator,
            offsets,
            restitution,
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

    /// `y = H q − h` into `out`.
    pub fn gaps(&self, q: &[f64], out: &mut [f64]) {
        self.rates(q, out);
        out.iter_mut().zip(&self.offsets).for_each(|(y, h)| *y -= h);
    }

    /// `ẏ = H v` into `out`.
    pub fn rates(&self, v: &[f64], out: &mut [f64]) {
        let (offsets, cols, vals) = self.operator.csr_data();
        for (i, o) in out.iter_mut().enumerate() {
            let mut s = 0.0;
            for k in offsets[i]..offsets[i + 1] {
                s += vals[k] * v[cols[k]];
            }
            *o = s;
        }
    }

    /// `p += Hᵀ λ`.
    pub fn add_impulse(&self, lambda: &[f64], p: &mut [f64]) {
        let (offsets, cols, vals) = self.operator.csr_data();
        for (i, &l) in lambda.iter().enumerate() {
            if l != 0.0 {
                for k in offsets[i]..offsets[i + 1] {
                    p[cols[k]] += vals[k] * l;
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
