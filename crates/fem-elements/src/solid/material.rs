//! Hyperelastic materials for total-Lagrangian solids.
//!
//! Each material is a strain energy density `W(F)` per unit reference volume; it gives the
//! second Piola–Kirchhoff stress `S = ∂W/∂E = 2 ∂W/∂C` and the material tangent
//! `𝒞 = ∂S/∂E = 4 ∂²W/∂C∂C`, with `C = FᵀF` and `E = (C − I)/2`
//! (see `docs/theory/solid.md`).
//!
//! **The material interface is the trait [`Hyperelastic`]**: `W`, `S` and `𝒞` at a
//! deformation gradient, with provided methods for `P = F S` and for batches of points (the
//! kernels' lanes). Every element kernel and `fem_assembly::SolidOperator` take any
//! `Hyperelastic`, so a Mooney–Rivlin or Gent material is one `impl` in a downstream crate;
//! [`check_material`](super::material_check::check_material) checks a material's stress and
//! tangent against central differences of its energy (the tests of every shipped material
//! call it, and so can a downstream author's).
//!
//! The shipped isotropic family is [`Material`]. With `J = det F`, `I₁ = tr C`, `λ`, `μ` the
//! Lamé constants and `κ = λ + 2μ/3` the bulk modulus:
//!
//! | [`MaterialModel`] | `W` | `S` |
//! |---|---|---|
//! | `SaintVenantKirchhoff` | `λ/2 (tr E)² + μ E:E` | `λ tr E I + 2μ E` |
//! | `NeoHookean` | `μ/2 (J^{-2/3} I₁ − 3) + κ/2 (J − 1)²` | `μ J^{-2/3} (I − I₁/3 C⁻¹) + κ J (J − 1) C⁻¹` |
//! | `NeoHookeanLog` | `μ/2 (I₁ − 3) − μ ln J + λ/2 (ln J)²` | `μ (I − C⁻¹) + λ ln J C⁻¹` |
//!
//! `NeoHookean` is the decoupled (isochoric + volumetric) form of MFEM's `NeoHookeanModel(μ, K)`
//! and felupe's `NeoHooke(mu, bulk)` — both evaluate the same `W`, checked to 1e-16 on a sample
//! `F` — so the performance comparison computes the same force. `NeoHookeanLog` is the
//! classical compressible form (Bonet & Wood, *Nonlinear Continuum Mechanics for FEA*, §6.4.3),
//! whose energy grows without bound as `J → 0⁺`. All three reduce to linear isotropic
//! elasticity with the same `λ, μ` at `F = I`.
//!
//! The tangents, with `𝕀_{C⁻¹}` the tensor `½ (C⁻¹_IK C⁻¹_JL + C⁻¹_IL C⁻¹_JK)`:
//!
//! ```text
//! SVK:           𝒞 = λ I⊗I + 2μ 𝕀
//! NeoHookean:    𝒞 = μ J^{-2/3} [ 2/9 I₁ C⁻¹⊗C⁻¹ − 2/3 (I⊗C⁻¹ + C⁻¹⊗I) + 2/3 I₁ 𝕀_{C⁻¹} ]
//!                  + κ (2J² − J) C⁻¹⊗C⁻¹ − 2κ (J² − J) 𝕀_{C⁻¹}
//! NeoHookeanLog: 𝒞 = λ C⁻¹⊗C⁻¹ + 2 (μ − λ ln J) 𝕀_{C⁻¹}
//! ```
//!
//! **Voigt convention.** Symmetric tensors are stored as 6-vectors in the order
//! `(11, 22, 33, 23, 13, 12)`: stresses by their components, strains with engineering shears
//! (`2E₂₃, 2E₁₃, 2E₁₂`). The tangent is the 6×6 matrix `D[r][c] = 𝒞_{IJKL}` with `(I, J)` the
//! pair of `r` and `(K, L)` that of `c`, so that `δS = D δE` in this convention.

use std::fmt;

/// A 3×3 matrix, row-major: `m[i][j]`.
pub type Mat3 = [[f64; 3]; 3];

/// The Voigt index pairs `(11, 22, 33, 23, 13, 12)`, zero-based.
pub const VOIGT_PAIRS: [(usize, usize); 6] = [(0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)];

/// Points evaluated together by [`Hyperelastic::first_piola_lanes`] and
/// [`Hyperelastic::strain_energy_lanes`] (the kernels' SIMD lanes: the 2×2×2 points of a hex8,
/// or eight one-point cells).
pub const LANES: usize = 8;

/// One value per lane.
pub type Lanes = [f64; LANES];

/// A 3×3 matrix per lane, struct of arrays: `m[i][j][lane]`.
pub type LaneMatrix = [[Lanes; 3]; 3];

