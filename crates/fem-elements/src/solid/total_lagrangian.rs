//! Total-Lagrangian element kernels: internal force, consistent tangent, strain energy and
//! stress output of one element, from precomputed reference gradients.
//!
//! With reference coordinates `X`, displacement `u = Σ_a N_a u_a`, deformation gradient
//! `F = I + Σ_a u_a ⊗ ∇₀N_a` and a [`Hyperelastic`] material giving `S(F)` and `𝒞 = ∂S/∂E`:
//!
//! ```text
//! f_a = ∫ P ∇₀N_a dV,   P = F S                                      (internal force)
//! K_ab = ∫ B_aᵀ D B_b dV + (∫ ∇₀N_a · S ∇₀N_b dV) I                  (material + geometric)
//! U = ∫ W(F) dV                                                        (strain energy)
//! ```
//!
//! where `B_a` (6×3) maps `δu_a` to the Voigt Green–Lagrange strain with engineering shears,
//! `δE = sym(Fᵀ δF)` (Bonet & Wood, §9.4; Belytschko, Liu & Moran, §4.9). Integrals run over the
//! reference volume with a [`CellRule`]: `dV_q = w_q det J(ξ_q)`.
//!
//! # Precomputed geometry
//!
//! Everything a kernel needs from the reference configuration is computed once per element by
//! [`reference_geometry`]: the gradients `∇₀N_a` at each of the `Q` points and the weights
//! `dV_q`. The gradients are stored **point-innermost**, `grad[(3a + k) Q + q] = ∂N_a/∂X_k (ξ_q)`,
//! so the loops over the points are unit-stride and vectorize (the point index is the SIMD lane).
//! For hex8 with 2×2×2 points that is `(3·8·8 + 8) · 8 B = 1.6 kB` per element (1.6 GB for 10⁶).
//!
//! The kernels take flat slices (`u`, `f` node-major: `u[3a + i]`) and fill caller buffers; the
//! element kind is the slice length, and each `(N, Q)` pair of the shipped rules is
//! monomorphized ([`SolidKind::force_rule`]): tet4 (4, 1), hex8 (8, 8) and (8, 27), tet10 (10, 4)
//! and (10, 14), hex20 (20, 27), hex27 (27, 27), and the enhanced hex8 (11, 8) of
//! [`eas`](super::eas) (its three incompatible modes act as three more "nodes"). Every kernel is
//! generic over the material (`M: Hyperelastic + ?Sized`: a concrete type is inlined, a
//! `dyn Hyperelastic` costs one call per batch of points).

use super::material::{
    Hyperelastic, LANES, LaneMatrix, Lanes, Mat3, VOIGT_PAIRS, cofactor, det3, mat_mul,
    voigt_to_matrix,
};
use super::quadrature3d::{CellRule, hex_gauss, tet_4point, tet_14point, tet_centroid};
use super::shape::{MAX_NODES, SolidKind};

/// A quadrature point where the reference-to-physical map is not orientation-preserving:
/// `det J ≤ 0` (an inverted or degenerate element, or nodes not in Gmsh order).
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error(
    "non-positive Jacobian determinant {det:e} at quadrature point {point} (inverted or degenerate element, or nodes not in Gmsh order)"
)]
pub struct NonPositiveJacobian {
    /// Index of the quadrature point.
    pub point: usize,
    /// The determinant found.
    pub det: f64,
}

impl SolidKind {
    /// The rule for internal force and tangent: tet4 1 point, hex8 2×2×2 Gauss, tet10 4
    /// points (degree 2: exact for the linearised stiffness of a straight-sided tet10), hex20
    /// and hex27 3×3×3 Gauss (exact for the linearised stiffness of an affine hex27).
    pub fn force_rule(self) -> CellRule {
        match self {
            SolidKind::Tet4 => tet_centroid(),
            SolidKind::Hex8 => hex_gauss(2).expect("tabulated"),
            SolidKind::Tet10 => tet_4point(),
            SolidKind::Hex20 | SolidKind::Hex27 => hex_gauss(3).expect("tabulated"),
        }
    }

    /// The rule for the consistent mass `∫ ρ N_a N_b`: exact for straight-sided tets,
    /// any trilinear hex and affine hex20/hex27 (tet4 4 points, hex8 3×3×3, tet10 14 points of
    /// degree 5, hex20/hex27 4×4×4).
    pub fn mass_rule(self) -> CellRule {
        match self {
            SolidKind::Tet4 => tet_4point(),
            SolidKind::Hex8 => hex_gauss(3).expect("tabulated"),
            SolidKind::Tet10 => tet_14point(),
            SolidKind::Hex20 | SolidKind::Hex27 => hex_gauss(4).expect("tabulated"),
        }
    }
}

/// Jacobian `J_ik = ∂x_i/∂ξ_k = Σ_a x_a,i ∂N_a/∂ξ_k` of the map at a point.
#[inline]
pub(crate) fn jacobian(x: &[[f64; 3]], dn: &[[f64; 3]]) -> Mat3 {
    let mut j = [[0.0; 3]; 3];
    for (xa, ga) in x.iter().zip(dn) {
        for i in 0..3 {
            for k in 0..3 {
                j[i][k] += xa[i] * ga[k];
            }
        }
    }
    j
}

