use fem_contact::{NsgsSettings, SweepOrder, fclib, solve};
use nalgebra::Vector3;
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let omega: f64 = std::env::var("OMEGA")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let sym = std::env::var("SYM").is_ok();
    let maxs: u64 = std::env::var("MAXS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100000);
    for a in args {
        let t0 = std::time::Instant::now();
        let p = fclib::read(std::path::Path::new(&a), 1 << 30).unwrap();
        let tr = t0.elapsed();
        let n = p.problem.len();
        let mut r = vec![Vector3::zeros(); n];
        let s = NsgsSettings {
            max_sweeps: maxs,
            relaxation: omega,
            order: if sym {
                SweepOrder::Symmetric
            } else {
                SweepOrder::Forward
            },
            ..Default::default()
        };
        if std::env::var("TRACE").is_ok() {
            let mut rr = vec![Vector3::zeros(); n];
            let mut s2 = s;
            s2.max_sweeps = 500;
            s2.tolerance = 1e-30;
            for k in 0..20 {
                let rep = solve(&p.problem, &mut rr, &s2).unwrap();
                println!(
                    "  {} err {:.3e} fb {} newton {}",
                    (k + 1) * 500,
                    rep.error,
                    rep.fallbacks,
                    rep.newton_iterations
                );
            }
        }
        if std::env::var("WORST").is_ok() {
            let mut rr = vec![Vector3::zeros(); n];
            let mut s2 = s;
            s2.max_sweeps = 3000;
            s2.tolerance = 1e-30;
            solve(&p.problem, &mut rr, &s2).unwrap();
            let mut u = vec![Vector3::zeros(); n];
            p.problem.velocity(&rr, &mut u);
            let mut worst: Vec<(f64, usize)> = (0..n)
                .map(|i| (p.problem.point_residual(i, &rr[i], &u[i]).norm(), i))
                .collect();
            worst.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
            for &(e, i) in &worst[..4] {
                let w = p.problem.diagonal(i);
                let ql = p.problem.local_q(i, &rr);
                println!(
                    "point {i} res {e:.3e} r {:?} u {:?} q {:?} mu {}\n W {:?} eig {:?}",
                    rr[i],
                    u[i],
                    ql,
                    p.problem.laws()[i].friction(),
                    w,
                    w.symmetric_eigenvalues()
                );
                let mut r2 = rr[i];
                let o = fem_contact::local::solve_coulomb(
                    w,
                    &ql,
                    p.problem.laws()[i].friction(),
                    &mut r2,
                    &Default::default(),
                );
                println!("  resolve {:?} -> {:?}", o, r2);
            }
        }
        if let Ok(k) = std::env::var("POLISH") {
            let k: u64 = k.parse().unwrap();
            let mut rr = vec![Vector3::zeros(); n];
            let mut s2 = s;
            s2.max_sweeps = k;
            let t = std::time::Instant::now();
            let rep = solve(&p.problem, &mut rr, &s2).unwrap();
            let t_gs = t.elapsed();
            let shift: f64 = std::env::var("SHIFT")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(1.0);
            let its: u32 = std::env::var("ITS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(30);
            let nr = fem_contact::newton::polish(
                &p.problem,
                &mut rr,
                &fem_contact::newton::NewtonSettings {
                    shift,
                    max_iterations: its,
                    ..Default::default()
                },
            );
            println!(
                "  polish after {} sweeps (err {:.2e}, {:.1?}): {:?} total {:.1?}",
                rep.sweeps,
                rep.error,
                t_gs,
                nr,
                t.elapsed()
            );
        }
        if let Ok(sig) = std::env::var("PROX") {
            let sig: f64 = sig.parse().unwrap();
            let inner: u64 = std::env::var("INNER")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(50);
            let mean: f64 = (0..n)
                .map(|i| p.problem.diagonal(i).trace() / 3.0)
                .sum::<f64>()
                / n as f64;
            let sigma = sig * mean;
            let w = p.problem.dense_w();
            let m = 3 * n;
            let mut trip = Vec::new();
            for i in 0..n {
                for j in 0..n {
                    let b = nalgebra::Matrix3::from_fn(|a, c| w[(3 * i + a) * m + 3 * j + c]);
                    if b != nalgebra::Matrix3::zeros() || i == j {
                        trip.push((
                            i,
                            j,
                            if i == j {
                                b + nalgebra::Matrix3::identity() * sigma
                            } else {
                                b
                            },
                        ));
                    }
                }
            }
            let mut rr = vec![Vector3::zeros(); n];
            let t = std::time::Instant::now();
            let mut total = 0;
            for k in 0..2000 {
                let q2: Vec<Vector3<f64>> =
                    (0..n).map(|i| p.problem.q()[i] - sigma * rr[i]).collect();
                let pp =
                    fem_contact::Problem::from_blocks(p.problem.laws().to_vec(), q2, trip.clone())
                        .unwrap();
                let mut s2 = s;
                s2.max_sweeps = inner;
                s2.tolerance = 1e-30;
                let rep = solve(&pp, &mut rr, &s2).unwrap();
                total += rep.sweeps;
                let e = p.problem.fc3d_error(&rr);
                if k % 20 == 0 || e < 1e-8 {
                    println!("  prox {k}: sweeps {total} err {e:.3e} {:.1?}", t.elapsed());
                }
                if e < 1e-8 {
                    break;
                }
            }
        }
        let t1 = std::time::Instant::now();
        let rep = solve(&p.problem, &mut r, &s).unwrap();
        let ts = t1.elapsed();
        let refe = p.solution.as_ref().map(|sol| p.problem.fc3d_error(sol));
        let diff = p.solution.as_ref().map(|sol| {
            let d: f64 = sol
                .iter()
                .zip(&r)
                .map(|(a, b)| (a - b).norm_squared())
                .sum();
            let s: f64 = sol.iter().map(|a| a.norm_squared()).sum();
            (d / s.max(1e-300)).sqrt()
        });
        println!(
            "{} [{}] n={} offblocks={} read {:.1?} | sweeps {} err {:.2e} ratio {:.2e} conv {} newton {} fb {} checks {} | {:.1?} | ref err {:?} reldiff {:?}",
            a.rsplit('/').next().unwrap(),
            p.title,
            n,
            p.problem.off_diagonal_blocks(),
            tr,
            rep.sweeps,
            rep.error,
            rep.energy_ratio,
            rep.converged,
            rep.newton_iterations,
            rep.fallbacks,
            rep.error_checks,
            ts,
            refe,
            diff
        );
    }
}
#[allow(dead_code)]
fn unused() {}
