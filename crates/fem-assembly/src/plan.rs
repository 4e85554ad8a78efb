//! The sparsity pattern of a cell-to-dof map, built once, and deterministic parallel assembly.
//!
//! Assembly runs in two parallel passes over a plan computed once per mesh:
//!
//! 1. every cell's local matrix (or vector) is computed into its own slot of a scratch buffer
//!    (cells are independent, so this pass is embarrassingly parallel);
//! 2. every nonzero of the global matrix is the sum of the local entries that land on it,
//!    taken **in increasing cell order** from a precomputed gather list.
//!
//! Because each sum has a fixed order, the result is bitwise the same on any number of
//! threads (DESIGN.md, "Numbers and conventions"), and no two threads ever write to one entry.

use nalgebra_sparse::{CsrMatrix, pattern::SparsityPattern};
use rayon::prelude::*;

/// Local dof marker for a dof that is not assembled (a fixed dof).
const SKIP: usize = usize::MAX;

/// A gather list: entry `k` of the target sums `sources[offsets[k]..offsets[k + 1]]`.
#[derive(Clone, Debug)]
struct Gather {
    offsets: Vec<usize>,
    sources: Vec<usize>,
}

impl Gather {
    /// `target[k] = Σ local[s]` over the sources of `k`, in their stored (increasing) order.
    fn apply(&self, local: &[f64], target: &mut [f64]) {
        const CHUNK: usize = 4096;
        target
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(chunk, out)| {
                let first = chunk * CHUNK;
                for (i, value) in out.iter_mut().enumerate() {
                    let k = first + i;
                    let mut sum = 0.0;
                    for &s in &self.sources[self.offsets[k]..self.offsets[k + 1]] {
                        sum += local[s];
                    }
                    *value = sum;
                }
            });
    }
}

/// Where each cell's local dofs go, for vectors only: the gather half of an [`AssemblyPlan`]
/// without the matrix pattern, whose size (`(n_local)²` entries per cell) is out of reach for
/// explicit runs on millions of cells.
///
/// Assembly is split in the same two stages: every cell writes its `n_local` entries into its
/// own slot of a buffer ([`VectorPlan::gather_into`] takes such a buffer), then each global
/// entry sums its slots in increasing cell order. A distributed run can compute the slots of
/// its own cells and sum shared entries in the same order, reproducing the serial result.
#[derive(Clone, Debug)]
pub struct VectorPlan {
    n_dofs: usize,
    n_local: usize,
    n_cells: usize,
    gather: Gather,
}

impl VectorPlan {
    /// Builds the plan for `n_cells` cells with `n_local` dofs each; `cell_dofs` as for
    /// [`AssemblyPlan::new`].
    ///
    /// # Panics
    /// As [`AssemblyPlan::new`].
    pub fn new(n_dofs: usize, n_local: usize, cell_dofs: &[Option<usize>]) -> Self {
        assert!(n_local > 0 && cell_dofs.len().is_multiple_of(n_local));
        for d in cell_dofs.iter().flatten() {
            assert!(*d < n_dofs, "dof {d} out of range 0..{n_dofs}");
        }
        let gather = bucket(
            n_dofs,
            cell_dofs
                .iter()
                .enumerate()
                .filter_map(|(s, d)| d.map(|d| (d, s))),
        );
        Self {
            n_dofs,
            n_local,
            n_cells: cell_dofs.len() / n_local,
            gather,
        }
    }

    /// Number of global dofs (length of the assembled vector).
    pub fn n_dofs(&self) -> usize {
        self.n_dofs
    }

    /// Local dofs per cell.
    pub fn n_local(&self) -> usize {
        self.n_local
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.n_cells
    }

    /// Bytes held by the plan (its gather lists).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<usize>() * (self.gather.offsets.len() + self.gather.sources.len())
    }

    /// Sums the per-cell slots (`n_cells · n_local` values, cell after cell) into `out`
    /// (overwritten), each entry in increasing cell order. Parallel over entries; the result
    /// does not depend on the number of threads.
    pub fn gather_into(&self, slots: &[f64], out: &mut [f64]) {
        assert_eq!(slots.len(), self.n_cells * self.n_local);
        assert_eq!(out.len(), self.n_dofs);
        self.gather.apply(slots, out);
    }

    /// Assembles a vector into `out` (overwritten): `local_vector(cell, out)` writes a cell's
    /// `n_local` entries into a zeroed slot of `scratch`.
    pub fn assemble_vector_into<F>(&self, local_vector: F, scratch: &mut Vec<f64>, out: &mut [f64])
    where
        F: Fn(usize, &mut [f64]) + Sync,
    {
        fill_local(scratch, self.n_cells, self.n_local, &local_vector);
        self.gather_into(scratch, out);
    }
}

