//! Newton (SQP) on the KKT system of one constrained quadratic problem: the alternative to the
//! Uzawa loop of [`crate::uzawa`] for every step of the dynamic scheme (97).
//!
//! The problem is the one the Uzawa loop solves,
//!
//! ```text
//! min ½ xᵀA₀x − bᵀx   subject to   c_j(x) = ½ (|x'_j|² − 1) = 0 at the constraint points,
//! ```
//!
//! with the Lagrangian `ℒ(x, T) = ½xᵀA₀x − bᵀx + Σ_j w_j T_j c_j(x)` (`w_j` the quadrature
//! weight of point `j`, `T_j` the tension). Its stationarity
//! `A₀x − b + Σ_j w_j T_j N'_j ⊗ x'_j = 0` is the Uzawa fixed point with `λ_j = T_j x'_j`
//! (at convergence `x'_j = p_j`), so both solvers have the same solution.
//!
//! One Newton step solves the symmetric indefinite KKT system
//!
//! ```text
//! [ I₃ ⊗ (A₀ + K_T)   Bᵀ ] [ δx ]     [ A₀x − b + Bᵀ T ]
//! [ B                 0  ] [ δT ] = − [ w_j c_j(x)     ],
//! ```
//!
//! `K_T = Σ_j w_j T_j N'_j N'_jᵀ` (the geometric stiffness of the tension, per component),
//! `B_j = w_j x'_jᵀ ⊗ N'_jᵀ`. Its pattern never changes and it is refactored numerically at
//! every Newton iteration. In the natural ordering (per node its 6 dofs and the previous
//! element's 2 multipliers) it is block tridiagonal with 8×8 blocks; by default it is
//! factorized by a dedicated block LU (partial pivoting inside the blocks,
//! [`KktFactorization::BlockTridiagonal`]), with faer's general sparse LU (COLAMD,
//! [`KktFactorization::SparseLu`]) as the alternative and the fallback. Either costs `O(N)`; from the warm start of the previous time step Newton converges quadratically in
//! a few iterations, independent of `N`. Unlike the Uzawa loop the matrix depends on the iterate:
//! **one numeric factorization per Newton iteration**.

use faer::MatMut;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::linalg::lu::{LuSymbolicParams, NumericLu, SymbolicLu, factorize_symbolic_lu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, Par};
use fem_assembly::CsrMatrix;
use fem_elements::hermite::N_LOCAL;

use crate::block_tridiag::{BS, BlockTridiagonal};
use crate::error::BeamError;
use crate::model::{Beam, DIM, norm};

/// How the KKT matrix of each Newton iteration is factorized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KktFactorization {
    /// Block-tridiagonal LU in the natural ordering (8×8 blocks: a node's 6 dofs and the
    /// previous element's 2 multipliers), partial pivoting inside the blocks; falls back to
    /// [`KktFactorization::SparseLu`] if the pattern is not block tridiagonal or a pivot block
    /// is singular.
    #[default]
    BlockTridiagonal,
    /// faer's general sparse LU (COLAMD ordering, simplicial).
    SparseLu,
}

/// How the Newton–KKT matrix is assembled (and hence which solver runs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KktAssembly {
    /// Compressed sparse columns with a precomputed pattern, then scattered into the blocks
    /// (or given to faer's sparse LU): the original path, bit-compatible with the stored
    /// reference histories of the shipped inputs. Gauss constraint points, no seabed.
    #[default]
    Csc,
    /// Element by element straight into the 8×8 blocks (`crate::kkt_block`): faster, any
    /// constraint points, seabed contact. Chosen automatically when the model needs it.
    Blocks,
}

/// The KKT-specific parameters of Newton on the KKT system: the multiplier and constraint
/// tolerances and the linear algebra. The iteration cap and the tolerance on the position
/// update are the common [`fem_time::NewtonSettings`] (a dynamic stepper reads them from its
/// [`fem_time::StepSettings::newton`], the static solve takes them beside these).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonKktSettings {
    /// Bound on the last multiplier update, `‖δT‖_∞ / max(1, ‖T‖_∞)`. Looser than the
    /// position tolerance: the round-off floor of `T` grows with the conditioning of the KKT
    /// matrix (the bending term `EI/h³`), about `1e-9` relative at `N = 200`.
    pub multiplier_tolerance: f64,
    /// Bound on `max_j ||x'_j| − 1|` after the last update.
    pub constraint_tolerance: f64,
    /// The factorization of the KKT matrix (the [`KktAssembly::Csc`] path).
    pub factorization: KktFactorization,
    /// The assembly path.
    pub assembly: KktAssembly,
}

