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
//!
//! The batch force ([`internal_forces`]) evaluates [`LANES`] cells at a time as lanes (struct
//! of arrays: the loops over the cells vectorize) in a function compiled for the machine's
//! vector width (`pulp`'s runtime dispatch). Its sums of products are fused multiply-adds
//! (`f64::mul_add`: one rounding, the same bits on every path — a machine without the
//! instruction computes them in software, slowly but exactly); the single-cell force goes
//! through the same code. An assembled body stores its cells' geometry in groups of [`LANES`],
//! value by value ([`pack_lane`], [`internal_forces_packed`]): the batch then reads whole lanes
//! instead of transposing each cell's 115 values at every evaluation (issue 25: that transpose
//! was a third of the force's time). The strain energy goes the same way
//! ([`strain_energies_packed`]; one cell's [`strain_energy`] is the same code on one lane): it
//! shares the force's kinematics (H1)–(H3) lane by lane, fused multiply-adds included, so the
//! two see the same `F`, `p_α` and `K̂ p`. The stress output and the tangent keep plain
//! products and sums: they agree with the force to rounding (the force is their gradient to
//! the precision the central-difference tests check).

use super::material::{Hyperelastic, LANES, Mat3, cofactor, cofactor_lanes};
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

/// The hourglass vectors `h_α` at the Gmsh nodes: `ξη, ηζ, ζξ, ξηζ` (a test checks them
/// against [`Hex8`]'s nodes).
pub const HOURGLASS: [[f64; 8]; 4] = [
    [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0],
    [1.0, 1.0, -1.0, -1.0, -1.0, -1.0, 1.0, 1.0],
    [1.0, -1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0],
    [-1.0, 1.0, -1.0, 1.0, 1.0, -1.0, 1.0, -1.0],
];

/// The hourglass vectors `h_α` (see [`HOURGLASS`]) from [`Hex8`]'s reference nodes.
pub fn hourglass_vectors() -> [[f64; 8]; 4] {
    let n = <Hex8 as ReferenceElement<8>>::NODES;
    [
        n.map(|p| p[0] * p[1]),
        n.map(|p| p[1] * p[2]),
        n.map(|p| p[2] * p[0]),
        n.map(|p| p[0] * p[1] * p[2]),
    ]
}

/// [`packed`] of every `(r, c)`.
const PACKED: [[usize; 12]; 12] = {
    let mut t = [[0; 12]; 12];
    let mut r = 0;
    while r < 12 {
        let mut c = 0;
        while c < 12 {
            let (a, b) = if r <= c { (r, c) } else { (c, r) };
            t[r][c] = a * 12 - a * (a + 1) / 2 + b;
            c += 1;
        }
        r += 1;
    }
    t
};