/// The vector gather of cells whose local vectors are node blocks (all `n_comp` components of
/// a node together, as the solid's forces): the same sums in the same order as a
/// [`VectorPlan`] over the same dofs, with one source index per node slot instead of one per
/// dof (a third of the index memory and of the index loads for 3-component solids).
#[derive(Clone, Debug)]
pub struct NodeBlockPlan {
    n_comp: usize,
    n_local_nodes: usize,
    n_cells: usize,
    n_free: usize,
    /// Node `n`'s slots are `sources[offsets[n]..offsets[n + 1]]` (cell · n_local_nodes + a).
    offsets: Vec<usize>,
    sources: Vec<usize>,
    /// Free index of each global dof, `usize::MAX` if fixed.
    targets: Vec<usize>,
    /// Free dofs before node `n` (the free dofs of nodes `n0..n1` are a contiguous range).
    first_free: Vec<usize>,
}

/// Nodes per parallel task of [`NodeBlockPlan::gather_into`], at most.
const NODES_PER_TASK: usize = 2048;

/// Items per parallel task: at most `max_per_task`, in tasks of equal size, at least four per
/// thread while tasks keep 256 items. With fixed 2048-node tasks a 21³-node box made five
/// tasks, three for one of two threads; a 11³-node box one, for one thread. (Each item's
/// result does not depend on how the items are split.)
fn balanced_task_size(n_items: usize, max_per_task: usize, threads: usize) -> usize {
    let by_size = n_items.div_ceil(max_per_task);
    let by_threads = (4 * threads).min(n_items / 256);
    n_items.div_ceil(by_size.max(by_threads).max(1)).max(1)
}

impl NodeBlockPlan {
    /// The plan of cells with `n_local_nodes` nodes each (`connectivity`, flat) over the dofs
    /// of `dofmap` (node-major, fixed dofs skipped).
    ///
    /// # Panics
    /// If a node index is out of range or the connectivity length is not a multiple of
    /// `n_local_nodes` (programming errors of the caller).
    pub fn new(dofmap: &crate::DofMap, n_local_nodes: usize, connectivity: &[usize]) -> Self {
        assert!(n_local_nodes > 0 && connectivity.len().is_multiple_of(n_local_nodes));
        let n_nodes = dofmap.n_nodes();
        let n_comp = dofmap.n_comp();
        assert!(
            connectivity.iter().all(|&a| a < n_nodes),
            "node out of range"
        );
        let gather = bucket(
            n_nodes,
            connectivity.iter().enumerate().map(|(s, &node)| (node, s)),
        );
        let targets: Vec<usize> = (0..n_nodes * n_comp)
            .map(|d| dofmap.free(d).unwrap_or(SKIP))
            .collect();
        let mut first_free = Vec::with_capacity(n_nodes + 1);
        let mut count = 0;
        first_free.push(0);
        for node in 0..n_nodes {
            count += targets[node * n_comp..(node + 1) * n_comp]
                .iter()
                .filter(|&&t| t != SKIP)
                .count();
            first_free.push(count);
        }
        Self {
            n_comp,
            n_local_nodes,
            n_cells: connectivity.len() / n_local_nodes,
            n_free: dofmap.n_free(),
            offsets: gather.offsets,
            sources: gather.sources,
            targets,
            first_free,
        }
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.n_cells
    }

    /// Length of a cell's local vector, `n_local_nodes · n_comp`.
    pub fn n_local(&self) -> usize {
        self.n_local_nodes * self.n_comp
    }

