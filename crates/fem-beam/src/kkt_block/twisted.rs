//! The twisted (two-ended) block elimination on two threads: the bottom half of the blocks
//! assembled and eliminated bottom-up in the mirrored layout beside the top-down half, the
//! meeting block, and both back substitutions (see the parent module's "Two threads").

use super::dense::lu_solve_dense;
use super::*;

/// What the bottom half ([`sweep_up`]) hands to the meeting block `m`: `−A[m, m+1] S'_{m+1}⁻¹
/// A[m+1, m]` and `−A[m, m+1] y'_{m+1}` in the mirrored layout of block `m`, and that block's
/// assembly (`d`, `scale`, `rhs`: the entries of element `m`'s two-node points).
struct UpResult {
    c: Blk,
    cy: [f64; BS],
    d: Blk,
    scale: [f64; BS],
    rhs: [f64; BS],
}

/// Assembles and eliminates bottom-up the blocks of `run`, from `n_blocks − 1` to
/// `f = run.first ≥ 1`, in the mirrored layout (block `b`: node `b`'s dofs and the points of
/// mirrored home `b`, see [`BlockKkt`]): `S'_{nb−1} = D'_{nb−1}`,
/// `S'_b = D'_b − A[b, b+1] S'_{b+1}⁻¹ A[b+1, b]`, with the forward substitution
/// `y'_b = S'_b⁻¹ (r_b − A[b, b+1] y'_{b+1})`. The mirror image of [`sweep_down`]: a point's
/// row is eliminated after the node it shares with the block below. Block `b − 1` is
/// assembled one step ahead; it needs the dof scales of block `b` only (already known). The
/// last one assembled is block `m = f − 1`: returns its part of the meeting block; `None` if
/// a pivot block is singular.
#[inline(always)]
fn sweep_up<S: pulp::Simd>(simd: S, inp: &Inputs<'_>, run: &mut Run<'_>) -> Option<UpResult> {
    let nb = inp.sh.n_blocks;
    let f = run.first;
    debug_assert!(f >= 2 && f + run.diag.len() == nb);
    let zero = [[0.0f64; 4]; 4];
    // Node b's unscaled coupling with node b − 1, its dof scales and element b − 1's
    // Hessian, for b = nb − 1 first; block nb − 1 assembled in place.
    let mut before = inp.element_hessian(nb - 2);
    let (hd, mut hl) = inp.node_hessian(nb - 1, &before, &zero);
    let mut ss = dof_scales(&hd);
    let (mut blx, mut gux) = ([[0.0f64; 6]; 2], [[0.0f64; 6]; 2]);
    let last = nb - 1 - f;
    inp.assemble_up(
        nb - 1,
        &hd,
        ss,
        [1.0; 2],
        &mut run.diag[last],
        &mut run.scale[last * BS..(last + 1) * BS],
        &mut run.rhs[last * BS..(last + 1) * BS],
        &mut blx,
        &mut gux,
    );
    // Block m = f − 1, assembled last.
    let mut meet = UpResult {
        c: [[0.0; BS]; BS],
        cy: [0.0; BS],
        d: [[0.0; BS]; BS],
        scale: [0.0; BS],
        rhs: [0.0; BS],
    };
    let mut yl: Blk = [[0.0; BS]; BS];
    let mut v = [0.0f64; BS];
    for b in (f..nb).rev() {
        // Block b − 1 is assembled one step ahead (with A[b, b−1], A[b−1, b]):
        // A[b, b−1] enters S'_b⁻¹ A[b, b−1] below.
        let before_prev = if b >= 2 {
            inp.element_hessian(b - 2)
        } else {
            zero
        };
        let (hd_p, hl_p) = inp.node_hessian(b - 1, &before_prev, &before);
        let sp = dof_scales(&hd_p);
        let k = b - f;
        {
            let Run {
                diag,
                scale,
                rhs,
                bl,
                gu,
                ..
            } = &mut *run;
            let (d, sc, r) = if k > 0 {
                let i = k - 1;
                (
                    &mut diag[i],
                    &mut scale[i * BS..(i + 1) * BS],
                    &mut rhs[i * BS..(i + 1) * BS],
                )
            } else {
                (&mut meet.d, &mut meet.scale[..], &mut meet.rhs[..])
            };
            inp.assemble_up(b - 1, &hd_p, sp, ss, d, sc, r, &mut bl[k], &mut gu[k]);
        }
        for sg in 0..2 {
            for tg in 0..2 {
                hl[2 * sg + tg] *= ss[sg] * sp[tg];
            }
        }
        run.hl[k] = hl;
        // Block b's elimination and forward substitution.
        let mut s = run.diag[k];
        let mut y = run.rhs(b);
        if b + 1 < nb {
            let (h, bl) = (run.hl[k + 1], run.bl[k + 1]);
            subtract_up(simd, inp.sh, b, &h, &bl, &mut s, &mut y, &yl, &v);
        }
        if !lu8(simd, &mut s, &mut run.piv[k]) {
            return None;
        }
        lu8_solve(&s, &run.piv[k], &mut y);
        run.set_rhs(b, &y);
        v = y;
        yl = lower_up(inp.sh, b - 1, &run.hl[k], &run.gu[k]);
        lu8_solve_rows(simd, &s, &run.piv[k], &mut yl);
        run.diag[k] = s;
        (hl, ss, before) = (hl_p, sp, before_prev);
    }
    // Block m = f − 1: its share of the meeting block.
    let (h, bl) = (run.hl[0], run.bl[0]);
    subtract_up(
        simd,
        inp.sh,
        f - 1,
        &h,
        &bl,
        &mut meet.c,
        &mut meet.cy,
        &yl,
        &v,
    );
    Some(meet)
}