/// Index of `(r, c)`, `r ≤ c`, in the packed upper triangle of a 12×12 matrix.
#[inline(always)]
fn packed(r: usize, c: usize) -> usize {
    let (r, c) = if r <= c { (r, c) } else { (c, r) };
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
#[derive(Clone, Copy, Debug, Default)]
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
fn gradient_and_hourglass(geo: &[f64; GEOMETRY_LEN], u: &[[f64; 3]; 8]) -> (Mat3, [[f64; 3]; 4]) {
    const H: [[f64; 8]; 4] = HOURGLASS;
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

#[inline(always)]
fn state(geo: &[f64; GEOMETRY_LEN], u: &[[f64; 3]; 8]) -> State {
    let (hg, q) = gradient_and_hourglass(geo, u);
    let f: Mat3 =
        std::array::from_fn(|i| std::array::from_fn(|k| hg[i][k] + if i == k { 1.0 } else { 0.0 }));
    let cof = cofactor(&f);
    let jac = f[0][0] * cof[0][0] + f[0][1] * cof[0][1] + f[0][2] * cof[0][2];
    // F⁻¹ = cof(F)ᵀ / J.
    let inv_j = 1.0 / jac;
    let finv: Mat3 = std::array::from_fn(|i| std::array::from_fn(|k| cof[k][i] * inv_j));
    let p: [[f64; 3]; 4] = std::array::from_fn(|alpha| {
        std::array::from_fn(|i| (0..3).map(|k| finv[i][k] * q[alpha][k]).sum())
    });
    // K̂ p from the packed upper triangle, row by row: each stored entry once.
    let pf: [f64; 12] = std::array::from_fn(|c| p[c / 3][c % 3]);
    let k: &[f64; 78] = geo[OFF_K..].try_into().expect("78 entries");
    let mut kpf = [0.0; 12];
    let mut at = 0;
    for r in 0..12 {
        let mut acc = kpf[r] + k[at] * pf[r];
        for c in r + 1..12 {
            let v = k[at + c - r];
            acc += v * pf[c];
            kpf[c] += v * pf[r];
        }
        kpf[r] = acc;
        at += 12 - r;
    }
    let kp: [[f64; 3]; 4] =
        std::array::from_fn(|alpha| std::array::from_fn(|i| kpf[3 * alpha + i]));
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
    assert_eq!(f.len(), 24);
    pulp::Arch::new().dispatch(OneCell {
        material,
        geo: block(geo),
        u,
        f,
    })
}

/// [`internal_force`]'s arguments, for the runtime dispatch (the batch's code for one lane).
struct OneCell<'a, M: ?Sized> {
    material: &'a M,
    geo: &'a [f64; GEOMETRY_LEN],
    u: &'a [[f64; 3]; 8],
    f: &'a mut [f64],
}

impl<M: Hyperelastic + ?Sized> pulp::WithSimd for OneCell<'_, M> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> f64 {
        let mut lanes = Lanes8::default();
        lanes.load(0, self.geo, self.u);
        let (jac, forces) = lanes.forces(self.material, 1);
        for (r, v) in self.f.iter_mut().enumerate() {
            *v = forces[r][0];
        }
        jac[0]
    }
}

/// A geometry block as an array.
#[inline(always)]
fn block(geo: &[f64]) -> &[f64; GEOMETRY_LEN] {
    geo.try_into().expect("a one-point geometry block")
}

/// The hourglass energy (H3) of one cell (plain products and sums: the energy of
/// [`strain_energy`] to rounding).
pub fn hourglass_energy(geo: &[f64], u: &[[f64; 3]; 8]) -> f64 {
    state(block(geo), u).hourglass_energy()
}

impl State {
    /// `E_hg = ½ Σ_α p_α · (K̂ p)_α` (H3).
    fn hourglass_energy(&self) -> f64 {
        0.5 * (0..4)
            .map(|alpha| {
                (0..3)
                    .map(|i| self.p[alpha][i] * self.kp[alpha][i])
                    .sum::<f64>()
            })
            .sum::<f64>()
    }
}

/// Strain energy `V W(F) + E_hg` of one cell and its hourglass part `E_hg` (`NaN` if inverted):
/// the code of [`strain_energies_packed`] on one lane, hence its bits.
pub fn strain_energy<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64],
    u: &[[f64; 3]; 8],
) -> (f64, f64) {
    pulp::Arch::new().dispatch(OneCellEnergy {
        material,
        geo: block(geo),
        u,
    })
}

/// [`strain_energy`]'s arguments, for the runtime dispatch.
struct OneCellEnergy<'a, M: ?Sized> {
    material: &'a M,
    geo: &'a [f64; GEOMETRY_LEN],
    u: &'a [[f64; 3]; 8],
}

impl<M: Hyperelastic + ?Sized> pulp::WithSimd for OneCellEnergy<'_, M> {
    type Output = (f64, f64);
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> (f64, f64) {
        let mut lanes = Lanes8::default();
        lanes.load(0, self.geo, self.u);
        let (mut w, mut hg) = ([0.0; LANES], [0.0; LANES]);
        group_energies(self.material, &lanes.geo, &lanes.u, 1, &mut w, &mut hg);
        (w[0], hg[0])
    }
}