    /// Bytes held by the plan.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<usize>()
            * (self.offsets.len() + self.sources.len() + self.targets.len() + self.first_free.len())
    }

    /// Sums the per-cell slots (`n_cells · n_local` values, cell after cell, node-major) into
    /// the free-dof vector `out` (overwritten), each entry in increasing cell order. Parallel
    /// over nodes; the result does not depend on the number of threads.
    pub fn gather_into(&self, slots: &[f64], out: &mut [f64]) {
        assert_eq!(slots.len(), self.n_cells * self.n_local());
        assert_eq!(out.len(), self.n_free);
        let n_nodes = self.n_nodes();
        let per_task = balanced_task_size(n_nodes, NODES_PER_TASK, rayon::current_num_threads());
        let bounds: Vec<usize> = (0..n_nodes)
            .step_by(per_task)
            .chain(std::iter::once(n_nodes))
            .collect();
        self.split_by_nodes(out, &bounds)
            .into_par_iter()
            .for_each(|(nodes, piece)| self.gather_nodes(slots, nodes, piece));
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    /// `out` (the free-dof vector) cut at the free dofs of the node bounds `bounds`
    /// (increasing, from 0 to [`n_nodes`](Self::n_nodes)): the pieces of the node ranges
    /// `bounds[i]..bounds[i + 1]`.
    fn split_by_nodes<'a>(
        &self,
        out: &'a mut [f64],
        bounds: &[usize],
    ) -> Vec<(std::ops::Range<usize>, &'a mut [f64])> {
        assert_eq!(out.len(), self.n_free);
        let mut pieces = Vec::with_capacity(bounds.len().saturating_sub(1));
        let mut rest = out;
        for range in bounds.windows(2) {
            let (first, last) = (range[0], range[1]);
            let (piece, tail) = rest.split_at_mut(self.first_free[last] - self.first_free[first]);
            pieces.push((first..last, piece));
            rest = tail;
        }
        pieces
    }

    /// The gather of [`gather_into`](Self::gather_into) on the nodes `nodes` only, into
    /// `piece`: their free dofs, as cut by [`split_by_nodes`](Self::split_by_nodes).
    fn gather_nodes(&self, slots: &[f64], nodes: std::ops::Range<usize>, piece: &mut [f64]) {
        let nc = self.n_comp;
        let base = self.first_free[nodes.start];
        assert_eq!(piece.len(), self.first_free[nodes.end] - base);
        for node in nodes {
            let sources = &self.sources[self.offsets[node]..self.offsets[node + 1]];
            let targets = &self.targets[node * nc..(node + 1) * nc];
            if nc == 3 {
                // All components in one pass over the sources (each sum still in
                // increasing slot order).
                let mut sum = [0.0; 3];
                for &s in sources {
                    let v = &slots[3 * s..3 * s + 3];
                    sum[0] += v[0];
                    sum[1] += v[1];
                    sum[2] += v[2];
                }
                for c in 0..3 {
                    if targets[c] != SKIP {
                        piece[targets[c] - base] = sum[c];
                    }
                }
                continue;
            }
            for (c, &target) in targets.iter().enumerate() {
                if target == SKIP {
                    continue;
                }
                let mut sum = 0.0;
                for &s in sources {
                    sum += slots[s * nc + c];
                }
                piece[target - base] = sum;
            }
        }
    }

    /// Assembles a vector into `out` (overwritten): `local_vector(cell, out)` writes a cell's
    /// `n_local` entries into a zeroed slot of `scratch`.
    pub fn assemble_vector_into<F>(&self, local_vector: F, scratch: &mut Vec<f64>, out: &mut [f64])
    where
        F: Fn(usize, &mut [f64]) + Sync,
    {
        fill_local(scratch, self.n_cells, self.n_local(), &local_vector);
        self.gather_into(scratch, out);
    }
}

/// Where each cell's local dofs go, and the global sparsity pattern they produce.
#[derive(Clone, Debug)]
pub struct AssemblyPlan {
    n_dofs: usize,
    n_local: usize,
    n_cells: usize,
    pattern: SparsityPattern,
    matrix_gather: Gather,
    vector_gather: Gather,
}

