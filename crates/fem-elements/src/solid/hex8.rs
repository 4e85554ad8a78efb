//! The hex8 internal force with 2×2×2 Gauss points by sum factorization, from a compact
//! geometry (`J⁻¹` and `dV` per point: 80 values, 640 B per cell instead of 1.6 kB).
//!
//! The hex8 shape functions are tensor products, `N_a = ℓ_α(ξ) ℓ_β(η) ℓ_γ(ζ)` with
//! `ℓ₀ = (1 − s)/2`, `ℓ₁ = (1 + s)/2`, so at the 2×2×2 Gauss points (`s = ±1/√3`, first
//! coordinate fastest, as [`hex_gauss`](super::quadrature3d::hex_gauss)) the reference
//! gradient of `u` factors: `∂u/∂ξ (ξ_i, η_j, ζ_k) = Σ_βγ ℓ_β(η_j) ℓ_γ(ζ_k) (u_{1βγ} − u_{0βγ})/2`,
//! independent of `i` — 4 differences and two 2×2 contractions per component and direction,
//! instead of a sum over 8 nodes at each of 8 points. Then
//!
//! ```text
//! F_q = I + (∂u/∂ξ)_q J_q⁻¹,   T_q = P(F_q) J_q⁻ᵀ dV_q,   f_a = Σ_q T_q ∇_ξ N_a(ξ_q)
//! ```
//!
//! with the last sum factorized the same way (transposed). About 1.7× fewer instructions than
//! the generic kernel with stored `∇₀N_a` (callgrind, SSE2), and 2.5× less geometry to stream.
//! The result equals the generic kernel's to round-off (the sums run in a different order);
//! both are deterministic.
//!
//! Node `(α, β, γ)` of the tensor numbering is Gmsh node [`TENSOR_TO_GMSH`]`[α + 2β + 4γ]`.

use super::material::{Hyperelastic, cofactor, det3};
use super::shape::{Hex8, ReferenceElement};
use super::total_lagrangian::{
    NonPositiveJacobian, jacobian, weighted_energy, weighted_first_piola,
};

/// Values per cell of the compact geometry: `J⁻¹` (9 × 8, point-innermost) and `dV` (8).
pub const COMPACT_LEN: usize = 80;

/// Gmsh node of tensor node `α + 2β + 4γ` (α, β, γ ∈ {0, 1} along ξ, η, ζ).
pub const TENSOR_TO_GMSH: [usize; 8] = [0, 1, 3, 2, 4, 5, 7, 6];

/// `1/√3`.
const G: f64 = 0.577_350_269_189_625_8;

/// The 2×2×2 Gauss points in [`hex_gauss`](super::quadrature3d::hex_gauss)'s order and weight.
fn gauss_point(q: usize) -> [f64; 3] {
    let s = |bit: usize| if bit == 0 { -G } else { G };
    [s(q & 1), s((q >> 1) & 1), s((q >> 2) & 1)]
}

/// Compact geometry of one hex8 (nodes `x`, Gmsh order) into `out` ([`COMPACT_LEN`] values):
/// `out[(3m + j) 8 + q] = (J_q⁻¹)_mj`, `out[72 + q] = det J_q` (the 2×2×2 weights are 1).
pub fn compact_geometry(x: &[[f64; 3]], out: &mut [f64]) -> Result<(), NonPositiveJacobian> {
    assert_eq!(x.len(), 8);
    assert_eq!(out.len(), COMPACT_LEN);
    for q in 0..8 {
        let j = jacobian(x, &Hex8::gradients(gauss_point(q)));
        let det = det3(&j);
        if !(det > 0.0 && det.is_finite()) {
            return Err(NonPositiveJacobian { point: q, det });
        }
        let cof = cofactor(&j);
        for m in 0..3 {
            for c in 0..3 {
                // (J⁻¹)_mc = cof(J)_cm / det.
                out[(3 * m + c) * 8 + q] = cof[c][m] / det;
            }
        }
        out[72 + q] = det;
    }
    Ok(())
}

/// Expands a compact geometry into the generic layout of
/// [`reference_geometry`](super::total_lagrangian::reference_geometry) (`grad`: 192 values,
/// `dv`: 8), for the kernels other than the force.
pub fn expand_geometry(compact: &[f64], grad: &mut [f64], dv: &mut [f64]) {
    assert_eq!(compact.len(), COMPACT_LEN);
    assert_eq!((grad.len(), dv.len()), (192, 8));
    for q in 0..8 {
        let dn = Hex8::gradients(gauss_point(q));
        for (a, dna) in dn.iter().enumerate() {
            for k in 0..3 {
                grad[(3 * a + k) * 8 + q] =
                    (0..3).map(|m| dna[m] * compact[(3 * m + k) * 8 + q]).sum();
            }
        }
        dv[q] = compact[72 + q];
    }
}

