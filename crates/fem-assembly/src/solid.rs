//! A total-Lagrangian solid assembled on cells of one kind: internal force, tangent, lumped and
//! consistent mass, strain energy, stresses, loads and the explicit stable step.
//!
//! The material is any [`Hyperelastic`] ([`SolidMaterial`]: the shipped [`Material`], whose
//! kernels are monomorphized and vectorized, or a `dyn Hyperelastic` of a downstream crate), and
//! each cell has an element formulation ([`Formulation`]: `full`, `eas`, `fbar`, `one_point`;
//! cells with the same formulation in a row share one dispatch).
//!
//! [`SolidOperator::new`] computes once what depends only on the reference configuration: each
//! cell's geometry ([`Element::geometry`]: for `full` the reference gradients and volume weights
//! at its quadrature points ([`fem_elements::solid::total_lagrangian`], `(3N + 1) Q` values per
//! cell: 104 B for a tet4, 1.0 kB for a tet10) — for hex8 the compact `J⁻¹` and `dV` of
//! [`fem_elements::solid::hex8`] (640 B; its force is sum-factorized, the other kernels expand it
//! per cell); 2.2 kB for `eas`, 0.9 kB for `one_point`), the gather plan
//! of the force vector and the lumped mass. The tangent's
//! sparsity pattern is built on first use only (an explicit run never needs it, and for 10⁶ hex8
//! cells it would take gigabytes).
//!
//! Every global quantity is assembled in two stages, as in [`crate::plan`]: each cell writes its
//! local vector into its own slot (parallel over cells), then each global entry sums its slots
//! in increasing cell order (parallel over entries). Results are bitwise independent of the
//! number of threads, and a domain-decomposed run that computes the slots of its own cells and
//! sums shared-node slots in the same order reproduces them (issue 14). Scalars (energy) are
//! exact sums ([`ExactSum`]: each task of cells sums its cells' energies, the tasks' sums are
//! merged), rounded once: independent of the order and of the split.
//!
//! Displacements are global, node-major vectors over all `3 n_nodes` dofs (prescribed dofs hold
//! their prescribed values); forces, masses and matrices live on the free dofs of the
//! [`DofMap`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use fem_elements::solid::element::{CellFailure, Element, FailedCell, gather};
use fem_elements::solid::loads::{body_force, face_traction};
use fem_elements::solid::mass::{
    ShapeTable, consistent_mass_tabulated, lumped_mass, lumped_mass_tabulated,
};
use fem_elements::solid::shape::{MAX_FACE_NODES, MAX_NODES};
use fem_elements::solid::stable_step::max_generalized_eigenvalue;
use fem_elements::solid::total_lagrangian::{CellStress, NonPositiveJacobian};
use fem_elements::solid::{
    FaceKind, Formulation, Hyperelastic, Lumping, MassError, MassProperties, Material, SolidKind,
    UnsupportedFormulation, mass_properties,
};
use nalgebra_sparse::CsrMatrix;
use rayon::prelude::*;

use crate::{AssemblyPlan, DofMap, ExactSum, NodeBlockPlan, VectorPlan};

mod part;
pub use part::SolidPart;

/// Cells per parallel task in the cell loops (a multiple of every element's
/// [`Element::group_cells`]).
const CELLS_PER_TASK: usize = 512;

/// The longest geometry block of an element that groups its cells (`one_point`'s).
const GROUPED_MAX_LEN: usize = fem_elements::solid::one_point::GEOMETRY_LEN;

/// Why a solid could not be set up or evaluated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SolidError {
    /// The density is not positive and finite.
    #[error("density {value} must be positive and finite")]
    Density {
        /// The value given.
        value: f64,
    },
    /// A cell refers to a node that does not exist.
    #[error("{kind} cell {cell} refers to node {node}, but there are {n_nodes} nodes")]
    NodeOutOfRange {
        /// Element kind.
        kind: SolidKind,
        /// Cell index.
        cell: usize,
        /// The node index found.
        node: usize,
        /// Number of nodes.
        n_nodes: usize,
    },
    /// A formulation that does not apply to the kind, or a list of them of the wrong length.
    #[error("{0}")]
    Formulation(#[from] UnsupportedFormulation),
    /// A cell of the reference mesh is inverted or degenerate.
    #[error("{kind} cell {cell} of the mesh: {source}")]
    InvertedCell {
        /// Element kind.
        kind: SolidKind,
        /// Cell index.
        cell: usize,
        /// Where and how.
        source: NonPositiveJacobian,
    },
    /// The lumped mass of a cell failed (row-sum lumping of tet10).
    #[error("{kind} cell {cell}: {source}")]
    Mass {
        /// Element kind.
        kind: SolidKind,
        /// Cell index.
        cell: usize,
        /// What failed.
        source: MassError,
    },
    /// The deformed body has `J = det F ≤ 0` (or `NaN`) at a quadrature point of a cell.
    #[error(
        "{kind} cell {cell} is inverted by the displacement (J = det F <= 0 or NaN at a quadrature point)"
    )]
    Inverted {
        /// Element kind.
        kind: SolidKind,
        /// The first such cell (lowest index).
        cell: usize,
    },
    /// The enhanced (incompatible) modes of an `eas` cell did not converge.
    #[error(
        "the enhanced modes of {kind} cell {cell} (element eas) did not converge: the cell is too distorted by the displacement"
    )]
    ModesNotConverged {
        /// Element kind.
        kind: SolidKind,
        /// The first such cell (lowest index).
        cell: usize,
    },
}

impl SolidError {
    /// The error of a failed cell evaluation.
    fn of(kind: SolidKind, cell: usize, failure: CellFailure) -> Self {
        match failure {
            CellFailure::Inverted => SolidError::Inverted { kind, cell },
            CellFailure::ModesNotConverged => SolidError::ModesNotConverged { kind, cell },
        }
    }
}

/// The explicit stable step estimate and where it comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StableStep {
    /// `2 / sqrt(λ_max)`: the central-difference stability limit (before any safety factor).
    pub dt: f64,
    /// `λ_max = max_e λ_max(K_e, M_e)` (rad²/s²).
    pub lambda_max: f64,
    /// The cell with the largest eigenvalue (lowest index among equals).
    pub cell: usize,
}

/// The material of a [`SolidOperator`]: the shipped [`Material`] (its kernels monomorphized and
/// vectorized) or any [`Hyperelastic`] of a downstream crate.
#[derive(Clone, Debug)]
pub enum SolidMaterial {
    /// One of the shipped isotropic models.
    Builtin(Material),
    /// Any other hyperelastic material.
    Custom(Arc<dyn Hyperelastic>),
}

