//! The solid as a [`SecondOrderSystem`]: `M ü + f_int(u) = f_ext(t)` on the free dofs of a
//! [`SolidOperator`], so that every stepper of the framework (the alpha scheme, backward Euler
//! with Newton) and the leap-frog steppers of this crate run on it.
//!
//! The unknown `x` is the displacement on the free dofs (the fixed dofs are eliminated and
//! hold zero; prescribed dofs are unknowns of the system, held by the stepper). The internal
//! force, tangent and strain energy are the operator's (`docs/theory/solid.md`); the external
//! force is a constant part (the body force) plus dead tractions, each a fixed spatial pattern
//! scaled by a function of time per component.
//!
//! A force or tangent evaluated on an inverted body (`J ≤ 0` at a quadrature point) is an
//! [`EvalError::InvertedCell`] naming the lowest such cell.

use std::sync::{Arc, Mutex};

use fem_assembly::solid::{SolidPart, face_traction_vector};
use fem_assembly::{CsrMatrix, SolidError, SolidOperator, StableStep};
use fem_constraints::TimeFunction;
use fem_elements::solid::FaceKind;
use fem_time::leapfrog::massless::DofBlock;
use fem_time::{EvalError, LeapFrogSystem, Mass, Matrix, SecondOrderSystem, TangentKind};

use crate::loads::DeadLoads;

/// Scratch buffers of the force evaluation (the full displacement and the force slots).
#[derive(Debug, Default)]
struct Scratch {
    u: Vec<f64>,
    slots: Vec<f64>,
}

/// The mass of a solid: lumped (by the operator's lumping) or consistent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolidMass {
    /// The diagonal lumped mass (row sum for tet4 and hex8, HRZ for tet10, or as asked).
    Lumped,
    /// The consistent mass `∫ ρ N_a N_b dV`.
    Consistent,
}

/// A total-Lagrangian solid as a second-order system on its free dofs.
///
/// Cloning shares the operator (its geometry and plans) and copies the mass and loads; each
/// clone has its own scratch buffers.
#[derive(Debug)]
pub struct SolidSystem {
    operator: Arc<SolidOperator>,
    mass: Mass,
    /// The external force: body force and dead tractions, free dofs.
    loads: DeadLoads,
    scratch: Mutex<Scratch>,
}

impl SolidSystem {
    /// The system of `operator` with its lumped or consistent mass and no load.
    pub fn new(operator: SolidOperator, mass: SolidMass) -> Result<Self, SolidError> {
        let mass = match mass {
            SolidMass::Lumped => Mass::Lumped(operator.lumped_mass().to_vec()),
            SolidMass::Consistent => Mass::Consistent(operator.consistent_mass()?),
        };
        let n = operator.dofmap().n_free();
        Ok(Self {
            operator: Arc::new(operator),
            mass,
            loads: DeadLoads::new(n),
            scratch: Mutex::new(Scratch::default()),
        })
    }

    /// The same system with the lumped mass `mass` (one entry per free dof, each finite and
    /// `≥ 0`) in place of its own: a redistributed mass with no mass on a contact surface's
    /// nodes (Khenous, Laborde & Renard 2008; `fem_scene::redistribute`). Only DEF_LIM can
    /// step a mass with zero entries (`M + (ηh/2 + h²/4) K` stays positive definite). Call it
    /// before [`Self::with_gravity`], which weighs the lumped mass. `None` when the system's
    /// mass is consistent, `mass` has another length, or an entry is negative or not finite.
    pub fn with_lumped_mass(mut self, mass: Vec<f64>) -> Option<Self> {
        let Mass::Lumped(own) = &self.mass else {
            return None;
        };
        if own.len() != mass.len() || !mass.iter().all(|m| m.is_finite() && *m >= 0.0) {
            return None;
        }
        self.mass = Mass::Lumped(mass);
        Some(self)
    }

    /// Adds gravity `g` (an acceleration): `ρ g` per unit reference volume, consistently
    /// integrated with a consistent mass, and `m_i g` on the lumped mass (its consistent
    /// partner, so a free body falls at exactly `g`).
    pub fn with_gravity(mut self, g: [f64; 3]) -> Self {
        let force = match &self.mass {
            Mass::Lumped(m) => {
                let free = self.operator.dofmap().free_dofs();
                m.iter()
                    .zip(free)
                    .map(|(mi, &dof)| mi * g[dof % 3])
                    .collect()
            }
            Mass::Consistent(_) => {
                let rho = self.operator.density();
                self.operator.body_force(g.map(|gi| rho * gi))
            }
        };
        self.loads.add_constant(force);
        self
    }