/// Stress output of one cell: the material's stress at `F` (the hourglass forces carry no
/// stress), the energy density including `E_hg / V`.
pub fn cell_stress<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64],
    u: &[[f64; 3]; 8],
) -> CellStress {
    let st = state(block(geo), u);
    let v = geo[OFF_V];
    let mut acc = StressAverage::new(v);
    acc.add(material, &st.f, v);
    acc.add_energy(st.hourglass_energy());
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
    let st = state(block(geo), u);
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
    // Compiled for the machine's vector width (runtime dispatch; the same arithmetic, so the
    // same bits, on every path).
    pulp::Arch::new().dispatch(Batch {
        material,
        geometry,
        connectivity,
        u,
        forces,
    })
}

/// [`internal_forces`]' arguments, for the runtime dispatch.
struct Batch<'a, M: ?Sized> {
    material: &'a M,
    geometry: &'a [f64],
    connectivity: &'a [usize],
    u: &'a [f64],
    forces: &'a mut [f64],
}

impl<M: Hyperelastic + ?Sized> pulp::WithSimd for Batch<'_, M> {
    type Output = Option<usize>;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> Option<usize> {
        forces_batch(
            self.material,
            self.geometry,
            self.connectivity,
            self.u,
            self.forces,
        )
    }
}

/// One lane per cell.
type Lane = [f64; LANES];

/// Values of one packed group of [`LANES`] cells' geometry ([`pack_lane`]).
pub const GROUP_LEN: usize = GEOMETRY_LEN * LANES;

/// Writes one cell's geometry block `geo` ([`GEOMETRY_LEN`] values) into lane `lane` of a
/// packed group (`GROUP_LEN` values: value `m` of lane `l` at `m · LANES + l`, so that the
/// batch force reads the group's values as whole lanes instead of transposing every cell's
/// block at every evaluation).
pub fn pack_lane(group: &mut [f64], lane: usize, geo: &[f64]) {
    assert_eq!(group.len(), GROUP_LEN);
    assert_eq!(geo.len(), GEOMETRY_LEN);
    assert!(lane < LANES);
    for (m, &v) in geo.iter().enumerate() {
        group[m * LANES + lane] = v;
    }
}

/// The geometry block of lane `lane` of a packed group (the inverse of [`pack_lane`]).
pub fn unpack_lane(group: &[f64], lane: usize) -> [f64; GEOMETRY_LEN] {
    assert_eq!(group.len(), GROUP_LEN);
    assert!(lane < LANES);
    std::array::from_fn(|m| group[m * LANES + lane])
}

/// [`internal_forces`] from packed geometry: `groups` holds whole groups ([`GROUP_LEN`] values
/// each, [`pack_lane`]), the cells of `connectivity` are the lanes from `first_lane` of the
/// first group on (the lanes before them and after the last cell are not evaluated: their
/// displacement is taken as zero). The same arithmetic, hence the same bits, as
/// [`internal_forces`]. Returns the position of the first cell with `J ≤ 0` or `NaN`.
///
/// # Panics
/// If `groups` does not hold exactly the groups of `first_lane + n_cells` lanes, or the
/// lengths of `connectivity` and `forces` disagree (caller errors).
pub fn internal_forces_packed<M: Hyperelastic + ?Sized>(
    material: &M,
    groups: &[f64],
    first_lane: usize,
    connectivity: &[usize],
    u: &[f64],
    forces: &mut [f64],
) -> Option<usize> {
    pulp::Arch::new().dispatch(PackedBatch {
        material,
        groups,
        first_lane,
        connectivity,
        u,
        forces,
    })
}

/// [`internal_forces_packed`]' arguments, for the runtime dispatch.
struct PackedBatch<'a, M: ?Sized> {
    material: &'a M,
    groups: &'a [f64],
    first_lane: usize,
    connectivity: &'a [usize],
    u: &'a [f64],
    forces: &'a mut [f64],
}

impl<M: Hyperelastic + ?Sized> pulp::WithSimd for PackedBatch<'_, M> {
    type Output = Option<usize>;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> Option<usize> {
        forces_packed(
            self.material,
            self.groups,
            self.first_lane,
            self.connectivity,
            self.u,
            self.forces,
        )
    }
}