impl Default for NewtonKktSettings {
    /// Multiplier tolerance `1e-6`, constraint tolerance `1e-10` (the Uzawa loop's),
    /// block-tridiagonal factorization, the [`KktAssembly::Csc`] path.
    fn default() -> Self {
        Self {
            multiplier_tolerance: 1e-6,
            constraint_tolerance: 1e-10,
            factorization: KktFactorization::BlockTridiagonal,
            assembly: KktAssembly::Csc,
        }
    }
}

/// Everything Newton on the KKT system reads: the common Newton settings and the KKT-specific
/// ones, checked. The position update `δx` is converged when
/// `‖δx‖_∞ ≤ max(absolute_tolerance, relative_tolerance · max(1, ‖x‖_∞))` (lengths in m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct KktNewton {
    /// Iterations allowed.
    pub max_iterations: usize,
    /// `relative_tolerance` of the common settings.
    relative: f64,
    /// `absolute_tolerance` of the common settings (m).
    absolute: f64,
    /// Bound on the relative multiplier update.
    pub multiplier_tolerance: f64,
    /// Bound on `max_j ||x'_j| − 1|`.
    pub constraint_tolerance: f64,
    /// The factorization (the CSC path).
    pub factorization: KktFactorization,
    /// The assembly path.
    pub assembly: KktAssembly,
}

impl KktNewton {
    /// Checks both parts.
    pub(crate) fn new(
        newton: &fem_time::NewtonSettings,
        kkt: &NewtonKktSettings,
    ) -> Result<Self, BeamError> {
        let bad = |name, value| {
            Err(BeamError::InvalidParameter {
                name,
                value,
                expected: "> 0",
            })
        };
        if newton.max_iterations == 0 {
            return bad("max_iterations", 0.0);
        }
        if newton.relative_tolerance.is_nan() || newton.relative_tolerance <= 0.0 {
            return bad("relative_tolerance", newton.relative_tolerance);
        }
        if newton.absolute_tolerance.is_nan() || newton.absolute_tolerance < 0.0 {
            return Err(BeamError::InvalidParameter {
                name: "absolute_tolerance",
                value: newton.absolute_tolerance,
                expected: ">= 0",
            });
        }
        if kkt.multiplier_tolerance.is_nan() || kkt.multiplier_tolerance <= 0.0 {
            return bad("multiplier_tolerance", kkt.multiplier_tolerance);
        }
        if kkt.constraint_tolerance.is_nan() || kkt.constraint_tolerance <= 0.0 {
            return bad("constraint_tolerance", kkt.constraint_tolerance);
        }
        Ok(Self {
            max_iterations: newton.max_iterations,
            relative: newton.relative_tolerance,
            absolute: newton.absolute_tolerance,
            multiplier_tolerance: kkt.multiplier_tolerance,
            constraint_tolerance: kkt.constraint_tolerance,
            factorization: kkt.factorization,
            assembly: kkt.assembly,
        })
    }

    /// The bound on the relative update `‖δx‖_∞ / max(1, ‖x‖_∞)` at `x`:
    /// `max(relative, absolute / max(1, ‖x‖_∞))`. With `absolute ≤ relative` (the defaults)
    /// it is `relative` and `x` is not read.
    pub(crate) fn step_tolerance(&self, x: &[f64]) -> f64 {
        if self.absolute <= self.relative {
            return self.relative;
        }
        let scale = x.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        self.relative.max(self.absolute / scale)
    }

    /// The relative bound the error messages show ([`KktNewton::step_tolerance`] at `‖x‖ ≤ 1`).
    pub(crate) fn shown_tolerance(&self) -> f64 {
        self.relative.max(self.absolute)
    }
}