impl AssemblyPlan {
    /// Builds the plan for `n_cells` cells with `n_local` dofs each.
    ///
    /// `cell_dofs` holds, cell after cell, the global index (in `0..n_dofs`) of each local dof,
    /// or `None` where that dof is not assembled (eliminated by a Dirichlet condition).
    ///
    /// # Panics
    /// If `cell_dofs.len()` is not a multiple of `n_local` or an index is out of range; both
    /// are programming errors of the caller, not user input.
    pub fn new(n_dofs: usize, n_local: usize, cell_dofs: &[Option<usize>]) -> Self {
        assert!(n_local > 0 && cell_dofs.len().is_multiple_of(n_local));
        let n_cells = cell_dofs.len() / n_local;
        let dofs: Vec<usize> = cell_dofs
            .iter()
            .map(|d| {
                let d = d.unwrap_or(SKIP);
                assert!(d == SKIP || d < n_dofs, "dof {d} out of range 0..{n_dofs}");
                d
            })
            .collect();

        // Vector gather: bucket local slots by their global dof (counting sort keeps slot order).
        let vector_gather = bucket(
            n_dofs,
            dofs.iter()
                .enumerate()
                .filter(|(_, d)| **d != SKIP)
                .map(|(s, &d)| (d, s)),
        );

        // Matrix gather: bucket local (a, b) slots by row, then sort each row by (col, slot).
        let nl2 = n_local * n_local;
        let mut row_count = vec![0usize; n_dofs + 1];
        for cell in dofs.chunks(n_local) {
            let n_free = cell.iter().filter(|&&d| d != SKIP).count();
            for &d in cell.iter().filter(|&&d| d != SKIP) {
                row_count[d + 1] += n_free;
            }
        }
        for i in 0..n_dofs {
            row_count[i + 1] += row_count[i];
        }
        let mut entries = vec![(0usize, 0usize); row_count[n_dofs]];
        let mut next = row_count.clone();
        for (c, cell) in dofs.chunks(n_local).enumerate() {
            for (a, &row) in cell.iter().enumerate().filter(|(_, d)| **d != SKIP) {
                for (b, &col) in cell.iter().enumerate().filter(|(_, d)| **d != SKIP) {
                    entries[next[row]] = (col, c * nl2 + a * n_local + b);
                    next[row] += 1;
                }
            }
        }
        let mut rows: Vec<&mut [(usize, usize)]> = Vec::with_capacity(n_dofs);
        let mut rest = entries.as_mut_slice();
        for i in 0..n_dofs {
            let (row, tail) = rest.split_at_mut(row_count[i + 1] - row_count[i]);
            rows.push(row);
            rest = tail;
        }
        rows.par_iter_mut().for_each(|row| row.sort_unstable());

        let n_entries = row_count[n_dofs];
        let mut offsets = Vec::with_capacity(n_dofs + 1);
        let mut indices = Vec::new();
        let mut gather_offsets = vec![0];
        let mut sources = Vec::with_capacity(n_entries);
        offsets.push(0);
        for row in &rows {
            let mut last_col = SKIP;
            for &(col, slot) in row.iter() {
                if col != last_col {
                    if last_col != SKIP {
                        gather_offsets.push(sources.len());
                    }
                    indices.push(col);
                    last_col = col;
                }
                sources.push(slot);
            }
            if last_col != SKIP {
                gather_offsets.push(sources.len());
            }
            offsets.push(indices.len());
        }
        drop(rows);
        let pattern =
            SparsityPattern::try_from_offsets_and_indices(n_dofs, n_dofs, offsets, indices)
                .expect("rows are sorted and unique by construction");
        Self {
            n_dofs,
            n_local,
            n_cells,
            pattern,
            matrix_gather: Gather {
                offsets: gather_offsets,
                sources,
            },
            vector_gather,
        }
    }

    /// Number of global dofs (rows of the assembled matrix).
    pub fn n_dofs(&self) -> usize {
        self.n_dofs
    }

    /// Local dofs per cell.
    pub fn n_local(&self) -> usize {
        self.n_local
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.n_cells
    }

    /// The global sparsity pattern (CSR, sorted column indices, diagonal present where a free
    /// dof belongs to a cell).
    pub fn pattern(&self) -> &SparsityPattern {
        &self.pattern
    }

