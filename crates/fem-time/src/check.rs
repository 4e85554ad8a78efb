//! Finite-difference checks of a system, for the tests of every system (ours and downstream):
//! the tangent against the internal force, and the internal force against the potential
//! energy (STYLE.md, item 11, for systems).
//!
//! Both use central differences along a direction `v`, with the step
//! `h = ∛ε · max(1, ‖x‖∞) / max(‖v‖∞, tiny)` (truncation `O(h²)`, round-off `O(ε/h)`, both
//! about `1e-11` relative for smooth forces): a correct tangent agrees with the difference of
//! the force to about `1e-8` of the force's scale, a wrong sign or a missing factor by order one.

use crate::evaluation::EvalError;
use crate::system::SecondOrderSystem;

/// The step of a central difference at `x` along `v`.
fn step_along(x: &[f64], v: &[f64]) -> f64 {
    let inf = |a: &[f64]| a.iter().fold(0.0f64, |m, e| m.max(e.abs()));
    f64::EPSILON.cbrt() * inf(x).max(1.0) / inf(v).max(f64::MIN_POSITIVE)
}

/// The tangent's action `K(x) v ≈ (f(x + h v) − f(x − h v)) / 2h`, for a system that gives no
/// tangent (the stability bound of an explicit scheme, say).
#[derive(Debug)]
pub struct TangentAction<'a, S: SecondOrderSystem + ?Sized> {
    system: &'a S,
    x: Vec<f64>,
}

impl<'a, S: SecondOrderSystem + ?Sized> TangentAction<'a, S> {
    /// The action at `x`; fails when the force cannot be evaluated there.
    pub fn new(system: &'a S, x: &[f64]) -> Result<Self, EvalError> {
        let mut f = vec![0.0; x.len()];
        system.internal_force(x, &mut f)?;
        Ok(Self {
            system,
            x: x.to_vec(),
        })
    }

    /// `out ≈ K(x) v`.
    pub fn apply(&self, v: &[f64], out: &mut [f64]) -> Result<(), EvalError> {
        let h = step_along(&self.x, v);
        let n = self.x.len();
        let plus: Vec<f64> = (0..n).map(|i| self.x[i] + h * v[i]).collect();
        let minus: Vec<f64> = (0..n).map(|i| self.x[i] - h * v[i]).collect();
        let mut f_minus = vec![0.0; n];
        self.system.internal_force(&plus, out)?;
        self.system.internal_force(&minus, &mut f_minus)?;
        for (o, m) in out.iter_mut().zip(&f_minus) {
            *o = (*o - m) / (2.0 * h);
        }
        Ok(())
    }
}

/// How far a system's tangent is from the central difference of its force along a direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TangentCheck {
    /// `‖K v − (f(x+hv) − f(x−hv))/2h‖∞`.
    pub difference: f64,
    /// `‖K v‖∞`, the scale.
    pub scale: f64,
}

impl TangentCheck {
    /// `difference / scale` (0 when both vanish).
    pub fn relative(&self) -> f64 {
        if self.scale > 0.0 {
            self.difference / self.scale
        } else {
            self.difference
        }
    }
}

/// Compares the system's tangent at `x` applied to `v` with the central difference of its
/// internal force along `v`.
pub fn check_tangent<S: SecondOrderSystem + ?Sized>(
    system: &S,
    x: &[f64],
    v: &[f64],
) -> Result<TangentCheck, EvalError> {
    let k = system.tangent(x)?;
    let mut kv = vec![0.0; x.len()];
    k.mul_add(0.0, &mut kv, 1.0, v);
    let mut fd = vec![0.0; x.len()];
    TangentAction::new(system, x)?.apply(v, &mut fd)?;
    let inf = |a: &[f64]| a.iter().fold(0.0f64, |m, e| m.max(e.abs()));
    let diff: Vec<f64> = kv.iter().zip(&fd).map(|(a, b)| a - b).collect();
    Ok(TangentCheck {
        difference: inf(&diff),
        scale: inf(&kv),
    })
}

/// How far the internal force is from the gradient of the potential along a direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForceCheck {
    /// `|f(x)·v − (V(x+hv) − V(x−hv))/2h|`.
    pub difference: f64,
    /// `|f(x)·v|`, the scale.
    pub scale: f64,
}

/// Compares `f_int(x)·v` with the central difference of the potential along `v`; `None` when
/// the system has no potential.
pub fn check_force<S: SecondOrderSystem + ?Sized>(
    system: &S,
    x: &[f64],
    v: &[f64],
) -> Result<Option<ForceCheck>, EvalError> {
    let n = x.len();
    let mut f = vec![0.0; n];
    system.internal_force(x, &mut f)?;
    let h = step_along(x, v);
    let plus: Vec<f64> = (0..n).map(|i| x[i] + h * v[i]).collect();
    let minus: Vec<f64> = (0..n).map(|i| x[i] - h * v[i]).collect();
    let (Some(vp), Some(vm)) = (
        system.potential_energy(&plus),
        system.potential_energy(&minus),
    ) else {
        return Ok(None);
    };
    let fv: f64 = f.iter().zip(v).map(|(a, b)| a * b).sum();
    Ok(Some(ForceCheck {
        difference: (fv - (vp - vm) / (2.0 * h)).abs(),
        scale: fv.abs(),
    }))
}
