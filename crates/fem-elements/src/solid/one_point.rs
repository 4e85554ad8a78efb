//! The one-point hex8 with hourglass control, for fast explicit runs.
//!
//! **Constant part.** One point, the uniform gradient of Flanagan & Belytschko (1981),
//! `B̄_a = V⁻¹ ∫ ∇₀N_a dV` (exact with 2×2×2 Gauss at set-up), `F = I + Σ_a u_a ⊗ B̄_a` and the
//! material's `P(F)`: `f_a = V P B̄_a`. With the uniform gradient the element passes the patch
//! test on any shape (`Σ_a X_a ⊗ B̄_a = I`), but its four hourglass modes `h_α` (nodal values of
//! `ξη, ηζ, ζξ, ξηζ`) have no stiffness.
//!
//! **Hourglass part.** Flanagan–Belytschko's hourglass vectors, orthogonal to every linear field
//! (`γ_α · 1 = 0`, `γ_α · X_k = 0`), measure the hourglass displacement `q_α = Σ_a γ_a,α u_a`:
//!
//! ```text
//! γ_α = (h_α − Σ_k (h_α · X_k) B̄_k) / 8,      q_α = Σ_a γ_a,α u_a          (H1)
//! p_α = F⁻¹ q_α                                                             (H2)
//! E_hg = ½ Σ_αβ p_αᵀ K̂_αβ p_β                                               (H3)
//! ```
//!
//! `p_α` is the hourglass displacement pulled back by the element's mean deformation: a rigid
//! rotation `R` superposed on any state maps `q_α → R q_α` and `F → R F`, so `p_α`, `E_hg` and the
//! forces are objective (tested with finite rotations). The 12×12 stiffness `K̂` is not a tuned
//! coefficient: it is the linearized stiffness of the **enhanced element** ([`eas`](super::eas))
//! in its hourglass modes, minus the one-point stiffness (which it contains: the enhanced
//! strain's mean is the uniform strain, so `K_eas − K_1` is positive semi-definite and vanishes
//! on linear fields):
//!
//! ```text
//! K̂ = Uᵀ (K_eas(0) − K_1(0)) U,   U_α = Σ_β h_β (M⁻¹)_βα,   M_βα = γ_β · h_α          (H4)
//! ```
//!
//! so that `½ uᵀ K_1 u + E_hg = ½ uᵀ K_eas u` for every small displacement of the reference cell
//! (tested): in linear elasticity the one-point element *is* the enhanced element, bending
//! included, for the cost of one material evaluation. (The same idea as Puso's (2000) physically
//! stabilized element, here without his Taylor expansion: `K̂` is computed once per cell.) At
//! finite strain the hourglass part stays a linear spring in the pulled-back modes, while the
//! constant part follows the material; `E_hg` is reported on its own (a history column).
//!
//! The force and tangent are the exact gradient and Hessian of `V W(F) + E_hg`:
//!
//! ```text
//! s_α = F⁻ᵀ (K̂ p)_α,   T = V P − Σ_α s_α ⊗ (p_α + c_α / 8),   c_α = (h_α · X_k)_k
//! f_a = T B̄_a + ⅛ Σ_α h_a,α s_α                                                   (H5)
//! ```
//!
//! Geometry per cell ([`GEOMETRY_LEN`] = 115 values): `B̄` (24, node-major, the layout of a
//! one-point block of [`total_lagrangian`](super::total_lagrangian)), `V`, `c_α` (12) and the upper
//! triangle of `K̂` (78).

use super::material::{Hyperelastic, LANES, LaneMatrix, Mat3, cofactor, det3};
use super::quadrature3d::hex_gauss;
use super::shape::{Hex8, ReferenceElement, SolidKind};
use super::total_lagrangian::{
    CellStress, NonPositiveJacobian, StressAverage, inverted, reference_geometry,
    tangent_stiffness as generic_tangent,
};

/// Values per cell.
pub const GEOMETRY_LEN: usize = 24 + 1 + 12 + 78;
const OFF_V: usize = 24;
const OFF_C: usize = 25;
const OFF_K: usize = 37;