    /// Adds a dead traction (force per unit reference area, each component a function of
    /// time) on `faces` of one kind (their nodes, Gmsh order). Returns the faces' total area.
    pub fn add_traction(
        &mut self,
        kind: FaceKind,
        faces: &[usize],
        value: [TimeFunction; 3],
    ) -> f64 {
        let points = self.operator.points();
        let dofmap = self.operator.dofmap();
        let mut area = 0.0;
        let unit = std::array::from_fn(|i| {
            let mut t = [0.0; 3];
            t[i] = 1.0;
            let (f, a) = face_traction_vector(kind, points, faces, t, dofmap);
            area = a;
            f
        });
        self.loads.add_traction(unit, value);
        area
    }

    /// The operator (geometry, material, dof map).
    pub fn operator(&self) -> &SolidOperator {
        &self.operator
    }

    /// The system dof of `component` of `node` (the mesh's numbering), `None` when it is
    /// fixed: the dofs Dirichlet sets for this system take ([`fem_constraints::SystemDof`]).
    pub fn system_dof(&self, node: usize, component: usize) -> Option<fem_constraints::SystemDof> {
        fem_model::build::system_dof(self.operator.dofmap(), node, component)
    }

    /// The operator, shared (the frames of a model use it).
    pub fn shared_operator(&self) -> Arc<SolidOperator> {
        self.operator.clone()
    }

    /// The reference position of the node of each free dof (three dofs share a point).
    pub fn dof_points(&self) -> Vec<[f64; 3]> {
        self.operator
            .dofmap()
            .free_dof_points(self.operator.points())
    }

    /// The displacement of all `3 n_nodes` dofs from the free dofs `x` (fixed dofs zero).
    pub fn full_displacement(&self, x: &[f64], u: &mut Vec<f64>) {
        let dofmap = self.operator.dofmap();
        u.resize(dofmap.n_dofs(), 0.0);
        dofmap.scatter(x, 0.0, u);
    }

    /// The explicit critical step at `x`: `2/sqrt(λ_max)` with `λ_max` the largest
    /// generalized eigenvalue `K_e(u) φ = λ M_e φ` over the elements (an upper bound on the
    /// global one, so the step is a safe one for the central difference/leap-frog).
    pub fn critical_step(&self, x: &[f64]) -> Result<StableStep, SolidError> {
        let mut u = Vec::new();
        self.full_displacement(x, &mut u);
        self.operator.stable_step(&u)
    }

    /// Every cell's largest element eigenvalue `λ_max(K_e(u), M_e)` at `x` (the element bound
    /// of [`critical_step`](Self::critical_step) is their largest), in cell order.
    pub fn cell_eigenvalues(&self, x: &[f64]) -> Result<Vec<f64>, SolidError> {
        let mut u = Vec::new();
        self.full_displacement(x, &mut u);
        self.operator.cell_eigenvalues(&u)
    }

    /// The strain energy at `x` (NaN on an inverted body).
    pub fn strain_energy(&self, x: &[f64]) -> f64 {
        let mut u = Vec::new();
        self.full_displacement(x, &mut u);
        self.operator.strain_energy(&u)
    }

    /// The energy stored by the hourglass control of the `one_point` cells at `x` (part of
    /// the strain energy; 0 without such cells).
    pub fn hourglass_energy(&self, x: &[f64]) -> f64 {
        if !self.operator.has_hourglass_control() {
            return 0.0;
        }
        let mut u = Vec::new();
        self.full_displacement(x, &mut u);
        self.operator.hourglass_energy_sum(&u).value()
    }
}

/// A solid's failure as the time layer's evaluation error: an inverted cell is named; any other
/// failure of the operator keeps its own type.
pub fn evaluation_error(e: SolidError) -> EvalError {
    match e {
        SolidError::Inverted { kind, cell } => EvalError::InvertedCell {
            element: kind.name(),
            cell,
        },
        other => EvalError::model(other),
    }
}

