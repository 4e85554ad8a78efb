//! Block-tridiagonal LU of the Newton–KKT matrix in its natural ordering (see [`crate::kkt`]).
//!
//! Block `b` (one per node) holds the node's 6 unknowns (position and tangent, 3 components
//! each; local `3 s + c`) and the 2 multipliers of the previous element (local `6 + q`); an
//! element couples only blocks `b` and `b + 1`, so the KKT matrix is block tridiagonal with
//! 8×8 blocks. Unused slots (fixed dofs, the missing multipliers of block 0) carry a unit
//! diagonal and no coupling.
//!
//! Block LU without pivoting between blocks, partial pivoting inside each 8×8 pivot block:
//!
//! ```text
//! S_0 = D_0,   X_{b−1} = S_{b−1}⁻¹ U_b,   S_b = D_b − L_b X_{b−1},
//! ```
//!
//! `L_b = A_{b,b−1}`, `U_b = A_{b−1,b}`. Each `S_b` is the Schur complement of the leading
//! blocks `0..b`; their matrix is a KKT matrix whose Hessian part is positive definite (mass
//! term) and whose constraint rows (the multipliers of elements `< b`, supported on nodes
//! `≤ b`) have full rank, so it is nonsingular and the recursion does not break down.
//! Cost `O(N)`: about 2.5·10³ flops per block.

use nalgebra::{SMatrix, SVector};

/// Block size: a node's 6 dofs and the previous element's 2 multipliers.
pub(crate) const BS: usize = 8;
type M8 = SMatrix<f64, BS, BS>;
type V8 = SVector<f64, BS>;

/// The block-tridiagonal storage, its map from the CSC pattern, and its factorization.
#[derive(Debug)]
pub(crate) struct BlockTridiagonal {
    n_blocks: usize,
    /// Per global unknown: `block · 8 + local`.
    loc: Vec<u32>,
    /// Per CSC slot: `matrix · 64 + (col · 8 + row)`, matrix index `b` (diagonal `D_b`),
    /// `n + b` (`L_b`) or `2n + b` (`U_b`).
    dest: Vec<u32>,
    /// Block-local unknowns not used (unit diagonal): `block · 8 + local`.
    unused: Vec<u32>,
    /// `D_b`, then `L_b`, then `U_b` (overwritten by `X_{b−1}` in the factorization).
    store: Vec<M8>,
    lu: Vec<Lu8>,
}

/// LU with partial pivoting of one 8×8 block, `P S = L U` (unit `L`), stored in place.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lu8 {
    /// Column-major `L` (below the diagonal) and `U`.
    a: M8,
    /// Row exchanged with row `k` at step `k`.
    piv: [u8; BS],
}

impl Lu8 {
    /// Factorizes `a`; `None` if a pivot column is zero (or not finite).
    #[inline]
    pub(crate) fn new(mut a: M8) -> Option<Self> {
        let mut piv = [0u8; BS];
        for k in 0..BS {
            let mut p = k;
            let mut m = a[(k, k)].abs();
            for i in k + 1..BS {
                let v = a[(i, k)].abs();
                if v > m {
                    m = v;
                    p = i;
                }
            }
            if m == 0.0 || !m.is_finite() {
                return None;
            }
            piv[k] = p as u8;
            if p != k {
                a.swap_rows(k, p);
            }
            let inv = 1.0 / a[(k, k)];
            for i in k + 1..BS {
                a[(i, k)] *= inv;
            }
            for j in k + 1..BS {
                let f = a[(k, j)];
                if f != 0.0 {
                    for i in k + 1..BS {
                        a[(i, j)] -= a[(i, k)] * f;
                    }
                }
            }
        }
        Some(Self { a, piv })
    }

    /// Solves `S x = b` in place for one column.
    #[inline]
    pub(crate) fn solve_column(&self, x: &mut [f64; BS]) {
        let a = &self.a;
        // The exchanges were applied to whole rows: all of them first, then `L`.
        for k in 0..BS {
            let p = self.piv[k] as usize % BS;
            x.swap(k, p);
        }
        for k in 0..BS {
            let xk = x[k];
            for i in k + 1..BS {
                x[i] -= a[(i, k)] * xk;
            }
        }
        for k in (0..BS).rev() {
            x[k] /= a[(k, k)];
            let xk = x[k];
            for i in 0..k {
                x[i] -= a[(i, k)] * xk;
            }
        }
    }

    /// Solves `S X = B` in place, the row operations on whole rows of `B` (8-wide).
    #[inline]
    pub(crate) fn solve_matrix(&self, b: &mut M8) {
        let a = &self.a;
        // rows[i] = row i of B.
        let mut rows = [[0.0f64; BS]; BS];
        for (i, r) in rows.iter_mut().enumerate() {
            for (j, v) in r.iter_mut().enumerate() {
                *v = b[(i, j)];
            }
        }
        for k in 0..BS {
            let p = self.piv[k] as usize % BS;
            rows.swap(k, p);
        }
        for k in 0..BS {
            let rk = rows[k];
            for (i, ri) in rows.iter_mut().enumerate().skip(k + 1) {
                let l = a[(i, k)];
                for j in 0..BS {
                    ri[j] -= l * rk[j];
                }
            }
        }
        for k in (0..BS).rev() {
            let inv = 1.0 / a[(k, k)];
            for v in rows[k].iter_mut() {
                *v *= inv;
            }
            let rk = rows[k];
            for (i, ri) in rows.iter_mut().enumerate().take(k) {
                let u = a[(i, k)];
                for j in 0..BS {
                    ri[j] -= u * rk[j];
                }
            }
        }
        for (i, r) in rows.iter().enumerate() {
            for (j, v) in r.iter().enumerate() {
                b[(i, j)] = *v;
            }
        }
    }
}

