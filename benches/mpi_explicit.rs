//! Steps per second of the distributed explicit solid (feature `mpi`): DEF_EXP on a hex8 box
//! of `n³` cells (default `n = 100`, 10⁶ cells), the serial run loop's stepper against the
//! distributed one on 1 and 2 MPI processes, each process on one thread
//! (`RAYON_NUM_THREADS=1`), interleaved in rounds. A plain timing program:
//!
//! ```text
//! cargo bench --features mpi --bench mpi_explicit -- [n] [steps] [rounds]
//! ```
//!
//! It launches itself under `mpirun -np P` for the distributed runs (the set-up — mesh,
//! partition, operators, the critical step — is outside the timed steps). It prints, per
//! configuration, the steps per second (the slowest rank's wall time), and per rank the values
//! sent per step (the halo volume) against the surface estimate. The critical step is
//! checked only at the start (`recheck_every: 0`), so a step is the force, the exchange, the
//! update and the energy sums. Results: `docs/performance.md`, "Distributed explicit solid".

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use fem_model::Model as _;
use fem_mpi::mpi::collective::SystemOperation;
use fem_mpi::mpi::traits::*;
use fem_mpi::{distributed_solid_model, mpi};

fn input(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join(format!("mpi_box_{n}.yaml"));
    let text = format!(
        "mesh:\n  box: {{ lengths: [1.0, 1.0, 1.0], cells: [{n}, {n}, {n}], kind: hex8 }}\n\
         model:\n  solid:\n    material: {{ model: neo_hookean, young: 1e6, poisson: 0.3, density: 1000 }}\n\
         \x20   initial_velocity: {{ expressions: [\"0.1*z\", \"0\", \"0.05*x*z\"] }}\n\
         \x20   auto_dt: 0.5\n    recheck_every: 0\n\
         fixed:\n  - group: zmin\n\
         time: {{ scheme: def_exp, dt: 1.0, t_end: 100.0 }}\n\
         output: {{ every: 1000000, history_every: 1000000 }}\n"
    );
    std::fs::write(&path, text).expect("write the bench input");
    path
}

/// Under mpirun: build, take one step, time `steps` steps; rank 0 prints the result line.
fn worker(path: &Path, steps: u64) {
    let universe = mpi::initialize().expect("MPI initializes");
    let world = universe.world();
    let input = fem::load(path).expect("the bench input loads");
    let budget = fem::model::resources::Budget::from_machine(None).expect("a budget");
    let sections = input.sections(path, budget);
    let fem::input::ModelInput::Solid(section) = &input.model else {
        panic!("the bench input is a solid")
    };
    let setup = Instant::now();
    let mut part = distributed_solid_model(&world, section, &sections)
        .unwrap_or_else(|e| panic!("set-up: {e}"));
    let setup = setup.elapsed().as_secs_f64();
    let stepper = part.model.stepper_mut();
    stepper.step().expect("a first step");
    world.barrier();
    let start = Instant::now();
    for _ in 0..steps {
        stepper.step().expect("a step");
    }
    let mine = start.elapsed().as_secs_f64();
    let mut slowest = 0.0;
    world.all_reduce_into(&mine, &mut slowest, SystemOperation::max());
    let sent = part.values_sent_per_step as u64;
    let cells = part.n_cells as u64;
    let mut all_sent = vec![0u64; world.size() as usize];
    let mut all_cells = vec![0u64; world.size() as usize];
    world.all_gather_into(&sent, &mut all_sent[..]);
    world.all_gather_into(&cells, &mut all_cells[..]);
    if world.rank() == 0 {
        println!(
            "RESULT {} {} {} {:?} {:?}",
            world.size(),
            steps as f64 / slowest,
            setup,
            all_sent,
            all_cells
        );
    }
}

/// The serial stepper (the run loop's model) on one thread: steps per second.
fn serial(path: &Path, steps: u64) -> f64 {
    let (_, mut model) = fem::prepare(path).expect("the bench input builds");
    model.stepper_mut().step().expect("a first step");
    let start = Instant::now();
    for _ in 0..steps {
        model.stepper_mut().step().expect("a step");
    }
    steps as f64 / start.elapsed().as_secs_f64()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100);
    let steps: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let rounds: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2);
    let dir = std::env::temp_dir().join("fem-mpi-bench");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let path = input(&dir, n);
    if fem::launched_by_mpirun().is_some() {
        worker(&path, steps);
        return;
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .expect("one thread");
    let me = std::env::current_exe().expect("this program");
    let launcher = std::env::var("FEM_MPIRUN").unwrap_or_else(|_| "mpirun".into());
    println!(
        "hex8 box {n}^3 = {} cells, {steps} timed steps, one thread per process",
        n * n * n
    );
    for round in 0..rounds {
        println!("round {round} (load average {})", load_average());
        println!(
            "  serial stepper (no MPI):    {:8.3} steps/s",
            serial(&path, steps)
        );
        for p in [1, 2] {
            let mut words = launcher.split_whitespace();
            let out = Command::new(words.next().expect("a launcher"))
                .args(words)
                .args(["-np", &p.to_string()])
                .arg(&me)
                .args([n.to_string(), steps.to_string()])
                .env("RAYON_NUM_THREADS", "1")
                .output()
                .expect("mpirun runs");
            let text = String::from_utf8_lossy(&out.stdout);
            match text.lines().find_map(|l| l.strip_prefix("RESULT ")) {
                Some(r) => {
                    let mut w = r.splitn(4, ' ');
                    let _p = w.next();
                    let rate: f64 = w.next().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN);
                    let setup: f64 = w.next().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN);
                    println!(
                        "  distributed, P = {p}:       {rate:8.3} steps/s (set-up {setup:.1} s); values sent per step and rank, cells per rank: {}",
                        w.next().unwrap_or("")
                    );
                }
                None => println!(
                    "  P = {p} failed: {}{}",
                    text,
                    String::from_utf8_lossy(&out.stderr)
                ),
            }
            let _ = std::io::stdout().flush();
        }
    }
}
