//! The largest eigenvalue of an element's generalized problem `K φ = λ M φ` with a lumped
//! (diagonal) mass, for the critical step of explicit schemes.
//!
//! For the central-difference (leap-frog) scheme the step is stable when `h ≤ 2/ω_max`,
//! `ω_max² = λ_max(K, M)`. With element-by-element lumped masses, the global `λ_max` is bounded
//! by the largest element value (Irons' element eigenvalue inequality; Hughes, *The Finite
//! Element Method*, §9.3, Theorem 2.1 of Irons & Treharne 1971), so
//! `h_crit = 2 / sqrt(max_e λ_max,e)` is a safe estimate, computed from each element's current
//! tangent (it changes as the body deforms).
//!
//! The element value is computed exactly (to a relative 1e-12), not by power iterations (which
//! approach `λ_max` from below, i.e. on the unsafe side): the symmetric matrix
//! `A = M^{-1/2} K M^{-1/2}` is reduced to tridiagonal form by Householder reflections and its
//! largest eigenvalue bracketed by bisection on the Sturm count (Golub & Van Loan, §8.3, §8.4),
//! returning the upper end of the bracket. About `4/3 n³` flops: 20k for hex8 (`n = 24`).

/// Largest dimension handled ([`SolidKind::Hex27`](super::SolidKind::Hex27): 81).
pub const MAX_DOFS: usize = 81;

/// Largest eigenvalue of `K φ = λ M φ` for a symmetric `k` (`n × n`, row-major) and a
/// positive diagonal mass `m` (length `n ≤ MAX_DOFS`); an upper bound within a relative 1e-12.
/// Entries of `m` that are not positive are treated as infinite masses (dofs that do not move).
pub fn max_generalized_eigenvalue(k: &[f64], m: &[f64]) -> f64 {
    let n = m.len();
    assert!(n <= MAX_DOFS && k.len() == n * n);
    let mut a = [0.0; MAX_DOFS * MAX_DOFS];
    let scale: [f64; MAX_DOFS] = std::array::from_fn(|i| {
        if i < n && m[i] > 0.0 {
            1.0 / m[i].sqrt()
        } else {
            0.0
        }
    });
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = 0.5 * (k[i * n + j] + k[j * n + i]) * scale[i] * scale[j];
        }
    }
    let (d, e) = tridiagonalize(&mut a[..n * n], n);
    largest_tridiagonal_eigenvalue(&d[..n], &e[..n.saturating_sub(1)])
}

/// Householder reduction of a symmetric `n × n` matrix (destroyed) to tridiagonal form with the
/// same eigenvalues: returns the diagonal and the sub-diagonal.
fn tridiagonalize(a: &mut [f64], n: usize) -> ([f64; MAX_DOFS], [f64; MAX_DOFS]) {
    let mut v = [0.0; MAX_DOFS];
    let mut p = [0.0; MAX_DOFS];
    for c in 0..n.saturating_sub(2) {
        // Reflect x = a[c+1.., c] onto alpha e₁.
        let norm = (c + 1..n)
            .map(|i| a[i * n + c] * a[i * n + c])
            .sum::<f64>()
            .sqrt();
        if norm == 0.0 {
            continue;
        }
        let x0 = a[(c + 1) * n + c];
        let alpha = if x0 > 0.0 { -norm } else { norm };
        for i in c + 1..n {
            v[i] = a[i * n + c];
        }
        v[c + 1] -= alpha;
        let vnorm = (c + 1..n).map(|i| v[i] * v[i]).sum::<f64>().sqrt();
        for i in c + 1..n {
            v[i] /= vnorm;
        }
        // A ← H A H on the trailing block: p = A v, q = p − (vᵀp) v, A ← A − 2 v qᵀ − 2 q vᵀ.
        for i in c + 1..n {
            p[i] = (c + 1..n).map(|j| a[i * n + j] * v[j]).sum();
        }
        let vp: f64 = (c + 1..n).map(|i| v[i] * p[i]).sum();
        for i in c + 1..n {
            p[i] -= vp * v[i];
        }
        for i in c + 1..n {
            for j in c + 1..n {
                a[i * n + j] -= 2.0 * (v[i] * p[j] + p[i] * v[j]);
            }
        }
        a[(c + 1) * n + c] = alpha;
        a[c * n + c + 1] = alpha;
        for i in c + 2..n {
            a[i * n + c] = 0.0;
            a[c * n + i] = 0.0;
        }
    }
    let mut d = [0.0; MAX_DOFS];
    let mut e = [0.0; MAX_DOFS];
    for i in 0..n {
        d[i] = a[i * n + i];
        if i + 1 < n {
            e[i] = a[(i + 1) * n + i];
        }
    }
    (d, e)
}

