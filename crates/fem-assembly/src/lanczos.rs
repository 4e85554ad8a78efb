//! A thick-restarted Lanczos iteration for the eigenvalues of largest magnitude of an operator
//! self-adjoint in an inner product `⟨x, y⟩ = xᵀ M y`, with full reorthogonalization, locking
//! of converged pairs and a hard cap on its work (docs/theory/modes.md, (L1)–(L4)).
//!
//! Written for the shift-invert operator `A = (K − σ M)⁻¹ M` of [`crate::modes`], which is
//! self-adjoint in the M inner product; the method is that of Wu & Simon (SIAM J. Matrix Anal.
//! Appl. 22, 2000) — the restart keeps Ritz vectors, not a filtered start vector — with:
//!
//! * **full M-reorthogonalization**: every new vector is M-orthogonalized against the locked
//!   vectors and the whole basis by two passes of classical Gram–Schmidt (Daniel–Gragg–
//!   Kaufman–Stewart), so the basis stays M-orthonormal to working precision and no spurious
//!   copies of converged eigenvalues appear;
//! * **the projected matrix `T = Vᵀ M A V` in full** (L2): its entries are the Gram–Schmidt
//!   coefficients, so after a thick restart (an arrow matrix) and with reorthogonalization
//!   nothing is assumed tridiagonal;
//! * **locking** (L3): a Ritz pair whose residual `|β_m s_{m,i}|` (the M-norm of
//!   `A y − θ y`) is below the tolerance leaves the basis for the locked set, and every later
//!   vector is M-orthogonalized against it — the operator is deflated by it;
//! * **passes** (L4): a single Krylov space holds one vector of each eigenspace (in exact
//!   arithmetic), so repeated eigenvalues — the six rigid modes of a free body, the two bending
//!   modes of a square beam — need a fresh start. After the first pass has the wanted pairs,
//!   a check pass starts from a new vector M-orthogonal to the locked ones and converges the
//!   largest pair of the deflated operator; if it belongs among the wanted, another check pass
//!   follows, otherwise the set is complete;
//! * **a cap**: the operator applications of the whole search are bounded
//!   ([`LanczosSettings::max_applications`]); when they are spent, or a pass converges nothing
//!   within [`LanczosSettings::max_restarts`] restarts, the search stops with
//!   [`LanczosError::NotConverged`] naming how many pairs it had. It never loops without bound.

use faer::{Mat, Side};

/// The attainable residual, relative to the largest Ritz value of the deflated operator:
/// a small multiple of the unit round-off (the solves' own rounding).
pub const ROUND_OFF: f64 = 64.0 * f64::EPSILON;

/// An operator `A`, self-adjoint in the inner product of the symmetric positive definite `M`.
pub trait MetricOperator {
    /// The order `n`.
    fn order(&self) -> usize;
    /// `out = A x`.
    fn apply(&self, x: &[f64], out: &mut [f64]);
    /// `out = M x`.
    fn metric(&self, x: &[f64], out: &mut [f64]);
}

/// What to compute and how much work to allow.
#[derive(Clone, Debug, PartialEq)]
pub struct LanczosSettings {
    /// How many eigenpairs of largest `|θ|`.
    pub count: usize,
    /// The largest basis (besides the locked vectors); at least `count + 2` is useful.
    pub basis: usize,
    /// A pair is converged when its residual `‖A y − θ y‖_M ≤ max(tolerance · |θ|,
    /// ROUND_OFF · max|θ|)` (the max over the basis of the current pass, locked pairs excluded).
    pub tolerance: f64,
    /// Restarts of one pass before it gives up.
    pub max_restarts: usize,
    /// Operator applications of the whole search before it gives up.
    pub max_applications: usize,
}

