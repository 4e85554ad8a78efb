//! DEF_EXP's massless dofs (issue 24; docs/theory/contact.md §9.1, eqs. C26–C29): dofs whose
//! lumped mass is zero (a redistributed mass, `fem_scene::redistribute`) have no inertia to
//! step; their positions at `t + h` are the static equilibrium of the body given the massive
//! dofs' new positions and the impulse `p_c` on them,
//!
//! ```text
//! f_ext,c − f_int,c(q_m^{t+h}, q_c^{t+h}) + p_c/h = 0                                    (C26)
//! u_c^{t+h} = 2 (q_c^{t+h} − q_c^{t+h/2}) / h      (the leap-frog's drift q(t+h), read backwards)  (C27)
//! u_c^{t+h} ≈ u_c,free + (2/h²) K_cc⁻¹ p_c,   i.e. A_c = (h²/2) K_cc                         (C28)
//! ```
//!
//! `(C26)` is solved by Newton on `q_c` with the tangent block `K_cc` (sparse Cholesky, or LU
//! for an unsymmetric tangent): one solve for a linear law ([`crate::SecondOrderSystem::is_linear`]: the
//! block is factored once), and for a nonlinear one until the correction — or, on a kept
//! factorization ([`REUSE_CONTRACTION`]), the error it leaves, `rate/(1 − rate)` of it with
//! `rate` the ratio of the last two corrections — is below
//! [`TOLERANCE`] of the body's motion over the step (three for most solves of an SVK bar at
//! `v₀/c = 10⁻⁴`: docs/validation.md), or, when a fresh tangent's correction no longer halves, below
//! [`ROUNDING_FLOOR`] of it (the force's rounding), at most [`MAX_ITERATIONS`]. Each iteration is an
//! internal force and a tangent block `K_cc` of the cells touching the massless nodes only,
//! when the system gives them ([`DofBlock`], [`LeapFrogSystem::dof_block`]; a solid does:
//! the same values bit for bit, a tenth of the body for a box's bottom face), else of the
//! whole body; the symbolic factorization of `K_cc` is done once. The last factorization is
//! kept for the contact map `(C28)`.
//!
//! After the step, a massless dof's velocity is not the `u_c^{t+h}` of `(C27)` (that one
//! alternates from step to step: the energy does not see it) but the step's mean rate, as in
//! DEF_LIM,
//!
//! ```text
//! u_c^{t+h} := (q_c^{t+h} − q_c^t)/h = (u_c^t + u_c^{t+h})/2                                 (C29)
//! ```
//!
//! so that the next half drift `q_c + (h/2) u_c` extrapolates the dof's motion, and a dof a
//! contact holds on the obstacle (`q_c^{t+h} = q_c^t`) stays on it at the mid-step. The rate of
//! the free equilibrium, `−K_cc⁻¹ K_c,r u_r` (exact for the condensed system without contact),
//! was tried and rejected: it carries a held dof half a step into the obstacle at each mid-step,
//! and the exact chain's energy then grew by 15 % (20 cells, Courant 1) where the mean rate's
//! grows by 0.5 % (docs/validation.md, "The law on an exact chain").

use std::sync::Mutex;
use std::time::{Duration, Instant};

use fem_assembly::{CsrMatrix, Factorization};

use super::LeapFrogSystem;
use crate::{Clock, EvalError, StepError};

/// Newton on (C26) stops when the correction is below this fraction of the body's motion
/// over the step (or of its positions, for a body at rest).
pub const TOLERANCE: f64 = 1e-10;
/// At most this many Newton iterations on (C26).
pub const MAX_ITERATIONS: usize = 20;
/// `K_cc`'s factorization is kept from iteration to iteration and step to step (Newton with a
/// fixed matrix) while each iteration on it shrinks the correction at least this much: the
/// ratio of two corrections measures `‖K_old⁻¹ (K − K_old)‖` along the step's motion, how
/// far the tangent has moved. Above it the tangent is evaluated and factored at the next
/// iterate.
pub const REUSE_CONTRACTION: f64 = 1e-2;
/// Newton on (C26) also stops when a fresh tangent's correction no longer halves and is below
/// this fraction of the step's motion: it has reached the rounding of the internal force (a
/// solid's `F = I + ∇u` rounds `∇u` to `ε`, so at `v₀/c = 10⁻⁶` the correction cannot go below
/// about `2·10⁻¹⁰` of the motion, above [`TOLERANCE`]).
pub const ROUNDING_FLOOR: f64 = 1e-6;
/// A factorization kept this many solves of (C26) is renewed at the next one, however well
/// it contracts (a guard for a body whose solves converge in one iteration, which measure no
/// contraction).
pub const REUSE_SOLVES: usize = 64;

