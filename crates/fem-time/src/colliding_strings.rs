//! Two colliding strings (Glowinski–Holmström §3, (46)–(67)) on the nonlinear alpha scheme.
//!
//! Strings `u` and `v` on `[0, 1]`, both ends fixed, `ρ_k ü = τ_k u_xx`, kept apart by
//! `u ≥ v`. P1 elements on `I` cells with lumped (trapezoidal) mass, assembled by
//! [`StringMatrices`]: per interior node `ρ h` on the diagonal and `τ/h [−1 2 −1]`, i.e. `h`
//! times the paper's `ρ I` and `τ A_h` (55). The unknowns are `x = (U, V)`, `2(I − 1)` of them.
//!
//! The constraint `g_i = v_i − u_i ≤ 0` at each interior node is enforced by the penalty
//! `H_ε(w) = (w⁺)²/(2ε)` (47). Its weak form (52) integrated by the trapezoidal rule gives
//! `h H_ε'(v_i − u_i)` per node, so the potential is `V(x) = Σ_i h H_ε(v_i − u_i)`: a
//! [`Penalty`] with parameter `ε/h` per node. The time discretization (62) is the discrete
//! gradient of [`LinearConstraintPotential`], so (63) is [`NonlinearAlphaScheme`] on this
//! system, and the discrete energy, penalty energy included, is conserved.
//!
//! # Signs in (63) as printed
//! The OCR of (63) shows `− τ A_h (…)`; (54) and the energy argument need `+ τ A_h (…)`, which
//! is what is implemented. The penalty quotient of (63),
//! `(1/ε) ((v−u)^{n+1/2}² − (v−u)^{n−1/2}²) / ((v−u)^{n+1} − (v−u)^{n−1})`, lost its `(·)⁺`
//! in print: it is `2 (H^{n+1/2} − H^{n−1/2}) / (w^{n+1} − w^{n−1})` of (62) with
//! `H = (w⁺)²/(2ε)`, as implemented. In (67), `0.02 sin(τ i h)` reads `0.02 sin(π i h)`.

use fem_assembly::{DofMap, string::StringMatrices};
use fem_constraints::Penalty;
use fem_elements::StringMaterial;
use nalgebra_sparse::{CooMatrix, CsrMatrix};

use crate::newton::NewtonReport;
use crate::nonlinear_alpha::{LinearConstraintPotential, NonlinearAlphaScheme, NonlinearEnergy};
use crate::{LinearSystem, Mass, NewtonSettings, StepError};

/// Parameters of the colliding strings (66)–(67).
#[derive(Clone, Debug, PartialEq)]
pub struct CollidingStringsParameters {
    /// Number of cells `I` (`h = 1/I`), at least 2.
    pub n_cells: usize,
    /// Linear densities `ρ_1`, `ρ_2` of `u` and `v`.
    pub density: [f64; 2],
    /// Tensions `τ_1`, `τ_2`.
    pub tension: [f64; 2],
    /// Penalty parameter `ε` of (47).
    pub epsilon: f64,
    /// Time step `Δt`.
    pub dt: f64,
    /// The scheme's `α` (¼ in the paper).
    pub alpha: f64,
    /// Initial displacements of `u` and `v` at the interior nodes `x_i = i h`, `i = 1..I−1`.
    pub u0: Vec<f64>,
    /// See `u0`.
    pub v0: Vec<f64>,
    /// Initial velocities of `u` and `v` at the interior nodes.
    pub u1: Vec<f64>,
    /// See `u1`.
    pub v1: Vec<f64>,
    /// Newton's settings for (63).
    pub newton: NewtonSettings,
}

impl CollidingStringsParameters {
    /// The experiment of §3.3: (66) and (67), with `n_cells` = `I`.
    pub fn paper(n_cells: usize) -> Self {
        let h = 1.0 / n_cells as f64;
        let pi = std::f64::consts::PI;
        let nodes = 1..n_cells;
        Self {
            n_cells,
            density: [1.0, 1.0],
            tension: [1.0, 1.0],
            epsilon: 1e-6,
            dt: 1e-4,
            alpha: 0.25,
            u0: nodes
                .clone()
                .map(|i| 0.02 * (pi * i as f64 * h).sin())
                .collect(),
            v0: nodes
                .clone()
                .map(|i| -0.01 * (2.0 * pi * i as f64 * h).sin())
                .collect(),
            u1: vec![0.0; n_cells - 1],
            v1: vec![0.0; n_cells - 1],
            newton: NewtonSettings {
                max_iterations: 25,
                relative_tolerance: 1e-10,
                absolute_tolerance: 0.0,
            },
        }
    }

    /// Range checks: positive `ρ`, `τ`, `ε`, `Δt`; `α` in `[0, ½]`; vectors of length `I − 1`.
    pub fn check(&self) -> Result<(), StepError> {
        let positive = |name: &'static str, value: f64| {
            if value > 0.0 && value.is_finite() {
                Ok(())
            } else {
                Err(StepError::InvalidParameter {
                    name,
                    value,
                    expected: "a positive finite number",
                })
            }
        };
        if self.n_cells < 2 {
            return Err(StepError::InvalidParameter {
                name: "n_cells",
                value: self.n_cells as f64,
                expected: "at least 2 cells",
            });
        }
        positive("density", self.density[0])?;
        positive("density", self.density[1])?;
        positive("tension", self.tension[0])?;
        positive("tension", self.tension[1])?;
        positive("epsilon", self.epsilon)?;
        positive("dt", self.dt)?;
        for (what, v) in [
            ("u0", &self.u0),
            ("v0", &self.v0),
            ("u1", &self.u1),
            ("v1", &self.v1),
        ] {
            if v.len() != self.n_cells - 1 || v.iter().any(|x| !x.is_finite()) {
                return Err(StepError::BadInitialData {
                    what,
                    found: v.len(),
                    expected: self.n_cells - 1,
                });
            }
        }
        Ok(())
    }
}

