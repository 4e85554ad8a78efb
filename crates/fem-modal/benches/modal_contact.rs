//! Steps of the exact modal Moreau–Jean scheme (MMJ) on a guitar-like string, free and against
//! obstacles, and the streaming baselines they are compared with (issue 6, "Performance"; the
//! step on the physical state, issue 15).
//!
//! The model is the point-obstacle string: `L = 1.002 m`, `T = 180.5 N`,
//! `μ = 1.17e-3 kg/m`, `B = 1.78e-5`, [`N_MODES`] = 1000 sine modes ([`StringModes`]), no
//! losses, unit modal masses, started from a 1.5 mm triangular pluck at mid-length with
//! `v⁰ = 0`. Contacts have restitution `e = 0` (a dead obstacle: the string stays on it for
//! several steps, so the contact path runs often). Two obstacles:
//!
//! - `point`: one contact at mid-length on the rest line (`h = 0`), the case;
//! - `flat`: 100 contacts at `x_i = i L / 101`, `i = 1..=100`, 0.1 mm below the rest line (a
//!   distributed obstacle; `H` is a dense `100 × 1000` block of mode shapes, stored as CSR).
//!
//! Every step group times [`STEPS`] steps per iteration from `t = 0` (divan's `item/s` counter
//! is then steps per second); the stepper, its coefficients and its Delassus matrix are built
//! outside the timed region by `with_inputs`. Before the benches run, `main` prints, for each
//! contact case, the fraction of those steps with an active contact, the mean active-set size
//! and the mean LCP work (measured once, untimed). Run with
//! `cargo bench -p fem-time --bench modal_contact`; results are in `docs/performance.md`.
//!
//! | group | what is timed |
//! |---|---|
//! | `step::free` | [`STEPS`] MMJ steps without contacts, `fs` = 5 kHz and 48 kHz |
//! | `step::point_lemke`, `step::point_pgs` | the same with the mid-length point obstacle, LCP by [`Lemke`] or [`ProjectedGaussSeidel`] (tolerance `1e-10`) |
//! | `step::flat_lemke`, `step::flat_pgs` | the same with the 100-point flat obstacle |
//! | `baseline::stream_free` | one fused pass over 7 arrays of length `n_modes`, reading all 7 and writing 3 (a free step reads the 6 arrays `C`, `S`, `Ċ`, `Ṡ`, `q`, `u` and writes 2; kept unchanged since issue 6 as the load control) |
//! | `baseline::stream_contact` | the same over 8 arrays, writing 4 (a contact step adds `Hᵀλ` and the two impulse weights) |
//! | `baseline::stream_h` | one pass over the CSR arrays of `H` computing `H q` and `H v` together (the least a contact step must read of `H`), 1 and 100 contacts |
//! | `baseline::stream_h_dense` | the same two products over `H` stored dense row-major with 8 partial sums per product (bandwidth- rather than latency-bound) |
//! | `parts::h_product` | one `UnilateralContacts::rates` (`ẏ = H v`); a contact step makes one such product (`H q̃`), the seed's sample form made two (`H q̃`, `H v_free`, fused) |
//! | `parts::impact` | one `solve_impact` (active set, sub-Delassus, LCP, re-prediction) on the step of the flat case with the most active contacts |
//! | `parts::delassus` | `ModalMoreauJean::with_contacts`: `Hᵀ` dense, `diag(S²/Δt²) Hᵀ`, `D = H diag(S²/Δt²) Hᵀ` (once per run, not per step) |

use divan::Bencher;
use divan::counter::ItemsCount;
use fem_constraints::{LcpSolver, Lemke, ProjectedGaussSeidel, UnilateralContacts, solve_impact};
use fem_modal::StringModes;
use fem_time::{ModalDamping, ModalMoreauJean, NodalStepper as _, Stepper as _};

/// Number of modes.
const N_MODES: usize = 1000;

/// Steps per timed iteration of the step groups.
const STEPS: usize = 100;

/// Sampling rates (Hz); `Δt = 1/fs`.
const RATES: [f64; 2] = [5_000.0, 48_000.0];