/// What one Newton–KKT solve did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NewtonKktReport {
    /// Newton iterations (= numeric factorizations of the KKT matrix).
    pub iterations: usize,
    /// `‖δx‖_∞ / max(1, ‖x‖_∞)` of the last update.
    pub step_change: f64,
    /// `‖δT‖_∞ / max(1, ‖T‖_∞)` of the last update.
    pub multiplier_change: f64,
    /// `max_j ||x'_j| − 1|` after the last update.
    pub max_constraint_violation: f64,
    /// `‖(|x'| − 1)‖_{L²} / √L` after the last update (comparable to the Uzawa
    /// `constraint_residual`).
    pub constraint_residual: f64,
    /// `‖A₀x − b + Bᵀ T‖_∞` on the free dofs before the last update (N).
    pub stationarity_residual: f64,
}

/// The Newton–KKT solver of one constrained quadratic problem: the KKT pattern analysed once,
/// the matrix refactored at every iteration.
#[derive(Debug)]
pub struct NewtonKktSolver {
    n_s: usize,
    free: Vec<usize>,
    /// Constant part of the KKT values (`A₀` on the free dofs, per component).
    base: Vec<f64>,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// Per element: the value slot of `(3 k_a + c, 3 k_b + c)`, index `(a · 4 + b) · 3 + c`
    /// (`u32::MAX` for a fixed dof).
    h_slot: Vec<[u32; N_LOCAL * N_LOCAL * DIM]>,
    /// Per point: the slots of `B` (row `m_j`) and `Bᵀ` (column `m_j`), index `a · 3 + c`.
    b_slot: Vec<[u32; N_LOCAL * DIM]>,
    bt_slot: Vec<[u32; N_LOCAL * DIM]>,
    /// faer's symbolic LU, analysed on first use (the sparse path or a fallback).
    symbolic: Option<SymbolicLu<usize>>,
    numeric: NumericLu<usize, f64>,
    /// The block-tridiagonal factorization (`None` if the pattern is not block tridiagonal).
    block: Option<BlockTridiagonal>,
    factorizations: usize,
    sparse_factorizations: usize,
    /// Scratch kept between solves: the KKT values and the block solve's work vector.
    vals: Vec<f64>,
    work: Vec<f64>,
}

fn slot_of(col_ptr: &[usize], row_idx: &[usize], row: usize, col: usize) -> u32 {
    let rows = &row_idx[col_ptr[col]..col_ptr[col + 1]];
    let i = rows.binary_search(&row).expect("entry in the KKT pattern");
    u32::try_from(col_ptr[col] + i).expect("KKT pattern fits u32 slots")
}