/// What one step of the strings produced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollidingStringsStep {
    /// Step index `n` after the step.
    pub step: u64,
    /// `t_n`.
    pub t: f64,
    /// `max_i (v_i^n − u_i^n)⁺`: the penetration at `t_n`.
    pub penetration: f64,
    /// Discrete energy (19) + (32) of `[t_{n−1}, t_n]`, penalty energy included.
    pub energy: NonlinearEnergy,
    /// Newton's report.
    pub newton: NewtonReport,
}

/// The two strings, stepped by (63) with start (64).
#[derive(Debug)]
pub struct CollidingStrings {
    scheme: NonlinearAlphaScheme<LinearSystem, LinearConstraintPotential>,
    n_cells: usize,
}

impl CollidingStrings {
    /// Builds the model and solves the start (64).
    pub fn new(p: &CollidingStringsParameters) -> Result<Self, StepError> {
        p.check()?;
        let n = p.n_cells;
        let m = n - 1;
        let points: Vec<[f64; 3]> = (0..=n).map(|i| [i as f64 / n as f64, 0.0, 0.0]).collect();
        let cells: Vec<[usize; 2]> = (0..n).map(|i| [i, i + 1]).collect();
        let dofmap = DofMap::with_fixed(n + 1, 1, [0, n]);
        let strings: Vec<StringMatrices> = (0..2)
            .map(|k| {
                let material = StringMaterial {
                    density: p.density[k],
                    tension: p.tension[k],
                };
                StringMatrices::assemble(&points, &cells, &material, &dofmap)
            })
            .collect();
        let mut lumped = strings[0].lumped_mass.clone();
        lumped.extend_from_slice(&strings[1].lumped_mass);
        let stiffness = block_diagonal(&strings[0].stiffness, &strings[1].stiffness);
        let system = LinearSystem {
            mass: Mass::Lumped(lumped),
            stiffness,
            damping: None,
            force: None,
        };
        // g_i = v_i − u_i ≤ 0.
        let mut g = CooMatrix::new(m, 2 * m);
        for i in 0..m {
            g.push(i, i, -1.0);
            g.push(i, m + i, 1.0);
        }
        let h = 1.0 / n as f64;
        let penalty =
            Penalty::inequalities(p.epsilon / h, m).map_err(|_| StepError::InvalidParameter {
                name: "epsilon",
                value: p.epsilon,
                expected: "a positive finite penalty parameter",
            })?;
        let potential =
            LinearConstraintPotential::new(CsrMatrix::from(&g), vec![0.0; m], Box::new(penalty));
        let x0: Vec<f64> = p.u0.iter().chain(&p.v0).copied().collect();
        let v0: Vec<f64> = p.u1.iter().chain(&p.v1).copied().collect();
        let scheme =
            NonlinearAlphaScheme::new(system, potential, p.alpha, p.dt, 0.0, &x0, &v0, p.newton)?;
        Ok(Self { scheme, n_cells: n })
    }

    /// Advances one step.
    pub fn step(&mut self) -> Result<CollidingStringsStep, StepError> {
        let newton = self.scheme.step()?;
        let x = self.scheme.position().to_vec();
        self.scheme.potential_mut().update_multipliers(&x);
        Ok(CollidingStringsStep {
            step: self.scheme.step_index(),
            t: self.scheme.time(),
            penetration: self.penetration(),
            energy: self.scheme.energy(),
            newton,
        })
    }

    /// `u` at all `I + 1` nodes (ends included) at `t_n`.
    pub fn u(&self) -> Vec<f64> {
        self.with_ends(0)
    }

    /// `v` at all `I + 1` nodes at `t_n`.
    pub fn v(&self) -> Vec<f64> {
        self.with_ends(1)
    }

    fn with_ends(&self, k: usize) -> Vec<f64> {
        let m = self.n_cells - 1;
        let mut out = vec![0.0; self.n_cells + 1];
        out[1..=m].copy_from_slice(&self.scheme.position()[k * m..(k + 1) * m]);
        out
    }

    /// Node coordinates `x_i = i h`, `i = 0..=I`.
    pub fn nodes(&self) -> Vec<f64> {
        (0..=self.n_cells)
            .map(|i| i as f64 / self.n_cells as f64)
            .collect()
    }

    /// `max_i (v_i − u_i)⁺` at `t_n`.
    pub fn penetration(&self) -> f64 {
        let m = self.n_cells - 1;
        let x = self.scheme.position();
        (0..m).fold(0.0f64, |p, i| p.max(x[m + i] - x[i]))
    }

    /// The contact forces per node `h H_ε'(v_i − u_i)` recorded after the last step (the
    /// penalty's equivalent multipliers).
    pub fn contact_forces(&self) -> &[f64] {
        self.scheme.potential().solver().multipliers()
    }

    /// `t_n`.
    pub fn time(&self) -> f64 {
        self.scheme.time()
    }

    /// The underlying scheme.
    pub fn scheme(&self) -> &NonlinearAlphaScheme<LinearSystem, LinearConstraintPotential> {
        &self.scheme
    }
}

/// `diag(a, b)`.
fn block_diagonal(a: &CsrMatrix<f64>, b: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    let (na, nb) = (a.nrows(), b.nrows());
    let mut coo = CooMatrix::new(na + nb, na + nb);
    for (i, j, v) in a.triplet_iter() {
        coo.push(i, j, *v);
    }
    for (i, j, v) in b.triplet_iter() {
        coo.push(na + i, na + j, *v);
    }
    CsrMatrix::from(&coo)
}