/// [`internal_forces_packed`] on the calling path (see [`forces_batch`]).
#[inline(always)]
fn forces_packed<M: Hyperelastic + ?Sized>(
    material: &M,
    groups: &[f64],
    first_lane: usize,
    connectivity: &[usize],
    u: &[f64],
    forces: &mut [f64],
) -> Option<usize> {
    assert_eq!(forces.len(), 3 * connectivity.len());
    let (out, _) = forces.as_chunks_mut::<24>();
    let mut first_inverted = None;
    let (mut jac, mut f) = ([0.0; LANES], [[0.0; LANES]; 24]);
    let mut ul = [[[0.0; LANES]; 3]; 8];
    for (g, geo) in packed_groups(groups, first_lane, connectivity).enumerate() {
        let (lanes, first) = load_group(g, first_lane, connectivity, u, &mut ul);
        // The material at lanes 0..hi (a full group: the vectorized path).
        group_forces(material, geo, &ul, lanes.end, &mut jac, &mut f);
        for l in lanes.clone() {
            let c = first + l - lanes.start;
            for (r, v) in out[c].iter_mut().enumerate() {
                *v = f[r][l];
            }
            if inverted(jac[l]) {
                first_inverted.get_or_insert(c);
            }
        }
    }
    first_inverted
}

/// The groups of the packed geometry `groups` (laid out as [`internal_forces_packed`] takes
/// it), each as lanes. (The batches loop over them themselves, with [`load_group`]: a
/// helper that took the per-group work as a closure made the force 12× slower — the closure,
/// not inlined, was compiled without the dispatched target features, so its fused
/// multiply-adds became calls.)
///
/// # Panics
/// If `groups` does not hold exactly the groups of `first_lane + n_cells` lanes (caller errors).
#[inline(always)]
fn packed_groups<'a>(
    groups: &'a [f64],
    first_lane: usize,
    connectivity: &[usize],
) -> impl Iterator<Item = &'a [Lane; GEOMETRY_LEN]> {
    let n_cells = connectivity.len() / 8;
    assert_eq!(connectivity.len(), 8 * n_cells);
    assert!(first_lane < LANES);
    assert_eq!(
        groups.len(),
        GROUP_LEN * (first_lane + n_cells).div_ceil(LANES)
    );
    let (lanes, _) = groups.as_chunks::<LANES>();
    lanes
        .chunks_exact(GEOMETRY_LEN)
        .map(|geo| geo.try_into().expect("a whole group"))
}

/// The displacements `ul[a][i][lane]` of group `g`'s cells (zero at its lanes without a cell);
/// returns the lanes that hold cells and the first of those cells' position in
/// `connectivity` (arguments as [`internal_forces_packed`]).
#[inline(always)]
fn load_group(
    g: usize,
    first_lane: usize,
    connectivity: &[usize],
    u: &[f64],
    ul: &mut [[Lane; 3]; 8],
) -> (std::ops::Range<usize>, usize) {
    let n_cells = connectivity.len() / 8;
    let (u3, _) = u.as_chunks::<3>();
    // Lanes `lo..hi` of this group are cells `g · LANES + l − first_lane`.
    let lo = if g == 0 { first_lane } else { 0 };
    let hi = (first_lane + n_cells - g * LANES).min(LANES);
    if lo > 0 || hi < LANES {
        *ul = [[[0.0; LANES]; 3]; 8];
    }
    let first = g * LANES + lo - first_lane;
    for l in lo..hi {
        let c = first + l - lo;
        let nodes = &connectivity[8 * c..8 * c + 8];
        for a in 0..8 {
            let ua = u3[nodes[a]];
            for i in 0..3 {
                ul[a][i][l] = ua[i];
            }
        }
    }
    (lo..hi, first)
}