/// The hourglass vectors `h_α` at the Gmsh nodes: `ξη, ηζ, ζξ, ξηζ`.
pub fn hourglass_vectors() -> [[f64; 8]; 4] {
    let n = <Hex8 as ReferenceElement<8>>::NODES;
    [
        n.map(|p| p[0] * p[1]),
        n.map(|p| p[1] * p[2]),
        n.map(|p| p[2] * p[0]),
        n.map(|p| p[0] * p[1] * p[2]),
    ]
}

/// Index of `(r, c)`, `r ≤ c`, in the packed upper triangle of a 12×12 matrix.
#[inline(always)]
fn packed(r: usize, c: usize) -> usize {
    let (r, c) = (r.min(c), r.max(c));
    r * 12 - r * (r + 1) / 2 + c
}

/// The geometry of one hex8 (nodes `x`, Gmsh order) into `out` ([`GEOMETRY_LEN`] values), with
/// `K̂` (H4) from `material`'s stiffness at the reference state.
pub fn geometry<M: Hyperelastic + ?Sized>(
    material: &M,
    x: &[[f64; 3]],
    out: &mut [f64],
) -> Result<(), NonPositiveJacobian> {
    assert_eq!(x.len(), 8);
    assert_eq!(out.len(), GEOMETRY_LEN);
    // B̄ and V from the exact 2×2×2 integral of ∇₀N_a.
    let rule = hex_gauss(2).expect("tabulated");
    let mut grad = [0.0; 3 * 8 * 8];
    let mut dv = [0.0; 8];
    reference_geometry(SolidKind::Hex8, &rule, x, &mut grad, &mut dv)?;
    let volume: f64 = dv.iter().sum();
    for a in 0..8 {
        for k in 0..3 {
            out[3 * a + k] = (0..8)
                .map(|q| grad[(3 * a + k) * 8 + q] * dv[q])
                .sum::<f64>()
                / volume;
        }
    }
    out[OFF_V] = volume;
    let h = hourglass_vectors();
    for (alpha, ha) in h.iter().enumerate() {
        for k in 0..3 {
            out[OFF_C + 3 * alpha + k] = (0..8).map(|a| ha[a] * x[a][k]).sum();
        }
    }
    let gamma = gamma_vectors(out);
    // K_hg = K_eas(0) − K_1(0).
    let mut eas_geo = [0.0; super::eas::GEOMETRY_LEN];
    super::eas::geometry(x, &mut eas_geo)?;
    let zero = [0.0; 24];
    let mut k_eas = [0.0; 576];
    let mut k_1 = [0.0; 576];
    // At u = 0 the modes are zero (no stress to balance): the solve cannot fail there.
    if super::eas::tangent_stiffness(material, &eas_geo, &zero, &mut k_eas).is_err() {
        return Err(NonPositiveJacobian {
            point: 0,
            det: f64::NAN,
        });
    }
    generic_tangent(
        material,
        &out[..24],
        &out[OFF_V..OFF_V + 1],
        &zero,
        &mut k_1,
    );
    // U = h M⁻¹ with M_βα = γ_β · h_α.
    let m = nalgebra::Matrix4::from_fn(|b, a| (0..8).map(|n| gamma[b][n] * h[a][n]).sum::<f64>());
    let m_inv = m.try_inverse().ok_or(NonPositiveJacobian {
        point: 0,
        det: m.determinant(),
    })?;
    let u: [[f64; 8]; 4] = std::array::from_fn(|a| {
        std::array::from_fn(|n| (0..4).map(|b| h[b][n] * m_inv[(b, a)]).sum())
    });
    for r in 0..12 {
        for c in r..12 {
            let (alpha, i, beta, k) = (r / 3, r % 3, c / 3, c % 3);
            let mut v = 0.0;
            for a in 0..8 {
                for b in 0..8 {
                    let kk =
                        k_eas[(3 * a + i) * 24 + 3 * b + k] - k_1[(3 * a + i) * 24 + 3 * b + k];
                    v += u[alpha][a] * kk * u[beta][b];
                }
            }
            out[OFF_K + packed(r, c)] = v;
        }
    }
    Ok(())
}