impl NewtonKktSolver {
    /// Analyses the KKT pattern of `model` (free dofs, constraint points); `a0` is the
    /// per-component matrix on all scalar dofs (`ρM/Δt² + α EI K` for the dynamic step).
    pub fn new(model: &Beam, a0: &CsrMatrix<f64>) -> Result<Self, BeamError> {
        let n_s = model.n_scalar();
        let mut free_of = vec![usize::MAX; n_s];
        let mut free = Vec::new();
        for (k, f) in free_of.iter_mut().enumerate() {
            if !model.is_fixed(k) {
                *f = free.len();
                free.push(k);
            }
        }
        let n_f = free.len();
        let n_p = model.n_points();
        let n = DIM * n_f + n_p;
        let n_el = model.n_elements();
        let local_free: Vec<[usize; N_LOCAL]> = (0..n_el)
            .map(|e| std::array::from_fn(|a| free_of[2 * e + a]))
            .collect();
        // Column lists: x unknown (free i, component c) is 3i + c, multiplier j is 3 n_f + j.
        let mut cols: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (e, lf) in local_free.iter().enumerate() {
            for &ka in lf {
                if ka == usize::MAX {
                    continue;
                }
                for &kb in lf {
                    if kb == usize::MAX {
                        continue;
                    }
                    for c in 0..DIM {
                        cols[DIM * kb + c].push(DIM * ka + c);
                    }
                }
            }
            for q in 0..2 {
                let m = DIM * n_f + 2 * e + q;
                if lf.iter().all(|&k| k == usize::MAX) {
                    return Err(BeamError::InvalidParameter {
                        name: "free dofs of an element",
                        value: 0.0,
                        expected: "at least one free dof per element for the Newton-KKT solver",
                    });
                }
                for &ka in lf {
                    if ka == usize::MAX {
                        continue;
                    }
                    for c in 0..DIM {
                        cols[m].push(DIM * ka + c);
                        cols[DIM * ka + c].push(m);
                    }
                }
            }
        }
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::new();
        col_ptr.push(0);
        for col in cols.iter_mut() {
            col.sort_unstable();
            col.dedup();
            row_idx.extend_from_slice(col);
            col_ptr.push(row_idx.len());
        }
        drop(cols);
        let mut base = vec![0.0; row_idx.len()];
        for (i, &k) in free.iter().enumerate() {
            let row = a0.row(k);
            for (&l, &v) in row.col_indices().iter().zip(row.values()) {
                let lf = free_of[l];
                if lf == usize::MAX {
                    continue;
                }
                for c in 0..DIM {
                    base[slot_of(&col_ptr, &row_idx, DIM * i + c, DIM * lf + c) as usize] += v;
                }
            }
        }
        let h_slot = local_free
            .iter()
            .map(|lf| {
                std::array::from_fn(|idx| {
                    let (a, b, c) = (idx / (N_LOCAL * DIM), (idx / DIM) % N_LOCAL, idx % DIM);
                    if lf[a] == usize::MAX || lf[b] == usize::MAX {
                        u32::MAX
                    } else {
                        slot_of(&col_ptr, &row_idx, DIM * lf[a] + c, DIM * lf[b] + c)
                    }
                })
            })
            .collect();
        let mut b_slot = Vec::with_capacity(n_p);
        let mut bt_slot = Vec::with_capacity(n_p);
        for j in 0..n_p {
            let lf = &local_free[j / 2];
            let m = DIM * n_f + j;
            b_slot.push(std::array::from_fn(|idx| {
                let (a, c) = (idx / DIM, idx % DIM);
                if lf[a] == usize::MAX {
                    u32::MAX
                } else {
                    slot_of(&col_ptr, &row_idx, m, DIM * lf[a] + c)
                }
            }));
            bt_slot.push(std::array::from_fn(|idx| {
                let (a, c) = (idx / DIM, idx % DIM);
                if lf[a] == usize::MAX {
                    u32::MAX
                } else {
                    slot_of(&col_ptr, &row_idx, DIM * lf[a] + c, m)
                }
            }));
        }
        // Natural block ordering: free dof k = 2 node + s (s = 0 position, 1 tangent),
        // component c at local 3 s + c of block `node`; multiplier j at local 6 + j % 2 of
        // block j / 2 + 1 (the element's second node).
        let loc: Option<Vec<u32>> = (0..n_f)
            .flat_map(|i| (0..DIM).map(move |c| (i, c)))
            .map(|(i, c)| {
                let k = free[i];
                (k / 2) * BS + DIM * (k % 2) + c
            })
            .chain((0..n_p).map(|j| (j / 2 + 1) * BS + 2 * DIM + j % 2))
            .map(|l| u32::try_from(l).ok())
            .collect();
        let block = loc.and_then(|loc| BlockTridiagonal::new(n_el + 1, loc, &col_ptr, &row_idx));
        Ok(Self {
            n_s,
            free,
            base,
            col_ptr,
            row_idx,
            h_slot,
            b_slot,
            bt_slot,
            symbolic: None,
            numeric: NumericLu::new(),
            block,
            factorizations: 0,
            sparse_factorizations: 0,
            vals: Vec::new(),
            work: Vec::new(),
        })
    }

    /// A solver with an empty pattern (placeholder when the block engine is used).
    pub(crate) fn empty() -> Self {
        Self {
            n_s: 0,
            free: Vec::new(),
            base: Vec::new(),
            col_ptr: vec![0],
            row_idx: Vec::new(),
            h_slot: Vec::new(),
            b_slot: Vec::new(),
            bt_slot: Vec::new(),
            symbolic: None,
            numeric: NumericLu::new(),
            block: None,
            factorizations: 0,
            sparse_factorizations: 0,
            vals: Vec::new(),
            work: Vec::new(),
        }
    }

