//! The Coulomb cone, its projection, and contact frames.
//!
//! Local coordinates are normal first: a vector `x = [x_N, x_T1, x_T2]` in the frame
//! `[n, t1, t2]` of a contact point (docs/theory/contact.md, eq. (C1)). The cone of friction
//! coefficient `μ` is `K_μ = { x : ‖x_T‖ ≤ μ x_N }`.

use nalgebra::{Matrix3, Vector3};

/// The Euclidean projection onto `K_μ` (docs/theory/contact.md, eq. (C6)):
///
/// - `x` itself when `‖x_T‖ ≤ μ x_N` (inside the cone);
/// - `0` when `μ ‖x_T‖ ≤ −x_N` (inside the polar cone);
/// - otherwise `(x_N + μ‖x_T‖)/(1 + μ²) · [1, μ x_T/‖x_T‖]`.
///
/// With `μ = 0` the cone is the half line `x_T = 0, x_N ≥ 0` and the projection is
/// `[max(x_N, 0), 0, 0]`.
pub fn project_on_cone(x: &Vector3<f64>, mu: f64) -> Vector3<f64> {
    let nt = x[1].hypot(x[2]);
    // (x_N ≥ 0 guards μ = 0, x_T = 0, x_N < 0, where `0 ≤ 0·x_N = −0` holds.)
    if nt <= mu * x[0] && x[0] >= 0.0 {
        return *x;
    }
    if mu * nt <= -x[0] {
        return Vector3::zeros();
    }
    if nt == 0.0 {
        // μ = 0 and x_N > 0 (the other cases returned above).
        return Vector3::new(x[0].max(0.0), 0.0, 0.0);
    }
    let a = (x[0] + mu * nt) / (1.0 + mu * mu);
    Vector3::new(a, a * mu * x[1] / nt, a * mu * x[2] / nt)
}

/// The projection onto the disc `‖x‖ ≤ radius` of the tangent plane (`radius ≥ 0`).
pub fn project_on_disc(x: [f64; 2], radius: f64) -> [f64; 2] {
    let n = x[0].hypot(x[1]);
    if n <= radius {
        x
    } else {
        let s = radius / n;
        [x[0] * s, x[1] * s]
    }
}

/// A contact frame from a unit normal: the rows of the returned matrix are `n, t1, t2`, an
/// orthonormal right-handed basis (`t1 × t2 = n`), so that `F v` gives a world vector `v` in
/// local coordinates and `Fᵀ x` takes local coordinates back to the world.
///
/// `t1` is built from the world axis least aligned with `n` (a fixed rule, so the frame is a
/// function of `n` alone and the same on every run and thread count).
pub fn frame_from_normal(n: &Vector3<f64>) -> Matrix3<f64> {
    let n = n.normalize();
    let a = n.abs();
    let axis = if a.x <= a.y && a.x <= a.z {
        Vector3::x()
    } else if a.y <= a.z {
        Vector3::y()
    } else {
        Vector3::z()
    };
    let t1 = (axis - n * n.dot(&axis)).normalize();
    let t2 = n.cross(&t1);
    Matrix3::from_rows(&[n.transpose(), t1.transpose(), t2.transpose()])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The projection is idempotent, `x − P x` is orthogonal to `P x` and lies in the polar
    /// cone: the three properties that characterise the projection onto a closed convex cone
    /// (Moreau's decomposition), each to round-off.
    #[test]
    fn projection_is_moreau_decomposition_to_round_off() {
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        for mu in [0.0, 0.1, 0.3, 1.0, 3.0] {
            for _ in 0..2000 {
                let x = Vector3::new(next(), next(), next()) * 10.0;
                let p = project_on_cone(&x, mu);
                let d = x - p;
                let scale = x.norm() * x.norm();
                // In the cone.
                assert!(p[1].hypot(p[2]) <= mu * p[0] * (1.0 + 1e-15) + 1e-15 * x.norm());
                // Idempotent.
                assert!((project_on_cone(&p, mu) - p).norm() <= 4e-16 * x.norm());
                // Orthogonal.
                assert!(d.dot(&p).abs() <= 8e-16 * scale, "mu {mu} x {x:?}");
                // x − P x is in the polar cone {y : μ‖y_T‖ ≤ −y_N}.
                assert!(mu * d[1].hypot(d[2]) <= -d[0] + 4e-15 * x.norm());
            }
        }
    }

    #[test]
    fn projection_cases_in_closed_form() {
        let mu = 0.5;
        let inside = Vector3::new(2.0, 0.6, -0.8);
        assert_eq!(project_on_cone(&inside, mu), inside);
        let polar = Vector3::new(-1.0, 0.3, 0.4);
        assert_eq!(project_on_cone(&polar, mu), Vector3::zeros());
        // x = (1, 3, 4): ‖x_T‖ = 5, a = (1 + 2.5)/1.25 = 2.8, P x = 2.8 (1, 0.5·0.6, 0.5·0.8).
        let p = project_on_cone(&Vector3::new(1.0, 3.0, 4.0), mu);
        let expected = Vector3::new(2.8, 2.8 * 0.3, 2.8 * 0.4);
        assert!((p - expected).norm() <= 1e-15 * 3.0);
        assert_eq!(
            project_on_cone(&Vector3::new(2.0, 1.0, 0.0), 0.0),
            Vector3::new(2.0, 0.0, 0.0)
        );
        // μ = 0, on the negative normal axis: the projection is 0 (not x: 0 ≤ 0·x_N = −0).
        assert_eq!(
            project_on_cone(&Vector3::new(-1.5, 0.0, 0.0), 0.0),
            Vector3::zeros()
        );
        assert_eq!(
            project_on_cone(&Vector3::new(-1.5, 0.0, 0.0), 0.3),
            Vector3::zeros()
        );
    }

    #[test]
    fn frames_are_orthonormal_and_right_handed() {
        for n in [
            Vector3::new(0.0, 0.0, 1.0),
            Vector3::new(1.0, 2.0, -3.0),
            Vector3::new(-1.0, 0.0, 0.0),
            Vector3::new(1e-9, 1.0, 1e-9),
        ] {
            let f = frame_from_normal(&n);
            assert!((f * f.transpose() - Matrix3::identity()).norm() < 1e-15 * 4.0);
            assert!((f.determinant() - 1.0).abs() < 1e-15 * 4.0);
            assert!((f.row(0).transpose() - n.normalize()).norm() < 1e-15 * 2.0);
        }
    }
}