/// `γ_α` (H1) from a geometry block.
fn gamma_vectors(geo: &[f64]) -> [[f64; 8]; 4] {
    let h = hourglass_vectors();
    std::array::from_fn(|alpha| {
        std::array::from_fn(|a| {
            (h[alpha][a]
                - (0..3)
                    .map(|k| geo[OFF_C + 3 * alpha + k] * geo[3 * a + k])
                    .sum::<f64>())
                / 8.0
        })
    })
}

/// The hourglass stiffness `K̂` (12×12) of a geometry block.
pub fn hourglass_stiffness(geo: &[f64]) -> [[f64; 12]; 12] {
    std::array::from_fn(|r| std::array::from_fn(|c| geo[OFF_K + packed(r, c)]))
}

/// What one evaluation at `F` gives: `F`, `P`, `J`, `F⁻¹`, `p_α`, `(K̂ p)_α`, `s_α`.
struct State {
    f: Mat3,
    finv: Mat3,
    jac: f64,
    p: [[f64; 3]; 4],
    kp: [[f64; 3]; 4],
    s: [[f64; 3]; 4],
}

/// `H = Σ_a u_a ⊗ B̄_a` and `q_α` (H1).
#[inline(always)]
fn gradient_and_hourglass(geo: &[f64], u: &[[f64; 3]; 8]) -> (Mat3, [[f64; 3]; 4]) {
    const H: [[f64; 8]; 4] = [
        [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0],
        [1.0, 1.0, -1.0, -1.0, -1.0, -1.0, 1.0, 1.0],
        [1.0, -1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0],
        [-1.0, 1.0, -1.0, 1.0, 1.0, -1.0, 1.0, -1.0],
    ];
    let mut hg = [[0.0; 3]; 3];
    for a in 0..8 {
        for i in 0..3 {
            for k in 0..3 {
                hg[i][k] += u[a][i] * geo[3 * a + k];
            }
        }
    }
    let q = std::array::from_fn(|alpha| {
        std::array::from_fn(|i| {
            let hu: f64 = (0..8).map(|a| H[alpha][a] * u[a][i]).sum();
            let hc: f64 = (0..3).map(|k| hg[i][k] * geo[OFF_C + 3 * alpha + k]).sum();
            (hu - hc) / 8.0
        })
    });
    (hg, q)
}

fn state(geo: &[f64], u: &[[f64; 3]; 8]) -> State {
    let (hg, q) = gradient_and_hourglass(geo, u);
    let f: Mat3 =
        std::array::from_fn(|i| std::array::from_fn(|k| hg[i][k] + if i == k { 1.0 } else { 0.0 }));
    let cof = cofactor(&f);
    let jac = det3(&f);
    // F⁻¹ = cof(F)ᵀ / J.
    let finv: Mat3 = std::array::from_fn(|i| std::array::from_fn(|k| cof[k][i] / jac));
    let p: [[f64; 3]; 4] = std::array::from_fn(|alpha| {
        std::array::from_fn(|i| (0..3).map(|k| finv[i][k] * q[alpha][k]).sum())
    });
    let kp: [[f64; 3]; 4] = std::array::from_fn(|alpha| {
        std::array::from_fn(|i| {
            let r = 3 * alpha + i;
            (0..12)
                .map(|c| geo[OFF_K + packed(r, c)] * p[c / 3][c % 3])
                .sum()
        })
    });
    // s_α = F⁻ᵀ (K̂ p)_α.
    let s = std::array::from_fn(|alpha| {
        std::array::from_fn(|i| (0..3).map(|k| finv[k][i] * kp[alpha][k]).sum())
    });
    State {
        f,
        finv,
        jac,
        p,
        kp,
        s,
    }
}

