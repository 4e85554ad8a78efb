//! Explicit internal-force evaluation of a Neo-Hookean solid: elements per second.
//!
//! The problem of the peers in `shared/peers/` (`mfem_explicit.py`, `felupe_force.py`): the unit
//! cube in n³ hex8 cells (n = 10, 20, 30), 2×2×2 Gauss points, MFEM's/felupe's Neo-Hookean
//! `W = μ/2 (J^{-2/3} I₁ − 3) + κ/2 (J − 1)²` with μ = 0.25, κ = 5, face x = 0 clamped, and
//! felupe's displacement `u = 0.05 (X z, Y², −X²)`; plus the same cube in 6 n³ tet4 cells
//! (1 point). One evaluation = every cell's force into its slot and the fixed-order gather
//! into the free-dof vector, exactly what `SolidOperator::internal_force` does per explicit
//! step.
//!
//! Before divan runs, a table is printed: median time per evaluation over repeated runs on a
//! 1-thread and a 2-thread rayon pool, elements per second and the 2-thread speed-up
//! (`SOLID_BENCH_SKIP_TABLE=1` skips it). The divan benches time the same evaluations.

use std::time::Instant;

use fem_assembly::{DofMap, SolidOperator};
use fem_elements::solid::{Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};

const SIZES: [usize; 3] = [10, 20, 30];

struct Case {
    body: SolidOperator,
    u: Vec<f64>,
    slots: Vec<f64>,
    f: Vec<f64>,
}

impl Case {
    fn new(cells: BoxCells, n: usize) -> Self {
        let mesh = box_mesh([1.0; 3], [n; 3], cells).expect("box");
        let fixed = mesh
            .group("xmin")
            .expect("xmin")
            .nodes
            .iter()
            .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
            .collect::<Vec<_>>();
        let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
        let kind = match cells {
            BoxCells::Hex8 => SolidKind::Hex8,
            _ => SolidKind::Tet4,
        };
        let material =
            Material::from_shear_and_bulk(MaterialModel::NeoHookean, 0.25, 5.0).expect("valid");
        let body = SolidOperator::new(
            kind,
            &mesh.points,
            &mesh.blocks[0].connectivity,
            material,
            1.0,
            kind.default_lumping(),
            &dofmap,
        )
        .expect("valid mesh");
        let u: Vec<f64> = mesh
            .points
            .iter()
            .flat_map(|p| [0.05 * p[0] * p[2], 0.05 * p[1] * p[1], -0.05 * p[0] * p[0]])
            .collect();
        let f = vec![0.0; dofmap.n_free()];
        Self {
            body,
            u,
            slots: Vec::new(),
            f,
        }
    }

