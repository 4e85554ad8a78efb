//! An element = a [`SolidKind`] and a [`Formulation`]: the one place the kernels of every
//! formulation are dispatched, for the assembled body (`fem_assembly::SolidOperator`).
//!
//! | formulation | kinds | what it is | module |
//! |---|---|---|---|
//! | `full` | all | displacement-based, the kind's force rule (hex8 2×2×2, hex20/hex27 3×3×3, tet10 4 points, tet4 1) | [`total_lagrangian`](super::total_lagrangian), [`hex8`] |
//! | `eas` | hex8 | incompatible modes / enhanced assumed strain at finite strain: no locking in bending | [`eas`] |
//! | `fbar` | hex8, tet10, hex20, hex27 | F-bar (mean dilatation): no volumetric locking for nearly incompressible materials | [`fbar`](super::fbar) |
//! | `one_point` | hex8 | one point with hourglass stiffness from the enhanced element: fast explicit runs, bending as `eas` in the linear range | [`one_point`] |
//!
//! Every formulation's force is the exact gradient of its strain energy and its tangent the
//! exact Hessian (tests: central differences, element by element), every one passes the patch
//! test on distorted meshes, and all return the smallest `J` of an evaluation so that an inverted
//! cell is reported, never used.

use std::fmt;

use super::eas;
use super::fbar::FBar;
use super::hex8;
use super::material::Hyperelastic;
use super::one_point;
use super::shape::{MAX_NODES, SolidKind};
use super::total_lagrangian::{
    self as tl, CellStress, NonPositiveJacobian, PointKernels, geometry_block_len, inverted,
    reference_geometry_block,
};

/// How an element's strain is integrated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Formulation {
    /// Displacement-based with the kind's full rule.
    #[default]
    Full,
    /// Hex8 with incompatible modes (enhanced assumed strain, finite strain).
    Eas,
    /// F-bar (mean dilatation).
    FBar,
    /// One-point hex8 with hourglass stiffness.
    OnePoint,
}

impl Formulation {
    /// All formulations.
    pub const ALL: [Formulation; 4] = [
        Formulation::Full,
        Formulation::Eas,
        Formulation::FBar,
        Formulation::OnePoint,
    ];

    /// Snake-case name, as in the input: `"full"`, `"eas"`, `"fbar"`, `"one_point"`.
    pub fn name(self) -> &'static str {
        match self {
            Formulation::Full => "full",
            Formulation::Eas => "eas",
            Formulation::FBar => "fbar",
            Formulation::OnePoint => "one_point",
        }
    }

    /// The kinds it applies to.
    pub fn kinds(self) -> &'static [SolidKind] {
        match self {
            Formulation::Full => &SolidKind::ALL,
            Formulation::Eas | Formulation::OnePoint => &[SolidKind::Hex8],
            Formulation::FBar => &[
                SolidKind::Hex8,
                SolidKind::Tet10,
                SolidKind::Hex20,
                SolidKind::Hex27,
            ],
        }
    }

    /// Whether it applies to `kind`.
    pub fn supports(self, kind: SolidKind) -> bool {
        self.kinds().contains(&kind)
    }

    /// The formulations of `kind`, by name, for messages: `"full, eas, fbar, one_point"`.
    pub fn names_for(kind: SolidKind) -> String {
        Formulation::ALL
            .iter()
            .filter(|f| f.supports(kind))
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Formulation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A formulation asked of a kind it does not apply to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the element formulation '{formulation}' does not apply to {kind} cells")]
pub struct UnsupportedFormulation {
    /// The kind.
    pub kind: SolidKind,
    /// The formulation.
    pub formulation: Formulation,
}

/// Why one cell's evaluation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellFailure {
    /// `J = det F ≤ 0` (or `NaN`) at a point.
    Inverted,
    /// The enhanced modes of an `eas` cell did not converge.
    ModesNotConverged,
}

/// A failed cell of a batch: its position in the batch and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailedCell {
    /// Position in the batch.
    pub cell: usize,
    /// Why.
    pub failure: CellFailure,
}

/// An element: a kind with a formulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Element {
    kind: SolidKind,
    formulation: Formulation,
}

impl Element {
    /// The element of `kind` with `formulation`, if it applies.
    pub fn new(kind: SolidKind, formulation: Formulation) -> Result<Self, UnsupportedFormulation> {
        if formulation.supports(kind) {
            Ok(Self { kind, formulation })
        } else {
            Err(UnsupportedFormulation { kind, formulation })
        }
    }

    /// The kind.
    pub fn kind(&self) -> SolidKind {
        self.kind
    }

    /// The formulation.
    pub fn formulation(&self) -> Formulation {
        self.formulation
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.kind.n_nodes()
    }

