//! The matrix of an implicit step, `A = c_k K + c_c C + c_m M`, on the free dofs, factored —
//! the one component every stepper forms, restricts and factors its matrix with (STYLE.md,
//! items 1 and 6).
//!
//! The pattern of `A` (the union of the patterns of the terms given), where each term's entries
//! land in it, and which of its entries form the free block (the rows and columns of the dofs a
//! [`DirichletControl`] leaves free) are computed once. A new tangent is then a refill of values
//! on that pattern ([`StepMatrix::stiffness_mut`] and [`StepMatrix::refactor`], or
//! [`StepMatrix::refactor_with`]) and a numeric refactorization that keeps the symbolic
//! analysis. The matrix is solved by a diagonal inverse when it is diagonal (lumped mass, no
//! stiffness or damping term: an explicit step), by sparse Cholesky when the stiffness is
//! symmetric, by sparse LU when it is not; with a point per dof, a Cholesky factorization is
//! ordered by nested dissection.
//!
//! Every entry is summed in one fixed order — a lumped mass first, then `c_k K`, `c_c C` and a
//! consistent `c_m M` — so a matrix is bitwise the same however it is reached.

use fem_assembly::ordering::nested_dissection;
use fem_assembly::{Factorization, Symmetry};
use nalgebra_sparse::CsrMatrix;

use crate::control::DirichletControl;
use crate::{Mass, StepError};

/// The coefficients of `c_m M + c_c C + c_k K`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coefficients {
    /// Of the mass.
    pub mass: f64,
    /// Of the damping.
    pub damping: f64,
    /// Of the stiffness (tangent).
    pub stiffness: f64,
}

/// The terms of a step matrix: the mass, and optionally a damping and a stiffness (whose pattern
/// is then fixed: later stiffnesses refill its values).
#[derive(Clone, Copy, Debug)]
pub struct Terms<'a> {
    /// `M`.
    pub mass: &'a Mass,
    /// `C`, if any.
    pub damping: Option<&'a CsrMatrix<f64>>,
    /// `K`, if any.
    pub stiffness: Option<&'a CsrMatrix<f64>>,
}

/// How the step matrix is solved.
#[derive(Debug)]
enum Solve {
    /// A diagonal matrix: its inverse on the free dofs.
    Diagonal(Vec<f64>),
    /// A sparse matrix on a fixed pattern, factored.
    Factored(Box<Sparse>),
}

/// The sparse case: the values on a fixed pattern, and the factorization of the free block.
#[derive(Debug)]
struct Sparse {
    values: Values,
    factor: Factorization,
}

/// `A` on its pattern, the stiffness buffer and the free block.
#[derive(Debug)]
struct Values {
    /// `A` on the union pattern (all dofs).
    a: CsrMatrix<f64>,
    /// The stiffness `K` (its pattern fixed), refilled by the stepper; `None` without one.
    k: Option<CsrMatrix<f64>>,
    /// Position in `a` of each entry of `k`.
    k_positions: Vec<usize>,
    /// `(position in a, c_m m_i)` of a lumped mass (summed first).
    lumped: Vec<(usize, f64)>,
    /// `(position in a, c · value)` of the damping, then of a consistent mass (summed after
    /// the stiffness).
    constant: Vec<(usize, f64)>,
    /// Positions in `a` of the free block's entries, in the free block's order.
    keep: Vec<usize>,
    /// The free block `A_ff`.
    a_free: CsrMatrix<f64>,
}

/// `c_m M + c_c C + c_k K` on the free dofs, factored.
#[derive(Debug)]
pub struct StepMatrix {
    coefficients: Coefficients,
    symmetry: Symmetry,
    solve: Solve,
}

