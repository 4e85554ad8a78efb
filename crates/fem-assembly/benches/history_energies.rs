//! The energies of a history row of an explicit solid with `one_point` cells: the strain
//! energy and its hourglass part, as the row asked for them before (the strain-energy pass,
//! then a second pass over the `one_point` cells for the hourglass part,
//! `SolidOperator::hourglass_energy_pass`) and now (one pass: the strain-energy pass keeps
//! the hourglass part, `SolidOperator::hourglass_energy_sum` takes it).
//!
//! The unit cube in n³ hex8 `one_point` cells (n = 20, 30, 40), Neo-Hookean (μ = 0.25,
//! κ = 5), face x = 0 clamped, the displacement of `solid_force.rs`. Printed: the median time
//! of a row over repeated rows, both ways, and their ratio, on the default rayon pool (the
//! run's). Both ways give the same bits (asserted here too).

use std::time::Instant;

use fem_assembly::{DofMap, SolidOperator};
use fem_elements::solid::{Formulation, Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};

fn body(n: usize) -> (SolidOperator, Vec<f64>) {
    let mesh = box_mesh([1.0; 3], [n; 3], BoxCells::Hex8).expect("box");
    let fixed = mesh
        .group("xmin")
        .expect("xmin")
        .nodes
        .iter()
        .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
        .collect::<Vec<_>>();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let material =
        Material::from_shear_and_bulk(MaterialModel::NeoHookean, 0.25, 5.0).expect("valid");
    let n_cells = mesh.blocks[0].n_cells();
    let body = SolidOperator::with_formulations(
        SolidKind::Hex8,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        &vec![Formulation::OnePoint; n_cells],
        material,
        1.0,
        SolidKind::Hex8.default_lumping(),
        &dofmap,
    )
    .expect("valid mesh");
    let u = mesh
        .points
        .iter()
        .flat_map(|p| [0.05 * p[0] * p[2], 0.05 * p[1] * p[1], -0.05 * p[0] * p[0]])
        .collect();
    (body, u)
}

/// The median seconds of `row` over `repeats` calls (after one warm-up).
fn median(repeats: usize, mut row: impl FnMut() -> (u64, u64)) -> (f64, (u64, u64)) {
    let bits = row();
    let mut times: Vec<f64> = (0..repeats)
        .map(|_| {
            let start = Instant::now();
            assert_eq!(row(), bits);
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[repeats / 2], bits)
}

fn main() {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at the start: {}", load.trim());
    println!("| cells | two passes (ms) | one pass (ms) | one / two |");
    println!("|---|---|---|---|");
    for n in [20, 30, 40] {
        let (body, u) = body(n);
        let repeats = if n < 40 { 21 } else { 11 };
        // Before: the strain-energy pass, then the hourglass part's own pass.
        let (two, before) = median(repeats, || {
            (
                body.strain_energy(&u).to_bits(),
                body.hourglass_energy_pass(&u).value().to_bits(),
            )
        });
        // Now: the strain-energy pass keeps the hourglass part for the row.
        let (one, after) = median(repeats, || {
            (
                body.strain_energy(&u).to_bits(),
                body.hourglass_energy_sum(&u).value().to_bits(),
            )
        });
        assert_eq!(before, after, "the same bits both ways");
        println!(
            "| {} | {:.2} | {:.2} | {:.2} |",
            n * n * n,
            1e3 * two,
            1e3 * one,
            one / two
        );
    }
}