/// Internal force (H5) of one cell with geometry `geo` and nodal displacements `u` into `f`
/// (24, overwritten); `J = det F` (`≤ 0` or `NaN`: inverted).
pub fn internal_force<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64],
    u: &[[f64; 3]; 8],
    f: &mut [f64],
) -> f64 {
    let st = state(geo, u);
    let (p, _) = material.first_piola(&st.f);
    force_from(geo, &st, &p, f);
    st.jac
}

/// (H5) from the state and `P`.
#[inline(always)]
fn force_from(geo: &[f64], st: &State, p: &Mat3, f: &mut [f64]) {
    let h = hourglass_vectors();
    let v = geo[OFF_V];
    let mut t = [[0.0; 3]; 3];
    for i in 0..3 {
        for k in 0..3 {
            let mut hg = 0.0;
            for alpha in 0..4 {
                hg += st.s[alpha][i] * (st.p[alpha][k] + geo[OFF_C + 3 * alpha + k] / 8.0);
            }
            t[i][k] = v * p[i][k] - hg;
        }
    }
    for a in 0..8 {
        for i in 0..3 {
            let mut fa = (0..3).map(|k| t[i][k] * geo[3 * a + k]).sum::<f64>();
            for alpha in 0..4 {
                fa += h[alpha][a] * st.s[alpha][i] / 8.0;
            }
            f[3 * a + i] = fa;
        }
    }
}

/// The hourglass energy (H3) of one cell.
pub fn hourglass_energy(geo: &[f64], u: &[[f64; 3]; 8]) -> f64 {
    let st = state(geo, u);
    0.5 * (0..4)
        .map(|alpha| {
            (0..3)
                .map(|i| st.p[alpha][i] * st.kp[alpha][i])
                .sum::<f64>()
        })
        .sum::<f64>()
}

/// Strain energy `V W(F) + E_hg` of one cell and its hourglass part `E_hg` (`NaN` if inverted).
pub fn strain_energy<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64],
    u: &[[f64; 3]; 8],
) -> (f64, f64) {
    let st = state(geo, u);
    if inverted(st.jac) {
        return (f64::NAN, f64::NAN);
    }
    let hg = 0.5
        * (0..4)
            .map(|alpha| {
                (0..3)
                    .map(|i| st.p[alpha][i] * st.kp[alpha][i])
                    .sum::<f64>()
            })
            .sum::<f64>();
    (geo[OFF_V] * material.strain_energy(&st.f) + hg, hg)
}

/// Stress output of one cell: the material's stress at `F` (the hourglass forces carry no
/// stress), the energy density including `E_hg / V`.
pub fn cell_stress<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64],
    u: &[[f64; 3]; 8],
) -> CellStress {
    let st = state(geo, u);
    let v = geo[OFF_V];
    let mut acc = StressAverage::new(v);
    acc.add(material, &st.f, v);
    acc.add_energy(hourglass_energy(geo, u));
    acc.finish()
}