/// String length (m).
const LENGTH: f64 = 1.002;

/// Pluck height (m), at mid-length.
const PLUCK: f64 = 1.5e-3;

/// Height of the flat obstacle (m).
const FLAT_HEIGHT: f64 = -0.1e-3;

/// Points of the flat obstacle.
const FLAT_POINTS: usize = 100;

fn main() {
    active_contact_report();
    divan::main();
}

/// The guitar-like string.
fn modes() -> StringModes {
    StringModes::new(LENGTH, 180.5, 1.17e-3, 1.78e-5, N_MODES).expect("valid string")
}

/// Which obstacle.
#[derive(Clone, Copy, Debug)]
enum Obstacle {
    /// One point at mid-length on the rest line.
    Point,
    /// [`FLAT_POINTS`] points at [`FLAT_HEIGHT`].
    Flat,
}

impl Obstacle {
    fn contacts(self, modes: &StringModes) -> UnilateralContacts {
        let (points, heights) = match self {
            Obstacle::Point => (vec![0.5 * LENGTH], vec![0.0]),
            Obstacle::Flat => (
                (1..=FLAT_POINTS)
                    .map(|i| LENGTH * i as f64 / (FLAT_POINTS + 1) as f64)
                    .collect(),
                vec![FLAT_HEIGHT; FLAT_POINTS],
            ),
        };
        UnilateralContacts::from_dense(N_MODES, &modes.point_rows(&points), heights, 0.0)
            .expect("valid contacts")
    }
}

/// Which LCP solver.
#[derive(Clone, Copy, Debug)]
enum Solver {
    Lemke,
    Pgs,
}

impl Solver {
    fn boxed(self) -> Box<dyn LcpSolver> {
        match self {
            Solver::Lemke => Box::new(Lemke::default()),
            Solver::Pgs => Box::new(ProjectedGaussSeidel {
                tolerance: 1e-10,
                max_iterations: 200_000,
            }),
        }
    }
}

/// MMJ on the plucked string at `fs`, without contacts.
fn free_stepper(modes: &StringModes, fs: f64) -> ModalMoreauJean {
    let q0 = modes.triangular_pluck(0.5 * LENGTH, PLUCK);
    ModalMoreauJean::from_physical_state(
        modes
            .modal_system(&ModalDamping::None)
            .expect("modal system"),
        1.0 / fs,
        0.0,
        &q0,
        &vec![0.0; N_MODES],
    )
    .expect("valid stepper")
}

/// MMJ on the plucked string at `fs` against `obstacle`.
fn contact_stepper(
    modes: &StringModes,
    fs: f64,
    obstacle: Obstacle,
    solver: Solver,
) -> ModalMoreauJean {
    free_stepper(modes, fs)
        .with_contacts(obstacle.contacts(modes), solver.boxed())
        .expect("valid contacts")
}

/// Prints, for each contact case, what the timed steps do (untimed, once).
fn active_contact_report() {
    let modes = modes();
    eprintln!("Contact activity over the {STEPS} timed steps from t = 0 (e = 0):");
    eprintln!(
        "| obstacle | solver | fs (Hz) | steps with an active contact | mean active contacts | max active | mean LCP pivots/sweeps per step | min gap (m) |"
    );
    eprintln!("|---|---|---:|---:|---:|---:|---:|---:|");
    for obstacle in [Obstacle::Point, Obstacle::Flat] {
        for solver in [Solver::Lemke, Solver::Pgs] {
            for fs in RATES {
                let mut s = contact_stepper(&modes, fs, obstacle, solver);
                let (mut active_steps, mut active, mut max_active, mut iterations) =
                    (0usize, 0usize, 0usize, 0usize);
                let mut min_gap = f64::INFINITY;
                for _ in 0..STEPS {
                    s.step().expect("step");
                    let r = s.last_contact();
                    active_steps += usize::from(r.n_active > 0);
                    active += r.n_active;
                    max_active = max_active.max(r.n_active);
                    iterations += r.lcp_iterations;
                    min_gap = min_gap.min(r.min_gap);
                }
                let per_step = |x: usize| x as f64 / STEPS as f64;
                eprintln!(
                    "| {obstacle:?} | {solver:?} | {fs} | {active_steps}/{STEPS} | {:.2} | {max_active} | {:.1} | {min_gap:.2e} |",
                    per_step(active),
                    per_step(iterations),
                );
            }
        }
    }
}

