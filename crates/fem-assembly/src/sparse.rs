//! Small CSR helpers the steppers need: products, quadratic forms, linear combinations.

use nalgebra_sparse::CsrMatrix;
use rayon::prelude::*;

/// Rows per parallel task in [`mul_add`]; small enough to balance, large enough to amortise.
const ROWS_PER_TASK: usize = 8192;

/// Below this many rows [`mul_add`] runs on the calling thread: measured on the string bench,
/// rayon's dispatch cost more than it saved up to ~10⁵ rows.
const PARALLEL_ROWS: usize = 100_000;

/// `y = beta * y + alpha * A x`, parallel over rows for large matrices (each row is summed in a
/// fixed order, so the result does not depend on the thread count).
pub fn mul_add(beta: f64, y: &mut [f64], alpha: f64, a: &CsrMatrix<f64>, x: &[f64]) {
    assert_eq!(a.ncols(), x.len());
    assert_eq!(a.nrows(), y.len());
    let (offsets, cols, vals) = a.csr_data();
    let rows = |first: usize, ys: &mut [f64]| {
        for (i, yi) in ys.iter_mut().enumerate() {
            let row = first + i;
            let range = offsets[row]..offsets[row + 1];
            let sum: f64 = vals[range.clone()]
                .iter()
                .zip(&cols[range])
                .map(|(v, &c)| v * x[c])
                .sum();
            *yi = if beta == 0.0 {
                alpha * sum
            } else {
                beta * *yi + alpha * sum
            };
        }
    };
    if y.len() < PARALLEL_ROWS {
        rows(0, y);
    } else {
        y.par_chunks_mut(ROWS_PER_TASK)
            .enumerate()
            .for_each(|(chunk, ys)| rows(chunk * ROWS_PER_TASK, ys));
    }
}

/// `A x` into a new vector.
pub fn mul(a: &CsrMatrix<f64>, x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; a.nrows()];
    mul_add(0.0, &mut y, 1.0, a, x);
    y
}

/// The quadratic form `xᵀ A y`.
pub fn bilinear(a: &CsrMatrix<f64>, x: &[f64], y: &[f64]) -> f64 {
    let (offsets, cols, vals) = a.csr_data();
    (0..a.nrows())
        .map(|row| {
            let mut sum = 0.0;
            for k in offsets[row]..offsets[row + 1] {
                sum += vals[k] * y[cols[k]];
            }
            x[row] * sum
        })
        .sum()
}

/// `Σ cᵢ Aᵢ` over the union of the patterns, plus `d` on the diagonal (a lumped mass, for
/// instance); the diagonal is always present in the result.
pub fn linear_combination(
    terms: &[(f64, &CsrMatrix<f64>)],
    diagonal: Option<(f64, &[f64])>,
) -> CsrMatrix<f64> {
    let n = terms
        .first()
        .map(|t| t.1.nrows())
        .or(diagonal.map(|d| d.1.len()))
        .expect("at least one term");
    let mut offsets = Vec::with_capacity(n + 1);
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    offsets.push(0);
    let mut row_entries: Vec<(usize, f64)> = Vec::new();
    for i in 0..n {
        row_entries.clear();
        row_entries.push((i, diagonal.map_or(0.0, |(c, d)| c * d[i])));
        for (c, a) in terms {
            let row = a.row(i);
            row_entries.extend(
                row.col_indices()
                    .iter()
                    .zip(row.values())
                    .map(|(&j, &v)| (j, c * v)),
            );
        }
        row_entries.sort_by_key(|e| e.0);
        let mut last = usize::MAX;
        for &(j, v) in &row_entries {
            if j == last {
                *vals.last_mut().expect("an entry precedes") += v;
            } else {
                cols.push(j);
                vals.push(v);
                last = j;
            }
        }
        offsets.push(cols.len());
    }
    CsrMatrix::try_from_csr_data(n, n, offsets, cols, vals).expect("sorted unique columns")
}

/// The principal submatrix of `a` on the rows and columns with `new_index[i] != usize::MAX`,
/// renumbered by `new_index` (which must be increasing on the kept indices).
pub fn principal_submatrix(a: &CsrMatrix<f64>, new_index: &[usize]) -> CsrMatrix<f64> {
    assert_eq!(new_index.len(), a.nrows());
    let n = new_index.iter().filter(|&&i| i != usize::MAX).count();
    let mut offsets = Vec::with_capacity(n + 1);
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    offsets.push(0);
    for (row, &new_row) in new_index.iter().enumerate() {
        if new_row == usize::MAX {
            continue;
        }
        let r = a.row(row);
        for (&c, &v) in r.col_indices().iter().zip(r.values()) {
            if new_index[c] != usize::MAX {
                cols.push(new_index[c]);
                vals.push(v);
            }
        }
        offsets.push(cols.len());
    }
    CsrMatrix::try_from_csr_data(n, n, offsets, cols, vals)
        .expect("increasing renumbering keeps rows sorted")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tridiagonal(n: usize) -> CsrMatrix<f64> {
        linear_combination(&[], Some((2.0, &vec![1.0; n])))
            .clone()
            .transpose()
            + off_diagonal(n)
    }

    fn off_diagonal(n: usize) -> CsrMatrix<f64> {
        let mut coo = nalgebra_sparse::CooMatrix::new(n, n);
        for i in 0..n - 1 {
            coo.push(i, i + 1, -1.0);
            coo.push(i + 1, i, -1.0);
        }
        CsrMatrix::from(&coo)
    }

    #[test]
    fn products_and_combinations() {
        let a = tridiagonal(4);
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(mul(&a, &x), vec![0.0, 0.0, 0.0, 5.0]);
        assert_eq!(bilinear(&a, &x, &x), 20.0);
        let b = linear_combination(
            &[(2.0, &a), (-1.0, &off_diagonal(4))],
            Some((1.0, &[1.0, 1.0, 1.0, 1.0])),
        );
        // 2A - offdiag + I = 5 I + (-1) offdiag
        assert_eq!(b.get_entry(0, 0).unwrap().into_value(), 5.0);
        assert_eq!(b.get_entry(0, 1).unwrap().into_value(), -1.0);
        assert_eq!(b.nnz(), 10);
        let sub = principal_submatrix(&a, &[0, usize::MAX, 1, 2]);
        assert_eq!(sub.nrows(), 3);
        assert_eq!(sub.get_entry(1, 2).unwrap().into_value(), -1.0);
        assert_eq!(sub.get_entry(0, 1).unwrap().into_value(), 0.0);
    }
}