impl StepMatrix {
    /// Forms and factors the matrix of `terms` with `coefficients`. The stiffness may be
    /// omitted (a zero stiffness term), as may the damping; a stiffness given with a zero
    /// coefficient still contributes its pattern (explicit zeros), unless the matrix is then
    /// diagonal. `control` restricts the matrix to its free dofs. `dof_points` (one per dof,
    /// [`crate::SecondOrderSystem::dof_points`]) orders a Cholesky factorization by nested
    /// dissection.
    pub fn new(
        terms: Terms<'_>,
        coefficients: Coefficients,
        symmetry: Symmetry,
        control: Option<&DirichletControl>,
        dof_points: Option<Vec<[f64; 3]>>,
    ) -> Result<Self, StepError> {
        let damping = terms.damping.filter(|_| coefficients.damping != 0.0);
        let no_stiffness = terms.stiffness.is_none() || coefficients.stiffness == 0.0;
        if let (Mass::Lumped(d), true, None) = (terms.mass, no_stiffness, damping) {
            let c = coefficients.mass;
            let inverse = match control {
                Some(p) => p.free().iter().map(|&i| 1.0 / (c * d[i])).collect(),
                None => d.iter().map(|m| 1.0 / (c * m)).collect(),
            };
            return Ok(Self {
                coefficients,
                symmetry,
                solve: Solve::Diagonal(inverse),
            });
        }
        let sparse = Sparse::new(
            Terms { damping, ..terms },
            coefficients,
            symmetry,
            control,
            dof_points,
        )?;
        Ok(Self {
            coefficients,
            symmetry,
            solve: Solve::Factored(Box::new(sparse)),
        })
    }

    /// The coefficients.
    pub fn coefficients(&self) -> Coefficients {
        self.coefficients
    }

    /// The stiffness buffer (the first stiffness's pattern), for the stepper to refill with a
    /// new tangent ([`crate::SecondOrderSystem::tangent_into`]) before
    /// [`refactor`](Self::refactor); `None` for a matrix without a stiffness term.
    pub fn stiffness_mut(&mut self) -> Option<&mut CsrMatrix<f64>> {
        match &mut self.solve {
            Solve::Factored(s) => s.values.k.as_mut(),
            Solve::Diagonal(_) => None,
        }
    }

    /// The stiffness last used, if the matrix has a stiffness term.
    pub fn stiffness(&self) -> Option<&CsrMatrix<f64>> {
        match &self.solve {
            Solve::Factored(s) => s.values.k.as_ref(),
            Solve::Diagonal(_) => None,
        }
    }

    /// Refills `A` from the stiffness buffer and refactors it numerically (the symbolic
    /// analysis is kept).
    pub fn refactor(&mut self) -> Result<(), StepError> {
        match &mut self.solve {
            Solve::Factored(s) => s.refactor(self.coefficients),
            Solve::Diagonal(_) => Err(StepError::PatternMismatch {
                what: "a stiffness refill of a matrix formed without a stiffness term",
            }),
        }
    }

    /// Copies the values of `k` (the pattern of the first stiffness) into the stiffness buffer
    /// and refactors.
    pub fn refactor_with(&mut self, k: &CsrMatrix<f64>) -> Result<(), StepError> {
        let buffer = self.stiffness_mut().ok_or(StepError::PatternMismatch {
            what: "a stiffness refill of a matrix formed without a stiffness term",
        })?;
        if buffer.nnz() != k.nnz() || buffer.nrows() != k.nrows() {
            return Err(StepError::PatternMismatch {
                what: "a tangent whose pattern differs from the first one",
            });
        }
        buffer.values_mut().copy_from_slice(k.values());
        self.refactor()
    }

    /// Solves `A_ff x = b` in place (`b` on the free dofs).
    pub fn solve_in_place(&self, b: &mut [f64]) {
        match &self.solve {
            Solve::Diagonal(inv) => b.iter_mut().zip(inv).for_each(|(bi, di)| *bi *= di),
            Solve::Factored(s) => s.factor.solve_in_place(b),
        }
    }

    /// Solves for `n_rhs` right-hand sides stored column after column in `b`.
    pub fn solve_many_in_place(&self, b: &mut [f64], n_rhs: usize) {
        match &self.solve {
            Solve::Diagonal(inv) => {
                for col in b.chunks_exact_mut(inv.len().max(1)) {
                    col.iter_mut().zip(inv).for_each(|(bi, di)| *bi *= di);
                }
            }
            Solve::Factored(s) => s.factor.solve_many_in_place(b, n_rhs),
        }
    }

    /// [`Self::solve_many_in_place`] with the given parallelism inside the solve (e.g.
    /// `Par::Seq` for blocks of columns solved in parallel by the caller;
    /// [`fem_assembly::Factorization::solve_many_in_place_with`]).
    pub fn solve_many_in_place_with(&self, b: &mut [f64], n_rhs: usize, par: fem_assembly::Par) {
        match &self.solve {
            Solve::Diagonal(_) => self.solve_many_in_place(b, n_rhs),
            Solve::Factored(s) => s.factor.solve_many_in_place_with(b, n_rhs, par),
        }
    }