impl BlockTridiagonal {
    /// Maps the CSC pattern onto the blocks; `loc[i]` is the `block · 8 + local` of global
    /// unknown `i`. `None` when an entry falls outside the block tridiagonal band or two
    /// unknowns share a slot.
    pub(crate) fn new(
        n_blocks: usize,
        loc: Vec<u32>,
        col_ptr: &[usize],
        row_idx: &[usize],
    ) -> Option<Self> {
        let mut used = vec![false; n_blocks * BS];
        for &l in &loc {
            let l = l as usize;
            if l >= used.len() || used[l] {
                return None;
            }
            used[l] = true;
        }
        let unused = (0..used.len())
            .filter(|&i| !used[i])
            .map(|i| i as u32)
            .collect();
        let mut dest = Vec::with_capacity(row_idx.len());
        for col in 0..col_ptr.len() - 1 {
            let (bc, lc) = (loc[col] as usize / BS, loc[col] as usize % BS);
            for &row in &row_idx[col_ptr[col]..col_ptr[col + 1]] {
                let (br, lr) = (loc[row] as usize / BS, loc[row] as usize % BS);
                let m = if br == bc {
                    br
                } else if br == bc + 1 {
                    n_blocks + br
                } else if bc == br + 1 {
                    2 * n_blocks + bc
                } else {
                    return None;
                };
                dest.push(u32::try_from(m * BS * BS + lc * BS + lr).ok()?);
            }
        }
        Some(Self {
            n_blocks,
            loc,
            dest,
            unused,
            store: vec![M8::zeros(); 3 * n_blocks],
            lu: Vec::with_capacity(n_blocks),
        })
    }

    /// Loads the CSC values `vals` and factorizes. `false` if a pivot block is singular.
    // The 8×8 blocks enter the products by reference: by value each product copied its block
    // (a memcpy per block, 1 % of a cable step; docs/performance.md, issue 22).
    #[allow(clippy::op_ref)]
    pub(crate) fn factorize(&mut self, vals: &[f64]) -> bool {
        let n = self.n_blocks;
        // D_b and L_b keep their zeros (only the pattern's slots are written); U_b was
        // overwritten by X_{b−1}.
        for m in self.store[2 * n..].iter_mut() {
            *m = M8::zeros();
        }
        for (&d, &v) in self.dest.iter().zip(vals) {
            let d = d as usize;
            self.store[d / (BS * BS)][d % (BS * BS)] = v;
        }
        for &u in &self.unused {
            let (b, l) = (u as usize / BS, u as usize % BS);
            self.store[b][(l, l)] = 1.0;
        }
        self.lu.clear();
        let (diag, rest) = self.store.split_at_mut(n);
        let (lower, upper) = rest.split_at_mut(n);
        for b in 0..n {
            let mut s = diag[b];
            if b > 0 {
                s -= &lower[b] * &upper[b];
            }
            let Some(lu) = Lu8::new(s) else {
                return false;
            };
            if b + 1 < n {
                lu.solve_matrix(&mut upper[b + 1]);
            }
            self.lu.push(lu);
        }
        true
    }

    /// Solves with the last factorization, `rhs` in the global ordering; `work` is scratch of
    /// `8 · n_blocks` entries.
    // The 8×8 blocks enter the products by reference: by value each product copied its block
    // (a memcpy per block, 1 % of a cable step; docs/performance.md, issue 22).
    #[allow(clippy::op_ref)]
    pub(crate) fn solve_in_place(&self, rhs: &mut [f64], work: &mut Vec<f64>) {
        let n = self.n_blocks;
        work.clear();
        work.resize(n * BS, 0.0);
        for (i, &l) in self.loc.iter().enumerate() {
            work[l as usize] = rhs[i];
        }
        let lower = &self.store[n..2 * n];
        let upper = &self.store[2 * n..];
        let mut prev = V8::zeros();
        let (blocks, _) = work.as_chunks_mut::<BS>();
        for (b, block) in blocks.iter_mut().enumerate() {
            let mut y = V8::from(*block);
            if b > 0 {
                y -= &lower[b] * prev;
            }
            let mut yy: [f64; BS] = y.into();
            self.lu[b].solve_column(&mut yy);
            *block = yy;
            prev = V8::from(yy);
        }
        for b in (0..n.saturating_sub(1)).rev() {
            let z = V8::from(blocks[b]) - &upper[b + 1] * prev;
            blocks[b] = z.into();
            prev = z;
        }
        for (i, &l) in self.loc.iter().enumerate() {
            rhs[i] = work[l as usize];
        }
    }
}