/// A hyperelastic material: a strain energy density `W(F)` per unit reference volume, its
/// second Piola–Kirchhoff stress `S = ∂W/∂E` and its material tangent `𝒞 = ∂S/∂E` (Voigt
/// conventions of the [module docs](self)).
///
/// Implement [`strain_energy`](Self::strain_energy) and
/// [`pk2_stress_and_tangent`](Self::pk2_stress_and_tangent); the other methods have defaults
/// built on them (override [`pk2_stress`](Self::pk2_stress) and
/// [`first_piola`](Self::first_piola) when they are cheaper alone, and the `_lanes` methods
/// when the points vectorize). The kernels need `S` to be the exact derivative of `W` and `𝒞`
/// that of `S` (the internal force is then the gradient of the strain energy and the tangent
/// its Hessian): check both with
/// [`check_material`](super::material_check::check_material).
///
/// A material may return `NaN` (or any value) where `det F ≤ 0`: the kernels report such
/// points as inverted and never use what they computed there.
///
/// ```
/// use fem_elements::solid::material::{Hyperelastic, Mat3, right_cauchy_green};
/// use fem_elements::solid::material_check::{check_material, sample_deformation_gradients};
///
/// /// Saint Venant–Kirchhoff written out: W = λ/2 (tr E)² + μ E:E.
/// #[derive(Debug)]
/// struct Svk { lambda: f64, mu: f64 }
///
/// impl Hyperelastic for Svk {
///     fn strain_energy(&self, f: &Mat3) -> f64 {
///         let c = right_cauchy_green(f);
///         let e = [0.5 * (c[0] - 1.0), 0.5 * (c[1] - 1.0), 0.5 * (c[2] - 1.0), 0.5 * c[3], 0.5 * c[4], 0.5 * c[5]];
///         let tr = e[0] + e[1] + e[2];
///         let ee = e[..3].iter().map(|v| v * v).sum::<f64>() + 2.0 * e[3..].iter().map(|v| v * v).sum::<f64>();
///         0.5 * self.lambda * tr * tr + self.mu * ee
///     }
///     fn pk2_stress_and_tangent(&self, f: &Mat3) -> ([f64; 6], [[f64; 6]; 6]) {
///         let c = right_cauchy_green(f);
///         let e = [0.5 * (c[0] - 1.0), 0.5 * (c[1] - 1.0), 0.5 * (c[2] - 1.0), 0.5 * c[3], 0.5 * c[4], 0.5 * c[5]];
///         let tr = e[0] + e[1] + e[2];
///         let mut s = [0.0; 6];
///         let mut d = [[0.0; 6]; 6];
///         for r in 0..6 {
///             s[r] = 2.0 * self.mu * e[r] + if r < 3 { self.lambda * tr } else { 0.0 };
///             for c in 0..3 {
///                 if r < 3 { d[r][c] = self.lambda; }
///             }
///             d[r][r] += if r < 3 { 2.0 * self.mu } else { self.mu };
///         }
///         (s, d)
///     }
/// }
///
/// let m = Svk { lambda: 1.2, mu: 0.8 };
/// let check = check_material(&m, &sample_deformation_gradients(6, 0.3, 1));
/// assert!(check.passes(1e-6).is_ok(), "{check:?}");
/// ```
pub trait Hyperelastic: Send + Sync + fmt::Debug {
    /// Strain energy density `W(F)` per unit reference volume.
    fn strain_energy(&self, f: &Mat3) -> f64;

    /// Second Piola–Kirchhoff stress `S` and material tangent `D = ∂S/∂E` (Voigt order
    /// `11, 22, 33, 23, 13, 12`; `D` with engineering shears in `δE`, see the
    /// [module docs](self)).
    fn pk2_stress_and_tangent(&self, f: &Mat3) -> ([f64; 6], [[f64; 6]; 6]);

    /// Second Piola–Kirchhoff stress `S` alone (by default the first half of
    /// [`pk2_stress_and_tangent`](Self::pk2_stress_and_tangent)).
    fn pk2_stress(&self, f: &Mat3) -> [f64; 6] {
        self.pk2_stress_and_tangent(f).0
    }

    /// First Piola–Kirchhoff stress `P = F S = ∂W/∂F` and `J = det F`.
    fn first_piola(&self, f: &Mat3) -> (Mat3, f64) {
        (mat_mul(f, &voigt_to_matrix(&self.pk2_stress(f))), det3(f))
    }

    /// [`first_piola`](Self::first_piola) at the first `n ≤ LANES` lanes of `f` into `p` and
    /// `jac` (the other lanes are left as they are). By default point by point; a material
    /// whose formula vectorizes over the lanes overrides it (the shipped Neo-Hookean does).
    fn first_piola_lanes(&self, f: &LaneMatrix, n: usize, p: &mut LaneMatrix, jac: &mut Lanes) {
        for q in 0..n.min(LANES) {
            let (pq, j) = self.first_piola(&lane(f, q));
            set_lane(p, q, &pq);
            jac[q] = j;
        }
    }

    /// [`strain_energy`](Self::strain_energy) at the first `n ≤ LANES` lanes of `f` into `w`.
    fn strain_energy_lanes(&self, f: &LaneMatrix, n: usize, w: &mut Lanes) {
        for q in 0..n.min(LANES) {
            w[q] = self.strain_energy(&lane(f, q));
        }
    }
}

/// Lane `q` of a [`LaneMatrix`].
#[inline(always)]
pub fn lane(f: &LaneMatrix, q: usize) -> Mat3 {
    std::array::from_fn(|i| std::array::from_fn(|k| f[i][k][q]))
}