/// `s −= A[b, b+1] Y` and `y −= A[b, b+1] v` in the mirrored layout: `A[b, b+1]` has node
/// `b`'s dof rows `hl[b+1]ᵀ ⊗ I₃` and the B rows `bl` of block `b`'s points on node `b + 1`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn subtract_up<S: pulp::Simd>(
    simd: S,
    sh: Shared<'_>,
    b: usize,
    h: &[f64; 4],
    bl: &[[f64; 6]; 2],
    s: &mut Blk,
    y: &mut [f64; BS],
    yl: &Blk,
    v: &[f64; BS],
) {
    let (o, ou) = (&sh.open[b], &sh.open_up[b]);
    for tg in 0..2 {
        for c in 0..DIM {
            let r = DIM * tg + c;
            if o[r] == 0.0 {
                continue;
            }
            for sg in 0..2 {
                axpy(simd, &mut s[r], -h[2 * sg + tg], &yl[DIM * sg + c]);
            }
            y[r] -= o[r] * (h[tg] * v[c] + h[2 + tg] * v[DIM + c]);
        }
    }
    for q in 0..2 {
        let r = 2 * DIM + q;
        if ou[r] == 0.0 {
            continue;
        }
        let mut acc = 0.0;
        for l in 0..2 * DIM {
            let w = bl[q][l];
            if w != 0.0 {
                axpy(simd, &mut s[r], -w, &yl[l]);
            }
            acc += w * v[l];
        }
        y[r] -= ou[r] * acc;
    }
}

/// `A[b+1, b]` of the mirrored layout as a row-major block: rows node `b + 1`'s dofs
/// (`hl[b+1] ⊗ I₃` on node `b`'s dofs, the Gᵀ columns `gu` of block `b`'s points).
#[inline(always)]
fn lower_up(sh: Shared<'_>, b: usize, h: &[f64; 4], gu: &[[f64; 6]; 2]) -> Blk {
    let mut l: Blk = [[0.0; BS]; BS];
    let (o0, o1) = (&sh.open[b], &sh.open[b + 1]);
    for sg in 0..2 {
        for c in 0..DIM {
            let r = DIM * sg + c;
            if o1[r] == 0.0 {
                continue;
            }
            for tg in 0..2 {
                l[r][DIM * tg + c] = h[2 * sg + tg] * o0[DIM * tg + c];
            }
            l[r][2 * DIM] = gu[0][r];
            l[r][2 * DIM + 1] = gu[1][r];
        }
    }
    l
}

/// The bottom half's back substitution in the mirrored layout, `z_b = y'_b − S'_b⁻¹ (A[b, b−1]
/// z_{b−1})` from `z_{f−1}` (mirrored layout of block `f − 1`) up; unscales and writes the
/// multipliers back to their homes of the top-down layout (`carry`: the unscaled
/// multipliers of the two-node points of block `f − 1`, homed at `f`). Whether finite.
#[inline(always)]
fn back_up(sh: Shared<'_>, run: &mut Run<'_>, z_before: [f64; BS], carry: [f64; 2]) -> bool {
    let (mut prev, mut carry) = (z_before, carry);
    let mut finite = true;
    for i in 0..run.diag.len() {
        let b = run.first + i;
        let (hl, gu, o) = (run.hl[i], &run.gu[i], &sh.open[b]);
        let mut lz = [0.0f64; BS];
        for sg in 0..2 {
            for c in 0..DIM {
                let r = DIM * sg + c;
                lz[r] = o[r]
                    * (hl[2 * sg] * prev[c]
                        + hl[2 * sg + 1] * prev[DIM + c]
                        + gu[0][r] * prev[2 * DIM]
                        + gu[1][r] * prev[2 * DIM + 1]);
            }
        }
        lu8_solve(&run.diag[i], &run.piv[i], &mut lz);
        let mut z = run.rhs(b);
        for r in 0..BS {
            z[r] -= lz[r];
        }
        prev = z;
        let sc = &run.scale[i * BS..(i + 1) * BS];
        let mut out = [0.0f64; BS];
        for l in 0..2 * DIM {
            out[l] = z[l] * sc[l];
        }
        let mut next = [0.0f64; 2];
        for q in 0..2 {
            let l = 2 * DIM + q;
            let val = z[l] * sc[l];
            if sh.two[b][q] {
                next[q] = val;
            } else if sh.open_up[b][l] != 0.0 {
                out[l] = val;
            }
            if sh.two[b - 1][q] {
                out[l] = carry[q];
            }
        }
        carry = next;
        finite &= out.iter().all(|v| v.is_finite());
        run.set_rhs(b, &out);
    }
    finite
}

