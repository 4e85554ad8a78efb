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
//! otherwise: an indefinite shift); each application of the operator is one forward and
//! backward solve. Small problems (order ≤ [`DENSE_ORDER`]) take `C`'s dense symmetric
//! eigendecomposition. Above, the largest `|θ|` of `A = (K − σ M)⁻¹ M` — self-adjoint in the M
//! inner product, the same eigenvalues as `C` and the shapes directly, no root of `M` needed —
//! are found by the project's own thick-restarted Lanczos search ([`crate::lanczos`], (L1)–(L4):
//! full M-reorthogonalization, locking of converged pairs, fresh-start check passes on the
//! operator deflated by them (M3) so that repeated eigenvalues — the six rigid modes of a free
//! body, the two bending modes of a square beam — all come out, and a cap on its solves: it
//! ends, with an error naming how many pairs it had when it must). It replaced faer's
//! Krylov–Schur search, whose reorthogonalization loop could not be bounded from outside and
//! hung (issue 27).
//!
//! The shapes then take one step of subspace iteration `(K − σ M)⁻¹ M Φ` (M4; for the dense
//! path this is `φ = (K − σ M)⁻¹ B y / θ`), are made M-orthonormal by two passes of
//! Gram–Schmidt, and a Rayleigh–Ritz projection of `K` on their span (M5) gives the
//! eigenvalues (Rayleigh quotients: more accurate than `σ + 1/θ` when `K − σ M` is
//! ill-conditioned) and separates close ones. Every pair must pass the residual check (M7)
//! `‖K φ − λ M φ‖∞ ≤ RESIDUAL_TOLERANCE ‖K‖∞ ‖φ‖∞`; if one does not, the step is repeated
//! (at most three rounds), and then refused ([`ModesError::Residual`]).
//!
//! The default shift is `σ = −10⁻⁹ maxᵢ Kᵢᵢ/Mᵢᵢ` ([`DEFAULT_SHIFT_FRACTION`]): below every
//! eigenvalue of a positive semidefinite `K`, so the wanted eigenvalues are the lowest and the
//! rigid modes of a free body come out as zeros (to about `10⁻¹⁶ maxᵢ Kᵢᵢ/Mᵢᵢ`), and small
//! enough against the lowest elastic eigenvalue that the search converges fast. A shift at an
//! eigenvalue (to within [`SINGULAR_FRACTION`] of the scale) is refused
//! ([`ModesError::ShiftAtEigenvalue`]).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::linalg::cholesky::{
    CholeskySymbolicParams, SymbolicCholeskyRaw, SymmetricOrdering, factorize_symbolic_cholesky,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Mat, Side};
use nalgebra_sparse::CsrMatrix;

use crate::cholesky::SolverError;
use crate::factor::{FactorError, FactorMethod, Factorization, Symmetry};
use crate::lanczos::{LanczosError, LanczosSettings, MetricOperator, largest_magnitude};
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

/// Default convergence tolerance of a Ritz pair's residual, relative to its `|θ|`
/// ([`crate::lanczos::LanczosSettings::tolerance`]).
pub const DEFAULT_TOLERANCE: f64 = 1e-12;

/// Restarts of one Lanczos pass, by default ([`ModeSettings::max_restarts`]).
pub const DEFAULT_RESTARTS: usize = 40;

/// Every returned pair satisfies `‖K φ − λ M φ‖∞ ≤ RESIDUAL_TOLERANCE ‖K‖∞ ‖φ‖∞` (M7), or the
/// solve is refused ([`ModesError::Residual`]). What is attainable is about the unit round-off
/// times the condition number of `K − σ M`: 2.6e-8 for the dense path and 2.1e-8 for the
/// Lanczos path on a 2 304-dof hex8 cantilever (60 modes, `λ_max/λ₁ ≈ 10⁷`), so the check
/// refuses a pair that did not converge (its residual is orders of magnitude larger), not the
/// rounding of a fine mesh; the eigenvalues, Rayleigh–Ritz values, are accurate to about the
/// square of it.
pub const RESIDUAL_TOLERANCE: f64 = 1e-6;

