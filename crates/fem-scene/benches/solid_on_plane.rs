//! The contact part of a step against the internal force at scale (issue 24, "Performance"):
//! a hex8 box of `nx × ny × nz` cells (default 100 × 100 × 10 = 10⁵ cells, 1 × 1 × 0.1 m,
//! Saint Venant–Kirchhoff `E = 10⁶`, `ν = 0.3`, `ρ = 1000`) resting on the plane `z = 0` under
//! gravity, its bottom face's `(nx+1)(ny+1)` nodes the contact nodes (10 201 by default), DEF_EXP
//! at half the critical step, friction 0.5, the scene's default solver. The box starts at rest
//! touching the plane and settles under its weight; the first `WARM_UP` steps are not timed.
//!
//! Per thread count (one, then two; a rayon pool of its own for each), in the same run:
//!
//! - **force**: one evaluation of the box's internal force (`SecondOrderSystem::internal_force`
//!   of a twin system, the same box), the median over blocks of `FORCE_REPEATS` evaluations;
//! - **bodies**: a DEF_EXP step of the twin box with no contact (`BodyGroup::begin_step` and
//!   `end_step`: the half drift, the force, the kick, the drift, the state check), the median
//!   over blocks of `STEPS` steps;
//! - **scene**: a step of the scene (bodies + detection + rule (R) + `W` + NSGS + impulses
//!   back), the median over blocks of `STEPS` steps;
//! - **contact part** = scene − bodies (CPU), and the scene's own wall-clock split of it
//!   ([`fem_scene::Timing`]: detection, assembly, solve, update) as a check.
//!
//! Times are the process's CPU time (the sum over its threads of `/proc/self/task/*/schedstat`, in ns), so
//! two threads report the CPU both spent; the wall time is printed beside it. The peak resident
//! memory (`VmHWM` of `/proc/self/status`) is printed at the end. Results: docs/performance.md,
//! "The contact part of a solid's step at scale (issue 24)".
//!
//! `cargo bench -p fem-scene --bench solid_on_plane [-- NX NY NZ [BLOCKS]]`

use std::time::Instant;

use fem_assembly::{DofMap, SolidOperator};
use fem_contact::detect::{MaterialTable, Obstacle};
use fem_contact::{NsgsSettings, SurfaceMaterial};
use fem_elements::solid::{Lumping, Material, MaterialModel, SolidKind};
use fem_io::VtkCells;
use fem_mesh::generate::{BoxCells, box_mesh};
use fem_scene::solid::{SolidBody, SolidGroup, SolidStepper};
use fem_scene::{BodyGroup, Prediction, SceneSettings, SceneStepper};
use fem_solid::model::SolidOutput;
use fem_solid::{SolidMass, SolidSystem};
use fem_time::{CriticalStepCheck, DefExp, SecondOrderSystem, StepSettings, Stepper};
use nalgebra::Vector3;

/// Steps before timing (the box settles onto the plane).
const WARM_UP: usize = 5;
/// Steps per timed block.
const STEPS: usize = 4;
/// Force evaluations per timed block.
const FORCE_REPEATS: usize = 4;

