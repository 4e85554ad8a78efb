//! # A material of your own, run by `fem`'s solid
//!
//! This program is what a downstream code writes to put its own constitutive law through
//! `fem`'s total-Lagrangian solid: it implements [`Hyperelastic`] for a Mooney–Rivlin rubber,
//! checks the stress and tangent against central differences of its energy with the same
//! helper the shipped materials' tests use ([`check_material`]), and runs a small body made of
//! it — every element kernel, the assembled operator, the DEF_LIM stepper, the frames and the
//! history are `fem`'s; nothing here is a copied element loop or a surrogate tangent.
//!
//! ```text
//! cargo run --release --example downstream_material -- [OUT_DIR]   (default out/downstream_material)
//! ```
//!
//! ## The material: decoupled Mooney–Rivlin
//! With `C = FᵀF`, `J = det F`, `I₁ = tr C`, `I₂ = ½ (I₁² − C : C)` and the isochoric invariants
//! `Ī₁ = J^{-2/3} I₁`, `Ī₂ = J^{-4/3} I₂`:
//!
//! ```text
//! W = c₁₀ (Ī₁ − 3) + c₀₁ (Ī₂ − 3) + κ/2 (J − 1)²
//! S = 2 ∂W/∂C = 2c₁₀ J^{-2/3} (I − I₁/3 C⁻¹) + 2c₀₁ J^{-4/3} (I₁ I − C − 2/3 I₂ C⁻¹) + κ J (J − 1) C⁻¹
//! 𝒞 = 2 ∂S/∂C = 4c₁₀ J^{-2/3} [ −⅓ (I⊗C⁻¹ + C⁻¹⊗I) + I₁/9 C⁻¹⊗C⁻¹ + I₁/3 𝕀_{C⁻¹} ]
//!     + 4c₀₁ J^{-4/3} [ I⊗I − 𝕀 − ⅔ I₁ (I⊗C⁻¹ + C⁻¹⊗I) + ⅔ (C⊗C⁻¹ + C⁻¹⊗C)
//!                       + 4/9 I₂ C⁻¹⊗C⁻¹ + ⅔ I₂ 𝕀_{C⁻¹} ]
//!     + κ (2J² − J) C⁻¹⊗C⁻¹ − 2κ (J² − J) 𝕀_{C⁻¹}
//! ```
//!
//! (`𝕀` and `𝕀_{C⁻¹}` the symmetric identity and `½ (C⁻¹_IK C⁻¹_JL + C⁻¹_IL C⁻¹_JK)`.) At small
//! strain it is linear elasticity with the shear modulus `μ = 2 (c₁₀ + c₀₁)` and bulk modulus
//! `κ`.
//!
//! ## The run
//! A rubber block 0.1 × 0.1 × 0.2 m (4 × 4 × 8 hex8 with incompatible modes) clamped at its base
//! and pulled sideways by a traction on its top that rises and falls, DEF_LIM. The program
//! fails (non-zero exit) unless the material passes its check and the run keeps
//! `total − external_work` to the scheme's truncation error.

use std::path::PathBuf;
use std::sync::Arc;

use fem::assembly::{DofMap, SolidOperator};
use fem::constraints::TimeFunction;
use fem::drive::{Progress, RunOptions, drive};
use fem::elements::solid::material::{Hyperelastic, Mat3, VOIGT_PAIRS, det3};
use fem::elements::solid::material_check::{check_material, sample_deformation_gradients};
use fem::elements::solid::{FaceKind, Formulation, SolidKind};
use fem::io::VtkCells;
use fem::mesh::generate::{BoxCells, box_mesh};
use fem::time::{DefLim, StepSettings, TimeGrid};
use fem_solid::model::SolidOutput;
use fem_solid::{SolidMass, SolidModel, SolidSystem};

/// Decoupled Mooney–Rivlin (constants in Pa).
#[derive(Debug)]
struct MooneyRivlin {
    c10: f64,
    c01: f64,
    kappa: f64,
}

/// `C = FᵀF`.
fn right_cauchy_green(f: &Mat3) -> Mat3 {
    std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|k| f[k][i] * f[k][j]).sum()))
}

fn inverse(c: &Mat3) -> Mat3 {
    let det = det3(c);
    std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            // (C⁻¹)_ij = cofactor_ji / det.
            let (a, b) = ((j + 1) % 3, (j + 2) % 3);
            let (p, q) = ((i + 1) % 3, (i + 2) % 3);
            (c[a][p] * c[b][q] - c[a][q] * c[b][p]) / det
        })
    })
}

impl MooneyRivlin {
    /// `J`, `I₁`, `I₂`, `C` and `C⁻¹`.
    fn invariants(f: &Mat3) -> (f64, f64, f64, Mat3, Mat3) {
        let c = right_cauchy_green(f);
        let i1 = c[0][0] + c[1][1] + c[2][2];
        let cc: f64 = (0..9).map(|k| c[k / 3][k % 3] * c[k / 3][k % 3]).sum();
        (det3(f), i1, 0.5 * (i1 * i1 - cc), c, inverse(&c))
    }
}

impl Hyperelastic for MooneyRivlin {
    fn strain_energy(&self, f: &Mat3) -> f64 {
        let (j, i1, i2, _, _) = Self::invariants(f);
        let j23 = j.powf(-2.0 / 3.0);
        self.c10 * (j23 * i1 - 3.0)
            + self.c01 * (j23 * j23 * i2 - 3.0)
            + 0.5 * self.kappa * (j - 1.0) * (j - 1.0)
    }

