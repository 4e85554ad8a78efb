//! The lowest eigenpairs of `K φ = λ M φ` (`λ = ω²`): natural frequencies and mode shapes of
//! an assembled model, by shift-invert Lanczos on the project's sparse factorization.
//!
//! # Method (docs/theory/modes.md, equations (M1)–(M5))
//! With `M = B Bᵀ` (`B = diag √mᵢ` for a lumped mass, `B = Pᵀ L` from a sparse Cholesky
//! `P M Pᵀ = L Lᵀ` for a consistent one) and a shift `σ`, the symmetric operator
//!
//! ```text
//! C = Bᵀ (K − σ M)⁻¹ B                                                   (M1)
//! ```
//!
//! has the eigenpairs `(θ, y)` with `θ = 1 / (λ − σ)` and `φ = B⁻ᵀ y` (M2): the eigenvalues
//! of the pencil nearest `σ` are the largest `|θ|`. `K − σ M` is factored once (sparse
//! Cholesky when it is positive definite — always for `σ` below the spectrum —, sparse LU
//! otherwise); each application of `C` is one forward and backward solve. The largest `|θ|`
//! are found by faer's Krylov–Schur iteration for self-adjoint operators (a thick-restarted
//! Lanczos with full reorthogonalization and locking,
//! [`faer::matrix_free::eigen::partial_self_adjoint_eigen`]); because a single Krylov space
//! holds one vector of each eigenspace, the search is repeated on `C` deflated by the pairs
//! found (`(I − Y Yᵀ) C (I − Y Yᵀ)`, (M3)) until a pass finds nothing that belongs among the
//! `k` wanted: repeated eigenvalues (the six rigid modes of a free body, the two bending
//! modes of a square beam) all come out. Small problems (order ≤ [`DENSE_ORDER`]) take
//! `C`'s dense symmetric eigendecomposition instead.
//!
//! Each shape is computed as `φ = (K − σ M)⁻¹ B y / θ` (one more solve, (M4)) and the shapes
//! are made M-orthonormal by two passes of Gram–Schmidt in the M inner product; the eigenvalue
//! returned is the Rayleigh quotient `λ = φᵀ K φ` (M5), more accurate than `σ + 1/θ` when
//! `K − σ M` is ill-conditioned (fine meshes).
//!
//! The default shift is `σ = −10⁻⁹ maxᵢ Kᵢᵢ/Mᵢᵢ` ([`DEFAULT_SHIFT_FRACTION`]): below every
//! eigenvalue of a positive semidefinite `K`, so the wanted eigenvalues are the lowest and the
//! rigid modes of a free body come out as zeros (to about `10⁻¹⁶ maxᵢ Kᵢᵢ/Mᵢᵢ`), and small
//! enough against the lowest elastic eigenvalue that the search converges fast. A shift at an
//! eigenvalue (to within [`SINGULAR_FRACTION`] of the scale) is refused
//! ([`ModesError::ShiftAtEigenvalue`]).