impl From<Material> for SolidMaterial {
    fn from(m: Material) -> Self {
        SolidMaterial::Builtin(m)
    }
}

impl From<Arc<dyn Hyperelastic>> for SolidMaterial {
    fn from(m: Arc<dyn Hyperelastic>) -> Self {
        SolidMaterial::Custom(m)
    }
}

impl SolidMaterial {
    /// The material as a trait object.
    pub fn as_dyn(&self) -> &dyn Hyperelastic {
        match self {
            SolidMaterial::Builtin(m) => m,
            SolidMaterial::Custom(m) => m.as_ref(),
        }
    }

    /// The shipped material, if it is one.
    pub fn builtin(&self) -> Option<&Material> {
        match self {
            SolidMaterial::Builtin(m) => Some(m),
            SolidMaterial::Custom(_) => None,
        }
    }
}

/// Evaluates `$body` with `$m` bound to the operator's material as a concrete `&Material` or a
/// `&dyn Hyperelastic` (one monomorphization each).
macro_rules! with_material {
    ($material:expr, $m:ident => $body:expr) => {
        match $material {
            SolidMaterial::Builtin(builtin) => {
                let $m: &Material = builtin;
                $body
            }
            SolidMaterial::Custom(custom) => {
                let $m: &dyn Hyperelastic = custom.as_ref();
                $body
            }
        }
    };
}

/// Consecutive cells with one element formulation, and where their geometry starts.
#[derive(Clone, Copy, Debug)]
struct Run {
    element: Element,
    /// First cell and one past the last.
    cells: (usize, usize),
    /// Offset of the first cell's geometry block.
    geometry: usize,
}

/// A hyperelastic body made of cells of one [`SolidKind`], with its precomputed geometry.
#[derive(Debug)]
pub struct SolidOperator {
    kind: SolidKind,
    material: SolidMaterial,
    density: f64,
    runs: Vec<Run>,
    points: Vec<[f64; 3]>,
    connectivity: Vec<usize>,
    geometry: Vec<f64>,
    dofmap: DofMap,
    vector_plan: NodeBlockPlan,
    matrix_plan: OnceLock<AssemblyPlan>,
    lumped_mass: Vec<f64>,
    /// The hourglass part of the last [`strain_energy_sum`](Self::strain_energy_sum) with the
    /// displacement it was computed at, for [`hourglass_energy_sum`](Self::hourglass_energy_sum)
    /// at the same displacement (a history row asks for both: one pass over the cells).
    last_hourglass: Mutex<Option<(Vec<f64>, ExactSum)>>,
}

impl SolidOperator {
    /// Sets up the body: `connectivity` holds the cells' nodes (Gmsh order, `N` per cell) into
    /// `points` (reference coordinates), `dofmap` numbers the `3 · points.len()` dofs (3
    /// components per node, some fixed). Every cell is `full` (the kind's force rule,
    /// [`SolidKind::force_rule`]); the lumped mass uses `lumping`.
    ///
    /// # Panics
    /// If `dofmap` is not a 3-component map over `points`, or `connectivity.len()` is not a
    /// multiple of the node count (programming errors, not user input).
    pub fn new(
        kind: SolidKind,
        points: &[[f64; 3]],
        connectivity: &[usize],
        material: impl Into<SolidMaterial>,
        density: f64,
        lumping: Lumping,
        dofmap: &DofMap,
    ) -> Result<Self, SolidError> {
        Self::with_formulations(
            kind,
            points,
            connectivity,
            &[],
            material,
            density,
            lumping,
            dofmap,
        )
    }

    /// [`new`](Self::new) with a formulation per cell (`formulations[c]` for cell `c`; an empty
    /// slice: every cell `full`). A formulation that does not apply to `kind` is refused.
    ///
    /// # Panics
    /// As [`new`](Self::new), and if `formulations` is neither empty nor one per cell.
    #[allow(clippy::too_many_arguments)]
    pub fn with_formulations(
        kind: SolidKind,
        points: &[[f64; 3]],
        connectivity: &[usize],
        formulations: &[Formulation],
        material: impl Into<SolidMaterial>,
        density: f64,
        lumping: Lumping,
        dofmap: &DofMap,
    ) -> Result<Self, SolidError> {
        let material = material.into();
        assert_eq!(dofmap.n_comp(), 3, "a solid has 3 components per node");
        assert_eq!(dofmap.n_nodes(), points.len(), "one dof triple per point");
        let n = kind.n_nodes();
        let n_cells = check_cells(kind, points, connectivity, formulations, density)?;
        // Runs of equal formulations, their geometry one after the other.
        let formulation = |c: usize| formulations.get(c).copied().unwrap_or_default();
        let mut runs: Vec<Run> = Vec::new();
        let mut offset = 0;
        let mut c = 0;
        while c < n_cells {
            let f = formulation(c);
            let mut end = c + 1;
            while end < n_cells && formulation(end) == f {
                end += 1;
            }
            let element = Element::new(kind, f)?;
            runs.push(Run {
                element,
                cells: (c, end),
                geometry: offset,
            });
            offset += element.grouped_len(end - c);
            c = end;
        }
        let mut geometry = vec![0.0; offset];
        let mut first_bad: Option<(usize, NonPositiveJacobian)> = None;
        {
            let mut rest = geometry.as_mut_slice();
            for run in &runs {
                let element = run.element;
                let block = element.geometry_len();
                let n_run = run.cells.1 - run.cells.0;
                let (mine, tail) = rest.split_at_mut(element.grouped_len(n_run));
                rest = tail;
                // A task's cells fill whole groups (CELLS_PER_TASK is a multiple of the
                // group size), the last task's last group padded with zeros.
                let bad = mine
                    .par_chunks_mut(block * CELLS_PER_TASK)
                    .enumerate()
                    .filter_map(|(task, blocks)| {
                        let first = task * CELLS_PER_TASK;
                        let count = CELLS_PER_TASK.min(n_run - first);
                        let mut x = [[0.0; 3]; MAX_NODES];
                        let grouped = element.group_cells() > 1;
                        let mut one = vec![0.0; if grouped { block } else { 0 }];
                        for i in 0..count {
                            let c = run.cells.0 + first + i;
                            relative_points(points, &connectivity[n * c..n * (c + 1)], &mut x);
                            let out = if grouped {
                                &mut one[..]
                            } else {
                                &mut blocks[block * i..block * (i + 1)]
                            };
                            let result =
                                with_material!(&material, m => element.geometry(m, &x[..n], out));
                            if let Err(source) = result {
                                return Some((c, source));
                            }
                            if grouped {
                                for (m, &v) in one.iter().enumerate() {
                                    blocks[element.grouped_index(i, m)] = v;
                                }
                            }
                        }
                        None
                    })
                    .min_by_key(|(c, _)| *c);
                if first_bad.is_none() {
                    first_bad = bad;
                }
            }
        }
        if let Some((cell, source)) = first_bad {
            return Err(SolidError::InvertedCell { kind, cell, source });
        }
        let vector_plan = NodeBlockPlan::new(dofmap, n, connectivity);
        let mut body = Self {
            kind,
            material,
            density,
            runs,
            points: points.to_vec(),
            connectivity: connectivity.to_vec(),
            geometry,
            dofmap: dofmap.clone(),
            vector_plan,
            matrix_plan: OnceLock::new(),
            lumped_mass: Vec::new(),
            last_hourglass: Mutex::new(None),
        };
        body.lumped_mass = body.assemble_lumped_mass(lumping)?;
        Ok(body)
    }

