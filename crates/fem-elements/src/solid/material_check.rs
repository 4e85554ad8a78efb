//! Checks of a [`Hyperelastic`] material against central differences of its own energy: the
//! helper every shipped material's tests call, public so that a downstream material is checked
//! the same way.
//!
//! For each deformation gradient `F` of a sample, with a step `h` on the entries of `F`:
//!
//! ```text
//! stress:   P = F S        against   (W(F + h e_ab) − W(F − h e_ab)) / 2h          (P = ∂W/∂F)
//! tangent:  D δE           against   (S(F + h e_ab) − S(F − h e_ab)) / 2h,   δE = sym(Fᵀ e_ab)
//! symmetry: D = Dᵀ                                                           (a hyperelastic 𝒞)
//! P:        first_piola(F) against F S, and the lane methods against the point methods
//! ```
//!
//! Errors are relative: the stress's to the largest `|P|` of the sample (or, if the sample is
//! unstressed, the largest `|D|`), the tangent's and the symmetry's to the largest `|D|`. The
//! truncation error of the differences is `O(h²)` and their round-off `O(ε W / h)`; with the
//! default `h = 1e-6` a correct material agrees to about `1e-8`, and a wrong derivative (a sign,
//! a factor 2 on the shears, a missing term) is off by `O(1)`.

use super::material::{
    Hyperelastic, LANES, LaneMatrix, Lanes, Mat3, VOIGT_PAIRS, det3, mat_mul, set_lane,
    voigt_to_matrix,
};

/// The finite-difference step on the entries of `F`.
pub const STEP: f64 = 1e-6;

/// The worst relative disagreements found by [`check_material`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MaterialCheck {
    /// `|F S − ∂W/∂F|`, relative.
    pub stress: f64,
    /// `|D δE − δS|` over the directions `δF = e_a ⊗ e_b`, relative.
    pub tangent: f64,
    /// `|D − Dᵀ|`, relative.
    pub symmetry: f64,
    /// `first_piola` and the lane methods against `F S`, `W` and `det F` point by point,
    /// relative.
    pub consistency: f64,
    /// Deformation gradients checked.
    pub samples: usize,
}

/// Which check of [`MaterialCheck::passes`] failed.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum MaterialCheckError {
    /// The stress is not the derivative of the energy.
    #[error(
        "the stress is not the derivative of the energy: P = F S differs from central differences of W by {error:e} (relative; allowed {tolerance:e})"
    )]
    Stress {
        /// The relative error found.
        error: f64,
        /// The tolerance.
        tolerance: f64,
    },
    /// The tangent is not the derivative of the stress.
    #[error(
        "the tangent is not the derivative of the stress: D dE differs from central differences of S by {error:e} (relative; allowed {tolerance:e})"
    )]
    Tangent {
        /// The relative error found.
        error: f64,
        /// The tolerance.
        tolerance: f64,
    },
    /// The tangent is not symmetric.
    #[error(
        "the tangent D is not symmetric: |D - D^T| = {error:e} (relative; allowed {tolerance:e})"
    )]
    Symmetry {
        /// The relative error found.
        error: f64,
        /// The tolerance.
        tolerance: f64,
    },
    /// `first_piola` or a lane method disagrees with the point methods.
    #[error(
        "first_piola or a lane method disagrees with F S, W or det F by {error:e} (relative; allowed {tolerance:e})"
    )]
    Consistency {
        /// The relative error found.
        error: f64,
        /// The tolerance.
        tolerance: f64,
    },
    /// A value that is not finite at a sample point with `det F > 0`.
    #[error("a stress, tangent or energy is not finite at a sample with det F > 0")]
    NonFinite,
    /// No sample.
    #[error("no deformation gradient to check")]
    Empty,
}

impl MaterialCheck {
    /// `Ok` when every error is below `tolerance` (the differences themselves are good to
    /// about `1e-8`: `1e-6` is a sensible tolerance), else the first failed check.
    pub fn passes(&self, tolerance: f64) -> Result<(), MaterialCheckError> {
        if self.samples == 0 {
            return Err(MaterialCheckError::Empty);
        }
        let all = [self.stress, self.tangent, self.symmetry, self.consistency];
        if all.iter().any(|e| !e.is_finite()) {
            return Err(MaterialCheckError::NonFinite);
        }
        if self.stress > tolerance {
            return Err(MaterialCheckError::Stress {
                error: self.stress,
                tolerance,
            });
        }
        if self.tangent > tolerance {
            return Err(MaterialCheckError::Tangent {
                error: self.tangent,
                tolerance,
            });
        }
        if self.symmetry > tolerance {
            return Err(MaterialCheckError::Symmetry {
                error: self.symmetry,
                tolerance,
            });
        }
        if self.consistency > tolerance {
            return Err(MaterialCheckError::Consistency {
                error: self.consistency,
                tolerance,
            });
        }
        Ok(())
    }
}

