//! `fem modes`: the string's sine modes through the command's whole path (input, model,
//! linearization, eigen-solver, modes.csv and the series of shapes), the effective masses, and
//! the refusals (exit 2 naming the option or key).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fem"))
        .args(args)
        .current_dir(root())
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
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("modes")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn options(count: usize, dir: &Path) -> fem::modes::ModesOptions {
    fem::modes::ModesOptions {
        count,
        shift: None,
        out_dir: dir.to_path_buf(),
        base: "modes".into(),
    }
}

/// ω of the P1 string (ρ = τ = L = 1, `n` cells, fixed ends): lumped `(2/h) sin(jπh/2)`,
/// consistent `√(12/h² sin²(jπh/2) / (2 + cos jπh))`.
fn string_omega(j: usize, n: usize, consistent: bool) -> f64 {
    let h = 1.0 / n as f64;
    let a = j as f64 * std::f64::consts::PI * h;
    if consistent {
        (12.0 / (h * h) * (a / 2.0).sin().powi(2) / (2.0 + a.cos())).sqrt()
    } else {
        2.0 / h * (a / 2.0).sin()
    }
}

#[test]
fn the_string_has_its_sine_modes_to_1e_12() {
    for (file, consistent) in [
        ("tests/modes/string_100.yaml", false),
        ("tests/modes/string_100_consistent.yaml", true),
    ] {
        let dir = scratch(if consistent { "consistent" } else { "lumped" });
        let summary =
            fem::modes::modes::<fem::input::ModelInput>(&root().join(file), &options(20, &dir))
                .unwrap();
        assert_eq!(summary.rows.len(), 20);
        assert_eq!(summary.free_dofs, 99);
        for (j, row) in summary.rows.iter().enumerate() {
            let exact = string_omega(j + 1, 100, consistent);
            assert!(
                (row.omega - exact).abs() <= 1e-12 * exact,
                "{file} mode {}: {} against {exact}",
                j + 1,
                row.omega
            );
            assert!((row.frequency - exact / (2.0 * std::f64::consts::PI)).abs() <= 1e-12 * exact);
            // Transverse along y only; odd modes carry mass, even ones none (antisymmetric).
            assert_eq!(row.effective_mass[0], 0.0);
            assert_eq!(row.effective_mass[2], 0.0);
            if j % 2 == 1 {
                assert!(row.effective_mass[1] < 1e-20, "mode {}", j + 1);
            }
        }
        // The closed form of the first mode's effective mass fraction, lumped:
        // (Σ sin(πx_i))² h / (Σ sin²(πx_i) · (n − 1)) (the string's free nodes move with it).
        if !consistent {
            let h = 0.01;
            let s: Vec<f64> = (1..100)
                .map(|i| (std::f64::consts::PI * i as f64 * h).sin())
                .collect();
            let sum: f64 = s.iter().sum();
            let sq: f64 = s.iter().map(|v| v * v).sum();
            let fraction = sum * sum / (sq * 99.0);
            assert!((summary.rows[0].effective_mass[1] - fraction).abs() < 1e-12);
        }
        let csv = std::fs::read_to_string(&summary.csv).unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "mode,omega,frequency,omega_squared,generalized_mass,effective_mass_x,effective_mass_y,effective_mass_z"
        );
        assert_eq!(lines.count(), 20);
        let pvd = std::fs::read_to_string(&summary.pvd).unwrap();
        assert!(
            pvd.contains("timestep=\"1\"") || pvd.contains("timestep=\"1.0\""),
            "{pvd}"
        );
        assert_eq!(pvd.matches("<DataSet").count(), 20);
    }
}

/// With every mode, the effective mass fractions sum to 1 in the direction that moves.
#[test]
fn every_mode_carries_all_the_mass() {
    let dir = scratch("all");
    let summary = fem::modes::modes::<fem::input::ModelInput>(
        &root().join("tests/modes/string_100.yaml"),
        &options(99, &dir),
    )
    .unwrap();
    let total: f64 = summary.rows.iter().map(|r| r.effective_mass[1]).sum();
    assert!((total - 1.0).abs() < 1e-12, "{total}");
}

#[test]
fn the_command_prints_and_writes_the_modes() {
    let dir = scratch("cube");
    let out = fem(&[
        "modes",
        "tests/modes/free_cube.yaml",
        "-k",
        "8",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let csv = std::fs::read_to_string(dir.join("modes.csv")).unwrap();
    let omega: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(omega.len(), 8);
    for w in &omega[..6] {
        assert!(w.abs() < 1e-6 * omega[6], "{omega:?}");
    }
    assert!(dir.join("free_cube_modes.pvd").is_file());
    assert!(dir.join("free_cube_modes_000007.vtu").is_file());
}

/// Each refusal: exit 2, the option or key named, nothing written.
#[test]
fn bad_requests_exit_2_naming_the_option_or_key() {
    for (args, words) in [
        (
            vec!["modes", "tests/modes/string_100.yaml", "-k", "100"],
            "-k: 100 modes asked for, but the model has only 99 free dofs",
        ),
        (
            vec!["modes", "tests/modes/string_100.yaml", "-k", "0"],
            "-k: expected at least 1 mode",
        ),
        (
            vec![
                "modes",
                "tests/modes/free_cube.yaml",
                "-k",
                "3",
                "--shift",
                "0",
            ],
            "--shift: the shift 0e0 is an eigenvalue of the model",
        ),
        (
            vec!["modes", "inputs/rigid_top.yaml"],
            "model.rigid_bodies: fem modes computes the modes of a structure with a stiffness and a mass",
        ),
        (
            vec!["modes", "tests/bad_inputs/string_zero_density.yaml"],
            "model.string.density",
        ),
    ] {
        let dir = scratch("refused");
        let mut args = args.clone();
        let d = dir.to_str().unwrap().to_string();
        args.extend(["-o", &d]);
        let out = fem(&args);
        let message = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(words), "{args:?}: {message}");
        assert!(
            message.contains(args[1]),
            "{args:?} names the file: {message}"
        );
        assert!(!message.contains("panicked"), "{message}");
        assert!(!dir.join("modes.csv").exists(), "{args:?} wrote output");
    }
}
