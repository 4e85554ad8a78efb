//! The exact modal Moreau–Jean scheme (MMJ) on the modes of an assembled solid (issue 27,
//! item 3): a hex8 cantilever, truncated to `m` modes computed by the sparse eigen-solver
//! ([`ModalBasis::lowest`]), whose tip's bottom nodes strike a rigid stop below them.
//!
//! - free flight equals the modal closed form (each mode `q cos ωt + (q̇/ω) sin ωt`) at `ωΔt`
//!   from 1e-3 to 1e3;
//! - with `e = 1` the scheme's energy (the physical energy of the `m` modes) holds to 1e-12
//!   through the impacts;
//! - as `m` grows, the tip's history approaches a run of the full model (every dof) with the
//!   stop as a stiff penalty, stepped by central differences (`-- --nocapture` prints the
//!   table of docs/validation.md).

use std::path::{Path, PathBuf};

use fem::assembly::{CsrMatrix, DofMap, SolidOperator};
use fem::constraints::{Lemke, UnilateralContacts};
use fem::elements::solid::{Material, MaterialModel, SolidKind};
use fem::mesh::generate::{BoxCells, box_mesh};
use fem::time::nonsmooth::free_response;
use fem::time::{Mass, ModalBasis, ModalDamping, ModalMoreauJean, NodalStepper, Stepper};

/// The cantilever: `K` and the lumped `M` on the free dofs, the dofs' points, the free `z`
/// dofs of the tip's bottom nodes (the contacts) and of the tip's bottom middle node.
struct Beam {
    k: CsrMatrix<f64>,
    m: Vec<f64>,
    points: Vec<[f64; 3]>,
    contacts: Vec<usize>,
}

/// 1 × 0.1 × 0.1 m, 20 × 2 × 2 hex8, E = 10 MPa, ν = 0.3, ρ = 1000 kg/m³, clamped at x = 0.
fn beam() -> Beam {
    let mesh = box_mesh([1.0, 0.1, 0.1], [20, 2, 2], BoxCells::Hex8).unwrap();
    let fixed: Vec<usize> = mesh
        .group("xmin")
        .unwrap()
        .nodes
        .iter()
        .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
        .collect();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let op = SolidOperator::new(
        SolidKind::Hex8,
        &mesh.points,
        &mesh.blocks[0].connectivity,
        Material::new(MaterialModel::SaintVenantKirchhoff, 1e7, 0.3).unwrap(),
        1000.0,
        SolidKind::Hex8.default_lumping(),
        &dofmap,
    )
    .unwrap();
    let u0 = vec![0.0; dofmap.n_dofs()];
    let k = op.tangent(&u0).unwrap();
    let z_dof = |p: &[f64; 3]| {
        let node = mesh.points.iter().position(|q| q == p).unwrap();
        dofmap.free(3 * node + 2).unwrap()
    };
    let contacts = [0.0, 0.05, 0.1]
        .iter()
        .map(|&y| z_dof(&[1.0, y, 0.0]))
        .collect();
    Beam {
        m: op.lumped_mass().to_vec(),
        points: dofmap.free_dof_points(&mesh.points),
        contacts,
        k,
    }
}

/// The initial velocity: the whole beam moving down at `V` = 0.5 m/s (the clamp excepted).
const V: f64 = 0.5;

fn initial_velocity(beam: &Beam) -> Vec<f64> {
    (0..beam.m.len())
        .map(|i| if i % 3 == 2 { -V } else { 0.0 })
        .collect()
}

/// The first `n_modes` modes and the modal initial velocity.
fn modal(beam: &Beam, n_modes: usize) -> (ModalBasis, Vec<f64>) {
    let mass = Mass::Lumped(beam.m.clone());
    let basis = ModalBasis::lowest(&mass, &beam.k, n_modes, Some(beam.points.clone())).unwrap();
    let v0 = basis.to_modal(&mass, &initial_velocity(beam));
    (basis, v0)
}

/// MMJ on the basis, the stop `gap` below the contact nodes (`y = u_z + gap ≥ 0`), `e`.
fn stepper(
    beam: &Beam,
    basis: &ModalBasis,
    v0: &[f64],
    dt: f64,
    stop: Option<(f64, f64)>,
) -> ModalMoreauJean {
    stepper_from(beam, basis, &vec![0.0; basis.n_modes()], v0, dt, stop)
}