/// `n` deformation gradients `I + a R` with `R` pseudo-random entries in `[−½, ½)` (xorshift
/// from `seed`), keeping those with `det F > 0.2`: stretches and shears of about ±`a`.
pub fn sample_deformation_gradients(n: usize, amplitude: f64, seed: u64) -> Vec<Mat3> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2545_f491_4f6c_dd1d;
    if state == 0 {
        state = 1;
    }
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut out = Vec::with_capacity(n);
    // At most 100 n draws (a sample with det F ≤ 0.2 is rare for amplitudes below 0.5).
    for _ in 0..100 * n.max(1) {
        if out.len() == n {
            break;
        }
        let f: Mat3 = std::array::from_fn(|i| {
            std::array::from_fn(|j| if i == j { 1.0 } else { 0.0 } + 2.0 * amplitude * next())
        });
        if det3(&f) > 0.2 {
            out.push(f);
        }
    }
    out
}

fn max_abs(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().fold(0.0, |a, v| a.max(v.abs()))
}

/// Checks `material` at every `F` of `gradients` (see the [module docs](self)) with the
/// step [`STEP`].
pub fn check_material<M: Hyperelastic + ?Sized>(material: &M, gradients: &[Mat3]) -> MaterialCheck {
    let h = STEP;
    let mut p_scale: f64 = 0.0;
    let mut d_scale: f64 = 0.0;
    for f in gradients {
        let (s, d) = material.pk2_stress_and_tangent(f);
        p_scale = p_scale.max(max_abs(
            mat_mul(f, &voigt_to_matrix(&s)).into_iter().flatten(),
        ));
        d_scale = d_scale.max(max_abs(d.into_iter().flatten()));
    }
    let stress_scale = if p_scale > 0.0 { p_scale } else { d_scale };
    let rel = |e: f64, scale: f64| if scale > 0.0 { e / scale } else { e };
    let mut out = MaterialCheck {
        samples: gradients.len(),
        ..MaterialCheck::default()
    };
    for f in gradients {
        let (s, d) = material.pk2_stress_and_tangent(f);
        let s_alone = material.pk2_stress(f);
        let p = mat_mul(f, &voigt_to_matrix(&s));
        let (p_direct, j) = material.first_piola(f);
        let mut consistency = max_abs((0..6).map(|r| s_alone[r] - s[r]));
        consistency = consistency.max(max_abs(
            (0..9).map(|k| p_direct[k / 3][k % 3] - p[k / 3][k % 3]),
        ));
        out.consistency = out
            .consistency
            .max(rel(consistency, stress_scale))
            .max((j - det3(f)).abs() / det3(f).abs().max(1.0));
        for a in 0..3 {
            for b in 0..3 {
                let (mut fp, mut fm) = (*f, *f);
                fp[a][b] += h;
                fm[a][b] -= h;
                let dw = (material.strain_energy(&fp) - material.strain_energy(&fm)) / (2.0 * h);
                out.stress = out.stress.max(rel((dw - p[a][b]).abs(), stress_scale));
                let (sp, sm) = (material.pk2_stress(&fp), material.pk2_stress(&fm));
                // δE = sym(Fᵀ δF) with δF = e_a ⊗ e_b, engineering shears.
                let de: [f64; 6] = std::array::from_fn(|r| {
                    let (k, l) = VOIGT_PAIRS[r];
                    let sym = 0.5
                        * (f[a][k] * if l == b { 1.0 } else { 0.0 }
                            + f[a][l] * if k == b { 1.0 } else { 0.0 });
                    if r < 3 { sym } else { 2.0 * sym }
                });
                for r in 0..6 {
                    let lin: f64 = (0..6).map(|c| d[r][c] * de[c]).sum();
                    let ds = (sp[r] - sm[r]) / (2.0 * h);
                    out.tangent = out.tangent.max(rel((lin - ds).abs(), d_scale));
                }
            }
        }
        for r in 0..6 {
            for c in 0..6 {
                out.symmetry = out.symmetry.max(rel((d[r][c] - d[c][r]).abs(), d_scale));
            }
        }
    }
    // The lane methods against the point methods, all lanes filled and one partial batch.
    for batch in gradients.chunks(LANES) {
        for n in [batch.len(), batch.len().saturating_sub(1)] {
            let mut f: LaneMatrix = [[[0.0; LANES]; 3]; 3];
            for (q, fq) in batch.iter().enumerate() {
                set_lane(&mut f, q, fq);
            }
            let mut p: LaneMatrix = [[[0.0; LANES]; 3]; 3];
            let (mut jac, mut w): (Lanes, Lanes) = ([0.0; LANES], [0.0; LANES]);
            material.first_piola_lanes(&f, n, &mut p, &mut jac);
            material.strain_energy_lanes(&f, n, &mut w);
            for (q, fq) in batch.iter().take(n).enumerate() {
                let (pq, j) = material.first_piola(fq);
                let wq = material.strain_energy(fq);
                let mut e = max_abs((0..9).map(|k| p[k / 3][k % 3][q] - pq[k / 3][k % 3]));
                e = rel(e, stress_scale);
                e = e.max((jac[q] - j).abs() / j.abs().max(1.0));
                e = e.max((w[q] - wq).abs() / wq.abs().max(stress_scale).max(1e-300));
                out.consistency = out.consistency.max(e);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solid::material::{Material, MaterialModel};

    #[test]
    fn every_shipped_material_passes() {
        let gradients = sample_deformation_gradients(12, 0.3, 7);
        assert_eq!(gradients.len(), 12);
        for model in [
            MaterialModel::SaintVenantKirchhoff,
            MaterialModel::NeoHookean,
            MaterialModel::NeoHookeanLog,
        ] {
            for (e, nu) in [(210.0, 0.3), (3.0, 0.49), (1.0, -0.2)] {
                let m = Material::new(model, e, nu).unwrap();
                let check = check_material(&m, &gradients);
                assert!(
                    check.passes(1e-6).is_ok(),
                    "{model} E={e} nu={nu}: {check:?}"
                );
                // A finite-difference check at this step resolves far below the tolerance.
                assert!(
                    check.stress < 1e-7 && check.tangent < 1e-7,
                    "{model}: {check:?}"
                );
            }
        }
    }

    /// A material whose tangent has one wrong entry, and one whose stress misses a factor.
    #[derive(Debug)]
    struct Broken {
        inner: Material,
        tangent_only: bool,
    }

    impl Hyperelastic for Broken {
        fn strain_energy(&self, f: &Mat3) -> f64 {
            self.inner.energy(f)
        }
        fn pk2_stress_and_tangent(&self, f: &Mat3) -> ([f64; 6], [[f64; 6]; 6]) {
            let (mut s, mut d) = self.inner.pk2_and_tangent(f);
            if self.tangent_only {
                // A shear modulus used as 2μ instead of μ on the engineering shears.
                d[3][3] *= 2.0;
            } else {
                s[5] *= 0.5;
            }
            (s, d)
        }
    }

    #[test]
    fn a_wrong_derivative_is_found_and_named() {
        let inner = Material::new(MaterialModel::NeoHookean, 10.0, 0.3).unwrap();
        let gradients = sample_deformation_gradients(5, 0.2, 3);
        let wrong_tangent = Broken {
            inner,
            tangent_only: true,
        };
        let e = check_material(&wrong_tangent, &gradients)
            .passes(1e-6)
            .unwrap_err();
        assert!(
            matches!(e, MaterialCheckError::Tangent { error, .. } if error > 1e-2),
            "{e}"
        );
        let wrong_stress = Broken {
            inner,
            tangent_only: false,
        };
        let e = check_material(&wrong_stress, &gradients)
            .passes(1e-6)
            .unwrap_err();
        assert!(
            matches!(e, MaterialCheckError::Stress { error, .. } if error > 1e-3),
            "{e}"
        );
        assert!(e.to_string().contains("derivative of the energy"));
        assert_eq!(
            check_material(&inner, &[]).passes(1.0),
            Err(MaterialCheckError::Empty)
        );
    }

    #[test]
    fn samples_are_deterministic_and_invertible() {
        let a = sample_deformation_gradients(20, 0.4, 11);
        let b = sample_deformation_gradients(20, 0.4, 11);
        assert_eq!(a, b);
        assert_eq!(a.len(), 20);
        assert!(a.iter().all(|f| det3(f) > 0.2));
        assert_ne!(a, sample_deformation_gradients(20, 0.4, 12));
    }
}
