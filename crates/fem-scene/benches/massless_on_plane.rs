//! DEF_EXP's massless contact layer at scale (issue 24, "Performance"; docs/theory/contact.md
//! §9.1, C26–C29): the cost of a step's massless equilibrium against the body's internal force.
//!
//! A hex8 box of `nx × ny × nz` cells (default 100 × 100 × 10 = 10⁵ cells, 1 × 1 × 0.1 m, SVK
//! `E = 10⁶`, `ν = 0.3`, `ρ = 1000`, row-sum lumped) under gravity, its bottom face's
//! `(nx+1)(ny+1)` nodes massless (their mass redistributed, `fem_scene::redistribute`, as
//! `mass_redistribution: true` does), DEF_EXP at half the critical step. The plane it rests on
//! is stood for by its reaction: each step ends with the impulse `m g h / n` upwards on every
//! bottom node (`end_contact_step`), so that a step does what a scene step does to the body —
//! the free equilibrium (C26) in the first half and the map's solve (C28) in the second —
//! without the contact solver (whose `W` on massless nodes is dense: see the report printed
//! at the end and docs/performance.md). The first `WARM_UP` steps are not timed.
//!
//! Per thread count (one, then two; a rayon pool of its own for each), in the same run:
//!
//! - **force**: one internal-force evaluation of the whole box (a twin system);
//! - **plain step**: a DEF_EXP step of the box with its mass where the lumping puts it;
//! - **massless step, whole**: the redistributed box, its equilibrium on the whole body's
//!   force and tangent, a tangent and a factorization every Newton iteration (a wrapper system
//!   that gives no block, `DefExp::set_massless_reuse(false)`: the code before this bench),
//!   the baseline;
//! - **massless step, part**: the same on the cells touching the bottom nodes only
//!   (`SolidSystem`'s `LeapFrogSystem::dof_block`), still a factorization every iteration;
//! - **massless step, part + kept factorization**: the default, `K_cc`'s factorization kept
//!   while Newton's iterations on it contract (`massless::REUSE_CONTRACTION`);
//! - the equilibrium's own split (wall ms a step: force, tangent, factorization, solves) and
//!   its Newton iterations a solve, from `DefExp::massless_statistics`.
//!
//! Times are the process's CPU time (the sum over its threads of `/proc/self/task/*/schedstat`),
//! medians over blocks of at least a quarter of a second; wall time in brackets. The peak
//! resident memory (`VmHWM`) is printed at the end. Results: docs/performance.md, "DEF_EXP's
//! massless contact layer at scale".
//!
//! `cargo bench -p fem-scene --bench massless_on_plane [-- NX NY NZ [BLOCKS]]`

use std::time::Instant;

use fem_assembly::{CsrMatrix, DofMap, SolidOperator};
use fem_elements::solid::{Lumping, Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};
use fem_solid::{SolidMass, SolidSystem};
use fem_time::leapfrog::CriticalStep;
use fem_time::leapfrog::massless::MasslessStatistics;
use fem_time::{
    CriticalStepCheck, DefExp, EvalError, LeapFrogSystem, Mass, Matrix, NodalStepper,
    SecondOrderSystem, StepSettings, Stepper, TangentKind,
};

/// Steps before timing.
const WARM_UP: usize = 3;
/// Steps per timed block.
const STEPS: usize = 2;
/// Force evaluations per timed block.
const FORCE_REPEATS: usize = 4;

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

/// Median CPU and wall seconds of one call of `f` over `blocks` blocks of at least
/// `per_block` calls and a quarter of a second.
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

/// The box's system with gravity, its mass where the lumping puts it.
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

/// The box's system with no mass on its bottom nodes `bottom` (redistributed before gravity
/// weighs it, as the scene's section does).
fn massless_system(mesh: &fem_mesh::Mesh, bottom: &[usize]) -> SolidSystem {
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
    let plain = SolidSystem::new(operator, SolidMass::Lumped).unwrap();
    // The neighbours' redistribution (R1), as measured in docs/performance.md; the massless
    // layer's cost does not depend on where its mass went.
    fem_scene::redistribute::redistribute(
        plain,
        fem_scene::redistribute::Redistribution::Neighbours,
        8,
        &mesh.blocks[0].connectivity,
        bottom,
    )
    .unwrap()
    .with_gravity([0.0, 0.0, -9.81])
}