/// Computes the reference gradients and volume weights of one element (see the
/// [module docs](self) for the layout): `grad` has length `3 N Q`, `dv` length `Q`, with `N`
/// the number of nodes of `kind` (`x.len()`) and `Q = rule.n_points()`.
///
/// Fails at the first point where `det J ≤ 0` (or is not finite).
pub fn reference_geometry(
    kind: SolidKind,
    rule: &CellRule,
    x: &[[f64; 3]],
    grad: &mut [f64],
    dv: &mut [f64],
) -> Result<(), NonPositiveJacobian> {
    let n = kind.n_nodes();
    let nq = rule.n_points();
    assert_eq!(x.len(), n);
    assert_eq!(grad.len(), 3 * n * nq);
    assert_eq!(dv.len(), nq);
    let mut dn = [[0.0; 3]; MAX_NODES];
    for (q, (&xi, &w)) in rule.points.iter().zip(&rule.weights).enumerate() {
        kind.gradients_into(xi, &mut dn[..n]);
        let j = jacobian(x, &dn[..n]);
        let det = det3(&j);
        if !(det > 0.0 && det.is_finite()) {
            return Err(NonPositiveJacobian { point: q, det });
        }
        // ∂N/∂X_k = Σ_m ∂N/∂ξ_m (J⁻¹)_mk, with J⁻¹ = cof(J)ᵀ / det.
        let cof = cofactor(&j);
        for a in 0..n {
            for k in 0..3 {
                let g = (dn[a][0] * cof[k][0] + dn[a][1] * cof[k][1] + dn[a][2] * cof[k][2]) / det;
                grad[(3 * a + k) * nq + q] = g;
            }
        }
        dv[q] = w * det;
    }
    Ok(())
}

/// `$body` with the consts `$nn` and `$qq` set to the shipped `(N, Q)` pair equal to
/// `($n, $q)`: the one place the sizes of a slice become the const parameters of a kernel.
macro_rules! with_sizes {
    ($n:expr, $q:expr, |$nn:ident, $qq:ident| $body:expr) => {
        match ($n, $q) {
            (4, 1) => with_sizes!(@ $nn = 4, $qq = 1, $body),
            (8, 1) => with_sizes!(@ $nn = 8, $qq = 1, $body),
            (4, 4) => with_sizes!(@ $nn = 4, $qq = 4, $body),
            (8, 8) => with_sizes!(@ $nn = 8, $qq = 8, $body),
            (8, 27) => with_sizes!(@ $nn = 8, $qq = 27, $body),
            (10, 4) => with_sizes!(@ $nn = 10, $qq = 4, $body),
            (10, 14) => with_sizes!(@ $nn = 10, $qq = 14, $body),
            (11, 8) => with_sizes!(@ $nn = 11, $qq = 8, $body),
            (20, 27) => with_sizes!(@ $nn = 20, $qq = 27, $body),
            (27, 27) => with_sizes!(@ $nn = 27, $qq = 27, $body),
            (n, q) => panic!("no solid kernel for {n} nodes and {q} quadrature points"),
        }
    };
    (@ $nn:ident = $n:literal, $qq:ident = $q:literal, $body:expr) => {{
        const $nn: usize = $n;
        const $qq: usize = $q;
        $body
    }};
}

/// The kernels of one formulation on the standard geometry layout ([`reference_geometry`]:
/// gradients `g[3a + k][q]` and weights `dv[q]` at `Q` points) for `N` nodes, and their entry
/// points on flat slices, written once: the slices' sizes checked and turned into `(N, Q)`
/// (the shipped pairs of [`SolidKind::force_rule`] and the enhanced hex8's (11, 8)), then the
/// kernel. Implemented by the displacement-based element ([`Standard`]: this module's
/// [`internal_force`], [`strain_energy`], [`cell_stress`], [`tangent_stiffness`]) and by
/// F-bar ([`FBar`](super::fbar::FBar)).
pub trait PointKernels {
    /// Internal force of one element into `f` (`3N`, overwritten); the smallest `J` over its
    /// points (`≤ 0` or `NaN`: inverted, the force is meaningless).
    fn force_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
        f: &mut [f64],
    ) -> f64;

    /// Strain energy of one element (`NaN` if it is inverted, where the formulation checks).
    fn energy_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
    ) -> f64;

    /// Stress output of one element.
    fn stress_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
    ) -> CellStress;

    /// Consistent tangent of one element into `k` (`3N × 3N`, row-major, overwritten); the
    /// smallest `J` over its points.
    fn tangent_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
        k: &mut [f64],
    ) -> f64;

    /// [`force_points`](Self::force_points) on the slices of one element (`grad` `3NQ`, `dv`
    /// `Q`, `u` and `f` `3N`).
    fn internal_force<M: Hyperelastic + ?Sized>(
        material: &M,
        grad: &[f64],
        dv: &[f64],
        u: &[f64],
        f: &mut [f64],
    ) -> f64 {
        let (n, q) = sizes(grad, dv, u);
        assert_eq!(f.len(), 3 * n);
        with_sizes!(n, q, |N, Q| {
            let (g, dv) = points::<N, Q>(grad, dv);
            Self::force_points::<M, N, Q>(material, g, dv, u, f)
        })
    }

    /// [`energy_points`](Self::energy_points) on the slices of one element.
    fn strain_energy<M: Hyperelastic + ?Sized>(
        material: &M,
        grad: &[f64],
        dv: &[f64],
        u: &[f64],
    ) -> f64 {
        let (n, q) = sizes(grad, dv, u);
        with_sizes!(n, q, |N, Q| {
            let (g, dv) = points::<N, Q>(grad, dv);
            Self::energy_points::<M, N, Q>(material, g, dv, u)
        })
    }

    /// [`stress_points`](Self::stress_points) on the slices of one element.
    fn cell_stress<M: Hyperelastic + ?Sized>(
        material: &M,
        grad: &[f64],
        dv: &[f64],
        u: &[f64],
    ) -> CellStress {
        let (n, q) = sizes(grad, dv, u);
        with_sizes!(n, q, |N, Q| {
            let (g, dv) = points::<N, Q>(grad, dv);
            Self::stress_points::<M, N, Q>(material, g, dv, u)
        })
    }

    /// [`tangent_points`](Self::tangent_points) on the slices of one element (`k` `3N × 3N`).
    fn tangent_stiffness<M: Hyperelastic + ?Sized>(
        material: &M,
        grad: &[f64],
        dv: &[f64],
        u: &[f64],
        k: &mut [f64],
    ) -> f64 {
        let (n, q) = sizes(grad, dv, u);
        assert_eq!(k.len(), 9 * n * n);
        with_sizes!(n, q, |N, Q| {
            let (g, dv) = points::<N, Q>(grad, dv);
            Self::tangent_points::<M, N, Q>(material, g, dv, u, k)
        })
    }
}