    /// Bytes an explicit run needs for the operator of `n_cells` cells on `n_nodes` nodes
    /// (geometry, force slots, gather lists, connectivity, points, dof map, lumped mass), to be
    /// checked before allocating, with every cell `full`. For 10⁶ hex8 cells (1.03·10⁶ nodes):
    /// about 1.1 GB.
    pub fn memory_estimate(kind: SolidKind, n_cells: usize, n_nodes: usize) -> usize {
        let element = Element::new(kind, Formulation::Full).expect("full applies to every kind");
        Self::memory_estimate_of(element, n_cells, n_nodes)
    }

    /// [`memory_estimate`](Self::memory_estimate) with every cell of `element`.
    pub fn memory_estimate_of(element: Element, n_cells: usize, n_nodes: usize) -> usize {
        let n = element.n_nodes();
        let f = std::mem::size_of::<f64>();
        let u = std::mem::size_of::<usize>();
        // Geometry (a grouped element's last group padded).
        let geometry = element.grouped_len(n_cells) * f;
        // Force slots, gather sources (one per node slot), connectivity.
        let per_cell = 3 * n * f + n * u + n * u;
        // Points, dof map (free index and its inverse), lumped mass, gather targets and offsets.
        let per_node = 3 * f + 3 * (u + u) + 3 * f + 3 * u + 2 * u;
        geometry + n_cells * per_cell + n_nodes * per_node
    }

    /// Element kind.
    pub fn kind(&self) -> SolidKind {
        self.kind
    }

    /// Material.
    pub fn material(&self) -> &SolidMaterial {
        &self.material
    }

    /// The formulation of cell `c`.
    pub fn formulation(&self, c: usize) -> Formulation {
        self.run_of(c).element.formulation()
    }

    /// Cells per formulation, in the order of [`Formulation::ALL`] (zero counts left out).
    pub fn formulation_counts(&self) -> Vec<(Formulation, usize)> {
        Formulation::ALL
            .iter()
            .map(|&f| {
                let count = self
                    .runs
                    .iter()
                    .filter(|r| r.element.formulation() == f)
                    .map(|r| r.cells.1 - r.cells.0)
                    .sum();
                (f, count)
            })
            .filter(|&(_, count)| count > 0)
            .collect()
    }

    /// Whether some cell is `one_point` (it stores hourglass energy).
    pub fn has_hourglass_control(&self) -> bool {
        self.runs
            .iter()
            .any(|r| r.element.formulation() == Formulation::OnePoint)
    }

    /// Density `ρ` (mass per unit reference volume).
    pub fn density(&self) -> f64 {
        self.density
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.connectivity.len() / self.kind.n_nodes()
    }

    /// Reference coordinates of the nodes.
    pub fn points(&self) -> &[[f64; 3]] {
        &self.points
    }

    /// Cell connectivity (Gmsh order).
    pub fn connectivity(&self) -> &[usize] {
        &self.connectivity
    }

    /// The dof numbering.
    pub fn dofmap(&self) -> &DofMap {
        &self.dofmap
    }

    /// The force gather plan (for distributed assembly of the per-cell slots).
    pub fn vector_plan(&self) -> &NodeBlockPlan {
        &self.vector_plan
    }

    /// Lumped mass on the free dofs (the same value for the three components of a node).
    pub fn lumped_mass(&self) -> &[f64] {
        &self.lumped_mass
    }

    /// The run holding cell `c`.
    fn run_of(&self, c: usize) -> &Run {
        let i = self.runs.partition_point(|r| r.cells.1 <= c);
        &self.runs[i]
    }

    /// `f` of cell `c`'s element and geometry block (copied out of its group when the
    /// element groups its cells, [`Element::group_cells`]).
    fn with_cell_geometry<R>(&self, c: usize, f: impl FnOnce(Element, &[f64]) -> R) -> R {
        let run = self.run_of(c);
        let element = run.element;
        let block = element.geometry_len();
        let i = c - run.cells.0;
        if element.group_cells() == 1 {
            let start = run.geometry + block * i;
            f(element, &self.geometry[start..start + block])
        } else {
            // Value m at `start + m · g` (Element::grouped_index).
            let g = element.group_cells();
            let start = run.geometry + element.grouped_index(i, 0);
            let mut geo = [0.0; GROUPED_MAX_LEN];
            let geo = &mut geo[..block];
            for (v, &w) in geo.iter_mut().zip(self.geometry[start..].iter().step_by(g)) {
                *v = w;
            }
            f(element, geo)
        }
    }

    /// Reference coordinates of cell `c`'s nodes into `x`.
    fn cell_points(&self, c: usize, x: &mut [[f64; 3]]) {
        let n = self.kind.n_nodes();
        for (a, &node) in self.connectivity[n * c..n * (c + 1)].iter().enumerate() {
            x[a] = self.points[node];
        }
    }

    /// Displacements of cell `c`'s nodes into `ue` (node-major, `3N`).
    fn cell_displacement(&self, u: &[f64], c: usize, ue: &mut [f64]) {
        let n = self.kind.n_nodes();
        gather(u, &self.connectivity[n * c..n * (c + 1)], ue);
    }