impl LanczosSettings {
    /// `count` pairs with the default basis (`max(2 count + 10, 40)`), tolerance `1e-12` and
    /// caps (40 restarts a pass, 200 bases' worth of applications in all).
    pub fn new(count: usize) -> Self {
        let basis = (2 * count + 10).max(40);
        Self {
            count,
            basis,
            tolerance: 1e-12,
            max_restarts: 40,
            max_applications: 200 * basis,
        }
    }
}

/// The pairs found.
#[derive(Clone, Debug)]
pub struct LanczosPairs {
    /// Eigenvalues `θ`, by decreasing `|θ|`.
    pub values: Vec<f64>,
    /// Their vectors, M-orthonormal.
    pub vectors: Vec<Vec<f64>>,
    /// Operator applications.
    pub applications: usize,
    /// Passes (1 + the check passes).
    pub passes: usize,
    /// Restarts, over all passes.
    pub restarts: usize,
}

/// Why the search stopped.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LanczosError {
    /// The work cap was reached, or a pass converged nothing within its restarts.
    #[error(
        "the Lanczos search converged {found} of the {requested} eigenpairs asked for within {applications} operator applications"
    )]
    NotConverged {
        /// Pairs asked for.
        requested: usize,
        /// Pairs converged.
        found: usize,
        /// Applications spent.
        applications: usize,
    },
    /// The operator returned a value that is not a finite number.
    #[error("the operator returned a value that is not a finite number")]
    NonFinite,
    /// The projected eigenproblem failed (not expected for a finite symmetric matrix).
    #[error("the projected eigenproblem did not converge")]
    Projected,
}

/// A reproducible start vector with every component nonzero and of either sign.
pub fn start_vector(n: usize, seed: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let t = (i as f64 + 1.0) * 0.618_033_988_749_895 + seed as f64 * 0.377;
            (t * 12.9898).sin() + 0.5 * (t * 78.233).cos() + 0.01
        })
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

struct Search<'a, O: MetricOperator> {
    op: &'a O,
    n: usize,
    /// Locked pairs `(θ, y)`, M-orthonormal.
    locked: Vec<(f64, Vec<f64>)>,
    applications: usize,
    scratch: Vec<f64>,
}

impl<O: MetricOperator> Search<'_, O> {
    /// M-orthogonalizes `w` against the locked vectors and `basis` (two passes of classical
    /// Gram–Schmidt); returns the coefficients along `basis` (summed over the passes) and
    /// `‖w‖_M` after it.
    fn orthogonalize(&mut self, w: &mut [f64], basis: &[Vec<f64>]) -> (Vec<f64>, f64) {
        let mut h = vec![0.0; basis.len()];
        for _ in 0..2 {
            self.op.metric(w, &mut self.scratch);
            let cl: Vec<f64> = self
                .locked
                .iter()
                .map(|(_, y)| dot(y, &self.scratch))
                .collect();
            let cb: Vec<f64> = basis.iter().map(|v| dot(v, &self.scratch)).collect();
            for ((_, y), c) in self.locked.iter().zip(&cl) {
                axpy(-c, y, w);
            }
            for ((v, c), hi) in basis.iter().zip(&cb).zip(h.iter_mut()) {
                axpy(-c, v, w);
                *hi += c;
            }
        }
        self.op.metric(w, &mut self.scratch);
        let norm = dot(w, &self.scratch).max(0.0).sqrt();
        (h, norm)
    }

    fn apply(&mut self, x: &[f64]) -> Result<Vec<f64>, LanczosError> {
        let mut out = vec![0.0; self.n];
        self.op.apply(x, &mut out);
        self.applications += 1;
        if out.iter().any(|v| !v.is_finite()) {
            return Err(LanczosError::NonFinite);
        }
        Ok(out)
    }

    /// A fresh vector M-orthonormal to the locked ones and `basis`, or `None` when they span
    /// the space (to working precision).
    fn fresh(&mut self, seed: usize, basis: &[Vec<f64>]) -> Option<Vec<f64>> {
        for attempt in 0..3 {
            let mut v = start_vector(self.n, seed + 101 * attempt);
            self.op.metric(&v, &mut self.scratch);
            let before = dot(&v, &self.scratch).sqrt();
            let (_, norm) = self.orthogonalize(&mut v, basis);
            if norm > 1e-8 * before && norm.is_finite() {
                v.iter_mut().for_each(|x| *x /= norm);
                return Some(v);
            }
        }
        None
    }
}