/// The size of the meeting block: node `m`'s dofs, the two slots of block `m` and the two-node
/// points of element `m`.
const MEET: usize = BS + 2;

/// The twisted block LU ("burn at both ends"): blocks `0..m` eliminated top-down
/// ([`sweep_down`]) beside blocks `nb − 1` down to `m + 1` bottom-up in the mirrored layout
/// ([`sweep_up`]), each half assembling its own blocks, on two threads (`rayon::join`). They
/// meet at `m = ⌊nb/2⌋`: node `m`'s dofs, the points homed at `m` and element `m`'s two-node
/// points (`MEET` unknowns),
/// `S_m = D_m − A[m, m−1] S_{m−1}⁻¹ A[m−1, m] − A[m, m+1] S'_{m+1}⁻¹ A[m+1, m]`,
/// `z_m = S_m⁻¹ (r_m − A[m, m−1] y_{m−1} − A[m, m+1] y'_{m+1})` (dense LU with partial
/// pivoting); then both halves back-substitute ([`back_down`], [`back_up`]) and unscale, again
/// in parallel. `m` depends on `nb` only, so the result is the same bits on any number of
/// threads. `false` if a pivot block is singular or the solution not finite. Needs `nb ≥ 4`.
pub(super) fn eliminate(inp: &Inputs<'_>, run: Run<'_>) -> bool {
    let nb = inp.sh.n_blocks;
    debug_assert!(nb >= 4);
    let m = nb / 2;
    let (mut top, mut bottom) = run.split_at(m + 1);
    let (down, up) = rayon::join(
        || {
            pulp::Arch::new().dispatch(Down {
                inp,
                run: &mut top,
                last: m,
            })
        },
        || {
            pulp::Arch::new().dispatch(Up {
                inp,
                run: &mut bottom,
            })
        },
    );
    let (Some((s, y)), Some(up)) = (down, up) else {
        return false;
    };
    // The meeting block: top layout of block m, then element m's two-node points at 8 + q.
    let two = inp.sh.two[m];
    let mut a = [[0.0f64; MEET]; MEET];
    let mut r = [0.0f64; MEET];
    for i in 0..BS {
        a[i][..BS].copy_from_slice(&s[i]);
        r[i] = y[i];
    }
    let map = |i: usize| -> Option<usize> {
        if i < 2 * DIM {
            Some(i)
        } else if two[i - 2 * DIM] {
            Some(i + 2)
        } else {
            None
        }
    };
    for q in 0..2 {
        let k = BS + q;
        if two[q] {
            let l = 2 * DIM + q;
            for c in 0..2 * DIM {
                a[k][c] = up.d[l][c];
                a[c][k] = up.d[c][l];
            }
            a[k][k] = up.d[l][l];
            r[k] = up.rhs[l];
        } else {
            a[k][k] = 1.0;
        }
    }
    for i in 0..BS {
        let Some(mi) = map(i) else { continue };
        r[mi] += up.cy[i];
        for k in 0..BS {
            if let Some(mk) = map(k) {
                a[mi][mk] += up.c[i][k];
            }
        }
    }
    let Some(z) = lu_solve_dense(a, r) else {
        return false;
    };
    let mut zm = [0.0f64; BS];
    zm.copy_from_slice(&z[..BS]);
    top.set_rhs(m, &zm);
    let mut zb = [0.0f64; BS];
    zb[..2 * DIM].copy_from_slice(&z[..2 * DIM]);
    let mut carry = [0.0f64; 2];
    for q in 0..2 {
        if two[q] {
            zb[2 * DIM + q] = z[BS + q];
            carry[q] = z[BS + q] * up.scale[2 * DIM + q];
        }
    }
    let sh = inp.sh;
    let (ok_top, ok_bottom) = rayon::join(
        || {
            pulp::Arch::new().dispatch(BackDown(sh.open, &mut top, m));
            top.unscale()
        },
        || pulp::Arch::new().dispatch(BackUp(sh, &mut bottom, zb, carry)),
    );
    ok_top && ok_bottom
}

/// [`sweep_up`] (runtime dispatch).
struct Up<'a, 'b> {
    inp: &'a Inputs<'a>,
    run: &'a mut Run<'b>,
}

impl pulp::WithSimd for Up<'_, '_> {
    type Output = Option<UpResult>;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) -> Self::Output {
        sweep_up(simd, self.inp, self.run)
    }
}

/// [`back_up`] (runtime dispatch).
struct BackUp<'a, 'b>(Shared<'a>, &'a mut Run<'b>, [f64; BS], [f64; 2]);

impl pulp::WithSimd for BackUp<'_, '_> {
    type Output = bool;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> bool {
        back_up(self.0, self.1, self.2, self.3)
    }
}
