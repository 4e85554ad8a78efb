//! The memory estimate of the explicit solid against the peak resident memory of the run
//! (issue 28, item 15): above it, and within 1.5× of it, on three box sizes. The estimate
//! was about 3.5× the peak (8 kB a node for every scheme), so a 10⁶-cell box was refused on
//! machines where it runs.
//!
//! The peak is the children's `ru_maxrss` (`getrusage(RUSAGE_CHILDREN)`): the largest of any
//! child waited for so far. This is the only test in its binary and runs the boxes from the
//! smallest up, so each run's peak is the new maximum (asserted).

use std::path::Path;
use std::process::Command;

use nix::sys::resource::{UsageWho, getrusage};

fn box_input(dir: &Path, n: usize) -> std::path::PathBuf {
    let path = dir.join(format!("box{n}.yaml"));
    std::fs::write(
        &path,
        format!(
            "mesh:\n  box: {{ lengths: [1.0, 1.0, 1.0], cells: [{n}, {n}, {n}], kind: hex8 }}\n\
             model:\n  solid:\n    material: {{ model: svk, young: 1e7, poisson: 0.3, density: 1000 }}\n    \
             gravity: [0, 0, -9.81]\n    auto_dt: 0.5\nfixed:\n  - group: xmin\n\
             time: {{ scheme: def_exp, dt: 1.0, t_end: 1.0 }}\noutput: {{ every: 1000000 }}\n"
        ),
    )
    .unwrap();
    path
}

/// The estimate `fem check` refuses a run with when the memory allowed is 1 byte, in bytes
/// ("… would need about 242 MB of memory").
fn estimate(input: &Path) -> f64 {
    let out = Command::new(env!("CARGO_BIN_EXE_fem"))
        .args(["check", input.to_str().unwrap()])
        .env("FEM_MEMORY_LIMIT", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    let tail = text
        .split("would need about ")
        .nth(1)
        .unwrap_or_else(|| panic!("no estimate in: {text}"));
    let mut words = tail.split_whitespace();
    let value: f64 = words.next().unwrap().parse().unwrap();
    let unit = match words.next().unwrap() {
        "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        other => panic!("unit {other}"),
    };
    value * unit
}

fn children_peak_bytes() -> f64 {
    getrusage(UsageWho::RUSAGE_CHILDREN).unwrap().max_rss() as f64 * 1024.0
}

#[test]
fn the_explicit_solids_estimate_is_above_its_peak_and_within_one_and_a_half_times() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("solid_memory");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut before = children_peak_bytes();
    let mut rows = Vec::new();
    for n in [20, 30, 40] {
        let input = box_input(&dir, n);
        let est = estimate(&input);
        let out = Command::new(env!("CARGO_BIN_EXE_fem"))
            .args([
                "run",
                input.to_str().unwrap(),
                "-o",
                dir.join(format!("out{n}")).to_str().unwrap(),
                "--max-steps",
                "3",
                "-q",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let peak = children_peak_bytes();
        assert!(
            peak > before,
            "the {n}³ run did not raise the children's peak"
        );
        before = peak;
        rows.push((n, est, peak, est / peak));
    }
    for r in &rows {
        eprintln!(
            "{}³ hex8: estimate {:.0} MB, peak {:.0} MB, ratio {:.2}",
            r.0,
            r.1 / 1e6,
            r.2 / 1e6,
            r.3
        );
    }
    for r in &rows {
        assert!(r.3 > 1.0 && r.3 < 1.5, "{rows:?}");
    }
}
