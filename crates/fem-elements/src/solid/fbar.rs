//! The F-bar (mean-dilatation) element for nearly incompressible materials: at every point the
//! deformation gradient's volume change is replaced by the element's.
//!
//! With `J_q = det F_q`, the element's volume ratio `J̄ = Σ_q J_q dV_q / V` (current over reference
//! volume: exact for hex8 with 2×2×2 points) and `α_q = (J̄/J_q)^{1/3}`,
//!
//! ```text
//! F̄_q = α_q F_q          (det F̄_q = J̄, the isochoric part of F̄_q is that of F_q)      (F1)
//! Π(u) = Σ_q W(F̄_q) dV_q                                                           (F2)
//! ```
//!
//! (de Souza Neto, Perić, Dutko & Owen 1996 for the kinematics; Nagtegaal, Parks & Rice 1974 for
//! the mean dilatation). For a decoupled material `W = W_iso(F) + U(J)` the volumetric energy is
//! `V U(J̄)`: one volume constraint per element instead of one per point, which removes the
//! volumetric locking of the fully integrated element (and equals the mixed Q1/P0 element of
//! Simo, Taylor & Pister 1985). Here the internal force is the exact gradient of (F2) and the
//! tangent its exact Hessian (symmetric), so the energy-conserving and implicit schemes keep
//! their properties; the usual F-bar internal force (the virtual work with the spatial gradient
//! of `δu`) is not a gradient and has an unsymmetric tangent. The two agree on constant `J`.
//!
//! With `h_q,a = F_q⁻ᵀ ∇₀N_a(ξ_q)`, `d_q = ĥ − h_q` (`ĥ = Σ_r dV_r J_r h_r / (V J̄)`, the derivative of
//! `ln J̄`), `P̄_q = P(F̄_q)`, `c_q = P̄_q : F_q` and `C = Σ_q dV_q α_q c_q / 3`:
//!
//! ```text
//! f = Σ_q dV_q T_q ∇₀N_a,   T_q = α_q (P̄_q − (c_q/3) F_q⁻ᵀ) + (C J_q / (V J̄)) F_q⁻ᵀ       (F3)
//! K = Σ_q dV_q [ G_qᵀ A_q G_q + (α_q/3)(d_q ⊗ t_q + t_q ⊗ d_q) + (α_q c_q/9) d_q ⊗ d_q
//!               + (α_q c_q/3) M_q ] + C [ Σ_r dV_r J_r (h_r ⊗ h_r − M_r) / (V J̄) − ĥ ⊗ ĥ ]   (F4)
//! ```
//!
//! where `G_q δu = α_q (δF_q + (d_q · δu) F_q / 3)` maps the element's dofs to `δF̄_q`,
//! `A_q = ∂P/∂F` at `F̄_q` ([`first_elasticity`]), `t_q,(a,i) = (P̄_q ∇₀N_a)_i` and
//! `M_q,(a,i),(b,k) = h_q,b,i h_q,a,k`. For a constant `F` every `α_q = 1`, `C` balances the
//! `c_q` terms and the element is the standard one (patch test). Derivation in
//! `docs/theory/solid.md`; the tests check (F3) and (F4) against central differences of (F2).
//!
//! Geometry: the standard layout of [`total_lagrangian`](super::total_lagrangian) (gradients and
//! `dV` at the force rule's points).

use super::material::{
    Hyperelastic, Mat3, cofactor_lanes, first_elasticity, mat_mul, voigt_to_matrix,
};
use super::total_lagrangian::{
    CellStress, PointKernels, StressAverage, contract_force, deformation_gradients,
    first_piola_points, inverted, weighted_energy,
};

/// `F_q`, `J_q`, `cof F_q` (lanes), `J̄`, `V` and `α_q` of one element.
struct Kinematics<const Q: usize> {
    f: [[[f64; Q]; 3]; 3],
    cof: [[[f64; Q]; 3]; 3],
    jac: [f64; Q],
    alpha: [f64; Q],
    jbar: f64,
    volume: f64,
}

#[inline(always)]
fn kinematics<const N: usize, const Q: usize>(
    g: &[[f64; Q]],
    dv: &[f64; Q],
    u: &[f64],
) -> Kinematics<Q> {
    let f = deformation_gradients::<N, Q>(g, u);
    let cof = cofactor_lanes(&f);
    let mut jac = [0.0; Q];
    for q in 0..Q {
        jac[q] = f[0][0][q] * cof[0][0][q] + f[0][1][q] * cof[0][1][q] + f[0][2][q] * cof[0][2][q];
    }
    let volume: f64 = dv.iter().sum();
    let current: f64 = (0..Q).map(|q| jac[q] * dv[q]).sum();
    let jbar = current / volume;
    let alpha = std::array::from_fn(|q| (jbar / jac[q]).cbrt());
    Kinematics {
        f,
        cof,
        jac,
        alpha,
        jbar,
        volume,
    }
}