/// Which eigen-solver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EigenMethod {
    /// The dense path for small problems ([`takes_dense_path`]), the Lanczos search above.
    #[default]
    Auto,
    /// The dense eigendecomposition of (M1), whatever the order.
    Dense,
    /// The restarted Lanczos search ([`crate::lanczos`]), whatever the order.
    Lanczos,
}

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
    /// Convergence tolerance of a Ritz pair's residual, relative to its `|θ|`.
    pub tolerance: f64,
    /// Restarts of one Lanczos pass: the pass then keeps the pairs it converged and the
    /// next pass, deflated by them, searches the rest (the whole search is also bounded by
    /// [`SOLVE_BUDGET`]).
    pub max_restarts: usize,
    /// Dense or Lanczos; [`EigenMethod::Auto`] by default.
    pub method: EigenMethod,
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
            method: EigenMethod::Auto,
            dof_points: None,
        }
    }

    /// With the eigen-solver `method`.
    pub fn with_method(mut self, method: EigenMethod) -> Self {
        self.method = method;
        self
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
    /// A returned pair failed the residual check (M7).
    #[error(
        "mode {mode} failed the residual check: |K phi - omega^2 M phi| = {residual:e} |K| |phi|"
    )]
    Residual {
        /// The mode (1-based, ascending).
        mode: usize,
        /// Its residual relative to `‖K‖∞ ‖φ‖∞`.
        residual: f64,
    },
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

    /// The relative residual `‖K φ − λ M φ‖∞ / (‖K‖∞ ‖φ‖∞)` of mode `j`: the measure of the
    /// acceptance check (M7). (Relative to `‖K φ‖∞ + |λ| ‖M φ‖∞` instead, a rigid mode's
    /// residual would be its round-off over its round-off, about 1: meaningless.)
    pub fn scaled_residual(&self, j: usize) -> f64 {
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

    /// Lanczos passes (M3) the search ran: 1 for the search, one more for each check of the
    /// deflated operator; 0 when the problem took the dense path.
    pub fn passes(&self) -> usize {
        self.passes
    }

    /// Bytes the eigen-solver holds beyond the matrices and the factor, for `count` modes of
    /// a pencil of order `n`: the Lanczos basis, the locked vectors, the shapes and a few
    /// vectors (the dense path: `C` and its eigenvectors).
    pub fn memory_estimate(n: usize, count: usize) -> f64 {
        let dense = takes_dense_path(n, count);
        let n = n as f64;
        if dense {
            return 8.0 * (3.0 * n * n + 8.0 * n);
        }
        let basis = lanczos_basis(n as usize, count) as f64;
        8.0 * (n * (2.0 * basis + 2.0) + n * (3.0 * count as f64 + 8.0) + 3.0 * basis * basis)
    }
}

/// The Lanczos basis for `count` pairs of a pencil of order `n`.
fn lanczos_basis(n: usize, count: usize) -> usize {
    (2 * count + 10).max(40).min(n)
}

/// Whether `count` pairs of a pencil of order `n` take the dense path under
/// [`EigenMethod::Auto`]: a small problem ([`DENSE_ORDER`]), or more than a quarter of the
/// modes (the Lanczos basis would hold about half the space, and its passes cost about as much
/// as the `n` solves of the dense path).
pub fn takes_dense_path(n: usize, count: usize) -> bool {
    n <= DENSE_ORDER || 4 * count > n
}

/// The Lanczos search's budget of operator applications, in multiples of its basis.
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

/// The operator (M1) `C = Bᵀ (K − σ M)⁻¹ B`, for the dense path.
struct ShiftInvert<'a> {
    factor: &'a Factorization,
    root: &'a MassRoot,
    n: usize,
    solves: usize,
}

impl ShiftInvert<'_> {
    /// `out = C x`.
    fn apply_one(&mut self, x: &[f64], out: &mut [f64]) {
        let mut t = vec![0.0; self.n];
        self.root.apply(x, &mut t);
        self.factor.solve_in_place(&mut t);
        self.solves += 1;
        self.root.apply_transpose(&t, out);
    }
}

/// The shift-invert operator `A = (K − σ M)⁻¹ M`, self-adjoint in the M inner product (L1),
/// for the Lanczos path.
struct ShiftInvertM<'a> {
    factor: &'a Factorization,
    mass: MassMatrix<'a>,
    n: usize,
}

