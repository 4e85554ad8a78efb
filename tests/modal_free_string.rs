//! A modal string without a `contact` section rings freely (issue 28, item 2): `contact` is
//! optional, and `fem check` accepted such an input, but `fem run` stopped at step 0 with
//! exit 2 ("the history column 'min_gap' became non-finite": the gap to no obstacle).

use std::path::Path;
use std::process::Command;

fn csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
        .collect();
    (header, rows)
}

/// Mode 3 of an ideal string (L = T = μ = 1, c = 1) released from rest rings as
/// `u(x, t) = a sin(3πx) cos(3πt)`; the exact modal scheme reproduces it at every step, and its
/// energy `½ Σ (q̇² + ω² q²)` is constant. The history has the common columns only.
#[test]
fn a_modal_string_without_contact_rings_freely() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("modal_free_string");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("free.yaml");
    let a = 0.01;
    std::fs::write(
        &input,
        format!(
            "model:\n  modal_string: {{ length: 1.0, tension: 1.0, density: 1.0, modes: 8 }}\n\
             initial:\n  displacement: {{ sine: {{ mode: 3, amplitude: {a} }} }}\n\
             time: {{ scheme: modal_moreau_jean, dt: 0.01, t_end: 2.0 }}\n\
             output: {{ probes: [0.5] }}\n"
        ),
    )
    .unwrap();
    let out_dir = dir.join("out");
    let out = Command::new(env!("CARGO_BIN_EXE_fem"))
        .args([
            "run",
            input.to_str().unwrap(),
            "-o",
            out_dir.to_str().unwrap(),
            "-q",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (header, rows) = csv(&out_dir.join("history.csv"));
    assert_eq!(header, ["step", "t", "kinetic", "potential", "total"]);
    assert_eq!(rows.len(), 201);
    let e0 = rows[0][4];
    assert!(e0 > 0.0);
    for r in &rows {
        assert!(
            (r[4] - e0).abs() < 1e-13 * e0,
            "t = {}: {} vs {e0}",
            r[1],
            r[4]
        );
    }
    // u(1/2, t) = a sin(3π/2) cos(3πt) = −a cos(3πt).
    let (_, probes) = csv(&out_dir.join("probes.csv"));
    assert_eq!(probes.len(), 201);
    for p in &probes {
        let exact = -a * (3.0 * std::f64::consts::PI * p[0]).cos();
        assert!(
            (p[1] - exact).abs() < 1e-13,
            "t = {}: {} vs {exact}",
            p[0],
            p[1]
        );
    }
}