/// The internal force and tangent of a system on a block of its dofs (the massless ones),
/// evaluated on the part of the system that acts on them only: for a solid, the cells touching
/// the block's nodes (`fem_assembly::SolidPart`), a tenth of a 10⁵-cell box for its bottom
/// face. (C26) needs no more: the massive dofs are held while Newton moves the massless ones,
/// so their rows, and `K_cr`, are not asked. Given by [`LeapFrogSystem::dof_block`].
pub trait DofBlock: std::fmt::Debug + Send + Sync {
    /// `f_int` at `x` (every dof of the system) on the block's dofs, into `f` (one value per
    /// block dof, in the order of the dofs given): the whole system's values.
    fn internal_force(&mut self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError>;
    /// The tangent block `K_cc` with its pattern (rows and columns numbered as the block's
    /// dofs, sorted columns) and zero values: the entries the whole tangent's block holds.
    fn tangent_pattern(&self) -> CsrMatrix<f64>;
    /// `K_cc(x)` into `k`'s values (the pattern of [`tangent_pattern`](Self::tangent_pattern)):
    /// the whole tangent's block.
    fn tangent_into(&mut self, x: &[f64], k: &mut CsrMatrix<f64>) -> Result<(), EvalError>;
}

/// What the massless block's equilibrium cost so far: counts and wall time by part (the
/// bench `massless_on_plane` of fem-scene prints them against the whole body's force).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MasslessStatistics {
    /// Whether the force and tangent are the system's block ([`DofBlock`]) rather than the
    /// whole system's.
    pub restricted: bool,
    /// Solves of the equilibrium (C26).
    pub solves: u64,
    /// Newton iterations over those solves.
    pub iterations: u64,
    /// Numeric factorizations of `K_cc` (the symbolic one is done once).
    pub factorizations: u64,
    /// Right-hand sides solved by the contact map (C28).
    pub map_columns: u64,
    /// Wall time in the internal force (of the block, or of the whole system).
    pub force: Duration,
    /// Wall time in the tangent (the block's `K_cc`, or the whole tangent and its block).
    pub tangent: Duration,
    /// Wall time in the numeric factorizations.
    pub factorization: Duration,
    /// Wall time in the triangular solves of Newton and of the map (C28).
    pub solve: Duration,
    /// Factorizations renewed because an iteration on a kept one contracted by less than
    /// [`REUSE_CONTRACTION`].
    pub renewed_by_contraction: u64,
}

/// How the block's force and tangent are evaluated.
#[derive(Debug)]
enum Evaluation {
    /// By the system's [`DofBlock`]; `f` the block's force.
    Block {
        block: Box<dyn DofBlock>,
        f: Vec<f64>,
    },
    /// By the whole system: its tangent (pattern fixed), where each entry of `K_cc` sits in
    /// its values, and its force `f`.
    Whole {
        k: CsrMatrix<f64>,
        positions: Vec<usize>,
        f: Vec<f64>,
    },
}

/// The massless block of a DEF_EXP body: its dofs, the tangent's block `K_cc` factored.
#[derive(Debug)]
pub(crate) struct Massless {
    /// The massless dofs that are not prescribed, ascending.
    dofs: Vec<usize>,
    /// Dof → its index in `dofs`.
    index: Vec<Option<usize>>,
    evaluation: Evaluation,
    /// `K_cc` on its pattern.
    k_cc: CsrMatrix<f64>,
    factor: Factorization,
    linear: bool,
    /// Whether the factorization is kept while it contracts ([`REUSE_CONTRACTION`]); else
    /// the tangent is evaluated and factored at every iteration.
    reuse: bool,
    /// The next iteration evaluates and factors the tangent.
    renew: bool,
    /// Solves of (C26) since the last factorization.
    age: usize,
    /// Buffers: a trial position, a right-hand side.
    q: Vec<f64>,
    rhs: Vec<f64>,
    /// The last free equilibrium (C26 without impulse) minus the step's end position, per
    /// massless dof: what the contact impulses moved the layer by. The next free solve starts
    /// from it (under a steady contact the free equilibrium lies as far from the supported
    /// positions as at the last step).
    offset: Vec<f64>,
    /// The last free equilibrium, per massless dof.
    free: Vec<f64>,
    statistics: Mutex<MasslessStatistics>,
}