/// The gradients (`3N` lanes of `Q`) and weights of one element's slices.
#[inline(always)]
fn points<'a, const N: usize, const Q: usize>(
    grad: &'a [f64],
    dv: &'a [f64],
) -> (&'a [[f64; Q]], &'a [f64; Q]) {
    let (g, _) = grad.as_chunks::<Q>();
    (&g[..3 * N], dv.try_into().expect("Q weights"))
}

/// The displacement-based element: `f_a = Σ_q P(F_q) ∇₀N_a dV_q`, `U = Σ_q W(F_q) dV_q` and
/// their derivatives (the [module docs](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct Standard;

impl PointKernels for Standard {
    #[inline(always)]
    fn force_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
        f: &mut [f64],
    ) -> f64 {
        let h = deformation_gradients::<N, Q>(g, u);
        let mut p = [[[0.0; Q]; 3]; 3];
        let jmin = weighted_first_piola(material, &h, dv, &mut p);
        contract_force::<N, Q>(g, &p, f);
        jmin
    }

    fn energy_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
    ) -> f64 {
        let h = deformation_gradients::<N, Q>(g, u);
        weighted_energy(material, &h, dv)
    }

    fn stress_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
    ) -> CellStress {
        let h = displacement_gradient::<N, Q>(g, u);
        let mut acc = StressAverage::new(dv.iter().sum());
        for q in 0..Q {
            acc.add(material, &deformation_gradient(&h, q), dv[q]);
        }
        acc.finish()
    }

    fn tangent_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
        k: &mut [f64],
    ) -> f64 {
        let h = displacement_gradient::<N, Q>(g, u);
        let nd = 3 * N;
        k.fill(0.0);
        let mut jmin = f64::INFINITY;
        for q in 0..Q {
            let f = deformation_gradient(&h, q);
            jmin = jmin.min(det3(&f));
            let (s, d) = material.pk2_stress_and_tangent(&f);
            let s = voigt_to_matrix(&s);
            let w = dv[q];
            // B_a (6×3): δE_v = Σ_a B_a δu_a (engineering shears).
            let mut b = [[[0.0; 3]; 6]; N];
            let mut gq = [[0.0; 3]; N];
            for a in 0..N {
                gq[a] = std::array::from_fn(|m| g[3 * a + m][q]);
                for (r, &(x, y)) in VOIGT_PAIRS.iter().enumerate() {
                    for i in 0..3 {
                        b[a][r][i] = if x == y {
                            f[i][x] * gq[a][x]
                        } else {
                            f[i][x] * gq[a][y] + f[i][y] * gq[a][x]
                        };
                    }
                }
            }
            for a in 0..N {
                // (D B_a) scaled by dV.
                let mut db = [[0.0; 3]; 6];
                for r in 0..6 {
                    for i in 0..3 {
                        db[r][i] = w * (0..6).map(|c| d[r][c] * b[a][c][i]).sum::<f64>();
                    }
                }
                let sg: [f64; 3] =
                    std::array::from_fn(|m| w * (0..3).map(|l| s[m][l] * gq[a][l]).sum::<f64>());
                for bb in 0..N {
                    let geo: f64 = (0..3).map(|m| gq[bb][m] * sg[m]).sum();
                    for j in 0..3 {
                        for i in 0..3 {
                            let mat: f64 = (0..6).map(|r| b[bb][r][j] * db[r][i]).sum();
                            // Row (b, j), column (a, i): Bᵀ_b D B_a, symmetric overall.
                            k[(3 * bb + j) * nd + 3 * a + i] +=
                                mat + if i == j { geo } else { 0.0 };
                        }
                    }
                }
            }
        }
        jmin
    }
}

/// Whether a smallest `J = det F` says the element is inverted: `J ≤ 0` or `NaN`.
#[inline(always)]
pub fn inverted(jmin: f64) -> bool {
    jmin.is_nan() || jmin <= 0.0
}

/// Number of nodes and points of an element's slices (`u` has `3N` entries, `dv` has `Q`).
pub(crate) fn sizes(grad: &[f64], dv: &[f64], u: &[f64]) -> (usize, usize) {
    let (n, q) = (u.len() / 3, dv.len());
    assert!(
        u.len() == 3 * n && grad.len() == 3 * n * q,
        "inconsistent element slices"
    );
    (n, q)
}

/// Internal force `f_a = Σ_q P(F_q) ∇₀N_a(ξ_q) dV_q` of one element into `f` (length `3N`,
/// overwritten). Returns the smallest `J = det F` over the points: `≤ 0` means the element
/// is inverted there and the force is meaningless.
pub fn internal_force<M: Hyperelastic + ?Sized>(
    material: &M,
    grad: &[f64],
    dv: &[f64],
    u: &[f64],
    f: &mut [f64],
) -> f64 {
    <Standard as PointKernels>::internal_force(material, grad, dv, u, f)
}