/// Consistent tangent of one cell into `k` (24 × 24, row-major, symmetric); `J`.
pub fn tangent_stiffness<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64],
    u: &[[f64; 3]; 8],
    k: &mut [f64],
) -> f64 {
    assert_eq!(k.len(), 576);
    let st = state(geo, u);
    generic_tangent(
        material,
        &geo[..24],
        &geo[OFF_V..OFF_V + 1],
        u.as_flattened(),
        k,
    );
    if inverted(st.jac) {
        k.fill(f64::NAN);
        return st.jac;
    }
    let gamma = gamma_vectors(geo);
    // w_αa = γ_a,α − B̄_a · p_α; F⁻ᵀ B̄_a.
    let w: [[f64; 8]; 4] = std::array::from_fn(|alpha| {
        std::array::from_fn(|a| {
            gamma[alpha][a] - (0..3).map(|m| geo[3 * a + m] * st.p[alpha][m]).sum::<f64>()
        })
    });
    let fb: [[f64; 3]; 8] = std::array::from_fn(|a| {
        std::array::from_fn(|i| (0..3).map(|m| st.finv[m][i] * geo[3 * a + m]).sum())
    });
    // K̂ in (α, m) × (β, n), then R_αᵀ K̂ R_β with R_α δu = F⁻¹ Σ_a w_αa δu_a.
    let khat = hourglass_stiffness(geo);
    // (F⁻¹)ᵀ K̂ F⁻¹ per block: G[(α,i)][(β,k)] = Σ_mn (F⁻¹)_{mi} K̂_{(α,m),(β,n)} (F⁻¹)_{nk}.
    let mut g = [[0.0; 12]; 12];
    for r in 0..12 {
        for c in 0..12 {
            let (alpha, i, beta, kk) = (r / 3, r % 3, c / 3, c % 3);
            let mut v = 0.0;
            for m in 0..3 {
                for n in 0..3 {
                    v += st.finv[m][i] * khat[3 * alpha + m][3 * beta + n] * st.finv[n][kk];
                }
            }
            g[r][c] = v;
        }
    }
    for a in 0..8 {
        for i in 0..3 {
            for b in 0..8 {
                for kk in 0..3 {
                    let mut v = 0.0;
                    for alpha in 0..4 {
                        for beta in 0..4 {
                            v += w[alpha][a] * g[3 * alpha + i][3 * beta + kk] * w[beta][b];
                        }
                        v -= w[alpha][a] * fb[b][i] * st.s[alpha][kk];
                        v -= w[alpha][b] * fb[a][kk] * st.s[alpha][i];
                    }
                    k[(3 * a + i) * 24 + 3 * b + kk] += v;
                }
            }
        }
    }
    st.jac
}

/// Internal forces of a batch of cells (as
/// [`internal_forces`](super::total_lagrangian::internal_forces), geometry blocks of
/// [`GEOMETRY_LEN`]): the material evaluated for [`LANES`] cells at a time. Returns the
/// position of the first cell with `J ≤ 0` or `NaN`.
pub fn internal_forces<M: Hyperelastic + ?Sized>(
    material: &M,
    geometry: &[f64],
    connectivity: &[usize],
    u: &[f64],
    forces: &mut [f64],
) -> Option<usize> {
    let n_cells = connectivity.len() / 8;
    assert_eq!(connectivity.len(), 8 * n_cells);
    assert_eq!(geometry.len(), GEOMETRY_LEN * n_cells);
    assert_eq!(forces.len(), 24 * n_cells);
    let (u3, _) = u.as_chunks::<3>();
    let mut first_inverted = None;
    let mut states: [Option<State>; LANES] = std::array::from_fn(|_| None);
    for first in (0..n_cells).step_by(LANES) {
        let n = (n_cells - first).min(LANES);
        let mut fl: LaneMatrix = [[[0.0; LANES]; 3]; 3];
        for l in 0..n {
            let c = first + l;
            let nodes = &connectivity[8 * c..8 * c + 8];
            let ue: [[f64; 3]; 8] = std::array::from_fn(|a| u3[nodes[a]]);
            let st = state(&geometry[GEOMETRY_LEN * c..GEOMETRY_LEN * (c + 1)], &ue);
            for i in 0..3 {
                for k in 0..3 {
                    fl[i][k][l] = st.f[i][k];
                }
            }
            states[l] = Some(st);
        }
        let mut p: LaneMatrix = [[[0.0; LANES]; 3]; 3];
        let mut jac = [0.0; LANES];
        material.first_piola_lanes(&fl, n, &mut p, &mut jac);
        for l in 0..n {
            let c = first + l;
            let st = states[l].take().expect("set above");
            let pl: Mat3 = std::array::from_fn(|i| std::array::from_fn(|k| p[i][k][l]));
            let geo = &geometry[GEOMETRY_LEN * c..GEOMETRY_LEN * (c + 1)];
            force_from(geo, &st, &pl, &mut forces[24 * c..24 * (c + 1)]);
            if jac[l].is_nan() || jac[l] <= 0.0 {
                first_inverted.get_or_insert(c);
            }
        }
    }
    first_inverted
}