fn stepper_from(
    beam: &Beam,
    basis: &ModalBasis,
    q0: &[f64],
    v0: &[f64],
    dt: f64,
    stop: Option<(f64, f64)>,
) -> ModalMoreauJean {
    let n = basis.n_modes();
    let system = basis.modal_system(&ModalDamping::None).unwrap();
    let s = ModalMoreauJean::from_physical_state(system, dt, 0.0, q0, v0).unwrap();
    match stop {
        None => s,
        Some((gap, e)) => {
            let h = UnilateralContacts::at_dofs(beam.m.len(), &beam.contacts, vec![0.0; 3], 1.0)
                .unwrap();
            let rows = basis.project_rows(h.operator());
            let contacts =
                UnilateralContacts::from_dense(n, &rows, vec![-gap; beam.contacts.len()], e)
                    .unwrap();
            s.with_contacts(contacts, Box::new(Lemke::default()))
                .unwrap()
        }
    }
}

#[test]
fn free_flight_is_the_modal_closed_form_from_1e_3_to_1e3() {
    let beam = beam();
    let (basis, v0) = modal(&beam, 24);
    // Both terms of the closed form: a displacement as well as the velocity, in every mode
    // the falling beam excites (the others stay at rest, exactly).
    let q0: Vec<f64> = v0
        .iter()
        .zip(&basis.omega)
        .map(|(v, w)| 0.5 * v / w)
        .collect();
    let excited: Vec<usize> = (0..24)
        .filter(|&k| v0[k].abs() / basis.omega[k] > 1e-14 * V / basis.omega[0])
        .collect();
    let (w1, wm) = (
        basis.omega[excited[0]],
        basis.omega[*excited.last().unwrap()],
    );
    println!(
        "{} of 24 modes excited, omega from {w1:.4} to {wm:.4} rad/s",
        excited.len()
    );
    let mut worst_first = 0.0f64;
    let mut covered = (f64::INFINITY, 0.0f64);
    for dt in [
        1e-3 / w1,
        1e-1 / w1,
        1.0 / w1,
        10.0 / w1,
        1.0 / wm,
        1e2 / wm,
        1e3 / wm,
    ] {
        let mut s = stepper_from(&beam, &basis, &q0, &v0, dt, None);
        for step in 1..=20 {
            s.step().unwrap();
            let t = step as f64 * dt;
            for &k in &excited {
                let w = basis.omega[k];
                let (q, u) = (s.position()[k], s.velocity_at_step()[k]);
                let (qe, ue) = free_response(w, 0.0, q0[k], v0[k], t);
                let amplitude = (q0[k].powi(2) + (v0[k] / w).powi(2)).sqrt();
                let err = ((q - qe).powi(2) + ((u - ue) / w).powi(2)).sqrt() / amplitude;
                // One step from the physical data: exact to 1e-12. Over n steps round-off
                // accumulates as n ε max(1, ωΔt) (the phase of ω itself is known to ε).
                let bound = if step == 1 {
                    1e-12
                } else {
                    1e-12f64.max(100.0 * step as f64 * f64::EPSILON * (w * dt).max(1.0))
                };
                assert!(
                    err <= bound,
                    "dt = {dt:e}, mode {}, omega dt = {:e}, step {step}: {err:e}",
                    k + 1,
                    w * dt
                );
                if step == 1 {
                    worst_first = worst_first.max(err);
                    covered = (covered.0.min(w * dt), covered.1.max(w * dt));
                }
            }
        }
    }
    println!(
        "omega dt from {:.1e} to {:.1e}; first step worst relative error {worst_first:.1e}",
        covered.0, covered.1
    );
    assert!(covered.0 <= 1e-3 && covered.1 >= 1e3);
}

#[test]
fn with_e_1_the_energy_holds_to_1e_12_through_impacts() {
    let beam = beam();
    let (basis, v0) = modal(&beam, 24);
    for dt in [1e-3, 1e-2] {
        let mut s = stepper(&beam, &basis, &v0, dt, Some((0.01, 1.0)));
        let e0 = s.energy().unwrap().total;
        let (mut worst, mut impacts, mut min_gap) = (0.0f64, 0, f64::INFINITY);
        for _ in 0..(2.0 / dt) as usize {
            s.step().unwrap();
            let c = s.last_contact();
            if c.n_active > 0 {
                impacts += 1;
            }
            min_gap = min_gap.min(c.min_gap);
            worst = worst.max((s.energy().unwrap().total - e0).abs() / e0);
        }
        println!(
            "dt {dt:e}: {impacts} steps with contact, min gap {min_gap:e} m, max |E - E0|/E0 {worst:e}"
        );
        assert!(impacts >= 5, "{impacts}");
        assert!(worst < 1e-12, "dt {dt:e}: {worst:e}");
        assert!(min_gap > -1e-12, "{min_gap:e}");
    }
}