    /// Points of the rule the force uses (one for `one_point`).
    pub fn n_points(&self) -> usize {
        match self.formulation {
            Formulation::OnePoint => 1,
            _ => self.kind.force_rule().n_points(),
        }
    }

    /// Whether `full` hex8 (its compact sum-factorized geometry, [`hex8`]).
    fn compact(&self) -> bool {
        self.kind == SolidKind::Hex8 && self.formulation == Formulation::Full
    }

    /// Values of one cell's precomputed geometry.
    pub fn geometry_len(&self) -> usize {
        match self.formulation {
            Formulation::Eas => eas::GEOMETRY_LEN,
            Formulation::OnePoint => one_point::GEOMETRY_LEN,
            _ if self.compact() => hex8::COMPACT_LEN,
            _ => geometry_block_len(self.kind, self.n_points()),
        }
    }

    /// Cells whose geometry blocks are stored together, interleaved value by value, in the
    /// layout an assembled body keeps ([`internal_forces_grouped`](Self::internal_forces_grouped)):
    /// [`LANES`](super::material::LANES) for `one_point` (its batch force reads a group's values
    /// as whole vector lanes), 1 (one block after the other) for the others.
    pub fn group_cells(&self) -> usize {
        match self.formulation {
            Formulation::OnePoint => super::material::LANES,
            _ => 1,
        }
    }

    /// Where value `m` of the `i`-th cell's block lies in the grouped storage of consecutive
    /// cells ([`group_cells`](Self::group_cells)); `i · geometry_len + m` when not grouped.
    pub fn grouped_index(&self, i: usize, m: usize) -> usize {
        let (g, len) = (self.group_cells(), self.geometry_len());
        (i / g) * len * g + m * g + i % g
    }

    /// Values the grouped storage of `n` consecutive cells takes (the last group padded).
    pub fn grouped_len(&self, n: usize) -> usize {
        let g = self.group_cells();
        n.div_ceil(g) * g * self.geometry_len()
    }

    /// One cell's geometry (nodes `x`, Gmsh order) into `out` ([`geometry_len`](Self::geometry_len)
    /// values). The `one_point` hourglass stiffness depends on `material`'s reference stiffness.
    pub fn geometry<M: Hyperelastic + ?Sized>(
        &self,
        material: &M,
        x: &[[f64; 3]],
        out: &mut [f64],
    ) -> Result<(), NonPositiveJacobian> {
        assert_eq!(x.len(), self.n_nodes());
        assert_eq!(out.len(), self.geometry_len());
        match self.formulation {
            Formulation::Eas => eas::geometry(x, out),
            Formulation::OnePoint => one_point::geometry(material, x, out),
            _ if self.compact() => hex8::compact_geometry(x, out),
            _ => reference_geometry_block(self.kind, &self.kind.force_rule(), x, out),
        }
    }

    /// Internal forces of a batch of cells (connectivity `N` per cell, geometry blocks of
    /// [`geometry_len`](Self::geometry_len), forces `3N` per cell, overwritten) from the global
    /// node-major displacement `u`. Returns the first failed cell of the batch, if any (all
    /// forces are computed regardless; a failed cell's are meaningless).
    pub fn internal_forces<M: Hyperelastic + ?Sized>(
        &self,
        material: &M,
        geometry: &[f64],
        connectivity: &[usize],
        u: &[f64],
        forces: &mut [f64],
    ) -> Option<FailedCell> {
        let inverted = |cell| FailedCell {
            cell,
            failure: CellFailure::Inverted,
        };
        match self.formulation {
            Formulation::Full if self.compact() => {
                hex8::internal_forces(material, geometry, connectivity, u, forces).map(inverted)
            }
            Formulation::Full => tl::internal_forces(
                self.kind,
                material,
                self.n_points(),
                geometry,
                connectivity,
                u,
                forces,
            )
            .map(inverted),
            Formulation::OnePoint => {
                one_point::internal_forces(material, geometry, connectivity, u, forces)
                    .map(inverted)
            }
            _ => {
                assert_eq!(forces.len(), 3 * connectivity.len());
                let mut first = None;
                self.each_cell(geometry, connectivity, u, |c, geo, ue| {
                    let n3 = ue.len();
                    let failure = self.force(material, geo, ue, &mut forces[n3 * c..n3 * (c + 1)]);
                    if let Some(failure) = failure {
                        first.get_or_insert(FailedCell { cell: c, failure });
                    }
                });
                first
            }
        }
    }

