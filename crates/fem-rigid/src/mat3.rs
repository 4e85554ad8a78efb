//! Hand-written 3-vectors, 3×3 matrices and symmetric 3×3 matrices.
//!
//! Why not `nalgebra::Matrix3` in the step: the state is stored as plain arrays (row-major
//! `[[f64; 3]; 3]` rotations, diagonal inertias as 3-vectors) so that a body's data is one
//! contiguous record in each of the state arrays; these helpers work on that layout directly,
//! with no conversion, and spell out the order of every sum (the rotation update relies on
//! adding a small increment last, see [`add_product`]). `nalgebra` is used only on input
//! (eigenvalues and principal axes of an inertia).

/// A 3-vector.
pub type Vec3 = [f64; 3];
/// A 3×3 matrix, row-major: `m[i][j]` is row `i`, column `j`.
pub type Mat3 = [[f64; 3]; 3];

/// The identity.
pub const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

#[inline(always)]
pub fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

#[inline(always)]
pub fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline(always)]
pub fn scale(s: f64, a: Vec3) -> Vec3 {
    [s * a[0], s * a[1], s * a[2]]
}

/// `a + s b`.
#[inline(always)]
pub fn axpy(a: Vec3, s: f64, b: Vec3) -> Vec3 {
    [a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2]]
}

#[inline(always)]
pub fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline(always)]
pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline(always)]
pub fn norm(a: Vec3) -> f64 {
    dot(a, a).sqrt()
}

/// `m v`.
#[inline(always)]
pub fn mat_vec(m: &Mat3, v: Vec3) -> Vec3 {
    [dot(m[0], v), dot(m[1], v), dot(m[2], v)]
}

/// `mᵀ v`.
#[inline(always)]
pub fn mat_t_vec(m: &Mat3, v: Vec3) -> Vec3 {
    [
        m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2],
        m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2],
        m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2],
    ]
}

/// `a b`.
#[inline(always)]
pub fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut c = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            c[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    c
}

/// `a bᵀ`.
pub fn mat_mul_t(a: &Mat3, b: &Mat3) -> Mat3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| dot(a[i], b[j])))
}

/// `det a`.
pub fn determinant(a: &Mat3) -> f64 {
    dot(a[0], cross(a[1], a[2]))
}

/// `a + a d`, the product `a (I + d)` in increment form: the small product `a d` is formed
/// first (its rounding error is relative to `|d|`), then added to `a` with one rounding per
/// entry. This is how a rotation is advanced by `exp[Ψ] = I + d`.
#[inline(always)]
pub fn add_product(a: &Mat3, d: &Mat3) -> Mat3 {
    let mut c = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            c[i][j] = a[i][j] + (a[i][0] * d[0][j] + a[i][1] * d[1][j] + a[i][2] * d[2][j]);
        }
    }
    c
}

/// `v + dᵀ v`, i.e. `(I + d)ᵀ v` in increment form.
#[inline(always)]
pub fn add_t_product(d: &Mat3, v: Vec3) -> Vec3 {
    add(v, mat_t_vec(d, v))
}

/// `diag(d) v`.
#[inline(always)]
pub fn diag_mul(d: &Vec3, v: Vec3) -> Vec3 {
    [d[0] * v[0], d[1] * v[1], d[2] * v[2]]
}

/// `diag(d)⁻¹ v`, by division.
#[inline(always)]
pub fn diag_div(v: Vec3, d: &Vec3) -> Vec3 {
    [v[0] / d[0], v[1] / d[1], v[2] / d[2]]
}

/// Solves the general 3×3 system `a x = b` by the adjugate (Cramer's rule); `None` if the
/// determinant vanishes or the result is not finite. Used for RIG_IMP's Newton corrections,
/// whose matrix is `J` plus an `O(h)` perturbation, well conditioned whenever `J` is.
#[inline(always)]
pub fn solve(a: &Mat3, b: Vec3) -> Option<Vec3> {
    let c0 = cross(a[1], a[2]);
    let c1 = cross(a[2], a[0]);
    let c2 = cross(a[0], a[1]);
    let det = dot(a[0], c0);
    // (adj a)ᵀ has the columns c0, c1, c2: x = (c0 b₀ + c1 b₁ + c2 b₂) / det.
    let r = 1.0 / det;
    let x = [
        r * (c0[0] * b[0] + c1[0] * b[1] + c2[0] * b[2]),
        r * (c0[1] * b[0] + c1[1] * b[1] + c2[1] * b[2]),
        r * (c0[2] * b[0] + c1[2] * b[1] + c2[2] * b[2]),
    ];
    (det != 0.0 && (x[0] + x[1] + x[2]).is_finite()).then_some(x)
}

/// The skew matrix `v̂` with `v̂ w = v × w`.
#[inline(always)]
pub fn hat(v: Vec3) -> Mat3 {
    [[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]]
}

/// `max |(aᵀa − I)_ij|`.
pub fn orthonormality_defect(a: &Mat3) -> f64 {
    let mut worst: f64 = 0.0;
    for i in 0..3 {
        for j in i..3 {
            let g = a[0][i] * a[0][j] + a[1][i] * a[1][j] + a[2][i] * a[2][j];
            let e = if i == j { g - 1.0 } else { g };
            worst = worst.max(e.abs());
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solve_3x3() {
        let a = [[0.0, 2.0, 1.0], [1.0, 0.0, 0.0], [3.0, 1.0, 5.0]];
        let x = solve(&a, [1.0, 2.0, 3.0]).expect("regular");
        let r = sub(mat_vec(&a, x), [1.0, 2.0, 3.0]);
        assert!(norm(r) < 1e-14);
        assert!(
            solve(
                &[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]],
                [1.0; 3]
            )
            .is_none()
        );
    }

    #[test]
    fn hat_is_the_cross_product() {
        let v = [0.3, -1.2, 2.0];
        let w = [1.5, 0.25, -0.75];
        assert_eq!(mat_vec(&hat(v), w), cross(v, w));
    }
}
