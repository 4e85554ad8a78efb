//! The whole DEF_EXP step through the run loop against its internal-force evaluation (issue
//! 25): a Neo-Hookean hex8 box of `n³` cells (default `n = 30`), clamped at `z = 0`, started
//! with a velocity field, one thread (`RAYON_NUM_THREADS=1` is set by the program itself).
//! A plain timing program:
//!
//! ```text
//! cargo bench --bench def_exp_step -- [n] [rounds]
//! ```
//!
//! Per round: the force evaluation alone (`SolidOperator::internal_force`, the median of five
//! blocks of 50 evaluations), and `fem::drive::drive` of the input over `N₁ = 100` and
//! `N₂ = 600` steps with a history row every 1000 steps and frames at both ends only, the step's
//! cost being the difference over `N₂ − N₁` (set-up and frames cancel). Times are the
//! process's CPU time (`/proc/self/stat`), which the load of a shared machine disturbs less
//! than wall time. Two inputs: the critical step checked
//! only at the start (`recheck_every: 0`) and the default adaptive re-checks. Results:
//! `docs/performance.md`, "A DEF_EXP step against its force".

use std::path::{Path, PathBuf};

use fem::drive::{CheckpointCadence, Progress, RunOptions, drive};

fn input(dir: &Path, n: usize, recheck: &str) -> PathBuf {
    let path = dir.join(format!("def_exp_{n}_{}.yaml", recheck.replace(':', "")));
    let text = format!(
        "mesh:\n  box: {{ lengths: [1.0, 1.0, 1.0], cells: [{n}, {n}, {n}], kind: hex8 }}\n\
         model:\n  solid:\n    material: {{ model: neo_hookean, young: 1e6, poisson: 0.3, density: 1000 }}\n\
         \x20   initial_velocity: {{ expressions: [\"0.1*z\", \"0\", \"0.05*x*z\"] }}\n\
         \x20   auto_dt: 0.5\n{recheck}\
         fixed:\n  - group: zmin\n\
         time: {{ scheme: def_exp, dt: 1.0, t_end: 100.0 }}\n\
         output: {{ every: 1000000, history_every: 1000 }}\n"
    );
    std::fs::write(&path, text).expect("write the bench input");
    path
}

/// CPU seconds of this process (all threads), from `/proc/self/stat` (10 ms ticks): on a
/// shared machine less disturbed by the load than wall time.
fn cpu_time() -> f64 {
    let text = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = text.rsplit(')').next().unwrap_or("");
    let fields: Vec<f64> = after
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    // utime and stime are fields 14 and 15 of the line: 10 and 11 of the numbers after the
    // name and the (letter) state.
    (fields.get(10).copied().unwrap_or(0.0) + fields.get(11).copied().unwrap_or(0.0)) / 100.0
}

/// CPU seconds of `steps` steps of the input through the run loop (set-up excluded), a history
/// row every `history_every` steps.
fn run(path: &Path, out: &Path, steps: u64, history_every: u64) -> f64 {
    let (_, mut model) = fem::prepare(path).expect("the bench input builds");
    let mut options = RunOptions::new(out, "bench");
    options.every = 1_000_000;
    options.history_every = history_every;
    options.progress = Progress::Quiet;
    options.max_steps = Some(steps);
    options.checkpoint = CheckpointCadence::Never;
    let t = cpu_time();
    drive(model.as_mut(), &options).expect("the run");
    cpu_time() - t
}

/// Median seconds of one force evaluation of the inputs' body (the same box, material and
/// clamp, built directly).
fn force(n: usize) -> f64 {
    use fem_assembly::{DofMap, SolidOperator};
    use fem_elements::solid::{Material, MaterialModel, SolidKind};
    let mesh = fem_mesh::generate::box_mesh([1.0; 3], [n; 3], fem_mesh::generate::BoxCells::Hex8)
        .expect("box");
    let fixed: Vec<usize> = mesh
        .group("zmin")
        .expect("zmin")
        .nodes
        .iter()
        .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
        .collect();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let op = SolidOperator::new(
        SolidKind::Hex8,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        Material::new(MaterialModel::NeoHookean, 1e6, 0.3).expect("valid"),
        1000.0,
        SolidKind::Hex8.default_lumping(),
        &dofmap,
    )
    .expect("valid mesh");
    let u: Vec<f64> = mesh
        .points
        .iter()
        .flat_map(|p| [1e-4 * p[2], 0.0, 5e-5 * p[0] * p[2]])
        .collect();
    let (mut slots, mut f) = (Vec::new(), vec![0.0; dofmap.n_free()]);
    op.internal_force(&u, &mut slots, &mut f).expect("a force");
    let reps = 50;
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let t = cpu_time();
            for _ in 0..reps {
                op.internal_force(&u, &mut slots, &mut f).expect("a force");
            }
            (cpu_time() - t) / reps as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[2]
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn main() {
    // One thread, as the issue measures (set before rayon's pool starts).
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        // A child process with the variable set.
        let status = std::process::Command::new(std::env::current_exe().expect("this program"))
            .args(std::env::args().skip(1))
            .env("RAYON_NUM_THREADS", "1")
            .status()
            .expect("the bench runs");
        std::process::exit(status.code().unwrap_or(1));
    }
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(30);
    let rounds = args.get(1).copied().unwrap_or(3);
    let dir = std::env::temp_dir().join(format!("fem_def_exp_step_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    // (The third case writes a row every step: the energy is evaluated every step, as the run
    // loop did for its balance before it sampled it at the rows: the baseline.)
    let start_only = input(&dir, n, "    recheck_every: 0\n");
    let cases = [
        ("checked at the start only", start_only.clone(), 1000),
        ("adaptive re-checks", input(&dir, n, ""), 1000),
        (
            "a row every step (the energy every step, as before)",
            start_only,
            1,
        ),
    ];
    let (n1, n2) = (100, 600);
    println!("DEF_EXP on a {n}³ hex8 Neo-Hookean box, one thread; {rounds} rounds");
    println!(
        "| round | load | force ms | step ms (start only) | step / force | step ms (adaptive) | step / force | step ms (energy every step) | step / force |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut ratios = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..rounds {
        let l = load();
        let f = force(n);
        let mut row = format!("| {round} | {l} | {:.2} ", 1e3 * f);
        for (i, (_, path, history)) in cases.iter().enumerate() {
            let out = dir.join(format!("out_{i}"));
            let t1 = run(path, &out, n1, *history);
            let t2 = run(path, &out, n2, *history);
            let step = (t2 - t1) / (n2 - n1) as f64;
            ratios[i].push(step / f);
            row += &format!("| {:.2} | {:.2} ", 1e3 * step, step / f);
        }
        println!("{row}|");
    }
    for (i, (name, _, _)) in cases.iter().enumerate() {
        let mut r = ratios[i].clone();
        r.sort_by(f64::total_cmp);
        println!("median step / force, {name}: {:.2}", r[r.len() / 2]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
