//! The part of a [`SolidOperator`] that a block of its free dofs sees: the cells touching the
//! block's nodes, their internal forces summed onto the block's dofs and their tangents onto the
//! block `K_cc` (issue 24: DEF_EXP's massless dofs, `fem_time::leapfrog::massless`, need only
//! these, docs/theory/contact.md §9.1, C26).
//!
//! Every entry is the sum of the same cell values, in the same (increasing cell) order, as the
//! whole body's [`SolidOperator::internal_force`] and [`SolidOperator::tangent_values`]: the
//! block's force and `K_cc` are those of the whole body's bit for bit (a cell holding a dof of
//! the block is a cell touching the block, and the cell loops are the same).

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use nalgebra_sparse::pattern::SparsityPattern;
use rayon::prelude::*;

use super::{CELLS_PER_TASK, SolidError, SolidOperator};
use fem_elements::solid::element::CellFailure;

/// The cells of a [`SolidOperator`] touching a block of free dofs, and the gathers of their
/// forces and tangents onto the block (module documentation).
#[derive(Clone, Debug)]
pub struct SolidPart {
    /// The block's free dofs, ascending.
    dofs: Vec<usize>,
    /// The cells touching them, ascending.
    cells: Vec<usize>,
    /// Tasks of the force loop: consecutive cells (at most [`CELLS_PER_TASK`]) and the index
    /// of the first in `cells`.
    tasks: Vec<(Range<usize>, usize)>,
    /// Block dof `i`'s force sums the slots `force_sources[force_offsets[i]..force_offsets[i + 1]]`
    /// (`3N` values a cell, cells in the order of `cells`).
    force_offsets: Vec<usize>,
    force_sources: Vec<usize>,
    /// `K_cc`'s pattern in the block's numbering.
    pattern: SparsityPattern,
    /// Entry `e` of `K_cc` sums the local-matrix slots
    /// `matrix_sources[matrix_offsets[e]..matrix_offsets[e + 1]]` (`(3N)²` a cell).
    matrix_offsets: Vec<usize>,
    matrix_sources: Vec<usize>,
    /// The free dofs of the cells' nodes (the displacement the part reads), ascending.
    read: Vec<usize>,
}

const SKIP: usize = usize::MAX;

impl SolidPart {
    /// The block's free dofs, ascending.
    pub fn dofs(&self) -> &[usize] {
        &self.dofs
    }

    /// The cells touching the block, ascending.
    pub fn cells(&self) -> &[usize] {
        &self.cells
    }

    /// The pattern of the tangent block `K_cc` (rows and columns numbered as
    /// [`dofs`](Self::dofs), sorted columns): the entries the whole tangent's block holds.
    pub fn pattern(&self) -> &SparsityPattern {
        &self.pattern
    }

    /// The free dofs whose displacement the part's force and tangent read (those of the cells'
    /// nodes), ascending.
    pub fn read_dofs(&self) -> &[usize] {
        &self.read
    }

    /// Bytes the part holds, and the scratch its force and tangent take
    /// (`(3N + (3N)²) · 8` a cell): for the 10 201 bottom nodes of a 100 × 100 × 10 hex8 box,
    /// 10⁴ cells, about 50 MB.
    pub fn memory_bytes(&self, nodes_per_cell: usize) -> usize {
        let n3 = 3 * nodes_per_cell;
        let u = std::mem::size_of::<usize>();
        u * (self.dofs.len()
            + self.cells.len()
            + 3 * self.tasks.len()
            + self.force_offsets.len()
            + self.force_sources.len()
            + self.pattern.major_offsets().len()
            + self.pattern.minor_indices().len()
            + self.matrix_offsets.len()
            + self.matrix_sources.len()
            + self.read.len())
            + 8 * self.cells.len() * (n3 + n3 * n3)
    }
}