use std::sync::atomic::{AtomicUsize, Ordering};

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::matrix_free::LinOp;
use faer::matrix_free::eigen::{
    PartialEigenParams, partial_self_adjoint_eigen, partial_self_adjoint_eigen_scratch,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::linalg::cholesky::{
    CholeskySymbolicParams, SymbolicCholeskyRaw, SymmetricOrdering, factorize_symbolic_cholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Mat, MatMut, MatRef, Par, Side};
use nalgebra_sparse::CsrMatrix;

use crate::cholesky::SolverError;
use crate::factor::{FactorError, FactorMethod, Factorization, Symmetry};
use crate::sparse::{bilinear, linear_combination, mul};

/// The default shift is `−DEFAULT_SHIFT_FRACTION · maxᵢ Kᵢᵢ/Mᵢᵢ` (see the module docs).
pub const DEFAULT_SHIFT_FRACTION: f64 = 1e-9;

/// An eigenvalue closer to the shift than `SINGULAR_FRACTION · (maxᵢ Kᵢᵢ/Mᵢᵢ + |σ|)` means the
/// shift is at an eigenvalue: `K − σ M` is singular to working precision.
pub const SINGULAR_FRACTION: f64 = 1e-11;

/// Problems of this order or smaller are solved by a dense eigendecomposition of (M1): `n`
/// solves and an `n × n` symmetric eigendecomposition, well under a second at this order,
/// exact for every multiplicity, and with no iteration that could stall (faer's Krylov–Schur
/// search did on a 540-dof cantilever asked for 32 modes or more: issue 27).
pub const DENSE_ORDER: usize = 1500;

/// Default convergence tolerance of a Ritz pair, relative to the largest `|θ|` (an estimate).
pub const DEFAULT_TOLERANCE: f64 = 1e-13;

/// Restarts of one Krylov–Schur pass, by default ([`ModeSettings::max_restarts`]).
pub const DEFAULT_RESTARTS: usize = 40;

/// The mass of the pencil.
#[derive(Clone, Copy, Debug)]
pub enum MassMatrix<'a> {
    /// A lumped (diagonal) mass: every entry positive.
    Lumped(&'a [f64]),
    /// A consistent mass: symmetric positive definite, both triangles stored.
    Consistent(&'a CsrMatrix<f64>),
}

impl MassMatrix<'_> {
    fn order(&self) -> usize {
        match self {
            MassMatrix::Lumped(m) => m.len(),
            MassMatrix::Consistent(m) => m.nrows(),
        }
    }

    fn diagonal(&self, i: usize) -> f64 {
        match self {
            MassMatrix::Lumped(m) => m[i],
            MassMatrix::Consistent(m) => diagonal_entry(m, i),
        }
    }

    /// `M x`.
    pub fn apply(&self, x: &[f64]) -> Vec<f64> {
        match self {
            MassMatrix::Lumped(m) => m.iter().zip(x).map(|(m, x)| m * x).collect(),
            MassMatrix::Consistent(m) => mul(m, x),
        }
    }

    /// `xᵀ M y`.
    pub fn inner(&self, x: &[f64], y: &[f64]) -> f64 {
        match self {
            MassMatrix::Lumped(m) => m.iter().zip(x).zip(y).map(|((m, x), y)| m * x * y).sum(),
            MassMatrix::Consistent(m) => bilinear(m, x, y),
        }
    }
}

fn diagonal_entry(a: &CsrMatrix<f64>, i: usize) -> f64 {
    a.get_entry(i, i).map_or(0.0, |e| e.into_value())
}

/// What to compute.
#[derive(Clone, Debug, PartialEq)]
pub struct ModeSettings {
    /// How many eigenpairs: those nearest the shift (the lowest, with the default shift).
    pub count: usize,
    /// The shift `σ`; `None` for the default (see the module documentation).
    pub shift: Option<f64>,
    /// Convergence tolerance of a Ritz pair's residual, relative to the largest `|θ|`.
    pub tolerance: f64,
    /// Restarts of one Krylov–Schur pass: the pass then keeps the pairs it converged and the
    /// next pass, deflated by them, searches the rest (the whole search is also bounded by
    /// [`SOLVE_BUDGET`]).
    pub max_restarts: usize,
    /// Where each dof lives (one point per row of `K`): `K − σM` is then factored in a
    /// nested-dissection order ([`crate::ordering::nested_dissection`]), which fills a 3D
    /// solid's factor far less than the default minimum-degree order; `None`: the default.
    pub dof_points: Option<Vec<[f64; 3]>>,
}

impl ModeSettings {
    /// The `count` lowest modes, default shift and tolerance.
    pub fn lowest(count: usize) -> Self {
        Self {
            count,
            shift: None,
            tolerance: DEFAULT_TOLERANCE,
            max_restarts: DEFAULT_RESTARTS,
            dof_points: None,
        }
    }

    /// With the shift `σ`.
    pub fn with_shift(mut self, shift: f64) -> Self {
        self.shift = Some(shift);
        self
    }

    /// With a point per dof, for a nested-dissection order of the factorization.
    pub fn with_dof_points(mut self, points: Vec<[f64; 3]>) -> Self {
        self.dof_points = Some(points);
        self
    }
}

/// Why no modes were computed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ModesError {
    /// No mode asked for.
    #[error("the number of modes must be at least 1")]
    NoModes,
    /// More modes asked for than the problem has free dofs.
    #[error("{requested} modes asked for, but the model has only {free} free dofs")]
    TooManyModes {
        /// Modes asked for.
        requested: usize,
        /// The order of the pencil.
        free: usize,
    },
    /// The matrices do not have the same order, or K is not square.
    #[error("the stiffness is {k_rows}x{k_cols} and the mass has order {m}")]
    Sizes {
        /// Rows of K.
        k_rows: usize,
        /// Columns of K.
        k_cols: usize,
        /// Order of M.
        m: usize,
    },
    /// The mass is not positive definite: a lumped entry that is not positive (`dof`), or a
    /// consistent mass whose Cholesky factorization failed (`dof: None`).
    #[error("{}", match dof {
        Some(d) => format!("the mass is not positive at dof {d} (m = {value:e}): every free dof needs mass"),
        None => "the mass matrix is not positive definite: every free dof needs mass".to_string(),
    })]
    MassNotPositive {
        /// The dof of a lumped mass.
        dof: Option<usize>,
        /// Its mass.
        value: f64,
    },
    /// A matrix entry that is not a finite number.
    #[error("the {matrix} holds a value that is not a finite number")]
    NonFinite {
        /// `stiffness` or `mass`.
        matrix: &'static str,
    },
    /// The shift is an eigenvalue: `K − σ M` is singular to working precision.
    #[error("the shift {shift:e} is an eigenvalue of the model{}: K - shift M is singular; choose another shift", match eigenvalue {
        Some(l) => format!(" (omega^2 = {l:e} is within rounding of it)"),
        None => String::new(),
    })]
    ShiftAtEigenvalue {
        /// The shift.
        shift: f64,
        /// The eigenvalue found at it, if one was.
        eigenvalue: Option<f64>,
    },
    /// The factorization of `K − σ M` failed for another reason.
    #[error("factoring K - shift M: {0}")]
    Factor(FactorError),
    /// The iteration did not converge.
    #[error(
        "the eigen-solver found {found} of the {requested} modes asked for within its restarts"
    )]
    NotConverged {
        /// Modes asked for.
        requested: usize,
        /// Modes found.
        found: usize,
    },
}

/// The eigenpairs found, sorted by eigenvalue (ascending).
#[derive(Clone, Debug)]
pub struct Modes {
    n: usize,
    shift: f64,
    eigenvalues: Vec<f64>,
    shapes: Vec<f64>,
    residuals: Vec<f64>,
    method: FactorMethod,
    solves: usize,
    passes: usize,
}