    fn check_displacement(&self, u: &[f64]) {
        assert_eq!(u.len(), 3 * self.points.len(), "u holds all 3 n_nodes dofs");
    }

    /// Stage 1 of the internal force: every cell's local force `f_e` into its slot of `slots`
    /// (resized to `n_cells · 3N`), in parallel.
    pub fn cell_forces_into(&self, u: &[f64], slots: &mut Vec<f64>) -> Result<(), SolidError> {
        slots.resize(self.n_cells() * 3 * self.kind.n_nodes(), 0.0);
        self.cell_forces_range(u, 0..self.n_cells(), slots)
    }

    /// Stage 1 on the cells `cells` only: their local forces into their slots of `slots`
    /// (`n_cells · 3N` long; the other slots are left as they are), in parallel. A
    /// distributed run computes the cells on its subdomain's boundary first, sends their
    /// forces, and computes the interior cells while the messages travel.
    ///
    /// # Panics
    /// If `slots` is not `n_cells · 3N` long or `cells` is out of range (caller errors).
    pub fn cell_forces_range(
        &self,
        u: &[f64],
        cells: std::ops::Range<usize>,
        slots: &mut [f64],
    ) -> Result<(), SolidError> {
        self.check_displacement(u);
        let n = self.kind.n_nodes();
        assert_eq!(slots.len(), self.n_cells() * 3 * n);
        assert!(cells.end <= self.n_cells());
        let (c0, c1) = (cells.start, cells.end.max(cells.start));
        let first = slots[3 * n * c0..3 * n * c1]
            .par_chunks_mut(3 * n * CELLS_PER_TASK)
            .enumerate()
            .filter_map(|(task, f)| {
                let start = c0 + task * CELLS_PER_TASK;
                let end = (start + CELLS_PER_TASK).min(c1);
                self.cell_forces_serial(u, start..end, f)
                    .map(|failed| (start + failed.cell, failed.failure))
            })
            .min_by_key(|(c, _)| *c);
        match first {
            Some((cell, failure)) => Err(SolidError::of(self.kind, cell, failure)),
            None => Ok(()),
        }
    }

    /// Internal force `f_int(u)` on the free dofs into `out`, reusing `slots` (stage 1
    /// [`cell_forces_into`](Self::cell_forces_into), stage 2 the plan's fixed-order gather).
    /// Fails (after computing everything) if a cell is inverted.
    pub fn internal_force(
        &self,
        u: &[f64],
        slots: &mut Vec<f64>,
        out: &mut [f64],
    ) -> Result<(), SolidError> {
        let result = self.cell_forces_into(u, slots);
        self.vector_plan.gather_into(slots, out);
        result
    }

    /// The local forces of the cells `cells` into `f` (their slots only), on the calling
    /// thread; the first failed cell, relative to `cells.start`.
    fn cell_forces_serial(
        &self,
        u: &[f64],
        cells: std::ops::Range<usize>,
        f: &mut [f64],
    ) -> Option<FailedCell> {
        let n = self.kind.n_nodes();
        let mut first = None;
        self.each_run_part(cells.clone(), |element, geo, lane, conn, part| {
            let out = &mut f[3 * n * (part.start - cells.start)..3 * n * (part.end - cells.start)];
            let failed = with_material!(&self.material, m => element.internal_forces_grouped(m, geo, lane, conn, u, out));
            if let Some(failed) = failed {
                first.get_or_insert(FailedCell {
                    cell: failed.cell + part.start - cells.start,
                    failure: failed.failure,
                });
            }
        });
        first
    }

    /// Calls `each(element, geometry, lane, connectivity, part)` for the part `part` of
    /// `cells` in each run of one formulation that overlaps them, in cell order: the run's
    /// element, the whole groups of geometry holding the part (one cell a group unless the
    /// element groups its cells), the part's first lane in its first group (0 unless
    /// grouped) and its connectivity — the arguments of the elements' grouped batches.
    fn each_run_part(
        &self,
        cells: std::ops::Range<usize>,
        mut each: impl FnMut(Element, &[f64], usize, &[usize], std::ops::Range<usize>),
    ) {
        let n = self.kind.n_nodes();
        let i0 = self.runs.partition_point(|r| r.cells.1 <= cells.start);
        for run in self.runs[i0..].iter().take_while(|r| r.cells.0 < cells.end) {
            let (a, b) = (run.cells.0.max(cells.start), run.cells.1.min(cells.end));
            let element = run.element;
            let g = element.group_cells();
            let (i0, i1) = (a - run.cells.0, b - run.cells.0);
            let lane = i0 % g;
            let geo = &self.geometry[run.geometry + element.grouped_len(i0 - lane)
                ..run.geometry + element.grouped_len(i1)];
            each(element, geo, lane, &self.connectivity[n * a..n * b], a..b);
        }
    }

    /// The assembly plan of the tangent (built on first call).
    fn matrix_plan(&self) -> &AssemblyPlan {
        self.matrix_plan.get_or_init(|| {
            let n = self.kind.n_nodes();
            let mut cell_dofs = Vec::with_capacity(3 * self.connectivity.len());
            for cell in self.connectivity.chunks_exact(n) {
                self.dofmap.cell_dofs(cell, &mut cell_dofs);
            }
            AssemblyPlan::new(self.dofmap.n_free(), 3 * n, &cell_dofs)
        })
    }

    /// Consistent tangent `K(u) = ∂f_int/∂u` on the free dofs (material + geometric part).
    pub fn tangent(&self, u: &[f64]) -> Result<CsrMatrix<f64>, SolidError> {
        let plan = self.matrix_plan();
        let mut values = vec![0.0; plan.pattern().nnz()];
        self.tangent_values(u, &mut Vec::new(), &mut values)?;
        Ok(
            CsrMatrix::try_from_pattern_and_values(plan.pattern().clone(), values)
                .expect("values match the pattern"),
        )
    }

    /// Cell `c`'s tangent into `k` (`3N × 3N`).
    fn cell_tangent(&self, u: &[f64], c: usize, k: &mut [f64]) -> Option<CellFailure> {
        let n3 = 3 * self.kind.n_nodes();
        let mut ue = [0.0; 3 * MAX_NODES];
        self.cell_displacement(u, c, &mut ue[..n3]);
        self.with_cell_geometry(c, |element, geo| {
            with_material!(&self.material, m => element.tangent(m, geo, &ue[..n3], k))
        })
    }