impl Massless {
    /// The massless block of `system` (dofs with `mass[d] == 0` that `prescribed` leaves free),
    /// its tangent at `x` factored; `None` when there is none. The block's force and tangent
    /// are the system's [`DofBlock`] when it gives one.
    pub fn new<S: LeapFrogSystem>(
        system: &S,
        mass: &[f64],
        prescribed: impl Fn(usize) -> bool,
        x: &[f64],
        clock: Clock,
    ) -> Result<Option<Self>, StepError> {
        let dofs: Vec<usize> = (0..mass.len())
            .filter(|&d| mass[d] == 0.0 && !prescribed(d))
            .collect();
        if dofs.is_empty() {
            return Ok(None);
        }
        let symmetry = system
            .tangent_kind()
            .symmetry()
            .ok_or(StepError::NeedsTangent {
                scheme: "DEF_EXP with massless dofs",
            })?;
        let mut index = vec![None; mass.len()];
        for (i, &d) in dofs.iter().enumerate() {
            index[d] = Some(i);
        }
        let n = mass.len();
        let nc = dofs.len();
        let mut statistics = MasslessStatistics::default();
        let start = Instant::now();
        let (evaluation, k_cc) = match system.dof_block(&dofs) {
            Some(mut block) => {
                let mut k_cc = block.tangent_pattern();
                block
                    .tangent_into(x, &mut k_cc)
                    .and_then(|()| EvalError::check_finite("tangent", k_cc.values()))
                    .map_err(|e| clock.failed(e))?;
                statistics.restricted = true;
                let f = vec![0.0; nc];
                (Evaluation::Block { block, f }, k_cc)
            }
            None => {
                let k = system
                    .tangent(x)
                    .map_err(|e| clock.failed(e))?
                    .to_csr()
                    .into_owned();
                let (k_cc, positions) = block(&k, &index, nc);
                let f = vec![0.0; n];
                (Evaluation::Whole { k, positions, f }, k_cc)
            }
        };
        statistics.tangent += start.elapsed();
        let start = Instant::now();
        // A nested-dissection order from the dofs' points when the system gives them
        // (fem_assembly::ordering: less fill than faer's minimum degree, and each Newton
        // iteration is a solve with the factor).
        let factor = match (system.dof_points(), symmetry) {
            (Some(points), fem_assembly::Symmetry::Symmetric) if points.len() == n => {
                let block_points: Vec<[f64; 3]> = dofs.iter().map(|&d| points[d]).collect();
                let order = fem_assembly::ordering::nested_dissection(&block_points, &k_cc);
                Factorization::with_order(&k_cc, symmetry, &order)?
            }
            _ => Factorization::new(&k_cc, symmetry)?,
        };
        statistics.factorization += start.elapsed();
        statistics.factorizations += 1;
        Ok(Some(Self {
            dofs,
            index,
            evaluation,
            k_cc,
            factor,
            linear: system.is_linear(),
            reuse: true,
            renew: false,
            age: 0,
            q: vec![0.0; n],
            rhs: vec![0.0; nc],
            offset: vec![0.0; nc],
            free: vec![0.0; nc],
            statistics: Mutex::new(statistics),
        }))
    }

    /// The massless dofs, ascending.
    pub fn dofs(&self) -> &[usize] {
        &self.dofs
    }

    /// Dof `d`'s index among [`dofs`](Self::dofs).
    pub fn index(&self, d: usize) -> Option<usize> {
        self.index.get(d).copied().flatten()
    }

    /// Whether `K_cc`'s factorization is kept while it contracts ([`REUSE_CONTRACTION`],
    /// the default) or renewed at every Newton iteration (`false`).
    pub fn set_reuse(&mut self, reuse: bool) {
        self.reuse = reuse;
    }

