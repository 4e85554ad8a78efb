//! FCLIB head to head with Siconos (issue 23, scope item 7): each problem of
//! `../shared/contact-problems/` solved by fem's NSGS (four variants), by fem's global Newton
//! method first (`Strategy::NewtonThenNsgs`, NSGS after it if it fails) and, in the same run,
//! by Siconos 4.4's `fc3d_nsgs` through the peer script `../shared/peers/siconos_fclib.py`
//! (Debian `python3-siconos`, `python3-h5py`), both at 1e-8: fem on the residual relative to
//! `‖q‖` (C11), which bounds Siconos 4.4's own scaling (C11') from above.
//! A cross-check (`benches/fclib_check.py`) evaluates Siconos' own error of fem's impulses
//! and the distance between the two solutions.
//!
//! `cargo bench -p fem-contact --bench fclib` (environment: `FEM_CONTACT_PROBLEMS`,
//! `FEM_PEERS` for other locations of the two folders; `FCLIB_MAX_SWEEPS` for the cap,
//! default 100 000 as Siconos'; `FCLIB_SKIP_SICONOS=1` to time fem alone).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use fem_contact::{NsgsReport, NsgsSettings, Strategy, SweepOrder, fclib, solve};
use nalgebra::Vector3;

fn folder(var: &str, rel: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
}

struct Run {
    report: NsgsReport,
    seconds: f64,
    r: Vec<Vector3<f64>>,
}

fn ours(problem: &fem_contact::Problem, settings: &NsgsSettings) -> Run {
    // Median of up to 5 runs (1 when a run takes more than a second).
    let mut times = Vec::new();
    let mut last = None;
    for k in 0..5 {
        let mut r = vec![Vector3::zeros(); problem.len()];
        let t = Instant::now();
        let report = solve(problem, &mut r, settings).expect("settings are valid");
        let s = t.elapsed().as_secs_f64();
        times.push(s);
        last = Some((report, r));
        if k == 0 && s > 1.0 {
            break;
        }
    }
    times.sort_by(f64::total_cmp);
    let (report, r) = last.expect("one run");
    Run {
        report,
        seconds: times[times.len() / 2],
        r,
    }
}

fn siconos(file: &Path, peers: &Path, max_sweeps: u64) -> Option<(bool, u64, f64, f64)> {
    let out = Command::new("/usr/bin/python3")
        .arg(peers.join("siconos_fclib.py"))
        .arg("--max-iter")
        .arg(max_sweeps.to_string())
        .arg(file)
        .env("OMP_NUM_THREADS", "1")
        .env("OPENBLAS_NUM_THREADS", "1")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "NAME: contacts N, info I, sweeps S, error E, T ms"
    let line = text.lines().last()?;
    let field = |key: &str| -> Option<&str> {
        let at = line.find(key)? + key.len();
        line[at..].trim_start().split([',', ' ']).next()
    };
    let info: i64 = field("info")?.parse().ok()?;
    let sweeps: u64 = field("sweeps")?.parse().ok()?;
    let error: f64 = field("error")?.parse().ok()?;
    let ms: f64 = line
        .rsplit(',')
        .next()?
        .trim()
        .trim_end_matches(" ms")
        .parse()
        .ok()?;
    Some((info == 0, sweeps, error, ms / 1e3))
}