impl<const Q: usize> Kinematics<Q> {
    /// `F̄_q = α_q F_q` (F1), lanes.
    fn fbar(&self) -> [[[f64; Q]; 3]; 3] {
        std::array::from_fn(|i| {
            std::array::from_fn(|k| std::array::from_fn(|q| self.alpha[q] * self.f[i][k][q]))
        })
    }

    /// The smallest `J_q` (and `J̄`): `≤ 0` or `NaN` is an inverted element.
    fn jmin(&self) -> f64 {
        if self.jbar.is_nan() || self.jac.iter().any(|j| j.is_nan()) {
            return f64::NAN;
        }
        self.jac.iter().fold(self.jbar, |m, &j| m.min(j))
    }

    fn point(&self, q: usize) -> Mat3 {
        std::array::from_fn(|i| std::array::from_fn(|k| self.f[i][k][q]))
    }
}

/// The F-bar element: the kernels (F2)–(F4) on the standard geometry layout; its entry points
/// are [`PointKernels`]' (`FBar::internal_force(material, grad, dv, u, f)`, …).
#[derive(Clone, Copy, Debug, Default)]
pub struct FBar;

impl PointKernels for FBar {
    /// Internal force (F3) of one F-bar element into `f` (`3N`, overwritten); the smallest `J`
    /// over its points (`≤ 0` or `NaN`: inverted, the force is meaningless).
    #[inline(always)]
    fn force_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
        f: &mut [f64],
    ) -> f64 {
        let k = kinematics::<N, Q>(g, dv, u);
        let jmin = k.jmin();
        if inverted(jmin) {
            f.fill(f64::NAN);
            return jmin;
        }
        let fbar = k.fbar();
        let mut p = [[[0.0; Q]; 3]; 3];
        let mut jbar_q = [0.0; Q];
        first_piola_points(material, &fbar, &mut p, &mut jbar_q);
        // c_q = P̄_q : F_q and C = Σ dV α c / 3.
        let mut c = [0.0; Q];
        for i in 0..3 {
            for kk in 0..3 {
                for q in 0..Q {
                    c[q] += p[i][kk][q] * k.f[i][kk][q];
                }
            }
        }
        let big_c: f64 = (0..Q).map(|q| dv[q] * k.alpha[q] * c[q] / 3.0).sum();
        let coupling = big_c / (k.volume * k.jbar);
        // T_q dV_q = α (P̄ − c/3 F⁻ᵀ) dV + C J/(V J̄) F⁻ᵀ dV, with F⁻ᵀ = cof F / J.
        let mut t = [[[0.0; Q]; 3]; 3];
        for i in 0..3 {
            for kk in 0..3 {
                for q in 0..Q {
                    let finv_t = k.cof[i][kk][q] / k.jac[q];
                    t[i][kk][q] = dv[q]
                        * (k.alpha[q] * (p[i][kk][q] - c[q] / 3.0 * finv_t)
                            + coupling * k.jac[q] * finv_t);
                }
            }
        }
        contract_force::<N, Q>(g, &t, f);
        jmin
    }

    /// Strain energy (F2) of one F-bar element (`NaN` if it is inverted).
    fn energy_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
    ) -> f64 {
        let k = kinematics::<N, Q>(g, dv, u);
        if inverted(k.jmin()) {
            return f64::NAN;
        }
        weighted_energy(material, &k.fbar(), dv)
    }

    /// Stress output of one F-bar element: the averages of the Cauchy stress, `J` and `W` at
    /// `F̄_q`.
    fn stress_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
    ) -> CellStress {
        let k = kinematics::<N, Q>(g, dv, u);
        let fbar = k.fbar();
        let mut acc = StressAverage::new(k.volume);
        for q in 0..Q {
            let fq: Mat3 = std::array::from_fn(|i| std::array::from_fn(|kk| fbar[i][kk][q]));
            acc.add(material, &fq, dv[q]);
        }
        acc.finish()
    }

    /// Consistent tangent (F4) of one F-bar element into `k` (`3N × 3N`, row-major, symmetric);
    /// the smallest `J` over its points.
    fn tangent_points<M: Hyperelastic + ?Sized, const N: usize, const Q: usize>(
        material: &M,
        g: &[[f64; Q]],
        dv: &[f64; Q],
        u: &[f64],
        k: &mut [f64],
    ) -> f64 {
        let kin = kinematics::<N, Q>(g, dv, u);
        let jmin = kin.jmin();
        let nd = 3 * N;
        k.fill(0.0);
        if inverted(jmin) {
            k.fill(f64::NAN);
            return jmin;
        }
        // h_q (3N per point): h_q,(a,i) = (F_q⁻ᵀ ∇₀N_a)_i; ĥ = Σ dV J h / (V J̄).
        let mut h = vec![[0.0; Q]; nd];
        let mut hhat = vec![0.0; nd];
        for a in 0..N {
            for i in 0..3 {
                for q in 0..Q {
                    let v: f64 = (0..3)
                        .map(|kk| kin.cof[i][kk][q] * g[3 * a + kk][q])
                        .sum::<f64>()
                        / kin.jac[q];
                    h[3 * a + i][q] = v;
                    hhat[3 * a + i] += dv[q] * kin.jac[q] * v;
                }
            }
        }
        for v in hhat.iter_mut() {
            *v /= kin.volume * kin.jbar;
        }
        let mut big_c = 0.0;
        let mut t = vec![0.0; nd];
        let mut d = vec![0.0; nd];
        let mut gq = vec![[0.0; 9]; nd];
        for q in 0..Q {
            let f = kin.point(q);
            let alpha = kin.alpha[q];
            let fbar: Mat3 = std::array::from_fn(|i| std::array::from_fn(|kk| alpha * f[i][kk]));
            let (s, dm) = material.pk2_stress_and_tangent(&fbar);
            let pbar = mat_mul(&fbar, &voigt_to_matrix(&s));
            let a_tensor = first_elasticity(&fbar, &s, &dm);
            let c: f64 = (0..9).map(|r| pbar[r / 3][r % 3] * f[r / 3][r % 3]).sum();
            big_c += dv[q] * alpha * c / 3.0;
            for a in 0..N {
                for i in 0..3 {
                    let r = 3 * a + i;
                    t[r] = (0..3).map(|kk| pbar[i][kk] * g[3 * a + kk][q]).sum();
                    d[r] = hhat[r] - h[r][q];
                    // G_q column (a, i): α (e_i ⊗ ∇₀N_a + d_(a,i) F / 3).
                    let mut col = [0.0; 9];
                    for m in 0..9 {
                        col[m] = alpha * d[r] * f[m / 3][m % 3] / 3.0;
                    }
                    for kk in 0..3 {
                        col[3 * i + kk] += alpha * g[3 * a + kk][q];
                    }
                    gq[r] = col;
                }
            }
            let w = dv[q];
            // A G (9 × 3N), then Gᵀ A G.
            let ag: Vec<[f64; 9]> = gq
                .iter()
                .map(|col| std::array::from_fn(|m| (0..9).map(|n| a_tensor[m][n] * col[n]).sum()))
                .collect();
            for r in 0..nd {
                for cidx in 0..nd {
                    let mat: f64 = (0..9).map(|m| gq[r][m] * ag[cidx][m]).sum();
                    let mq = h[3 * (cidx / 3) + r % 3][q] * h[3 * (r / 3) + cidx % 3][q];
                    k[r * nd + cidx] += w
                        * (mat
                            + alpha / 3.0 * (d[r] * t[cidx] + t[r] * d[cidx])
                            + alpha * c / 9.0 * d[r] * d[cidx]
                            + alpha * c / 3.0 * mq);
                }
            }
        }
        // C [ Σ_r dV_r J_r (h_r ⊗ h_r − M_r) / (V J̄) − ĥ ⊗ ĥ ].
        let scale = big_c / (kin.volume * kin.jbar);
        for q in 0..Q {
            let wj = dv[q] * kin.jac[q] * scale;
            for r in 0..nd {
                for cidx in 0..nd {
                    let mq = h[3 * (cidx / 3) + r % 3][q] * h[3 * (r / 3) + cidx % 3][q];
                    k[r * nd + cidx] += wj * (h[r][q] * h[cidx][q] - mq);
                }
            }
        }
        for r in 0..nd {
            for cidx in 0..nd {
                k[r * nd + cidx] -= big_c * hhat[r] * hhat[cidx];
            }
        }
        jmin
    }
}
