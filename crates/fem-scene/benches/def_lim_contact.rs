//! DEF_LIM's contact matrix `W = H A⁻¹ Hᵀ` as a block solve (issue 24, scope item 2: "W from
//! the step's factorization, one solve per contact column or a block approach — say what it
//! costs"), on the Hertz hemispheres of `crates/fem-scene/tests/hertz.rs` (tet10 from Gmsh,
//! `meshes/hemisphere_tet10_{coarse,medium,fine}.msh`, SVK `E = 1`, `ν = 0.3`, `ρ = 1`, its
//! weight giving Hertz's `a = 0.15 R`, DEF_LIM with `η = √2/ω_c`, `h = η/4`).
//!
//! For each mesh named on the command line (default `coarse medium`):
//!
//! 1. **the run**: the hemisphere settling on the plane `z = 0` as the Hertz test runs it (40
//!    steps on the coarse mesh, 60 on the finer ones), with the default block
//!    ([`BLOCK_POINTS`] points): wall seconds per step, the scene's split
//!    ([`fem_scene::Timing`]), contact points per step;
//! 2. **`A⁻¹Hᵀ` alone**, at the configuration the run ends in (a step begun): the columns of the
//!    `n_c` contact nodes nearest the plane (`n_c` = the last step's contact points), point by
//!    point (one 3-column solve and a dense column per point: the path before the block solve)
//!    and in blocks of `k` points (`3k` right-hand sides a solve), for several `k`; median CPU
//!    and wall time over blocks of calls, one rayon thread, then the default block on two.
//!
//! Times: CPU of the process (the sum over its threads of `/proc/self/task/*/schedstat`) and
//! wall. Results: docs/performance.md, "DEF_LIM's contact matrix W as a block solve".
//!
//! `cargo bench -p fem-scene --bench def_lim_contact [-- coarse medium fine]`

use std::path::Path;
use std::time::Instant;

use fem_assembly::{DofMap, SolidOperator};
use fem_contact::body::{ContactBody, PointMap};
use fem_elements::solid::{Lumping, Material, MaterialModel, SolidKind};
use fem_io::VtkCells;
use fem_mesh::read_msh;
use fem_scene::solid::{BLOCK_POINTS, SolidBody, SolidGroup, SolidStepper, group_nodes};
use fem_scene::{BodyGroup, Prediction, SceneSettings, SceneStepper};
use fem_solid::model::SolidOutput;
use fem_solid::{SolidMass, SolidSystem};
use fem_time::{DefLim, StepSettings, Stepper};
use nalgebra::Vector3;

/// CPU seconds of this process, all threads (`/proc/self/task/*/schedstat`, ns).
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median CPU and wall seconds of one call of `f`, over 5 blocks of at least a quarter of a
/// second each.
fn timed(mut f: impl FnMut()) -> (f64, f64) {
    let probe = Instant::now();
    f();
    let once = probe.elapsed().as_secs_f64().max(1e-9);
    let per_block = ((0.25 / once).ceil() as usize).max(1);
    let (mut c, mut w) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let (c0, w0) = (cpu(), Instant::now());
        for _ in 0..per_block {
            f();
        }
        c.push((cpu() - c0) / per_block as f64);
        w.push(w0.elapsed().as_secs_f64() / per_block as f64);
    }
    (median(c), median(w))
}