    /// What the equilibrium cost so far.
    pub fn statistics(&self) -> MasslessStatistics {
        *self.statistics.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `b ← (2/h²) K_cc⁻¹ b` for `n_rhs` columns of [`dofs`](Self::dofs)`.len()` values
    /// (C28), with the last factorization.
    pub fn apply_inverse_inertia(&self, h: f64, b: &mut [f64], n_rhs: usize) {
        let start = Instant::now();
        self.factor.solve_many_in_place(b, n_rhs);
        let c = 2.0 / (h * h);
        b.iter_mut().for_each(|v| *v *= c);
        let mut s = self.statistics.lock().unwrap_or_else(|e| e.into_inner());
        s.solve += start.elapsed();
        s.map_columns += n_rhs as u64;
    }

    /// `f_int` at `self.q` (the block's, or the whole system's), read by
    /// [`Self::block_force`].
    fn evaluate_force<S: LeapFrogSystem>(
        &mut self,
        system: &S,
        clock: Clock,
    ) -> Result<(), StepError> {
        match &mut self.evaluation {
            Evaluation::Block { block, f } => block
                .internal_force(&self.q, f)
                .and_then(|()| EvalError::check_finite("internal force", f)),
            Evaluation::Whole { f, .. } => system
                .internal_force(&self.q, f)
                .and_then(|()| EvalError::check_finite("internal force", f)),
        }
        .map_err(|e| clock.failed(e))
    }

    /// Block dof `i`'s (dof `d`'s) internal force after [`Self::evaluate_force`].
    fn block_force(&self, i: usize, d: usize) -> f64 {
        match &self.evaluation {
            Evaluation::Block { f, .. } => f[i],
            Evaluation::Whole { f, .. } => f[d],
        }
    }

    /// `K_cc` at `self.q` into `self.k_cc`.
    fn evaluate_tangent<S: LeapFrogSystem>(
        &mut self,
        system: &S,
        clock: Clock,
    ) -> Result<(), StepError> {
        match &mut self.evaluation {
            Evaluation::Block { block, .. } => block
                .tangent_into(&self.q, &mut self.k_cc)
                .and_then(|()| EvalError::check_finite("tangent", self.k_cc.values())),
            Evaluation::Whole { k, positions, .. } => system
                .tangent_into(&self.q, k)
                .and_then(|()| EvalError::check_finite("tangent", k.values()))
                .map(|()| {
                    for (v, &p) in self.k_cc.values_mut().iter_mut().zip(positions.iter()) {
                        *v = k.values()[p];
                    }
                }),
        }
        .map_err(|e| clock.failed(e))
    }

    /// Solves (C26) for `q_c^{t+h}` and writes `u_c^{t+h}` of (C27) into `u_new`: `q_half`
    /// the mid-step positions, `u_new` the end velocities of every other dof (set), `f_ext`
    /// the external force of the step, `impulse` the impulse per dof (or empty). The start
    /// guess is `q_half + (h/2) u_new` on the massless dofs too, plus, for the free
    /// equilibrium (no `impulse`), what the last step's impulses moved them by.
    #[allow(clippy::too_many_arguments)]
    pub fn solve<S: LeapFrogSystem>(
        &mut self,
        system: &S,
        clock: Clock,
        q_half: &[f64],
        u_new: &mut [f64],
        f_ext: &[f64],
        impulse: &[f64],
    ) -> Result<(), StepError> {
        let h = clock.dt();
        for ((q, qh), u) in self.q.iter_mut().zip(q_half).zip(u_new.iter()) {
            *q = qh + 0.5 * h * u;
        }
        let free = impulse.is_empty();
        if free {
            for (&d, o) in self.dofs.iter().zip(&self.offset) {
                self.q[d] += o;
            }
        }
        // The scale of the tolerance: the body's motion over the step (a massless dof held
        // by a contact does not move), or its positions for a body at rest.
        let motion = u_new
            .iter()
            .map(|u| (0.5 * h * u).abs())
            .fold(0.0, f64::max);
        let size = self.q.iter().map(|q| q.abs()).fold(0.0, f64::max);
        let scale = if motion > 0.0 {
            motion
        } else {
            size.max(f64::MIN_POSITIVE)
        };
        let mut spent = MasslessStatistics::default();
        let mut correction = f64::INFINITY;
        let mut iterations = 0;
        let mut converged = false;
        self.age += 1;
        if self.age > REUSE_SOLVES {
            self.renew = true;
        }
        while iterations < MAX_ITERATIONS {
            let start = Instant::now();
            self.evaluate_force(system, clock)?;
            spent.force += start.elapsed();
            for i in 0..self.dofs.len() {
                let d = self.dofs[i];
                let p = impulse.get(d).copied().unwrap_or(0.0);
                self.rhs[i] = f_ext[d] - self.block_force(i, d) + p / h;
            }
            let factored = !self.linear && (self.renew || !self.reuse);
            if factored {
                let start = Instant::now();
                self.evaluate_tangent(system, clock)?;
                spent.tangent += start.elapsed();
                let start = Instant::now();
                self.factor.refactor(&self.k_cc)?;
                spent.factorization += start.elapsed();
                spent.factorizations += 1;
                self.renew = false;
                self.age = 0;
            }
            let start = Instant::now();
            self.factor.solve_in_place(&mut self.rhs);
            spent.solve += start.elapsed();
            let previous = correction;
            correction = 0.0;
            for (dq, &d) in self.rhs.iter().zip(&self.dofs) {
                self.q[d] += dq;
                correction = f64::max(correction, dq.abs());
            }
            iterations += 1;
            if self.linear || correction <= TOLERANCE * scale {
                converged = true;
                break;
            }
            if factored && correction > 0.5 * previous && correction <= ROUNDING_FLOOR * scale {
                // A fresh tangent that no longer halves the correction: the force's rounding.
                converged = true;
                break;
            }
            if self.reuse && !factored && previous.is_finite() {
                // Two iterations on one matrix: the error left is about
                // rate/(1 − rate) of the last correction (a fixed-point iteration).
                let rate = correction / previous;
                if rate <= REUSE_CONTRACTION
                    && correction * rate / (1.0 - rate) <= TOLERANCE * scale
                {
                    converged = true;
                    break;
                }
                // A kept factorization that no longer contracts enough: the tangent moved.
                if rate > REUSE_CONTRACTION {
                    self.renew = true;
                    spent.renewed_by_contraction += 1;
                }
            }
        }
        {
            let mut s = self.statistics.lock().unwrap_or_else(|e| e.into_inner());
            s.solves += 1;
            s.iterations += iterations as u64;
            s.factorizations += spent.factorizations;
            s.force += spent.force;
            s.tangent += spent.tangent;
            s.factorization += spent.factorization;
            s.solve += spent.solve;
            s.renewed_by_contraction += spent.renewed_by_contraction;
        }
        if !converged {
            return Err(StepError::NewtonDiverged {
                step: clock.step() + 1,
                iterations,
                residual: correction / scale,
                tolerance: TOLERANCE,
            });
        }
        for &d in &self.dofs {
            u_new[d] = 2.0 * (self.q[d] - q_half[d]) / h;
        }
        if free {
            for (f, &d) in self.free.iter_mut().zip(&self.dofs) {
                *f = self.q[d];
            }
        }
        Ok(())
    }

    /// Records the step's end positions `q_half + (h/2) u_new` of the massless dofs against
    /// the step's free equilibrium: the start of the next free solve.
    pub fn end_step(&mut self, h: f64, q_half: &[f64], u_new: &[f64]) {
        for ((o, f), &d) in self.offset.iter_mut().zip(&self.free).zip(&self.dofs) {
            *o = f - (q_half[d] + 0.5 * h * u_new[d]);
        }
    }
}

/// The block of `k` on the rows and columns `index` numbers (`n` of them), and the position
/// in `k`'s values of each of its entries.
fn block(k: &CsrMatrix<f64>, index: &[Option<usize>], n: usize) -> (CsrMatrix<f64>, Vec<usize>) {
    let mut offsets = vec![0usize; n + 1];
    let mut cols = Vec::new();
    let mut values = Vec::new();
    let mut positions = Vec::new();
    let mut row_of = vec![usize::MAX; n];
    for (d, i) in index.iter().enumerate() {
        if let Some(i) = i {
            row_of[*i] = d;
        }
    }
    let row_offsets = k.row_offsets();
    for (i, &d) in row_of.iter().enumerate() {
        let mut entries: Vec<(usize, usize)> = (row_offsets[d]..row_offsets[d + 1])
            .filter_map(|p| index[k.col_indices()[p]].map(|j| (j, p)))
            .collect();
        entries.sort_unstable();
        for (j, p) in entries {
            cols.push(j);
            values.push(k.values()[p]);
            positions.push(p);
        }
        offsets[i + 1] = cols.len();
    }
    let k_cc = CsrMatrix::try_from_csr_data(n, n, offsets, cols, values)
        .expect("a block of a CSR matrix is a CSR matrix");
    (k_cc, positions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leapfrog::{CriticalStepCheck, DefExp};
    use crate::{LinearSystem, Mass, Matrix, NodalStepper, SecondOrderSystem, StepSettings};
    use crate::{Stepper, TangentKind};
    use fem_assembly::StableStep;

    /// A mass `m = 1` on a spring `k₁ = 1` to the ground and on `k₂ = 2` to a massless node,
    /// itself on `k₃ = 2` to the ground: the condensed spring is `k₁ + k₂k₃/(k₂ + k₃) = 2`,
    /// `ω = √2`.
    struct Springs(LinearSystem);

    impl SecondOrderSystem for Springs {
        fn n_dofs(&self) -> usize {
            2
        }
        fn mass(&self) -> &Mass {
            self.0.mass()
        }
        fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
            self.0.internal_force(x, f)
        }
        fn tangent_kind(&self) -> TangentKind {
            TangentKind::Symmetric
        }
        fn tangent(&self, x: &[f64]) -> Result<Matrix, EvalError> {
            self.0.tangent(x)
        }
        fn is_linear(&self) -> bool {
            true
        }
        fn potential_energy(&self, x: &[f64]) -> Option<f64> {
            self.0.potential_energy(x)
        }
    }

    impl LeapFrogSystem for Springs {
        fn critical_step(&self, _x: &[f64]) -> Result<StableStep, EvalError> {
            // The massive block's bound, λ = K_00/m = 3 (held massless node).
            Ok(StableStep {
                dt: 2.0 / 3f64.sqrt(),
                lambda_max: 3.0,
                cell: 0,
            })
        }
    }

    fn springs() -> Springs {
        let k = CsrMatrix::try_from_csr_data(
            2,
            2,
            vec![0, 2, 4],
            vec![0, 1, 0, 1],
            vec![3.0, -2.0, -2.0, 4.0],
        )
        .unwrap();
        Springs(LinearSystem::new(Mass::Lumped(vec![1.0, 0.0]), k))
    }

    /// The error of the mass's position at `t = 2` and the largest relative drift of
    /// `½ m u² + ½ qᵀKq` over the run, step `h`.
    fn run(h: f64) -> (f64, f64) {
        let x0 = [1.0, 0.5];
        let mut s = DefExp::new(
            springs(),
            StepSettings::new(h),
            &x0,
            &[0.0, 0.0],
            CriticalStepCheck::every(0),
        )
        .unwrap();
        let e0 = s.energy().unwrap().total;
        let mut drift: f64 = 0.0;
        let n = (2.0 / h).round() as usize;
        for _ in 0..n {
            s.step().unwrap();
            drift = drift.max((s.energy().unwrap().total - e0).abs() / e0);
        }
        let exact = (2f64.sqrt() * 2.0).cos();
        ((s.position()[0] - exact).abs(), drift)
    }

    #[test]
    fn a_massless_node_between_springs_converges_at_second_order() {
        // (C26)-(C29) on the linear two-spring system: the mass follows cos(√2 t) with the
        // leap-frog's second order, and the energy drifts by O(h²) only.
        let (e1, d1) = run(0.1);
        let (e2, d2) = run(0.05);
        let (e3, d3) = run(0.025);
        let (p1, p2) = ((e1 / e2).log2(), (e2 / e3).log2());
        println!(
            "errors {e1:.3e} {e2:.3e} {e3:.3e}, orders {p1:.3} {p2:.3}, drift {d1:.3e} {d2:.3e} {d3:.3e}"
        );
        assert!(
            p1 > 1.8 && p2 > 1.9,
            "orders {p1} {p2} (errors {e1} {e2} {e3})"
        );
        assert!(d3 < 1e-3 && d2 / d3 > 3.0, "energy drift {d1} {d2} {d3}");
    }

    /// A mass `m = 1` on a spring `k₁ = 1` to the ground and on a hardening spring
    /// `s(d) = k₂ d + a d³` (`k₂ = 2`, `a = 1/2`) to a massless node, itself on
    /// `k₃ x + b x³` (`k₃ = 2`, `b = 1/2`) to the ground: a nonlinear (C26), its tangent
    /// changing along the motion (amplitude 1).
    struct Hardening;

    /// [`Hardening`] at amplitude `10⁻⁶` with its spring lengths computed as a solid computes
    /// them, from positions near 1 (`F = I + ∇u`): the force rounds at `ε` absolute.
    struct RoundedHardening;

    const OFFSET: f64 = 1.0;

    impl SecondOrderSystem for RoundedHardening {
        fn n_dofs(&self) -> usize {
            2
        }
        fn mass(&self) -> &Mass {
            Hardening.mass()
        }
        fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
            let rounded = [(x[0] + OFFSET) - OFFSET, (x[1] + OFFSET) - OFFSET];
            Hardening.internal_force(&rounded, f)
        }
        fn tangent_kind(&self) -> TangentKind {
            TangentKind::Symmetric
        }
        fn tangent(&self, x: &[f64]) -> Result<Matrix, EvalError> {
            Hardening.tangent(x)
        }
    }