/// Values at the two Gauss abscissae of the linear function with end values `(e₀, e₁)`,
/// times `scale`: `ℓ₀(∓g) e₀ + ℓ₁(∓g) e₁ = m ∓ g d` with `m = (e₀ + e₁)/2`, `d = (e₁ − e₀)/2`.
#[inline(always)]
fn at_gauss(e0: f64, e1: f64, scale: f64) -> [f64; 2] {
    let m = 0.5 * scale * (e0 + e1);
    let d = 0.5 * G * scale * (e1 - e0);
    [m - d, m + d]
}

/// Transpose of [`at_gauss`]: the end-value weights `Σ_i ℓ_α(s_i) r_i` of values `r` at the
/// Gauss abscissae, times `scale`.
#[inline(always)]
fn from_gauss(r0: f64, r1: f64, scale: f64) -> [f64; 2] {
    let m = 0.5 * scale * (r0 + r1);
    let d = 0.5 * G * scale * (r1 - r0);
    [m - d, m + d]
}

/// `v[j][k]` at the 2×2 Gauss points of the bilinear field with corner values `e[β][γ]`,
/// times `scale`.
#[inline(always)]
fn interpolate(e: [[f64; 2]; 2], scale: f64) -> [[f64; 2]; 2] {
    // Along γ first, for β = 0, 1; then along β.
    let [t00, t01] = at_gauss(e[0][0], e[0][1], scale);
    let [t10, t11] = at_gauss(e[1][0], e[1][1], scale);
    let [v00, v10] = at_gauss(t00, t10, 1.0);
    let [v01, v11] = at_gauss(t01, t11, 1.0);
    [[v00, v01], [v10, v11]]
}

/// Transpose of [`interpolate`].
#[inline(always)]
fn interpolate_transpose(r: [[f64; 2]; 2], scale: f64) -> [[f64; 2]; 2] {
    let [t00, t10] = from_gauss(r[0][0], r[1][0], scale);
    let [t01, t11] = from_gauss(r[0][1], r[1][1], scale);
    let [e00, e01] = from_gauss(t00, t01, 1.0);
    let [e10, e11] = from_gauss(t10, t11, 1.0);
    [[e00, e01], [e10, e11]]
}

/// `F_q = I + (∂u/∂ξ)_q J_q⁻¹` at the 8 Gauss points (lanes `q = i + 2j + 4k`) of one hex8
/// with compact geometry `geo` and nodal displacements `u` (Gmsh order), by sum factorization.
#[inline(always)]
fn deformation_gradients(geo: &[f64; COMPACT_LEN], u: &[[f64; 3]; 8]) -> [[[f64; 8]; 3]; 3] {
    // Tensor-ordered displacements: t = α + 2β + 4γ.
    let ut: [[f64; 3]; 8] = std::array::from_fn(|t| u[TENSOR_TO_GMSH[t]]);
    // Reference gradient H_ξ[c][m] at the points, lanes q = i + 2j + 4k. The derivative of ℓ
    // is ±1/2: differences times 1/2.
    let mut hxi = [[[0.0; 8]; 3]; 3];
    for c in 0..3 {
        let x = |t: usize| ut[t][c];
        // ∂/∂ξ: differences along α at (β, γ), interpolated to (η_j, ζ_k).
        let d = interpolate(
            [[x(1) - x(0), x(5) - x(4)], [x(3) - x(2), x(7) - x(6)]],
            0.5,
        );
        // ∂/∂η: differences along β at (α, γ), interpolated to (ξ_i, ζ_k).
        let e = interpolate(
            [[x(2) - x(0), x(6) - x(4)], [x(3) - x(1), x(7) - x(5)]],
            0.5,
        );
        // ∂/∂ζ: differences along γ at (α, β), interpolated to (ξ_i, η_j).
        let z = interpolate(
            [[x(4) - x(0), x(6) - x(2)], [x(5) - x(1), x(7) - x(3)]],
            0.5,
        );
        for q in 0..8 {
            let (i, j, k) = (q & 1, (q >> 1) & 1, q >> 2);
            hxi[c][0][q] = d[j][k];
            hxi[c][1][q] = e[i][k];
            hxi[c][2][q] = z[i][j];
        }
    }
    // F = I + H_ξ J⁻¹, lane by lane.
    let jinv = |m: usize, j: usize| -> &[f64] { &geo[(3 * m + j) * 8..(3 * m + j) * 8 + 8] };
    let mut fl = [[[0.0; 8]; 3]; 3];
    for c in 0..3 {
        for j in 0..3 {
            let (j0, j1, j2) = (jinv(0, j), jinv(1, j), jinv(2, j));
            let identity = if c == j { 1.0 } else { 0.0 };
            for q in 0..8 {
                fl[c][j][q] =
                    identity + hxi[c][0][q] * j0[q] + hxi[c][1][q] * j1[q] + hxi[c][2][q] * j2[q];
            }
        }
    }
    fl
}