    /// The symbolic sparse LU of the pattern (analysed on first use).
    fn symbolic(&mut self) -> Result<&SymbolicLu<usize>, BeamError> {
        if self.symbolic.is_none() {
            let n = self.n_unknowns();
            let sym =
                SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx);
            let params = LuSymbolicParams {
                // Banded: the simplicial factorization is as fast as the supernodal one.
                supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
                ..Default::default()
            };
            let symbolic = factorize_symbolic_lu(sym, params).map_err(|e| {
                BeamError::Solver(fem_assembly::SolverError::Structure(format!("{e:?}")))
            })?;
            self.symbolic = Some(symbolic);
        }
        Ok(self.symbolic.as_ref().expect("analysed above"))
    }

    /// Whether the KKT pattern maps onto the block-tridiagonal factorization.
    pub fn has_block_factorization(&self) -> bool {
        self.block.is_some()
    }

    /// Numeric factorizations done by faer's sparse LU (the [`KktFactorization::SparseLu`]
    /// setting, or fallbacks of the block-tridiagonal one).
    pub fn sparse_factorization_count(&self) -> usize {
        self.sparse_factorizations
    }

    /// Numeric factorizations of the KKT matrix so far (one per Newton iteration).
    pub fn factorization_count(&self) -> usize {
        self.factorizations
    }

    /// Number of unknowns of the KKT system (`3 n_free + n_points`).
    pub fn n_unknowns(&self) -> usize {
        self.col_ptr.len() - 1
    }

    /// Nonzeros of the KKT matrix.
    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// Factorizes the (scaled) KKT values `vals` with faer's sparse LU and solves in place.
    fn sparse_solve(&mut self, vals: &[f64], rhs: &mut [f64]) -> Result<(), BeamError> {
        let n = self.n_unknowns();
        self.symbolic()?;
        let symbolic = self.symbolic.as_ref().expect("analysed");
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx);
        let mat = SparseColMatRef::new(sym, vals);
        // Sequential: a banded factorization has no parallelism worth the overhead.
        let par = Par::Seq;
        let req = symbolic
            .factorize_numeric_lu_scratch::<f64>(par, Default::default())
            .or(symbolic.solve_in_place_scratch::<f64>(1, par));
        let mut mem = MemBuffer::try_new(req).map_err(|_| {
            BeamError::Solver(fem_assembly::SolverError::Structure("out of memory".into()))
        })?;
        let stack = MemStack::new(&mut mem);
        let lu = symbolic
            .factorize_numeric_lu(&mut self.numeric, mat, par, stack, Default::default())
            .map_err(|e| {
                BeamError::Solver(fem_assembly::SolverError::Structure(format!("{e:?}")))
            })?;
        self.sparse_factorizations += 1;
        lu.solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(rhs, n, 1),
            par,
            stack,
        );
        Ok(())
    }

    /// Solves `min ½xᵀA₀x − bᵀx` s.t. `|x'_j| = 1` by Newton on the KKT system.
    ///
    /// `a0` must be the matrix given to [`NewtonKktSolver::new`]. `x` (column-major, all dofs)
    /// holds the prescribed values in its fixed entries and the initial guess elsewhere;
    /// `tension` (one per constraint point) the initial multipliers `T_j`. On return both
    /// hold the last iterate (also when not converged: the flag tells). `newton` gives the
    /// iteration cap and the tolerance on the position update (see [`NewtonKktSettings`]).
    pub fn solve(
        &mut self,
        model: &Beam,
        (a0, b): (&CsrMatrix<f64>, &[f64]),
        x: &mut [f64],
        tension: &mut [f64],
        newton: &fem_time::NewtonSettings,
        kkt: &NewtonKktSettings,
    ) -> Result<(NewtonKktReport, bool), BeamError> {
        let settings = KktNewton::new(newton, kkt)?;
        let n_s = self.n_s;
        let residual = |x: &[f64], res: &mut [f64]| {
            for c in 0..DIM {
                let r = c * n_s..(c + 1) * n_s;
                let rc = &mut res[r.clone()];
                fem_assembly::sparse::mul_add(0.0, rc, 1.0, a0, &x[r.clone()]);
                for (ri, bi) in rc.iter_mut().zip(&b[r]) {
                    *ri -= bi;
                }
            }
        };
        self.solve_with(model, &residual, x, tension, &settings)
    }

    /// As [`NewtonKktSolver::solve`], with the linear part of the residual, `A₀x − b` on all
    /// dofs (column-major), computed by `linear_residual(x, out)`. The dynamic stepper uses it
    /// to evaluate the bending force element by element on translation- and
    /// rotation-free local values: `A₀x − b` formed directly has a round-off floor
    /// `≈ ε EI/h³ |x|` (0.3 N at `N = 1e5`) that the multipliers amplify by `O(1/h)`.
    pub(crate) fn solve_with(
        &mut self,
        model: &Beam,
        linear_residual: &dyn Fn(&[f64], &mut [f64]),
        x: &mut [f64],
        tension: &mut [f64],
        settings: &KktNewton,
    ) -> Result<(NewtonKktReport, bool), BeamError> {
        let (n_s, n_f) = (self.n_s, self.free.len());
        let n_p = model.n_points();
        let n = self.n_unknowns();
        let w = model.point_weights();
        let dn = model.point_derivatives();
        let l = model.length();
        let mut d = vec![[0.0; 3]; n_p];
        let mut forces = vec![[0.0; 3]; n_p];
        let mut res = vec![0.0; DIM * n_s];
        let mut rhs = vec![0.0; n];
        let mut vals = std::mem::take(&mut self.vals);
        vals.resize(self.base.len(), 0.0);
        let mut scale = vec![1.0; n];
        let mut work = std::mem::take(&mut self.work);
        let mut report = NewtonKktReport::default();
        let (mut dx_prev, mut dt_prev) = (f64::INFINITY, f64::INFINITY);
        model.tangents_at_points(x, &mut d);
        for it in 1..=settings.max_iterations {
            // Residual: A₀x − b + Σ_j w_j T_j N'_j ⊗ x'_j on the free dofs; w_j c_j.
            linear_residual(x, &mut res);
            for j in 0..n_p {
                forces[j] = d[j].map(|e| e * tension[j]);
            }
            model.add_point_forces(&forces, &mut res);
            let mut stat = 0.0f64;
            for (i, &k) in self.free.iter().enumerate() {
                for c in 0..DIM {
                    let v = res[c * n_s + k];
                    stat = stat.max(v.abs());
                    rhs[DIM * i + c] = -v;
                }
            }
            for j in 0..n_p {
                let dj = d[j];
                rhs[DIM * n_f + j] =
                    -w[j] * 0.5 * (dj[0] * dj[0] + dj[1] * dj[1] + dj[2] * dj[2] - 1.0);
            }
            // KKT values.
            vals.copy_from_slice(&self.base);
            for (e, hs) in self.h_slot.iter().enumerate() {
                let (j0, j1) = (2 * e, 2 * e + 1);
                let (t0, t1) = (w[j0] * tension[j0], w[j1] * tension[j1]);
                for a in 0..N_LOCAL {
                    for bb in 0..N_LOCAL {
                        let kt = t0 * dn[j0][a] * dn[j0][bb] + t1 * dn[j1][a] * dn[j1][bb];
                        for c in 0..DIM {
                            let s = hs[(a * N_LOCAL + bb) * DIM + c];
                            if s != u32::MAX {
                                vals[s as usize] += kt;
                            }
                        }
                    }
                }
            }
            for j in 0..n_p {
                for a in 0..N_LOCAL {
                    let f = w[j] * dn[j][a];
                    for c in 0..DIM {
                        let idx = a * DIM + c;
                        let s = self.b_slot[j][idx];
                        if s != u32::MAX {
                            vals[s as usize] = f * d[j][c];
                            vals[self.bt_slot[j][idx] as usize] = f * d[j][c];
                        }
                    }
                }
            }
            // Symmetric scaling D K D: x columns by 1/√max|H|, multiplier columns so that the
            // scaled constraint rows have unit max norm (the raw B is O(1), H up to EI/h³).
            let nx = DIM * n_f;
            for col in 0..n {
                let (lo, hi) = (self.col_ptr[col], self.col_ptr[col + 1]);
                if col < nx {
                    let m = (lo..hi)
                        .filter(|&k| self.row_idx[k] < nx)
                        .fold(0.0f64, |m, k| m.max(vals[k].abs()));
                    scale[col] = if m > 0.0 { 1.0 / m.sqrt() } else { 1.0 };
                }
            }
            for col in nx..n {
                let (lo, hi) = (self.col_ptr[col], self.col_ptr[col + 1]);
                let m = (lo..hi).fold(0.0f64, |m, k| {
                    m.max((vals[k] * scale[self.row_idx[k]]).abs())
                });
                scale[col] = if m > 0.0 { 1.0 / m } else { 1.0 };
            }
            for col in 0..n {
                for k in self.col_ptr[col]..self.col_ptr[col + 1] {
                    vals[k] *= scale[col] * scale[self.row_idx[k]];
                }
            }
            for (r, s) in rhs.iter_mut().zip(&scale) {
                *r *= s;
            }
            let use_block = settings.factorization == KktFactorization::BlockTridiagonal;
            let done = match self.block.as_mut() {
                Some(block) if use_block => {
                    let ok = block.factorize(&vals);
                    if ok {
                        block.solve_in_place(&mut rhs, &mut work);
                    }
                    ok
                }
                _ => false,
            };
            if !done {
                self.sparse_solve(&vals, &mut rhs)?;
            }
            self.factorizations += 1;
            for (r, s) in rhs.iter_mut().zip(&scale) {
                *r *= s;
            }
            // Update.
            let (mut dxm, mut xm, mut dtm, mut tm) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
            for (i, &k) in self.free.iter().enumerate() {
                for c in 0..DIM {
                    let v = &mut x[c * n_s + k];
                    *v += rhs[DIM * i + c];
                    dxm = dxm.max(rhs[DIM * i + c].abs());
                    xm = xm.max(v.abs());
                }
            }
            for (j, t) in tension.iter_mut().enumerate() {
                *t += rhs[DIM * n_f + j];
                dtm = dtm.max(rhs[DIM * n_f + j].abs());
                tm = tm.max(t.abs());
            }
            model.tangents_at_points(x, &mut d);
            let (mut cmax, mut c2) = (0.0f64, 0.0);
            for j in 0..n_p {
                let e = norm(d[j]) - 1.0;
                cmax = cmax.max(e.abs());
                c2 += w[j] * e * e;
            }
            report = NewtonKktReport {
                iterations: it,
                step_change: dxm / xm.max(1.0),
                multiplier_change: dtm / tm.max(1.0),
                max_constraint_violation: cmax,
                constraint_residual: (c2 / l).sqrt(),
                stationarity_residual: stat,
            };
            if !(report.step_change.is_finite() && report.multiplier_change.is_finite()) {
                (self.vals, self.work) = (vals, work);
                return Ok((report, false));
            }
            // Converged when the constraint holds and both updates are below their tolerances
            // or have reached their round-off floor (no longer contracting; Newton contracts
            // quadratically until then). Positions must be within 1e4 of their tolerance; the
            // multipliers have no such guard: on fine meshes the difference of the two `T_j` of
            // an element is nearly unobservable (its force is `O(h)` smaller than that of the
            // mean), and its round-off floor grows like `1/h` (see the theory doc).
            let stalled = |now: f64, prev: f64| it >= 2 && now > 0.1 * prev;
            let step_tolerance = settings.step_tolerance(x);
            let x_ok = report.step_change <= step_tolerance
                || (report.step_change <= 1e4 * step_tolerance
                    && stalled(report.step_change, dx_prev));
            let t_ok = report.multiplier_change <= settings.multiplier_tolerance
                || stalled(report.multiplier_change, dt_prev);
            if report.max_constraint_violation <= settings.constraint_tolerance && x_ok && t_ok {
                (self.vals, self.work) = (vals, work);
                return Ok((report, true));
            }
            dx_prev = report.step_change;
            dt_prev = report.multiplier_change;
        }
        (self.vals, self.work) = (vals, work);
        Ok((report, false))
    }
}