impl Modes {
    /// How many modes.
    pub fn len(&self) -> usize {
        self.eigenvalues.len()
    }

    /// Whether there are none (never, for a successful solve).
    pub fn is_empty(&self) -> bool {
        self.eigenvalues.is_empty()
    }

    /// The order of the pencil (the length of a shape).
    pub fn order(&self) -> usize {
        self.n
    }

    /// The shift used.
    pub fn shift(&self) -> f64 {
        self.shift
    }

    /// The eigenvalues `λ = ω²`, ascending.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }

    /// The circular frequency of mode `j`: `√λ`, and `−√(−λ)` for a negative eigenvalue (a
    /// rigid mode's round-off, or an unstable state).
    pub fn omega(&self, j: usize) -> f64 {
        let l = self.eigenvalues[j];
        l.signum() * l.abs().sqrt()
    }

    /// The shape of mode `j`, M-orthonormal to the others (`φᵢᵀ M φⱼ = δᵢⱼ`).
    pub fn shape(&self, j: usize) -> &[f64] {
        &self.shapes[j * self.n..(j + 1) * self.n]
    }

    /// The relative residual `‖K φ − λ M φ‖∞ / (‖K φ‖∞ + |λ| ‖M φ‖∞)` of mode `j`.
    pub fn residual(&self, j: usize) -> f64 {
        self.residuals[j]
    }

    /// The factorization of `K − σ M` used.
    pub fn method(&self) -> FactorMethod {
        self.method
    }

    /// Solves with `K − σ M` the search took (operator applications; the shapes' final solve
    /// with `k` right-hand sides at once is not counted).
    pub fn solves(&self) -> usize {
        self.solves
    }

    /// Krylov–Schur passes (M3) the search ran: 1 for the search, one more for each check of
    /// the deflated operator; 0 when the problem was small enough for the dense path.
    pub fn passes(&self) -> usize {
        self.passes
    }

    /// Bytes the eigen-solver holds beyond the matrices and the factor, for `count` modes of
    /// a pencil of order `n`: the Krylov basis and its work copy, the shapes and a few vectors.
    pub fn memory_estimate(n: usize, count: usize) -> f64 {
        let dim = search_dimension(n, count).1 as f64;
        let dense = takes_dense_path(n, count);
        let n = n as f64;
        if dense {
            return 8.0 * (3.0 * n * n + 8.0 * n);
        }
        8.0 * (n * (2.0 * dim + 2.0) + n * (2.0 * count as f64 + 8.0) + 3.0 * dim * dim)
    }
}

/// The Krylov–Schur search dimensions `(min, max)` for `count` pairs: faer's defaults
/// (`max(32, k)` and `max(64, 2k)`), not more than `n`.
fn search_dimension(n: usize, count: usize) -> (usize, usize) {
    (count.max(32).min(n), (2 * count).max(64).min(n))
}

/// Whether `count` pairs of a pencil of order `n` take the dense path: a small problem
/// ([`DENSE_ORDER`]), or a Krylov search space of more than half the order (its passes would
/// cost about as much as the `n` solves of the dense path, and faer's search needs a space
/// smaller than the operator: it panics otherwise).
pub fn takes_dense_path(n: usize, count: usize) -> bool {
    n <= DENSE_ORDER || 2 * (2 * count).max(64) > n
}

/// The Krylov search's budget of solves, in multiples of its first pass's search dimension.
pub const SOLVE_BUDGET: usize = 200;

/// `B` with `M = B Bᵀ`.
enum MassRoot {
    /// `√mᵢ`.
    Diagonal(Vec<f64>),
    /// `B = Pᵀ L`: `L` (CSC, lower) and `perm[i]`, the original row of permuted row `i`.
    Factor {
        col_ptr: Vec<usize>,
        row_idx: Vec<usize>,
        values: Vec<f64>,
        perm: Vec<usize>,
    },
}

impl MassRoot {
    fn new(mass: MassMatrix<'_>) -> Result<Self, ModesError> {
        match mass {
            MassMatrix::Lumped(m) => {
                if let Some(i) = m.iter().position(|v| !v.is_finite()) {
                    let _ = i;
                    return Err(ModesError::NonFinite { matrix: "mass" });
                }
                if let Some(i) = m.iter().position(|&v| v <= 0.0) {
                    return Err(ModesError::MassNotPositive {
                        dof: Some(i),
                        value: m[i],
                    });
                }
                Ok(MassRoot::Diagonal(m.iter().map(|v| v.sqrt()).collect()))
            }
            MassMatrix::Consistent(m) => {
                if m.values().iter().any(|v| !v.is_finite()) {
                    return Err(ModesError::NonFinite { matrix: "mass" });
                }
                consistent_root(m)
            }
        }
    }

    /// `out = B x`.
    fn apply(&self, x: &[f64], out: &mut [f64]) {
        match self {
            MassRoot::Diagonal(s) => {
                for ((o, s), x) in out.iter_mut().zip(s).zip(x) {
                    *o = s * x;
                }
            }
            MassRoot::Factor {
                col_ptr,
                row_idx,
                values,
                perm,
            } => {
                out.fill(0.0);
                for j in 0..perm.len() {
                    let xj = x[j];
                    for k in col_ptr[j]..col_ptr[j + 1] {
                        out[perm[row_idx[k]]] += values[k] * xj;
                    }
                }
            }
        }
    }