/// Strain energy `Σ_q W(F_q) dV_q` of one hex8 with compact geometry `geo` and nodal
/// displacements `u` (Gmsh order): the deformation gradients of [`internal_force`], so the
/// energy costs a fraction of a force evaluation. `NaN` where `W` is (an inverted point of
/// the `ln J` model).
pub fn strain_energy<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64; COMPACT_LEN],
    u: &[[f64; 3]; 8],
) -> f64 {
    let fl = deformation_gradients(geo, u);
    let dv: &[f64; 8] = geo[72..80].try_into().expect("8 weights");
    weighted_energy(material, &fl, dv)
}

/// Internal force of one hex8 with compact geometry `geo` and nodal displacements `u`
/// (Gmsh order) into `f` (24 values, node-major). Returns the smallest `J` over the points.
#[inline(always)]
pub fn internal_force<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64; COMPACT_LEN],
    u: &[[f64; 3]; 8],
    f: &mut [f64],
) -> f64 {
    let fl = deformation_gradients(geo, u);
    let jinv = |m: usize, j: usize| -> &[f64] { &geo[(3 * m + j) * 8..(3 * m + j) * 8 + 8] };
    let dv: &[f64; 8] = geo[72..80].try_into().expect("8 weights");
    let mut p = [[[0.0; 8]; 3]; 3];
    let jmin = weighted_first_piola(material, &fl, dv, &mut p);
    // T = (P dV) J⁻ᵀ: T[c][m] = Σ_j P[c][j] (J⁻¹)_mj.
    let mut tl = [[[0.0; 8]; 3]; 3];
    for c in 0..3 {
        for m in 0..3 {
            let (j0, j1, j2) = (jinv(m, 0), jinv(m, 1), jinv(m, 2));
            for q in 0..8 {
                tl[c][m][q] = p[c][0][q] * j0[q] + p[c][1][q] * j1[q] + p[c][2][q] * j2[q];
            }
        }
    }
    let mut ft = [[0.0; 3]; 8];
    for (c, t) in tl.iter().enumerate() {
        // f_a = Σ_q T_q ∇_ξN_a(ξ_q), the transposed sum factorization: sum over the point
        // index along the derivative, contract the other two, difference along it.
        let s0 = |j: usize, k: usize| t[0][2 * j + 4 * k] + t[0][1 + 2 * j + 4 * k];
        let r = interpolate_transpose([[s0(0, 0), s0(0, 1)], [s0(1, 0), s0(1, 1)]], 0.5);
        let s1 = |i: usize, k: usize| t[1][i + 4 * k] + t[1][i + 2 + 4 * k];
        let e = interpolate_transpose([[s1(0, 0), s1(0, 1)], [s1(1, 0), s1(1, 1)]], 0.5);
        let s2 = |i: usize, j: usize| t[2][i + 2 * j] + t[2][i + 2 * j + 4];
        let z = interpolate_transpose([[s2(0, 0), s2(0, 1)], [s2(1, 0), s2(1, 1)]], 0.5);
        for tensor in 0..8 {
            let (a, b, g) = (tensor & 1, (tensor >> 1) & 1, tensor >> 2);
            let sign = |bit: usize| if bit == 1 { 1.0 } else { -1.0 };
            ft[tensor][c] = sign(a) * r[b][g] + sign(b) * e[a][g] + sign(g) * z[a][b];
        }
    }
    for (tensor, &node) in TENSOR_TO_GMSH.iter().enumerate() {
        f[3 * node..3 * node + 3].copy_from_slice(&ft[tensor]);
    }
    jmin
}

