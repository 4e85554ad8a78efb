//! The hex8 with incompatible modes (enhanced assumed strain) at finite strain: the element
//! that does not lock in bending.
//!
//! The displacement gradient of the trilinear hex8 is enhanced by three incompatible "bubble"
//! modes `(1 − ξ_m²) α_m`, `m = 1, 2, 3` (Wilson, Taylor, Doherty & Ghaboussi 1973), written
//! directly as a gradient with Taylor's correction for distorted elements (Taylor, Beresford &
//! Wilson 1976), and added to `F` at finite strain as in Simo & Armero (1992):
//!
//! ```text
//! F_q = I + Σ_a u_a ⊗ ∇₀N_a(ξ_q) + Σ_m α_m ⊗ ĝ_m(ξ_q),
//! ĝ_m(ξ) = (j₀ / j(ξ)) (−2 ξ_m) (J₀⁻¹)_{m,:}                                             (E1)
//! Π(u, α) = Σ_q W(F_q) dV_q       (2×2×2 Gauss)                                         (E2)
//! ∂Π/∂α = 0  (solved in each element: Newton on the 9 parameters α)                      (E3)
//! f = ∂Π/∂u at α*(u),   K = K_uu − K_uα K_αα⁻¹ K_αu                                       (E4)
//! ```
//!
//! with `J₀`, `j₀` the Jacobian of the reference map and its determinant at the element centre,
//! `j(ξ)` the determinant at `ξ`. Because `Σ_q ĝ_m(ξ_q) dV_q = j₀ (J₀⁻¹)_{m,:} Σ_q (−2ξ_m,q) w_q = 0`,
//! a constant `F` has `α* = 0` and the element passes the patch test on any shape; because the
//! modes are three more "nodes" with gradients `ĝ_m`, (E2) is the standard kernel of
//! [`total_lagrangian`](super::total_lagrangian) on 11 nodes (the pair `(11, 8)`), and (E4) is the
//! exact gradient and Hessian of the condensed energy `Π(u, α*(u))` (since `∂Π/∂α = 0` there), so
//! the tangent is symmetric and energy-conserving schemes keep their invariants.
//!
//! The modes are solved afresh at every evaluation from `α = 0` (no state is carried between
//! steps: restarts stay bitwise and the element is a pure function of `u`), to a residual below
//! `10⁻¹²` of the element's nodal forces, or until a Newton step falls below `10⁻⁸` of the
//! modes (the state after it is then exact to round-off: quadratic convergence), typically 2–4
//! iterations. An element whose modes do not converge in [`MAX_ITERATIONS`] is reported as failed,
//! like an inverted one. Known limit (Wriggers & Reese 1996): at large compressive strains the
//! enhanced element can show hourglass-like instabilities; for those, `fbar`.

use nalgebra::{SMatrix, SVector};

use super::material::{Hyperelastic, cofactor, det3};
use super::quadrature3d::hex_gauss;
use super::shape::{Hex8, ReferenceElement, SolidKind};
use super::total_lagrangian::{
    CellStress, NonPositiveJacobian, cell_stress as generic_stress, inverted, jacobian,
    reference_geometry, strain_energy as generic_energy, tangent_stiffness as generic_tangent,
};

/// Nodes plus modes ("nodes" of the kernel).
const N: usize = 11;
/// Points (2×2×2).
const Q: usize = 8;
/// Values per cell: the generic `(11, 8)` block, gradients then `dV`.
pub const GEOMETRY_LEN: usize = (3 * N + 1) * Q;
/// Newton iterations allowed for the modes.
pub const MAX_ITERATIONS: usize = 30;
/// The modes' residual, relative to the largest nodal force, below which they are solved.
const TOLERANCE: f64 = 1e-12;
/// A Newton step on the modes this small (relative to the modes, or to a thousandth of the
/// element's size) is the last: the state after it is solved to round-off. (The residual
/// itself cannot always reach [`TOLERANCE`]: the stresses of a nearly unstressed element are
/// differences of terms of the size of the moduli.)
const STEP_TOLERANCE: f64 = 1e-8;

/// The enhanced modes of a cell did not converge.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error(
    "the enhanced (incompatible) modes did not converge in {iterations} Newton iterations (residual {residual:e} of the nodal forces)"
)]
pub struct ModesNotConverged {
    /// Iterations done.
    pub iterations: usize,
    /// The last relative residual.
    pub residual: f64,
}