/// The `settings.count` eigenpairs of largest `|θ|` of `op` (see the module documentation).
pub fn largest_magnitude<O: MetricOperator>(
    op: &O,
    settings: &LanczosSettings,
) -> Result<LanczosPairs, LanczosError> {
    let n = op.order();
    let count = settings.count.min(n);
    let mut s = Search {
        op,
        n,
        locked: Vec::new(),
        applications: 0,
        scratch: vec![0.0; n],
    };
    let not_converged = |s: &Search<'_, O>| LanczosError::NotConverged {
        requested: count,
        found: s.locked.len().min(count),
        applications: s.applications,
    };
    let mut passes = 0;
    let mut restarts_total = 0;
    if count == 0 {
        return Ok(LanczosPairs {
            values: vec![],
            vectors: vec![],
            applications: 0,
            passes: 0,
            restarts: 0,
        });
    }
    'passes: loop {
        if s.locked.len() >= n {
            break;
        }
        let check = passes > 0;
        let threshold = kth_largest(&s.locked, count);
        passes += 1;
        let locked_before = s.locked.len();
        // The pass's basis: at most what is left of the space.
        let m = settings.basis.max(count + 2).min(n - s.locked.len()).max(1);
        let Some(v0) = s.fresh(passes, &[]) else {
            break;
        };
        let mut basis: Vec<Vec<f64>> = vec![v0];
        // T = Vᵀ M A V (L2), `m × m`, row-major.
        let mut t = vec![0.0; m * m];
        let mut restarts = 0;
        loop {
            // Extend the basis to m vectors; `next`, `beta`: the residual direction.
            let mut next: Option<Vec<f64>> = None;
            let mut beta = 0.0;
            let mut j = basis.len() - 1;
            loop {
                if s.applications >= settings.max_applications {
                    return Err(not_converged(&s));
                }
                let mut w = s.apply(&basis[j])?;
                let (h, norm) = s.orthogonalize(&mut w, &basis);
                for (i, hi) in h.iter().enumerate() {
                    t[i * m + j] = *hi;
                    t[j * m + i] = *hi;
                }
                // Breakdown: the basis spans an invariant subspace; go on with a fresh vector
                // (coupled by 0), or stop when the space is exhausted.
                let scale = h.iter().fold(norm, |a, b| a.max(b.abs()));
                let (v, b) = if norm > 1e-12 * scale {
                    w.iter_mut().for_each(|x| *x /= norm);
                    (Some(w), norm)
                } else {
                    (s.fresh(passes * 7919 + j, &basis), 0.0)
                };
                if j + 1 == m {
                    next = v;
                    beta = b;
                    break;
                }
                match v {
                    Some(v) => {
                        basis.push(v);
                        t[(j + 1) * m + j] = b;
                        t[j * m + j + 1] = b;
                        j += 1;
                    }
                    None => break,
                }
            }
            // Rayleigh–Ritz on the basis.
            let k = basis.len();
            let tk = Mat::<f64>::from_fn(k, k, |a, b| 0.5 * (t[a * m + b] + t[b * m + a]));
            let evd = tk
                .self_adjoint_eigen(Side::Lower)
                .map_err(|_| LanczosError::Projected)?;
            let (vals, vecs) = (evd.S(), evd.U());
            let mut order: Vec<usize> = (0..k).collect();
            order.sort_by(|&a, &b| vals[b].abs().total_cmp(&vals[a].abs()));
            // Relative to the pair's own |θ|, not below the round-off of the operator on the
            // basis (the largest Ritz value of the deflated operator, (L3)).
            let floor = ROUND_OFF * vals[order[0]].abs();
            let tol_of = |i: usize| (settings.tolerance * vals[i].abs()).max(floor);
            let residual = |i: usize| (beta * vecs[(k - 1, i)]).abs();
            let ritz = |i: usize| -> Vec<f64> {
                let mut y = vec![0.0; n];
                for (r, v) in basis.iter().enumerate() {
                    axpy(vecs[(r, i)], v, &mut y);
                }
                y
            };
            // Lock the converged pairs (L3).
            let mut kept: Vec<usize> = Vec::new();
            for &i in &order {
                if residual(i) <= tol_of(i) {
                    let mut y = ritz(i);
                    // Against the locked ones again (round-off), M-normalised.
                    let (_, norm) = s.orthogonalize(&mut y, &[]);
                    if norm > 0.5 && norm.is_finite() {
                        y.iter_mut().for_each(|x| *x /= norm);
                        s.locked.push((vals[i], y));
                    }
                } else {
                    kept.push(i);
                }
            }
            // The pass is done when the `count` largest of the locked and the unconverged Ritz
            // values are all locked (a check pass: and it locked its largest pair).
            let top_open = kept.first().map_or(0.0, |&i| vals[i].abs());
            let above = s.locked.iter().filter(|(v, _)| v.abs() > top_open).count();
            let locked_now = s.locked.len() - locked_before;
            if (above >= count && (!check || locked_now > 0))
                || s.locked.len() >= n
                || (kept.is_empty() && next.is_none())
            {
                break;
            }
            restarts += 1;
            restarts_total += 1;
            if restarts > settings.max_restarts {
                if locked_now == 0 {
                    return Err(not_converged(&s));
                }
                // Keep what this pass converged; a new pass searches the rest.
                continue 'passes;
            }
            // Thick restart (L1): the largest unconverged Ritz vectors, then the residual
            // direction, the arrow coupling `β s_{m,i}`.
            let keep = kept
                .len()
                .min((m / 2).max(count.saturating_sub(above)).min(m - 1));
            let keep = keep.max(1).min(kept.len());
            let mut new_basis: Vec<Vec<f64>> = kept[..keep].iter().map(|&i| ritz(i)).collect();
            t.iter_mut().for_each(|x| *x = 0.0);
            for (a, &i) in kept[..keep].iter().enumerate() {
                t[a * m + a] = vals[i];
            }
            match next {
                Some(v) if keep < m => {
                    for (a, &i) in kept[..keep].iter().enumerate() {
                        let b = beta * vecs[(k - 1, i)];
                        t[keep * m + a] = b;
                        t[a * m + keep] = b;
                    }
                    new_basis.push(v);
                }
                _ => {}
            }
            // The kept Ritz vectors against the newly locked ones (round-off).
            for v in new_basis.iter_mut() {
                let (_, norm) = s.orthogonalize(v, &[]);
                if norm.is_finite() && norm > 0.0 {
                    v.iter_mut().for_each(|x| *x /= norm);
                }
            }
            basis = new_basis;
            if basis.len() == keep {
                // No residual direction: continue from a fresh vector.
                match s.fresh(passes * 104_729 + restarts, &basis) {
                    Some(v) => basis.push(v),
                    None => break,
                }
            }
        }
        if !check {
            continue;
        }
        // A check pass: did anything it locked belong among the `count` largest?
        let entered = s.locked[locked_before..]
            .iter()
            .any(|(v, _)| v.abs() > threshold * (1.0 + 1e-10));
        if !entered {
            break;
        }
    }
    if s.locked.len() < count {
        return Err(not_converged(&s));
    }
    let mut locked = s.locked;
    locked.sort_by(|a, b| b.0.abs().total_cmp(&a.0.abs()));
    locked.truncate(count);
    Ok(LanczosPairs {
        values: locked.iter().map(|p| p.0).collect(),
        vectors: locked.into_iter().map(|p| p.1).collect(),
        applications: s.applications,
        passes,
        restarts: restarts_total,
    })
}

