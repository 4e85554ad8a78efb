//! `fem check` of an explicit solid without building it (issue 28 item 15, issue 25 item 4):
//! the element eigenvalues of every cell in one pass over the mesh, the limiting cells named
//! from them exactly as the full build names them, and the Lanczos estimate of the assembled
//! body only when asked (`--critical-step`) or when the given step is above the element bound
//! (then it alone says whether the step is stable, and an unstable step is still refused).
//!
//! The mesh is the Gmsh tet10 column (`meshes/column_tet10.msh`), whose one poor cell makes
//! the element bound far below the true limit (issue 25).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fem"))
        .args(args)
        .output()
        .expect("fem runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The column clamped at its base under gravity, DEF_EXP with `time` as given.
fn column(name: &str, time: &str, extra: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("check_cheap");
    std::fs::create_dir_all(&dir).unwrap();
    let mesh = Path::new(env!("CARGO_MANIFEST_DIR")).join("meshes/column_tet10.msh");
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &path,
        format!(
            "mesh: {{ file: {} }}\nmodel:\n  solid:\n    material: {{ model: neo_hookean, young: 70e9, \
             poisson: 0.33, density: 2700 }}\n    gravity: [0, 0, -9.81]\n{extra}fixed:\n  - group: bottom\n\
             time: {time}\noutput: {{ every: 1000 }}\n",
            mesh.display()
        ),
    )
    .unwrap();
    path
}

/// The line of `fem check` that starts with `prefix` (after its indent).
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find(|l| l.trim_start().starts_with(prefix))
        .unwrap_or_else(|| panic!("no line '{prefix}' in:\n{text}"))
}

/// The element bound `fem check` prints ("at least the element bound 1.23e-6 (cell 7)").
fn element_bound(text: &str) -> f64 {
    let l = line(text, "explicit critical step");
    l.split("element bound ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no element bound in '{l}'"))
}