    /// `out = Bᵀ y`.
    fn apply_transpose(&self, y: &[f64], out: &mut [f64]) {
        match self {
            MassRoot::Diagonal(s) => {
                for ((o, s), y) in out.iter_mut().zip(s).zip(y) {
                    *o = s * y;
                }
            }
            MassRoot::Factor {
                col_ptr,
                row_idx,
                values,
                perm,
            } => {
                for (j, o) in out.iter_mut().enumerate() {
                    let mut sum = 0.0;
                    for k in col_ptr[j]..col_ptr[j + 1] {
                        sum += values[k] * y[perm[row_idx[k]]];
                    }
                    *o = sum;
                }
            }
        }
    }
}

/// `M = Pᵀ L Lᵀ P` by faer's simplicial Cholesky (the factor `L` is needed explicitly).
fn consistent_root(m: &CsrMatrix<f64>) -> Result<MassRoot, ModesError> {
    let n = m.nrows();
    let not_positive = ModesError::MassNotPositive {
        dof: None,
        value: 0.0,
    };
    let pattern =
        SymbolicSparseColMatRef::new_checked(n, n, m.row_offsets(), None, m.col_indices());
    let symbolic = factorize_symbolic_cholesky(
        pattern,
        Side::Lower,
        SymmetricOrdering::Amd,
        CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
            ..Default::default()
        },
    )
    .map_err(|_| not_positive.clone())?;
    let par = faer::get_global_parallelism();
    let mut scratch =
        MemBuffer::new(symbolic.factorize_numeric_llt_scratch::<f64>(par, Default::default()));
    let mut values = vec![0.0; symbolic.len_val()];
    symbolic
        .factorize_numeric_llt(
            &mut values,
            SparseColMatRef::new(pattern, m.values()),
            Side::Lower,
            Default::default(),
            par,
            MemStack::new(&mut scratch),
            Default::default(),
        )
        .map_err(|_| not_positive.clone())?;
    let SymbolicCholeskyRaw::Simplicial(simplicial) = symbolic.raw() else {
        return Err(not_positive);
    };
    let factor = simplicial.factor();
    let perm = match symbolic.perm() {
        Some(p) => p.arrays().0.to_vec(),
        None => (0..n).collect(),
    };
    Ok(MassRoot::Factor {
        col_ptr: factor.col_ptr().to_vec(),
        row_idx: factor.row_idx().to_vec(),
        values,
        perm,
    })
}

/// The operator (M1), deflated by the orthonormal columns of `locked` (M3).
struct ShiftInvert<'a> {
    factor: &'a Factorization,
    root: &'a MassRoot,
    n: usize,
    locked: &'a [Vec<f64>],
    solves: AtomicUsize,
    /// Set when a solve gave a value that is not a finite number (`K − σM` singular to
    /// working precision): the output is then replaced by a finite vector, since faer's
    /// reorthogonalization would loop forever on it, and the search is refused after the pass.
    broken: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for ShiftInvert<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShiftInvert")
            .field("n", &self.n)
            .field("locked", &self.locked.len())
            .finish_non_exhaustive()
    }
}

impl ShiftInvert<'_> {
    fn project(&self, x: &mut [f64]) {
        for y in self.locked {
            let c: f64 = y.iter().zip(x.iter()).map(|(a, b)| a * b).sum();
            for (xi, yi) in x.iter_mut().zip(y) {
                *xi -= c * yi;
            }
        }
    }

    /// `out = C x` (deflated).
    fn apply_one(&self, x: &[f64], out: &mut [f64]) {
        let mut p = x.to_vec();
        self.project(&mut p);
        let mut t = vec![0.0; self.n];
        self.root.apply(&p, &mut t);
        self.factor.solve_in_place(&mut t);
        self.solves.fetch_add(1, Ordering::Relaxed);
        self.root.apply_transpose(&t, out);
        self.project(out);
        if out.iter().any(|v| !v.is_finite()) {
            self.broken.store(true, Ordering::Relaxed);
            out.copy_from_slice(&start_vector(self.n, 7));
        }
    }
}

impl LinOp<f64> for ShiftInvert<'_> {
    fn apply_scratch(&self, _rhs_ncols: usize, _par: Par) -> StackReq {
        StackReq::EMPTY
    }

    fn nrows(&self) -> usize {
        self.n
    }

    fn ncols(&self) -> usize {
        self.n
    }

    fn apply(&self, out: MatMut<'_, f64>, rhs: MatRef<'_, f64>, _par: Par, _stack: &mut MemStack) {
        let mut out = out;
        let mut x = vec![0.0; self.n];
        let mut y = vec![0.0; self.n];
        for j in 0..rhs.ncols() {
            for (i, xi) in x.iter_mut().enumerate() {
                *xi = rhs[(i, j)];
            }
            self.apply_one(&x, &mut y);
            for (i, yi) in y.iter().enumerate() {
                out[(i, j)] = *yi;
            }
        }
    }

    fn conj_apply(
        &self,
        out: MatMut<'_, f64>,
        rhs: MatRef<'_, f64>,
        par: Par,
        stack: &mut MemStack,
    ) {
        self.apply(out, rhs, par, stack);
    }
}

/// A reproducible start vector with every component nonzero and of either sign.
fn start_vector(n: usize, pass: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let t = (i as f64 + 1.0) * 0.618_033_988_749_895 + pass as f64 * 0.377;
            (t * 12.9898).sin() + 0.5 * (t * 78.233).cos() + 0.01
        })
        .collect()
}