/// Takes [`STEPS`] steps.
fn run(s: &mut ModalMoreauJean) {
    for _ in 0..STEPS {
        divan::black_box(s.step().expect("step"));
    }
}

mod step {
    use super::*;

    fn bench_contact(bencher: Bencher, fs: f64, obstacle: Obstacle, solver: Solver) {
        let modes = modes();
        bencher
            .counter(ItemsCount::new(STEPS))
            .with_inputs(|| contact_stepper(&modes, fs, obstacle, solver))
            .bench_local_refs(run);
    }

    /// No contacts.
    #[divan::bench(args = RATES, max_time = 5)]
    fn free(bencher: Bencher, fs: f64) {
        let modes = modes();
        bencher
            .counter(ItemsCount::new(STEPS))
            .with_inputs(|| free_stepper(&modes, fs))
            .bench_local_refs(run);
    }

    /// Point obstacle, Lemke.
    #[divan::bench(args = RATES, max_time = 5)]
    fn point_lemke(bencher: Bencher, fs: f64) {
        bench_contact(bencher, fs, Obstacle::Point, Solver::Lemke);
    }

    /// Point obstacle, projected Gauss–Seidel.
    #[divan::bench(args = RATES, max_time = 5)]
    fn point_pgs(bencher: Bencher, fs: f64) {
        bench_contact(bencher, fs, Obstacle::Point, Solver::Pgs);
    }

    /// 100-point flat obstacle, Lemke.
    #[divan::bench(args = RATES, max_time = 5, sample_count = 30)]
    fn flat_lemke(bencher: Bencher, fs: f64) {
        bench_contact(bencher, fs, Obstacle::Flat, Solver::Lemke);
    }

    /// 100-point flat obstacle, projected Gauss–Seidel.
    #[divan::bench(args = RATES, max_time = 5, sample_count = 30)]
    fn flat_pgs(bencher: Bencher, fs: f64) {
        bench_contact(bencher, fs, Obstacle::Flat, Solver::Pgs);
    }
}

mod baseline {
    use super::*;

    /// `N` arrays of length [`N_MODES`], the first `W` of them written.
    struct Arrays<const N: usize>([Vec<f64>; N]);

    impl<const N: usize> Arrays<N> {
        fn new() -> Self {
            Self(std::array::from_fn(|a| {
                (0..N_MODES)
                    .map(|k| 1.0 + 1e-3 * (a * N_MODES + k) as f64)
                    .collect()
            }))
        }
    }

    /// One fused pass: reads `v_free, impulse, v, q, decay, position_factor, a_q`, writes
    /// the first 3 (`y ← ½ y + 10⁻³ Σ row`).
    fn stream_7_3(a: &mut Arrays<7>) {
        let [w0, w1, w2, r0, r1, r2, r3] = &mut a.0;
        let n = w0.len();
        let (w0, w1, w2) = (&mut w0[..n], &mut w1[..n], &mut w2[..n]);
        let (r0, r1, r2, r3) = (&r0[..n], &r1[..n], &r2[..n], &r3[..n]);
        for k in 0..n {
            let s = 1e-3 * (w0[k] + w1[k] + w2[k] + r0[k] + r1[k] + r2[k] + r3[k]);
            w0[k] = 0.5 * w0[k] + s;
            w1[k] = 0.5 * w1[k] + s;
            w2[k] = 0.5 * w2[k] + s;
        }
    }

