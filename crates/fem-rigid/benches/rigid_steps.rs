//! Steps per second of free rigid bodies (no contact, gravity only) for 1, 10³ and 10⁶ bodies,
//! by RIG_POS, RIG_NEG and RIG_IMP, against the memory-bound floor: a streaming pass over the
//! same state arrays (`RigidStepper::stream_pass`: reads the 192 bytes a step reads per body,
//! writes the 144 it writes) in the same chunks and threads.
//!
//! Before divan runs, a table is printed from interleaved timings (step, stream, step, stream,
//! …; medians): time per step, per body, the stream pass, their ratio and the bandwidth the
//! stream reaches, and the CPU time the process used per wall second during the steps (from
//! `/proc/self/stat`, all threads; on a machine shared with other jobs it shows how many cores
//! the run really had). `RIGID_BENCH_MAX_N` (default 1 000 000) leaves out larger sizes.
//!
//! The bodies: `J = diag(1, 1.5 + δ, 2)`, `|Ω| ≈ 1`, `h = 1e-3` (so `h|Ω|/2 ≪ 1/2`: the series
//! branch of the Rodrigues coefficients, as in most real steps).

use std::time::Instant;

use divan::Bencher;
use divan::counter::ItemsCount;
use fem_rigid::{AngularVelocity, RigidBodies, RigidBody, RigidStepper, Scheme, diagonal};

const SIZES: [usize; 3] = [1, 1_000, 1_000_000];
const BYTES_PER_BODY: f64 = 192.0 + 144.0;

fn max_n() -> usize {
    std::env::var("RIGID_BENCH_MAX_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

fn free_bodies(n: usize, scheme: Scheme) -> RigidStepper {
    let mut set = RigidBodies::with_capacity([0.0, 0.0, -9.81], n).expect("gravity");
    for i in 0..n {
        let x = i as f64;
        let mut b = RigidBody::new(1.0, diagonal([1.0, 1.5 + 1e-7 * x, 2.0]));
        b.position = [x, 0.0, 0.0];
        b.velocity = [0.0, 0.0, 1.0];
        b.rotation = [0.1, (1e-3 * x).sin(), 0.2];
        b.angular_velocity = AngularVelocity::Body([0.6, 0.7 * (1e-3 * x).cos(), 0.4]);
        set.push(b).expect("valid body");
    }
    RigidStepper::new(set, scheme, 1e-3, 0.0).expect("valid stepper")
}

fn schemes() -> [Scheme; 3] {
    [Scheme::RigPos, Scheme::RigNeg, Scheme::rig_imp()]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// CPU seconds (user + system, all threads) of this process so far; 0 where `/proc` is absent.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |k: usize| {
        fields
            .get(k)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0 // USER_HZ = 100 on Linux
}

/// Wall and CPU seconds per call of `f`, timed over `reps` calls.
fn time(reps: usize, mut f: impl FnMut()) -> (f64, f64) {
    let (t, c) = (Instant::now(), cpu_seconds());
    for _ in 0..reps {
        f();
    }
    let wall = t.elapsed().as_secs_f64() / reps as f64;
    (wall, (cpu_seconds() - c) / reps as f64)
}

fn table() {
    eprintln!("threads: {}", rayon::current_num_threads());
    eprintln!(
        "N        scheme   step (s)    per body (ns)  stream (s)  step/stream  stream GB/s  steps/s    CPU/wall (step)"
    );
    for n in SIZES {
        if n > max_n() {
            eprintln!("{n:<8} (skipped)");
            continue;
        }
        let reps = (2_000_000 / n).clamp(3, 200_000);
        for scheme in schemes() {
            let mut s = free_bodies(n, scheme);
            s.step().expect("warm-up");
            s.stream_pass(0.0);
            let (mut steps, mut streams, mut cpu, mut wall) = (Vec::new(), Vec::new(), 0.0, 0.0);
            for _ in 0..7 {
                let (w, c) = time(reps, || {
                    divan::black_box(s.step().expect("step"));
                });
                steps.push(w);
                (wall, cpu) = (wall + w, cpu + c);
                streams.push(time(reps, || s.stream_pass(divan::black_box(0.0))).0);
            }
            let (step, stream) = (median(steps), median(streams));
            eprintln!(
                "{n:<8} {:<8} {step:<11.3e} {:<14.1} {stream:<11.3e} {:<12.2} {:<12.1} {:<10.3e} {:.2}",
                scheme.name(),
                step / n as f64 * 1e9,
                step / stream,
                BYTES_PER_BODY * n as f64 / stream / 1e9,
                1.0 / step,
                cpu / wall
            );
        }
    }
}

fn main() {
    table();
    divan::main();
}

fn bench_step(bencher: Bencher, n: usize, scheme: Scheme) {
    if n > max_n() {
        return;
    }
    let mut s = free_bodies(n, scheme);
    bencher
        .counter(ItemsCount::new(n))
        .bench_local(|| s.step().expect("step"));
}

#[divan::bench(args = SIZES, max_time = 3, sample_count = 20)]
fn rig_pos(bencher: Bencher, n: usize) {
    bench_step(bencher, n, Scheme::RigPos);
}

#[divan::bench(args = SIZES, max_time = 3, sample_count = 20)]
fn rig_neg(bencher: Bencher, n: usize) {
    bench_step(bencher, n, Scheme::RigNeg);
}

#[divan::bench(args = SIZES, max_time = 3, sample_count = 20)]
fn rig_imp(bencher: Bencher, n: usize) {
    bench_step(bencher, n, Scheme::rig_imp());
}

#[divan::bench(args = SIZES, max_time = 3, sample_count = 20)]
fn stream_pass(bencher: Bencher, n: usize) {
    if n > max_n() {
        return;
    }
    let mut s = free_bodies(n, Scheme::RigPos);
    bencher
        .counter(ItemsCount::new(n))
        .bench_local(|| s.stream_pass(divan::black_box(0.0)));
}
