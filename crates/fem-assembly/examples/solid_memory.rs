//! Peak memory of an explicit solid: the n³ hex8 unit cube (default n = 100: 10⁶ cells,
//! 1 030 301 nodes, 3.09·10⁶ dofs), Neo-Hookean, face x = 0 clamped, the `SolidOperator` with
//! its lumped mass, and one internal-force evaluation (the per-step work of DEF_EXP).
//!
//! `cargo run --release -p fem-assembly --example solid_memory [-- N]`, ideally under
//! `/usr/bin/time -v` (its "Maximum resident set size" is the peak of the whole process). The
//! example prints the peak resident set (`VmHWM` of `/proc/self/status`) after each phase, and
//! [`SolidOperator::memory_estimate`] beside it.

use std::time::Instant;

use fem_assembly::{DofMap, SolidOperator};
use fem_elements::solid::{Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};

/// `VmHWM` (peak resident set) and `VmRSS` of this process in MiB, from `/proc/self/status`.
fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

fn report(phase: &str, t0: Instant) {
    let (peak, now) = memory_mib();
    println!(
        "{phase:<44} peak RSS {peak:>8.1} MiB, RSS {now:>8.1} MiB, {:>6.2} s",
        t0.elapsed().as_secs_f64()
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(arg) => arg.parse()?,
        None => 100,
    };
    let t0 = Instant::now();
    report("start", t0);
    let mesh = box_mesh([1.0; 3], [n; 3], BoxCells::Hex8)?;
    report(
        &format!("box mesh {n}³ hex8 ({} nodes)", mesh.n_nodes()),
        t0,
    );
    let fixed: Vec<usize> = mesh
        .group("xmin")
        .ok_or("no xmin group")?
        .nodes
        .iter()
        .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
        .collect();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let material = Material::from_shear_and_bulk(MaterialModel::NeoHookean, 0.25, 5.0)?;
    let body = SolidOperator::new(
        SolidKind::Hex8,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        material,
        1.0,
        SolidKind::Hex8.default_lumping(),
        &dofmap,
    )?;
    report("SolidOperator with lumped mass", t0);
    // The operator holds its own copy of points and connectivity: the mesh can go.
    let points = body.points().len();
    drop(mesh);
    let u: Vec<f64> = body
        .points()
        .iter()
        .flat_map(|p| [0.05 * p[0] * p[2], 0.05 * p[1] * p[1], -0.05 * p[0] * p[0]])
        .collect();
    let mut slots = Vec::new();
    let mut force = vec![0.0; dofmap.n_free()];
    let t_force = Instant::now();
    body.internal_force(&u, &mut slots, &mut force)?;
    let force_time = t_force.elapsed().as_secs_f64();
    report("one internal force (u, slots, f allocated)", t0);
    let total_mass: f64 = body.lumped_mass().iter().step_by(3).sum();
    println!(
        "{} cells, {points} nodes, {} free dofs; force evaluation {force_time:.3} s; lumped mass \
         of the free nodes {total_mass:.6}; |f| = {:.6e}",
        body.n_cells(),
        dofmap.n_free(),
        force.iter().map(|v| v * v).sum::<f64>().sqrt()
    );
    println!(
        "SolidOperator::memory_estimate: {:.1} MiB (operator only; u, slots and f come on top: \
         {:.1} MiB)",
        SolidOperator::memory_estimate(SolidKind::Hex8, body.n_cells(), points) as f64 / 1048576.0,
        ((u.len() + slots.len() + force.len()) * 8) as f64 / 1048576.0
    );
    Ok(())
}