/// The first ratio of the limiting-cells line ("(12.3x below the median)").
fn worst_ratio(text: &str) -> f64 {
    let l = line(text, "element steps");
    l.split("x below the median")
        .next()
        .and_then(|head| head.rsplit('(').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no ratio in '{l}'"))
}

#[test]
fn check_names_the_limiting_cells_as_the_full_build_does_without_the_lanczos() {
    let input = column(
        "auto",
        "{ scheme: def_exp, dt: 1.0, t_end: 1e-3 }",
        "    auto_dt: 0.5\n",
    );
    let cheap = fem(&["check", input.to_str().unwrap()]);
    assert!(cheap.status.success(), "{}", stderr(&cheap));
    let cheap_text = stdout(&cheap);
    let full = fem(&["check", "--critical-step", input.to_str().unwrap()]);
    assert!(full.status.success(), "{}", stderr(&full));
    let full_text = stdout(&full);
    // The same cells, the same steps and ratios: the pass over the mesh gives the operator's
    // eigenvalues bitwise.
    assert_eq!(
        line(&cheap_text, "element steps"),
        line(&full_text, "element steps")
    );
    // The poor cell stands out.
    let ratio = worst_ratio(&cheap_text);
    assert!(ratio > 2.0, "{cheap_text}");
    // The cheap check says what it did not compute; the full one gives the Lanczos estimate.
    assert!(
        line(&cheap_text, "explicit critical step").contains("the run refines it by Lanczos"),
        "{cheap_text}"
    );
    assert!(
        line(&full_text, "explicit critical step").contains("by Lanczos,"),
        "{full_text}"
    );
    assert!(
        line(&cheap_text, "time:").contains("dt at least"),
        "{cheap_text}"
    );
    // With auto_dt the cheap check's grid is the shortest step's: at least the run's frames.
    let steps = |t: &str| -> u64 {
        let l = line(t, "time:");
        l.split(" steps from")
            .next()
            .and_then(|h| h.split_whitespace().last())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no step count in '{l}'"))
    };
    assert!(
        steps(&cheap_text) >= steps(&full_text),
        "{cheap_text}\n{full_text}"
    );
}

#[test]
fn check_refuses_an_unstable_step_and_accepts_a_stable_one() {
    let probe = column(
        "probe",
        "{ scheme: def_exp, dt: 1.0, t_end: 1e-3 }",
        "    auto_dt: 1.0\n",
    );
    let out = fem(&["check", probe.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let bound = element_bound(&stdout(&out));

    // Below the element bound: stable without the Lanczos, said so.
    let below = column(
        "below",
        &format!("{{ scheme: def_exp, dt: {:e}, t_end: 1e-3 }}", 0.5 * bound),
        "",
    );
    let out = fem(&["check", below.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        line(&stdout(&out), "explicit critical step").contains("the step the run checks against"),
        "{}",
        stdout(&out)
    );

    // Far above any critical step of the body: refused, exit 2, naming time.dt.
    let above = column(
        "above",
        &format!(
            "{{ scheme: def_exp, dt: {:e}, t_end: 1e-2 }}",
            100.0 * bound
        ),
        "",
    );
    let out = fem(&["check", above.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let message = stderr(&out);
    assert!(message.contains("time.dt"), "{message}");
    assert!(message.contains(above.to_str().unwrap()), "{message}");

    // Above the element bound but below the assembled body's limit (this mesh's bound is
    // loose): the Lanczos estimate accepts it.
    let between = column(
        "between",
        &format!("{{ scheme: def_exp, dt: {:e}, t_end: 1e-3 }}", 1.2 * bound),
        "",
    );
    let out = fem(&["check", between.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        line(&stdout(&out), "explicit critical step").contains("by Lanczos"),
        "{}",
        stdout(&out)
    );
}

/// `fem` on `args` with every set-up phase told on standard error (`FEM_PROGRESS_AFTER=0`).
fn fem_telling_phases(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fem"))
        .args(args)
        .env("FEM_PROGRESS_AFTER", "0")
        .output()
        .expect("fem runs")
}

/// A cantilever of `cells` hex8 `eas` cells in `modes` modes, clamped at x = 0, thrown down
/// onto a stop under its tip (the showcase `inputs/solid_modal_stop.yaml`, resized).
fn modal_cantilever(name: &str, cells: [usize; 3], modes: usize) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("check_cheap");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &path,
        format!(
            "mesh:\n  box: {{ lengths: [1.0, 0.1, 0.1], cells: {cells:?}, kind: hex8 }}\nmodel:\n  solid:\n    \
             material: {{ model: svk, young: 1e7, poisson: 0.3, density: 1000 }}\n    element: eas\n    \
             modes: {modes}\n    damping: 1e-4\n    initial_velocity: {{ uniform: [0, 0, -0.5] }}\n\
             fixed:\n  - group: xmin\ncontact:\n  obstacles:\n    - group: xmax\n      \
             plane: {{ point: [1.0, 0.0, -0.01], normal: [0, 0, 1] }}\n  restitution: 1.0\n\
             time: {{ scheme: modal_moreau_jean, dt: 5.0e-4, t_end: 0.5 }}\noutput: {{ every: 100 }}\n"
        ),
    )
    .unwrap();
    path
}

/// `fem check` of a modal solid computes neither its operator nor its modes (issue: the check
/// of a large modal solid ran the whole eigen-solve): the phases it tells are the mass's only,
/// while a run (and `fem check --modes`) tell the operator and the eigen-solve. The mesh is
/// 64 000 cells (211 680 free dofs, 200 modes: an eigen-solve of minutes); the check
/// still says what the run will be, and refuses what the run refuses before its solve.
#[test]
fn check_of_a_modal_solid_does_not_compute_its_modes() {
    let large = modal_cantilever("modal_large", [160, 20, 20], 200);
    let out = fem_telling_phases(&["check", large.to_str().unwrap()]);
    let (report, phases) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{report}{phases}");
    assert!(phases.contains("the solid's mass"), "{phases}");
    for costly in ["lowest modes", "the solid's operator", "contact rows"] {
        assert!(
            !phases.contains(costly),
            "'{costly}' computed by the check:\n{phases}"
        );
    }
    for words in [
        "modes: the 200 lowest of 211680 free dofs, computed when the run starts",
        "damping: C = eta K, eta = 0.0001 s",
        "contact: 441 nodes of 'xmax' against a plane, restitution e = 1, lemke solver",
        "time: exact modal Moreau-Jean on the modes, dt = 0.0005, 1000 steps",
    ] {
        assert!(report.contains(words), "'{words}' not in\n{report}");
    }
    // The small one: the same lines as the run's set-up but the frequencies, which
    // `--modes` computes as the run does.
    let small = modal_cantilever("modal_small", [10, 1, 1], 6);
    let small = small.to_str().unwrap();
    let cheap = fem_telling_phases(&["check", small]);
    assert!(cheap.status.success(), "{}", stderr(&cheap));
    assert!(
        !stderr(&cheap).contains("lowest modes"),
        "{}",
        stderr(&cheap)
    );
    let full = fem_telling_phases(&["check", "--modes", small]);
    assert!(full.status.success(), "{}", stderr(&full));
    assert!(
        stderr(&full).contains("the solid's 6 lowest modes"),
        "{}",
        stderr(&full)
    );
    let (cheap, full) = (stdout(&cheap), stdout(&full));
    assert!(line(&full, "modes:").contains("f from"), "{full}");
    for prefix in [
        "mesh:",
        "material:",
        "dofs:",
        "contact:",
        "time:",
        "stability:",
        "output:",
    ] {
        assert_eq!(line(&cheap, prefix), line(&full, prefix));
    }
    // Refused before any solve: more modes than free dofs.
    let refused = modal_cantilever("modal_too_many", [160, 20, 20], 300000);
    let out = fem_telling_phases(&["check", refused.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("model.solid.modes"),
        "{}",
        stderr(&out)
    );
}

/// The compressing thread's copy of a frame (VTKHDF with compression: a step is compressed and
/// written by a thread of its own) is in the memory estimate the input is checked against: the
/// output's memory is 3 frames with compression and none without, and a budget with room for
/// the model but not for that copy refuses the compressed output at `output.compression`.
#[test]
fn the_compressing_threads_frame_is_in_the_memory_estimate() {
    use fem::model::resources::{Budget, COMPRESSING_COPIES};
    let input = |output: &str| {
        format!(
            "mesh:\n  box: {{ lengths: [1.0, 1.0, 1.0], cells: [20, 20, 20], kind: hex8 }}\nmodel:\n  \
             solid:\n    material: {{ model: svk, young: 1e7, poisson: 0.3, density: 1000 }}\n\
             fixed:\n  - group: xmin\ntime: {{ scheme: def_exp, dt: 1e-5, t_end: 1e-4 }}\n\
             output: {output}\n"
        )
    };
    let path = Path::new("compressed.yaml");
    let checked = |output: &str, budget: Budget| {
        let parsed = fem::parse(&input(output), path).unwrap();
        let result = parsed.check_within(path, &budget, Default::default());
        (result, parsed.estimate.get(), parsed.memory.get())
    };
    let (ok, raw, model) = checked("{ format: vtkhdf, compression: none }", Budget::unlimited());
    ok.unwrap();
    let raw = raw.unwrap();
    assert_eq!(raw.memory, 0.0);
    assert!(model > 0.0);
    let (ok, pvd, _) = checked("{ format: pvd }", Budget::unlimited());
    ok.unwrap();
    assert_eq!(pvd.unwrap().memory, 0.0);
    let (ok, compressed, model_again) = checked("{ format: vtkhdf }", Budget::unlimited());
    ok.unwrap();
    let compressed = compressed.unwrap();
    assert_eq!(model_again, model);
    // One frame's bytes: the disk estimate is frames × frame + the history.
    let frame = compressed.memory / COMPRESSING_COPIES;
    assert!(frame > 0.0 && frame * compressed.frames as f64 <= compressed.bytes);
    assert!(frame > 20.0f64.powi(3) * 8.0, "{frame}");
    // Room for the model and one frame, not for the thread's copies.
    let tight = Budget::new((model + frame) as u64, u64::MAX);
    let (ok, _, _) = checked("{ format: vtkhdf, compression: none }", tight);
    ok.unwrap();
    let (refused, _, _) = checked("{ format: vtkhdf }", tight);
    let message = refused.unwrap_err().to_string();
    assert!(message.contains("output.compression"), "{message}");
    assert!(
        message.contains("compressing thread's copy of a frame"),
        "{message}"
    );
}

/// `fem run --format vtkhdf` on an input whose `output.format` is pvd: the format is replaced
/// before the input is checked against the machine, so the memory estimate counts the
/// compressing thread's frames of the VTKHDF output the run writes, and a budget with room
/// for the pvd run but not for those frames refuses the run at `output.compression`.
#[test]
fn the_format_of_fem_run_is_the_one_the_estimate_counts() {
    use fem::model::input::FormatKind;
    use fem::model::resources::{Budget, COMPRESSING_COPIES};
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("check_cheap");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run_format.yaml");
    std::fs::write(
        &path,
        "mesh:\n  box: { lengths: [1.0, 1.0, 1.0], cells: [12, 12, 12], kind: hex8 }\nmodel:\n  \
         solid:\n    material: { model: svk, young: 1e7, poisson: 0.3, density: 1000 }\n\
         fixed:\n  - group: xmin\ntime: { scheme: def_exp, dt: 1e-5, t_end: 1e-4 }\n\
         output: { format: pvd }\n",
    )
    .unwrap();
    let prepared = |budget: &Budget, format| {
        fem::prepare_run_within::<fem::input::ModelInput>(&path, budget, format)
    };
    let (pvd, _) = prepared(&Budget::unlimited(), None).unwrap();
    let pvd_estimate = pvd.estimate.get().unwrap();
    assert_eq!(pvd_estimate.memory, 0.0);
    let (vtkhdf, _) = prepared(&Budget::unlimited(), Some(FormatKind::Vtkhdf)).unwrap();
    assert_eq!(vtkhdf.output.format, FormatKind::Vtkhdf);
    let estimate = vtkhdf.estimate.get().unwrap();
    let model = vtkhdf.memory.get();
    assert_eq!(model, pvd.memory.get());
    let frame = estimate.memory / COMPRESSING_COPIES;
    assert!(frame > 12.0f64.powi(3) * 8.0, "{frame}");
    // Room for the model and one frame: the pvd run fits, the VTKHDF one does not.
    let tight = Budget::new((model + frame) as u64, u64::MAX);
    prepared(&tight, None).unwrap();
    prepared(&tight, Some(FormatKind::Pvd)).unwrap();
    let message = prepared(&tight, Some(FormatKind::Vtkhdf))
        .err()
        .expect("a VTKHDF run that does not fit is refused")
        .to_string();
    assert!(message.contains("output.compression"), "{message}");
    assert!(message.contains("run_format.yaml"), "{message}");
    // It says that `--format` chose VTKHDF in place of the input's pvd.
    assert!(message.contains("--format vtkhdf"), "{message}");
    assert!(message.contains("VTKHDF"), "{message}");
    assert!(message.contains("output.format: pvd"), "{message}");
    // Without `--format` (the input's own vtkhdf) the message does not speak of it.
    let own = dir.join("run_format_own.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&own, text.replace("format: pvd", "format: vtkhdf")).unwrap();
    let message = fem::prepare_run_within::<fem::input::ModelInput>(&own, &tight, None)
        .err()
        .expect("the input's own VTKHDF run that does not fit is refused")
        .to_string();
    assert!(message.contains("output.compression"), "{message}");
    assert!(!message.contains("--format"), "{message}");
}
