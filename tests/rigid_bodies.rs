//! `model.rigid_bodies` as a user runs it: the heavy top's energy against H(0) and the
//! behaviour of each scheme, the invariant the run reports, the pendulum's period read from
//! `history.csv` against the closed form, the tumbling box's angular momentum, and the
//! warning for a body nothing moves.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fem"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the fem binary runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// The history as columns by name.
struct History {
    header: Vec<String>,
    rows: Vec<Vec<f64>>,
}

impl History {
    fn read(dir: &Path) -> Self {
        let text = std::fs::read_to_string(dir.join("history.csv")).expect("history.csv");
        let mut lines = text.lines();
        let header = lines
            .next()
            .expect("header")
            .split(',')
            .map(String::from)
            .collect();
        let rows = lines
            .map(|l| {
                l.split(',')
                    .map(|c| c.parse::<f64>().expect("a number in every cell"))
                    .collect()
            })
            .collect();
        Self { header, rows }
    }

    fn column(&self, name: &str) -> Vec<f64> {
        let k = self
            .header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header));
        self.rows.iter().map(|r| r[k]).collect()
    }
}

/// Runs `yaml` (written into a scratch folder, so relative files must be absolute) and returns
/// the output folder and the run's message.
fn run_text(name: &str, yaml: &str, extra: &[&str]) -> (PathBuf, String) {
    let dir = scratch(name);
    let input = dir.join(format!("{name}.yaml"));
    std::fs::write(&input, yaml).expect("input written");
    let out_dir = dir.join("out");
    let mut args = vec![
        "run",
        input.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ];
    args.extend(extra);
    let out = fem(&args);
    let message = text(&out);
    assert!(out.status.success(), "fem run {name}:\n{message}");
    (out_dir, message)
}

/// The shipped top with another scheme, and its drawing mesh by absolute path.
fn top_with(scheme: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let yaml = std::fs::read_to_string(root.join("inputs/rigid_top.yaml")).expect("the top");
    let mesh = root.join("meshes/top_cone.msh");
    assert!(yaml.contains("scheme: rig_imp") && yaml.contains("../meshes/top_cone.msh"));
    yaml.replace("scheme: rig_imp", &format!("scheme: {scheme}"))
        .replace("../meshes/top_cone.msh", mesh.to_str().unwrap())
}

fn max_abs_change(v: &[f64]) -> f64 {
    v.iter().map(|x| (x - v[0]).abs()).fold(0.0, f64::max)
}

/// Simo & Wong's heavy top at Solfec's h = 0.009 for 300 steps (2.7 s): H(0) = 1250 + 20 cos
/// 0.05; RIG_POS's H never falls below H(0), RIG_NEG's never rises above it, RIG_IMP's stays
/// within 1.6e-4 (docs/validation.md: −1.55e-4 … +1.8e-8 over 10 s). The vertical angular
/// momentum about the tip (gravity has no torque about the vertical) is kept by RIG_NEG to
/// round-off and by RIG_IMP to its Newton tolerance, not by RIG_POS. The run reports the
/// invariant of its scheme: the energy is conserved to the truncation error only.
#[test]
fn heavy_top_energy_against_h0_for_each_scheme() {
    let h0 = 1250.0 + 20.0 * 0.05_f64.cos();
    assert!((h0 - 1269.975).abs() < 1e-5);
    for scheme in ["rig_pos", "rig_neg", "rig_imp"] {
        let (dir, message) = run_text(
            &format!("rigid_top_{scheme}"),
            &top_with(scheme),
            &["--max-steps", "300"],
        );
        assert!(
            message.contains("conserved to the scheme's truncation error"),
            "{scheme}: the run does not report the invariant:\n{message}"
        );
        let history = History::read(&dir);
        let total = history.column("total");
        assert_eq!(total.len(), 151, "rows at steps 0, 2, …, 300");
        assert!(
            (total[0] - h0).abs() < 1e-9,
            "{scheme}: H(0) = {}",
            total[0]
        );
        let (lo, hi) = total
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &h| {
                (a.min(h - h0), b.max(h - h0))
            });
        match scheme {
            "rig_pos" => assert!(lo > -1e-9 && hi > 1e-4 && hi < 3.5e-4, "{lo:e} {hi:e}"),
            "rig_neg" => assert!(hi < 1e-9 && lo < -1e-4 && lo > -4.5e-4, "{lo:e} {hi:e}"),
            _ => assert!(hi < 1e-7 && lo > -1.6e-4 && lo < -1e-4, "{lo:e} {hi:e}"),
        }
        let lz = history.column("angular_momentum_z");
        assert!((lz[0] - 50.0 * 0.05_f64.cos()).abs() < 1e-12);
        let drift = max_abs_change(&lz) / lz[0];
        eprintln!("{scheme}: H − H0 in [{lo:e}, {hi:e}], Lz drift {drift:e}");
        match scheme {
            "rig_pos" => assert!(drift > 1e-9, "{drift:e}"),
            "rig_neg" => assert!(drift < 1e-13, "{drift:e}"),
            _ => assert!(drift < 1e-11, "{drift:e}"),
        }
        let orthonormality = history.column("orthonormality");
        assert!(orthonormality.iter().all(|&d| d < 1e-14));
        assert!(history.column("external_work").iter().all(|&w| w == 0.0));
        let iterations = history.column("iterations");
        let most = iterations.iter().copied().fold(0.0, f64::max);
        if scheme == "rig_imp" {
            assert!((1.0..=3.0).contains(&most), "{most}");
        } else {
            assert_eq!(most, 0.0);
        }
    }
}

