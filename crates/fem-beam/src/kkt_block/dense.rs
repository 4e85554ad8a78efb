//! The dense kernels of the block elimination: the 8×8 LU with partial pivoting whose row
//! updates run in the machine's vector width (each lane multiplies, then adds: the scalar
//! loop's rounding), its solves, and the small dense LU of the twisted elimination's meeting
//! block.

use super::Blk;
use crate::block_tridiag::BS;

/// `y += a x` on 8-wide rows, in the machine's vector width (each lane rounds `a x`, then
/// the sum: the scalar loop's operations).
#[inline(always)]
pub(super) fn axpy<S: pulp::Simd>(simd: S, y: &mut [f64; BS], a: f64, x: &[f64; BS]) {
    let (yh, yt) = S::as_mut_simd_f64s(y);
    let (xh, xt) = S::as_simd_f64s(x);
    let av = simd.splat_f64s(a);
    for (yv, xv) in yh.iter_mut().zip(xh) {
        *yv = simd.add_f64s(*yv, simd.mul_f64s(av, *xv));
    }
    for (yv, xv) in yt.iter_mut().zip(xt) {
        *yv += a * xv;
    }
}

/// `y *= a` on an 8-wide row, in the machine's vector width.
#[inline(always)]
fn scale_row<S: pulp::Simd>(simd: S, y: &mut [f64; BS], a: f64) {
    let (yh, yt) = S::as_mut_simd_f64s(y);
    let av = simd.splat_f64s(a);
    for yv in yh.iter_mut() {
        *yv = simd.mul_f64s(*yv, av);
    }
    for yv in yt.iter_mut() {
        *yv *= a;
    }
}

/// Expands `$body` for `$k` = 0, 1, …, 7 (literal indices, so that the 8×8 kernels below
/// keep their blocks in registers instead of indexing them at run time).
macro_rules! unroll8 {
    ($k:ident => $body:block) => {
        unroll8!(@ $k $body 0 1 2 3 4 5 6 7)
    };
    (@ $k:ident $body:block $($n:literal)*) => {
        $({
            #[allow(clippy::identity_op, clippy::erasing_op)]
            let $k: usize = $n;
            $body
        })*
    };
}

/// Exchanges rows `k` and `p ≥ k` of `a` with literal row indices.
#[inline(always)]
fn swap_rows(a: &mut Blk, k: usize, p: usize) {
    for i in k + 1..BS {
        if i == p {
            a.swap(k, i);
        }
    }
}

/// LU with partial pivoting of a row-major 8×8 block in place, `P S = L U` (unit `L` below the
/// diagonal, rows exchanged as they are pivoted); `false` if a pivot column is zero or not
/// finite.
///
/// The multipliers are kept apart while eliminating so that every row update runs over the
/// whole 8-wide row (the entries left of the diagonal it touches are overwritten by `L` at the
/// end); each entry of `U` sees the same operations in the same order as in the textbook
/// loop over `j > k`.
#[inline(always)]
pub(super) fn lu8<S: pulp::Simd>(simd: S, a: &mut Blk, piv: &mut [u8; BS]) -> bool {
    let mut lower: Blk = [[0.0; BS]; BS];
    let mut ok = true;
    unroll8!(k => {
        let mut p = k;
        let mut m = a[k][k].abs();
        for i in k + 1..BS {
            let v = a[i][k].abs();
            if v > m {
                m = v;
                p = i;
            }
        }
        ok &= m != 0.0 && m.is_finite();
        piv[k] = p as u8;
        swap_rows(a, k, p);
        swap_rows(&mut lower, k, p);
        let inv = 1.0 / a[k][k];
        let rk = a[k];
        for i in k + 1..BS {
            let l = a[i][k] * inv;
            lower[i][k] = l;
            axpy(simd, &mut a[i], -l, &rk);
        }
    });
    for i in 1..BS {
        a[i][..i].copy_from_slice(&lower[i][..i]);
    }
    ok
}

/// Solves `S x = b` with the factorization of [`lu8`], in place.
#[inline(always)]
pub(super) fn lu8_solve(a: &Blk, piv: &[u8; BS], x: &mut [f64; BS]) {
    unroll8!(k => {
        let p = piv[k] as usize;
        for i in k + 1..BS {
            if i == p {
                x.swap(k, i);
            }
        }
    });
    unroll8!(k => {
        let xk = x[k];
        for i in k + 1..BS {
            x[i] -= a[i][k] * xk;
        }
    });
    unroll8!(kk => {
        let k = BS - 1 - kk;
        x[k] /= a[k][k];
        let xk = x[k];
        for i in 0..k {
            x[i] -= a[i][k] * xk;
        }
    });
}

/// Solves `S X = B` for a row-major `B` in place (8-wide row operations).
#[inline(always)]
pub(super) fn lu8_solve_rows<S: pulp::Simd>(simd: S, a: &Blk, piv: &[u8; BS], bm: &mut Blk) {
    unroll8!(k => {
        swap_rows(bm, k, piv[k] as usize);
    });
    unroll8!(k => {
        let rk = bm[k];
        for i in k + 1..BS {
            axpy(simd, &mut bm[i], -a[i][k], &rk);
        }
    });
    unroll8!(kk => {
        let k = BS - 1 - kk;
        let inv = 1.0 / a[k][k];
        scale_row(simd, &mut bm[k], inv);
        let rk = bm[k];
        for i in 0..k {
            axpy(simd, &mut bm[i], -a[i][k], &rk);
        }
    });
}

/// Solves the dense `a z = r` by LU with partial pivoting; `None` if a pivot is zero or not
/// finite.
pub(super) fn lu_solve_dense<const N: usize>(
    mut a: [[f64; N]; N],
    mut r: [f64; N],
) -> Option<[f64; N]> {
    for k in 0..N {
        let mut p = k;
        for i in k + 1..N {
            if a[i][k].abs() > a[p][k].abs() {
                p = i;
            }
        }
        let piv = a[p][k];
        if piv == 0.0 || !piv.is_finite() {
            return None;
        }
        a.swap(k, p);
        r.swap(k, p);
        for i in k + 1..N {
            let l = a[i][k] / piv;
            if l != 0.0 {
                for j in k..N {
                    a[i][j] -= l * a[k][j];
                }
                r[i] -= l * r[k];
            }
        }
    }
    for k in (0..N).rev() {
        let mut v = r[k];
        for j in k + 1..N {
            v -= a[k][j] * r[j];
        }
        r[k] = v / a[k][k];
    }
    Some(r)
}