    /// `(A x)_i`, row `i` of the whole matrix (all dofs, prescribed columns included), summed
    /// over its pattern in column order; `None` for a diagonal matrix.
    pub fn row_dot(&self, i: usize, x: &[f64]) -> Option<f64> {
        self.row_dot_where(i, x, |_| true)
    }

    /// `Σ_j A_ij x_j` over the columns `j` of row `i` for which `keep(j)`.
    pub fn row_dot_where(&self, i: usize, x: &[f64], keep: impl Fn(usize) -> bool) -> Option<f64> {
        let Solve::Factored(s) = &self.solve else {
            return None;
        };
        let row = s.values.a.row(i);
        Some(
            row.col_indices()
                .iter()
                .zip(row.values())
                .filter(|(j, _)| keep(**j))
                .map(|(&j, v)| v * x[j])
                .sum(),
        )
    }

    /// Numeric factorizations so far (0 for a diagonal matrix).
    pub fn factorizations(&self) -> usize {
        match &self.solve {
            Solve::Diagonal(_) => 0,
            Solve::Factored(s) => s.factor.factorization_count(),
        }
    }

    /// Values stored for the Cholesky factor, if the matrix is Cholesky-factored.
    pub fn factor_values(&self) -> Option<usize> {
        match &self.solve {
            Solve::Diagonal(_) => None,
            Solve::Factored(s) => s.factor.factor_values(),
        }
    }

    /// Whether the matrix is diagonal (an explicit step).
    pub fn is_diagonal(&self) -> bool {
        matches!(self.solve, Solve::Diagonal(_))
    }

    /// The symmetry the matrix is factored with.
    pub fn symmetry(&self) -> Symmetry {
        self.symmetry
    }
}

impl Sparse {
    fn new(
        terms: Terms<'_>,
        c: Coefficients,
        symmetry: Symmetry,
        control: Option<&DirichletControl>,
        dof_points: Option<Vec<[f64; 3]>>,
    ) -> Result<Self, StepError> {
        let mut values = Values::new(terms, c, control);
        values.refill(c);
        let factor = match (dof_points, symmetry) {
            (Some(points), Symmetry::Symmetric) => {
                let free_points: Vec<[f64; 3]> = match control {
                    Some(p) => p.free().iter().map(|&i| points[i]).collect(),
                    None => points,
                };
                let order = nested_dissection(&free_points, &values.a_free);
                Factorization::with_order(&values.a_free, symmetry, &order)?
            }
            _ => Factorization::new(&values.a_free, symmetry)?,
        };
        Ok(Self { values, factor })
    }

    fn refactor(&mut self, c: Coefficients) -> Result<(), StepError> {
        self.values.refill(c);
        self.factor.refactor(&self.values.a_free)?;
        Ok(())
    }
}

impl Values {
    /// The pattern of `A`, where each term lands in it, and the free block's entries.
    fn new(terms: Terms<'_>, c: Coefficients, control: Option<&DirichletControl>) -> Self {
        let n = terms.mass.n();
        let a = union_pattern(n, &terms);
        let position = |i: usize, j: usize| -> usize {
            let (offsets, cols) = (a.row_offsets(), a.col_indices());
            let row = &cols[offsets[i]..offsets[i + 1]];
            offsets[i]
                + row
                    .binary_search(&j)
                    .expect("the union holds every term's entries")
        };
        let positions_of = |m: &CsrMatrix<f64>| -> Vec<usize> {
            let mut p = Vec::with_capacity(m.nnz());
            for (i, row) in m.row_iter().enumerate() {
                p.extend(row.col_indices().iter().map(|&j| position(i, j)));
            }
            p
        };
        let scaled = |m: &CsrMatrix<f64>, coefficient: f64| -> Vec<(usize, f64)> {
            positions_of(m)
                .into_iter()
                .zip(m.values())
                .map(|(p, v)| (p, coefficient * v))
                .collect()
        };
        let lumped = match terms.mass {
            Mass::Lumped(d) => (0..n).map(|i| (position(i, i), c.mass * d[i])).collect(),
            Mass::Consistent(_) => Vec::new(),
        };
        let mut constant = Vec::new();
        if let Some(damping) = terms.damping {
            constant.extend(scaled(damping, c.damping));
        }
        if let Mass::Consistent(m) = terms.mass {
            constant.extend(scaled(m, c.mass));
        }
        let k = terms.stiffness.cloned();
        let k_positions = k.as_ref().map(positions_of).unwrap_or_default();
        let (keep, a_free) = free_block(&a, control);
        Self {
            a,
            k,
            k_positions,
            lumped,
            constant,
            keep,
            a_free,
        }
    }