    /// Calls `each(c, geo, ue)` for every cell `c` of a batch of ungrouped geometry (blocks of
    /// [`geometry_len`](Self::geometry_len) one after the other, connectivity `N` a cell) with
    /// its geometry block and its nodal displacements gathered from the global `u`: the one
    /// loop over the cells of the kernels that go cell by cell.
    #[inline]
    fn each_cell(
        &self,
        geometry: &[f64],
        connectivity: &[usize],
        u: &[f64],
        mut each: impl FnMut(usize, &[f64], &[f64]),
    ) {
        let (n, block) = (self.n_nodes(), self.geometry_len());
        assert_eq!(geometry.len() * n, connectivity.len() * block);
        let mut ue = [0.0; 3 * MAX_NODES];
        for (c, (geo, nodes)) in geometry
            .chunks_exact(block)
            .zip(connectivity.chunks_exact(n))
            .enumerate()
        {
            gather(u, nodes, &mut ue[..3 * n]);
            each(c, geo, &ue[..3 * n]);
        }
    }

    /// Strain energies of a batch of cells from grouped geometry (arguments as
    /// [`internal_forces_grouped`](Self::internal_forces_grouped)): each cell's
    /// [`strain_energy`](Self::strain_energy) into `energy` and its hourglass part into
    /// `hourglass` (one value a cell), both `NaN` for a cell that fails to evaluate. The
    /// `one_point` groups are read as whole lanes
    /// ([`one_point::strain_energies_packed`]), the same bits as cell by cell.
    #[allow(clippy::too_many_arguments)]
    pub fn strain_energies_grouped<M: Hyperelastic + ?Sized>(
        &self,
        material: &M,
        geometry: &[f64],
        first: usize,
        connectivity: &[usize],
        u: &[f64],
        energy: &mut [f64],
        hourglass: &mut [f64],
    ) {
        match self.formulation {
            Formulation::OnePoint => one_point::strain_energies_packed(
                material,
                geometry,
                first,
                connectivity,
                u,
                energy,
                hourglass,
            ),
            _ => {
                assert_eq!(first, 0, "ungrouped geometry starts at its first cell");
                assert_eq!(energy.len() * self.n_nodes(), connectivity.len());
                assert_eq!(hourglass.len(), energy.len());
                self.each_cell(geometry, connectivity, u, |c, geo, ue| {
                    (energy[c], hourglass[c]) = self
                        .strain_energy(material, geo, ue)
                        .unwrap_or((f64::NAN, f64::NAN));
                });
            }
        }
    }

    /// [`internal_forces`](Self::internal_forces) from grouped geometry: `geometry` holds the
    /// whole groups ([`group_cells`](Self::group_cells) cells each, laid out as
    /// [`grouped_index`](Self::grouped_index)) that contain the cells, the first of which is
    /// the `first`-th of its group (0 when not grouped).
    pub fn internal_forces_grouped<M: Hyperelastic + ?Sized>(
        &self,
        material: &M,
        geometry: &[f64],
        first: usize,
        connectivity: &[usize],
        u: &[f64],
        forces: &mut [f64],
    ) -> Option<FailedCell> {
        match self.formulation {
            Formulation::OnePoint => one_point::internal_forces_packed(
                material,
                geometry,
                first,
                connectivity,
                u,
                forces,
            )
            .map(|cell| FailedCell {
                cell,
                failure: CellFailure::Inverted,
            }),
            _ => {
                assert_eq!(first, 0, "ungrouped geometry starts at its first cell");
                self.internal_forces(material, geometry, connectivity, u, forces)
            }
        }
    }

    /// Internal force of one cell (geometry `geo`, nodal displacements `ue`, `3N`) into `f`.
    pub fn force<M: Hyperelastic + ?Sized>(
        &self,
        material: &M,
        geo: &[f64],
        ue: &[f64],
        f: &mut [f64],
    ) -> Option<CellFailure> {
        let jmin = match self.formulation {
            Formulation::Eas => match eas::internal_force(material, geo, ue, f) {
                Ok(j) => j,
                Err(_) => return Some(CellFailure::ModesNotConverged),
            },
            Formulation::OnePoint => one_point::internal_force(material, geo, &nodes8(ue), f),
            Formulation::FBar => {
                let (grad, dv) = self.split(geo);
                FBar::internal_force(material, grad, dv, ue, f)
            }
            Formulation::Full if self.compact() => hex8::internal_force(
                material,
                geo.try_into().expect("a compact hex8 block"),
                &nodes8(ue),
                f,
            ),
            Formulation::Full => {
                let (grad, dv) = self.split(geo);
                tl::internal_force(material, grad, dv, ue, f)
            }
        };
        inverted(jmin).then_some(CellFailure::Inverted)
    }

