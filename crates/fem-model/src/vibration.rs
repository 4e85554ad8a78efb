//! What modal analysis (`fem modes`) reads of a model: its linearization about the initial
//! state — the stiffness `K` (the tangent there), the mass `M`, which dofs the model's
//! Dirichlet conditions hold, and where each dof sits and moves, to draw a mode shape and to
//! weigh its effective mass.
//!
//! A model offers it through [`Model::linearization`](crate::Model::linearization) (`None` by
//! default: a model that is not a linear-elastic structure about a state has no modes).

use fem_assembly::CsrMatrix;
use fem_io::VtkCells;
use fem_time::{EvalError, Mass};

/// A model linearized about its initial state: `K φ = ω² M φ` on the dofs not held.
#[derive(Clone, Debug)]
pub struct Linearization {
    /// `K`, the tangent at the initial state, on the model's system dofs (the dofs its
    /// stepper steps; fixed dofs already eliminated), both triangles stored.
    pub stiffness: CsrMatrix<f64>,
    /// `M` on the same dofs.
    pub mass: Mass,
    /// System dofs held by the model's Dirichlet conditions (prescribed motion): not free in
    /// a mode.
    pub held: Vec<usize>,
    /// The mesh node of each system dof.
    pub dof_node: Vec<usize>,
    /// The unit direction in space each system dof moves along.
    pub dof_direction: Vec<[f64; 3]>,
    /// The points a frame of a mode shape is drawn on.
    pub points: Vec<[f64; 3]>,
    /// The cells of such a frame.
    pub cells: VtkCells,
    /// The input key that gives the model its mass (named when the mass is not positive).
    pub mass_key: String,
}

impl Linearization {
    /// The free dofs (system dofs not held), in increasing order.
    pub fn free_dofs(&self) -> Vec<usize> {
        let mut held = vec![false; self.dof_node.len()];
        for &d in &self.held {
            if let Some(h) = held.get_mut(d) {
                *h = true;
            }
        }
        (0..self.dof_node.len()).filter(|&d| !held[d]).collect()
    }
}

/// The result type of [`Model::linearization`](crate::Model::linearization): the stiffness at
/// the initial state may fail to evaluate (an inverted cell).
pub type LinearizationResult = Result<Linearization, EvalError>;