/// The `k`-th largest `|θ|` of the locked pairs (0 when there are fewer).
fn kth_largest(locked: &[(f64, Vec<f64>)], k: usize) -> f64 {
    if locked.len() < k {
        return 0.0;
    }
    let mut a: Vec<f64> = locked.iter().map(|p| p.0.abs()).collect();
    a.sort_by(|x, y| y.total_cmp(x));
    a[k - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diagonal operator with the identity metric: eigenvalues known exactly.
    struct Diagonal(Vec<f64>);

    impl MetricOperator for Diagonal {
        fn order(&self) -> usize {
            self.0.len()
        }
        fn apply(&self, x: &[f64], out: &mut [f64]) {
            for ((o, d), x) in out.iter_mut().zip(&self.0).zip(x) {
                *o = d * x;
            }
        }
        fn metric(&self, x: &[f64], out: &mut [f64]) {
            out.copy_from_slice(x);
        }
    }

    #[test]
    fn repeated_eigenvalues_all_come_out() {
        // Six equal largest (a free body's rigid modes), a pair, then a decaying rest.
        let mut d = vec![1e6; 6];
        d.extend([5.0, 5.0, 3.0]);
        d.extend((0..400).map(|i| 1.0 / (i as f64 + 2.0)));
        let op = Diagonal(d.clone());
        let pairs = largest_magnitude(&op, &LanczosSettings::new(10)).unwrap();
        let mut want = d.clone();
        want.sort_by(|a, b| b.total_cmp(a));
        // To round-off of the largest (the tolerance is relative to max|θ|).
        for (got, want) in pairs.values.iter().zip(&want) {
            assert!(
                (got - want).abs() <= 1e-15 * 1e6 * 10.0,
                "{got} against {want}"
            );
        }
        for (i, a) in pairs.vectors.iter().enumerate() {
            for (j, b) in pairs.vectors.iter().enumerate() {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((dot(a, b) - e).abs() < 1e-12, "({i}, {j})");
            }
        }
    }

    #[test]
    fn negative_and_positive_values_by_magnitude() {
        let d: Vec<f64> = (0..300)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 } / (i as f64 + 1.0))
            .collect();
        let pairs = largest_magnitude(&Diagonal(d.clone()), &LanczosSettings::new(5)).unwrap();
        for (j, got) in pairs.values.iter().enumerate() {
            assert!((got - d[j]).abs() < 1e-13, "{j}: {got} against {}", d[j]);
        }
    }

    #[test]
    fn the_work_cap_stops_the_search_with_an_error() {
        // A flat spectrum converges slowly; a cap of 30 applications cannot be enough.
        let d: Vec<f64> = (0..2000).map(|i| 1.0 + 1e-6 * i as f64).collect();
        let settings = LanczosSettings {
            max_applications: 30,
            ..LanczosSettings::new(20)
        };
        let e = largest_magnitude(&Diagonal(d), &settings).unwrap_err();
        assert!(
            matches!(
                e,
                LanczosError::NotConverged {
                    requested: 20,
                    applications: 30,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn every_pair_of_a_small_operator() {
        let d: Vec<f64> = (0..12).map(|i| (i as f64 - 5.5).powi(3)).collect();
        let pairs = largest_magnitude(&Diagonal(d.clone()), &LanczosSettings::new(12)).unwrap();
        let mut want = d;
        want.sort_by(f64::total_cmp);
        let mut got = pairs.values.clone();
        got.sort_by(f64::total_cmp);
        for (got, want) in got.iter().zip(&want) {
            assert!((got - want).abs() < 1e-12 * want.abs());
        }
    }
}
