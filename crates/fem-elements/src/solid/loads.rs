//! Consistent nodal forces of dead loads: surface tractions on boundary faces and body forces.
//!
//! ```text
//! f_a = ∫_Γ N_a t dA        (t per unit reference area, fixed direction: a dead load)
//! f_a = ∫_Ω N_a b dV        (b per unit reference volume, e.g. ρ g)
//! ```
//!
//! Face rules: tri3 3 points (degree 2), quad4 2×2 Gauss, tri6 6 points (degree 4), quad8
//! and quad9 3×3 Gauss. All are exact on flat faces for a uniform load. Note that the consistent loads of quadratic
//! elements put nothing at the corners of a tri6 (`∫ N_corner dA = 0`) and a negative value at
//! the corners of a tet10 (`∫ N_corner dV = −V/20`); with a lumped mass, the body force
//! `m_a g` (lumped mass times gravity) is the consistent partner of the mass instead.

use super::material::det3;
use super::quadrature3d::{CellRule, quad_gauss, tri_3point, tri_6point};
use super::shape::{FaceKind, MAX_FACE_NODES, MAX_NODES, SolidKind};
use super::total_lagrangian::{NonPositiveJacobian, jacobian};

impl FaceKind {
    /// The rule for face loads (see the [module docs](self)).
    pub fn load_rule(self) -> CellRule {
        match self {
            FaceKind::Tri3 => tri_3point(),
            FaceKind::Quad4 => quad_gauss(2).expect("tabulated"),
            FaceKind::Tri6 => tri_6point(),
            FaceKind::Quad8 | FaceKind::Quad9 => quad_gauss(3).expect("tabulated"),
        }
    }
}

/// Area element `|∂x/∂ξ × ∂x/∂η|` of a face at a point with reference gradients `dn`.
fn area_element(x: &[[f64; 3]], dn: &[[f64; 3]]) -> f64 {
    let j = jacobian(x, dn);
    let (t1, t2) = ([j[0][0], j[1][0], j[2][0]], [j[0][1], j[1][1], j[2][1]]);
    let n = [
        t1[1] * t2[2] - t1[2] * t2[1],
        t1[2] * t2[0] - t1[0] * t2[2],
        t1[0] * t2[1] - t1[1] * t2[0],
    ];
    (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt()
}

/// Nodal forces of a uniform dead `traction` (force per unit reference area) on a face with
/// nodes `x`, into `out` (length `3 N`, node-major, overwritten). Returns the face area.
pub fn face_traction(kind: FaceKind, x: &[[f64; 3]], traction: [f64; 3], out: &mut [f64]) -> f64 {
    let n = kind.n_nodes();
    assert_eq!(x.len(), n);
    assert_eq!(out.len(), 3 * n);
    out.fill(0.0);
    let rule = kind.load_rule();
    let (mut values, mut dn) = ([0.0; MAX_FACE_NODES], [[0.0; 3]; MAX_FACE_NODES]);
    let mut area = 0.0;
    for (&xi, &w) in rule.points.iter().zip(&rule.weights) {
        kind.values_into(xi, &mut values[..n]);
        kind.gradients_into(xi, &mut dn[..n]);
        let da = w * area_element(x, &dn[..n]);
        area += da;
        for a in 0..n {
            for i in 0..3 {
                out[3 * a + i] += values[a] * traction[i] * da;
            }
        }
    }
    area
}

/// Nodal forces of a uniform `body_force` (force per unit reference volume, e.g. `ρ g`) on a
/// solid element with nodes `x`, into `out` (length `3 N`, overwritten), with
/// [`SolidKind::mass_rule`].
pub fn body_force(
    kind: SolidKind,
    x: &[[f64; 3]],
    body_force: [f64; 3],
    out: &mut [f64],
) -> Result<(), NonPositiveJacobian> {
    let n = kind.n_nodes();
    assert_eq!(x.len(), n);
    assert_eq!(out.len(), 3 * n);
    out.fill(0.0);
    let rule = kind.mass_rule();
    let (mut values, mut dn) = ([0.0; MAX_NODES], [[0.0; 3]; MAX_NODES]);
    for (q, (&xi, &w)) in rule.points.iter().zip(&rule.weights).enumerate() {
        kind.values_into(xi, &mut values[..n]);
        kind.gradients_into(xi, &mut dn[..n]);
        let det = det3(&jacobian(x, &dn[..n]));
        if !(det > 0.0 && det.is_finite()) {
            return Err(NonPositiveJacobian { point: q, det });
        }
        for a in 0..n {
            for i in 0..3 {
                out[3 * a + i] += values[a] * body_force[i] * w * det;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_traction_on_flat_faces() {
        // A tilted flat triangle with area 0.5 · |(2,0,0) × (0,1,1)| = 0.5 · sqrt(8).
        let tri = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 1.0, 1.0]];
        let area = 0.5 * 8f64.sqrt();
        let t = [1.0, -2.0, 0.5];
        let mut f = [0.0; 9];
        assert!((face_traction(FaceKind::Tri3, &tri, t, &mut f) - area).abs() < 1e-15);
        for a in 0..3 {
            for i in 0..3 {
                assert!((f[3 * a + i] - t[i] * area / 3.0).abs() < 1e-15);
            }
        }
        // The same triangle as a tri6: corners get nothing, mid-edge nodes a third each.
        let mut tri6 = tri.to_vec();
        for (a, b) in crate::solid::shape::TRI6_EDGES {
            tri6.push(std::array::from_fn(|i| 0.5 * (tri[a][i] + tri[b][i])));
        }
        let mut f = [0.0; 18];
        assert!((face_traction(FaceKind::Tri6, &tri6, t, &mut f) - area).abs() < 1e-15);
        for a in 0..6 {
            let share = if a < 3 { 0.0 } else { area / 3.0 };
            for i in 0..3 {
                assert!((f[3 * a + i] - t[i] * share).abs() < 1e-15, "node {a}");
            }
        }
        // A rectangle 2 × 3 in the plane z = 1 as a quad4: a quarter at each node.
        let quad = [
            [0.0, 0.0, 1.0],
            [2.0, 0.0, 1.0],
            [2.0, 3.0, 1.0],
            [0.0, 3.0, 1.0],
        ];
        let mut f = [0.0; 12];
        assert!((face_traction(FaceKind::Quad4, &quad, t, &mut f) - 6.0).abs() < 1e-14);
        for a in 0..4 {
            for i in 0..3 {
                assert!((f[3 * a + i] - t[i] * 1.5).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn body_force_sums_to_the_resultant() {
        let g = [0.0, 0.0, -9.81 * 7800.0];
        let mut x = SolidKind::Tet10.reference_nodes().to_vec();
        for p in &mut x {
            *p = [2.0 * p[0], p[1] + 0.3 * p[2], 1.5 * p[2]];
        }
        let vol = 2.0 * 1.5 / 6.0;
        let mut f = [0.0; 30];
        body_force(SolidKind::Tet10, &x, g, &mut f).unwrap();
        let fz: f64 = (0..10).map(|a| f[3 * a + 2]).sum();
        assert!((fz - g[2] * vol).abs() < 1e-12 * g[2].abs());
        // Corners −V/20, mid-edge nodes V/5 of the resultant.
        assert!((f[2] - g[2] * vol * (-1.0 / 20.0)).abs() < 1e-10);
        assert!((f[3 * 4 + 2] - g[2] * vol / 5.0).abs() < 1e-10);
    }
}
