use fem_contact::newton::*;
use fem_contact::{NsgsSettings, fclib, solve};
use nalgebra::Vector3;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sweeps: u64 = args[1].parse().unwrap();
    let mut s = NewtonSettings::global();
    if args.len() > 2 {
        s.shift = args[2].parse().unwrap();
    }
    if let Ok(m) = std::env::var("MAXIT") {
        s.max_iterations = m.parse().unwrap();
    }
    if args.len() > 3 && args[3] == "diag" {
        s.rho = RhoChoice::Diagonal;
    }
    for f in std::fs::read_dir("/work/shared/contact-problems").unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_none_or(|x| x != "hdf5") {
            continue;
        }
        let p = fclib::read(&f, 4 << 30).unwrap();
        let mut r = vec![Vector3::zeros(); p.problem.len()];
        let t = Instant::now();
        if sweeps > 0 {
            let rep = solve(
                &p.problem,
                &mut r,
                &NsgsSettings {
                    max_sweeps: sweeps,
                    polish_after: None,
                    ..Default::default()
                },
            )
            .unwrap();
            print!("nsgs {} sweeps error {:.3e}; ", rep.sweeps, rep.error);
        }
        let rep = polish(&p.problem, &mut r, &s);
        let mut u = vec![Vector3::zeros(); p.problem.len()];
        p.problem.velocity(&r, &mut u);
        println!(
            "{}: newton {} it, err {:.3e} conv {} siconos {:.3e} in {:.4} s",
            f.file_name().unwrap().to_string_lossy(),
            rep.iterations,
            rep.error,
            rep.converged,
            p.problem.siconos_error_with(&r, &u),
            t.elapsed().as_secs_f64()
        );
    }
}
