//! The P1 string assembled on line cells (Glowinski–Holmström §3.1, eq. (53)–(55)).
//!
//! Given node coordinates, two-node cells and a [`DofMap`] with `ncomp` transverse components
//! per node, [`StringMatrices::assemble`] returns the consistent mass, the lumped
//! (trapezoidal = row-sum) mass and the stiffness on the free dofs. On a uniform mesh of
//! `[0, 1]` with both ends fixed, `ρ = τ = 1` and lumped mass this is exactly the paper's
//! `ρ h · I` and `τ h A_h` of (55) (the paper divides the whole equation by `h`).

use fem_elements::{P1String, StringMaterial};
use nalgebra_sparse::CsrMatrix;

use fem_assembly::{AssemblyPlan, DofMap, lump_row_sum};

/// Mass and stiffness of a P1 string on the free dofs of a [`DofMap`].
#[derive(Clone, Debug)]
pub struct StringMatrices {
    /// Consistent mass `∫ ρ N_a N_b`.
    pub mass: CsrMatrix<f64>,
    /// Row-sum lumped mass (equal to the trapezoidal rule for P1).
    pub lumped_mass: Vec<f64>,
    /// Stiffness `∫ τ N_a' N_b'`.
    pub stiffness: CsrMatrix<f64>,
    /// The assembly plan (pattern and gather lists), reusable for loads and residuals.
    pub plan: AssemblyPlan,
    /// Length of each cell.
    pub cell_lengths: Vec<f64>,
}

impl StringMatrices {
    /// Assembles the string on `cells` (pairs of node indices into `points`).
    ///
    /// # Panics
    /// If a cell has zero length or refers to a node outside `points` (meshes are validated on
    /// input, so this is a programming error here).
    pub fn assemble(
        points: &[[f64; 3]],
        cells: &[[usize; 2]],
        material: &StringMaterial,
        dofmap: &DofMap,
    ) -> Self {
        let ncomp = dofmap.n_comp();
        let n_local = 2 * ncomp;
        let mut cell_dofs = Vec::with_capacity(cells.len() * n_local);
        for cell in cells {
            dofmap.cell_dofs(cell, &mut cell_dofs);
        }
        let plan = AssemblyPlan::new(dofmap.n_free(), n_local, &cell_dofs);
        let elements: Vec<P1String> = cells
            .iter()
            .map(|&[a, b]| {
                let e = P1String::new(points[a], points[b], material);
                assert!(
                    e.length > 0.0,
                    "zero-length string cell between nodes {a} and {b}"
                );
                e
            })
            .collect();
        let mass =
            plan.assemble_matrix(|c, out| P1String::expand_block(&elements[c].mass, ncomp, out));
        let stiffness = plan
            .assemble_matrix(|c, out| P1String::expand_block(&elements[c].stiffness, ncomp, out));
        let lumped_mass = lump_row_sum(&plan, |c, out| {
            P1String::expand_block(&elements[c].mass, ncomp, out)
        })
        .expect("P1 row sums are ρh/2 > 0");
        Self {
            mass,
            lumped_mass,
            stiffness,
            plan,
            cell_lengths: elements.iter().map(|e| e.length).collect(),
        }
    }

    /// Consistent load vector of a uniform load per unit length with one value per component.
    pub fn uniform_load(&self, load: &[f64]) -> Vec<f64> {
        let ncomp = load.len();
        self.plan.assemble_vector(|c, out| {
            let half = 0.5 * self.cell_lengths[c];
            for node in 0..2 {
                for comp in 0..ncomp {
                    out[node * ncomp + comp] = half * load[comp];
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_papers_matrices_on_a_uniform_mesh() {
        let n = 10;
        let h = 1.0 / n as f64;
        let points: Vec<[f64; 3]> = (0..=n).map(|i| [i as f64 * h, 0.0, 0.0]).collect();
        let cells: Vec<[usize; 2]> = (0..n).map(|i| [i, i + 1]).collect();
        let dofmap = DofMap::with_fixed(n + 1, 1, [0, n]);
        let material = StringMaterial {
            density: 1.0,
            tension: 1.0,
        };
        let s = StringMatrices::assemble(&points, &cells, &material, &dofmap);
        assert_eq!(s.stiffness.nrows(), n - 1);
        // τ h A_h of (55): (1/h) tridiag(-1, 2, -1).
        assert!((s.stiffness.get_entry(3, 3).unwrap().into_value() - 2.0 / h).abs() < 1e-12);
        assert!((s.stiffness.get_entry(3, 4).unwrap().into_value() + 1.0 / h).abs() < 1e-12);
        // Trapezoidal lumped mass ρh at every free node, also next to the fixed ends.
        for m in &s.lumped_mass {
            assert!((m - h).abs() < 1e-15, "{m}");
        }
        let f = s.uniform_load(&[2.0]);
        assert!(f.iter().all(|v| (v - 2.0 * h).abs() < 1e-15));
    }
}