impl MetricOperator for ShiftInvertM<'_> {
    fn order(&self) -> usize {
        self.n
    }

    fn apply(&self, x: &[f64], out: &mut [f64]) {
        self.metric(x, out);
        self.factor.solve_in_place(out);
    }

    fn metric(&self, x: &[f64], out: &mut [f64]) {
        match self.mass {
            MassMatrix::Lumped(m) => {
                for ((o, m), x) in out.iter_mut().zip(m).zip(x) {
                    *o = m * x;
                }
            }
            MassMatrix::Consistent(m) => crate::sparse::mul_add(0.0, out, 1.0, m, x),
        }
    }
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
    let dense = match settings.method {
        EigenMethod::Auto => takes_dense_path(n, count),
        EigenMethod::Dense => true,
        EigenMethod::Lanczos => false,
    };
    // The pairs (θ, and the right-hand side whose solve is θ φ: `B y` or `M φ`, (M4)).
    let (thetas, block, solves, passes) = if dense {
        let mut op = ShiftInvert {
            factor: &factor,
            root: &root,
            n,
            solves: 0,
        };
        let (thetas, ys) = dense_pairs(&mut op, count, shift)?;
        let mut block = vec![0.0; n * count];
        for (y, column) in ys.iter().zip(block.chunks_exact_mut(n.max(1))) {
            root.apply(y, column);
        }
        (thetas, block, op.solves, 0)
    } else {
        let op = ShiftInvertM {
            factor: &factor,
            mass,
            n,
        };
        let basis = lanczos_basis(n, count);
        let lanczos = LanczosSettings {
            count,
            basis,
            tolerance: settings.tolerance,
            max_restarts: settings.max_restarts,
            max_applications: SOLVE_BUDGET * basis,
        };
        let pairs = largest_magnitude(&op, &lanczos).map_err(|e| match e {
            LanczosError::NotConverged { found, .. } => ModesError::NotConverged {
                requested: count,
                found,
            },
            LanczosError::NonFinite | LanczosError::Projected => ModesError::ShiftAtEigenvalue {
                shift,
                eigenvalue: None,
            },
        })?;
        // The shapes are the Lanczos vectors themselves (θ φ, as the dense path's solve gives).
        let mut block = vec![0.0; n * count];
        for ((y, theta), column) in pairs
            .vectors
            .iter()
            .zip(&pairs.values)
            .zip(block.chunks_exact_mut(n.max(1)))
        {
            for (c, v) in column.iter_mut().zip(y) {
                *c = theta * v;
            }
        }
        (pairs.values, block, pairs.applications, pairs.passes)
    };
    let singular_gap = SINGULAR_FRACTION * (scale + shift.abs());
    for theta in &thetas {
        let lambda = shift + 1.0 / theta;
        if (1.0 / theta).abs() <= singular_gap || !lambda.is_finite() {
            return Err(ModesError::ShiftAtEigenvalue {
                shift,
                eigenvalue: Some(lambda),
            });
        }
    }
    let found = refine(
        stiffness,
        mass,
        &factor,
        (shift, singular_gap),
        thetas,
        block,
        dense,
    )?;
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

/// Rounds of (M4)–(M5) at most before the residual check (M7) refuses the pairs.
const REFINEMENTS: usize = 3;