/// `H[i][k][q] = Σ_a u_a,i ∂N_a/∂X_k(ξ_q)`: the displacement gradient at every point.
#[inline(always)]
pub(crate) fn displacement_gradient<const N: usize, const Q: usize>(
    g: &[[f64; Q]],
    u: &[f64],
) -> [[[f64; Q]; 3]; 3] {
    // (i, k) outer and the node innermost: each lane vector of H stays in registers while
    // the nodes are summed (in node order, as any loop order would). Measured with callgrind:
    // fewer instructions than node-outer (spills H) or k-outer/i-inner (12 accumulators, spills).
    let mut h = [[[0.0; Q]; 3]; 3];
    for i in 0..3 {
        for k in 0..3 {
            let mut acc = [0.0; Q];
            for a in 0..N {
                let uai = u[3 * a + i];
                let gak = &g[3 * a + k];
                for q in 0..Q {
                    acc[q] += uai * gak[q];
                }
            }
            h[i][k] = acc;
        }
    }
    h
}

/// `F[i][k][q] = δ_ik + H[i][k][q]` ([`displacement_gradient`]) at every point.
#[inline(always)]
pub(crate) fn deformation_gradients<const N: usize, const Q: usize>(
    g: &[[f64; Q]],
    u: &[f64],
) -> [[[f64; Q]; 3]; 3] {
    let mut f = displacement_gradient::<N, Q>(g, u);
    for (i, row) in f.iter_mut().enumerate() {
        for q in 0..Q {
            row[i][q] += 1.0;
        }
    }
    f
}

/// Sum of the lanes in a fixed tree order (halves added lane-wise, so the first stages
/// vectorize): for 8 lanes `((a₀+a₄)+(a₂+a₆)) + ((a₁+a₅)+(a₃+a₇))`.
#[inline(always)]
pub(crate) fn lane_sum<const Q: usize>(mut v: [f64; Q]) -> f64 {
    let mut len = Q;
    while len > 1 {
        let half = len / 2;
        let offset = len - half;
        for i in 0..half {
            v[i] += v[i + offset];
        }
        len = offset;
    }
    v[0]
}

/// `F` at point `q` from the lanes of `H`.
#[inline(always)]
pub(crate) fn deformation_gradient<const Q: usize>(h: &[[[f64; Q]; 3]; 3], q: usize) -> Mat3 {
    std::array::from_fn(|i| std::array::from_fn(|k| h[i][k][q] + if i == k { 1.0 } else { 0.0 }))
}

/// `f_a = Σ_q T_q ∇₀N_a(ξ_q)` for a weighted stress `T_q` (lanes) into `f` (`3N`).
#[inline(always)]
pub(crate) fn contract_force<const N: usize, const Q: usize>(
    g: &[[f64; Q]],
    p: &[[[f64; Q]; 3]; 3],
    f: &mut [f64],
) {
    for a in 0..N {
        for i in 0..3 {
            let mut acc = [0.0; Q];
            for k in 0..3 {
                let gak = &g[3 * a + k];
                for q in 0..Q {
                    acc[q] += p[i][k][q] * gak[q];
                }
            }
            f[3 * a + i] = lane_sum(acc);
        }
    }
}

/// `P(F_q) dV_q` at every point from the lanes of `F`, and the smallest `J = det F`.
///
/// The points go to the material in batches of [`LANES`]
/// ([`Hyperelastic::first_piola_lanes`]); with `Q = LANES` (the 2×2×2 hex8) the lanes are
/// passed as they are.
#[inline(always)]
pub(crate) fn weighted_first_piola<M: Hyperelastic + ?Sized, const Q: usize>(
    material: &M,
    f: &[[[f64; Q]; 3]; 3],
    dv: &[f64; Q],
    p: &mut [[[f64; Q]; 3]; 3],
) -> f64 {
    let mut jac = [0.0; Q];
    first_piola_points(material, f, p, &mut jac);
    for row in p.iter_mut() {
        for col in row.iter_mut() {
            for q in 0..Q {
                col[q] *= dv[q];
            }
        }
    }
    jac.iter().fold(f64::INFINITY, |m, &j| m.min(j))
}

/// `P(F_q)` and `J_q` at every point (unweighted), in batches of [`LANES`].
#[inline(always)]
pub(crate) fn first_piola_points<M: Hyperelastic + ?Sized, const Q: usize>(
    material: &M,
    f: &[[[f64; Q]; 3]; 3],
    p: &mut [[[f64; Q]; 3]; 3],
    jac: &mut [f64; Q],
) {
    if Q == LANES {
        // The same types: the lanes go to the material as they are.
        let lanes = "Q = LANES: the lane types";
        let f = (f as &dyn std::any::Any)
            .downcast_ref::<LaneMatrix>()
            .expect(lanes);
        let p = (p as &mut dyn std::any::Any)
            .downcast_mut::<LaneMatrix>()
            .expect(lanes);
        let jac = (jac as &mut dyn std::any::Any)
            .downcast_mut::<Lanes>()
            .expect(lanes);
        material.first_piola_lanes(f, LANES, p, jac);
        return;
    }
    let mut start = 0;
    while start < Q {
        let n = (Q - start).min(LANES);
        let mut fl: LaneMatrix = [[[0.0; LANES]; 3]; 3];
        for i in 0..3 {
            for k in 0..3 {
                fl[i][k][..n].copy_from_slice(&f[i][k][start..start + n]);
            }
        }
        let mut pl: LaneMatrix = [[[0.0; LANES]; 3]; 3];
        let mut jl: Lanes = [0.0; LANES];
        material.first_piola_lanes(&fl, n, &mut pl, &mut jl);
        for i in 0..3 {
            for k in 0..3 {
                p[i][k][start..start + n].copy_from_slice(&pl[i][k][..n]);
            }
        }
        jac[start..start + n].copy_from_slice(&jl[..n]);
        start += n;
    }
}