/// Sets lane `q` of a [`LaneMatrix`].
#[inline(always)]
pub fn set_lane(p: &mut LaneMatrix, q: usize, m: &Mat3) {
    for i in 0..3 {
        for k in 0..3 {
            p[i][k][q] = m[i][k];
        }
    }
}

/// Which strain energy a [`Material`] uses (formulas in the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MaterialModel {
    /// Saint Venant–Kirchhoff: linear in Green–Lagrange strain.
    SaintVenantKirchhoff,
    /// Compressible Neo-Hookean, decoupled form of MFEM and felupe.
    NeoHookean,
    /// Compressible Neo-Hookean with the `ln J` volumetric term.
    NeoHookeanLog,
}

impl MaterialModel {
    /// Snake-case name: `"saint_venant_kirchhoff"`, `"neo_hookean"`, `"neo_hookean_log"`.
    pub fn name(self) -> &'static str {
        match self {
            MaterialModel::SaintVenantKirchhoff => "saint_venant_kirchhoff",
            MaterialModel::NeoHookean => "neo_hookean",
            MaterialModel::NeoHookeanLog => "neo_hookean_log",
        }
    }
}

impl fmt::Display for MaterialModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A material parameter out of its admissible range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MaterialError {
    /// `E` not positive (or not finite).
    #[error("Young's modulus E = {value} must be positive and finite")]
    YoungModulus {
        /// The value given.
        value: f64,
    },
    /// `ν` outside `(−1, 0.5)`.
    #[error(
        "Poisson's ratio nu = {value} must lie strictly between -1 and 0.5 (0.5 is incompressible, which these compressible materials cannot represent)"
    )]
    PoissonRatio {
        /// The value given.
        value: f64,
    },
    /// `μ` not positive (or not finite).
    #[error("shear modulus mu = {value} must be positive and finite")]
    ShearModulus {
        /// The value given.
        value: f64,
    },
    /// `κ` not positive (or not finite).
    #[error("bulk modulus kappa = {value} must be positive and finite")]
    BulkModulus {
        /// The value given.
        value: f64,
    },
}

/// An isotropic hyperelastic material: a [`MaterialModel`] and its validated constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    model: MaterialModel,
    lambda: f64,
    mu: f64,
}