    /// Refills the values of the tangent (pattern of [`tangent`](Self::tangent), which is
    /// fixed), reusing `scratch` for the local matrices.
    pub fn tangent_values(
        &self,
        u: &[f64],
        scratch: &mut Vec<f64>,
        values: &mut [f64],
    ) -> Result<(), SolidError> {
        self.check_displacement(u);
        let first = AtomicUsize::new(usize::MAX);
        let failure = std::sync::Mutex::new(None);
        self.matrix_plan().assemble_matrix_values(
            |c, out| {
                if let Some(f) = self.cell_tangent(u, c, out)
                    && first.fetch_min(c, Ordering::Relaxed) > c
                {
                    *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some((c, f));
                }
            },
            scratch,
            values,
        );
        match first.into_inner() {
            usize::MAX => Ok(()),
            cell => Err(SolidError::of(
                self.kind,
                cell,
                self.cell_failure_at(u, cell, &failure),
            )),
        }
    }

    /// Why cell `cell` failed (the recorded failure of the lowest cell, re-evaluated if a
    /// race recorded another).
    fn cell_failure_at(
        &self,
        u: &[f64],
        cell: usize,
        recorded: &std::sync::Mutex<Option<(usize, CellFailure)>>,
    ) -> CellFailure {
        match *recorded.lock().unwrap_or_else(|e| e.into_inner()) {
            Some((c, f)) if c == cell => f,
            _ => {
                let n3 = 3 * self.kind.n_nodes();
                let mut k = vec![0.0; n3 * n3];
                self.cell_tangent(u, cell, &mut k)
                    .unwrap_or(CellFailure::Inverted)
            }
        }
    }

    /// The sparsity pattern of the tangent and consistent mass (built on first call).
    pub fn matrix_pattern(&self) -> &nalgebra_sparse::pattern::SparsityPattern {
        self.matrix_plan().pattern()
    }

    /// Consistent mass `∫ ρ N_a N_b dV I₃` on the free dofs.
    pub fn consistent_mass(&self) -> Result<CsrMatrix<f64>, SolidError> {
        let n = self.kind.n_nodes();
        let first = AtomicUsize::new(usize::MAX);
        let table = ShapeTable::for_mass(self.kind);
        let m = self.matrix_plan().assemble_matrix(|c, out| {
            let mut x = [[0.0; 3]; MAX_NODES];
            self.cell_points(c, &mut x);
            let mut block = [0.0; MAX_NODES * MAX_NODES];
            let result =
                consistent_mass_tabulated(&table, &x[..n], self.density, &mut block[..n * n]);
            if result.is_err() {
                first.fetch_min(c, Ordering::Relaxed);
            }
            let n3 = 3 * n;
            for a in 0..n {
                for b in 0..n {
                    for i in 0..3 {
                        out[(3 * a + i) * n3 + 3 * b + i] = block[a * n + b];
                    }
                }
            }
        });
        match first.into_inner() {
            usize::MAX => Ok(m),
            cell => Err(self.mass_error(cell, Lumping::Hrz)),
        }
    }

    /// The error of cell `cell`'s mass (recomputed to report it).
    fn mass_error(&self, cell: usize, lumping: Lumping) -> SolidError {
        let n = self.kind.n_nodes();
        let mut x = [[0.0; 3]; MAX_NODES];
        self.cell_points(cell, &mut x);
        match lumped_mass(
            self.kind,
            lumping,
            &x[..n],
            self.density,
            &mut [0.0; MAX_NODES][..n],
        ) {
            Err(MassError::Jacobian(source)) => SolidError::InvertedCell {
                kind: self.kind,
                cell,
                source,
            },
            Err(source) => SolidError::Mass {
                kind: self.kind,
                cell,
                source,
            },
            Ok(()) => unreachable!("cell {cell} failed before"),
        }
    }

    fn assemble_lumped_mass(&self, lumping: Lumping) -> Result<Vec<f64>, SolidError> {
        let slots = self.cell_lumped_masses(lumping)?;
        let mut out = vec![0.0; self.dofmap.n_free()];
        self.vector_plan.gather_into(&slots, &mut out);
        Ok(out)
    }

    /// Every cell's lumped mass by `lumping`, in force-slot layout (`n_cells · 3N` values, the
    /// node's mass repeated for its three components): what [`lumped_mass`](Self::lumped_mass)
    /// is the fixed-order gather of, for a distributed body to assemble the same way.
    pub fn cell_lumped_masses(&self, lumping: Lumping) -> Result<Vec<f64>, SolidError> {
        let n = self.kind.n_nodes();
        let first = AtomicUsize::new(usize::MAX);
        let table = ShapeTable::for_mass(self.kind);
        let mut slots = vec![0.0; self.n_cells() * 3 * n];
        slots
            .par_chunks_mut(3 * n)
            .enumerate()
            .for_each(|(c, slot)| {
                let mut x = [[0.0; 3]; MAX_NODES];
                self.cell_points(c, &mut x);
                let mut m = [0.0; MAX_NODES];
                let result =
                    lumped_mass_tabulated(&table, lumping, &x[..n], self.density, &mut m[..n]);
                if result.is_err() {
                    first.fetch_min(c, Ordering::Relaxed);
                }
                for a in 0..n {
                    slot[3 * a..3 * a + 3].fill(m[a]);
                }
            });
        match first.into_inner() {
            usize::MAX => Ok(slots),
            cell => Err(self.mass_error(cell, lumping)),
        }
    }

    /// Strain energy `Σ_e ∫ W(F) dV` (with the hourglass energy of `one_point` cells), the
    /// cells' energies summed exactly and rounded once (so a distributed body's energy is the
    /// serial one bit for bit). `NaN` if a cell is inverted.
    pub fn strain_energy(&self, u: &[f64]) -> f64 {
        self.strain_energy_sum(u).value()
    }

    /// The strain energy as an exact sum not yet rounded (to be merged with other subdomains').
    /// With `one_point` cells, the pass also sums their hourglass energy and keeps it with
    /// `u` for [`hourglass_energy_sum`](Self::hourglass_energy_sum) at the same `u`.
    pub fn strain_energy_sum(&self, u: &[f64]) -> ExactSum {
        self.strain_and_hourglass_energy_sums(u).0
    }