/// The geometry of one hex8 (nodes `x`, Gmsh order) into `out` ([`GEOMETRY_LEN`] values): the
/// 8 nodes' reference gradients and the 3 modes' `ĝ_m` (E1) at the 2×2×2 points, then `dV`.
pub fn geometry(x: &[[f64; 3]], out: &mut [f64]) -> Result<(), NonPositiveJacobian> {
    assert_eq!(x.len(), 8);
    assert_eq!(out.len(), GEOMETRY_LEN);
    let rule = hex_gauss(2).expect("tabulated");
    let mut grad = [0.0; 3 * 8 * Q];
    let mut dv = [0.0; Q];
    reference_geometry(SolidKind::Hex8, &rule, x, &mut grad, &mut dv)?;
    let j0 = jacobian(x, &Hex8::gradients([0.0; 3]));
    let det0 = det3(&j0);
    if !(det0 > 0.0 && det0.is_finite()) {
        return Err(NonPositiveJacobian {
            point: usize::MAX,
            det: det0,
        });
    }
    let cof0 = cofactor(&j0);
    let (g, dv_out) = out.split_at_mut(3 * N * Q);
    g[..3 * 8 * Q].copy_from_slice(&grad);
    for (q, (xi, w)) in rule.points.iter().zip(&rule.weights).enumerate() {
        let jq = dv[q] / w;
        for m in 0..3 {
            for k in 0..3 {
                // (J₀⁻¹)_{mk} = cof(J₀)_{km} / j₀, so ĝ_m,k = (j₀/j)(−2ξ_m) cof(J₀)_{km}/j₀.
                g[(3 * (8 + m) + k) * Q + q] = -2.0 * xi[m] * cof0[k][m] / jq;
            }
        }
    }
    dv_out.copy_from_slice(&dv);
    Ok(())
}

/// The element's displacements followed by its solved modes `α*` (33 values), the nodal
/// forces (24) and the number of Newton iterations.
#[derive(Clone, Copy, Debug)]
pub struct Solved {
    /// `u` (24) then `α*` (9).
    pub dofs: [f64; 3 * N],
    /// `∂Π/∂u` at `α*`.
    pub force: [f64; 24],
    /// Newton iterations taken.
    pub iterations: usize,
    /// The smallest `J` over the points at `α*`.
    pub jmin: f64,
}

/// Solves (E3) for one element with geometry `geo` ([`geometry`]) and nodal displacements
/// `u` (24). An inverted point (`J ≤ 0` or `NaN`) stops the iteration: the result then has
/// `jmin ≤ 0` (or `NaN`).
pub fn solve<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64],
    u: &[f64],
) -> Result<Solved, ModesNotConverged> {
    assert_eq!(geo.len(), GEOMETRY_LEN);
    assert_eq!(u.len(), 24);
    let (grad, dv) = geo.split_at(3 * N * Q);
    let mut dofs = [0.0; 3 * N];
    dofs[..24].copy_from_slice(u);
    let mut f = [0.0; 3 * N];
    let evaluate = |dofs: &[f64; 3 * N], f: &mut [f64; 3 * N]| -> (f64, f64) {
        let jmin = super::total_lagrangian::internal_force(material, grad, dv, dofs, f);
        let scale = f[..24].iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let r = f[24..].iter().fold(0.0f64, |a, v| a.max(v.abs()));
        (jmin, if scale > 0.0 { r / scale } else { r })
    };
    let (mut jmin, mut residual) = evaluate(&dofs, &mut f);
    let solved = |dofs, f: &[f64; 3 * N], iterations, jmin| Solved {
        dofs,
        force: f[..24].try_into().expect("24 nodal forces"),
        iterations,
        jmin,
    };
    let size = dv.iter().sum::<f64>().cbrt();
    let mut last_step = false;
    for iteration in 0..MAX_ITERATIONS {
        // An inverted compatible field stays inverted (reported by `jmin`); a solved one is
        // done; so is one evaluated after a step that was already at the noise of the
        // stresses' round-off (quadratic convergence: the state is then exact to round-off).
        if inverted(jmin) || residual <= TOLERANCE || last_step {
            return Ok(solved(dofs, &f, iteration, jmin));
        }
        let kaa = modes_block(material, grad, dv, &dofs);
        let rhs = SVector::<f64, 9>::from_fn(|i, _| -f[24 + i]);
        let Some(step) = kaa
            .lu()
            .solve(&rhs)
            .filter(|s| s.iter().all(|v| v.is_finite()))
        else {
            break;
        };
        let alpha = dofs[24..].iter().fold(0.0f64, |a, v| a.max(v.abs()));
        last_step = step.amax() <= STEP_TOLERANCE * (alpha + 1e-3 * size);
        // Newton, halving the step while it would invert a point (at most 10 times).
        let mut t = 1.0;
        let mut accepted = false;
        for _ in 0..10 {
            let mut trial = dofs;
            for i in 0..9 {
                trial[24 + i] += t * step[i];
            }
            let (j, r) = evaluate(&trial, &mut f);
            if j > 0.0 && r.is_finite() {
                (dofs, jmin, residual) = (trial, j, r);
                accepted = true;
                break;
            }
            t *= 0.5;
        }
        if !accepted {
            break;
        }
    }
    if jmin > 0.0 && residual <= TOLERANCE {
        return Ok(solved(dofs, &f, MAX_ITERATIONS, jmin));
    }
    Err(ModesNotConverged {
        iterations: MAX_ITERATIONS,
        residual,
    })
}