/// [`strain_energy`] of the cells of packed geometry (arguments as
/// [`internal_forces_packed`]): cell `c`'s `V W(F) + E_hg` into `energy[c]` and its `E_hg`
/// (H3) into `hourglass[c]`, both `NaN` for an inverted cell. Reads whole lanes as the force
/// does (no copy of a cell's block out of its group), with the same arithmetic as
/// [`strain_energy`] of one cell: the same bits.
///
/// # Panics
/// As [`internal_forces_packed`], and if `energy` or `hourglass` does not hold one value a
/// cell.
pub fn strain_energies_packed<M: Hyperelastic + ?Sized>(
    material: &M,
    groups: &[f64],
    first_lane: usize,
    connectivity: &[usize],
    u: &[f64],
    energy: &mut [f64],
    hourglass: &mut [f64],
) {
    pulp::Arch::new().dispatch(PackedEnergies {
        material,
        groups,
        first_lane,
        connectivity,
        u,
        energy,
        hourglass,
    })
}

/// [`strain_energies_packed`]' arguments, for the runtime dispatch.
struct PackedEnergies<'a, M: ?Sized> {
    material: &'a M,
    groups: &'a [f64],
    first_lane: usize,
    connectivity: &'a [usize],
    u: &'a [f64],
    energy: &'a mut [f64],
    hourglass: &'a mut [f64],
}

impl<M: Hyperelastic + ?Sized> pulp::WithSimd for PackedEnergies<'_, M> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let n_cells = self.connectivity.len() / 8;
        assert_eq!(self.energy.len(), n_cells);
        assert_eq!(self.hourglass.len(), n_cells);
        let (mut w, mut hg) = ([0.0; LANES], [0.0; LANES]);
        let mut ul = [[[0.0; LANES]; 3]; 8];
        for (g, geo) in packed_groups(self.groups, self.first_lane, self.connectivity).enumerate() {
            let (lanes, first) = load_group(g, self.first_lane, self.connectivity, self.u, &mut ul);
            group_energies(self.material, geo, &ul, lanes.end, &mut w, &mut hg);
            let cells = first..first + lanes.len();
            self.energy[cells.clone()].copy_from_slice(&w[lanes.clone()]);
            self.hourglass[cells].copy_from_slice(&hg[lanes]);
        }
    }
}

/// [`internal_forces`] for groups of [`LANES`] cells, struct of arrays: every quantity of (H1)–
/// (H5) is a lane array (the cells are the lanes, so the loops vectorize), the same arithmetic
/// in the same order as [`internal_force`] for one cell (padded lanes of a last, partial group
/// have zero geometry and displacement: `F = I`, no force).
#[inline(always)]
fn forces_batch<M: Hyperelastic + ?Sized>(
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
    let (geo, _) = geometry.as_chunks::<GEOMETRY_LEN>();
    let (out, _) = forces.as_chunks_mut::<24>();
    let mut first_inverted = None;
    // One buffer for every group (each group overwrites every lane it uses; a last, partial
    // group zeroes the others).
    let mut lanes = Lanes8::default();
    for first in (0..n_cells).step_by(LANES) {
        let n = (n_cells - first).min(LANES);
        let cells = first..first + n;
        if n < LANES {
            lanes = Lanes8::default();
        }
        for (l, c) in cells.clone().enumerate() {
            let nodes = &connectivity[8 * c..8 * c + 8];
            lanes.load(l, &geo[c], &std::array::from_fn(|a| u3[nodes[a]]));
        }
        let (jac, f) = lanes.forces(material, n);
        for (l, c) in cells.enumerate() {
            for (r, v) in out[c].iter_mut().enumerate() {
                *v = f[r][l];
            }
            if jac[l].is_nan() || jac[l] <= 0.0 {
                first_inverted.get_or_insert(c);
            }
        }
    }
    first_inverted
}

/// A group of [`LANES`] cells' geometry and displacements, struct of arrays.
#[derive(Clone, Copy)]
struct Lanes8 {
    /// The geometry blocks, value by value (`geo[m][lane]`, the order of a block).
    geo: [Lane; GEOMETRY_LEN],
    /// `u[a][i]`.
    u: [[Lane; 3]; 8],
}

