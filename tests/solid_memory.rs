//! The memory estimate of the explicit solid against the bytes its run allocates (issue 28,
//! item 15): above the peak of the live heap, and within 1.5× of it, on three box sizes.
//!
//! The peak is counted by the allocator of this test binary (`cap`'s `max_allocated`: the
//! largest sum of live allocations at any moment), which is deterministic up to the few
//! per-thread buffers of the thread pool — unlike the resident set size, which also holds the
//! code, the stacks and what the allocator keeps, and varies from machine to machine. The
//! resident peaks of `fem run` are measured by `benches/solid_memory.sh` (table in
//! `docs/performance.md`). This is the only test in its binary (the counter is the process's),
//! and it runs the boxes from the smallest up, so that each run's peak is a new maximum
//! (asserted).

use std::path::Path;

use cap::Cap;

#[global_allocator]
static ALLOCATOR: Cap<std::alloc::System> = Cap::new(std::alloc::System, usize::MAX);

fn box_input(dir: &Path, kind: &str, n: usize) -> std::path::PathBuf {
    let path = dir.join(format!("box_{kind}_{n}.yaml"));
    std::fs::write(
        &path,
        format!(
            "mesh:\n  box: {{ lengths: [1.0, 1.0, 1.0], cells: [{n}, {n}, {n}], kind: {kind} }}\n\
             model:\n  solid:\n    material: {{ model: svk, young: 1e7, poisson: 0.3, density: 1000 }}\n    \
             gravity: [0, 0, -9.81]\n    auto_dt: 0.5\nfixed:\n  - group: xmin\n\
             time: {{ scheme: def_exp, dt: 1.0, t_end: 1.0 }}\noutput: {{ every: 1000000 }}\n"
        ),
    )
    .unwrap();
    path
}

/// The estimate the run is checked against, in bytes: the one in the refusal of a budget of
/// one byte ("… would need about 242 MB of memory").
fn estimate(input: &Path) -> f64 {
    let budget = fem::model::resources::Budget::new(1, u64::MAX);
    let loaded = fem::load(input).unwrap();
    let text = match loaded.build_within(input, &budget) {
        Ok(_) => panic!("a budget of one byte was accepted"),
        Err(e) => e.to_string(),
    };
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

/// `fem run INPUT --max-steps 5` in this process (set-up, frame 0, five steps, the last frame).
fn run(input: &Path, out: &Path) {
    let (loaded, mut model) = fem::prepare_run(input, Some(out), Some(5)).unwrap();
    let options = fem::drive::RunOptions {
        max_steps: Some(5),
        every: loaded.output.every,
        history_every: loaded.output.history_every,
        ..fem::drive::RunOptions::new(out, "box")
    };
    fem::drive::drive(model.as_mut(), &options).unwrap();
}

#[test]
fn the_explicit_solids_estimate_is_above_the_bytes_it_allocates_and_within_one_and_a_half_times() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("solid_memory");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut rows = Vec::new();
    let mut before = ALLOCATOR.max_allocated() as f64;
    for (kind, n) in [("hex8", 32), ("hex8", 40), ("hex8", 48)] {
        let input = box_input(&dir, kind, n);
        let est = estimate(&input);
        run(&input, &dir.join(format!("out_{kind}_{n}")));
        let peak = ALLOCATOR.max_allocated() as f64;
        assert!(peak > before, "the {kind} {n}³ run did not raise the peak");
        before = peak;
        rows.push((kind, n, est, peak, est / peak));
    }
    for r in &rows {
        eprintln!(
            "{} {}³: estimate {:.1} MB, allocated at most {:.1} MB, ratio {:.3}",
            r.0,
            r.1,
            r.2 / 1e6,
            r.3 / 1e6,
            r.4
        );
    }
    for r in &rows {
        assert!(r.4 >= 1.0 && r.4 <= 1.5, "{rows:?}");
    }
}