impl Material {
    /// The material with Young's modulus `young > 0` and Poisson's ratio
    /// `−1 < poisson < 0.5`.
    pub fn new(model: MaterialModel, young: f64, poisson: f64) -> Result<Self, MaterialError> {
        if !(young.is_finite() && young > 0.0) {
            return Err(MaterialError::YoungModulus { value: young });
        }
        if !(poisson > -1.0 && poisson < 0.5) {
            return Err(MaterialError::PoissonRatio { value: poisson });
        }
        Ok(Self {
            model,
            lambda: young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson)),
            mu: young / (2.0 * (1.0 + poisson)),
        })
    }

    /// The material with shear modulus `mu > 0` and bulk modulus `kappa > 0` (MFEM's
    /// `NeoHookeanModel(mu, K)` takes these).
    pub fn from_shear_and_bulk(
        model: MaterialModel,
        mu: f64,
        kappa: f64,
    ) -> Result<Self, MaterialError> {
        if !(mu.is_finite() && mu > 0.0) {
            return Err(MaterialError::ShearModulus { value: mu });
        }
        if !(kappa.is_finite() && kappa > 0.0) {
            return Err(MaterialError::BulkModulus { value: kappa });
        }
        Ok(Self {
            model,
            lambda: kappa - 2.0 * mu / 3.0,
            mu,
        })
    }

    /// The strain energy.
    pub fn model(&self) -> MaterialModel {
        self.model
    }

    /// First Lamé constant `λ`.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// Shear modulus `μ`.
    pub fn mu(&self) -> f64 {
        self.mu
    }

    /// Bulk modulus `κ = λ + 2μ/3`.
    pub fn bulk_modulus(&self) -> f64 {
        self.lambda + 2.0 * self.mu / 3.0
    }

    /// Young's modulus `E = μ (3λ + 2μ)/(λ + μ)`.
    pub fn young(&self) -> f64 {
        self.mu * (3.0 * self.lambda + 2.0 * self.mu) / (self.lambda + self.mu)
    }

    /// Poisson's ratio `ν = λ / (2 (λ + μ))`.
    pub fn poisson(&self) -> f64 {
        self.lambda / (2.0 * (self.lambda + self.mu))
    }

    /// P-wave modulus `λ + 2μ` (the small-strain stiffness of a longitudinal wave:
    /// `c = sqrt((λ + 2μ)/ρ)`).
    pub fn p_wave_modulus(&self) -> f64 {
        self.lambda + 2.0 * self.mu
    }

    /// Strain energy density `W(F)` per unit reference volume. `NaN` for the `ln J` model
    /// when `det F ≤ 0`.
    pub fn energy(&self, f: &Mat3) -> f64 {
        let (lambda, mu) = (self.lambda, self.mu);
        match self.model {
            MaterialModel::SaintVenantKirchhoff => {
                let e = green_lagrange(f);
                let tr = e[0] + e[1] + e[2];
                let ee = e[0] * e[0]
                    + e[1] * e[1]
                    + e[2] * e[2]
                    + 2.0 * (e[3] * e[3] + e[4] * e[4] + e[5] * e[5]);
                0.5 * lambda * tr * tr + mu * ee
            }
            MaterialModel::NeoHookean => {
                let j = det3(f);
                let i1 = frobenius2(f);
                let kappa = self.bulk_modulus();
                0.5 * mu * (i1 * inv_cbrt2(j) - 3.0) + 0.5 * kappa * (j - 1.0) * (j - 1.0)
            }
            MaterialModel::NeoHookeanLog => {
                let lnj = det3(f).ln();
                let i1 = frobenius2(f);
                0.5 * mu * (i1 - 3.0) - mu * lnj + 0.5 * lambda * lnj * lnj
            }
        }
    }

    /// First Piola–Kirchhoff stress `P = F S = ∂W/∂F` and `J = det F`: the fast path of the
    /// internal force (no `C⁻¹`, only the cofactor `J F⁻ᵀ`).
    #[inline(always)]
    pub fn first_piola(&self, f: &Mat3) -> (Mat3, f64) {
        let (lambda, mu) = (self.lambda, self.mu);
        match self.model {
            MaterialModel::SaintVenantKirchhoff => {
                let e = green_lagrange(f);
                let tr = lambda * (e[0] + e[1] + e[2]);
                let s = [
                    [tr + 2.0 * mu * e[0], 2.0 * mu * e[5], 2.0 * mu * e[4]],
                    [2.0 * mu * e[5], tr + 2.0 * mu * e[1], 2.0 * mu * e[3]],
                    [2.0 * mu * e[4], 2.0 * mu * e[3], tr + 2.0 * mu * e[2]],
                ];
                (mat_mul(f, &s), det3(f))
            }
            MaterialModel::NeoHookean => {
                let cof = cofactor(f);
                let j = f[0][0] * cof[0][0] + f[0][1] * cof[0][1] + f[0][2] * cof[0][2];
                let i1 = frobenius2(f);
                let a = mu * inv_cbrt2(j);
                // P = a F + b cof(F), cof(F) = J F⁻ᵀ.
                let b = -a * i1 / (3.0 * j) + self.bulk_modulus() * (j - 1.0);
                (combine(a, f, b, &cof), j)
            }
            MaterialModel::NeoHookeanLog => {
                let cof = cofactor(f);
                let j = f[0][0] * cof[0][0] + f[0][1] * cof[0][1] + f[0][2] * cof[0][2];
                let b = (lambda * j.ln() - mu) / j;
                (combine(mu, f, b, &cof), j)
            }
        }
    }

    /// Second Piola–Kirchhoff stress `S` (Voigt order `11, 22, 33, 23, 13, 12`).
    pub fn pk2(&self, f: &Mat3) -> [f64; 6] {
        self.pk2_and_tangent(f).0
    }

    /// `S` and the material tangent `D = ∂S/∂E` (Voigt, see the [module docs](self)).
    pub fn pk2_and_tangent(&self, f: &Mat3) -> ([f64; 6], [[f64; 6]; 6]) {
        let (lambda, mu) = (self.lambda, self.mu);
        let identity = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0];
        match self.model {
            MaterialModel::SaintVenantKirchhoff => {
                let e = green_lagrange(f);
                let tr = e[0] + e[1] + e[2];
                let s = std::array::from_fn(|r| lambda * tr * identity[r] + 2.0 * mu * e[r]);
                let mut d = [[0.0; 6]; 6];
                for r in 0..6 {
                    for c in 0..6 {
                        d[r][c] = lambda * identity[r] * identity[c];
                    }
                    d[r][r] += if r < 3 { 2.0 * mu } else { mu };
                }
                (s, d)
            }
            MaterialModel::NeoHookean => {
                let c = right_cauchy_green(f);
                let j = det3(f);
                let ci = sym_inverse(&c);
                let i1 = c[0] + c[1] + c[2];
                let kappa = self.bulk_modulus();
                let a = mu * inv_cbrt2(j);
                let s = std::array::from_fn(|r| {
                    a * (identity[r] - i1 / 3.0 * ci[r]) + kappa * j * (j - 1.0) * ci[r]
                });
                let cc = outer(&ci, &ci);
                let ic = outer(&identity, &ci);
                let ii = inverse_product(&ci);
                let mut d = [[0.0; 6]; 6];
                for r in 0..6 {
                    for k in 0..6 {
                        d[r][k] = a
                            * (2.0 / 9.0 * i1 * cc[r][k] - 2.0 / 3.0 * (ic[r][k] + ic[k][r])
                                + 2.0 / 3.0 * i1 * ii[r][k])
                            + kappa * (2.0 * j * j - j) * cc[r][k]
                            - 2.0 * kappa * (j * j - j) * ii[r][k];
                    }
                }
                (s, d)
            }
            MaterialModel::NeoHookeanLog => {
                let c = right_cauchy_green(f);
                let lnj = det3(f).ln();
                let ci = sym_inverse(&c);
                let s = std::array::from_fn(|r| mu * (identity[r] - ci[r]) + lambda * lnj * ci[r]);
                let cc = outer(&ci, &ci);
                let ii = inverse_product(&ci);
                let mut d = [[0.0; 6]; 6];
                for r in 0..6 {
                    for k in 0..6 {
                        d[r][k] = lambda * cc[r][k] + 2.0 * (mu - lambda * lnj) * ii[r][k];
                    }
                }
                (s, d)
            }
        }
    }
}

