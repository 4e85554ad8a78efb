//! Volume, centre of mass and inertia tensor of a body meshed with solid elements.
//!
//! `V = ∫ dV`, `c = V⁻¹ ∫ X dV`, `I_c = ρ ∫ (|r|² I − r ⊗ r) dV` with `r = X − c`, summed
//! over the cells in order with rules exact for each element's geometry:
//!
//! | element | integrand `r_i r_j det J` | rule |
//! |---|---|---|
//! | tet4 | degree 2 (affine map) | 4 points, degree 2 |
//! | hex8 | degree 4 in each variable (trilinear map) | 3×3×3 Gauss |
//! | tet10 | degree 7 (quadratic map, cubic `det J`) | collapsed 5×5×5 Gauss, degree 7 |
//! | hex20, hex27 | degree 9 in each variable (triquadratic map, `det J` of degree 5) | 5×5×5 Gauss |
//!
//! Second moments are taken about the centre found in a first pass, not about the origin,
//! so a body far from the origin loses no digits to cancellation.

use super::material::{Mat3, det3};
use super::quadrature3d::{CellRule, hex_gauss, tet_4point, tet_collapsed_gauss};
use super::shape::{MAX_NODES, SolidKind};
use super::total_lagrangian::{NonPositiveJacobian, jacobian};

/// Mass properties of a homogeneous body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    /// Volume `V`.
    pub volume: f64,
    /// Mass `ρ V`.
    pub mass: f64,
    /// Centre of mass.
    pub center: [f64; 3],
    /// Inertia tensor about the centre of mass, `ρ ∫ (|r|² I − r ⊗ r) dV`.
    pub inertia: Mat3,
}

/// An element of the body that could not be integrated.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("cell {cell}: {source}")]
pub struct CellJacobianError {
    /// Index of the cell in the connectivity.
    pub cell: usize,
    /// What went wrong there.
    pub source: NonPositiveJacobian,
}

impl SolidKind {
    /// The rule exact for `r_i r_j det J` on this element's geometry (table in
    /// [`mass_properties`](self)).
    pub fn geometry_rule(self) -> CellRule {
        match self {
            SolidKind::Tet4 => tet_4point(),
            SolidKind::Hex8 => hex_gauss(3).expect("tabulated"),
            SolidKind::Tet10 => tet_collapsed_gauss(5).expect("tabulated"),
            SolidKind::Hex20 | SolidKind::Hex27 => hex_gauss(5).expect("tabulated"),
        }
    }
}

/// Mass properties of the cells of one `kind` (flat Gmsh-ordered `connectivity` into
/// `points`) for a uniform `density`.
pub fn mass_properties(
    kind: SolidKind,
    points: &[[f64; 3]],
    connectivity: &[usize],
    density: f64,
) -> Result<MassProperties, CellJacobianError> {
    let n = kind.n_nodes();
    assert!(connectivity.len().is_multiple_of(n));
    let rule = kind.geometry_rule();
    // Per rule point: shape values and gradients (same for all cells).
    let tables: Vec<([f64; MAX_NODES], [[f64; 3]; MAX_NODES])> = rule
        .points
        .iter()
        .map(|&xi| {
            let mut v = [0.0; MAX_NODES];
            let mut g = [[0.0; 3]; MAX_NODES];
            kind.values_into(xi, &mut v[..n]);
            kind.gradients_into(xi, &mut g[..n]);
            (v, g)
        })
        .collect();
    // Visits every point of every cell with its position and dV.
    let for_each_point = |visit: &mut dyn FnMut([f64; 3], f64)| -> Result<(), CellJacobianError> {
        let mut x = [[0.0; 3]; MAX_NODES];
        for (cell, nodes) in connectivity.chunks_exact(n).enumerate() {
            for (a, &node) in nodes.iter().enumerate() {
                x[a] = points[node];
            }
            for (q, ((values, grads), &w)) in tables.iter().zip(&rule.weights).enumerate() {
                let det = det3(&jacobian(&x[..n], &grads[..n]));
                if !(det > 0.0 && det.is_finite()) {
                    return Err(CellJacobianError {
                        cell,
                        source: NonPositiveJacobian { point: q, det },
                    });
                }
                let pos = std::array::from_fn(|i| (0..n).map(|a| values[a] * x[a][i]).sum());
                visit(pos, w * det);
            }
        }
        Ok(())
    };
    let mut volume = 0.0;
    let mut first = [0.0; 3];
    for_each_point(&mut |p, dv| {
        volume += dv;
        for i in 0..3 {
            first[i] += p[i] * dv;
        }
    })?;
    let center = first.map(|s| s / volume);
    let mut second = [[0.0; 3]; 3];
    for_each_point(&mut |p, dv| {
        let r: [f64; 3] = std::array::from_fn(|i| p[i] - center[i]);
        for i in 0..3 {
            for j in 0..3 {
                second[i][j] += r[i] * r[j] * dv;
            }
        }
    })?;
    let trace = second[0][0] + second[1][1] + second[2][2];
    let inertia = std::array::from_fn(|i| {
        std::array::from_fn(|j| density * (if i == j { trace } else { 0.0 } - second[i][j]))
    });
    Ok(MassProperties {
        volume,
        mass: density * volume,
        center,
        inertia,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_curved_tet10_is_integrated_exactly() {
        // Unit tetrahedron with three mid-edge nodes moved off their edges: the map is
        // quadratic, det J cubic and r r det J of degree 7. Reference values by exact symbolic
        // integration (sympy, rational arithmetic): V = 13321/75000, c and I_c below.
        let mut x = SolidKind::Tet10.reference_nodes().to_vec();
        for (node, d) in [
            (4, [0.05, 0.07, -0.1]),
            (8, [0.03, -0.02, 0.04]),
            (5, [-0.04, 0.05, 0.02]),
        ] {
            for i in 0..3 {
                x[node][i] += d[i];
            }
        }
        let conn: Vec<usize> = (0..10).collect();
        let p = mass_properties(SolidKind::Tet10, &x, &conn, 2.0).unwrap();
        assert!(
            (p.volume - 13_321.0 / 75_000.0).abs() < 1e-15,
            "{}",
            p.volume
        );
        assert!((p.mass - 2.0 * 13_321.0 / 75_000.0).abs() < 1e-15);
        let c = [
            0.262_047_965_796_933_57,
            0.266_751_173_406_829_9,
            0.233_933_531_373_663_5,
        ];
        let inertia = [
            [
                0.013_616_236_039_582_872,
                0.001_987_710_992_959_644,
                0.002_494_936_118_597_230_7,
            ],
            [
                0.001_987_710_992_959_644,
                0.013_948_354_167_498_815,
                0.002_053_203_929_321_697_3,
            ],
            [
                0.002_494_936_118_597_230_7,
                0.002_053_203_929_321_697_3,
                0.013_022_506_956_183_45,
            ],
        ];
        for i in 0..3 {
            assert!((p.center[i] - c[i]).abs() < 1e-15);
            for j in 0..3 {
                let want = 2.0 * inertia[i][j];
                assert!(
                    (p.inertia[i][j] - want).abs() < 1e-16,
                    "{i}{j}: {} vs {want}",
                    p.inertia[i][j]
                );
            }
        }
        // Inverting the element is refused with the cell named.
        x.swap(1, 2);
        let err = mass_properties(SolidKind::Tet10, &x, &conn, 1.0).unwrap_err();
        assert_eq!(err.cell, 0);
    }
}
