//! The bending energy evaluated element by element on the field minus its linear part: the same
//! value as `½ xᵀKx` where that one is accurate, the circle's energy in the limit, and no
//! round-off floor on fine meshes far from the origin.

use fem_assembly::sparse::bilinear;
use fem_beam::{Beam, BeamParameters, BeamState};

fn arc(n: usize, offset: [f64; 3]) -> (Beam, Vec<f64>) {
    let mut p = BeamParameters::paper_95();
    p.n_elements = n;
    let model = Beam::new(p).unwrap();
    let mut state = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
    for x in &mut state.positions {
        for c in 0..3 {
            x[c] += offset[c];
        }
    }
    let x = state.to_columns();
    (model, x)
}

/// `½ Σ_c x_cᵀ K x_c` on the assembled bending matrix.
fn assembled(model: &Beam, x: &[f64]) -> f64 {
    let n_s = model.n_scalar();
    (0..3)
        .map(|c| {
            0.5 * bilinear(
                model.bending(),
                &x[c * n_s..(c + 1) * n_s],
                &x[c * n_s..(c + 1) * n_s],
            )
        })
        .sum()
}

#[test]
fn equals_the_assembled_quadratic_form_on_a_coarse_mesh() {
    let (model, x) = arc(20, [0.0; 3]);
    let (e, a) = (model.bending_energy(&x), assembled(&model, &x));
    assert!(e > 0.0);
    assert!((e - a).abs() <= 1e-12 * a, "{e} vs {a}");
}

#[test]
fn converges_to_the_energy_of_the_circle() {
    // Chord 20, length 32.6: 2R sin(L/2R) = 20 by bisection on R; E = EI L / (2 R²).
    let (l, chord, ei) = (32.6f64, 20.0f64, 700.0f64);
    let (mut lo, mut hi) = (l / (2.0 * std::f64::consts::PI), 1e3f64);
    for _ in 0..200 {
        let r = 0.5 * (lo + hi);
        if 2.0 * r * (l / (2.0 * r)).sin() > chord {
            hi = r;
        } else {
            lo = r;
        }
    }
    let r = 0.5 * (lo + hi);
    let exact = ei * l / (2.0 * r * r);
    let errors: Vec<f64> = [8, 16, 32]
        .iter()
        .map(|&n| {
            let (model, x) = arc(n, [0.0; 3]);
            (model.bending_energy(&x) - exact).abs() / exact
        })
        .collect();
    assert!(errors[2] < 1e-4, "{errors:?}");
    assert!(errors[0] / errors[2] > 10.0, "{errors:?}");
}

#[test]
fn has_no_round_off_floor_on_a_fine_mesh_far_from_the_origin() {
    // N = 10⁵: EI/h³ ≈ 2·10¹³; 10³ m from the origin the assembled form's round-off is
    // ε·EI|x|²/h³ per entry, far above the energy's own size.
    let (model, x) = arc(100_000, [0.0; 3]);
    let (far_model, far) = arc(100_000, [1e3, -2e3, 5e2]);
    let (e, e_far) = (model.bending_energy(&x), far_model.bending_energy(&far));
    assert!((e - e_far).abs() <= 1e-8 * e, "{e} vs {e_far}");
    let a_far = assembled(&far_model, &far);
    println!("bending energy {e}, translated {e_far}, assembled form translated {a_far}");
    // The case does discriminate: the assembled form is wrong here (by orders of magnitude).
    assert!((a_far - e).abs() > 1e-2 * e, "{a_far} vs {e}");
}
