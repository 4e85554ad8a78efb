//! Helpers shared by the validation tests: the heavy top, an independent RK4 reference, zero
//! crossings by cubic Hermite interpolation, observed orders.

#![allow(dead_code)]

use fem_rigid::rotation::exp_map;
use fem_rigid::{AngularVelocity, RigidBodies, RigidBody, RigidStepper, Scheme, diagonal};

/// The heavy symmetric top of Simo & Wong (1991) as Solfec's validation case: `J = diag(5, 5,
/// 1)` about the tip, `m = 1`, `M g l = 20` (`l = 1`, `g = 20` along `−e₃`),
/// `Λ(0) = exp[(0.05, 0, 0)]`, `Ω(0) = (0, 0, 50)`. Its centre is at `Λ e₃`.
pub fn heavy_top(scheme: Scheme, h: f64) -> RigidStepper {
    let mut top = RigidBody::new(
        1.0,
        fem_rigid::inertia_about_centre(diagonal([5.0, 5.0, 1.0]), 1.0, [0.0, 0.0, 1.0]),
    );
    top.rotation = [0.05, 0.0, 0.0];
    top.position = exp_map(top.rotation).map(|row| row[2]);
    top.fixed_point = Some([0.0; 3]);
    top.angular_velocity = AngularVelocity::Body([0.0, 0.0, 50.0]);
    let bodies = RigidBodies::from_bodies([0.0, 0.0, -20.0], [top]).expect("valid top");
    RigidStepper::new(bodies, scheme, h, 0.0).expect("valid stepper")
}

/// The three schemes, RIG_IMP with its default Newton settings.
pub fn schemes() -> [Scheme; 3] {
    [Scheme::RigPos, Scheme::RigNeg, Scheme::rig_imp()]
}

pub type Mat3 = [[f64; 3]; 3];

/// A unit quaternion `(w, x, y, z)` as a rotation matrix.
pub fn quaternion_to_matrix(q: [f64; 4]) -> Mat3 {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let [w, x, y, z] = q.map(|v| v / n);
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

/// The quaternion of the rotation vector `psi`.
pub fn quaternion_from_rotation_vector(psi: [f64; 3]) -> [f64; 4] {
    let theta = (psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2]).sqrt();
    if theta == 0.0 {
        return [1.0, 0.0, 0.0, 0.0];
    }
    let s = (0.5 * theta).sin() / theta;
    [(0.5 * theta).cos(), s * psi[0], s * psi[1], s * psi[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// An independent reference: classical RK4 on the quaternion `q̇ = ½ q ⊗ (0, Ω)` and Euler's
/// equations `J Ω̇ = T − Ω × J Ω` with a diagonal `J` about the centre of rotation and a body
/// torque `T = X_c × Λᵀ f` (a constant spatial force `f` at the body point `X_c`; zero for a
/// torque-free body). Returns `(Λ, Ω)` at `t_end`.
pub fn rk4_reference(
    j: [f64; 3],
    offset: [f64; 3],
    force: [f64; 3],
    psi0: [f64; 3],
    omega0: [f64; 3],
    t_end: f64,
    steps: usize,
) -> (Mat3, [f64; 3]) {
    let rhs = |y: [f64; 7]| -> [f64; 7] {
        let q = [y[0], y[1], y[2], y[3]];
        let w = [y[4], y[5], y[6]];
        let lam = quaternion_to_matrix(q);
        let ft =
            [0, 1, 2].map(|i| lam[0][i] * force[0] + lam[1][i] * force[1] + lam[2][i] * force[2]);
        let t = cross(offset, ft);
        let jw = [j[0] * w[0], j[1] * w[1], j[2] * w[2]];
        let g = cross(w, jw);
        let dw = [0, 1, 2].map(|i| (t[i] - g[i]) / j[i]);
        // q ⊗ (0, w) / 2
        let dq = [
            0.5 * (-q[1] * w[0] - q[2] * w[1] - q[3] * w[2]),
            0.5 * (q[0] * w[0] + q[2] * w[2] - q[3] * w[1]),
            0.5 * (q[0] * w[1] + q[3] * w[0] - q[1] * w[2]),
            0.5 * (q[0] * w[2] + q[1] * w[1] - q[2] * w[0]),
        ];
        [dq[0], dq[1], dq[2], dq[3], dw[0], dw[1], dw[2]]
    };
    let q0 = quaternion_from_rotation_vector(psi0);
    let mut y = [q0[0], q0[1], q0[2], q0[3], omega0[0], omega0[1], omega0[2]];
    let h = t_end / steps as f64;
    let axpy = |y: [f64; 7], s: f64, k: [f64; 7]| -> [f64; 7] {
        let mut out = y;
        for i in 0..7 {
            out[i] += s * k[i];
        }
        out
    };
    for _ in 0..steps {
        let k1 = rhs(y);
        let k2 = rhs(axpy(y, 0.5 * h, k1));
        let k3 = rhs(axpy(y, 0.5 * h, k2));
        let k4 = rhs(axpy(y, h, k3));
        for i in 0..7 {
            y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    (
        quaternion_to_matrix([y[0], y[1], y[2], y[3]]),
        [y[4], y[5], y[6]],
    )
}

/// The root in `[t0, t0 + h]` of the cubic Hermite interpolant of `f` with values `f0, f1`
/// and derivatives `d0, d1` at the ends (bisection on the cubic; error O(h⁴)).
pub fn hermite_root(t0: f64, h: f64, f0: f64, f1: f64, d0: f64, d1: f64) -> f64 {
    let p = |s: f64| {
        let (h00, h10, h01, h11) = (
            2.0 * s * s * s - 3.0 * s * s + 1.0,
            s * s * s - 2.0 * s * s + s,
            -2.0 * s * s * s + 3.0 * s * s,
            s * s * s - s * s,
        );
        h00 * f0 + h10 * h * d0 + h01 * f1 + h11 * h * d1
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    let sign_lo = p(lo).signum();
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if p(mid).signum() == sign_lo {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    t0 + 0.5 * (lo + hi) * h
}

/// `log2(e_coarse / e_fine)` for each consecutive pair of errors at halved steps.
pub fn observed_orders(errors: &[f64]) -> Vec<f64> {
    errors.windows(2).map(|w| (w[0] / w[1]).log2()).collect()
}

pub fn max_abs_diff(a: &Mat3, b: &Mat3) -> f64 {
    let mut m: f64 = 0.0;
    for i in 0..3 {
        for k in 0..3 {
            m = m.max((a[i][k] - b[i][k]).abs());
        }
    }
    m
}

pub fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

pub fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