/// The `count` eigenpairs of `K φ = λ M φ` nearest the shift (the lowest, with the default
/// shift), with M-orthonormal shapes; see the module documentation for the method.
///
/// `stiffness` is symmetric (both triangles stored) on the free dofs only, as is the mass.
///
/// # Example
/// ```
/// use fem_assembly::modes::{MassMatrix, ModeSettings, lowest_modes};
/// use nalgebra_sparse::{CooMatrix, CsrMatrix};
/// // Two unit masses joined by a spring of stiffness 1, free: ω² = 0 and 2.
/// let mut k = CooMatrix::new(2, 2);
/// for (i, j, v) in [(0, 0, 1.0), (0, 1, -1.0), (1, 0, -1.0), (1, 1, 1.0)] {
///     k.push(i, j, v);
/// }
/// let modes = lowest_modes(&CsrMatrix::from(&k), MassMatrix::Lumped(&[1.0, 1.0]),
///     &ModeSettings::lowest(2)).unwrap();
/// assert!(modes.eigenvalues()[0].abs() < 1e-12);
/// assert!((modes.eigenvalues()[1] - 2.0).abs() < 1e-12);
/// ```
pub fn lowest_modes(
    stiffness: &CsrMatrix<f64>,
    mass: MassMatrix<'_>,
    settings: &ModeSettings,
) -> Result<Modes, ModesError> {
    let n = stiffness.nrows();
    if stiffness.ncols() != n || mass.order() != n {
        return Err(ModesError::Sizes {
            k_rows: n,
            k_cols: stiffness.ncols(),
            m: mass.order(),
        });
    }
    let count = settings.count;
    if count == 0 {
        return Err(ModesError::NoModes);
    }
    if count > n {
        return Err(ModesError::TooManyModes {
            requested: count,
            free: n,
        });
    }
    if stiffness.values().iter().any(|v| !v.is_finite()) {
        return Err(ModesError::NonFinite {
            matrix: "stiffness",
        });
    }
    let root = MassRoot::new(mass)?;
    let scale = (0..n)
        .map(|i| diagonal_entry(stiffness, i).abs() / mass.diagonal(i).abs())
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let scale = if scale > 0.0 { scale } else { 1.0 };
    let shift = settings.shift.unwrap_or(-DEFAULT_SHIFT_FRACTION * scale);
    if !shift.is_finite() {
        return Err(ModesError::ShiftAtEigenvalue {
            shift,
            eigenvalue: None,
        });
    }
    let order = match &settings.dof_points {
        Some(points) if points.len() == n => {
            Some(crate::ordering::nested_dissection(points, stiffness))
        }
        _ => None,
    };
    let factor = factor_shifted(stiffness, mass, shift, order.as_deref())?;
    let op = ShiftInvert {
        factor: &factor,
        root: &root,
        n,
        locked: &[],
        solves: AtomicUsize::new(0),
        broken: std::sync::atomic::AtomicBool::new(false),
    };
    let (thetas, ys, passes) = if takes_dense_path(n, count) {
        dense_pairs(&op, count)?
    } else {
        krylov_pairs(&op, count, shift, settings)?
    };
    let solves = op.solves.load(Ordering::Relaxed);
    let singular_gap = SINGULAR_FRACTION * (scale + shift.abs());
    // The shapes (M4), all in one solve with many right-hand sides (the factor is read once),
    // then M-orthonormal.
    let mut block = vec![0.0; n * count];
    for ((theta, y), column) in thetas.iter().zip(&ys).zip(block.chunks_exact_mut(n.max(1))) {
        let lambda = shift + 1.0 / theta;
        if (1.0 / theta).abs() <= singular_gap || !lambda.is_finite() {
            return Err(ModesError::ShiftAtEigenvalue {
                shift,
                eigenvalue: Some(lambda),
            });
        }
        root.apply(y, column);
    }
    factor.solve_many_in_place(&mut block, count);
    let mut pairs: Vec<(f64, Vec<f64>)> = thetas
        .iter()
        .zip(block.chunks_exact(n.max(1)))
        .map(|(theta, column)| {
            (
                shift + 1.0 / theta,
                column.iter().map(|v| v / theta).collect(),
            )
        })
        .collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    for _ in 0..2 {
        for j in 0..pairs.len() {
            let (done, rest) = pairs.split_at_mut(j);
            let phi = &mut rest[0].1;
            for (_, q) in done.iter() {
                let c = mass.inner(q, phi);
                for (p, qi) in phi.iter_mut().zip(q) {
                    *p -= c * qi;
                }
            }
            let norm = mass.inner(phi, phi).sqrt();
            for p in phi.iter_mut() {
                *p /= norm;
            }
        }
    }
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let mut found: Vec<(f64, f64, Vec<f64>)> = Vec::with_capacity(count);
    for (ritz, phi) in pairs {
        if phi.iter().any(|v| !v.is_finite()) {
            return Err(ModesError::ShiftAtEigenvalue {
                shift,
                eigenvalue: Some(ritz),
            });
        }
        // The Rayleigh quotient (M5): more accurate than σ + 1/θ, whose error grows with the
        // conditioning of K − σM (φ is M-normalised).
        let kphi = mul(stiffness, &phi);
        let mphi = mass.apply(&phi);
        let lambda = phi.iter().zip(&kphi).map(|(p, k)| p * k).sum::<f64>();
        let r: Vec<f64> = kphi
            .iter()
            .zip(&mphi)
            .map(|(k, m)| k - lambda * m)
            .collect();
        let residual = inf(&r) / (inf(&kphi) + lambda.abs() * inf(&mphi)).max(f64::MIN_POSITIVE);
        found.push((lambda, residual, phi));
    }
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    let eigenvalues = found.iter().map(|f| f.0).collect();
    let residuals = found.iter().map(|f| f.1).collect();
    let shapes = found.into_iter().flat_map(|f| f.2).collect();
    Ok(Modes {
        n,
        shift,
        eigenvalues,
        shapes,
        residuals,
        method: factor.method(),
        solves,
        passes,
    })
}