impl SolidOperator {
    /// The part of the body that the free dofs `dofs` (ascending, distinct, each below
    /// [`DofMap::n_free`](crate::DofMap::n_free)) see: the cells touching their nodes, and the
    /// gathers of the block's force and tangent (module documentation).
    ///
    /// # Panics
    /// If `dofs` is not ascending or holds a dof out of range (caller errors).
    pub fn part(&self, dofs: &[usize]) -> SolidPart {
        let n_free = self.dofmap.n_free();
        assert!(
            dofs.windows(2).all(|w| w[0] < w[1]) && dofs.last().is_none_or(|&d| d < n_free),
            "the block's dofs are ascending free dofs"
        );
        let n = self.kind.n_nodes();
        let n3 = 3 * n;
        let mut index = vec![SKIP; n_free];
        for (i, &d) in dofs.iter().enumerate() {
            index[d] = i;
        }
        let mut touched = vec![false; self.points.len()];
        for &d in dofs {
            touched[self.dofmap.free_dofs()[d] / 3] = true;
        }
        let cells: Vec<usize> = (0..self.n_cells())
            .filter(|&c| {
                self.connectivity[n * c..n * (c + 1)]
                    .iter()
                    .any(|&a| touched[a])
            })
            .collect();
        // Tasks: runs of consecutive cells, cut at CELLS_PER_TASK.
        let mut tasks: Vec<(Range<usize>, usize)> = Vec::new();
        for (k, &c) in cells.iter().enumerate() {
            match tasks.last_mut() {
                Some((r, _)) if r.end == c && r.len() < CELLS_PER_TASK => r.end += 1,
                _ => tasks.push((c..c + 1, k)),
            }
        }
        // The cells' local dofs in the block's numbering (SKIP: fixed or outside the block),
        // and the free dofs they read.
        let mut local = Vec::with_capacity(n3);
        let mut block = vec![SKIP; cells.len() * n3];
        let mut reads = vec![false; n_free];
        for (k, &c) in cells.iter().enumerate() {
            local.clear();
            self.dofmap
                .cell_dofs(&self.connectivity[n * c..n * (c + 1)], &mut local);
            for (a, d) in local.iter().enumerate() {
                if let Some(d) = *d {
                    reads[d] = true;
                    block[k * n3 + a] = index[d];
                }
            }
        }
        let read: Vec<usize> = (0..n_free).filter(|&d| reads[d]).collect();
        // The force of block dof i: its slots in increasing cell order (as NodeBlockPlan).
        let mut force_offsets = vec![0usize; dofs.len() + 1];
        for &i in block.iter().filter(|&&i| i != SKIP) {
            force_offsets[i + 1] += 1;
        }
        for i in 0..dofs.len() {
            force_offsets[i + 1] += force_offsets[i];
        }
        let mut next = force_offsets.clone();
        let mut force_sources = vec![0usize; force_offsets[dofs.len()]];
        for (s, &i) in block.iter().enumerate() {
            if i != SKIP {
                force_sources[next[i]] = s;
                next[i] += 1;
            }
        }
        // K_cc: the (column, slot) pairs of each row, sorted (as AssemblyPlan).
        let nl2 = n3 * n3;
        let mut rows: Vec<Vec<(usize, usize)>> = vec![Vec::new(); dofs.len()];
        for (k, cell) in block.chunks_exact(n3).enumerate() {
            for (a, &i) in cell.iter().enumerate().filter(|(_, i)| **i != SKIP) {
                for (b, &j) in cell.iter().enumerate().filter(|(_, j)| **j != SKIP) {
                    rows[i].push((j, k * nl2 + a * n3 + b));
                }
            }
        }
        let mut offsets = vec![0usize];
        let mut indices = Vec::new();
        let mut matrix_offsets = vec![0usize];
        let mut matrix_sources = Vec::new();
        for row in &mut rows {
            row.sort_unstable();
            let mut last = SKIP;
            for &(j, slot) in row.iter() {
                if j != last {
                    if last != SKIP {
                        matrix_offsets.push(matrix_sources.len());
                    }
                    indices.push(j);
                    last = j;
                }
                matrix_sources.push(slot);
            }
            if last != SKIP {
                matrix_offsets.push(matrix_sources.len());
            }
            offsets.push(indices.len());
        }
        let pattern =
            SparsityPattern::try_from_offsets_and_indices(dofs.len(), dofs.len(), offsets, indices)
                .expect("rows are sorted and unique by construction");
        SolidPart {
            dofs: dofs.to_vec(),
            cells,
            tasks,
            force_offsets,
            force_sources,
            pattern,
            matrix_offsets,
            matrix_sources,
            read,
        }
    }

