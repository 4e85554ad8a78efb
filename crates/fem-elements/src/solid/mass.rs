//! Element mass: consistent, lumped by row sum, lumped by HRZ diagonal scaling.
//!
//! The consistent mass of a solid element is `M_ab I₃` with `M_ab = ∫ ρ N_a N_b dV` (the three
//! displacement components do not couple), so the kernels return the `N × N` scalar block.
//! [`SolidKind::mass_rule`] integrates it exactly for straight-sided tetrahedra and trilinear
//! hexahedra.
//!
//! Lumping (Hughes, *The Finite Element Method*, §7.3.2; Hinton, Rock & Zienkiewicz 1976):
//!
//! * **row sum** `m_a = Σ_b M_ab = ∫ ρ N_a dV` — positive for tet4 and hex8 (equal to `ρV/4`
//!   and, on a parallelepiped, `ρV/8`), but for tet10 the corner values are `∫ ρ N_a dV =
//!   −ρV/20 < 0` and the mid-edge ones `ρV/5`, so it is refused there;
//! * **HRZ** `m_a = M_aa · (ρV / Σ_b M_bb)` — the diagonal of the consistent mass scaled to the
//!   element mass: always positive; for a straight tet10 (`M_aa = ρV/70` at corners, `8ρV/105`
//!   at mid-edge nodes, diagonal sum `18ρV/35`) the corners get `ρV/36` and the mid-edge
//!   nodes `4ρV/27`.
//!
//! Both keep the element mass `Σ_a m_a = ρV` exactly (up to round-off).

use super::material::det3;
use super::quadrature3d::CellRule;
use super::shape::SolidKind;
use super::total_lagrangian::{NonPositiveJacobian, jacobian};

/// How a consistent mass is lumped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lumping {
    /// Row sums `m_a = Σ_b M_ab` (tet4, hex8).
    RowSum,
    /// Hinton–Rock–Zienkiewicz: the diagonal scaled to the element mass (any element; needed
    /// for tet10).
    Hrz,
}

impl SolidKind {
    /// Row sum for the linear elements, HRZ for the quadratic ones (tet10 and hex20 have
    /// negative corner row sums; hex27's are positive but as uneven as HRZ's, which equal them
    /// on affine cells).
    pub fn default_lumping(self) -> Lumping {
        if self.order() == 2 {
            Lumping::Hrz
        } else {
            Lumping::RowSum
        }
    }
}

/// Why an element mass could not be computed.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum MassError {
    /// The element is inverted or degenerate at a quadrature point.
    #[error(transparent)]
    Jacobian(#[from] NonPositiveJacobian),
    /// Row-sum lumping gave a non-positive nodal mass (tet10 corners).
    #[error(
        "row-sum lumping gives a non-positive mass {value:e} at local node {node}: use HRZ lumping"
    )]
    NonPositiveLumpedMass {
        /// Local node index.
        node: usize,
        /// The lumped mass.
        value: f64,
    },
}

/// Shape function values and reference gradients of one element kind at the points of a
/// rule, tabulated once and shared by all cells.
#[derive(Clone, Debug)]
pub struct ShapeTable {
    kind: SolidKind,
    weights: Vec<f64>,
    values: Vec<f64>,
    gradients: Vec<[f64; 3]>,
}

impl ShapeTable {
    /// The table of `kind` at the points of `rule`.
    pub fn new(kind: SolidKind, rule: &CellRule) -> Self {
        let n = kind.n_nodes();
        let mut values = vec![0.0; n * rule.n_points()];
        let mut gradients = vec![[0.0; 3]; n * rule.n_points()];
        for (q, &xi) in rule.points.iter().enumerate() {
            kind.values_into(xi, &mut values[n * q..n * (q + 1)]);
            kind.gradients_into(xi, &mut gradients[n * q..n * (q + 1)]);
        }
        Self {
            kind,
            weights: rule.weights.clone(),
            values,
            gradients,
        }
    }

    /// The table at the points of [`SolidKind::mass_rule`].
    pub fn for_mass(kind: SolidKind) -> Self {
        Self::new(kind, &kind.mass_rule())
    }

    /// Element kind.
    pub fn kind(&self) -> SolidKind {
        self.kind
    }