/// Factors `K − σ M`: Cholesky when it is positive definite, LU otherwise; a singular matrix
/// is a shift at an eigenvalue.
fn factor_shifted(
    stiffness: &CsrMatrix<f64>,
    mass: MassMatrix<'_>,
    shift: f64,
    order: Option<&[usize]>,
) -> Result<Factorization, ModesError> {
    let a = match mass {
        MassMatrix::Lumped(m) => linear_combination(&[(1.0, stiffness)], Some((-shift, m))),
        MassMatrix::Consistent(m) => linear_combination(&[(1.0, stiffness), (-shift, m)], None),
    };
    let at_eigenvalue = ModesError::ShiftAtEigenvalue {
        shift,
        eigenvalue: None,
    };
    if shift <= 0.0 {
        let cholesky = match order {
            Some(order) => Factorization::with_order(&a, Symmetry::Symmetric, order),
            None => Factorization::new(&a, Symmetry::Symmetric),
        };
        match cholesky {
            Ok(f) => return Ok(f),
            Err(FactorError {
                source: SolverError::Structure(_),
                ..
            }) => {}
            Err(FactorError {
                source: SolverError::NonFiniteSolution | SolverError::InaccurateFactor { .. },
                ..
            }) => return Err(at_eigenvalue),
            // Not positive definite: K is indefinite at this state; the LU takes it.
            Err(_) => {}
        }
    }
    match Factorization::new(&a, Symmetry::Unsymmetric) {
        Ok(f) => Ok(f),
        Err(FactorError {
            source:
                SolverError::Singular { .. }
                | SolverError::NonFiniteSolution
                | SolverError::InaccurateFactor { .. },
            ..
        }) => Err(at_eigenvalue),
        Err(e) => Err(ModesError::Factor(e)),
    }
}

/// Eigenvalues `θ` of (M1), their vectors `y`, and the Krylov–Schur passes run (0: dense).
type Pairs = (Vec<f64>, Vec<Vec<f64>>, usize);

/// All of `C` by its dense eigendecomposition; the `count` of largest `|θ|`.
fn dense_pairs(op: &ShiftInvert<'_>, count: usize) -> Result<Pairs, ModesError> {
    let n = op.n;
    let mut c = Mat::<f64>::zeros(n, n);
    let mut e = vec![0.0; n];
    let mut col = vec![0.0; n];
    for j in 0..n {
        e.fill(0.0);
        e[j] = 1.0;
        op.apply_one(&e, &mut col);
        for (i, v) in col.iter().enumerate() {
            c[(i, j)] = *v;
        }
    }
    // Symmetric to round-off; take its symmetric part.
    let sym = Mat::<f64>::from_fn(n, n, |i, j| 0.5 * (c[(i, j)] + c[(j, i)]));
    let evd = sym
        .self_adjoint_eigen(Side::Lower)
        .map_err(|_| ModesError::NotConverged {
            requested: count,
            found: 0,
        })?;
    let s = evd.S();
    let u = evd.U();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| s[b].abs().total_cmp(&s[a].abs()));
    let thetas = order[..count].iter().map(|&j| s[j]).collect();
    let ys = order[..count]
        .iter()
        .map(|&j| (0..n).map(|i| u[(i, j)]).collect())
        .collect();
    Ok((thetas, ys, 0))
}