    /// The internal force of the part's block of dofs at `u` (all `3 n_nodes` dofs; only the
    /// part's cells' nodes are read) into `out` (one value per block dof), reusing `slots`:
    /// the whole body's [`internal_force`](Self::internal_force) on those dofs, bit for bit.
    /// Fails (after computing everything) if a cell of the part is inverted.
    pub fn part_internal_force(
        &self,
        part: &SolidPart,
        u: &[f64],
        slots: &mut Vec<f64>,
        out: &mut [f64],
    ) -> Result<(), SolidError> {
        self.check_displacement(u);
        assert_eq!(out.len(), part.dofs.len());
        let n3 = 3 * self.kind.n_nodes();
        slots.resize(part.cells.len() * n3, 0.0);
        let mut pieces: Vec<(&Range<usize>, &mut [f64])> = Vec::with_capacity(part.tasks.len());
        let mut rest = slots.as_mut_slice();
        for (range, _) in &part.tasks {
            let (piece, tail) = rest.split_at_mut(n3 * range.len());
            pieces.push((range, piece));
            rest = tail;
        }
        let first = pieces
            .into_par_iter()
            .filter_map(|(range, f)| {
                self.cell_forces_serial(u, range.clone(), f)
                    .map(|failed| (range.start + failed.cell, failed.failure))
            })
            .min_by_key(|(c, _)| *c);
        for (i, v) in out.iter_mut().enumerate() {
            let mut sum = 0.0;
            for &s in &part.force_sources[part.force_offsets[i]..part.force_offsets[i + 1]] {
                sum += slots[s];
            }
            *v = sum;
        }
        match first {
            Some((cell, failure)) => Err(SolidError::of(self.kind, cell, failure)),
            None => Ok(()),
        }
    }

