//! The matrix of DEF_LIM's step, `A = M + c K(q)` (seed `Aimp`), on a fixed pattern: the
//! tangent's. The pattern, the positions of the mass in it and the restriction to the free
//! (not prescribed) dofs are computed once; each step refills the values, restricts them and
//! refactors numerically (the symbolic analysis of the first factorization is kept).

use fem_assembly::ordering::nested_dissection;
use fem_assembly::{CsrMatrix, Factorization, Symmetry};
use fem_time::{Mass, StepError};

/// `A = M + c K` on the tangent's pattern, its free block and its factorization.
#[derive(Debug)]
pub(crate) struct StepMatrix {
    /// The tangent `K(q)`, refilled each step.
    pub k: CsrMatrix<f64>,
    /// Values of `A` on `k`'s pattern.
    a: Vec<f64>,
    /// `(position in k's pattern, value)` of every mass entry.
    mass: Vec<(usize, f64)>,
    /// Positions (in `k`'s pattern) of the free–free entries, in the order of `a_free`.
    keep: Vec<usize>,
    /// The free block `A_ff`.
    a_free: CsrMatrix<f64>,
    /// Free dofs, increasing.
    pub free: Vec<usize>,
    /// Elimination order of the free block (nested dissection), when the dofs have points.
    order: Option<Vec<usize>>,
    factor: Option<Factorization>,
}

impl StepMatrix {
    /// The structure for the tangent `k` (its pattern), the mass and the prescribed flags;
    /// with a point per dof, the free block is factored in a nested-dissection order (about
    /// 3× less work than minimum degree on 3D solids, docs/performance.md).
    pub fn new(
        k: CsrMatrix<f64>,
        mass: &Mass,
        prescribed: &[bool],
        dof_points: Option<Vec<[f64; 3]>>,
    ) -> Result<Self, String> {
        let n = k.nrows();
        let position = |i: usize, j: usize| -> Option<usize> {
            let (offsets, cols) = (k.row_offsets(), k.col_indices());
            let row = &cols[offsets[i]..offsets[i + 1]];
            row.binary_search(&j).ok().map(|p| offsets[i] + p)
        };
        let mut entries = Vec::new();
        match mass {
            Mass::Lumped(d) => {
                for (i, &m) in d.iter().enumerate() {
                    entries.push((
                        position(i, i).ok_or("the tangent's pattern has no diagonal entry")?,
                        m,
                    ));
                }
            }
            Mass::Consistent(m) => {
                for (i, row) in m.row_iter().enumerate() {
                    for (&j, &v) in row.col_indices().iter().zip(row.values()) {
                        entries.push((
                            position(i, j)
                                .ok_or("the mass has an entry outside the tangent's pattern")?,
                            v,
                        ));
                    }
                }
            }
        }
        let free: Vec<usize> = (0..n).filter(|&i| !prescribed[i]).collect();
        let mut index = vec![usize::MAX; n];
        for (f, &i) in free.iter().enumerate() {
            index[i] = f;
        }
        let mut keep = Vec::new();
        let mut offsets = vec![0];
        let mut cols = Vec::new();
        for &i in &free {
            for p in k.row_offsets()[i]..k.row_offsets()[i + 1] {
                let j = k.col_indices()[p];
                if !prescribed[j] {
                    keep.push(p);
                    cols.push(index[j]);
                }
            }
            offsets.push(cols.len());
        }
        let values = vec![0.0; cols.len()];
        let a_free = CsrMatrix::try_from_csr_data(free.len(), free.len(), offsets, cols, values)
            .map_err(|e| format!("the free block's pattern: {e}"))?;
        let order = dof_points.map(|points| {
            let free_points: Vec<[f64; 3]> = free.iter().map(|&i| points[i]).collect();
            nested_dissection(&free_points, &a_free)
        });
        Ok(Self {
            a: vec![0.0; k.nnz()],
            k,
            mass: entries,
            keep,
            a_free,
            free,
            order,
            factor: None,
        })
    }

    /// `A = M + c K` from the current `k`, its free block, and its factorization.
    pub fn refactor(&mut self, c: f64) -> Result<(), StepError> {
        for (a, k) in self.a.iter_mut().zip(self.k.values()) {
            *a = c * k;
        }
        for &(p, m) in &self.mass {
            self.a[p] += m;
        }
        for (v, &p) in self.a_free.values_mut().iter_mut().zip(&self.keep) {
            *v = self.a[p];
        }
        match &mut self.factor {
            Some(f) => f.refactor(&self.a_free)?,
            None => {
                self.factor = Some(match &self.order {
                    Some(order) => {
                        Factorization::with_order(&self.a_free, Symmetry::Symmetric, order)?
                    }
                    None => Factorization::new(&self.a_free, Symmetry::Symmetric)?,
                })
            }
        }
        Ok(())
    }

    /// Solves `A_ff x = b` in place (`b` on the free dofs).
    pub fn solve_in_place(&self, b: &mut [f64]) {
        self.factor
            .as_ref()
            .expect("refactor before solving")
            .solve_in_place(b);
    }

    /// `(A x)_i` for row `i` of the whole `A`.
    pub fn a_row_dot(&self, i: usize, x: &[f64]) -> f64 {
        let (offsets, cols) = (self.k.row_offsets(), self.k.col_indices());
        (offsets[i]..offsets[i + 1])
            .map(|p| self.a[p] * x[cols[p]])
            .sum()
    }

    /// `Σ_j A_ij x_j` over the prescribed columns `j` of row `i` (`x` zero elsewhere is not
    /// assumed: only the flagged columns are summed).
    pub fn a_row_dot_prescribed(&self, i: usize, x: &[f64], prescribed: &[bool]) -> f64 {
        let (offsets, cols) = (self.k.row_offsets(), self.k.col_indices());
        (offsets[i]..offsets[i + 1])
            .filter(|&p| prescribed[cols[p]])
            .map(|p| self.a[p] * x[cols[p]])
            .sum()
    }
}