    fn pk2_stress_and_tangent(&self, f: &Mat3) -> ([f64; 6], [[f64; 6]; 6]) {
        let (j, i1, i2, c, ci) = Self::invariants(f);
        let (a, b) = (j.powf(-2.0 / 3.0), j.powf(-4.0 / 3.0));
        let (c10, c01, kappa) = (self.c10, self.c01, self.kappa);
        let id = |p: usize, q: usize| if p == q { 1.0 } else { 0.0 };
        let s = |p: usize, q: usize| {
            2.0 * c10 * a * (id(p, q) - i1 / 3.0 * ci[p][q])
                + 2.0 * c01 * b * (i1 * id(p, q) - c[p][q] - 2.0 / 3.0 * i2 * ci[p][q])
                + kappa * j * (j - 1.0) * ci[p][q]
        };
        // 𝒞_IJKL (see the module docs).
        let tangent = |i: usize, jj: usize, k: usize, l: usize| {
            let sym_id = 0.5 * (id(i, k) * id(jj, l) + id(i, l) * id(jj, k));
            let sym_ci = 0.5 * (ci[i][k] * ci[jj][l] + ci[i][l] * ci[jj][k]);
            let ic = id(i, jj) * ci[k][l] + ci[i][jj] * id(k, l);
            let cc = ci[i][jj] * ci[k][l];
            4.0 * c10 * a * (-ic / 3.0 + i1 / 9.0 * cc + i1 / 3.0 * sym_ci)
                + 4.0
                    * c01
                    * b
                    * (id(i, jj) * id(k, l) - sym_id - 2.0 / 3.0 * i1 * ic
                        + 2.0 / 3.0 * (c[i][jj] * ci[k][l] + ci[i][jj] * c[k][l])
                        + 4.0 / 9.0 * i2 * cc
                        + 2.0 / 3.0 * i2 * sym_ci)
                + kappa * (2.0 * j * j - j) * cc
                - 2.0 * kappa * (j * j - j) * sym_ci
        };
        let stress = VOIGT_PAIRS.map(|(p, q)| s(p, q));
        let d = std::array::from_fn(|r| {
            std::array::from_fn(|col| {
                let ((i, jj), (k, l)) = (VOIGT_PAIRS[r], VOIGT_PAIRS[col]);
                tangent(i, jj, k, l)
            })
        });
        (stress, d)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("out/downstream_material"), PathBuf::from);

    // 1. The material, checked against central differences of its own energy.
    let rubber = MooneyRivlin {
        c10: 2.0e5,
        c01: 5.0e4,
        kappa: 5.0e7,
    };
    let check = check_material(&rubber, &sample_deformation_gradients(20, 0.3, 2026));
    println!(
        "Mooney-Rivlin against central differences of W: stress {:.1e}, tangent {:.1e}, symmetry {:.1e} (relative)",
        check.stress, check.tangent, check.symmetry
    );
    check.passes(1e-6)?;

    // 2. A block of it: 4 × 4 × 8 hex8 with incompatible modes, clamped at z = 0.
    let mesh = box_mesh([0.1, 0.1, 0.2], [4, 4, 8], BoxCells::Hex8)?;
    let fixed: Vec<usize> = mesh
        .group("zmin")
        .ok_or("no zmin")?
        .nodes
        .iter()
        .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
        .collect();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let cells = &mesh.blocks[0].connectivity;
    let material: Arc<dyn Hyperelastic> = Arc::new(rubber);
    let operator = SolidOperator::with_formulations(
        SolidKind::Hex8,
        &mesh.points,
        cells,
        &vec![Formulation::Eas; cells.len() / 8],
        material,
        1100.0,
        SolidKind::Hex8.default_lumping(),
        &dofmap,
    )?;
    let mut system = SolidSystem::new(operator, SolidMass::Lumped)?;
    // A sideways traction on the top, 20 kPa at its peak, rising and falling over 0.1 s.
    let top = mesh.group("zmax").ok_or("no zmax")?;
    let faces: Vec<usize> = top
        .cells
        .iter()
        .flat_map(|&(b, c)| mesh.blocks[b].cell(c).to_vec())
        .collect();
    system.add_traction(
        FaceKind::Quad4,
        &faces,
        [
            TimeFunction::expression("2e4*sin(10*pi*t)^2*(t < 0.1)")?,
            TimeFunction::Constant(0.0),
            TimeFunction::Constant(0.0),
        ],
    );

    // 3. DEF_LIM, frames and history through fem's run loop.
    let grid = TimeGrid::new(0.0, 0.2, 5e-4)?;
    let n = system.operator().dofmap().n_free();
    let zero = vec![0.0; n];
    let stepper = DefLim::new(
        system.clone(),
        0.0,
        StepSettings::new(grid.dt()),
        &zero,
        &zero,
    )?;
    let mut vtk = VtkCells::new();
    vtk.push_block(fem::mesh::CellKind::Hex8, cells);
    let output = SolidOutput::new(mesh.points.clone(), vtk, system.shared_operator());
    let mut model = SolidModel::new(Box::new(stepper), grid, Vec::new(), output);
    let mut options = RunOptions::new(&out_dir, "downstream_material");
    options.every = 20;
    options.progress = Progress::Quiet;
    let summary = drive(&mut model, &options)?;
    let balance = summary.energy.ok_or("no energy")?;
    let tip = model
        .nodal_stepper()
        .position()
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    println!(
        "{} steps, {} frames in {}; largest displacement {tip:.4e} m; total - external_work kept within {:.2e} of the energy",
        summary.steps,
        summary.frames,
        summary.pvd.display(),
        balance.relative_change()
    );
    if !(balance.relative_change() < 1e-2 && tip > 1e-4 && tip < 0.05) {
        return Err(format!(
            "the run did not behave: balance {:e}, displacement {tip:e}",
            balance.relative_change()
        )
        .into());
    }
    Ok(())
}