    /// `A` and its free block from the terms, in the fixed summation order.
    fn refill(&mut self, c: Coefficients) {
        let values = self.a.values_mut();
        values.fill(0.0);
        for &(p, v) in &self.lumped {
            values[p] += v;
        }
        if let Some(k) = &self.k {
            for (&p, v) in self.k_positions.iter().zip(k.values()) {
                values[p] += c.stiffness * v;
            }
        }
        for &(p, v) in &self.constant {
            values[p] += v;
        }
        let values = self.a.values();
        for (v, &p) in self.a_free.values_mut().iter_mut().zip(&self.keep) {
            *v = values[p];
        }
    }
}

/// The pattern of the sum of the terms (a lumped mass contributes the diagonal), with zero
/// values.
fn union_pattern(n: usize, terms: &Terms<'_>) -> CsrMatrix<f64> {
    let mut matrices: Vec<&CsrMatrix<f64>> = Vec::with_capacity(3);
    matrices.extend(terms.stiffness);
    matrices.extend(terms.damping);
    if let Mass::Consistent(m) = terms.mass {
        matrices.push(m);
    }
    let lumped = matches!(terms.mass, Mass::Lumped(_));
    let mut offsets = Vec::with_capacity(n + 1);
    let mut cols = Vec::new();
    let mut row: Vec<usize> = Vec::new();
    offsets.push(0);
    for i in 0..n {
        row.clear();
        if lumped {
            row.push(i);
        }
        for m in &matrices {
            row.extend_from_slice(m.row(i).col_indices());
        }
        row.sort_unstable();
        row.dedup();
        cols.extend_from_slice(&row);
        offsets.push(cols.len());
    }
    let values = vec![0.0; cols.len()];
    CsrMatrix::try_from_csr_data(n, n, offsets, cols, values).expect("sorted unique columns")
}