/// Krylov–Schur passes on `C`, deflated by what earlier passes found, until a pass finds
/// nothing among the `count` largest `|θ|` (M3).
///
/// The work is bounded: a pass's restarts are capped by [`ModeSettings::max_restarts`] and by
/// what is left of a budget of [`SOLVE_BUDGET`] times the first pass's search dimension in
/// solves; a pass converges what it can within them (faer locks converged pairs), the next pass
/// searches the rest on the operator deflated by them, and a pass that converges nothing, or a
/// spent budget, ends the search with [`ModesError::NotConverged`] naming how many were found.
fn krylov_pairs(
    op: &ShiftInvert<'_>,
    count: usize,
    shift: f64,
    settings: &ModeSettings,
) -> Result<Pairs, ModesError> {
    let n = op.n;
    let par = faer::get_global_parallelism();
    // The scale of θ, for the tolerance: four power steps (a lower bound within a small factor).
    let mut v = start_vector(n, 0);
    let mut w = vec![0.0; n];
    let mut theta_scale = 0.0f64;
    for _ in 0..4 {
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        op.apply_one(&v, &mut w);
        theta_scale = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        std::mem::swap(&mut v, &mut w);
    }
    if op.broken.load(Ordering::Relaxed) || !theta_scale.is_finite() {
        return Err(ModesError::ShiftAtEigenvalue {
            shift,
            eigenvalue: None,
        });
    }
    let tolerance = settings.tolerance * theta_scale.max(f64::MIN_POSITIVE);
    let budget = SOLVE_BUDGET * search_dimension(n, count).1;
    let mut thetas: Vec<f64> = Vec::new();
    let mut ys: Vec<Vec<f64>> = Vec::new();
    let mut passes = 0;
    let mut used = 0usize;
    let not_converged = |thetas: &[f64]| ModesError::NotConverged {
        requested: count,
        found: thetas.len().min(count),
    };
    loop {
        // Whatever is still missing in full, then checks of six (M3).
        let wanted = if thetas.len() < count {
            count - thetas.len()
        } else {
            count.min(6)
        };
        let wanted = wanted.min(n - ys.len());
        if wanted == 0 {
            break;
        }
        let (min_dim, max_dim) = search_dimension(n, wanted);
        // faer needs a search space smaller than the operator; the dense path takes the rest.
        if max_dim >= n {
            return Err(not_converged(&thetas));
        }
        let per_restart = max_dim - wanted.min(min_dim);
        let left = budget.saturating_sub(used);
        if left < max_dim {
            return Err(not_converged(&thetas));
        }
        let restarts = ((left - min_dim) / per_restart).clamp(1, settings.max_restarts.max(1));
        passes += 1;
        let deflated = ShiftInvert {
            factor: op.factor,
            root: op.root,
            n,
            locked: &ys,
            solves: AtomicUsize::new(0),
            broken: std::sync::atomic::AtomicBool::new(false),
        };
        let params = PartialEigenParams {
            min_dim,
            max_dim,
            max_restarts: restarts,
            ..Default::default()
        };
        let mut scratch = MemBuffer::new(partial_self_adjoint_eigen_scratch(
            &deflated, wanted, par, params,
        ));
        let mut vecs = Mat::<f64>::zeros(n, wanted);
        let mut vals = vec![0.0; wanted];
        let mut v0 = start_vector(n, passes);
        deflated.project(&mut v0);
        let info = partial_self_adjoint_eigen(
            vecs.as_mut(),
            &mut vals,
            &deflated,
            faer::ColRef::from_slice(&v0),
            tolerance,
            par,
            MemStack::new(&mut scratch),
            params,
        );
        let solves = deflated.solves.load(Ordering::Relaxed);
        used += solves;
        op.solves.fetch_add(solves, Ordering::Relaxed);
        if deflated.broken.load(Ordering::Relaxed) {
            return Err(ModesError::ShiftAtEigenvalue {
                shift,
                eigenvalue: None,
            });
        }
        let found = info.n_converged_eigen.min(wanted);
        // The k-th largest |θ| so far: a new pair above it belongs among the wanted.
        let threshold = kth_largest(&thetas, count);
        let mut entered = false;
        let mut new_pairs = Vec::with_capacity(found);
        for j in 0..found {
            let mut y: Vec<f64> = (0..n).map(|i| vecs[(i, j)]).collect();
            // Against the locked vectors again (round-off), normalised.
            deflated.project(&mut y);
            let norm = y.iter().map(|x| x * x).sum::<f64>().sqrt();
            if !vals[j].is_finite() || norm.is_nan() || norm <= 0.5 {
                continue;
            }
            y.iter_mut().for_each(|x| *x /= norm);
            if vals[j].abs() > threshold * (1.0 + 1e-10) {
                entered = true;
            }
            new_pairs.push((vals[j], y));
        }
        if new_pairs.is_empty() {
            // Nothing converged within the pass: the search cannot progress.
            if thetas.len() >= count {
                break;
            }
            return Err(not_converged(&thetas));
        }
        let was_complete = thetas.len() >= count;
        for (theta, y) in new_pairs {
            thetas.push(theta);
            ys.push(y);
        }
        // A check pass (the set was complete before it) that found nothing among the wanted
        // ends the search.
        if was_complete && !entered {
            break;
        }
    }
    if thetas.len() < count {
        return Err(not_converged(&thetas));
    }
    let mut order: Vec<usize> = (0..thetas.len()).collect();
    order.sort_by(|&a, &b| thetas[b].abs().total_cmp(&thetas[a].abs()));
    let t = order[..count].iter().map(|&j| thetas[j]).collect();
    let y = order[..count].iter().map(|&j| ys[j].clone()).collect();
    Ok((t, y, passes))
}