impl Default for Lanes8 {
    fn default() -> Self {
        Self {
            geo: [[0.0; LANES]; GEOMETRY_LEN],
            u: [[[0.0; LANES]; 3]; 8],
        }
    }
}

impl Lanes8 {
    #[inline(always)]
    fn load(&mut self, l: usize, geo: &[f64; GEOMETRY_LEN], u: &[[f64; 3]; 8]) {
        for (m, &v) in geo.iter().enumerate() {
            self.geo[m][l] = v;
        }
        for a in 0..8 {
            for k in 0..3 {
                self.u[a][k][l] = u[a][k];
            }
        }
    }

    #[inline(always)]
    fn forces<M: Hyperelastic + ?Sized>(&self, material: &M, n: usize) -> (Lane, [Lane; 24]) {
        let (mut jac, mut forces) = ([0.0; LANES], [[0.0; LANES]; 24]);
        group_forces(material, &self.geo, &self.u, n, &mut jac, &mut forces);
        (jac, forces)
    }
}

/// The kinematics (H1)–(H3) of a group of cells, lane by lane: `F`, `F⁻¹`, `J` (from the
/// cofactor, for the inversion check of the energy), `p_α` and `(K̂ p)_α` (12 lanes each,
/// `3α + i`).
struct GroupState {
    f: [[Lane; 3]; 3],
    finv: [[Lane; 3]; 3],
    jac: Lane,
    p: [Lane; 12],
    kp: [Lane; 12],
}

/// [`GroupState`] of a group of cells (lane `l` of `geo[m]` the value `m` of cell `l`'s
/// geometry block, `u[a][i][l]` its displacements): what the force (H5) and the energy (H3)
/// share, so that they see the same bits of `F`, `p_α` and `K̂ p`.
#[inline(always)]
fn group_state(geo: &[Lane; GEOMETRY_LEN], u: &[[Lane; 3]; 8]) -> GroupState {
    const L: usize = LANES;
    let zero = [0.0; L];
    // H and h_α · u (H1).
    let mut hg = [[zero; 3]; 3];
    for a in 0..8 {
        for i in 0..3 {
            for k in 0..3 {
                for l in 0..L {
                    hg[i][k][l] = u[a][i][l].mul_add(geo[3 * a + k][l], hg[i][k][l]);
                }
            }
        }
    }
    let mut q = [[zero; 3]; 4];
    for alpha in 0..4 {
        for i in 0..3 {
            let mut hu = zero;
            for a in 0..8 {
                for l in 0..L {
                    hu[l] += HOURGLASS[alpha][a] * u[a][i][l];
                }
            }
            let mut hc = zero;
            for k in 0..3 {
                for l in 0..L {
                    hc[l] = hg[i][k][l].mul_add(geo[OFF_C + 3 * alpha + k][l], hc[l]);
                }
            }
            for l in 0..L {
                q[alpha][i][l] = (hu[l] - hc[l]) / 8.0;
            }
        }
    }
    // F, cof F, J, F⁻¹ (H2).
    let mut f = hg;
    for i in 0..3 {
        for l in 0..L {
            f[i][i][l] += 1.0;
        }
    }
    let cof = cofactor_lanes(&f);
    let mut jac = zero;
    let mut inv_j = zero;
    for l in 0..L {
        let j = f[0][0][l] * cof[0][0][l] + f[0][1][l] * cof[0][1][l] + f[0][2][l] * cof[0][2][l];
        jac[l] = j;
        inv_j[l] = 1.0 / j;
    }
    let mut finv = [[zero; 3]; 3];
    for i in 0..3 {
        for k in 0..3 {
            for l in 0..L {
                finv[i][k][l] = cof[k][i][l] * inv_j[l];
            }
        }
    }
    let mut p = [zero; 12];
    for alpha in 0..4 {
        for i in 0..3 {
            for k in 0..3 {
                for l in 0..L {
                    p[3 * alpha + i][l] =
                        finv[i][k][l].mul_add(q[alpha][k][l], p[3 * alpha + i][l]);
                }
            }
        }
    }
    // K̂ p (H3) row by row from the packed upper triangle (each stored entry read twice, for
    // its row and its column: no partial sums go back to memory).
    let mut kp = [zero; 12];
    for r in 0..12 {
        let mut acc = zero;
        for c in 0..12 {
            let kv = &geo[OFF_K + PACKED[r][c]];
            for l in 0..L {
                acc[l] = kv[l].mul_add(p[c][l], acc[l]);
            }
        }
        kp[r] = acc;
    }
    GroupState {
        f,
        finv,
        jac,
        p,
        kp,
    }
}