    /// The tangent block `K_cc` of the part at `u` into `values` (on
    /// [`SolidPart::pattern`]), reusing `scratch` for the cells' matrices: the whole body's
    /// [`tangent_values`](Self::tangent_values) on the block, bit for bit.
    pub fn part_tangent_values(
        &self,
        part: &SolidPart,
        u: &[f64],
        scratch: &mut Vec<f64>,
        values: &mut [f64],
    ) -> Result<(), SolidError> {
        self.check_displacement(u);
        assert_eq!(values.len(), part.pattern.nnz());
        let n3 = 3 * self.kind.n_nodes();
        let nl2 = n3 * n3;
        scratch.clear();
        scratch.resize(part.cells.len() * nl2, 0.0);
        let first = AtomicUsize::new(usize::MAX);
        let failure = std::sync::Mutex::new(None::<(usize, CellFailure)>);
        scratch
            .par_chunks_mut(nl2 * 64)
            .enumerate()
            .for_each(|(chunk, local)| {
                for (i, k) in local.chunks_mut(nl2).enumerate() {
                    let c = part.cells[chunk * 64 + i];
                    if let Some(f) = self.cell_tangent(u, c, k)
                        && first.fetch_min(c, Ordering::Relaxed) > c
                    {
                        *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some((c, f));
                    }
                }
            });
        values
            .par_chunks_mut(4096)
            .enumerate()
            .for_each(|(chunk, out)| {
                for (i, v) in out.iter_mut().enumerate() {
                    let e = chunk * 4096 + i;
                    let mut sum = 0.0;
                    for &s in
                        &part.matrix_sources[part.matrix_offsets[e]..part.matrix_offsets[e + 1]]
                    {
                        sum += scratch[s];
                    }
                    *v = sum;
                }
            });
        match first.into_inner() {
            usize::MAX => Ok(()),
            cell => Err(SolidError::of(
                self.kind,
                cell,
                self.cell_failure_at(u, cell, &failure),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DofMap;
    use fem_elements::solid::{Formulation, Lumping, Material, MaterialModel, SolidKind};

    /// A 3 × 2 × 2 hex8 box (its cells `formulation`), node 0 fixed, deformed by a smooth field.
    fn body(formulation: Formulation) -> (SolidOperator, Vec<f64>) {
        let (nx, ny, nz) = (3usize, 2usize, 2usize);
        let node = |i: usize, j: usize, k: usize| i + (nx + 1) * (j + (ny + 1) * k);
        let mut points = Vec::new();
        for k in 0..=nz {
            for j in 0..=ny {
                for i in 0..=nx {
                    points.push([i as f64, j as f64 * 0.9, k as f64 * 1.1]);
                }
            }
        }
        let mut conn = Vec::new();
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    conn.extend([
                        node(i, j, k),
                        node(i + 1, j, k),
                        node(i + 1, j + 1, k),
                        node(i, j + 1, k),
                        node(i, j, k + 1),
                        node(i + 1, j, k + 1),
                        node(i + 1, j + 1, k + 1),
                        node(i, j + 1, k + 1),
                    ]);
                }
            }
        }
        let dofmap = DofMap::with_fixed(points.len(), 3, [0, 1, 2]);
        let material = Material::new(MaterialModel::SaintVenantKirchhoff, 1e6, 0.3).unwrap();
        let n_cells = conn.len() / 8;
        let op = SolidOperator::with_formulations(
            SolidKind::Hex8,
            &points,
            &conn,
            &vec![formulation; n_cells],
            material,
            1000.0,
            Lumping::RowSum,
            &dofmap,
        )
        .unwrap();
        let u: Vec<f64> = (0..3 * points.len())
            .map(|d| {
                let p = points[d / 3];
                if d < 3 {
                    0.0
                } else {
                    0.01 * (p[0] + 2.0 * p[1] * p[2] + (d % 3) as f64).sin()
                }
            })
            .collect();
        (op, u)
    }

    #[test]
    fn the_part_gives_the_whole_bodys_force_and_tangent_block_bit_for_bit() {
        for formulation in [Formulation::Full, Formulation::OnePoint] {
            let (op, u) = body(formulation);
            // The dofs of the nodes at z = 0 but node 0 (fixed), and one dof at the top.
            let free = op.dofmap().free_dofs().to_vec();
            let mut dofs: Vec<usize> = (0..free.len())
                .filter(|&d| op.points()[free[d] / 3][2] == 0.0)
                .collect();
            dofs.push(free.len() - 1);
            let part = op.part(&dofs);
            assert!(part.cells().len() < op.n_cells(), "{:?}", part.cells());
            let mut f = vec![0.0; free.len()];
            op.internal_force(&u, &mut Vec::new(), &mut f).unwrap();
            let mut fc = vec![0.0; dofs.len()];
            op.part_internal_force(&part, &u, &mut Vec::new(), &mut fc)
                .unwrap();
            for (i, &d) in dofs.iter().enumerate() {
                assert_eq!(fc[i].to_bits(), f[d].to_bits(), "{formulation:?} dof {d}");
            }
            let k = op.tangent(&u).unwrap();
            let mut kc = vec![0.0; part.pattern().nnz()];
            op.part_tangent_values(&part, &u, &mut Vec::new(), &mut kc)
                .unwrap();
            let (offsets, cols) = (
                part.pattern().major_offsets(),
                part.pattern().minor_indices(),
            );
            let mut entries = 0;
            for (i, &di) in dofs.iter().enumerate() {
                // Every entry of K's block is in the part's pattern, with the same bits.
                let row = k.row(di);
                let mut expected: Vec<(usize, f64)> = row
                    .col_indices()
                    .iter()
                    .zip(row.values())
                    .filter_map(|(&c, &v)| dofs.binary_search(&c).ok().map(|j| (j, v)))
                    .collect();
                expected.sort_by_key(|(j, _)| *j);
                let got: Vec<(usize, f64)> = (offsets[i]..offsets[i + 1])
                    .map(|e| (cols[e], kc[e]))
                    .collect();
                assert_eq!(got.len(), expected.len(), "row {i}");
                for ((j, v), (jj, w)) in got.iter().zip(&expected) {
                    assert_eq!((j, v.to_bits()), (jj, w.to_bits()), "row {i}");
                }
                entries += got.len();
            }
            assert_eq!(entries, kc.len());
            assert!(part.read_dofs().len() < free.len());
        }
    }

    #[test]
    fn an_inverted_cell_of_the_part_is_named() {
        let (op, mut u) = body(Formulation::Full);
        let free = op.dofmap().free_dofs().to_vec();
        let dofs: Vec<usize> = (0..6).collect();
        let part = op.part(&dofs);
        // Node 1 (in cell 0) pushed through the body.
        u[3] = -5.0;
        let mut fc = vec![0.0; dofs.len()];
        let e = op
            .part_internal_force(&part, &u, &mut Vec::new(), &mut fc)
            .unwrap_err();
        assert!(matches!(e, SolidError::Inverted { cell: 0, .. }), "{e:?}");
        let mut kc = vec![0.0; part.pattern().nnz()];
        let e = op
            .part_tangent_values(&part, &u, &mut Vec::new(), &mut kc)
            .unwrap_err();
        assert!(matches!(e, SolidError::Inverted { cell: 0, .. }), "{e:?}");
        assert!(free.len() > dofs.len());
    }
}