impl Clone for SolidSystem {
    fn clone(&self) -> Self {
        Self {
            operator: self.operator.clone(),
            mass: self.mass.clone(),
            loads: self.loads.clone(),
            scratch: Mutex::new(Scratch::default()),
        }
    }
}

impl SecondOrderSystem for SolidSystem {
    fn n_dofs(&self) -> usize {
        self.operator.dofmap().n_free()
    }

    fn mass(&self) -> &Mass {
        &self.mass
    }

    fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let Scratch { u, slots } = &mut *scratch;
        self.full_displacement(x, u);
        self.operator
            .internal_force(u, slots, f)
            .map_err(evaluation_error)
    }

    fn tangent_kind(&self) -> TangentKind {
        TangentKind::Symmetric
    }

    fn tangent(&self, x: &[f64]) -> Result<Matrix, EvalError> {
        let pattern = self.operator.matrix_pattern().clone();
        let nnz = pattern.nnz();
        let mut k = CsrMatrix::try_from_pattern_and_values(pattern, vec![0.0; nnz])
            .expect("values match the pattern");
        self.tangent_into(x, &mut k)?;
        Ok(Matrix::Sparse(k))
    }

    /// The tangent `K(x)` on the free dofs into `out`'s values (its pattern is the operator's,
    /// fixed).
    fn tangent_into(&self, x: &[f64], out: &mut CsrMatrix<f64>) -> Result<(), EvalError> {
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let Scratch { u, slots } = &mut *scratch;
        self.full_displacement(x, u);
        self.operator
            .tangent_values(u, slots, out.values_mut())
            .map_err(evaluation_error)
    }

    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        Some(self.strain_energy(x)).filter(|e| e.is_finite())
    }

    fn external_force(&self, t: f64, f: &mut [f64]) {
        self.loads.force(t, f);
    }

    fn has_external_force(&self) -> bool {
        !self.loads.is_zero()
    }

    fn dof_points(&self) -> Option<Vec<[f64; 3]>> {
        Some(SolidSystem::dof_points(self))
    }
}

impl LeapFrogSystem for SolidSystem {
    fn critical_step(&self, x: &[f64]) -> Result<StableStep, EvalError> {
        SolidSystem::critical_step(self, x).map_err(evaluation_error)
    }

    /// The cells touching the dofs' nodes ([`SolidOperator::part`]): their force and tangent
    /// block, the whole body's bit for bit.
    fn dof_block(&self, dofs: &[usize]) -> Option<Box<dyn DofBlock>> {
        let part = self.operator.part(dofs);
        let u = vec![0.0; self.operator.dofmap().n_dofs()];
        Some(Box::new(SolidBlock {
            operator: self.operator.clone(),
            part,
            u,
            scratch: Vec::new(),
        }))
    }
}

/// A solid's part seen by a block of its dofs ([`LeapFrogSystem::dof_block`]).
#[derive(Debug)]
struct SolidBlock {
    operator: Arc<SolidOperator>,
    part: SolidPart,
    /// The full displacement (only the part's dofs are kept up to date; fixed dofs zero).
    u: Vec<f64>,
    /// The cells' forces or matrices.
    scratch: Vec<f64>,
}

impl SolidBlock {
    /// The displacement of the part's nodes from the free dofs `x`.
    fn read(&mut self, x: &[f64]) {
        let free = self.operator.dofmap().free_dofs();
        for &d in self.part.read_dofs() {
            self.u[free[d]] = x[d];
        }
    }
}

impl DofBlock for SolidBlock {
    fn internal_force(&mut self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        self.read(x);
        self.operator
            .part_internal_force(&self.part, &self.u, &mut self.scratch, f)
            .map_err(evaluation_error)
    }

    fn tangent_pattern(&self) -> CsrMatrix<f64> {
        let pattern = self.part.pattern().clone();
        let nnz = pattern.nnz();
        CsrMatrix::try_from_pattern_and_values(pattern, vec![0.0; nnz])
            .expect("values match the pattern")
    }

    fn tangent_into(&mut self, x: &[f64], k: &mut CsrMatrix<f64>) -> Result<(), EvalError> {
        self.read(x);
        self.operator
            .part_tangent_values(&self.part, &self.u, &mut self.scratch, k.values_mut())
            .map_err(evaluation_error)
    }
}