impl Hyperelastic for Material {
    fn strain_energy(&self, f: &Mat3) -> f64 {
        self.energy(f)
    }

    fn pk2_stress_and_tangent(&self, f: &Mat3) -> ([f64; 6], [[f64; 6]; 6]) {
        Material::pk2_and_tangent(self, f)
    }

    fn pk2_stress(&self, f: &Mat3) -> [f64; 6] {
        self.pk2(f)
    }

    #[inline(always)]
    fn first_piola(&self, f: &Mat3) -> (Mat3, f64) {
        Material::first_piola(self, f)
    }

    /// Struct-of-arrays over the lanes, one simple loop per quantity, so that every loop
    /// vectorizes (one loop over the lanes with the whole formula in its body does not), for
    /// the Neo-Hookean model of the performance comparison; the other models go point by
    /// point.
    #[inline(always)]
    fn first_piola_lanes(&self, f: &LaneMatrix, n: usize, p: &mut LaneMatrix, jac: &mut Lanes) {
        if self.model != MaterialModel::NeoHookean || n != LANES {
            for q in 0..n.min(LANES) {
                let (pq, j) = Material::first_piola(self, &lane(f, q));
                set_lane(p, q, &pq);
                jac[q] = j;
            }
            return;
        }
        let mu = self.mu;
        let kappa = self.bulk_modulus();
        let cof = cofactor_lanes(f);
        let mut i1 = [0.0; LANES];
        for row in f {
            for col in row {
                for q in 0..LANES {
                    i1[q] += col[q] * col[q];
                }
            }
        }
        let mut a = [0.0; LANES];
        let mut b = [0.0; LANES];
        for q in 0..LANES {
            let j =
                f[0][0][q] * cof[0][0][q] + f[0][1][q] * cof[0][1][q] + f[0][2][q] * cof[0][2][q];
            jac[q] = j;
            // P = a F + b cof(F), cof(F) = J F⁻ᵀ (as `Material::first_piola`).
            let aq = mu * inv_cbrt2(j);
            b[q] = -aq * i1[q] / (3.0 * j) + kappa * (j - 1.0);
            a[q] = aq;
        }
        for i in 0..3 {
            for k in 0..3 {
                for q in 0..LANES {
                    p[i][k][q] = a[q] * f[i][k][q] + b[q] * cof[i][k][q];
                }
            }
        }
    }

    /// Struct-of-arrays as [`first_piola_lanes`](Self::first_piola_lanes), so that the
    /// Neo-Hookean loop (with its branch-free `J^{-2/3}`) vectorizes instead of running eight
    /// dependent Newton chains one after the other.
    #[inline(always)]
    fn strain_energy_lanes(&self, f: &LaneMatrix, n: usize, w: &mut Lanes) {
        if self.model != MaterialModel::NeoHookean || n != LANES {
            for q in 0..n.min(LANES) {
                w[q] = self.energy(&lane(f, q));
            }
            return;
        }
        let mu = self.mu;
        let kappa = self.bulk_modulus();
        let mut i1 = [0.0; LANES];
        for row in f {
            for col in row {
                for q in 0..LANES {
                    i1[q] += col[q] * col[q];
                }
            }
        }
        for q in 0..LANES {
            let j = f[0][0][q] * (f[1][1][q] * f[2][2][q] - f[1][2][q] * f[2][1][q])
                - f[0][1][q] * (f[1][0][q] * f[2][2][q] - f[1][2][q] * f[2][0][q])
                + f[0][2][q] * (f[1][0][q] * f[2][1][q] - f[1][1][q] * f[2][0][q]);
            w[q] = 0.5 * mu * (i1[q] * inv_cbrt2(j) - 3.0) + 0.5 * kappa * (j - 1.0) * (j - 1.0);
        }
    }
}

/// `J^{-2/3}` for `J > 0`, branch-free so that loops over quadrature points vectorize.
///
/// An initial guess for `y = J^{-1/3}` from the exponent bits (`bits(y) ≈ (4/3) bits(1) −
/// bits(J)/3`, on the upper 32 bits, with integer operations SSE2 has) is refined by five
/// Newton steps `y ← y + y (1 − J y³)/3`: relative error below 1e-15 (a few ulp) for `J` in
/// `[1e-12, 1e12]`
/// (tested), where libm's `cbrt` is a call that stops the loop vectorizer. Meaningless for
/// `J ≤ 0` or non-finite `J`; callers check `J` themselves.
#[inline(always)]
pub(crate) fn inv_cbrt2(j: f64) -> f64 {
    let hi = j.to_bits() >> 32;
    let third = (hi * 0x5555_5556) >> 32;
    let mut y = f64::from_bits(0x5540_0000_u64.wrapping_sub(third) << 32);
    for _ in 0..5 {
        y += y * (1.0 - j * y * y * y) * (1.0 / 3.0);
    }
    y * y
}

/// `det F`.
#[inline(always)]
pub fn det3(f: &Mat3) -> f64 {
    f[0][0] * (f[1][1] * f[2][2] - f[1][2] * f[2][1])
        - f[0][1] * (f[1][0] * f[2][2] - f[1][2] * f[2][0])
        + f[0][2] * (f[1][0] * f[2][1] - f[1][1] * f[2][0])
}

