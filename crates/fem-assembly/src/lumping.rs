//! Mass lumping as a decorator over any consistent element mass.
//!
//! Row-sum lumping `m_a = Σ_b M_ab` of each element's consistent mass preserves the total
//! mass and, for linear elements, coincides with the trapezoidal rule (Glowinski–Holmström
//! §3.1: "the mass matrix reduces to the identity matrix when we apply the trapezoidal rule").
//!
//! Lumping is done per element, *before* fixed dofs are eliminated: the row sum of an
//! already reduced global matrix would lose the coupling to the fixed neighbours (a node next
//! to a clamped end would get `5ρh/6` instead of `ρh`). Row sums can fail for higher-order
//! elements (zero or negative corner masses for tet10), where HRZ lumping is the remedy; a
//! non-positive result is reported instead of returned.

use crate::AssemblyPlan;

/// A lumped mass with a non-positive diagonal entry.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "row-sum lumping gives a non-positive mass {value:e} at dof {dof}: use HRZ lumping or the consistent mass"
)]
pub struct NonPositiveLumpedMass {
    /// The first offending (free) dof.
    pub dof: usize,
    /// Its lumped mass.
    pub value: f64,
}

/// Replaces a row-major `n × n` element matrix by its row sums (written to `rows`).
pub fn row_sums(matrix: &[f64], rows: &mut [f64]) {
    let n = rows.len();
    debug_assert_eq!(matrix.len(), n * n);
    for (a, row) in rows.iter_mut().enumerate() {
        *row = matrix[a * n..(a + 1) * n].iter().sum();
    }
}

/// Assembles the row-sum lumped mass of the consistent element masses `local_mass(cell, out)`.
pub fn lump_row_sum<F>(
    plan: &AssemblyPlan,
    local_mass: F,
) -> Result<Vec<f64>, NonPositiveLumpedMass>
where
    F: Fn(usize, &mut [f64]) + Sync,
{
    let n_local = plan.n_local();
    let lumped = plan.assemble_vector(|cell, out| {
        let mut matrix = vec![0.0; n_local * n_local];
        local_mass(cell, &mut matrix);
        row_sums(&matrix, out);
    });
    match lumped.iter().position(|&m| m.is_nan() || m <= 0.0) {
        Some(dof) => Err(NonPositiveLumpedMass {
            dof,
            value: lumped[dof],
        }),
        None => Ok(lumped),
    }
}