/// Number of eigenvalues of the tridiagonal matrix `(d, e)` smaller than `x` (Sturm count).
fn count_below(d: &[f64], e: &[f64], x: f64) -> usize {
    let mut count = 0;
    let mut q = 1.0;
    for i in 0..d.len() {
        let off = if i == 0 { 0.0 } else { e[i - 1] * e[i - 1] };
        q = d[i] - x - if i == 0 { 0.0 } else { off / q };
        if q == 0.0 {
            q = -f64::EPSILON * (d[i].abs() + x.abs() + f64::MIN_POSITIVE);
        }
        if q < 0.0 {
            count += 1;
        }
    }
    count
}

/// Upper end of a bracket of width ≤ 1e-12 (relative) around the largest eigenvalue.
fn largest_tridiagonal_eigenvalue(d: &[f64], e: &[f64]) -> f64 {
    let n = d.len();
    if n == 0 {
        return 0.0;
    }
    let radius = |i: usize| {
        (if i > 0 { e[i - 1].abs() } else { 0.0 }) + (if i + 1 < n { e[i].abs() } else { 0.0 })
    };
    // Gershgorin bounds.
    let mut lo = (0..n)
        .map(|i| d[i] - radius(i))
        .fold(f64::INFINITY, f64::min);
    let mut hi = (0..n)
        .map(|i| d[i] + radius(i))
        .fold(f64::NEG_INFINITY, f64::max);
    let width = hi - lo;
    hi += 1e-14 * width.max(hi.abs());
    lo -= 1e-14 * width.max(lo.abs());
    for _ in 0..200 {
        if hi - lo <= 1e-12 * hi.abs().max(lo.abs()) {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if count_below(d, e, mid) == n {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    #[test]
    fn matches_a_dense_eigensolver() {
        let mut state = 12345u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for n in [1, 2, 3, 12, 24, 30] {
            let b = DMatrix::from_fn(n, n, |_, _| next() - 0.5);
            let k = &b * b.transpose() + DMatrix::identity(n, n) * 0.1;
            let m: Vec<f64> = (0..n).map(|_| 0.5 + next()).collect();
            let ms = DMatrix::from_diagonal(&nalgebra::DVector::from_iterator(
                n,
                m.iter().map(|v| 1.0 / v.sqrt()),
            ));
            let a = &ms * &k * &ms;
            let exact = a.symmetric_eigenvalues().max();
            let flat: Vec<f64> = (0..n * n).map(|i| k[(i / n, i % n)]).collect();
            let ours = max_generalized_eigenvalue(&flat, &m);
            assert!(ours >= exact * (1.0 - 1e-13), "n={n}: {ours} < {exact}");
            assert!(
                (ours - exact).abs() <= 2e-12 * exact,
                "n={n}: {ours} vs {exact}"
            );
        }
    }

    #[test]
    fn spring_mass_chain() {
        // Two unit masses joined by a spring of stiffness 2: λ = 0 and 2·2/1 = 4.
        let k = [2.0, -2.0, -2.0, 2.0];
        let lam = max_generalized_eigenvalue(&k, &[1.0, 1.0]);
        assert!((lam - 4.0).abs() < 1e-11);
        // A fixed (infinite-mass) dof removes its row and column.
        let lam = max_generalized_eigenvalue(&k, &[1.0, 0.0]);
        assert!((lam - 2.0).abs() < 1e-11);
    }
}