    /// Assembles a matrix: `local_matrix(cell, out)` writes the cell's `n_local × n_local` matrix,
    /// row-major, into a zeroed `out`. Runs in parallel; the result does not depend on the
    /// number of threads.
    pub fn assemble_matrix<F>(&self, local_matrix: F) -> CsrMatrix<f64>
    where
        F: Fn(usize, &mut [f64]) + Sync,
    {
        let mut values = vec![0.0; self.pattern.nnz()];
        let mut scratch = Vec::new();
        self.assemble_matrix_values(local_matrix, &mut scratch, &mut values);
        CsrMatrix::try_from_pattern_and_values(self.pattern.clone(), values)
            .expect("values match the pattern")
    }

    /// Refills the values of a matrix with this plan's pattern (for example a tangent that
    /// changes every Newton iteration), reusing `scratch` for the local matrices.
    pub fn assemble_matrix_values<F>(
        &self,
        local_matrix: F,
        scratch: &mut Vec<f64>,
        values: &mut [f64],
    ) where
        F: Fn(usize, &mut [f64]) + Sync,
    {
        assert_eq!(values.len(), self.pattern.nnz());
        let nl2 = self.n_local * self.n_local;
        fill_local(scratch, self.n_cells, nl2, &local_matrix);
        self.matrix_gather.apply(scratch, values);
    }

    /// Assembles a vector: `local_vector(cell, out)` writes the cell's `n_local` entries into a
    /// zeroed `out`. Deterministic like [`AssemblyPlan::assemble_matrix`].
    pub fn assemble_vector<F>(&self, local_vector: F) -> Vec<f64>
    where
        F: Fn(usize, &mut [f64]) + Sync,
    {
        let mut out = vec![0.0; self.n_dofs];
        let mut scratch = Vec::new();
        self.assemble_vector_into(local_vector, &mut scratch, &mut out);
        out
    }

    /// Assembles a vector into `out` (overwritten), reusing `scratch`.
    pub fn assemble_vector_into<F>(&self, local_vector: F, scratch: &mut Vec<f64>, out: &mut [f64])
    where
        F: Fn(usize, &mut [f64]) + Sync,
    {
        assert_eq!(out.len(), self.n_dofs);
        fill_local(scratch, self.n_cells, self.n_local, &local_vector);
        self.vector_gather.apply(scratch, out);
    }
}

/// Computes every cell's local block into its slot of `scratch` (resized and zeroed).
fn fill_local<F>(scratch: &mut Vec<f64>, n_cells: usize, block: usize, local: &F)
where
    F: Fn(usize, &mut [f64]) + Sync,
{
    scratch.clear();
    scratch.resize(n_cells * block, 0.0);
    scratch
        .par_chunks_mut(block * 256)
        .enumerate()
        .for_each(|(chunk, slots)| {
            for (i, out) in slots.chunks_mut(block).enumerate() {
                local(chunk * 256 + i, out);
            }
        });
}