/// The positions in `a` of the free block's entries and the free block's pattern (`a` itself
/// without a control).
fn free_block(
    a: &CsrMatrix<f64>,
    control: Option<&DirichletControl>,
) -> (Vec<usize>, CsrMatrix<f64>) {
    let Some(control) = control else {
        return ((0..a.nnz()).collect(), a.clone());
    };
    let mut keep = Vec::new();
    let mut offsets = vec![0];
    let mut cols = Vec::new();
    for &i in control.free() {
        for p in a.row_offsets()[i]..a.row_offsets()[i + 1] {
            if let Some(j) = control.free_index(a.col_indices()[p]) {
                keep.push(p);
                cols.push(j);
            }
        }
        offsets.push(cols.len());
    }
    let n = control.free().len();
    let values = vec![0.0; cols.len()];
    let a_free = CsrMatrix::try_from_csr_data(n, n, offsets, cols, values)
        .expect("an increasing renumbering keeps rows sorted");
    (keep, a_free)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fem_assembly::sparse;
    use fem_constraints::{
        DirichletConditions, DirichletSet, Enforcement, Prescribed, TimeFunction,
    };
    use nalgebra_sparse::CooMatrix;
    use std::sync::Arc;

    /// The pattern of a hex8 mesh's stiffness on an `n³` grid of nodes (each node's 3 dofs
    /// coupled to its own and its 26 neighbours'), with values making it diagonally dominant,
    /// and the node of each dof.
    fn grid_stiffness(n: usize) -> (CsrMatrix<f64>, Vec<[f64; 3]>) {
        let n_dofs = 3 * n * n * n;
        let mut coo = CooMatrix::new(n_dofs, n_dofs);
        let mut points = Vec::with_capacity(n_dofs);
        let range = |i: usize| i.saturating_sub(1)..(i + 2).min(n);
        for k in 0..n {
            for j in 0..n {
                for i in 0..n {
                    let node = (k * n + j) * n + i;
                    for c in 0..3 {
                        points.push([i as f64, j as f64, k as f64]);
                        for kk in range(k) {
                            for jj in range(j) {
                                for ii in range(i) {
                                    let other = (kk * n + jj) * n + ii;
                                    for d in 0..3 {
                                        let (row, col) = (3 * node + c, 3 * other + d);
                                        let v = if row == col { 100.0 } else { -1.0 };
                                        coo.push(row, col, v);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        (CsrMatrix::from(&coo), points)
    }

    fn coefficients() -> Coefficients {
        Coefficients {
            mass: 1.0,
            damping: 0.5,
            stiffness: 0.25,
        }
    }

    #[test]
    fn dof_points_order_the_factorization_by_nested_dissection() {
        let n = 14;
        let (k, points) = grid_stiffness(n);
        let mass = Mass::Lumped(vec![1.0; 3 * n * n * n]);
        let terms = Terms {
            mass: &mass,
            damping: None,
            stiffness: Some(&k),
        };
        let (c, sym) = (coefficients(), Symmetry::Symmetric);
        let default = StepMatrix::new(terms, c, sym, None, None).unwrap();
        let nested = StepMatrix::new(terms, c, sym, None, Some(points)).unwrap();
        let (fill_default, fill_nested) = (
            default.factor_values().unwrap(),
            nested.factor_values().unwrap(),
        );
        assert!(
            (fill_nested as f64) < 0.9 * fill_default as f64,
            "nested dissection {fill_nested} vs default {fill_default} factor values"
        );
        // The same solution, whatever the order.
        let b: Vec<f64> = (0..3 * n * n * n)
            .map(|i| ((i * 7919) % 113) as f64)
            .collect();
        let (mut x0, mut x1) = (b.clone(), b.clone());
        default.solve_in_place(&mut x0);
        nested.solve_in_place(&mut x1);
        let scale = x0.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (a, b) in x0.iter().zip(&x1) {
            assert!((a - b).abs() <= 1e-12 * scale, "{a} vs {b}");
        }
    }

    /// The matrix is bitwise the one a linear combination and a principal submatrix give,
    /// with lumped and with consistent masses, after a refill too.
    #[test]
    fn refilled_values_are_bitwise_the_formed_matrix() {
        let n = 3;
        let (k, _) = grid_stiffness(n);
        let n_dofs = k.nrows();
        let damping = sparse::linear_combination(&[(0.01, &k)], None);
        let diagonal: Vec<f64> = (0..n_dofs).map(|i| 1.0 + 0.1 * i as f64).collect();
        let consistent = sparse::linear_combination(&[(1e-3, &k)], Some((1.0, &diagonal)));
        let conditions = DirichletConditions::new(&[DirichletSet {
            dofs: [0, 5, 17].map(fem_constraints::SystemDof::new).to_vec(),
            signal: Arc::new(Prescribed::new(TimeFunction::Constant(0.0))),
            enforcement: Enforcement::Direct,
        }])
        .unwrap();
        let control = DirichletControl::new(n_dofs, conditions).unwrap();
        let c = coefficients();
        for mass in [Mass::Lumped(diagonal.clone()), Mass::Consistent(consistent)] {
            let terms = Terms {
                mass: &mass,
                damping: Some(&damping),
                stiffness: Some(&k),
            };
            let mut m =
                StepMatrix::new(terms, c, Symmetry::Symmetric, Some(&control), None).unwrap();
            let k2 = sparse::linear_combination(&[(1.5, &k)], None);
            m.refactor_with(&k2).unwrap();
            let expected = {
                let mut t: Vec<(f64, &CsrMatrix<f64>)> =
                    vec![(c.stiffness, &k2), (c.damping, &damping)];
                let whole = match &mass {
                    Mass::Lumped(d) => sparse::linear_combination(&t, Some((c.mass, d))),
                    Mass::Consistent(mm) => {
                        t.push((c.mass, mm));
                        sparse::linear_combination(&t, None)
                    }
                };
                sparse::principal_submatrix(&whole, control.free_indices())
            };
            let Solve::Factored(s) = &m.solve else {
                panic!("sparse")
            };
            assert_eq!(s.values.a_free.pattern(), expected.pattern());
            for (a, b) in s.values.a_free.values().iter().zip(expected.values()) {
                assert_eq!(a.to_bits(), b.to_bits());
            }
        }
    }
}
