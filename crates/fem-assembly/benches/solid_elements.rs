//! Cost per element of every element kind and formulation, against the 2×2×2 hex8 in the same
//! run (issue 25): the explicit internal force (the cells' forces and the fixed-order gather,
//! what a DEF_EXP step evaluates once), the strain energy, and the tangent (an implicit step's
//! assembly), one thread.
//!
//! The body: the problem of `solid_force.rs` (the unit cube clamped at `x = 0`, MFEM's and
//! felupe's Neo-Hookean `μ = 0.25, κ = 5`, felupe's displacement `u = 0.05 (X z, Y², −X²)`),
//! meshed so that every case has 500 – 5 000 cells (a few MB: the cells' data stay in the
//! cache, so the table is the elements' arithmetic, not the memory bus). The cases are timed in
//! rounds, each round timing every case once (a block of evaluations of about 0.05 s, the
//! median of 3 blocks; the CPU time of the one pool thread): the machine's load moves all
//! cases of a round alike, and the ratio to the hex8 of the same round is reported (median
//! over rounds). The whole run takes well under a minute of CPU; the tangent (dearer, and
//! its sparsity pattern built first) is timed only with `SOLID_ELEMENTS_TANGENT=1`.
//!
//! ```text
//! cargo bench -p fem-assembly --bench solid_elements -- [ROUNDS]     (default 3)
//! ```

use std::time::Instant;

use fem_assembly::{DofMap, SolidOperator};
use fem_elements::solid::{Formulation, Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};

struct Case {
    name: String,
    body: SolidOperator,
    u: Vec<f64>,
    slots: Vec<f64>,
    f: Vec<f64>,
    values: Vec<f64>,
}

impl Case {
    fn new(kind: SolidKind, formulation: Formulation, n: usize) -> Self {
        let cells = match kind {
            SolidKind::Tet4 => BoxCells::Tet4,
            SolidKind::Tet10 => BoxCells::Tet10,
            SolidKind::Hex8 => BoxCells::Hex8,
            SolidKind::Hex20 => BoxCells::Hex20,
            SolidKind::Hex27 => BoxCells::Hex27,
        };
        let mesh = box_mesh([1.0; 3], [n; 3], cells).expect("box");
        let fixed: Vec<usize> = mesh
            .group("xmin")
            .expect("xmin")
            .nodes
            .iter()
            .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
            .collect();
        let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
        let material =
            Material::from_shear_and_bulk(MaterialModel::NeoHookean, 0.25, 5.0).expect("valid");
        let n_cells = mesh.blocks[0].n_cells();
        let body = SolidOperator::with_formulations(
            kind,
            &mesh.points,
            &mesh.blocks[0].connectivity,
            &vec![formulation; n_cells],
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
            name: format!("{kind} {formulation} {n}³"),
            body,
            u,
            slots: Vec::new(),
            f,
            values: Vec::new(),
        }
    }

    fn force(&mut self) {
        self.body
            .internal_force(&self.u, &mut self.slots, &mut self.f)
            .expect("no inverted cell");
    }

    /// The cells' forces alone (no gather).
    fn cells(&mut self) {
        self.body
            .cell_forces_into(&self.u, &mut self.slots)
            .expect("no inverted cell");
    }

    fn energy(&mut self) -> f64 {
        self.body.strain_energy(&self.u)
    }

    fn tangent(&mut self) {
        if self.values.is_empty() {
            self.values = vec![0.0; self.body.matrix_pattern().nnz()];
        }
        self.body
            .tangent_values(&self.u, &mut self.slots, &mut self.values)
            .expect("no inverted cell");
    }
}

/// CPU seconds of the calling thread, from `/proc/thread-self/schedstat` (Linux; wall time
/// elsewhere): on a shared machine, the load disturbs it less than wall time.
fn thread_time(origin: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or_else(|| origin.elapsed().as_secs_f64(), |ns| ns * 1e-9)
}