    fn evaluate(&mut self) {
        self.body
            .internal_force(&self.u, &mut self.slots, &mut self.f)
            .expect("no inverted cell");
    }
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

/// CPU time of the calling thread (s), from `/proc/thread-self/schedstat` (Linux); `None`
/// elsewhere.
fn thread_cpu_time() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// Median wall seconds per evaluation over `blocks` blocks of repeated evaluations (~0.2 s
/// each), and the median CPU seconds per evaluation of the pool's busiest worker and of all its
/// workers together (from each worker's `/proc/thread-self/schedstat`, read by a broadcast
/// before and after each block; `None` where that file does not exist).
fn median_time(case: &mut Case, threads: &rayon::ThreadPool, blocks: usize) -> Timing {
    let worker_cpu = || threads.broadcast(|_| thread_cpu_time());
    threads.install(|| case.evaluate());
    let t0 = Instant::now();
    threads.install(|| case.evaluate());
    let once = t0.elapsed().as_secs_f64().max(1e-6);
    let reps = ((0.2 / once) as usize).clamp(1, 10_000);
    let mut wall = Vec::with_capacity(blocks);
    let mut fastest = f64::INFINITY;
    let (mut busiest, mut total) = (Vec::with_capacity(blocks), Vec::with_capacity(blocks));
    for _ in 0..blocks {
        let (t, c0) = (Instant::now(), worker_cpu());
        threads.install(|| {
            for _ in 0..reps {
                let t = Instant::now();
                case.evaluate();
                fastest = fastest.min(t.elapsed().as_secs_f64());
            }
        });
        wall.push(t.elapsed().as_secs_f64() / reps as f64);
        let c1 = worker_cpu();
        let deltas: Option<Vec<f64>> = c0
            .iter()
            .zip(&c1)
            .map(|(a, b)| Some(((*b)? - (*a)?) / reps as f64))
            .collect();
        if let Some(d) = deltas {
            busiest.push(d.iter().copied().fold(0.0, f64::max));
            total.push(d.iter().sum::<f64>());
        }
    }
    wall.sort_by(f64::total_cmp);
    busiest.sort_by(f64::total_cmp);
    total.sort_by(f64::total_cmp);
    Timing {
        median: wall[blocks / 2],
        fastest,
        cpu: (busiest.len() == blocks).then(|| (busiest[blocks / 2], total[blocks / 2])),
    }
}

/// Seconds per evaluation: the median over blocks, the fastest single evaluation, and the
/// CPU seconds of the busiest worker and of all workers (medians; `None` off Linux).
struct Timing {
    median: f64,
    fastest: f64,
    cpu: Option<(f64, f64)>,
}

fn print_table() {
    let (one, two) = (pool(1), pool(2));
    println!("Neo-Hookean internal force (cells' forces + fixed-order gather), median of 5 blocks");
    println!(" 2t/1t: median wall time of one thread over two; cpu: 1-thread CPU time over the");
    println!(" busiest worker's CPU time with two (what two free cores would give); min: fastest");
    println!(" single evaluation of one thread over two's; work: CPU of both workers over 1t CPU.");
    println!(
        "{:>5} {:>3} {:>7} {:>10} {:>10} {:>10} {:>10} {:>6} {:>6} {:>6} {:>5}",
        "kind",
        "n",
        "cells",
        "s/eval 1t",
        "elem/s 1t",
        "elem/s cpu",
        "elem/s 2t",
        "2t/1t",
        "cpu",
        "min",
        "work"
    );
    for (cells, name) in [(BoxCells::Hex8, "hex8"), (BoxCells::Tet4, "tet4")] {
        for n in SIZES {
            let mut case = Case::new(cells, n);
            let n_cells = case.body.n_cells() as f64;
            let t1 = median_time(&mut case, &one, 5);
            let t2 = median_time(&mut case, &two, 5);
            let cpu = t1
                .cpu
                .map_or("-".to_string(), |c| format!("{:.3e}", n_cells / c.0));
            let (speedup_cpu, work) = match (t1.cpu, t2.cpu) {
                (Some(c1), Some(c2)) => {
                    (format!("{:.2}", c1.0 / c2.0), format!("{:.2}", c2.1 / c1.0))
                }
                _ => ("-".to_string(), "-".to_string()),
            };
            println!(
                "{name:>5} {n:>3} {:>7} {:>10.3e} {:>10.3e} {cpu:>10} {:>10.3e} {:>6.2} {speedup_cpu:>6} {:>6.2} {work:>5}",
                n_cells,
                t1.median,
                n_cells / t1.median,
                n_cells / t2.median,
                t1.median / t2.median,
                t1.fastest / t2.fastest
            );
        }
    }
    let n_nodes = 101 * 101 * 101;
    println!(
        "memory estimate of the explicit operator, 100³ hex8 (10⁶ cells, {n_nodes} nodes): {:.2} GB",
        SolidOperator::memory_estimate(SolidKind::Hex8, 1_000_000, n_nodes) as f64 / 1e9
    );
}

fn main() {
    if std::env::var_os("SOLID_BENCH_SKIP_TABLE").is_none() {
        print_table();
    }
    divan::main();
}

fn bench_force(bencher: divan::Bencher, cells: BoxCells, n: usize, threads: usize) {
    let mut case = Case::new(cells, n);
    let threads = pool(threads);
    bencher
        .counter(divan::counter::ItemsCount::new(case.body.n_cells()))
        .bench_local(|| threads.install(|| case.evaluate()));
}

/// Hex8, 2×2×2 points, one thread.
#[divan::bench(args = SIZES, sample_count = 20)]
fn hex8_one_thread(bencher: divan::Bencher, n: usize) {
    bench_force(bencher, BoxCells::Hex8, n, 1);
}

/// Hex8, 2×2×2 points, two threads.
#[divan::bench(args = SIZES, sample_count = 20)]
fn hex8_two_threads(bencher: divan::Bencher, n: usize) {
    bench_force(bencher, BoxCells::Hex8, n, 2);
}

/// Tet4, 1 point, one thread.
#[divan::bench(args = SIZES, sample_count = 20)]
fn tet4_one_thread(bencher: divan::Bencher, n: usize) {
    bench_force(bencher, BoxCells::Tet4, n, 1);
}