/// The strain energy `V W(F) + E_hg` and the hourglass energy `E_hg` (H3) of a group of
/// cells (as [`group_state`]) into `energy` and `hourglass`, lane by lane; the material at
/// the first `n` lanes; both `NaN` at a lane whose `J ≤ 0` or `NaN`.
#[inline(always)]
fn group_energies<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[Lane; GEOMETRY_LEN],
    u: &[[Lane; 3]; 8],
    n: usize,
    energy: &mut Lane,
    hourglass: &mut Lane,
) {
    const L: usize = LANES;
    let st = group_state(geo, u);
    let mut w = [0.0; L];
    material.strain_energy_lanes(&st.f, n, &mut w);
    // E_hg = ½ Σ_α p_α · (K̂ p)_α.
    let mut pkp = [0.0; L];
    for r in 0..12 {
        for l in 0..L {
            pkp[l] = st.p[r][l].mul_add(st.kp[r][l], pkp[l]);
        }
    }
    for l in 0..L {
        let hg = 0.5 * pkp[l];
        let bad = inverted(st.jac[l]);
        hourglass[l] = if bad { f64::NAN } else { hg };
        energy[l] = if bad {
            f64::NAN
        } else {
            geo[OFF_V][l].mul_add(w[l], hg)
        };
    }
}

/// `J` and the forces `f[3a + i][lane]` (H5), into `jac` and `forces`, of a group of cells
/// (as [`group_state`]); the material at the first `n` lanes.
#[inline(always)]
fn group_forces<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[Lane; GEOMETRY_LEN],
    u: &[[Lane; 3]; 8],
    n: usize,
    jac: &mut Lane,
    forces: &mut [Lane; 24],
) {
    const L: usize = LANES;
    let zero = [0.0; L];
    let GroupState { f, finv, p, kp, .. } = group_state(geo, u);
    // s_α = F⁻ᵀ (K̂ p)_α.
    let mut s = [[zero; 3]; 4];
    for alpha in 0..4 {
        for i in 0..3 {
            for k in 0..3 {
                for l in 0..L {
                    s[alpha][i][l] = finv[k][i][l].mul_add(kp[3 * alpha + k][l], s[alpha][i][l]);
                }
            }
        }
    }
    // P (the material), T and the forces (H5).
    let mut pk = [[zero; 3]; 3];
    material.first_piola_lanes(&f, n, &mut pk, jac);
    let mut t = [[zero; 3]; 3];
    for i in 0..3 {
        for k in 0..3 {
            let mut hg = zero;
            for alpha in 0..4 {
                for l in 0..L {
                    hg[l] = s[alpha][i][l].mul_add(
                        p[3 * alpha + k][l] + geo[OFF_C + 3 * alpha + k][l] / 8.0,
                        hg[l],
                    );
                }
            }
            for l in 0..L {
                t[i][k][l] = geo[OFF_V][l] * pk[i][k][l] - hg[l];
            }
        }
    }
    for a in 0..8 {
        for i in 0..3 {
            let fa = &mut forces[3 * a + i];
            *fa = zero;
            for k in 0..3 {
                for l in 0..L {
                    fa[l] = t[i][k][l].mul_add(geo[3 * a + k][l], fa[l]);
                }
            }
            for alpha in 0..4 {
                for l in 0..L {
                    fa[l] += HOURGLASS[alpha][a] * (0.125 * s[alpha][i][l]);
                }
            }
        }
    }
}