/// Counting sort of `(target, source)` pairs by target, keeping sources in arrival order.
fn bucket(n_targets: usize, pairs: impl Iterator<Item = (usize, usize)> + Clone) -> Gather {
    let mut offsets = vec![0usize; n_targets + 1];
    for (t, _) in pairs.clone() {
        offsets[t + 1] += 1;
    }
    for i in 0..n_targets {
        offsets[i + 1] += offsets[i];
    }
    let mut next = offsets.clone();
    let mut sources = vec![0; offsets[n_targets]];
    for (t, s) in pairs {
        sources[next[t]] = s;
        next[t] += 1;
    }
    Gather { offsets, sources }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_tasks_are_balanced_over_the_threads() {
        // (items, threads) → tasks: equal sizes, at most 2048 items, ≥ 4 per thread while
        // tasks keep 256 items.
        for (items, threads, tasks) in [
            (9261, 2, 8),
            (1331, 2, 5),
            (29_791, 2, 15),
            (1_030_301, 2, 504),
            (100, 2, 1),
            (0, 2, 1),
        ] {
            let size = balanced_task_size(items, NODES_PER_TASK, threads);
            assert!(size <= NODES_PER_TASK, "{items}: {size}");
            assert_eq!(
                items.div_ceil(size).max(1),
                tasks,
                "{items} items: tasks of {size}"
            );
        }
    }

    /// Three 1D cells 0-1, 1-2, 2-3 with node 0 fixed.
    fn chain() -> AssemblyPlan {
        let cells = [None, Some(0), Some(0), Some(1), Some(1), Some(2)];
        AssemblyPlan::new(3, 2, &cells)
    }

    #[test]
    fn pattern_and_values_of_a_chain() {
        let plan = chain();
        assert_eq!(plan.pattern().nnz(), 7);
        let k = plan.assemble_matrix(|_, out| out.copy_from_slice(&[1.0, -1.0, -1.0, 1.0]));
        let dense: Vec<f64> = (0..3)
            .flat_map(|i| (0..3).map(move |j| (i, j)))
            .map(|(i, j)| k.get_entry(i, j).map_or(0.0, |e| e.into_value()))
            .collect();
        assert_eq!(dense, vec![2.0, -1.0, 0.0, -1.0, 2.0, -1.0, 0.0, -1.0, 1.0]);
        let f = plan.assemble_vector(|c, out| out.fill(c as f64 + 1.0));
        assert_eq!(f, vec![1.0 + 2.0, 2.0 + 3.0, 3.0]);
    }

    #[test]
    fn node_blocks_sum_like_dofs() {
        // 3-component nodes, some components fixed, cells of 4 nodes in a scrambled order.
        let n_nodes = 5000;
        let dofmap = crate::DofMap::with_fixed(n_nodes, 3, (0..n_nodes * 3).filter(|d| d % 7 == 3));
        let connectivity: Vec<usize> = (0..40_000).map(|i| (i * 7919 + i / 3) % n_nodes).collect();
        let mut cell_dofs = Vec::new();
        for cell in connectivity.chunks(4) {
            dofmap.cell_dofs(cell, &mut cell_dofs);
        }
        let by_dof = VectorPlan::new(dofmap.n_free(), 12, &cell_dofs);
        let by_node = NodeBlockPlan::new(&dofmap, 4, &connectivity);
        let kernel = |c: usize, out: &mut [f64]| {
            for (i, v) in out.iter_mut().enumerate() {
                *v = ((c * 12 + i) as f64 * 0.618_033_988_7).sin() * 1e3;
            }
        };
        let mut a = vec![0.0; dofmap.n_free()];
        let mut b = vec![0.0; dofmap.n_free()];
        by_dof.assemble_vector_into(kernel, &mut Vec::new(), &mut a);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        one.install(|| by_node.assemble_vector_into(kernel, &mut Vec::new(), &mut b));
        assert_eq!(a, b);
        two.install(|| by_node.assemble_vector_into(kernel, &mut Vec::new(), &mut b));
        assert_eq!(a, b);
        assert!(by_node.memory_bytes() < by_dof.memory_bytes());
    }

    #[test]
    fn assembly_is_bitwise_independent_of_thread_count() {
        // Many cells with values that do not add associatively.
        let n = 20_000;
        let cells: Vec<Option<usize>> = (0..n)
            .flat_map(|c| [Some(c % 997), Some((c * 7 + 3) % 997)])
            .collect();
        let plan = AssemblyPlan::new(997, 2, &cells);
        let kernel = |c: usize, out: &mut [f64]| {
            let x = (c as f64 * 0.618_033_988_7).sin() * 1e3;
            out.copy_from_slice(&[x, -x / 3.0, 1e-9 * x, x / 7.0]);
        };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let a = one.install(|| plan.assemble_matrix(kernel));
        let b = two.install(|| plan.assemble_matrix(kernel));
        assert_eq!(a.values(), b.values());
        let vector_kernel = |c: usize, out: &mut [f64]| {
            let mut local = [0.0; 4];
            kernel(c, &mut local);
            out.copy_from_slice(&local[..2]);
        };
        let u = one.install(|| plan.assemble_vector(vector_kernel));
        let v = two.install(|| plan.assemble_vector(vector_kernel));
        assert_eq!(u, v);
        // The vector-only plan gives the same bits.
        let vector_plan = VectorPlan::new(997, 2, &cells);
        let mut w = vec![0.0; 997];
        two.install(|| vector_plan.assemble_vector_into(vector_kernel, &mut Vec::new(), &mut w));
        assert_eq!(u, w);
        assert!(vector_plan.memory_bytes() >= 8 * 2 * n);
    }
}