    /// The strain energy and its hourglass part ([`hourglass_energy_sum`](Self::hourglass_energy_sum))
    /// at `u` in one pass over the cells, as exact sums: bit for bit the two separate sums.
    pub fn strain_and_hourglass_energy_sums(&self, u: &[f64]) -> (ExactSum, ExactSum) {
        let (total, hourglass) = self.energy_sums(u, |_| true);
        if self.has_hourglass_control() {
            let mut last = self
                .last_hourglass
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            match last.as_mut() {
                Some((at, sum)) => {
                    at.clear();
                    at.extend_from_slice(u);
                    sum.clone_from(&hourglass);
                }
                None => *last = Some((u.to_vec(), hourglass.clone())),
            }
        }
        (total, hourglass)
    }

    /// The energy stored by the hourglass control of the `one_point` cells (part of
    /// [`strain_energy`](Self::strain_energy)), summed exactly: 0 without such cells. Taken
    /// from the last [`strain_energy_sum`](Self::strain_energy_sum) when that was at the same
    /// `u` (the same bits: the cells' hourglass energies summed exactly either way), else
    /// summed over the `one_point` cells.
    pub fn hourglass_energy_sum(&self, u: &[f64]) -> ExactSum {
        if !self.has_hourglass_control() {
            return ExactSum::new();
        }
        {
            let last = self
                .last_hourglass
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if let Some((at, sum)) = last.as_ref()
                && at.len() == u.len()
                && at.iter().zip(u).all(|(a, b)| a.to_bits() == b.to_bits())
            {
                return sum.clone();
            }
        }
        self.energy_sums(u, |e| e.formulation() == Formulation::OnePoint)
            .1
    }

    /// The hourglass energy summed over the `one_point` cells, without the memo of
    /// [`strain_energy_sum`](Self::strain_energy_sum) (the second pass a history row took
    /// before: for the test and the bench that compare the two).
    pub fn hourglass_energy_pass(&self, u: &[f64]) -> ExactSum {
        self.energy_sums(u, |e| e.formulation() == Formulation::OnePoint)
            .1
    }

    /// Exact sums of the strain energies and of their hourglass parts of the cells whose
    /// element `keep` accepts, in parallel tasks of [`CELLS_PER_TASK`] cells, each task
    /// evaluating its runs by the elements' batches
    /// ([`Element::strain_energies_grouped`]: `one_point` reads its groups as whole lanes).
    /// The exact partial sums are merged: the rounded values do not depend on the split.
    fn energy_sums(
        &self,
        u: &[f64],
        keep: impl Fn(Element) -> bool + Sync,
    ) -> (ExactSum, ExactSum) {
        self.check_displacement(u);
        let n_cells = self.n_cells();
        (0..n_cells.div_ceil(CELLS_PER_TASK))
            .into_par_iter()
            .map(|task| {
                let cells = task * CELLS_PER_TASK..((task + 1) * CELLS_PER_TASK).min(n_cells);
                let (mut energy, mut hourglass) = ([0.0; CELLS_PER_TASK], [0.0; CELLS_PER_TASK]);
                let (mut total, mut hg) = (ExactSum::new(), ExactSum::new());
                self.each_run_part(cells, |element, geo, lane, conn, part| {
                    if !keep(element) {
                        return;
                    }
                    let (e, h) = (&mut energy[..part.len()], &mut hourglass[..part.len()]);
                    with_material!(&self.material, m => element.strain_energies_grouped(m, geo, lane, conn, u, e, h));
                    for (&x, &y) in e.iter().zip(h.iter()) {
                        total.add(x);
                        hg.add(y);
                    }
                });
                (total, hg)
            })
            .reduce(
                || (ExactSum::new(), ExactSum::new()),
                |(mut a, mut b), (c, d)| {
                    a.merge(&c);
                    b.merge(&d);
                    (a, b)
                },
            )
    }

    /// Cell-averaged stresses for output, one per cell, into `out` (`NaN` values for a cell
    /// that fails to evaluate).
    pub fn cell_stresses(&self, u: &[f64], out: &mut [CellStress]) {
        self.check_displacement(u);
        assert_eq!(out.len(), self.n_cells());
        let n3 = 3 * self.kind.n_nodes();
        out.par_iter_mut().enumerate().for_each(|(c, s)| {
            let mut ue = [0.0; 3 * MAX_NODES];
            self.cell_displacement(u, c, &mut ue[..n3]);
            *s = self
                .with_cell_geometry(c, |element, geo| {
                    with_material!(&self.material, m => element.stress(m, geo, &ue[..n3]))
                })
                .unwrap_or(CellStress {
                    cauchy: [f64::NAN; 6],
                    von_mises: f64::NAN,
                    jacobian: f64::NAN,
                    energy_density: f64::NAN,
                });
        });
    }

    /// Cell `c`'s largest eigenvalue `λ_max(K_e(u), M_e)` with its default lumped mass.
    fn cell_eigenvalue(&self, u: &[f64], c: usize, table: &ShapeTable) -> Result<f64, CellFailure> {
        let n = self.kind.n_nodes();
        let n3 = 3 * n;
        let mut k = vec![0.0; n3 * n3];
        if let Some(failure) = self.cell_tangent(u, c, &mut k) {
            return Err(failure);
        }
        let mut x = [[0.0; 3]; MAX_NODES];
        relative_points(&self.points, &self.connectivity[n * c..n * (c + 1)], &mut x);
        let mut m = [0.0; MAX_NODES];
        lumped_mass_tabulated(
            table,
            self.kind.default_lumping(),
            &x[..n],
            self.density,
            &mut m[..n],
        )
        .expect("the default lumping of a valid cell succeeds");
        Ok(element_eigenvalue(&k, &m[..n]))
    }

    /// Every cell's largest eigenvalue `λ_max(K_e(u), M_e)` (the element bound of
    /// [`stable_step`](Self::stable_step) is their largest), in cell order: what `fem check`
    /// ranks the cells by.
    pub fn cell_eigenvalues(&self, u: &[f64]) -> Result<Vec<f64>, SolidError> {
        self.check_displacement(u);
        let table = ShapeTable::for_mass(self.kind);
        let values: Vec<Result<f64, (usize, CellFailure)>> = (0..self.n_cells())
            .into_par_iter()
            .map(|c| self.cell_eigenvalue(u, c, &table).map_err(|f| (c, f)))
            .collect();
        values
            .into_iter()
            .collect::<Result<Vec<f64>, _>>()
            .map_err(|(c, f)| SolidError::of(self.kind, c, f))
    }