    /// One fused pass: reads `v_free, impulse, v, q, decay, position_factor, a_q, b`,
    /// writes the first 4.
    fn stream_8_4(a: &mut Arrays<8>) {
        let [w0, w1, w2, w3, r0, r1, r2, r3] = &mut a.0;
        let n = w0.len();
        let (w0, w1, w2, w3) = (&mut w0[..n], &mut w1[..n], &mut w2[..n], &mut w3[..n]);
        let (r0, r1, r2, r3) = (&r0[..n], &r1[..n], &r2[..n], &r3[..n]);
        for k in 0..n {
            let s = 1e-3 * (w0[k] + w1[k] + w2[k] + w3[k] + r0[k] + r1[k] + r2[k] + r3[k]);
            w0[k] = 0.5 * w0[k] + s;
            w1[k] = 0.5 * w1[k] + s;
            w2[k] = 0.5 * w2[k] + s;
            w3[k] = 0.5 * w3[k] + s;
        }
    }

    /// The arrays of a free step.
    #[divan::bench(max_time = 3)]
    fn stream_free(bencher: Bencher) {
        let mut a = Arrays::<7>::new();
        bencher.bench_local(|| stream_7_3(divan::black_box(&mut a)));
    }

    /// The arrays of a contact step.
    #[divan::bench(max_time = 3)]
    fn stream_contact(bencher: Bencher) {
        let mut a = Arrays::<8>::new();
        bencher.bench_local(|| stream_8_4(divan::black_box(&mut a)));
    }

    /// `H q` and `H v` in one pass over `H` (CSR, as stored), 1 and 100 contacts.
    #[divan::bench(args = [1, FLAT_POINTS], max_time = 3)]
    fn stream_h(bencher: Bencher, m: usize) {
        let obstacle = if m == 1 {
            Obstacle::Point
        } else {
            Obstacle::Flat
        };
        let contacts = obstacle.contacts(&modes());
        let q = vec![1e-4; N_MODES];
        let v = vec![1e-2; N_MODES];
        let mut out = vec![[0.0; 2]; m];
        bencher.bench_local(|| {
            let (offsets, cols, vals) = contacts.operator().csr_data();
            for (i, o) in out.iter_mut().enumerate() {
                let (mut sq, mut sv) = (0.0, 0.0);
                for k in offsets[i]..offsets[i + 1] {
                    sq += vals[k] * q[cols[k]];
                    sv += vals[k] * v[cols[k]];
                }
                *o = [sq, sv];
            }
            divan::black_box(&mut out);
        });
    }

    /// `H q` and `H v` in one pass over `H` stored dense row-major, 8 partial sums per
    /// product (not latency-bound): what one pass over `H` can cost, 1 and 100 contacts.
    #[divan::bench(args = [1, FLAT_POINTS], max_time = 3)]
    fn stream_h_dense(bencher: Bencher, m: usize) {
        let modes = modes();
        let rows = if m == 1 {
            modes.point_rows(&[0.5 * LENGTH])
        } else {
            let points: Vec<f64> = (1..=m)
                .map(|i| LENGTH * i as f64 / (m + 1) as f64)
                .collect();
            modes.point_rows(&points)
        };
        let q = vec![1e-4; N_MODES];
        let v = vec![1e-2; N_MODES];
        let mut out = vec![[0.0; 2]; m];
        bencher.bench_local(|| {
            for (row, o) in rows.chunks_exact(N_MODES).zip(out.iter_mut()) {
                let (mut sq, mut sv) = ([0.0; 8], [0.0; 8]);
                for ((h, q), v) in row
                    .chunks_exact(8)
                    .zip(q.chunks_exact(8))
                    .zip(v.chunks_exact(8))
                {
                    for l in 0..8 {
                        sq[l] += h[l] * q[l];
                        sv[l] += h[l] * v[l];
                    }
                }
                *o = [sq.iter().sum(), sv.iter().sum()];
            }
            divan::black_box(&mut out);
        });
    }
}

mod parts {
    use super::*;

    /// One `ẏ = H v` (`UnilateralContacts::rates`), 1 and 100 contacts.
    #[divan::bench(args = [1, FLAT_POINTS], max_time = 3)]
    fn h_product(bencher: Bencher, m: usize) {
        let obstacle = if m == 1 {
            Obstacle::Point
        } else {
            Obstacle::Flat
        };
        let contacts = obstacle.contacts(&modes());
        let v = vec![1e-2; N_MODES];
        let mut out = vec![0.0; m];
        bencher.bench_local(|| contacts.rates(divan::black_box(&v), &mut out));
    }

