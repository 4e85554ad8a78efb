//! [`DeadLoads`]: the external force of a solid on its free dofs — a constant part (the body
//! force) plus dead tractions, each a fixed spatial pattern scaled per component by a function
//! of time. The serial [`crate::SolidSystem`] and a distributed subdomain (crate `fem-mpi`)
//! both evaluate their force through it, so the two add the same terms in the same order.

use fem_constraints::TimeFunction;

/// A dead traction: the consistent nodal force of a unit traction along each axis, scaled at
/// time `t` by that component's function.
#[derive(Clone, Debug)]
struct Traction {
    /// Nodal forces of the unit tractions `e_x`, `e_y`, `e_z` (free dofs).
    unit: [Vec<f64>; 3],
    /// The traction's components as functions of time (force per unit reference area).
    value: [TimeFunction; 3],
}

/// The dead (configuration-independent) external force on `n` free dofs.
#[derive(Clone, Debug, Default)]
pub struct DeadLoads {
    /// The constant part (body force), free dofs.
    constant: Vec<f64>,
    tractions: Vec<Traction>,
}

impl DeadLoads {
    /// No load on `n` free dofs.
    pub fn new(n: usize) -> Self {
        Self {
            constant: vec![0.0; n],
            tractions: Vec::new(),
        }
    }

    /// Adds `force` (free dofs, the same length) to the constant part.
    pub fn add_constant(&mut self, force: impl IntoIterator<Item = f64>) {
        for (c, f) in self.constant.iter_mut().zip(force) {
            *c += f;
        }
    }

    /// Adds a dead traction given by the nodal forces `unit[i]` of a unit traction along axis
    /// `i` (free dofs) and its components `value` as functions of time.
    pub fn add_traction(&mut self, unit: [Vec<f64>; 3], value: [TimeFunction; 3]) {
        self.tractions.push(Traction { unit, value });
    }

    /// Whether the loads are identically zero (no traction, a zero constant part).
    pub fn is_zero(&self) -> bool {
        self.tractions.is_empty() && self.constant.iter().all(|&f| f == 0.0)
    }

    /// The force at time `t` into `f` (free dofs): the constant part, then each traction's
    /// components in the order they were added.
    pub fn force(&self, t: f64, f: &mut [f64]) {
        f.copy_from_slice(&self.constant);
        for traction in &self.tractions {
            for (unit, value) in traction.unit.iter().zip(&traction.value) {
                let s = value.eval(t);
                if s != 0.0 {
                    for (fi, ui) in f.iter_mut().zip(unit) {
                        *fi += s * ui;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traction_scales_its_unit_patterns_over_the_constant_part() {
        let mut loads = DeadLoads::new(3);
        assert!(loads.is_zero());
        loads.add_constant([1.0, 0.0, -2.0]);
        assert!(!loads.is_zero());
        let unit = [
            vec![1.0, 0.0, 0.0],
            vec![0.0, 1.0, 0.0],
            vec![0.0, 0.0, 1.0],
        ];
        let value = [
            TimeFunction::Constant(3.0),
            TimeFunction::Constant(0.0),
            TimeFunction::Constant(0.5),
        ];
        loads.add_traction(unit, value);
        let mut f = [f64::NAN; 3];
        loads.force(1.0, &mut f);
        assert_eq!(f, [4.0, 0.0, -1.5]);
    }
}