    impl LeapFrogSystem for RoundedHardening {
        fn critical_step(&self, x: &[f64]) -> Result<StableStep, EvalError> {
            Hardening.critical_step(x)
        }
    }

    #[test]
    fn newton_stops_at_the_rounding_of_the_force() {
        // At amplitude 10⁻⁶ the force's rounding (ε on positions near 1) is about 10⁻⁸ of a
        // step's motion: above TOLERANCE, below ROUNDING_FLOOR. Newton stops there instead of
        // failing (it failed with NewtonDiverged before ROUNDING_FLOOR), on a fresh and on a
        // kept factorization, and the motion is the exact system's to the rounding.
        for reuse in [false, true] {
            let x0 = [1e-6, 0.0];
            let mut s = DefExp::new(
                RoundedHardening,
                StepSettings::new(0.05),
                &x0,
                &[0.0, 0.0],
                CriticalStepCheck::every(0),
            )
            .unwrap();
            s.set_massless_reuse(reuse);
            let mut exact = DefExp::new(
                Hardening,
                StepSettings::new(0.05),
                &x0,
                &[0.0, 0.0],
                CriticalStepCheck::every(0),
            )
            .unwrap();
            for _ in 0..40 {
                s.step().unwrap();
                exact.step().unwrap();
            }
            let error = (s.position()[0] - exact.position()[0]).abs();
            println!(
                "reuse {reuse}: {:.6e} against {:.6e}",
                s.position()[0],
                exact.position()[0]
            );
            assert!(error < 1e-6 * 1e-6, "{error}");
        }
    }

