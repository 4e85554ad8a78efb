//! fem's cable against MoorDyn 2.7, measured in one session (the machine is shared: ratios,
//! not absolute times, are the result).
//!
//! 1. **Accuracy.** The paper's falling cable (95) in vacuum (L = 32.6 m, ρ = 7.67 kg/m,
//!    EI = 700, B released from the inextensible catenary at rest, no hydrodynamics), the free
//!    end at t = 2 s against fem's converged answer (N = 160 nodes-and-midpoints elements, the
//!    energy-conserving scheme at Δt = 1/1600). MoorDyn (`benches/moordyn_falling.py`: lumped
//!    masses, EA = 1e8, RK2, its CFL step, CFL 0.02 — 0.1 blows up on this case) at N = 20 and
//!    100; fem's energy-conserving scheme at Δt = 0.1 … 0.005. For each N the largest fem step
//!    whose tip error does not exceed MoorDyn's is the step of the cost comparison.
//! 2. **Cost per simulated second.** `/work/shared/peers/moordyn_cable.py` (the peer script:
//!    its 100 m hanging line, CFL 0.1, RK2) at N = 20, 100, 1 000 and 10 000 (10 000:
//!    `CABLE_BENCH_MOORDYN_10K=1`, ~0.2 simulated s at about 270 s per simulated second),
//!    interleaved with fem on the falling cable (95) at the same N: its own MoorDyn run (1.) and
//!    fem's energy-conserving scheme at the accuracy-matched step, over 1 simulated second
//!    (0.2 s at N = 10 000), plus the set-up (model and static start) at each N; each figure the
//!    minimum of 3 runs (one for MoorDyn at 10 000).
//!
//! `cargo bench -p fem-beam --bench cable_vs_moordyn` prints the tables (python3 with the
//! `moordyn` package must be on the path; `CABLE_BENCH_SKIP_MOORDYN=1` runs fem only).

use std::process::Command;
use std::time::Instant;

use fem_beam::{
    Beam, BeamOptions, BeamParameters, BeamState, ConstraintPoints, End, EnergyConservingStepper,
    NewtonKktSettings, STATIC_NEWTON, solve_static_newton,
};
use fem_time::StepSettings;

const PEER: &str = "/work/shared/peers/moordyn_cable.py";
const FALLING: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/moordyn_falling.py");

fn model(n: usize) -> Beam {
    let mut p = BeamParameters::paper_95();
    p.n_elements = n;
    let options = BeamOptions {
        constraint_points: ConstraintPoints::NodesAndMidpoints,
        seabed: None,
    };
    Beam::with_options(p, options).expect("valid parameters")
}

/// The inextensible catenary between (0,0) and (20,0) of length 32.6 (sag along −y): nodes by
/// arc length, unit tangents. `y = c cosh((x−10)/c) − c cosh(10/c)`, `s = c (sinh((x−10)/c) +
/// sinh(10/c))`, `2c sinh(10/c) = L`.
fn catenary(model: &Beam) -> BeamState {
    let (mut lo, mut hi) = (1.0f64, 100.0f64);
    for _ in 0..200 {
        let c = 0.5 * (lo + hi);
        if 2.0 * c * (10.0 / c).sinh() > 32.6 {
            lo = c;
        } else {
            hi = c;
        }
    }
    let c = 0.5 * (lo + hi);
    let (mut positions, mut tangents) = (Vec::new(), Vec::new());
    for &s in model.node_arc_lengths() {
        let u = (s / c - (10.0 / c).sinh()).asinh();
        positions.push([10.0 + c * u, c * u.cosh() - c * (10.0 / c).cosh(), 0.0]);
        tangents.push([1.0 / u.cosh(), u.tanh(), 0.0]);
    }
    BeamState {
        positions,
        tangents,
    }
}

/// fem's falling cable: the tip at `t_end` and the wall time of the stepping.
fn fem_falling(n: usize, dt: f64, t_end: f64) -> ([f64; 3], f64, usize) {
    let m = model(n);
    let x0 = catenary(&m);
    let released = m.with_ends(End::pinned([0.0; 3]), End::Free).expect("ends");
    let mut st = EnergyConservingStepper::new(
        released,
        &x0,
        None,
        None,
        StepSettings::new(dt),
        NewtonKktSettings::default(),
    )
    .expect("stepper");
    let steps = (t_end / dt).round() as usize;
    let t = Instant::now();
    let mut its = 0;
    for _ in 0..steps {
        its += st.step().expect("step").iterations;
    }
    (st.state().positions[n], t.elapsed().as_secs_f64(), its)
}

/// fem's set-up at `n`: the model and the static start (Newton–KKT), wall seconds.
fn fem_setup(n: usize) -> f64 {
    let t = Instant::now();
    let m = model(n);
    let guess = BeamState::try_arc(&m, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]).expect("arc");
    let sol = solve_static_newton(
        &m,
        &guess,
        0.0,
        &STATIC_NEWTON,
        &NewtonKktSettings::default(),
    )
    .expect("static");
    std::hint::black_box(sol);
    t.elapsed().as_secs_f64()
}