/// `K_αα = ∂²Π/∂α²` (9×9) at `dofs`: the modes' block of the 11-node tangent, computed alone.
fn modes_block<M: Hyperelastic + ?Sized>(
    material: &M,
    grad: &[f64],
    dv: &[f64],
    dofs: &[f64; 3 * N],
) -> SMatrix<f64, 9, 9> {
    use super::material::{VOIGT_PAIRS, voigt_to_matrix};
    let (g, _) = grad.as_chunks::<Q>();
    let h = super::total_lagrangian::displacement_gradient::<N, Q>(&g[..3 * N], dofs);
    let mut k = SMatrix::<f64, 9, 9>::zeros();
    for q in 0..Q {
        let f = super::total_lagrangian::deformation_gradient(&h, q);
        let (s, d) = material.pk2_stress_and_tangent(&f);
        let s = voigt_to_matrix(&s);
        let w = dv[q];
        let gm: [[f64; 3]; 3] =
            std::array::from_fn(|m| std::array::from_fn(|c| g[3 * (8 + m) + c][q]));
        let b: [[[f64; 3]; 6]; 3] = std::array::from_fn(|m| {
            std::array::from_fn(|r| {
                let (x, y) = VOIGT_PAIRS[r];
                std::array::from_fn(|i| {
                    if x == y {
                        f[i][x] * gm[m][x]
                    } else {
                        f[i][x] * gm[m][y] + f[i][y] * gm[m][x]
                    }
                })
            })
        });
        for a in 0..3 {
            let mut db = [[0.0; 3]; 6];
            for r in 0..6 {
                for i in 0..3 {
                    db[r][i] = w * (0..6).map(|c| d[r][c] * b[a][c][i]).sum::<f64>();
                }
            }
            let sg: [f64; 3] =
                std::array::from_fn(|m| w * (0..3).map(|l| s[m][l] * gm[a][l]).sum::<f64>());
            for bb in 0..3 {
                let geo: f64 = (0..3).map(|m| gm[bb][m] * sg[m]).sum();
                for j in 0..3 {
                    for i in 0..3 {
                        let mat: f64 = (0..6).map(|r| b[bb][r][j] * db[r][i]).sum();
                        k[(3 * bb + j, 3 * a + i)] += mat + if i == j { geo } else { 0.0 };
                    }
                }
            }
        }
    }
    k
}

/// Internal force (E4) of one element into `f` (24, overwritten); the smallest `J` at the
/// solved modes (`≤ 0` or `NaN`: inverted).
pub fn internal_force<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64],
    u: &[f64],
    f: &mut [f64],
) -> Result<f64, ModesNotConverged> {
    let solved = solve(material, geo, u)?;
    f.copy_from_slice(&solved.force);
    Ok(solved.jmin)
}

/// Strain energy `Π(u, α*)` of one element (`NaN` if inverted).
pub fn strain_energy<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64],
    u: &[f64],
) -> Result<f64, ModesNotConverged> {
    let solved = solve(material, geo, u)?;
    if inverted(solved.jmin) {
        return Ok(f64::NAN);
    }
    let (grad, dv) = geo.split_at(3 * N * Q);
    Ok(generic_energy(material, grad, dv, &solved.dofs))
}

/// Stress output of one element at the solved modes.
pub fn cell_stress<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64],
    u: &[f64],
) -> Result<CellStress, ModesNotConverged> {
    let solved = solve(material, geo, u)?;
    let (grad, dv) = geo.split_at(3 * N * Q);
    Ok(generic_stress(material, grad, dv, &solved.dofs))
}

/// Condensed tangent (E4) of one element into `k` (24 × 24, row-major, symmetric); the
/// smallest `J` at the solved modes.
pub fn tangent_stiffness<M: Hyperelastic + ?Sized>(
    material: &M,
    geo: &[f64],
    u: &[f64],
    k: &mut [f64],
) -> Result<f64, ModesNotConverged> {
    assert_eq!(k.len(), 24 * 24);
    let solved = solve(material, geo, u)?;
    let (grad, dv) = geo.split_at(3 * N * Q);
    let mut full = [0.0; 33 * 33];
    let jmin = generic_tangent(material, grad, dv, &solved.dofs, &mut full);
    if inverted(jmin) {
        k.fill(f64::NAN);
        return Ok(jmin);
    }
    let kaa = SMatrix::<f64, 9, 9>::from_fn(|i, j| full[(24 + i) * 33 + 24 + j]);
    let kau = SMatrix::<f64, 9, 24>::from_fn(|i, j| full[(24 + i) * 33 + j]);
    let lu = kaa.lu();
    let correction = match lu.solve(&kau) {
        Some(x) => x,
        None => {
            return Err(ModesNotConverged {
                iterations: solved.iterations,
                residual: f64::NAN,
            });
        }
    };
    for r in 0..24 {
        for c in 0..24 {
            // K_uu − K_uα K_αα⁻¹ K_αu, with K_uα = K_αuᵀ.
            let kua_x: f64 = (0..9)
                .map(|i| full[r * 33 + 24 + i] * correction[(i, c)])
                .sum();
            k[r * 24 + c] = full[r * 33 + c] - kua_x;
        }
    }
    // Symmetrize the round-off of the solve.
    for r in 0..24 {
        for c in r + 1..24 {
            let m = 0.5 * (k[r * 24 + c] + k[c * 24 + r]);
            k[r * 24 + c] = m;
            k[c * 24 + r] = m;
        }
    }
    Ok(jmin)
}