/// The hemisphere of `file` under the Hertz test's load, its nodes, dofs and step.
fn hemisphere(file: &str) -> (SolidBody, usize, usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../meshes")
        .join(file);
    let mesh = read_msh(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let b = mesh.block_indices_of_dim(3).next().expect("volume cells");
    let conn = mesh.blocks[b].connectivity.clone();
    let dofmap = DofMap::new(mesh.n_nodes(), 3);
    let material = Material::new(MaterialModel::SaintVenantKirchhoff, 1.0, 0.3).unwrap();
    let operator = SolidOperator::new(
        SolidKind::Tet10,
        &mesh.points,
        &conn,
        material,
        1.0,
        Lumping::Hrz,
        &dofmap,
    )
    .unwrap();
    let e_star = 1.0 / (1.0 - 0.3 * 0.3);
    let a: f64 = 0.15;
    let mass: f64 = operator.lumped_mass().iter().sum::<f64>() / 3.0;
    let g = 4.0 * e_star * a.powi(3) / 3.0 / mass;
    let system = SolidSystem::new(operator, SolidMass::Lumped)
        .unwrap()
        .with_gravity([0.0, 0.0, -g]);
    let eta = std::f64::consts::SQRT_2 / (2.0 * e_star * a / mass).sqrt();
    let x0 = vec![0.0; dofmap.n_free()];
    let output = SolidOutput::new(
        mesh.points.clone(),
        VtkCells::new(),
        system.shared_operator(),
    );
    let stepper = SolidStepper::Lim(
        DefLim::new(system, eta, StepSettings::new(0.25 * eta), &x0, &x0).unwrap(),
    );
    let surface = group_nodes(&mesh, "sphere").expect("group sphere");
    let body = SolidBody::new(stepper, mesh.points.clone(), surface, 0, output).unwrap();
    (body, mesh.n_nodes(), dofmap.n_free())
}

/// A body that answers every point by itself (the path before the block solve).
struct PointByPoint<'a>(&'a dyn ContactBody);

impl ContactBody for PointByPoint<'_> {
    fn dof_count(&self) -> usize {
        self.0.dof_count()
    }
    fn free_velocity(&self) -> &[f64] {
        self.0.free_velocity()
    }
    fn start_velocity(&self) -> &[f64] {
        self.0.start_velocity()
    }
    fn point_map(&self, point: &Vector3<f64>, out: &mut PointMap) {
        self.0.point_map(point, out)
    }
    fn inverse_inertia_map(&self, h: &PointMap, out: &mut PointMap) {
        self.0.inverse_inertia_map(h, out)
    }
    fn apply_impulse(&mut self, _p: &[f64]) {}
}

/// The Hertz run on mesh `name` with blocks of `block` points (on the current rayon pool of
/// `threads` threads): prints its times, returns the scene and its last step's contacts.
fn run(name: &str, block: usize, threads: usize) -> (SceneStepper, usize) {
    let (body, nodes, dofs) = hemisphere(&format!("hemisphere_tet10_{name}.msh"));
    let body = body.with_block_points(block);
    let steps = if name == "coarse" { 40 } else { 60 };
    let surface = body.contact_nodes().len();
    let mut scene = SceneStepper::new(
        vec![Box::new(SolidGroup::new(vec![body])) as Box<dyn BodyGroup>],
        vec![fem_contact::detect::Obstacle::Plane {
            point: Vector3::zeros(),
            normal: Vector3::z(),
        }],
        fem_contact::detect::MaterialTable {
            default: fem_contact::SurfaceMaterial::new(0.0, 0.0).unwrap(),
            pairs: vec![],
            obstacle_materials: vec![0],
        },
        &[],
        SceneSettings {
            solver: fem_contact::NsgsSettings {
                tolerance: 1e-12,
                ..Default::default()
            },
            prediction: Prediction::Auto,
        },
    )
    .unwrap();
    let (mut contacts, mut most) = (0usize, 0usize);
    let start = Instant::now();
    for _ in 0..steps {
        scene.step().unwrap();
        contacts += scene.last_solve().contacts;
        most = most.max(scene.last_solve().contacts);
    }
    let wall = start.elapsed().as_secs_f64();
    let t = scene.timing();
    let per = |d: std::time::Duration| 1e3 * d.as_secs_f64() / steps as f64;
    let n_c = scene.last_solve().contacts;
    println!(
        "\n{name}, blocks of {block}, {threads} threads: {nodes} nodes, {dofs} dofs, {surface} contact nodes; run of {steps} steps: {:.1} s, {:.1} ms a step (bodies {:.1}, detection {:.2}, assembly {:.1}, solve {:.2}, update {:.2}); contact points a step: mean {:.1}, most {most}, last {n_c}",
        wall,
        1e3 * wall / steps as f64,
        per(t.bodies),
        per(t.detection),
        per(t.assembly),
        per(t.solve),
        per(t.update),
        contacts as f64 / steps as f64,
    );
    (scene, n_c)
}

