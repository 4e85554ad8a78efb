//! The P1 string element: piecewise-linear transverse displacement of a string under
//! tension (Glowinski–Holmström §3.1, eq. (52)–(55)).
//!
//! A string of mass per unit length `ρ` under tension `τ` carries a transverse displacement
//! `u(s, t)` with `ncomp` components (1 to 3), each obeying `ρ ü = τ u_ss + f`. On an element
//! of length `h` with linear shape functions, per displacement component,
//!
//! ```text
//! M_e = ρ h / 6 [2 1; 1 2]        (consistent mass, ∫ ρ N_a N_b ds)
//! M_e = ρ h / 2 [1 0; 0 1]        (lumped: trapezoidal rule = row sum of M_e)
//! K_e = τ / h   [1 -1; -1 1]      (stiffness, ∫ τ N_a' N_b' ds)
//! f_e = f h / 2 [1 1]             (uniform load per unit length)
//! ```
//!
//! The components do not couple, so a kernel returns these 2×2 blocks and the assembler
//! repeats them for each component (node-major numbering, `dof = node * ncomp + comp`).

/// Material constants of a string.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StringMaterial {
    /// Mass per unit length `ρ` (kg/m), > 0.
    pub density: f64,
    /// Tension `τ` (N), > 0.
    pub tension: f64,
}

impl StringMaterial {
    /// Transverse wave speed `c = sqrt(τ / ρ)`.
    pub fn wave_speed(&self) -> f64 {
        (self.tension / self.density).sqrt()
    }
}

/// The local matrices of one P1 string element, per displacement component.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct P1String {
    /// Element length `h`.
    pub length: f64,
    /// Consistent mass `ρ h / 6 [2 1; 1 2]`.
    pub mass: [[f64; 2]; 2],
    /// Lumped (trapezoidal) mass `ρ h / 2` at each node.
    pub lumped_mass: [f64; 2],
    /// Stiffness `τ / h [1 -1; -1 1]`.
    pub stiffness: [[f64; 2]; 2],
}

impl P1String {
    /// Local matrices of the element between nodes at `a` and `b`.
    ///
    /// The length is the Euclidean distance, so strings along any direction, and polylines
    /// read from a mesh, work unchanged.
    pub fn new(a: [f64; 3], b: [f64; 3], material: &StringMaterial) -> Self {
        let length = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2) + (b[2] - a[2]).powi(2)).sqrt();
        let m = material.density * length / 6.0;
        let k = material.tension / length;
        Self {
            length,
            mass: [[2.0 * m, m], [m, 2.0 * m]],
            lumped_mass: [3.0 * m, 3.0 * m],
            stiffness: [[k, -k], [-k, k]],
        }
    }

    /// Consistent load vector of a uniform transverse load `f` per unit length (one component).
    pub fn uniform_load(&self, f: f64) -> [f64; 2] {
        [0.5 * f * self.length, 0.5 * f * self.length]
    }

    /// Expands a 2×2 per-component block into the element matrix for `ncomp` components,
    /// written row-major into `out` (length `(2 ncomp)²`), node-major local numbering
    /// (`local = node * ncomp + comp`).
    pub fn expand_block(block: &[[f64; 2]; 2], ncomp: usize, out: &mut [f64]) {
        let n = 2 * ncomp;
        debug_assert_eq!(out.len(), n * n);
        out.fill(0.0);
        for a in 0..2 {
            for b in 0..2 {
                for c in 0..ncomp {
                    out[(a * ncomp + c) * n + b * ncomp + c] = block[a][b];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAT: StringMaterial = StringMaterial {
        density: 2.0,
        tension: 3.0,
    };

    #[test]
    fn matrices_match_closed_forms() {
        let e = P1String::new([0.0, 0.0, 0.0], [0.0, 0.3, 0.4], &MAT);
        assert!((e.length - 0.5).abs() < 1e-15);
        // Total mass of the element is ρ h (consistent and lumped alike).
        let total: f64 = e.mass.iter().flatten().sum();
        assert!((total - MAT.density * 0.5).abs() < 1e-15);
        assert!((e.lumped_mass.iter().sum::<f64>() - MAT.density * 0.5).abs() < 1e-15);
        // Lumped = row sums of the consistent mass.
        for a in 0..2 {
            assert!((e.lumped_mass[a] - e.mass[a].iter().sum::<f64>()).abs() < 1e-15);
        }
        // Rigid translation has no strain energy; a unit difference gives τ/h.
        assert_eq!(e.stiffness[0][0] + e.stiffness[0][1], 0.0);
        assert!((e.stiffness[0][0] - MAT.tension / 0.5).abs() < 1e-15);
    }

    #[test]
    fn stiffness_energy_of_linear_field_is_exact() {
        // u = s on [0, h]: strain energy ½ τ ∫ u'² = ½ τ h.
        let h = 0.25;
        let e = P1String::new([0.0; 3], [h, 0.0, 0.0], &MAT);
        let u = [0.0, h];
        let mut energy = 0.0;
        for a in 0..2 {
            for b in 0..2 {
                energy += 0.5 * u[a] * e.stiffness[a][b] * u[b];
            }
        }
        assert!((energy - 0.5 * MAT.tension * h).abs() < 1e-15);
    }

    #[test]
    fn expansion_repeats_the_block_per_component() {
        let block = [[1.0, 2.0], [3.0, 4.0]];
        let mut out = vec![0.0; 36];
        P1String::expand_block(&block, 3, &mut out);
        // node 1, comp 2 against node 0, comp 2: row 5, column 2.
        assert_eq!(out[5 * 6 + 2], 3.0);
        // No coupling between components.
        assert_eq!(out[5 * 6 + 1], 0.0);
        let sum: f64 = out.iter().sum();
        assert_eq!(sum, 3.0 * 10.0);
    }
}
