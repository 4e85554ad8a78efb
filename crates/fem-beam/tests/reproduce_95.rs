//! The paper's experiment (95) over 10 s, both schemes. Long: run it by hand with
//! `cargo test --release -p fem-beam --test reproduce_95 -- --ignored --nocapture`;
//! it prints, per 0.5 s window, the energy, max ||x'| − 1|, max nodal speed and iterations.

use fem_beam::{
    AugmentedLagrangianStepper, Beam, BeamParameters, BeamState, BeamStepReport, End, PenaltyForm,
    PenaltySettings, PenaltyStepper, UzawaSettings, solve_static,
};
use fem_time::StepSettings;

fn start() -> (Beam, fem_beam::StaticSolution) {
    let model = Beam::new(BeamParameters::paper_95()).unwrap();
    let guess = BeamState::arc(&model, [0.0; 3], [20.0, 0.0, 0.0], [0.0, -1.0, 0.0]);
    let sol = solve_static(&model, &guess, &UzawaSettings::anderson(1e4)).unwrap();
    (
        model.with_ends(End::pinned([0.0; 3]), End::Free).unwrap(),
        sol,
    )
}

/// The step of the three runs (s).
const DT: f64 = 0.01;

fn run(name: &str, e0: f64, mut step: impl FnMut() -> Result<(BeamStepReport, [f64; 3]), String>) {
    eprintln!("{name}: E0 = {e0:.3} J");
    let (mut stretch, mut speed, mut its, mut n) = (0.0f64, 0.0f64, 0usize, 0usize);
    for k in 1..=1000 {
        let (rep, b) = match step() {
            Ok(r) => r,
            Err(e) => {
                eprintln!("  stopped at step {k}: {e}");
                return;
            }
        };
        stretch = stretch.max(rep.max_stretch_error);
        speed = speed.max(rep.max_speed);
        its += rep.iterations;
        n += 1;
        if k % 50 == 0 {
            eprintln!(
                "  t = {:5.2}  E - E0 = {:10.3}  max||x'|-1| = {:.2e}  max speed = {:6.2}  its/step = {:6.1}  B = ({:7.3}, {:7.3})",
                k as f64 * DT,
                rep.energy - e0,
                stretch,
                speed,
                its as f64 / n as f64,
                b[0],
                b[1]
            );
            (stretch, speed, its, n) = (0.0, 0.0, 0, 0);
        }
    }
}

#[test]
#[ignore = "10 s of simulated time for three runs; a reproduction, run by hand"]
fn paper_95_ten_seconds() {
    let (model, sol) = start();
    let mut al = AugmentedLagrangianStepper::new(
        model.clone(),
        &sol.state,
        None,
        Some(&sol.multipliers),
        0.25,
        StepSettings::new(DT),
        UzawaSettings::anderson(1e5),
    )
    .unwrap();
    let e0 = al.last_report().energy;
    run("augmented Lagrangian (97), r = 1e5, Anderson", e0, || {
        let r = al.step().map_err(|e| e.to_string())?;
        Ok((r, al.state().positions[20]))
    });
    for form in [PenaltyForm::Midpoint, PenaltyForm::Paper] {
        let mut settings = PenaltySettings::new(1.5e-4);
        settings.form = form;
        let mut pen = PenaltyStepper::new(
            model.clone(),
            &sol.state,
            None,
            0.25,
            StepSettings::new(DT),
            settings,
        )
        .unwrap();
        let e0 = pen.last_report().energy;
        run(
            &format!("penalty (93), eps = 1.5e-4, {form:?} form"),
            e0,
            || {
                let r = pen.step().map_err(|e| e.to_string())?;
                Ok((r, pen.state().positions[20]))
            },
        );
    }
}