/// The `k`-th largest `|θ|` (0 when there are fewer).
fn kth_largest(thetas: &[f64], k: usize) -> f64 {
    if thetas.len() < k {
        return 0.0;
    }
    let mut a: Vec<f64> = thetas.iter().map(|t| t.abs()).collect();
    a.sort_by(|x, y| y.total_cmp(x));
    a[k - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra_sparse::CooMatrix;

    /// The fixed–fixed P1 string on `[0, 1]`, `n_cells` cells, ρ = τ = 1.
    fn string(n_cells: usize, consistent: bool) -> (CsrMatrix<f64>, CsrMatrix<f64>, Vec<f64>) {
        let n = n_cells - 1;
        let h = 1.0 / n_cells as f64;
        let mut k = CooMatrix::new(n, n);
        let mut m = CooMatrix::new(n, n);
        for i in 0..n {
            k.push(i, i, 2.0 / h);
            m.push(i, i, if consistent { 4.0 * h / 6.0 } else { h });
            if i + 1 < n {
                k.push(i, i + 1, -1.0 / h);
                k.push(i + 1, i, -1.0 / h);
                if consistent {
                    m.push(i, i + 1, h / 6.0);
                    m.push(i + 1, i, h / 6.0);
                }
            }
        }
        (CsrMatrix::from(&k), CsrMatrix::from(&m), vec![h; n])
    }

    /// Closed form of the discrete string's eigenvalues: lumped `(4/h²) sin²(jπh/2)`,
    /// consistent `6/h² (1 − cos jπh)/(2 + cos jπh)`.
    fn closed_form(j: usize, n_cells: usize, consistent: bool) -> f64 {
        let h = 1.0 / n_cells as f64;
        let a = j as f64 * std::f64::consts::PI * h;
        if consistent {
            // 1 − cos a = 2 sin²(a/2), without the cancellation.
            12.0 / (h * h) * (a / 2.0).sin().powi(2) / (2.0 + a.cos())
        } else {
            4.0 / (h * h) * (a / 2.0).sin().powi(2)
        }
    }

    fn check_string(n_cells: usize, consistent: bool, count: usize) {
        let (k, m, lumped) = string(n_cells, consistent);
        let mass = if consistent {
            MassMatrix::Consistent(&m)
        } else {
            MassMatrix::Lumped(&lumped)
        };
        let modes = lowest_modes(&k, mass, &ModeSettings::lowest(count)).unwrap();
        let n = n_cells - 1;
        let h = 1.0 / n_cells as f64;
        for j in 0..count {
            let exact = closed_form(j + 1, n_cells, consistent);
            let got = modes.eigenvalues()[j];
            assert!(
                (got - exact).abs() <= 1e-12 * exact,
                "n_cells {n_cells}, mode {}: {got} against {exact}",
                j + 1
            );
            // The shape: sin(jπx), M-normalised, up to sign.
            let sine: Vec<f64> = (0..n)
                .map(|i| ((j + 1) as f64 * std::f64::consts::PI * (i + 1) as f64 * h).sin())
                .collect();
            let norm = mass.inner(&sine, &sine).sqrt();
            let phi = modes.shape(j);
            let sign = phi
                .iter()
                .zip(&sine)
                .map(|(a, b)| a * b)
                .sum::<f64>()
                .signum();
            let err = phi
                .iter()
                .zip(&sine)
                .map(|(p, s)| (p - sign * s / norm).abs())
                .fold(0.0, f64::max);
            let big = sine.iter().fold(0.0f64, |a, s| a.max(s.abs())) / norm;
            assert!(err <= 1e-10 * big, "mode {} shape error {err:e}", j + 1);
        }
        for i in 0..count {
            for j in 0..count {
                let g = mass.inner(modes.shape(i), modes.shape(j));
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((g - e).abs() < 1e-12, "({i},{j}): {g}");
            }
        }
    }

    #[test]
    fn the_string_sine_modes_dense_and_krylov() {
        check_string(50, false, 8);
        check_string(50, true, 8);
        check_string(2000, false, 10);
        check_string(2000, true, 10);
    }

    /// Two unit masses and a spring, free: a zero mode; asked at the shift 0: refused.
    #[test]
    fn a_shift_at_an_eigenvalue_is_refused() {
        let mut k = CooMatrix::new(2, 2);
        for (i, j, v) in [(0, 0, 1.0), (0, 1, -1.0), (1, 0, -1.0), (1, 1, 1.0)] {
            k.push(i, j, v);
        }
        let k = CsrMatrix::from(&k);
        let m = [1.0, 1.0];
        let e = lowest_modes(
            &k,
            MassMatrix::Lumped(&m),
            &ModeSettings::lowest(1).with_shift(0.0),
        )
        .unwrap_err();
        assert!(matches!(e, ModesError::ShiftAtEigenvalue { .. }), "{e}");
        let e = lowest_modes(
            &k,
            MassMatrix::Lumped(&m),
            &ModeSettings::lowest(1).with_shift(2.0),
        )
        .unwrap_err();
        assert!(matches!(e, ModesError::ShiftAtEigenvalue { .. }), "{e}");
        // Between the two eigenvalues: the nearest first (λ = 2 at distance 0.5).
        let modes = lowest_modes(
            &k,
            MassMatrix::Lumped(&m),
            &ModeSettings::lowest(1).with_shift(1.5),
        )
        .unwrap();
        assert!((modes.eigenvalues()[0] - 2.0).abs() < 1e-12);
        assert_eq!(
            lowest_modes(&k, MassMatrix::Lumped(&m), &ModeSettings::lowest(3)).unwrap_err(),
            ModesError::TooManyModes {
                requested: 3,
                free: 2
            }
        );
        assert!(matches!(
            lowest_modes(
                &k,
                MassMatrix::Lumped(&[1.0, 0.0]),
                &ModeSettings::lowest(1)
            ),
            Err(ModesError::MassNotPositive { dof: Some(1), .. })
        ));
    }

    #[test]
    fn the_consistent_mass_root_reproduces_the_mass() {
        let (_, m, _) = string(30, true);
        let root = MassRoot::new(MassMatrix::Consistent(&m)).unwrap();
        let n = m.nrows();
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).sin() + 0.1).collect();
        let mut t = vec![0.0; n];
        root.apply_transpose(&x, &mut t);
        let mut bbt = vec![0.0; n];
        root.apply(&t, &mut bbt);
        let mx = mul(&m, &x);
        for (a, b) in bbt.iter().zip(&mx) {
            assert!((a - b).abs() < 1e-14, "{a} against {b}");
        }
    }
}
