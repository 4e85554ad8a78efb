//! The P1 string on `[0, 1]` with both ends fixed, written out for the stepper tests (the
//! model crate `fem-string` assembles it on any mesh; these tests need only the uniform case).

#![allow(dead_code)]

use nalgebra_sparse::{CooMatrix, CsrMatrix};

/// Lumped mass `ρ h`, consistent mass `ρ h/6 [1 4 1]` and stiffness `τ/h [−1 2 −1]` on the
/// `n − 1` interior nodes of `n` uniform cells, and the nodes' coordinates.
pub struct UniformString {
    /// Diagonal of the lumped mass.
    pub lumped_mass: Vec<f64>,
    /// Consistent mass.
    pub mass: CsrMatrix<f64>,
    /// Stiffness.
    pub stiffness: CsrMatrix<f64>,
    /// Coordinates of the interior nodes.
    pub x: Vec<f64>,
}

pub fn uniform_string(n: usize, density: f64, tension: f64) -> UniformString {
    let h = 1.0 / n as f64;
    let m = n - 1;
    let mut mass = CooMatrix::new(m, m);
    let mut stiffness = CooMatrix::new(m, m);
    for i in 0..m {
        mass.push(i, i, 4.0 * density * h / 6.0);
        stiffness.push(i, i, 2.0 * tension / h);
        if i + 1 < m {
            for (a, b) in [(i, i + 1), (i + 1, i)] {
                mass.push(a, b, density * h / 6.0);
                stiffness.push(a, b, -tension / h);
            }
        }
    }
    UniformString {
        lumped_mass: vec![density * h; m],
        mass: CsrMatrix::from(&mass),
        stiffness: CsrMatrix::from(&stiffness),
        x: (1..n).map(|i| i as f64 * h).collect(),
    }
}