/// [`cofactor`] at every lane of `f` (`f[i][k][lane]`): `cof_ik = f_{i+1,k+1} f_{i+2,k+2} −
/// f_{i+1,k+2} f_{i+2,k+1}` (indices mod 3), one loop over the lanes per entry so that it
/// vectorizes; the same products as [`cofactor`], hence its bits at each lane.
#[inline(always)]
pub(crate) fn cofactor_lanes<const Q: usize>(f: &[[[f64; Q]; 3]; 3]) -> [[[f64; Q]; 3]; 3] {
    let mut cof = [[[0.0; Q]; 3]; 3];
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for k in 0..3 {
            let (k1, k2) = ((k + 1) % 3, (k + 2) % 3);
            for q in 0..Q {
                cof[i][k][q] = f[i1][k1][q] * f[i2][k2][q] - f[i1][k2][q] * f[i2][k1][q];
            }
        }
    }
    cof
}

/// Cofactor matrix `cof F = (det F) F⁻ᵀ` (defined for singular `F` too).
#[inline(always)]
pub fn cofactor(f: &Mat3) -> Mat3 {
    [
        [
            f[1][1] * f[2][2] - f[1][2] * f[2][1],
            f[1][2] * f[2][0] - f[1][0] * f[2][2],
            f[1][0] * f[2][1] - f[1][1] * f[2][0],
        ],
        [
            f[0][2] * f[2][1] - f[0][1] * f[2][2],
            f[0][0] * f[2][2] - f[0][2] * f[2][0],
            f[0][1] * f[2][0] - f[0][0] * f[2][1],
        ],
        [
            f[0][1] * f[1][2] - f[0][2] * f[1][1],
            f[0][2] * f[1][0] - f[0][0] * f[1][2],
            f[0][0] * f[1][1] - f[0][1] * f[1][0],
        ],
    ]
}

/// `F : F = tr FᵀF`.
#[inline(always)]
fn frobenius2(f: &Mat3) -> f64 {
    let mut s = 0.0;
    for row in f {
        for v in row {
            s += v * v;
        }
    }
    s
}

/// `a A + b B`.
#[inline(always)]
fn combine(a: f64, x: &Mat3, b: f64, y: &Mat3) -> Mat3 {
    std::array::from_fn(|i| std::array::from_fn(|j| a * x[i][j] + b * y[i][j]))
}

/// `A B`.
#[inline(always)]
pub fn mat_mul(x: &Mat3, y: &Mat3) -> Mat3 {
    std::array::from_fn(|i| {
        std::array::from_fn(|j| x[i][0] * y[0][j] + x[i][1] * y[1][j] + x[i][2] * y[2][j])
    })
}

/// The first elasticity tensor `A = ∂P/∂F` (`P = F S`) from `F`, `S` and `D = ∂S/∂E` (Voigt, as
/// [`Hyperelastic::pk2_stress_and_tangent`] returns them): `A[3i + J][3k + L] = δ_ik S_JL +
/// Σ_IK F_iI F_kK 𝒞_IJKL`, the 9×9 matrix with `δP = A δF` (row-major `F` and `P`).
pub fn first_elasticity(f: &Mat3, s: &[f64; 6], d: &[[f64; 6]; 6]) -> [[f64; 9]; 9] {
    let voigt = |i: usize, j: usize| -> usize {
        match (i.min(j), i.max(j)) {
            (0, 0) => 0,
            (1, 1) => 1,
            (2, 2) => 2,
            (1, 2) => 3,
            (0, 2) => 4,
            _ => 5,
        }
    };
    let sm = voigt_to_matrix(s);
    // G[i][J][K][L] = Σ_I F_iI 𝒞_IJKL, then A = δ S + Σ_K F_kK G[i][J][K][L].
    let mut g = [[[[0.0; 3]; 3]; 3]; 3];
    for i in 0..3 {
        for jj in 0..3 {
            for kk in 0..3 {
                for ll in 0..3 {
                    let c = voigt(kk, ll);
                    g[i][jj][kk][ll] = (0..3).map(|ii| f[i][ii] * d[voigt(ii, jj)][c]).sum();
                }
            }
        }
    }
    let mut a = [[0.0; 9]; 9];
    for i in 0..3 {
        for jj in 0..3 {
            for k in 0..3 {
                for ll in 0..3 {
                    let mut v: f64 = (0..3).map(|kk| f[k][kk] * g[i][jj][kk][ll]).sum();
                    if i == k {
                        v += sm[jj][ll];
                    }
                    a[3 * i + jj][3 * k + ll] = v;
                }
            }
        }
    }
    a
}

/// `C = FᵀF` in Voigt order.
#[inline(always)]
pub fn right_cauchy_green(f: &Mat3) -> [f64; 6] {
    let c = |a: usize, b: usize| f[0][a] * f[0][b] + f[1][a] * f[1][b] + f[2][a] * f[2][b];
    VOIGT_PAIRS.map(|(a, b)| c(a, b))
}

