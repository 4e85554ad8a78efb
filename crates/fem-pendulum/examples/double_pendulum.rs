//! The double compound pendulum of Glowinski–Holmström §2 (Tables 1–4), reproduced.
//!
//! `cargo run --release -p fem-pendulum --example double_pendulum -- wall [t_end] [dt]` prints Table 2
//! (maximum penetration of the wall against ε); `-- ellipse_al [t_end] [dt]` and
//! `-- ellipse_penalty [t_end] [dt]` print the Table 4 row of each method (max |g|, mean
//! multiplier iterations, Newton iterations, wall time) and the energy drift after t = 4;
//! `-- csv <case> [t_end]` writes the history of a case to stdout.

use fem_pendulum::{ConstraintMethod, PendulumRecord, PendulumSetup, PendulumSimulation};
use fem_time::conservation_form::MultiplierSettings;

fn ellipse(method: &str, dt: Option<f64>) -> PendulumSetup {
    match method {
        "ellipse_penalty" => PendulumSetup::ellipse(
            ConstraintMethod::Penalty { epsilon: 1e-6 },
            dt.unwrap_or(1e-6),
        ),
        _ => PendulumSetup::ellipse(
            ConstraintMethod::AugmentedLagrangian {
                epsilon: 1e-6,
                multipliers: MultiplierSettings::default(),
            },
            dt.unwrap_or(5e-4),
        ),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let case = args.get(1).map_or("wall", String::as_str);
    match case {
        "wall" => {
            let t_end: f64 = args.get(2).map_or(Ok(3.0), |s| s.parse())?;
            let dt: f64 = args.get(3).map_or(Ok(1e-4), |s| s.parse())?;
            println!(
                "epsilon | penetration [mm] | penetration/(l1+l2) | first contact t | Newton it/step | wall s"
            );
            for k in 5..=9 {
                let eps = 10f64.powi(-k);
                let start = std::time::Instant::now();
                let mut sim = PendulumSimulation::new(&PendulumSetup::wall(eps, dt))?;
                let (mut pen, mut first, mut it, mut n) = (0.0f64, f64::NAN, 0usize, 0usize);
                sim.run(t_end, |r| {
                    pen = pen.max(r.constraint);
                    if r.constraint > 0.0 && first.is_nan() {
                        first = r.t;
                    }
                    it += r.newton_iterations;
                    n += 1;
                })?;
                println!(
                    "1e-{k} | {:.3} | {:.3e} | {first:.4} | {:.2} | {:.2}",
                    pen * 1e3,
                    pen / (3.26 + 1.98),
                    it as f64 / (n - 1) as f64,
                    start.elapsed().as_secs_f64()
                );
            }
        }
        "ellipse_al" | "ellipse_penalty" => {
            let t_end: f64 = args.get(2).map_or(Ok(8.0), |s| s.parse())?;
            let dt: Option<f64> = args.get(3).map(|s| s.parse()).transpose()?;
            let start = std::time::Instant::now();
            let mut sim = PendulumSimulation::new(&ellipse(case, dt))?;
            let (mut gmax, mut gmax_half, mut mult, mut newton, mut n) = (0.0f64, 0.0f64, 0, 0, 0);
            let (mut e_after4_min, mut e_after4_max) = (f64::INFINITY, f64::NEG_INFINITY);
            let mut last = PendulumRecord::default();
            sim.run(t_end, |r| {
                if r.step == 0 {
                    println!("initial constraint g(theta0) = {:.3e}", r.constraint);
                } else {
                    gmax = gmax.max(r.constraint.abs());
                    gmax_half = gmax_half.max(r.constraint_half_step.abs());
                    mult += r.multiplier_iterations;
                    newton += r.newton_iterations;
                    n += 1;
                }
                if r.t > 4.0 + 1e-9 {
                    e_after4_min = e_after4_min.min(r.energy);
                    e_after4_max = e_after4_max.max(r.energy);
                }
                last = *r;
            })?;
            println!(
                "{case}: dt = {:e}, t_end = {t_end}: max|g(theta^n)| = {gmax:.3e}, max|g(theta^(n-1/2))| = {gmax_half:.3e}, \
                 multiplier it/step = {:.2}, Newton it/step = {:.2}, energy after t=4 in [{e_after4_min:.6}, {e_after4_max:.6}] \
                 (spread {:.3e}), final tip y = {:.4}, wall time {:.2} s",
                dt.unwrap_or(if case == "ellipse_al" { 5e-4 } else { 1e-6 }),
                mult as f64 / n as f64,
                newton as f64 / n as f64,
                e_after4_max - e_after4_min,
                last.tip[1],
                start.elapsed().as_secs_f64()
            );
        }
        "csv" => {
            let which = args.get(2).map_or("wall", String::as_str);
            let t_end: f64 = args.get(3).map_or(Ok(8.0), |s| s.parse())?;
            let setup = if which == "wall" {
                PendulumSetup::wall(1e-7, 1e-4)
            } else {
                ellipse(which, None)
            };
            let mut sim = PendulumSimulation::new(&setup)?;
            println!("step,t,{}", PendulumRecord::COLUMNS.join(","));
            sim.run(t_end, |r| {
                let values: Vec<String> = r.values().iter().map(|v| format!("{v:e}")).collect();
                println!("{},{:e},{}", r.step, r.t, values.join(","));
            })?;
        }
        other => return Err(format!("unknown case {other}").into()),
    }
    Ok(())
}