/// A solid that gives no [`LeapFrogSystem::dof_block`]: DEF_EXP's massless equilibrium then
/// evaluates the whole body (the baseline).
#[derive(Debug)]
struct Whole(SolidSystem);

impl SecondOrderSystem for Whole {
    fn n_dofs(&self) -> usize {
        self.0.n_dofs()
    }
    fn mass(&self) -> &Mass {
        self.0.mass()
    }
    fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        self.0.internal_force(x, f)
    }
    fn tangent_kind(&self) -> TangentKind {
        self.0.tangent_kind()
    }
    fn tangent(&self, x: &[f64]) -> Result<Matrix, EvalError> {
        self.0.tangent(x)
    }
    fn tangent_into(&self, x: &[f64], out: &mut CsrMatrix<f64>) -> Result<(), EvalError> {
        self.0.tangent_into(x, out)
    }
    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        self.0.potential_energy(x)
    }
    fn external_force(&self, t: f64, f: &mut [f64]) {
        self.0.external_force(t, f)
    }
    fn has_external_force(&self) -> bool {
        self.0.has_external_force()
    }
}

impl LeapFrogSystem for Whole {
    fn critical_step(&self, x: &[f64]) -> Result<fem_assembly::StableStep, EvalError> {
        LeapFrogSystem::critical_step(&self.0, x)
    }
}

fn stepper<S: LeapFrogSystem>(system: S, bound: &CriticalStep) -> DefExp<S> {
    let n = system.n_dofs();
    let (x0, v0) = (vec![0.0; n], vec![0.0; n]);
    DefExp::with_bound_at(
        system,
        StepSettings::new(0.5 * bound.step.dt),
        &x0,
        &v0,
        CriticalStepCheck::every(0),
        bound.clone(),
    )
    .unwrap()
}

/// One step with the plane's reaction `impulse` (on the bottom nodes' vertical dofs).
fn step<S: LeapFrogSystem>(s: &mut DefExp<S>, impulse: &[f64]) {
    s.begin_contact_step().unwrap();
    s.end_contact_step(impulse).unwrap();
}