/// CPU seconds of this process, all threads: the sum of the first field (time on a CPU, ns)
/// of every thread's `/proc/self/task/*/schedstat` (finer than `/proc/self/stat`'s ticks).
/// Threads that ended are not counted: the rayon pools of this program live until its end.
fn cpu() -> f64 {
    let mut ns = 0u64;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for t in tasks.flatten() {
            let text = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
            ns += text
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    1e-9 * ns as f64
}

/// Peak resident memory of this process in MiB (`VmHWM`).
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// The box's system, with gravity.
fn system(mesh: &fem_mesh::Mesh) -> SolidSystem {
    let dofmap = DofMap::new(mesh.n_nodes(), 3);
    let material = Material::new(MaterialModel::SaintVenantKirchhoff, 1e6, 0.3).unwrap();
    let operator = SolidOperator::new(
        SolidKind::Hex8,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        material,
        1000.0,
        Lumping::RowSum,
        &dofmap,
    )
    .unwrap();
    SolidSystem::new(operator, SolidMass::Lumped)
        .unwrap()
        .with_gravity([0.0, 0.0, -9.81])
}

/// The box as a scene body at rest on `z = 0` (contact nodes: its bottom face).
fn body(mesh: &fem_mesh::Mesh, bound: fem_time::leapfrog::CriticalStep) -> SolidBody {
    let system = system(mesh);
    let n = system.n_dofs();
    let (x0, v0) = (vec![0.0; n], vec![0.0; n]);
    let settings = StepSettings::new(0.5 * bound.step.dt);
    let output = SolidOutput::new(
        mesh.points.clone(),
        VtkCells::new(),
        system.shared_operator(),
    );
    let stepper = SolidStepper::Exp(
        DefExp::with_bound_at(
            system,
            settings,
            &x0,
            &v0,
            CriticalStepCheck::every(0),
            bound,
        )
        .unwrap(),
    );
    let bottom: Vec<usize> = (0..mesh.n_nodes())
        .filter(|&k| mesh.points[k][2] == 0.0)
        .collect();
    SolidBody::new(stepper, mesh.points.clone(), bottom, 0, output).unwrap()
}

fn scene(mesh: &fem_mesh::Mesh, bound: fem_time::leapfrog::CriticalStep) -> SceneStepper {
    let group = SolidGroup::new(vec![body(mesh, bound)]);
    SceneStepper::new(
        vec![Box::new(group) as Box<dyn BodyGroup>],
        vec![Obstacle::Plane {
            point: Vector3::zeros(),
            normal: Vector3::z(),
        }],
        MaterialTable {
            default: SurfaceMaterial::new(0.5, 0.0).unwrap(),
            pairs: vec![],
            obstacle_materials: vec![0],
        },
        &[],
        SceneSettings {
            solver: NsgsSettings::default(),
            prediction: Prediction::Auto,
        },
    )
    .unwrap()
}

/// Median CPU and wall seconds of one call of `f`, over `blocks` blocks of at least
/// `per_block` calls and at least a quarter of a second each (the CPU clock of the threads
/// advances by the scheduler's ticks).
fn timed(blocks: usize, per_block: usize, mut f: impl FnMut()) -> (f64, f64) {
    let probe = Instant::now();
    f();
    let once = probe.elapsed().as_secs_f64().max(1e-9);
    let per_block = per_block.max((0.25 / once).ceil() as usize);
    let (mut c, mut w) = (Vec::new(), Vec::new());
    for _ in 0..blocks {
        let (c0, w0) = (cpu(), Instant::now());
        for _ in 0..per_block {
            f();
        }
        c.push((cpu() - c0) / per_block as f64);
        w.push(w0.elapsed().as_secs_f64() / per_block as f64);
    }
    (median(c), median(w))
}

fn main() {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (nx, ny, nz) = match numbers[..] {
        [nx, ny, nz, ..] => (nx, ny, nz),
        _ => (100, 100, 10),
    };
    let blocks = numbers.get(3).copied().unwrap_or(5);
    let mesh = box_mesh(
        [1.0, 1.0, 0.1 * nz as f64 / 10.0],
        [nx, ny, nz],
        BoxCells::Hex8,
    )
    .unwrap();
    let twin_system = system(&mesh);
    let x0 = vec![0.0; twin_system.n_dofs()];
    let set_up = Instant::now();
    let bound = DefExp::estimate(&twin_system, &x0).unwrap();
    println!(
        "box {nx} × {ny} × {nz} hex8 ({} cells, {} nodes, {} dofs), h = {:.3e} s (half the critical step, found in {:.1} s)",
        nx * ny * nz,
        mesh.n_nodes(),
        x0.len(),
        0.5 * bound.step.dt,
        set_up.elapsed().as_secs_f64()
    );
    let mut s = scene(&mesh, bound.clone());
    let mut twin = SolidGroup::new(vec![body(&mesh, bound)]);
    let contact_nodes = {
        let g = s.groups()[0].as_any().downcast_ref::<SolidGroup>().unwrap();
        g.bodies()[0].contact_nodes().len()
    };
    println!("contact nodes (the bottom face): {contact_nodes}");
    let mut f = vec![0.0; x0.len()];
    for _ in 0..WARM_UP {
        s.step().unwrap();
    }
    let last = *s.last_solve();
    println!(
        "after {WARM_UP} steps: {} contact points, {} active, {} warm-started, {} sweeps, error {:.1e}",
        last.contacts, last.active, last.warm_started, last.report.sweeps, last.report.error
    );
    println!(
        "| threads | force CPU (wall) ms | bodies step CPU (wall) ms | scene step CPU (wall) ms | contact part CPU ms | contact / force | scene split (wall ms/step): detection, assembly, solve, update |"
    );
    println!("|---:|---|---|---|---:|---:|---|");
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let x = twin.bodies()[0].position().to_vec();
            let force = timed(blocks, FORCE_REPEATS, || {
                twin_system.internal_force(&x, &mut f).unwrap();
            });
            let bodies = timed(blocks, STEPS, || {
                twin.begin_step().unwrap();
                twin.end_step().unwrap();
            });
            let before = s.timing();
            let (mut n_steps, mut sweeps) = (0usize, 0u64);
            let scene_step = timed(blocks, STEPS, || {
                s.step().unwrap();
                n_steps += 1;
                sweeps += s.last_solve().report.sweeps;
            });
            let after = s.timing();
            let per = |a: std::time::Duration, b: std::time::Duration| {
                1e3 * (a - b).as_secs_f64() / n_steps as f64
            };
            let contact = scene_step.0 - bodies.0;
            println!(
                "| {threads} | {:.1} ({:.1}) | {:.1} ({:.1}) | {:.1} ({:.1}) | {:.1} | **{:.2}** | {:.2}, {:.2}, {:.2}, {:.2} (bodies {:.1}); {:.1} sweeps/step |",
                1e3 * force.0,
                1e3 * force.1,
                1e3 * bodies.0,
                1e3 * bodies.1,
                1e3 * scene_step.0,
                1e3 * scene_step.1,
                1e3 * contact,
                contact / force.0,
                per(after.detection, before.detection),
                per(after.assembly, before.assembly),
                per(after.solve, before.solve),
                per(after.update, before.update),
                per(after.bodies, before.bodies),
                sweeps as f64 / n_steps as f64
            );
        });
    }
    // How far the box sank: the lowest contact node at the end.
    let g = s.groups()[0].as_any().downcast_ref::<SolidGroup>().unwrap();
    let lowest = g.bodies()[0]
        .placed_nodes()
        .iter()
        .map(|p| p.z)
        .fold(f64::INFINITY, f64::min);
    let last = *s.last_solve();
    println!(
        "end (step {}): {} active contacts, lowest contact node z = {lowest:.2e} m; peak resident memory {:.0} MiB",
        s.clock().step(),
        last.active,
        peak_rss_mib()
    );
}
