//! Node-major numbering of degrees of freedom, with some dofs eliminated.
//!
//! A *global* dof is `node * n_comp + comp`. Fixed dofs (homogeneous Dirichlet conditions:
//! clamped string ends, say) are removed from the unknowns; the remaining *free* dofs are
//! numbered `0..n_free()` in increasing global order. Steppers work on free-dof vectors;
//! [`DofMap::scatter`] rebuilds the full field for output.

/// Marker for a dof that is not an unknown.
const FIXED: usize = usize::MAX;

/// Numbering of the dofs of `n_nodes` nodes with `n_comp` components each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DofMap {
    n_nodes: usize,
    n_comp: usize,
    /// For each global dof its free index, or `FIXED`.
    free_index: Vec<usize>,
    /// For each free dof its global dof.
    global_of_free: Vec<usize>,
}

impl DofMap {
    /// All `n_nodes * n_comp` dofs free.
    pub fn new(n_nodes: usize, n_comp: usize) -> Self {
        let n = n_nodes * n_comp;
        Self {
            n_nodes,
            n_comp,
            free_index: (0..n).collect(),
            global_of_free: (0..n).collect(),
        }
    }

    /// The same numbering with the listed global dofs fixed (duplicates allowed).
    ///
    /// # Panics
    /// If a dof is out of range: callers map user input to dofs and validate it first.
    pub fn with_fixed(
        n_nodes: usize,
        n_comp: usize,
        fixed: impl IntoIterator<Item = usize>,
    ) -> Self {
        let n = n_nodes * n_comp;
        let mut is_fixed = vec![false; n];
        for dof in fixed {
            assert!(dof < n, "fixed dof {dof} out of range 0..{n}");
            is_fixed[dof] = true;
        }
        let mut free_index = vec![FIXED; n];
        let mut global_of_free = Vec::with_capacity(n);
        for (dof, fixed) in is_fixed.into_iter().enumerate() {
            if !fixed {
                free_index[dof] = global_of_free.len();
                global_of_free.push(dof);
            }
        }
        Self {
            n_nodes,
            n_comp,
            free_index,
            global_of_free,
        }
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.n_nodes
    }

    /// Components per node.
    pub fn n_comp(&self) -> usize {
        self.n_comp
    }

    /// Number of global dofs, `n_nodes * n_comp`.
    pub fn n_dofs(&self) -> usize {
        self.free_index.len()
    }

    /// Number of free dofs (the unknowns).
    pub fn n_free(&self) -> usize {
        self.global_of_free.len()
    }

    /// Global dof of component `comp` at `node`.
    pub fn dof(&self, node: usize, comp: usize) -> usize {
        node * self.n_comp + comp
    }

    /// Free index of a global dof, `None` if it is fixed.
    pub fn free(&self, dof: usize) -> Option<usize> {
        match self.free_index[dof] {
            FIXED => None,
            i => Some(i),
        }
    }

    /// Global dof of each free dof, in free order.
    pub fn free_dofs(&self) -> &[usize] {
        &self.global_of_free
    }

    /// The point of each free dof's node (`node_points[node]`), in free-dof order: one point
    /// per row of a free-dof matrix, as [`crate::ordering::nested_dissection`] takes them.
    pub fn free_dof_points(&self, node_points: &[[f64; 3]]) -> Vec<[f64; 3]> {
        self.global_of_free
            .iter()
            .map(|&dof| node_points[dof / self.n_comp])
            .collect()
    }

    /// Writes a free-dof vector into a global one; fixed entries are set to `fixed_value`.
    pub fn scatter(&self, free: &[f64], fixed_value: f64, global: &mut [f64]) {
        global.fill(fixed_value);
        for (&g, &v) in self.global_of_free.iter().zip(free) {
            global[g] = v;
        }
    }

    /// Extracts the free entries of a global vector.
    pub fn gather(&self, global: &[f64], free: &mut [f64]) {
        for (f, &g) in free.iter_mut().zip(&self.global_of_free) {
            *f = global[g];
        }
    }

    /// Free indices of the `n_nodes_per_cell * n_comp` local dofs of a cell, node-major;
    /// `None` for fixed dofs. Appends to `out`.
    pub fn cell_dofs(&self, cell_nodes: &[usize], out: &mut Vec<Option<usize>>) {
        for &node in cell_nodes {
            for comp in 0..self.n_comp {
                out.push(self.free(self.dof(node, comp)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_dofs_are_skipped_in_order() {
        let map = DofMap::with_fixed(4, 2, [0, 1, 7, 7]);
        assert_eq!(map.n_dofs(), 8);
        assert_eq!(map.n_free(), 5);
        assert_eq!(map.free_dofs(), &[2, 3, 4, 5, 6]);
        assert_eq!(map.free(0), None);
        assert_eq!(map.free(4), Some(2));
        let mut global = vec![0.0; 8];
        map.scatter(&[1.0, 2.0, 3.0, 4.0, 5.0], -1.0, &mut global);
        assert_eq!(global, vec![-1.0, -1.0, 1.0, 2.0, 3.0, 4.0, 5.0, -1.0]);
        let mut free = vec![0.0; 5];
        map.gather(&global, &mut free);
        assert_eq!(free, vec![1.0, 2.0, 3.0, 4.0, 5.0]);
        let mut cell = Vec::new();
        map.cell_dofs(&[0, 2], &mut cell);
        assert_eq!(cell, vec![None, None, Some(2), Some(3)]);
    }
}