/// `E = (FᵀF − I)/2` in Voigt order (tensor components, not engineering shears).
#[inline(always)]
pub fn green_lagrange(f: &Mat3) -> [f64; 6] {
    let c = right_cauchy_green(f);
    [
        0.5 * (c[0] - 1.0),
        0.5 * (c[1] - 1.0),
        0.5 * (c[2] - 1.0),
        0.5 * c[3],
        0.5 * c[4],
        0.5 * c[5],
    ]
}

/// Inverse of a symmetric matrix given in Voigt order.
fn sym_inverse(c: &[f64; 6]) -> [f64; 6] {
    let [c11, c22, c33, c23, c13, c12] = *c;
    let a11 = c22 * c33 - c23 * c23;
    let a22 = c11 * c33 - c13 * c13;
    let a33 = c11 * c22 - c12 * c12;
    let a23 = c12 * c13 - c11 * c23;
    let a13 = c12 * c23 - c22 * c13;
    let a12 = c13 * c23 - c12 * c33;
    let det = c11 * a11 + c12 * a12 + c13 * a13;
    [a11, a22, a33, a23, a13, a12].map(|a| a / det)
}

/// The full 3×3 symmetric matrix of a Voigt 6-vector.
pub fn voigt_to_matrix(s: &[f64; 6]) -> Mat3 {
    [[s[0], s[5], s[4]], [s[5], s[1], s[3]], [s[4], s[3], s[2]]]
}

/// `a ⊗ b` of two symmetric tensors, in the Voigt tangent convention.
fn outer(a: &[f64; 6], b: &[f64; 6]) -> [[f64; 6]; 6] {
    std::array::from_fn(|r| std::array::from_fn(|c| a[r] * b[c]))
}