/// Median CPU seconds per call of `f` (on the calling thread: run it inside the one-thread
/// pool) over 3 blocks of about `block` seconds each.
fn median_time(mut f: impl FnMut(), block: f64) -> f64 {
    let origin = Instant::now();
    f();
    // The repetitions are sized by wall time: the scheduler's CPU clock advances in ticks, so
    // one short call can read as zero and ask for a block of 10⁵ calls.
    let wall = Instant::now();
    f();
    let once = wall.elapsed().as_secs_f64().max(1e-7);
    let reps = ((block / once) as usize).clamp(1, 100_000);
    let mut times: Vec<f64> = (0..3)
        .map(|_| {
            let t = thread_time(origin);
            for _ in 0..reps {
                f();
            }
            (thread_time(origin) - t) / reps as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[1]
}

/// The median (NaN of no values: a column not timed).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "-".into())
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let with_tangent = std::env::var("SOLID_ELEMENTS_TANGENT").is_ok_and(|v| v == "1");
    // Sizes giving 500 – 5 000 cells (the second-order kinds fewer, they are dearer).
    let mut cases: Vec<Case> = [
        (SolidKind::Hex8, Formulation::Full, 16),
        (SolidKind::Hex8, Formulation::OnePoint, 16),
        (SolidKind::Hex8, Formulation::Eas, 16),
        (SolidKind::Hex8, Formulation::FBar, 16),
        (SolidKind::Tet4, Formulation::Full, 6),
        (SolidKind::Tet10, Formulation::Full, 4),
        (SolidKind::Hex20, Formulation::Full, 8),
        (SolidKind::Hex27, Formulation::Full, 8),
    ]
    .into_iter()
    // SOLID_ELEMENTS_ONLY=name,name keeps the cases whose name starts with one of them (the
    // first case, the hex8 reference, always runs).
    .enumerate()
    .filter(|(i, (k, f, _))| {
        *i == 0
            || std::env::var("SOLID_ELEMENTS_ONLY").map_or(true, |only| {
                only.split(',')
                    .any(|o| format!("{k} {f}").starts_with(o.trim()))
            })
    })
    .map(|(_, (k, f, n))| Case::new(k, f, n))
    .collect();
    let n_cases = cases.len();
    // Per case: force, energy, tangent and cells-only seconds per element, per round.
    let mut per_element = vec![[Vec::new(), Vec::new(), Vec::new(), Vec::new()]; n_cases];
    let mut loads = Vec::new();
    for round in 0..rounds {
        loads.push(load());
        for (i, case) in cases.iter_mut().enumerate() {
            let n = case.body.n_cells() as f64;
            let force = one.install(|| median_time(|| case.force(), 0.05)) / n;
            let cells = one.install(|| median_time(|| case.cells(), 0.05)) / n;
            let energy = one.install(|| {
                median_time(
                    || {
                        std::hint::black_box(case.energy());
                    },
                    0.05,
                )
            }) / n;
            // The tangent only when asked, in the first round (it dominates the time otherwise).
            let tangent = if round == 0 && with_tangent {
                one.install(|| median_time(|| case.tangent(), 0.1)) / n
            } else {
                f64::NAN
            };
            per_element[i][0].push(force);
            per_element[i][1].push(energy);
            per_element[i][2].push(tangent);
            per_element[i][3].push(cells);
        }
        loads.push(load());
    }
    println!(
        "Cost per element, one thread, Neo-Hookean; {rounds} rounds (load average at the start and end of each: {})",
        loads.join(" | ")
    );
    println!(
        "| element | cells | force µs/elem | elements/s | force / hex8 full | of which the cells | energy µs/elem | energy / hex8 | tangent µs/elem | tangent / hex8 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let ratio = |i: usize, which: usize| {
        median(
            per_element[i][which]
                .iter()
                .zip(&per_element[0][which])
                .filter(|(a, _)| a.is_finite())
                .map(|(a, b)| a / b)
                .collect(),
        )
    };
    for (i, case) in cases.iter().enumerate() {
        let force = median(per_element[i][0].clone());
        let energy = median(per_element[i][1].clone());
        let tangent = per_element[i][2][0];
        let cells = median(per_element[i][3].clone());
        println!(
            "| {} | {} | {:.3} | {:.3e} | {:.2} | {:.0} % | {:.3} | {:.2} | {:.2} | {:.2} |",
            case.name,
            case.body.n_cells(),
            1e6 * force,
            1.0 / force,
            ratio(i, 0),
            100.0 * cells / force,
            1e6 * energy,
            ratio(i, 1),
            1e6 * tangent,
            ratio(i, 2)
        );
    }
}
