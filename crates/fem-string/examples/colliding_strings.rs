//! The colliding strings of Glowinski–Holmström §3.3, (66)–(67), reproduced.
//!
//! Run with `cargo run --release -p fem-string --example colliding_strings [I] [dt] [epsilon]`.
//! Prints the first contact time, the maximum penetration, the symmetry error at t = 0.5
//! (`max_i |u_i + v_{I−i}|`: the state is point-symmetric about (½, 0)), the distance of the
//! state at t = 1 from the mirrored initial state (`u(x, 1) = −v_0(1 − x)`,
//! `v(x, 1) = −u_0(1 − x)`), the energy drift and Newton's iteration counts.

use fem_string::{CollidingStrings, CollidingStringsParameters};
use fem_time::Stepper;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n_cells: usize = args.get(1).map_or(Ok(100), |s| s.parse())?;
    let mut p = CollidingStringsParameters::paper(n_cells);
    if let Some(dt) = args.get(2) {
        p.dt = dt.parse()?;
    }
    if let Some(eps) = args.get(3) {
        p.epsilon = eps.parse()?;
    }
    let start = std::time::Instant::now();
    let mut strings = CollidingStrings::new(&p)?;
    let e0 = strings.scheme().energy().unwrap_or_default().total;
    let n_steps = (1.0 / p.dt).round() as u64;
    let (mut first_contact, mut max_pen, mut t_max_pen) = (None, 0.0f64, 0.0);
    let (mut iterations, mut max_iterations, mut max_drift) = (0u64, 0usize, 0.0f64);
    let (u0, v0) = (strings.u(), strings.v());
    let mut symmetry_error = f64::NAN;
    for _ in 0..n_steps {
        let s = strings.step()?;
        iterations += s.newton.iterations as u64;
        max_iterations = max_iterations.max(s.newton.iterations);
        max_drift = max_drift.max((s.energy.total - e0).abs() / e0);
        if s.penetration > 0.0 && first_contact.is_none() {
            first_contact = Some(s.t);
        }
        if s.penetration > max_pen {
            max_pen = s.penetration;
            t_max_pen = s.t;
        }
        if s.step == n_steps / 2 {
            let (u, v) = (strings.u(), strings.v());
            symmetry_error = (0..=n_cells)
                .map(|i| (u[i] + v[n_cells - i]).abs())
                .fold(0.0, f64::max);
        }
    }
    let (u, v) = (strings.u(), strings.v());
    let mirror_error = (0..=n_cells)
        .map(|i| {
            (u[i] + v0[n_cells - i])
                .abs()
                .max((v[i] + u0[n_cells - i]).abs())
        })
        .fold(0.0, f64::max);
    let elapsed = start.elapsed().as_secs_f64();
    println!("I = {n_cells}, dt = {:e}, epsilon = {:e}", p.dt, p.epsilon);
    println!(
        "first contact (penetration > 0) at t = {:.4}",
        first_contact.unwrap_or(f64::NAN)
    );
    println!(
        "max penetration {max_pen:.3e} at t = {t_max_pen:.4} ({:.3}% of 0.02)",
        100.0 * max_pen / 0.02
    );
    println!("symmetry error at t = 0.5: max |u_i + v_(I-i)| = {symmetry_error:.3e}");
    println!("mirror error at t = 1: {mirror_error:.3e} (max displacement 0.02)");
    println!("relative energy drift max |E - E0|/E0 = {max_drift:.3e}");
    println!(
        "Newton: {:.3} iterations/step (max {max_iterations}); wall time {elapsed:.2} s",
        iterations as f64 / n_steps as f64
    );
    Ok(())
}