    /// Stable step of the central-difference scheme at `u`: `2/sqrt(max_e λ_max(K_e(u), M_e))`
    /// with each cell's lumped mass (row sum, or HRZ for the quadratic kinds) — an upper bound
    /// on the global `λ_max` (see [`fem_elements::solid::stable_step`]). Costs a tangent and a
    /// 3N×3N tridiagonalization per cell (≈ 20–40 µs for a hex8): call it every so many steps.
    pub fn stable_step(&self, u: &[f64]) -> Result<StableStep, SolidError> {
        self.check_displacement(u);
        let table = ShapeTable::for_mass(self.kind);
        let best = (0..self.n_cells())
            .into_par_iter()
            .map(|c| {
                self.cell_eigenvalue(u, c, &table)
                    .map(|lambda| (lambda, c))
                    .map_err(|f| (c, f))
            })
            // Associative and commutative: the first failed cell, else the largest λ (lowest
            // cell among equals), whatever the split between threads.
            .reduce(
                || Ok((f64::NEG_INFINITY, usize::MAX)),
                |a, b| match (a, b) {
                    (Err(x), Err(y)) => Err(if x.0 <= y.0 { x } else { y }),
                    (Err(x), Ok(_)) | (Ok(_), Err(x)) => Err(x),
                    (Ok(x), Ok(y)) => Ok(if y.0 > x.0 || (y.0 == x.0 && y.1 < x.1) {
                        y
                    } else {
                        x
                    }),
                },
            );
        match best {
            Ok((lambda_max, cell)) => Ok(StableStep {
                dt: 2.0 / lambda_max.sqrt(),
                lambda_max,
                cell,
            }),
            Err((cell, failure)) => Err(SolidError::of(self.kind, cell, failure)),
        }
    }

    /// Consistent nodal forces of a uniform body force `b` per unit reference volume (e.g.
    /// `ρ g`) on the free dofs. With a lumped mass, `m_i g_i` (the lumped mass times gravity)
    /// is its consistent partner instead (see [`fem_elements::solid::loads`]).
    pub fn body_force(&self, b: [f64; 3]) -> Vec<f64> {
        let n = self.kind.n_nodes();
        let mut out = vec![0.0; self.dofmap.n_free()];
        self.vector_plan.assemble_vector_into(
            |c, slot| {
                let mut x = [[0.0; 3]; MAX_NODES];
                self.cell_points(c, &mut x);
                body_force(self.kind, &x[..n], b, slot)
                    .expect("cells were checked on construction");
            },
            &mut Vec::new(),
            &mut out,
        );
        out
    }

    /// Volume, centre of mass and inertia tensor of the body in its reference configuration.
    pub fn mass_properties(&self) -> MassProperties {
        mass_properties(self.kind, &self.points, &self.connectivity, self.density)
            .expect("cells were checked on construction")
    }
}

/// A cell's node coordinates relative to its first node (`x_a − x_0`), into `x`: what its
/// geometry block and its element eigenvalue are computed from. Both are invariant under a
/// translation, and computed so their bits depend on the cell's shape only, not on where it
/// is: the repeated cells of a structured mesh give bitwise equal blocks (the cache of
/// [`reference_cell_eigenvalues`]), and the rounding is that of the cell's size, not of its
/// distance from the origin.
fn relative_points(points: &[[f64; 3]], nodes: &[usize], x: &mut [[f64; 3]]) {
    let origin = points[nodes[0]];
    for (a, &node) in nodes.iter().enumerate() {
        let p = points[node];
        x[a] = [p[0] - origin[0], p[1] - origin[1], p[2] - origin[2]];
    }
}

/// The checks of a body's cells before anything is computed (both
/// [`SolidOperator::with_formulations`] and [`reference_cell_eigenvalues`]): the density, and
/// every node of `connectivity` in `points`. Returns the number of cells.
///
/// # Panics
/// If `connectivity` is not whole cells of `kind` or `formulations` is neither empty nor one
/// per cell (caller errors).
fn check_cells(
    kind: SolidKind,
    points: &[[f64; 3]],
    connectivity: &[usize],
    formulations: &[Formulation],
    density: f64,
) -> Result<usize, SolidError> {
    let n = kind.n_nodes();
    assert!(connectivity.len().is_multiple_of(n));
    let n_cells = connectivity.len() / n;
    assert!(
        formulations.is_empty() || formulations.len() == n_cells,
        "one formulation per cell"
    );
    if !(density.is_finite() && density > 0.0) {
        return Err(SolidError::Density { value: density });
    }
    if let Some(pos) = connectivity.iter().position(|&a| a >= points.len()) {
        return Err(SolidError::NodeOutOfRange {
            kind,
            cell: pos / n,
            node: connectivity[pos],
            n_nodes: points.len(),
        });
    }
    Ok(n_cells)
}

/// A cell's largest eigenvalue `λ_max(K_e, M_e)` from its tangent `k` (`3N × 3N`) and its
/// lumped nodal masses `m` (`N`, each node's for its three components): the one formula of
/// [`SolidOperator::cell_eigenvalues`] and [`reference_cell_eigenvalues`], so that the two
/// agree bit for bit.
fn element_eigenvalue(k: &[f64], m: &[f64]) -> f64 {
    let md: Vec<f64> = (0..3 * m.len()).map(|i| m[i / 3]).collect();
    max_generalized_eigenvalue(k, &md)
}

/// Cells per task of [`reference_cell_eigenvalues`]: large, so that a task's cache of cell
/// shapes sees the repeats of a structured mesh.
const EIGENVALUE_CELLS_PER_TASK: usize = 8192;
/// Distinct cell shapes a task of [`reference_cell_eigenvalues`] remembers (the cache is
/// emptied when full, so its memory stays bounded on any mesh).
const SHAPE_CACHE: usize = 1024;

