//! MJ: observed orders (θ = ½ → 2, θ = 1 → 1), energy behaviour, and contact without
//! penetration; also the modal basis of an assembled system against its definition.

use fem_constraints::{Lemke, UnilateralContacts};
use fem_time::nonsmooth::free_response;
use fem_time::{LinearSystem, Mass, ModalBasis, ModalDamping, MoreauJean};
use fem_time::{NodalStepper as _, StepSettings, Stepper as _};
use nalgebra_sparse::{CooMatrix, CsrMatrix};

fn tridiagonal(n: usize, d: f64, o: f64) -> CsrMatrix<f64> {
    let mut coo = CooMatrix::new(n, n);
    for i in 0..n {
        coo.push(i, i, d);
        if i + 1 < n {
            coo.push(i, i + 1, o);
            coo.push(i + 1, i, o);
        }
    }
    CsrMatrix::from(&coo)
}

/// A 4-dof chain with consistent mass and Rayleigh damping `C = a M + b K`.
fn chain(a: f64, b: f64) -> (LinearSystem, Mass) {
    let m = tridiagonal(4, 4.0 / 6.0, 1.0 / 6.0);
    let k = tridiagonal(4, 20.0, -10.0);
    let c = if a == 0.0 && b == 0.0 {
        None
    } else {
        Some(fem_assembly::sparse::linear_combination(
            &[(a, &m), (b, &k)],
            None,
        ))
    };
    let mass = Mass::Consistent(m);
    (
        LinearSystem {
            mass: mass.clone(),
            stiffness: k,
            damping: c.map(fem_time::Matrix::from),
            force: None,
            stiffness_kind: fem_time::TangentKind::Symmetric,
        },
        mass,
    )
}

/// Exact solution at `t` by the modes of `(K, M)`.
fn exact(
    mass: &Mass,
    k: &CsrMatrix<f64>,
    a: f64,
    b: f64,
    q0: &[f64],
    v0: &[f64],
    t: f64,
) -> Vec<f64> {
    let basis = ModalBasis::from_system(mass, k, q0.len()).unwrap();
    let sigma = ModalDamping::Rayleigh {
        mass: a,
        stiffness: b,
    }
    .rates(&basis.omega)
    .unwrap();
    let mq = basis.to_modal(mass, q0);
    let mv = basis.to_modal(mass, v0);
    let qt: Vec<f64> = (0..q0.len())
        .map(|j| free_response(basis.omega[j], sigma[j], mq[j], mv[j], t).0)
        .collect();
    basis.to_physical(&qt)
}

fn error_at_end(theta: f64, dt: f64, a: f64, b: f64) -> f64 {
    let (system, mass) = chain(a, b);
    let k = system.stiffness.clone();
    let q0 = [0.1, -0.2, 0.3, 0.05];
    let v0 = [0.0, 1.0, 0.5, -0.5];
    let t_end = 1.0;
    let mut s = MoreauJean::new(system, theta, StepSettings::new(dt), &q0, &v0).unwrap();
    let n = (t_end / dt).round() as usize;
    for _ in 0..n {
        s.step().unwrap();
    }
    let reference = exact(&mass, &k, a, b, &q0, &v0, t_end);
    s.position()
        .iter()
        .zip(&reference)
        .map(|(x, r)| (x - r).abs())
        .fold(0.0, f64::max)
}

#[test]
fn observed_orders() {
    for (theta, expected) in [(0.5, 2.0), (1.0, 1.0)] {
        for (a, b) in [(0.0, 0.0), (0.3, 0.002)] {
            let dts = [0.02, 0.01, 0.005, 0.0025, 0.00125];
            let errors: Vec<f64> = dts
                .iter()
                .map(|&dt| error_at_end(theta, dt, a, b))
                .collect();
            println!("theta = {theta}, C = {a} M + {b} K");
            for i in 0..dts.len() {
                let order = if i == 0 {
                    String::new()
                } else {
                    format!("{:.3}", (errors[i - 1] / errors[i]).log2())
                };
                println!(
                    "  dt = {:7.4} error {:10.3e} order {order}",
                    dts[i], errors[i]
                );
            }
            let last = (errors[3] / errors[4]).log2();
            assert!((last - expected).abs() < 0.1, "theta {theta}: order {last}");
        }
    }
}