    /// `with_contacts` (the Delassus matrix), 1 and 100 contacts.
    #[divan::bench(args = [1, FLAT_POINTS], max_time = 3)]
    fn delassus(bencher: Bencher, m: usize) {
        let modes = modes();
        let obstacle = if m == 1 {
            Obstacle::Point
        } else {
            Obstacle::Flat
        };
        bencher
            .with_inputs(|| (free_stepper(&modes, RATES[0]), obstacle.contacts(&modes)))
            .bench_local_values(|(s, c)| s.with_contacts(c, Solver::Lemke.boxed()));
    }

    /// The data of one impact LCP, rebuilt from the state before a step.
    struct Impact {
        delassus: nalgebra::DMatrix<f64>,
        free_rate: Vec<f64>,
        rate: Vec<f64>,
        predicted: Vec<f64>,
        dt: f64,
        n_active: usize,
    }

    /// The impact of the step (among the first [`STEPS`] at `fs`) with the most active
    /// contacts, rebuilt as `ModalMoreauJean::step` forms it (unit modal masses).
    fn busiest_impact(obstacle: Obstacle, fs: f64) -> Impact {
        let modes = modes();
        let contacts = obstacle.contacts(&modes);
        let mut s = contact_stepper(&modes, fs, obstacle, Solver::Lemke);
        let (mut best, mut state) = (0, None);
        for _ in 0..STEPS {
            let before = (s.position().to_vec(), s.velocity_at_step().to_vec());
            s.step().expect("step");
            let r = s.last_contact();
            if r.n_active > best {
                best = r.n_active;
                state = Some(before);
            }
        }
        let (q, u) = state.expect("a step with contact");
        let dt = s.dt();
        let c = s.coefficients();
        // Free flight q̃ = C q + S u; the impact's data as `step` forms them (e = 0: the
        // catching-up law reads ỹ/Δt; unit modal masses).
        let q_free: Vec<f64> = (0..N_MODES)
            .map(|k| c[k].flow_c * q[k] + c[k].flow_s * u[k])
            .collect();
        let m = contacts.n_contacts();
        let mut w_inv_ht = contacts.transpose_dense();
        for col in w_inv_ht.chunks_exact_mut(N_MODES) {
            col.iter_mut()
                .zip(c)
                .for_each(|(x, c)| *x *= c.impulse_position / dt);
        }
        let (mut gap, mut predicted) = (vec![0.0; m], vec![0.0; m]);
        contacts.gaps(&q, &mut gap);
        contacts.gaps(&q_free, &mut predicted);
        let free_rate = predicted.iter().map(|y| y / dt).collect();
        let rate = predicted
            .iter()
            .zip(&gap)
            .map(|(p, y)| (p - y) / dt)
            .collect();
        Impact {
            delassus: contacts.delassus(&w_inv_ht),
            free_rate,
            rate,
            predicted,
            dt,
            n_active: best,
        }
    }

    fn bench_impact(bencher: Bencher, solver: Solver) {
        let impact = busiest_impact(Obstacle::Flat, RATES[0]);
        let m = impact.predicted.len();
        let mut lambda = vec![0.0; m];
        let mut lcp = solver.boxed();
        bencher.bench_local(|| {
            lambda.fill(0.0);
            let r = solve_impact(
                &impact.delassus,
                &impact.free_rate,
                &impact.rate,
                &impact.predicted,
                0.0,
                impact.dt,
                lcp.as_mut(),
                &mut lambda,
            )
            .expect("impact");
            assert!(r.n_active >= impact.n_active.min(1));
            r
        });
    }

    /// `solve_impact` with Lemke on the busiest step of the flat case at 5 kHz.
    #[divan::bench(max_time = 3)]
    fn impact_lemke(bencher: Bencher) {
        bench_impact(bencher, Solver::Lemke);
    }

    /// `solve_impact` with PGS on the same step.
    #[divan::bench(max_time = 3)]
    fn impact_pgs(bencher: Bencher) {
        bench_impact(bencher, Solver::Pgs);
    }
}