/// Solfec's pendulum: the period read off `history.csv` (angular_momentum_y changes sign at
/// every turning point) against `4 √(J/(m g L)) K(sin²(π/4))` with J = 1 + 0.001.
#[test]
fn pendulum_period_from_the_history() {
    let dir = scratch("rigid_pendulum_period");
    let out = fem(&[
        "run",
        "inputs/rigid_pendulum.yaml",
        "-o",
        dir.to_str().unwrap(),
        "-q",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let history = History::read(&dir);
    let t = history.column("t");
    let l = history.column("angular_momentum_y");
    // Turning points after the start, by linear interpolation (the momentum's curvature
    // vanishes there: θ⃛ ∝ cos θ θ̇ = 0).
    let crossings: Vec<f64> = (2..l.len())
        .filter(|&k| l[k - 1] * l[k] < 0.0)
        .map(|k| t[k - 1] + (t[k] - t[k - 1]) * l[k - 1] / (l[k - 1] - l[k]))
        .collect();
    assert_eq!(crossings.len(), 4, "turning points in 5 s: {crossings:?}");
    let g = std::f64::consts::PI.powi(2);
    let exact = fem_rigid::exact::pendulum_period(1.001, 1.0, 1.0, g, std::f64::consts::FRAC_PI_2);
    assert!((exact - 2.361_861_244).abs() < 1e-9);
    for (k, &tc) in crossings.iter().enumerate() {
        let period = 2.0 * tc / (k + 1) as f64;
        assert!(
            (period - exact).abs() < 1e-8 * exact,
            "turning point {k} at {tc}: period {period} against {exact}"
        );
    }
    // Within 1 % of Solfec's 2.36 s, as its own test asks.
    assert!((crossings[1] - 2.36).abs() < 0.0236);
    // The energy: H = 0 at the start, its error O(h²) (1.0e-4 at h = 0.0025).
    let total = history.column("total");
    assert!(total[0] == 0.0 && max_abs_change(&total) < 2e-4);
}

/// The tumbling box under RIG_NEG: its spatial angular momentum is kept to round-off over the
/// whole run while the body flips; linear momentum stays zero.
#[test]
fn tumbling_box_keeps_its_angular_momentum() {
    let dir = scratch("rigid_tumbling_box");
    let out = fem(&[
        "run",
        "inputs/rigid_tumbling_box.yaml",
        "-o",
        dir.to_str().unwrap(),
        "-q",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let history = History::read(&dir);
    let l: Vec<[f64; 3]> = {
        let [x, y, z] = ["x", "y", "z"].map(|c| history.column(&format!("angular_momentum_{c}")));
        (0..x.len()).map(|k| [x[k], y[k], z[k]]).collect()
    };
    let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let l0 = l[0];
    let worst = l
        .iter()
        .map(|v| norm([v[0] - l0[0], v[1] - l0[1], v[2] - l0[2]]))
        .fold(0.0, f64::max);
    assert!(worst < 1e-13 * norm(l0), "{worst:e}");
    for c in ["x", "y", "z"] {
        assert!(
            history
                .column(&format!("linear_momentum_{c}"))
                .iter()
                .all(|&p| p == 0.0)
        );
    }
    // The energy changes at the scheme's order only (h = 0.004).
    let total = history.column("total");
    assert!(max_abs_change(&total) < 1e-3 * total[0]);
}

/// A body on a fixed point, at rest, without gravity or loads: nothing moves it. That is worth
/// a warning (naming the body), not an error: the run goes ahead and the body stays put.
#[test]
fn a_body_nothing_moves_is_a_warning() {
    let yaml = "\
model:
  rigid_bodies:
    gravity: [0, 0, 0]
    bodies:
      - mass: 1
        principal_inertia: [1, 1, 1]
        centre_of_mass: [1, 0, 0]
        fixed_point: [0, 0, 0]
time: { scheme: rig_imp, dt: 0.01, t_end: 0.1 }
";
    let (dir, message) = run_text("rigid_motionless", yaml, &[]);
    assert!(
        message.contains("model.rigid_bodies.bodies[0]") && message.contains("nothing moves"),
        "{message}"
    );
    let history = History::read(&dir);
    assert_eq!(history.rows.len(), 11);
    assert!(history.column("total").iter().all(|&h| h == 0.0));
}

/// A body massed from a mesh (issue 28, item 4: `mesh` + `density` answered "not available in
/// this build yet"): the Gmsh tet10 cylinder (r = 0.1, h = 0.3, ρ = 2700) as a compound
/// pendulum on a fixed point 0.3 m beside its centre, released horizontal. The period read
/// from the history equals the closed form with the mesh's own mass properties
/// (`fem_rigid::mesh_mass_properties`: the wiring) to the scheme's error (2e-7), and the one
/// of the exact cylinder (`J_yy = m (3r² + h²)/12`) to 1.2e-6: the mesh's mass and moments
/// are ≈ 1.5e-4 short, but the period depends on their ratio `J/(m L)`.
#[test]
fn a_body_massed_from_its_mesh_swings_with_the_cylinders_period() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mesh = root.join("meshes/cylinder_tet10.msh");
    let (r, h, rho, d) = (0.1_f64, 0.3_f64, 2700.0, 0.3);
    let g = std::f64::consts::PI.powi(2);
    let yaml = format!(
        "model:\n  rigid_bodies:\n    gravity: [0, 0, -{g}]\n    bodies:\n      - mesh: {}\n        \
         density: {rho}\n        fixed_point: [{d}, 0, {}]\ntime: {{ scheme: rig_imp, dt: 0.0025, t_end: 3.0 }}\n\
         output: {{ every: 40 }}\n",
        mesh.display(),
        0.5 * h
    );
    let (dir, message) = run_text("rigid_mesh_cylinder", &yaml, &["-q"]);
    let history = History::read(&dir);
    let (t, l) = (history.column("t"), history.column("angular_momentum_y"));
    let crossings: Vec<f64> = (2..l.len())
        .filter(|&k| l[k - 1] * l[k] < 0.0)
        .map(|k| t[k - 1] + (t[k] - t[k - 1]) * l[k - 1] / (l[k - 1] - l[k]))
        .collect();
    assert!(crossings.len() >= 2, "{crossings:?}\n{message}");
    let period = crossings[1];
    let p = fem_rigid::mesh_mass_properties(&fem_mesh::read_msh(&mesh).unwrap(), rho).unwrap();
    let arm = ((p.center[0] - d).powi(2) + p.center[1].powi(2)).sqrt();
    let ours = fem_rigid::exact::pendulum_period(
        p.inertia[1][1] + p.mass * arm * arm,
        p.mass,
        arm,
        g,
        std::f64::consts::FRAC_PI_2,
    );
    let m = rho * std::f64::consts::PI * r * r * h;
    let exact = fem_rigid::exact::pendulum_period(
        m * (3.0 * r * r + h * h) / 12.0 + m * d * d,
        m,
        d,
        g,
        std::f64::consts::FRAC_PI_2,
    );
    eprintln!(
        "period {period:.9} s; with the mesh's properties {ours:.9} s; exact cylinder {exact:.9} s"
    );
    assert!((period - ours).abs() < 1e-6 * ours, "{period} vs {ours}");
    assert!((period - exact).abs() < 5e-6 * exact, "{period} vs {exact}");
}