/// `Σ_q W(F_q) dV_q` from the lanes of `F`, summed in point order, the points evaluated in
/// batches of [`LANES`] ([`Hyperelastic::strain_energy_lanes`]).
#[inline(always)]
pub(crate) fn weighted_energy<M: Hyperelastic + ?Sized, const Q: usize>(
    material: &M,
    f: &[[[f64; Q]; 3]; 3],
    dv: &[f64; Q],
) -> f64 {
    let mut energy = 0.0;
    let mut start = 0;
    while start < Q {
        let n = (Q - start).min(LANES);
        let mut fl: LaneMatrix = [[[0.0; LANES]; 3]; 3];
        for i in 0..3 {
            for k in 0..3 {
                fl[i][k][..n].copy_from_slice(&f[i][k][start..start + n]);
            }
        }
        let mut w: Lanes = [0.0; LANES];
        material.strain_energy_lanes(&fl, n, &mut w);
        for q in 0..n {
            energy += w[q] * dv[start + q];
        }
        start += n;
    }
    energy
}

/// Length of one element's geometry block: its gradients (`3 N Q`) followed by its
/// weights (`Q`), as [`reference_geometry_block`] writes them.
pub fn geometry_block_len(kind: SolidKind, n_points: usize) -> usize {
    (3 * kind.n_nodes() + 1) * n_points
}

/// [`reference_geometry`] into one block `[grad | dV]` of [`geometry_block_len`] values.
pub fn reference_geometry_block(
    kind: SolidKind,
    rule: &CellRule,
    x: &[[f64; 3]],
    block: &mut [f64],
) -> Result<(), NonPositiveJacobian> {
    let split = 3 * kind.n_nodes() * rule.n_points();
    let (grad, dv) = block.split_at_mut(split);
    reference_geometry(kind, rule, x, grad, dv)
}

/// Internal forces of a batch of cells of one `kind`: cell `c` has nodes
/// `connectivity[N c..N (c + 1)]` and geometry block `geometry[B c..B (c + 1)]`
/// ([`geometry_block_len`]), and its force goes to `forces[3N c..3N (c + 1)]` (overwritten).
/// `u` is the global node-major displacement. The `(N, Q)` dispatch happens once per batch.
///
/// Returns the position in the batch of the first cell with `J ≤ 0` (or `NaN`) at a point,
/// if any (all forces are computed regardless).
pub fn internal_forces<M: Hyperelastic + ?Sized>(
    kind: SolidKind,
    material: &M,
    n_points: usize,
    geometry: &[f64],
    connectivity: &[usize],
    u: &[f64],
    forces: &mut [f64],
) -> Option<usize> {
    let n = kind.n_nodes();
    let n_cells = connectivity.len() / n;
    assert_eq!(connectivity.len(), n * n_cells);
    assert_eq!(geometry.len(), geometry_block_len(kind, n_points) * n_cells);
    assert_eq!(forces.len(), 3 * n * n_cells);
    if n_points == 1 && n == 4 {
        // One point per cell: vectorize the stress across cells instead.
        return forces_one_point_batch::<M, 4>(material, geometry, connectivity, u, forces);
    }
    with_sizes!(n, n_points, |N, Q| forces_batch::<M, N, Q>(
        material,
        geometry,
        connectivity,
        u,
        forces
    ))
}

/// [`forces_batch`] for one-point elements (tet4): groups of [`LANES`] cells share the
/// lane-wise stress evaluation (the cells are the lanes), the rest goes one by one. Each
/// cell's arithmetic is the same as in [`Standard::force_points`], so the results are identical.
fn forces_one_point_batch<M: Hyperelastic + ?Sized, const N: usize>(
    material: &M,
    geometry: &[f64],
    connectivity: &[usize],
    u: &[f64],
    forces: &mut [f64],
) -> Option<usize> {
    const L: usize = LANES;
    let block = 3 * N + 1;
    let (u3, _) = u.as_chunks::<3>();
    let n_cells = connectivity.len() / N;
    let n_grouped = n_cells - n_cells % L;
    let mut first_inverted = None;
    for first in (0..n_grouped).step_by(L) {
        // F lanes (cells l = 0..L) and weights.
        let mut fl: LaneMatrix = [[[0.0; L]; 3]; 3];
        let mut dv = [0.0; L];
        for l in 0..L {
            let c = first + l;
            let geo = &geometry[block * c..block * (c + 1)];
            let nodes = &connectivity[N * c..N * (c + 1)];
            let ue: [[f64; 3]; N] = std::array::from_fn(|a| u3[nodes[a]]);
            let (g, _) = geo[..3 * N].as_chunks::<3>();
            for i in 0..3 {
                for k in 0..3 {
                    let mut h = 0.0;
                    for a in 0..N {
                        h += ue[a][i] * g[a][k];
                    }
                    fl[i][k][l] = h + if i == k { 1.0 } else { 0.0 };
                }
            }
            dv[l] = geo[3 * N];
        }
        let mut p: LaneMatrix = [[[0.0; L]; 3]; 3];
        let mut jac = [0.0; L];
        material.first_piola_lanes(&fl, L, &mut p, &mut jac);
        for l in 0..L {
            let c = first + l;
            let geo = &geometry[block * c..block * (c + 1)];
            let f = &mut forces[3 * N * c..3 * N * (c + 1)];
            let pl: Mat3 = std::array::from_fn(|i| std::array::from_fn(|k| p[i][k][l] * dv[l]));
            for a in 0..N {
                for i in 0..3 {
                    f[3 * a + i] = pl[i][0] * geo[3 * a]
                        + pl[i][1] * geo[3 * a + 1]
                        + pl[i][2] * geo[3 * a + 2];
                }
            }
            if jac[l].is_nan() || jac[l] <= 0.0 {
                first_inverted.get_or_insert(c);
            }
        }
    }
    let rest = forces_batch::<M, N, 1>(
        material,
        &geometry[block * n_grouped..],
        &connectivity[N * n_grouped..],
        u,
        &mut forces[3 * N * n_grouped..],
    );
    first_inverted.or(rest.map(|c| c + n_grouped))
}