#[test]
fn trapezoidal_conserves_and_backward_euler_dissipates() {
    let q0 = [0.1, -0.2, 0.3, 0.05];
    let v0 = [0.0, 1.0, 0.5, -0.5];
    let (system, _) = chain(0.0, 0.0);
    let mut half = MoreauJean::trapezoidal(system, StepSettings::new(0.01), &q0, &v0).unwrap();
    let (system, _) = chain(0.0, 0.0);
    let mut one = MoreauJean::backward_euler(system, StepSettings::new(0.01), &q0, &v0).unwrap();
    let e0 = half.energy().unwrap().total;
    let mut last = one.energy().unwrap().total;
    let mut drift = 0.0f64;
    for _ in 0..2000 {
        half.step().unwrap();
        one.step().unwrap();
        drift = drift.max((half.energy().unwrap().total - e0).abs() / e0);
        let e = one.energy().unwrap().total;
        assert!(e < last, "theta = 1 must dissipate at every step");
        last = e;
    }
    println!(
        "theta = 1/2: energy drift {drift:e}; theta = 1: E(20)/E(0) = {:e}",
        last / e0
    );
    assert!(drift < 1e-12);
    assert!(last < 0.5 * e0);
}

#[test]
fn lumped_string_on_nodal_obstacles_does_not_penetrate() {
    // P1 string (L = T = μ = 1, 49 interior nodes, lumped mass), obstacle at -0.2 under every
    // node, e = 0, theta = 1: the gap never goes below zero beyond round-off.
    let n = 49;
    let h = 1.0 / (n + 1) as f64;
    let system = LinearSystem {
        mass: Mass::Lumped(vec![h; n]),
        stiffness: tridiagonal(n, 2.0 / h, -1.0 / h),
        damping: None,
        force: None,
        stiffness_kind: fem_time::TangentKind::Symmetric,
    };
    let q0: Vec<f64> = (1..=n)
        .map(|i| {
            let x = i as f64 * h;
            0.5 * (1.0 - (2.0 * x - 1.0).abs())
        })
        .collect();
    let contacts =
        UnilateralContacts::at_dofs(n, &(0..n).collect::<Vec<_>>(), vec![-0.2; n], 0.0).unwrap();
    let mut s = MoreauJean::backward_euler(system, StepSettings::new(1e-3), &q0, &vec![0.0; n])
        .unwrap()
        .with_contacts(contacts, Box::new(Lemke::default()))
        .unwrap();
    let (mut min_gap, mut impacts) = (f64::INFINITY, 0);
    for _ in 0..2000 {
        s.step().unwrap();
        let r = s.last_contact();
        min_gap = min_gap.min(r.min_gap);
        impacts += usize::from(r.n_active > 0);
    }
    println!("MJ theta = 1, e = 0: min gap {min_gap:e}, {impacts} steps with contact");
    assert!(impacts > 0);
    assert!(min_gap > -1e-14);
}

#[test]
fn modal_basis_of_an_assembled_system() {
    for mass in [
        Mass::Lumped(vec![1.0, 2.0, 0.5, 1.5]),
        Mass::Consistent(tridiagonal(4, 4.0 / 6.0, 1.0 / 6.0)),
    ] {
        let k = tridiagonal(4, 20.0, -10.0);
        let basis = ModalBasis::from_system(&mass, &k, 4).unwrap();
        for j in 0..4 {
            let phi: Vec<f64> = basis.shapes.column(j).iter().copied().collect();
            let kphi = fem_assembly::sparse::mul(&k, &phi);
            let mut mphi = vec![0.0; 4];
            mass.mul(&phi, &mut mphi);
            for i in 0..4 {
                let w2 = basis.omega[j] * basis.omega[j];
                assert!((kphi[i] - w2 * mphi[i]).abs() < 1e-10 * w2);
            }
            assert!((mass.norm_squared(&phi) - 1.0).abs() < 1e-12);
        }
        let u = [0.3, -0.1, 0.2, 0.7];
        let back = basis.to_physical(&basis.to_modal(&mass, &u));
        for i in 0..4 {
            assert!((back[i] - u[i]).abs() < 1e-12);
        }
    }
}