/// Every cell's largest eigenvalue `λ_max(K_e(0), M_e)` in the reference state, in cell order,
/// computed in one pass over the cells without building a [`SolidOperator`]: what
/// [`SolidOperator::cell_eigenvalues`] returns at `u = 0`, bitwise, for a check that needs
/// the element bound and the ranking of the cells but not the operator (whose geometry
/// takes 0.6–2.2 kB a cell). Arguments as [`SolidOperator::with_formulations`].
///
/// Each cell's geometry block ([`Element::geometry`]) and its lumped mass are computed as the
/// operator computes them; two cells with bitwise equal blocks and masses have bitwise equal
/// tangents at `u = 0` and hence equal eigenvalues, so each task keeps the eigenvalues of
/// the shapes it has seen (at most 1024), keyed by those bits: a generated box,
/// whose cells repeat a few shapes, costs one tangent and eigenvalue per shape instead of
/// per cell. Memory: the `n_cells` eigenvalues and, per thread, one cache.
///
/// # Panics
/// As [`SolidOperator::with_formulations`].
pub fn reference_cell_eigenvalues(
    kind: SolidKind,
    points: &[[f64; 3]],
    connectivity: &[usize],
    formulations: &[Formulation],
    material: &SolidMaterial,
    density: f64,
) -> Result<Vec<f64>, SolidError> {
    let n = kind.n_nodes();
    let n_cells = check_cells(kind, points, connectivity, formulations, density)?;
    // The elements of the formulations present (an inapplicable one refused first).
    let mut elements: Vec<Element> = Vec::new();
    for f in Formulation::ALL {
        if (formulations.is_empty() && f == Formulation::default()) || formulations.contains(&f) {
            elements.push(Element::new(kind, f)?);
        }
    }
    let element_of = |c: usize| -> Element {
        let f = formulations.get(c).copied().unwrap_or_default();
        *elements
            .iter()
            .find(|e| e.formulation() == f)
            .expect("every formulation present has its element")
    };
    let table = ShapeTable::for_mass(kind);
    let lumping = kind.default_lumping();
    let n3 = 3 * n;
    let mut eigenvalues = vec![0.0; n_cells];
    let failure = eigenvalues
        .par_chunks_mut(EIGENVALUE_CELLS_PER_TASK)
        .enumerate()
        .filter_map(|(task, out)| {
            let first = task * EIGENVALUE_CELLS_PER_TASK;
            let mut cache: std::collections::HashMap<Box<[u64]>, f64> =
                std::collections::HashMap::new();
            let mut key: Vec<u64> = Vec::new();
            let mut geo: Vec<f64> = Vec::new();
            let mut k = vec![0.0; n3 * n3];
            let ue = [0.0; 3 * MAX_NODES];
            let mut x = [[0.0; 3]; MAX_NODES];
            for (i, lambda) in out.iter_mut().enumerate() {
                let c = first + i;
                relative_points(points, &connectivity[n * c..n * (c + 1)], &mut x);
                let element = element_of(c);
                geo.clear();
                geo.resize(element.geometry_len(), 0.0);
                if let Err(source) =
                    with_material!(material, m => element.geometry(m, &x[..n], &mut geo))
                {
                    return Some((
                        c,
                        SolidError::InvertedCell {
                            kind,
                            cell: c,
                            source,
                        },
                    ));
                }
                let mut m = [0.0; MAX_NODES];
                if let Err(e) =
                    lumped_mass_tabulated(&table, lumping, &x[..n], density, &mut m[..n])
                {
                    return Some((c, mass_failure(kind, c, e)));
                }
                key.clear();
                key.push(element.formulation() as u64);
                key.extend(geo.iter().chain(&m[..n]).map(|v| v.to_bits()));
                if let Some(&l) = cache.get(key.as_slice()) {
                    *lambda = l;
                    continue;
                }
                if let Some(f) =
                    with_material!(material, mat => element.tangent(mat, &geo, &ue[..n3], &mut k))
                {
                    return Some((c, SolidError::of(kind, c, f)));
                }
                *lambda = element_eigenvalue(&k, &m[..n]);
                if cache.len() >= SHAPE_CACHE {
                    cache.clear();
                }
                cache.insert(key.as_slice().into(), *lambda);
            }
            None
        })
        .min_by_key(|(c, _)| *c);
    match failure {
        Some((_, e)) => Err(e),
        None => Ok(eigenvalues),
    }
}

/// The lumped mass of every node of `points` (0 for a node of no cell) by `lumping`, summed in
/// cell order, without building a [`SolidOperator`]: for a check's initial kinetic energy.
pub fn reference_nodal_mass(
    kind: SolidKind,
    points: &[[f64; 3]],
    connectivity: &[usize],
    density: f64,
    lumping: Lumping,
) -> Result<Vec<f64>, SolidError> {
    let n = kind.n_nodes();
    let table = ShapeTable::for_mass(kind);
    let mut out = vec![0.0; points.len()];
    let mut x = [[0.0; 3]; MAX_NODES];
    for (c, nodes) in connectivity.chunks_exact(n).enumerate() {
        for (a, &node) in nodes.iter().enumerate() {
            x[a] = points[node];
        }
        let mut m = [0.0; MAX_NODES];
        lumped_mass_tabulated(&table, lumping, &x[..n], density, &mut m[..n])
            .map_err(|e| mass_failure(kind, c, e))?;
        for (a, &node) in nodes.iter().enumerate() {
            out[node] += m[a];
        }
    }
    Ok(out)
}

/// A cell's lumped-mass failure as the operator reports it.
fn mass_failure(kind: SolidKind, cell: usize, e: MassError) -> SolidError {
    match e {
        MassError::Jacobian(source) => SolidError::InvertedCell { kind, cell, source },
        source => SolidError::Mass { kind, cell, source },
    }
}

/// Consistent nodal forces of a uniform dead traction `t` (force per unit reference area) on
/// boundary faces of one `kind` (`faces`: their nodes, Gmsh order, into `points`), on the free
/// dofs of `dofmap`, assembled in face order. Returns the forces and the total face area.
pub fn face_traction_vector(
    kind: FaceKind,
    points: &[[f64; 3]],
    faces: &[usize],
    traction: [f64; 3],
    dofmap: &DofMap,
) -> (Vec<f64>, f64) {
    let n = kind.n_nodes();
    assert!(faces.len().is_multiple_of(n));
    let mut cell_dofs = Vec::with_capacity(3 * faces.len());
    for face in faces.chunks_exact(n) {
        dofmap.cell_dofs(face, &mut cell_dofs);
    }
    let plan = VectorPlan::new(dofmap.n_free(), 3 * n, &cell_dofs);
    let mut areas = vec![0.0; faces.len() / n];
    let mut slots = vec![0.0; 3 * faces.len()];
    slots
        .par_chunks_mut(3 * n)
        .zip(areas.par_iter_mut())
        .zip(faces.par_chunks(n))
        .for_each(|((slot, area), face)| {
            let x: [[f64; 3]; MAX_FACE_NODES] =
                std::array::from_fn(|a| if a < n { points[face[a]] } else { [0.0; 3] });
            *area = face_traction(kind, &x[..n], traction, slot);
        });
    let mut out = vec![0.0; dofmap.n_free()];
    plan.gather_into(&slots, &mut out);
    (out, areas.iter().sum())
}