    /// Calls `visit(N(ξ_q), w_q det J(ξ_q))` at every point of the element with nodes `x`.
    fn for_each_point(
        &self,
        x: &[[f64; 3]],
        mut visit: impl FnMut(&[f64], f64),
    ) -> Result<(), NonPositiveJacobian> {
        let n = self.kind.n_nodes();
        assert_eq!(x.len(), n);
        for (q, &w) in self.weights.iter().enumerate() {
            let det = det3(&jacobian(x, &self.gradients[n * q..n * (q + 1)]));
            if !(det > 0.0 && det.is_finite()) {
                return Err(NonPositiveJacobian { point: q, det });
            }
            visit(&self.values[n * q..n * (q + 1)], w * det);
        }
        Ok(())
    }
}

/// Consistent mass block `M_ab = Σ_q ρ N_a(ξ_q) N_b(ξ_q) w_q det J(ξ_q)` of one element with
/// nodes `x` into `m` (`N × N`, row-major, overwritten), with [`SolidKind::mass_rule`].
pub fn consistent_mass(
    kind: SolidKind,
    x: &[[f64; 3]],
    density: f64,
    m: &mut [f64],
) -> Result<(), NonPositiveJacobian> {
    consistent_mass_tabulated(&ShapeTable::for_mass(kind), x, density, m)
}

/// [`consistent_mass`] with a table built once (for loops over many cells).
pub fn consistent_mass_tabulated(
    table: &ShapeTable,
    x: &[[f64; 3]],
    density: f64,
    m: &mut [f64],
) -> Result<(), NonPositiveJacobian> {
    let n = table.kind.n_nodes();
    assert_eq!(m.len(), n * n);
    m.fill(0.0);
    table.for_each_point(x, |values, dv| {
        let c = density * dv;
        for a in 0..n {
            for b in 0..n {
                m[a * n + b] += c * values[a] * values[b];
            }
        }
    })
}

/// Lumped mass of one element, one value per node (the same for each of its three
/// components), into `m` (length `N`).
pub fn lumped_mass(
    kind: SolidKind,
    lumping: Lumping,
    x: &[[f64; 3]],
    density: f64,
    m: &mut [f64],
) -> Result<(), MassError> {
    lumped_mass_tabulated(&ShapeTable::for_mass(kind), lumping, x, density, m)
}