fn main() {
    let mut names: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if names.is_empty() {
        names = vec!["coarse".into(), "medium".into()];
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at the start: {}", load.trim());
    for name in &names {
        // The run with the default block and with blocks of one point (a 3-column solve per
        // point, the blocks in parallel), each on 1 and 2 threads, interleaved.
        let mut last = None;
        for (block, threads) in [(BLOCK_POINTS, 1), (1, 1), (BLOCK_POINTS, 2), (1, 2)] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            last = Some(pool.install(|| run(name, block, threads)));
        }
        let (mut scene, n_c) = last.unwrap();
        // A⁻¹Hᵀ alone: the n_c contact nodes nearest the plane, a step begun.
        let group = &mut scene.groups_mut()[0];
        group.begin_step().unwrap();
        let solids = group.as_any().downcast_ref::<SolidGroup>().unwrap();
        let mut placed = solids.bodies()[0].placed_nodes().to_vec();
        placed.sort_by(|a, b| a.z.total_cmp(&b.z));
        placed.truncate(n_c.max(1));
        let body: &dyn ContactBody = group.contact_body(0);
        let hs: Vec<PointMap> = placed
            .iter()
            .map(|p| {
                let mut h = PointMap::new();
                body.point_map(p, &mut h);
                h
            })
            .collect();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        println!("A⁻¹Hᵀ of {} points ({} columns):", hs.len(), 3 * hs.len());
        println!("| path | threads | CPU ms | wall ms | CPU µs a column |");
        println!("|---|---:|---:|---:|---:|");
        let row = |label: &str, threads: usize, (c, w): (f64, f64)| {
            println!(
                "| {label} | {threads} | {:.2} | {:.2} | {:.1} |",
                1e3 * c,
                1e3 * w,
                1e6 * c / (3 * hs.len()) as f64
            );
        };
        let by_point = PointByPoint(body);
        let reference = one.install(|| {
            timed(|| {
                let mut gs = vec![PointMap::new(); hs.len()];
                by_point.inverse_inertia_maps(&hs, &mut gs);
            })
        });
        row(
            "point by point (3 columns a solve, dense columns)",
            1,
            reference,
        );
        let solids = group.as_any().downcast_ref::<SolidGroup>().unwrap();
        let mut ks: Vec<usize> = vec![1, 2, 4, 8, 16, 32, 64, 128];
        ks.retain(|&k| k < hs.len());
        ks.push(hs.len());
        for &k in &ks {
            let blocked = &solids.bodies()[0];
            let time = one.install(|| {
                timed(|| {
                    let mut gs = vec![PointMap::new(); hs.len()];
                    blocked.inverse_inertia_maps_in_blocks(&hs, &mut gs, k);
                })
            });
            row(&format!("blocks of {k} points"), 1, time);
        }
        let default = two.install(|| {
            timed(|| {
                let mut gs = vec![PointMap::new(); hs.len()];
                body.inverse_inertia_maps(&hs, &mut gs);
            })
        });
        row(&format!("blocks of {BLOCK_POINTS} (default)"), 2, default);
        let by_point_two = two.install(|| {
            timed(|| {
                let mut gs = vec![PointMap::new(); hs.len()];
                by_point.inverse_inertia_maps(&hs, &mut gs);
            })
        });
        row(
            "point by point (3 columns a solve, dense columns)",
            2,
            by_point_two,
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("\nload average at the end: {}", load.trim());
}