/// `½ (A_IK A_JL + A_IL A_JK)` for a symmetric `A`, in the Voigt tangent convention.
fn inverse_product(a: &[f64; 6]) -> [[f64; 6]; 6] {
    let m = voigt_to_matrix(a);
    std::array::from_fn(|r| {
        std::array::from_fn(|c| {
            let ((i, j), (k, l)) = (VOIGT_PAIRS[r], VOIGT_PAIRS[c]);
            0.5 * (m[i][k] * m[j][l] + m[i][l] * m[j][k])
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODELS: [MaterialModel; 3] = [
        MaterialModel::SaintVenantKirchhoff,
        MaterialModel::NeoHookean,
        MaterialModel::NeoHookeanLog,
    ];

    /// Deformation gradients with stretches of ±30 % and shears, all with `J > 0`.
    fn sample_gradients() -> Vec<Mat3> {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        (0..5)
            .map(|_| {
                std::array::from_fn(|i| {
                    std::array::from_fn(|j| if i == j { 1.0 } else { 0.0 } + 0.6 * next())
                })
            })
            .filter(|f| det3(f) > 0.2)
            .collect()
    }

    #[test]
    fn stress_and_tangent_match_central_differences_of_the_energy() {
        let gradients = sample_gradients();
        assert!(gradients.len() >= 3);
        for model in MODELS {
            let m = Material::new(model, 210.0, 0.3).unwrap();
            for f in &gradients {
                let (s, d) = m.pk2_and_tangent(f);
                let (p, j) = m.first_piola(f);
                assert!((j - det3(f)).abs() < 1e-14);
                let p_from_s = mat_mul(f, &voigt_to_matrix(&s));
                let scale = 1.0 + p.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
                let h = 1e-6;
                for a in 0..3 {
                    for b in 0..3 {
                        // P = F S = ∂W/∂F.
                        assert!((p[a][b] - p_from_s[a][b]).abs() < 1e-12 * scale, "{model}");
                        let (mut fp, mut fm) = (*f, *f);
                        fp[a][b] += h;
                        fm[a][b] -= h;
                        let dw = (m.energy(&fp) - m.energy(&fm)) / (2.0 * h);
                        assert!(
                            (dw - p[a][b]).abs() < 1e-7 * scale,
                            "{model} P{a}{b}: {dw} vs {}",
                            p[a][b]
                        );
                        // dS = D δE with δE = sym(Fᵀ δF), δF = e_a ⊗ e_b (engineering shears).
                        let ds: Vec<f64> = (0..6)
                            .map(|r| (m.pk2(&fp)[r] - m.pk2(&fm)[r]) / (2.0 * h))
                            .collect();
                        let de: [f64; 6] = std::array::from_fn(|r| {
                            let (k, l) = VOIGT_PAIRS[r];
                            let sym = 0.5
                                * (f[a][k] * if l == b { 1.0 } else { 0.0 }
                                    + f[a][l] * if k == b { 1.0 } else { 0.0 });
                            if r < 3 { sym } else { 2.0 * sym }
                        });
                        let dscale = 1.0 + d.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
                        for r in 0..6 {
                            let lin: f64 = (0..6).map(|c| d[r][c] * de[c]).sum();
                            assert!(
                                (lin - ds[r]).abs() < 1e-7 * dscale,
                                "{model} D row {r} dir {a}{b}: {lin} vs {}",
                                ds[r]
                            );
                        }
                    }
                }
                // Major symmetry of the tangent (hyperelastic).
                for r in 0..6 {
                    for c in 0..6 {
                        assert!((d[r][c] - d[c][r]).abs() < 1e-12 * (1.0 + d[r][c].abs()));
                    }
                }
            }
        }
    }

    #[test]
    fn every_model_passes_the_public_finite_difference_check() {
        let gradients = crate::solid::material_check::sample_deformation_gradients(8, 0.3, 5);
        for model in MODELS {
            let m = Material::new(model, 210.0, 0.3).unwrap();
            let check = crate::solid::material_check::check_material(&m, &gradients);
            check
                .passes(1e-7)
                .unwrap_or_else(|e| panic!("{model}: {e}"));
        }
    }

    #[test]
    fn first_elasticity_is_the_derivative_of_the_first_piola_stress() {
        for model in MODELS {
            let m = Material::new(model, 50.0, 0.35).unwrap();
            for f in sample_gradients() {
                let (s, d) = m.pk2_and_tangent(&f);
                let a = first_elasticity(&f, &s, &d);
                let scale = a.iter().flatten().fold(0.0f64, |x, v| x.max(v.abs()));
                let h = 1e-6;
                for col in 0..9 {
                    let (mut fp, mut fm) = (f, f);
                    fp[col / 3][col % 3] += h;
                    fm[col / 3][col % 3] -= h;
                    let (pp, pm) = (m.first_piola(&fp).0, m.first_piola(&fm).0);
                    for row in 0..9 {
                        let fd = (pp[row / 3][row % 3] - pm[row / 3][row % 3]) / (2.0 * h);
                        assert!(
                            (fd - a[row][col]).abs() < 1e-7 * scale,
                            "{model} A[{row}][{col}]"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_model_is_linear_elasticity_at_the_reference_state() {
        let identity: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        for model in MODELS {
            let m = Material::new(model, 3.0, 0.25).unwrap();
            assert!(m.energy(&identity).abs() < 1e-15);
            let (s, d) = m.pk2_and_tangent(&identity);
            assert!(s.iter().all(|v| v.abs() < 1e-15), "{model} {s:?}");
            let (lambda, mu) = (m.lambda(), m.mu());
            for r in 0..6 {
                for c in 0..6 {
                    let mut want = if r < 3 && c < 3 { lambda } else { 0.0 };
                    if r == c {
                        want += if r < 3 { 2.0 * mu } else { mu };
                    }
                    assert!((d[r][c] - want).abs() < 1e-14, "{model} D[{r}][{c}]");
                }
            }
            assert!((m.young() - 3.0).abs() < 1e-14 && (m.poisson() - 0.25).abs() < 1e-15);
        }
    }

    #[test]
    fn neo_hookean_matches_mfem_and_felupe_energy() {
        // The value MFEM's NeoHookeanModel(0.25, 5).EvalW and felupe's NeoHooke(0.25, 5)
        // both return for this F (evaluated with PyMFEM 4.10 and felupe 11.3).
        let m = Material::from_shear_and_bulk(MaterialModel::NeoHookean, 0.25, 5.0).unwrap();
        let f = [[1.1, 0.2, 0.05], [-0.1, 0.95, 0.1], [0.03, 0.07, 1.2]];
        assert!((m.energy(&f) - 0.192_181_168_250_124_4).abs() < 1e-15);
    }

    #[test]
    fn fast_inverse_cube_root_is_accurate() {
        let mut worst: f64 = 0.0;
        for e in -120..=120 {
            for m in [1.0, 1.1, 1.37, 1.5, 1.9, 2.3, 3.99] {
                let j = m * 10f64.powf(e as f64 / 10.0);
                // (libm's cbrt is correctly rounded to ~1 ulp; powf(j, -2/3) is not a good reference
                // because -2/3 is not exact in binary.)
                let c = j.cbrt();
                let exact = 1.0 / (c * c);
                worst = worst.max((inv_cbrt2(j) - exact).abs() / exact);
            }
        }
        assert!(worst < 1e-15, "{worst:e}");
        assert_eq!(inv_cbrt2(1.0), 1.0);
    }

    #[test]
    fn invalid_constants_are_refused_with_the_parameter_named() {
        let model = MaterialModel::NeoHookean;
        for (e, nu, err) in [
            (0.0, 0.3, MaterialError::YoungModulus { value: 0.0 }),
            (-1.0, 0.3, MaterialError::YoungModulus { value: -1.0 }),
            (1.0, 0.5, MaterialError::PoissonRatio { value: 0.5 }),
            (1.0, 0.7, MaterialError::PoissonRatio { value: 0.7 }),
            (1.0, -1.0, MaterialError::PoissonRatio { value: -1.0 }),
        ] {
            assert_eq!(Material::new(model, e, nu), Err(err));
        }
        assert!(Material::new(model, f64::NAN, 0.3).is_err());
        assert!(Material::new(model, 1.0, f64::NAN).is_err());
        assert!(Material::new(model, 1.0, 0.499).is_ok());
        assert_eq!(
            Material::from_shear_and_bulk(model, 0.0, 1.0),
            Err(MaterialError::ShearModulus { value: 0.0 })
        );
        assert_eq!(
            Material::from_shear_and_bulk(model, 1.0, -2.0),
            Err(MaterialError::BulkModulus { value: -2.0 })
        );
        let message = Material::new(model, 1.0, 0.5).unwrap_err().to_string();
        assert!(
            message.contains("Poisson") && message.contains("0.5"),
            "{message}"
        );
    }
}
