//! A prescribed rigid rotation about an axis, as Dirichlet signals: the dofs of a node at
//! reference position `X` follow `u(t) = R(θ(t)) (X − c) − (X − c)`, with `R(θ)` the rotation
//! by `θ` about the unit axis `a` through the centre `c` (Rodrigues' formula). The rate and
//! acceleration are exact in terms of `θ̇`, `θ̈` (those of the angle's function: exact when
//! given, central differences otherwise):
//! `u̇ = θ̇ a × r`, `ü = θ̈ a × r + θ̇² a × (a × r)` with `r = R (X − c)`.

use std::sync::Arc;

use fem_constraints::{Prescribed, Signal};

/// The rotation of one node's component `component` about `axis` through `centre` by the
/// angle `angle(t)` (radians).
#[derive(Clone, Debug)]
pub struct RotationSignal {
    angle: Arc<Prescribed>,
    axis: [f64; 3],
    /// `X − c`.
    arm: [f64; 3],
    component: usize,
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `R(θ) r` about the unit axis `a` (Rodrigues).
pub fn rotate(axis: [f64; 3], theta: f64, r: [f64; 3]) -> [f64; 3] {
    let (s, c) = theta.sin_cos();
    let axr = cross(axis, r);
    let adr: f64 = (0..3).map(|i| axis[i] * r[i]).sum();
    std::array::from_fn(|i| r[i] * c + axr[i] * s + axis[i] * adr * (1.0 - c))
}

impl RotationSignal {
    /// The signal of `component` of the node at `point`; `axis` must be a unit vector.
    pub fn new(
        angle: Arc<Prescribed>,
        axis: [f64; 3],
        centre: [f64; 3],
        point: [f64; 3],
        component: usize,
    ) -> Self {
        Self {
            angle,
            axis,
            arm: std::array::from_fn(|i| point[i] - centre[i]),
            component,
        }
    }

    fn rotated(&self, t: f64) -> [f64; 3] {
        rotate(self.axis, self.angle.value(t), self.arm)
    }
}

impl Signal for RotationSignal {
    fn value(&self, t: f64) -> f64 {
        let i = self.component;
        self.rotated(t)[i] - self.arm[i]
    }

    fn rate(&self, t: f64) -> f64 {
        self.angle.rate(t) * cross(self.axis, self.rotated(t))[self.component]
    }

    fn acceleration(&self, t: f64) -> f64 {
        let r = self.rotated(t);
        let ar = cross(self.axis, r);
        let aar = cross(self.axis, ar);
        let (w, a) = (self.angle.rate(t), self.angle.acceleration(t));
        a * ar[self.component] + w * w * aar[self.component]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fem_constraints::TimeFunction;

    #[test]
    fn rate_and_acceleration_are_the_derivatives_of_the_value() {
        let angle = Arc::new(Prescribed::new(
            TimeFunction::expression("0.3*t^2 + 0.1*t").unwrap(),
        ));
        let axis = [0.0, 0.6, 0.8];
        for c in 0..3 {
            let s = RotationSignal::new(angle.clone(), axis, [0.1, 0.2, 0.3], [1.0, -0.5, 2.0], c);
            let (t, e) = (0.7, 1e-4);
            let rate = (s.value(t + e) - s.value(t - e)) / (2.0 * e);
            let acc = (s.value(t + e) - 2.0 * s.value(t) + s.value(t - e)) / (e * e);
            assert!((rate - s.rate(t)).abs() < 1e-7, "{c}: {rate} {}", s.rate(t));
            assert!((acc - s.acceleration(t)).abs() < 1e-5, "{c}: {acc}");
        }
        // A quarter turn about z maps (1, 0, 0) to (0, 1, 0).
        let r = rotate(
            [0.0, 0.0, 1.0],
            std::f64::consts::FRAC_PI_2,
            [1.0, 0.0, 0.0],
        );
        assert!((r[0]).abs() < 1e-15 && (r[1] - 1.0).abs() < 1e-15);
    }
}