fn check(file: &Path, r: &[Vector3<f64>], max_sweeps: u64) -> Option<String> {
    let path = std::env::temp_dir().join(format!("fem_fclib_{}.txt", std::process::id()));
    let text: String = r
        .iter()
        .flat_map(|v| v.iter().map(|x| format!("{x:e}\n")).collect::<Vec<_>>())
        .collect();
    std::fs::write(&path, text).ok()?;
    let out = Command::new("/usr/bin/python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/fclib_check.py"))
        .arg(file)
        .arg(&path)
        .arg("--max-iter")
        .arg(max_sweeps.min(20_000).to_string())
        .env("OMP_NUM_THREADS", "1")
        .output()
        .ok()?;
    let _ = std::fs::remove_file(&path);
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let problems = folder("FEM_CONTACT_PROBLEMS", "../../../shared/contact-problems");
    let peers = folder("FEM_PEERS", "../../../shared/peers");
    let max_sweeps: u64 = std::env::var("FCLIB_MAX_SWEEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let skip_siconos = std::env::var_os("FCLIB_SKIP_SICONOS").is_some();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "# FCLIB at tolerance 1e-8 (Siconos' error), cap {max_sweeps} sweeps; load average at start: {}",
        load.trim()
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(&problems)
        .unwrap_or_else(|e| panic!("{}: {e} (set FEM_CONTACT_PROBLEMS)", problems.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hdf5"))
        .collect();
    files.sort();
    // NSGS alone (no polish), and the default: NSGS with the global Newton polish after 100
    // sweeps; each in both sweep orders.
    let base = NsgsSettings {
        max_sweeps,
        polish_after: None,
        ..Default::default()
    };
    let symmetric = NsgsSettings {
        order: SweepOrder::Symmetric,
        ..base
    };
    let variants = [
        ("nsgs", base),
        ("nsgs-symmetric", symmetric),
        (
            "nsgs+newton@100 (default)",
            NsgsSettings {
                polish_after: Some(100),
                ..base
            },
        ),
        (
            "nsgs-symmetric+newton@100",
            NsgsSettings {
                polish_after: Some(100),
                ..symmetric
            },
        ),
        (
            "global newton, then nsgs+newton@100",
            NsgsSettings {
                polish_after: Some(100),
                strategy: Strategy::NewtonThenNsgs,
                ..base
            },
        ),
    ];
    println!(
        "| problem | contacts | solver | solved | sweeps | error (C11, /‖q‖) | error, Siconos 4.4 scaling (C11') | time (s) | Siconos solved | Siconos sweeps | Siconos error | Siconos time (s) | ratio fem/Siconos |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let p = fclib::read(file, 4 << 30).unwrap_or_else(|e| panic!("{e}"));
        let peer = if skip_siconos {
            None
        } else {
            siconos(file, &peers, max_sweeps)
        };
        let mut first = None;
        for (label, settings) in &variants {
            let run = ours(&p.problem, settings);
            let (ss, sw, se, st): (String, String, String, String) = peer.map_or(
                ("-".into(), "-".into(), "-".into(), "-".into()),
                |(ok, sw, e, t)| {
                    (
                        if ok { "yes".into() } else { "no".into() },
                        sw.to_string(),
                        format!("{e:.1e}"),
                        format!("{t:.4}"),
                    )
                },
            );
            let ratio = peer.map_or("-".to_string(), |(_, _, _, t)| {
                format!("{:.3}", run.seconds / t)
            });
            println!(
                "| {name} | {} | {label} | {} | {}{} | {:.1e} | {:.1e} | {:.4} | {ss} | {sw} | {se} | {st} | {ratio} |",
                p.problem.len(),
                if run.report.converged { "yes" } else { "no" },
                run.report.sweeps,
                if run.report.global_iterations > 0 || run.report.polish_iterations > 0 {
                    format!(
                        " (+{} global, +{} polish Newton it.)",
                        run.report.global_iterations, run.report.polish_iterations
                    )
                } else {
                    String::new()
                },
                run.report.error,
                run.report.siconos_error,
                run.seconds,
            );
            // Cross-check the first variant's impulses, or the first solved ones when it did
            // not solve the problem.
            match &first {
                None => first = Some((run.report.converged, run.r)),
                Some((false, _)) if run.report.converged => first = Some((true, run.r)),
                _ => {}
            }
        }
        // The peer script reads compressed storage as columns: a file stored by compressed
        // rows (nz = −2) with an unsymmetric W is solved there as Wᵀ. Solve that one too, and
        // cross-check against it.
        let mut checked = first.map(|(_, r)| r).unwrap_or_default();
        if p.compressed_rows && !p.problem.is_symmetric() {
            let t = p.problem.transposed();
            let run = ours(&t, &base);
            let ratio = peer.map_or("-".to_string(), |(_, _, _, s)| {
                format!("{:.3}", run.seconds / s)
            });
            println!(
                "| {name} (Wᵀ, as the peer reads it) | {} | nsgs | {} | {} | {:.1e} | {:.1e} | {:.4} | | | | | {ratio} |",
                t.len(),
                if run.report.converged { "yes" } else { "no" },
                run.report.sweeps,
                run.report.error,
                run.report.siconos_error,
                run.seconds
            );
            checked = run.r;
        }
        if !skip_siconos && let Some(c) = check(file, &checked, max_sweeps) {
            println!("|   cross-check ({name}, fem vs Siconos on the same W) | {c} |");
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("# load average at end: {}", load.trim());
}