fn forces_batch<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
    material: &M,
    geometry: &[f64],
    connectivity: &[usize],
    u: &[f64],
    forces: &mut [f64],
) -> Option<usize> {
    let block = (3 * N + 1) * Q;
    let (u3, _) = u.as_chunks::<3>();
    let mut first_inverted = None;
    for (c, ((geo, nodes), f)) in geometry
        .chunks_exact(block)
        .zip(connectivity.chunks_exact(N))
        .zip(forces.chunks_exact_mut(3 * N))
        .enumerate()
    {
        let mut ue = [[0.0; 3]; N];
        for (a, &node) in nodes.iter().enumerate() {
            ue[a] = u3[node];
        }
        let (grad, dv) = geo.split_at(3 * N * Q);
        let (g, dv) = points::<N, Q>(grad, dv);
        let jmin = Standard::force_points::<M, N, Q>(material, g, dv, ue.as_flattened(), f);
        if jmin.is_nan() || jmin <= 0.0 {
            first_inverted.get_or_insert(c);
        }
    }
    first_inverted
}

/// Strain energy `Σ_q W(F_q) dV_q` of one element.
pub fn strain_energy<M: Hyperelastic + ?Sized>(
    material: &M,
    grad: &[f64],
    dv: &[f64],
    u: &[f64],
) -> f64 {
    <Standard as PointKernels>::strain_energy(material, grad, dv, u)
}

/// Consistent tangent `K = ∂f/∂u` (material + geometric part) of one element into `k`,
/// row-major `3N × 3N`, node-major local dofs (overwritten; symmetric). Returns the smallest
/// `J` over the points, as [`internal_force`].
pub fn tangent_stiffness<M: Hyperelastic + ?Sized>(
    material: &M,
    grad: &[f64],
    dv: &[f64],
    u: &[f64],
    k: &mut [f64],
) -> f64 {
    <Standard as PointKernels>::tangent_stiffness(material, grad, dv, u, k)
}

/// Volume averages of stress measures over one element, for output.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CellStress {
    /// Cauchy stress `σ = J⁻¹ F S Fᵀ`, averaged over the element's points (weights `dV_q`), in
    /// VTK/ParaView's symmetric-tensor order `xx, yy, zz, xy, yz, xz`.
    pub cauchy: [f64; 6],
    /// Von Mises stress of the averaged Cauchy stress (what ParaView computes from `cauchy`).
    pub von_mises: f64,
    /// Average of `J = det F`.
    pub jacobian: f64,
    /// Average strain energy density `W` per unit reference volume.
    pub energy_density: f64,
}

/// Stress output of one element (see [`CellStress`]).
pub fn cell_stress<M: Hyperelastic + ?Sized>(
    material: &M,
    grad: &[f64],
    dv: &[f64],
    u: &[f64],
) -> CellStress {
    <Standard as PointKernels>::cell_stress(material, grad, dv, u)
}

/// Volume average of the Cauchy stress, `J` and `W` over points (what [`CellStress`] holds).
#[derive(Clone, Copy, Debug)]
pub(crate) struct StressAverage {
    volume: f64,
    out: CellStress,
}

impl StressAverage {
    /// An empty average over a cell of reference `volume`.
    pub(crate) fn new(volume: f64) -> Self {
        Self {
            volume,
            out: CellStress::default(),
        }
    }

    /// Adds the point with deformation gradient `f` and weight `dv`.
    pub(crate) fn add<M: Hyperelastic + ?Sized>(&mut self, material: &M, f: &Mat3, dv: f64) {
        let j = det3(f);
        let s = voigt_to_matrix(&material.pk2_stress(f));
        let fs = mat_mul(f, &s);
        let sigma = |x: usize, y: usize| (0..3).map(|m| fs[x][m] * f[y][m]).sum::<f64>() / j;
        let w = dv / self.volume;
        for (c, &(x, y)) in [(0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2)]
            .iter()
            .enumerate()
        {
            self.out.cauchy[c] += w * sigma(x, y);
        }
        self.out.jacobian += w * j;
        self.out.energy_density += w * material.strain_energy(f);
    }

    /// Adds an energy density (per unit reference volume) not tied to a point's stress (the
    /// hourglass energy of a one-point hex8).
    pub(crate) fn add_energy(&mut self, energy: f64) {
        self.out.energy_density += energy / self.volume;
    }

    /// The average, with the von Mises stress of the averaged Cauchy stress.
    pub(crate) fn finish(mut self) -> CellStress {
        self.out.von_mises = von_mises(&self.out.cauchy);
        self.out
    }
}