    const K1: f64 = 1.0;
    const K2: f64 = 2.0;
    const A: f64 = 0.5;
    const K3: f64 = 2.0;
    const B: f64 = 0.5;

    impl SecondOrderSystem for Hardening {
        fn n_dofs(&self) -> usize {
            2
        }
        fn mass(&self) -> &Mass {
            static MASS: std::sync::OnceLock<Mass> = std::sync::OnceLock::new();
            MASS.get_or_init(|| Mass::Lumped(vec![1.0, 0.0]))
        }
        fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
            let d = x[1] - x[0];
            let s = K2 * d + A * d * d * d;
            f[0] = K1 * x[0] - s;
            f[1] = s + K3 * x[1] + B * x[1] * x[1] * x[1];
            Ok(())
        }
        fn tangent_kind(&self) -> TangentKind {
            TangentKind::Symmetric
        }
        fn tangent(&self, x: &[f64]) -> Result<Matrix, EvalError> {
            let d = x[1] - x[0];
            let ds = K2 + 3.0 * A * d * d;
            let k = CsrMatrix::try_from_csr_data(
                2,
                2,
                vec![0, 2, 4],
                vec![0, 1, 0, 1],
                vec![K1 + ds, -ds, -ds, ds + K3 + 3.0 * B * x[1] * x[1]],
            )
            .unwrap();
            Ok(Matrix::Sparse(k))
        }
        fn potential_energy(&self, x: &[f64]) -> Option<f64> {
            let d = x[1] - x[0];
            Some(
                0.5 * K1 * x[0] * x[0]
                    + 0.5 * K2 * d * d
                    + 0.25 * A * d.powi(4)
                    + 0.5 * K3 * x[1] * x[1]
                    + 0.25 * B * x[1].powi(4),
            )
        }
    }

    impl LeapFrogSystem for Hardening {
        fn critical_step(&self, _x: &[f64]) -> Result<StableStep, EvalError> {
            // K_00/m at |d| ≤ 2 at most: k₁ + k₂ + 12 a.
            let lambda_max = K1 + K2 + 12.0 * A;
            Ok(StableStep {
                dt: 2.0 / lambda_max.sqrt(),
                lambda_max,
                cell: 0,
            })
        }
    }

    /// The mass's position at `t = 2`, the largest relative energy drift, and the
    /// factorizations and Newton iterations of the run, step `h`, `reuse` as
    /// [`Massless::set_reuse`].
    fn run_hardening(h: f64, reuse: bool) -> (f64, f64, u64, u64) {
        // The massless node starts at its equilibrium with the mass at 1 (as the linear
        // test's 0.5): a start off it would give the first step's mean rate (C29) an O(1)
        // jump, and the scheme one order less.
        let mut c = 0.5;
        for _ in 0..50 {
            let d = c - 1.0;
            let g = K2 * d + A * d * d * d + K3 * c + B * c * c * c;
            c -= g / (K2 + 3.0 * A * d * d + K3 + 3.0 * B * c * c);
        }
        let x0 = [1.0, c];
        let mut s = DefExp::new(
            Hardening,
            StepSettings::new(h),
            &x0,
            &[0.0, 0.0],
            CriticalStepCheck::every(0),
        )
        .unwrap();
        s.set_massless_reuse(reuse);
        // The start's energy with the massless node at its equilibrium (after a step the
        // node sits there).
        s.step().unwrap();
        let e0 = s.energy().unwrap().total;
        let mut drift: f64 = 0.0;
        let n = (2.0 / h).round() as usize;
        for _ in 1..n {
            s.step().unwrap();
            drift = drift.max((s.energy().unwrap().total - e0).abs() / e0);
        }
        let stats = s.massless_statistics().unwrap();
        (
            s.position()[0],
            drift,
            stats.factorizations,
            stats.iterations,
        )
    }

    #[test]
    fn a_kept_factorization_keeps_the_second_order_of_a_nonlinear_massless_node() {
        // (C26) nonlinear: Newton with K_cc's factorization kept while it contracts
        // (REUSE_CONTRACTION) converges to the same positions as Newton with a fresh tangent
        // every iteration (to its tolerance), so the scheme keeps its second order; and it
        // factors far less often.
        let reference = run_hardening(0.1 / 64.0, false).0;
        let mut errors = Vec::new();
        for h in [0.1, 0.05, 0.025] {
            let (fresh, fresh_drift, fresh_factors, fresh_iterations) = run_hardening(h, false);
            let (kept, kept_drift, kept_factors, kept_iterations) = run_hardening(h, true);
            println!(
                "h {h}: fresh {fresh:.12} ({fresh_factors} factorizations, {fresh_iterations} iterations, drift {fresh_drift:.2e}), kept {kept:.12} ({kept_factors}, {kept_iterations}, drift {kept_drift:.2e})"
            );
            assert!((kept - fresh).abs() < 1e-9, "h {h}: {kept} against {fresh}");
            assert!((kept_drift - fresh_drift).abs() < 1e-8 * fresh_drift.max(1e-3));
            assert!(
                2 * kept_factors < fresh_factors,
                "{kept_factors} factorizations against {fresh_factors}"
            );
            errors.push((kept - reference).abs());
        }
        let (p1, p2) = (
            (errors[0] / errors[1]).log2(),
            (errors[1] / errors[2]).log2(),
        );
        println!("errors {errors:?}, orders {p1:.3} {p2:.3}");
        assert!(p1 > 1.8 && p2 > 1.8, "orders {p1} {p2} (errors {errors:?})");
    }

    /// A part of a distributed body: no tangent, and `elsewhere` says whether another
    /// process has a zero mass (its `all_agree` answers for all of them).
    struct Subdomain {
        springs: Springs,
        mass: Mass,
        elsewhere: bool,
    }

    impl SecondOrderSystem for Subdomain {
        fn n_dofs(&self) -> usize {
            2
        }
        fn mass(&self) -> &Mass {
            &self.mass
        }
        fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
            self.springs.internal_force(x, f)
        }
        fn tangent_kind(&self) -> TangentKind {
            TangentKind::NotProvided
        }
    }

    impl LeapFrogSystem for Subdomain {
        fn critical_step(&self, x: &[f64]) -> Result<StableStep, EvalError> {
            self.springs.critical_step(x)
        }
        fn all_agree(&self, ok: bool) -> bool {
            ok && !self.elsewhere
        }
    }

    #[test]
    fn a_system_without_tangent_refuses_zero_masses_on_every_process_together() {
        // Zero masses here, or on another process: every process refuses, at set-up, with
        // the same message (none goes on alone into the collective estimate).
        for (mass, elsewhere) in [(vec![1.0, 0.0], false), (vec![1.0, 1.0], true)] {
            let system = Subdomain {
                springs: springs(),
                mass: Mass::Lumped(mass.clone()),
                elsewhere,
            };
            let e = DefExp::new(
                system,
                StepSettings::new(0.1),
                &[1.0, 0.5],
                &[0.0, 0.0],
                CriticalStepCheck::every(0),
            )
            .err()
            .expect("refused");
            assert!(
                matches!(e, StepError::NeedsTangent { .. }) && e.to_string().contains("massless"),
                "{mass:?}: {e}"
            );
        }
        // Positive masses everywhere: taken.
        let system = Subdomain {
            springs: springs(),
            mass: Mass::Lumped(vec![1.0, 1.0]),
            elsewhere: false,
        };
        assert!(
            DefExp::new(
                system,
                StepSettings::new(0.1),
                &[1.0, 0.5],
                &[0.0, 0.0],
                CriticalStepCheck::every(0),
            )
            .is_ok()
        );
    }

    #[test]
    fn the_block_holds_the_entries_of_its_rows_and_columns() {
        // K = [[2,-1,0],[-1,2,-1],[0,-1,2]], block {0, 2}: diag(2, 2).
        let k = CsrMatrix::try_from_csr_data(
            3,
            3,
            vec![0, 2, 5, 7],
            vec![0, 1, 0, 1, 2, 1, 2],
            vec![2.0, -1.0, -1.0, 2.0, -1.0, -1.0, 2.0],
        )
        .unwrap();
        let (b, pos) = block(&k, &[Some(0), None, Some(1)], 2);
        assert_eq!(b.values(), &[2.0, 2.0]);
        assert_eq!(b.col_indices(), &[0, 1]);
        assert_eq!(pos, vec![0, 6]);
    }
}