/// [`internal_force`] over a batch of cells (as
/// [`internal_forces`](super::total_lagrangian::internal_forces), with compact geometry blocks
/// of [`COMPACT_LEN`] values). Returns the position of the first cell with `J ≤ 0` or `NaN`.
pub fn internal_forces<M: Hyperelastic + ?Sized>(
    material: &M,
    geometry: &[f64],
    connectivity: &[usize],
    u: &[f64],
    forces: &mut [f64],
) -> Option<usize> {
    let n_cells = connectivity.len() / 8;
    assert_eq!(connectivity.len(), 8 * n_cells);
    assert_eq!(geometry.len(), COMPACT_LEN * n_cells);
    assert_eq!(forces.len(), 24 * n_cells);
    let (u3, _) = u.as_chunks::<3>();
    let (geo, _) = geometry.as_chunks::<COMPACT_LEN>();
    let mut first_inverted = None;
    for (c, ((g, nodes), f)) in geo
        .iter()
        .zip(connectivity.chunks_exact(8))
        .zip(forces.chunks_exact_mut(24))
        .enumerate()
    {
        let ue: [[f64; 3]; 8] = std::array::from_fn(|a| u3[nodes[a]]);
        let jmin = internal_force(material, g, &ue, f);
        if jmin.is_nan() || jmin <= 0.0 {
            first_inverted.get_or_insert(c);
        }
    }
    first_inverted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solid::quadrature3d::hex_gauss;
    use crate::solid::total_lagrangian::{
        internal_force as generic_force, reference_geometry, strain_energy as generic_energy,
    };
    use crate::solid::{Material, MaterialModel, SolidKind};

    fn distorted() -> Vec<[f64; 3]> {
        Hex8::NODES
            .iter()
            .enumerate()
            .map(|(a, p)| {
                let s = a as f64;
                [
                    0.6 * p[0] + 0.1 * p[1] + 0.05 * (1.7 * s).sin() + 3.0,
                    0.5 * p[1] - 0.05 * p[2] + 0.04 * (2.3 * s).cos(),
                    0.7 * p[2] + 0.1 * p[0] * p[1] + 0.03 * (0.7 * s).sin(),
                ]
            })
            .collect()
    }

    #[test]
    fn matches_the_generic_kernel() {
        let x = distorted();
        let mut compact = [0.0; COMPACT_LEN];
        compact_geometry(&x, &mut compact).unwrap();
        let rule = hex_gauss(2).unwrap();
        for (q, p) in rule.points.iter().enumerate() {
            let mine = gauss_point(q);
            assert!((0..3).all(|k| (mine[k] - p[k]).abs() < 1e-15), "point {q}");
        }
        let (mut grad, mut dv) = (vec![0.0; 192], vec![0.0; 8]);
        reference_geometry(SolidKind::Hex8, &rule, &x, &mut grad, &mut dv).unwrap();
        let (mut grad2, mut dv2) = (vec![0.0; 192], vec![0.0; 8]);
        expand_geometry(&compact, &mut grad2, &mut dv2);
        for (a, b) in grad.iter().zip(&grad2).chain(dv.iter().zip(&dv2)) {
            assert!((a - b).abs() < 1e-13 * (1.0 + a.abs()));
        }
        let u: [[f64; 3]; 8] = std::array::from_fn(|a| {
            std::array::from_fn(|c| 0.08 * ((3 * a + c) as f64 * 0.9).sin())
        });
        for model in [
            MaterialModel::SaintVenantKirchhoff,
            MaterialModel::NeoHookean,
            MaterialModel::NeoHookeanLog,
        ] {
            let m = Material::new(model, 50.0, 0.3).unwrap();
            let mut f = [0.0; 24];
            let mut f_generic = [0.0; 24];
            let j = internal_force(&m, &compact, &u, &mut f);
            let j_generic = generic_force(&m, &grad, &dv, u.as_flattened(), &mut f_generic);
            let w = strain_energy(&m, &compact, &u);
            let w_generic = generic_energy(&m, &grad, &dv, u.as_flattened());
            assert!(w_generic > 1e-3, "{model}: a strained cell");
            assert!(
                (w - w_generic).abs() < 1e-13 * w_generic,
                "{model}: {w} vs {w_generic}"
            );
            assert!((j - j_generic).abs() < 1e-14);
            let scale = f_generic.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(scale > 1e-2);
            for (a, b) in f.iter().zip(&f_generic) {
                assert!((a - b).abs() < 1e-13 * scale, "{model}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn inverted_cells_are_refused_and_reported() {
        let mut x = distorted();
        x.swap(0, 4);
        x.swap(1, 5);
        x.swap(2, 6);
        x.swap(3, 7);
        let mut compact = [0.0; COMPACT_LEN];
        assert!(compact_geometry(&x, &mut compact).is_err());
        compact_geometry(&distorted(), &mut compact).unwrap();
        // Squash the cell through itself: J < 0 is reported by the batch.
        let u: Vec<f64> = distorted()
            .iter()
            .flat_map(|p| [0.0, 0.0, -2.0 * p[2]])
            .collect();
        let m = Material::new(MaterialModel::NeoHookean, 1.0, 0.3).unwrap();
        let mut f = [0.0; 24];
        let conn: Vec<usize> = (0..8).collect();
        assert_eq!(internal_forces(&m, &compact, &conn, &u, &mut f), Some(0));
    }
}