/// Von Mises stress of a symmetric tensor in VTK order `xx, yy, zz, xy, yz, xz`.
pub fn von_mises(s: &[f64; 6]) -> f64 {
    let [xx, yy, zz, xy, yz, xz] = *s;
    (0.5 * ((xx - yy).powi(2) + (yy - zz).powi(2) + (zz - xx).powi(2))
        + 3.0 * (xy * xy + yz * yz + xz * xz))
        .sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solid::material::{Material, MaterialModel};
    use crate::solid::shape::TET10_EDGES;

    const MODELS: [MaterialModel; 3] = [
        MaterialModel::SaintVenantKirchhoff,
        MaterialModel::NeoHookean,
        MaterialModel::NeoHookeanLog,
    ];

    /// A distorted element of each kind (straight-sided tet10 with one curved edge).
    fn element(kind: SolidKind) -> Vec<[f64; 3]> {
        let mut x: Vec<[f64; 3]> = kind.reference_nodes().to_vec();
        for (a, p) in x.iter_mut().enumerate() {
            let s = a as f64;
            *p = [
                1.1 * p[0] + 0.1 * p[1] + 0.03 * (s * 1.7).sin(),
                0.9 * p[1] - 0.05 * p[2] + 0.03 * (s * 2.3).cos(),
                p[2] + 0.1 * p[0] + 0.02 * (s * 0.7).sin(),
            ];
        }
        if kind == SolidKind::Tet10 {
            for (e, &(a, b)) in TET10_EDGES.iter().enumerate() {
                x[4 + e] = std::array::from_fn(|i| 0.5 * (x[a][i] + x[b][i]));
            }
            x[5][2] += 0.04;
        }
        x
    }

    fn geometry(kind: SolidKind, rule: &CellRule, x: &[[f64; 3]]) -> (Vec<f64>, Vec<f64>) {
        let (n, q) = (kind.n_nodes(), rule.n_points());
        let mut grad = vec![0.0; 3 * n * q];
        let mut dv = vec![0.0; q];
        reference_geometry(kind, rule, x, &mut grad, &mut dv).unwrap();
        (grad, dv)
    }

    fn displacement(n: usize, amplitude: f64) -> Vec<f64> {
        (0..3 * n)
            .map(|i| amplitude * ((i as f64) * 0.73 + 0.2).sin())
            .collect()
    }

    #[test]
    fn force_is_the_energy_gradient_and_tangent_the_force_jacobian() {
        for kind in SolidKind::ALL {
            let n = kind.n_nodes();
            let x = element(kind);
            // The mass rules of the second-order hexahedra (4×4×4) have no force kernel.
            let rules = if kind.is_hexahedron() && kind.order() == 2 {
                vec![kind.force_rule()]
            } else {
                vec![kind.force_rule(), kind.mass_rule()]
            };
            for rule in rules {
                let (grad, dv) = geometry(kind, &rule, &x);
                for model in MODELS {
                    let m = Material::new(model, 100.0, 0.3).unwrap();
                    let u = displacement(n, 0.05);
                    let mut f = vec![0.0; 3 * n];
                    let mut k = vec![0.0; 9 * n * n];
                    let jmin = internal_force(&m, &grad, &dv, &u, &mut f);
                    assert!(jmin > 0.5 && jmin < 1.5);
                    tangent_stiffness(&m, &grad, &dv, &u, &mut k);
                    let fscale = f.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                    let kscale = k.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                    assert!(
                        fscale > 0.1,
                        "{kind} {model}: the test needs a non-trivial force"
                    );
                    let h = 1e-6;
                    let (mut fp, mut fm) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
                    for d in 0..3 * n {
                        let (mut up, mut um) = (u.clone(), u.clone());
                        up[d] += h;
                        um[d] -= h;
                        let de = (strain_energy(&m, &grad, &dv, &up)
                            - strain_energy(&m, &grad, &dv, &um))
                            / (2.0 * h);
                        assert!(
                            (de - f[d]).abs() < 1e-7 * fscale,
                            "{kind} {model} dof {d}: {de} vs {}",
                            f[d]
                        );
                        internal_force(&m, &grad, &dv, &up, &mut fp);
                        internal_force(&m, &grad, &dv, &um, &mut fm);
                        for r in 0..3 * n {
                            let fd = (fp[r] - fm[r]) / (2.0 * h);
                            assert!(
                                (fd - k[r * 3 * n + d]).abs() < 1e-7 * kscale,
                                "{kind} {model} K[{r}][{d}]: {fd} vs {}",
                                k[r * 3 * n + d]
                            );
                        }
                    }
                    for r in 0..3 * n {
                        for c in 0..3 * n {
                            assert!((k[r * 3 * n + c] - k[c * 3 * n + r]).abs() < 1e-12 * kscale);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn batches_equal_single_cells_bitwise() {
        // 7 cells of each kind (tet4: one group of 4 lanes and 3 single cells), one inverted.
        for kind in SolidKind::ALL {
            let n = kind.n_nodes();
            let rule = kind.force_rule();
            let block = geometry_block_len(kind, rule.n_points());
            let mut points = Vec::new();
            let mut connectivity = Vec::new();
            let mut geometry = vec![0.0; 7 * block];
            for c in 0..7 {
                let x: Vec<[f64; 3]> = element(kind)
                    .iter()
                    .map(|p| [p[0] + c as f64, p[1] * (1.0 + 0.1 * c as f64), p[2]])
                    .collect();
                reference_geometry_block(
                    kind,
                    &rule,
                    &x,
                    &mut geometry[c * block..(c + 1) * block],
                )
                .unwrap();
                connectivity.extend(points.len()..points.len() + n);
                points.extend(x);
            }
            let mut u: Vec<f64> = (0..3 * points.len())
                .map(|i| 0.03 * (i as f64 * 0.37).sin())
                .collect();
            // Cell 5 squashed through itself (z → −z on its nodes).
            for a in 0..n {
                let node = connectivity[5 * n + a];
                u[3 * node + 2] = -2.0 * points[node][2];
            }
            for model in MODELS {
                let m = Material::new(model, 10.0, 0.3).unwrap();
                let mut batch = vec![0.0; 7 * 3 * n];
                let first = internal_forces(
                    kind,
                    &m,
                    rule.n_points(),
                    &geometry,
                    &connectivity,
                    &u,
                    &mut batch,
                );
                assert_eq!(first, Some(5), "{kind} {model}");
                for c in [0, 1, 2, 3, 4, 6] {
                    let ue: Vec<f64> = connectivity[c * n..(c + 1) * n]
                        .iter()
                        .flat_map(|&a| u[3 * a..3 * a + 3].to_vec())
                        .collect();
                    let (grad, dv) =
                        geometry[c * block..(c + 1) * block].split_at(3 * n * rule.n_points());
                    let mut single = vec![0.0; 3 * n];
                    internal_force(&m, grad, dv, &ue, &mut single);
                    assert_eq!(
                        &batch[c * 3 * n..(c + 1) * 3 * n],
                        &single[..],
                        "{kind} {model} cell {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn rigid_motions_carry_no_stress() {
        // u = (R − I) X + b with a finite rotation: F = R, S = 0, f = 0, W = 0.
        let (c, s) = (0.6f64.cos(), 0.6f64.sin());
        let r1 = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]];
        let (c2, s2) = (1.1f64.cos(), 1.1f64.sin());
        let r2 = [[1.0, 0.0, 0.0], [0.0, c2, -s2], [0.0, s2, c2]];
        let r = mat_mul(&r1, &r2);
        for kind in SolidKind::ALL {
            let x = element(kind);
            let (grad, dv) = geometry(kind, &kind.force_rule(), &x);
            let u: Vec<f64> = x
                .iter()
                .flat_map(|p| {
                    (0..3).map(move |i| (0..3).map(|j| r[i][j] * p[j]).sum::<f64>() - p[i] + 0.3)
                })
                .collect();
            for model in MODELS {
                let m = Material::new(model, 100.0, 0.3).unwrap();
                let mut f = vec![0.0; u.len()];
                let j = internal_force(&m, &grad, &dv, &u, &mut f);
                assert!((j - 1.0).abs() < 1e-14);
                assert!(f.iter().all(|v| v.abs() < 1e-12), "{kind} {model} {f:?}");
                assert!(strain_energy(&m, &grad, &dv, &u).abs() < 1e-12);
                let out = cell_stress(&m, &grad, &dv, &u);
                assert!(out.cauchy.iter().all(|v| v.abs() < 1e-12) && out.von_mises < 1e-12);
            }
        }
    }

    #[test]
    fn geometry_reproduces_volume_and_detects_inversion() {
        for kind in SolidKind::ALL {
            let x = element(kind);
            let (_, dv) = geometry(kind, &kind.mass_rule(), &x);
            let (_, dv2) = geometry(kind, &kind.geometry_rule(), &x);
            let (v1, v2): (f64, f64) = (dv.iter().sum(), dv2.iter().sum());
            assert!((v1 - v2).abs() < 1e-14, "{kind}: {v1} vs {v2}");
            // A mirror image: det J < 0 everywhere.
            let bad: Vec<[f64; 3]> = x.iter().map(|p| [-p[0], p[1], p[2]]).collect();
            let rule = kind.force_rule();
            let (n, q) = (kind.n_nodes(), rule.n_points());
            let err = reference_geometry(
                kind,
                &rule,
                &bad,
                &mut vec![0.0; 3 * n * q],
                &mut vec![0.0; q],
            );
            assert!(
                matches!(err, Err(NonPositiveJacobian { det, .. }) if det < 0.0),
                "{kind}"
            );
        }
    }

    #[test]
    fn uniaxial_stretch_gives_the_analytic_cauchy_stress() {
        // Neo-Hookean (decoupled) under F = diag(l, 1, 1): σ = J⁻¹ P Fᵀ with
        // P = μ J^{-2/3} (F − I₁/3 F⁻ᵀ) + κ J (J − 1) F⁻ᵀ, J = l, I₁ = l² + 2.
        let m = Material::from_shear_and_bulk(MaterialModel::NeoHookean, 0.25, 5.0).unwrap();
        let kind = SolidKind::Hex8;
        let x = element(kind);
        let (grad, dv) = geometry(kind, &kind.force_rule(), &x);
        let l: f64 = 1.2;
        let u: Vec<f64> = x
            .iter()
            .flat_map(|p| [(l - 1.0) * p[0], 0.0, 0.0])
            .collect();
        let out = cell_stress(&m, &grad, &dv, &u);
        let (mu, kappa, i1) = (0.25, 5.0, l * l + 2.0);
        let a = mu * l.powf(-2.0 / 3.0);
        let sxx = (a * (l * l - i1 / 3.0) + kappa * l * (l - 1.0)) / l;
        let syy = (a * (1.0 - i1 / 3.0) + kappa * l * (l - 1.0)) / l;
        let want = [sxx, syy, syy, 0.0, 0.0, 0.0];
        for c in 0..6 {
            assert!(
                (out.cauchy[c] - want[c]).abs() < 1e-14,
                "{c}: {} vs {}",
                out.cauchy[c],
                want[c]
            );
        }
        assert!((out.jacobian - l).abs() < 1e-15);
        assert!((out.von_mises - (sxx - syy).abs()).abs() < 1e-14);
        let w = 0.5 * mu * (i1 * l.powf(-2.0 / 3.0) - 3.0) + 0.5 * kappa * (l - 1.0).powi(2);
        assert!((out.energy_density - w).abs() < 1e-15);
    }
}