/// [`lumped_mass`] with a table built once. Needs only `Σ_q N_a dV_q` (row sums, since
/// `Σ_b N_b = 1`) or `Σ_q N_a² dV_q` and the volume (HRZ), not the whole `N × N` block.
pub fn lumped_mass_tabulated(
    table: &ShapeTable,
    lumping: Lumping,
    x: &[[f64; 3]],
    density: f64,
    m: &mut [f64],
) -> Result<(), MassError> {
    let n = table.kind.n_nodes();
    assert_eq!(m.len(), n);
    m.fill(0.0);
    let mut volume = 0.0;
    table.for_each_point(x, |values, dv| {
        volume += dv;
        for a in 0..n {
            m[a] += match lumping {
                Lumping::RowSum => values[a] * dv,
                Lumping::Hrz => values[a] * values[a] * dv,
            };
        }
    })?;
    match lumping {
        Lumping::RowSum => {
            for v in m.iter_mut() {
                *v *= density;
            }
            if let Some(node) = m.iter().position(|&v| v.is_nan() || v <= 0.0) {
                return Err(MassError::NonPositiveLumpedMass {
                    node,
                    value: m[node],
                });
            }
        }
        Lumping::Hrz => {
            let diagonal: f64 = m.iter().sum();
            let scale = density * volume / diagonal;
            for v in m.iter_mut() {
                *v *= scale;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A distorted, straight-sided tet10 (mid-edge nodes at the edge midpoints) and its volume.
    fn tet10() -> (Vec<[f64; 3]>, f64) {
        let c = [
            [0.1, 0.0, 0.2],
            [1.3, 0.1, 0.0],
            [0.2, 0.9, 0.1],
            [0.3, 0.2, 1.1],
        ];
        let mut x = c.to_vec();
        for (a, b) in crate::solid::shape::TET10_EDGES {
            x.push(std::array::from_fn(|i| 0.5 * (c[a][i] + c[b][i])));
        }
        let e = |k: usize| -> [f64; 3] { std::array::from_fn(|i| c[k][i] - c[0][i]) };
        let (e1, e2, e3) = (e(1), e(2), e(3));
        let vol = det3(&[
            [e1[0], e2[0], e3[0]],
            [e1[1], e2[1], e3[1]],
            [e1[2], e2[2], e3[2]],
        ]) / 6.0;
        (x, vol)
    }

    #[test]
    fn row_sums_of_tet10_give_negative_corners_and_hrz_fixes_them() {
        let (x, vol) = tet10();
        let rho = 2.5;
        let mut m = [0.0; 10];
        let err = lumped_mass(SolidKind::Tet10, Lumping::RowSum, &x, rho, &mut m).unwrap_err();
        assert!(
            matches!(err, MassError::NonPositiveLumpedMass { node: 0, .. }),
            "{err}"
        );
        // The row sums themselves: −ρV/20 at corners, ρV/5 at mid-edge nodes.
        let mut full = [0.0; 100];
        consistent_mass(SolidKind::Tet10, &x, rho, &mut full).unwrap();
        for a in 0..10 {
            let row: f64 = full[a * 10..a * 10 + 10].iter().sum();
            let want = if a < 4 {
                -rho * vol / 20.0
            } else {
                rho * vol / 5.0
            };
            assert!((row - want).abs() < 1e-14, "node {a}: {row} vs {want}");
        }
        lumped_mass(SolidKind::Tet10, Lumping::Hrz, &x, rho, &mut m).unwrap();
        for a in 0..10 {
            let want = if a < 4 {
                rho * vol / 36.0
            } else {
                4.0 * rho * vol / 27.0
            };
            assert!((m[a] - want).abs() < 1e-14, "node {a}: {} vs {want}", m[a]);
        }
        assert!((m.iter().sum::<f64>() - rho * vol).abs() < 1e-14);
    }

    #[test]
    fn row_sums_of_linear_elements_preserve_mass() {
        // A skewed hexahedron (trilinear, not a parallelepiped).
        let mut hex: Vec<[f64; 3]> = SolidKind::Hex8.reference_nodes().to_vec();
        hex[6] = [1.3, 1.2, 1.4];
        hex[1][2] -= 0.2;
        let rho = 3.0;
        let vol: f64 = {
            let rule = crate::solid::quadrature3d::hex_gauss(3).unwrap();
            rule.points
                .iter()
                .zip(&rule.weights)
                .map(|(&xi, &w)| {
                    let mut dn = [[0.0; 3]; 8];
                    SolidKind::Hex8.gradients_into(xi, &mut dn);
                    w * det3(&jacobian(&hex, &dn))
                })
                .sum()
        };
        let tet: Vec<[f64; 3]> = vec![[0.0; 3], [2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.3, 0.3, 1.5]];
        for (kind, x, v) in [(SolidKind::Hex8, hex, vol), (SolidKind::Tet4, tet, 0.5)] {
            let n = kind.n_nodes();
            let mut m = vec![0.0; n];
            lumped_mass(kind, Lumping::RowSum, &x, rho, &mut m).unwrap();
            assert!(m.iter().all(|&v| v > 0.0));
            assert!(
                (m.iter().sum::<f64>() - rho * v).abs() < 1e-13 * rho * v,
                "{kind}"
            );
            lumped_mass(kind, Lumping::Hrz, &x, rho, &mut m).unwrap();
            assert!(
                (m.iter().sum::<f64>() - rho * v).abs() < 1e-13 * rho * v,
                "{kind}"
            );
            if kind == SolidKind::Tet4 {
                // tet4: row sums ρV/4, and the consistent mass is ρV/20 (1 + δ_ab).
                let mut full = vec![0.0; 16];
                consistent_mass(kind, &x, rho, &mut full).unwrap();
                for a in 0..4 {
                    for b in 0..4 {
                        let want = rho * v / 20.0 * if a == b { 2.0 } else { 1.0 };
                        assert!((full[a * 4 + b] - want).abs() < 1e-15);
                    }
                }
            }
        }
    }

    #[test]
    fn inverted_elements_are_reported() {
        let mut x = SolidKind::Tet4.reference_nodes().to_vec();
        x.swap(1, 2);
        let mut m = [0.0; 4];
        let err = lumped_mass(SolidKind::Tet4, Lumping::RowSum, &x, 1.0, &mut m).unwrap_err();
        assert!(
            matches!(err, MassError::Jacobian(NonPositiveJacobian { point: 0, det }) if det < 0.0)
        );
    }
}