/// Runs a python script with arguments and returns its JSON output (rows).
fn python(script: &str, args: &[String]) -> Option<String> {
    let json = std::env::temp_dir().join(format!("cable_bench_{}.json", std::process::id()));
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .arg("--json")
        .arg(&json)
        .env("OMP_NUM_THREADS", "1")
        .env("OPENBLAS_NUM_THREADS", "1")
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("{script} failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    std::fs::read_to_string(&json).ok()
}

/// The numbers after `"key": ` in a JSON text, in order.
fn json_numbers(text: &str, key: &str) -> Vec<f64> {
    let pat = format!("\"{key}\": ");
    text.match_indices(&pat)
        .filter_map(|(i, _)| {
            let rest = &text[i + pat.len()..];
            let end = rest.find([',', '\n', '}']).unwrap_or(rest.len());
            rest[..end].trim().parse().ok()
        })
        .collect()
}

/// MoorDyn's falling-cable tip (x, z) at t = 2 s and its cost per simulated second.
fn moordyn_falling(n: usize) -> Option<([f64; 2], f64)> {
    let args = ["--ns", &n.to_string(), "--times", "2", "--cfl", "0.02"].map(String::from);
    let text = python(FALLING, &args)?;
    let cost = json_numbers(&text, "s_per_sim_s");
    // "tips": [[x, y, z]]
    let i = text.find("\"tips\"")?;
    let nums: Vec<f64> = text[i..]
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e'))
        .filter_map(|s| s.parse().ok())
        .take(3)
        .collect();
    Some(([nums[0], nums[2]], *cost.first()?))
}

fn main() {
    let skip_md = std::env::var("CABLE_BENCH_SKIP_MOORDYN").is_ok();
    let (reference, _, _) = fem_falling(160, 1.0 / 1600.0, 2.0);
    eprintln!(
        "fem reference tip at t = 2 s: ({:.6}, {:.6})",
        reference[0], reference[1]
    );
    let err =
        |tip: [f64; 2]| ((tip[0] - reference[0]).powi(2) + (tip[1] - reference[1]).powi(2)).sqrt();
    let dts = [0.1, 0.05, 0.025, 0.02, 0.01, 0.005];
    eprintln!("\n1. Accuracy: tip error at t = 2 s (m)");
    eprintln!(
        "N      MoorDyn (s/sim-s)       fem dt=0.1  0.05       0.025      0.02       0.01       0.005      matched dt"
    );
    let mut matched = Vec::new();
    for n in [20, 100] {
        let md = if skip_md { None } else { moordyn_falling(n) };
        let fem: Vec<f64> = dts
            .iter()
            .map(|&dt| {
                let (tip, _, _) = fem_falling(n, dt, 2.0);
                err([tip[0], tip[1]])
            })
            .collect();
        // MoorDyn's z is fem's y (sag along −z there).
        let md_err = md.map(|(tip, _)| err(tip));
        let dt = match md_err {
            Some(e) => dts
                .iter()
                .zip(&fem)
                .find(|(_, f)| **f <= e)
                .map(|(d, _)| *d),
            None => None,
        }
        .unwrap_or(0.01);
        matched.push((n, dt, md.map(|m| m.1)));
        eprintln!(
            "{n:<6} {:<23} {}  {dt}",
            md_err
                .zip(md)
                .map(|(e, m)| format!("{e:.3e} ({:.2e})", m.1))
                .unwrap_or("-".into()),
            fem.iter()
                .map(|e| format!("{e:.3e}"))
                .collect::<Vec<_>>()
                .join("  ")
        );
    }
    eprintln!(
        "\n2. Cost per simulated second (wall s), fem at the matched step (N >= 1000: dt = 0.005)"
    );
    eprintln!(
        "N       peer line (CFL 0.1)  MoorDyn falling  fem falling  its/step  fem set-up  peer/fem"
    );
    for n in [20usize, 100, 1_000, 10_000] {
        let dt = matched
            .iter()
            .find(|m| m.0 == n)
            .map(|m| m.1)
            .unwrap_or(0.005);
        let md_fall = matched.iter().find(|m| m.0 == n).and_then(|m| m.2);
        let peer = if skip_md || (n == 10_000 && std::env::var("CABLE_BENCH_MOORDYN_10K").is_err())
        {
            None
        } else {
            let tend = match n {
                0..=100 => "10",
                101..=1000 => "1",
                _ => "0.2",
            };
            let args = ["--ns", &n.to_string(), "--tend", tend].map(String::from);
            let reps = if n >= 10_000 { 1 } else { 3 };
            (0..reps)
                .filter_map(|_| {
                    python(PEER, &args)
                        .and_then(|t| json_numbers(&t, "s_per_sim_s").first().copied())
                })
                .reduce(f64::min)
        };
        let t_end = if n >= 10_000 { 0.2 } else { 1.0 };
        // The minimum over 3 runs (the machine is shared), as for the peer.
        let mut fem = f64::INFINITY;
        let mut its = 0;
        for _ in 0..3 {
            let (_, wall, i) = fem_falling(n, dt, t_end);
            fem = fem.min(wall / t_end);
            its = i;
        }
        let steps = (t_end / dt).round();
        let setup = (0..3).map(|_| fem_setup(n)).fold(f64::INFINITY, f64::min);
        eprintln!(
            "{n:<7} {:<20} {:<16} {fem:<12.3e} {:<9.2} {setup:<11.3e} {}",
            peer.map(|p| format!("{p:.3e}")).unwrap_or("-".into()),
            md_fall.map(|p| format!("{p:.3e}")).unwrap_or("-".into()),
            its as f64 / steps,
            peer.map(|p| format!("{:.0}", p / fem))
                .unwrap_or("-".into()),
        );
    }
}