/// The equilibrium's statistics between two readings, per step: wall ms of force, tangent,
/// factorization, solves; iterations a solve.
fn split(a: MasslessStatistics, b: MasslessStatistics, steps: usize) -> String {
    let ms =
        |x: std::time::Duration, y: std::time::Duration| 1e3 * (x - y).as_secs_f64() / steps as f64;
    format!(
        "{:.1}, {:.1}, {:.1}, {:.1}; {:.2} it/solve",
        ms(a.force, b.force),
        ms(a.tangent, b.tangent),
        ms(a.factorization, b.factorization),
        ms(a.solve, b.solve),
        (a.iterations - b.iterations) as f64 / (a.solves - b.solves).max(1) as f64
    )
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
    let bottom: Vec<usize> = (0..mesh.n_nodes())
        .filter(|&k| mesh.points[k][2] == 0.0)
        .collect();
    let twin = system(&mesh);
    let n = twin.n_dofs();
    let set_up = Instant::now();
    let bound = DefExp::estimate(&twin, &vec![0.0; n]).unwrap();
    println!(
        "box {nx} × {ny} × {nz} hex8 ({} cells, {} nodes, {n} dofs), {} massless nodes (the bottom face), h = {:.3e} s (half the critical step, found in {:.1} s)",
        nx * ny * nz,
        mesh.n_nodes(),
        bottom.len(),
        0.5 * bound.step.dt,
        set_up.elapsed().as_secs_f64()
    );
    // The plane's reaction: the box's weight over the step, shared by the bottom nodes.
    let weight: f64 = match twin.mass() {
        Mass::Lumped(m) => m.iter().step_by(3).sum::<f64>() * 9.81,
        Mass::Consistent(_) => unreachable!("lumped"),
    };
    let h = 0.5 * bound.step.dt;
    let mut impulse = vec![0.0; n];
    for &k in &bottom {
        impulse[3 * k + 2] = weight * h / bottom.len() as f64;
    }
    let set_up = Instant::now();
    let mut plain = stepper(system(&mesh), &bound);
    let mut part = stepper(massless_system(&mesh, &bottom), &bound);
    part.set_massless_reuse(false);
    let part_set_up = set_up.elapsed().as_secs_f64();
    let mut kept = stepper(massless_system(&mesh, &bottom), &bound);
    let set_up = Instant::now();
    let mut whole = stepper(Whole(massless_system(&mesh, &bottom)), &bound);
    whole.set_massless_reuse(false);
    let whole_set_up = set_up.elapsed().as_secs_f64();
    println!(
        "set-up of the massless block (first tangent, analysis, factorization): part {part_set_up:.2} s, whole {whole_set_up:.2} s (with the system)"
    );
    for _ in 0..WARM_UP {
        step(&mut plain, &impulse);
        step(&mut part, &impulse);
        step(&mut kept, &impulse);
        step(&mut whole, &impulse);
    }
    // The two ways give the same positions to rounding (the same sums in the same order; the
    // part's factor is ordered by nested dissection, the whole's by faer's minimum degree).
    let differ = part
        .position()
        .iter()
        .zip(whole.position())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let kept_off = part
        .position()
        .iter()
        .zip(kept.position())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let motion = part.position().iter().map(|a| a.abs()).fold(0.0, f64::max);
    println!(
        "after {WARM_UP} steps: part and whole differ by {differ:.1e} m at most; the kept factorization's positions differ by {kept_off:.1e} m at most ({:.1e} of the largest displacement); massless dofs {}",
        kept_off / motion,
        part.massless_dofs().len()
    );
    let mut f = vec![0.0; n];
    let x = part.position().to_vec();
    println!(
        "| threads | force CPU (wall) ms | plain step | massless step: whole (before) | part | part + kept factorization | **(massless step − plain) / force**: whole, part, kept | split, wall ms a step: force, tangent, factorization, solves (whole; part; kept) |"
    );
    println!("|---:|---|---|---|---|---|---|---|");
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let force = timed(blocks, FORCE_REPEATS, || {
                twin.internal_force(&x, &mut f).unwrap();
            });
            let p = timed(blocks, STEPS, || step(&mut plain, &impulse));
            let (s0, n0) = (part.massless_statistics().unwrap(), part.clock().step());
            let a = timed(blocks, STEPS, || step(&mut part, &impulse));
            let (s1, n1) = (part.massless_statistics().unwrap(), part.clock().step());
            let (w0, m0) = (whole.massless_statistics().unwrap(), whole.clock().step());
            let b = timed(blocks, STEPS, || step(&mut whole, &impulse));
            let (w1, m1) = (whole.massless_statistics().unwrap(), whole.clock().step());
            let (k0, l0) = (kept.massless_statistics().unwrap(), kept.clock().step());
            let c = timed(blocks, STEPS, || step(&mut kept, &impulse));
            let (k1, l1) = (kept.massless_statistics().unwrap(), kept.clock().step());
            println!(
                "| {threads} | {:.2} ({:.2}) | {:.2} ({:.2}) | {:.1} ({:.1}) | {:.1} ({:.1}) | {:.2} ({:.2}) | {:.1}, {:.1}, **{:.2}** | {}; {}; {}, {} factorizations in {} steps |",
                1e3 * force.0,
                1e3 * force.1,
                1e3 * p.0,
                1e3 * p.1,
                1e3 * b.0,
                1e3 * b.1,
                1e3 * a.0,
                1e3 * a.1,
                1e3 * c.0,
                1e3 * c.1,
                (b.0 - p.0) / force.0,
                (a.0 - p.0) / force.0,
                (c.0 - p.0) / force.0,
                split(w1, w0, (m1 - m0) as usize),
                split(s1, s0, (n1 - n0) as usize),
                split(k1, k0, (l1 - l0) as usize),
                k1.factorizations - k0.factorizations,
                l1 - l0,
            );
        });
    }
    let lowest = bottom
        .iter()
        .map(|&k| part.position()[3 * k + 2])
        .fold(f64::INFINITY, f64::min);
    println!(
        "end (step {}): lowest bottom node's displacement {lowest:.2e} m; peak resident memory {:.0} MiB",
        part.clock().step(),
        peak_rss_mib()
    );
}