    /// Strain energy of one cell and the part of it stored by hourglass control (zero but
    /// for `one_point`); `NaN` if the cell is inverted.
    pub fn strain_energy<M: Hyperelastic + ?Sized>(
        &self,
        material: &M,
        geo: &[f64],
        ue: &[f64],
    ) -> Result<(f64, f64), CellFailure> {
        Ok(match self.formulation {
            Formulation::Eas => (
                eas::strain_energy(material, geo, ue)
                    .map_err(|_| CellFailure::ModesNotConverged)?,
                0.0,
            ),
            Formulation::OnePoint => one_point::strain_energy(material, geo, &nodes8(ue)),
            Formulation::FBar => {
                let (grad, dv) = self.split(geo);
                (FBar::strain_energy(material, grad, dv, ue), 0.0)
            }
            Formulation::Full if self.compact() => (
                hex8::strain_energy(
                    material,
                    geo.try_into().expect("a compact hex8 block"),
                    &nodes8(ue),
                ),
                0.0,
            ),
            Formulation::Full => {
                let (grad, dv) = self.split(geo);
                (tl::strain_energy(material, grad, dv, ue), 0.0)
            }
        })
    }

    /// Consistent tangent of one cell into `k` (`3N × 3N`, row-major, symmetric).
    pub fn tangent<M: Hyperelastic + ?Sized>(
        &self,
        material: &M,
        geo: &[f64],
        ue: &[f64],
        k: &mut [f64],
    ) -> Option<CellFailure> {
        let jmin = match self.formulation {
            Formulation::Eas => match eas::tangent_stiffness(material, geo, ue, k) {
                Ok(j) => j,
                Err(_) => return Some(CellFailure::ModesNotConverged),
            },
            Formulation::OnePoint => one_point::tangent_stiffness(material, geo, &nodes8(ue), k),
            Formulation::FBar => {
                let (grad, dv) = self.split(geo);
                FBar::tangent_stiffness(material, grad, dv, ue, k)
            }
            Formulation::Full if self.compact() => {
                let (mut grad, mut dv) = ([0.0; 192], [0.0; 8]);
                hex8::expand_geometry(geo, &mut grad, &mut dv);
                tl::tangent_stiffness(material, &grad, &dv, ue, k)
            }
            Formulation::Full => {
                let (grad, dv) = self.split(geo);
                tl::tangent_stiffness(material, grad, dv, ue, k)
            }
        };
        inverted(jmin).then_some(CellFailure::Inverted)
    }

    /// Cell-averaged stress output of one cell.
    pub fn stress<M: Hyperelastic + ?Sized>(
        &self,
        material: &M,
        geo: &[f64],
        ue: &[f64],
    ) -> Result<CellStress, CellFailure> {
        Ok(match self.formulation {
            Formulation::Eas => {
                eas::cell_stress(material, geo, ue).map_err(|_| CellFailure::ModesNotConverged)?
            }
            Formulation::OnePoint => one_point::cell_stress(material, geo, &nodes8(ue)),
            Formulation::FBar => {
                let (grad, dv) = self.split(geo);
                FBar::cell_stress(material, grad, dv, ue)
            }
            Formulation::Full if self.compact() => {
                let (mut grad, mut dv) = ([0.0; 192], [0.0; 8]);
                hex8::expand_geometry(geo, &mut grad, &mut dv);
                tl::cell_stress(material, &grad, &dv, ue)
            }
            Formulation::Full => {
                let (grad, dv) = self.split(geo);
                tl::cell_stress(material, grad, dv, ue)
            }
        })
    }

    /// The reference volume of one cell from its geometry.
    pub fn volume(&self, geo: &[f64]) -> f64 {
        match self.formulation {
            Formulation::OnePoint => geo[24],
            _ if self.compact() => geo[72..80].iter().sum(),
            _ => {
                let q = self.geometry_len() / (3 * self.stored_nodes() + 1);
                geo[geo.len() - q..].iter().sum()
            }
        }
    }

    /// Nodes of the generic geometry layout (11 for `eas`: its three modes).
    fn stored_nodes(&self) -> usize {
        match self.formulation {
            Formulation::Eas => 11,
            _ => self.n_nodes(),
        }
    }

    /// `(grad, dV)` of a generic block.
    fn split<'a>(&self, geo: &'a [f64]) -> (&'a [f64], &'a [f64]) {
        geo.split_at(3 * self.n_nodes() * self.n_points())
    }
}

impl fmt::Display for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.kind, self.formulation)
    }
}

/// The nodal displacements of `nodes` from the global node-major `u` into `ue`.
#[inline]
pub fn gather(u: &[f64], nodes: &[usize], ue: &mut [f64]) {
    for (a, &node) in nodes.iter().enumerate() {
        ue[3 * a..3 * a + 3].copy_from_slice(&u[3 * node..3 * node + 3]);
    }
}

fn nodes8(ue: &[f64]) -> [[f64; 3]; 8] {
    std::array::from_fn(|a| [ue[3 * a], ue[3 * a + 1], ue[3 * a + 2]])
}