/// The shapes from the pairs' right-hand sides (`B y` or `M φ`, whose solve is `θ φ`; or `θ φ`
/// itself when `solve_first` is false, the Lanczos path): one step of subspace iteration (M4) — all in one solve with many right-hand sides, the factor
/// read once —, M-orthonormalization, and a Rayleigh–Ritz projection of `K` on their span (M5)
/// that gives the eigenvalues and separates close ones; repeated (at most [`REFINEMENTS`]
/// rounds) until every pair passes the residual check (M7). Returns `(λ, residual, φ)`,
/// ascending.
#[allow(clippy::type_complexity)]
fn refine(
    stiffness: &CsrMatrix<f64>,
    mass: MassMatrix<'_>,
    factor: &Factorization,
    (shift, singular_gap): (f64, f64),
    mut thetas: Vec<f64>,
    mut block: Vec<f64>,
    solve_first: bool,
) -> Result<Vec<(f64, f64, Vec<f64>)>, ModesError> {
    let n = stiffness.nrows();
    let count = thetas.len();
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let k_norm = matrix_inf_norm(stiffness);
    let mut worst = (0, 0.0);
    for round in 0..REFINEMENTS {
        if round > 0 || solve_first {
            factor.solve_many_in_place(&mut block, count);
        }
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
        // M-orthonormal: two passes of Gram–Schmidt in the M inner product.
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
                if !(norm.is_finite() && norm > 0.0) {
                    return Err(ModesError::ShiftAtEigenvalue {
                        shift,
                        eigenvalue: Some(pairs[j].0),
                    });
                }
                for p in pairs[j].1.iter_mut() {
                    *p /= norm;
                }
            }
        }
        // Rayleigh–Ritz (M5): the eigenpairs of Φᵀ K Φ (Φ M-orthonormal).
        let kphi: Vec<Vec<f64>> = pairs.iter().map(|(_, p)| mul(stiffness, p)).collect();
        let kr = Mat::<f64>::from_fn(count, count, |i, j| {
            let a: f64 = pairs[i].1.iter().zip(&kphi[j]).map(|(x, y)| x * y).sum();
            let b: f64 = pairs[j].1.iter().zip(&kphi[i]).map(|(x, y)| x * y).sum();
            0.5 * (a + b)
        });
        let evd = kr
            .self_adjoint_eigen(Side::Lower)
            .map_err(|_| ModesError::NotConverged {
                requested: count,
                found: 0,
            })?;
        let (values, vectors) = (evd.S(), evd.U());
        let mut found = Vec::with_capacity(count);
        worst = (0, 0.0);
        for j in 0..count {
            let mut phi = vec![0.0; n];
            let mut kp = vec![0.0; n];
            for i in 0..count {
                let c = vectors[(i, j)];
                for ((p, k), (q, kq)) in phi
                    .iter_mut()
                    .zip(kp.iter_mut())
                    .zip(pairs[i].1.iter().zip(&kphi[i]))
                {
                    *p += c * q;
                    *k += c * kq;
                }
            }
            let lambda = values[j];
            let mphi = mass.apply(&phi);
            let r: Vec<f64> = kp.iter().zip(&mphi).map(|(k, m)| k - lambda * m).collect();
            if phi.iter().any(|v| !v.is_finite()) || !lambda.is_finite() {
                return Err(ModesError::ShiftAtEigenvalue {
                    shift,
                    eigenvalue: Some(lambda),
                });
            }
            // The acceptance check (M7): ‖Kφ − λMφ‖∞ ≤ tol ‖K‖∞ ‖φ‖∞.
            let relative = inf(&r) / (k_norm * inf(&phi)).max(f64::MIN_POSITIVE);
            if relative > worst.1 {
                worst = (j + 1, relative);
            }
            found.push((lambda, relative, phi));
        }
        if worst.1 <= RESIDUAL_TOLERANCE {
            return Ok(found);
        }
        // Another round from the projected pairs.
        for ((lambda, _, phi), (theta, column)) in found
            .iter()
            .zip(thetas.iter_mut().zip(block.chunks_exact_mut(n.max(1))))
        {
            if (lambda - shift).abs() <= singular_gap {
                return Err(ModesError::ShiftAtEigenvalue {
                    shift,
                    eigenvalue: Some(*lambda),
                });
            }
            *theta = 1.0 / (lambda - shift);
            column.copy_from_slice(&mass.apply(phi));
        }
    }
    Err(ModesError::Residual {
        mode: worst.0,
        residual: worst.1,
    })
}

/// `‖A‖∞`, the largest absolute row sum.
fn matrix_inf_norm(a: &CsrMatrix<f64>) -> f64 {
    let (offsets, _, values) = a.csr_data();
    (0..a.nrows())
        .map(|r| {
            values[offsets[r]..offsets[r + 1]]
                .iter()
                .map(|v| v.abs())
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
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

/// Eigenvalues `θ` of (M1) and their vectors `y`.
type Pairs = (Vec<f64>, Vec<Vec<f64>>);

/// All of `C` by its dense eigendecomposition; the `count` of largest `|θ|`.
fn dense_pairs(op: &mut ShiftInvert<'_>, count: usize, shift: f64) -> Result<Pairs, ModesError> {
    let n = op.n;
    let mut c = Mat::<f64>::zeros(n, n);
    let mut e = vec![0.0; n];
    let mut col = vec![0.0; n];
    for j in 0..n {
        e.fill(0.0);
        e[j] = 1.0;
        op.apply_one(&e, &mut col);
        if col.iter().any(|v| !v.is_finite()) {
            return Err(ModesError::ShiftAtEigenvalue {
                shift,
                eigenvalue: None,
            });
        }
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
    Ok((thetas, ys))
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

    fn check_string(n_cells: usize, consistent: bool, count: usize, method: EigenMethod) {
        let (k, m, lumped) = string(n_cells, consistent);
        let mass = if consistent {
            MassMatrix::Consistent(&m)
        } else {
            MassMatrix::Lumped(&lumped)
        };
        let modes =
            lowest_modes(&k, mass, &ModeSettings::lowest(count).with_method(method)).unwrap();
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
    fn the_string_sine_modes_dense_and_lanczos() {
        for method in [EigenMethod::Dense, EigenMethod::Lanczos] {
            check_string(50, false, 8, method);
            check_string(50, true, 8, method);
        }
        // Auto: the Lanczos path above DENSE_ORDER.
        check_string(2000, false, 10, EigenMethod::Auto);
        check_string(2000, true, 10, EigenMethod::Auto);
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