/// The cantilever of [`beam`] (hex8 `eas` here, which does not lock in bending) thrown down at
/// `V` onto the plane `z = −0.01` under its tip face `xmax`, with restitution 1, as an input
/// file: `model` is the `model:` section, `time` the scheme.
fn cantilever_input(name: &str, model: &str, contact: &str, scheme: &str, dt: f64) -> PathBuf {
    let text = format!(
        "mesh:\n  box: {{ lengths: [1.0, 0.1, 0.1], cells: [20, 2, 2], kind: hex8 }}\n\
         model:\n{model}\
         fixed:\n  - group: xmin\n\
         {contact}\
         time: {{ scheme: {scheme}, dt: {dt:e}, t_end: 0.1 }}\n"
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("modal_fe_contact");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

const SOLID: &str = "material: { model: svk, young: 1e7, poisson: 0.3, density: 1000 }\n\
                     element: eas\n\
                     initial_velocity: { uniform: [0, 0, -0.5] }";

/// The tip's `u_z` (the bottom middle node of the tip face, (1, 0.05, 0)) every `every` steps
/// of the model of `input`, from its frames: the displacement field ParaView shows.
fn tip_history(input: &Path, every: usize) -> Vec<f64> {
    let (_, mut model) = fem::prepare(input).unwrap_or_else(|e| panic!("{e}"));
    let steps = model.grid().n_steps();
    let tip_of = |model: &mut Box<dyn fem::model::Model>| {
        let frame = model.frame();
        let node = frame
            .points
            .iter()
            .position(|p| (p[0] - 1.0).abs() < 1e-12 && (p[1] - 0.05).abs() < 1e-12 && p[2] == 0.0)
            .unwrap();
        let u = frame
            .point_data
            .iter()
            .find(|f| f.name == "displacement")
            .unwrap();
        u.values[3 * node + 2]
    };
    let mut tip = vec![tip_of(&mut model)];
    for step in 1..=steps as usize {
        let report = model.stepper_mut().step().unwrap();
        model.after_step(&report).unwrap();
        if step % every == 0 {
            tip.push(tip_of(&mut model));
        }
    }
    tip
}

#[test]
fn the_tip_history_approaches_the_full_model_with_contact_as_modes_are_added() {
    // Over the first two impacts (the first at about 0.024 s): after them the nonsmooth motion
    // of each model drifts in phase from the other's.
    let dt = 5e-4;
    let solid = SOLID.replace('\n', "\n          ");
    let full = cantilever_input(
        "full_def_lim",
        &format!(
            "  scene:\n    gravity: [0, 0, 0]\n    materials: {{ default: {{ friction: 0, restitution: 1 }} }}\n    \
             solids:\n      - contact_group: xmax\n        solid:\n          {solid}\n    \
             obstacles:\n      - plane: {{ point: [1.0, 0.0, -0.01], normal: [0, 0, 1] }}\n"
        ),
        "",
        "def_lim",
        dt,
    );
    let started = std::time::Instant::now();
    // The tip compared every 4th step (a frame computes every cell's stress).
    let every = 2;
    let full = tip_history(&full, every);
    let scale = full.iter().fold(0.0f64, |m, u| m.max(u.abs()));
    println!(
        "full model, DEF_LIM, the stop a plane of the scene (e = 1): dt = {dt:e}, {} steps, \
         max |u_tip| = {scale:.4e} m ({:.1} s)",
        every * (full.len() - 1),
        started.elapsed().as_secs_f64()
    );
    let solid = SOLID.replace('\n', "\n    ");
    let contact = "contact:\n  obstacles:\n    - group: xmax\n      \
                   plane: { point: [1.0, 0.0, -0.01], normal: [0, 0, 1] }\n  restitution: 1.0\n";
    let (mut errors, mut errors_free) = (Vec::new(), Vec::new());
    for n_modes in [2, 4, 8, 16, 32, 64] {
        let started = std::time::Instant::now();
        let input = cantilever_input(
            &format!("mmj_{n_modes}"),
            &format!("  solid:\n    {solid}\n    modes: {n_modes}\n"),
            contact,
            "modal_moreau_jean",
            dt,
        );
        let tip = tip_history(&input, every);
        let worst = |range: std::ops::Range<usize>| {
            tip[range.clone()]
                .iter()
                .zip(&full[range])
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f64, f64::max)
                / scale
        };
        // Before the first impact (t ≤ 0.02 s; the tip face meets the stop at 0.024 s), and
        // over the whole run (two impacts).
        let free = 1 + (0.02 / (dt * every as f64)).round() as usize;
        let (before, whole) = (worst(0..free), worst(0..full.len()));
        println!(
            "m = {n_modes:3}: max |u_tip - u_tip(full, DEF_LIM with contact)| / max |u_tip| = \
             {before:.3e} before the first impact, {whole:.3e} over 0.1 s ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
        errors.push(whole);
        errors_free.push(before);
    }
    // Before the first impact the truncation error falls with m down to m = 32 (1.1e-2, the
    // DEF_LIM run's own time error at this Δt is of that size: m = 64 measured 1.4e-2).
    assert!(
        errors_free[..5].windows(2).all(|w| w[1] < w[0]),
        "{errors_free:?}"
    );
    assert!(
        errors_free[3..].iter().all(|&e| e < 0.04),
        "{errors_free:?}"
    );
    assert!(errors.windows(2).all(|w| w[1] < w[0]), "{errors:?}");
    assert!(errors.last().unwrap() < &(0.05 * errors[0]), "{errors:?}");
}

fn fem_bin(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_fem"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the fem binary runs")
}

/// `inputs/solid_modal_stop.yaml` does what its comment says: the frequencies, the energy the
/// 16 modes take of the throw, the first impact's time, the energy kept through the impacts,
/// the tip never below the stop; `fem check --modes` describes the modes and the contact.
#[test]
fn the_modal_stop_showcase_reproduces_its_comment() {
    let input = "inputs/solid_modal_stop.yaml";
    let out = fem_bin(&["check", "--modes", input]);
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{report}");
    for words in [
        "modes: the 16 lowest of 540 free dofs, f from 1.61391 to 87.5029 Hz, omega_max dt = 0.274898",
        "contact: 9 nodes of 'xmax' against a plane, restitution e = 1, lemke solver",
        "time: exact modal Moreau-Jean on the modes, dt = 0.0005, 1000 steps",
    ] {
        assert!(report.contains(words), "'{words}' not in\n{report}");
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("solid_modal_stop");
    let _ = std::fs::remove_dir_all(&dir);
    let out = fem_bin(&["run", input, "-o", dir.to_str().unwrap(), "-q"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("history.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "step",
            "t",
            "kinetic",
            "potential",
            "total",
            "n_active",
            "lcp_iterations",
            "lcp_residual",
            "min_gap",
            "contact_force_total"
        ]
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (t, total, active, gap) = (col("t"), col("total"), col("n_active"), col("min_gap"));
    // The 16 modes carry 1.153 J of the 1.219 J thrown (½ · 9.75 kg of free mass · 0.5²).
    assert!((rows[0][total] - 1.153).abs() < 5e-4, "{}", rows[0][total]);
    let drift = rows
        .iter()
        .map(|r| (r[total] - rows[0][total]).abs() / rows[0][total])
        .fold(0.0f64, f64::max);
    assert!(drift < 1e-13, "{drift:e}");
    let first = rows.iter().find(|r| r[active] > 0.0).expect("an impact");
    assert!((first[t] - 0.024).abs() < 1e-12, "{}", first[t]);
    let impacts = rows.iter().filter(|r| r[active] > 0.0).count();
    assert_eq!(impacts, 12);
    let late = rows
        .iter()
        .filter(|r| r[active] > 0.0 && r[t] > 0.4)
        .count();
    assert_eq!(late, 4);
    let lowest = rows.iter().map(|r| r[gap]).fold(f64::INFINITY, f64::min);
    assert!(lowest >= 0.0, "{lowest:e}");
    // Frames: the displacement Φq on the mesh, at the output cadence.
    assert!(dir.join("solid_modal_stop_000250.vtu").exists());
}
